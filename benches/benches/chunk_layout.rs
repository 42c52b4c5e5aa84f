//! What the chunk size costs or buys: the same iteration and add/remove workloads across chunk
//! sizes (4 to 64 KiB, `World::with_chunk_size`) and component widths (4 to 256 B).
//!
//! Each configuration prints its world's `memory_report()` table (rows per chunk, fill, unused bytes)
//! to stderr before it is timed, so the timings can be read beside the capacity they got.
//!
//! Run with `cargo bench -p ecs-benches --bench chunk_layout`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ecs::prelude::*;
use ecs_benches::{Delta, Value, B};

const CHUNK_KIB: [usize; 5] = [4, 8, 16, 32, 64];
const ITER_ENTITIES: usize = 100_000;
const MOVE_ENTITIES: usize = 10_000;

fn world(kib: usize) -> World {
    World::with_chunk_size(kib * 1024).expect("a power of two from 4 KiB to 1 MiB")
}

fn report(what: &str, world: &World) {
    eprintln!("\n--- {what}\n{}", world.memory_report());
}

/// `value += delta` (every lane) over 100,000 entities of (Value<L>, Delta<L>), `4 × L` bytes each.
fn iter_width<const L: usize>(c: &mut Criterion) {
    let bytes = 4 * L;
    let mut group = c.benchmark_group(format!("chunk_layout_iter/{bytes}B"));
    group.throughput(Throughput::Elements(ITER_ENTITIES as u64));
    for kib in CHUNK_KIB {
        let mut world = world(kib);
        world.spawn_batch(
            (0..ITER_ENTITIES).map(|_| (Value::<L>::default(), Delta::<L>::default())),
        );
        report(
            &format!("chunk_layout_iter: {bytes} B components, {kib} KiB chunks"),
            &world,
        );
        let mut state = QueryState::<(RefRW<Value<L>>, RefRO<Delta<L>>)>::new(&mut world);
        group.bench_function(BenchmarkId::from_parameter(format!("{kib}KiB")), |b| {
            b.iter(|| {
                state.for_each(&mut world, |(v, d)| {
                    for (v, d) in v.0.iter_mut().zip(&d.0) {
                        *v += *d;
                    }
                });
            });
        });
    }
    group.finish();
}

/// 10,000 entities of (Value<L>, Delta<L>): add `B` to each, then remove it (two row moves of
/// `8 × L + 8` bytes per entity).
fn add_remove_width<const L: usize>(c: &mut Criterion) {
    let bytes = 4 * L;
    let mut group = c.benchmark_group(format!("chunk_layout_add_remove/{bytes}B"));
    group.throughput(Throughput::Elements(MOVE_ENTITIES as u64));
    for kib in CHUNK_KIB {
        let mut world = world(kib);
        let entities: Vec<Entity> = world
            .spawn_batch((0..MOVE_ENTITIES).map(|_| (Value::<L>::default(), Delta::<L>::default())))
            .collect();
        for &e in &entities {
            world.insert_one(e, B(0.0)).expect("alive");
        }
        report(
            &format!("chunk_layout_add_remove: {bytes} B components, {kib} KiB chunks, with B"),
            &world,
        );
        for &e in &entities {
            world.remove::<(B,)>(e).expect("has B");
        }
        group.bench_function(BenchmarkId::from_parameter(format!("{kib}KiB")), |b| {
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
    group.finish();
}

fn iteration(c: &mut Criterion) {
    iter_width::<1>(c);
    iter_width::<4>(c);
    iter_width::<16>(c);
    iter_width::<64>(c);
}

fn add_remove(c: &mut Criterion) {
    add_remove_width::<1>(c);
    add_remove_width::<4>(c);
    add_remove_width::<16>(c);
    add_remove_width::<64>(c);
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = chunk_layout;
    config = config();
    targets = iteration, add_remove
}
criterion_main!(chunk_layout);
