//! Attacks on the public API from safe code only (no `unsafe` block, no `unsafe impl`), kept
//! as tests: the second outside review, after issue 12 closed the registry and `System` routes.
//!
//! Each test is named after the behaviour a user relies on and asserts it. Six of them
//! reproduced attacks that succeeded when they were written (resurrected commands, an abort, a
//! change detection that depended on timing, a revived stale handle); each failed then and
//! passes since its fix (see docs/reliability.md, issue 12).
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

// ----- Changed<T> beside a parallel writer of T -------------------------------------------------

/// `Changed<T>` used to declare no access to `T` (it "reads only chunk ticks"), so a system
/// filtering on `Changed<T>` ran in parallel with a writer of `T`. The writer takes its tick
/// when its query begins but stamps each chunk only when it reaches it; a watcher whose query
/// began in between checked a chunk the writer had not stamped yet, and on its next run passed
/// only chunks stamped at or after its own previous tick: the writer's stamp was older, so that
/// change was never seen (19 of 40 writes lost, reproduced with two threads and a handshake).
/// `Changed<T>` now declares a read of `T`, so the two are ordered and every write is seen.
#[test]
fn changed_filter_sees_every_write_of_a_parallel_writer() {
    use std::collections::BTreeSet;
    use std::time::Duration;

    struct Val(u32);
    #[derive(Default)]
    struct Seen(BTreeSet<Entity>);

    fn writer(mut q: Query<RefRW<Val>>) {
        q.for_each(|v| v.0 += 1);
    }

    fn watcher(q: Query<Entity, Changed<Val>>, mut seen: ResMut<Seen>) {
        q.for_each(|e| {
            seen.0.insert(e);
        });
    }

    // 256-byte chunks hold 21 `(Entity, Val)` rows: 40 entities fill two chunks.
    let mut world = World::with_test_chunk_size(256);
    let all: Vec<Entity> = world.spawn_batch((0..40).map(|i| (Val(i),))).collect();
    world.insert_resource(Seen::default());
    let mut schedule = Schedule::with_threads(2);
    schedule.set_inline_threshold(Duration::ZERO); // never run a segment inline
    schedule.add_system(writer);
    schedule.add_system(watcher);
    let report = schedule.explain();
    assert!(report.contains("writer -> watcher"), "{report}");

    for run in 0..3 {
        world.resource_mut::<Seen>().0.clear();
        schedule.run(&mut world).unwrap();
        let seen = &world.resource::<Seen>().0;
        let missed: Vec<Entity> = all.iter().copied().filter(|e| !seen.contains(e)).collect();
        assert!(
            missed.is_empty(),
            "run {run}: {} writes never passed `Changed<Val>`",
            missed.len()
        );
    }
}

// ----- attacks the engine refuses or handles ----------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(u32);
struct Tag;

fn is_err_named(result: Result<SystemConfig<'_>, ScheduleError>, name: &str) -> bool {
    matches!(result.err(), Some(ScheduleError::ForeignRegistry { system }) if system == name)
}

use ecs::core::Components;
use ecs::sched::{IntoSystem, System, SystemConfig};

/// Builds the wrapped system with the registry it is given, and hands a second system built
/// from the same function against the same registry to `stash`: a system smuggled out of one
/// schedule's `add_system`.
struct Smuggle<S, T> {
    system: S,
    twin: Option<T>,
    stash: std::sync::Arc<std::sync::Mutex<Option<Box<dyn System>>>>,
}

impl<M, S: IntoSystem<M>, T: IntoSystem<M>> IntoSystem<Smuggle<M, M>> for Smuggle<S, T> {
    fn into_system(self, registry: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        let twin = self.twin.expect("a twin").into_system(registry)?;
        *self.stash.lock().unwrap() = Some(twin);
        self.system.into_system(registry)
    }
}

/// Passes a system that was already built on.
struct Prebuilt(Box<dyn System>);

impl IntoSystem<Prebuilt> for Prebuilt {
    fn into_system(self, _: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        Ok(self.0)
    }
}

fn grow(mut q: Query<RefRW<Pos>>) {
    q.for_each(|p| p.0 += 1);
}

