//! `#[derive(SystemParam)]`: access is the union of the fields', checked like a function's
//! parameters, and the derived struct works wherever a parameter does (schedules on several
//! threads, one-shot runs, nested in another derived struct, with `Single`).

use ecs::prelude::*;
use ecs::sched::IntoSystem;

#[derive(Debug, PartialEq)]
struct Hp(u32);
struct Enemy;
#[derive(Default)]
struct Score(u32);

#[derive(SystemParam)]
struct Combat<'w, 's> {
    enemies: Query<'w, 's, (Entity, RefRW<Hp>), With<Enemy>>,
    score: ResMut<'w, Score>,
    commands: Commands<'w, 's>,
    hits: Local<'s, u32>,
}

fn strike(mut combat: Combat) {
    let mut fallen = Vec::new();
    combat.enemies.for_each(|(e, hp)| {
        hp.0 = hp.0.saturating_sub(3);
        if hp.0 == 0 {
            fallen.push(e);
        }
    });
    *combat.hits += 1;
    combat.score.0 += fallen.len() as u32 * 10 + *combat.hits;
    for e in fallen {
        combat.commands.despawn(e);
    }
}

#[test]
fn a_derived_param_runs_with_all_its_fields() {
    let mut world = World::new();
    world.insert_resource(Score::default());
    let weak = world.spawn((Hp(3), Enemy));
    let strong = world.spawn((Hp(7), Enemy));
    let mut schedule = Schedule::new();
    schedule.add_system(strike);
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert!(!world.contains(weak));
    assert_eq!(world.get::<Hp>(strong), Ok(&Hp(1)));
    // 10 for the weak one's fall + hits 1, then hits 2 (the `Local` kept between runs).
    assert_eq!(world.resource::<Score>().0, 13);
    let system = strike
        .into_system(&mut ecs::core::Components::default())
        .unwrap();
    let mut writes = system.access().write_names();
    writes.sort();
    assert!(
        writes.iter().any(|w| w.ends_with("Hp")) && writes.iter().any(|w| w.ends_with("Score")),
        "{writes:?}"
    );
}

#[test]
fn fields_that_conflict_are_refused_like_two_parameters() {
    #[derive(SystemParam)]
    #[allow(
        dead_code,
        reason = "only declared: the system is refused before it runs"
    )]
    struct Aliasing<'w, 's> {
        read: Query<'w, 's, RefRO<Hp>>,
        write: Query<'w, 's, RefRW<Hp>>,
    }
    fn bad(_: Aliasing) {}
    let mut schedule = Schedule::new();
    let err = schedule.try_add_system(bad).map(|_| ()).unwrap_err();
    assert!(
        matches!(err, ScheduleError::ConflictingParams { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("Hp"), "{err}");

    // A field and another parameter of the function conflict as well.
    fn also_bad(_: Combat, _: Res<Score>) {}
    assert!(matches!(
        Schedule::new().try_add_system(also_bad).map(|_| ()),
        Err(ScheduleError::ConflictingParams { .. })
    ));
}

#[derive(SystemParam)]
struct Counter<'w, T: Default + Send + Sync + 'static> {
    value: ResMut<'w, T>,
}

#[derive(SystemParam)]
struct Nested<'w, 's> {
    combat: Combat<'w, 's>,
    ticks: Counter<'w, u64>,
}

#[test]
fn derived_params_nest_and_take_type_parameters() {
    fn both(mut nested: Nested) {
        *nested.ticks.value += 1;
        nested.combat.score.0 += 100;
    }
    let mut world = World::new();
    world.insert_resource(Score::default());
    world.insert_resource(0u64);
    world.run_system_once(both).unwrap();
    world.run_system_once(both).unwrap();
    assert_eq!(
        (*world.resource::<u64>(), world.resource::<Score>().0),
        (2, 200)
    );
}

#[test]
fn a_single_inside_a_derived_param_skips_the_system() {
    struct Player;
    #[derive(SystemParam)]
    struct Hero<'w> {
        hp: Single<'w, RefRW<Hp>, With<Player>>,
    }
    fn heal(mut hero: Hero) {
        hero.hp.0 += 1;
    }
    let mut world = World::new();
    let mut schedule = Schedule::new();
    schedule.add_system(heal);
    schedule.run(&mut world).unwrap();
    assert_eq!(schedule.timings().system("heal").unwrap().skipped, 1);
    let p = world.spawn((Player, Hp(1)));
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Hp>(p), Ok(&Hp(2)));
}

/// Systems whose derived params write the same data are ordered in insertion order, and the
/// world is the same on 1, 2 and 4 threads.
#[test]
fn derived_params_order_and_stay_deterministic_on_any_thread_count() {
    #[derive(SystemParam)]
    struct Mixer<'w, 's> {
        hp: Query<'w, 's, (Entity, RefRW<Hp>)>,
        score: Res<'w, Score>,
    }
    fn build(threads: usize) -> Vec<(u32, u32)> {
        let mut world = World::new();
        world.insert_resource(Score(3));
        world
            .spawn_batch((0..200u32).map(|i| (Hp(i), Enemy)))
            .for_each(drop);
        let mut schedule = Schedule::with_threads(threads);
        for k in 0..4u32 {
            schedule
                .add_system(move |mut m: Mixer| {
                    let s = m.score.0;
                    m.hp.for_each(|(e, h)| {
                        h.0 = h.0.wrapping_mul(5).wrapping_add(e.index() ^ k ^ s)
                    });
                })
                .named(format!("mix_{k}"));
            schedule.add_system(strike).named(format!("strike_{k}"));
        }
        for _ in 0..5 {
            schedule.run(&mut world).unwrap();
        }
        let mut out: Vec<(u32, u32)> = world
            .query::<(Entity, RefRO<Hp>)>()
            .iter()
            .map(|(e, h)| (e.index(), h.0))
            .collect();
        out.sort();
        out.push((u32::MAX, world.resource::<Score>().0));
        out
    }
    let one = build(1);
    assert_eq!(build(2), one);
    assert_eq!(build(4), one);
}
