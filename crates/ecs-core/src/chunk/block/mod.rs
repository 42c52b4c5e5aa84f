//! Fixed-size struct-of-arrays blocks of archetype rows.
//!
//! A chunk is one block, carved from its world's `ChunkPool`, of exactly `chunk_size` bytes (16
//! KiB by default; each archetype may have its own, see `chunk_policy`), laid out by its
//! archetype's [`ChunkLayout`] (`chunk_layout`). Besides the rows it keeps per column the tick
//! of the last write, the row ticks some change filter asked for, the enable bits of
//! enableable columns and one value per chunk component type.
//!
//! Iterating a chunk walks a few dense arrays, which is what the hardware prefetcher and the
//! auto-vectoriser want. A chunk never learns the types of its columns: the owning archetype
//! drops values through `ComponentInfo::drop_fn` before it lets a chunk go.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::chunk::enable::ChunkMasks;
use crate::chunk::layout::{ChunkLayout, CACHE_LINE};
use crate::chunk::pool::ChunkPool;
use crate::chunk::row_ticks::ColumnTicks;
use crate::chunk::stamps::ColumnStamps;
use crate::chunk::values::ChunkValues;
use crate::entity::Entity;
use crate::ids::RowTicks;

mod ticks;

/// How far into a column [`Chunk::prefetch_column`] touches pages. A 16 KiB chunk's columns
/// lie within it; in a larger chunk the hardware prefetcher has the stream by then, and more
/// touches only crowd the miss queue (docs/performance.md, "Design measurements").
const TOUCHED_SPAN: usize = 16 * 1024;

/// One block of rows.
///
/// # Invariants
/// 1. `data` is a slot of `alloc` (`layout.alloc_layout()` for the archetype's `layout`)
///    handed out by `pool` and owned by this chunk alone, and
///    `changed` holds `layout.columns()` ticks; `marks` is empty (no column keeps row ticks) or
///    has one entry per column, whose arrays hold `layout.capacity()` ticks.
/// 2. `len <= layout.capacity()`, and rows `0..len` of the entity column and of every component
///    column are initialised; rows `len..` are not.
/// 3. The chunk owns no component values for dropping purposes: the archetype drops rows
///    `0..len` before a chunk is dropped (a chunk dropped with rows only leaks them).
/// 4. The block at `data` never moves, and is not freed while the chunk is in an archetype
///    (in its chunk list or as its spare): `data` is set in `new` and freed only in `drop`,
///    except by `Chunk::relocate`, which takes `&mut self` and runs only under
///    `World::compact` (`&mut World`), when no row address or borrow of the chunk exists. Moving the `Chunk` value (when an archetype's chunk list or the world's
///    archetype list reallocates) moves only this handle, so an address computed from `data`
///    (an archetype `RowAddr`) stays valid until the archetype releases that chunk. Row moves
///    keep such an address across the edge lookup, which may add archetypes.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
/// assert_eq!(arch.chunks()[0].entities(), [e]);
/// ```
#[repr(C, align(64))]
pub struct Chunk {
    // What a query run reads and stamps of every chunk it visits, first: `data`, `len` and
    // the first columns' ticks share the chunk's first cache line (`repr(C)` keeps the order,
    // the alignment starts each chunk of a list on a line).
    data: NonNull<u8>,
    len: usize,
    /// Per component column, the tick of the last write access: the first six inline, in
    /// this first line, so that a writing query stamps a narrow archetype's chunk without
    /// touching another line of the record or a heap block (`column_stamps`).
    changed: ColumnStamps,
    alloc: Layout,
    /// The world's pool `data` came from; held so that it outlives this chunk.
    pool: Arc<ChunkPool>,
    /// The tick of the last row added, moved in or moved within this chunk.
    structural: u64,
    /// One enable bitset per enableable column of the archetype (empty, and unallocated, when
    /// it has none); see the `enable` module.
    masks: ChunkMasks,
    /// One value per chunk component type; see the `chunk_component` module.
    values: ChunkValues,
    /// Per component column, its row ticks (`row_ticks`), for the types some `Changed` or
    /// `Added` reader asked about; empty when no column keeps any.
    marks: Box<[ColumnTicks]>,
}

