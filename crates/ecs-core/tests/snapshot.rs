//! Snapshots, restore, the state hash and the byte format, against the world's own API.
//!
//! Sized for Miri (`cargo +nightly miri test -p ecs-core --test snapshot`): small chunks so
//! few entities cross many chunk boundaries, and fewer rounds under `cfg(miri)`.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use bytemuck::{Pod, Zeroable};
use ecs_core::{Entity, Snapshot, SnapshotError, Unregistered, World};

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Pos([f32; 3]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Vel([f32; 3]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Hp(u16);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Tag;

#[derive(Clone, Debug, PartialEq)]
struct Name(String);

#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Frame(u64);

#[derive(Clone, Debug, Default, PartialEq)]
struct Log(Vec<String>);

/// Rounds of the loops below: fewer under Miri, which interprets every instruction.
const ROUNDS: usize = if cfg!(miri) { 3 } else { 40 };

fn registered(chunk: usize) -> World {
    let mut world = World::with_test_chunk_size(chunk);
    register(&mut world);
    world
}

fn register(world: &mut World) {
    register_pods(world);
    world.register_clone::<Name>();
    world.register_snapshot_resource::<Log>();
}

/// Only pod types: snapshots of such a world can be written as bytes.
fn register_pods(world: &mut World) {
    world.register_pod::<Pos>();
    world.register_pod::<Vel>();
    world.register_pod::<Hp>();
    world.register_pod::<Tag>();
    world.register_pod_resource::<Frame>();
}

fn pod_world(chunk: usize) -> World {
    let mut world = World::with_test_chunk_size(chunk);
    register_pods(&mut world);
    world
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn f(&mut self) -> f32 {
        (self.next() >> 40) as f32 / 1024.0
    }
}

/// One random structural or value change.
fn churn(world: &mut World, rng: &mut Rng, live: &mut Vec<Entity>) {
    let pos = |rng: &mut Rng| Pos([rng.f(), rng.f(), rng.f()]);
    match rng.below(9) {
        0 | 1 => live.push(world.spawn((pos(rng), Vel([1.0, 0.0, rng.f()])))),
        2 => live.push(world.spawn((pos(rng), Hp(rng.below(100) as u16), Tag))),
        3 => live.push(world.spawn((Name(format!("n{}", rng.next() % 1000)), Hp(7)))),
        4 if !live.is_empty() => {
            let e = live.swap_remove(rng.below(live.len()));
            world.despawn(e).unwrap();
        }
        5 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            world.insert_one(e, Hp(rng.below(50) as u16)).unwrap();
        }
        6 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            let _ = world.remove::<(Tag,)>(e);
        }
        7 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            if let Ok(p) = world.get_mut::<Pos>(e) {
                p.0[1] += 1.0;
            }
        }
        _ => live.push(world.spawn(())),
    }
}

/// Everything observable about a world's entities, keyed by id.
type Dump = BTreeMap<Entity, (Option<Pos>, Option<Vel>, Option<Hp>, bool, Option<Name>)>;

fn dump(world: &World, snap_entities: impl Iterator<Item = Entity>) -> Dump {
    snap_entities
        .map(|e| {
            (
                e,
                (
                    world.get::<Pos>(e).ok().copied(),
                    world.get::<Vel>(e).ok().copied(),
                    world.get::<Hp>(e).ok().copied(),
                    world.has::<Tag>(e),
                    world.get::<Name>(e).ok().cloned(),
                ),
            )
        })
        .collect()
}

fn all_entities(world: &World) -> Vec<Entity> {
    world
        .archetypes()
        .iter()
        .flat_map(|a| a.chunks().iter().flat_map(|c| c.entities().iter().copied()))
        .collect()
}

fn world_dump(world: &World) -> Dump {
    dump(world, all_entities(world).into_iter())
}

