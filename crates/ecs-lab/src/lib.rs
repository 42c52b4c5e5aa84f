//! The chunk-layout lab: measures how chunk sizes and sizing policies treat a component mix.
//!
//! A [`Mix`] describes the rows of one archetype: two hot `f32` columns that the measured query
//! reads and writes (`a += b`), and cold bytes it never touches, built from a small set of
//! predefined component types ([`Hot`], [`Pad`], [`Pad16`]). [`run_sweep`] builds one world per
//! mix and chunk policy ([`ChunkPolicy::Fixed`] sizes or [`ChunkPolicy::MinRows`]), and on that
//! one world measures, rep after rep:
//!
//! - `for_each` over the two hot columns,
//! - the same loop over each chunk's column slices (`for_each_chunk`),
//! - adding and removing a zero-sized tag on a spread-out subset of entities,
//!
//! each beside the same work on plain `Vec`s, taken in the same time window; and it records the
//! layout report's memory total and the [`Footprint`] of one pass over the hot columns.
//!
//! Every timed pass is **cold** by default: the lab first reads a buffer of twice the largest
//! cache the machine reports ([`eviction_bytes`], from [`CacheSizes`]), so no pass is served by
//! what the one before left in L3; `--warm` ([`Passes::Warm`]) times passes back to back, and
//! every record, CSV line and chart says which. `--replicas R` builds every world R times in
//! shuffled orders (where blocks land moves a figure by several percent) and pools the
//! samples; each record keeps the spread between replicas.
//!
//! Questions the mixes cannot express go to [`run_experiment`]: a closure builds each world
//! (any components, any number of archetypes) under every [`WorldConfig`] — chunk policy ×
//! column [`Order`] × column alignment — and another closure is the timed work.
//! `examples/columns.rs` times a query over 2 of 12 columns that way.
//! [`to_csv`] and [`to_svg`] write the results; the `sweep` binary runs it from the command
//! line ([`SweepArgs`] documents the flags):
//!
//! ```text
//! cargo run --release -p ecs-lab --bin sweep -- --entities 1000000 --csv sweep.csv --svg sweep.svg
//! ```
//!
//! Cost: the worlds of one mix (one per policy, `entities` rows each) are alive together and
//! measured round-robin, plus the `Vec` baselines (about `entities × row` bytes); every
//! measurement reuses those worlds.
//!
//! ```
//! use ecs_lab::{run_sweep, to_csv, Measure, SweepArgs};
//!
//! let args = SweepArgs::parse(["--mix", "tiny=1:8", "--sizes", "4k", "--min-rows", "",
//!     "--entities", "300", "--reps", "1"]).unwrap();
//! let records = run_sweep(&args, |_| {}).unwrap();
//! assert_eq!(records.len(), Measure::ALL.len());
//! assert!(to_csv(&records).starts_with("mix,row_bytes,config,"));
//! ```

mod args;
mod components;
mod csv;
mod error;
mod experiment;
mod layout_svg;
mod measure;
mod mix;
mod record;
mod stats;
mod svg;
mod sweep;
mod timer;

pub use args::{policy_label, SweepArgs, USAGE};
pub use components::{Block16, Cold, Hot, Pad, Pad16, Tag};
pub use csv::{to_csv, vs_best};
pub use ecs_core::{CacheSizes, ChunkPolicy, Footprint};
pub use error::LabError;
pub use experiment::{run_experiment, trials_to_csv, Experiment, Order, Trial, WorldConfig};
pub use layout_svg::{layout_svg, layout_svg_with, LayoutDrawing};
pub use mix::{Mix, COLD_MENU, HOT_LANES};
pub use record::{Measure, Record};
pub use stats::Stats;
pub use svg::{to_svg, to_svg_as, ChartValue};
pub use sweep::{populate, run_sweep};
pub use timer::{eviction_bytes, Passes};
