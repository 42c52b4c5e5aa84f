//! Query behaviour: matching, access elements, filters, chunk views, random access, aliasing.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{Entity, World};
use ecs_query::{Changed, Or, QueryError, QueryExt, QueryState, RefRO, RefRW, With, Without};

mod support;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Frozen;

fn world() -> (World, Vec<Entity>) {
    let mut world = World::with_test_chunk_size(512);
    let mut ids = Vec::new();
    for i in 0..100 {
        let p = Position {
            x: i as f32,
            y: 0.0,
        };
        let v = Velocity { x: 1.0, y: 2.0 };
        let e = match i % 4 {
            0 => world.spawn((p, v)),
            1 => world.spawn((p, v, Health(i))),
            2 => world.spawn((p, Health(i))),
            _ => world.spawn((p, v, Frozen)),
        };
        ids.push(e);
    }
    (world, ids)
}

#[test]
fn for_each_iter_and_chunks_visit_the_same_rows() {
    let (mut world, _) = world();
    let mut a = Vec::new();
    world
        .query::<(Entity, RefRO<Position>, RefRO<Velocity>)>()
        .for_each(|(e, p, _)| a.push((e, p.x)));
    let b: Vec<_> = world
        .query::<(Entity, &Position, &Velocity)>()
        .iter()
        .map(|(e, p, _)| (e, p.x))
        .collect();
    let mut c = Vec::new();
    world
        .query::<(Entity, RefRO<Position>, RefRO<Velocity>)>()
        .for_each_chunk(|mut chunk| {
            let n = chunk.len();
            let ents = chunk.entities();
            let (es, ps, vs) = chunk.columns();
            assert_eq!((es.len(), ps.len(), vs.len(), ents.len()), (n, n, n, n));
            assert_eq!(es, ents);
            c.extend(es.iter().zip(ps).map(|(e, p)| (*e, p.x)));
        });
    assert_eq!(a.len(), 75);
    assert_eq!(a, b);
    assert_eq!(a, c);
    let count = world.query::<(RefRO<Position>, RefRO<Velocity>)>().count();
    assert_eq!(count, 75);
    let iter = world.query::<(RefRO<Position>, RefRO<Velocity>)>().iter();
    assert_eq!(iter.len(), 75);
}

#[test]
fn writes_are_visible_and_filters_narrow() {
    let (mut world, ids) = world();
    world
        .query::<(RefRW<Position>, RefRO<Velocity>, Without<Frozen>)>()
        .for_each(|(p, v, ())| p.x += v.x);
    for (i, &e) in ids.iter().enumerate() {
        let moved = i % 4 == 0 || i % 4 == 1;
        let expect = i as f32 + if moved { 1.0 } else { 0.0 };
        assert_eq!(world.get::<Position>(e).unwrap().x, expect, "entity {i}");
    }
    assert_eq!(world.query::<(RefRO<Position>, With<Health>)>().count(), 50);
    assert_eq!(
        world
            .query::<(RefRO<Position>, Or<(With<Health>, With<Frozen>)>)>()
            .count(),
        75
    );
    let mut state =
        QueryState::<RefRO<Position>, (With<Velocity>, Without<Health>)>::new(&mut world);
    assert_eq!(state.iter(&world).count(), 50);
}

#[test]
fn optional_elements_match_everything() {
    let (mut world, ids) = world();
    let got: Vec<(Entity, Option<u32>)> = world
        .query::<(Entity, Option<RefRO<Health>>)>()
        .iter()
        .map(|(e, h)| (e, h.map(|h| h.0)))
        .collect();
    assert_eq!(got.len(), 100);
    for (e, h) in got {
        let i = ids.iter().position(|&x| x == e).unwrap() as u32;
        assert_eq!(h, (i % 4 == 1 || i % 4 == 2).then_some(i));
    }
    world.query::<Option<&mut Health>>().for_each(|h| {
        if let Some(h) = h {
            h.0 = 7;
        }
    });
    assert!(world.query::<&Health>().iter().all(|h| h.0 == 7));
}

