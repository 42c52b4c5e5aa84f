//! One-shot and registered systems (`RunSystemExt`, `Commands::run_system`), alone and where
//! they meet the schedule, commands, enable bits and panics.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{Entity, World};
use ecs_query::{QueryExt, RefRO, RefRW, With, Without};
use ecs_sched::{
    Commands, Local, Query, Res, ResMut, RunSystemError, RunSystemExt, Schedule, ScheduleError,
    SystemId,
};

#[derive(Debug, PartialEq)]
struct Hp(u32);
struct Shield;
struct Ids(Vec<SystemId>);

#[test]
fn run_system_once_runs_queries_and_applies_commands_in_order() {
    fn grow(mut q: Query<(Entity, RefRW<Hp>)>, mut commands: Commands) {
        q.for_each(|(e, hp)| {
            hp.0 += 1;
            if hp.0 > 2 {
                commands.despawn(e);
            }
        });
        commands.spawn((Hp(0),));
    }
    let mut world = World::new();
    let a = world.spawn((Hp(1),));
    let b = world.spawn((Hp(2),));
    assert!(world.run_system_once(grow).unwrap().is_empty());
    assert_eq!(world.get::<Hp>(a), Ok(&Hp(2)));
    assert!(!world.contains(b));
    assert_eq!(world.len(), 2);
}

#[test]
fn a_registered_system_keeps_its_locals_and_its_change_window() {
    fn seen(
        q: Query<RefRO<Hp>, ecs_query::Changed<Hp>>,
        mut runs: Local<u32>,
        mut out: ResMut<Vec<(u32, usize)>>,
    ) {
        *runs += 1;
        out.push((*runs, q.count()));
    }
    let mut world = World::new();
    world.insert_resource(Vec::<(u32, usize)>::new());
    let e = world.spawn((Hp(1),));
    world.spawn((Hp(5),));
    let id = world.register_system(seen);
    world.run_system(id).unwrap();
    world.run_system(id).unwrap(); // nothing changed since the last run
    world.get_mut::<Hp>(e).unwrap().0 = 9;
    world.run_system(id).unwrap();
    assert_eq!(
        *world.resource::<Vec<(u32, usize)>>(),
        [(1, 2), (2, 0), (3, 1)]
    );
}

#[test]
fn stale_foreign_and_unregistered_ids_are_errors_not_other_systems() {
    let mut world = World::new();
    world.insert_resource(0u32);
    let first = world.register_system(|mut n: ResMut<u32>| *n += 1);
    world.unregister_system(first).unwrap();
    assert_eq!(
        world.run_system(first),
        Err(RunSystemError::NoSuchSystem(first))
    );
    assert_eq!(
        world.unregister_system(first),
        Err(RunSystemError::NoSuchSystem(first))
    );
    // The slot is reused with a new generation: the old id still names nothing.
    let second = world.register_system(|mut n: ResMut<u32>| *n += 100);
    assert_ne!(first, second);
    assert_eq!(
        world.run_system(first),
        Err(RunSystemError::NoSuchSystem(first))
    );
    world.run_system(second).unwrap();
    assert_eq!(*world.resource::<u32>(), 100);
    let mut other = World::new();
    other.insert_resource(0u32);
    assert_eq!(
        other.run_system(second),
        Err(RunSystemError::NoSuchSystem(second))
    );
    let err = other.run_system(second).unwrap_err();
    assert!(err.to_string().contains("no system registered"), "{err}");
}

