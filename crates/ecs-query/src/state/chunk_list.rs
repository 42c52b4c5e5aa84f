//! A state's flat list of the chunks its runs visit: one record per chunk of every matched
//! archetype, in archetype then chunk order, kept between runs and checked against the world's
//! [chunk set version](World::chunk_set_version) with one compare.
//!
//! Without it a run reaches each chunk through a chain of dependent loads: the matched id, the
//! archetype (its chunk list and flags), the chunk record, then the rows. In a fragmented
//! world (hundreds of archetypes of a few rows each) that chain, not the rows, is the pass's
//! cost: each link waits for the one before, and none of them lie where the previous
//! archetype's did. A [`ChunkRecord`] holds what the loop needs to start on a chunk (where its
//! `Chunk` record lies, which matched archetype it belongs to, that archetype's flags, where
//! its first touched column starts), so a pass reads one array front to back and asks for the
//! `Chunk` record and the first touched column of the chunk [`AHEAD`] records on while it
//! works on this one: when the loop gets there, they are in the first-level cache.
//!
//! A record points into its archetype's chunk list with the list's own provenance
//! ([`Archetype::chunks_ptr`]), so it stays readable across `&mut World` calls that borrow
//! chunks mutably but leave the lists alone; every call that changes a list bumps the version,
//! and a list that is not current is never read through. (Reaching each chunk through
//! `archetypes[a].chunks()[c]` instead puts the archetype's line back in the chain, and a
//! pass over many one-chunk archetypes is slower for it: docs/performance.md, "Design
//! measurements".)
//!
//! The list is built by [`QueryState::start_run`](super::QueryState::start_run) (a `&mut`
//! step) once some loop has asked for it and the version moved; a loop that finds it stale
//! (a run built by hand after the world changed) builds a scratch one for itself. Building is
//! O(matched chunks) and touches no row.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

use ecs_core::{prefetch_line, Archetype, Chunk, World};

/// How many records ahead a loop asks for the next chunk's `Chunk` record and first column:
/// far enough for a line from L2 or L3 to arrive while the chunks between are worked on (a
/// 20-row chunk takes a few nanoseconds), near enough not to evict what it asked for; 4 did
/// best of the distances tried (docs/performance.md, "Design measurements").
pub(crate) const AHEAD: usize = 4;

/// One chunk of a matched archetype, as a run starts on it.
///
/// # Invariant
/// While the [`ChunkList`] holding it is current for its world, `chunk` points at a `Chunk`
/// record in the chunk list of the state's `k`-th matched archetype, with that list's
/// provenance ([`Archetype::chunks_ptr`]), and the flags are that archetype's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChunkRecord {
    chunk: NonNull<Chunk>,
    /// Where the first column the query touches starts in the chunk (the entity column when it
    /// touches none): a prefetch target only.
    first_column: usize,
    /// The archetype's index in the state's matched list.
    k: u32,
    flags: u32,
}

impl ChunkRecord {
    /// The archetype has no enableable column (no row can be dropped by an enable bit).
    const NO_ENABLE_BITS: u32 = 1;
    /// The archetype keeps row ticks (`Archetype::keeps_row_ticks`).
    const MARKS: u32 = 2;
    /// The next record is this archetype's next chunk.
    const NEXT_IN_ARCHETYPE: u32 = 4;
    /// The touched bytes of the archetype's chunks, full, exceed the L2 cache: prefetch the
    /// next chunk's columns at the start of this one (see `QueryState::prefetch_next`).
    const PREFETCH_NEXT: u32 = 8;

    /// The chunk.
    ///
    /// # Safety
    /// The list holding this record is current for `world` ([`ChunkList::get`] said so, or it
    /// was just built from `world`), and `'w` is no longer than that borrow of `world`.
    #[inline(always)]
    pub(crate) unsafe fn chunk<'w>(&self, world: &'w World) -> &'w Chunk {
        let _ = world;
        // SAFETY: a current list's records point at live `Chunk`s of `world`'s chunk lists,
        // with the lists' provenance (invariant), and the lists stay as they are while the
        // world is borrowed (caller): `Archetype::chunks_ptr`'s contract.
        unsafe { self.chunk.as_ref() }
    }

    /// The index of the chunk's archetype in the state's matched list.
    #[inline(always)]
    pub(crate) fn k(&self) -> usize {
        self.k as usize
    }

    /// Whether no row of the chunk can be dropped by an enable bit.
    #[inline(always)]
    pub(crate) fn no_enable_bits(&self) -> bool {
        self.flags & Self::NO_ENABLE_BITS != 0
    }

    /// Whether writes to the chunk mark their rows (the archetype keeps row ticks).
    #[inline(always)]
    pub(crate) fn marks(&self) -> bool {
        self.flags & Self::MARKS != 0
    }

    /// Whether the next record is the next chunk of this one's archetype.
    #[inline(always)]
    pub(crate) fn next_in_archetype(&self) -> bool {
        self.flags & Self::NEXT_IN_ARCHETYPE != 0
    }

    /// Whether a loop asks for the next chunk's columns when it starts on this one.
    #[inline(always)]
    pub(crate) fn prefetch_next(&self) -> bool {
        self.flags & Self::PREFETCH_NEXT != 0
    }

    /// Asks for what a loop reads to start on this chunk: the first line of its `Chunk` record
    /// (block address, length, the first columns' ticks) and the first two lines of its first
    /// touched column. Hints only, safe for any record, current or not.
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        prefetch_line(self.chunk.as_ptr().cast());
        let column: *const u8 = std::ptr::without_provenance(self.first_column);
        prefetch_line(column);
        prefetch_line(column.wrapping_add(64));
    }
}

