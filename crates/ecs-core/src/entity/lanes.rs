//! Id lanes: entity reservation whose outcome does not depend on thread timing.
//!
//! Systems that reserve ids through the one atomic cursor while running side by side get them
//! in the order their threads happen to arrive. A *lane* is a reservation stream of its own,
//! one per system, opened (with `&mut`) before the systems run. The ids the lanes can hand out
//! form one sequence of *positions*: first the free list from its top (the order `alloc` would
//! take them in), then fresh indices past the table. Lane `l` of `n` owns the positions
//! `l, l + n, l + 2n, ...`, so its `k`-th id is position `k·n + l`: it depends on `k` alone,
//! never on what the other lanes do meanwhile, and on nothing but the world's own state
//! (its free list and table length) and the lane's number. Nothing is forecast, so the ids
//! are the same again after a world is restored from a snapshot and the same systems run.
//!
//! The next [`Entities::flush`] makes the used positions live in position order, leaves the
//! free-list positions no lane reached on the free list, and turns fresh positions below the
//! highest one used that no lane reached (holes) into vacant slots on the free list, reused by
//! later spawns. Holes appear only when lanes spawn past the free list, at most `n - 1` per id
//! past it, and the free list then grows until it covers what the lanes spawn.
//!
//! [`Entities::reserve`] (the cursor) reserves from the last lane while lanes are open.
//!
//! # Invariants (while lanes are open)
//! 1. `free` is as it was when the lanes opened (`free_len` entries) and `free_cursor` is
//!    `free_len + 1`, a value no reservation leaves it at: so `needs_flush` is true (open
//!    lanes are pending) with its one comparison, and nothing is reserved through the cursor
//!    (it reserves through the last lane). `alloc` and `free` require no pending reservations.
//! 2. `base == slots.len()` as when the lanes opened: no slot is pushed until they close.
//! 3. `used[l]` counts lane `l`'s reservations: positions `k·n + l` for `k < used[l]`.

use super::{Entities, Entity, Slot, FIRST_GENERATION};
use crate::sync::{AtomicU64, Ordering};
use crate::Location;

pub(super) struct Lanes {
    base: u32,
    free_len: usize,
    used: Vec<AtomicU64>,
}

/// Marks a free-list entry whose slot went live during a flush (no slot has this index).
const TAKEN: u32 = u32::MAX;

impl Lanes {
    fn count(&self) -> usize {
        self.used.len()
    }

    fn used(&self, lane: usize) -> u64 {
        self.used[lane].load(Ordering::Relaxed)
    }

    /// Whether position `p` was handed out.
    fn is_used(&self, p: u64) -> bool {
        let n = self.count() as u64;
        p / n < self.used((p % n) as usize)
    }

    /// One past the highest position handed out (0 if none).
    fn end(&self) -> u64 {
        let n = self.count() as u64;
        (0..self.count())
            .filter(|&l| self.used(l) > 0)
            .map(|l| (self.used(l) - 1) * n + l as u64 + 1)
            .max()
            .unwrap_or(0)
    }

    fn pending(&self) -> usize {
        (0..self.count()).map(|l| self.used(l) as usize).sum()
    }

    fn reserve(&self, lane: usize, free: &[u32], slots: &[Slot]) -> Entity {
        let k = self.used[lane].fetch_add(1, Ordering::Relaxed);
        let p = k * self.count() as u64 + lane as u64;
        if p < self.free_len as u64 {
            let index = free[self.free_len - 1 - p as usize];
            return Entity::new(index, slots[index as usize].next_generation());
        }
        let index = self.base as u64 + (p - self.free_len as u64);
        assert!(
            index < u32::MAX as u64,
            "entity ids exhausted: more than u32::MAX slots"
        );
        Entity::new(index as u32, FIRST_GENERATION)
    }
}

