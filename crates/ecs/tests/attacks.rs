//! Attacks on the public API from safe code only (no `unsafe` block, no `unsafe impl`), kept
//! as tests: the second outside review, after issue 12 closed the registry and `System` routes.
//!
//! Each test is named after the behaviour a user relies on and asserts it. Tests marked
//! `#[ignore = "reproduces ..."]` are attacks that still SUCCEED (resurrected commands, an
//! abort, a broken guarantee); they assert the correct behaviour, so they fail today and pass
//! once the engine is fixed. Run them with `cargo test -p ecs --test attacks -- --ignored`.
//!
//! Attacks refused at compile time (implementing `Bundle`, `WorldQuery`, `ReadOnlyQuery`,
//! `SystemParam` or `System` without `unsafe`; `ExactQuery` / `QueryFilter` for a foreign
//! query type; calling `World::components_mut`) are listed in the review report, not here.
//!
//! Everything is small and mostly single-threaded, so Miri runs it:
//! `MIRIFLAGS="-Zmiri-tree-borrows" cargo +nightly miri test -p ecs --test attacks`.

use std::any::Any;
use std::panic::{catch_unwind, panic_any, AssertUnwindSafe};

use ecs::prelude::*;

struct Marker;
struct Fail(bool);

fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "<non-string payload>".to_owned())
}

fn markers(world: &mut World) -> usize {
    world.query::<With<Marker>>().count()
}

// ----- panic payloads whose `Drop` panics ------------------------------------------------------

/// A panic payload whose own `Drop` panics. `std::panic::panic_any(PayloadBomb)` is safe; so is
/// dropping the `Box<dyn Any + Send>` that `catch_unwind` returns for it, except that the drop
/// unwinds.
struct PayloadBomb;

impl Drop for PayloadBomb {
    fn drop(&mut self) {
        panic!("the panic payload's Drop panicked");
    }
}

/// A recorded value whose `Drop` panics with a plain message.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("PanicOnDrop dropped");
    }
}

/// A recorded value whose `Drop` panics with a [`PayloadBomb`] payload.
struct PanicWithBombOnDrop;

impl Drop for PanicWithBombOnDrop {
    fn drop(&mut self) {
        panic_any(PayloadBomb);
    }
}

/// While `Fail(true)`: records a command owning a value whose `Drop` panics, then one owning a
/// value whose `Drop` panics with a payload whose `Drop` panics, then a `Marker` spawn; then
/// panics, so the run must drop all three.
fn record_then_fail(mut commands: Commands, fail: Res<Fail>) {
    if fail.0 {
        let first = PanicOnDrop;
        commands.add(move |_| drop(first));
        let second = PanicWithBombOnDrop;
        commands.add(move |_| drop(second));
        commands.spawn((Marker,));
        panic!("kaboom");
    }
}

/// `CommandQueue::clear` keeps the first drop panic's payload in an `Option` and drops every
/// later payload through `Option::get_or_insert`, outside any `catch_unwind`. A payload whose
/// `Drop` panics therefore escapes the discard loop, and every command after it stays queued:
/// the next run applies the failed run's `Marker` spawn.
#[test]
#[ignore = "reproduces resurrected work: a panic payload's Drop escapes CommandQueue::clear"]
fn a_panicking_payload_drop_while_discarding_leaves_no_command_for_the_next_run() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(record_then_fail);
    let mut world = World::new();
    world.insert_resource(Fail(true));
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    assert!(
        message(&*payload).starts_with("system `record_then_fail` panicked: kaboom"),
        "{}",
        message(&*payload)
    );
    world.check_invariants();
    assert_eq!(markers(&mut world), 0, "the failed run applied nothing");

    world.insert_resource(Fail(false));
    schedule.run(&mut world).unwrap();
    world.check_invariants();
    assert_eq!(
        markers(&mut world),
        0,
        "a run that records nothing spawns nothing: the failed run's spawn was resurrected"
    );
}

