//! Enableable components: switching a component off for one entity without moving its row.
//!
//! A type opts in with [`World::register_enableable`] before its first use. Every archetype
//! that holds an enableable type then keeps, in each chunk, one bitset per such column: bit
//! `r` says whether row `r`'s value counts as present. Toggling is a load and a store of one
//! 64-bit word (no locked read-modify-write, no counter), with no row move and no archetype
//! change; queries skip disabled rows (see `ecs-query`'s `enabled` module), counting a
//! chunk's enabled rows with one `popcnt` per 64 rows when they classify it.
//!
//! Why plain stores suffice: a word is written only by a holder of write access to its
//! component, either `&mut World` or a writing query, and a query run never hands rows of one
//! 64-row word to two tasks (`ecs-query`'s parallel split cuts chunks on word boundaries).
//! The words are still atomics, so readers racing a buggy writer would see stale bits, never
//! undefined behaviour.
//!
//! ```text
//! Chunk (16 KiB block)                    Chunk::masks (heap, per chunk)
//! | Entity[..cap] | A[..cap] | B[..cap] |  [ B: words[cap.div_ceil(64)] ]
//!                                           ^ one `EnableMask` per enableable column
//! ```
//!
//! Types never registered as enableable cost nothing: their archetypes keep an empty
//! [`ChunkMasks`] (no allocation), and row moves skip the mask work after one length test.
//!
//! Enabling or disabling `T` marks `T`'s column changed (change detection sees it as a write
//! of `T`). Row moves carry the bit: to the filled hole on swap-remove, and to the new
//! archetype when other components are added or removed.

use std::sync::atomic::{AtomicU64, Ordering};

/// The enable bits of one enableable column in one chunk.
///
/// The words are atomics so that a query holding write access to the component can toggle
/// rows of one chunk from several tasks, each owning whole words; reads and writes are
/// relaxed loads and stores, as cheap as plain ones.
///
/// # Invariants
/// 1. `words.len() == capacity.div_ceil(64)` for the archetype's chunk capacity.
/// 2. Bits of rows at or past the chunk's `len` are 0.
/// 3. Each word is written by one thread at a time (see the module docs).
#[derive(Debug)]
pub struct EnableMask {
    words: Box<[AtomicU64]>,
}

