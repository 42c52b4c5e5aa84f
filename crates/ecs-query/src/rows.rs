//! Which rows of a chunk pass a query: [`Rows`] (all, none or some, per element), the row mask
//! that mixed chunks iterate, and the helpers that read one enable slot of a chunk. The bottom
//! of the query layer: the elements (`fetch`, `filter`, `enabled`) and the state and its
//! loops (`state/`, `run/`) build on it, and it knows none of them.

use ecs_core::{Archetype, Chunk, ComponentId};

/// Which rows of a chunk an element keeps by enable bits.
///
/// ```
/// # use ecs_query::Rows;
/// assert_eq!(Rows::All.and(Rows::Some), Rows::Some);
/// assert_eq!(Rows::Some.and(Rows::None), Rows::None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// Every row.
    All,
    /// No row: the chunk is skipped.
    None,
    /// Some rows: [`WorldQuery::and_rows`](crate::WorldQuery::and_rows) says which.
    Some,
}

impl Rows {
    /// Both elements' rows: `None` wins, then `Some`.
    #[inline(always)]
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        match (self, other) {
            (Self::None, _) | (_, Self::None) => Self::None,
            (Self::All, Self::All) => Self::All,
            _ => Self::Some,
        }
    }

    /// Either element's rows (`Or`): `All` wins, then `Some`.
    ///
    /// ```
    /// # use ecs_query::Rows;
    /// assert_eq!(Rows::None.or(Rows::Some), Rows::Some);
    /// assert_eq!(Rows::Some.or(Rows::All), Rows::All);
    /// assert_eq!(Rows::None.or(Rows::None), Rows::None);
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn or(self, other: Self) -> Self {
        match (self, other) {
            (Self::All, _) | (_, Self::All) => Self::All,
            (Self::None, Self::None) => Self::None,
            _ => Self::Some,
        }
    }
}

/// What the chunk classification (`QueryState::classify`) says about one chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChunkRows {
    /// A change filter rejects the whole chunk (its O(1) test).
    Rejected,
    /// No row passes by enable bits.
    Empty,
    /// Every row passes.
    All,
    /// Some rows may pass: the mask says which.
    Masked,
}

/// "No enable slot": the column's type is not enableable, or the archetype lacks it.
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// The enable slot of component `id` in `arch`, or [`NO_SLOT`].
#[inline]
pub(crate) fn slot_of(arch: &Archetype, id: ComponentId) -> u32 {
    arch.column(id)
        .and_then(|c| arch.enable_slot(c))
        .map_or(NO_SLOT, |s| s as u32)
}

/// [`Rows`] of the rows whose bit in `slot` is set (`want = true`) or clear (`false`).
#[inline(always)]
pub(crate) fn slot_rows(slot: u32, chunk: &Chunk, want: bool) -> Rows {
    if slot == NO_SLOT {
        return Rows::All;
    }
    let on = chunk.enable_bits().get(slot as usize).count();
    let hit = if want { on } else { chunk.len() - on };
    if hit == chunk.len() {
        Rows::All
    } else if hit == 0 {
        Rows::None
    } else {
        Rows::Some
    }
}

/// Whether row `row`'s bit in `slot` is set (`want = true`) or clear; `true` without a slot.
#[inline(always)]
pub(crate) fn slot_has(slot: u32, chunk: &Chunk, row: usize, want: bool) -> bool {
    slot == NO_SLOT || chunk.enable_bits().get(slot as usize).get(row) == want
}

/// ANDs into `words` the bits of `slot` (`want = true`) or their complement.
#[inline]
pub(crate) fn slot_and(slot: u32, chunk: &Chunk, words: &mut [u64], want: bool) {
    if slot == NO_SLOT {
        return;
    }
    let mask = chunk.enable_bits().get(slot as usize);
    for (i, w) in words.iter_mut().enumerate() {
        let bits = mask.word(i);
        *w &= if want { bits } else { !bits };
    }
}

/// The rows of one chunk that pass a query, one bit per row: what mixed chunks iterate.
#[derive(Clone, Debug, Default)]
pub(crate) struct RowMask {
    words: Vec<u64>,
}

impl RowMask {
    /// Fills the mask for `chunk` from the elements' `and_rows`.
    #[inline]
    pub(crate) fn fill(&mut self, len: usize, and: impl FnOnce(&mut [u64])) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), u64::MAX);
        if len % 64 != 0 {
            *self.words.last_mut().expect("len > 0") = (1u64 << (len % 64)) - 1;
        }
        and(&mut self.words);
    }

    /// The words: bit `b` of word `i` is row `64 * i + b`.
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// Number of rows that pass.
    pub(crate) fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The first run of set bits at or after `from`: `(start, end)`.
    #[inline]
    pub(crate) fn next_run(&self, from: usize) -> Option<(usize, usize)> {
        let start = self.find(from, false)?;
        let end = self.find(start, true).unwrap_or(self.words.len() * 64);
        Some((start, end))
    }

    /// The first row at or after `from` whose bit is set (`clear = false`) or clear.
    #[inline]
    fn find(&self, from: usize, clear: bool) -> Option<usize> {
        let mut i = from / 64;
        let flip = if clear { u64::MAX } else { 0 };
        let mut w = (*self.words.get(i)? ^ flip) & (u64::MAX << (from % 64));
        loop {
            if w != 0 {
                return Some(i * 64 + w.trailing_zeros() as usize);
            }
            i += 1;
            w = *self.words.get(i)? ^ flip;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_the_set_bits() {
        let mut mask = RowMask::default();
        mask.fill(130, |w| {
            w[0] = 0b1110_0110;
            w[1] = u64::MAX;
        });
        assert_eq!(mask.next_run(0), Some((1, 3)));
        assert_eq!(mask.next_run(3), Some((5, 8)));
        assert_eq!(mask.next_run(8), Some((64, 130)));
        assert_eq!(mask.next_run(130), None);
        assert_eq!(mask.count(), 2 + 3 + 66);
    }
}
