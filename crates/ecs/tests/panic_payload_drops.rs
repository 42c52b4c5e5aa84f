//! A panic whose payload's own `Drop` panics, from a system, from a discarded command's `Drop`
//! or from two systems at once: the process never aborts, and the failed run leaves no command
//! for the next run.
//!
//! From the second outside review's attacks on the public API from safe code only (no
//! `unsafe` block, no `unsafe impl`), after issue 12 closed the registry and `System` routes.
//! Each test is named after the behaviour a user relies on and asserts it.
//! All four reproduced attacks that succeeded when they were written (resurrected commands, an
//! abort); each failed then and passes since its fix (see docs/reliability.md, issue 12).
//!
//! Small and mostly single-threaded, so Miri runs it:
//! `MIRIFLAGS="-Zmiri-tree-borrows" cargo +nightly miri test -p ecs --test panic_payload_drops`.

use std::panic::{catch_unwind, panic_any, AssertUnwindSafe};

use ecs::prelude::*;

mod common;
use common::{markers, message, Marker};

struct Fail(bool);

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
        .args([
            "--exact",
            name,
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
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
fn a_system_panic_payload_whose_drop_panics_does_not_abort_the_process() {
    if !is_child() {
        assert!(
            child_survives("a_system_panic_payload_whose_drop_panics_does_not_abort_the_process"),
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