/// Runs the ignored test `name` of this binary in a child process (with `ATTACK_CHILD` set) and
/// returns whether it exited normally: an attack that aborts the process cannot be observed
/// from inside it.
fn child_survives(name: &str) -> bool {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--ignored", "--test-threads=1", "--nocapture"])
        .env("ATTACK_CHILD", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("the test binary starts again");
    status.success()
}

fn is_child() -> bool {
    std::env::var_os("ATTACK_CHILD").is_some()
}

/// A system's panic payload is kept until `Schedule::run` has formatted its message, then
/// dropped while `resume_unwind` unwinds `run`: a payload whose `Drop` panics is a panic during
/// unwinding, which aborts the process (a `Drop` panic inside a component, a command or a
/// payload is otherwise reported, "never an abort").
#[test]
#[ignore = "reproduces an abort: a system's panic payload is dropped while Schedule::run unwinds"]
fn a_system_panic_payload_whose_drop_panics_does_not_abort_the_process() {
    if !is_child() {
        assert!(
            child_survives(
                "a_system_panic_payload_whose_drop_panics_does_not_abort_the_process"
            ),
            "the process aborted"
        );
        return;
    }
    fn bomb() {
        panic_any(PayloadBomb);
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(bomb);
    let mut world = World::new();
    let result = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world)));
    let payload = result.expect_err("the system's panic reaches the caller");
    assert!(message(&*payload).starts_with("system `bomb` panicked"));
    world.check_invariants();
}

/// The same for a discarded command whose `Drop` panics with such a payload: `Schedule::run`
/// keeps it in the clean-up list and drops that list while unwinding with the system's message.
#[test]
#[ignore = "reproduces an abort: a clean-up panic payload is dropped while Schedule::run unwinds"]
fn a_discarded_command_whose_drop_panics_with_a_bomb_payload_does_not_abort_the_process() {
    if !is_child() {
        assert!(
            child_survives(
                "a_discarded_command_whose_drop_panics_with_a_bomb_payload_does_not_abort_the_process"
            ),
            "the process aborted"
        );
        return;
    }
    fn record(mut commands: Commands) {
        let value = PanicWithBombOnDrop;
        commands.add(move |_| drop(value));
    }
    fn boom() {
        panic!("kaboom");
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(record);
    schedule.add_system(boom);
    let mut world = World::new();
    let result = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world)));
    let payload = result.expect_err("the system's panic reaches the caller");
    assert!(message(&*payload).starts_with("system `boom` panicked: kaboom"));
    world.check_invariants();
}

/// The executor keeps the first system panic of a parallel segment in an `Option` and drops
/// every later one through `Option::get_or_insert`, outside any `catch_unwind`. When two
/// systems panic at once and the dropped payload's `Drop` panics, that panic escapes
/// `run_segment`: the run's commands are neither applied nor dropped, the world is not flushed,
/// and the next run applies the failed run's commands.
#[test]
#[ignore = "reproduces resurrected work: a second system payload's Drop escapes the executor"]
fn two_systems_panicking_at_once_leave_no_command_for_the_next_run() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    static ARRIVED: AtomicUsize = AtomicUsize::new(0);
    static FIRED: AtomicBool = AtomicBool::new(false);

    /// Panics in `Drop` the first time only, so the payload still stored by the executor
    /// drops quietly while the first one's panic unwinds (no abort to hide the finding).
    struct OnceBomb;
    impl Drop for OnceBomb {
        fn drop(&mut self) {
            if !FIRED.swap(true, Ordering::SeqCst) {
                panic!("the second payload's Drop panicked");
            }
        }
    }
    /// Waits (up to 5 s) until both systems run at once, then panics with a `OnceBomb`.
    fn meet_and_panic() -> ! {
        ARRIVED.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        while ARRIVED.load(Ordering::SeqCst) < 2 && start.elapsed() < Duration::from_secs(5) {
            std::thread::yield_now();
        }
        panic_any(OnceBomb);
    }
    fn spawner(mut commands: Commands, fail: Res<Fail>) {
        if fail.0 {
            commands.spawn((Marker,));
            meet_and_panic();
        }
    }
    fn other(fail: Res<Fail>) {
        if fail.0 {
            meet_and_panic();
        }
    }

    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(spawner);
    schedule.add_system(other);
    let mut world = World::new();
    world.insert_resource(Fail(true));
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    assert_eq!(
        ARRIVED.load(Ordering::SeqCst),
        2,
        "both systems ran at once (else the race was not reached)"
    );
    let text = message(&*payload);
    world.check_invariants();
    assert_eq!(markers(&mut world), 0, "the failed run applied nothing");

    world.insert_resource(Fail(false));
    schedule.run(&mut world).unwrap();
    assert_eq!(
        markers(&mut world),
        0,
        "a run that records nothing spawns nothing (failed run's panic: {text})"
    );
}

