//! Change detection (issue 13): what row marks cost writers, and what `Changed<T>` saves a
//! reader.
//!
//! - `marks_1m`: `pos += vel` over 1,000,000 entities through `for_each` and through
//!   `iter_mut`, in a world where no reader asks about `Position` (no row marks: the target
//!   is main's time) and in one where a `Changed<Position>` reader exists (row marks on).
//! - `changed_sparse_1m`: 1 % of 1,000,000 rows written through `get_mut`, then a reader that
//!   sums the written rows through `Changed<Position>`, beside the same reader with no filter
//!   (which visits every row).
//! - `par_masked_1m`: `par_for_each` over rows half disabled, with row marks on: the cost of
//!   marking the rows of masked tasks.
//!
//! Run with `cargo bench -p ecs-benches --bench changes`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::prelude::*;
use ecs::query::Parallelism;
use ecs_benches::{Position, Vec3, Velocity};

const MILLION: usize = 1_000_000;

fn pos_vel(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
    )
}

fn world() -> (World, Vec<Entity>) {
    let mut world = World::new();
    let ids = world.spawn_batch((0..MILLION).map(pos_vel)).collect();
    (world, ids)
}

fn marks_1m(c: &mut Criterion) {
    let mut group = c.benchmark_group("marks_1m");
    for reader in [false, true] {
        let (mut world, _) = world();
        // Building the reader's state is what switches row marks on for `Position`.
        let _reader =
            reader.then(|| QueryState::<RefRO<Position>, Changed<Position>>::new(&mut world));
        let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(&mut world);
        let suffix = if reader { "_reader" } else { "" };
        group.bench_function(format!("for_each{suffix}"), |b| {
            b.iter(|| state.for_each(&mut world, |(p, v)| p.0 += v.0));
        });
        group.bench_function(format!("iter_mut{suffix}"), |b| {
            b.iter(|| {
                for (p, v) in state.iter_mut(&mut world) {
                    p.0 += v.0;
                }
            });
        });
    }
    group.finish();
}

fn changed_sparse_1m(c: &mut Criterion) {
    let mut group = c.benchmark_group("changed_sparse_1m");
    let (mut world, ids) = world();
    // 1 % of the rows, spread over every chunk.
    let written: Vec<Entity> = ids.iter().copied().step_by(100).collect();
    let mut changed = QueryState::<RefRO<Position>, Changed<Position>>::new(&mut world);
    let mut all = QueryState::<RefRO<Position>>::new(&mut world);
    let write = |world: &mut World| {
        for &e in &written {
            world.get_mut::<Position>(e).unwrap().0.y += 1.0;
        }
    };
    // The writes happen between timed runs: only the reader is timed.
    let mut time_reader = |b: &mut criterion::Bencher, filtered: bool| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                write(&mut world);
                let start = Instant::now();
                let mut sum = 0.0f32;
                if filtered {
                    changed.for_each(&mut world, |p| sum += p.0.y);
                } else {
                    all.for_each(&mut world, |p| sum += p.0.y);
                }
                total += start.elapsed();
                black_box(sum);
            }
            total
        });
    };
    group.bench_function("changed", |b| time_reader(b, true));
    group.bench_function("unfiltered", |b| time_reader(b, false));
    group.finish();
}

/// `par_for_each` writing `Position` over 1,000,000 rows, an enableable `Position` half off
/// (in runs of 64 rows, and at random) and a `Changed<Position>` reader (row marks on): every
/// task carries its chunk's mask, so what it costs to mark the rows it hands out shows.
/// Sequential, so that the shared machine's other load does not decide the split.
fn par_masked_1m(c: &mut Criterion) {
    let mut group = c.benchmark_group("par_masked_1m");
    let random = |i: usize| {
        let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        x ^= x >> 33;
        x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        x ^= x >> 33;
        x & 1 == 0
    };
    let cases: [(&str, &dyn Fn(usize) -> bool); 2] = [
        ("half_off_runs64", &|i| (i / 64) % 2 == 1),
        ("half_off_random", &random),
    ];
    for (name, off) in cases {
        let mut world = World::new();
        world.register_enableable::<Position>();
        let ids: Vec<Entity> = world.spawn_batch((0..MILLION).map(pos_vel)).collect();
        let off: Vec<Entity> = ids
            .iter()
            .enumerate()
            .filter(|(i, _)| off(*i))
            .map(|(_, &e)| e)
            .collect();
        world.set_enabled_many::<Position>(&off, false).unwrap();
        let _reader = QueryState::<RefRO<Position>, Changed<Position>>::new(&mut world);
        let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(&mut world);
        group.bench_function(name, |b| {
            b.iter(|| {
                Parallelism::Sequential
                    .scope(|| state.par_for_each(&mut world, |(p, v)| p.0 += v.0));
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    targets = marks_1m, changed_sparse_1m, par_masked_1m
}
criterion_main!(benches);
