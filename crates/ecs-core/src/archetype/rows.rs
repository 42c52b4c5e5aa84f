//! Row operations of an archetype: appending rows, filling the hole a removed row leaves, and
//! the addresses and cell pointers those moves work with.

use std::ptr::NonNull;

use smallvec::SmallVec;

use super::{Archetype, MAX_BUNDLE};
use crate::chunk::enable::ChunkMasks;
use crate::chunk::Chunk;
use crate::component::bundle::Bundle;
use crate::entity::Entity;
use crate::ids::RowTicks;

impl Archetype {
    /// Where archetype row `row` lives: its chunk's base address and its row in that chunk.
    /// Computing this once per row saves a division per column in row moves.
    ///
    /// # Panics
    /// If `row` is past the last chunk.
    #[inline]
    pub(crate) fn addr(&self, row: usize) -> RowAddr {
        let (chunk, r) = self.split_row(row);
        RowAddr {
            row,
            chunk,
            data: self.chunks[chunk].data(),
            r,
        }
    }

    /// Whether `addr` (from [`Archetype::addr`] of this archetype) still names one of its
    /// chunks at the base address it recorded, and a row within capacity: what `Chunk`
    /// invariant 4 promises until that chunk is released. For debug assertions.
    #[inline]
    pub(crate) fn holds_addr(&self, addr: RowAddr) -> bool {
        addr.r < self.layout.capacity()
            && self
                .chunks
                .get(addr.chunk)
                .is_some_and(|chunk| chunk.data() == addr.data)
    }

    /// The entity id stored at `addr` (from [`Archetype::addr`] of this archetype).
    ///
    /// # Panics
    /// If `addr` is past the rows of its chunk.
    #[inline]
    pub(crate) fn entity_at(&self, addr: RowAddr) -> Entity {
        self.chunks[addr.chunk].entities()[addr.r]
    }

    /// [`Archetype::addr`] of the last row, without a division.
    ///
    /// # Panics
    /// If the archetype is empty.
    #[inline]
    pub(crate) fn last_addr(&self) -> RowAddr {
        let chunk = self.chunks.len() - 1;
        RowAddr {
            row: self.len - 1,
            chunk,
            data: self.chunks[chunk].data(),
            r: self.chunks[chunk].len() - 1,
        }
    }

    /// Pointer to the value of column `col` at `addr`.
    ///
    /// # Safety
    /// `addr` came from [`Archetype::addr`] of this archetype with no chunk released since,
    /// and `col` is in range.
    #[inline(always)]
    pub(crate) unsafe fn cell_at(&self, addr: RowAddr, col: usize) -> NonNull<u8> {
        debug_assert!(col < self.columns.len(), "column {col} out of range");
        debug_assert!(self.holds_addr(addr), "stale row address");
        // SAFETY: `col < columns.len()` (caller contract, checked in debug builds).
        let meta = unsafe { self.columns.get_unchecked(col) };
        let offset = meta.offset + addr.r * meta.size;
        // SAFETY: `addr.r < capacity` (from `split_row`), so the offset stays inside column
        // `col` of that chunk (`ChunkLayout` invariant 1); the chunk is still allocated (no
        // chunk released since: caller contract) at the address `addr` recorded (`Chunk`
        // invariant 4), both checked by `holds_addr` in debug builds.
        unsafe { addr.data.add(offset) }
    }

    /// Pointers to the cells of `cols` (at most [`MAX_BUNDLE`]; wider bundles go through
    /// [`Archetype::with_cells`]) in the row at `addr`, in order: a bundle's cells, without a
    /// heap or `SmallVec` in the way.
    ///
    /// # Safety
    /// As [`Archetype::cell_at`], for every column in `cols`.
    #[inline(always)]
    pub(crate) unsafe fn cells(&self, addr: RowAddr, cols: &[u32]) -> RowCells {
        debug_assert!(self.holds_addr(addr), "stale row address");
        assert!(
            cols.len() <= MAX_BUNDLE,
            "a bundle of more than {MAX_BUNDLE} components needs `with_cells`"
        );
        let mut ptrs = [NonNull::dangling(); MAX_BUNDLE];
        for (p, &c) in ptrs.iter_mut().zip(cols) {
            // SAFETY: `cells`' contract is `cell_at`'s for every column of `cols`, `c` among them.
            *p = unsafe { self.cell_at(addr, c as usize) };
        }
        RowCells {
            ptrs,
            len: cols.len(),
        }
    }

