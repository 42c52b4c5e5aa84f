//! The row move: the one place a row's values, row ticks, enable bits and entity id leave an
//! archetype, and the one place the hole they leave is filled.
//!
//! Every structural change that takes a row out of an archetype comes through here:
//! [`move_row`] for a row that goes to another archetype (insert, remove, and so take), and
//! [`Archetype::despawn_row`] for a row that is dropped (despawn, take). Both close the hole with
//! [`Archetype::close_hole`], and both fix the entity table before any user code (a `Drop`) can
//! run, so a panic there leaves a world whose every entity points at its row.
//!
//! A snapshot restore fills emptied archetypes a chunk at a time instead
//! ([`Archetype::fill_empty`]): it moves no row, so it needs none of this.

use super::graph::REMOVED;
use super::rows::{copy_value, RowAddr};
use super::Archetype;
use crate::chunk::{retire_row, Chunk};
use crate::entity::{Entities, Entity, Location};

/// What becomes of the values in the hole [`Archetype::close_hole`] fills.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Hole {
    /// They were moved out already: the last row is copied over them.
    MovedOut,
    /// They are still there: they swap with the last row and wait just past the end for
    /// [`Archetype::drop_detached`].
    Detached,
}

impl Archetype {
    /// Fills the hole at `hole` with the last row (values, row ticks, enable bits, entity id)
    /// and shortens the archetype by one row. Returns the entity that moved into the hole, and
    /// whether the last chunk is now empty.
    ///
    /// An emptied last chunk is not released here: releasing drops a chunk's values (user
    /// code), so the caller does it ([`Archetype::release_last_chunk`]) once the entity table
    /// agrees with the rows again.
    ///
    /// # Safety
    /// `hole` is an [`Archetype::addr`] of a row below `len`, with no chunk released since. With
    /// [`Hole::MovedOut`], every value of that row has been moved out; with
    /// [`Hole::Detached`], the next call on this archetype is `drop_detached`.
    #[inline(always)]
    unsafe fn close_hole(
        &mut self,
        hole: RowAddr,
        tick: u64,
        values: Hole,
    ) -> (Option<Entity>, bool) {
        debug_assert!(self.holds_addr(hole) && hole.row < self.len, "stale hole");
        let last = self.last_addr();
        if !self.enable_cols.is_empty() {
            // The hole's bits go; the last row's move into it.
            retire_row(&mut self.chunks, (last.chunk, last.r), (hole.chunk, hole.r));
        }
        let moved = if hole.row != last.row {
            debug_assert!(self.holds_addr(last) && self.holds_addr(hole));
            // One pass over the column table, with each cell's address computed as `cell_at`
            // does (`offset + r * size`), so the loop reads each column's entry once.
            for meta in self.columns.iter() {
                let size = meta.size;
                // SAFETY: both rows are below `len` and distinct (`holds_addr`, checked in debug
                // builds), so `offset + r * size` lies inside column `meta` of their chunks
                // (`ChunkLayout` invariant 1); the cells are initialised (the hole's only if
                // `Detached`; a moved-out hole is overwritten, never read) and do not overlap;
                // `last` is forgotten or detached right after. A detached value without a
                // `Drop` is never read again (`drop_detached` skips its column), so it is
                // overwritten like a moved-out one rather than swapped past the end.
                unsafe {
                    let from = last.data.as_ptr().add(meta.offset + last.r * size);
                    let to = hole.data.as_ptr().add(meta.offset + hole.r * size);
                    if values == Hole::Detached && meta.drop.is_some() {
                        std::ptr::swap_nonoverlapping(from, to, size);
                    } else {
                        copy_value(from, to, size);
                    }
                }
            }
            self.move_marks(last, hole, tick);
            Some(self.move_entity_id(last, hole, tick))
        } else {
            None
        };
        self.len -= 1;
        self.rows_epoch += 1;
        self.chunks[last.chunk].set_len(last.r);
        (moved, last.r == 0)
    }

