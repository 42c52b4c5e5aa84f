//! Entity handles and the generational allocator behind them.
//!
//! An [`Entity`] is an index into a table of slots plus the generation the slot had when the
//! entity was made. Despawning bumps the slot's generation, so every old handle stops resolving;
//! the slot goes on a free list and is reused by a later spawn. A slot whose generation reaches
//! `u32::MAX` is retired instead of reused: no handle can ever resolve to a newer entity.
//!
//! Ids can also be *reserved* through a shared reference (for command buffers in parallel
//! systems): [`Entities::reserve`] claims a free slot, or a fresh index past the table, with one
//! atomic decrement. Reserved ids turn into live, empty entities at the next [`Entities::flush`],
//! which the world runs before every structural change. Systems running side by side reserve
//! in *lanes* instead ([`Entities::open_lanes`], `lanes.rs`), so their ids do not depend on
//! which thread comes first.

#[expect(
    unsafe_code,
    reason = "implements bytemuck's NoUninit and CheckedBitPattern for Entity"
)]
pub(crate) mod bits;
mod id;
mod lanes;
pub(crate) mod map;

use std::num::NonZeroU32;

pub use id::Entity;

use crate::ids::ArchetypeId;
use crate::sync::{AtomicI64, Ordering};

/// Where a live entity's components are: its archetype and its row in that archetype.
///
/// The row counts across the archetype's chunks: row `r` lives in chunk `r / capacity`.
///
/// ```
/// # use ecs_core::{ArchetypeId, World};
/// let mut world = World::new();
/// let e = world.spawn(());
/// let loc = world.location(e).unwrap();
/// assert_eq!((loc.archetype, loc.row), (ArchetypeId::EMPTY, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The archetype holding the entity.
    pub archetype: ArchetypeId,
    /// The entity's row within that archetype.
    pub row: u32,
}

/// One slot of the entity table: 8 bytes.
///
/// A live slot does not store its generation: the entity id in the row it points at does (the
/// chunk's entity column), so the world checks a handle against that. A vacant slot stores the
/// generation its next entity gets.
#[derive(Clone, Copy)]
struct Slot {
    /// `ArchetypeId::INVALID` unless a live entity occupies the slot.
    archetype: ArchetypeId,
    /// Live: the entity's row in `archetype`. Vacant: the next entity's generation (non-zero).
    word: u32,
}

impl Slot {
    #[inline]
    fn is_live(self) -> bool {
        self.archetype != ArchetypeId::INVALID
    }

    /// The generation a vacant slot hands out next.
    #[inline]
    fn next_generation(self) -> NonZeroU32 {
        debug_assert!(!self.is_live());
        NonZeroU32::new(self.word).expect("a vacant slot holds a non-zero generation")
    }

    fn vacant(generation: NonZeroU32) -> Self {
        Self {
            archetype: ArchetypeId::INVALID,
            word: generation.get(),
        }
    }

    fn live(location: Location) -> Self {
        Self {
            archetype: location.archetype,
            word: location.row,
        }
    }
}

/// The entity table: slots, free list and the atomic reservation cursor.
///
/// The table maps an index to a location; whether a handle's *generation* is current is
/// answered by the entity id stored in that location's row (see the private `Slot` type),
/// which keeps the table at 8 bytes per entity. [`World::location`](crate::World::location)
/// does that check.
///
/// # Invariants
/// 1. A slot is live iff its archetype is not `INVALID`; `live` counts the live slots. A live
///    slot's row holds, in the storage, the entity id whose index is the slot's.
/// 2. When no reservation is pending, `free_cursor == free.len()`, and `free` lists exactly the
///    vacant, unretired slots, each once.
/// 3. A slot is retired when an entity of generation `u32::MAX` is freed: it stays vacant at
///    `u32::MAX` and never goes back on the free list. A slot freed at `u32::MAX - 1` moves to
///    generation `u32::MAX` and *is* on the free list, for one last use; so a vacant slot at
///    `u32::MAX` is retired exactly when it is not on the free list.
/// 4. Reservations: `free[max(cursor, 0)..]` were handed out from the free list and `-cursor`
///    (if negative) fresh indices past `slots.len()` were handed out. `flush` makes them live.
///    While lanes are open, nothing is reserved through the cursor: `lanes.rs`'s
///    invariants say which free-list entries and indices past the table are handed out.
///
/// ```
/// # use ecs_core::{ArchetypeId, Entities, Location};
/// let mut entities = Entities::default();
/// let e = entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 0 });
/// assert_eq!(entities.locate(e.index()).unwrap().row, 0);
/// assert_eq!(entities.len(), 1);
/// ```
pub struct Entities {
    slots: Vec<Slot>,
    free: Vec<u32>,
    free_cursor: AtomicI64,
    live: u32,
    /// Open reservation lanes (`lanes.rs`, whose invariants hold while this is `Some`).
    lanes: Option<lanes::Lanes>,
}

