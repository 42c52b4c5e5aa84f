//! Row ticks of an archetype: which columns keep per-row change and add ticks, and how those
//! ticks are stamped, moved and carried when rows move.

use super::rows::RowAddr;
use super::Archetype;
use crate::ids::RowTicks;

impl Archetype {
    /// Starts keeping the row ticks `marks` asks for (change and/or add ticks) for column `col`,
    /// in every chunk (and the spare).
    pub(crate) fn keep_row_ticks(&mut self, col: usize, marks: RowTicks) {
        let want = self.marks[col].union(marks);
        if want == self.marks[col] {
            return;
        }
        self.marks[col] = want;
        self.any_marks = true;
        self.chunks_changed();
        let (columns, cap) = (self.columns.len(), self.layout.capacity());
        for chunk in self.chunks.iter_mut().chain(self.spare.as_mut()) {
            chunk.keep_row_ticks(columns, cap, col, want);
        }
    }

    /// Clamps old row ticks in every chunk (and the spare); see `World::check_change_ticks`.
    pub(crate) fn clamp_marks(&mut self, now: u64) {
        if self.any_marks {
            for chunk in self.chunks.iter_mut().chain(self.spare.as_mut()) {
                chunk.clamp_marks(now);
            }
        }
    }

    /// Whether some column of this archetype keeps row ticks (a `Changed` or `Added` reader
    /// asked for its type). When none does, the chunk column tick a writer stores when it
    /// fetches a chunk is the whole record of its writes, so a query can skip per-row marking.
    /// Only `&mut World` switches marks on, so the answer holds for a whole query run.
    ///
    /// ```
    /// # use ecs_core::{RowTicks, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = world.location(e).unwrap().archetype.index();
    /// assert!(!world.archetypes()[arch].keeps_row_ticks());
    /// let id = world.component_id::<u32>().unwrap();
    /// world.keep_row_ticks(id, RowTicks::CHANGED);
    /// assert!(world.archetypes()[arch].keeps_row_ticks());
    /// ```
    #[inline]
    pub fn keeps_row_ticks(&self) -> bool {
        self.any_marks
    }

    /// The row ticks column `col` keeps.
    ///
    /// ```
    /// # use ecs_core::{RowTicks, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.row_ticks(0), RowTicks::NONE);
    /// ```
    pub fn row_ticks(&self, col: usize) -> RowTicks {
        self.marks[col]
    }

    /// Carries the row ticks of row `from` of `src` to row `to` of `dst`, column by column
    /// along `src_to_dst` (`REMOVED`-free entries only), for a row moved between archetypes.
    #[inline]
    pub(crate) fn carry_marks(
        src: &Archetype,
        from: RowAddr,
        dst: &mut Archetype,
        to: RowAddr,
        src_to_dst: impl Iterator<Item = (usize, usize)>,
        now: u64,
    ) {
        if !dst.any_marks {
            return;
        }
        for (c, d) in src_to_dst {
            if dst.marks[d] != RowTicks::NONE {
                let ticks = src.chunks[from.chunk].row_ticks(c, from.r, now);
                dst.chunks[to.chunk].set_row_marks(d, to.r, ticks, now);
            }
        }
    }

    /// Records a write of column `col` at row `r` of chunk `chunk` at `tick` in the row
    /// marks, for a column that keeps them (the caller stamps the chunk's column tick).
    pub(crate) fn stamp_row_changed(&mut self, chunk: usize, col: usize, r: usize, tick: u64) {
        let chunk = &mut self.chunks[chunk];
        let (_, added) = chunk.row_ticks(col, r, tick);
        chunk.set_row_marks(col, r, (tick as u32, added), tick);
    }

    /// Records that the values of `cols` at `addr` were written at `tick` (and, if `added`,
    /// that the row gained them then).
    #[inline(always)]
    pub(crate) fn stamp_row(&mut self, addr: RowAddr, cols: &[u32], added: bool, tick: u64) {
        if self.any_marks {
            self.stamp_row_marks(addr, cols, added, tick);
            return;
        }
        // The common case, on every insert and remove: one chunk tick store per column.
        let chunk = &mut self.chunks[addr.chunk];
        for &c in cols {
            chunk.mark_changed(c as usize, tick);
        }
    }

    /// [`Archetype::stamp_row`] where some column keeps row ticks.
    #[inline(never)]
    fn stamp_row_marks(&mut self, addr: RowAddr, cols: &[u32], added: bool, tick: u64) {
        let chunk = &mut self.chunks[addr.chunk];
        for &c in cols {
            let c = c as usize;
            chunk.mark_changed(c, tick);
            if self.marks[c] != RowTicks::NONE {
                let (_, old_added) = chunk.row_ticks(c, addr.r, tick);
                let add = if added { tick as u32 } else { old_added };
                chunk.set_row_marks(c, addr.r, (tick as u32, add), tick);
            }
        }
    }

    /// Copies the row ticks of the row at `from` to `to`, both of this archetype.
    #[inline(always)]
    pub(super) fn move_marks(&mut self, from: RowAddr, to: RowAddr, now: u64) {
        if self.any_marks {
            self.move_row_marks(from, to, now);
        }
    }

    /// [`Archetype::move_marks`] where some column keeps row ticks.
    #[inline(never)]
    fn move_row_marks(&mut self, from: RowAddr, to: RowAddr, now: u64) {
        for c in 0..self.columns.len() {
            if self.marks[c] != RowTicks::NONE {
                let ticks = self.chunks[from.chunk].row_ticks(c, from.r, now);
                self.chunks[to.chunk].set_row_marks(c, to.r, ticks, now);
            }
        }
    }
}
