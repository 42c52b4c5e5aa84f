//! Attacks on the scheduler's trust, kept as tests: what an outside reviewer tried from safe
//! code, and the panics that must lose nothing. Each test names the behaviour it guards; see
//! docs/reliability.md for the table. Small and single-threaded, so Miri runs them all.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{Components, World};
use ecs_query::{RefRO, RefRW, With};
use ecs_sched::{
    CommandError, Commands, IntoSystem, Query, Res, Schedule, ScheduleError, System, SystemAccess,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
struct Marker;
struct Fail(bool);

/// A value whose `Drop` panics: a command that owns one panics when it is dropped unapplied.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("PanicOnDrop dropped");
    }
}

fn heal(mut q: Query<RefRW<Health>>) {
    q.for_each(|h| h.0 += 1);
}

fn poison(mut q: Query<RefRW<Health>>) {
    q.for_each(|h| h.0 = h.0.saturating_sub(1));
}

/// Builds the wrapped system against a registry of its own instead of the schedule's: its
/// `Health` gets another id than the schedule gave it, so its write would not be seen to
/// conflict with other writers of `Health`.
struct OwnRegistry<S>(S);

impl<M, S: IntoSystem<M>> IntoSystem<OwnRegistry<M>> for OwnRegistry<S> {
    fn into_system(self, _: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        let mut own = Components::default();
        own.register::<u8>(); // shifts every later id by one
        self.0.into_system(&mut own)
    }
}

/// Swaps the schedule's registry for a fresh one before building the wrapped system.
struct ReplaceRegistry<S>(S);

impl<M, S: IntoSystem<M>> IntoSystem<ReplaceRegistry<M>> for ReplaceRegistry<S> {
    fn into_system(self, registry: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        let mut fresh = Components::default();
        fresh.register::<u8>();
        std::mem::swap(registry, &mut fresh);
        self.0.into_system(registry)
    }
}

/// Builds the wrapped system with the registry it is given: what a well-behaved adapter does.
struct Forward<S>(S);

impl<M, S: IntoSystem<M>> IntoSystem<Forward<M>> for Forward<S> {
    fn into_system(self, registry: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        self.0.into_system(registry)
    }
}

#[test]
fn a_system_built_against_another_registry_is_refused() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(heal);
    let err = schedule.try_add_system(OwnRegistry(poison)).err();
    assert!(
        matches!(&err, Some(ScheduleError::ForeignRegistry { system }) if system == "poison"),
        "{err:?}"
    );
    let message = err.unwrap().to_string();
    assert!(
        message.contains("poison") && message.contains("registry"),
        "{message}"
    );
}

#[test]
fn a_system_that_replaces_the_schedule_registry_is_refused_and_so_is_every_later_query() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(heal);
    assert!(matches!(
        schedule.try_add_system(ReplaceRegistry(poison)),
        Err(ScheduleError::ForeignRegistry { .. })
    ));
    // The schedule's ids now come from a registry `heal` was not built against: any later
    // system with a query is refused too, rather than compared with the wrong ids.
    assert!(matches!(
        schedule.try_add_system(poison),
        Err(ScheduleError::ForeignRegistry { .. })
    ));
    // Systems without component ids are still fine, and `heal` still runs.
    schedule.add_system(|_: Res<Fail>| {});
    let mut world = World::new();
    world.insert_resource(Fail(false));
    let e = world.spawn((Health(1),));
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Health>(e), Ok(&Health(2)));
}

#[test]
fn an_adapter_that_forwards_the_registry_is_accepted_and_ordered() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(heal);
    schedule.add_system(Forward(poison));
    let report = schedule.explain();
    assert!(
        report.contains("heal -> poison: ") && report.contains("Health"),
        "{report}"
    );
    let mut world = World::new();
    let e = world.spawn((Health(5),));
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Health>(e), Ok(&Health(5)));
}

/// A hand-written system: `unsafe impl`, declared exclusive, does its work in `run_exclusive`.
struct CountHealthy(SystemAccess);

// SAFETY: declared exclusive, so it never runs beside another system; `run_shared` touches
// nothing, and the access set has no component ids at all.
#[expect(unsafe_code, reason = "a hand-written System is an unsafe impl")]
unsafe impl System for CountHealthy {
    fn name(&self) -> &str {
        "count_healthy"
    }
    fn set_name(&mut self, _: String) {}
    fn access(&self) -> &SystemAccess {
        &self.0
    }
    fn initialize(&mut self, _: &mut World) {}
    unsafe fn run_shared(&mut self, _: &World) {
        unreachable!("exclusive systems run through run_exclusive");
    }
    fn run_exclusive(&mut self, world: &mut World) {
        let n = ecs_query::QueryExt::query::<(RefRO<Health>, With<Health>)>(world).count();
        world.insert_resource(n);
    }
    fn apply_deferred(&mut self, _: &mut World, _: &mut Vec<CommandError>, _: bool) {}
}

struct Hand;