fn shrink(mut q: Query<RefRW<Pos>>) {
    q.for_each(|p| p.0 -= 1);
}

#[test]
fn a_system_smuggled_out_of_one_schedule_is_refused_by_another() {
    let stash = std::sync::Arc::new(std::sync::Mutex::new(None));
    let mut first = Schedule::single_threaded();
    first.add_system(Smuggle {
        system: grow,
        twin: Some(shrink),
        stash: stash.clone(),
    });
    let smuggled = stash.lock().unwrap().take().expect("stashed");
    let mut second = Schedule::single_threaded();
    second.add_system(grow);
    assert!(is_err_named(
        second.try_add_system(Prebuilt(smuggled)),
        "shrink"
    ));
}

/// Put back into the schedule whose registry built it, the twin is accepted and ordered
/// against the other writer of `Pos`, so both writes land.
#[test]
fn a_system_smuggled_back_into_its_own_schedule_is_ordered_against_other_writers() {
    let stash = std::sync::Arc::new(std::sync::Mutex::new(None));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(Smuggle {
        system: grow,
        twin: Some(shrink),
        stash: stash.clone(),
    });
    let smuggled = stash.lock().unwrap().take().expect("stashed");
    schedule.add_system(Prebuilt(smuggled));
    assert!(
        schedule.explain().contains("grow -> shrink: conflict on"),
        "{}",
        schedule.explain()
    );
    let mut world = World::new();
    let e = world.spawn((Pos(10),));
    for _ in 0..20 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.get::<Pos>(e), Ok(&Pos(10)));
}

#[test]
fn a_query_state_follows_the_world_it_was_built_for_through_mem_swap() {
    let mut a = World::new();
    let mut b = World::new();
    a.spawn((Pos(1),));
    b.spawn((Pos(2),));
    b.spawn((Pos(3),));
    let mut state = QueryState::<RefRO<Pos>>::new(&mut a);
    std::mem::swap(&mut a, &mut b);
    // `b` now holds the world the state was built for: it works there...
    let seen: Vec<u32> = state.iter(&b).map(|p| p.0).collect();
    assert_eq!(seen, [1]);
    // ...and is refused with the world now in `a`, whose archetypes it never cached.
    let refused = catch_unwind(AssertUnwindSafe(|| state.iter(&a).count())).unwrap_err();
    assert!(
        message(&*refused).contains("used with a world it was not built for"),
        "{}",
        message(&*refused)
    );
}