impl EnableMask {
    fn new(capacity: usize) -> Self {
        Self {
            words: (0..capacity.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// Number of enabled rows: one `popcnt` per 64 rows of capacity.
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Hidden;
    /// let mut world = World::new();
    /// world.register_enableable::<Hidden>();
    /// let e = world.spawn((Hidden,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].enable_bits().get(0).count(), 1);
    /// ```
    #[inline]
    pub fn count(&self) -> usize {
        self.words
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as usize)
            .sum()
    }

    /// Number of 64-row words (`capacity.div_ceil(64)`).
    #[inline]
    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// Word `i`: bit `b` is row `64 * i + b`.
    ///
    /// # Panics
    /// If `i >= word_count()`.
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.words[i].load(Ordering::Relaxed)
    }

    /// Whether row `r` is enabled (false past the chunk's rows).
    ///
    /// # Panics
    /// If `r` is past the chunk capacity.
    #[inline]
    pub fn get(&self, r: usize) -> bool {
        self.word(r / 64) & (1 << (r % 64)) != 0
    }

    /// Sets row `r`'s bit through a shared reference; returns the previous value.
    ///
    /// # Safety
    /// - `r` is below the chunk's `len` (invariant 2).
    /// - The caller holds write access to this column's component for the chunk (as a
    ///   query with a write of it does), so no one reads the bit expecting it stable, and no
    ///   other thread writes word `r / 64` meanwhile (invariant 3: a parallel query run gives
    ///   each 64-row word to one task). The update is a load and a store, not a locked
    ///   read-modify-write: a concurrent writer of the same word would lose bits (though
    ///   never cause undefined behaviour, the words being atomics).
    #[inline]
    pub unsafe fn set_unchecked(&self, r: usize, on: bool) -> bool {
        debug_assert!(r < self.words.len() * 64, "row {r} past the mask");
        let bit = 1u64 << (r % 64);
        let word = &self.words[r / 64];
        let old = word.load(Ordering::Relaxed);
        let was = old & bit != 0;
        if was != on {
            word.store(old ^ bit, Ordering::Relaxed);
        }
        was
    }

    /// Sets row `r`'s bit through a shared reference with one atomic read-modify-write,
    /// so that holders of other rows of the same 64-row word on other threads keep their
    /// writes; returns the previous value. A row whose bit is already `on` costs a load only.
    /// About 6× the plain [`EnableMask::set_unchecked`] per toggle (the `enable` bench's
    /// `mask_atomic_rmw` row), which is why the query layer's `EnabledMut` handles stay on
    /// one thread and use the plain store instead.
    ///
    /// # Safety
    /// - `r` is below the chunk's `len` (invariant 2).
    /// - The caller holds write access to this column's component for row `r` (as the one
    ///   `EnabledMut` handle of the row does): no one else writes this row's bit meanwhile.
    ///   Other rows' bits of the word may change at the same time.
    #[inline]
    pub unsafe fn set_shared(&self, r: usize, on: bool) -> bool {
        debug_assert!(r < self.words.len() * 64, "row {r} past the mask");
        let bit = 1u64 << (r % 64);
        let word = &self.words[r / 64];
        // Only this row's holder changes `bit`, so a stale view of the other bits is harmless.
        if (word.load(Ordering::Relaxed) & bit != 0) == on {
            return on;
        }
        let old = if on {
            word.fetch_or(bit, Ordering::Relaxed)
        } else {
            word.fetch_and(!bit, Ordering::Relaxed)
        };
        old & bit != 0
    }

    /// `set_unchecked` through `&mut`: the world's own row bookkeeping.
    #[inline]
    pub(crate) fn set(&mut self, r: usize, on: bool) {
        let bit = 1u64 << (r % 64);
        let word = self.words[r / 64].get_mut();
        if on {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// Word `w` (rows `64 * w ..`), for batch edits through `&mut`.
    #[inline]
    pub(crate) fn word_mut(&mut self, w: usize) -> &mut u64 {
        self.words[w].get_mut()
    }

    fn clear(&mut self) {
        for w in self.words.iter_mut() {
            *w.get_mut() = 0;
        }
    }

    fn check(&self, len: usize, what: &dyn Fn() -> String) {
        for r in len..self.words.len() * 64 {
            assert!(
                !self.get(r),
                "{}: bit set at row {r}, past len {len}",
                what()
            );
        }
    }
}

/// The enable bitsets of one chunk, one per enableable column of its archetype.
///
/// # Invariants
/// 1. Empty, or exactly one [`EnableMask`] per entry of the archetype's
///    `enableable_columns`, each sized for its capacity. An archetype with enableable columns
///    gives every chunk in its list its masks before the chunk holds rows.
#[derive(Debug, Default)]
pub struct ChunkMasks(Box<[EnableMask]>);

impl ChunkMasks {
    /// The mask of enable slot `slot`, mutably.
    ///
    /// # Panics
    /// If `slot` is out of range.
    pub(crate) fn get_mut(&mut self, slot: usize) -> &mut EnableMask {
        &mut self.0[slot]
    }

    /// Masks for `n` enableable columns of chunks of `capacity` rows.
    pub(crate) fn new(n: usize, capacity: usize) -> Self {
        Self((0..n).map(|_| EnableMask::new(capacity)).collect())
    }

    /// Number of masks (enableable columns).
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the chunk has no enableable column.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The mask of enableable slot `slot`
    /// (see [`Archetype::enable_slot`](crate::Archetype::enable_slot)).
    ///
    /// # Panics
    /// If `slot` is out of range.
    #[inline]
    pub fn get(&self, slot: usize) -> &EnableMask {
        &self.0[slot]
    }

    /// Marks rows `start..end` enabled: rows that just joined the chunk.
    #[inline]
    pub(crate) fn enable_rows(&mut self, start: usize, end: usize) {
        for mask in self.0.iter_mut() {
            for r in start..end {
                mask.set(r, true);
            }
        }
    }

    /// Clears every bit: the chunk was emptied wholesale.
    pub(crate) fn clear(&mut self) {
        for mask in self.0.iter_mut() {
            mask.clear();
        }
    }

    pub(crate) fn check(&self, len: usize, what: &dyn Fn(usize) -> String) {
        for (slot, mask) in self.0.iter().enumerate() {
            mask.check(len, &|| what(slot));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{ComponentError, RowTicks, World};

    #[derive(Debug, PartialEq)]
    struct Hidden(u32);
    struct Other;

    fn world_twin() -> World {
        world()
    }

    fn world() -> World {
        let mut world = World::with_test_chunk_size(256);
        world.register_enableable::<Hidden>();
        world
    }

    #[test]
    fn toggles_without_moving_and_reports_errors() {
        let mut world = world();
        let e = world.spawn((Hidden(1), 2u8));
        let loc = world.location(e);
        assert_eq!(world.set_enabled::<Hidden>(e, false), Ok(true));
        assert_eq!(world.set_enabled::<Hidden>(e, false), Ok(false));
        assert_eq!(world.location(e), loc);
        assert_eq!(world.is_enabled::<Hidden>(e), Ok(false));
        assert!(matches!(
            world.is_enabled::<Other>(e),
            Err(ComponentError::MissingComponent { .. })
        ));
        assert!(matches!(
            world.set_enabled::<u8>(e, false),
            Err(ComponentError::NotEnableable { component: "u8" })
        ));
        world.despawn(e).unwrap();
        assert_eq!(
            world.is_enabled::<Hidden>(e),
            Err(ComponentError::NoSuchEntity(e))
        );
        world.check_invariants();
    }

    #[test]
    fn bits_follow_rows_through_moves_and_swap_removes() {
        let mut world = world();
        // A small chunk size gives several chunks, so swap-removes cross chunk boundaries.
        let es: Vec<_> = (0..100).map(|i| world.spawn((Hidden(i),))).collect();
        for (i, &e) in es.iter().enumerate() {
            if i % 3 == 0 {
                world.set_enabled::<Hidden>(e, false).unwrap();
            }
        }
        world.check_invariants();
        for (i, &e) in es.iter().enumerate() {
            match i % 4 {
                0 => world.despawn(e).unwrap(),
                1 => world.insert_one(e, Other).unwrap(),
                2 => drop(world.insert_one(e, 7u16)),
                _ => {}
            }
            // Every step natively; every eighth under Miri, where each whole-world check is
            // slow and this test was most of ecs-core's unit-test time (the checks after the
            // loops below still run).
            if !cfg!(miri) || i % 8 == 7 {
                world.check_invariants();
            }
        }
        for (i, &e) in es.iter().enumerate() {
            if i % 4 != 0 {
                assert_eq!(world.is_enabled::<Hidden>(e), Ok(i % 3 != 0), "entity {i}");
                assert_eq!(world.get::<Hidden>(e), Ok(&Hidden(i as u32)));
            }
        }
        for (i, &e) in es.iter().enumerate() {
            if i % 4 == 1 {
                world.remove::<(Other,)>(e).unwrap();
                assert_eq!(world.is_enabled::<Hidden>(e), Ok(i % 3 != 0));
            }
        }
        world.check_invariants();
        world.clear();
        world.check_invariants();
        let e = world.spawn((Hidden(0),));
        assert_eq!(world.is_enabled::<Hidden>(e), Ok(true));
    }

    #[test]
    fn set_enabled_many_matches_single_toggles_and_checks_first() {
        let mut world = world();
        let mut twin = world_twin();
        // Several chunks and two archetypes, entities listed out of order and twice.
        let mut es = Vec::new();
        for i in 0..120u32 {
            let a = if i % 3 == 0 {
                world.spawn((Hidden(i), 1u8))
            } else {
                world.spawn((Hidden(i),))
            };
            es.push(a);
            if i % 3 == 0 {
                twin.spawn((Hidden(i), 1u8));
            } else {
                twin.spawn((Hidden(i),));
            }
        }
        let pick: Vec<_> = (0..120).rev().step_by(2).chain([4, 4, 7]).collect();
        let list: Vec<_> = pick.iter().map(|&i| es[i]).collect();
        let mut want = 0;
        for &e in &list {
            if twin.set_enabled::<Hidden>(e, false) == Ok(true) {
                want += 1;
            }
        }
        assert_eq!(world.set_enabled_many::<Hidden>(&list, false), Ok(want));
        for &e in &es {
            assert_eq!(world.is_enabled::<Hidden>(e), twin.is_enabled::<Hidden>(e));
        }
        world.check_invariants();
        // A bad entity in the middle: no bit changes, and the error names it.
        let plain = world.spawn((Other,));
        let bad = [es[0], plain, es[2]];
        assert_eq!(
            world.set_enabled_many::<Hidden>(&bad, false),
            Err(ComponentError::MissingComponent {
                entity: plain,
                component: std::any::type_name::<Hidden>()
            })
        );
        assert_eq!(world.is_enabled::<Hidden>(es[0]), Ok(true));
        world.despawn(es[5]).unwrap();
        assert_eq!(
            world.set_enabled_many::<Hidden>(&[es[0], es[5]], false),
            Err(ComponentError::NoSuchEntity(es[5]))
        );
        assert_eq!(world.is_enabled::<Hidden>(es[0]), Ok(true));
        assert!(matches!(
            world.set_enabled_many::<u8>(&[es[0]], false),
            Err(ComponentError::NotEnableable { .. })
        ));
        assert_eq!(world.set_enabled_many::<Hidden>(&[], false), Ok(0));
    }

    /// Every enable bit and chunk column tick of `Hidden`, and its row marks, in order.
    fn hidden_state(world: &World) -> Vec<(bool, u64, u32)> {
        let id = world.component_id::<Hidden>().unwrap();
        let now = world.change_tick();
        let mut state = Vec::new();
        for arch in world.archetypes() {
            let Some(col) = arch.column(id) else { continue };
            let slot = arch.enable_slot(col).unwrap();
            for chunk in arch.chunks() {
                for r in 0..chunk.len() {
                    let bit = chunk.enable_bits().get(slot).get(r);
                    let (changed, _) = chunk.row_ticks(col, r, now);
                    state.push((bit, chunk.changed_tick(col), changed));
                }
            }
        }
        state
    }

    #[test]
    fn set_enabled_many_undoes_every_word_on_a_late_error() {
        // Tiny chunks (one word each) and 16 KiB ones (many words per chunk), the list
        // jumping between words, chunks and two archetypes, with row marks kept.
        // Fewer rows under Miri (still three words of a 16 KiB chunk); `n` is prime to 3.
        let n = if cfg!(miri) { 140 } else { 700 };
        for size in [256, 16 * 1024] {
            let mut world = World::with_test_chunk_size(size);
            world.register_enableable::<Hidden>();
            let es: Vec<_> = (0..n as u32)
                .map(|i| match i % 5 {
                    0 => world.spawn((Hidden(i), 1u8)),
                    _ => world.spawn((Hidden(i),)),
                })
                .collect();
            let id = world.component_id::<Hidden>().unwrap();
            world.keep_row_ticks(id, RowTicks::CHANGED);
            let half: Vec<_> = es.iter().copied().step_by(2).collect();
            world.set_enabled_many::<Hidden>(&half, false).unwrap();
            let dead = world.spawn((Hidden(0),));
            world.despawn(dead).unwrap();
            world.advance_tick();
            let before = hidden_state(&world);
            let mut list: Vec<_> = (0..n).map(|i| es[i * 3 % n]).collect();
            list.push(dead);
            assert_eq!(
                world.set_enabled_many::<Hidden>(&list, true),
                Err(ComponentError::NoSuchEntity(dead))
            );
            assert!(
                hidden_state(&world) == before,
                "chunk size {size}: something changed"
            );
            // A stale handle whose slot was reused by an entity without `Hidden` is stale,
            // not a missing component.
            let reused = world.spawn((Other,));
            assert_eq!(reused.index(), dead.index());
            assert_eq!(
                world.set_enabled_many::<Hidden>(&[es[1], dead], true),
                Err(ComponentError::NoSuchEntity(dead))
            );
            assert_eq!(
                world.set_enabled_many::<Hidden>(&[dead], true),
                Err(ComponentError::NoSuchEntity(dead))
            );
            assert!(
                hidden_state(&world) == before,
                "chunk size {size}: something changed"
            );
            // The same list without the dead entity: exactly the disabled half flips, and
            // only those rows' marks move to the new tick.
            list.pop();
            let tick = world.change_tick();
            assert_eq!(world.set_enabled_many::<Hidden>(&list, true), Ok(n / 2));
            let after = hidden_state(&world);
            for ((was, _, was_mark), (now, _, mark)) in before.iter().zip(&after) {
                assert!(*now, "chunk size {size}: every listed row is enabled");
                let want = if *was { *was_mark } else { tick as u32 };
                assert_eq!(
                    *mark, want,
                    "chunk size {size}: row marks of flipped rows only"
                );
            }
            assert!(es
                .iter()
                .all(|&e| world.is_enabled::<Hidden>(e) == Ok(true)));
            world.check_invariants();
        }
    }

    #[test]
    fn set_enabled_many_marks_the_column_changed() {
        let mut world = world();
        let e = world.spawn((Hidden(0),));
        world.advance_tick();
        let tick = world.change_tick();
        assert_eq!(world.set_enabled_many::<Hidden>(&[e], false), Ok(1));
        let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
        assert_eq!(arch.chunks()[0].changed_tick(0), tick);
    }

    #[test]
    fn enabling_marks_the_column_changed() {
        let mut world = world();
        let e = world.spawn((Hidden(0),));
        world.advance_tick();
        let tick = world.change_tick();
        world.set_enabled::<Hidden>(e, false).unwrap();
        let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
        assert_eq!(arch.chunks()[0].changed_tick(0), tick);
    }

    #[test]
    #[should_panic(expected = "past len")]
    fn check_invariants_catches_a_bit_past_len() {
        let mut world = world();
        let e = world.spawn((Hidden(0),));
        let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
        let mask = arch.chunks()[0].enable_bits().get(0);
        // SAFETY: deliberately breaks `EnableMask` invariant 2 (row 5 is past `len`) to see
        // the checker catch it; the bit is plain atomic memory, so nothing reads it unsoundly.
        unsafe { mask.set_unchecked(5, true) };
        world.check_invariants();
    }

    #[test]
    #[should_panic(expected = "already registered as a plain component")]
    fn late_registration_panics() {
        let mut world = World::new();
        world.spawn((Other,));
        world.register_enableable::<Other>();
    }
}
