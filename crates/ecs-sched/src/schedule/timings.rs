//! Where a schedule's time goes: per system, cumulative over runs, beside command application
//! and the frame's wall time.
//!
//! Each system's time is measured on the worker that ran it (its run conditions included),
//! from that worker's previous clock reading (the end of the system it ran just before, or the
//! start of its task) to the system's end, so the executor's few steps between two systems
//! count towards the second. Systems of one segment run at the same time, so the sum of system
//! times may exceed the frame's wall time; [`Timings`] shows both so the overlap is visible.
//! Recording a sample costs one `Instant::now()` per system per run and no lock: the sample
//! lives with its system, which one worker holds at a time.

use std::fmt;
use std::time::Duration;

/// Cumulative statistics of one row (a system, command application, or the whole run).
///
/// # Invariants
/// 1. `min <= max` and `total >= max` once `runs > 0`; all are zero while `runs == 0`.
/// 2. `last_skipped` is true iff the latest sample was a skip (then `last` is the time its
///    run conditions took, which is not in `total`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sample {
    pub last: Duration,
    pub last_skipped: bool,
    pub runs: u64,
    pub skipped: u64,
    pub total: Duration,
    pub min: Duration,
    pub max: Duration,
}

impl Sample {
    /// Adds one measurement; `ran` is false when run conditions skipped the system.
    pub(crate) fn record(&mut self, time: Duration, ran: bool) {
        self.last = time;
        self.last_skipped = !ran;
        if !ran {
            self.skipped += 1;
            return;
        }
        self.min = if self.runs == 0 {
            time
        } else {
            self.min.min(time)
        };
        self.max = self.max.max(time);
        self.total += time;
        self.runs += 1;
    }

    fn row(&self, name: &str) -> TimingRow {
        TimingRow {
            name: name.to_owned(),
            last: self.last,
            last_skipped: self.last_skipped,
            runs: self.runs,
            skipped: self.skipped,
            mean: match self.runs {
                0 => Duration::ZERO,
                n => self.total / u32::try_from(n).unwrap_or(u32::MAX),
            },
            min: self.min,
            max: self.max,
        }
    }
}

/// One row of [`Timings`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimingRow {
    /// The system's name, `(apply commands)`, or `(frame)`.
    pub name: String,
    /// Time in the last run (for a skipped system: its conditions' time).
    pub last: Duration,
    /// Whether run conditions skipped it in the last run.
    pub last_skipped: bool,
    /// Runs in which it ran.
    pub runs: u64,
    /// Runs in which its conditions skipped it.
    pub skipped: u64,
    /// Mean over the runs in which it ran.
    pub mean: Duration,
    /// Fastest run.
    pub min: Duration,
    /// Slowest run.
    pub max: Duration,
}

/// A schedule's timings: every system in plan order, command application, and the frame.
/// Prints as a table.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{every_n_runs, Schedule};
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(|_: &World| {}).named("always");
/// schedule.add_system(|_: &World| {}).named("sometimes").run_if(every_n_runs(2));
/// let mut world = World::new();
/// for _ in 0..3 { schedule.run(&mut world).unwrap(); }
/// let timings = schedule.timings();
/// assert_eq!(timings.systems()[0].runs, 3);
/// assert_eq!((timings.systems()[1].runs, timings.systems()[1].skipped), (2, 1));
/// assert_eq!(timings.frame().runs, 3);
/// assert_eq!(timings.last_run().len(), 2);
/// let table = timings.to_string();
/// assert!(table.contains("sometimes") && table.contains("(apply commands)"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timings {
    systems: Vec<TimingRow>,
    commands: TimingRow,
    frame: TimingRow,
}

impl Timings {
    pub(crate) fn new<'a>(
        systems: impl Iterator<Item = (&'a str, Sample)>,
        commands: &Sample,
        frame: &Sample,
    ) -> Self {
        Self {
            systems: systems.map(|(name, s)| s.row(name)).collect(),
            commands: commands.row("(apply commands)"),
            frame: frame.row("(frame)"),
        }
    }

    /// Each system's row, in plan order.
    pub fn systems(&self) -> &[TimingRow] {
        &self.systems
    }

    /// The row of the system named `name`, if the schedule has one.
    pub fn system(&self, name: &str) -> Option<&TimingRow> {
        self.systems.iter().find(|row| row.name == name)
    }

    /// Applying commands and events (sync points and the end of the run), as one row.
    pub fn commands(&self) -> &TimingRow {
        &self.commands
    }

    /// The whole `run` call, wall time.
    pub fn frame(&self) -> &TimingRow {
        &self.frame
    }

    /// Each system's name and time in the last run, in plan order (what `timings()` returned
    /// before it grew statistics).
    pub fn last_run(&self) -> Vec<(String, Duration)> {
        self.systems
            .iter()
            .map(|r| (r.name.clone(), r.last))
            .collect()
    }

    /// The sum of the systems' times in the last run (more than the frame's wall time when
    /// systems ran side by side).
    pub fn sum_of_systems(&self) -> Duration {
        self.systems.iter().map(|r| r.last).sum()
    }
}

impl fmt::Display for Timings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .systems
            .iter()
            .map(|r| r.name.len())
            .chain([16, "sum of systems (last)".len()])
            .max()
            .unwrap_or(16);
        writeln!(
            f,
            "{:<width$} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8}",
            "system", "last", "mean", "min", "max", "runs", "skipped"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, r: &TimingRow| {
            let last = if r.last_skipped {
                "skipped".to_owned()
            } else {
                format!("{:.1?}", r.last)
            };
            writeln!(
                f,
                "{:<width$} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8}",
                r.name,
                last,
                format!("{:.1?}", r.mean),
                format!("{:.1?}", r.min),
                format!("{:.1?}", r.max),
                r.runs,
                r.skipped
            )
        };
        for r in &self.systems {
            row(f, r)?;
        }
        row(f, &self.commands)?;
        row(f, &self.frame)?;
        writeln!(
            f,
            "{:<width$} {:>12}",
            "sum of systems (last)",
            format!("{:.1?}", self.sum_of_systems())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_keeps_min_max_mean_and_skips_apart() {
        let mut s = Sample::default();
        s.record(Duration::from_micros(4), true);
        s.record(Duration::from_micros(1), false);
        s.record(Duration::from_micros(2), true);
        let r = s.row("x");
        assert_eq!((r.runs, r.skipped), (2, 1));
        assert_eq!(r.min, Duration::from_micros(2));
        assert_eq!(r.max, Duration::from_micros(4));
        assert_eq!(r.mean, Duration::from_micros(3));
        assert!(!r.last_skipped);
    }
}