// SAFETY: a chunk owns its block, its tick arrays, masks and chunk values; the values in the
// block and in `values` are `Send + Sync` (the `Component` bound), so moving the owner to
// another thread moves nothing thread-bound.
unsafe impl Send for Chunk {}
// SAFETY: through `&Chunk`, code reads lengths and ticks and hands out raw pointers, and it also
// writes. Each write through a shared chunk is sound for its own reason:
// - the column ticks in `changed` are atomics (`mark_changed_unchecked`), and so are the
//   `bulk` ticks of `marks`;
// - the row ticks in `marks` are atomics, stored only by a holder of write access to the
//   rows' column (`mark_row_unchecked` / `mark_rows_unchecked` are `unsafe` for that), and
//   read non-atomically only under `ColumnTicks`' access rule (see `ColumnTicks::plain`);
// - the enable words in `masks` are atomics written as plain loads and stores by one thread
//   per word (`EnableMask` invariant 3: writers hold the component's write access, and the
//   parallel split cuts chunks on 64-row boundaries), or by `set_shared`'s read-modify-write;
// - the chunk values in `values` sit in `UnsafeCell`s written only by a holder of write access
//   to their type (`ChunkValues` invariant 2, checked by the query layer's access rules);
// - the rows of the block are written through pointers from `column_at` / `entity_ptr` only
//   by holders of the column's write access (the query layer), exactly like the column values.
unsafe impl Sync for Chunk {}

impl Chunk {
    /// Heap bytes this chunk owns besides its block: the tick list, once it spills, and the
    /// row ticks of the columns that keep them.
    pub(crate) fn heap_bytes(&self) -> usize {
        let ticks = self.changed.heap_bytes();
        let marks = self.marks.len() * size_of::<ColumnTicks>()
            + self
                .marks
                .iter()
                .map(ColumnTicks::heap_bytes)
                .sum::<usize>();
        ticks + marks
    }

    /// An empty chunk for `layout`, its memory carved from `pool`, with the row ticks `marks`
    /// (one entry per column).
    pub(crate) fn new(
        layout: &ChunkLayout,
        tick: u64,
        pool: &Arc<ChunkPool>,
        marks: &[RowTicks],
    ) -> Self {
        let alloc = layout.alloc_layout();
        let data = pool.alloc(alloc);
        Self {
            data,
            len: 0,
            alloc,
            pool: Arc::clone(pool),
            changed: ColumnStamps::new(layout.columns(), tick),
            structural: tick,
            masks: ChunkMasks::default(),
            values: ChunkValues::default(),
            marks: if marks.iter().all(|m| *m == RowTicks::NONE) {
                Box::default()
            } else {
                marks
                    .iter()
                    .map(|&m| ColumnTicks::new(m, layout.capacity(), tick))
                    .collect()
            },
        }
    }

    /// The row ticks of column `col`, if it keeps any.
    #[inline(always)]
    fn marks(&self, col: usize) -> Option<&ColumnTicks> {
        self.marks.get(col)
    }

    /// The chunk component values of this chunk (see
    /// [`World::register_chunk_component`](crate::World::register_chunk_component)).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// assert!(world.archetypes()[0].chunks().iter().all(|c| c.chunk_values().is_empty()));
    /// ```
    #[inline]
    pub fn chunk_values(&self) -> &ChunkValues {
        &self.values
    }

    #[inline]
    pub(crate) fn chunk_values_mut(&mut self) -> &mut ChunkValues {
        &mut self.values
    }

    /// Moves the chunk's bytes to another slot of its pool if the pool is emptying the block
    /// it sits in (a compaction, see `ChunkPool::begin_compaction`); returns whether it moved.
    /// Rows, ticks and masks stay as they were: only the block's address changes, so the
    /// caller must hold no pointer into the chunk (invariant 4).
    pub(crate) fn relocate(&mut self) -> bool {
        let Some(to) = self.pool.relocation_target(self.data, self.alloc) else {
            return false;
        };
        // SAFETY: `data` is `alloc.size()` bytes owned by this chunk (invariant 1) and `to` a
        // fresh slot of the same layout, so both ranges are valid and disjoint. The copy is
        // untyped: uninitialised rows past `len` stay uninitialised, initialised values move
        // bitwise (every Rust value may be moved by a byte copy), and the old copies are
        // never used again.
        unsafe {
            std::ptr::copy_nonoverlapping(self.data.as_ptr(), to.as_ptr(), self.alloc.size());
        }
        let from = std::mem::replace(&mut self.data, to);
        // SAFETY: `from` came from this pool with `alloc` (invariant 1); the chunk now owns
        // `to` instead, so `from` is given back once and not used again.
        unsafe { self.pool.free(from, self.alloc) };
        true
    }

