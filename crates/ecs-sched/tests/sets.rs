//! Named sets: membership, set-level orders, systems in several sets, errors.

use ecs_core::World;
use ecs_sched::{Res, ResMut, Schedule, ScheduleError};

#[derive(Default)]
struct Log(Vec<&'static str>);

fn noop(_: &World) {}

#[test]
fn set_orders_apply_to_every_member() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("render");
    schedule.add_system(noop).named("collide").in_set("physics");
    schedule.add_system(noop).named("input");
    schedule
        .add_system(noop)
        .named("integrate")
        .in_set("physics");
    schedule
        .configure_set("physics")
        .after("input")
        .before("render");
    let order = schedule.order().unwrap();
    let pos = |n: &str| order.iter().position(|o| o == n).unwrap();
    for member in ["collide", "integrate"] {
        assert!(pos("input") < pos(member), "{order:?}");
        assert!(pos(member) < pos("render"), "{order:?}");
    }
    let explain = schedule.explain();
    assert!(explain.contains("in sets: physics"), "{explain}");
    assert!(
        explain.contains("input -> collide: explicit order"),
        "{explain}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "rayon pool threads are never joined")]
fn sets_order_against_sets_and_systems_join_several() {
    let mut world = World::new();
    world.insert_resource(Log::default());
    let mut schedule = Schedule::with_threads(2);
    // Added in the reverse of the wanted order.
    schedule
        .add_system(|mut l: ResMut<Log>| l.0.push("draw"))
        .named("draw")
        .in_set("render");
    schedule
        .add_system(|mut l: ResMut<Log>| l.0.push("step"))
        .named("step")
        .in_set("physics")
        .in_set("simulation");
    schedule
        .add_system(|mut l: ResMut<Log>| l.0.push("ai"))
        .named("ai")
        .in_set("simulation");
    schedule.configure_set("render").after("physics");
    schedule.configure_set("simulation").after("input");
    schedule
        .add_system(|mut l: ResMut<Log>| l.0.push("input"))
        .named("input");
    schedule.run(&mut world).unwrap();
    let log = &world.resource::<Log>().0;
    let pos = |n: &str| log.iter().position(|o| *o == n).unwrap();
    assert!(pos("step") < pos("draw"), "{log:?}");
    assert!(
        pos("input") < pos("step") && pos("input") < pos("ai"),
        "{log:?}"
    );
}

#[test]
fn a_system_ordered_against_its_own_set_orders_against_the_other_members() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("a").in_set("s");
    schedule.add_system(noop).named("b").in_set("s").before("s");
    assert_eq!(schedule.order().unwrap(), ["b", "a"]);
}

#[test]
fn set_errors() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("physics");
    schedule.add_system(noop).named("x").in_set("physics");
    assert_eq!(
        schedule.build(),
        Err(ScheduleError::SetNameClash("physics".into()))
    );

    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("x");
    schedule.configure_set("s").after("missing");
    let err = schedule.build().unwrap_err();
    assert!(
        matches!(&err, ScheduleError::UnknownSystem { referenced, .. } if referenced == "missing"),
        "{err}"
    );

    // A set ordered against itself through another set is a cycle.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("a").in_set("s");
    schedule.add_system(noop).named("b").in_set("t");
    schedule.configure_set("s").after("t");
    schedule.configure_set("t").after("s");
    assert!(matches!(schedule.build(), Err(ScheduleError::Cycle { .. })));

    // An empty but configured set is fine to order against.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("a").after("empty");
    schedule.configure_set("empty");
    assert!(schedule.build().is_ok());
}

#[test]
fn set_members_still_conflict_by_access() {
    fn read(_: Res<Log>) {}
    fn write(_: ResMut<Log>) {}
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(write).in_set("s");
    schedule.add_system(read).in_set("s");
    let explain = schedule.explain();
    assert!(
        explain.contains("write -> read: conflict on `Log`"),
        "{explain}"
    );
}