impl Entities {
    /// Opens `count` reservation lanes: lane `l`'s `k`-th id (from
    /// [`Entities::reserve_in_lane`]) is position `k·count + l` of the free list, then of the
    /// indices past the table (see the module docs). The next [`Entities::flush`] closes the
    /// lanes. Nothing opens for a count of 0.
    ///
    /// # Panics
    /// If reservations are pending (flush first).
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let somewhere = Location { archetype: ArchetypeId::EMPTY, row: 0 };
    /// let mut entities = Entities::default();
    /// entities.open_lanes(2);
    /// // Whatever order two threads call these in, lane 1's first id is the same.
    /// let b = entities.reserve_in_lane(1);
    /// let a = entities.reserve_in_lane(0);
    /// assert_eq!((a.index(), b.index()), (0, 1));
    /// entities.flush(|_| somewhere);
    /// assert_eq!(entities.len(), 2);
    /// ```
    pub fn open_lanes(&mut self, count: u32) {
        assert!(
            !self.needs_flush(),
            "open_lanes with pending reservations (flush first)"
        );
        if count == 0 {
            return;
        }
        // Invariant 1: the cursor says "pending" until the flush closes the lanes.
        self.free_cursor
            .store(self.free.len() as i64 + 1, Ordering::Relaxed);
        self.lanes = Some(Lanes {
            base: self.slots.len() as u32,
            free_len: self.free.len(),
            used: (0..count).map(|_| AtomicU64::new(0)).collect(),
        });
    }

    /// Reserves an id in lane `lane` of the open lanes: the `k`-th id of a lane is decided by
    /// `k` and the world's state alone. Without open lanes, or for a lane past them, this is
    /// [`Entities::reserve`] (distinct ids still, in thread order).
    ///
    /// # Panics
    /// If the table would exceed `u32::MAX` slots.
    #[inline]
    pub fn reserve_in_lane(&self, lane: u32) -> Entity {
        match &self.lanes {
            Some(lanes) if (lane as usize) < lanes.count() => {
                lanes.reserve(lane as usize, &self.free, &self.slots)
            }
            _ => self.reserve(),
        }
    }

    /// The cursor's reservation while lanes are open: from the last lane (invariant 1).
    #[inline]
    pub(super) fn reserve_from_last_lane(&self) -> Option<Entity> {
        let lanes = self.lanes.as_ref()?;
        Some(lanes.reserve(lanes.count() - 1, &self.free, &self.slots))
    }

    /// Reservations in open lanes that the next flush makes live.
    pub(super) fn pending_in_lanes(&self) -> usize {
        self.lanes.as_ref().map_or(0, Lanes::pending)
    }

    /// Closes the lanes as part of a flush: used positions go live in position order, unused
    /// free-list positions stay on the free list (in their order), unused fresh positions below
    /// the highest used become vacant slots on the free list.
    pub(super) fn close_lanes(&mut self, place: &mut impl FnMut(Entity) -> Location) {
        let Some(lanes) = self.lanes.take() else {
            return;
        };
        debug_assert_eq!(self.free.len(), lanes.free_len, "invariant 1");
        debug_assert_eq!(self.slots.len(), lanes.base as usize, "invariant 2");
        let end = lanes.end();
        let in_free = end.min(lanes.free_len as u64) as usize;
        for p in 0..in_free {
            if lanes.is_used(p as u64) {
                let i = lanes.free_len - 1 - p;
                let index = self.free[i];
                let entity = Entity::new(index, self.slots[index as usize].next_generation());
                self.slots[index as usize] = Slot::live(place(entity));
                self.live += 1;
                self.free[i] = TAKEN;
            }
        }
        let reached = lanes.free_len - in_free;
        let mut kept = reached;
        for i in reached..lanes.free_len {
            if self.free[i] != TAKEN {
                self.free[kept] = self.free[i];
                kept += 1;
            }
        }
        self.free.truncate(kept);
        let fresh = end.saturating_sub(lanes.free_len as u64);
        self.slots.reserve(fresh as usize);
        for q in 0..fresh {
            let index = lanes.base as u64 + q;
            if lanes.is_used(lanes.free_len as u64 + q) {
                let location = place(Entity::new(index as u32, FIRST_GENERATION));
                self.slots.push(Slot::live(location));
                self.live += 1;
            } else {
                self.slots.push(Slot::vacant(FIRST_GENERATION));
                self.free.push(index as u32);
            }
        }
    }

    /// Whether lanes are open (they count as pending reservations).
    #[inline]
    pub(super) fn lanes_open(&self) -> bool {
        self.lanes.is_some()
    }

