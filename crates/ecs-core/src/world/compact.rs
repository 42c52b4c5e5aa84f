//! [`World::compact`]: giving back the memory a shrunken world no longer needs.
//!
//! Archetypes are dense by construction (`Archetype` invariant 3): despawn and row moves fill
//! each hole with the archetype's last row, so every chunk but the last is always full and
//! there are no partly filled chunks to merge, and no row ever needs to move here. What a
//! world that shrank does keep is memory around those rows:
//!
//! - one *spare* chunk per archetype that ever emptied a chunk (kept so an entity bouncing
//!   across a chunk boundary does not allocate each time);
//! - chunks spread thinly over the pool's 2 MiB blocks: an archetype frees chunks from its
//!   end, so when archetypes carved their chunks in turns, every block ends up partly used
//!   and none can be returned;
//! - the cached graph edges out of archetypes that no longer hold an entity.
//!
//! Compaction frees every spare chunk, moves chunks out of the blocks the pool chooses to
//! empty (a byte copy of the whole chunk into a slot of a fuller block, see
//! `ChunkPool::begin_compaction`), returns every emptied block to the system, trims each
//! archetype's chunk list, and drops the edge caches of empty archetypes.
//!
//! # What stays valid
//! Entity ids, locations (archetype and row) and component values do not change; nor do
//! enable bits and change ticks, which live beside the block, not in it. Archetype ids stay:
//! an empty archetype keeps its id, signature and column table (a few hundred bytes), so a
//! [`QueryState`](../ecs_query/struct.QueryState.html) or the world's query cache, which
//! remember matched archetypes by id and column offsets, keep working unchanged. Reusing an
//! empty archetype's id for another signature would silently break such a state (it never
//! re-tests an archetype it has seen), and the world cannot know which states are alive, so
//! archetypes are reclaimed by freeing their memory, not their ids. Chunk addresses do
//! change, which is why compaction needs `&mut World`: no borrow of a chunk can be alive.
//!
//! Cost: O(archetypes + chunks + blocks) plus one chunk-sized copy per moved chunk.

use crate::archetype::graph::Archetypes;
use crate::archetype::Archetype;
use crate::world::World;

/// What [`World::compact`] did.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let ids: Vec<_> = world.spawn_batch((0..10_000u32).map(|i| (i,))).collect();
/// for e in &ids[1..] {
///     world.despawn(*e).unwrap();
/// }
/// let report = world.compact();
/// assert_eq!(report.chunks_after, 1);
/// assert!(report.chunks_before > report.chunks_after);
/// assert_eq!(world.get::<u32>(ids[0]), Ok(&0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactReport {
    /// Chunks the archetypes held before, spare chunks included.
    pub chunks_before: usize,
    /// Chunks they hold after: exactly the chunks with rows.
    pub chunks_after: usize,
    /// Spare (empty) chunks freed.
    pub spare_chunks_freed: usize,
    /// Chunks whose bytes moved to another block so that their old block could be freed.
    pub chunks_moved: usize,
    /// Pool blocks before.
    pub blocks_before: usize,
    /// Pool blocks after.
    pub blocks_after: usize,
    /// Bytes of the blocks the world gave up: `bytes_returned + bytes_cached`.
    pub bytes_freed: usize,
    /// Of those, the bytes given back to the system (they left the process).
    pub bytes_returned: usize,
    /// Of those, the bytes kept in the process's block cache for the next world
    /// ([`ChunkPool::process_cache_bytes`](crate::ChunkPool::process_cache_bytes); drain it
    /// with [`ChunkPool::drain_process_cache`](crate::ChunkPool::drain_process_cache)).
    pub bytes_cached: usize,
    /// Archetypes without entities whose spare chunk or edge cache was freed (their ids stay
    /// valid; see the module docs).
    pub archetypes_reclaimed: usize,
}

impl World {
    /// Frees the memory the world holds beyond its rows: spare chunks, the pool blocks its
    /// chunks are thinly spread over (chunks move into fuller blocks, and emptied blocks go
    /// back to the system), and the edge caches of archetypes with no entity.
    ///
    /// Entity ids, component values, enable bits, change ticks, archetype ids, query states
    /// and the query cache all stay valid. Chunks are dense already (each archetype has at
    /// most one chunk that is not full), so no row moves.
    ///
    /// Cost: O(archetypes + chunks + blocks), plus a chunk-sized copy per chunk moved.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::with_chunk_size(4096).unwrap();
    /// // Two archetypes carving chunks in turns share every block.
    /// let mut keep = Vec::new();
    /// for i in 0..20_000u32 {
    ///     keep.push(world.spawn((i,)));
    ///     let gone = world.spawn((i, 0u8));
    ///     world.despawn(gone).unwrap();
    /// }
    /// let report = world.compact();
    /// assert!(report.blocks_after <= report.blocks_before);
    /// assert_eq!(world.get::<u32>(keep[123]), Ok(&123));
    /// world.check_invariants();
    /// ```
    pub fn compact(&mut self) -> CompactReport {
        self.flush();
        let (_, _, graph) = self.parts_mut();
        let before = graph.chunk_pool().stats();
        let chunks_before = held_chunks(graph);
        let mut spare_chunks_freed = 0;
        let mut archetypes_reclaimed = 0;
        for index in 0..graph.as_slice().len() {
            let arch = &mut graph.as_mut_slice()[index];
            let spare = arch.release_spare();
            spare_chunks_freed += usize::from(spare);
            if arch.is_empty() {
                let id = arch.id();
                if graph.forget_edges(id) || spare {
                    archetypes_reclaimed += 1;
                }
            }
        }
        graph.chunk_pool().begin_compaction();
        let chunks_moved = graph
            .as_mut_slice()
            .iter_mut()
            .map(Archetype::relocate_chunks)
            .sum();
        graph.chunk_pool().end_compaction();
        let after = graph.chunk_pool().stats();
        CompactReport {
            chunks_before,
            chunks_after: held_chunks(graph),
            spare_chunks_freed,
            chunks_moved,
            blocks_before: before.blocks,
            blocks_after: after.blocks,
            bytes_freed: before.block_bytes.saturating_sub(after.block_bytes),
            bytes_returned: after.bytes_returned - before.bytes_returned,
            bytes_cached: after.bytes_cached - before.bytes_cached,
            archetypes_reclaimed,
        }
    }
}

/// Chunks the archetypes hold, spares included.
fn held_chunks(graph: &Archetypes) -> usize {
    graph
        .as_slice()
        .iter()
        .map(|a| a.chunks().len() + a.spare_chunks())
        .sum()
}

#[cfg(test)]
mod tests {
    use crate::World;

    #[test]
    fn an_empty_world_compacts_to_nothing() {
        let mut world = World::with_test_chunk_size(256);
        let e = world.spawn((1u32,));
        world.despawn(e).unwrap();
        let report = world.compact();
        assert_eq!(report.chunks_after, 0);
        assert_eq!(report.spare_chunks_freed, 1);
        // `(u32,)`, and the empty archetype whose edge `spawn` took.
        assert_eq!(report.archetypes_reclaimed, 2);
        assert_eq!(world.chunk_pool().stats().blocks, 0);
        world.check_invariants();
        // The archetype is still usable afterwards.
        let e = world.spawn((2u32,));
        assert_eq!(world.get::<u32>(e), Ok(&2));
        world.check_invariants();
    }
}
