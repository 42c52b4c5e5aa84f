//! A world with relationships written to bytes and read back (issue 53): both sides of the
//! hierarchy and of a many-to-many relationship come back as they were, and bytes that are
//! not a snapshot's are an error, never a panic.

use ecs_core::{ChildOf, Entity, Snapshot, World};

mod common;
use common::relations::{LikedBy, Likes};

fn registered() -> World {
    let mut world = World::new();
    world.register_relationship::<Likes>().unwrap();
    world.register_relationship_bytes::<ChildOf>();
    world.register_relationship_bytes::<Likes>();
    world.register_pod::<u32>();
    world
}

/// A forest with a re-parented node and a despawned one, and turrets aiming at its nodes.
fn populated() -> (World, Vec<Entity>) {
    let mut world = registered();
    let roots: Vec<Entity> = (0..3).map(|i| world.spawn((i as u32,))).collect();
    let mut nodes = roots.clone();
    for i in 0..40u32 {
        let parent = nodes[(i as usize * 7) % nodes.len()];
        nodes.push(world.spawn((100 + i, ChildOf(parent))));
    }
    world.insert(nodes[10], (ChildOf(roots[2]),)).unwrap();
    world.despawn(nodes[5]).unwrap();
    let live: Vec<Entity> = nodes.into_iter().filter(|&e| world.contains(e)).collect();
    for i in 0..12 {
        let (a, b) = (live[i % live.len()], live[(i * 5 + 1) % live.len()]);
        world.spawn((Likes(vec![a, b]),));
    }
    world.check_invariants();
    (world, live)
}

#[test]
fn a_world_with_relationships_comes_back_from_bytes_with_both_sides() {
    let (world, live) = populated();
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let mut loaded = registered();
    loaded
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    loaded.check_invariants();
    assert_eq!(loaded.len(), world.len());
    for &e in &live {
        assert_eq!(loaded.parent(e), world.parent(e));
        assert_eq!(loaded.children(e), world.children(e));
        assert_eq!(
            loaded.relationship_sources::<LikedBy>(e),
            world.relationship_sources::<LikedBy>(e)
        );
    }
    assert_eq!(loaded.state_hash(), world.state_hash());
    // The restored hierarchy is live: its hooks keep both sides.
    loaded.despawn(live[0]).unwrap();
    loaded.check_invariants();
}

#[test]
fn a_world_that_did_not_register_the_byte_form_refuses_to_write_it() {
    let mut world = World::new();
    world.register_clone::<ChildOf>();
    world.register_clone::<ecs_core::Children>();
    let root = world.spawn(());
    world.spawn((ChildOf(root),));
    assert!(world.snapshot().unwrap().to_bytes().is_err());
}

#[test]
fn every_truncation_of_a_hierarchy_is_an_error_not_a_panic() {
    let (world, _) = populated();
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let step = if cfg!(miri) { 97 } else { 1 };
    for len in (0..bytes.len()).step_by(step) {
        let Ok(snapshot) = Snapshot::from_bytes(&bytes[..len]) else {
            continue;
        };
        let mut loaded = registered();
        assert!(
            loaded.restore(&snapshot).is_err(),
            "{len} of {} bytes restored",
            bytes.len()
        );
    }
}
