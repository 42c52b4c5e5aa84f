//! The sweep itself: every (mix, policy) world, each measure beside the same work on plain
//! `Vec`s timed in the same repetition (see `measure.rs` for what one repetition does).
//!
//! All worlds of one mix are built first and then measured round-robin, repetition by
//! repetition, so a load that drifts while the sweep runs reaches every policy alike, and the
//! ratios between policies are not an artefact of which world ran when. That keeps
//! `policies × entities × row` bytes alive per mix (about 3 GB for ten policies of a million
//! 308-byte rows); the next mix's worlds are built after the last one's are dropped.
//!
//! The sweep is single-threaded: it measures, and runs nothing in parallel.

use ecs_core::{ChunkPolicy, Entity, Footprint, World};

use crate::args::SweepArgs;
use crate::components::{Cold, Hot, Pad, Pad16};
use crate::error::LabError;
use crate::measure::{Baseline, WorldBench};
use crate::mix::Mix;
use crate::stats::Stats;

/// One kind of measurement of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Measure {
    /// `QueryState::for_each` over the two hot columns: `a += b`, lane by lane.
    ForEach,
    /// The same loop over each chunk's column slices (`for_each_chunk`).
    ChunkSlice,
    /// Inserting [`Tag`](crate::Tag) on each entity of the move subset, then removing it; per entity.
    AddRemove,
    /// `a += b` over two plain `Vec`s: the baseline of `ForEach` and `ChunkSlice`.
    VecLoop,
    /// Swap-removing each row of the move subset from a `Vec<u8>` table of rows into a second
    /// one and back (the byte moves a hand-written two-table store makes): the baseline of
    /// `AddRemove`.
    VecMove,
}

impl Measure {
    /// Every measure, in record order.
    pub const ALL: [Self; 5] = [
        Self::ForEach,
        Self::ChunkSlice,
        Self::AddRemove,
        Self::VecLoop,
        Self::VecMove,
    ];

    /// The name in CSV and charts.
    ///
    /// ```
    /// # use ecs_lab::Measure;
    /// assert_eq!(Measure::ChunkSlice.name(), "chunk_slice");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::ForEach => "for_each",
            Self::ChunkSlice => "chunk_slice",
            Self::AddRemove => "add_remove",
            Self::VecLoop => "vec_loop",
            Self::VecMove => "vec_move",
        }
    }

    /// The `Vec` measure a world measure compares with; `None` for the baselines themselves.
    ///
    /// ```
    /// # use ecs_lab::Measure;
    /// assert_eq!(Measure::AddRemove.baseline(), Some(Measure::VecMove));
    /// assert_eq!(Measure::VecLoop.baseline(), None);
    /// ```
    pub fn baseline(self) -> Option<Self> {
        match self {
            Self::ForEach | Self::ChunkSlice => Some(Self::VecLoop),
            Self::AddRemove => Some(Self::VecMove),
            Self::VecLoop | Self::VecMove => None,
        }
    }
}

/// One measured figure of a sweep: a measure of one mix under one policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The mix's name.
    pub mix: String,
    /// Its bytes per row (entity id included).
    pub row_bytes: usize,
    /// The policy of the world (the baselines carry the policy they were timed beside).
    pub policy: ChunkPolicy,
    /// [`policy_label`](crate::policy_label) of `policy`.
    pub config: String,
    /// The chunk size the mix's archetype got.
    pub chunk_size: usize,
    /// Its rows per chunk.
    pub capacity: usize,
    /// Entities in the world.
    pub entities: usize,
    /// What was timed.
    pub measure: Measure,
    /// Nanoseconds per entity (per moved entity for the move measures).
    pub stats: Stats,
    /// Passes per repetition (each sample is the fastest of them).
    pub best_of: usize,
    /// The world's memory by its layout report; for the baselines, plain `Vec` columns of the
    /// same rows (`entities × row_bytes`).
    pub memory_bytes: usize,
    /// One pass over the two hot columns (for the baselines: two page-aligned `Vec`s).
    pub pass: Footprint,
}

/// Spawns `n` rows of `(Hot<0, L>, Hot<1, L>, C)`: hot values `[i; L]` and `[1; L]`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_lab::{populate, Hot, Pad};
/// let mut world = World::new();
/// let ids = populate::<3, Pad<276>>(&mut world, 10);
/// assert_eq!(world.get::<Hot<0, 3>>(ids[4]), Ok(&Hot([4.0; 3])));
/// assert_eq!(world.layout().archetypes[0].components.len(), 3);
/// ```
pub fn populate<const L: usize, C: Cold>(world: &mut World, n: usize) -> Vec<Entity> {
    world
        .spawn_batch((0..n).map(|i| {
            (
                Hot::<0, L>([i as f32; L]),
                Hot::<1, L>([1.0; L]),
                C::filled(i),
            )
        }))
        .collect()
}

