//! Query filters: [`With`], [`Without`] and [`Or`] (the row-tick filters `Changed` and
//! `Added` live in `tick_filter`).
//!
//! Filters sit in the query tuple beside the data elements and yield `()`. `With` and `Without`
//! only narrow the archetype masks, so they cost nothing per chunk.
//!
//! For an enableable `T` (see the `enabled` module) a disabled `T` counts as absent: `With<T>`
//! skips the row and `Without<T>` matches it.

use std::any::type_name;
use std::marker::PhantomData;

use ecs_core::{
    Archetype, ChangeWindow, Chunk, Component, ComponentId, Components, RowTicks, Signature, Tick,
};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ExactQuery, ReadKind, ReadOnlyQuery, WorldQuery};
use crate::rows::{slot_and, slot_has, slot_of, slot_rows, Rows};

/// Matches entities that have a `T`, without fetching it.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO, With};
/// let mut world = World::new();
/// world.spawn((1u32, 'a'));
/// world.spawn((2u32,));
/// let v: Vec<u32> = world.query_filtered::<RefRO<u32>, With<char>>().iter().copied().collect();
/// assert_eq!(v, [1]);
/// ```
pub struct With<T>(PhantomData<fn() -> T>);

/// Matches entities that do not have a `T`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO, Without};
/// let mut world = World::new();
/// world.spawn((1u32, 'a'));
/// world.spawn((2u32,));
/// let v: Vec<u32> = world.query_filtered::<RefRO<u32>, Without<char>>().iter().copied().collect();
/// assert_eq!(v, [2]);
/// ```
pub struct Without<T>(PhantomData<fn() -> T>);

/// Matches when any of the filters in the tuple `F` matches: `Or<(With<A>, Changed<B>)>`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{Or, QueryState, RefRO, With};
/// let mut world = World::new();
/// world.spawn((1u32, 'a'));
/// world.spawn((2u32, 0u8));
/// world.spawn((3u32,));
/// let mut state = QueryState::<RefRO<u32>, Or<(With<char>, With<u8>)>>::new(&mut world);
/// assert_eq!(state.count(&world), 2);
/// ```
pub struct Or<F>(PhantomData<fn() -> F>);

/// A filter: usable as the second parameter of [`QueryState`](crate::QueryState) and inside
/// [`Or`]. `With`, `Without`, `Changed`, `Or` and tuples of filters are filters.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryFilter, QueryState, RefRO, With, Without};
/// fn count_u32<F: QueryFilter>(world: &mut World) -> usize {
///     QueryState::<RefRO<u32>, F>::new(world).count(world)
/// }
/// let mut world = World::new();
/// world.spawn((1u32, 'a'));
/// world.spawn((2u32,));
/// assert_eq!(count_u32::<(With<char>,)>(&mut world), 1);
/// assert_eq!(count_u32::<(Without<char>, Without<u8>)>(&mut world), 1);
/// ```
pub trait QueryFilter: ReadOnlyQuery {}

impl<T: Component> QueryFilter for With<T> {}
impl<T: Component> QueryFilter for Without<T> {}

macro_rules! filter_tuple {
    ($($F:ident),*) => {
        impl<$($F: QueryFilter),*> QueryFilter for ($($F,)*) {}
    };
}

filter_tuple!();
filter_tuple!(A);
filter_tuple!(A, B);
filter_tuple!(A, B, C);
filter_tuple!(A, B, C, D);
filter_tuple!(A, B, C, D, E);
filter_tuple!(A, B, C, D, E, F);
filter_tuple!(A, B, C, D, E, F, G);
filter_tuple!(A, B, C, D, E, F, G, H);

