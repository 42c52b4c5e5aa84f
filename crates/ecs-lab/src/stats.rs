//! Medians and spreads of repeated timings.

/// Summary of a set of samples (nanoseconds per entity): the median, the quartiles and the
/// extremes. Quartiles are the samples at ranks `n/4` and `3n/4` of the sorted set (no
/// interpolation), so every figure is a value that was measured.
///
/// ```
/// # use ecs_lab::Stats;
/// let s = Stats::of(vec![5.0, 1.0, 4.0, 2.0, 3.0]);
/// assert_eq!((s.median, s.min, s.max), (3.0, 1.0, 5.0));
/// assert_eq!((s.q1, s.q3), (2.0, 4.0));
/// assert_eq!(s.reps, 5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// The middle sample (the upper middle one for an even count).
    pub median: f64,
    /// The first quartile.
    pub q1: f64,
    /// The third quartile.
    pub q3: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// How many samples.
    pub reps: usize,
}

impl Stats {
    /// The summary of `samples`.
    ///
    /// # Panics
    /// If `samples` is empty.
    pub fn of(mut samples: Vec<f64>) -> Self {
        assert!(!samples.is_empty(), "Stats::of needs at least one sample");
        samples.sort_by(f64::total_cmp);
        let n = samples.len();
        let rank = |num: usize| samples[(n * num / 4).min(n - 1)];
        Self {
            median: rank(2),
            q1: rank(1),
            q3: rank(3),
            min: samples[0],
            max: samples[n - 1],
            reps: n,
        }
    }
}

impl Stats {
    /// `median,q1,q3,min,max,reps` as CSV cells (times to 3 decimals), the columns both CSV
    /// writers share.
    pub(crate) fn csv_cells(&self) -> String {
        format!(
            "{:.3},{:.3},{:.3},{:.3},{:.3},{}",
            self.median, self.q1, self.q3, self.min, self.max, self.reps
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_is_every_figure() {
        let s = Stats::of(vec![7.0]);
        assert_eq!(
            (s.median, s.q1, s.q3, s.min, s.max),
            (7.0, 7.0, 7.0, 7.0, 7.0)
        );
    }

    #[test]
    #[should_panic(expected = "at least one sample")]
    fn no_samples_panics() {
        Stats::of(Vec::new());
    }
}
