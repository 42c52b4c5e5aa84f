//! Executor overhead: a schedule of 100 trivial systems (cost per system per run), and 10
//! systems gated by a false run condition beside the same 10 ungated.
//!
//! Run with `cargo bench -p ecs-benches --bench schedule`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::prelude::*;

fn trivial(mut runs: Local<u64>) {
    *runs = black_box(*runs + 1);
}

fn schedule_of(n: usize, threads: usize, gate: bool) -> Schedule {
    let mut schedule = Schedule::with_threads(threads);
    for i in 0..n {
        let config = schedule.add_system(trivial).named(format!("s{i}"));
        if gate {
            config.run_if(|| black_box(false));
        }
    }
    schedule
}

fn schedule_100_trivial(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule_100_trivial");
    for threads in [1, 2] {
        let mut world = World::new();
        let mut schedule = schedule_of(100, threads, false);
        schedule.run(&mut world).unwrap();
        group.bench_function(format!("{threads}_threads"), |b| {
            b.iter(|| schedule.run(&mut world).unwrap());
        });
    }
    group.finish();
}

fn schedule_10_gated(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule_10");
    for (name, gate) in [("ungated", false), ("gated_false", true)] {
        let mut world = World::new();
        let mut schedule = schedule_of(10, 1, gate);
        schedule.run(&mut world).unwrap();
        group.bench_function(name, |b| b.iter(|| schedule.run(&mut world).unwrap()));
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = schedule;
    config = config();
    targets = schedule_100_trivial, schedule_10_gated
}
criterion_main!(schedule);
