//! Bytes each engine allocates for 1,000,000 (Position, Velocity) entities, counted by a global
//! allocator, against the two raw columns (24 B per entity). Issue 5's target for this engine:
//! at most 1.15 × raw + 16 B per entity.
//!
//! `cargo run --release --bin memory`; prints a table and writes `results/memory.md`.

use std::fmt::Write as _;

use ecs_compare::components::{pos_vel, Position, Velocity};
use ecs_compare::MILLION;

#[path = "../../../src/alloc.rs"]
mod alloc;

#[global_allocator]
static ALLOC: alloc::CountingAlloc = alloc::CountingAlloc::new();

/// Live bytes left by `build` (in the value it returns), peak bytes while building, and
/// allocation calls. The value is dropped afterwards.
fn measure<T>(build: impl FnOnce() -> T) -> (usize, usize, usize) {
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
    let results = [
        (
            "raw Vec columns",
            measure(|| {
                let (p, v): (Vec<Position>, Vec<Velocity>) = (0..MILLION).map(pos_vel).unzip();
                (p.into_boxed_slice(), v.into_boxed_slice())
            }),
        ),
        (
            "ours (spawn_batch)",
            measure(|| {
                let mut world = ecs::prelude::World::new();
                world.spawn_batch((0..MILLION).map(pos_vel));
                world
            }),
        ),
        (
            "hecs (spawn_batch)",
            measure(|| {
                let mut world = hecs::World::new();
                world.spawn_batch((0..MILLION).map(pos_vel));
                world
            }),
        ),
        (
            "bevy_ecs (spawn_batch)",
            measure(|| {
                let mut world = bevy_ecs::world::World::new();
                world.spawn_batch((0..MILLION).map(pos_vel));
                world
            }),
        ),
        (
            "legion (extend)",
            measure(|| {
                let mut world = legion::World::default();
                world.extend((0..MILLION).map(pos_vel));
                world
            }),
        ),
    ];
    let raw = results[0].1 .0 as f64;
    let budget = 1.15 * raw + 16.0 * MILLION as f64;
    let mut md = String::from(
        "| storage | live MB | peak MB while building | B / entity | × raw columns | allocations |\n|---|---:|---:|---:|---:|---:|\n",
    );
    println!(
        "{:<24} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "storage", "live MB", "peak MB", "B/entity", "x raw", "allocs"
    );
    for (name, (live, peak, calls)) in &results {
        let (live_mb, peak_mb) = (*live as f64 / 1e6, *peak as f64 / 1e6);
        let per = *live as f64 / MILLION as f64;
        let ratio = *live as f64 / raw;
        println!("{name:<24} {live_mb:>9.2} {peak_mb:>9.2} {per:>9.2} {ratio:>7.3}x {calls:>8}");
        let _ = writeln!(
            md,
            "| {name} | {live_mb:.2} | {peak_mb:.2} | {per:.2} | {ratio:.3}× | {calls} |"
        );
    }
    let ours = results[1].1 .0 as f64;
    let verdict = format!(
        "target: ours <= 1.15 x raw + 16 B/entity = {:.2} MB; ours {:.2} MB: {}",
        budget / 1e6,
        ours / 1e6,
        if ours <= budget { "met" } else { "missed" }
    );
    println!("{verdict}");
    let _ = writeln!(md, "\n{verdict}");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/results");
    std::fs::create_dir_all(dir).expect("results directory");
    std::fs::write(format!("{dir}/memory.md"), md).expect("memory.md");
}
