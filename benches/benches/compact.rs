//! `World::compact` (issue 18): a world that lost half its entities, before and after.
//!
//! Two worlds of 1,000,000 `(Position, Velocity)` rows:
//! - `random_half`: one archetype, a random 50 % despawned (the workload). Despawn
//!   keeps archetypes dense and frees chunks from the end, so little is left to compact.
//! - `interleaved`: the rows split over two archetypes (a `Tag<0>` on every other batch of
//!   512) whose chunks were carved in turns; every tagged row and a random half of the rest
//!   are despawned, so each surviving chunk shares a block with freed slots, and compaction
//!   moves chunks to free whole blocks.
//!
//! Criterion measures `iter_1m` (`pos += vel` over the survivors) before and after
//! compaction. Compaction itself is destructive (a second run has nothing to do) and a world
//! takes far longer to build than to compact, so it is timed once per world and printed with
//! its report rather than sampled by criterion.
//!
//! Run with `cargo bench -p ecs-benches --bench compact`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::prelude::*;
use ecs_benches::{Position, Tag, Vec3, Velocity};

const MILLION: usize = 1_000_000;

/// A fixed-seed hash: true for about half of all `i`.
fn coin(i: usize) -> bool {
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x & 1 == 0
}

fn pv(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
    )
}

fn random_half() -> World {
    let mut world = World::new();
    let ids: Vec<Entity> = world.spawn_batch((0..MILLION).map(pv)).collect();
    for (i, e) in ids.into_iter().enumerate() {
        if coin(i) {
            world.despawn(e).unwrap();
        }
    }
    world
}

fn interleaved() -> World {
    let mut world = World::new();
    let mut doomed = Vec::new();
    let mut kept = Vec::new();
    for batch in 0..MILLION / 512 {
        let range = batch * 512..(batch + 1) * 512;
        if batch % 2 == 0 {
            kept.extend(world.spawn_batch(range.map(pv)));
        } else {
            doomed.extend(world.spawn_batch(range.map(|i| (pv(i).0, pv(i).1, Tag::<0>(0.0)))));
        }
    }
    doomed.extend(
        kept.into_iter()
            .enumerate()
            .filter(|&(i, _)| coin(i))
            .map(|(_, e)| e),
    );
    for e in doomed {
        world.despawn(e).unwrap();
    }
    world
}

fn compact(c: &mut Criterion) {
    let mut group = c.benchmark_group("compact");
    for (name, build) in [
        ("random_half", random_half as fn() -> World),
        ("interleaved", interleaved),
    ] {
        let mut before = build();
        let mut after = build();
        let start = Instant::now();
        let report = after.compact();
        let took = start.elapsed();
        println!("compact/{name}: {took:?}, {report:?}");
        for (when, world) in [("before", &mut before), ("after", &mut after)] {
            let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(world);
            group.bench_function(format!("{name}/iter_1m_{when}"), |b| {
                b.iter(|| state.for_each(world, |(p, v)| p.0 += v.0));
            });
        }
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = compact
}
criterion_main!(benches);
