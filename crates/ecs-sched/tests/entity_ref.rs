//! `EntityRef` as a query element: every component of each row, read-only, declared as a read
//! of every component, so it conflicts with writers like any other read (and filters can prove
//! it disjoint from them).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ecs_core::{Entity, EntityRef, World};
use ecs_query::{Changed, QueryExt, QueryState, RefRO, RefRW, With, Without};
use ecs_sched::{Query, ResMut, Schedule, ScheduleError, Single};

#[derive(Debug, PartialEq)]
struct Hp(u32);
#[derive(Debug, PartialEq)]
struct Name(&'static str);
struct Unit;
struct Player;

fn world() -> World {
    let mut world = World::new();
    world.spawn((Unit, Hp(10), Name("a")));
    world.spawn((Unit, Hp(20)));
    world.spawn((Name("tree"),));
    world.spawn((Player, Hp(99), Name("me")));
    world
}

#[test]
fn items_read_every_component_of_their_row() {
    let mut world = world();
    let mut seen: Vec<(Option<u32>, Option<&str>, bool)> = world
        .query::<EntityRef>()
        .iter()
        .map(|e| {
            (
                e.get::<Hp>().map(|h| h.0),
                e.get::<Name>().map(|n| n.0),
                e.has::<Unit>(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            (None, Some("tree"), false),
            (Some(10), Some("a"), true),
            (Some(20), None, true),
            (Some(99), Some("me"), false),
        ]
    );
    // Filters narrow it; the view's id is the row's entity.
    let units: Vec<(Entity, Entity)> = world
        .query_filtered::<(Entity, EntityRef), With<Unit>>()
        .iter()
        .map(|(e, view)| (e, view.id()))
        .collect();
    assert_eq!(units.len(), 2);
    assert!(units.iter().all(|(e, id)| e == id));
    // Chunk slices and the count agree with the iterator.
    let mut rows = 0;
    world
        .query::<EntityRef>()
        .for_each_chunk(|mut view| rows += view.columns().iter().count());
    assert_eq!(rows, 4);
}

#[test]
#[should_panic(expected = "Hp")]
fn an_entity_ref_beside_a_writer_in_one_query_panics_naming_the_component() {
    let mut world = world();
    let _ = QueryState::<(EntityRef, RefRW<Hp>)>::new(&mut world);
}

#[test]
fn a_change_filter_passes_only_the_rows_written() {
    let mut world = world();
    let mut state = QueryState::<EntityRef, Changed<Hp>>::new(&mut world);
    assert_eq!(state.iter(&world).count(), 3, "everything is new at first");
    let target = world
        .query_filtered::<Entity, With<Player>>()
        .iter()
        .next()
        .unwrap();
    world.get_mut::<Hp>(target).unwrap().0 += 1;
    let changed: Vec<u32> = state
        .iter(&world)
        .map(|e| e.get::<Hp>().unwrap().0)
        .collect();
    assert_eq!(changed, [100]);
}

fn reads_everything(q: Query<EntityRef>) {
    assert!(q.iter().count() > 0);
}
fn reads_units(q: Query<EntityRef, With<Unit>>) {
    assert_eq!(q.iter().count(), 2);
}
fn heals_everyone(mut q: Query<RefRW<Hp>>) {
    q.for_each(|hp| hp.0 += 1);
}
fn heals_non_units(mut q: Query<RefRW<Hp>, Without<Unit>>) {
    q.for_each(|hp| hp.0 += 1);
}
fn reads_hp(q: Query<RefRO<Hp>>) {
    assert!(q.iter().count() > 0);
}

#[test]
fn systems_conflict_with_writers_unless_filters_separate_them() {
    let mut schedule = Schedule::new();
    schedule.add_system(reads_everything);
    schedule.add_system(heals_everyone);
    schedule.add_system(reads_hp);
    schedule.add_system(reads_units);
    schedule.add_system(heals_non_units);
    let dot = schedule.to_dot();
    let has_edge = |a: &str, b: &str| {
        dot.lines().any(|l| {
            l.contains("->") && l.contains(&format!("\"{a}\"")) && l.contains(&format!("\"{b}\""))
        })
    };
    // Reads every component: ordered against the writer of `Hp`...
    assert!(has_edge("reads_everything", "heals_everyone"), "{dot}");
    // ...but not against another reader.
    assert!(!has_edge("reads_everything", "reads_hp"), "{dot}");
    // `With<Unit>` against `Without<Unit>`: disjoint, no edge.
    assert!(!has_edge("reads_units", "heals_non_units"), "{dot}");
    assert!(has_edge("reads_everything", "heals_non_units"), "{dot}");
    let explain = schedule.explain();
    assert!(explain.contains("every component (EntityRef)"), "{explain}");
    let mut world = world();
    schedule.run(&mut world).unwrap();
}

#[test]
fn one_system_cannot_hold_an_entity_ref_and_a_writer_that_may_meet() {
    fn clash(_all: Query<EntityRef>, _w: Query<RefRW<Hp>>) {}
    fn separated(_units: Query<EntityRef, With<Unit>>, _w: Query<RefRW<Hp>, Without<Unit>>) {}
    let mut schedule = Schedule::single_threaded();
    match schedule.try_add_system(clash).err() {
        Some(ScheduleError::ConflictingParams { .. }) => {}
        other => panic!("expected ConflictingParams, got {other:?}"),
    }
    assert!(schedule.try_add_system(separated).is_ok());
}

/// Parallel systems reading through `EntityRef` while an unrelated resource is written, on a
/// pool: each sees the same values on any thread count, and `par_for_each` visits every row.
#[test]
fn parallel_readers_see_every_row_on_any_thread_count() {
    static VISITS: AtomicUsize = AtomicUsize::new(0);
    fn sum(q: Query<EntityRef>, mut total: ResMut<u64>) {
        *total += q
            .iter()
            .filter_map(|e| e.get::<Hp>().map(|h| h.0 as u64))
            .sum::<u64>();
    }
    fn visit(mut q: Query<EntityRef>) {
        q.par_for_each(|e| {
            assert!(e.location().row < 10_000);
            VISITS.fetch_add(1, Ordering::Relaxed);
        });
    }
    fn player(me: Single<EntityRef, With<Player>>, mut seen: ResMut<u32>) {
        *seen = me.get::<Hp>().unwrap().0;
    }
    let n = if cfg!(miri) { 40 } else { 2000 };
    let run = |threads: usize| {
        VISITS.store(0, Ordering::Relaxed);
        let mut world = world();
        world
            .spawn_batch((0..n).map(|i| (Unit, Hp(i))))
            .for_each(drop);
        world.insert_resource(0u64);
        world.insert_resource(0u32);
        let mut schedule = Schedule::with_threads(threads);
        schedule.set_inline_threshold(Duration::ZERO);
        schedule.add_system(sum);
        schedule.add_system(visit);
        schedule.add_system(player);
        schedule.run(&mut world).unwrap();
        (
            *world.resource::<u64>(),
            *world.resource::<u32>(),
            VISITS.load(Ordering::Relaxed),
        )
    };
    let one = run(1);
    assert_eq!(one.0, 10 + 20 + 99 + (0..n as u64).sum::<u64>());
    assert_eq!(one.1, 99);
    assert_eq!(one.2, 4 + n as usize);
    assert_eq!(run(2), one);
}
