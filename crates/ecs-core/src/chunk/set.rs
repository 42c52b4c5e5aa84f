//! The version of a world's chunk set: one counter that changes whenever any archetype's list
//! of chunks changes, so a query can keep a flat list of the chunks it visits (and where their
//! `Chunk` records sit) and know, with one compare per run, that the list still holds.
//!
//! Every archetype of a world holds the same [`ChunkSetVersion`]; the archetype module bumps
//! it at each of the few places that change what a chunk list holds or where it lies:
//! - a chunk joins or leaves an archetype's list (a new or spare chunk pushed, the emptied last
//!   chunk released, `clear`, restore taking the chunks and filling them again); a push may
//!   also move the list's `Chunk` records in memory;
//! - compaction moving chunk blocks and trimming the lists (`relocate_chunks`);
//! - an archetype starting to keep row ticks (`keep_row_ticks`), a per-archetype fact a query's
//!   chunk list records beside each chunk.
//!
//! Rows added to or removed from a chunk that stays in its list, value writes and enable
//! toggles leave it alone: a run reads each chunk's length and bits afresh. So does creating
//! an archetype: it has no chunk until its first row arrives (a push), `Chunk` records live in
//! each archetype's own list, which does not move when the world's list of archetypes does,
//! and a query knows its matched archetypes grew by their count.

use std::sync::atomic::{AtomicU64, Ordering};

/// The counter behind [`World::chunk_set_version`](crate::World::chunk_set_version), shared
/// by the archetypes of one world.
///
/// # Invariant
/// It only grows, and it grows whenever any `Archetype` of the world changes its chunk list
/// (which chunks, in which order, or where the list's records lie), moves a chunk's block, or
/// switches on row ticks. All of that happens under
/// `&mut World`, so a reader holding `&World` sees a value that cannot change while it reads.
#[derive(Debug, Default)]
pub(crate) struct ChunkSetVersion(AtomicU64);

impl ChunkSetVersion {
    /// The current version.
    #[inline]
    pub(crate) fn get(&self) -> u64 {
        // Relaxed: writers hold `&mut World`; whatever handed a reader its `&World` ordered the
        // writes before the read.
        self.0.load(Ordering::Relaxed)
    }

    /// Records a change to the chunk set.
    #[inline]
    pub(crate) fn bump(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use crate::World;

    #[test]
    fn chunk_list_changes_bump_the_version_and_rows_inside_a_chunk_do_not() {
        let mut world = World::with_test_chunk_size(256);
        let first = world.spawn((1u32,));
        let v = world.chunk_set_version();
        // Room in the chunk: rows come and go without a chunk list change.
        let second = world.spawn((2u32,));
        world.despawn(second).unwrap();
        *world.get_mut::<u32>(first).unwrap() = 3;
        assert_eq!(world.chunk_set_version(), v);
        // A second chunk, then its release.
        let many: Vec<_> = world.spawn_batch((0..100u32).map(|n| (n,))).collect();
        let grown = world.chunk_set_version();
        assert_ne!(grown, v);
        for e in many {
            world.despawn(e).unwrap();
        }
        assert_ne!(world.chunk_set_version(), grown);
        // A new archetype's first chunk, compaction and clear each move it.
        let before = world.chunk_set_version();
        world.spawn((1u64,));
        let after_new = world.chunk_set_version();
        assert_ne!(after_new, before);
        world.compact();
        let after_compact = world.chunk_set_version();
        assert_ne!(after_compact, after_new);
        world.clear();
        assert_ne!(world.chunk_set_version(), after_compact);
    }
}
