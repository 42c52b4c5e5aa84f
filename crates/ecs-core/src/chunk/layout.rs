//! The layout of a chunk: where each column of an archetype sits in a fixed-size block, and
//! how many rows fit. Computed once per archetype, from column sizes and alignments only: a
//! layout knows no component types, archetypes or worlds.
//!
//! ```text
//! 0                                                                     chunk_size
//! | Entity[0..cap] | pad | A[0..cap] | pad | B[0..cap] | ... unused ... |
//! ```
//!
//! The entity-id column comes first, then one column per component (in registration order, or
//! in the placement a `ColumnOrder` chose), each at an offset aligned for its type, sized for
//! the largest row count that fits. Zero-sized components take no bytes: their column sits at
//! offset 0 and every row of it is the same (dangling-but-aligned) address.

use std::alloc::Layout;

use crate::entity::Entity;

/// The cache line size that column placement and the prefetch strides assume.
pub(crate) const CACHE_LINE: usize = 64;

/// The smallest alignment of a chunk allocation: one cache line.
///
/// ```
/// # use ecs_core::{ChunkLayout, ColumnSpec, CHUNK_ALIGN};
/// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 4, align: 4 }]).unwrap();
/// assert!(layout.align() >= CHUNK_ALIGN);
/// ```
pub const CHUNK_ALIGN: usize = 64;

/// The default chunk size, 16 KiB.
///
/// ```
/// # use ecs_core::{World, CHUNK_SIZE};
/// assert_eq!(World::new().chunk_size(), CHUNK_SIZE);
/// ```
pub const CHUNK_SIZE: usize = 16 * 1024;

/// The span within which a CPU compares load and store addresses by their low bits alone.
const PAGE: usize = 4096;

/// How far apart `a` and `b` lie within a page, either way round.
fn page_distance(a: usize, b: usize) -> usize {
    let d = (a % PAGE).abs_diff(b % PAGE);
    d.min(PAGE - d)
}

/// Where each column of an archetype's chunks starts, and how many rows a chunk holds.
///
/// # Invariants
/// 1. For every column `c` with `sizes[c] > 0`:
///    `offsets[c] % align_of(c) == 0` and `offsets[c] + capacity * sizes[c] <= chunk_size`;
///    columns do not overlap, and none overlaps the entity column `0..capacity * 8`.
/// 2. Zero-sized columns have offset 0.
/// 3. `capacity >= 1`, and it is maximal: `capacity + 1` rows would not fit with the columns
///    in `placement` order; except that a chunk larger than [`CHUNK_SIZE`] may hold up to
///    1/256 fewer rows than the maximum, to start its columns on wider boundaries (5).
/// 4. `align` is a power of two, at least [`CHUNK_ALIGN`] and every column's alignment.
/// 5. Where a full chunk's spare bytes allow, columns start on 64-, 32- or 16-byte boundaries
///    (the largest that fits for all of them), so vector loops over them do not split loads
///    across cache lines; this lowers the capacity only as invariant 3 allows.
/// 6. `placement` is a permutation of the column indices, and column arrays sit in the chunk
///    in that order (ascending offsets among sized columns). Column numbers stay the
///    archetype's ascending component ids; only offsets follow the placement.
///
/// ```
/// # use ecs_core::{ChunkLayout, ColumnSpec};
/// let cols = [ColumnSpec { size: 4, align: 4 }];
/// let layout = ChunkLayout::new(4096, &cols).unwrap();
/// assert!(ChunkLayout::end_of(layout.capacity(), &cols) <= 4096);
/// assert!(ChunkLayout::end_of(layout.capacity() + 1, &cols) > 4096);
/// ```
#[derive(Clone, Debug)]
pub struct ChunkLayout {
    chunk_size: usize,
    align: usize,
    capacity: usize,
    by_capacity: FastDiv,
    offsets: Box<[usize]>,
    sizes: Box<[usize]>,
    /// Column indices in the order their arrays sit in the chunk (see `new_ordered`).
    placement: Box<[usize]>,
    /// The rule that chose `placement`, for the layout report.
    order_name: &'static str,
    /// The alignment every column was raised to (1: its type's own); see
    /// `World::set_column_alignment`.
    column_align: usize,
}

