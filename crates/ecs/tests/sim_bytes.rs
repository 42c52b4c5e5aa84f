//! A whole simulation saved to disk and resumed elsewhere (feature `serde`): a world with pod
//! and serde components, an event queue, two schedules with `Local`s, `every_n_runs`, an
//! event reader, `Changed` / `Added` readers and a fixed timestep. At frame 50 the simulation
//! snapshot is written to bytes; a *fresh* world and fresh schedules (as a new process would
//! build them) read it back and run to frame 100: every frame's state hash and every
//! observation equal the original run's, on 1 and 4 threads.
//!
//! Run with `cargo test -p ecs --features serde --test sim_bytes` (CI does).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytemuck::{Pod, Zeroable};
use ecs::prelude::*;
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

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Pos([f32; 2]);

#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Frame(u64);

/// A non-pod component: written through the format.
#[derive(Clone, Debug, PartialEq, Hash, Serialize, Deserialize)]
struct Name(String);

#[derive(Clone, Debug, PartialEq, Hash, Serialize, Deserialize)]
struct Hit {
    target: u32,
    round: u32,
}

/// A `Local` of a type of our own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Streak {
    longest: u32,
    current: u32,
}

type Log = Arc<Mutex<Vec<String>>>;

struct Sim {
    world: World,
    physics: Schedule,
    frame: Schedule,
    fixed: FixedTimestep,
}

/// The world's registrations: what a new process does before loading.
fn registered() -> World {
    let mut world = World::new();
    world.register_pod::<Pos>();
    world.register_pod_resource::<Frame>();
    world.register_serde::<Name, Json>();
    world.register_hashed::<Name>();
    world.register_serde_resource::<Events<Hit>, Json>();
    world.register_hashed_resource::<Events<Hit>>();
    world.register_state_serde::<Streak, Json>();
    world.register_serde_primitives::<Json>();
    world
}

fn populated() -> World {
    let mut world = registered();
    world.insert_resource(Frame(0));
    for i in 0..120u32 {
        world.spawn((Pos([i as f32, 0.0]), Name(format!("unit {i}"))));
    }
    world
}

/// The schedules: the same code in the original and the resumed process.
fn sim(world: World, threads: usize, log: &Log) -> Sim {
    let mut physics = Schedule::with_threads(threads);
    physics
        .add_system(|mut q: Query<(Entity, RefRW<Pos>)>, t: Res<FixedTime>| {
            for (e, p) in q.iter_mut() {
                if (u64::from(e.index()) + t.step) % 3 == 0 {
                    p.0[0] += t.dt_secs();
                }
            }
        })
        .named("movement");
    physics
        .add_system(
            |q: Query<Entity, With<Name>>, mut hits: EventWriter<Hit>, mut round: Local<u32>| {
                *round += 1;
                for e in q.iter().filter(|e| (e.index() + *round) % 11 == 0) {
                    hits.send(Hit {
                        target: e.index(),
                        round: *round,
                    });
                }
            },
        )
        .named("hits");
    let mut frame = Schedule::with_threads(threads);
    frame
        .add_system(|mut f: ResMut<Frame>| f.0 += 1)
        .named("count");
    let l = Arc::clone(log);
    frame
        .add_system(
            move |mut hits: EventReader<Hit>, mut streak: Local<Streak>, f: Res<Frame>| {
                let seen: Vec<(u32, u32)> = hits.read().map(|h| (h.target, h.round)).collect();
                if seen.is_empty() {
                    streak.current = 0;
                } else {
                    streak.current += 1;
                    streak.longest = streak.longest.max(streak.current);
                }
                l.lock()
                    .unwrap()
                    .push(format!("{} hits {seen:?} streak {:?}", f.0, *streak));
            },
        )
        .named("hit_reader");
    let l = Arc::clone(log);
    frame
        .add_system(move |q: Query<Entity, Changed<Pos>>, f: Res<Frame>| {
            let mut moved: Vec<Entity> = q.iter().collect();
            moved.sort();
            l.lock()
                .unwrap()
                .push(format!("{} moved {}", f.0, moved.len()));
        })
        .named("moved");
    let l = Arc::clone(log);
    frame
        .add_system(move |q: Query<Entity, Added<Name>>, f: Res<Frame>| {
            let mut new: Vec<Entity> = q.iter().collect();
            new.sort();
            l.lock().unwrap().push(format!("{} added {new:?}", f.0));
        })
        .named("added");
    frame
        .add_system(|mut commands: Commands, f: Res<Frame>| {
            commands.spawn((Pos([0.0, f.0 as f32]), Name(format!("late {}", f.0))));
        })
        .named("spawner")
        .run_if(every_n_runs(7));
    Sim {
        world,
        physics,
        frame,
        fixed: FixedTimestep::new(Duration::from_millis(10)).with_max_steps(3),
    }
}

fn frame_time(frame: usize) -> Duration {
    Duration::from_millis([7, 16, 23, 4, 31][frame % 5])
}

impl Sim {
    fn step(&mut self, frame: usize) -> u64 {
        self.fixed
            .run(&mut self.physics, &mut self.world, frame_time(frame))
            .unwrap();
        self.frame.run(&mut self.world).unwrap();
        self.world.try_state_hash().expect("every value is hashed")
    }

    fn schedules(&mut self) -> [&mut Schedule; 2] {
        [&mut self.physics, &mut self.frame]
    }
}

