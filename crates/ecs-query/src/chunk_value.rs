//! Query elements over chunk components (see `World::register_chunk_component`): one value per
//! chunk, shared by its rows.
//!
//! [`ChunkRO<C>`] yields, for every row, a shared reference to the value of its chunk.
//! [`ChunkRW<C>`] declares a write of `C`: per row it yields the same shared reference (rows
//! of one chunk share the value, so no row may hold it mutably), and per chunk
//! ([`ChunkView::columns`](crate::ChunkView::columns) or
//! [`ChunkView::chunk_value_mut`](crate::ChunkView::chunk_value_mut)) it hands out the one
//! [`ChunkMut`] through which the value is written. A culling pass then reads
//! `ChunkRO<Bounds>` and skips whole chunks, while a bounds pass writes it with
//! `for_each_chunk`:
//!
//! ```
//! use ecs_core::World;
//! use ecs_query::{ChunkRO, ChunkRW, QueryExt, RefRO};
//!
//! #[derive(Default, Clone, Copy, PartialEq, Debug)]
//! struct Bounds { min: f32, max: f32 }
//! struct X(f32);
//!
//! let mut world = World::with_chunk_size(4096).unwrap();
//! world.register_chunk_component::<Bounds>();
//! world.spawn_batch((0..2000).map(|i| (X(i as f32),))).for_each(drop);
//! world.query::<(ChunkRW<Bounds>, RefRO<X>)>().for_each_chunk(|mut view| {
//!     let (mut bounds, xs) = view.columns();
//!     let (min, max) = xs.iter().fold((f32::MAX, f32::MIN), |(lo, hi), x| (lo.min(x.0), hi.max(x.0)));
//!     *bounds = Bounds { min, max };
//! });
//! // Culling: whole chunks whose bounds miss the window [100, 200] are skipped.
//! let mut seen = 0;
//! world.query::<(ChunkRO<Bounds>, RefRO<X>)>().for_each_chunk(|view| {
//!     let b = view.chunk_value::<Bounds>();
//!     if b.max >= 100.0 && b.min <= 200.0 {
//!         seen += view.column::<X>().iter().filter(|x| (100.0..=200.0).contains(&x.0)).count();
//!     }
//! });
//! assert_eq!(seen, 101);
//! ```
//!
//! Neither element looks at enable bits or change ticks: a chunk value is not a column, and
//! writing it is not a change of any row.

use std::any::type_name;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use ecs_core::{Archetype, Chunk, Component, ComponentId, Components, Signature, Tick};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ExactQuery, ReadKind, ReadOnlyQuery, WorldQuery, WriteKind};

/// Query element: the value of chunk component `C` of each row's chunk, shared.
///
/// # Panics
/// Building a query with it panics if `C` is not a chunk component.
pub struct ChunkRO<C>(PhantomData<fn() -> C>);

/// Query element: writes chunk component `C`, once per chunk through
/// [`ChunkView`](crate::ChunkView); each row sees the value shared.
///
/// # Panics
/// Building a query with it panics if `C` is not a chunk component.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{ChunkRW, QueryExt};
/// #[derive(Default)]
/// struct Count(usize);
/// let mut world = World::new();
/// world.register_chunk_component::<Count>();
/// let e = world.spawn((1u8,));
/// world.spawn((2u8,));
/// world.query::<ChunkRW<Count>>().for_each_chunk(|mut view| {
///     let len = view.len();
///     view.chunk_value_mut::<Count>().0 = len;
/// });
/// assert_eq!(world.chunk_component::<Count>(e).unwrap().0, 2);
/// ```
pub struct ChunkRW<C>(PhantomData<fn() -> C>);

