//! How big each archetype's chunks are, and in what order its column arrays sit in them.
//!
//! A world decides both once per archetype, when the archetype is created (its first spawn,
//! insert, remove or restore into that component set); existing archetypes keep their layout.
//!
//! - **Size.** A [`ChunkPolicy`] gives the size for every archetype: [`ChunkPolicy::Fixed`]
//!   (the default, 16 KiB for all, whatever the order in which rows arrive),
//!   [`ChunkPolicy::MinRows`] (the smallest power of two that holds at least `n` rows) or,
//!   only where a user asks for it, [`ChunkPolicy::FitBatch`] (16 KiB, except an archetype
//!   one large `spawn_batch` creates, which gets [`batch_chunk_size`]: up to 1 MiB, a fraction
//!   of a pool block). A size set for one component set with
//!   [`World::set_chunk_size_for`](crate::World::set_chunk_size_for) overrides the policy.
//!   Every size set is a power of two from [`MIN_CHUNK_SIZE`] (4 KiB) to [`MAX_CHUNK_SIZE`]
//!   (1 MiB); setters return [`WorldError`] outside that range.
//! - **Order.** A [`ColumnOrder`] places the column arrays: in registration order (the
//!   default), in the order with the least padding, or with chosen columns first.
//!
//! Cost: choosing runs [`ChunkLayout::new_ordered`] once per candidate order and, for
//! `MinRows`, per candidate size (at most 9); that is once per archetype, never per row.
//! Queries, row moves and snapshots read each archetype's own layout, so archetypes of
//! different sizes mix freely.

use std::collections::HashMap;

use crate::chunk::layout::{ChunkLayout, ColumnSpec, CHUNK_ALIGN, CHUNK_SIZE};
use crate::chunk::pool::BLOCK_BYTES;
use crate::component::signature::Signature;
use crate::component::{ComponentId, ComponentInfo};
use crate::error::RowTooLarge;
use crate::error::WorldError;

/// The smallest chunk size a policy may ask for, 4 KiB.
///
/// ```
/// # use ecs_core::{ChunkPolicy, World, MIN_CHUNK_SIZE};
/// assert!(World::with_chunk_policy(ChunkPolicy::Fixed(MIN_CHUNK_SIZE / 2)).is_err());
/// ```
pub const MIN_CHUNK_SIZE: usize = 4 * 1024;

/// The largest chunk size a policy may ask for, 1 MiB.
///
/// ```
/// # use ecs_core::{ChunkPolicy, World, MAX_CHUNK_SIZE};
/// assert!(World::with_chunk_policy(ChunkPolicy::Fixed(MAX_CHUNK_SIZE)).is_ok());
/// assert!(World::with_chunk_policy(ChunkPolicy::Fixed(MAX_CHUNK_SIZE * 2)).is_err());
/// ```
pub const MAX_CHUNK_SIZE: usize = 1024 * 1024;

/// The chunk size a batch of `bytes` of rows (entity ids included) gives the archetype it
/// creates under [`ChunkPolicy::FitBatch`]: the default 16 KiB up to 128 KiB of rows; above, the fewest chunks of at most
/// [`MAX_CHUNK_SIZE`] that hold the batch, each sized to the smallest whole fraction of a pool
/// block (2 MiB / k, on a cache line) that holds its share.
///
/// Fewer chunks, because each boundary costs a loop a view, a stamp, a vector loop's tail and
/// a restart of the CPU's streams; block fractions, because a pool block of `k` such chunks has
/// no tail that no chunk can use. Such sizes need not be powers of two (those a policy or
/// [`World::set_chunk_size_for`](crate::World::set_chunk_size_for) sets are).
///
/// ```
/// # use ecs_core::batch_chunk_size;
/// assert_eq!(batch_chunk_size(100 << 10), 16 << 10); // small batches: the default
/// assert_eq!(batch_chunk_size(320 << 10), (2 << 20) / 6 / 64 * 64); // one chunk, 6 a block
/// assert_eq!(batch_chunk_size(1_080_000), (2 << 20) / 3 / 64 * 64); // two chunks
/// assert_eq!(batch_chunk_size(24 << 20), 1 << 20); // a million rows: 1 MiB chunks
/// ```
pub fn batch_chunk_size(bytes: usize) -> usize {
    if bytes <= LARGE_BATCH {
        return CHUNK_SIZE;
    }
    let chunks = bytes.div_ceil(MAX_CHUNK_SIZE);
    let share = bytes.div_ceil(chunks) + PADDING_ROOM;
    let per_block = (BLOCK_BYTES / share).max(2);
    (BLOCK_BYTES / per_block / CHUNK_ALIGN * CHUNK_ALIGN).clamp(CHUNK_SIZE, MAX_CHUNK_SIZE)
}

