//! Larger chunks for an archetype born of one large batch: the one exception to the 16 KiB
//! default.
//!
//! A loop over an archetype pays a fixed cost at every chunk boundary when its rows come from
//! memory: each column's stream restarts 16 KiB further on, and the CPU's prefetcher loses it
//! (`docs/performance.md`, "What costs the factor from memory"). Over a million `(Position,
//! Velocity)` rows that is about 1,500 boundaries and most of the distance to a plain `Vec`
//! loop; 256 KiB chunks cut it sixteen-fold. Small archetypes keep 16 KiB chunks, where a big
//! chunk would waste memory and spread a fragmented world's few rows over more pages.
//!
//! The rule: in a world made by [`World::new`], a [`World::spawn_batch`] whose items would
//! fill at least [`LARGE_BATCH_BYTES`] of rows and whose archetype does not exist yet creates
//! it with [`LARGE_BATCH_CHUNK`] chunks (as [`World::set_chunk_size_for`] would). Nothing
//! else changes: an archetype's chunk size is chosen once, at its creation, and archetypes of
//! different sizes mix freely. A world with a chosen policy ([`World::with_chunk_policy`],
//! [`World::set_chunk_policy`]) or size ([`World::with_chunk_size`]) keeps to it;
//! [`World::set_large_batch_chunks`] turns the rule off or on.

use crate::bundle::{bundle_ids, Bundle};
use crate::entity::Entity;
use crate::signature::Signature;
use crate::world::World;

/// The rows a [`World::spawn_batch`] must bring (entity ids included) for its new archetype to
/// get [`LARGE_BATCH_CHUNK`] chunks: 4 MiB, past the private caches of every CPU this engine
/// was measured on, where rows stream from L3 or memory.
pub const LARGE_BATCH_BYTES: usize = 4 << 20;

/// The chunk size of an archetype created by a large batch: 256 KiB.
pub const LARGE_BATCH_CHUNK: usize = 256 << 10;

impl World {
    /// Whether a large [`World::spawn_batch`] creates its archetype with
    /// [`LARGE_BATCH_CHUNK`] chunks (see the `batch_chunks` module docs): on in a world made by
    /// [`World::new`], off where a chunk policy or size was chosen.
    ///
    /// ```
    /// # use ecs_core::{World, LARGE_BATCH_CHUNK};
    /// let mut world = World::new();
    /// assert!(world.large_batch_chunks());
    /// world.spawn_batch((0..300_000u64).map(|i| (i, i as f64))).for_each(drop);
    /// let arch = world.archetypes().iter().find(|a| a.len() == 300_000).unwrap();
    /// assert_eq!(arch.layout().chunk_size(), LARGE_BATCH_CHUNK);
    /// assert!(!World::with_chunk_size(16 * 1024).unwrap().large_batch_chunks());
    /// ```
    pub fn large_batch_chunks(&self) -> bool {
        self.graph().sizing.large_batches
    }

    /// Turns the large-batch rule on or off for archetypes created from now on.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.set_large_batch_chunks(false);
    /// world.spawn_batch((0..300_000u64).map(|i| (i, i as f64))).for_each(drop);
    /// let arch = world.archetypes().iter().find(|a| a.len() == 300_000).unwrap();
    /// assert_eq!(arch.layout().chunk_size(), 16 * 1024);
    /// ```
    pub fn set_large_batch_chunks(&mut self, on: bool) {
        self.parts_mut().2.sizing.large_batches = on;
    }

    /// Applies the large-batch rule to a batch of at least `rows` `B`s, before it spawns.
    #[inline]
    pub(crate) fn size_for_batch<B: Bundle>(&mut self, rows: usize) {
        // Even rows of the entity id alone would not reach the bound: nothing to look up.
        if !self.graph().sizing.large_batches
            || rows.saturating_mul(size_of::<Entity>()) < LARGE_BATCH_BYTES / 64
        {
            return;
        }
        self.size_large_batch::<B>(rows);
    }

    #[cold]
    fn size_large_batch<B: Bundle>(&mut self, rows: usize) {
        let (_, components, archetypes) = self.parts_mut();
        let ids = bundle_ids::<B>(components);
        let row = size_of::<Entity>()
            + ids
                .iter()
                .map(|&id| components.info(id).size())
                .sum::<usize>();
        if rows.saturating_mul(row) < LARGE_BATCH_BYTES {
            return;
        }
        let signature: Signature = ids.iter().copied().collect();
        if archetypes.find(&signature).is_none() && !archetypes.sizing.has_override(&signature) {
            archetypes.sizing.set_override(signature, LARGE_BATCH_CHUNK);
        }
    }
}
