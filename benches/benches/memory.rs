//! Bytes a world of 1,000,000 and of 10,000,000 (Position, Velocity) entities allocates,
//! against the raw columns.
//!
//! A counting global allocator records live bytes before and after the world is built. The
//! target (issue 5): at most `1.15 × raw columns + 16 B per entity`, where the raw columns are
//! two exactly-sized `Vec`s (24 B per entity).
//!
//! Run with `cargo bench -p ecs-benches --bench memory`; it prints a small table and the layout.

use ecs::prelude::*;
use ecs_benches::{CountingAlloc, Position, Vec3, Velocity};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

/// The world sizes measured (issue 5 asked for 10⁶, issue 20 for 10⁷).
const SCALES: [usize; 2] = [1_000_000, 10_000_000];

fn row(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
    )
}

/// Live bytes, and peak bytes above the start, that `build` leaves allocated in the value it
/// returns; the value is dropped afterwards.
fn measure<T>(build: impl FnOnce() -> T) -> (usize, usize, usize) {
    // A dropped world's empty chunk blocks wait in a process cache for the next world; empty
    // it, so each world pays for (and is charged with) its own blocks.
    World::new().chunk_pool().release_empty();
    let before = ALLOC.live();
    let calls = ALLOC.calls();
    ALLOC.reset_peak();
    let value = build();
    let live = ALLOC.live() - before;
    let peak = ALLOC.peak() - before;
    let calls = ALLOC.calls() - calls;
    drop(value);
    (live, peak, calls)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument that excludes us skips the run.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"memory".contains(a.as_str()))
    {
        return;
    }
    for entities in SCALES {
        report(entities);
    }
    let mut world = World::new();
    world.spawn_batch((0..SCALES[0]).map(row));
    println!("{}", world.memory_report());
}

/// Measures and prints one scale.
fn report(entities: usize) {
    let (raw, raw_peak, raw_calls) = measure(|| {
        let (p, v): (Vec<Position>, Vec<Velocity>) = (0..entities).map(row).unzip();
        (p.into_boxed_slice(), v.into_boxed_slice())
    });
    let (spawned, spawned_peak, spawned_calls) = measure(|| {
        let mut world = World::new();
        world.spawn_batch((0..entities).map(row));
        world
    });
    let (one_by_one, one_peak, one_calls) = measure(|| {
        let mut world = World::new();
        for i in 0..entities {
            world.spawn(row(i));
        }
        world
    });
    let budget = raw as f64 * 1.15 + 16.0 * entities as f64;
    let mb = |b: usize| b as f64 / 1e6;
    println!("memory of {entities} (Position, Velocity) entities");
    println!(
        "{:<26} {:>10} {:>10} {:>8} {:>10} {:>8}",
        "storage", "live MB", "peak MB", "B/entity", "vs raw", "allocs"
    );
    for (name, live, peak, calls) in [
        ("raw Vec columns", raw, raw_peak, raw_calls),
        ("World::spawn_batch", spawned, spawned_peak, spawned_calls),
        ("World::spawn (one by one)", one_by_one, one_peak, one_calls),
    ] {
        println!(
            "{name:<26} {:>10.2} {:>10.2} {:>8.2} {:>9.3}x {:>8}",
            mb(live),
            mb(peak),
            live as f64 / entities as f64,
            live as f64 / raw as f64,
            calls
        );
    }
    println!(
        "target: <= 1.15 x raw + 16 B/entity = {:.2} MB; spawn_batch world {:.2} MB: {}",
        budget / 1e6,
        mb(spawned),
        if (spawned as f64) <= budget {
            "met"
        } else {
            "MISSED"
        }
    );
}