#[test]
fn duplicate_names_are_refused_where_they_are_made() {
    fn step(_: &World) {}
    // One function twice, renamed: fine.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(step).named("step_a");
    schedule.add_system(step).named("step_b");
    assert!(schedule.build().is_ok());

    // Two closures of one function, the second left unnamed: refused at its `add_system`.
    let (first, second) = (|_: &World| {}, |_: &World| {});
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(first);
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        schedule.add_system(second);
    }));
    let message = *refused.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains(
            "two systems are named `duplicate_names_are_refused_where_they_are_made::{{closure}}`"
        ) && message.contains(".named("),
        "{message}"
    );

    // An explicit name that is taken: refused by `named`.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(step);
    let err = schedule.add_system(noop).try_named("step").err().unwrap();
    assert_eq!(err, ScheduleError::DuplicateName("step".into()));

    // `try_add_system` leaves the duplicate to `build`.
    let mut schedule = Schedule::single_threaded();
    schedule.try_add_system(step).unwrap();
    schedule.try_add_system(step).unwrap();
    assert_eq!(
        schedule.build(),
        Err(ScheduleError::DuplicateName("step".into()))
    );
}

#[test]
fn a_set_ordered_after_itself_is_a_cycle() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("x").in_set("s");
    schedule.configure_set("s").after("s");
    let err = schedule.build().unwrap_err();
    assert!(
        matches!(&err, ScheduleError::Cycle { systems } if systems.iter().any(|s| s.contains('s'))),
        "{err}"
    );
    // And with no member at all.
    let mut schedule = Schedule::single_threaded();
    schedule.configure_set("lonely").before("lonely");
    assert!(matches!(schedule.build(), Err(ScheduleError::Cycle { .. })));
}

#[test]
fn empty_sets_ordered_both_ways_are_a_cycle() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("x");
    schedule.configure_set("a").after("b");
    schedule.configure_set("b").after("a");
    let err = schedule.build().unwrap_err();
    assert!(matches!(&err, ScheduleError::Cycle { .. }), "{err}");
    assert!(err.to_string().contains("set `a`"), "{err}");
}

#[test]
fn orders_are_transitive_through_an_empty_set() {
    let mut schedule = Schedule::single_threaded();
    // Added in the reverse of the wanted order.
    schedule.add_system(noop).named("c1").in_set("c");
    schedule.add_system(noop).named("a1").in_set("a");
    schedule.configure_set("b").after("a");
    schedule.configure_set("c").after("b");
    assert_eq!(schedule.order().unwrap(), ["a1", "c1"]);
    let explain = schedule.explain();
    assert!(explain.contains("a1 -> c1: explicit order"), "{explain}");
    // Through an empty (configured) set that systems name, too.
    let mut schedule = Schedule::single_threaded();
    schedule.configure_set("gate");
    schedule.add_system(noop).named("late").after("gate");
    schedule.add_system(noop).named("early").before("gate");
    assert_eq!(schedule.order().unwrap(), ["early", "late"]);
}

#[test]
fn two_sets_that_share_a_member_cannot_be_ordered() {
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(noop)
        .named("both")
        .in_set("a")
        .in_set("b");
    schedule.add_system(noop).named("only_b").in_set("b");
    schedule.configure_set("a").before("b");
    assert!(matches!(schedule.build(), Err(ScheduleError::Cycle { .. })));
}

#[test]
fn a_system_ordered_after_itself_is_a_cycle() {
    // The `(x, x).chain()` of bevy's tests: an order from a system to itself.
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(noop).named("x").after("x");
    let err = schedule.build().unwrap_err();
    assert_eq!(
        err,
        ScheduleError::Cycle {
            systems: vec!["x".into()]
        }
    );
}

/// `configure_system` reaches a system by name after its `add_system` statement: orders,
/// sets, conditions and names, with the same checks as the first config.
#[test]
fn systems_can_be_configured_by_name_later() {
    use ecs_core::World;
    use ecs_sched::{every_n_runs, ResMut, ScheduleError};
    fn count(mut n: ResMut<u32>) {
        *n += 1;
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(count).named("count");
    schedule.add_system(|_: &mut World| {}).named("first");
    for slow in [false, true] {
        if slow {
            schedule
                .configure_system("count")
                .run_if(every_n_runs(2))
                .after("first");
        }
    }
    assert_eq!(schedule.order().unwrap(), ["first", "count"]);
    let mut world = World::new();
    world.insert_resource(0u32);
    for _ in 0..4 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(*world.resource::<u32>(), 2);
    assert!(matches!(
        schedule.try_configure_system("missing").err(),
        Some(ScheduleError::UnknownSystem { .. })
    ));
    let err = schedule.configure_system("count").try_named("first").err();
    assert_eq!(err, Some(ScheduleError::DuplicateName("first".into())));
    schedule.configure_system("count").named("tally");
    assert_eq!(schedule.order().unwrap(), ["first", "tally"]);
}
