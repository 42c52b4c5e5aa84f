//! Simulation snapshots: a world and two schedules (a fixed-step physics schedule and a
//! per-frame one) with `Local`s, `every_n_runs`, events written and read in different frames,
//! `Changed` / `Added` readers and a fixed timestep. Snapshot at frame 50, run to 100, restore,
//! run to 100 again: every frame's state hash, event sequence and change set must repeat, on 1
//! and 4 threads. A world-only restore is shown to diverge, so the test can tell.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytemuck::{Pod, Zeroable};
use ecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Pos([f32; 2]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Vel([f32; 2]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Hp(u32);

#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Frame(u64);

#[derive(Clone, Debug, PartialEq)]
struct Hit {
    target: Entity,
    hp: u32,
}

/// What the systems observed, one line per observation, in frame order.
type Log = Arc<Mutex<Vec<String>>>;

struct Sim {
    world: World,
    physics: Schedule,
    frame: Schedule,
    fixed: FixedTimestep,
}

fn sim(threads: usize, log: &Log) -> Sim {
    let mut world = World::new();
    world.register_pod::<Pos>();
    world.register_pod::<Vel>();
    world.register_pod::<Hp>();
    world.register_pod_resource::<Frame>();
    world.register_snapshot_resource::<Events<Hit>>();
    world.insert_resource(Frame(0));
    for i in 0..200u32 {
        world.spawn((Pos([i as f32, 0.0]), Vel([1.0, 0.5]), Hp(3 + i % 5)));
    }

    // Physics: moves every third entity per step (so `Changed<Pos>` sees a subset), damages
    // some and reports the hits as events.
    let mut physics = Schedule::with_threads(threads);
    physics
        .add_system(
            |mut q: Query<(Entity, RefRW<Pos>, RefRO<Vel>)>, t: Res<FixedTime>| {
                let dt = t.dt_secs();
                for (e, p, v) in q.iter_mut() {
                    if (e.index() as u64 + t.step) % 3 == 0 {
                        p.0[0] += v.0[0] * dt;
                        p.0[1] += v.0[1] * dt;
                    }
                }
            },
        )
        .named("movement");
    physics
        .add_system(
            |mut q: Query<(Entity, RefRW<Hp>)>,
             t: Res<FixedTime>,
             mut hits: EventWriter<Hit>,
             mut rounds: Local<u32>| {
                *rounds += 1;
                for (e, hp) in q.iter_mut() {
                    if hp.0 > 0 && (e.index() as u64 + t.step) % 7 == 0 {
                        hp.0 -= 1;
                        hits.send(Hit {
                            target: e,
                            hp: hp.0 + *rounds,
                        });
                    }
                }
            },
        )
        .named("damage");

    // Per frame: count frames, read last frame's hits, watch changes, spawn and despawn.
    let mut frame = Schedule::with_threads(threads);
    frame
        .add_system(|mut f: ResMut<Frame>| f.0 += 1)
        .named("count");
    let l = Arc::clone(log);
    frame
        .add_system(
            move |mut hits: EventReader<Hit>, mut total: Local<u64>, f: Res<Frame>| {
                let seen: Vec<(u32, u32)> = hits.read().map(|h| (h.target.index(), h.hp)).collect();
                *total += seen.len() as u64;
                l.lock()
                    .unwrap()
                    .push(format!("{} hits {seen:?} total {}", f.0, *total));
            },
        )
        .named("hit_reader");
    let l = Arc::clone(log);
    frame
        .add_system(move |q: Query<Entity, Changed<Pos>>, f: Res<Frame>| {
            let mut moved: Vec<Entity> = q.iter().collect();
            moved.sort();
            l.lock().unwrap().push(format!("{} moved {moved:?}", f.0));
        })
        .named("moved");
    let l = Arc::clone(log);
    frame
        .add_system(move |q: Query<Entity, Added<Hp>>, f: Res<Frame>| {
            let mut new: Vec<Entity> = q.iter().collect();
            new.sort();
            l.lock().unwrap().push(format!("{} added {new:?}", f.0));
        })
        .named("added");
    frame
        .add_system(
            |mut commands: Commands, q: Query<(Entity, RefRO<Hp>)>, f: Res<Frame>| {
                for (e, hp) in q.iter() {
                    if hp.0 == 0 {
                        commands.despawn(e);
                    }
                }
                let x = f.0 as f32;
                commands.spawn((Pos([x, x]), Vel([0.5, 1.0]), Hp(4)));
            },
        )
        .named("spawner")
        .run_if(every_n_runs(4));
    Sim {
        world,
        physics,
        frame,
        fixed: FixedTimestep::new(Duration::from_millis(10)).with_max_steps(3),
    }
}

/// Frame times that leave the accumulator at varying remainders and take 0 to 3 steps.
fn frame_time(frame: usize) -> Duration {
    Duration::from_millis([7, 16, 23, 4, 31][frame % 5])
}

impl Sim {
    fn step(&mut self, frame: usize) -> u64 {
        self.fixed
            .run(&mut self.physics, &mut self.world, frame_time(frame))
            .unwrap();
        self.frame.run(&mut self.world).unwrap();
        self.world.state_hash()
    }
}

struct Outcome {
    hashes: Vec<u64>,
    log: Vec<String>,
    replay_hashes: Vec<u64>,
    replay_log: Vec<String>,
}

fn run(threads: usize) -> Outcome {
    let log: Log = Arc::default();
    let mut sim = sim(threads, &log);
    let mut hashes = Vec::new();
    let mut snap = None;
    let mut log_at_50 = 0;
    for frame in 0..100 {
        if frame == 50 {
            snap = Some(
                SimSnapshot::capture(&sim.world, &[&sim.physics, &sim.frame], Some(&sim.fixed))
                    .unwrap(),
            );
            log_at_50 = log.lock().unwrap().len();
        }
        hashes.push(sim.step(frame));
    }
    let full_log = log.lock().unwrap().clone();
    log.lock().unwrap().clear();

    let snap = snap.unwrap();
    snap.restore(
        &mut sim.world,
        &mut [&mut sim.physics, &mut sim.frame],
        Some(&mut sim.fixed),
    )
    .unwrap();
    sim.world.check_invariants();
    let replay_hashes = (50..100).map(|frame| sim.step(frame)).collect();
    let replay_log = log.lock().unwrap().clone();
    Outcome {
        hashes: hashes[50..].to_vec(),
        log: in_frame_order(full_log[log_at_50..].to_vec()),
        replay_hashes,
        replay_log: in_frame_order(replay_log),
    }
}

/// The log sorted by frame, then by line: the readers `moved`, `added` and `hit_reader` may run
/// side by side on a pool, so the order in which their lines of one frame reach the shared log
/// is timing, not simulation.
fn in_frame_order(mut log: Vec<String>) -> Vec<String> {
    let frame = |line: &str| -> u64 { line.split(' ').next().unwrap().parse().unwrap() };
    log.sort_by(|a, b| (frame(a), a).cmp(&(frame(b), b)));
    log
}

#[test]
fn restoring_a_simulation_snapshot_replays_frames_50_to_100_exactly() {
    let one = run(1);
    let four = run(4);
    for outcome in [&one, &four] {
        assert_eq!(
            outcome.replay_hashes, outcome.hashes,
            "state hashes diverged"
        );
        assert_eq!(outcome.replay_log.len(), outcome.log.len());
        for (replayed, original) in outcome.replay_log.iter().zip(&outcome.log) {
            assert_eq!(replayed, original);
        }
    }
    assert_eq!(one.hashes, four.hashes, "thread count changed the run");
    assert_eq!(one.log, four.log);
    // The log has substance: hits, partial change sets and additions.
    let log = one.log.join("\n");
    assert!(log.contains("hits [("), "some frame read hits");
    assert!(one
        .log
        .iter()
        .any(|l| l.contains("added [") && !l.ends_with("[]")));
    let moved: Vec<&String> = one.log.iter().filter(|l| l.contains(" moved ")).collect();
    assert!(moved.iter().any(|l| !l.ends_with("[]")));
}

#[test]
fn a_world_only_restore_does_not_replay() {
    // The same run, rolled back with the world snapshot alone: `Local`s, the `every_n_runs`
    // counter, reader cursors, query ticks and the accumulator keep their frame-100 values.
    let log: Log = Arc::default();
    let mut sim = sim(1, &log);
    let mut snap = None;
    let mut hashes = Vec::new();
    let mut log_at_50 = 0;
    for frame in 0..100 {
        if frame == 50 {
            snap = Some(sim.world.snapshot().unwrap());
            log_at_50 = log.lock().unwrap().len();
        }
        hashes.push(sim.step(frame));
    }
    let original: Vec<String> = log.lock().unwrap()[log_at_50..].to_vec();
    log.lock().unwrap().clear();
    sim.world.restore(&snap.unwrap()).unwrap();
    let replay: Vec<u64> = (50..100).map(|frame| sim.step(frame)).collect();
    assert!(replay != hashes[50..] || *log.lock().unwrap() != original);
}

#[test]
fn capture_refuses_what_it_cannot_rewind() {
    #[derive(Default)]
    struct Scratch(#[allow(dead_code, reason = "state a system keeps")] Vec<u8>);
    struct Stats(u32);
    let mut world = World::new();
    world.insert_resource(Stats(0));
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(|_: Local<Scratch>| {}).named("scratch");
    schedule.run(&mut world).unwrap();
    let err = SimSnapshot::capture(&world, &[&schedule], None).unwrap_err();
    assert!(
        matches!(&err, StateError::UnregisteredState { system, .. } if system == "scratch"),
        "{err}"
    );

    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(|mut s: ResMut<Stats>| s.0 += 1)
        .named("stats");
    schedule.run(&mut world).unwrap();
    let err = SimSnapshot::capture(&world, &[&schedule], None).unwrap_err();
    assert!(
        err.to_string().contains("register_snapshot_resource"),
        "{err}"
    );
    assert!(matches!(err, StateError::ResourceNotSnapshotted { .. }));

    // Restoring into other schedules is refused before anything changes.
    let mut world = World::new();
    let mut a = Schedule::single_threaded();
    a.add_system(|_: Local<u32>| {}).named("a");
    a.run(&mut world).unwrap();
    let snap = SimSnapshot::capture(&world, &[&a], None).unwrap();
    let mut b = Schedule::single_threaded();
    b.add_system(|_: Local<u32>| {}).named("b");
    let err = snap.restore(&mut world, &mut [&mut b], None).unwrap_err();
    assert!(matches!(err, StateError::ScheduleMismatch { .. }), "{err}");
    let err = snap.restore(&mut world, &mut [], None).unwrap_err();
    assert!(matches!(err, StateError::ScheduleMismatch { .. }), "{err}");
}

/// Lockstep with late inputs: a straight run feeds every step's input as it happens
/// (`FixedTimestep::run_with`); a rollback run predicts "no input" for steps whose input is
/// late, and when a batch of late inputs arrives it restores the simulation snapshot taken at
/// the first late step and re-runs the steps one by one (`FixedTimestep::step`) with the real
/// inputs. From each arrival on, every step's state hash and change count match the straight
/// run, on 1 and 2 threads.
#[test]
fn late_inputs_resimulated_from_a_snapshot_match_a_straight_run() {
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    struct Input(i32);
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    #[repr(C)]
    struct Moved(u32);
    const STEPS: u64 = 60;
    let input = |step: u64| Input((step as i32 * 7) % 5 - 2);
    // Inputs of steps 10..18 arrive at step 24, of 30..35 at step 41.
    let late = [(10..18, 24), (30..35, 41)];
    let arrived = |step: u64, now: u64| late.iter().all(|(r, at)| !r.contains(&step) || now >= *at);

    let build = |threads: usize| {
        let mut world = World::new();
        world.register_pods::<(Pos, Vel, Hp, Input, Moved)>();
        world.register_pod_resource::<Input>();
        world.register_pod_resource::<Moved>();
        world.insert_resource(Input(0));
        world.insert_resource(Moved(0));
        world
            .spawn_batch((0..300u32).map(|i| (Pos([i as f32, 0.0]), Vel([0.0, 0.0]), Hp(i))))
            .for_each(drop);
        let mut physics = Schedule::with_threads(threads);
        physics.set_inline_threshold(Duration::ZERO);
        physics
            .add_system(
                // `EntityMut` marks only the rows it writes, so later `Changed` readers see a subset.
                |mut q: Query<EntityMut, With<Vel>>, input: Res<Input>, t: Res<FixedTime>| {
                    q.par_for_each(|mut e| {
                        if (e.id().index() as u64 + t.step) % 4 == 0 {
                            e.get_mut::<Vel>().unwrap().0[0] += input.0 as f32;
                        }
                    });
                },
            )
            .named("steer");
        physics
            .add_system(|mut q: Query<(RefRW<Pos>, RefRO<Vel>), Changed<Vel>>| {
                q.par_for_each(|(p, v)| p.0[0] += v.0[0] * 0.01)
            })
            .named("movement");
        physics
            .add_system(|q: Query<Entity, Changed<Pos>>, mut moved: ResMut<Moved>| {
                moved.0 = q.iter().count() as u32;
            })
            .named("count_moved");
        let fixed = FixedTimestep::new(Duration::from_millis(10));
        (world, physics, fixed)
    };

    let straight = |threads: usize| {
        let (mut world, mut physics, mut fixed) = build(threads);
        let mut trace = Vec::new();
        for _ in 0..STEPS {
            fixed
                .run_with(
                    &mut physics,
                    &mut world,
                    Duration::from_millis(10),
                    |world, t| {
                        world.insert_resource(input(t.step));
                    },
                )
                .unwrap();
            trace.push((world.state_hash(), world.resource::<Moved>().0));
        }
        trace
    };

    let rollback = |threads: usize| {
        let (mut world, mut physics, mut fixed) = build(threads);
        let mut trace: Vec<(u64, u32)> = Vec::new();
        let mut snapshots: Vec<SimSnapshot> = Vec::new();
        let mut rollbacks = 0;
        // One step with the input known at real-time step `now` (the last snapshot is the
        // state before it).
        let take_step = |world: &mut World,
                         physics: &mut Schedule,
                         fixed: &mut FixedTimestep,
                         snapshots: &mut Vec<SimSnapshot>,
                         trace: &mut Vec<(u64, u32)>,
                         now: u64| {
            let step = fixed.total_steps();
            snapshots.push(SimSnapshot::capture(world, &[&*physics], Some(&*fixed)).unwrap());
            let known = if arrived(step, now) {
                input(step)
            } else {
                Input(0)
            };
            world.insert_resource(known);
            assert_eq!(fixed.step(physics, world).unwrap().step, step);
            trace.push((world.state_hash(), world.resource::<Moved>().0));
        };
        for now in 0..STEPS {
            if let Some((range, _)) = late.iter().find(|(_, at)| *at == now) {
                // Late inputs arrived: back to their first step, re-run up to now.
                let first = range.start as usize;
                snapshots[first]
                    .restore(&mut world, &mut [&mut physics], Some(&mut fixed))
                    .unwrap();
                snapshots.truncate(first);
                trace.truncate(first);
                rollbacks += 1;
                while fixed.total_steps() < now {
                    take_step(
                        &mut world,
                        &mut physics,
                        &mut fixed,
                        &mut snapshots,
                        &mut trace,
                        now,
                    );
                }
            }
            take_step(
                &mut world,
                &mut physics,
                &mut fixed,
                &mut snapshots,
                &mut trace,
                now,
            );
        }
        (trace, rollbacks)
    };

    let reference = straight(1);
    assert_eq!(
        straight(2),
        reference,
        "thread count changed the straight run"
    );
    for threads in [1, 2] {
        let (trace, rollbacks) = rollback(threads);
        assert_eq!(rollbacks, 2);
        assert_eq!(trace.len(), reference.len());
        for (step, (got, want)) in trace.iter().zip(&reference).enumerate() {
            assert_eq!(got, want, "step {step} on {threads} threads");
        }
    }
    // Changes are partial (a subset moves each step), so the change counts carry information.
    assert!(reference.iter().any(|&(_, moved)| moved > 0 && moved < 300));
}
