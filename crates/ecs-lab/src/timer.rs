//! Timing one pass: cold (the caches emptied of the measured data first) or warm (passes back
//! to back), as [`Passes`] says.
//!
//! Back-to-back passes measure the caches as much as the layout: a 16 KiB-chunk world of a
//! million 32-byte rows (24 MB of hot columns) is partly served from a 32 MiB L3 on the
//! second pass, a 4 KiB one (more chunks, more spread) less so, which inflated small-chunk
//! penalties. A cold pass first reads an eviction buffer of twice the largest cache the
//! machine reports ([`CacheSizes`]), so every pass starts from memory, whatever the chunk
//! size. The eviction is outside the timed interval.
//!
//! # Invariants
//! 1. The eviction buffer is written once, with non-zero bytes, when it is made: pages that
//!    were only ever read would all map the kernel's one zero page and evict nothing.

use std::hint::black_box;
use std::time::Instant;

use ecs_core::CacheSizes;

/// Where the measured data is when a timed pass starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Passes {
    /// The caches are emptied before each pass (the default): every pass reads from memory.
    #[default]
    Cold,
    /// Passes run back to back: the second finds what the first left in the caches.
    Warm,
}

impl Passes {
    /// The name in CSV, charts and the sweep's output.
    ///
    /// ```
    /// # use ecs_lab::Passes;
    /// assert_eq!((Passes::Cold.name(), Passes::Warm.name()), ("cold", "warm"));
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::Cold => "cold",
            Self::Warm => "warm",
        }
    }
}

/// Bytes of the eviction buffer where the machine reports no cache.
const UNKNOWN_CACHE: usize = 32 << 20;

/// The eviction buffer's bytes on this machine: twice its largest cache (or of 32 MiB where
/// none is reported), at least 4 MiB.
///
/// ```
/// # use ecs_core::CacheSizes;
/// let bytes = ecs_lab::eviction_bytes();
/// assert!(bytes >= 2 * CacheSizes::detect().largest().unwrap_or(2 << 20));
/// ```
pub fn eviction_bytes() -> usize {
    (2 * CacheSizes::detect().largest_or(UNKNOWN_CACHE)).max(4 << 20)
}

/// Times passes of the sweep's measures, cold or warm.
pub(crate) struct Timer {
    passes: Passes,
    /// The eviction buffer for cold passes (invariant 1); empty for warm ones.
    evict: Vec<u64>,
}

impl Timer {
    pub(crate) fn new(passes: Passes) -> Self {
        let evict = match passes {
            Passes::Cold => (1..=eviction_bytes() as u64 / 8).collect(),
            Passes::Warm => Vec::new(),
        };
        Self { passes, evict }
    }

    /// Nanoseconds per item of the fastest of `passes` runs of `f` over `items` items, each
    /// run cold or warm as the timer was made.
    pub(crate) fn time(&mut self, passes: usize, items: usize, mut f: impl FnMut()) -> f64 {
        (0..passes.max(1))
            .map(|_| {
                if self.passes == Passes::Cold {
                    self.evict();
                }
                let start = Instant::now();
                f();
                start.elapsed().as_nanos() as f64 / items.max(1) as f64
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Nanoseconds per item of the fastest of `passes` runs of `f`, which returns how many
    /// items it handled; and the last run's count.
    pub(crate) fn time_counted(
        &mut self,
        passes: usize,
        mut f: impl FnMut() -> usize,
    ) -> (f64, usize) {
        let mut items = 0;
        let ns = self.time(passes, 1, || items = f());
        (ns / items.max(1) as f64, items)
    }

    /// Reads one word of every cache line of the buffer, so the lines the last pass left in
    /// the caches give way to it.
    fn evict(&self) {
        let sum = self
            .evict
            .iter()
            .step_by(64 / size_of::<u64>())
            .fold(0u64, |acc, &w| acc.wrapping_add(w));
        black_box(sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_timers_hold_a_written_buffer_and_warm_ones_none() {
        let cold = Timer::new(Passes::Cold);
        assert_eq!(cold.evict.len() * 8, eviction_bytes() / 8 * 8);
        assert!(cold.evict.iter().all(|&w| w != 0));
        assert!(Timer::new(Passes::Warm).evict.is_empty());
    }

    #[test]
    fn every_pass_runs_and_the_fastest_counts() {
        for passes in [Passes::Cold, Passes::Warm] {
            let mut timer = Timer::new(passes);
            let mut runs = 0;
            let ns = timer.time(3, 10, || runs += 1);
            assert_eq!(runs, 3);
            assert!(ns.is_finite() && ns >= 0.0);
        }
    }
}