#[test]
fn random_access_get() {
    let (mut world, ids) = world();
    let (p, v) = world
        .query::<(RefRO<Position>, RefRO<Velocity>)>()
        .get(ids[1])
        .unwrap();
    assert_eq!((p.x, v.y), (1.0, 2.0));
    let err = world
        .query::<(RefRO<Position>, RefRO<Velocity>)>()
        .get(ids[2])
        .unwrap_err();
    assert!(matches!(err, QueryError::NoMatch { entity, .. } if entity == ids[2]));
    world.despawn(ids[1]).unwrap();
    let err = world.query::<RefRO<Position>>().get(ids[1]).unwrap_err();
    assert_eq!(err, QueryError::NoSuchEntity(ids[1]));
    *world.query::<RefRW<Health>>().get(ids[2]).unwrap() = Health(99);
    assert_eq!(world.get::<Health>(ids[2]), Ok(&Health(99)));
}

#[test]
fn par_for_each_visits_every_row_once() {
    // Several chunks and tasks either way; Miri interprets every row, so it gets fewer.
    let rows: u32 = if cfg!(miri) { 2_000 } else { 10_000 };
    let mut world = World::new();
    world.spawn_batch((0..rows).map(|i| {
        (
            Position {
                x: i as f32,
                y: 0.0,
            },
            Health(0),
        )
    }));
    support::in_pool(|| {
        world
            .query::<(RefRO<Position>, RefRW<Health>)>()
            .par_for_each(|(p, h)| h.0 += 1 + p.x as u32);
    });
    let sum: u64 = world
        .query::<RefRO<Health>>()
        .iter()
        .map(|h| h.0 as u64)
        .sum();
    assert_eq!(sum, (0..u64::from(rows)).map(|i| i + 1).sum());
}

#[test]
fn chunk_view_single_columns() {
    let (mut world, _) = world();
    world
        .query::<(RefRW<Position>, RefRO<Velocity>)>()
        .for_each_chunk(|mut chunk| {
            let vx: Vec<f32> = chunk.column::<Velocity>().iter().map(|v| v.x).collect();
            for (p, vx) in chunk.column_mut::<Position>().iter_mut().zip(vx) {
                p.y += vx;
            }
        });
    assert!(world
        .query::<(&Position, With<Velocity>)>()
        .iter()
        .all(|(p, ())| p.y == 1.0));
    let err = catch_unwind(AssertUnwindSafe(|| {
        world
            .query::<(RefRW<Position>, RefRO<Velocity>)>()
            .for_each_chunk(|mut chunk| {
                chunk.column_mut::<Velocity>();
            });
    }))
    .unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains("does not write") && msg.contains("Velocity"),
        "{msg}"
    );
}

fn alias_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("aliasing query must panic");
    err.downcast_ref::<String>().cloned().unwrap_or_default()
}

#[test]
fn self_aliasing_queries_panic_naming_the_type() {
    let mut world = World::new();
    let cases = [
        alias_message(|| {
            world.query::<(RefRW<Health>, RefRO<Health>)>();
        }),
        alias_message(|| {
            world.query::<(&mut Health, Option<&Health>)>();
        }),
        alias_message(|| {
            world.query::<(RefRW<Health>, RefRW<Health>)>();
        }),
        alias_message(|| {
            world.query::<(RefRO<Health>, (Entity, RefRW<Health>))>();
        }),
    ];
    for msg in cases {
        assert!(msg.contains("Health"), "{msg}");
    }
    // Two reads are fine.
    world.query::<(RefRO<Health>, &Health)>().for_each(|_| {});
}

