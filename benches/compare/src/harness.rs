//! Timing: calibrated batches, round-robin repetitions, medians.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// One engine's prepared workload: `run(iters)` performs `iters` iterations and returns the
/// time they took (setup and teardown excluded).
pub type Run = Box<dyn FnMut(u64) -> Duration>;

/// A workload whose iteration is the closure: times `iters` back-to-back calls.
pub fn repeat(mut f: impl FnMut() + 'static) -> Run {
    Box::new(move |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        start.elapsed()
    })
}

/// A workload that builds something: times each build, and drops the result outside the
/// timing (criterion's `iter_batched` convention), the same for every engine.
pub fn build_each<T: 'static>(mut f: impl FnMut() -> T + 'static) -> Run {
    Box::new(move |iters| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let start = Instant::now();
            let value = black_box(f());
            total += start.elapsed();
            drop(value);
        }
        total
    })
}

/// A workload that builds something and drops it, both inside the timing: what a program pays
/// over the value's life (for a world: its allocation, fill and release).
pub fn build_and_drop<T: 'static>(mut f: impl FnMut() -> T + 'static) -> Run {
    Box::new(move |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            drop(black_box(f()));
        }
        start.elapsed()
    })
}

/// [`build_and_drop`] for a workload whose name ends in `_drop`, else [`build_each`]: one
/// closure serves `spawn_batch_1m` and `spawn_batch_1m_drop`.
pub fn build<T: 'static>(workload: &str, f: impl FnMut() -> T + 'static) -> Run {
    if workload.ends_with("_drop") {
        build_and_drop(f)
    } else {
        build_each(f)
    }
}

/// How long and how often to measure.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Repetitions per engine.
    pub reps: usize,
    /// Wanted length of one timed batch.
    pub batch: Duration,
}

/// The measurements of one engine on one workload.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Iterations per batch.
    pub iters: u64,
    /// Seconds per iteration, one value per repetition, in run order.
    pub per_iter: Vec<f64>,
}

impl Measured {
    fn sorted(&self) -> Vec<f64> {
        let mut v = self.per_iter.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The `q` quantile (0 to 1) by nearest rank.
    pub fn quantile(&self, q: f64) -> f64 {
        let v = self.sorted();
        let i = ((v.len() - 1) as f64 * q).round() as usize;
        v[i]
    }

    /// The median seconds per iteration.
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }
}

/// Calibrates each run to `plan.batch`, then measures them round robin.
pub fn measure(runs: &mut [Run], plan: Plan) -> Vec<Measured> {
    let target = plan.batch.as_secs_f64();
    let iters: Vec<u64> = runs
        .iter_mut()
        .map(|run| {
            run(1); // first touch: page faults, lazy initialisation
            let mut n = 1u64;
            loop {
                let t = run(n).as_secs_f64();
                if t >= target / 4.0 || n >= 1 << 30 {
                    // The fastest of three estimates: a preempted run must not shrink the batch.
                    let per = (0..2).map(|_| run(n).as_secs_f64()).fold(t, f64::min) / n as f64;
                    let iters = ((target / per).round() as u64).max(1);
                    run(iters); // warm at the measured batch size
                    break iters;
                }
                n *= 4;
            }
        })
        .collect();
    let mut out: Vec<Measured> = iters
        .iter()
        .map(|&iters| Measured {
            iters,
            per_iter: Vec::with_capacity(plan.reps),
        })
        .collect();
    let n = runs.len();
    for rep in 0..plan.reps {
        for k in 0..n {
            let i = (rep + k) % n;
            let iters = out[i].iters;
            let t = runs[i](iters);
            out[i].per_iter.push(t.as_secs_f64() / iters as f64);
        }
    }
    out
}