/// Runs the sweep `args` describes, calling `progress` with each record as it is made.
///
/// # Errors
/// [`LabError::Policy`] if a world refuses a policy (parsed arguments never do),
/// [`LabError::UnsupportedHotLanes`] / [`LabError::UnsupportedCold`] for a mix built by hand
/// outside the menu.
pub fn run_sweep(
    args: &SweepArgs,
    mut progress: impl FnMut(&Record),
) -> Result<Vec<Record>, LabError> {
    let mut out = Vec::new();
    for mix in &args.mixes {
        let mut sink = |r: Record| {
            progress(&r);
            out.push(r);
        };
        with_cold(mix, args, &mut sink)?;
    }
    Ok(out)
}

/// Picks the cold column type of `mix` (the menu in [`COLD_MENU`](crate::COLD_MENU)).
fn with_cold(mix: &Mix, args: &SweepArgs, sink: &mut dyn FnMut(Record)) -> Result<(), LabError> {
    match (mix.cold_bytes, mix.cold_align) {
        (0, 1) => with_lanes::<Pad<0>>(mix, args, sink),
        (8, 1) => with_lanes::<Pad<8>>(mix, args, sink),
        (16, 1) => with_lanes::<Pad<16>>(mix, args, sink),
        (32, 1) => with_lanes::<Pad<32>>(mix, args, sink),
        (64, 1) => with_lanes::<Pad<64>>(mix, args, sink),
        (92, 1) => with_lanes::<Pad<92>>(mix, args, sink),
        (128, 1) => with_lanes::<Pad<128>>(mix, args, sink),
        (256, 1) => with_lanes::<Pad<256>>(mix, args, sink),
        (276, 1) => with_lanes::<Pad<276>>(mix, args, sink),
        (512, 1) => with_lanes::<Pad<512>>(mix, args, sink),
        (16, 16) => with_lanes::<Pad16<1>>(mix, args, sink),
        (32, 16) => with_lanes::<Pad16<2>>(mix, args, sink),
        (64, 16) => with_lanes::<Pad16<4>>(mix, args, sink),
        (128, 16) => with_lanes::<Pad16<8>>(mix, args, sink),
        (256, 16) => with_lanes::<Pad16<16>>(mix, args, sink),
        (bytes, align) => Err(LabError::UnsupportedCold {
            mix: mix.name.clone(),
            bytes,
            align,
        }),
    }
}

/// Picks the hot column types of `mix`.
fn with_lanes<C: Cold>(
    mix: &Mix,
    args: &SweepArgs,
    sink: &mut dyn FnMut(Record),
) -> Result<(), LabError> {
    match mix.hot_lanes {
        1 => sweep_mix::<1, C>(mix, args, sink),
        2 => sweep_mix::<2, C>(mix, args, sink),
        3 => sweep_mix::<3, C>(mix, args, sink),
        4 => sweep_mix::<4, C>(mix, args, sink),
        lanes => Err(LabError::UnsupportedHotLanes {
            mix: mix.name.clone(),
            lanes,
        }),
    }
}

/// Every policy's world of `mix`, measured round-robin; the `Vec` baseline is built once.
fn sweep_mix<const L: usize, C: Cold>(
    mix: &Mix,
    args: &SweepArgs,
    sink: &mut dyn FnMut(Record),
) -> Result<(), LabError> {
    debug_assert_eq!(size_of::<C>(), mix.cold_bytes);
    let mut base = Baseline::<L>::new(args.entities, mix.row_bytes());
    let mut worlds = Vec::with_capacity(args.policies.len());
    for &policy in &args.policies {
        let mut world = World::with_chunk_policy(policy)?;
        let ids = populate::<L, C>(&mut world, args.entities);
        worlds.push(WorldBench::<L>::new(world, &ids, policy, args.moves));
    }
    for rep in 0..=args.reps {
        for bench in &mut worlds {
            bench.rep(rep, &mut base, args.best_of);
        }
    }
    for bench in worlds {
        for record in bench.records(mix, &base, args.best_of) {
            sink(record);
        }
    }
    Ok(())
}