#[test]
fn changed_sees_a_write_in_the_next_run_only() {
    let mut world = World::new();
    let e = world.spawn((Health(1),));
    let other = world.spawn((Health(2), Frozen));
    let mut changed = QueryState::<(Entity, Changed<Health>)>::new(&mut world);
    let mut writer = QueryState::<(RefRW<Health>, Without<Frozen>)>::new(&mut world);
    let mut reader = QueryState::<RefRO<Health>>::new(&mut world);
    let seen = |state: &mut QueryState<(Entity, Changed<Health>)>, world: &World| {
        let mut v: Vec<Entity> = state.iter(world).map(|(e, ())| e).collect();
        v.sort();
        v
    };
    // Frame 0: a new state sees everything.
    assert_eq!(seen(&mut changed, &world), [e, other]);
    // Frame 1: nothing written since.
    assert_eq!(seen(&mut changed, &world), []);
    // Frame N: write through RefRW, then read through RefRO.
    writer.for_each(&mut world, |(h, ())| h.0 += 1);
    reader.iter(&world).for_each(drop);
    // Frame N+1: the write is seen; the other chunk (only read) is not.
    assert_eq!(seen(&mut changed, &world), [e]);
    // Frame N+2: not again.
    assert_eq!(seen(&mut changed, &world), []);
    // get_mut and overwriting inserts stamp too.
    world.get_mut::<Health>(other).unwrap().0 = 5;
    assert_eq!(seen(&mut changed, &world), [other]);
    world.insert_one(e, Health(9)).unwrap();
    assert_eq!(seen(&mut changed, &world), [e]);
    // A reader never marks a change.
    reader.iter(&world).for_each(drop);
    assert_eq!(seen(&mut changed, &world), []);
}

#[test]
fn new_archetypes_are_picked_up_by_a_cached_state() {
    let mut world = World::new();
    let mut state = QueryState::<RefRO<Health>>::new(&mut world);
    assert_eq!(state.iter(&world).count(), 0);
    world.spawn((Health(1),));
    world.spawn((Health(2), Frozen));
    assert_eq!(state.iter(&world).count(), 2);
    assert_eq!(state.matched_archetypes().len(), 2);
}

#[test]
fn state_refuses_another_world() {
    let mut a = World::new();
    let b = World::new();
    let mut state = QueryState::<RefRO<Health>>::new(&mut a);
    let msg = alias_message(|| {
        state.iter(&b).count();
    });
    assert!(msg.contains("not built for"), "{msg}");
}

#[test]
fn or_of_changed_filters_reads_only_the_columns_an_archetype_has() {
    let mut world = World::new();
    let health_only = world.spawn((Health(1),));
    let velocity_only = world.spawn((Velocity { x: 0.0, y: 0.0 },));
    let both = world.spawn((Health(2), Velocity { x: 1.0, y: 1.0 }));
    let mut state = QueryState::<Entity, Or<(Changed<Health>, Changed<Velocity>)>>::new(&mut world);
    let mut seen = |world: &World| {
        let mut v: Vec<Entity> = state.iter(world).collect();
        v.sort();
        v
    };
    let mut all = vec![health_only, velocity_only, both];
    all.sort();
    assert_eq!(seen(&world), all, "a new state sees every chunk as changed");
    assert!(seen(&world).is_empty());
    world.get_mut::<Velocity>(velocity_only).unwrap().x = 5.0;
    assert_eq!(seen(&world), [velocity_only]);
    world.get_mut::<Health>(both).unwrap().0 = 3;
    assert_eq!(seen(&world), [both]);
    assert!(seen(&world).is_empty());
}

#[test]
fn archetype_fetch_of_an_unmatched_archetype_panics_naming_the_type() {
    use ecs_query::WorldQuery;
    let mut world = World::new();
    let e = world.spawn((Health(1),));
    let state = world.register_component::<Position>(); // `RefRW<Position>`'s state
    let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    let msg = alias_message(|| {
        <RefRW<Position>>::archetype_fetch(&state, arch);
    });
    assert!(
        msg.contains("Position") && msg.contains("does not match"),
        "{msg}"
    );
    // Optional elements find nothing instead of panicking.
    assert!(<Option<RefRW<Position>>>::archetype_fetch(&state, arch).is_none());
}

