//! The sweep's command line, parsed into [`SweepArgs`] with a typed error for every bad input.

use std::path::PathBuf;

use ecs_core::ChunkPolicy;

use crate::error::LabError;
use crate::mix::Mix;
use crate::timer::Passes;

/// What `sweep --help` prints.
pub const USAGE: &str = "\
usage: sweep [--mix NAME=LANES:COLD[@ALIGN]]... [--sizes LIST] [--min-rows LIST]
             [--entities N] [--reps N] [--best-of N] [--warm] [--replicas N] [--seed N]
             [--moves N] [--csv PATH] [--svg PATH] [--svg-ratio PATH]

  --mix       a component mix: two hot columns of LANES f32s (1-4) and COLD bytes
              (0 8 16 32 64 92 128 256 276 512, or 16 32 64 128 256 with @16);
              repeatable; default small=2:8 medium=3:92 wide=3:276 (32, 124, 308 B rows)
  --sizes     fixed chunk sizes, e.g. 4k,16k,1m (default 4k,8k,...,1m; '' for none)
  --min-rows  MinRows policies, e.g. 1024,2048 (default 2048; '' for none)
  --entities  entities per world (default 1000000)
  --reps      timed repetitions per measurement (default 11)
  --best-of   passes per repetition, of which the fastest is its sample (default 1;
              3 filters out passes another process preempted, on a loaded machine)
  --warm      run passes back to back (warm caches); by default every pass is cold:
              the caches are evicted first by reading twice the largest cache's bytes
  --replicas  build and measure every world this many times, each time in another
              shuffled order of policies, and pool the samples (default 1)
  --seed      the seed of those build orders (default 1)
  --moves     entities tagged and untagged per add/remove rep (default min(entities, 100000))
  --csv       write the results as CSV here
  --svg       write a chart of ns/entity per chunk size and mix here
  --svg-ratio write the same chart as ratios to the Vec baseline (1 = as fast) here
";

/// A parsed sweep command line.
///
/// ```
/// # use ecs_lab::{ChunkPolicy, SweepArgs};
/// let args = SweepArgs::parse(["--sizes", "4k,1m", "--min-rows", "512", "--entities", "10"]).unwrap();
/// assert_eq!(
///     args.policies,
///     [ChunkPolicy::Fixed(4096), ChunkPolicy::Fixed(1 << 20), ChunkPolicy::MinRows(512)]
/// );
/// assert_eq!((args.entities, args.moves), (10, 10));
/// assert_eq!(args.mixes.len(), 3); // the issue's mixes by default
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SweepArgs {
    /// The mixes, one world per mix and policy.
    pub mixes: Vec<Mix>,
    /// Fixed sizes first, then `MinRows` policies, in the order given.
    pub policies: Vec<ChunkPolicy>,
    /// Entities per world.
    pub entities: usize,
    /// Timed repetitions per measurement.
    pub reps: usize,
    /// Passes per repetition; the fastest is the repetition's sample.
    pub best_of: usize,
    /// Cold (the default) or warm passes.
    pub passes: Passes,
    /// Times every world is built and measured; samples are pooled.
    pub replicas: usize,
    /// Seed of the shuffled build orders.
    pub seed: u64,
    /// Entities tagged and untagged per add/remove repetition (at most `entities`).
    pub moves: usize,
    /// Where to write the CSV, if anywhere.
    pub csv: Option<PathBuf>,
    /// Where to write the SVG chart, if anywhere.
    pub svg: Option<PathBuf>,
    /// Where to write the chart of ratios to the `Vec` baseline, if anywhere.
    pub svg_ratio: Option<PathBuf>,
}

