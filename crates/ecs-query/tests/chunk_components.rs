//! Chunk components through queries: per-chunk writes, per-row reads, values that stay with
//! their chunk as rows move, and parallel runs that agree with sequential ones on any thread
//! count. (`par_` tests run under Tree Borrows in Miri: see `.ci/run`.)

use std::sync::Arc;

use ecs_core::{Entity, World};
use ecs_query::{ChunkRO, ChunkRW, Parallelism, QueryExt, QueryState, RefRO, RefRW};

#[derive(Default, Debug, Clone, Copy, PartialEq)]
struct Bounds {
    min: i64,
    max: i64,
    rows: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct X(i64);
struct Tag;

const N: i64 = if cfg!(miri) { 40 } else { 5000 };

fn build() -> World {
    let mut world = World::with_test_chunk_size(256);
    world.register_chunk_component::<Bounds>();
    world
        .spawn_batch((0..N).map(|i| (X((i * 7919) % 1000),)))
        .for_each(drop);
    world
        .spawn_batch((0..N / 3).map(|i| (X(i), Tag)))
        .for_each(drop);
    world
}

/// Writes each chunk's bounds, sequentially or on `pool`; returns `(entity, bounds)` per row.
fn bounds(world: &mut World, pool: Option<Arc<rayon::ThreadPool>>) -> Vec<(Entity, Bounds)> {
    let mut state = QueryState::<(ChunkRW<Bounds>, RefRO<X>)>::new(world);
    let run = |view: ecs_query::ChunkView<'_, (ChunkRW<Bounds>, RefRO<X>)>| {
        let mut view = view;
        let (mut b, xs) = view.columns();
        *b = Bounds {
            min: xs.iter().map(|x| x.0).min().unwrap(),
            max: xs.iter().map(|x| x.0).max().unwrap(),
            rows: xs.len(),
        };
    };
    match pool {
        None => state.for_each_chunk(world, run),
        Some(pool) => Parallelism::Pool(pool).scope(|| state.par_for_each_chunk(world, run)),
    }
    let mut rows: Vec<_> = world
        .query::<(Entity, ChunkRO<Bounds>)>()
        .iter()
        .map(|(e, b)| (e, *b))
        .collect();
    rows.sort_by_key(|r| r.0);
    rows
}

#[test]
fn par_bounds_agree_on_every_thread_count() {
    let mut world = build();
    let sequential = bounds(&mut world, None);
    assert_eq!(sequential.len() as i64, N + N / 3);
    // Every row's chunk bounds contain the row's value.
    for &(e, b) in &sequential {
        let x = world.get::<X>(e).unwrap().0;
        assert!(b.min <= x && x <= b.max, "{e:?}: {x} outside {b:?}");
        assert!(b.rows > 0);
    }
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4, 7] };
    for &n in threads {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap(),
        );
        let mut fresh = build();
        assert_eq!(bounds(&mut fresh, Some(pool)), sequential, "{n} threads");
    }
}

#[test]
fn culling_skips_whole_chunks_and_values_stay_with_chunks() {
    let mut world = build();
    bounds(&mut world, None);
    // A culling pass: only chunks whose bounds meet [0, 10] are looked at row by row.
    let mut looked = 0;
    let mut hits = 0;
    world
        .query::<(ChunkRO<Bounds>, RefRO<X>)>()
        .for_each_chunk(|view| {
            let b = view.chunk_value::<Bounds>();
            if b.max < 0 || b.min > 10 {
                return;
            }
            looked += view.len();
            hits += view
                .column::<X>()
                .iter()
                .filter(|x| (0..=10).contains(&x.0))
                .count();
        });
    let want = world
        .query::<RefRO<X>>()
        .iter()
        .filter(|x| (0..=10).contains(&x.0))
        .count();
    assert_eq!(hits, want);
    assert!(
        looked < world.len() as usize || cfg!(miri),
        "some chunks were culled"
    );

    // A row moving to another archetype leaves its old chunk's value behind.
    let (e, b) = world
        .query::<(Entity, ChunkRO<Bounds>)>()
        .iter()
        .map(|(e, b)| (e, *b))
        .next()
        .unwrap();
    assert_eq!(world.chunk_component::<Bounds>(e), Ok(&b));
    world.insert_one(e, 1u8).unwrap();
    assert_eq!(world.chunk_component::<Bounds>(e), Ok(&Bounds::default()));
    // Row writes do not touch chunk values, nor chunk writes rows.
    world.query::<RefRW<X>>().for_each(|x| x.0 += 1);
    world.query::<ChunkRW<Bounds>>().for_each_chunk(|mut v| {
        v.chunk_value_mut::<Bounds>().rows += 1000;
    });
    assert!(world
        .query::<ChunkRO<Bounds>>()
        .iter()
        .all(|b| b.rows >= 1000));
    world.check_invariants();
}
