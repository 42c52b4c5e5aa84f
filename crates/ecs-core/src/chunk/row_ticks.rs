//! Row ticks: which rows of a chunk column were written, or gained their component, and when.
//!
//! A chunk keeps, per component column, the tick of the newest write (`Chunk::changed_tick`),
//! which lets a change filter skip a chunk in O(1). Types that a `Changed<T>` or `Added<T>`
//! reader asks about additionally keep, per chunk column, a [`ColumnTicks`]:
//!
//! ```text
//! ColumnTicks of one chunk column (capacity rows)
//! | bulk: u64 | changed: [u32; capacity] | added_max: u64 | added: [u32; capacity] |
//!   "all rows     row r written at         newest add       row r gained T at
//!    written at   changed[r] (low 32 bits  in the chunk     added[r]
//!    bulk" (0:    of the tick)
//!    never)
//! ```
//!
//! A row's change tick is the newer of `bulk` and `changed[r]`. A visit of a whole chunk
//! (`for_each`, `for_each_chunk`, a parallel task covering a chunk) stores `bulk` only: O(1) per
//! chunk, so full loops keep their speed. A visit of single rows (`get`, `get_mut`, `iter`, a
//! parallel task covering part of a chunk) stores `changed[r]`. Row arrays cost 4 bytes per row
//! per kind (changed, added), and only for the types some reader asked about: marks are
//! switched on per type when the first query state with `Changed<T>` / `Added<T>` is built
//! ([`World::keep_row_ticks`](crate::World::keep_row_ticks)).
//!
//! Row ticks are 32 bits: they are read relative to the reader's run tick (`now`), as ages
//! `now - tick` modulo 2^32. A window that spans 2^31 ticks or more (a reader that has not run
//! for that long, or has never run) passes every row of a chunk whose chunk tick passes, so a
//! change is never lost; a row left unwritten for 2^32 ticks or more may be reported as changed
//! once more (its age wraps). Chunk ticks and `bulk` are 64 bits and exact.

// Plain std atomics: row ticks are outside the loom models (entity reservation).
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::ids::RowTicks;

/// The ticks a change filter passes in one run: `last_seen..`, read from the run's tick `now`.
///
/// ```
/// # use ecs_core::ChangeWindow;
/// let window = ChangeWindow::new(10, 7);
/// assert!(window.contains(7) && !window.contains(6));
/// assert!(window.contains_row(8) && !window.contains_row(6));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeWindow {
    now: u64,
    last_seen: u64,
}

/// Windows at least this wide pass every row whose chunk passes (32-bit ages would wrap).
const WIDE: u64 = 1 << 31;

impl ChangeWindow {
    /// The window `last_seen..` of a run whose tick is `now`.
    #[inline]
    pub const fn new(now: u64, last_seen: u64) -> Self {
        Self { now, last_seen }
    }

    /// The first tick in the window.
    #[inline]
    pub const fn last_seen(self) -> u64 {
        self.last_seen
    }

    /// The run's tick.
    #[inline]
    pub const fn now(self) -> u64 {
        self.now
    }

    /// Whether a 64-bit tick is in the window.
    #[inline(always)]
    pub const fn contains(self, tick: u64) -> bool {
        tick >= self.last_seen
    }

    /// Whether a 32-bit row tick (the low bits of a tick no later than `now`) is in the window.
    /// Exact while the row was written less than 2^32 ticks ago and the window spans less than
    /// 2^31 ticks; a wider window contains every row.
    #[inline(always)]
    pub const fn contains_row(self, row: u32) -> bool {
        if self.last_seen > self.now {
            return false;
        }
        let span = self.now - self.last_seen;
        span >= WIDE || (self.now as u32).wrapping_sub(row) <= span as u32
    }
}

/// Clears in `words` the rows whose tick in `ticks` is outside `window` (rows past
/// `ticks.len()` or past the words are left alone). Plain `u32`s, so the loop vectorises.
pub(crate) fn and_rows(ticks: &[u32], window: ChangeWindow, words: &mut [u64]) {
    if window.last_seen > window.now {
        words.fill(0);
        return;
    }
    let span = window.now - window.last_seen;
    if span >= WIDE {
        return;
    }
    let (now, span) = (window.now as u32, span as u32);
    for (word, block) in words.iter_mut().zip(ticks.chunks(64)) {
        if *word != 0 {
            *word &= block_bits(block, now, span);
        }
    }
}

