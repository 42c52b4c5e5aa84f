//! The world's and the snapshot's state hash: blind to chunk size and build order, sees one
//! flipped bit, covers pod resources, hashed cloned components and resources by value, and
//! agrees with the restored world; `try_state_hash` names what it cannot see.
//!
//! Sized for Miri (`cargo +nightly miri test -p ecs-core --test state_hash`): fewer entities
//! under `cfg(miri)`.

use ecs_core::{Entity, SnapshotError, World};

mod common;
use common::snapshots::*;

#[test]
fn state_hash_ignores_chunk_size_and_build_order_and_sees_one_bit() {
    let n = if cfg!(miri) { 40 } else { 3000 };
    let build = |chunk: usize, seed: u64| {
        let mut world = World::with_chunk_size(chunk).unwrap();
        if seed % 2 == 0 {
            world.register_pod::<Vel>();
            world.register_pod::<Pos>();
        } else {
            world.register_pod::<Pos>();
            world.register_pod::<Vel>();
        }
        world.register_pod::<Hp>();
        let ids: Vec<Entity> = (0..n).map(|_| world.spawn(())).collect();
        // Same ids, same values, built in another order (so other archetype and row orders).
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = Rng(seed);
        for i in (1..n).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for &i in &order {
            let e = ids[i];
            let f = i as f32;
            match i % 3 {
                0 => world
                    .insert(e, (Pos([f, 1.0, 2.0]), Vel([0.5, f, 0.0])))
                    .unwrap(),
                1 => world.insert(e, (Hp(i as u16), Pos([f; 3]))).unwrap(),
                _ => world.insert(e, (Hp(1),)).unwrap(),
            }
        }
        (world, ids)
    };
    let (a, ids) = build(4096, 10);
    let (mut b, _) = build(65536, 11);
    assert_eq!(a.state_hash(), b.state_hash());
    assert_ne!(
        a.archetypes()[1].signature(),
        b.archetypes()[1].signature(),
        "the two worlds created their archetypes in another order"
    );
    let flip = ids[n / 2 / 3 * 3]; // a multiple of 3: has a `Pos`
    let p = b.get_mut::<Pos>(flip).unwrap();
    p.0[2] = f32::from_bits(p.0[2].to_bits() ^ 1);
    assert_ne!(a.state_hash(), b.state_hash());
    let p = b.get_mut::<Pos>(flip).unwrap();
    p.0[2] = f32::from_bits(p.0[2].to_bits() ^ 1);
    assert_eq!(a.state_hash(), b.state_hash());
    // Presence counts: adding a tag changes it, as does another entity id.
    b.insert_one(ids[0], Tag).unwrap();
    assert_ne!(a.state_hash(), b.state_hash());
}

#[test]
fn the_state_hash_covers_pod_resources() {
    let build = || {
        let mut world = World::new();
        world.register_pod::<u32>();
        world.register_pod_resource::<u64>();
        world.spawn((1u32,));
        world
    };
    let (mut a, b) = (build(), build());
    assert_eq!(a.state_hash(), b.state_hash());
    a.insert_resource(7u64);
    let with_seven = a.state_hash();
    assert_ne!(with_seven, b.state_hash(), "a present resource counts");
    *a.resource_mut::<u64>() = 8;
    assert_ne!(a.state_hash(), with_seven, "its value counts");
    // The snapshot's hash is the restored world's, resources included.
    let snap = a.snapshot().unwrap();
    assert_eq!(snap.state_hash(), a.state_hash());
    *a.resource_mut::<u64>() = 9;
    a.restore(&snap).unwrap();
    assert_eq!(snap.state_hash(), a.state_hash());
    // A resource not registered for snapshots is not hashed.
    let before = a.state_hash();
    a.insert_resource(1.5f32);
    assert_eq!(a.state_hash(), before);
}

/// Found by the `snapshot_bytes` fuzz target: a snapshot from a world that did not register a
/// pod resource, restored into one that did (and holds none), must hash as the world does.
#[test]
fn a_snapshot_without_a_registered_resource_hashes_as_the_restored_world() {
    let mut plain = World::new();
    plain.register_pod::<u32>();
    let e = plain.spawn((5u32,));
    let snap = plain.snapshot().unwrap();

    let mut world = World::new();
    world.register_pod::<u32>();
    world.register_pod_resource::<u64>();
    assert_eq!(
        world.state_hash(),
        World::new().state_hash(),
        "absent counts as unregistered"
    );
    world.restore(&snap).unwrap();
    assert_eq!(world.get::<u32>(e), Ok(&5));
    assert_eq!(world.state_hash(), snap.state_hash());
    // A value the restore left alone does count.
    world.insert_resource(3u64);
    assert_ne!(world.state_hash(), snap.state_hash());
}

