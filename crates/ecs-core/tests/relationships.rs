//! Relationships: the `ChildOf` / `Children` hierarchy, a many-to-many relationship, despawn
//! policies, traversal, and relationship data across snapshot / restore and compaction.

use ecs_core::{
    ChildOf, Children, ComponentError, DespawnPolicy, Entity, EntityError, Relationship,
    RelationshipTarget, World,
};

mod common;

fn children(world: &World, e: Entity) -> Vec<Entity> {
    world.children(e).to_vec()
}

#[test]
fn child_of_keeps_children_in_step() {
    let mut world = World::new();
    let (p, q) = (world.spawn(()), world.spawn(()));
    let a = world.spawn((ChildOf(p), 1u32));
    let b = world.spawn((ChildOf(p),));
    assert_eq!(children(&world, p), [a, b]);
    assert_eq!(world.parent(a), Some(p));
    world.check_invariants();

    // Overwriting moves the child; its old parent's list shrinks.
    world.insert(a, (ChildOf(q),)).unwrap();
    assert_eq!(children(&world, p), [b]);
    assert_eq!(children(&world, q), [a]);
    world.check_invariants();

    // Removing the last child removes the list.
    world.remove::<(ChildOf,)>(b).unwrap();
    assert!(!world.has::<Children>(p));
    assert_eq!(world.parent(b), None);

    // Despawning a child leaves its parent's list.
    world.despawn(a).unwrap();
    assert!(!world.has::<Children>(q));
    world.check_invariants();

    // Non-fragmenting: children of different parents share one archetype.
    let c1 = world.spawn((ChildOf(p), 0u8));
    let c2 = world.spawn((ChildOf(q), 0u8));
    assert_eq!(
        world.location(c1).unwrap().archetype,
        world.location(c2).unwrap().archetype
    );
}

#[test]
fn despawning_a_parent_despawns_its_subtree_only() {
    let mut world = World::new();
    let root = world.spawn(());
    let a = world.spawn((ChildOf(root),));
    let a1 = world.spawn((ChildOf(a),));
    let a2 = world.spawn((ChildOf(a),));
    let a11 = world.spawn((ChildOf(a1),));
    let b = world.spawn((ChildOf(root),));
    world.despawn(a).unwrap();
    for gone in [a, a1, a2, a11] {
        assert!(!world.contains(gone), "{gone:?} outlived its ancestor");
    }
    assert!(world.contains(b) && world.contains(root));
    assert_eq!(children(&world, root), [b]);
    world.check_invariants();
}

#[test]
fn a_deep_chain_despawns_without_recursion() {
    let mut world = World::new();
    let root = world.spawn(());
    let mut last = root;
    let depth = if cfg!(miri) { 50 } else { 20_000 };
    for _ in 0..depth {
        last = world.spawn((ChildOf(last),));
    }
    assert_eq!(world.iter_ancestors(last).count(), depth);
    world.despawn(root).unwrap();
    assert!(world.is_empty());
}

#[test]
fn traversal_orders() {
    let mut world = World::new();
    let r = world.spawn(());
    let a = world.spawn((ChildOf(r),));
    let b = world.spawn((ChildOf(r),));
    let a1 = world.spawn((ChildOf(a),));
    let a2 = world.spawn((ChildOf(a),));
    let b1 = world.spawn((ChildOf(b),));
    let a11 = world.spawn((ChildOf(a1),));
    let dfs: Vec<_> = world.iter_descendants(r).collect();
    assert_eq!(dfs, [a, a1, a11, a2, b, b1]);
    let bfs: Vec<_> = world.iter_descendants_breadth_first(r).collect();
    assert_eq!(bfs, [a, b, a1, a2, b1, a11]);
    assert_eq!(world.iter_ancestors(a11).collect::<Vec<_>>(), [a1, a, r]);
    assert_eq!(world.iter_descendants(b1).count(), 0);
}

