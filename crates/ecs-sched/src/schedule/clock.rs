//! The executor's clock: one reading per system run, for the timings the schedule keeps.
//!
//! `Instant::now()` is a vDSO `clock_gettime`, and a schedule of trivial systems reads it once
//! per system, so in a schedule of many parameterless systems it is a large share of the run
//! (docs/performance.md, "Design measurements"). Where the kernel itself keeps time with the
//! CPU's time-stamp counter (Linux's `current_clocksource` is `tsc`, which it only picks for
//! an invariant counter synchronised across cores), a reading is one cheaper `rdtsc` instead,
//! and a difference of readings becomes a `Duration` by a multiply with the counter's rate,
//! measured once per process against `Instant` over [`CALIBRATION`]. Anywhere else (another
//! clock source, another architecture, Miri, loom) a reading is `Instant`'s, as before.
//!
//! Readings only ever feed timings (`Schedule::timings`, and the executor's choices of what
//! to run inline and how to batch short systems), never a result: a system's effects are the
//! same whichever clock timed it.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the one calibration per process watches both clocks: long enough that `Instant`'s
/// own cost (tens of nanoseconds) is a part in ten thousand of it.
const CALIBRATION: Duration = Duration::from_micros(500);

/// One reading of the clock (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reading(u64);

impl Reading {
    /// The time from `earlier` to this reading (zero if `earlier` is later).
    #[inline]
    pub(crate) fn since(self, earlier: Reading) -> Duration {
        let ticks = self.0.saturating_sub(earlier.0);
        match source() {
            Source::Counter {
                nanos_per_2_32_ticks,
            } => {
                let nanos = (u128::from(ticks) * u128::from(*nanos_per_2_32_ticks)) >> 32;
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            }
            Source::Instant(_) => Duration::from_nanos(ticks),
        }
    }
}

/// What readings count.
enum Source {
    /// Time-stamp counter ticks; a tick lasts `nanos_per_2_32_ticks / 2^32` nanoseconds.
    Counter { nanos_per_2_32_ticks: u64 },
    /// Nanoseconds since this instant.
    Instant(Instant),
}

/// The clock now.
#[inline]
pub(crate) fn now() -> Reading {
    match source() {
        Source::Counter { .. } => Reading(counter()),
        Source::Instant(origin) => {
            Reading(u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
        }
    }
}

/// The process's clock source, chosen (and the counter calibrated) on first use.
#[inline]
fn source() -> &'static Source {
    static SOURCE: OnceLock<Source> = OnceLock::new();
    SOURCE.get_or_init(|| match calibrate() {
        Some(nanos_per_2_32_ticks) => Source::Counter {
            nanos_per_2_32_ticks,
        },
        None => Source::Instant(Instant::now()),
    })
}

/// The counter's tick length in 2^-32 nanoseconds, if the counter is this process's clock.
fn calibrate() -> Option<u64> {
    if !kernel_times_with_tsc() {
        return None;
    }
    let (start, start_ticks) = paired()?;
    while start.elapsed() < CALIBRATION {
        std::hint::spin_loop();
    }
    let (end, end_ticks) = paired()?;
    let ticks = end_ticks.checked_sub(start_ticks).filter(|&t| t > 0)?;
    let nanos = end.duration_since(start).as_nanos();
    u64::try_from((nanos << 32) / u128::from(ticks)).ok()
}

/// An `Instant` and the counter at the same moment: the counter read just before and just
/// after the instant, averaged, retried while the two reads lie far apart (the thread was
/// preempted between them, which would skew the calibration by the time it was away).
fn paired() -> Option<(Instant, u64)> {
    // A pair of reads takes about a hundred ticks; a preemption takes millions.
    const TIGHT: u64 = 100_000;
    (0..16).find_map(|_| {
        let before = counter();
        let now = Instant::now();
        let took = counter().wrapping_sub(before);
        (took < TIGHT).then(|| (now, before + took / 2))
    })
}

/// Whether Linux keeps time with the time-stamp counter (see the module docs).
fn kernel_times_with_tsc() -> bool {
    cfg!(all(
        target_arch = "x86_64",
        target_os = "linux",
        not(miri),
        not(loom)
    )) && std::fs::read_to_string(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource",
    )
    .is_ok_and(|s| s.trim() == "tsc")
}

/// The time-stamp counter (0 where there is none; never read then).
#[inline(always)]
fn counter() -> u64 {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    // SAFETY: `rdtsc` only reads the counter, and x86-64 always has it.
    let ticks = unsafe { std::arch::x86_64::_rdtsc() };
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    let ticks = 0;
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri's clock is virtual (it counts interpreted steps), and `now` is `Instant` there"
    )]
    fn readings_measure_what_instant_measures() {
        let (a, start) = (now(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (b, took) = (now(), start.elapsed());
        let measured = b.since(a);
        // Within 5 % (and a scheduling hiccup between the two reads of each pair).
        let diff = measured.abs_diff(took);
        assert!(
            diff < took / 20 + Duration::from_micros(200),
            "{measured:?} vs {took:?}"
        );
        assert_eq!(a.since(b), Duration::ZERO, "never negative");
    }
}