/// Batches of up to this many bytes of rows keep the default chunk size.
const LARGE_BATCH: usize = 128 * 1024;

/// Room each batch chunk keeps for the padding that starts its columns on cache lines (and
/// staggers them across pages: `ChunkLayout`), so that its share of the rows still fits.
const PADDING_ROOM: usize = 4 * 1024;

/// How a world sizes the chunks of an archetype it creates.
///
/// ```
/// # use ecs_core::{ChunkPolicy, World};
/// let mut world = World::with_chunk_policy(ChunkPolicy::MinRows(1000)).unwrap();
/// let e = world.spawn(([0u8; 60],)); // 68-byte rows: 1000 of them need 128 KiB
/// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
/// assert_eq!(arch.layout().chunk_size(), 128 * 1024);
/// assert!(arch.layout().capacity() >= 1000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkPolicy {
    /// Every archetype gets chunks of this many bytes (a power of two, 4 KiB to 1 MiB).
    Fixed(usize),
    /// The smallest power of two from 4 KiB that holds at least this many rows (at least 1);
    /// 1 MiB if even that holds fewer.
    MinRows(usize),
    /// 16 KiB chunks, except for an archetype that one [`World::spawn_batch`] of more than
    /// 128 KiB of rows creates: that one gets [`batch_chunk_size`] of the batch (the fewest
    /// chunks of at most 1 MiB, each a whole fraction of a 2 MiB pool block).
    ///
    /// What it buys: fewer chunk boundaries in a loop over a big batch (each costs a view, a
    /// stamp, a vector loop's tail and a restart of the CPU's streams). What it costs: the
    /// layout then depends on history (the same rows spawned one by one get 16 KiB chunks),
    /// and everything kept per chunk (chunk components, enable words, chunk change ticks,
    /// `Changed<T>` chunk skipping, the unit a parallel loop hands a thread, compaction)
    /// becomes as coarse as the chunk. Opt-in only; [`World::new`] never does it.
    ///
    /// ```
    /// # use ecs_core::{ChunkPolicy, World};
    /// let mut world = World::with_chunk_policy(ChunkPolicy::FitBatch).unwrap();
    /// world.spawn_batch((0..300_000u64).map(|i| (i, i as f64))).for_each(drop);
    /// let arch = world.archetypes().iter().find(|a| a.len() == 300_000).unwrap();
    /// assert_eq!(arch.layout().chunk_size(), 1 << 20); // 7.2 MB of rows
    /// ```
    ///
    /// [`World::spawn_batch`]: crate::World::spawn_batch
    /// [`World::new`]: crate::World::new
    FitBatch,
}

impl Default for ChunkPolicy {
    /// `Fixed(16 KiB)`.
    fn default() -> Self {
        Self::Fixed(CHUNK_SIZE)
    }
}

impl ChunkPolicy {
    /// `self` if valid.
    ///
    /// # Errors
    /// [`WorldError::InvalidChunkSize`] for a `Fixed` size that is not a power of two from
    /// 4 KiB to 1 MiB; [`WorldError::ZeroMinRows`] for `MinRows(0)`.
    ///
    /// ```
    /// # use ecs_core::{ChunkPolicy, WorldError};
    /// assert_eq!(ChunkPolicy::MinRows(0).validate(), Err(WorldError::ZeroMinRows));
    /// assert!(ChunkPolicy::Fixed(8192).validate().is_ok());
    /// ```
    pub fn validate(self) -> Result<Self, WorldError> {
        match self {
            Self::Fixed(bytes) => check_size(bytes).map(|_| self),
            Self::MinRows(0) => Err(WorldError::ZeroMinRows),
            Self::MinRows(_) | Self::FitBatch => Ok(self),
        }
    }
}

/// `bytes` if it is a power of two from 4 KiB to 1 MiB.
pub(crate) fn check_size(bytes: usize) -> Result<usize, WorldError> {
    if (MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE).contains(&bytes) && bytes.is_power_of_two() {
        Ok(bytes)
    } else {
        Err(WorldError::InvalidChunkSize(bytes))
    }
}