    /// Despawns the entity at archetype row `row`: the last row fills its place, `entities`
    /// learns where that row went, and only then are the despawned values dropped (user code),
    /// so a panicking `Drop` leaves the entity table consistent (the rest of that row leaks).
    /// The entity's own slot is the caller's to free.
    ///
    /// # Panics
    /// If `row` is not a row of this archetype; or passes on a panic of a component's `Drop`.
    pub(crate) fn despawn_row(&mut self, row: usize, entities: &mut Entities, tick: u64) {
        assert!(row < self.len, "row {row} of {:?} is not live", self.id);
        let hole = self.addr(row);
        // SAFETY: `hole` was just computed for a live row; `drop_detached` follows.
        let (filler, _) = unsafe { self.close_hole(hole, tick, Hole::Detached) };
        if let Some(filler) = filler {
            entities.set_location(filler.index(), self.location_of(row));
        }
        // SAFETY: called right after `close_hole(.., Detached)`.
        unsafe { self.drop_detached() };
    }

    /// Drops the values [`Archetype::close_hole`] detached past the end, and releases an
    /// emptied last chunk (also if a `Drop` panics; the row's remaining values then leak).
    ///
    /// # Safety
    /// Called once, right after `close_hole(.., Hole::Detached)`.
    unsafe fn drop_detached(&mut self) {
        debug_assert!(
            self.chunks
                .last()
                .is_some_and(|c| c.len() < self.layout.capacity()),
            "no detached row past the end of the last chunk"
        );
        let row = self.len;
        let guard = ReleaseEmptyTail(self);
        for col in 0..guard.0.columns.len() {
            if let Some(drop) = guard.0.columns[col].drop {
                // SAFETY: `close_hole` left row `len` initialised (caller contract), in the
                // still-allocated last chunk (not released before this guard drops); each
                // value is dropped once.
                unsafe { drop(guard.0.cell(row, col).as_ptr()) }
            }
        }
    }

    /// The entity table's record of archetype row `row`.
    #[inline]
    fn location_of(&self, row: usize) -> Location {
        Location {
            archetype: self.id,
            row: row as u32,
        }
    }

    /// Copies the entity id of row `from` to row `to`, returning it.
    fn move_entity_id(&mut self, from: RowAddr, to: RowAddr, tick: u64) -> Entity {
        // SAFETY: both addresses come from `addr` / `last_addr` of rows below `len` with no chunk
        // released since, so each points into an initialised row of its chunk's entity column
        // (at offset 0), and `to` is writable through `&mut self`.
        let entity = unsafe {
            let entity = from.data.cast::<Entity>().add(from.r).read();
            to.data.cast::<Entity>().add(to.r).write(entity);
            entity
        };
        self.chunks[to.chunk].mark_structural(tick);
        entity
    }

    /// Restores invariant 3 when the last chunk became empty: it becomes the spare, or is freed
    /// if there is one (dropping its chunk values: user code).
    #[inline]
    pub(super) fn release_empty_tail(&mut self) {
        if self.chunks.last().is_some_and(Chunk::is_empty) {
            self.release_last_chunk();
        }
    }

    /// Releases the last chunk, which is empty: it becomes the spare, or is freed if there is
    /// one (dropping its chunk values: user code).
    #[cold]
    pub(super) fn release_last_chunk(&mut self) {
        debug_assert!(self.chunks.last().is_some_and(Chunk::is_empty));
        let chunk = self.chunks.pop();
        self.chunks_changed();
        if self.spare.is_none() {
            self.spare = chunk;
        }
    }
}

