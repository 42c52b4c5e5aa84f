//! The snapshot byte format (`Snapshot::to_bytes` / `from_bytes`): round trips into fresh
//! worlds with other registration orders and chunk sizes; every truncation and flipped byte is
//! an error, not a panic; structural lies under a valid checksum are caught; tags, empty
//! entities, retired slots, disabled rows and components holding entity ids survive or are
//! refused by name.
//!
//! Sized for Miri (`cargo +nightly miri test -p ecs-core --test snapshot_bytes`): small chunks
//! so few entities cross many chunk boundaries, and fewer rounds and flipped bytes under
//! `cfg(miri)`.

use ecs_core::{Entity, Snapshot, SnapshotError, World};

mod common;
use common::snapshots::*;

#[test]
fn bytes_round_trip_and_fresh_world_spawns_the_same_ids() {
    let mut rng = Rng(4);
    let mut world = World::with_test_chunk_size(256);
    world.register_pod::<Pos>();
    world.register_pod::<Vel>();
    world.register_pod::<Hp>();
    world.register_pod::<Tag>();
    world.register_pod_resource::<Frame>();
    world.insert_resource(Frame(12));
    let mut live = Vec::new();
    for _ in 0..ROUNDS * 2 {
        // No `Name`s: they are cloned, which `to_bytes` refuses (tested below).
        churn(&mut world, &mut rng, &mut live);
        if let Some(i) = live.iter().position(|&e| world.has::<Name>(e)) {
            world.despawn(live.swap_remove(i)).unwrap();
        }
    }
    let snap = world.snapshot().unwrap();
    let bytes = snap.to_bytes().unwrap();
    let back = Snapshot::from_bytes(&bytes).unwrap();
    assert_eq!(back.state_hash(), snap.state_hash());
    assert_eq!(back.to_bytes().unwrap(), bytes);

    let mut fresh = World::with_test_chunk_size(1024);
    fresh.register_pod::<Hp>(); // another registration order: mapped by name
    fresh.register_pod::<Tag>();
    fresh.register_pod::<Vel>();
    fresh.register_pod::<Pos>();
    fresh.register_pod_resource::<Frame>();
    fresh.restore(&back).unwrap();
    fresh.check_invariants();
    assert_eq!(world_dump(&fresh), world_dump(&world));
    assert_eq!(*fresh.resource::<Frame>(), Frame(12));
    for _ in 0..5 {
        assert_eq!(fresh.spawn((Hp(1),)), world.spawn((Hp(1),)));
    }

    // Cloned data cannot be written.
    let mut named = registered(256);
    named.spawn((Name("x".into()),));
    match named.snapshot().unwrap().to_bytes() {
        Err(SnapshotError::NotPod { name }) => assert!(name.ends_with("Name")),
        other => panic!("expected NotPod, got {other:?}"),
    }
    let mut only_res = pod_world(256);
    only_res.register_snapshot_resource::<Log>();
    only_res.insert_resource(Log::default());
    assert!(matches!(
        only_res.snapshot().unwrap().to_bytes(),
        Err(SnapshotError::NotPod { .. })
    ));
}

#[test]
fn every_truncation_and_every_flipped_byte_is_an_error_not_a_panic() {
    let mut world = World::with_test_chunk_size(256);
    world.register_pod::<Hp>();
    world.register_pod::<Pos>();
    world.register_pod_resource::<Frame>();
    world.insert_resource(Frame(1));
    let a = world.spawn((Hp(1), Pos([0.5; 3])));
    world.spawn((Hp(2),));
    world.despawn(a).unwrap();
    world.spawn((Pos([2.0; 3]),));
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    for len in 0..bytes.len() {
        let err = Snapshot::from_bytes(&bytes[..len]).unwrap_err();
        assert!(
            matches!(
                err,
                SnapshotError::BadMagic | SnapshotError::Truncated { .. }
            ),
            "length {len}: {err:?}"
        );
    }
    // Under Miri every 23rd byte (header, tables and column bytes all still hit).
    let step = if cfg!(miri) { 23 } else { 1 };
    for i in (0..bytes.len()).step_by(step) {
        for bit in [0, 3, 7] {
            let mut bad = bytes.clone();
            bad[i] ^= 1 << bit;
            assert!(Snapshot::from_bytes(&bad).is_err(), "byte {i} bit {bit}");
        }
    }
    let mut long = bytes.clone();
    long.push(0);
    assert!(Snapshot::from_bytes(&long).is_err());
}

