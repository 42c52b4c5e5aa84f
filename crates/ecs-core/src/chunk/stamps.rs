//! A chunk's per-column change ticks (the tick of the last write access to each column): the
//! first [`INLINE_STAMPS`] inline, so that they share the `Chunk` record's first cache line with
//! its block address and length, the rest in a heap array.
//!
//! A writing query stamps one of these per chunk it visits. With a `SmallVec` the stamp read
//! the vector's capacity to learn where the ticks were, and the capacity sat in the record's
//! second line: every chunk of every writing pass touched two lines of its record. Here the
//! place of a column's tick depends only on the column index the query already holds.
//!
//! ```text
//! Chunk record, line 0:  | data | len | inline[0] ... inline[5] |
//!               line 1:  | rest (heap, columns 6..) | ...
//! ```

use crate::sync::{AtomicU64, Ordering};

/// Columns whose ticks sit inline: `data` and `len` take 16 of the record's first 64 bytes.
pub(crate) const INLINE_STAMPS: usize = 6;

/// The change ticks of one chunk's columns.
///
/// # Invariant
/// Column `c` of a chunk with `n` columns has its tick at `inline[c]` for `c < INLINE_STAMPS`
/// and at `rest[c - INLINE_STAMPS]` otherwise, and `rest.len() == n.saturating_sub(INLINE_STAMPS)`.
/// Inline entries past `n` are unused.
#[derive(Debug)]
#[repr(C)] // `inline` first: it is what shares the chunk record's first line
pub(crate) struct ColumnStamps {
    inline: [AtomicU64; INLINE_STAMPS],
    rest: Box<[AtomicU64]>,
}

impl ColumnStamps {
    /// The ticks of `columns` columns, each `tick`.
    pub(crate) fn new(columns: usize, tick: u64) -> Self {
        Self {
            inline: std::array::from_fn(|_| AtomicU64::new(tick)),
            rest: (INLINE_STAMPS..columns)
                .map(|_| AtomicU64::new(tick))
                .collect(),
        }
    }

    /// Column `col`'s tick.
    ///
    /// # Panics
    /// If `col` is past the columns (for a column in `INLINE_STAMPS..`).
    #[inline(always)]
    pub(crate) fn get(&self, col: usize) -> &AtomicU64 {
        match self.inline.get(col) {
            Some(tick) => tick,
            None => &self.rest[col - INLINE_STAMPS],
        }
    }

    /// Column `col`'s tick, without the bound check.
    ///
    /// # Safety
    /// `col` is one of the chunk's columns.
    #[inline(always)]
    pub(crate) unsafe fn get_unchecked(&self, col: usize) -> &AtomicU64 {
        if col < INLINE_STAMPS {
            // SAFETY: just checked.
            unsafe { self.inline.get_unchecked(col) }
        } else {
            debug_assert!(
                col - INLINE_STAMPS < self.rest.len(),
                "column {col} out of range"
            );
            // SAFETY: `col` is a column (caller), so past the inline ones it is in `rest`
            // (invariant).
            unsafe { self.rest.get_unchecked(col - INLINE_STAMPS) }
        }
    }

    /// Column `col`'s tick, loaded.
    #[inline]
    pub(crate) fn load(&self, col: usize) -> u64 {
        self.get(col).load(Ordering::Relaxed)
    }

    /// Heap bytes held (the ticks of columns past the inline ones).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.rest.len() * size_of::<AtomicU64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_has_its_own_tick_inline_or_not() {
        for columns in [0, 1, INLINE_STAMPS, INLINE_STAMPS + 1, 3 * INLINE_STAMPS] {
            let stamps = ColumnStamps::new(columns, 5);
            for col in 0..columns {
                stamps.get(col).store(100 + col as u64, Ordering::Relaxed);
            }
            for col in 0..columns {
                assert_eq!(stamps.load(col), 100 + col as u64);
                // SAFETY: `col` is one of the columns.
                let tick = unsafe { stamps.get_unchecked(col) };
                assert_eq!(tick.load(Ordering::Relaxed), 100 + col as u64);
            }
            assert_eq!(
                stamps.heap_bytes(),
                columns.saturating_sub(INLINE_STAMPS) * 8
            );
        }
    }

    #[cfg(not(loom))]
    #[test]
    fn the_inline_ticks_fill_the_rest_of_a_cache_line_beside_two_words() {
        assert_eq!(
            size_of::<[AtomicU64; INLINE_STAMPS]>() + 2 * size_of::<usize>(),
            64
        );
    }
}
