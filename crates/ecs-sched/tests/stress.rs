//! Stress: a system that panics inside a multi-threaded schedule run never deadlocks the
//! executor, and the world stays consistent after every caught panic.
//!
//! One schedule on rayon's global pool and one per pool size (2, 3 and 4 workers) run nine
//! systems: parallel readers, chains of conflicting writers, command recorders, a
//! `par_for_each` (a rayon job nested in the schedule's pool), a `&World` reader, a sync point
//! and an exclusive system. Each
//! iteration picks a random set of systems to panic, and where: on entry, in the middle of a
//! `for_each`, or inside a `par_for_each` task. The runs happen on a worker thread that
//! reports progress over a channel; the test thread waits with `recv_timeout` and fails,
//! naming the iteration, if a run never returns.
//!
//! After each iteration: `check_invariants`; a run that panicked reports one of the panicking
//! systems by name, applies none of its commands (the ids it reserved become empty entities,
//! which the test then despawns), and a run that did not panic applies them all.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Once};
use std::thread;
use std::time::Duration;

use ecs_core::{Entity, World};
use ecs_query::{QueryExt, RefRO, RefRW, With, Without};
use ecs_sched::{Commands, Local, Query, Res, ResMut, Schedule};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Vel(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Age(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Heat(u64);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tag;
/// Entities that commands spawned; the base population never has it, so queries always
/// have rows for a mid-iteration panic.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spawned;
struct Gravity(f32);
struct Score(u64);

/// The message every intentional panic carries; the panic hook keeps these quiet.
const INTENTIONAL: &str = "intentional stress panic";

/// Where a system panics when its bit is set.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Where {
    OnEntry,
    MidIteration,
    InParallelTask,
}

/// The panic plan of the current iteration, shared by every system.
#[derive(Default)]
struct Plan {
    /// Bit `i`: system `i` panics this run.
    mask: AtomicU64,
    /// Bits `2i..2i+2`: where system `i` panics (see [`Plan::place`]).
    places: AtomicU64,
    /// Ids reserved through `Commands::spawn` this run.
    reserved: AtomicUsize,
}

impl Plan {
    fn armed(&self, system: usize) -> bool {
        self.mask.load(Ordering::SeqCst) & (1 << system) != 0
    }

    fn place(&self, system: usize) -> Where {
        match (self.places.load(Ordering::SeqCst) >> (2 * system)) & 3 {
            0 | 1 => Where::OnEntry,
            2 => Where::MidIteration,
            _ => Where::InParallelTask,
        }
    }

    /// Panics if `system` is armed for `place`.
    fn maybe_panic(&self, system: usize, place: Where) {
        if self.armed(system) && self.place(system) == place {
            panic!("{INTENTIONAL} in system {system} ({place:?})");
        }
    }

    /// Panics if `system` is armed to panic on entry.
    fn enter(&self, system: usize) {
        self.maybe_panic(system, Where::OnEntry);
    }

    fn spawn(&self, commands: &mut Commands<'_, '_>, bundle: (Pos, Vel, Age, Spawned)) -> Entity {
        self.reserved.fetch_add(1, Ordering::SeqCst);
        commands.spawn(bundle)
    }
}

/// A splitmix64 generator: deterministic per seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// System names, by plan bit.
const NAMES: [&str; 9] = [
    "movement",
    "accelerate",
    "age",
    "tag",
    "score",
    "heat",
    "observe",
    "census",
    "exclusive",
];

/// Builds the stress schedule on its own pool of `threads` workers, or on rayon's global pool.
fn schedule(threads: Option<usize>, plan: &Arc<Plan>) -> Schedule {
    let mut s = threads.map_or_else(Schedule::new, Schedule::with_threads);
    let p = plan.clone();
    s.add_system(move |mut q: Query<(RefRW<Pos>, RefRO<Vel>)>| {
        p.enter(0);
        let mut n = 0;
        q.for_each(|(pos, vel)| {
            pos.0 += vel.0;
            n += 1;
            if n == 2 {
                p.maybe_panic(0, Where::MidIteration);
            }
        });
        p.maybe_panic(0, Where::InParallelTask);
    })
    .named(NAMES[0]);
    let p = plan.clone();
    s.add_system(move |mut q: Query<RefRW<Vel>>, g: Res<Gravity>| {
        p.enter(1);
        q.for_each(|v| {
            v.0 -= g.0;
            p.maybe_panic(1, Where::MidIteration);
        });
        p.maybe_panic(1, Where::InParallelTask);
    })
    .named(NAMES[1]);
    let p = plan.clone();
    s.add_system(
        move |mut q: Query<(Entity, RefRW<Age>, Option<RefRO<Spawned>>)>,
              mut commands: Commands,
              mut runs: Local<u32>| {
            p.enter(2);
            *runs += 1;
            let mut old = Vec::new();
            q.for_each(|(e, age, spawned)| {
                age.0 += 1;
                if age.0 > 3 && spawned.is_some() {
                    old.push(e);
                }
            });
            p.maybe_panic(2, Where::MidIteration);
            for e in old {
                commands.despawn(e);
                // A second despawn of the same entity is skipped and reported.
                commands.despawn(e);
            }
            let fresh = p.spawn(&mut commands, (Pos(0.0), Vel(1.0), Age(0), Spawned));
            commands.insert(fresh, (Heat(u64::from(*runs)),));
            p.maybe_panic(2, Where::InParallelTask);
        },
    )
    .named(NAMES[2]);
    let p = plan.clone();
    s.add_system(
        move |q: Query<Entity, (With<Spawned>, Without<Tag>)>, mut commands: Commands| {
            p.enter(3);
            let ids: Vec<Entity> = q.iter().collect();
            p.maybe_panic(3, Where::MidIteration);
            for e in ids {
                commands.insert(e, (Tag,));
            }
            p.maybe_panic(3, Where::InParallelTask);
        },
    )
    .named(NAMES[3]);
    let p = plan.clone();
    s.add_system(move |mut score: ResMut<Score>, q: Query<RefRO<Age>>| {
        p.enter(4);
        q.for_each(|a| {
            score.0 += u64::from(a.0);
            p.maybe_panic(4, Where::MidIteration);
        });
        p.maybe_panic(4, Where::InParallelTask);
    })
    .named(NAMES[4]);
    let p = plan.clone();
    s.add_system(move |mut q: Query<RefRW<Heat>>| {
        p.enter(5);
        q.for_each(|h| {
            h.0 += 1;
            p.maybe_panic(5, Where::MidIteration);
        });
        // A rayon job inside the schedule's own pool; the panic crosses `join`.
        q.par_for_each(|h| {
            h.0 += 1;
            p.maybe_panic(5, Where::InParallelTask);
        });
    })
    .named(NAMES[5]);
    let p = plan.clone();
    s.add_system(move |mut q: Query<(RefRO<Pos>, RefRO<Heat>)>| {
        p.enter(6);
        q.par_for_each(|(pos, heat)| {
            assert!(pos.0.is_finite() && heat.0 < u64::MAX);
            p.maybe_panic(6, Where::InParallelTask);
        });
        q.for_each(|_| p.maybe_panic(6, Where::MidIteration));
    })
    .named(NAMES[6]);
    let p = plan.clone();
    s.add_system(move |world: &World| {
        p.enter(7);
        assert!(!world.is_empty());
        p.maybe_panic(7, Where::MidIteration);
        p.maybe_panic(7, Where::InParallelTask);
    })
    .named(NAMES[7]);
    s.add_sync_point();
    let p = plan.clone();
    s.add_system(move |world: &mut World| {
        p.enter(8);
        world.resource_mut::<Score>().0 += 1;
        p.maybe_panic(8, Where::MidIteration);
        p.maybe_panic(8, Where::InParallelTask);
    })
    .named(NAMES[8]);
    s
}

/// Silences the intentional panics (thousands of them) and leaves every other panic loud.
fn quiet_intentional_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.contains(INTENTIONAL) {
                default(info);
            }
        }));
    });
}

