//! Larger chunks for an archetype born of one large batch: the one exception to the 16 KiB
//! default.
//!
//! A loop over an archetype pays a fixed cost at every chunk boundary: from memory, each
//! column's stream restarts 16 KiB further on and the CPU's prefetcher loses it
//! (`docs/performance.md`, "What costs the factor from memory"); in cache, each chunk is one
//! more view, stamp and tail of a vectorised loop. Over a million `(Position, Velocity)` rows
//! that is about 1,500 boundaries and most of the distance to a plain `Vec` loop. Archetypes
//! that grow row by row keep 16 KiB chunks, where a big chunk would waste memory and spread a
//! fragmented world's few rows over more pages.
//!
//! The rule (applied by `Archetypes::spawn_batch`): in a world made by [`World::new`], a
//! [`World::spawn_batch`] whose archetype does not exist yet creates it with chunks of
//! [`batch_chunk_size`] of the batch's rows (entity ids included): the fewest chunks of at
//! most 1 MiB that hold the batch, each the smallest whole fraction of a 2 MiB pool block that
//! holds its share (so the block has no unusable tail; such sizes need not be powers of two).
//! 10,000 rows of 108 bytes take two chunks of a third of a block, a million rows of 24 bytes
//! 1 MiB chunks. What is left unused is the last chunk's room, as in a `Vec` that grew.
//! Batches of up to 128 KiB of rows keep 16 KiB chunks. The size is set as
//! [`World::set_chunk_size_for`] would set it, once, at the archetype's creation; archetypes of
//! different sizes mix freely. A world with a chosen policy ([`World::with_chunk_policy`],
//! [`World::set_chunk_policy`]) or size ([`World::with_chunk_size`]) keeps to it;
//! [`World::set_large_batch_chunks`] turns the rule off or on.

use crate::world::World;

#[cfg(doc)]
use crate::chunk_policy::batch_chunk_size;

impl World {
    /// Whether a large [`World::spawn_batch`] creates its archetype with larger chunks
    /// ([`batch_chunk_size`]; see the `batch_chunks` module docs): on in a world made by
    /// [`World::new`], off where a chunk policy or size was chosen.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert!(world.large_batch_chunks());
    /// world.spawn_batch((0..300_000u64).map(|i| (i, i as f64))).for_each(drop);
    /// let arch = world.archetypes().iter().find(|a| a.len() == 300_000).unwrap();
    /// assert_eq!(arch.layout().chunk_size(), 1 << 20); // 7.2 MB of rows
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
}
