//! Change ticks in snapshots: what a `Changed<T>` / `Added<T>` reader needs to see the same
//! rows after a restore as it would have seen without one.
//!
//! A snapshot keeps, per saved chunk, its row count and structural tick; per column and saved
//! chunk, the column's chunk tick; and, for the types whose rows keep ticks (some reader asked
//! for them, see `row_ticks`), each row's change and add tick. Restoring writes them back
//! *shifted*: the snapshot's tick lands on the restored world's tick (the larger of the two;
//! ticks never go back), and every saved tick moves by the same amount, so the ages of all
//! rows, and hence the answer of any reader whose own tick moved by the same amount (a
//! simulation snapshot's systems), are those of the original run. A restore into chunks of
//! another capacity gives each chunk the newest tick of the saved chunks it overlaps: never
//! later than the truth is not possible there, so it errs on "may have changed".
//!
//! The byte format (version 3) carries them too, checked when read against the invariants
//! below, so a snapshot saved to disk restores the same ages as one kept in memory. Snapshots
//! of format version 2 carry none; restoring one stamps every row changed at the restore, as
//! [`World::restore_marking_changed`](crate::World::restore_marking_changed) does for any.

use crate::archetype::Archetype;
use crate::chunk::Chunk;

/// The change ticks of one snapshot archetype's rows (see the module docs).
///
/// # Invariants
/// When `saved`: the `chunks` row counts sum to the archetype's rows; `column[i]` has one
/// entry per entry of `chunks`; `changed[i]` and `added[i]` are empty or hold one tick per
/// row, each no later than the snapshot's tick and no later (as an age) than its chunk's
/// column tick / structural tick.
#[derive(Default)]
pub(crate) struct SavedTicks {
    /// Whether ticks were saved (not for snapshots read from version-2 bytes).
    pub(crate) saved: bool,
    /// Per saved chunk, in row order: its rows and its structural tick.
    pub(crate) chunks: Vec<(u32, u64)>,
    /// Per snapshot column, per saved chunk: the column's tick.
    pub(crate) column: Vec<Vec<u64>>,
    /// Per snapshot column, per row: the change tick's low 32 bits (empty: not kept).
    pub(crate) changed: Vec<Vec<u32>>,
    /// Per snapshot column, per row: the add tick's low 32 bits (empty: not kept).
    pub(crate) added: Vec<Vec<u32>>,
}

/// Which per-row ticks to save for one snapshot column.
#[derive(Clone, Copy)]
pub(crate) struct KeepRows {
    pub(crate) changed: bool,
    pub(crate) added: bool,
}

impl SavedTicks {
    /// Empties the buffers (keeping their memory) for `columns` columns.
    pub(crate) fn shape(&mut self, columns: usize) {
        fn empty<T>(lists: &mut Vec<Vec<T>>, columns: usize) {
            lists.resize_with(columns, Vec::new);
            lists.iter_mut().for_each(Vec::clear);
        }
        self.saved = true;
        self.chunks.clear();
        empty(&mut self.column, columns);
        empty(&mut self.changed, columns);
        empty(&mut self.added, columns);
    }