const FIRST_GENERATION: NonZeroU32 = NonZeroU32::MIN;

impl Default for Entities {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            free_cursor: AtomicI64::new(0),
            live: 0,
            lanes: None,
        }
    }
}

impl Entities {
    /// Heap bytes of the entity table (slots and free list, by capacity), for the layout
    /// report.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot>() + self.free.capacity() * size_of::<u32>()
    }

    /// Number of live entities (reserved ids not yet flushed are not counted).
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let mut entities = Entities::default();
    /// entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 0 });
    /// entities.reserve();
    /// assert_eq!(entities.len(), 1); // the reservation is not flushed yet
    /// ```
    #[inline]
    pub fn len(&self) -> u32 {
        self.live
    }

    /// Whether no entity is live.
    ///
    /// ```
    /// # use ecs_core::Entities;
    /// assert!(Entities::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Where the live entity in slot `index` is, whatever the generation a handle asks for:
    /// the caller compares the handle with the entity id stored at that location.
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let mut entities = Entities::default();
    /// let e = entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 3 });
    /// assert_eq!(entities.locate(e.index()).map(|l| l.row), Some(3));
    /// assert_eq!(entities.locate(99), None);
    /// ```
    #[inline]
    pub fn locate(&self, index: u32) -> Option<Location> {
        let slot = *self.slots.get(index as usize)?;
        slot.is_live().then_some(Location {
            archetype: slot.archetype,
            row: slot.word,
        })
    }

    /// Hands out an id through a shared reference; it becomes live at the next `flush`.
    ///
    /// # Panics
    /// If the table would exceed `u32::MAX` slots.
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let mut entities = Entities::default();
    /// let e = entities.reserve();
    /// assert!(entities.needs_flush() && entities.locate(e.index()).is_none());
    /// entities.flush(|_| Location { archetype: ArchetypeId::EMPTY, row: 0 });
    /// assert!(entities.locate(e.index()).is_some());
    /// ```
    pub fn reserve(&self) -> Entity {
        if let Some(entity) = self.reserve_from_last_lane() {
            return entity;
        }
        let n = self.free_cursor.fetch_sub(1, Ordering::Relaxed);
        if n > 0 {
            let index = self.free[n as usize - 1];
            Entity::new(index, self.slots[index as usize].next_generation())
        } else {
            let index = self.slots.len() as i64 - n;
            assert!(
                index < u32::MAX as i64,
                "entity ids exhausted: more than u32::MAX slots"
            );
            Entity::new(index as u32, FIRST_GENERATION)
        }
    }

    /// Whether reservations are waiting for a `flush`.
    ///
    /// ```
    /// # use ecs_core::Entities;
    /// let entities = Entities::default();
    /// assert!(!entities.needs_flush());
    /// entities.reserve();
    /// assert!(entities.needs_flush());
    /// ```
    #[inline]
    pub fn needs_flush(&self) -> bool {
        // Open lanes keep the cursor one past the free list (lanes.rs, invariant 1), so this one
        // comparison, on every structural change, covers them too.
        self.free_cursor.load(Ordering::Relaxed) != self.free.len() as i64
    }

    /// Number of reserved ids the next [`Entities::flush`] makes live.
    ///
    /// ```
    /// # use ecs_core::Entities;
    /// let entities = Entities::default();
    /// entities.reserve();
    /// entities.reserve();
    /// assert_eq!(entities.pending(), 2);
    /// ```
    pub fn pending(&self) -> usize {
        if self.lanes_open() {
            return self.pending_in_lanes();
        }
        (self.free.len() as i64 - self.free_cursor.load(Ordering::Relaxed)) as usize
    }

    /// Makes every reserved id live, calling `place` for each to give it a location (and to
    /// store its id there, invariant 1).
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let mut entities = Entities::default();
    /// entities.reserve();
    /// entities.reserve();
    /// let mut row = 0;
    /// entities.flush(|_| { row += 1; Location { archetype: ArchetypeId::EMPTY, row: row - 1 } });
    /// assert_eq!(entities.len(), 2);
    /// assert!(!entities.needs_flush());
    /// ```
    pub fn flush(&mut self, mut place: impl FnMut(Entity) -> Location) {
        let cursor = self.free_cursor.load(Ordering::Relaxed);
        let first_unreserved = cursor.max(0) as usize;
        for i in first_unreserved..self.free.len() {
            let index = self.free[i];
            let entity = Entity::new(index, self.slots[index as usize].next_generation());
            self.slots[index as usize] = Slot::live(place(entity));
            self.live += 1;
        }
        self.free.truncate(first_unreserved);
        // With lanes open nothing was reserved through the cursor (lanes.rs, invariant 1).
        self.close_lanes(&mut place);
        if cursor < 0 {
            let fresh = (-cursor) as usize;
            self.slots.reserve(fresh);
            for _ in 0..fresh {
                let entity = Entity::new(self.slots.len() as u32, FIRST_GENERATION);
                let location = place(entity);
                self.slots.push(Slot::live(location));
                self.live += 1;
            }
        }
        self.free_cursor
            .store(self.free.len() as i64, Ordering::Relaxed);
    }

    /// Allocates a live entity at `location`; the caller stores its id there (invariant 1).
    /// Requires no pending reservations.
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let mut entities = Entities::default();
    /// let a = entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 0 });
    /// let b = entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 1 });
    /// assert_ne!(a, b);
    /// ```
    #[inline]
    pub fn alloc(&mut self, location: Location) -> Entity {
        debug_assert!(!self.needs_flush(), "alloc with pending reservations");
        self.live += 1;
        if let Some(index) = self.free.pop() {
            self.free_cursor
                .store(self.free.len() as i64, Ordering::Relaxed);
            let slot = &mut self.slots[index as usize];
            let generation = slot.next_generation();
            *slot = Slot::live(location);
            Entity::new(index, generation)
        } else {
            let index = self.slots.len();
            assert!(
                index < u32::MAX as usize,
                "entity ids exhausted: more than u32::MAX slots"
            );
            self.slots.push(Slot::live(location));
            Entity::new(index as u32, FIRST_GENERATION)
        }
    }

    /// Prepares for `additional` allocations.
    ///
    /// ```
    /// # use ecs_core::Entities;
    /// let mut entities = Entities::default();
    /// entities.reserve_capacity(100);
    /// assert!(entities.is_empty());
    /// ```
    pub fn reserve_capacity(&mut self, additional: usize) {
        let fresh = additional.saturating_sub(self.free.len());
        self.slots.reserve(fresh);
    }

    /// Frees `entity`, which the caller has checked is live (its id is stored at its slot's
    /// location). Requires no pending reservations.
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let mut entities = Entities::default();
    /// let a = entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 0 });
    /// entities.free(a);
    /// let b = entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 0 });
    /// assert_eq!((b.index(), b.generation()), (a.index(), a.generation() + 1));
    /// ```
    pub fn free(&mut self, entity: Entity) {
        debug_assert!(!self.needs_flush(), "free with pending reservations");
        let slot = &mut self.slots[entity.index as usize];
        debug_assert!(slot.is_live(), "freeing the vacant slot {}", entity.index);
        self.live -= 1;
        // A slot that cannot take a new generation is retired (invariant 3).
        match entity.generation.checked_add(1) {
            Some(next) => {
                *slot = Slot::vacant(next);
                self.free.push(entity.index);
                self.free_cursor
                    .store(self.free.len() as i64, Ordering::Relaxed);
            }
            None => *slot = Slot::vacant(entity.generation),
        }
    }

    /// Points a live entity at a new location.
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// let mut entities = Entities::default();
    /// let e = entities.alloc(Location { archetype: ArchetypeId::EMPTY, row: 0 });
    /// entities.set_location(e.index(), Location { archetype: ArchetypeId::EMPTY, row: 7 });
    /// assert_eq!(entities.locate(e.index()).unwrap().row, 7);
    /// ```
    #[inline]
    pub fn set_location(&mut self, index: u32, location: Location) {
        let slot = &mut self.slots[index as usize];
        debug_assert!(slot.is_live());
        *slot = Slot::live(location);
    }

    /// Test hook: moves a vacant slot's generation close to the end of its range.
    ///
    /// # Panics
    /// If the slot is live, or `generation` is below the one it would hand out next: that
    /// would let an old handle resolve to a new entity.
    ///
    /// ```
    /// # use ecs_core::{ArchetypeId, Entities, Location};
    /// # use std::num::NonZeroU32;
    /// let mut entities = Entities::default();
    /// let loc = Location { archetype: ArchetypeId::EMPTY, row: 0 };
    /// let e = entities.alloc(loc);
    /// entities.free(e);
    /// entities.set_generation_for_tests(e.index(), NonZeroU32::new(7).unwrap());
    /// assert_eq!(entities.alloc(loc).generation(), 7);
    /// ```
    #[doc(hidden)]
    pub fn set_generation_for_tests(&mut self, index: u32, generation: NonZeroU32) {
        let slot = &mut self.slots[index as usize];
        assert!(!slot.is_live(), "only a vacant slot may be aged");
        // Only forward: every handle the slot ever gave out has a lower generation, so none of
        // them can come back to life.
        assert!(
            generation >= slot.next_generation(),
            "a slot may only be aged forward (from generation {} to {generation})",
            slot.next_generation()
        );
        *slot = Slot::vacant(generation);
    }

    /// Snapshot support: the vacant slots, without walking the table in the common case.
    /// Writes the generation each free-list entry hands out next into `free_generations` (in
    /// free-list order) and the retired slots into `retired`, and returns the slot count.
    /// Pending reservations are left out: their slots are still vacant and on the free list.
    pub(crate) fn export_vacant(
        &self,
        free_generations: &mut Vec<u32>,
        retired: &mut Vec<u32>,
    ) -> u32 {
        free_generations.clear();
        free_generations.extend(self.free.iter().map(|&i| self.slots[i as usize].word));
        retired.clear();
        // Vacant slots are the free list plus the retired ones (invariants 2 and 3).
        let vacant = self.slots.len() - self.live as usize;
        if vacant > self.free.len() {
            let mut on_free = vec![false; self.slots.len()];
            for &i in &self.free {
                on_free[i as usize] = true;
            }
            retired.extend(
                self.slots
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| (!s.is_live() && !on_free[i]).then_some(i as u32)),
            );
        }
        self.slots.len() as u32
    }

    /// Snapshot support: the whole free list, reserved entries included.
    pub(crate) fn free_list(&self) -> &[u32] {
        &self.free
    }

    /// Snapshot support: replaces the table with `count` slots, where `free[i]` is vacant with
    /// next generation `free_generations[i]` and on the free list in that order, `retired` are
    /// vacant at `u32::MAX`, and every other slot keeps whatever it held: the caller must
    /// [`Entities::place_live`] each of them (or count with [`Entities::keep_live`] the ones
    /// that already point at the row the restore puts them in) and then
    /// [`Entities::finish_restore`] before the table is used again.
    ///
    /// Slots are not cleared first: a snapshot lists every slot exactly once as live, free or
    /// retired (checked when one is read from bytes), so each is written exactly once and a
    /// million-entity restore skips an 8 MB pass.
    pub(crate) fn restore_slots(
        &mut self,
        count: u32,
        free: &[u32],
        free_generations: &[u32],
        retired: &[u32],
    ) {
        let unplaced = Slot {
            archetype: ArchetypeId::INVALID,
            word: 0,
        };
        self.slots.truncate(count as usize);
        self.slots.resize(count as usize, unplaced);
        for (&i, &generation) in free.iter().zip(free_generations) {
            self.slots[i as usize] = Slot {
                archetype: ArchetypeId::INVALID,
                word: generation,
            };
        }
        for &i in retired {
            self.slots[i as usize] = Slot {
                archetype: ArchetypeId::INVALID,
                word: u32::MAX,
            };
        }
        self.discard_lanes();
        self.free.clear();
        self.free.extend_from_slice(free);
        self.free_cursor
            .store(self.free.len() as i64, Ordering::Relaxed);
        self.live = 0;
    }

    /// Snapshot support: makes slots `first_row..` of `archetype` live, in row order, for the
    /// entities `ids` (their ids are stored in those rows).
    ///
    /// Never panics (it runs inside a chunk fill that must not unwind): an id past the table
    /// is not counted, and [`Entities::finish_restore`] reports the shortfall.
    #[inline]
    pub(crate) fn place_live(&mut self, archetype: ArchetypeId, first_row: usize, ids: &[Entity]) {
        let mut placed = 0;
        for (row, e) in (first_row..).zip(ids) {
            if let Some(slot) = self.slots.get_mut(e.index() as usize) {
                *slot = Slot::live(Location {
                    archetype,
                    row: row as u32,
                });
                placed += 1;
            }
        }
        self.live += placed;
    }

    /// Snapshot support: counts `count` live slots that a restore left as they were (rows
    /// that hold the same entity at the same location before and after), as
    /// [`Entities::place_live`] counts the slots it writes.
    #[inline]
    pub(crate) fn keep_live(&mut self, count: usize) {
        self.live += count as u32;
    }

    /// Snapshot support: ends a restore, checking that every slot was accounted for (the
    /// snapshot's live rows, free list and retired slots partition the table).
    pub(crate) fn finish_restore(&self, retired: usize) {
        assert_eq!(
            self.live as usize + self.free.len() + retired,
            self.slots.len(),
            "a snapshot's live, free and retired slots cover the entity table"
        );
    }

    /// Checks invariants 1–3; `live_at` answers whether the storage holds the entity with
    /// slot index `index` at `loc`.
    pub(crate) fn check(&self, mut live_at: impl FnMut(u32, Location) -> bool) {
        // Pending reservations are fine: reserved free-list slots stay vacant and listed in
        // `free[cursor..]`, and fresh reserved indices are past `slots` until the flush.
        let mut live = 0;
        let mut on_free_list = vec![false; self.slots.len()];
        for &index in &self.free {
            let slot = self.slots[index as usize];
            assert!(!slot.is_live(), "free list holds live slot {index}");
            assert!(slot.word != 0, "vacant slot {index} has generation 0");
            assert!(
                !on_free_list[index as usize],
                "slot {index} twice on the free list"
            );
            on_free_list[index as usize] = true;
        }
        for (index, slot) in self.slots.iter().enumerate() {
            if slot.is_live() {
                live += 1;
                let loc = Location {
                    archetype: slot.archetype,
                    row: slot.word,
                };
                assert!(
                    live_at(index as u32, loc),
                    "slot {index} not found at {loc:?}"
                );
            } else {
                // Off the free list, a vacant slot must be retired (invariant 3).
                let retired = slot.word == u32::MAX;
                assert!(
                    retired || on_free_list[index],
                    "vacant slot {index} leaked from free list"
                );
            }
        }
        assert_eq!(live, self.live, "live count out of date");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A location for entities whose rows the test does not look at (also `lanes.rs`'s tests).
    pub(super) fn somewhere() -> Location {
        Location {
            archetype: ArchetypeId::EMPTY,
            row: 0,
        }
    }

    #[test]
    fn debug_and_bits() {
        let e = Entity::new(5, NonZeroU32::new(2).unwrap());
        assert_eq!(format!("{e:?}"), "5v2");
        assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
        assert_eq!(Entity::from_bits(7), None);
    }

    #[test]
    fn free_bumps_generation_and_reuses() {
        let mut entities = Entities::default();
        let a = entities.alloc(somewhere());
        entities.free(a);
        assert!(entities.locate(a.index()).is_none());
        let b = entities.alloc(somewhere());
        assert_eq!(b.index(), a.index());
        assert_eq!(b.generation(), a.generation() + 1);
        assert!(entities.locate(b.index()).is_some());
    }

    #[test]
    fn retired_slot_is_never_reused() {
        let mut entities = Entities::default();
        let a = entities.alloc(somewhere());
        entities.free(a);
        entities.set_generation_for_tests(a.index(), NonZeroU32::new(u32::MAX).unwrap());
        let last = entities.alloc(somewhere());
        assert_eq!(last.generation(), u32::MAX);
        entities.free(last);
        let next = entities.alloc(somewhere());
        assert_ne!(next.index(), a.index(), "retired slot handed out again");
        assert!(entities.locate(last.index()).is_none());
    }

    #[test]
    fn reservations_become_live_on_flush() {
        let mut entities = Entities::default();
        let a = entities.alloc(somewhere());
        entities.free(a);
        let r1 = entities.reserve();
        let r2 = entities.reserve();
        assert_eq!(r1.index(), a.index(), "free slot is reserved first");
        assert_eq!(r1.generation(), 2);
        assert_eq!(r2.index(), 1);
        assert!(entities.locate(r1.index()).is_none());
        let mut placed = Vec::new();
        entities.flush(|e| {
            placed.push(e);
            somewhere()
        });
        assert_eq!(placed, [r1, r2]);
        assert!(entities.locate(r1.index()).is_some() && entities.locate(r2.index()).is_some());
        assert_eq!(entities.len(), 2);
        assert!(!entities.needs_flush());
    }
}