/// Size and alignment of one column's element, the input of [`ChunkLayout::new`].
///
/// ```
/// # use ecs_core::{ChunkLayout, ColumnSpec};
/// let spec = ColumnSpec { size: 8, align: 8 };
/// assert_eq!(ChunkLayout::new(4096, &[spec]).unwrap().size(0), 8);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ColumnSpec {
    /// Element size in bytes.
    pub size: usize,
    /// Element alignment in bytes (a power of two).
    pub align: usize,
}

impl ChunkLayout {
    /// Lays out `columns` (in order, after the entity column) in blocks of `chunk_size` bytes.
    ///
    /// Returns `None` when not even one row fits.
    ///
    /// # Panics
    /// If more than `u32::MAX` rows would fit (a chunk of tens of GiB): archetype rows are
    /// `u32`, and [`ChunkLayout::split_row`] divides by the capacity as a `u32`.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 8, align: 8 }]).unwrap();
    /// assert_eq!(layout.capacity(), 4096 / 16);
    /// assert!(ChunkLayout::new(4096, &[ColumnSpec { size: 8192, align: 8 }]).is_none());
    /// ```
    pub fn new(chunk_size: usize, columns: &[ColumnSpec]) -> Option<Self> {
        let identity: Vec<usize> = (0..columns.len()).collect();
        Self::new_ordered(chunk_size, columns, &identity)
    }

    /// Like [`ChunkLayout::new`], but the column arrays sit in the chunk in `placement` order
    /// (a permutation of the column indices); `offset(c)` still answers for column `c`.
    ///
    /// # Panics
    /// If `placement` is not a permutation of `0..columns.len()`, or as [`ChunkLayout::new`].
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let cols = [ColumnSpec { size: 1, align: 1 }, ColumnSpec { size: 8, align: 8 }];
    /// let layout = ChunkLayout::new_ordered(4096, &cols, &[1, 0]).unwrap();
    /// assert!(layout.offset(1) < layout.offset(0));
    /// assert_eq!(layout.placement(), [1, 0]);
    /// ```
    pub fn new_ordered(
        chunk_size: usize,
        columns: &[ColumnSpec],
        placement: &[usize],
    ) -> Option<Self> {
        let mut seen = vec![false; columns.len()];
        assert!(
            placement.len() == columns.len()
                && placement
                    .iter()
                    .all(|&c| c < columns.len() && !std::mem::replace(&mut seen[c], true)),
            "placement {placement:?} is not a permutation of {} columns",
            columns.len()
        );
        let placed: Vec<ColumnSpec> = placement.iter().map(|&c| columns[c]).collect();
        let row_bytes: usize = size_of::<Entity>() + columns.iter().map(|c| c.size).sum::<usize>();
        // `upper` rows of the bare row size fill the block; padding can only lower that.
        let upper = chunk_size / row_bytes;
        let capacity = (1..=upper)
            .rev()
            .find(|&n| Self::end_of(n, &placed) <= chunk_size)?;
        // Spare bytes of a full chunk go to starting the columns on vector-register (ideally
        // cache-line) boundaries: a loop over a column that starts 4 or 8 bytes past one splits
        // every fourth 16-byte load across two cache lines, which slows a flat `f32` loop.
        // The capacity stays the largest that fits with each column aligned for its type only.
        // Chunks above the default size may give up a few rows (at most 1/256 of them) for it:
        // a 256 KiB chunk of 108-byte rows has 28 spare bytes, and 3 of its 2,427 rows buy every
        // column a cache-line start, which pays (docs/performance.md, "Design
        // measurements").
        let spare_rows = if chunk_size > CHUNK_SIZE {
            capacity / 256
        } else {
            0
        };
        let staggered = (chunk_size > CHUNK_SIZE)
            .then(|| Self::staggered(capacity, &placed, chunk_size, row_bytes))
            .flatten();
        let (capacity, placed_offsets) = staggered
            .or_else(|| {
                [CACHE_LINE, 32, 16].into_iter().find_map(|preferred| {
                    (capacity - spare_rows..=capacity).rev().find_map(|rows| {
                        Some((rows, Self::offsets(rows, &placed, preferred, chunk_size)?))
                    })
                })
            })
            .or_else(|| Some((capacity, Self::offsets(capacity, &placed, 1, chunk_size)?)))
            .expect("`capacity` rows fit with each column aligned for its type");
        let mut offsets = vec![0; columns.len()].into_boxed_slice();
        for (&c, &offset) in placement.iter().zip(placed_offsets.iter()) {
            offsets[c] = offset;
        }
        let align = columns
            .iter()
            .map(|c| c.align)
            .fold(CHUNK_ALIGN, usize::max);
        // A truncated divisor would make `split_row` point rows at the wrong chunk.
        let Ok(divisor) = u32::try_from(capacity) else {
            panic!(
                "a {chunk_size}-byte chunk would hold {capacity} rows, \
                 more than the u32::MAX rows an archetype can number"
            )
        };
        Some(Self {
            chunk_size,
            align,
            capacity,
            by_capacity: FastDiv::new(divisor),
            offsets,
            sizes: columns.iter().map(|c| c.size).collect(),
            placement: placement.into(),
            order_name: if placement.iter().enumerate().all(|(i, &c)| i == c) {
                "registration"
            } else {
                "custom"
            },
            column_align: 1,
        })
    }