#[test]
fn structural_lies_with_a_valid_checksum_are_caught() {
    let mut world = World::with_test_chunk_size(256);
    world.register_pod::<Hp>();
    let a = world.spawn((Hp(1),));
    let b = world.spawn((Hp(2),));
    world.despawn(a).unwrap();
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let reseal = |mut v: Vec<u8>| {
        let body = v.len() - 8;
        let sum = Snapshot::checksum_of(&v[..body]);
        v[body..].copy_from_slice(&sum.to_le_bytes());
        v
    };
    let find = |needle: &[u8]| {
        bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap()
    };
    // The entity row of `b` (index 1, generation 1) says generation 2: no such live entity.
    let row = find(&b.to_bits().to_le_bytes());
    let mut lie = bytes.clone();
    lie[row + 4] = 2;
    let err = Snapshot::from_bytes(&reseal(lie)).unwrap_err();
    assert!(matches!(err, SnapshotError::Corrupt { .. }), "{err:?}");
    // Slots: count 2; free list n = 1, [(slot 0, generation 2)]; retired n = 0.
    let slots = find(&[2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    let lie = |at: usize, value: u32| {
        let mut v = bytes.clone();
        v[at..at + 4].copy_from_slice(&value.to_le_bytes());
        Snapshot::from_bytes(&reseal(v)).unwrap_err().to_string()
    };
    // Slot 1 on the free list: `b`'s row then has no live slot.
    let err = lie(slots + 8, 1);
    assert!(err.contains("entity 1v1 has no live slot"), "{err}");
    // A free slot whose next generation is 0.
    let err = lie(slots + 12, 0);
    assert!(err.contains("free slot 0 has generation 0"), "{err}");
    // Three slots: the third is live but no row holds it.
    let err = lie(slots, 3);
    assert!(err.contains("live slot 2 has no row"), "{err}");
    // A billion slots in a small buffer: refused before allocating a table for them.
    let err = lie(slots, 1 << 30);
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn tags_and_empty_entities_round_trip() {
    let mut world = pod_world(128);
    let e = world.spawn(());
    let t = world.spawn((Tag,));
    let th = world.spawn((Tag, Hp(4)));
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let mut other = pod_world(128);
    other
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    other.check_invariants();
    assert!(other.contains(e) && other.has::<Tag>(t) && other.has::<Tag>(th));
    assert_eq!(other.get::<Hp>(th), Ok(&Hp(4)));
    assert_eq!(other.state_hash(), world.state_hash());
}

#[test]
fn retired_slots_stay_retired_through_bytes() {
    let mut world = pod_world(256);
    let old = world.spawn((Hp(1),));
    let keep = world.spawn((Hp(2),));
    world.despawn(old).unwrap();
    world.set_slot_generation_for_tests(old.index(), std::num::NonZeroU32::new(u32::MAX).unwrap());
    let last = world.spawn((Hp(3),));
    assert_eq!((last.index(), last.generation()), (old.index(), u32::MAX));
    world.despawn(last).unwrap(); // retired now
    let free = world.spawn(());
    world.despawn(free).unwrap(); // a free slot beside the retired one
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let mut other = pod_world(128);
    other
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    other.check_invariants();
    assert_eq!(other.get::<Hp>(keep), Ok(&Hp(2)));
    for _ in 0..3 {
        let (a, b) = (world.spawn(()), other.spawn(()));
        assert_eq!(a, b);
        assert_ne!(a.index(), old.index(), "a retired slot came back");
    }
}

#[test]
fn disabled_rows_out_of_order_are_refused_when_read() {
    let (world, _) = toggled_world(256);
    let mut bytes = world.snapshot().unwrap().to_bytes().unwrap();
    // The archetype's disabled-row lists: `Hp`'s (13 of them: 1, 4, ..., 37), then `Pos`'s
    // (none), then the saved ticks. Swap the first two rows of `Hp`'s list and fix the
    // checksum.
    let body = bytes.len() - 8;
    let pattern: Vec<u8> = [13u32, 1, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    let list = bytes
        .windows(pattern.len())
        .position(|w| w == pattern)
        .expect("Hp's disabled rows")
        + 4;
    let first = list;
    let second = list + 4;
    assert_eq!(bytes[first..first + 4], 1u32.to_le_bytes());
    assert_eq!(bytes[second..second + 4], 4u32.to_le_bytes());
    bytes[first..first + 4].copy_from_slice(&4u32.to_le_bytes());
    bytes[second..second + 4].copy_from_slice(&1u32.to_le_bytes());
    let sum = Snapshot::checksum_of(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
    assert!(matches!(
        Snapshot::from_bytes(&bytes),
        Err(SnapshotError::Corrupt { .. })
    ));
}

/// A component holding an entity id, registered with `register_checked`: snapshotted and
/// hashed by value, written and read back as bytes, and refused (naming it and the entity,
/// world untouched) when the bytes hold an id no world issues.
#[test]
fn components_holding_entities_round_trip_as_checked_bytes() {
    #[derive(Clone, Copy, Debug, PartialEq, bytemuck::NoUninit, bytemuck::CheckedBitPattern)]
    #[repr(C)]
    struct Target {
        who: Entity,
        range: f32,
        _pad: u32,
    }
    let build = || {
        let mut world = World::with_test_chunk_size(256);
        world.register_checked::<Target>();
        world.register_pod::<u32>();
        world
    };
    let mut world = build();
    for i in 0..77u32 {
        world.spawn((i,));
    }
    let prey = world.spawn(());
    let hunters: Vec<Entity> = (0..30)
        .map(|i| {
            world.spawn((Target {
                who: prey,
                range: i as f32,
                _pad: 0,
            },))
        })
        .collect();
    let before = world.state_hash();
    let snap = world.snapshot().unwrap();
    assert_eq!(snap.state_hash(), before);
    // The hash reads the id: pointing one hunter elsewhere changes it.
    world.get_mut::<Target>(hunters[3]).unwrap().who = hunters[0];
    assert_ne!(world.state_hash(), before);
    world.restore(&snap).unwrap();
    assert_eq!(world.state_hash(), before);

    let bytes = snap.to_bytes().unwrap();
    let mut copy = build();
    copy.restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    copy.check_invariants();
    assert_eq!(copy.state_hash(), before);
    assert!(hunters
        .iter()
        .all(|&h| copy.get::<Target>(h).unwrap().who == prey));

    // Zero the generation of the last stored `prey` id (a Target column comes after the
    // archetype rows that hold `prey` itself) and fix the checksum: a well-formed buffer
    // whose value is no entity.
    let body = bytes.len() - 8;
    let mut pattern = prey.index().to_ne_bytes().to_vec();
    pattern.extend_from_slice(&prey.generation().to_ne_bytes());
    let at = (0..body - 8)
        .rev()
        .find(|&i| bytes[i..i + 8] == pattern[..])
        .expect("a stored target");
    let mut bad = bytes[..body].to_vec();
    bad[at + 4..at + 8].fill(0);
    bad.extend_from_slice(&Snapshot::checksum_of(&bad).to_le_bytes());
    let bad = Snapshot::from_bytes(&bad).expect("framing and checksum are fine");
    let mut target = build();
    let kept = target.spawn((5u32,));
    let err = target.restore(&bad).unwrap_err();
    match &err {
        SnapshotError::InvalidValue { component, entity } => {
            assert!(component.ends_with("Target"), "{err}");
            assert!(hunters.contains(entity), "{err}");
        }
        other => panic!("expected InvalidValue, got {other}"),
    }
    assert_eq!(target.get::<u32>(kept), Ok(&5), "nothing changed");
    target.check_invariants();
}
