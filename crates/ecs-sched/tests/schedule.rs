//! Schedule behaviour: access from parameter types, ordering, parallelism, determinism,
//! commands, panics and reports.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use ecs_core::{Entity, World};
use ecs_query::{RefRO, RefRW, With, Without};
use ecs_sched::{Commands, Local, Query, Res, ResMut, Schedule, ScheduleError};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Lifetime(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Marker;
struct Time(f32);
struct Counter(u32);

fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>, time: Res<Time>) {
    q.for_each(|(p, v)| p.0 += v.0 * time.0);
}

fn expire(mut q: Query<(Entity, RefRW<Lifetime>)>, mut commands: Commands) {
    q.for_each(|(e, l)| {
        l.0 = l.0.saturating_sub(1);
        if l.0 == 0 {
            commands.despawn(e);
        }
    });
}

#[test]
fn systems_run_and_commands_apply_at_the_end() {
    let mut world = World::new();
    world.insert_resource(Time(1.0));
    let a = world.spawn((Position(0.0), Velocity(2.0), Lifetime(2)));
    let b = world.spawn((Position(0.0), Velocity(1.0)));
    let mut schedule = Schedule::new();
    schedule.add_system(movement);
    schedule.add_system(expire).after("movement");
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Position>(a), Ok(&Position(2.0)));
    assert!(world.contains(a));
    schedule.run(&mut world).unwrap();
    assert!(
        !world.contains(a),
        "despawned by a command at the end of the run"
    );
    assert_eq!(world.get::<Position>(b), Ok(&Position(2.0)));
    let explain = schedule.explain();
    assert!(
        explain.contains("movement") && explain.contains("expire"),
        "{explain}"
    );
}

#[test]
fn conflicting_params_are_refused_naming_system_and_type() {
    fn bad(_a: Query<RefRW<Position>>, _b: Query<RefRO<Position>>) {}
    fn bad_res(_a: Res<Time>, _b: ResMut<Time>) {}
    fn fine(_a: Query<RefRW<Position>, With<Marker>>, _b: Query<RefRW<Position>, Without<Marker>>) {
    }
    let mut schedule = Schedule::new();
    let err = schedule.try_add_system(bad).err().unwrap();
    assert!(
        matches!(&err, ScheduleError::ConflictingParams { system, component }
        if system == "bad" && component.contains("Position")),
        "{err}"
    );
    let err = schedule.try_add_system(bad_res).err().unwrap();
    assert!(
        err.to_string().contains("bad_res") && err.to_string().contains("Time"),
        "{err}"
    );
    let panic = catch_unwind(AssertUnwindSafe(|| {
        schedule.add_system(bad);
    }))
    .unwrap_err();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(msg.contains("bad") && msg.contains("Position"), "{msg}");
    schedule.add_system(fine);
    let aliasing = schedule.try_add_system(|_q: Query<(RefRW<Position>, RefRO<Position>)>| {});
    assert!(aliasing.err().unwrap().to_string().contains("Position"));
}

#[test]
fn explicit_order_errors() {
    fn a() {}
    fn b() {}
    let mut schedule = Schedule::new();
    schedule.add_system(a).after("b");
    schedule.add_system(b).after("a");
    let err = schedule.run(&mut World::new()).unwrap_err();
    assert!(
        matches!(&err, ScheduleError::Cycle { systems } if systems.len() == 2),
        "{err}"
    );
    let mut schedule = Schedule::new();
    schedule.add_system(a).before("render");
    let err = schedule.run(&mut World::new()).unwrap_err();
    assert_eq!(
        err,
        ScheduleError::UnknownSystem {
            system: "a".into(),
            referenced: "render".into()
        }
    );
}