#[test]
fn restore_brings_back_ids_values_free_list_and_resources() {
    let mut rng = Rng(1);
    let mut world = registered(256);
    let mut live = Vec::new();
    for _ in 0..ROUNDS * 3 {
        churn(&mut world, &mut rng, &mut live);
    }
    world.insert_resource(Frame(50));
    world.insert_resource(Log(vec!["a".into()]));
    let before = world_dump(&world);
    let hash = world.state_hash();
    let snap = world.snapshot().unwrap();
    assert_eq!(snap.state_hash(), hash);
    assert_eq!(snap.len(), world.len() as usize);

    // A twin that never diverges: what the world must behave like after the restore.
    let mut twin = registered(256);
    twin.restore(&snap).unwrap();
    twin.check_invariants();

    let mut rng2 = Rng(2);
    for _ in 0..ROUNDS * 3 {
        churn(&mut world, &mut rng2, &mut live);
    }
    world.insert_resource(Frame(99));
    world.resource_mut::<Log>().0.push("b".into());
    assert_ne!(world.state_hash(), hash);

    world.restore(&snap).unwrap();
    world.check_invariants();
    assert_eq!(world_dump(&world), before);
    assert_eq!(world.state_hash(), hash);
    assert_eq!(world.len() as usize, before.len());
    assert_eq!(*world.resource::<Frame>(), Frame(50));
    assert_eq!(world.resource::<Log>().0, ["a"]);

    // Same free list: the next spawns (and despawn-respawns) give the twin's ids.
    for i in 0..10 {
        let (a, b) = (world.spawn((Hp(i),)), twin.spawn((Hp(i),)));
        assert_eq!(a, b);
        if i % 3 == 0 {
            world.despawn(a).unwrap();
            twin.despawn(b).unwrap();
        }
    }
    assert_eq!(world.state_hash(), twin.state_hash());
    world.check_invariants();
}

#[test]
fn restore_removes_resources_absent_when_saved_and_keeps_unregistered_ones() {
    let mut world = registered(256);
    world.insert_resource(7u8); // not registered: restore leaves it alone
    let snap = world.snapshot().unwrap();
    world.insert_resource(Frame(3));
    world.insert_resource(Log::default());
    world.insert_resource(8u8);
    world.restore(&snap).unwrap();
    assert!(!world.contains_resource::<Frame>());
    assert!(!world.contains_resource::<Log>());
    assert_eq!(*world.resource::<u8>(), 8);
}