/// The order of an archetype's column arrays inside its chunks. The entity ids always come
/// first; component columns keep their (ascending id) column numbers whatever their place.
///
/// ```
/// # use ecs_core::{ColumnOrder, World};
/// let mut world = World::new();
/// world.set_column_order(ColumnOrder::MinPadding);
/// let e = world.spawn((1u8, 2u64));
/// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
/// assert_eq!(world.memory_report().archetypes[0].column_order, "min-padding");
/// # let _ = arch;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColumnOrder {
    /// Columns in component registration order (ascending [`ComponentId`]).
    #[default]
    Registration,
    /// The order with the least padding: registration order and the columns sorted by
    /// alignment (descending, then ascending) are all laid out, and the one holding the most
    /// rows wins (registration order on a tie in rows and bytes). Never fewer rows than
    /// `Registration`.
    MinPadding,
    /// The listed components first, in this order (those the archetype has), then the rest
    /// by descending alignment. May hold fewer rows than `Registration`: the caller chose.
    First(Vec<ComponentId>),
}

impl ColumnOrder {
    /// The layout of `columns` (with component ids `ids`, ascending) in `chunk_size` bytes,
    /// placed in this order; `None` if not one row fits.
    ///
    /// # Panics
    /// If `ids` is not as long as `columns` (for `First`), or as [`ChunkLayout::new`].
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnOrder, ColumnSpec};
    /// let cols = [ColumnSpec { size: 1, align: 1 }, ColumnSpec { size: 16, align: 16 }];
    /// let reg = ChunkLayout::new(4096, &cols).unwrap();
    /// let min = ColumnOrder::MinPadding.layout(4096, &cols, &[]).unwrap();
    /// assert!(min.capacity() >= reg.capacity());
    /// ```
    pub fn layout(
        &self,
        chunk_size: usize,
        specs: &[ColumnSpec],
        ids: &[ComponentId],
    ) -> Option<ChunkLayout> {
        let registration: Vec<usize> = (0..specs.len()).collect();
        match self {
            ColumnOrder::Registration => ChunkLayout::new_ordered(chunk_size, specs, &registration),
            ColumnOrder::MinPadding => {
                let mut best = ChunkLayout::new_ordered(chunk_size, specs, &registration)?;
                for descending in [true, false] {
                    let order = by_align(specs, descending);
                    if let Some(l) = ChunkLayout::new_ordered(chunk_size, specs, &order) {
                        if fuller(&l, &best, specs) {
                            best = l.named("min-padding");
                        }
                    }
                }
                Some(best)
            }
            ColumnOrder::First(first) => {
                let mut order: Vec<usize> = Vec::with_capacity(specs.len());
                let chosen = first
                    .iter()
                    .filter_map(|id| ids.iter().position(|i| i == id));
                for c in chosen.chain(by_align(specs, true)) {
                    if !order.contains(&c) {
                        order.push(c);
                    }
                }
                ChunkLayout::new_ordered(chunk_size, specs, &order).map(|l| l.named("chosen-first"))
            }
        }
    }
}

/// Column indices stably sorted by alignment, `descending` or not.
fn by_align(specs: &[ColumnSpec], descending: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..specs.len()).collect();
    if descending {
        order.sort_by_key(|&c| std::cmp::Reverse(specs[c].align));
    } else {
        order.sort_by_key(|&c| specs[c].align);
    }
    order
}

impl ColumnSpec {
    /// The column of component `info`: its size and alignment. (Here rather than in
    /// `chunk/block.rs`, which knows nothing of components.)
    ///
    /// ```
    /// # use ecs_core::{ColumnSpec, Components};
    /// let mut components = Components::new();
    /// let id = components.register::<u64>();
    /// let spec = ColumnSpec::of(components.info(id));
    /// assert_eq!((spec.size, spec.align), (8, align_of::<u64>()));
    /// ```
    pub fn of(info: &ComponentInfo) -> Self {
        Self {
            size: info.size(),
            align: info.align(),
        }
    }
}

/// A world's chunk size policy, per-component-set overrides and column order.
///
/// # Invariants
/// 1. Every override is a valid size (`check_size`). `policy` passed `validate`, except in
///    worlds built by `World::with_test_chunk_size` (a `Fixed` size below 4 KiB).
#[derive(Clone, Debug, Default)]
pub(crate) struct ChunkSizing {
    pub(crate) policy: ChunkPolicy,
    pub(crate) order: ColumnOrder,
    /// Every column array starts at a multiple of this (a power of two; 0 or 1 for none
    /// beyond the types' own alignment).
    pub(crate) column_align: usize,
    pub(crate) overrides: HashMap<Signature, usize, ahash::RandomState>,
}

impl ChunkSizing {
    /// A fixed size, unchecked (test worlds use sizes below 4 KiB).
    pub(crate) fn fixed(bytes: usize) -> Self {
        Self {
            policy: ChunkPolicy::Fixed(bytes),
            ..Self::default()
        }
    }