    /// Calls `f` with the cells of `cols` in the row at `addr` (as [`Archetype::cells`]);
    /// `wide` (a bundle's `COMPONENT_COUNT > MAX_BUNDLE`, a constant) takes a heap list
    /// instead of the stack array, so the common case compiles to exactly `cells`.
    ///
    /// # Safety
    /// As [`Archetype::cells`].
    #[inline(always)]
    pub(crate) unsafe fn with_cells<R>(
        &self,
        addr: RowAddr,
        cols: &[u32],
        wide: bool,
        f: impl FnOnce(&[NonNull<u8>]) -> R,
    ) -> R {
        if wide {
            // SAFETY: `with_cells`' contract is `cells_on_heap`'s.
            f(&unsafe { self.cells_on_heap(addr, cols) })
        } else {
            // SAFETY: `with_cells`' contract is `cells`'.
            f(&unsafe { self.cells(addr, cols) })
        }
    }

    /// [`Archetype::cells`] for a bundle of more than [`MAX_BUNDLE`] components.
    ///
    /// # Safety
    /// As [`Archetype::cells`].
    #[cold]
    #[inline(never)]
    unsafe fn cells_on_heap(&self, addr: RowAddr, cols: &[u32]) -> Vec<NonNull<u8>> {
        cols.iter()
            // SAFETY: `cells`' contract is `cell_at`'s for every column of `cols`.
            .map(|&c| unsafe { self.cell_at(addr, c as usize) })
            .collect()
    }

    /// Pointer to the value of column `col` at archetype row `row`.
    ///
    /// # Safety
    /// `row < self.len` (or the row being built by [`Archetype::push_row`]), `col` in range.
    #[inline]
    pub(crate) unsafe fn cell(&self, row: usize, col: usize) -> NonNull<u8> {
        debug_assert!(
            row <= self.len && col < self.columns.len(),
            "cell ({row}, {col})"
        );
        // SAFETY: `row` is live (or being pushed) and `col` in range (this fn's contract), and
        // `addr` just computed the row's address (it panics rather than leave the chunks).
        unsafe { self.cell_at(self.addr(row), col) }
    }

    /// Appends a row for `entity` and returns its address (`.row()` is its index). The component
    /// cells of the new row are uninitialised: the caller must write every column before the
    /// row is read or removed.
    #[inline]
    pub(crate) fn push_row(&mut self, entity: Entity, tick: u64) -> RowAddr {
        let row = self.len;
        let masked = !self.enable_cols.is_empty();
        let chunk = self.chunk_with_room(tick);
        let r = chunk.len();
        // SAFETY: `chunk_with_room` returned a chunk with `len < capacity`, so row `r` of the
        // entity column is inside the allocation.
        unsafe { chunk.entity_ptr().add(r).write(entity) };
        chunk.set_len(r + 1);
        if masked {
            // A new row starts enabled; a moving row's bits are then copied by `carry_bits`.
            chunk.enable_bits_mut().enable_rows(r, r + 1);
        }
        chunk.mark_structural(tick);
        let data = chunk.data();
        self.len += 1;
        self.rows_epoch += 1;
        RowAddr {
            row,
            // `chunk_with_room` returns the last chunk: no division needed.
            chunk: self.chunks.len() - 1,
            data,
            r,
        }
    }