#[test]
fn unregistered_component_is_a_typed_error_or_skipped() {
    struct Opaque(#[expect(dead_code, reason = "only its presence matters")] u8);
    let mut world = registered(256);
    world.spawn((Hp(1),));
    let e = world.spawn((Hp(2), Opaque(0)));
    match world.snapshot() {
        Err(SnapshotError::NotSnapshotable { component, entity }) => {
            assert!(component.ends_with("Opaque"), "{component}");
            assert_eq!(entity, e);
        }
        other => panic!("expected NotSnapshotable, got {other:?}"),
    }
    let err = world.snapshot().unwrap_err().to_string();
    assert!(err.contains("Opaque` of entity 1v1"), "{err}");

    // Skipping: the entity keeps its id and pod values, without `Opaque`.
    let mut snap = Snapshot::default();
    world.snapshot_into(&mut snap, Unregistered::Skip).unwrap();
    world.restore(&snap).unwrap();
    world.check_invariants();
    assert_eq!(world.get::<Hp>(e), Ok(&Hp(2)));
    assert!(!world.has::<Opaque>(e));
    // `(Hp,)` and `(Hp, Opaque)` minus `Opaque` merged into one archetype of two rows.
    let arch = world.location(e).unwrap().archetype;
    assert_eq!(world.archetypes()[arch.index()].len(), 2);

    // A failed snapshot_into leaves the buffer empty, not half-written.
    world.insert_one(e, Opaque(1)).unwrap();
    assert!(world.snapshot_into(&mut snap, Unregistered::Fail).is_err());
    assert!(snap.is_empty());
}

#[test]
fn restoring_into_another_registry_is_a_typed_error() {
    let mut world = pod_world(256);
    world.spawn((Pos([1.0; 3]), Hp(3)));
    let snap = world.snapshot().unwrap();
    let bytes = snap.to_bytes().unwrap();
    let from_disk = Snapshot::from_bytes(&bytes).unwrap();

    // Nothing registered: unknown, by TypeId and by name.
    let mut empty = World::new();
    for s in [&snap, &from_disk] {
        match empty.restore(s) {
            Err(SnapshotError::UnknownComponent { component }) => {
                assert!(component.ends_with("::Pos") || component.ends_with("::Hp"))
            }
            other => panic!("expected UnknownComponent, got {other:?}"),
        }
    }
    assert!(empty.is_empty());

    // Registered, but as clone: bytes cannot go there.
    let mut cloned = World::new();
    cloned.register_clone::<Pos>();
    cloned.register_clone::<Hp>();
    assert!(matches!(
        cloned.restore(&from_disk),
        Err(SnapshotError::NotPodInWorld { .. })
    ));
    // The in-memory snapshot is fine either way? No: its columns are pod bytes too.
    assert!(matches!(
        cloned.restore(&snap),
        Err(SnapshotError::NotPodInWorld { .. })
    ));

    // A layout that differs: patch `Hp`'s recorded alignment from 2 to 1, fix the checksum.
    let mut patched = bytes.clone();
    let name = std::any::type_name::<Hp>().as_bytes();
    let at = patched.windows(name.len()).position(|w| w == name).unwrap() + name.len();
    assert_eq!(patched[at..at + 8], [2, 0, 0, 0, 2, 0, 0, 0]);
    patched[at + 4] = 1;
    let body = patched.len() - 8;
    let sum = Snapshot::checksum_of(&patched[..body]);
    patched[body..].copy_from_slice(&sum.to_le_bytes());
    let odd = Snapshot::from_bytes(&patched).unwrap();
    let mut right = pod_world(256);
    match right.restore(&odd) {
        Err(SnapshotError::LayoutMismatch {
            snapshot, world, ..
        }) => assert_eq!((snapshot, world), ((2, 1), (2, 2))),
        other => panic!("expected LayoutMismatch, got {other:?}"),
    }
    // And the right registry takes both.
    right.restore(&from_disk).unwrap();
    assert_eq!(right.state_hash(), world.state_hash());
}

#[test]
fn a_row_too_large_for_the_target_chunks_is_a_typed_error() {
    #[derive(Clone, Copy, Pod, Zeroable)]
    #[repr(C)]
    struct Big([u8; 1000]);
    let mut wide = World::with_test_chunk_size(4096);
    wide.register_pod::<Big>();
    wide.spawn((Big([1; 1000]),));
    let snap = wide.snapshot().unwrap();
    let mut narrow = World::with_test_chunk_size(512);
    narrow.register_pod::<Big>();
    let before = narrow.archetypes().len();
    assert!(matches!(
        narrow.restore(&snap),
        Err(SnapshotError::RowTooLarge(_))
    ));
    assert_eq!(narrow.archetypes().len(), before);
}

#[test]
fn snapshots_survive_other_chunk_sizes_and_fresh_worlds() {
    let mut rng = Rng(3);
    let mut world = registered(256);
    let mut live = Vec::new();
    for _ in 0..ROUNDS * 2 {
        churn(&mut world, &mut rng, &mut live);
    }
    let mut snap = Snapshot::default();
    world.snapshot_into(&mut snap, Unregistered::Fail).unwrap();
    for chunk in [128, 512, 4096] {
        let mut other = registered(chunk);
        other.restore(&snap).unwrap();
        other.check_invariants();
        assert_eq!(world_dump(&other), world_dump(&world), "chunk {chunk}");
        assert_eq!(other.state_hash(), world.state_hash());
    }
}

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
fn snapshot_into_reuses_buffers_across_shape_changes() {
    let mut rng = Rng(5);
    let mut world = registered(128);
    let mut live = Vec::new();
    let mut ring: Vec<Snapshot> = (0..3).map(|_| Snapshot::default()).collect();
    // `saved[f]`: hash and contents at logical frame `f`, whose snapshot is `ring[f % 3]`.
    let mut saved = Vec::new();
    let mut frame = 0;
    for step in 0..ROUNDS {
        churn(&mut world, &mut rng, &mut live);
        churn(&mut world, &mut rng, &mut live);
        let slot = &mut ring[frame % 3];
        world.snapshot_into(slot, Unregistered::Fail).unwrap();
        assert_eq!(slot.state_hash(), world.state_hash());
        saved.truncate(frame);
        saved.push((world.state_hash(), world_dump(&world)));
        if frame >= 2 && step % 4 == 0 {
            // Rewind two frames, check, and go on from there.
            frame -= 2;
            world.restore(&ring[frame % 3]).unwrap();
            world.check_invariants();
            assert_eq!(world.state_hash(), saved[frame].0);
            assert_eq!(world_dump(&world), saved[frame].1);
            live = all_entities(&world);
        }
        frame += 1;
    }
}

#[test]
fn pending_reservations_are_not_saved_and_the_tick_never_goes_back() {
    let mut world = registered(256);
    let a = world.spawn((Hp(1),));
    let reserved = world.reserve_entity();
    let snap = world.snapshot().unwrap();
    world.flush();
    assert!(world.contains(reserved));
    for _ in 0..5 {
        world.advance_tick();
    }
    let tick = world.change_tick();
    world.restore(&snap).unwrap();
    assert!(!world.contains(reserved));
    assert!(world.change_tick() >= tick);
    // The restored column is stamped at the current tick.
    let arch = &world.archetypes()[world.location(a).unwrap().archetype.index()];
    assert_eq!(arch.chunks()[0].changed_tick(0), world.change_tick());
    // The reserved id is handed out again.
    assert_eq!(world.spawn(()), reserved);
}

#[derive(Debug)]
struct Fragile(u32);

impl Clone for Fragile {
    fn clone(&self) -> Self {
        assert!(self.0 != 13, "clone of 13 refused");
        Self(self.0)
    }
}

struct Bomb(bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.0 && !std::thread::panicking() {
            panic!("bomb");
        }
    }
}

