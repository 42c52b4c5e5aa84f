//! Snapshot support of an archetype: emptying it without drops, filling it back a chunk at a
//! time, and the enable bits a snapshot records.

use std::ptr::NonNull;

use smallvec::SmallVec;

use super::Archetype;
use crate::chunk::values::ChunkValues;
use crate::chunk::Chunk;
use crate::entity::Entity;

impl Archetype {
    /// Empties the archetype without dropping anything, moving its chunks (emptied) to `into`
    /// for [`Archetype::fill_empty`] to reuse: a restore then neither frees nor allocates.
    /// Values of columns that need a drop are still in the taken chunks' rows: the caller
    /// drops them with [`Archetype::drop_held_values`] or leaks them.
    ///
    /// The chunks go to `into` last one first, so that popping them hands them back in their
    /// old order, each with the number of rows it held: their entity ids stay in place (only
    /// the length is reset), which lets a restore into the same shape skip rows that keep
    /// their entity.
    pub(crate) fn take_chunks(&mut self, into: &mut Vec<EmptiedChunk>) {
        self.len = 0;
        self.rows_epoch += 1;
        self.chunks_changed();
        into.extend(self.chunks.drain(..).rev().map(|mut chunk| {
            let held = chunk.len();
            chunk.set_len(0);
            // No row: the bulk stamp no longer stands for anything (`push_chunk` resets the
            // row ticks when the chunk comes back into use).
            chunk.enable_bits_mut().clear();
            EmptiedChunk { chunk, held }
        }));
    }

    /// Whether some column's values need a drop (so [`Archetype::take_chunks`] leaves
    /// values behind).
    pub(crate) fn needs_drop(&self) -> bool {
        self.columns.iter().any(|c| c.drop.is_some())
    }

    /// Drops the values `chunk`'s rows held when [`Archetype::take_chunks`] took it. If a
    /// `Drop` panics, the chunk's remaining values leak.
    ///
    /// # Safety
    /// `chunk` was taken from this archetype by `take_chunks`, and its values have not been
    /// dropped since (nor will be again).
    pub(crate) unsafe fn drop_held_values(&self, chunk: &EmptiedChunk) {
        for (col, meta) in self.columns.iter().enumerate() {
            let Some(drop) = meta.drop else { continue };
            let base = self.column_base(&chunk.chunk, col);
            for r in 0..chunk.held {
                // SAFETY: rows `0..held` of the chunk held initialised values of the column's
                // type when it was taken and none was dropped since (caller contract); each
                // is dropped once.
                unsafe { drop(base.as_ptr().add(r * meta.size)) }
            }
        }
    }

