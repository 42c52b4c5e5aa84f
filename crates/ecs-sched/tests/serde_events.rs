//! `Events<T>` in snapshot bytes (feature `serde`): a queue written by systems, saved through a
//! serde format with the world and read back into a fresh world, gives readers there the same
//! events; the queue counts in the state hash.
//!
//! Run with `cargo test -p ecs-sched --features serde --test serde_events` (CI does).

use std::sync::{Arc, Mutex};

use ecs_core::{SerdeFormat, Snapshot, World};
use ecs_sched::{EventReader, EventWriter, Events, Local, Schedule};
use serde::{Deserialize, Serialize};

struct Json;

impl SerdeFormat for Json {
    type Error = serde_json::Error;
    fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Self::Error> {
        serde_json::to_vec(value)
    }
    fn from_slice<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Self::Error> {
        serde_json::from_slice(bytes)
    }
}

#[derive(Clone, Debug, PartialEq, Hash, Serialize, Deserialize)]
enum Msg {
    Spawned(u32),
    Said(String),
}

fn register(world: &mut World) {
    world.register_serde_resource::<Events<Msg>, Json>();
    world.register_hashed_resource::<Events<Msg>>();
}

fn sender(mut out: EventWriter<Msg>, mut frame: Local<u32>) {
    *frame += 1;
    out.send(Msg::Spawned(*frame));
    out.send(Msg::Said(format!("frame {}", *frame)));
}

/// A schedule whose one reader pushes what it reads into `seen`.
fn reader_schedule(seen: Arc<Mutex<Vec<Msg>>>) -> Schedule {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(move |mut events: EventReader<Msg>| {
        seen.lock().unwrap().extend(events.read().cloned());
    });
    schedule
}

#[test]
fn an_event_queue_saved_to_bytes_reads_back_the_same_events() {
    let mut world = World::new();
    register(&mut world);
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(sender);
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    // Both windows hold events (the last two runs').
    let queued: Vec<Msg> = world.resource::<Events<Msg>>().iter().cloned().collect();
    assert_eq!(queued.len(), 4, "{queued:?}");
    assert_eq!(queued[0], Msg::Spawned(2));

    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let read = Snapshot::from_bytes(&bytes).unwrap();
    assert_eq!(read.state_hash(), world.state_hash());
    let mut loaded = World::new();
    register(&mut loaded);
    loaded.restore(&read).unwrap();
    assert_eq!(loaded.state_hash(), world.state_hash());

    // A new reader in each world sees the same events.
    let (here, there) = (Arc::default(), Arc::default());
    reader_schedule(Arc::clone(&here)).run(&mut world).unwrap();
    reader_schedule(Arc::clone(&there))
        .run(&mut loaded)
        .unwrap();
    assert_eq!(*here.lock().unwrap(), queued);
    assert_eq!(*there.lock().unwrap(), queued);

    // And the queue goes on with the same ids: one more sending run in each world keeps them
    // equal.
    let mut again = Schedule::single_threaded();
    again.add_system(sender);
    again.run(&mut world).unwrap();
    let mut again = Schedule::single_threaded();
    again.add_system(sender);
    again.run(&mut loaded).unwrap();
    assert_eq!(loaded.state_hash(), world.state_hash());
}

#[test]
fn a_queue_whose_ids_would_overflow_is_refused() {
    let err = serde_json::from_str::<Events<u8>>("[18446744073709551615, [1, 2], []]").unwrap_err();
    assert!(err.to_string().contains("u64::MAX"), "{err}");
    let ok: Events<u8> = serde_json::from_str("[5, [1], [2, 3]]").unwrap();
    assert_eq!(ok.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn a_changed_queue_changes_the_hash() {
    let build = |n: u32| {
        let mut world = World::new();
        register(&mut world);
        let mut events = Events::default();
        for i in 0..n {
            events.send(Msg::Spawned(i));
        }
        world.insert_resource(events);
        world
    };
    assert_eq!(build(3).state_hash(), build(3).state_hash());
    assert_ne!(build(3).state_hash(), build(4).state_hash());
}
