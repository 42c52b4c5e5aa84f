//! Side-by-side measurement of this engine against hecs, bevy_ecs and legion, plus two raw
//! baselines (hand-written `Vec`s per component with the natural loop, and the same columns as
//! flat `f32` slices), on the ecs_bench_suite workloads and this engine's own.
//!
//! Everything runs in one process: for each workload every engine builds its world, is
//! calibrated to a batch of iterations lasting about 10 ms, and then the engines take turns
//! (round robin, a different one first each repetition) for a number of repetitions. The
//! reported figure is the median time per iteration.

#[path = "../../src/flat.rs"]
pub mod flat;
#[path = "../../src/math.rs"]
pub mod math;

pub mod components;
pub mod engines;
pub mod harness;
pub mod report;
pub mod sysinfo;
pub mod workloads;

/// Entities in `simple_insert`, `simple_iter`, `add_remove`, `add_remove_wide`.
pub const SUITE_N: usize = 10_000;
/// Entities in `heavy_compute`.
pub const HEAVY_N: usize = 1_000;
/// Entities per archetype in `frag_iter` and `frag_iter_many`.
pub const FRAG_PER_ARCH: usize = 20;
/// Archetypes in `frag_iter_many`.
pub const FRAG_MANY_ARCHS: usize = 500;
/// Entities per group in `schedule`.
pub const SCHEDULE_N: usize = 10_000;
/// Entities in `iter_1m` and `spawn_batch_1m`.
pub const MILLION: usize = 1_000_000;