/// A world with a base population that no command despawns.
fn populated() -> World {
    let mut world = World::with_test_chunk_size(512);
    world.insert_resource(Gravity(0.01));
    world.insert_resource(Score(0));
    for i in 0..40u32 {
        world.spawn((Pos(i as f32), Vel(1.0)));
        world.spawn((Pos(-(i as f32)), Vel(0.5), Heat(u64::from(i))));
        world.spawn((Age(0), Heat(0)));
    }
    world
}

/// Entities with at least one component, and the empty ones.
fn census(world: &mut World) -> (usize, Vec<Entity>) {
    let empty: Vec<Entity> = world.archetypes()[0]
        .chunks()
        .iter()
        .flat_map(|c| c.entities().iter().copied())
        .collect();
    let all = world.query::<Entity>().count();
    (all - empty.len(), empty)
}

/// Runs `iterations` random iterations, reporting each finished one on `progress`.
fn stress(iterations: u64, seed: u64, progress: mpsc::Sender<u64>) {
    quiet_intentional_panics();
    let plan = Arc::new(Plan::default());
    let mut schedules: Vec<Schedule> = [None, Some(2), Some(3), Some(4)]
        .map(|t| schedule(t, &plan))
        .into();
    let mut world = populated();
    let mut rng = Rng(seed);
    let mut panicked_runs = 0;
    for iteration in 0..iterations {
        let mut mask = 0u64;
        if rng.below(3) != 0 {
            for _ in 0..1 + rng.below(3) {
                mask |= 1 << rng.below(NAMES.len() as u64);
            }
        }
        plan.mask.store(mask, Ordering::SeqCst);
        plan.places.store(rng.next(), Ordering::SeqCst);
        plan.reserved.store(0, Ordering::SeqCst);
        let (populated_before, empty_before) = census(&mut world);
        assert!(empty_before.is_empty());

        let schedule = &mut schedules[rng.below(4) as usize];
        let result = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world)));
        world.check_invariants();
        let (populated_after, empty) = census(&mut world);
        match result {
            Ok(run) => {
                run.expect("the schedule builds");
                assert_eq!(
                    mask, 0,
                    "iteration {iteration}: an armed system did not panic"
                );
                assert!(empty.is_empty(), "spawns were applied with components");
                let skipped = schedule.skipped_commands();
                // Double despawns, and tags for entities that aged out in the same run (their
                // tag was lost with a panicked run's commands) are skipped.
                assert!(
                    skipped.iter().all(|c| {
                        matches!(
                            (c.system.as_str(), c.command),
                            ("age", "despawn") | ("tag", "insert")
                        ) && c.reason.contains("no such entity")
                    }),
                    "iteration {iteration}: {skipped:?}"
                );
            }
            Err(payload) => {
                panicked_runs += 1;
                let message = payload
                    .downcast_ref::<String>()
                    .unwrap_or_else(|| panic!("iteration {iteration}: non-string panic"));
                assert!(
                    message.contains(INTENTIONAL),
                    "iteration {iteration}: unexpected panic: {message}"
                );
                let named = NAMES
                    .iter()
                    .position(|n| message.contains(&format!("system `{n}` panicked")))
                    .unwrap_or_else(|| panic!("iteration {iteration}: no system named: {message}"));
                assert!(
                    mask & (1 << named) != 0,
                    "iteration {iteration}: {message} (mask {mask:#b})"
                );
                if NAMES[named] == "exclusive" {
                    // The sync point before it applied every command already.
                    assert!(empty.is_empty(), "iteration {iteration}");
                } else {
                    // The run's commands were dropped: no entity gained or lost components,
                    // and the ids their spawns reserved were freed, none left alive and empty.
                    assert_eq!(populated_after, populated_before, "iteration {iteration}");
                    assert!(
                        empty.is_empty(),
                        "iteration {iteration}: {} of {} reserved ids left empty",
                        empty.len(),
                        plan.reserved.load(Ordering::SeqCst)
                    );
                }
                for e in empty {
                    world.despawn(e).expect("empty entities are live");
                }
                world.check_invariants();
            }
        }
        if progress.send(iteration).is_err() {
            return;
        }
    }
    assert!(
        iterations < 30 || panicked_runs > iterations / 3,
        "only {panicked_runs} of {iterations} runs panicked"
    );
}

