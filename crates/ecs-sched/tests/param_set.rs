//! `ParamSet`, the conflict hint, and `Option<Res>` parameters.

use ecs_core::World;
use ecs_query::{RefRO, RefRW, With};
use ecs_sched::{ParamSet, Query, Res, ResMut, Schedule, ScheduleError};

#[derive(Debug, PartialEq)]
struct Hp(i32);
struct Poisoned;
struct Regen(i32);

#[test]
fn a_param_set_holds_conflicting_queries_used_in_turn() {
    #[expect(clippy::type_complexity, reason = "the parameter types are the test")]
    fn tick(
        mut set: ParamSet<(
            Query<RefRW<Hp>>,
            Query<(RefRW<Hp>, With<Poisoned>)>,
            ResMut<Regen>,
        )>,
    ) {
        let regen = set.p2().0;
        set.p0().for_each(|hp| hp.0 += regen);
        set.p1().for_each(|(hp, ())| hp.0 -= 3);
        set.p2().0 += 1;
    }
    let mut world = World::new();
    world.insert_resource(Regen(1));
    let a = world.spawn((Hp(10),));
    let b = world.spawn((Hp(10), Poisoned));
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(tick);
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Hp>(a), Ok(&Hp(13)));
    assert_eq!(world.get::<Hp>(b), Ok(&Hp(7)));
    assert_eq!(world.resource::<Regen>().0, 3);
}

#[test]
fn a_param_set_is_checked_against_the_other_parameters_and_other_systems() {
    #[expect(clippy::type_complexity, reason = "the parameter types are the test")]
    fn clash(_set: ParamSet<(Query<RefRW<Hp>>, Query<RefRO<Hp>>)>, _other: Query<RefRO<Hp>>) {}
    fn clash_before(_other: Res<Regen>, _set: ParamSet<(ResMut<Regen>, Query<RefRO<Hp>>)>) {}
    fn reader(_q: Query<RefRO<Hp>>) {}
    #[expect(clippy::type_complexity, reason = "the parameter types are the test")]
    fn fine(_set: ParamSet<(Query<RefRW<Hp>>, Query<RefRO<Hp>>)>) {}
    let mut schedule = Schedule::single_threaded();
    assert!(matches!(
        schedule.try_add_system(clash).err(),
        Some(ScheduleError::ConflictingParams { .. })
    ));
    assert!(matches!(
        schedule.try_add_system(clash_before).err(),
        Some(ScheduleError::ConflictingParams { .. })
    ));
    schedule.add_system(fine);
    schedule.add_system(reader);
    let explain = schedule.explain();
    assert!(
        explain.contains("fine -> reader: conflict on `Hp`"),
        "{explain}"
    );
}

#[test]
fn the_conflict_message_suggests_filters_or_a_param_set() {
    fn bad(_a: Query<RefRW<Hp>>, _b: Query<(RefRW<Hp>, With<Poisoned>)>) {}
    let err = Schedule::single_threaded()
        .try_add_system(bad)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("add `Without<Poisoned>` to the first query") && err.contains("ParamSet"),
        "{err}"
    );
}

#[test]
fn optional_resources() {
    fn maybe(r: Option<Res<Regen>>, w: Option<ResMut<Hp>>, mut seen: ResMut<Vec<bool>>) {
        seen.push(r.is_some());
        if let Some(mut hp) = w {
            hp.0 += 1;
        }
    }
    let mut world = World::new();
    world.insert_resource(Vec::<bool>::new());
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(maybe);
    schedule.run(&mut world).unwrap();
    world.insert_resource(Regen(0));
    world.insert_resource(Hp(0));
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<Vec<bool>>(), [false, true]);
    assert_eq!(*world.resource::<Hp>(), Hp(1));
    // `Option<ResMut<R>>` conflicts like `ResMut<R>`.
    fn both(_a: Option<ResMut<Hp>>, _b: Res<Hp>) {}
    assert!(Schedule::single_threaded().try_add_system(both).is_err());
}