#[test]
fn order_follows_insertion_for_conflicts_and_explicit_orders_override() {
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut schedule = Schedule::new();
    for name in ["first", "second", "third"] {
        let log = log.clone();
        schedule
            .add_system(move |mut c: ResMut<Counter>| {
                c.0 += 1;
                log.lock().unwrap().push(name);
            })
            .named(name);
    }
    let log2 = log.clone();
    schedule
        .add_system(move |mut c: ResMut<Counter>| {
            c.0 += 1;
            log2.lock().unwrap().push("zeroth");
        })
        .named("zeroth")
        .before("first");
    let mut world = World::new();
    world.insert_resource(Counter(0));
    schedule.run(&mut world).unwrap();
    assert_eq!(*log.lock().unwrap(), ["zeroth", "first", "second", "third"]);
    assert_eq!(
        schedule.order().unwrap(),
        ["zeroth", "first", "second", "third"]
    );
}

#[test]
fn non_conflicting_systems_really_run_in_parallel() {
    let barrier = Arc::new(Barrier::new(2));
    let met = Arc::new(AtomicUsize::new(0));
    let mut schedule = Schedule::with_threads(2);
    for (name, writes_position) in [("left", true), ("right", false)] {
        let barrier = barrier.clone();
        let met = met.clone();
        let wait = move || {
            // Each waits until the other has started; run one after the other, this times out.
            let (tx, rx) = std::sync::mpsc::channel();
            let b = barrier.clone();
            std::thread::spawn(move || {
                b.wait();
                let _ = tx.send(());
            });
            if rx.recv_timeout(Duration::from_secs(10)).is_ok() {
                met.fetch_add(1, Ordering::SeqCst);
            }
        };
        if writes_position {
            schedule
                .add_system(move |_q: Query<RefRW<Position>>| wait())
                .named(name);
        } else {
            schedule
                .add_system(move |_q: Query<RefRW<Velocity>>| wait())
                .named(name);
        }
    }
    schedule.run(&mut World::new()).unwrap();
    assert_eq!(
        met.load(Ordering::SeqCst),
        2,
        "the two systems never ran at the same time"
    );
}

#[test]
fn conflicting_systems_never_overlap() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let mut schedule = Schedule::with_threads(4);
    for i in 0..6 {
        let in_flight = in_flight.clone();
        schedule
            .add_system(move |mut q: Query<RefRW<Position>>| {
                assert_eq!(
                    in_flight.fetch_add(1, Ordering::SeqCst),
                    0,
                    "overlap on Position"
                );
                q.for_each(|p| p.0 += 1.0);
                std::thread::sleep(Duration::from_millis(2));
                in_flight.fetch_sub(1, Ordering::SeqCst);
            })
            .named(format!("writer{i}"));
    }
    let mut world = World::new();
    let e = world.spawn((Position(0.0),));
    for _ in 0..5 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.get::<Position>(e), Ok(&Position(30.0)));
}

/// A small simulation with parallel systems and commands that spawn and despawn.
fn simulation(threads: usize) -> Schedule {
    fn spawner(mut commands: Commands, mut n: Local<u32>, q: Query<RefRO<Lifetime>>) {
        let _ = q;
        *n += 1;
        if *n % 3 == 0 {
            let e = commands.spawn((Position(*n as f32), Velocity(0.5)));
            commands.insert(e, (Lifetime(4),));
        }
    }
    fn grow(mut q: Query<RefRW<Velocity>, Without<Lifetime>>) {
        q.for_each(|v| v.0 *= 1.01);
    }
    let mut s = Schedule::with_threads(threads);
    // Tiny systems would otherwise run inline after the first frame; keep the pool busy.
    s.set_inline_threshold(Duration::ZERO);
    s.add_system(movement);
    s.add_system(expire);
    s.add_system(spawner);
    s.add_system(grow);
    s
}

/// One entity's id and components, for comparing worlds.
type Row = (Entity, Option<Position>, Option<Velocity>, Option<Lifetime>);