/// Bit `b` set where `block[b]` is at most `span` ticks before `now` (`block.len() <= 64`).
/// Compares into bytes first, then packs eight bytes into eight bits with one multiply: both
/// loops vectorise, where a shift per row would not.
#[inline]
fn block_bits(block: &[u32], now: u32, span: u32) -> u64 {
    let mut flags = [0u8; 64];
    for (f, &t) in flags.iter_mut().zip(block) {
        *f = u8::from(now.wrapping_sub(t) <= span);
    }
    let mut bits = 0u64;
    for (i, eight) in flags.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(eight.try_into().expect("chunks_exact(8)"));
        // Byte `j` (0 or 1) lands on bit `56 + j` of the product.
        bits |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * i);
    }
    bits
}

/// The newer of two 32-bit ticks, both no later than `now`.
#[inline]
pub(crate) fn newer(a: u32, b: u32, now: u64) -> u32 {
    let now = now as u32;
    if now.wrapping_sub(a) <= now.wrapping_sub(b) {
        a
    } else {
        b
    }
}

/// The 64-bit tick whose low bits are `row`, no later than `now` (exact within 2^32 ticks).
#[inline]
pub(crate) fn widen(row: u32, now: u64) -> u64 {
    now.saturating_sub(u64::from((now as u32).wrapping_sub(row)))
}

/// The row ticks of one chunk column (see the module doc).
///
/// # Invariants
/// 1. `changed` is empty or holds `capacity` ticks; so is `added`.
/// 2. For every row `r < len` of the chunk, the newer of `bulk` and `changed[r]` and every
///    `added[r]` are no later than the chunk column's tick (`Chunk::changed_tick`) and
///    `added_max` respectively, so chunk-level skips never hide a row.
/// 3. `changed[r]` and `added[r]` of rows `len..` mean nothing.
///
/// # Access rule
/// Row ticks are part of their column's data for access purposes: they are stored only by
/// writers of the column (`Chunk::mark_rows_unchecked`, `Chunk::mark_row_unchecked`, whose
/// callers hold the write of those rows) or through `&mut Chunk`, exactly like the values. So
/// while a reader of the column holds `&Chunk`, no store races it, and the chunk may read the
/// `changed` and `added` arrays as plain `u32`s (`plain` in `chunk/block.rs`, for loops that
/// vectorise), as soundly as it reads the column's values.
pub(crate) struct ColumnTicks {
    bulk: AtomicU64,
    changed: Box<[AtomicU32]>,
    added_max: u64,
    added: Box<[AtomicU32]>,
}

impl ColumnTicks {
    /// Marks for `capacity` rows, each reading as written (and added) at `tick`.
    pub(crate) fn new(marks: RowTicks, capacity: usize, tick: u64) -> Self {
        let array = |on: bool| -> Box<[AtomicU32]> {
            if on {
                (0..capacity).map(|_| AtomicU32::new(tick as u32)).collect()
            } else {
                Box::default()
            }
        };
        Self {
            bulk: AtomicU64::new(0),
            changed: array(marks.changed()),
            added_max: tick,
            added: array(marks.added()),
        }
    }

    /// Which marks this column keeps.
    #[inline]
    pub(crate) fn kinds(&self) -> RowTicks {
        let c = if self.changed.is_empty() {
            RowTicks::NONE
        } else {
            RowTicks::CHANGED
        };
        let a = if self.added.is_empty() {
            RowTicks::NONE
        } else {
            RowTicks::ADDED
        };
        c.union(a)
    }

    /// Adds the arrays `marks` asks for and this column lacks, each row reading as written
    /// (added) at `tick`.
    pub(crate) fn extend(&mut self, marks: RowTicks, capacity: usize, tick: u64) {
        let fresh = Self::new(marks, capacity, tick);
        if self.changed.is_empty() {
            self.changed = fresh.changed;
        }
        if self.added.is_empty() {
            self.added = fresh.added;
            self.added_max = self.added_max.max(tick);
        }
    }

    /// Whether change ticks are kept per row.
    #[inline]
    pub(crate) fn tracks_changes(&self) -> bool {
        !self.changed.is_empty()
    }