    /// Column offsets for `rows` rows, each column starting at a multiple of the larger of its
    /// alignment and `preferred`; `None` if they would end past `chunk_size`.
    fn offsets(
        rows: usize,
        columns: &[ColumnSpec],
        preferred: usize,
        chunk_size: usize,
    ) -> Option<Box<[usize]>> {
        let (offsets, end) = Self::place(rows, columns, preferred, |start, _| start);
        (end <= chunk_size).then_some(offsets)
    }

    /// The rows and cache-line column offsets of a large chunk whose column starts lie apart
    /// within a 4 KiB page, giving up at most 1/64 of `capacity` for it; `None` if that is
    /// not enough, or if some column has no such place (its alignment is a page or more).
    ///
    /// Why: a loop that writes one column while it reads another stalls whenever a load's
    /// address matches a pending store's in its low 12 bits (the CPU guesses a dependency from
    /// them, "4K aliasing"). Two columns whose starts share a page offset meet that on every
    /// row, and a `pos += vel` loop over two such columns is measurably slower than over two
    /// apart (docs/performance.md, "Design measurements"). Each column, the entity
    /// ids included, starts at least half an even share of the page (at most 512 bytes) from
    /// every earlier one.
    fn staggered(
        capacity: usize,
        columns: &[ColumnSpec],
        chunk_size: usize,
        row_bytes: usize,
    ) -> Option<(usize, Box<[usize]>)> {
        let streams = 1 + columns.iter().filter(|c| c.size > 0).count();
        let gap = (PAGE / streams / 2).min(512);
        let mut starts = Vec::with_capacity(streams);
        let mut rows = capacity;
        // Each pass drops the rows the last one overflowed by; the padding moves as the
        // columns shrink (often taking back most of what the dropped rows gave), so it may take
        // a few dozen passes, each a few operations per column.
        for _ in 0..64 {
            starts.clear();
            starts.push(0);
            let mut crowded = false;
            let (offsets, end) = Self::place(rows, columns, CACHE_LINE, |mut start, step| {
                let first = start;
                while starts.iter().any(|&s| page_distance(start, s) < gap) {
                    start += step;
                    if start - first >= PAGE {
                        // No place apart from the others (a page-aligned column): no rows are
                        // given up for a layout that does not have the property.
                        crowded = true;
                        break;
                    }
                }
                starts.push(start);
                start
            });
            if crowded {
                return None;
            }
            if end <= chunk_size {
                return Some((rows, offsets));
            }
            rows = rows.checked_sub((end - chunk_size).div_ceil(row_bytes))?;
            if rows < capacity - capacity / 64 {
                return None;
            }
        }
        None
    }