#[test]
fn a_panicking_clone_leaves_the_world_as_it_was() {
    let mut world = World::with_test_chunk_size(256);
    world.register_clone::<Fragile>();
    world.register_pod::<Hp>();
    let e = world.spawn((Fragile(13), Hp(1)));
    // Cloning 13 panics while taking the snapshot: nothing changes.
    assert!(catch_unwind(AssertUnwindSafe(|| world.snapshot())).is_err());
    world.get_mut::<Fragile>(e).unwrap().0 = 1;
    let snap = world.snapshot().unwrap();
    world.get_mut::<Fragile>(e).unwrap().0 = 13;
    world.restore(&snap).unwrap();
    assert_eq!(world.get::<Fragile>(e).unwrap().0, 1);
    world.check_invariants();
}

#[test]
fn a_panicking_drop_during_restore_leaves_an_empty_consistent_world() {
    let mut world = World::with_test_chunk_size(256);
    world.register_pod::<Hp>();
    world.spawn((Hp(1),));
    let snap = world.snapshot().unwrap();
    world.spawn((Hp(2), Bomb(true)));
    assert!(catch_unwind(AssertUnwindSafe(|| world.restore(&snap))).is_err());
    world.check_invariants();
    assert!(world.is_empty());
    world.restore(&snap).unwrap();
    assert_eq!(world.len(), 1);
    world.check_invariants();
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

/// A world where `Hp` is enableable (and pod), with some rows switched off.
fn toggled_world(chunk: usize) -> (World, Vec<Entity>) {
    let mut world = World::with_test_chunk_size(chunk);
    world.register_enableable::<Hp>();
    world.register_pod::<Hp>();
    world.register_pod::<Pos>();
    let ids: Vec<Entity> = (0..40u16)
        .map(|i| world.spawn((Hp(i), Pos([f32::from(i); 3]))))
        .collect();
    for (i, &e) in ids.iter().enumerate() {
        if i % 3 == 1 {
            world.set_enabled::<Hp>(e, false).unwrap();
        }
    }
    (world, ids)
}

fn enabled_states(world: &World, ids: &[Entity]) -> Vec<bool> {
    ids.iter()
        .map(|&e| world.is_enabled::<Hp>(e).unwrap())
        .collect()
}

#[test]
fn restore_keeps_disabled_components_and_the_hash_sees_them() {
    let (mut world, ids) = toggled_world(256);
    let before = enabled_states(&world, &ids);
    let hash = world.state_hash();
    let snap = world.snapshot().unwrap();
    assert_eq!(snap.state_hash(), hash);

    // Enabling everything changes the hash; restoring brings the switched-off rows back.
    for &e in &ids {
        world.set_enabled::<Hp>(e, true).unwrap();
    }
    assert_ne!(world.state_hash(), hash, "disabling is part of the state");
    world.restore(&snap).unwrap();
    world.check_invariants();
    assert_eq!(enabled_states(&world, &ids), before);
    assert_eq!(world.state_hash(), hash);

    // Through bytes, into a world with other chunks: same bits, same hash.
    let bytes = snap.to_bytes().unwrap();
    let (mut other, _) = toggled_world(1024);
    other
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    other.check_invariants();
    assert_eq!(enabled_states(&other, &ids), before);
    assert_eq!(other.state_hash(), hash);
}

#[test]
fn disabled_rows_need_an_enableable_component_in_the_target_world() {
    let (world, _) = toggled_world(256);
    let snap = world.snapshot().unwrap();
    let mut plain = World::with_test_chunk_size(256);
    plain.register_pod::<Hp>();
    plain.register_pod::<Pos>();
    let err = plain.restore(&snap).unwrap_err();
    assert!(
        matches!(&err, SnapshotError::NotEnableableInWorld { component } if component.contains("Hp")),
        "{err:?}"
    );
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

/// One pod-only change, so the world stays drop-free and restores reuse its chunks in place.
fn pod_churn(world: &mut World, rng: &mut Rng, live: &mut Vec<Entity>) {
    match rng.below(6) {
        0 => live.push(world.spawn((Pos([rng.f(), 0.0, 0.0]), Vel([1.0, 0.0, 0.0])))),
        1 if !live.is_empty() => {
            let e = live.swap_remove(rng.below(live.len()));
            world.despawn(e).unwrap();
        }
        2 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            world.insert_one(e, Hp(rng.below(50) as u16)).unwrap();
        }
        3 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            let _ = world.remove::<(Hp,)>(e);
        }
        _ => {
            // A frame of simulation: every position moves, no structural change.
            for &e in live.iter() {
                if let Ok(p) = world.get_mut::<Pos>(e) {
                    p.0[0] += 1.0;
                }
            }
        }
    }
}