impl IntoSystem<Hand> for Hand {
    fn into_system(self, _: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        let mut access = SystemAccess::default();
        access.set_exclusive();
        Ok(Box::new(CountHealthy(access)))
    }
}

#[test]
fn a_hand_written_unsafe_system_runs_through_the_schedule() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(heal);
    schedule.add_system(Hand);
    let mut world = World::new();
    world.spawn((Health(1),));
    world.spawn((Health(2),));
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<usize>(), 2);
}

// ----- panics that must lose nothing ----------------------------------------------------------

/// Records a `PanicOnDrop` spawn when the run is meant to fail.
fn drop_bomb(mut commands: Commands, fail: Res<Fail>) {
    if fail.0 {
        commands.spawn((PanicOnDrop,));
    }
}

fn mark(mut commands: Commands) {
    commands.spawn((Marker,));
}

fn boom(fail: Res<Fail>) {
    if fail.0 {
        panic!("kaboom");
    }
}

fn markers(world: &mut World) -> usize {
    ecs_query::QueryExt::query::<With<Marker>>(world).count()
}

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// A schedule, in this plan order: two systems that record a value whose `Drop` panics, one
/// that records a `Marker` spawn, and one that panics (all while `Fail(true)`).
fn failing_run_schedule() -> (Schedule, World) {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(drop_bomb).named("bomb_a");
    schedule.add_system(drop_bomb).named("bomb_b");
    schedule.add_system(mark);
    schedule.add_system(boom);
    let mut world = World::new();
    world.insert_resource(Fail(true));
    (schedule, world)
}

#[test]
fn a_panicking_drop_while_discarding_leaves_no_command_for_the_next_run() {
    let (mut schedule, mut world) = failing_run_schedule();
    assert!(catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).is_err());
    world.check_invariants();
    assert_eq!(
        markers(&mut world),
        0,
        "the failed run's commands were dropped"
    );

    world.insert_resource(Fail(false));
    schedule.run(&mut world).unwrap();
    world.check_invariants();
    assert_eq!(
        markers(&mut world),
        1,
        "only this run's Marker: none left over from the failed run"
    );
}

#[test]
fn the_system_panic_is_reported_not_the_drop_panic_of_a_discarded_command() {
    let (mut schedule, mut world) = failing_run_schedule();
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    let text = message(&*payload);
    assert!(
        text.starts_with("system `boom` panicked: kaboom"),
        "the system's panic comes first: {text}"
    );
    assert!(
        text.contains("PanicOnDrop dropped"),
        "the clean-up panic is reported beside it: {text}"
    );
}

#[test]
fn two_panicking_drops_in_one_queue_are_both_dropped_without_aborting() {
    fn two_bombs(mut commands: Commands) {
        commands.spawn((PanicOnDrop,));
        commands.spawn((PanicOnDrop,));
    }
    fn always_boom() {
        panic!("kaboom");
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(two_bombs);
    schedule.add_system(always_boom);
    let mut world = World::new();
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    let text = message(&*payload);
    assert!(
        text.starts_with("system `always_boom` panicked: kaboom")
            && text.contains("PanicOnDrop dropped"),
        "{text}"
    );
    world.check_invariants();
}

#[test]
fn a_panicking_command_drops_every_later_command_and_the_next_run_is_clean() {
    fn bad_command(mut commands: Commands, fail: Res<Fail>) {
        if fail.0 {
            commands.add(|_| panic!("command failed"));
        }
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(bad_command);
    schedule.add_system(drop_bomb);
    schedule.add_system(mark);
    let mut world = World::new();
    world.insert_resource(Fail(true));
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    let message = message(&*payload);
    assert!(
        message.starts_with("a command recorded by system `")
            && message.contains("bad_command")
            && message.ends_with("` panicked: command failed"),
        "{message}"
    );
    world.check_invariants();
    assert_eq!(markers(&mut world), 0);

    world.insert_resource(Fail(false));
    schedule.run(&mut world).unwrap();
    assert_eq!(markers(&mut world), 1);
}

#[test]
fn a_panicking_command_at_a_sync_point_drops_the_rest_of_the_run() {
    fn bad_command(mut commands: Commands, fail: Res<Fail>) {
        if fail.0 {
            commands.add(|_| panic!("command failed"));
        }
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(bad_command);
    schedule.add_system(drop_bomb);
    schedule.add_sync_point();
    schedule.add_system(mark);
    let mut world = World::new();
    world.insert_resource(Fail(true));
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    let message = message(&*payload);
    assert!(
        message.starts_with("a command recorded by system `")
            && message.contains("bad_command")
            && message.ends_with("` panicked: command failed"),
        "{message}"
    );
    assert_eq!(
        markers(&mut world),
        0,
        "nothing after the failed sync point ran"
    );

    world.insert_resource(Fail(false));
    schedule.run(&mut world).unwrap();
    assert_eq!(markers(&mut world), 1);
    world.check_invariants();
}
