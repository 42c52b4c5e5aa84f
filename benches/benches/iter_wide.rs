//! `iter_wide_1m`: what a per-archetype chunk policy buys a wide archetype.
//!
//! 1,000,000 entities of 308-byte rows (the lab's `wide=3:276` mix: two hot `[f32; 3]`
//! columns, 276 cold bytes, the entity id), `for_each` doing `a += b` over the two hot columns.
//! The same world under the default (16 KiB for every archetype), fixed sizes up to the best
//! one the sweep found (1 MiB), and two per-archetype policies: `MinRows(2048)`, and a 16 KiB
//! world that sets 1 MiB for this one archetype with `set_chunk_size_for`. Target: each
//! per-archetype policy within 1.10× of the best fixed size.
//!
//! Run with `cargo bench -p ecs-benches --bench iter_wide`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ecs::core::ChunkPolicy;
use ecs::prelude::*;
use ecs_lab::{populate, Hot, Pad};

const N: usize = 1_000_000;

type Hot0 = Hot<0, 3>;
type Hot1 = Hot<1, 3>;
type Cold = Pad<276>;

/// The worlds compared: a name and how to make the (empty) world.
fn worlds() -> Vec<(&'static str, World)> {
    let fixed = |bytes| World::with_chunk_policy(ChunkPolicy::Fixed(bytes)).expect("valid size");
    let mut per_archetype = World::new();
    per_archetype
        .set_chunk_size_for::<(Hot0, Hot1, Cold)>(1 << 20)
        .expect("a valid size for a new archetype");
    vec![
        ("default_16KiB", World::new()),
        ("fixed_64KiB", fixed(64 << 10)),
        ("fixed_256KiB", fixed(256 << 10)),
        ("fixed_1MiB", fixed(1 << 20)),
        (
            "min_rows_2048",
            World::with_chunk_policy(ChunkPolicy::MinRows(2048)).expect("valid policy"),
        ),
        ("set_chunk_size_for_1MiB", per_archetype),
    ]
}

fn iter_wide_1m(c: &mut Criterion) {
    let mut group = c.benchmark_group("iter_wide_1m");
    group.throughput(Throughput::Elements(N as u64));
    // One world alive at a time: each holds about 310 MB.
    for (name, mut world) in worlds() {
        populate::<3, Cold>(&mut world, N);
        let layout = world.memory_report();
        let arch = &layout.archetypes[0];
        eprintln!(
            "{name}: {} B chunks, {} rows each",
            arch.chunk_size, arch.capacity
        );
        let mut state = QueryState::<(RefRW<Hot0>, RefRO<Hot1>)>::new(&mut world);
        group.bench_function(name, |b| {
            b.iter(|| {
                state.for_each(&mut world, |(a, b)| {
                    for (x, y) in a.0.iter_mut().zip(&b.0) {
                        *x += *y;
                    }
                });
            });
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = iter_wide;
    config = config();
    targets = iter_wide_1m
}
criterion_main!(iter_wide);
