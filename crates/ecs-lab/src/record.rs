//! What a sweep produces: one [`Record`] per (mix, policy, [`Measure`]), which the CSV and SVG
//! writers read and the measurements fill.

use ecs_core::{ChunkPolicy, Footprint};

use crate::stats::Stats;
use crate::timer::Passes;

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
    /// Whether each pass started with the caches emptied.
    pub passes: Passes,
    /// How many times the world was built anew (in a shuffled order of policies) and
    /// measured; `stats` pools every replica's samples.
    pub replicas: usize,
    /// The slowest replica's median over the fastest's: how much where the world's blocks
    /// landed moved the figure (1.0 for one replica).
    pub placement_spread: f64,
    /// The world's memory by its layout report; for the baselines, plain `Vec` columns of the
    /// same rows (`entities × row_bytes`).
    pub memory_bytes: usize,
    /// One pass over the two hot columns (for the baselines: two page-aligned `Vec`s).
    pub pass: Footprint,
}