macro_rules! unit_fetch {
    () => {
        unit_fetch!(|_access, _id, _c| {});
    };
    (|$access:ident, $id:ident, $c:ident| $record:block) => {
        type Item<'w> = ();
        type Slice<'w> = ();
        type Fetch = ();
        type Kind = ReadKind;
        type ReadOnly = Self;
        type State = ComponentId;

        fn init_state(components: &mut Components) -> ComponentId {
            components.register::<T>()
        }

        fn update_access(
            $id: &ComponentId,
            $access: &mut Access,
            $c: &Components,
        ) -> Result<(), AccessConflict> {
            $record
            Ok(())
        }

        #[inline(always)]
        unsafe fn fetch(_: &Self::ArchetypeFetch, _: &Chunk, _: Tick) {}

        #[inline(always)]
        unsafe fn item<'w>(_: &mut (), _: usize) -> Self::Item<'w> {}

        #[inline(always)]
        unsafe fn slice<'w>(_: &(), _: usize) -> Self::Slice<'w> {}

        #[inline(always)]
        unsafe fn unslice(_: ()) {}

        #[inline(always)]
        unsafe fn advance(_: &(), _: usize) -> Option<()> {
            Some(())
        }
    };
}
pub(crate) use unit_fetch;

/// The index of `T`'s column in `arch`, whose ticks a change filter (`filter`) reads.
///
/// # Panics
/// If `arch` has no `T` column: it does not match the filter.
pub(crate) fn tick_column<T>(arch: &Archetype, id: ComponentId, filter: &str) -> usize {
    arch.column(id).unwrap_or_else(|| {
        panic!(
            "archetype {:?} has no `{}` column: it does not match `{filter}`",
            arch.id(),
            type_name::<T>()
        )
    })
}

// SAFETY: touches no column; reads only `T`'s enable bits (atomics), and declares a filter
// read of an enableable `T` so that schedules order it against togglers of `T`.
unsafe impl<T: Component> WorldQuery for With<T> {
    unit_fetch!(|access, id, c| {
        // A plain type's `With` reads nothing at run time, so it declares nothing.
        if c.info(*id).is_enableable() {
            access.add_filter_read(*id);
        }
    });
    /// `T`'s enable slot in the archetype (`NO_SLOT` if it is not enableable).
    type ArchetypeFetch = u32;

    fn archetype_fetch(id: &ComponentId, arch: &Archetype) -> u32 {
        slot_of(arch, *id)
    }

    #[inline(always)]
    fn enabled_rows(slot: &u32, chunk: &Chunk) -> Rows {
        slot_rows(*slot, chunk, true)
    }

    #[inline]
    fn and_rows(slot: &u32, chunk: &Chunk, words: &mut [u64]) {
        slot_and(*slot, chunk, words, true);
    }

    #[inline(always)]
    fn row_enabled(slot: &u32, chunk: &Chunk, row: usize) -> bool {
        slot_has(*slot, chunk, row, true)
    }

    fn update_masks(id: &ComponentId, required: &mut Signature, _: &mut Signature) {
        required.insert(*id);
    }

    fn matches(id: &ComponentId, signature: &Signature) -> bool {
        signature.contains(*id)
    }
}

// SAFETY: touches no column; as `With`, reads only `T`'s enable bits, declared as a filter
// read for an enableable `T`.
unsafe impl<T: Component> WorldQuery for Without<T> {
    type Item<'w> = ();
    type Slice<'w> = ();
    type Fetch = ();
    type Kind = ReadKind;
    type ReadOnly = Self;
    /// `T`'s id, and whether it is enableable: then archetypes with `T` match too, and their
    /// rows pass where `T` is disabled (Unity's `WithNone`).
    type State = (ComponentId, bool);
    /// `T`'s enable slot in the archetype (`NO_SLOT` if it has no enableable `T`).
    type ArchetypeFetch = u32;

    fn init_state(components: &mut Components) -> Self::State {
        let id = components.register::<T>();
        (id, components.info(id).is_enableable())
    }

    fn update_access(
        state: &Self::State,
        access: &mut Access,
        _: &Components,
    ) -> Result<(), AccessConflict> {
        if state.1 {
            access.add_filter_read(state.0);
        }
        Ok(())
    }