impl SweepArgs {
    /// Parses the flags in [`USAGE`] (without the program name).
    ///
    /// # Errors
    /// [`LabError::UnknownFlag`], [`LabError::MissingValue`], [`LabError::BadNumber`], the
    /// errors of [`Mix::parse`], [`LabError::DuplicateMix`], [`LabError::Policy`] for a size
    /// the world refuses, [`LabError::Zero`] for zero entities or reps, [`LabError::Empty`]
    /// when no size and no policy is left.
    ///
    /// ```
    /// # use ecs_lab::{LabError, SweepArgs};
    /// assert_eq!(
    ///     SweepArgs::parse(["--entities", "ten"]),
    ///     Err(LabError::BadNumber { flag: "--entities", value: "ten".into() })
    /// );
    /// ```
    pub fn parse<I, S>(args: I) -> Result<Self, LabError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut mixes: Vec<Mix> = Vec::new();
        let mut sizes: Option<Vec<usize>> = None;
        let mut min_rows: Option<Vec<usize>> = None;
        let (mut entities, mut reps, mut best_of, mut moves) = (1_000_000, 11, 1, None);
        let (mut csv, mut svg, mut svg_ratio) = (None, None, None);
        let (mut passes, mut replicas, mut seed) = (Passes::Cold, 1, 1);
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            let flag = flag.as_ref();
            if flag == "--warm" {
                passes = Passes::Warm;
                continue;
            }
            let known: &'static str = match flag {
                "--mix" => "--mix",
                "--sizes" => "--sizes",
                "--min-rows" => "--min-rows",
                "--entities" => "--entities",
                "--reps" => "--reps",
                "--best-of" => "--best-of",
                "--moves" => "--moves",
                "--replicas" => "--replicas",
                "--seed" => "--seed",
                "--csv" => "--csv",
                "--svg" => "--svg",
                "--svg-ratio" => "--svg-ratio",
                other => return Err(LabError::UnknownFlag(other.to_owned())),
            };
            let value = args.next().ok_or(LabError::MissingValue(known))?;
            let value = value.as_ref();
            match known {
                "--mix" => {
                    let mix = Mix::parse(value)?;
                    if mixes.iter().any(|m| m.name == mix.name) {
                        return Err(LabError::DuplicateMix(mix.name));
                    }
                    mixes.push(mix);
                }
                "--sizes" => sizes = Some(list(known, value, parse_bytes)?),
                "--min-rows" => min_rows = Some(list(known, value, parse_count)?),
                "--entities" => entities = parse_count(known, value)?,
                "--reps" => reps = parse_count(known, value)?,
                "--best-of" => best_of = parse_count(known, value)?,
                "--moves" => moves = Some(parse_count(known, value)?),
                "--replicas" => replicas = parse_count(known, value)?,
                "--seed" => seed = parse_count(known, value)? as u64,
                "--csv" => csv = Some(PathBuf::from(value)),
                "--svg" => svg = Some(PathBuf::from(value)),
                _ => svg_ratio = Some(PathBuf::from(value)),
            }
        }
        if mixes.is_empty() {
            mixes = Mix::issue();
        }
        let sizes = sizes.unwrap_or_else(|| (12..=20).map(|shift| 1 << shift).collect());
        let min_rows = min_rows.unwrap_or_else(|| vec![2048]);
        let policies: Vec<ChunkPolicy> = sizes
            .into_iter()
            .map(ChunkPolicy::Fixed)
            .chain(min_rows.into_iter().map(ChunkPolicy::MinRows))
            .map(ChunkPolicy::validate)
            .collect::<Result<_, _>>()?;
        if policies.is_empty() {
            return Err(LabError::Empty("chunk sizes or policies"));
        }
        for (what, n) in [
            ("--entities", entities),
            ("--reps", reps),
            ("--best-of", best_of),
            ("--replicas", replicas),
        ] {
            if n == 0 {
                return Err(LabError::Zero(what));
            }
        }
        Ok(Self {
            mixes,
            policies,
            entities,
            reps,
            best_of,
            passes,
            replicas,
            seed,
            moves: moves.unwrap_or(100_000).min(entities),
            csv,
            svg,
            svg_ratio,
        })
    }
}

/// A comma-separated list (empty for none).
fn list(
    flag: &'static str,
    value: &str,
    item: fn(&'static str, &str) -> Result<usize, LabError>,
) -> Result<Vec<usize>, LabError> {
    value
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| item(flag, s.trim()))
        .collect()
}

/// A plain count; `_` separators allowed (`1_000_000`).
fn parse_count(flag: &'static str, value: &str) -> Result<usize, LabError> {
    value
        .replace('_', "")
        .parse()
        .map_err(|_| LabError::BadNumber {
            flag,
            value: value.to_owned(),
        })
}

/// Bytes: `4096`, `4k`, `4KiB`, `1m`, `1MiB` (binary units).
fn parse_bytes(flag: &'static str, value: &str) -> Result<usize, LabError> {
    let lower = value.to_ascii_lowercase();
    let lower = lower.trim_end_matches("ib").trim_end_matches('b');
    let (digits, unit) = match lower.strip_suffix('k') {
        Some(d) => (d, 1 << 10),
        None => match lower.strip_suffix('m') {
            Some(d) => (d, 1 << 20),
            None => (lower, 1),
        },
    };
    parse_count(flag, digits)
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| LabError::BadNumber {
            flag,
            value: value.to_owned(),
        })
}