#[test]
fn rollback_into_the_same_shape_keeps_ids_table_and_free_list_right() {
    // Pod only: restores reuse the world's chunks in order and skip rows whose entity is
    // already there. Rewinding after 0 to 3 changes mixes chunks that kept all their
    // entities, chunks with a moved or missing row, and archetypes that grew or shrank.
    let mut rng = Rng(11);
    let mut world = pod_world(256);
    let mut live: Vec<Entity> = (0..ROUNDS * 4)
        .map(|i| world.spawn((Pos([i as f32, 1.0, 2.0]), Vel([0.0, 1.0, 0.0]))))
        .collect();
    for _ in 0..ROUNDS {
        pod_churn(&mut world, &mut rng, &mut live);
    }
    let snap = world.snapshot().unwrap();
    let (before, hash) = (world_dump(&world), world.state_hash());
    let saved_live = live.clone();
    let mut twin = pod_world(256);
    twin.restore(&snap).unwrap();
    for round in 0..ROUNDS {
        for _ in 0..round % 4 {
            pod_churn(&mut world, &mut rng, &mut live);
        }
        world.restore(&snap).unwrap();
        world.check_invariants();
        assert_eq!(world_dump(&world), before, "round {round}");
        assert_eq!(world.state_hash(), hash, "round {round}");
        for &e in &saved_live {
            assert!(world.contains(e), "round {round}: {e:?} lost");
        }
        live.clone_from(&saved_live);
    }
    // The free list came back too: later spawns and despawns give the twin's ids.
    for i in 0..8u16 {
        let (a, b) = (world.spawn((Hp(i),)), twin.spawn((Hp(i),)));
        assert_eq!(a, b);
        world.despawn(saved_live[i as usize]).unwrap();
        twin.despawn(saved_live[i as usize]).unwrap();
    }
    assert_eq!(world.state_hash(), twin.state_hash());
    world.check_invariants();
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