/// How long one iteration may take before the executor counts as deadlocked. Generous: a
/// loaded 2-core CI machine, debug builds.
const WATCHDOG: Duration = Duration::from_secs(if cfg!(miri) { 600 } else { 30 });
const ITERATIONS: u64 = if cfg!(miri) { 6 } else { 10_000 };

/// Runs [`stress`] on a worker thread, failing if an iteration never finishes.
fn watchdog(iterations: u64, seed: u64) {
    let (tx, rx) = mpsc::channel();
    let worker = thread::Builder::new()
        .name("stress".into())
        .spawn(move || stress(iterations, seed, tx))
        .expect("spawn the stress thread");
    let mut last = None;
    loop {
        match rx.recv_timeout(WATCHDOG) {
            Ok(i) => last = Some(i),
            Err(RecvTimeoutError::Timeout) => panic!(
                "deadlock: no schedule run finished for {WATCHDOG:?} (last finished iteration: \
                 {last:?}, seed {seed})"
            ),
            // The worker finished or failed: pass its panic on.
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    if let Err(payload) = worker.join() {
        std::panic::resume_unwind(payload);
    }
    assert_eq!(last, iterations.checked_sub(1), "every iteration reported");
}

#[test]
fn panicking_systems_never_deadlock_the_executor() {
    let seed = std::env::var("STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_F00D);
    watchdog(ITERATIONS, seed);
}

/// A `Drop` that panics when armed.
struct Bomb(bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.0 {
            panic!("{INTENTIONAL}: bomb");
        }
    }
}

#[derive(Debug)]
struct Marker;

/// How a command can panic while the schedule applies it.
#[derive(Clone, Copy, Debug)]
enum CommandPanic {
    /// An overwriting insert drops an old value whose `Drop` panics.
    DropInInsert,
    /// A `Commands::add` closure panics.
    Closure,
}

/// A command that panics while being applied must not leave commands of that run queued for
/// the next run: whatever the schedule does with the rest of the run's commands, it does it
/// in that run.
fn panicking_command_leaves_nothing_for_the_next_run(how: CommandPanic, threads: usize) {
    quiet_intentional_panics();
    let mut world = World::new();
    let victim = world.spawn((Bomb(matches!(how, CommandPanic::DropInInsert)),));
    let mut schedule = Schedule::with_threads(threads);
    schedule
        .add_system(move |mut commands: Commands, mut runs: Local<u32>| {
            *runs += 1;
            if *runs == 1 {
                match how {
                    CommandPanic::DropInInsert => commands.insert(victim, (Bomb(false),)),
                    CommandPanic::Closure => commands.add(|_| panic!("{INTENTIONAL}: closure")),
                }
            }
        })
        .named("first");
    schedule
        .add_system(move |mut commands: Commands, mut runs: Local<u32>| {
            *runs += 1;
            if *runs == 1 {
                commands.spawn((Marker,));
            }
        })
        .named("second");
    let result = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world)));
    assert!(
        result.is_err(),
        "{how:?}: the command's panic reaches the caller"
    );
    world.check_invariants();
    let markers = world.query::<RefRO<Marker>>().count();
    let len = world.len();

    // Nothing is recorded in the second run, so it must change nothing.
    schedule.run(&mut world).expect("the schedule builds");
    world.check_invariants();
    assert_eq!(
        (world.query::<RefRO<Marker>>().count(), world.len()),
        (markers, len),
        "{how:?} on {threads} thread(s): commands of the run whose command panicked were applied \
         in the next run"
    );
}