// ----- Changed<T> beside a parallel writer of T -------------------------------------------------

/// `Changed<T>` declares no access to `T` (it "reads only chunk ticks"), so a system filtering
/// on `Changed<T>` runs in parallel with a writer of `T`. The writer takes its tick when its
/// query begins but stamps each chunk only when it reaches it; a watcher whose query begins in
/// between (so with a later tick) checks a chunk the writer has not stamped yet, and on its next
/// run it passes only chunks stamped at or after its own previous tick: the writer's stamp is
/// older, so that change is never seen. No UB, but a lost change notification.
#[test]
#[ignore = "reproduces lost work: Changed<T> misses a write by a parallel writer of T forever"]
fn changed_filter_sees_every_write_of_a_parallel_writer() {
    use std::collections::BTreeSet;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    static WRITER_STARTED: AtomicBool = AtomicBool::new(false);
    static WATCHER_DONE: AtomicBool = AtomicBool::new(false);
    static TIMED_OUT: AtomicBool = AtomicBool::new(false);

    fn wait_for(flag: &AtomicBool) {
        let start = Instant::now();
        while !flag.load(Ordering::SeqCst) {
            if start.elapsed() > Duration::from_secs(5) {
                TIMED_OUT.store(true, Ordering::SeqCst);
                return;
            }
            std::thread::yield_now();
        }
    }

    struct Val(u32);
    struct Go(bool);
    #[derive(Default)]
    struct Seen(BTreeSet<Entity>);

    fn writer(mut q: Query<RefRW<Val>>, go: Res<Go>) {
        if go.0 {
            q.for_each(|v| {
                // First row of the first chunk: the query's tick is taken, later chunks are
                // not stamped yet. Let the watcher run its whole query now.
                if !WRITER_STARTED.swap(true, Ordering::SeqCst) {
                    wait_for(&WATCHER_DONE);
                }
                v.0 += 1;
            });
        }
    }

    fn watcher(mut q: Query<Entity, Changed<Val>>, go: Res<Go>, mut seen: ResMut<Seen>) {
        if go.0 {
            wait_for(&WRITER_STARTED);
        }
        q.for_each(|e| {
            seen.0.insert(e);
        });
        if go.0 {
            WATCHER_DONE.store(true, Ordering::SeqCst);
        }
    }

    // 256-byte chunks hold 21 `(Entity, Val)` rows: 40 entities fill two chunks.
    let mut world = World::with_test_chunk_size(256);
    let all: Vec<Entity> = world.spawn_batch((0..40).map(|i| (Val(i),))).collect();
    world.insert_resource(Go(false));
    world.insert_resource(Seen::default());
    let mut schedule = Schedule::with_threads(2);
    schedule.set_inline_threshold(Duration::ZERO); // never run the segment inline
    schedule.add_system(writer);
    schedule.add_system(watcher);
    assert!(
        schedule.explain().contains("none: every system may run at the same time"),
        "{}",
        schedule.explain()
    );

    schedule.run(&mut world).unwrap(); // the watcher's first run sees every (new) chunk
    world.resource_mut::<Seen>().0.clear();
    world.insert_resource(Go(true));
    schedule.run(&mut world).unwrap(); // the writer writes every row
    assert!(
        WATCHER_DONE.load(Ordering::SeqCst) && !TIMED_OUT.load(Ordering::SeqCst),
        "both systems ran at once (else the interleaving was not reached)"
    );
    world.insert_resource(Go(false));
    schedule.run(&mut world).unwrap(); // nothing writes; the watcher catches up
    assert!(world.query::<RefRO<Val>>().iter().all(|v| v.0 >= 1));
    let seen = &world.resource::<Seen>().0;
    let missed: Vec<Entity> = all.iter().copied().filter(|e| !seen.contains(e)).collect();
    assert!(
        missed.is_empty(),
        "{} of 40 written entities never passed `Changed<Val>`",
        missed.len()
    );
}
