//! [`WorldMemory`]: a world's heap bytes by kind.

/// Heap bytes of a world by kind, as a counting allocator sees them (to within about 1% for
/// worlds whose chunks dominate; small graph tables are estimated).
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.spawn((1u32,));
/// let mem = world.memory_report().memory;
/// assert_eq!(mem.chunk_bytes, 16 * 1024);
/// assert!(mem.total() > mem.chunk_bytes);
/// ```
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct WorldMemory {
    /// Blocks of chunks in use.
    pub chunk_bytes: usize,
    /// Blocks of spare (empty, kept) chunks.
    pub spare_chunk_bytes: usize,
    /// The rest of the chunk pool's 2 MiB blocks: slots not yet handed out as chunks (see
    /// [`ChunkPool`](crate::ChunkPool)), and the pool's own bookkeeping.
    pub pool_free_bytes: usize,
    /// Chunk records and column tables of all archetypes.
    pub record_bytes: usize,
    /// The entity table.
    pub entity_table_bytes: usize,
    /// The archetype list, edge tables and signature map.
    pub graph_bytes: usize,
    /// Archetypes without entities (their bytes are in the fields above).
    pub empty_archetypes: usize,
    /// Bytes `World::compact` would give back to the system now: spare chunks freed and
    /// chunks packed into the fewest pool blocks (part of the fields above).
    pub compaction_frees_bytes: usize,
    /// Bytes of empty blocks the *process* keeps between worlds
    /// ([`ChunkPool::process_cache_bytes`](crate::ChunkPool::process_cache_bytes)): seen by
    /// the allocator, held by no world, so not in [`WorldMemory::total`] (every world's report
    /// shows the same value). In the JSON; not in the printed table, which stays the same
    /// for alike worlds, nor in equality.
    pub process_cache_bytes: usize,
    /// Bytes of the world's chunk blocks the kernel backs with transparent huge pages
    /// ([`ChunkPool::huge_page_bytes`](crate::ChunkPool::huge_page_bytes): Linux only, from
    /// `/proc/self/smaps`; `None` elsewhere). Part of the chunk fields above, not added to
    /// the total; the kernel's state, so (like `process_cache_bytes`) in the JSON only, not in
    /// the table nor in equality.
    pub huge_page_bytes: Option<usize>,
}

/// Equal when every field of the world's own memory is: `process_cache_bytes` is the process's
/// state (other worlds dropped elsewhere change it), so two alike worlds compare equal.
impl PartialEq for WorldMemory {
    fn eq(&self, other: &Self) -> bool {
        let Self {
            chunk_bytes,
            spare_chunk_bytes,
            pool_free_bytes,
            record_bytes,
            entity_table_bytes,
            graph_bytes,
            empty_archetypes,
            compaction_frees_bytes,
            process_cache_bytes: _,
            huge_page_bytes: _,
        } = *self;
        (
            chunk_bytes,
            spare_chunk_bytes,
            pool_free_bytes,
            record_bytes,
            entity_table_bytes,
            graph_bytes,
            empty_archetypes,
            compaction_frees_bytes,
        ) == (
            other.chunk_bytes,
            other.spare_chunk_bytes,
            other.pool_free_bytes,
            other.record_bytes,
            other.entity_table_bytes,
            other.graph_bytes,
            other.empty_archetypes,
            other.compaction_frees_bytes,
        )
    }
}

impl WorldMemory {
    /// Sum of the byte fields.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let m = World::new().memory_report().memory;
    /// assert_eq!(m.total(), m.chunk_bytes + m.spare_chunk_bytes + m.pool_free_bytes
    ///     + m.record_bytes + m.entity_table_bytes + m.graph_bytes);
    /// ```
    pub fn total(&self) -> usize {
        MEMORY_BYTES.iter().map(|(_, _, bytes)| bytes(self)).sum()
    }
}

/// One row of [`MEMORY_BYTES`].
type MemoryField = (&'static str, &'static str, fn(&WorldMemory) -> usize);

/// The byte fields of [`WorldMemory`]: JSON name, table label, value. [`WorldMemory::total`],
/// the JSON and the table all walk this list, so a new kind of memory is added in one place.
pub(super) const MEMORY_BYTES: [MemoryField; 6] = [
    ("chunk_bytes", "chunks", |m| m.chunk_bytes),
    ("spare_chunk_bytes", "spare chunks", |m| m.spare_chunk_bytes),
    ("pool_free_bytes", "free pool slots", |m| m.pool_free_bytes),
    ("record_bytes", "chunk records", |m| m.record_bytes),
    ("entity_table_bytes", "entity table", |m| {
        m.entity_table_bytes
    }),
    ("graph_bytes", "graph", |m| m.graph_bytes),
];