    /// Column offsets for `rows` rows and the byte past the last column: each column at the
    /// first multiple of the larger of its alignment and `preferred` past the one before,
    /// then wherever `adjust(start, step)` moves it: never below, by multiples of that step.
    fn place(
        rows: usize,
        columns: &[ColumnSpec],
        preferred: usize,
        mut adjust: impl FnMut(usize, usize) -> usize,
    ) -> (Box<[usize]>, usize) {
        let mut end = rows * size_of::<Entity>();
        let offsets = columns
            .iter()
            .map(|c| {
                if c.size == 0 {
                    return 0;
                }
                let step = c.align.max(preferred);
                let start = adjust(end.next_multiple_of(step), step);
                end = start + rows * c.size;
                start
            })
            .collect();
        (offsets, end)
    }

    /// The byte just past the last column when each column holds `rows` rows: the chunk bytes
    /// `rows` rows need, padding included.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let cols = [ColumnSpec { size: 1, align: 1 }, ColumnSpec { size: 8, align: 8 }];
    /// // 10 entity ids (80 B), 10 bytes, pad to 96, then 10 * 8 bytes.
    /// assert_eq!(ChunkLayout::end_of(10, &cols), 176);
    /// ```
    pub fn end_of(rows: usize, columns: &[ColumnSpec]) -> usize {
        columns
            .iter()
            .filter(|c| c.size > 0)
            .fold(rows * size_of::<Entity>(), |end, c| {
                end.next_multiple_of(c.align) + rows * c.size
            })
    }

    /// Rows per chunk.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 8, align: 8 }]).unwrap();
    /// assert_eq!(layout.capacity(), 256);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `(row / capacity, row % capacity)`: which chunk an archetype row is in, and where.
    /// Entity lookups and row moves do this constantly, so it avoids a hardware division.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 8, align: 8 }]).unwrap();
    /// assert_eq!(layout.split_row(600), (2, 88));
    /// ```
    #[inline(always)]
    pub fn split_row(&self, row: usize) -> (usize, usize) {
        debug_assert!(row <= u32::MAX as usize, "archetype rows are u32");
        let (q, r) = self.by_capacity.div_rem(row as u32);
        (q as usize, r as usize)
    }

    /// Bytes per chunk.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(8192, &[ColumnSpec { size: 4, align: 4 }]).unwrap();
    /// assert_eq!(layout.chunk_size(), 8192);
    /// ```
    #[inline]
    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// Alignment of each chunk allocation.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 128, align: 128 }]).unwrap();
    /// assert_eq!(layout.align(), 128);
    /// ```
    #[inline]
    pub fn align(&self) -> usize {
        self.align
    }

    /// Byte offset of component column `col` (not counting the entity column).
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 8, align: 8 }]).unwrap();
    /// assert_eq!(layout.offset(0), layout.capacity() * 8); // right after the entity ids
    /// ```
    #[inline]
    pub fn offset(&self, col: usize) -> usize {
        self.offsets[col]
    }

    /// Element size of component column `col`.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 2, align: 2 }]).unwrap();
    /// assert_eq!(layout.size(0), 2);
    /// ```
    #[inline]
    pub fn size(&self, col: usize) -> usize {
        self.sizes[col]
    }

    /// Column indices in the order their arrays sit in the chunk, after the entity ids.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let spec = ColumnSpec { size: 4, align: 4 };
    /// assert_eq!(ChunkLayout::new(4096, &[spec, spec]).unwrap().placement(), [0, 1]);
    /// ```
    #[inline]
    pub fn placement(&self) -> &[usize] {
        &self.placement
    }

    /// The rule that placed the columns: `registration`, `min-padding`, `chosen-first` (from
    /// a [`ColumnOrder`](crate::ColumnOrder)) or `custom` (`new_ordered` with another order).
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let spec = ColumnSpec { size: 4, align: 4 };
    /// assert_eq!(ChunkLayout::new(4096, &[spec]).unwrap().column_order(), "registration");
    /// ```
    #[inline]
    pub fn column_order(&self) -> &'static str {
        self.order_name
    }

    pub(crate) fn named(mut self, order_name: &'static str) -> Self {
        self.order_name = order_name;
        self
    }

    /// Records that this layout's columns were laid out with their alignment raised to
    /// `align` (the specs it was built from say so; this only remembers it).
    pub(crate) fn with_column_align(mut self, align: usize) -> Self {
        self.column_align = align.max(1);
        self
    }

    /// The alignment every column array was raised to when this layout was made
    /// (`World::set_column_alignment`; 1 when each column is aligned for its type only).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.set_column_alignment(128).unwrap();
    /// let e = world.spawn((1u16,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.layout().column_align(), 128);
    /// ```
    pub fn column_align(&self) -> usize {
        self.column_align
    }

    /// Number of component columns.
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let spec = ColumnSpec { size: 4, align: 4 };
    /// assert_eq!(ChunkLayout::new(4096, &[spec, spec]).unwrap().columns(), 2);
    /// ```
    #[inline]
    pub fn columns(&self) -> usize {
        self.offsets.len()
    }

    /// Bytes of a full chunk that hold no row data (padding and the unused tail).
    ///
    /// ```
    /// # use ecs_core::{ChunkLayout, ColumnSpec};
    /// let layout = ChunkLayout::new(4096, &[ColumnSpec { size: 8, align: 8 }]).unwrap();
    /// assert_eq!(layout.unused_bytes_when_full(), 0); // 256 rows * 16 B fill it exactly
    /// ```
    pub fn unused_bytes_when_full(&self) -> usize {
        let used: usize = self.capacity * (size_of::<Entity>() + self.sizes.iter().sum::<usize>());
        self.chunk_size - used
    }

    pub(crate) fn alloc_layout(&self) -> Layout {
        Layout::from_size_align(self.chunk_size, self.align).expect("chunk layout is valid")
    }
}