/// A chunk's value of chunk component `C`, writable: what [`ChunkRW<C>`] hands out per chunk.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{ChunkRW, QueryExt};
/// #[derive(Default)]
/// struct Count(usize);
/// let mut world = World::new();
/// world.register_chunk_component::<Count>();
/// let e = world.spawn((1u8,));
/// world.query::<(ChunkRW<Count>,)>().for_each_chunk(|mut view| {
///     let (mut count,) = view.columns();
///     count.0 += 5;
///     assert_eq!(count.get().0, 5);
/// });
/// assert_eq!(world.chunk_component::<Count>(e).unwrap().0, 5);
/// ```
pub struct ChunkMut<'w, C> {
    value: NonNull<C>,
    _borrow: PhantomData<&'w mut C>,
}

impl<C> ChunkMut<'_, C> {
    /// The value.
    pub fn get(&self) -> &C {
        // SAFETY: `value` is the chunk's `C`, exclusively borrowed for `'w` (see `slice`);
        // `&self` hands out a shared borrow of it.
        unsafe { self.value.as_ref() }
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut C {
        // SAFETY: as in `get`, and `&mut self` makes this the only borrow.
        unsafe { self.value.as_mut() }
    }
}

impl<C> Deref for ChunkMut<'_, C> {
    type Target = C;

    fn deref(&self) -> &C {
        self.get()
    }
}

impl<C> DerefMut for ChunkMut<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        self.get_mut()
    }
}

/// Where a chunk component's value sits in each chunk of one archetype: its slot in
/// [`Chunk::chunk_values`].
#[derive(Clone, Copy, Debug)]
pub struct ChunkSlot(usize);

/// `C`'s id, panicking if it is not a chunk component. A planning registry (a schedule's)
/// cannot know that yet: the world's registry checks it when the system's query state is
/// built against the world.
fn chunk_component_id<C: Component>(components: &mut Components) -> ComponentId {
    let id = components.register::<C>();
    assert!(
        components.is_planning() || components.info(id).is_chunk_component(),
        "`{}` is not a chunk component: call `World::register_chunk_component::<{0}>()` \
         before building a query over it",
        type_name::<C>()
    );
    id
}

fn slot(arch: &Archetype, id: ComponentId) -> ChunkSlot {
    ChunkSlot(
        arch.chunk_value_slot(id)
            .expect("every archetype carries every chunk component (Archetype invariant 8)"),
    )
}

#[inline(always)]
fn value_ptr<C: Component>(slot: &ChunkSlot, chunk: &Chunk) -> NonNull<C> {
    // Checks the slot's type where the pointer is made (`ChunkValues` invariant 1).
    chunk.chunk_values().typed_ptr::<C>(slot.0)
}

macro_rules! chunk_element {
    ($ty:ident, $Kind:ty, $record:ident, $Slice:ty, |$fetch:ident| $make_slice:expr, |$s:ident| $unslice:expr) => {
        // SAFETY: touches only chunk `C`'s value of each fetched chunk (slot found in its
        // archetype, holding a `C`: `ChunkValues` invariant 1), declared as a read
        // (`ChunkRO`) or a write (`ChunkRW`) of `C`. Items are shared references; only
        // `slice` of `ChunkRW`, one per chunk view, yields the value mutably. Every
        // archetype carries every chunk component, so `matches` is true wherever
        // `archetype_fetch` can find the slot.
        unsafe impl<C: Component> WorldQuery for $ty<C> {
            type Item<'w> = &'w C;
            type Slice<'w> = $Slice;
            type Fetch = NonNull<C>;
            type ArchetypeFetch = ChunkSlot;
            type Kind = $Kind;
            type ReadOnly = ChunkRO<C>;
            type State = ComponentId;

            fn init_state(components: &mut Components) -> ComponentId {
                chunk_component_id::<C>(components)
            }

            fn update_access(
                id: &ComponentId,
                access: &mut Access,
                c: &Components,
            ) -> Result<(), AccessConflict> {
                access.$record(*id, c)
            }

            fn update_masks(_: &ComponentId, _: &mut Signature, _: &mut Signature) {}

            fn matches(_: &ComponentId, _: &Signature) -> bool {
                true
            }

            fn archetype_fetch(id: &ComponentId, arch: &Archetype) -> ChunkSlot {
                slot(arch, *id)
            }

            #[inline(always)]
            unsafe fn fetch(slot: &ChunkSlot, chunk: &Chunk, _: Tick) -> NonNull<C> {
                value_ptr(slot, chunk)
            }

            #[inline(always)]
            unsafe fn item<'w>(fetch: &mut NonNull<C>, _: usize) -> &'w C {
                // SAFETY: the chunk's `C`, alive for `'w`; per row it is only read, and the
                // query's access keeps other writers out (caller contract).
                unsafe { fetch.as_ref() }
            }

            #[inline(always)]
            unsafe fn slice<'w>($fetch: &NonNull<C>, _: usize) -> Self::Slice<'w> {
                $make_slice
            }

            #[inline(always)]
            unsafe fn unslice($s: Self::Slice<'_>) -> NonNull<C> {
                $unslice
            }
        }

        impl<C: Component> ExactQuery for $ty<C> {}
    };
}

