//! The switch for batch-fitted chunks ([`ChunkPolicy::FitBatch`]), kept as two methods for
//! code that used them before the policy had a name.
//!
//! A world made by [`World::new`] gives every archetype 16 KiB chunks, whatever the order in
//! which its rows arrive: one batch, several, or one row at a time give the same chunks.
//! `FitBatch` is the one policy whose layout depends on history: an archetype that one large
//! [`World::spawn_batch`] creates gets chunks sized to the batch (`batch_chunk_size`), fewer
//! boundaries for a loop to cross, at the price of coarser per-chunk state (the policy's docs).

use crate::chunk::layout::CHUNK_SIZE;
use crate::chunk::policy::ChunkPolicy;
use crate::world::World;

impl World {
    /// Whether a large [`World::spawn_batch`] creates its archetype with chunks sized to the
    /// batch: whether the world's policy is [`ChunkPolicy::FitBatch`]. Never in a world made
    /// by [`World::new`].
    ///
    /// ```
    /// # use ecs_core::{ChunkPolicy, World};
    /// let mut world = World::new();
    /// assert!(!world.large_batch_chunks());
    /// world.spawn_batch((0..300_000u64).map(|i| (i, i as f64))).for_each(drop);
    /// let arch = world.archetypes().iter().find(|a| a.len() == 300_000).unwrap();
    /// assert_eq!(arch.layout().chunk_size(), 16 * 1024);
    /// assert!(World::with_chunk_policy(ChunkPolicy::FitBatch).unwrap().large_batch_chunks());
    /// ```
    pub fn large_batch_chunks(&self) -> bool {
        self.graph().sizing.policy == ChunkPolicy::FitBatch
    }

    /// Turns batch-fitted chunks on ([`ChunkPolicy::FitBatch`]) or off (back to
    /// `Fixed(16 KiB)`) for archetypes created from now on. Turning it off under another
    /// policy changes nothing.
    ///
    /// ```
    /// # use ecs_core::{ChunkPolicy, World};
    /// let mut world = World::new();
    /// world.set_large_batch_chunks(true);
    /// assert_eq!(world.chunk_policy(), ChunkPolicy::FitBatch);
    /// world.spawn_batch((0..300_000u64).map(|i| (i, i as f64))).for_each(drop);
    /// let arch = world.archetypes().iter().find(|a| a.len() == 300_000).unwrap();
    /// assert_eq!(arch.layout().chunk_size(), 1 << 20);
    /// world.set_large_batch_chunks(false);
    /// assert_eq!(world.chunk_policy(), ChunkPolicy::Fixed(16 * 1024));
    /// ```
    pub fn set_large_batch_chunks(&mut self, on: bool) {
        let sizing = &mut self.parts_mut().2.sizing;
        if on {
            sizing.policy = ChunkPolicy::FitBatch;
        } else if sizing.policy == ChunkPolicy::FitBatch {
            sizing.policy = ChunkPolicy::Fixed(CHUNK_SIZE);
        }
    }
}