    /// Whether add ticks are kept per row.
    #[inline]
    pub(crate) fn tracks_adds(&self) -> bool {
        !self.added.is_empty()
    }

    /// Whether every row was written in `window` (a bulk stamp in it).
    #[inline(always)]
    pub(crate) fn all_changed(&self, window: ChangeWindow) -> bool {
        window.contains(self.bulk.load(Ordering::Relaxed))
    }

    /// Whether row `row` was written in `window`.
    #[inline(always)]
    pub(crate) fn row_changed(&self, row: usize, window: ChangeWindow) -> bool {
        self.all_changed(window)
            || self
                .changed
                .get(row)
                .is_none_or(|t| window.contains_row(t.load(Ordering::Relaxed)))
    }

    /// The per-row change ticks to test against `window`, or `None` when every row passes
    /// the row test (a bulk stamp in the window, or no change ticks kept).
    #[inline]
    pub(crate) fn changed_rows(&self, window: ChangeWindow) -> Option<&[AtomicU32]> {
        (!self.all_changed(window) && !self.changed.is_empty()).then_some(&*self.changed)
    }

    /// The per-row add ticks, or `None` when none are kept.
    #[inline]
    pub(crate) fn added_rows(&self) -> Option<&[AtomicU32]> {
        (!self.added.is_empty()).then_some(&*self.added)
    }

    /// Whether row `row` gained the component in `window`.
    #[inline(always)]
    pub(crate) fn row_added(&self, row: usize, window: ChangeWindow) -> bool {
        self.added
            .get(row)
            .is_none_or(|t| window.contains_row(t.load(Ordering::Relaxed)))
    }

    /// The newest add in the chunk.
    #[inline]
    pub(crate) fn added_max(&self) -> u64 {
        self.added_max
    }

    /// Records that row `row` was written at `tick` (a column that keeps change ticks).
    #[inline(always)]
    pub(crate) fn mark_row(&self, row: usize, tick: u64) {
        self.changed[row].store(tick as u32, Ordering::Relaxed);
    }

    /// Records that rows `rows` (`all`: every row of the chunk) were written at `tick`.
    #[inline]
    pub(crate) fn mark(&self, rows: std::ops::Range<usize>, all: bool, tick: u64) {
        if all || self.changed.is_empty() {
            self.bulk.store(tick, Ordering::Relaxed);
        } else {
            for t in &self.changed[rows] {
                t.store(tick as u32, Ordering::Relaxed);
            }
        }
    }

    /// Row `row`'s (change, add) ticks, the bulk stamp folded in; `now` where not kept.
    #[inline]
    pub(crate) fn get(&self, row: usize, now: u64) -> (u32, u32) {
        let bulk = self.bulk.load(Ordering::Relaxed);
        let changed = self
            .changed
            .get(row)
            .map_or(now as u32, |t| t.load(Ordering::Relaxed));
        let changed = if bulk == 0 {
            changed
        } else {
            newer(changed, bulk as u32, now)
        };
        let added = self
            .added
            .get(row)
            .map_or(now as u32, |t| t.load(Ordering::Relaxed));
        (changed, added)
    }

    /// Sets row `row`'s ticks (of a chunk with `len` rows, `row < len`); returns the 64-bit
    /// change tick, for the chunk column's tick. Folds a bulk stamp into the rows first, so
    /// that a row moved in keeps its own, older, tick.
    pub(crate) fn set(&mut self, row: usize, len: usize, (changed, added): (u32, u32), now: u64) {
        let bulk = *self.bulk.get_mut();
        if bulk != 0 && !self.changed.is_empty() {
            for t in &mut self.changed[..len] {
                *t.get_mut() = newer(*t.get_mut(), bulk as u32, now);
            }
            *self.bulk.get_mut() = 0;
        }
        if let Some(t) = self.changed.get_mut(row) {
            *t.get_mut() = changed;
        }
        if let Some(t) = self.added.get_mut(row) {
            *t.get_mut() = added;
            self.added_max = self.added_max.max(widen(added, now));
        }
    }