    /// The enable bitsets of this chunk's enableable columns, in the order of
    /// [`Archetype::enableable_columns`](crate::Archetype::enableable_columns).
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Hidden;
    /// let mut world = World::new();
    /// world.register_enableable::<Hidden>();
    /// let e = world.spawn((Hidden,));
    /// world.set_enabled::<Hidden>(e, false).unwrap();
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].enable_bits().get(0).count(), 0);
    /// ```
    #[inline]
    pub fn enable_bits(&self) -> &ChunkMasks {
        &self.masks
    }

    #[inline]
    pub(crate) fn enable_bits_mut(&mut self) -> &mut ChunkMasks {
        &mut self.masks
    }

    /// Rows in use.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.spawn((2u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].len(), 2);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the chunk holds no row.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert!(!arch.chunks()[0].is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub(crate) fn set_len(&mut self, len: usize) {
        self.len = len;
    }

    /// The entity ids of rows `0..len`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn((1u32,)), world.spawn((2u32,)));
    /// let arch = &world.archetypes()[world.location(a).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].entities(), [a, b]);
    /// ```
    #[inline]
    pub fn entities(&self) -> &[Entity] {
        // SAFETY: invariant 1 (entity column at offset 0, aligned by `CHUNK_ALIGN`) and
        // invariant 2 (rows `0..len` initialised); writes to the column need `&mut self`.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<Entity>(), self.len) }
    }

    /// Pointer to the entity column.
    #[inline]
    pub(crate) fn entity_ptr(&self) -> NonNull<Entity> {
        self.data.cast()
    }

    /// The chunk's base address, the same for the chunk's whole life (invariant 4).
    #[inline]
    pub(crate) fn data(&self) -> NonNull<u8> {
        self.data
    }

    /// Address of the column that starts at byte `offset` of this chunk (an offset from its
    /// archetype's [`ChunkLayout::offset`]). Queries cache the offsets of each archetype they
    /// match, so fetching a chunk's columns is an addition each.
    ///
    /// Computing the pointer is safe for any `offset`; reading or writing through it is the
    /// caller's business: with a layout offset, rows `0..len` are initialised values of the
    /// column's type.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let base = arch.chunks()[0].column_at(arch.layout().offset(0)).cast::<u32>();
    /// // SAFETY: row 0 of this chunk is an initialised `u32`, and nothing writes meanwhile.
    /// assert_eq!(unsafe { *base }, 7);
    /// ```
    #[inline(always)]
    pub fn column_at(&self, offset: usize) -> *mut u8 {
        // `wrapping_add` keeps this safe for any offset; a layout offset stays inside the
        // allocation (`ChunkLayout` invariant 1).
        self.data.as_ptr().wrapping_add(offset)
    }

    /// Asks the CPU to start loading the column at byte `offset` of this chunk, whose elements
    /// are `size` bytes: its first two cache lines, and one touch per page its rows cross in
    /// its first 16 KiB.
    /// A chunk's columns are short memory streams; without this each new chunk pays its cache
    /// and TLB misses inside the row loop (docs/performance.md, "Design measurements").
    /// Pages past the rows are left alone (they may not be mapped yet, and a walk that
    /// finds nothing is slow), as are empty and zero-sized columns (whose base may dangle).
    /// A hint: it reads nothing and stays within the chunk's block, so any arguments are safe.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let chunk = &arch.chunks()[0];
    /// chunk.prefetch_column(arch.layout().offset(0), 4);
    /// chunk.prefetch_column(usize::MAX, usize::MAX); // nonsense is harmless
    /// ```
    #[inline]
    pub fn prefetch_column(&self, offset: usize, size: usize) {
        // Never past the chunk's own block, whatever the arguments say.
        let room = self.alloc.size().saturating_sub(offset);
        let used = self.len.saturating_mul(size).min(room);
        if used == 0 {
            return;
        }
        let base = self.data.as_ptr().wrapping_add(offset);
        prefetch_line(base);
        if used > CACHE_LINE {
            prefetch_line(base.wrapping_add(CACHE_LINE));
        }
        let mut at = PAGE - (base as usize & (PAGE - 1));
        while at < used.min(TOUCHED_SPAN) {
            prefetch_line(base.wrapping_add(at));
            at += PAGE;
        }
    }

    /// Asks the CPU to start loading rows `rows` of the column at byte `offset` of this chunk,
    /// whose elements are `size` bytes: one prefetch per cache line they cover. A loop over a
    /// large archetype calls this for the *next* chunk a few rows at a time while it works
    /// through the current one, so that the next chunk's lines arrive spread evenly, a chunk
    /// ahead, as a hardware prefetcher would bring a long flat array's (the short per-chunk
    /// streams defeat the hardware's). A hint like [`Chunk::prefetch_column`]: it stays within
    /// the chunk's block and past no row the chunk holds, so any arguments are safe.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn_batch((0..100u32).map(|n| (n,)));
    /// let arch = world.archetypes().iter().find(|a| a.len() == 100).unwrap();
    /// let chunk = &arch.chunks()[0];
    /// chunk.prefetch_rows(arch.layout().offset(0), 4, 16..32);
    /// chunk.prefetch_rows(usize::MAX, usize::MAX, 0..usize::MAX); // nonsense is harmless
    /// ```
    #[inline(always)]
    pub fn prefetch_rows(&self, offset: usize, size: usize, rows: std::ops::Range<usize>) {
        // Wrapping arithmetic: nonsense arguments give a nonsense range, but never one past
        // `room`, and the pointer is only ever a hint. (This runs every few rows of a large
        // `for_each`, so it avoids the checked forms' extra instructions.)
        let room = self.alloc.size().saturating_sub(offset);
        let end = rows.end.min(self.len).wrapping_mul(size).min(room);
        let mut at = rows.start.wrapping_mul(size) & !(CACHE_LINE - 1);
        let base = self.data.as_ptr().wrapping_add(offset);
        while at < end {
            prefetch_line(base.wrapping_add(at));
            at += CACHE_LINE;
        }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: invariant 1: `data` came from `pool` with `alloc`, this chunk alone owns it,
        // and it is given back only here.
        unsafe { self.pool.free(self.data, self.alloc) }
    }
}