#[test]
fn a_query_state_sees_archetypes_made_after_the_registry_grew() {
    struct T0;
    struct T1(#[allow(dead_code)] u64);
    struct T2(#[allow(dead_code)] [u8; 3]);
    let mut world = World::with_test_chunk_size(256);
    let mut state = QueryState::<(Entity, RefRW<Pos>)>::new(&mut world);
    let e0 = world.spawn((Pos(0), T0));
    world.register_component::<u16>();
    let e1 = world.spawn((T1(9), Pos(1)));
    let more: Vec<Entity> = world
        .spawn_batch((2..60).map(|i| (T2([1, 2, 3]), Pos(i), T0)))
        .collect();
    state.for_each(&mut world, |(_, p)| p.0 *= 10);
    assert_eq!(world.get::<Pos>(e0), Ok(&Pos(0)));
    assert_eq!(world.get::<Pos>(e1), Ok(&Pos(10)));
    for (i, e) in more.iter().enumerate() {
        assert_eq!(world.get::<Pos>(*e), Ok(&Pos((i as u32 + 2) * 10)));
    }
    world.check_invariants();
}

#[test]
fn forged_and_reserved_handles_never_reach_a_row() {
    let mut world = World::with_test_chunk_size(256);
    let live: Vec<Entity> = world.spawn_batch((0..30).map(|i| (Pos(i),))).collect();
    world.despawn(live[3]).unwrap();
    let reserved = world.reserve_entity(); // reuses slot 3 with the next generation
    let mut state = QueryState::<RefRO<Pos>>::new(&mut world);
    for index in 0..40u32 {
        for generation in 1..4u32 {
            let forged = Entity::from_bits(u64::from(generation) << 32 | u64::from(index))
                .expect("non-zero generation");
            let real = live.iter().position(|&e| e == forged && e != live[3]);
            match real {
                Some(i) => {
                    assert_eq!(world.get::<Pos>(forged), Ok(&Pos(i as u32)));
                    assert_eq!(state.get(&world, forged).map(|p| p.0), Ok(i as u32));
                }
                None => {
                    assert!(world.get::<Pos>(forged).is_err(), "{forged}");
                    assert!(state.get(&world, forged).is_err(), "{forged}");
                    assert!(!world.contains(forged), "{forged}");
                }
            }
        }
    }
    assert_eq!(Entity::from_bits(5), None, "generation 0 is never a handle");
    assert!(!world.contains(reserved) && world.get::<Pos>(reserved).is_err());
    world.flush();
    assert!(world.contains(reserved) && world.get::<Pos>(reserved).is_err());
    world.check_invariants();
}

#[test]
fn a_world_swapped_by_an_exclusive_system_stops_later_systems_with_a_named_panic() {
    struct Spare(World);
    fn swap_worlds(world: &mut World) {
        let Spare(mut spare) = world.remove_resource::<Spare>().expect("a spare world");
        std::mem::swap(world, &mut spare);
        world.insert_resource(Spare(spare));
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(swap_worlds);
    schedule.add_system(grow).after("swap_worlds");
    let mut world = World::new();
    let e = world.spawn((Pos(1),));
    let mut spare = World::new();
    let s = spare.spawn((Pos(100),));
    world.insert_resource(Spare(spare));
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    assert!(
        message(&*payload).contains("system `grow` run on a world it was not initialised for"),
        "{}",
        message(&*payload)
    );
    // `world` is now the spare; nothing was written in either world.
    assert_eq!(world.get::<Pos>(s), Ok(&Pos(100)));
    let Spare(original) = world.remove_resource::<Spare>().unwrap();
    assert_eq!(original.get::<Pos>(e), Ok(&Pos(1)));
    world.check_invariants();
    original.check_invariants();
}

#[test]
fn or_and_option_filters_are_never_taken_as_proof_of_disjointness() {
    fn with_tag(mut q: Query<RefRW<Pos>, With<Tag>>) {
        q.for_each(|p| p.0 += 1);
    }
    fn without_tag(mut q: Query<RefRW<Pos>, Without<Tag>>) {
        q.for_each(|p| p.0 += 1);
    }
    fn or_tag(mut q: Query<RefRW<Pos>, Or<(With<Tag>,)>>) {
        q.for_each(|p| p.0 += 1);
    }
    fn option_tag(mut q: Query<(RefRW<Pos>, Option<With<Tag>>)>) {
        q.for_each(|(p, _)| p.0 += 1);
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(with_tag);
    schedule.add_system(without_tag);
    schedule.add_system(or_tag);
    schedule.add_system(option_tag);
    let report = schedule.explain();
    assert!(!report.contains("with_tag -> without_tag"), "{report}");
    for edge in [
        "without_tag -> or_tag",
        "without_tag -> option_tag",
        "with_tag -> or_tag",
        "or_tag -> option_tag",
    ] {
        assert!(report.contains(edge), "missing `{edge}`:\n{report}");
    }
    let mut world = World::new();
    let tagged = world.spawn((Pos(0), Tag));
    let plain = world.spawn((Pos(0),));
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Pos>(tagged), Ok(&Pos(3)));
    assert_eq!(world.get::<Pos>(plain), Ok(&Pos(2)));
}

#[test]
fn a_world_read_is_ordered_against_resource_writers_and_refused_beside_one() {
    struct Score(u32);
    fn read_world(world: &World) {
        assert_eq!(world.resource::<Score>().0 % 2, 0, "never mid-update");
    }
    fn bump(mut score: ResMut<Score>) {
        score.0 += 1;
        score.0 += 1;
    }
    fn both(_: &World, _: ResMut<Score>) {}
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(read_world);
    schedule.add_system(bump);
    assert!(
        schedule
            .explain()
            .contains("read_world -> bump: conflict on `&World`"),
        "{}",
        schedule.explain()
    );
    let refused = schedule.try_add_system(both).err();
    assert!(
        matches!(&refused, Some(ScheduleError::ConflictingParams { system, .. }) if system == "both"),
        "{refused:?}"
    );
    let mut world = World::new();
    world.insert_resource(Score(0));
    for _ in 0..10 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.resource::<Score>().0, 20);
}

#[test]
fn a_lying_size_hint_in_spawn_batch_changes_nothing_but_capacity() {
    /// Yields `n` bundles but claims `hint`.
    struct Liar {
        n: u32,
        hint: (usize, Option<usize>),
    }
    impl Iterator for Liar {
        type Item = (Pos,);
        fn next(&mut self) -> Option<(Pos,)> {
            self.n = self.n.checked_sub(1)?;
            Some((Pos(self.n),))
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            self.hint
        }
    }
    let mut world = World::with_test_chunk_size(256);
    let many: Vec<Entity> = world
        .spawn_batch(Liar {
            n: 50,
            hint: (0, Some(0)),
        })
        .collect();
    let few: Vec<Entity> = world
        .spawn_batch(Liar {
            n: 3,
            hint: (1000, Some(1)),
        })
        .collect();
    assert_eq!((many.len(), few.len(), world.len()), (50, 3, 53));
    for (i, e) in many.iter().enumerate() {
        assert_eq!(world.get::<Pos>(*e), Ok(&Pos(49 - i as u32)));
    }
    world.check_invariants();
}

#[test]
fn a_chunk_view_refuses_columns_its_query_does_not_grant() {
    let mut world = World::new();
    world.spawn((Pos(1), Tag));
    let write = catch_unwind(AssertUnwindSafe(|| {
        world
            .query::<RefRO<Pos>>()
            .for_each_chunk(|mut v| v.column_mut::<Pos>()[0].0 = 7);
    }))
    .unwrap_err();
    assert!(
        message(&*write).contains("does not write"),
        "{}",
        message(&*write)
    );
    let filter = catch_unwind(AssertUnwindSafe(|| {
        world
            .query_filtered::<RefRO<Pos>, With<Tag>>()
            .for_each_chunk(|v| assert_eq!(v.column::<Tag>().len(), 1));
    }))
    .unwrap_err();
    assert!(
        message(&*filter).contains("does not access"),
        "{}",
        message(&*filter)
    );
    assert_eq!(world.query::<RefRO<Pos>>().iter().next(), Some(&Pos(1)));
}

#[test]
fn commands_shared_by_par_for_each_threads_spawn_once_per_row() {
    use std::sync::Mutex;
    fn fan_out(mut q: Query<RefRO<Pos>>, commands: Commands) {
        let commands = Mutex::new(commands);
        q.par_for_each(|p| {
            commands.lock().unwrap().spawn((Marker, Pos(p.0 + 1000)));
        });
    }
    let mut world = World::with_test_chunk_size(256);
    world
        .spawn_batch((0..100).map(|i| (Pos(i),)))
        .for_each(drop);
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(fan_out);
    schedule.run(&mut world).unwrap();
    let mut spawned: Vec<u32> = world
        .query_filtered::<RefRO<Pos>, With<Marker>>()
        .iter()
        .map(|p| p.0)
        .collect();
    spawned.sort_unstable();
    assert_eq!(spawned, (1000..1100).collect::<Vec<_>>());
    world.check_invariants();
}

#[test]
fn a_schedule_alternating_between_worlds_keeps_each_worlds_commands_and_values() {
    fn mark_one(mut commands: Commands) {
        commands.spawn((Marker,));
    }
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(grow);
    schedule.add_system(mark_one);
    let mut a = World::new();
    let mut b = World::new();
    let ea = a.spawn((Pos(0),));
    let eb = b.spawn((Pos(100),));
    for round in 0..6 {
        schedule.run(&mut a).unwrap();
        if round % 2 == 0 {
            schedule.run(&mut b).unwrap();
        }
    }
    assert_eq!(
        (a.get::<Pos>(ea), b.get::<Pos>(eb)),
        (Ok(&Pos(6)), Ok(&Pos(103)))
    );
    assert_eq!((markers(&mut a), markers(&mut b)), (6, 3));
    a.check_invariants();
    b.check_invariants();
}

/// `World::set_slot_generation_for_tests` is `#[doc(hidden)]` but public and safe: it may set
/// a free slot's generation *back*, so a despawned entity's handle resolves to the next entity
/// spawned in that slot, which the stale-handle guarantee (docs/reliability.md) rules out.
#[test]
fn a_stale_handle_never_resolves_to_a_later_entity() {
    let mut world = World::new();
    let old = world.spawn((Pos(1),));
    world.despawn(old).unwrap();
    let back = catch_unwind(AssertUnwindSafe(|| {
        world.set_slot_generation_for_tests(
            old.index(),
            std::num::NonZeroU32::new(old.generation()).unwrap(),
        );
    }));
    let refusal = message(&*back.expect_err("the hook refuses to age a slot backwards"));
    assert!(refusal.contains("aged forward"), "{refusal}");
    let new = world.spawn((Pos(2),));
    assert!(
        !world.contains(old),
        "the despawned handle {old} resolves to {new}, a different entity"
    );
}

/// `QueryBorrow::for_each` and `iter` hand out items for the whole world borrow, so a caller may
/// keep every `&mut` past the loop (tuple queries derive them from per-chunk slices). Keeping and
/// writing them all afterwards must stay sound (Miri) and touch each row exactly once.
#[test]
fn items_kept_past_the_loop_alias_nothing() {
    let mut world = World::with_test_chunk_size(256);
    world
        .spawn_batch((0..50).map(|i| (Pos(i), Tag)))
        .for_each(drop);
    let mut kept: Vec<(Entity, &mut Pos)> = Vec::new();
    world
        .query::<(Entity, RefRW<Pos>, With<Tag>)>()
        .for_each(|(e, p, ())| kept.push((e, p)));
    let mut entities: Vec<Entity> = kept.iter().map(|(e, _)| *e).collect();
    for (_, p) in &mut kept {
        p.0 += 1000;
    }
    let mut kept_iter: Vec<&mut Pos> = world.query::<RefRW<Pos>>().iter().collect();
    for p in &mut kept_iter {
        p.0 += 1;
    }
    entities.sort_unstable();
    entities.dedup();
    assert_eq!(entities.len(), 50, "each row yielded once");
    let mut values: Vec<u32> = world.query::<RefRO<Pos>>().iter().map(|p| p.0).collect();
    values.sort_unstable();
    assert_eq!(values, (1001..1051).collect::<Vec<_>>());
}

/// A zero-sized column sits at offset 0, on top of the entity column: a chunk view's
/// `&'w [Entity]` kept beside its `&mut [Zst]` (and a `&mut` item of it) must stay sound.
#[test]
fn a_zero_sized_column_beside_the_entity_column_aliases_nothing() {
    #[derive(Debug, PartialEq)]
    struct Zst;
    let mut world = World::with_test_chunk_size(256);
    let spawned: Vec<Entity> = world.spawn_batch((0..40).map(|i| (Zst, Pos(i)))).collect();
    let mut seen = Vec::new();
    world
        .query::<(Entity, RefRW<Zst>, RefRW<Pos>)>()
        .for_each_chunk(|mut view| {
            let ids = view.entities();
            let (entities, zsts, pos) = view.columns();
            assert_eq!(entities, ids);
            assert_eq!(zsts.len(), ids.len());
            *zsts.first_mut().expect("a row") = Zst;
            for p in pos.iter_mut() {
                p.0 += 1;
            }
            seen.extend_from_slice(ids);
        });
    assert_eq!(seen, spawned);
    let mut kept: Vec<(Entity, &mut Zst)> = Vec::new();
    world
        .query::<(Entity, RefRW<Zst>)>()
        .for_each(|(e, z)| kept.push((e, z)));
    assert!(kept.iter().map(|(e, _)| *e).eq(spawned.iter().copied()));
    assert_eq!(world.get::<Pos>(spawned[39]), Ok(&Pos(40)));
}