    /// Appends `chunk`'s ticks; `kept[i]` is the chunk column of snapshot column `i`.
    pub(crate) fn save_chunk(
        &mut self,
        chunk: &Chunk,
        kept: &[usize],
        rows: &[KeepRows],
        now: u64,
    ) {
        let structural = chunk.structural_tick();
        self.chunks.push((chunk.len() as u32, structural));
        for (i, (&c, keep)) in kept.iter().zip(rows).enumerate() {
            let tick = chunk.changed_tick(c);
            self.column[i].push(tick);
            if keep.changed {
                let out = &mut self.changed[i];
                if chunk.keeps_change_ticks(c) {
                    out.extend((0..chunk.len()).map(|r| chunk.row_ticks(c, r, now).0));
                } else {
                    out.extend(std::iter::repeat_n(tick as u32, chunk.len()));
                }
            }
            if keep.added {
                let out = &mut self.added[i];
                if chunk.keeps_add_ticks(c) {
                    out.extend((0..chunk.len()).map(|r| chunk.row_ticks(c, r, now).1));
                } else {
                    out.extend(std::iter::repeat_n(structural as u32, chunk.len()));
                }
            }
        }
    }
    /// Writes these ticks back into `arch`, just filled by `Archetype::fill_empty` with the
    /// saved rows (see the module docs): every saved tick moves by `shift`, `from[c]` is the
    /// snapshot column of `arch`'s column `c`, and `now` is the world's tick.
    pub(crate) fn restore_into(&self, arch: &mut Archetype, from: &[usize], shift: u64, now: u64) {
        let mut first = 0;
        let mut at = (0, 0);
        for chunk in arch.chunks_mut() {
            let end = first + chunk.len();
            let (range, next) = self.overlapping(at, first, end);
            at = next;
            let newest = |ticks: &dyn Fn(usize) -> u64| range.clone().map(ticks).max();
            let structural = newest(&|k| self.chunks[k].1).map_or(now, |t| t + shift);
            chunk.mark_structural(structural);
            for (c, &f) in from.iter().enumerate() {
                let tick = newest(&|k| self.column[f][k]).map_or(now, |t| t + shift);
                let changed = RowSource::of(&self.changed[f], first..end, shift, tick);
                let added = RowSource::of(&self.added[f], first..end, shift, structural);
                chunk.load_ticks(c, tick, |r| changed.at(r), |r| added.at(r), now);
            }
            first = end;
        }
    }

    /// Bytes of saved ticks.
    pub(crate) fn size_bytes(&self) -> usize {
        let u64s = self.chunks.len() * 2 + self.column.iter().map(Vec::len).sum::<usize>();
        let u32s: usize = self.changed.iter().chain(&self.added).map(Vec::len).sum();
        u64s * size_of::<u64>() + u32s * size_of::<u32>()
    }

    /// The saved chunks that hold rows `first..end`, as an index range into `chunks`; `from`
    /// is where the search starts (the result of the previous, lower range), with the first
    /// row of that saved chunk.
    pub(crate) fn overlapping(
        &self,
        (mut k, mut k_first): (usize, usize),
        first: usize,
        end: usize,
    ) -> (std::ops::Range<usize>, (usize, usize)) {
        while k < self.chunks.len() && k_first + self.chunks[k].0 as usize <= first {
            k_first += self.chunks[k].0 as usize;
            k += 1;
        }
        let (start, start_first) = (k, k_first);
        let mut stop = k;
        let mut at = k_first;
        while stop < self.chunks.len() && at < end {
            at += self.chunks[stop].0 as usize;
            stop += 1;
        }
        (
            start..stop.max(start + 1).min(self.chunks.len()),
            (start, start_first),
        )
    }
}

/// Saved row ticks for one chunk column: a slice to shift, or one value for every row.
#[derive(Clone, Copy)]
pub(crate) enum RowSource<'a> {
    /// Saved ticks, to move by `shift`.
    Rows(&'a [u32], u32),
    /// One tick for every row, final.
    All(u32),
}

impl<'a> RowSource<'a> {
    /// Rows `rows` of `saved` moved by `shift`, or `all` for every row where none were saved.
    pub(crate) fn of(saved: &'a [u32], rows: std::ops::Range<usize>, shift: u64, all: u64) -> Self {
        if saved.is_empty() {
            Self::All(all as u32)
        } else {
            Self::Rows(&saved[rows], shift as u32)
        }
    }

    #[inline]
    pub(crate) fn at(self, row: usize) -> u32 {
        match self {
            Self::Rows(ticks, shift) => ticks[row].wrapping_add(shift),
            Self::All(tick) => tick,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_finds_the_saved_chunks_of_a_row_range() {
        let saved = SavedTicks {
            saved: true,
            chunks: vec![(4, 1), (4, 2), (2, 3)],
            ..SavedTicks::default()
        };
        let (r, at) = saved.overlapping((0, 0), 0, 4);
        assert_eq!(r, 0..1);
        let (r, at) = saved.overlapping(at, 4, 10);
        assert_eq!(r, 1..3);
        assert_eq!(at, (1, 4));
        // A bigger chunk covering two and a half saved ones.
        assert_eq!(saved.overlapping((0, 0), 0, 9).0, 0..3);
        assert_eq!(saved.overlapping((0, 0), 3, 5).0, 0..2);
    }
}