    fn update_masks(state: &Self::State, _: &mut Signature, excluded: &mut Signature) {
        if !state.1 {
            excluded.insert(state.0);
        }
    }

    fn matches(state: &Self::State, signature: &Signature) -> bool {
        state.1 || !signature.contains(state.0)
    }

    fn archetype_fetch(state: &Self::State, arch: &Archetype) -> u32 {
        slot_of(arch, state.0)
    }

    #[inline(always)]
    fn enabled_rows(slot: &u32, chunk: &Chunk) -> Rows {
        slot_rows(*slot, chunk, false)
    }

    #[inline]
    fn and_rows(slot: &u32, chunk: &Chunk, words: &mut [u64]) {
        slot_and(*slot, chunk, words, false);
    }

    #[inline(always)]
    fn row_enabled(slot: &u32, chunk: &Chunk, row: usize) -> bool {
        slot_has(*slot, chunk, row, false)
    }

    #[inline(always)]
    unsafe fn fetch(_: &u32, _: &Chunk, _: Tick) {}

    #[inline(always)]
    unsafe fn item<'w>(_: &mut (), _: usize) -> Self::Item<'w> {}

    #[inline(always)]
    unsafe fn slice<'w>(_: &(), _: usize) -> Self::Slice<'w> {}

    #[inline(always)]
    unsafe fn unslice(_: ()) {}

    #[inline(always)]
    unsafe fn advance(_: &(), _: usize) -> Option<()> {
        // The fetch is empty: rows are told apart by the chunk's masks, not by it.
        Some(())
    }
}

// SAFETY: declare no write.
unsafe impl<T: Component> ReadOnlyQuery for With<T> {}
// SAFETY: declare no write.
unsafe impl<T: Component> ReadOnlyQuery for Without<T> {}
impl<T: Component> ExactQuery for With<T> {}
impl<T: Component> ExactQuery for Without<T> {}

