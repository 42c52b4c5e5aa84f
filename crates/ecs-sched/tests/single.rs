//! `Single` and `Populated`: skipping, conflicts, change windows, and where they meet run
//! conditions, one-shot systems and several threads.

use ecs_core::{Entity, World};
use ecs_query::{Changed, QueryExt, RefRO, RefRW, With, Without};
use ecs_sched::{
    every_n_runs, Populated, Query, ResMut, RunSystemError, RunSystemExt, Schedule, ScheduleError,
    Single,
};

#[derive(Debug, PartialEq)]
struct Hp(u32);
struct Player;
struct Enemy;

fn heal(mut hp: Single<RefRW<Hp>, With<Player>>) {
    hp.0 += 1;
}

#[test]
fn single_runs_only_with_exactly_one_match() {
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(heal);
    schedule.run(&mut world).unwrap(); // none
    let p = world.spawn((Player, Hp(1)));
    schedule.run(&mut world).unwrap(); // one
    let q = world.spawn((Player, Hp(10)));
    schedule.run(&mut world).unwrap(); // two
    assert_eq!(world.get::<Hp>(p), Ok(&Hp(2)));
    assert_eq!(world.get::<Hp>(q), Ok(&Hp(10)));
    let timings = schedule.timings();
    let row = timings.system("heal").unwrap();
    assert_eq!((row.runs, row.skipped), (1, 2)); // `runs` counts the runs that ran
    assert!(row.last_skipped);
}

#[test]
fn option_single_never_skips() {
    fn look(player: Option<Single<RefRO<Hp>, With<Player>>>, mut seen: ResMut<Vec<Option<u32>>>) {
        seen.push(player.map(|hp| hp.0));
    }
    let mut world = World::new();
    world.insert_resource(Vec::<Option<u32>>::new());
    let mut schedule = Schedule::new();
    schedule.add_system(look);
    schedule.run(&mut world).unwrap();
    world.spawn((Player, Hp(4)));
    schedule.run(&mut world).unwrap();
    world.spawn((Player, Hp(5)));
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<Vec<Option<u32>>>(), [None, Some(4), None]);
    assert_eq!(schedule.timings().system("look").unwrap().skipped, 0);
}

#[test]
fn populated_skips_while_nothing_matches() {
    fn count(enemies: Populated<RefRO<Hp>, With<Enemy>>, mut seen: ResMut<Vec<usize>>) {
        seen.push(enemies.count());
    }
    let mut world = World::new();
    world.insert_resource(Vec::<usize>::new());
    let mut schedule = Schedule::new();
    schedule.add_system(count);
    schedule.run(&mut world).unwrap();
    let e = world.spawn((Enemy, Hp(1)));
    world.spawn((Enemy, Hp(1)));
    schedule.run(&mut world).unwrap();
    world.despawn(e).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<Vec<usize>>(), [2, 1]);
    assert_eq!(schedule.timings().system("count").unwrap().skipped, 1);
}

