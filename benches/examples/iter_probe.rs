//! Quick A/B probe for large-world iteration: median of many runs of `for_each` beside the
//! plain-`Vec` loop, interleaved, for profiling with `perf stat`/`perf record`.
//! `cargo run --release -p ecs-benches --example iter_probe -- [ours|raw|both|slices] [entities] [plain|streaming|auto] [chunk bytes]`
//! (`slices`: `for_each_chunk` over the column slices instead of `for_each`)
//! (the third argument forces `for_each`'s chunk loop, `ecs_query::Iteration`; default `auto`;
//! the fourth sets the world's chunk size, default 16 KiB).

use std::hint::black_box;
use std::time::Instant;

use ecs::prelude::*;
use ecs::query::Iteration;
use ecs_benches::{Position, Vec3, Velocity};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "both".into());
    let n: usize = std::env::args()
        .nth(2)
        .map_or(1_000_000, |a| a.parse().expect("entities: a number"));
    let row = |i: usize| {
        (
            Position(Vec3::new(i as f32, 0.0, 0.0)),
            Velocity(Vec3::UNIT_X),
        )
    };
    let chunk: usize = std::env::args()
        .nth(4)
        .map_or(16 * 1024, |a| a.parse().expect("chunk bytes: a number"));
    let mut world = World::with_chunk_size(chunk).expect("a chunk size from 4 KiB to 1 MiB");
    world.spawn_batch((0..n).map(row));
    let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(&mut world);
    match std::env::args().nth(3).as_deref() {
        Some("plain") => state.set_iteration(Iteration::Plain),
        Some("streaming") => state.set_iteration(Iteration::Streaming),
        Some("auto") | None => {}
        Some(other) => panic!("loop: plain, streaming or auto, not {other}"),
    }
    let (mut pos, vel): (Vec<Position>, Vec<Velocity>) = (0..n).map(row).unzip();
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..400 {
        if which == "slices" {
            let t = Instant::now();
            state.for_each_chunk(&mut world, |mut view| {
                let (p, v) = view.columns();
                for (p, v) in p.iter_mut().zip(v) {
                    p.0 += v.0;
                }
            });
            ours.push(t.elapsed().as_secs_f64() * 1e6);
        } else if which != "raw" {
            let t = Instant::now();
            state.for_each(&mut world, |(p, v)| p.0 += v.0);
            ours.push(t.elapsed().as_secs_f64() * 1e6);
        }
        if which != "ours" && which != "slices" {
            let t = Instant::now();
            for (p, v) in black_box(&mut pos).iter_mut().zip(&vel) {
                p.0 += v.0;
            }
            raw.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    if which != "raw" {
        println!("ours {:.1} us", median(ours.clone()));
    }
    if which != "ours" && which != "slices" {
        println!("raw  {:.1} us", median(raw.clone()));
    }
    if which == "both" {
        println!("ratio {:.3}", median(ours) / median(raw));
    }
}
