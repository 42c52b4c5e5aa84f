//! Snapshots and restore, against the world's own API: ids, values, the free list and
//! resources come back; snapshots survive other chunk sizes and fresh worlds, and reuse their
//! buffers; restoring into another registry, too small chunks or a world without the
//! enableable type is a typed error; a panicking `Clone` or `Drop` leaves the world
//! consistent; rollback into the same shape keeps the id table and free list right.
//!
//! Sized for Miri (`cargo +nightly miri test -p ecs-core --test snapshot_restore`): small
//! chunks so few entities cross many chunk boundaries, and fewer rounds under `cfg(miri)`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use bytemuck::{Pod, Zeroable};
use ecs_core::{Entity, Snapshot, SnapshotError, Unregistered, World};

mod common;
use common::snapshots::*;

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