#[test]
fn panicking_insert_drop_in_a_command_leaves_nothing_for_the_next_run() {
    for threads in [1, 2] {
        panicking_command_leaves_nothing_for_the_next_run(CommandPanic::DropInInsert, threads);
    }
}

#[test]
fn panicking_command_closure_leaves_nothing_for_the_next_run() {
    for threads in [1, 2] {
        panicking_command_leaves_nothing_for_the_next_run(CommandPanic::Closure, threads);
    }
}

/// The world a command panic leaves behind is consistent and fully usable.
#[test]
fn world_is_usable_after_a_command_panics() {
    quiet_intentional_panics();
    let mut world = World::with_test_chunk_size(512);
    let keep: Vec<Entity> = (0..20).map(|i| world.spawn((Age(i),))).collect();
    let victim = world.spawn((Bomb(true), Age(99)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(
        move |mut commands: Commands, q: Query<(Entity, RefRO<Age>)>| {
            log.lock().unwrap().push(q.iter().count());
            commands.insert(victim, (Bomb(false),));
        },
    );
    assert!(catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).is_err());
    world.check_invariants();
    for (i, &e) in keep.iter().enumerate() {
        assert_eq!(world.get::<Age>(e), Ok(&Age(i as u32)));
    }
    assert!(world.get::<Bomb>(victim).is_ok_and(|b| !b.0));
    world.despawn(victim).expect("the victim is still alive");
    world.spawn((Age(7),));
    world.check_invariants();
    assert_eq!(*seen.lock().unwrap(), [21]);
}
