//! Chunk components: one value per chunk, shared by all of its rows (Unity's chunk
//! components), e.g. the bounding box of a chunk's positions, which a culling pass reads to
//! skip whole chunks.
//!
//! A type opts in with [`World::register_chunk_component`] before its first use. From then
//! on every chunk of every archetype carries one value of it, boxed beside the chunk's block
//! (in the chunk record, like the enable masks), not among its rows:
//!
//! ```text
//! Chunk record                                       Chunk block (16 KiB)
//! | data ─────────────────────────────────────────▶ | Entity[..cap] | A[..cap] | B[..cap] |
//! | len, ticks, masks                                 
//! | values: [ (Bounds id, Box<Bounds>), (Lod id, Box<Lod>) ]   one per chunk component type
//! ```
//!
//! What a value is:
//! - A chunk that joins an archetype's chunk list (a new one, or the spare reused) starts
//!   with `C::default()`, also after it emptied and was kept as the spare: a value never
//!   outlives the rows it described.
//! - Values do not follow rows. A row moving to another archetype (or, by swap-remove, to
//!   another chunk of its own) leaves the value where it is; `World::compact` moves a chunk's
//!   block, and the value stays with the chunk.
//! - Reads and writes are not change-detected (there is no column tick for them), and
//!   snapshots do not record them: a restored world's chunks start from `Default`.
//!
//! Cost: one heap value per chunk per registered type (a few bytes beside a 16 KiB block),
//! and nothing for worlds that register none (the list stays unallocated).
//!
//! Reads and writes go through the chunk ([`Chunk::chunk_values`]), the world
//! ([`World::chunk_component`] / [`World::chunk_component_mut`] for an entity's chunk) and
//! `ecs-query`'s `ChunkRO<C>` / `ChunkRW<C>` elements and `ChunkView::chunk_value(_mut)`.

use std::any::{type_name, TypeId};
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::component::{Component, ComponentId};
use crate::unwind::{drop_each, resume_unless_unwinding};

/// A chunk component value, type-erased.
pub(crate) trait ChunkValue: Send + Sync + 'static {}

impl<C: Component> ChunkValue for C {}

/// The value cell of one chunk component in one chunk. `UnsafeCell`: the query layer writes
/// values through `&Chunk` under its declared access (see [`ChunkValues::ptr`]).
pub(crate) type Cell = Box<UnsafeCell<dyn ChunkValue>>;

/// One registered chunk component type: how to make its default value.
#[derive(Clone, Copy)]
pub(crate) struct ChunkKind {
    id: ComponentId,
    type_id: TypeId,
    make: fn() -> Cell,
}

/// A fresh default `C`, boxed: the one place a chunk value is made (user code: may panic).
pub(crate) fn make<C: Component + Default>() -> Cell {
    Box::new(UnsafeCell::new(C::default()))
}

impl ChunkKind {
    pub(crate) fn of<C: Component + Default>(id: ComponentId) -> Self {
        Self {
            id,
            type_id: TypeId::of::<C>(),
            make: make::<C>,
        }
    }
}

struct Slot {
    id: ComponentId,
    type_id: TypeId,
    value: Cell,
}

/// The chunk component values of one chunk, one per registered chunk component type.
///
/// # Invariants
/// 1. Slot `s` holds a value of the type of the archetype's chunk kind `s` (same id and
///    `TypeId`), for every kind: a chunk gets its values from `ChunkValues::make` before it
///    holds rows, and registering a type adds its slot to every chunk at once, after every new
///    value was made (so a panicking `Default` changes nothing). [`ChunkValues::typed_ptr`]
///    checks the `TypeId` where the pointer is made, so a slot is never read as another type.
/// 2. A value is written only through `&mut ChunkValues` or through the pointer of
///    [`ChunkValues::typed_ptr`] by a holder of write access to its component.
/// 3. Dropping the values drops each one, even if some `Drop`s panic (`unwind::drop_each`);
///    the first panic continues afterwards unless the thread is already unwinding.
#[derive(Default)]
pub struct ChunkValues {
    slots: Vec<Slot>,
    /// Made by [`ChunkValues::make`] and not yet in a chunk that held rows: every value is
    /// still its default, so a chunk reusing them needs no reset.
    fresh: bool,
}