fn snapshot(world: &mut World) -> Vec<Row> {
    let mut ids: Vec<Entity> = ecs_query::QueryExt::query::<Entity>(world).iter().collect();
    ids.sort();
    ids.into_iter()
        .map(|e| {
            let p = world.get::<Position>(e).ok().copied();
            let v = world.get::<Velocity>(e).ok().copied();
            let l = world.get::<Lifetime>(e).ok().copied();
            (e, p, v, l)
        })
        .collect()
}

#[test]
fn multi_threaded_runs_match_single_threaded() {
    // Under Miri (Tree Borrows, in CI) the full size takes well over 20 minutes; a smaller
    // world, fewer frames and one multi-threaded run on a 2-worker pool still cover spawns,
    // expiries and commands from parallel systems (12 frames: the entities spawned on frames
    // 9 and 12 are still alive at the end).
    let (pairs, frames, repeats, threads) = if cfg!(miri) {
        (8, 12, 1, 2)
    } else {
        (50, 100, 3, 4)
    };
    let run = |threads: usize| {
        let mut world = World::new();
        world.insert_resource(Time(0.25));
        for i in 0..pairs {
            world.spawn((Position(i as f32), Velocity(1.0), Lifetime(1 + i % 7)));
            world.spawn((Position(-(i as f32)), Velocity(2.0)));
        }
        let mut schedule = simulation(threads);
        for _ in 0..frames {
            schedule.run(&mut world).unwrap();
        }
        world.check_invariants();
        snapshot(&mut world)
    };
    let single = run(1);
    assert!(single.len() > pairs as usize, "commands spawned entities");
    for _ in 0..repeats {
        assert_eq!(run(threads), single);
    }
}

#[test]
fn a_panicking_system_is_named_and_the_world_survives() {
    fn boom(_q: Query<RefRW<Velocity>>) {
        panic!("kaboom");
    }
    let mut world = World::new();
    world.insert_resource(Time(1.0));
    let e = world.spawn((Position(0.0), Velocity(1.0)));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(movement);
    schedule.add_system(boom);
    schedule.add_system(|mut c: Commands| {
        c.spawn((Marker,));
    });
    let err = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.contains("boom") && msg.contains("kaboom"), "{msg}");
    world.check_invariants();
    world.despawn(e).unwrap();
    world.spawn((Position(1.0),));
    world.check_invariants();
}

#[test]
fn commands_on_dead_entities_are_skipped_and_reported() {
    let mut world = World::new();
    let gone = world.spawn((Position(0.0),));
    world.despawn(gone).unwrap();
    let mut schedule = Schedule::new();
    schedule
        .add_system(move |mut c: Commands| {
            c.despawn(gone);
            c.insert(gone, (Marker,));
            c.spawn((Marker,));
        })
        .named("cleanup");
    schedule.run(&mut world).unwrap();
    let skipped = schedule.skipped_commands();
    assert_eq!(skipped.len(), 2);
    assert_eq!((skipped[0].command, skipped[0].entity), ("despawn", gone));
    assert_eq!(skipped[1].system, "cleanup");
    assert_eq!(world.len(), 1);
}

#[test]
fn exclusive_systems_sync_points_and_reports() {
    fn count(mut c: ResMut<Counter>, q: Query<RefRO<Marker>>) {
        c.0 = q.count() as u32;
    }
    let mut world = World::new();
    world.insert_resource(Counter(0));
    let mut schedule = Schedule::new();
    schedule
        .add_system(|mut c: Commands| {
            c.spawn((Marker,));
        })
        .named("spawn");
    schedule.add_sync_point();
    schedule.add_system(count);
    schedule
        .add_system(|world: &mut World| {
            world.spawn((Marker,));
        })
        .named("exclusive");
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world.resource::<Counter>().0,
        1,
        "the sync point applied the spawn before `count`"
    );
    assert_eq!(world.len(), 2);
    let dot = schedule.to_dot();
    assert!(
        dot.starts_with("digraph") && dot.contains("\"count\" -> \"exclusive\""),
        "{dot}"
    );
    let timings = schedule.timings().last_run();
    assert_eq!(timings.len(), 4);
    assert!(timings.iter().any(|(n, _)| n == "count"));
}