macro_rules! or_filter {
    ($($F:ident $i:tt),*) => {
        // SAFETY: touches no column; matches when any element does.
        unsafe impl<$($F: QueryFilter),*> WorldQuery for Or<($($F,)*)> {
            type Item<'w> = ();
            type Slice<'w> = ();
            type Fetch = ();
            /// Per element, its own cache where it matches the archetype.
            type ArchetypeFetch = ($(Option<$F::ArchetypeFetch>,)*);
            type Kind = ReadKind;
            type ReadOnly = Self;
            type State = ($($F::State,)*);

            const CHUNK_FILTERED: bool = false $(|| $F::CHUNK_FILTERED)*;
            const ROW_FILTERED: bool = false $(|| $F::ROW_FILTERED)*;

            fn init_state(components: &mut Components) -> Self::State {
                ($($F::init_state(components),)*)
            }

            fn row_ticks(state: &Self::State, out: &mut Vec<(ComponentId, RowTicks)>) {
                $($F::row_ticks(&state.$i, out);)*
            }

            // With a change filter among the elements, a row passes if some element passes
            // it by both its change filter and its enable bits: the change hooks below test
            // both, element by element. (The enable hooks further down give the union of the
            // elements' enabled rows, a superset, so the query's AND of the two stays exact.)
            #[inline]
            fn rows_all_match(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
                false $(|| cached.$i.as_ref().is_some_and(|c| {
                    $F::chunk_matches(c, chunk, window)
                        && $F::rows_all_match(c, chunk, window)
                        && $F::enabled_rows(c, chunk) == Rows::All
                }))*
            }

            #[inline]
            fn row_matches(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize, window: ChangeWindow) -> bool {
                false $(|| cached.$i.as_ref().is_some_and(|c| {
                    $F::chunk_matches(c, chunk, window)
                        && $F::row_matches(c, chunk, row, window)
                        && $F::row_enabled(c, chunk, row)
                }))*
            }

            fn and_row_marks(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow, words: &mut [u64]) {
                // A row passes if some element passes it: OR the elements' masks.
                let mut any = vec![0u64; words.len()];
                $(if let Some(c) = cached.$i.as_ref() {
                    if $F::chunk_matches(c, chunk, window) {
                        let mut these = words.to_vec();
                        if $F::ROW_FILTERED && !$F::rows_all_match(c, chunk, window) {
                            $F::and_row_marks(c, chunk, window, &mut these);
                        }
                        $F::and_rows(c, chunk, &mut these);
                        any.iter_mut().zip(&these).for_each(|(a, t)| *a |= t);
                    }
                })*
                words.iter_mut().zip(&any).for_each(|(w, a)| *w &= a);
            }

            #[inline]
            fn enabled_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> Rows {
                let rows = Rows::None;
                $(let rows = match cached.$i.as_ref() {
                    Some(c) => rows.or($F::enabled_rows(c, chunk)),
                    None => rows,
                };)*
                rows
            }

            fn and_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk, words: &mut [u64]) {
                // A row is kept if some matched element keeps it: OR the elements' masks.
                let mut any = vec![0u64; words.len()];
                $(if let Some(c) = cached.$i.as_ref() {
                    match $F::enabled_rows(c, chunk) {
                        Rows::All => return,
                        Rows::None => {}
                        Rows::Some => {
                            let mut these = words.to_vec();
                            $F::and_rows(c, chunk, &mut these);
                            any.iter_mut().zip(&these).for_each(|(a, t)| *a |= t);
                        }
                    }
                })*
                words.iter_mut().zip(&any).for_each(|(w, a)| *w &= a);
            }

            #[inline]
            fn row_enabled(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize) -> bool {
                false $(|| cached.$i.as_ref().is_some_and(|c| $F::row_enabled(c, chunk, row)))*
            }

            fn update_access(state: &Self::State, access: &mut Access, c: &Components) -> Result<(), AccessConflict> {
                $($F::update_access(&state.$i, access, c)?;)*
                Ok(())
            }

            fn matches(state: &Self::State, signature: &Signature) -> bool {
                false $(|| $F::matches(&state.$i, signature))*
            }

            fn archetype_fetch(state: &Self::State, arch: &Archetype) -> Self::ArchetypeFetch {
                let sig = arch.signature();
                ($($F::matches(&state.$i, sig).then(|| $F::archetype_fetch(&state.$i, arch)),)*)
            }

            #[inline]
            fn chunk_matches(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
                false $(|| cached.$i.as_ref().is_some_and(|c| $F::chunk_matches(c, chunk, window)))*
            }

            #[inline(always)]
            unsafe fn fetch(_: &Self::ArchetypeFetch, _: &Chunk, _: Tick) {}

            #[inline(always)]
            unsafe fn item<'w>(_: &mut (), _: usize) -> Self::Item<'w> {}

            #[inline(always)]
            unsafe fn slice<'w>(_: &(), _: usize) -> Self::Slice<'w> {}

            #[inline(always)]
            unsafe fn unslice(_: ()) {}

            #[inline(always)]
            unsafe fn advance(_: &(), _: usize) -> Option<()> {
                Some(())
            }
        }

        // SAFETY: declares no write.
        unsafe impl<$($F: QueryFilter),*> ReadOnlyQuery for Or<($($F,)*)> {}
        impl<$($F: QueryFilter),*> QueryFilter for Or<($($F,)*)> {}
        impl<$($F: QueryFilter + ExactQuery),*> ExactQuery for Or<($($F,)*)> {}
    };
}

or_filter!(A 0);
or_filter!(A 0, B 1);
or_filter!(A 0, B 1, C 2);
or_filter!(A 0, B 1, C 2, D 3);
or_filter!(A 0, B 1, C 2, D 3, E 4);
or_filter!(A 0, B 1, C 2, D 3, E 4, F 5);
or_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
or_filter!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