#[test]
fn par_fold_matches_a_sequential_fold_bit_for_bit() {
    let rows: u32 = if cfg!(miri) { 600 } else { 50_000 };
    let mut world = World::with_test_chunk_size(1024);
    world
        .spawn_batch((0..rows).map(|i| (Health(i), Frozen)))
        .for_each(drop);
    let mut state = QueryState::<RefRO<Health>>::new(&mut world);
    let mut sum = |world: &mut World| {
        state.par_fold(
            world,
            || 0.0f32,
            |acc, h| acc + (h.0 as f32).sqrt(),
            |a, b| a + b,
        )
    };
    let pooled = support::in_pool(|| sum(&mut world));
    let alone = ecs_query::Parallelism::Sequential.scope(|| sum(&mut world));
    assert_eq!(pooled.to_bits(), alone.to_bits());
    // Chunks are folded from zero each, then added in chunk order: the same bits as a loop
    // that does exactly that.
    let mut by_chunk = Vec::new();
    world.query::<RefRO<Health>>().for_each_chunk(|view| {
        by_chunk.push(
            view.column::<Health>()
                .iter()
                .fold(0.0f32, |a, h| a + (h.0 as f32).sqrt()),
        )
    });
    let expected = by_chunk.into_iter().reduce(|a, b| a + b).unwrap();
    assert_eq!(pooled.to_bits(), expected.to_bits());
}

#[test]
fn par_for_each_init_and_par_for_each_chunk_visit_every_row_once() {
    let rows: u32 = if cfg!(miri) { 600 } else { 20_000 };
    let mut world = World::with_test_chunk_size(1024);
    world
        .spawn_batch((0..rows).map(|i| (Health(i),)))
        .for_each(drop);
    let mut state = QueryState::<RefRW<Health>>::new(&mut world);
    support::in_pool(|| {
        state.par_for_each_init(&mut world, || 2, |k: &mut u32, h| h.0 *= *k);
        state.par_for_each_chunk(&mut world, |mut view| {
            view.columns().iter_mut().for_each(|h| h.0 += 1)
        });
    });
    let mut seen: Vec<u32> = world.query::<RefRO<Health>>().iter().map(|h| h.0).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..rows).map(|i| i * 2 + 1).collect::<Vec<_>>());
}

#[test]
fn par_collect_returns_the_task_states_in_row_order() {
    let rows: u32 = if cfg!(miri) { 600 } else { 20_000 };
    let mut world = World::with_test_chunk_size(1024);
    world
        .spawn_batch((0..rows).map(|i| (Health(i),)))
        .for_each(drop);
    let order: Vec<Entity> = world.query::<Entity>().iter().collect();
    let mut state = QueryState::<(Entity, RefRW<Health>)>::new(&mut world);
    let tasks = support::in_pool(|| {
        state
            .run(&mut world)
            .par_for_each_collect(Vec::new, |seen: &mut Vec<Entity>, (e, h)| {
                h.0 += 1;
                seen.push(e);
            })
    });
    assert!(tasks.len() > 1, "several tasks");
    assert_eq!(tasks.concat(), order);
}

/// A run started once yields the same rows through every method, and a read-only view of it
/// counts what its iterator yields.
#[test]
fn a_query_run_agrees_across_its_methods_and_its_par_fold() {
    let mut world = World::with_test_chunk_size(1024);
    world
        .spawn_batch((0..500u32).map(|i| (Health(i),)))
        .for_each(drop);
    world
        .spawn_batch((0..70u32).map(|i| (Health(i), 'x')))
        .for_each(drop);
    let mut state = QueryState::<(Entity, RefRW<Health>), Without<char>>::new(&mut world);
    let mut run = state.run(&mut world);
    run.reborrow().for_each(|(_, h)| h.0 *= 2);
    let view = run.as_readonly();
    assert_eq!(view.count(), 500);
    assert_eq!(view.iter().count(), 500);
    let first = view.iter().next().map(|(e, _)| e).expect("rows");
    assert!(view.contains(first));
    let sum: u64 = view.iter().map(|(_, h)| u64::from(h.0)).sum();
    assert_eq!(sum, 2 * (0..500u64).sum::<u64>());
    let folded = run
        .reborrow()
        .par_fold(|| 0u64, |acc, (_, h)| acc + u64::from(h.0), |x, y| x + y);
    assert_eq!(folded, sum);
}