/// How reports name a policy: `16 KiB`, `1 MiB`, `min-rows 2048`.
///
/// ```
/// # use ecs_lab::{policy_label, ChunkPolicy};
/// assert_eq!(policy_label(ChunkPolicy::Fixed(16384)), "16 KiB");
/// assert_eq!(policy_label(ChunkPolicy::Fixed(1 << 20)), "1 MiB");
/// assert_eq!(policy_label(ChunkPolicy::MinRows(2048)), "min-rows 2048");
/// ```
pub fn policy_label(policy: ChunkPolicy) -> String {
    match policy {
        ChunkPolicy::Fixed(bytes) if bytes >= 1 << 20 && bytes % (1 << 20) == 0 => {
            format!("{} MiB", bytes >> 20)
        }
        ChunkPolicy::Fixed(bytes) if bytes % 1024 == 0 => format!("{} KiB", bytes >> 10),
        ChunkPolicy::Fixed(bytes) => format!("{bytes} B"),
        ChunkPolicy::MinRows(rows) => format!("min-rows {rows}"),
        ChunkPolicy::FitBatch => "fit-batch".to_owned(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use ecs_core::WorldError;

    use super::*;

    #[test]
    fn defaults_are_the_issue_sweep() {
        let args = SweepArgs::parse(Vec::<String>::new()).unwrap();
        assert_eq!(args.mixes, Mix::issue());
        assert_eq!(args.policies.len(), 10);
        assert_eq!(args.policies[0], ChunkPolicy::Fixed(4096));
        assert_eq!(args.policies[8], ChunkPolicy::Fixed(1 << 20));
        assert_eq!(args.policies[9], ChunkPolicy::MinRows(2048));
        assert_eq!(
            (args.entities, args.reps, args.moves),
            (1_000_000, 11, 100_000)
        );
        assert_eq!((args.csv, args.svg), (None, None));
    }

    #[test]
    fn sizes_take_binary_units() {
        for (text, bytes) in [
            ("4096", 4096),
            ("4k", 4096),
            ("16KiB", 16384),
            ("1M", 1 << 20),
        ] {
            assert_eq!(parse_bytes("--sizes", text), Ok(bytes), "{text}");
        }
        assert!(parse_bytes("--sizes", "k").is_err());
        assert!(parse_bytes("--sizes", "99999999999999999999m").is_err());
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let cases: [(&[&str], LabError); 10] = [
            (
                &["--frobnicate"],
                LabError::UnknownFlag("--frobnicate".into()),
            ),
            (&["--csv"], LabError::MissingValue("--csv")),
            (
                &["--sizes", "4k,lots"],
                LabError::BadNumber {
                    flag: "--sizes",
                    value: "lots".into(),
                },
            ),
            (
                &["--sizes", "3000"],
                LabError::Policy(WorldError::InvalidChunkSize(3000)),
            ),
            (
                &["--sizes", "2m"],
                LabError::Policy(WorldError::InvalidChunkSize(2 << 20)),
            ),
            (
                &["--min-rows", "0"],
                LabError::Policy(WorldError::ZeroMinRows),
            ),
            (
                &["--sizes", "", "--min-rows", ""],
                LabError::Empty("chunk sizes or policies"),
            ),
            (&["--reps", "0"], LabError::Zero("--reps")),
            (&["--best-of", "0"], LabError::Zero("--best-of")),
            (
                &["--mix", "a=1:8", "--mix", "a=2:8"],
                LabError::DuplicateMix("a".into()),
            ),
        ];
        for (args, err) in cases {
            assert_eq!(SweepArgs::parse(args), Err(err), "{args:?}");
        }
    }

    #[test]
    fn mixes_replace_the_default_and_moves_are_capped() {
        let args = SweepArgs::parse([
            "--mix",
            "x=1:0",
            "--entities",
            "1_000",
            "--moves",
            "5000",
            "--csv",
            "o.csv",
        ])
        .unwrap();
        assert_eq!(args.mixes.len(), 1);
        assert_eq!(args.mixes[0].row_bytes(), 16);
        assert_eq!((args.entities, args.moves), (1000, 1000));
        assert_eq!(args.csv, Some(PathBuf::from("o.csv")));
    }
}