/// The chunk list of one state (see the module docs).
///
/// # Invariant
/// When `built` is `Some((version, matched))`, `records` were built from the state's first
/// `matched` matched archetypes in the state's world while its chunk set version was
/// `version`; the list is *current* for that world while both still hold. Records of a list
/// that is not current are never dereferenced.
#[derive(Debug, Default)]
pub(crate) struct ChunkList {
    records: Vec<ChunkRecord>,
    built: Option<(u64, usize)>,
    /// Some loop asked for the list: `refresh` keeps it current from then on.
    wanted: AtomicBool,
}

// SAFETY: the records' pointers are plain addresses while the list is sent or shared; they
// are only dereferenced by a loop that holds a borrow of the world they point into and has
// checked that the list is current for it (`ChunkRecord::chunk`'s contract), so no thread
// reaches a chunk through the list that it could not reach through its own borrow of the world.
unsafe impl Send for ChunkList {}
// SAFETY: as for `Send`; through `&ChunkList` the records are only read, and `wanted` is an
// atomic.
unsafe impl Sync for ChunkList {}

/// What a state tells its chunk list about one matched archetype.
pub(crate) struct MatchedArchetype<'a> {
    pub archetype: &'a Archetype,
    /// Byte offsets and sizes of the columns the query touches (`(0, 0)` where absent).
    pub touched: &'a [(u32, u32)],
    /// The touched bytes above which the next chunk's columns are prefetched.
    pub prefetch_above: usize,
}

impl ChunkList {
    /// The records, if the list is current for the state's world, whose chunk set version is
    /// `version`, with `matched` matched archetypes; otherwise `None`, and the list is marked
    /// wanted so that the next `refresh` builds it.
    #[inline]
    pub(crate) fn get(&self, version: u64, matched: usize) -> Option<&[ChunkRecord]> {
        if self.built == Some((version, matched)) {
            return Some(&self.records);
        }
        self.wanted.store(true, Ordering::Relaxed);
        None
    }

    /// Rebuilds the list if a loop asked for it and it is not current for the state's world,
    /// whose chunk set version is `version` and whose matched archetypes are `matched`.
    pub(crate) fn refresh<'a>(
        &mut self,
        version: u64,
        matched: impl ExactSizeIterator<Item = MatchedArchetype<'a>>,
    ) {
        let key = (version, matched.len());
        if !*self.wanted.get_mut() || self.built == Some(key) {
            return;
        }
        self.records.clear();
        build(matched, &mut self.records);
        self.built = Some(key);
    }
}

/// Appends the records of the chunks of `matched`, in order.
pub(crate) fn build<'a>(
    matched: impl Iterator<Item = MatchedArchetype<'a>>,
    records: &mut Vec<ChunkRecord>,
) {
    for (k, m) in matched.enumerate() {
        let arch = m.archetype;
        let chunks = arch.chunks();
        let row_bytes: usize = m.touched.iter().map(|&(_, size)| size as usize).sum();
        let mut flags = 0;
        if arch.enableable_columns().is_empty() {
            flags |= ChunkRecord::NO_ENABLE_BITS;
        }
        if arch.keeps_row_ticks() {
            flags |= ChunkRecord::MARKS;
        }
        // By the chunks' room, not the rows: rows come and go inside a chunk without a version
        // change, and a kept list must stay what a fresh build gives.
        if chunks.len() * arch.layout().capacity() * row_bytes > m.prefetch_above {
            flags |= ChunkRecord::PREFETCH_NEXT;
        }
        let first = m
            .touched
            .iter()
            .find(|&&(_, size)| size > 0)
            .map_or(0, |&(offset, _)| offset as usize);
        let k = u32::try_from(k).expect("fewer than 2^32 matched archetypes");
        let base = arch.chunks_ptr();
        records.extend(chunks.iter().enumerate().map(|(i, chunk)| {
            let next = if i + 1 < chunks.len() {
                ChunkRecord::NEXT_IN_ARCHETYPE
            } else {
                0
            };
            ChunkRecord {
                // The list's own provenance, not `chunk`'s (a shared borrow, which a later
                // `&mut` borrow of the chunk would end): `Archetype::chunks_ptr`.
                chunk: NonNull::new(base.wrapping_add(i).cast_mut()).expect("a listed chunk"),
                first_column: chunk.column_at(first).addr(),
                k,
                flags: flags | next,
            }
        }));
    }
}