#[test]
fn a_system_can_run_others_but_not_itself() {
    let mut world = World::new();
    world.insert_resource(Vec::<&'static str>::new());
    let inner = world.register_system(|mut log: ResMut<Vec<&'static str>>| log.push("inner"));
    let outer = world.register_system(|world: &mut World| {
        let ids = world.resource::<Ids>().0.clone();
        world.resource_mut::<Vec<&'static str>>().push("outer");
        world.run_system(ids[0]).unwrap();
        assert_eq!(
            world.run_system(ids[1]),
            Err(RunSystemError::AlreadyRunning(ids[1]))
        );
    });
    world.insert_resource(Ids(vec![inner, outer]));
    world.run_system(outer).unwrap();
    world.run_system(outer).unwrap();
    assert_eq!(
        *world.resource::<Vec<&'static str>>(),
        ["outer", "inner", "outer", "inner"]
    );
}

#[test]
fn self_conflicting_systems_are_refused_including_through_enable_bits() {
    fn aliasing(_: Res<u32>, _: ResMut<u32>) {}
    fn split(mut a: Query<RefRW<Hp>, With<Shield>>, mut b: Query<RefRW<Hp>, Without<Shield>>) {
        a.for_each(|hp| hp.0 += 1);
        b.for_each(|hp| hp.0 += 10);
    }
    let mut world = World::new();
    assert!(matches!(
        world.run_system_once(aliasing),
        Err(RunSystemError::Conflict(
            ScheduleError::ConflictingParams { .. }
        ))
    ));
    assert!(world.try_register_system(aliasing).is_err());
    let caught = catch_unwind(AssertUnwindSafe(|| world.register_system(aliasing)));
    let message = *caught.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("cannot register the system"), "{message}");

    // Disjoint while `Shield` is an ordinary component...
    let e = world.spawn((Hp(0), Shield));
    let id = world.register_system(split);
    world.run_system(id).unwrap();
    assert_eq!(world.get::<Hp>(e), Ok(&Hp(1)));
    // ...but an enableable `Shield` can be disabled, and then both queries match the row.
    let mut enableable = World::new();
    enableable.register_enableable::<Shield>();
    enableable.spawn((Hp(0), Shield));
    let err = enableable.try_register_system(split).unwrap_err();
    assert!(matches!(err, RunSystemError::Conflict(_)), "{err}");
    assert!(err.to_string().contains("enableable"), "{err}");
    assert!(enableable.run_system_once(split).is_err());
    // A world that makes `Shield` enableable after registration is caught at the next run,
    // before the system touches a row.
    let mut late = World::new();
    let id = late.register_system(split);
    late.register_enableable::<Shield>();
    let row = late.spawn((Hp(0), Shield));
    assert!(matches!(
        late.run_system(id),
        Err(RunSystemError::Conflict(_))
    ));
    assert_eq!(late.get::<Hp>(row), Ok(&Hp(0)));
}

#[test]
fn a_panicking_registered_system_drops_its_commands_and_stays_registered() {
    fn flaky(mut commands: Commands, mut runs: Local<u32>) {
        *runs += 1;
        commands.spawn((Hp(*runs),));
        if *runs == 1 {
            panic!("first run fails");
        }
    }
    let mut world = World::new();
    let id = world.register_system(flaky);
    let caught = catch_unwind(AssertUnwindSafe(|| world.run_system(id)));
    assert!(caught.is_err());
    world.flush();
    assert_eq!(
        world.query::<RefRO<Hp>>().count(),
        0,
        "the panicked run's spawn is dropped"
    );
    world.run_system(id).unwrap();
    let hps: Vec<u32> = world.query::<RefRO<Hp>>().iter().map(|h| h.0).collect();
    assert_eq!(hps, [2], "the Local survived the panic");
}

#[test]
fn commands_run_registered_systems_in_command_order_and_report_failures() {
    type Log = Vec<String>;
    fn wave(mut log: ResMut<Log>, mut n: Local<u32>) {
        *n += 1;
        log.push(format!("wave {}", *n));
    }
    let mut world = World::new();
    world.insert_resource(Log::new());
    let id = world.register_system(wave);
    let gone = world.register_system(|| {});
    world.unregister_system(gone).unwrap();
    world.insert_resource(Ids(vec![id, gone]));
    let mut schedule = Schedule::new();
    schedule.add_system(|ids: Res<Ids>, mut commands: Commands| {
        commands.add(|w| w.resource_mut::<Log>().push("before".into()));
        commands.run_system(ids.0[0]);
        commands.add(|w| w.resource_mut::<Log>().push("after".into()));
        commands.run_system(ids.0[1]);
    });
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(
        *world.resource::<Log>(),
        ["before", "wave 1", "after", "before", "wave 2", "after"]
    );
    let skipped = schedule.skipped_commands();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(skipped[0].command, "run_system");
    assert!(
        skipped[0].reason.contains("no system registered"),
        "{}",
        skipped[0].reason
    );
}

/// Registered systems run from commands give the same world on any thread count.
#[test]
fn commands_running_systems_are_deterministic_on_any_thread_count() {
    fn build(threads: usize) -> Vec<(u32, u32, u32)> {
        fn spread(mut q: Query<(Entity, RefRW<Hp>)>, mut commands: Commands) {
            q.for_each(|(e, hp)| {
                hp.0 = hp.0.wrapping_mul(31).wrapping_add(e.index());
                if hp.0 % 7 == 0 {
                    commands.spawn((Hp(hp.0 / 7),));
                }
            });
        }
        let mut world = World::new();
        world
            .spawn_batch((0..200u32).map(|i| (Hp(i),)))
            .for_each(drop);
        let id = world.register_system(spread);
        world.insert_resource(Ids(vec![id]));
        let mut schedule = Schedule::with_threads(threads);
        for k in 0..4u32 {
            schedule
                .add_system(move |ids: Res<Ids>, mut commands: Commands| {
                    commands.spawn((Hp(k),));
                    commands.run_system(ids.0[0]);
                })
                .named(format!("trigger_{k}"));
            schedule
                .add_system(move |mut q: Query<RefRW<Hp>>| q.for_each(|h| h.0 ^= k))
                .named(format!("mix_{k}"));
        }
        for _ in 0..5 {
            schedule.run(&mut world).unwrap();
        }
        let mut out: Vec<(u32, u32, u32)> = world
            .query::<(Entity, RefRO<Hp>)>()
            .iter()
            .map(|(e, h)| (e.index(), e.generation(), h.0))
            .collect();
        out.sort();
        out
    }
    let one = build(1);
    assert!(one.len() > 200);
    assert_eq!(build(2), one);
    assert_eq!(build(4), one);
}