#[test]
fn single_and_populated_declare_what_a_query_declares() {
    fn aliasing(_: Single<RefRW<Hp>>, _: Query<RefRO<Hp>>) {}
    fn aliasing_populated(_: Populated<RefRW<Hp>>, _: Single<RefRO<Hp>>) {}
    let mut schedule = Schedule::new();
    assert!(matches!(
        schedule.try_add_system(aliasing),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    assert!(matches!(
        schedule.try_add_system(aliasing_populated),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    // A writer of `Hp` and a `Single` reader of it are ordered, in insertion order.
    fn reader(hp: Single<RefRO<Hp>>, mut seen: ResMut<Vec<u32>>) {
        seen.push(hp.0);
    }
    fn writer(mut q: Query<RefRW<Hp>>) {
        q.for_each(|h| h.0 += 1);
    }
    let mut world = World::new();
    world.insert_resource(Vec::<u32>::new());
    world.spawn((Hp(0),));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(writer);
    schedule.add_system(reader);
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(*world.resource::<Vec<u32>>(), [1, 2, 3]);
    assert!(
        schedule.explain().contains("writer -> reader"),
        "{}",
        schedule.explain()
    );
}

/// A skipped run is not a run: the change window of a `Single<Q, Changed<T>>` stays open
/// until the system runs, so the changes it skipped over are still seen.
#[test]
fn a_changed_single_counts_in_the_window_its_run_sees() {
    fn report(hp: Single<RefRO<Hp>, Changed<Hp>>, mut seen: ResMut<Vec<u32>>) {
        seen.push(hp.0);
    }
    let mut world = World::new();
    world.insert_resource(Vec::<u32>::new());
    let a = world.spawn((Hp(1),));
    let mut schedule = Schedule::new();
    schedule.add_system(report);
    schedule.run(&mut world).unwrap(); // `a` is new: seen
    schedule.run(&mut world).unwrap(); // nothing changed: skipped
    world.get_mut::<Hp>(a).unwrap().0 = 7;
    schedule.run(&mut world).unwrap(); // exactly one changed: seen
    let b = world.spawn((Hp(2),));
    world.get_mut::<Hp>(a).unwrap().0 = 8;
    schedule.run(&mut world).unwrap(); // two changed: skipped
    world.despawn(b).unwrap();
    schedule.run(&mut world).unwrap(); // `a`'s change is still in the open window: seen
    assert_eq!(*world.resource::<Vec<u32>>(), [1, 7, 8]);
    assert_eq!(schedule.timings().system("report").unwrap().skipped, 2);
}

#[test]
fn a_false_run_condition_and_a_skipping_param_skip_once() {
    let mut world = World::new();
    let p = world.spawn((Player, Hp(0)));
    let mut schedule = Schedule::new();
    schedule.add_system(heal).run_if(every_n_runs(2));
    for _ in 0..4 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.get::<Hp>(p), Ok(&Hp(2)));
    let timings = schedule.timings();
    let row = timings.system("heal").unwrap();
    assert_eq!((row.runs, row.skipped), (2, 2));
}

#[test]
fn one_shot_runs_report_a_skipping_param() {
    let mut world = World::new();
    let err = world.run_system_once(heal).unwrap_err();
    assert_eq!(
        err,
        RunSystemError::Skipped {
            system: "heal".into()
        }
    );
    assert!(err.to_string().contains("Single"), "{err}");
    let p = world.spawn((Player, Hp(0)));
    let id = world.register_system(heal);
    world.run_system(id).unwrap();
    world.spawn((Player, Hp(0)));
    assert!(matches!(
        world.run_system(id),
        Err(RunSystemError::Skipped { .. })
    ));
    assert_eq!(world.get::<Hp>(p), Ok(&Hp(1)));
}

/// Many `Single` / `Populated` systems on 1, 2 and 4 threads give one world.
#[test]
fn skipping_params_are_deterministic_on_any_thread_count() {
    fn build(threads: usize) -> Vec<(u32, u32)> {
        fn hunt(
            mut enemies: Populated<(Entity, RefRW<Hp>), With<Enemy>>,
            player: Single<RefRO<Hp>, (With<Player>, Without<Enemy>)>,
        ) {
            let strength = player.0;
            enemies
                .for_each(|(e, hp)| hp.0 = hp.0.wrapping_mul(3).wrapping_add(strength ^ e.index()));
        }
        fn grow(mut hp: Single<RefRW<Hp>, With<Player>>) {
            hp.0 = hp.0.wrapping_add(5);
        }
        let mut world = World::new();
        world.spawn((Player, Hp(1)));
        world
            .spawn_batch((0..300u32).map(|i| (Enemy, Hp(i))))
            .for_each(drop);
        let mut schedule = Schedule::with_threads(threads);
        schedule.add_system(hunt);
        schedule.add_system(grow);
        schedule
            .add_system(|mut q: Query<RefRW<Hp>, With<Enemy>>| q.for_each(|h| h.0 ^= 0x55))
            .named("mix");
        for _ in 0..10 {
            schedule.run(&mut world).unwrap();
        }
        let mut out: Vec<(u32, u32)> = world
            .query::<(Entity, RefRO<Hp>)>()
            .iter()
            .map(|(e, h)| (e.index(), h.0))
            .collect();
        out.sort();
        out
    }
    let one = build(1);
    assert_eq!(build(2), one);
    assert_eq!(build(4), one);
}