    /// The last chunk if it has room, else a new (or the spare) chunk pushed at the end.
    #[inline]
    pub(crate) fn chunk_with_room(&mut self, tick: u64) -> &mut Chunk {
        let cap = self.layout.capacity();
        if self.chunks.last().is_none_or(|c| c.len() == cap) {
            self.push_chunk(tick);
        }
        self.chunks.last_mut().expect("a chunk was just ensured")
    }

    /// Appends the spare chunk, or a new one; once per `capacity` rows, so kept out of line.
    #[cold]
    #[inline(never)]
    pub(super) fn push_chunk(&mut self, tick: u64) {
        // Invariant 8: the user code first, while nothing has changed.
        self.prepare_chunks(1);
        let chunk = match self.spare.take() {
            Some(mut spare) => {
                spare.mark_structural(tick);
                spare.reset_marks(tick);
                for col in 0..self.columns.len() {
                    spare.mark_changed(col, tick);
                }
                spare
            }
            None => Chunk::new(&self.layout, tick, &self.pool, &self.marks),
        };
        let mut chunk = chunk;
        if chunk.enable_bits().len() != self.enable_cols.len() {
            *chunk.enable_bits_mut() =
                ChunkMasks::new(self.enable_cols.len(), self.layout.capacity());
        }
        if !self.chunk_kinds.is_empty() {
            // A reused spare was made fresh above; a new chunk takes values made ahead.
            if !chunk.chunk_values().is_fresh() {
                *chunk.chunk_values_mut() = self.ready.pop().expect("prepared above");
            }
            chunk.chunk_values_mut().mark_used();
        }
        self.chunks.push(chunk);
        self.chunks_changed();
    }

    /// Appends rows a chunk at a time: for each new archetype row, `next` returns the row's
    /// entity and bundle (or `None` to stop), and the bundle is written with typed stores into
    /// column pointers computed once per chunk.
    ///
    /// If `next` panics, the rows written so far stay (lengths are committed by a guard).
    ///
    /// # Safety
    /// `cols[i]` is the column of bundle element `i`'s type in this archetype, and `cols`
    /// covers every column exactly once.
    pub(crate) unsafe fn extend_rows<B: Bundle>(
        &mut self,
        tick: u64,
        cols: &[u32],
        mut next: impl FnMut(usize) -> Option<(Entity, B)>,
    ) {
        debug_assert_eq!(cols.len(), self.columns.len());
        let cap = self.layout.capacity();
        loop {
            let start = self.chunk_with_room(tick).len();
            let chunk = self.chunks.last().expect("just ensured");
            let bases: SmallVec<[NonNull<u8>; 12]> = cols
                .iter()
                .map(|&c| self.column_base(chunk, c as usize))
                .collect();
            let ids = chunk.entity_ptr();
            let mut commit = CommitRows {
                arch: self,
                written: 0,
                tick,
            };
            for r in start..cap {
                let Some((entity, bundle)) = next(commit.arch.len + commit.written) else {
                    return;
                };
                // SAFETY: `r < cap` keeps both stores inside the last chunk's columns, whose
                // rows `start..` are uninitialised; `cols` maps element `i` to its column
                // (caller contract). The guard then counts the row as initialised.
                unsafe {
                    ids.add(r).write(entity);
                    bundle.write_row(&bases, r);
                }
                commit.written += 1;
            }
        }
    }

    /// Drops every row. If a `Drop` panics, the remaining values leak and the archetype is left
    /// empty and consistent.
    pub(crate) fn clear(&mut self) {
        let chunks = std::mem::take(&mut self.chunks);
        self.chunks_changed();
        self.len = 0;
        self.rows_epoch += 1;
        if self.columns.iter().all(|c| c.drop.is_none()) {
            // Nothing to drop; keep one chunk as the spare, emptied: `chunk_with_room` appends
            // to a spare at its `len`, so stale rows left in it would come back to life.
            let first = chunks.into_iter().next().map(|mut c| {
                c.set_len(0);
                c.enable_bits_mut().clear();
                c
            });
            self.spare = self.spare.take().or(first);
            return;
        }
        for chunk in &chunks {
            for (col, meta) in self.columns.iter().enumerate() {
                let Some(drop) = meta.drop else { continue };
                let base = self.column_base(chunk, col);
                for r in 0..chunk.len() {
                    // SAFETY: rows `0..len` of the chunk are initialised (`Chunk` invariant
                    // 2); the chunk was detached above, so each value is dropped exactly once
                    // even if a later `drop` unwinds (the rest then leak).
                    unsafe { drop(base.as_ptr().add(r * meta.size)) }
                }
            }
        }
    }
}

