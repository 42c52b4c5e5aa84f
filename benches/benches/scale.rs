//! How per-entity cost grows with the world (issue 20): at 10⁴, 10⁵, 10⁶ and 10⁷
//! `(Position, Velocity)` entities,
//!
//! - `for_each/N`: `pos += vel` through a kept `QueryState`, beside `raw_for_each/N`, the same
//!   loop over two plain `Vec`s of N (10⁶ fits this machine's L3 cache, 10⁷ does not, so
//!   compare each scale with its own raw loop); `for_each_streaming/N`, the same with the
//!   streaming chunk loop forced (`Iteration::Streaming`), and `chunk_slices/N`, the loop over
//!   each chunk's column slices (`for_each_chunk`);
//! - `spawn_batch/N`: a fresh world and `spawn_batch` of N rows, the world dropped inside the
//!   timing, beside `raw_push/N` (two `Vec`s filled the same way, dropped the same way);
//! - `despawn/N`: despawning every entity of a world of N, in spawn order (the world is built
//!   outside the timing).
//!
//! Throughput is per entity, so criterion reports entities per second at every scale.
//! Run with `cargo bench -p ecs-benches --bench scale` (10⁷ needs about 1 GiB).

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use ecs::prelude::*;
use ecs::query::Iteration;
use ecs_benches::{Position, Vec3, Velocity};

const SCALES: [usize; 4] = [10_000, 100_000, 1_000_000, 10_000_000];

fn pos_vel(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
    )
}

fn scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    for n in SCALES {
        group.throughput(Throughput::Elements(n as u64));

        let mut world = World::new();
        world.spawn_batch((0..n).map(pos_vel));
        let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(&mut world);
        group.bench_with_input(BenchmarkId::new("for_each", n), &n, |b, _| {
            b.iter(|| state.for_each(&mut world, |(p, v)| p.0 += v.0));
        });
        // The streaming loop forced (`Auto` runs the plain one; see `ecs_query::Iteration`).
        state.set_iteration(Iteration::Streaming);
        group.bench_with_input(BenchmarkId::new("for_each_streaming", n), &n, |b, _| {
            b.iter(|| state.for_each(&mut world, |(p, v)| p.0 += v.0));
        });
        group.bench_with_input(BenchmarkId::new("chunk_slices", n), &n, |b, _| {
            b.iter(|| {
                state.for_each_chunk(&mut world, |mut view| {
                    let (pos, vel) = view.columns();
                    for (p, v) in pos.iter_mut().zip(vel) {
                        p.0 += v.0;
                    }
                });
            });
        });
        drop((state, world));

        let (mut pos, vel): (Vec<Position>, Vec<Velocity>) = (0..n).map(pos_vel).unzip();
        group.bench_with_input(BenchmarkId::new("raw_for_each", n), &n, |b, _| {
            b.iter(|| {
                for (p, v) in black_box(&mut pos).iter_mut().zip(&vel) {
                    p.0 += v.0;
                }
            });
        });
        drop((pos, vel));

        group.bench_with_input(BenchmarkId::new("spawn_batch", n), &n, |b, &n| {
            b.iter(|| {
                let mut world = World::new();
                world.spawn_batch((0..n).map(pos_vel));
                drop(black_box(world));
            });
        });
        group.bench_with_input(BenchmarkId::new("raw_push", n), &n, |b, &n| {
            b.iter(|| {
                let (mut pos, mut vel) = (Vec::with_capacity(n), Vec::with_capacity(n));
                for (p, v) in (0..n).map(pos_vel) {
                    pos.push(p);
                    vel.push(v);
                }
                drop(black_box((pos, vel)));
            });
        });

        group.bench_with_input(BenchmarkId::new("despawn", n), &n, |b, &n| {
            b.iter_batched(
                || {
                    let mut world = World::new();
                    let ids: Vec<Entity> = world.spawn_batch((0..n).map(pos_vel)).collect();
                    (world, ids)
                },
                |(mut world, ids)| {
                    for e in ids {
                        world.despawn(e).unwrap();
                    }
                    world
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
