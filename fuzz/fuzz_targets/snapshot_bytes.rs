//! `Snapshot::from_bytes` on arbitrary bytes, then `restore` of whatever it accepts.
//!
//! The first byte picks the mode: odd, the rest is taken as a snapshot body and the correct
//! checksum is appended (so the fuzzer gets past the checksum and exercises the structural
//! checks and the restore path); even, the rest is read as is. Properties:
//!
//! - `from_bytes` never panics: any input is a snapshot or a typed error.
//! - A snapshot it accepts restores into a world that registered the seed corpus's pod types
//!   and its serde types (`String`, a `Vec<u16>` resource and an `Events<u32>` queue, in
//!   JSON, hashed), or is refused with a typed error; after a
//!   restore the world's invariants hold, its state hash is the snapshot's (unless the bytes
//!   hold serde values without their hashes, which the snapshot can only count by presence),
//!   writing it again reads back to the same hash, and spawning and despawning still work.
//! - Saved change ticks (format 3) are checked when read, so restoring them never overflows a
//!   tick or leaves a row newer than its chunk.
//! - The same bytes read as a *simulation* snapshot (`SimSnapshot::from_bytes`: the world's
//!   bytes inside, then schedule state and a fixed timestep) never panic either; one it
//!   accepts restores (with no schedules given) or is refused, and the world stays
//!   consistent. Seeds `seed-sim-*` start the fuzzer inside that format.

#![no_main]

use ecs_core::{SerdeFormat, Snapshot, World};
use ecs_sched::SimSnapshot;
use libfuzzer_sys::fuzz_target;

struct Json;

impl SerdeFormat for Json {
    type Error = serde_json::Error;
    fn to_vec<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Self::Error> {
        serde_json::to_vec(value)
    }
    fn from_slice<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Self::Error> {
        serde_json::from_slice(bytes)
    }
}

/// The world the seeds were taken from registers these (see fuzz/corpus/snapshot_bytes/).
fn world() -> World {
    let mut world = World::with_test_chunk_size(256);
    world.register_pod::<[f32; 3]>();
    world.register_pod::<u32>();
    world.register_enableable::<u8>(); // so seeds can carry disabled rows
    world.register_pod::<u8>();
    world.register_pod::<[u8; 0]>(); // a zero-sized column (`()` is refused: tuples are never components)
    world.register_pod_resource::<u64>();
    world.register_serde::<String, Json>();
    world.register_hashed::<String>();
    world.register_serde_resource::<Vec<u16>, Json>();
    world.register_hashed_resource::<Vec<u16>>();
    world.register_serde_resource::<ecs_sched::Events<u32>, Json>(); // an event queue
    world.register_hashed_resource::<ecs_sched::Events<u32>>();
    world.register_serde_primitives::<Json>(); // saved `Local`s and counters
    world
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let owned;
    let bytes = if mode & 1 == 1 {
        let mut v = rest.to_vec();
        v.extend_from_slice(&Snapshot::checksum_of(rest).to_le_bytes());
        owned = v;
        &owned[..]
    } else {
        rest
    };
    if let Ok(sim) = SimSnapshot::from_bytes(bytes, &world()) {
        let mut world = world();
        let _ = sim.restore(&mut world, &mut [], None);
        world.check_invariants();
    }
    let Ok(snap) = Snapshot::from_bytes(bytes) else {
        return;
    };
    let mut world = world();
    // Something unrelated already there, to be emptied by the restore.
    world.spawn((7u32, 1u8));
    if world.restore(&snap).is_err() {
        world.check_invariants();
        return;
    }
    world.check_invariants();
    if !snap.has_unhashed_encoded_values() {
        assert_eq!(world.state_hash(), snap.state_hash());
    }
    assert_eq!(world.len() as usize, snap.len());
    let again = world.snapshot().expect("every restored type is registered");
    let round = Snapshot::from_bytes(&again.to_bytes().expect("pod or serde only")).expect("own output");
    assert_eq!(round.state_hash(), world.state_hash());
    for e in snap.entities().take(4) {
        world.despawn(e).expect("restored entities are live");
    }
    let fresh = world.spawn((3u32,));
    assert!(world.contains(fresh));
    world.check_invariants();
});
