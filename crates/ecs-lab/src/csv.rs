//! Sweep records as CSV: one line per record, with the ratio to its `Vec` baseline and to the
//! best policy of its mix.

use std::fmt::Write as _;

use crate::record::{Measure, Record};

/// The CSV of `records`, after a header line. `vs_vec` is the median over the median of the
/// baseline timed beside it (same mix and policy); `vs_best` the median over the lowest
/// median of the same measure and mix among all policies ([`vs_best`]); both empty for the
/// baselines themselves. `passes` is `cold` or `warm`; `placement_spread` the slowest
/// replica's median over the fastest's. Mix names are quoted (they are free text).
///
/// ```
/// # use ecs_lab::{run_sweep, to_csv, SweepArgs};
/// let args = SweepArgs::parse(["--mix", "m=1:0", "--sizes", "4k", "--min-rows", "",
///     "--entities", "100", "--reps", "1"]).unwrap();
/// let csv = to_csv(&run_sweep(&args, |_| {}).unwrap());
/// assert_eq!(csv.lines().count(), 1 + 5);
/// assert!(csv.lines().nth(1).unwrap().starts_with("\"m\",16,4 KiB,4096,"));
/// ```
pub fn to_csv(records: &[Record]) -> String {
    let mut out = String::from(
        "mix,row_bytes,config,chunk_size,capacity,entities,measure,median_ns,q1_ns,q3_ns,\
         min_ns,max_ns,reps,best_of,vs_vec,memory_bytes,pass_bytes,pass_cache_lines,pass_pages,\
         passes,replicas,placement_spread,vs_best\n",
    );
    for r in records {
        let s = &r.stats;
        let vs_vec = baseline_of(records, r)
            .map(|b| format!("{:.3}", s.median / b.stats.median))
            .unwrap_or_default();
        let vs_best = vs_best(records, r)
            .map(|ratio| format!("{ratio:.3}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{}",
            r.mix.replace('"', "\"\""),
            r.row_bytes,
            r.config,
            r.chunk_size,
            r.capacity,
            r.entities,
            r.measure.name(),
            s.csv_cells(),
            r.best_of,
            vs_vec,
            r.memory_bytes,
            r.pass.bytes,
            r.pass.cache_lines,
            r.pass.pages,
            r.passes.name(),
            r.replicas,
            r.placement_spread,
            vs_best,
        );
    }
    out
}

/// `r`'s median over the lowest median of its measure and mix among `records` (1.0 for the
/// best policy); `None` for baseline measures, which have no policy of their own.
///
/// ```
/// # use ecs_lab::{run_sweep, vs_best, Measure, SweepArgs};
/// let args = SweepArgs::parse(["--mix", "m=1:0", "--sizes", "4k,16k", "--min-rows", "",
///     "--entities", "100", "--reps", "1"]).unwrap();
/// let records = run_sweep(&args, |_| {}).unwrap();
/// let ratios: Vec<f64> = records
///     .iter()
///     .filter(|r| r.measure == Measure::ForEach)
///     .map(|r| vs_best(&records, r).unwrap())
///     .collect();
/// assert!(ratios.iter().all(|&x| x >= 1.0) && ratios.contains(&1.0));
/// ```
pub fn vs_best(records: &[Record], r: &Record) -> Option<f64> {
    r.measure.baseline()?;
    let best = records
        .iter()
        .filter(|o| o.measure == r.measure && o.mix == r.mix)
        .map(|o| o.stats.median)
        .fold(f64::INFINITY, f64::min);
    Some(r.stats.median / best)
}

/// The record of `r`'s baseline measure with `r`'s mix and policy.
pub(crate) fn baseline_of<'a>(records: &'a [Record], r: &Record) -> Option<&'a Record> {
    let measure: Measure = r.measure.baseline()?;
    records
        .iter()
        .find(|b| b.measure == measure && b.mix == r.mix && b.policy == r.policy)
}

#[cfg(test)]
pub(crate) mod tests {
    use ecs_core::{ChunkPolicy, Footprint};

    use super::*;
    use crate::stats::Stats;

    pub(crate) fn record(mix: &str, kib: usize, measure: Measure, median: f64) -> Record {
        Record {
            mix: mix.to_owned(),
            row_bytes: 32,
            policy: ChunkPolicy::Fixed(kib * 1024),
            config: format!("{kib} KiB"),
            chunk_size: kib * 1024,
            capacity: 100,
            entities: 1000,
            measure,
            stats: Stats::of(vec![median, median * 2.0]),
            best_of: 1,
            passes: crate::Passes::Cold,
            replicas: 1,
            placement_spread: 1.0,
            memory_bytes: 4096,
            pass: Footprint {
                bytes: 8000,
                cache_lines: 125,
                pages: 2,
            },
        }
    }

    #[test]
    fn ratios_pair_a_measure_with_its_own_baseline() {
        let records = [
            record("a", 4, Measure::ForEach, 3.0),
            record("a", 4, Measure::VecLoop, 1.5),
            record("a", 16, Measure::VecLoop, 3.0),
            record("a,\"b\"", 4, Measure::AddRemove, 1.0),
        ];
        let csv = to_csv(&records);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5);
        let header: Vec<&str> = lines[0].split(',').collect();
        let vs = header.iter().position(|h| *h == "vs_vec").unwrap();
        let median = header.iter().position(|h| *h == "median_ns").unwrap();
        let fields: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(fields.len(), header.len());
        // Two samples: the median is the upper one.
        assert_eq!(fields[median], "6.000");
        assert_eq!(fields[vs], "2.000");
        // A baseline has no ratio; a measure without a baseline record has none either.
        assert_eq!(lines[2].split(',').nth(vs), Some(""));
        assert!(lines[4].starts_with("\"a,\"\"b\"\"\",32,4 KiB,"));
        assert!(lines[4].ends_with(",,4096,8000,125,2,cold,1,1.000,1.000"));
    }

    #[test]
    fn vs_best_divides_by_the_fastest_policy_of_the_same_mix_and_measure() {
        let records = [
            record("a", 4, Measure::ForEach, 3.0),
            record("a", 16, Measure::ForEach, 2.0),
            record("b", 4, Measure::ForEach, 1.0),
            record("a", 4, Measure::AddRemove, 5.0),
            record("a", 4, Measure::VecLoop, 1.0),
        ];
        assert_eq!(vs_best(&records, &records[0]), Some(1.5));
        assert_eq!(vs_best(&records, &records[1]), Some(1.0));
        assert_eq!(vs_best(&records, &records[2]), Some(1.0), "another mix");
        assert_eq!(vs_best(&records, &records[3]), Some(1.0), "another measure");
        assert_eq!(vs_best(&records, &records[4]), None, "a baseline");
        let csv = to_csv(&records);
        assert!(csv.lines().nth(1).unwrap().ends_with(",1.500"));
    }
}