/// Division by a fixed non-zero `u32` with multiplications instead of a `div` instruction,
/// exact for every `u32` numerator (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019: with `m = ceil(2^64 / d)`, `n / d = (m * n) >> 64` for 32-bit `n`, `d`).
#[derive(Clone, Copy, Debug)]
struct FastDiv {
    m: u64,
    d: u32,
}

impl FastDiv {
    fn new(d: u32) -> Self {
        assert!(d > 0, "division by zero");
        // For d == 1 the wrapping add gives m == 0; `div_rem` special-cases it.
        Self {
            m: (u64::MAX / u64::from(d)).wrapping_add(1),
            d,
        }
    }

    #[inline(always)]
    fn div_rem(self, n: u32) -> (u32, u32) {
        if self.d == 1 {
            return (n, 0);
        }
        let q = ((u128::from(self.m) * u128::from(n)) >> 64) as u32;
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(size: usize, align: usize) -> ColumnSpec {
        ColumnSpec { size, align }
    }

    fn assert_sound(layout: &ChunkLayout, cols: &[ColumnSpec]) {
        let cap = layout.capacity();
        let mut ranges = vec![(0, cap * 8)];
        for (i, c) in cols.iter().enumerate() {
            let off = layout.offset(i);
            assert_eq!(off % c.align, 0, "column {i} misaligned");
            if c.size > 0 {
                ranges.push((off, off + cap * c.size));
            }
        }
        ranges.sort();
        for w in ranges.windows(2) {
            assert!(w[0].1 <= w[1].0, "columns overlap: {ranges:?}");
        }
        assert!(ranges.last().unwrap().1 <= layout.chunk_size());
        let size = layout.chunk_size();
        let spare = if size > CHUNK_SIZE { cap / 63 + 1 } else { 1 };
        assert!(
            ChunkLayout::end_of(cap + spare, cols) > size,
            "capacity not maximal"
        );
    }

    #[test]
    fn large_chunks_give_up_a_few_rows_for_cache_line_starts() {
        // The benchmark suite's (Transform, Position, Rotation, Velocity): 108-byte rows.
        let cols = [spec(64, 4), spec(12, 4), spec(12, 4), spec(12, 4)];
        let large = ChunkLayout::new(256 << 10, &cols).expect("fits");
        assert_sound(&large, &cols);
        let most = (1..)
            .find(|&n| ChunkLayout::end_of(n, &cols) > 256 << 10)
            .unwrap()
            - 1;
        assert!(large.capacity() < most && large.capacity() >= most - most / 64);
        assert!((0..4).all(|c| large.offset(c) % CACHE_LINE == 0));
        // The default size keeps every row it can hold, aligned or not.
        let small = ChunkLayout::new(CHUNK_SIZE, &cols).expect("fits");
        assert_sound(&small, &cols);
    }

    #[test]
    fn large_chunks_start_their_columns_apart_within_a_page() {
        // 108-byte rows in a 576 KiB chunk: packed, Position, Rotation and Velocity would
        // each start at page offset 0 (5,461 rows of 12 bytes are 4 bytes short of 64 KiB).
        let cols = [spec(64, 4), spec(12, 4), spec(12, 4), spec(12, 4)];
        let packed = ChunkLayout::offsets(5461, &cols, CACHE_LINE, 9 << 16).expect("fits");
        assert!(packed[1..].iter().all(|&o| o % PAGE == 0), "{packed:?}");
        for size in [9 << 16, 256 << 10, 1 << 20] {
            let layout = ChunkLayout::new(size, &cols).expect("fits");
            assert_sound(&layout, &cols);
            let starts: Vec<usize> = [0]
                .into_iter()
                .chain((0..4).map(|c| layout.offset(c)))
                .collect();
            for (i, &a) in starts.iter().enumerate() {
                for &b in &starts[..i] {
                    assert!(page_distance(a, b) >= 4096 / 5 / 2, "{size}: {starts:?}");
                }
            }
        }
        // Many columns cannot all lie apart: the layout still places every one, maximal.
        let many = [spec(4, 4); 40];
        assert_sound(&ChunkLayout::new(1 << 20, &many).expect("fits"), &many);
    }

    #[test]
    fn layouts_are_aligned_disjoint_and_maximal() {
        let cases: &[&[ColumnSpec]] = &[
            &[],
            &[spec(12, 4), spec(12, 4)],
            &[spec(0, 1), spec(64, 64), spec(1, 1)],
            &[spec(0, 64), spec(3, 1), spec(128, 128)],
            &[spec(1024, 8), spec(4, 4)],
            &[spec(8000, 8)],
        ];
        for cols in cases {
            for size in [CHUNK_SIZE, 256 << 10] {
                let layout = ChunkLayout::new(size, cols).expect("fits");
                assert_sound(&layout, cols);
            }
        }
    }

    #[test]
    fn fast_division_is_exact() {
        let probes = [
            0u32,
            1,
            2,
            3,
            511,
            512,
            513,
            1 << 20,
            u32::MAX / 3,
            u32::MAX - 1,
            u32::MAX,
        ];
        // Miri interprets every multiplication: a sample there, the full sweep natively.
        let (divisors, numerators) = if cfg!(miri) { (40, 50) } else { (2100, 3000) };
        for d in (1..=divisors).chain([65_535, 131_072, 1 << 31, u32::MAX]) {
            let div = FastDiv::new(d);
            for n in probes.into_iter().chain((0..numerators).map(|i| i * 7919)) {
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    #[should_panic(expected = "more than the u32::MAX rows")]
    fn capacity_past_u32_panics_instead_of_truncating() {
        // 2^35 bytes hold 2^32 entity ids: one more than `u32::MAX`. Truncated, the divisor
        // would be 0 (and 2^32 + 8 rows would give 8).
        let _ = ChunkLayout::new(1 << 35, &[]);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn capacity_of_u32_max_rows_is_accepted() {
        // The largest capacity that converts: `u32::MAX` rows of 8-byte entity ids, no column.
        let layout = ChunkLayout::new(u32::MAX as usize * 8, &[]).expect("fits");
        assert_eq!(layout.capacity(), u32::MAX as usize);
        assert_eq!(
            layout.split_row(u32::MAX as usize - 1),
            (0, u32::MAX as usize - 1)
        );
    }

    #[test]
    fn oversized_row_is_refused() {
        assert!(ChunkLayout::new(CHUNK_SIZE, &[spec(CHUNK_SIZE, 8)]).is_none());
        assert!(ChunkLayout::new(CHUNK_SIZE, &[spec(CHUNK_SIZE - 8, 8)]).is_some());
    }
}