/// Moves `entity`'s row, at `from` of `src`, to a new last row of `dst`: the values of the columns both
/// archetypes have, their row ticks and the enable bits are carried along `src_to_dst`, then
/// `finish(src, from, dst, to)` moves the values of the columns they do not share (out of the
/// source row for columns `dst` lacks, into the new row for columns `src` lacks), the last row
/// of `src` fills the hole, and `entities` is told where both rows went. Returns the new row's
/// address and what `finish` returned.
///
/// Only once the entity table agrees with the rows is an emptied source chunk released (its
/// chunk values dropped: user code). The new row is pushed first, so a panic there (chunk
/// values of a new chunk) changes nothing.
///
/// # Safety
/// - `from` is an [`Archetype::addr`] of a live row of `src`, with no chunk released since,
///   and `entity` is the entity of that row.
/// - `src_to_dst[c]` is the column of `dst` holding the type of `src` column `c`, or
///   [`REMOVED`] if `dst` lacks it; no two entries name the same column.
/// - `finish` moves every value of a `REMOVED` column out of the source row, initialises every
///   column of the new row that no entry names, and does not unwind.
#[inline(always)]
#[expect(
    clippy::too_many_arguments,
    reason = "a tuple of (entity, row) went through the stack and stalled store forwarding on \
              every insert and remove (add_remove 1.2x slower); scalars stay in registers"
)]
pub(crate) unsafe fn move_row<R>(
    src: &mut Archetype,
    entity: Entity,
    from: RowAddr,
    dst: &mut Archetype,
    src_to_dst: &[u32],
    entities: &mut Entities,
    tick: u64,
    finish: impl FnOnce(&Archetype, &RowAddr, &mut Archetype, &RowAddr) -> R,
) -> (RowAddr, R) {
    debug_assert_eq!(src_to_dst.len(), src.columns.len());
    debug_assert!(
        src.holds_addr(from) && from.row < src.len,
        "stale source row"
    );
    debug_assert_eq!(src.entity_at(from), entity);
    let to = dst.push_row(entity, tick);
    for (c, &d) in src_to_dst.iter().enumerate() {
        if d != REMOVED {
            debug_assert_eq!(src.columns[c].id, dst.columns[d as usize].id);
            // SAFETY: `from` is a live row of `src` and `to` was just pushed; `d` holds the
            // same type as `c` (caller contract), so the sizes match; two archetypes never
            // share a chunk, so the cells do not overlap.
            unsafe {
                let a = src.cell_at(from, c);
                let b = dst.cell_at(to, d as usize);
                copy_value(a.as_ptr(), b.as_ptr(), src.columns[c].size);
            }
        }
    }
    let kept = src_to_dst.iter().enumerate().filter(|(_, &d)| d != REMOVED);
    Archetype::carry_marks(
        src,
        from,
        dst,
        to,
        kept.map(|(c, &d)| (c, d as usize)),
        tick,
    );
    carry_row_bits(src, from.row, dst, to.row);
    // By reference: a 32-byte address passed by value went through the stack, and the wide
    // reload of its piecewise stores stalled store forwarding on every insert and remove.
    let finished = finish(src, &from, dst, &to);
    // SAFETY: kept values were copied to `dst` above and `finish` moved out the others
    // (caller contract), so the source row is moved-out; `from` is still current (only `dst`
    // grew).
    let (filler, emptied) = unsafe { src.close_hole(from, tick, Hole::MovedOut) };
    entities.set_location(entity.index(), dst.location_of(to.row));
    if let Some(filler) = filler {
        entities.set_location(filler.index(), src.location_of(from.row));
    }
    if emptied {
        src.release_last_chunk();
    }
    (to, finished)
}

/// Releases an emptied trailing chunk when dropped, also while unwinding.
struct ReleaseEmptyTail<'a>(&'a mut Archetype);

impl Drop for ReleaseEmptyTail<'_> {
    fn drop(&mut self) {
        self.0.release_empty_tail();
    }
}

/// Copies the enable bit of every enableable column that row `from` of `src` and row `to`
/// of `dst` share: a row moving to another archetype keeps its bits (`to` was just pushed,
/// enabled).
#[inline(always)]
fn carry_row_bits(src: &Archetype, from: usize, dst: &mut Archetype, to: usize) {
    // Checked here, inlined into every move, so archetypes without enableable types (most)
    // pay two loads and no call.
    if dst.enable_ids.is_empty() || src.enable_ids.is_empty() {
        return;
    }
    carry_enable_bits(src, from, dst, to);
}

/// The body of [`carry_row_bits`] for archetypes that both keep enable bits.
#[inline(never)]
fn carry_enable_bits(src: &Archetype, from: usize, dst: &mut Archetype, to: usize) {
    let (sc, sr) = src.split_row(from);
    let (dc, dr) = dst.split_row(to);
    let src_chunk = &src.chunks[sc];
    for d in 0..dst.enable_ids.len() {
        if let Ok(s) = src.enable_ids.binary_search(&dst.enable_ids[d]) {
            let bit = src_chunk.enable_bits().get(s).get(sr);
            dst.chunks[dc].enable_bits_mut().get_mut(d).set(dr, bit);
        }
    }
}