    /// The chunk size [`ChunkPolicy::FitBatch`] gives a new archetype whose rows take
    /// `row_bytes` when a batch of `rows` creates it, if the world has that policy and the
    /// batch changes anything.
    pub(crate) fn for_batch(
        &self,
        signature: &Signature,
        row_bytes: usize,
        rows: usize,
    ) -> Option<usize> {
        if self.policy != ChunkPolicy::FitBatch || self.overrides.contains_key(signature) {
            return None;
        }
        let bytes = batch_chunk_size(rows.saturating_mul(row_bytes));
        (bytes > CHUNK_SIZE).then_some(bytes)
    }

    /// Sizes `signature`'s archetype `bytes` (already checked) when it is created.
    pub(crate) fn set_override(&mut self, signature: Signature, bytes: usize) {
        self.overrides.insert(signature, bytes);
    }

    /// The layout an archetype with columns `infos` (ascending ids) gets.
    ///
    /// # Errors
    /// If one row does not fit the chunk size chosen (for `MinRows`, the largest).
    pub(crate) fn layout(&self, infos: &[&ComponentInfo]) -> Result<ChunkLayout, RowTooLarge> {
        let specs: Vec<ColumnSpec> = infos
            .iter()
            .map(|i| {
                let spec = ColumnSpec::of(i);
                ColumnSpec {
                    align: spec.align.max(self.column_align),
                    ..spec
                }
            })
            .collect();
        let ids: Vec<ComponentId> = infos.iter().map(|i| i.id()).collect();
        let signature: Signature = ids.iter().copied().collect();
        let too_large = |chunk_size| RowTooLarge {
            components: infos.iter().map(|i| (i.name(), i.size())).collect(),
            chunk_size,
            row_bytes: ChunkLayout::end_of(1, &specs),
        };
        let (sizes, min_rows) = match (self.overrides.get(&signature), self.policy) {
            (Some(&bytes), _) | (None, ChunkPolicy::Fixed(bytes)) => (bytes..=bytes, 1),
            (None, ChunkPolicy::MinRows(n)) => (MIN_CHUNK_SIZE..=MAX_CHUNK_SIZE, n),
            // A batch's size is set as an override when the batch creates the archetype.
            (None, ChunkPolicy::FitBatch) => (CHUNK_SIZE..=CHUNK_SIZE, 1),
        };
        let mut best = None;
        let mut size = *sizes.start();
        while size <= *sizes.end() {
            if let Some(layout) = self.order.layout(size, &specs, &ids) {
                let enough = layout.capacity() >= min_rows;
                best = Some(layout);
                if enough {
                    break;
                }
            }
            size *= 2;
        }
        best.map(|l| l.with_column_align(self.column_align))
            .ok_or_else(|| too_large(*sizes.end()))
    }
}

/// Whether `a` holds more rows than `b`, or as many in fewer padded bytes.
fn fuller(a: &ChunkLayout, b: &ChunkLayout, specs: &[ColumnSpec]) -> bool {
    let end = |l: &ChunkLayout| {
        let placed: Vec<ColumnSpec> = l.placement().iter().map(|&c| specs[c]).collect();
        ChunkLayout::end_of(l.capacity(), &placed)
    };
    (a.capacity(), std::cmp::Reverse(end(a))) > (b.capacity(), std::cmp::Reverse(end(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(sizes_aligns: &[(usize, usize)]) -> Vec<ColumnSpec> {
        sizes_aligns
            .iter()
            .map(|&(size, align)| ColumnSpec { size, align })
            .collect()
    }

    #[test]
    fn min_padding_never_loses_a_row() {
        let cols = specs(&[(1, 1), (16, 16), (3, 1), (64, 64), (4, 4), (36, 4)]);
        let ids: Vec<ComponentId> = Vec::new();
        for size in [4096, 16384, 262_144] {
            let reg = ChunkLayout::new(size, &cols).unwrap();
            let min = ColumnOrder::MinPadding.layout(size, &cols, &ids).unwrap();
            assert!(min.capacity() >= reg.capacity(), "{size}");
        }
    }

    #[test]
    fn invalid_policies_are_refused() {
        assert_eq!(
            ChunkPolicy::Fixed(5000).validate(),
            Err(WorldError::InvalidChunkSize(5000))
        );
        assert_eq!(
            ChunkPolicy::Fixed(2048).validate(),
            Err(WorldError::InvalidChunkSize(2048))
        );
        assert_eq!(
            ChunkPolicy::MinRows(0).validate(),
            Err(WorldError::ZeroMinRows)
        );
    }
}