#[test]
fn set_parent_refuses_cycles_and_insert_cycles_do_not_hang() {
    let mut world = World::new();
    let a = world.spawn(());
    let b = world.spawn(());
    let c = world.spawn(());
    world.set_parent(b, a).unwrap();
    world.set_parent(c, b).unwrap();
    let err = world.set_parent(a, c).unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
    assert_eq!(world.parent(a), None);
    assert_eq!(world.remove_parent(c), Ok(Some(b)));
    assert_eq!(world.remove_parent(c), Ok(None));
    // A raw insert can close a cycle; traversal still ends.
    world.insert(a, (ChildOf(b),)).unwrap();
    assert!(world.iter_descendants(a).count() <= world.len() as usize);
    assert!(world.iter_ancestors(a).count() <= world.len() as usize);
    world.check_invariants();
    // And despawning into the cycle ends too.
    world.despawn(a).unwrap();
    assert!(!world.contains(a) && !world.contains(b));
}

#[test]
fn a_relationship_to_a_dead_entity_or_to_itself_is_dropped() {
    let mut world = World::new();
    let gone = world.spawn(());
    world.despawn(gone).unwrap();
    let e = world.spawn((ChildOf(gone), 1u8));
    assert!(!world.has::<ChildOf>(e));
    let selfish = world.spawn(());
    world.insert(selfish, (ChildOf(selfish),)).unwrap();
    assert!(!world.has::<ChildOf>(selfish) && !world.has::<Children>(selfish));
    world.check_invariants();
}

#[test]
fn inserting_a_children_list_adopts_the_listed_entities() {
    let mut world = World::new();
    let old = world.spawn(());
    let x = world.spawn((ChildOf(old),));
    let y = world.spawn(());
    let p = world.spawn(());
    // Build a `Children` the way a user (or a deserializer) would: through the trait.
    world
        .insert(p, (Children::from_sources(vec![x, y]),))
        .unwrap();
    assert_eq!(world.parent(x), Some(p));
    assert_eq!(world.parent(y), Some(p));
    assert!(!world.has::<Children>(old));
    world.check_invariants();
    // Removing the list orphans them.
    world.remove::<(Children,)>(p).unwrap();
    assert_eq!((world.parent(x), world.parent(y)), (None, None));
    world.check_invariants();
}

// ----- a many-to-many relationship with each policy ------------------------------------------

macro_rules! many_to_many {
    ($source:ident, $target:ident, $policy:expr) => {
        #[derive(Clone, Debug, PartialEq)]
        struct $source(Vec<Entity>);
        #[derive(Clone, Debug, PartialEq)]
        struct $target(Vec<Entity>);
        impl Relationship for $source {
            type Target = $target;
            fn targets(&self) -> &[Entity] {
                &self.0
            }
            fn from_target(target: Entity) -> Self {
                Self(vec![target])
            }
            fn targets_mut(&mut self) -> Option<&mut Vec<Entity>> {
                Some(&mut self.0)
            }
        }
        impl RelationshipTarget for $target {
            type Relationship = $source;
            const ON_DESPAWN: DespawnPolicy = $policy;
            fn from_sources(sources: Vec<Entity>) -> Self {
                Self(sources)
            }
            fn sources(&self) -> &[Entity] {
                &self.0
            }
            fn sources_mut(&mut self) -> &mut Vec<Entity> {
                &mut self.0
            }
        }
    };
}
many_to_many!(Targets, TargetedBy, DespawnPolicy::RemoveRelationship);
many_to_many!(Guards, GuardedBy, DespawnPolicy::Refuse);
many_to_many!(Owns, OwnedBy, DespawnPolicy::DespawnSources);