impl ChunkValues {
    /// Number of values (registered chunk component types).
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default)]
    /// struct Bounds(f32);
    /// let mut world = World::new();
    /// world.register_chunk_component::<Bounds>();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].chunk_values().len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the chunk carries no value.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The value of chunk component `C` (`id` its component id), if it is one.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Bounds(f32);
    /// let mut world = World::new();
    /// let id = world.register_chunk_component::<Bounds>();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunks()[0].chunk_values().get::<Bounds>(id), Some(&Bounds(0.0)));
    /// assert_eq!(arch.chunks()[0].chunk_values().get::<u8>(id), None); // wrong type
    /// ```
    pub fn get<C: Component>(&self, id: ComponentId) -> Option<&C> {
        let slot = self.slots.iter().find(|s| s.id == id)?;
        (slot.type_id == TypeId::of::<C>()).then(|| {
            // SAFETY: the slot holds a `C` (`TypeId` checked). Writers hold `&mut self` or
            // the component's write access (invariant 2), which excludes this shared read
            // as it excludes `World::get` beside a writing query.
            unsafe { &*slot.value.get().cast::<C>() }
        })
    }

    /// The value of chunk component `C`, mutably.
    pub(crate) fn get_mut<C: Component>(&mut self, id: ComponentId) -> Option<&mut C> {
        let slot = self.slots.iter_mut().find(|s| s.id == id)?;
        if slot.type_id != TypeId::of::<C>() {
            return None;
        }
        let value: *mut dyn ChunkValue = slot.value.get_mut();
        // SAFETY: the slot holds a `C` (`TypeId` checked), borrowed exclusively through
        // `&mut self` for the returned lifetime.
        Some(unsafe { &mut *value.cast::<C>() })
    }

    /// Address of the `C` in slot `slot` (the archetype's chunk kind `slot`, see
    /// [`Archetype::chunk_value_slot`](crate::Archetype::chunk_value_slot)). Computing it is
    /// safe; reading or writing through it is the caller's business: it is written only under
    /// write access to that component (invariant 2).
    ///
    /// # Panics
    /// If `slot` is out of range, or its value is not a `C` (invariant 1 makes that a bug in
    /// the caller's slot lookup; the check keeps it from becoming a read of another type).
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default)]
    /// struct Bounds(f32);
    /// let mut world = World::new();
    /// let id = world.register_chunk_component::<Bounds>();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let values = arch.chunks()[0].chunk_values();
    /// let _ = values.typed_ptr::<Bounds>(arch.chunk_value_slot(id).unwrap());
    /// let wrong = std::panic::AssertUnwindSafe(|| values.typed_ptr::<u8>(0));
    /// assert!(std::panic::catch_unwind(wrong).is_err()); // a `Bounds` is not read as a `u8`
    /// ```
    #[inline]
    pub fn typed_ptr<C: Component>(&self, slot: usize) -> NonNull<C> {
        let slot = &self.slots[slot];
        assert!(
            slot.type_id == TypeId::of::<C>(),
            "chunk value slot of {:?} read as `{}`",
            slot.id,
            type_name::<C>()
        );
        let cell: &UnsafeCell<dyn ChunkValue> = &slot.value;
        NonNull::new(cell.get().cast::<C>()).expect("a box is never null")
    }

    /// One default value per kind, in the kinds' order. If a `Default` panics, the values
    /// made so far are dropped (invariant 3) and the panic continues: nothing else changed.
    pub(crate) fn make(kinds: &[ChunkKind]) -> Self {
        let mut values = Self {
            slots: Vec::with_capacity(kinds.len()),
            fresh: true,
        };
        for kind in kinds {
            values.slots.push(Slot {
                id: kind.id,
                type_id: kind.type_id,
                value: (kind.make)(),
            });
        }
        values
    }

    /// Whether every value is still the default it was made with.
    pub(crate) fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// Marks the values as seen by rows: the chunk holding them joined an archetype's chunks.
    pub(crate) fn mark_used(&mut self) {
        self.fresh = false;
    }

    /// Appends the value of a newly registered `kind` (made beforehand by the caller, so that
    /// no user code runs while chunks are being fitted).
    fn push(&mut self, kind: &ChunkKind, value: Cell) {
        self.slots.push(Slot {
            id: kind.id,
            type_id: kind.type_id,
            value,
        });
    }

    /// Asserts invariant 1 against the archetype's `kinds`.
    pub(crate) fn check(&self, kinds: &[ChunkKind], what: &dyn Fn() -> String) {
        assert_eq!(self.slots.len(), kinds.len(), "{}: chunk values", what());
        for (slot, kind) in self.slots.iter().zip(kinds) {
            assert!(
                slot.id == kind.id && slot.type_id == kind.type_id,
                "{}: chunk value of {:?} in the slot of {:?}",
                what(),
                slot.id,
                kind.id
            );
        }
    }
}