// ----- enable bits across chunks ------------------------------------------------------------

/// Moves the enable bits of row `from` to row `to` (both `(chunk, row)` of one archetype's
/// `chunks`) and clears `from`'s: a swap-remove filling a hole. With `from == to` it just
/// clears the bits of the row leaving.
pub(crate) fn retire_row(chunks: &mut [Chunk], from: (usize, usize), to: (usize, usize)) {
    let slots = chunks[from.0].enable_bits().len();
    for slot in 0..slots {
        let bit = chunks[from.0].enable_bits().get(slot).get(from.1);
        chunks[from.0]
            .enable_bits_mut()
            .get_mut(slot)
            .set(from.1, false);
        if from != to {
            chunks[to.0].enable_bits_mut().get_mut(slot).set(to.1, bit);
        }
    }
}

/// The smallest page size of the targets we care about; a guess, so only a hint's stride.
const PAGE: usize = 4096;

/// Asks the CPU to start loading the cache line at `ptr` into its first-level cache: a hint
/// that reads nothing and never faults, whatever the address (a no-op off x86-64 and under
/// Miri). Query loops use it to fetch a chunk a few chunks ahead of the one they work on.
///
/// ```
/// let values = [1u64, 2, 3];
/// ecs_core::prefetch_line(values.as_ptr().cast());
/// ecs_core::prefetch_line(std::ptr::null()); // any address is harmless
/// ```
#[inline(always)]
pub fn prefetch_line(ptr: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetch` is a hint that never dereferences or faults, for any address; SSE
    // is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr.cast());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = ptr;
}

#[cfg(test)]
mod tests {
    use super::Chunk;

    /// What a query reads and stamps of every chunk it visits shares the record's first line
    /// (the `repr(C)` order and the inline column ticks are sized for it).
    #[cfg(not(loom))]
    #[test]
    fn a_query_run_reads_one_line_of_a_chunk_record() {
        use crate::chunk::stamps::INLINE_STAMPS;
        assert_eq!(std::mem::offset_of!(Chunk, data), 0);
        assert_eq!(std::mem::offset_of!(Chunk, len), 8);
        assert_eq!(std::mem::offset_of!(Chunk, changed), 16);
        assert_eq!(16 + INLINE_STAMPS * 8, 64);
        assert_eq!(align_of::<Chunk>(), 64);
    }
}