#[test]
fn many_to_many_keeps_both_sides() {
    let mut world = World::new();
    world.register_relationship::<Targets>().unwrap();
    let units: Vec<Entity> = (0..3).map(|_| world.spawn(())).collect();
    let t1 = world.spawn((Targets(vec![units[0], units[1]]),));
    let t2 = world.spawn((Targets(vec![units[1], units[2]]),));
    assert_eq!(world.relationship_sources::<TargetedBy>(units[1]), [t1, t2]);
    world.check_invariants();

    // Overwriting moves the turret between lists.
    world.insert(t1, (Targets(vec![units[2]]),)).unwrap();
    assert!(!world.has::<TargetedBy>(units[0]));
    assert_eq!(world.relationship_sources::<TargetedBy>(units[1]), [t2]);
    assert_eq!(world.relationship_sources::<TargetedBy>(units[2]), [t2, t1]);
    world.check_invariants();

    // RemoveRelationship: a despawned unit leaves every turret's list; turrets live on.
    world.despawn(units[2]).unwrap();
    assert_eq!(world.relationship_targets::<Targets>(t2), [units[1]]);
    assert!(!world.has::<Targets>(t1), "its only target is gone");
    assert!(world.contains(t1));
    world.check_invariants();

    // Despawning a turret leaves the units' lists.
    world.despawn(t2).unwrap();
    assert!(!world.has::<TargetedBy>(units[1]));
    world.check_invariants();
}

#[test]
fn refuse_policy_is_a_typed_error_and_changes_nothing() {
    let mut world = World::new();
    world.register_relationship::<Guards>().unwrap();
    let vip = world.spawn((5u32,));
    let guard = world.spawn((Guards(vec![vip]),));
    let err = world.despawn(vip).unwrap_err();
    assert!(matches!(
        err,
        EntityError::DespawnRefused { entity, sources: 1, .. } if entity == vip
    ));
    assert!(err.to_string().contains("Guards"), "{err}");
    assert!(matches!(
        world.take::<(u32,)>(vip),
        Err(ComponentError::DespawnRefused { .. })
    ));
    assert_eq!(world.get::<u32>(vip), Ok(&5));
    world.check_invariants();
    // Once the guard lets go, the despawn goes ahead.
    world.remove::<(Guards,)>(guard).unwrap();
    world.despawn(vip).unwrap();
    world.check_invariants();
}

#[test]
fn a_cascade_into_a_refusing_target_removes_the_relationship_instead() {
    let mut world = World::new();
    world.register_relationship::<Guards>().unwrap();
    let root = world.spawn(());
    let vip = world.spawn((ChildOf(root),));
    let guard = world.spawn((Guards(vec![vip]),));
    world.despawn(root).unwrap(); // asked for: the subtree goes, vip included
    assert!(!world.contains(vip));
    assert!(world.contains(guard) && !world.has::<Guards>(guard));
    world.check_invariants();
}

#[test]
fn despawn_sources_policy_on_a_custom_relationship() {
    let mut world = World::new();
    world.register_relationship::<Owns>().unwrap();
    let (a, b) = (world.spawn(()), world.spawn(()));
    let item = world.spawn((Owns(vec![a, b]),));
    world.despawn(b).unwrap();
    assert!(!world.contains(item), "DespawnSources despawns the source");
    assert!(!world.has::<OwnedBy>(a));
    world.check_invariants();
    assert!(world.register_relationship::<Owns>().is_err());
}

#[test]
fn relationships_survive_snapshot_restore_and_compaction() {
    let mut world = World::with_test_chunk_size(512);
    world.register_clone::<ChildOf>();
    world.register_clone::<Children>();
    world.register_pod::<u32>();
    let root = world.spawn((0u32,));
    let kids: Vec<Entity> = (1..60u32)
        .map(|i| world.spawn((ChildOf(root), i)))
        .collect();
    let grandkids: Vec<Entity> = kids
        .iter()
        .map(|&k| world.spawn((ChildOf(k), 100u32)))
        .collect();
    let snap = world.snapshot().unwrap();
    let before: Vec<Entity> = world.iter_descendants(root).collect();

    for &k in kids.iter().step_by(2) {
        world.despawn(k).unwrap();
    }
    world.set_parent(grandkids[1], root).unwrap();
    world.check_invariants();
    world.compact();
    world.check_invariants();
    assert_eq!(world.parent(grandkids[1]), Some(root));

    world.restore(&snap).unwrap();
    world.check_invariants();
    assert_eq!(world.iter_descendants(root).collect::<Vec<_>>(), before);
    assert_eq!(world.parent(grandkids[1]), Some(kids[1]));
    // The restored hierarchy is live: its upkeep still runs.
    world.despawn(kids[0]).unwrap();
    assert!(!world.contains(grandkids[0]));
    world.check_invariants();
}