chunk_element!(
    ChunkRO,
    ReadKind,
    add_read,
    &'w C,
    // SAFETY: the chunk's `C`, only read while the slice lives (caller contract).
    |fetch| unsafe { fetch.as_ref() },
    |s| NonNull::from(s)
);

chunk_element!(
    ChunkRW,
    WriteKind,
    add_write,
    ChunkMut<'w, C>,
    // No reference is made here: tuples turn slices back into fetches per task, and only a
    // chunk view (one per chunk) lets the caller borrow the value mutably.
    |fetch| ChunkMut {
        value: *fetch,
        _borrow: PhantomData,
    },
    |s| s.value
);

// SAFETY: declares only a read of `C`, and reads only its chunk values.
unsafe impl<C: Component> ReadOnlyQuery for ChunkRO<C> {}

#[cfg(test)]
mod tests {
    use ecs_core::World;

    use crate::{ChunkRO, ChunkRW, QueryExt, QueryState, RefRO};

    #[derive(Default, Debug, PartialEq, Clone, Copy)]
    struct Sum(u64);

    #[test]
    fn every_row_sees_its_chunks_value() {
        let mut world = World::with_test_chunk_size(256);
        world.register_chunk_component::<Sum>();
        world.spawn_batch((0..50u32).map(|i| (i,))).for_each(drop);
        world
            .spawn_batch((0..10u32).map(|i| (i, 1u8)))
            .for_each(drop);
        world
            .query::<(ChunkRW<Sum>, RefRO<u32>)>()
            .for_each_chunk(|mut view| {
                let (mut sum, xs) = view.columns();
                sum.0 = xs.iter().map(|&x| u64::from(x)).sum();
            });
        // Each row's value is the sum over its own chunk.
        let mut state = QueryState::<(ChunkRO<Sum>, RefRO<u32>)>::new(&mut world);
        let mut total = 0;
        state.for_each_chunk(&mut world, |view| {
            let sum = *view.chunk_value::<Sum>();
            assert_eq!(
                sum.0,
                view.column::<u32>().iter().map(|&x| u64::from(x)).sum()
            );
            total += sum.0;
        });
        assert_eq!(total, (0..50).sum::<u64>() + (0..10).sum::<u64>());
        let rows: u64 = world
            .query::<(ChunkRO<Sum>, RefRO<u32>)>()
            .iter()
            .map(|(s, _)| s.0)
            .sum();
        assert!(rows > total, "rows repeat their chunk's value");
        world.check_invariants();
    }

    #[test]
    #[should_panic(expected = "is not a chunk component")]
    fn a_plain_type_is_refused() {
        let mut world = World::new();
        let _ = QueryState::<ChunkRO<u32>>::new(&mut world);
    }

    #[test]
    #[should_panic(expected = "`ecs_query::chunk_value::tests::Sum`")]
    fn reading_and_writing_one_chunk_component_conflicts() {
        let mut world = World::new();
        world.register_chunk_component::<Sum>();
        let _ = QueryState::<(ChunkRO<Sum>, ChunkRW<Sum>)>::new(&mut world);
    }
}