/// Cloned components registered with `register_hashed` count by value in the world's hash and
/// in the snapshot's, which agree across chunk sizes and a restore; `try_state_hash` refuses a
/// world with a component the hash cannot see.
#[test]
fn hashed_cloned_components_count_by_value() {
    #[derive(Clone, Hash, PartialEq, Debug)]
    struct Name(String);
    let build = |chunk: usize, names: &[&str]| {
        let mut world = World::with_test_chunk_size(chunk);
        world.register_hashed::<Name>();
        world.register_pod::<u32>();
        world.register_hashed::<u32>(); // pod already: stays pod, hashed as bytes once
        for (i, n) in names.iter().enumerate() {
            world.spawn((Name(n.to_string()), i as u32));
        }
        world
    };
    let names: Vec<String> = (0..40).map(|i| format!("unit-{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (mut a, b) = (build(256, &names), build(1024, &names));
    assert_eq!(a.state_hash(), b.state_hash(), "chunk size does not count");
    assert_eq!(a.try_state_hash(), Ok(a.state_hash()));
    let snap = a.snapshot().unwrap();
    assert_eq!(snap.state_hash(), a.state_hash());
    let e = snap.entities().nth(17).unwrap();
    a.get_mut::<Name>(e).unwrap().0.push('!');
    assert_ne!(a.state_hash(), b.state_hash(), "a renamed unit counts");
    a.restore(&snap).unwrap();
    assert_eq!(a.state_hash(), b.state_hash());

    // A cloned component without a hash counts by presence, and `try_state_hash` says so.
    #[derive(Clone)]
    struct Notes(#[allow(dead_code, reason = "a value the hash cannot see")] Vec<u8>);
    a.register_clone::<Notes>();
    let noted = a.spawn((Notes(vec![1]),));
    match a.try_state_hash() {
        Err(SnapshotError::Unhashed { component, entity }) => {
            assert!(component.ends_with("Notes"));
            assert_eq!(entity, noted);
        }
        other => panic!("expected Unhashed, got {other:?}"),
    }
}

/// Cloned resources registered with `register_hashed_resource` count by value in the world's
/// hash and the snapshot's; `try_state_hash` refuses a present cloned resource without a hash
/// (an absent one, or one that is not snapshotted at all, is no blind spot).
#[test]
fn hashed_cloned_resources_count_by_value() {
    #[derive(Clone, Hash, Default)]
    struct Orders(Vec<String>);
    let build = |orders: &[&str]| {
        let mut world = World::with_test_chunk_size(256);
        world.register_hashed_resource::<Orders>();
        world.insert_resource(Orders(orders.iter().map(|o| o.to_string()).collect()));
        world
    };
    let mut a = build(&["hold", "attack"]);
    let b = build(&["hold", "attack"]);
    assert_eq!(a.state_hash(), b.state_hash());
    assert_eq!(a.try_state_hash(), Ok(a.state_hash()));
    let snap = a.snapshot().unwrap();
    assert_eq!(snap.state_hash(), a.state_hash());
    a.resource_mut::<Orders>().0.push("retreat".into());
    assert_ne!(a.state_hash(), b.state_hash(), "a changed resource counts");
    a.restore(&snap).unwrap();
    assert_eq!(a.state_hash(), b.state_hash());
    a.remove_resource::<Orders>();
    assert_ne!(a.state_hash(), b.state_hash(), "an absent resource differs");
    // Registering it later for plain cloning keeps the hash.
    a.register_snapshot_resource::<Orders>();
    a.insert_resource(Orders(vec!["hold".into(), "attack".into()]));
    assert_eq!(a.state_hash(), b.state_hash());

    #[derive(Clone, Default)]
    struct Scratch(#[allow(dead_code, reason = "a value the hash cannot see")] Vec<u8>);
    a.register_snapshot_resource::<Scratch>();
    assert!(a.try_state_hash().is_ok(), "absent: nothing unseen");
    a.insert_resource(Scratch(vec![1]));
    match a.try_state_hash() {
        Err(err @ SnapshotError::UnhashedResource { .. }) => {
            assert!(err.to_string().contains("Scratch"), "{err}");
            assert!(
                err.to_string().contains("register_hashed_resource"),
                "{err}"
            );
        }
        other => panic!("expected UnhashedResource, got {other:?}"),
    }
}