/// The cell pointers [`Archetype::cells`] returns; derefs to a slice.
pub(crate) struct RowCells {
    pub(super) ptrs: [NonNull<u8>; MAX_BUNDLE],
    pub(super) len: usize,
}

impl std::ops::Deref for RowCells {
    type Target = [NonNull<u8>];

    #[inline(always)]
    fn deref(&self) -> &[NonNull<u8>] {
        &self.ptrs[..self.len]
    }
}

/// Where an archetype row lives: its row index, its chunk's index and base address, and its row
/// within that chunk; see [`Archetype::addr`].
#[derive(Clone, Copy)]
pub(crate) struct RowAddr {
    pub(super) row: usize,
    pub(super) chunk: usize,
    pub(super) data: NonNull<u8>,
    pub(super) r: usize,
}

impl RowAddr {
    /// The archetype row this addresses.
    #[inline]
    pub(crate) fn row(self) -> usize {
        self.row
    }

    /// The index of the row's chunk in its archetype.
    #[inline]
    pub(crate) fn chunk(self) -> usize {
        self.chunk
    }

    /// The row within its chunk.
    #[inline]
    pub(crate) fn r(self) -> usize {
        self.r
    }
}

/// Copies one `size`-byte value. Common component sizes get a fixed-size copy, which compiles to
/// a few moves instead of a `memcpy` call: row moves copy one value per column.
///
/// # Safety
/// `src` is valid for reads and `dst` for writes of `size` bytes, and they do not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_value(src: *const u8, dst: *mut u8, size: usize) {
    debug_assert!(
        size == 0 || src as usize + size <= dst as usize || dst as usize + size <= src as usize,
        "overlapping copy"
    );
    use std::ptr::copy_nonoverlapping as copy;
    // SAFETY: every arm copies exactly `size` bytes (caller contract).
    unsafe {
        match size {
            0 => {}
            4 => copy(src, dst, 4),
            8 => copy(src, dst, 8),
            12 => copy(src, dst, 12),
            16 => copy(src, dst, 16),
            24 => copy(src, dst, 24),
            32 => copy(src, dst, 32),
            64 => copy(src, dst, 64),
            _ => copy(src, dst, size),
        }
    }
}

/// Adds `written` rows to the last chunk and to the archetype when dropped, also while
/// unwinding, so a panicking bundle iterator leaves every written row counted; and stamps the
/// chunk's columns and structure with `tick`, so change filters see the new rows also when
/// they went into a chunk that already held rows.
struct CommitRows<'a> {
    arch: &'a mut Archetype,
    written: usize,
    tick: u64,
}

impl Drop for CommitRows<'_> {
    fn drop(&mut self) {
        let chunk = self
            .arch
            .chunks
            .last_mut()
            .expect("rows are written into a chunk");
        let start = chunk.len();
        chunk.set_len(start + self.written);
        chunk
            .enable_bits_mut()
            .enable_rows(start, start + self.written);
        if self.written > 0 {
            let tick = self.tick;
            chunk.mark_structural(tick);
            for col in 0..self.arch.columns.len() {
                chunk.mark_changed(col, tick);
                if self.arch.marks[col] != RowTicks::NONE {
                    for r in start..start + self.written {
                        chunk.set_row_marks(col, r, (tick as u32, tick as u32), tick);
                    }
                }
            }
        }
        self.arch.len += self.written;
        self.arch.rows_epoch += u64::from(self.written > 0);
        self.arch.release_empty_tail();
    }
}
