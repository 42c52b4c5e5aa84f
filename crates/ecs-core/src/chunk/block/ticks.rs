//! A chunk's change ticks: the per-column tick of the last write, the row ticks a change filter
//! asked for, the structural tick, and the questions change filters ask of them.

use super::Chunk;
use crate::chunk::row_ticks::{ChangeWindow, ColumnTicks};
use crate::ids::RowTicks;
use crate::sync::Ordering;
use std::sync::atomic::AtomicU32;

/// The first `len` of a column's row ticks as plain `u32`s, for a loop that vectorises; sound
/// under the access rule written on `ColumnTicks`.
fn plain(ticks: &[AtomicU32], len: usize) -> &[u32] {
    let ticks = &ticks[..len.min(ticks.len())];
    // SAFETY: `AtomicU32` has the size and alignment of `u32`; the slice is live for the
    // borrow; by `ColumnTicks`' access rule no store to these ticks happens while a reader
    // holds `&Chunk`, so the non-atomic reads race with nothing.
    unsafe { std::slice::from_raw_parts(ticks.as_ptr().cast::<u32>(), ticks.len()) }
}

impl Chunk {
    /// Starts keeping the row ticks `marks` asks for in column `col` (of `columns`), every row reading as
    /// written (added) at the column's tick (at the chunk's structural tick): conservative,
    /// never later than the truth.
    pub(crate) fn keep_row_ticks(
        &mut self,
        columns: usize,
        capacity: usize,
        col: usize,
        marks: RowTicks,
    ) {
        if self.marks.is_empty() {
            let tick = self.structural;
            self.marks = (0..columns)
                .map(|_| ColumnTicks::new(RowTicks::NONE, capacity, tick))
                .collect();
        }
        let changed = self.changed_tick(col);
        let structural = self.structural;
        let m = &mut self.marks[col];
        if marks.changed() && !m.tracks_changes() {
            m.extend(RowTicks::CHANGED, capacity, changed);
        }
        if marks.added() && !m.tracks_adds() {
            m.extend(RowTicks::ADDED, capacity, structural);
        }
    }

    /// Asserts the lengths of the row-tick arrays.
    pub(crate) fn check_row_ticks(&self, columns: usize, capacity: usize, want: &[RowTicks]) {
        if self.marks.is_empty() {
            assert!(
                want.iter().all(|m| *m == RowTicks::NONE),
                "row ticks missing"
            );
            return;
        }
        assert_eq!(self.marks.len(), columns, "row ticks per column");
        for (m, w) in self.marks.iter().zip(want) {
            m.check(capacity);
            assert!(m.kinds().contains(*w), "row ticks {:?} missing", w);
        }
    }

    /// Whether column `col` keeps a change tick per row (some `Changed` reader asked for its
    /// type): then writes of single rows must mark them ([`Chunk::mark_rows_unchecked`]).
    ///
    /// ```
    /// # use ecs_core::{RowTicks, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = world.location(e).unwrap().archetype.index();
    /// assert!(!world.archetypes()[arch].chunks()[0].keeps_change_ticks(0));
    /// world.keep_row_ticks(world.component_id::<u32>().unwrap(), RowTicks::CHANGED);
    /// assert!(world.archetypes()[arch].chunks()[0].keeps_change_ticks(0));
    /// ```
    #[inline(always)]
    pub fn keeps_change_ticks(&self, col: usize) -> bool {
        self.marks(col).is_some_and(ColumnTicks::tracks_changes)
    }

    /// Whether column `col` keeps an add tick per row (some `Added` reader asked for its type).
    #[inline(always)]
    pub fn keeps_add_ticks(&self, col: usize) -> bool {
        self.marks(col).is_some_and(ColumnTicks::tracks_adds)
    }

    /// Whether column `col` passes a `Changed` filter's O(1) chunk test in `window`: some row
    /// may have been written in it. Without row ticks, also rows added or moved count.
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// assert!(chunk.changed_since(0, ChangeWindow::new(world.change_tick(), 1)));
    /// ```
    #[inline(always)]
    pub fn changed_since(&self, col: usize, window: ChangeWindow) -> bool {
        window.contains(self.changed_tick(col))
            || (self.marks(col).is_none_or(|m| !m.tracks_changes())
                && window.contains(self.structural))
    }