    /// Sets rows `0..rows` to the ticks `changed` and `added` give (a snapshot restore), no
    /// bulk stamp; every tick is no later than `now`.
    pub(crate) fn load(
        &mut self,
        rows: usize,
        changed: impl Fn(usize) -> u32,
        added: impl Fn(usize) -> u32,
        now: u64,
    ) {
        *self.bulk.get_mut() = 0;
        for (r, t) in self.changed.iter_mut().take(rows).enumerate() {
            *t.get_mut() = changed(r);
        }
        if !self.added.is_empty() {
            let mut newest = 0;
            for (r, t) in self.added.iter_mut().take(rows).enumerate() {
                let tick = added(r);
                *t.get_mut() = tick;
                newest = newest.max(widen(tick, now));
            }
            self.added_max = newest;
        }
    }

    /// Moves every row tick older than 2^31 ticks before `now` up to exactly 2^31 ticks before
    /// it. Answers do not change (a window narrower than 2^31 ticks excludes both; a wider
    /// one passes every row), and ages stay below 2^32, so they never wrap while this runs at
    /// least once every 2^31 ticks.
    pub(crate) fn clamp(&mut self, now: u64) {
        let oldest = (now as u32).wrapping_sub(WIDE as u32);
        for t in self.changed.iter_mut().chain(self.added.iter_mut()) {
            let t = t.get_mut();
            if (now as u32).wrapping_sub(*t) > WIDE as u32 {
                *t = oldest;
            }
        }
    }

    /// Heap bytes of the row arrays.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.changed.len() + self.added.len()) * size_of::<AtomicU32>()
    }

    /// Forgets the bulk stamp and reads every row as written and added at `tick`; for a chunk
    /// with no rows coming back into use, whose rows will be written at `tick` or later.
    pub(crate) fn reset(&mut self, tick: u64) {
        *self.bulk.get_mut() = 0;
        for t in self.changed.iter_mut().chain(self.added.iter_mut()) {
            *t.get_mut() = tick as u32;
        }
        self.added_max = tick;
    }

    /// Lengths for `check_invariants`.
    pub(crate) fn check(&self, capacity: usize) {
        assert!(
            self.changed.is_empty() || self.changed.len() == capacity,
            "row change ticks: {} for capacity {capacity}",
            self.changed.len()
        );
        assert!(
            self.added.is_empty() || self.added.len() == capacity,
            "row add ticks: {} for capacity {capacity}",
            self.added.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_read_row_ticks_across_the_u32_wrap() {
        let now = (1u64 << 32) + 5;
        let window = ChangeWindow::new(now, (1 << 32) - 3);
        assert!(window.contains_row((now - 1) as u32));
        assert!(window.contains_row(((1u64 << 32) - 3) as u32));
        assert!(!window.contains_row(((1u64 << 32) - 4) as u32));
        assert_eq!(widen(((1u64 << 32) - 4) as u32, now), (1 << 32) - 4);
        assert_eq!(newer(u32::MAX, 2, now), 2);
        // A window of 2^31 ticks or more passes everything.
        assert!(ChangeWindow::new(now, 1).contains_row(0));
        assert!(ChangeWindow::new(u64::MAX, 1).contains_row(7));
    }

    #[test]
    fn row_masks_pack_every_row_of_a_block() {
        let ticks: Vec<u32> = (0..100u32)
            .map(|r| if r % 3 == 0 { 9 } else { 2 })
            .collect();
        let mut words = [u64::MAX, (1 << 36) - 1];
        and_rows(&ticks, ChangeWindow::new(10, 5), &mut words);
        for r in 0..100 {
            assert_eq!(words[r / 64] >> (r % 64) & 1 == 1, r % 3 == 0, "row {r}");
        }
        let mut words = [0b1010];
        and_rows(&ticks[..4], ChangeWindow::new(10, 5), &mut words);
        assert_eq!(words, [0b1000]);
    }

    #[test]
    fn a_bulk_stamp_is_folded_in_before_a_row_moves_in() {
        let mut marks = ColumnTicks::new(RowTicks::CHANGED, 4, 1);
        marks.mark(0..4, true, 9);
        let window = ChangeWindow::new(10, 9);
        assert!(marks.all_changed(window));
        marks.set(3, 4, (2, 2), 10);
        assert!(!marks.all_changed(window));
        assert!(marks.row_changed(0, window) && !marks.row_changed(3, window));
    }
}