/// The log sorted by frame then line (readers of one frame may run side by side).
fn in_frame_order(mut log: Vec<String>) -> Vec<String> {
    let frame = |line: &str| -> u64 { line.split(' ').next().unwrap().parse().unwrap() };
    log.sort_by(|a, b| (frame(a), a).cmp(&(frame(b), b)));
    log
}

/// Runs to frame 100, writing the simulation to bytes at frame 50; returns the bytes and the
/// hashes and log of frames 50..100.
fn original(threads: usize) -> (Vec<u8>, Vec<u64>, Vec<String>) {
    let log: Log = Arc::default();
    let mut sim = sim(populated(), threads, &log);
    let mut bytes = Vec::new();
    let mut hashes = Vec::new();
    for frame in 0..100 {
        if frame == 50 {
            let snap =
                SimSnapshot::capture(&sim.world, &[&sim.physics, &sim.frame], Some(&sim.fixed))
                    .unwrap();
            bytes = snap.to_bytes(&sim.world).unwrap();
            log.lock().unwrap().clear();
        }
        let hash = sim.step(frame);
        if frame >= 50 {
            hashes.push(hash);
        }
    }
    let log = in_frame_order(log.lock().unwrap().clone());
    (bytes, hashes, log)
}

/// A new process: fresh registrations, fresh schedules, the bytes read back.
fn resumed(bytes: &[u8], threads: usize) -> (Vec<u64>, Vec<String>) {
    let log: Log = Arc::default();
    let mut sim = sim(registered(), threads, &log);
    let snap = SimSnapshot::from_bytes(bytes, &sim.world).unwrap();
    let (mut world, mut fixed) = (World::new(), FixedTimestep::new(Duration::from_secs(1)));
    std::mem::swap(&mut world, &mut sim.world);
    std::mem::swap(&mut fixed, &mut sim.fixed);
    snap.restore(&mut world, &mut sim.schedules(), Some(&mut fixed))
        .unwrap();
    sim.world = world;
    sim.fixed = fixed;
    sim.world.check_invariants();
    let hashes = (50..100).map(|frame| sim.step(frame)).collect();
    let log = in_frame_order(log.lock().unwrap().clone());
    (hashes, log)
}

#[test]
fn a_simulation_written_to_bytes_resumes_bit_identically_in_a_fresh_world() {
    let (bytes, hashes, log) = original(1);
    for threads in [1, 4] {
        let (resumed_hashes, resumed_log) = resumed(&bytes, threads);
        assert_eq!(
            resumed_hashes, hashes,
            "{threads} threads: state hashes diverged"
        );
        assert_eq!(resumed_log, log, "{threads} threads: observations diverged");
    }
    let (bytes4, hashes4, log4) = original(4);
    assert_eq!(
        bytes4, bytes,
        "the saved bytes do not depend on the thread count"
    );
    assert_eq!((hashes4, log4), (hashes, log.clone()));
    // The log has substance: hits with a streak, partial change sets, late spawns.
    let text = log.join("\n");
    assert!(text.contains("hits [("));
    assert!(
        text.contains("current: 0") && text.contains("current: 2"),
        "{text}"
    );
    assert!(text.contains(" moved 1\n"), "a partial change set");
    assert!(log
        .iter()
        .any(|l| l.contains("added [") && !l.ends_with("[]")));
}

#[test]
fn a_fresh_world_that_forgets_a_registration_is_refused_by_name() {
    let (bytes, ..) = original(1);
    let mut bare = World::new();
    bare.register_pod::<Pos>();
    let err = SimSnapshot::from_bytes(&bytes, &bare).unwrap_err();
    assert!(err.to_string().contains("register_serde"), "{err}");
}

#[test]
fn saved_state_of_another_type_is_refused_before_anything_changes() {
    let (bytes, ..) = original(1);
    let log: Log = Arc::default();
    let mut sim = sim(registered(), 1, &log);
    // The same schedules, but `hit_reader` now keeps a `Local<u64>` where the file has a
    // `Streak`: names and counts agree, types do not.
    sim.frame = Schedule::single_threaded();
    sim.frame
        .add_system(|mut f: ResMut<Frame>| f.0 += 1)
        .named("count");
    sim.frame
        .add_system(|_: EventReader<Hit>, _: Local<u64>, _: Res<Frame>| {})
        .named("hit_reader");
    for name in ["moved", "added", "spawner"] {
        sim.frame.add_system(|_: Res<Frame>| {}).named(name);
    }
    sim.frame
        .configure_system("spawner")
        .run_if(every_n_runs(7));
    let snap = SimSnapshot::from_bytes(&bytes, &sim.world).unwrap();
    sim.world.insert_resource(Frame(999));
    let err = snap
        .restore(
            &mut sim.world,
            &mut [&mut sim.physics, &mut sim.frame],
            Some(&mut sim.fixed),
        )
        .unwrap_err();
    assert!(
        matches!(&err, StateError::ScheduleMismatch { detail } if detail.contains("Streak")),
        "{err}"
    );
    assert_eq!(sim.world.resource::<Frame>().0, 999, "nothing changed");
}

#[test]
fn every_cut_and_every_flipped_byte_is_an_error_not_a_panic() {
    let (bytes, ..) = original(1);
    let world = registered();
    for cut in (0..bytes.len()).step_by(97) {
        assert!(SimSnapshot::from_bytes(&bytes[..cut], &world).is_err());
    }
    for at in (0..bytes.len()).step_by(89) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        assert!(SimSnapshot::from_bytes(&bad, &world).is_err(), "byte {at}");
    }
}