    /// Fills this empty archetype with `rows` rows, a chunk at a time (for restoring a
    /// snapshot): `fill(ids, held, bases, first, count)` gets the chunk's entity-id column,
    /// how many of its leading entity ids are still those the chunk held before it was emptied
    /// (initialised `Entity` values, readable until overwritten; 0 for a fresh chunk), the base
    /// of each of its component columns (in column order) and the archetype rows
    /// `first..first + count` the chunk takes, and writes rows `0..count` of each. Chunks are
    /// popped from `reuse` (chunks [`Archetype::take_chunks`] took from this archetype, so in
    /// their old order) before the spare or a new one is used.
    ///
    /// # Safety
    /// - The archetype is empty.
    /// - Every chunk in `reuse` was taken from this archetype by `take_chunks`.
    /// - `fill` initialises rows `0..count` of the entity column (rows below `held` may be
    ///   left as they are) and of every column it is handed, with values of each column's
    ///   type, and does not unwind.
    ///
    /// No user code runs if [`Archetype::prepare_restore`] was called for `rows` since the
    /// last chunk push: a reused chunk's old chunk values are swapped for fresh ones made
    /// there and pushed onto `stale`, for the caller to drop once the restore is complete.
    pub(crate) unsafe fn fill_empty(
        &mut self,
        tick: u64,
        rows: usize,
        reuse: &mut Vec<EmptiedChunk>,
        stale: &mut Vec<ChunkValues>,
        mut fill: impl FnMut(NonNull<Entity>, usize, &[NonNull<u8>], usize, usize),
    ) {
        debug_assert!(self.is_empty());
        let cap = self.layout.capacity();
        let mut first = 0;
        while first < rows {
            let count = (rows - first).min(cap);
            // Each chunk pushed here takes fresh values made by `prepare_restore` (one per
            // chunk at most), so `push_chunk` runs no user code; the old ones go to `stale`.
            let mut freshen = |chunk: &mut Chunk, ready: &mut Vec<ChunkValues>| {
                if !chunk.chunk_values().is_fresh() && !self.chunk_kinds.is_empty() {
                    let fresh = ready.pop().expect("made by prepare_restore");
                    stale.push(std::mem::replace(chunk.chunk_values_mut(), fresh));
                }
            };
            let held = match reuse.pop() {
                // An emptied chunk of this archetype: a valid spare (invariants 4 and 5), put
                // in ahead of the current spare so chunk `k` comes back as chunk `k`.
                Some(EmptiedChunk { mut chunk, held }) => {
                    freshen(&mut chunk, &mut self.ready);
                    let spare = self.spare.replace(chunk);
                    self.push_chunk(tick);
                    self.spare = spare;
                    held
                }
                None => {
                    if let Some(spare) = &mut self.spare {
                        freshen(spare, &mut self.ready);
                    }
                    self.push_chunk(tick);
                    0
                }
            };
            let chunk = self.chunks.last().expect("just pushed");
            debug_assert!(chunk.is_empty(), "a pushed chunk is new or the empty spare");
            let bases: SmallVec<[NonNull<u8>; 12]> = (0..self.columns.len())
                .map(|c| self.column_base(chunk, c))
                .collect();
            fill(chunk.entity_ptr(), held, &bases, first, count);
            let chunk = self.chunks.last_mut().expect("just pushed");
            chunk.set_len(count);
            chunk.enable_bits_mut().enable_rows(0, count);
            chunk.mark_structural(tick);
            self.len += count;
            self.rows_epoch += 1;
            first += count;
        }
    }
}

impl EmptiedChunk {
    /// The ids of the rows the chunk held when it was emptied.
    pub(crate) fn held_ids(&self) -> &[Entity] {
        // SAFETY: rows `0..held` of the entity column hold initialised ids (type invariant),
        // and the column has room for `capacity >= held` of them.
        unsafe { std::slice::from_raw_parts(self.chunk.entity_ptr().as_ptr(), self.held) }
    }
}

/// A chunk [`Archetype::take_chunks`] emptied for a snapshot restore.
///
/// # Invariants
/// `chunk` has length 0 and `held <= capacity`; rows `0..held` of its entity column still
/// hold the ids (initialised `Entity` values) of the rows it held when it was taken.
pub(crate) struct EmptiedChunk {
    chunk: Chunk,
    held: usize,
}

/// Snapshot support: appends to `out` the rows of `arch` (numbered from `first_row`, in chunk
/// order) whose enable slot `slot` is off.
pub(crate) fn disabled_rows(arch: &Archetype, slot: usize, first_row: usize, out: &mut Vec<u32>) {
    let mut base = first_row;
    for chunk in arch.chunks() {
        let mask = chunk.enable_bits().get(slot);
        if mask.count() < chunk.len() {
            out.extend(
                (0..chunk.len())
                    .filter(|&r| !mask.get(r))
                    .map(|r| (base + r) as u32),
            );
        }
        base += chunk.len();
    }
}

/// Snapshot support: switches off column `col` (enableable) in the given rows of `arch`.
///
/// # Panics
/// If `col` is not enableable or a row is out of range (a snapshot's rows are checked first).
pub(crate) fn disable_rows(arch: &mut Archetype, col: usize, rows: &[u32]) {
    let slot = arch
        .enable_slot(col)
        .expect("checked while planning: the column is enableable");
    for &row in rows {
        let (_, r) = arch.split_row(row as usize);
        arch.chunk_of_row(row as usize)
            .enable_bits_mut()
            .get_mut(slot)
            .set(r, false);
    }
}