// SAFETY: the values are `Send + Sync` (`ChunkValue`'s bound); the `UnsafeCell`s are written
// only through `&mut ChunkValues` or through `typed_ptr` by a holder of write access to the
// component (invariant 2), which the query layer's access rules keep exclusive, as for the
// columns of a `Chunk`.
unsafe impl Sync for ChunkValues {}

impl Drop for ChunkValues {
    fn drop(&mut self) {
        // Invariant 3: two panicking `Drop`s in one chunk must not abort the process.
        resume_unless_unwinding(drop_each(self.slots.drain(..)));
    }
}

impl std::fmt::Debug for ChunkValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.slots.iter().map(|s| s.id))
            .finish()
    }
}

/// The world's chunk component kinds, shared by every archetype.
pub(crate) type ChunkKinds = Arc<[ChunkKind]>;

/// `kinds` plus `kind`.
pub(crate) fn with_kind(kinds: &[ChunkKind], kind: ChunkKind) -> ChunkKinds {
    kinds.iter().copied().chain([kind]).collect()
}

/// Adds `kind`'s slot to `values`, with the next of the values made for it beforehand.
///
/// # Panics
/// If `made` runs out: the caller made one value per holder.
pub(crate) fn add_kind(
    values: &mut ChunkValues,
    kind: &ChunkKind,
    made: &mut dyn Iterator<Item = Cell>,
) {
    let value = made
        .next()
        .expect("one value made per chunk that holds values");
    values.push(kind, value);
}

/// Values made for a registration that has not happened yet: dropped one by one if a later
/// `Default` panics (ChunkValues invariant 3).
pub(crate) struct Made(pub(crate) Vec<Cell>);

impl Drop for Made {
    fn drop(&mut self) {
        resume_unless_unwinding(drop_each(self.0.drain(..)));
    }
}

/// The slot of component `id` among `kinds`.
pub(crate) fn slot_in(kinds: &[ChunkKind], id: ComponentId) -> Option<usize> {
    kinds.iter().position(|k| k.id == id)
}

#[cfg(test)]
mod tests {
    use crate::{ComponentError, World};

    #[derive(Default, Debug, PartialEq)]
    struct Bounds(Vec<u32>);

    #[test]
    fn values_are_per_chunk_default_on_reuse_and_stay_behind_moving_rows() {
        let mut world = World::with_test_chunk_size(128);
        let e0 = world.spawn((0u32,)); // before registration: retrofitted
        world.register_chunk_component::<Bounds>();
        world.check_invariants();
        let es: Vec<_> = std::iter::once(e0)
            .chain((1..40u32).map(|i| world.spawn((i,))))
            .collect();
        // Each chunk's value lists the rows it had when written.
        for &e in &es {
            let v = *world.get::<u32>(e).unwrap();
            world.chunk_component_mut::<Bounds>(e).unwrap().0.push(v);
        }
        let first = world.chunk_component::<Bounds>(es[0]).unwrap().0.clone();
        assert!(first.len() > 1 && first.len() < 40, "{first:?}");
        for &e in &es[..first.len()] {
            assert_eq!(world.chunk_component::<Bounds>(e).unwrap().0, first);
        }
        // A row moving to another archetype finds that archetype's chunk value there.
        world.insert_one(es[0], 1u8).unwrap();
        assert_eq!(world.chunk_component::<Bounds>(es[0]), Ok(&Bounds(vec![])));
        assert_eq!(world.chunk_component::<Bounds>(es[1]).unwrap().0, first);
        // Emptied chunks come back with the default.
        for &e in &es[1..] {
            world.despawn(e).unwrap();
        }
        let e = world.spawn((7u32,));
        assert_eq!(world.chunk_component::<Bounds>(e), Ok(&Bounds(vec![])));
        world.check_invariants();
        assert_eq!(
            world.chunk_component::<Bounds>(es[1]),
            Err(ComponentError::NoSuchEntity(es[1]))
        );
        // Compaction keeps values with their chunks.
        world.chunk_component_mut::<Bounds>(e).unwrap().0.push(9);
        world.compact();
        assert_eq!(world.chunk_component::<Bounds>(e), Ok(&Bounds(vec![9])));
        world.check_invariants();
    }

    #[test]
    #[should_panic(expected = "already registered as a plain component")]
    fn late_registration_panics() {
        let mut world = World::new();
        world.spawn((Bounds::default(),));
        world.register_chunk_component::<Bounds>();
    }
}