    /// Whether every row of column `col` was written in `window` (`changed_since` holds and
    /// no row need be tested): a bulk stamp in the window, or no row ticks.
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// assert!(chunk.all_changed_since(0, ChangeWindow::new(world.change_tick(), 1)));
    /// ```
    #[inline(always)]
    pub fn all_changed_since(&self, col: usize, window: ChangeWindow) -> bool {
        match self.marks(col) {
            Some(m) if m.tracks_changes() => m.all_changed(window),
            _ => true,
        }
    }

    /// Whether row `row` of column `col` was written (or gained its value) in `window`. Columns
    /// without row ticks answer for the whole chunk ([`Chunk::changed_since`]).
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// assert!(chunk.row_changed_since(0, 0, ChangeWindow::new(world.change_tick(), 1)));
    /// ```
    #[inline(always)]
    pub fn row_changed_since(&self, col: usize, row: usize, window: ChangeWindow) -> bool {
        match self.marks(col) {
            Some(m) if m.tracks_changes() => m.row_changed(row, window),
            _ => self.changed_since(col, window),
        }
    }

    /// Clears in `words` (bit `b` of word `i` = row `64 * i + b`) the rows of column `col` not
    /// written in `window`: what `Changed` ANDs into a query's row mask. Columns without
    /// change ticks leave `words` alone (the chunk test decided for them).
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, RowTicks, World};
    /// let mut world = World::new();
    /// let a = world.spawn((1u32,));
    /// let b = world.spawn((2u32,));
    /// world.keep_row_ticks(world.component_id::<u32>().unwrap(), RowTicks::CHANGED);
    /// world.advance_tick();
    /// let since = world.change_tick();
    /// *world.get_mut::<u32>(b).unwrap() += 1;
    /// let chunk = &world.archetypes()[world.location(a).unwrap().archetype.index()].chunks()[0];
    /// let mut words = [0b11];
    /// chunk.and_changed_rows(0, ChangeWindow::new(world.change_tick(), since), &mut words);
    /// assert_eq!(words, [0b10]);
    /// ```
    #[inline]
    pub fn and_changed_rows(&self, col: usize, window: ChangeWindow, words: &mut [u64]) {
        if let Some(ticks) = self.marks(col).and_then(|m| m.changed_rows(window)) {
            crate::chunk::row_ticks::and_rows(plain(ticks, self.len), window, words);
        }
    }

    /// As [`Chunk::and_changed_rows`], for the rows that gained their component in `window`
    /// (`Added`). Columns without add ticks leave `words` alone.
    #[inline]
    pub fn and_added_rows(&self, col: usize, window: ChangeWindow, words: &mut [u64]) {
        if let Some(ticks) = self.marks(col).and_then(ColumnTicks::added_rows) {
            crate::chunk::row_ticks::and_rows(plain(ticks, self.len), window, words);
        }
    }

    /// Records a write of row `row` of column `col` at `tick` in its row ticks only, for a
    /// writer that stamped the chunk column already ([`Chunk::mark_changed_unchecked`]) and
    /// hands out single rows. Nothing happens where the column keeps no change ticks.
    ///
    /// # Safety
    /// As [`Chunk::mark_rows_unchecked`] for `row..row + 1`, and the chunk column's tick is
    /// `tick` or later already (`ColumnTicks` invariant 2).
    #[inline(always)]
    pub unsafe fn mark_row_unchecked(&self, col: usize, row: usize, tick: u64) {
        debug_assert!(row < self.len, "row {row} past {}", self.len);
        debug_assert!(self.changed_tick(col) >= tick);
        if let Some(m) = self.marks(col).filter(|m| m.tracks_changes()) {
            m.mark_row(row, tick);
        }
    }

    /// Whether some row of column `col` may have gained its component in `window` (the O(1)
    /// chunk test of `Added`). Without add marks: whether rows were added or moved in.
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// assert!(chunk.added_since(0, ChangeWindow::new(world.change_tick(), 1)));
    /// ```
    #[inline(always)]
    pub fn added_since(&self, col: usize, window: ChangeWindow) -> bool {
        match self.marks(col) {
            Some(m) if m.tracks_adds() => window.contains(m.added_max()),
            _ => window.contains(self.structural),
        }
    }

    /// Whether row `row` of column `col` gained its component in `window`; columns without add
    /// marks answer for the whole chunk ([`Chunk::added_since`]).
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// assert!(chunk.row_added_since(0, 0, ChangeWindow::new(world.change_tick(), 1)));
    /// ```
    #[inline(always)]
    pub fn row_added_since(&self, col: usize, row: usize, window: ChangeWindow) -> bool {
        match self.marks(col) {
            Some(m) if m.tracks_adds() => m.row_added(row, window),
            _ => self.added_since(col, window),
        }
    }

    /// Records a write of rows `rows` of column `col` at `tick`: the chunk column's tick, and
    /// (where the column keeps row ticks) a bulk stamp when `rows` is every row, else one
    /// tick per row. Through a shared reference, like [`Chunk::mark_changed_unchecked`].
    ///
    /// # Safety
    /// As [`Chunk::mark_changed_unchecked`]; also `rows` lies within `0..self.len()`, and
    /// no other thread marks the same rows of this column meanwhile (write access to them).
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.advance_tick();
    /// let tick = world.change_tick();
    /// let world: &World = &world;
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// // SAFETY: this example owns the world; row 0 exists; `tick` is the world's tick.
    /// unsafe { chunk.mark_rows_unchecked(0, 0..1, tick) };
    /// assert_eq!(chunk.changed_tick(0), tick);
    /// ```
    #[inline(always)]
    pub unsafe fn mark_rows_unchecked(&self, col: usize, rows: std::ops::Range<usize>, tick: u64) {
        debug_assert!(rows.end <= self.len, "rows {rows:?} past {}", self.len);
        // SAFETY: the caller holds the write of rows of column `col` (this fn's contract), which
        // is what `mark_changed_unchecked` asks.
        unsafe { self.mark_changed_unchecked(col, tick) };
        if let Some(m) = self.marks(col) {
            let all = rows.start == 0 && rows.end == self.len;
            m.mark(rows, all, tick);
        }
    }

    /// Forgets a bulk stamp and stale row ticks: an empty chunk coming back into use (the
    /// spare, or a chunk refilled by a snapshot restore) reads every row as written at `tick`.
    pub(crate) fn reset_marks(&mut self, tick: u64) {
        debug_assert!(self.is_empty());
        for m in self.marks.iter_mut() {
            m.reset(tick);
        }
    }

    /// Clamps old row ticks so their 32-bit ages never wrap (see `World::check_change_ticks`).
    pub(crate) fn clamp_marks(&mut self, now: u64) {
        for m in self.marks.iter_mut() {
            m.clamp(now);
        }
    }

    /// Restores the ticks of column `col` from a snapshot: the chunk column's tick, and the
    /// row ticks it keeps (rows `0..len`), no later than `tick`.
    pub(crate) fn load_ticks(
        &mut self,
        col: usize,
        tick: u64,
        changed: impl Fn(usize) -> u32,
        added: impl Fn(usize) -> u32,
        now: u64,
    ) {
        self.mark_changed(col, tick);
        let len = self.len;
        if let Some(m) = self.marks.get_mut(col) {
            m.load(len, changed, added, now);
        }
    }

    /// Row `row`'s (change, add) ticks in column `col`, `now` where not kept.
    #[inline]
    pub(crate) fn row_ticks(&self, col: usize, row: usize, now: u64) -> (u32, u32) {
        self.marks(col)
            .map_or((now as u32, now as u32), |m| m.get(row, now))
    }

    /// Sets row `row`'s ticks in column `col` (a row moved or written in), keeping the chunk
    /// column's tick and newest add no earlier than them (`ColumnTicks` invariant 2).
    #[inline]
    pub(crate) fn set_row_marks(&mut self, col: usize, row: usize, ticks: (u32, u32), now: u64) {
        let changed = crate::chunk::row_ticks::widen(ticks.0, now);
        if self.changed_tick(col) < changed {
            self.mark_changed(col, changed);
        }
        let len = self.len;
        if let Some(m) = self.marks.get_mut(col) {
            m.set(row, len, ticks, now);
        }
    }

    /// Tick of the last write access to component column `col`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.advance_tick();
    /// let tick = world.change_tick();
    /// *world.get_mut::<u32>(e).unwrap() = 2;
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].changed_tick(0), tick);
    /// ```
    #[inline]
    pub fn changed_tick(&self, col: usize) -> u64 {
        self.changed.load(col)
    }

    /// Records a write access to component column `col` at `tick`, through `&mut self`: the
    /// world's own writers (`get_mut`, `insert`, chunk reuse) hold the chunk exclusively.
    #[inline]
    pub(crate) fn mark_changed(&mut self, col: usize, tick: u64) {
        self.changed.get(col).store(tick, Ordering::Relaxed);
    }

    /// Records a write access to component column `col` at `tick` through a shared reference:
    /// the unchecked twin of the crate-private `mark_changed(&mut self)`, for the query layer,
    /// whose writers reach chunks through `&World`.
    ///
    /// Change ticks are how `ecs_query::Changed<T>` learns that a column was written, so only
    /// a writer may stamp them. Safe code holding `&World` or `&Chunk` cannot:
    ///
    /// ```compile_fail,E0133
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let world: &World = &world;
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// chunk.mark_changed_unchecked(0, 42); // `unsafe`: needs write access to column 0
    /// ```
    ///
    /// and the safe, `&mut self` stamp is private to `ecs-core`:
    ///
    /// ```compile_fail,E0624
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let world: &World = &world;
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// chunk.mark_changed(0, 42); // private to the crate that owns the ticks
    /// ```
    ///
    /// # Safety
    /// - The caller holds write access to column `col` of this chunk for the write being
    ///   recorded: `&mut World`, or a query element that declared a write of that column and
    ///   whose access the query layer (or a scheduler) has checked against every other access
    ///   running meanwhile. In practice only `ecs-query`'s writers (`RefRW<T>`, `&mut T`) and
    ///   `ecs-core` itself call this.
    /// - `tick` was handed out by this chunk's world (no later than its
    ///   [`change_tick`](crate::World::change_tick)).
    /// - `col` is a column of this chunk (below its archetype's column count).
    ///
    /// Breaking the first two does not corrupt memory by itself (the tick is an atomic), but
    /// it breaks the promise change detection makes to everything built on it, that a tick
    /// records a write that happened; `unsafe` makes that promise the caller's to keep. The
    /// third is a bound this method does not check (it runs once per chunk of every writing
    /// query pass).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let tick = world.change_tick();
    /// let world: &World = &world;
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// // SAFETY: this example owns the world, so nothing else reads or writes column 0, and
    /// // `tick` is the world's current tick.
    /// unsafe { chunk.mark_changed_unchecked(0, tick) };
    /// assert_eq!(chunk.changed_tick(0), tick);
    /// ```
    #[inline]
    pub unsafe fn mark_changed_unchecked(&self, col: usize, tick: u64) {
        // SAFETY: `changed` has one tick per column (invariant 1) and `col` is a column
        // (caller contract).
        unsafe { self.changed.get_unchecked(col) }.store(tick, Ordering::Relaxed);
    }

    /// Tick of the last structural change (rows added, moved in or moved within).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.advance_tick();
    /// let tick = world.change_tick();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].structural_tick(), tick);
    /// ```
    #[inline]
    pub fn structural_tick(&self) -> u64 {
        self.structural
    }

    #[inline]
    pub(crate) fn mark_structural(&mut self, tick: u64) {
        self.structural = tick;
    }
}
