//! Run conditions: gating, their access in the plan, skipped systems in timings, refusals.

use ecs_core::World;
use ecs_query::{QueryExt, RefRO, RefRW};
use ecs_sched::{
    every_n_runs, named_condition, resource_changed, resource_exists, Commands, Query, Res, ResMut,
    Schedule, ScheduleError,
};

struct Paused(bool);
#[derive(Default)]
struct Ticks(u32);

fn not_paused(p: Res<Paused>) -> bool {
    !p.0
}

fn tick(mut t: ResMut<Ticks>) {
    t.0 += 1;
}

fn pause(mut p: ResMut<Paused>) {
    p.0 = !p.0;
}

#[test]
fn gated_system_runs_only_when_the_condition_holds() {
    let mut world = World::new();
    world.insert_resource(Paused(false));
    world.insert_resource(Ticks::default());
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(tick).run_if(not_paused);
    for paused in [false, true, true, false] {
        world.resource_mut::<Paused>().0 = paused;
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.resource::<Ticks>().0, 2);
}

#[test]
fn condition_access_joins_the_plan() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(pause);
    schedule.add_system(tick).run_if(not_paused);
    let explain = schedule.explain();
    assert!(
        explain.contains("pause -> tick: conflict on `Paused`"),
        "{explain}"
    );
    let full = schedule.explain_full_paths();
    assert!(
        full.contains("pause -> tick: conflict on `conditions::Paused`"),
        "{full}"
    );
    assert!(explain.contains("run if: not_paused"), "{explain}");
    // The gated system's reads include the condition's.
    assert!(explain.contains("reads:  Paused"), "{explain}");
}

#[test]
fn conditions_are_all_evaluated_every_run() {
    let mut world = World::new();
    world.insert_resource(Ticks::default());
    let mut schedule = Schedule::single_threaded();
    // every_n_runs(2) is true on runs 0, 2, 4; every_n_runs(3) on runs 0, 3: together only 0.
    schedule
        .add_system(tick)
        .run_if(every_n_runs(2))
        .run_if(every_n_runs(3));
    for _ in 0..6 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.resource::<Ticks>().0, 1);
    schedule.run(&mut world).unwrap(); // run 6: both due
    assert_eq!(world.resource::<Ticks>().0, 2);
}

#[test]
fn skipped_systems_record_no_commands_and_show_as_skipped() {
    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(|mut c: Commands| {
            c.spawn((1u32,));
        })
        .named("spawner")
        .run_if(every_n_runs(5));
    for _ in 0..10 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.len(), 2);
    let timings = schedule.timings();
    let row = &timings.systems()[0];
    assert_eq!((row.runs, row.skipped, row.last_skipped), (2, 8, true));
    assert!(timings.to_string().contains("skipped"), "{timings}");
}

#[test]
fn common_conditions() {
    #[derive(Clone, PartialEq)]
    struct Level(u32);
    let mut world = World::new();
    world.insert_resource(Ticks::default());
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(tick)
        .run_if(resource_exists::<Level>())
        .run_if(resource_changed::<Level>());
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Ticks>().0, 0);
    world.insert_resource(Level(1));
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Ticks>().0, 1);
    world.resource_mut::<Level>().0 = 2;
    schedule.run(&mut world).unwrap();
    assert_eq!(world.resource::<Ticks>().0, 2);
    let explain = schedule.explain();
    assert!(
        explain.contains("run if: resource_exists::<Level> && resource_changed::<Level>"),
        "{explain}"
    );
}

#[test]
fn writing_conditions_are_refused() {
    let mut schedule = Schedule::single_threaded();
    let err = schedule
        .add_system(tick)
        .try_run_if(|mut p: ResMut<Paused>| {
            p.0 = true;
            true
        })
        .err()
        .unwrap();
    assert!(
        matches!(&err, ScheduleError::ConditionNotReadOnly { system, writes, .. }
            if system == "tick" && writes.contains("Paused")),
        "{err}"
    );
    let err = schedule
        .add_system(pause)
        .try_run_if(|_: Query<RefRW<u32>>| true)
        .err()
        .unwrap();
    assert!(err.to_string().contains("must be read-only"), "{err}");
    let err = schedule
        .add_system(|_: Query<RefRO<u8>>| {})
        .named("cmd")
        .try_run_if(|_: Commands| true)
        .err()
        .unwrap();
    assert!(matches!(err, ScheduleError::ConditionNotReadOnly { .. }));
}

#[test]
fn conditions_gate_exclusive_systems_and_read_queries() {
    let mut world = World::new();
    world.spawn((1u32,));
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(|w: &mut World| {
            w.spawn((2u32,));
        })
        .named("grow")
        .run_if(named_condition("fewer_than_3", |q: Query<RefRO<u32>>| {
            q.count() < 3
        }));
    for _ in 0..5 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.len(), 3);
}

#[test]
#[cfg_attr(miri, ignore = "rayon pool threads are never joined")]
fn gated_results_are_the_same_on_any_thread_count() {
    fn run(threads: usize) -> Vec<u32> {
        let mut world = World::new();
        world.insert_resource(Paused(false));
        world.insert_resource(Ticks::default());
        for i in 0..100u32 {
            world.spawn((i,));
        }
        let mut schedule = Schedule::with_threads(threads);
        schedule.add_system(pause).run_if(every_n_runs(3));
        schedule
            .add_system(|mut q: Query<RefRW<u32>>| q.for_each(|n| *n += 1))
            .named("grow")
            .run_if(not_paused);
        schedule.add_system(tick).run_if(not_paused);
        for _ in 0..20 {
            schedule.run(&mut world).unwrap();
        }
        let mut out: Vec<u32> = world.query::<RefRO<u32>>().iter().copied().collect();
        out.push(world.resource::<Ticks>().0);
        out
    }
    let one = run(1);
    for threads in [2, 4] {
        assert_eq!(run(threads), one);
    }
}
