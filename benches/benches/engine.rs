//! Workloads this engine is built for, each beside the hand-written loop it should approach:
//! iteration over 10,000 and 1,000,000 entities and over a world fragmented into 64 archetypes,
//! batch spawning of 1,000,000, add/remove on entities with many columns, and iteration over
//! 500 archetypes.
//!
//! Run with `cargo bench -p ecs-benches --bench engine`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ecs::prelude::*;
use ecs_benches::{
    add_assign_flat, as_f32s, as_f32s_mut, wide_bundle, Data, Position, Rotation, Tag, Vec3,
    Velocity, B,
};

const MILLION: usize = 1_000_000;

fn pos_vel(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
    )
}

/// `pos += vel` over 1,000,000 (Position, Velocity) entities: per entity (`for_each`), per chunk
/// with a flat loop (`for_each_chunk`), and the same two loops over plain `Vec`s.
fn iter_1m(c: &mut Criterion) {
    let mut world = World::new();
    world.spawn_batch((0..MILLION).map(pos_vel));
    iter_pos_vel(c, "iter_1m", world, MILLION);
}

/// The same at 10,000 entities, where everything fits in cache.
fn iter_10k(c: &mut Criterion) {
    let mut world = World::new();
    world.spawn_batch((0..10_000).map(pos_vel));
    iter_pos_vel(c, "iter_10k", world, 10_000);
}

/// The same over 100,000 entities split evenly across 64 archetypes (each also carries a
/// different subset of six tags): what a fragmented world costs per archetype and per partly
/// filled chunk, beside the plain loops over 100,000 rows.
fn iter_frag(c: &mut Criterion) {
    const N: usize = 100_000;
    const ARCHETYPES: usize = 64;
    let mut world = World::new();
    for subset in 0..ARCHETYPES {
        let rows = subset * N / ARCHETYPES..(subset + 1) * N / ARCHETYPES;
        let ids: Vec<Entity> = world.spawn_batch(rows.map(pos_vel)).collect();
        for e in ids {
            add_tags(&mut world, e, subset);
        }
    }
    let populated = world
        .memory_report()
        .archetypes
        .iter()
        .filter(|a| a.entities > 0)
        .count();
    assert_eq!(populated, ARCHETYPES);
    iter_pos_vel(c, "iter_frag", world, N);
}

fn iter_pos_vel(c: &mut Criterion, name: &str, mut world: World, n: usize) {
    let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(&mut world);
    let (mut pos, vel): (Vec<Position>, Vec<Velocity>) = (0..n).map(pos_vel).unzip();

    let mut group = c.benchmark_group(name);
    group.bench_function("for_each", |b| {
        b.iter(|| state.for_each(&mut world, |(p, v)| p.0 += v.0));
    });
    group.bench_function("for_each_chunk_flat", |b| {
        b.iter(|| {
            state.for_each_chunk(&mut world, |mut view| {
                let (p, v) = view.columns();
                add_assign_flat(as_f32s_mut(p), as_f32s(v));
            });
        });
    });
    group.bench_function("raw_vecs", |b| {
        b.iter(|| {
            for (p, v) in black_box(&mut pos).iter_mut().zip(&vel) {
                p.0 += v.0;
            }
        });
    });
    group.bench_function("raw_flat", |b| {
        b.iter(|| add_assign_flat(as_f32s_mut(black_box(&mut pos)), as_f32s(&vel)));
    });
    group.finish();
}

fn spawn_row(i: usize) -> (Position, Velocity, Rotation) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
        Rotation(Vec3::UNIT_X),
    )
}

/// 1,000,000 entities with three components into a fresh world through `spawn_batch`, beside
/// per-row pushes into three `Vec`s and `vec!` fills. Worlds are dropped outside the timing,
/// except in `spawn_batch_drop` (what a program pays over a world's life: spawning, then
/// handing the chunk memory back).
fn spawn_batch_1m(c: &mut Criterion) {
    let mut group = c.benchmark_group("spawn_batch_1m");
    group.bench_function("spawn_batch", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                world.spawn_batch((0..MILLION).map(spawn_row));
                world
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("spawn_batch_drop", |b| {
        b.iter(|| {
            let mut world = World::new();
            world.spawn_batch((0..MILLION).map(spawn_row));
            drop(black_box(world));
        });
    });
    group.bench_function("raw_vec_push", |b| {
        b.iter_batched(
            || (),
            |()| {
                let mut columns = (
                    Vec::with_capacity(MILLION),
                    Vec::with_capacity(MILLION),
                    Vec::with_capacity(MILLION),
                );
                for (p, v, r) in (0..MILLION).map(spawn_row) {
                    columns.0.push(p);
                    columns.1.push(v);
                    columns.2.push(r);
                }
                columns
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("raw_vec_fill", |b| {
        b.iter_batched(
            || (),
            |()| {
                (
                    vec![Position(Vec3::UNIT_X); MILLION],
                    vec![Velocity(Vec3::UNIT_X); MILLION],
                    vec![Rotation(Vec3::UNIT_X); MILLION],
                )
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// 10,000 entities with `A` and ten 16 B components: add `B` to each, then remove it.
fn add_remove_wide(c: &mut Criterion) {
    let mut world = World::new();
    let entities: Vec<Entity> = world
        .spawn_batch((0..10_000).map(|_| wide_bundle()))
        .collect();
    c.bench_function("add_remove_wide", |b| {
        b.iter(|| {
            for &e in &entities {
                world.insert_one(e, B(0.0)).expect("alive");
            }
            for &e in &entities {
                black_box(world.remove::<(B,)>(e).expect("has B"));
            }
        });
    });
}

/// Gives `e` the tag `Tag<i>` for every bit `i` (of nine) set in `subset`.
fn add_tags(world: &mut World, e: Entity, subset: usize) {
    tag::<0>(world, e, subset);
    tag::<1>(world, e, subset);
    tag::<2>(world, e, subset);
    tag::<3>(world, e, subset);
    tag::<4>(world, e, subset);
    tag::<5>(world, e, subset);
    tag::<6>(world, e, subset);
    tag::<7>(world, e, subset);
    tag::<8>(world, e, subset);
}

fn tag<const N: usize>(world: &mut World, e: Entity, subset: usize) {
    if subset & (1 << N) != 0 {
        world.insert_one(e, Tag::<N>(0.0)).expect("alive");
    }
}

/// Builds 500 archetypes of 20 entities: `Data` plus the subset `k` of nine tags, `k < 500`.
fn frag_many_world() -> World {
    let mut world = World::new();
    for subset in 0..500 {
        let ids: Vec<Entity> = world.spawn_batch((0..20).map(|_| (Data(1.0),))).collect();
        for e in ids {
            add_tags(&mut world, e, subset);
        }
    }
    world
}

/// `data *= 2` over 500 archetypes of 20 entities each.
fn frag_iter_many(c: &mut Criterion) {
    let mut world = frag_many_world();
    assert_eq!(world.memory_report().archetypes.len(), 500);
    let mut state = QueryState::<RefRW<Data>>::new(&mut world);
    c.bench_function("frag_iter_many", |b| {
        b.iter(|| state.for_each(&mut world, |d| d.0 *= 2.0));
    });
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(15)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = engine;
    config = config();
    targets = iter_10k, iter_1m, iter_frag, spawn_batch_1m, add_remove_wide, frag_iter_many
}
criterion_main!(engine);