#[test]
fn spawn_batch_of_children() {
    let mut world = World::new();
    let p = world.spawn(());
    let n = if cfg!(miri) { 40u32 } else { 1000 };
    let ids: Vec<Entity> = world.spawn_batch((0..n).map(|i| (ChildOf(p), i))).collect();
    assert_eq!(world.children(p), ids.as_slice());
    world.check_invariants();
}

/// Both sides of a relationship are immutable: no in-place write can make them disagree;
/// re-parenting goes through `insert`, whose hooks keep `Children` in step.
#[test]
fn relationship_components_cannot_be_written_in_place() {
    use ecs_core::ComponentError;
    let mut world = World::new();
    let (a, b) = (world.spawn(()), world.spawn(()));
    let child = world.spawn((ChildOf(a),));
    assert!(matches!(
        world.get_mut::<ChildOf>(child),
        Err(ComponentError::Immutable { entity, component }) if entity == child && component.ends_with("ChildOf")
    ));
    let err = world.get_mut::<Children>(a).unwrap_err();
    assert!(err.to_string().contains("insert"), "{err}");
    let arch = world.location(child).unwrap().archetype;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = world.column_mut::<ChildOf>(arch, 0);
    }));
    assert!(caught.is_err());
    world.insert(child, (ChildOf(b),)).unwrap();
    assert_eq!(world.children(b), [child]);
    assert!(world.children(a).is_empty());
    world.check_invariants();
}

/// A subtree despawn takes plain despawns for nodes whose only hooked types are `ChildOf` /
/// `Children` and the full path for the others; mixed in one tree, every node goes, every
/// hook of the others runs once, and lists outside the tree drop the dead.
#[test]
fn a_mixed_subtree_despawn_runs_every_hook_once_and_leaves_both_sides_agreeing() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static REMOVED: AtomicUsize = AtomicUsize::new(0);
    #[derive(Clone, Copy)]
    struct Watched;
    fn on_remove(_: ecs_core::DeferredWorld<'_>, _: ecs_core::HookContext) {
        REMOVED.fetch_add(1, Ordering::Relaxed);
    }
    use common::relations::{LikedBy, Likes};

    let mut world = World::new();
    world
        .set_component_hooks::<Watched>(ecs_core::ComponentHooks::new().on_remove(on_remove))
        .unwrap();
    world.register_relationship::<Likes>().unwrap();
    let outside = world.spawn(());
    let root = world.spawn(());
    let mut nodes = vec![root];
    let mut watched = 0;
    for i in 1..400usize {
        let parent = nodes[(i - 1) / 3];
        let e = match i % 5 {
            0 => {
                watched += 1;
                world.spawn((ChildOf(parent), Watched))
            }
            1 => world.spawn((ChildOf(parent), Likes(vec![outside]))),
            _ => world.spawn((ChildOf(parent),)),
        };
        nodes.push(e);
    }
    // Some nodes are liked from outside the tree.
    let fan = world.spawn((Likes(nodes[10..20].to_vec()),));
    world.check_invariants();
    REMOVED.store(0, Ordering::Relaxed);

    world.despawn(root).unwrap();
    world.check_invariants();
    assert!(nodes.iter().all(|&e| !world.contains(e)));
    assert_eq!(REMOVED.load(Ordering::Relaxed), watched);
    assert!(
        world.get::<LikedBy>(outside).is_err(),
        "its likers all went"
    );
    assert!(world.get::<Likes>(fan).is_err(), "every node it liked went");
    assert_eq!(world.len(), 2);
}