    /// Drops open lanes without making their ids live (a restore replaces the table).
    pub(super) fn discard_lanes(&mut self) {
        self.lanes = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::somewhere;
    use crate::{Entities, Entity};

    fn flush(entities: &mut Entities) -> Vec<Entity> {
        let mut placed = Vec::new();
        entities.flush(|e| {
            placed.push(e);
            somewhere()
        });
        placed
    }

    /// Ten live entities, then the first `freed` of them despawned.
    fn table(freed: usize) -> Entities {
        let mut entities = Entities::default();
        let all: Vec<Entity> = (0..10).map(|_| entities.alloc(somewhere())).collect();
        for &e in &all[..freed] {
            entities.free(e);
        }
        entities
    }

    #[test]
    fn a_lane_hands_out_the_same_ids_whatever_the_other_lanes_do() {
        let ids = |others_first: usize| {
            let mut entities = table(4);
            entities.open_lanes(3);
            for _ in 0..others_first {
                entities.reserve_in_lane(0);
                entities.reserve_in_lane(2);
            }
            let mine: Vec<Entity> = (0..4).map(|_| entities.reserve_in_lane(1)).collect();
            flush(&mut entities);
            entities.check(|_, _| true);
            mine
        };
        let quiet = ids(0);
        assert_eq!(quiet, ids(3));
        assert_eq!(quiet, ids(7));
        // Free list [0, 1, 2, 3] from the top: positions 1 and 4 are slots 2 and (past the
        // four free slots) index 10; then positions 7, 10: indices 13, 16.
        assert_eq!(quiet[0].index(), 2);
        assert_eq!(quiet[0].generation(), 2);
        let fresh: Vec<u32> = quiet[1..].iter().map(|e| e.index()).collect();
        assert_eq!(fresh, [10, 13, 16]);
    }

    #[test]
    fn flush_makes_used_ids_live_and_frees_the_rest() {
        let mut entities = table(5);
        entities.open_lanes(2);
        assert!(entities.needs_flush(), "open lanes are pending");
        let a = entities.reserve_in_lane(0); // position 0: slot 4
        let b: Vec<Entity> = (0..4).map(|_| entities.reserve_in_lane(1)).collect(); // 1, 3, 5, 7
        let placed = flush(&mut entities);
        assert_eq!(placed.len(), 5);
        assert_eq!(placed[0], a, "position order");
        assert!(b.iter().all(|e| placed.contains(e)));
        assert_eq!(a.index(), 4);
        // Positions 2 and 4 (slots 2 and 0) stay free; 5 and 7 are indices 10 and 12, so 11
        // (position 6) is a hole.
        assert_eq!(entities.len(), 5 + 5);
        assert_eq!(entities.free, [0, 2, 11]);
        assert!(!entities.needs_flush());
        entities.check(|_, _| true);
        let again: Vec<u32> = (0..3)
            .map(|_| entities.alloc(somewhere()).index())
            .collect();
        assert_eq!(again, [11, 2, 0]);
        entities.check(|_, _| true);
    }

    #[test]
    fn the_cursor_reserves_from_the_last_lane() {
        let mut entities = table(3);
        entities.open_lanes(2);
        let by_cursor = entities.reserve(); // lane 1, position 1: slot 1
        let lane0: Vec<Entity> = (0..2).map(|_| entities.reserve_in_lane(0)).collect(); // 0, 2
        assert_eq!(by_cursor.index(), 1);
        assert_eq!(lane0.iter().map(|e| e.index()).collect::<Vec<_>>(), [2, 0]);
        let placed = flush(&mut entities);
        assert_eq!(placed.len(), 3);
        assert_eq!(entities.len(), 10);
        assert!(entities.free.is_empty());
        entities.check(|_, _| true);
    }

    #[test]
    fn no_lanes_for_a_count_of_zero_and_a_stray_lane_falls_back() {
        let mut entities = table(0);
        entities.open_lanes(0);
        assert!(!entities.needs_flush());
        let e = entities.reserve_in_lane(5); // no lanes open: the plain cursor
        assert_eq!(e.index(), 10);
        assert_eq!(flush(&mut entities), [e]);
    }
}