#[test]
fn twelve_parameters_and_world_reads() {
    #[allow(
        clippy::too_many_arguments,
        reason = "the test is about many parameters"
    )]
    fn wide(
        _a: Query<RefRO<Position>>,
        _b: Query<RefRO<Velocity>>,
        _c: Res<Time>,
        _d: Local<u8>,
        _e: Commands,
        _f: Query<RefRO<Lifetime>>,
        _g: Local<u16>,
        _h: Query<Entity>,
        _i: Query<RefRO<Marker>>,
        _j: Local<u32>,
        _k: Res<Counter>,
        mut l: ResMut<Vec<u8>>,
    ) {
        l.push(1);
    }
    fn reader(world: &World, mut seen: ResMut<Counter>) {
        seen.0 = world.len();
    }
    let mut world = World::new();
    world.insert_resource(Time(1.0));
    world.insert_resource(Counter(0));
    world.insert_resource(Vec::<u8>::new());
    let mut schedule = Schedule::new();
    schedule.add_system(wide);
    assert!(
        schedule.try_add_system(reader).is_err(),
        "&World with a write is refused"
    );
    schedule
        .add_system(|world: &World| assert!(world.len() < 10))
        .named("look");
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Vec<u8>>().len(), 1);
}

/// A sync point's timings row counts its runs (it applies the commands before it), so the
/// table no longer shows 0 runs for it.
#[test]
fn sync_points_have_a_timings_row_that_counts_their_runs() {
    fn spawner(mut commands: ecs_sched::Commands) {
        commands.spawn((1u8,));
    }
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(spawner);
    schedule.add_sync_point();
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    let timings = schedule.timings();
    let row = timings
        .system("sync_point_1")
        .expect("a row for the sync point");
    assert_eq!((row.runs, row.skipped), (3, 0));
    assert_eq!(world.len(), 3);
}

/// A worker's consecutive systems share one clock reading between them: each system's time
/// runs from the previous one's end, so a quick system after a slow one on the same worker
/// is not charged the slow one's time, and the slow one is charged all of its own.
#[test]
fn each_system_is_charged_its_own_time_on_any_thread_count() {
    // Under Miri the executor's own steps between two clock readings take milliseconds of its
    // clock (15 ms once, with both Miri lanes of CI loading the machine): the slow system
    // sleeps ten times longer there, so the gap the test checks stays as wide.
    const NAP: Duration = Duration::from_millis(if cfg!(miri) { 300 } else { 30 });
    struct Counter(u32);
    fn slow(mut c: ResMut<Counter>) {
        std::thread::sleep(NAP);
        c.0 += 1;
    }
    fn quick(mut c: ResMut<Counter>) {
        c.0 += 1;
    }
    fn apart() {}
    for threads in [1, 2] {
        let mut world = World::new();
        world.insert_resource(Counter(0));
        let mut schedule = Schedule::with_threads(threads);
        schedule.set_inline_threshold(Duration::ZERO);
        // `slow` then `quick` (both write `Counter`: a chain on one worker), beside a system
        // that conflicts with neither.
        schedule.add_system(slow);
        schedule.add_system(quick);
        schedule.add_system(apart);
        for _ in 0..2 {
            schedule.run(&mut world).unwrap();
        }
        let timings = schedule.timings();
        let (slow, quick) = (
            timings.system("slow").unwrap(),
            timings.system("quick").unwrap(),
        );
        assert!(slow.last >= NAP, "{threads} threads: {slow:?}");
        assert!(quick.last < NAP / 2, "{threads} threads: {quick:?}");
        assert_eq!((slow.runs, quick.runs), (2, 2));
        assert_eq!(world.resource::<Counter>().0, 4);
    }
}
