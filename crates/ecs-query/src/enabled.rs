//! Queries over enableable components (see `World::register_enableable`).
//!
//! A disabled `T` counts as absent: `RefRO<T>`, `RefRW<T>`, `&T`, `&mut T` and [`With<T>`]
//! skip the row, [`Without<T>`] matches it (Unity's `WithNone`), and [`Disabled<T>`] matches
//! only rows where `T` is present but disabled. [`IgnoreEnabled<Q>`] makes an element (or a
//! tuple of them) see every row whatever its enable bits. [`EnabledRW<T>`] yields a handle per
//! row (enabled or not) to read or flip `T`'s bit in a loop; [`EnabledRO<T>`] reads it.
//!
//! Cost: each element reports per chunk, from a popcount of the chunk's mask words, whether all, none or
//! some of its rows pass ([`Rows`]). All: the chunk runs as plain slices. None: skipped in
//! O(1). Some: the elements' bit words are ANDed into a row mask and the enabled runs are
//! walked. Elements over types never registered enableable always answer `All`, which the
//! compiler folds away: no per-row work at all.
//!
//! `Option<Q>` yields `None` on a row `Q` does not keep (an `Option<&T>` of a disabled `T` is
//! `None`), and `Or<..>` passes a row that some element keeps, decided row by row (see
//! [`WorldQuery::row_enabled`]). [`ChunkView`](crate::ChunkView) hands out whole columns with
//! the mask beside them ([`ChunkView::enabled_rows`](crate::ChunkView::enabled_rows)), and
//! [`ChunkView::is_enabled`](crate::ChunkView::is_enabled) for an `Option` column's rows.
//!
//! ```
//! use ecs_core::World;
//! use ecs_query::{Disabled, QueryExt, RefRO, With, Without};
//!
//! struct Stunned;
//! let mut world = World::new();
//! world.register_enableable::<Stunned>();
//! let a = world.spawn((1u32, Stunned));
//! world.spawn((2u32, Stunned));
//! world.set_enabled::<Stunned>(a, false).unwrap();
//! assert_eq!(world.query_filtered::<RefRO<u32>, With<Stunned>>().iter().copied().collect::<Vec<_>>(), [2]);
//! assert_eq!(world.query_filtered::<RefRO<u32>, Without<Stunned>>().iter().copied().collect::<Vec<_>>(), [1]);
//! assert_eq!(world.query_filtered::<RefRO<u32>, Disabled<Stunned>>().iter().count(), 1);
//! ```

use std::marker::PhantomData;
use std::ptr::NonNull;

use ecs_core::{
    Archetype, ChangeWindow, Chunk, Component, ComponentId, Components, EnableMask, RowTicks,
    Signature, Tick, World,
};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ExactQuery, ReadKind, ReadOnlyQuery, WorldQuery, WriteKind};
use crate::filter::QueryFilter;
use crate::rows::{slot_and, slot_has, slot_of, slot_rows, Rows, NO_SLOT};

/// Filter: `T` is present but disabled.
///
/// Matches nothing if `T` is not enableable.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{Disabled, QueryExt, RefRO};
/// struct Frozen;
/// let mut world = World::new();
/// world.register_enableable::<Frozen>();
/// let e = world.spawn((5u32, Frozen));
/// world.spawn((6u32, Frozen));
/// world.set_enabled::<Frozen>(e, false).unwrap();
/// assert_eq!(world.query_filtered::<RefRO<u32>, Disabled<Frozen>>().iter().collect::<Vec<_>>(), [&5]);
/// ```
pub struct Disabled<T>(PhantomData<fn() -> T>);

/// Runs `Q` (an element, a filter or a tuple) over every row, whatever its enable bits.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{IgnoreEnabled, QueryExt, RefRO};
/// struct Frozen(u32);
/// let mut world = World::new();
/// world.register_enableable::<Frozen>();
/// let e = world.spawn((Frozen(1),));
/// world.set_enabled::<Frozen>(e, false).unwrap();
/// assert_eq!(world.query::<RefRO<Frozen>>().iter().count(), 0);
/// assert_eq!(world.query::<IgnoreEnabled<RefRO<Frozen>>>().iter().count(), 1);
/// ```
pub struct IgnoreEnabled<Q>(PhantomData<fn() -> Q>);

/// Query element: a handle to flip `T`'s enable bit of each row that has a `T` (enabled or
/// not). Declares a write of `T`. A toggle that flips the bit marks that row's `T` changed,
/// for `Changed<T>` (as [`World::set_enabled`](ecs_core::World::set_enabled) does); handing out
/// a handle, reading it, or setting a bit to the value it has marks nothing, so a `Changed<T>`
/// reader sees exactly the rows that flipped. Toggles are not structural changes: they run no
/// hook or observer (the row keeps its components); watch them with `Changed<T>`.
///
/// From a parallel loop (`par_for_each`), each task toggles its own rows: a run gives each
/// 64-row word of the mask to one task, and a handle does not leave its thread ([`EnabledMut`]
/// is not `Send`), so toggles from any thread count give the same bits.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{Changed, EnabledRW, IgnoreEnabled, QueryExt, QueryState, RefRO};
/// struct Infectious;
/// let mut world = World::new();
/// world.register_enableable::<Infectious>();
/// world.spawn_batch((0..8u32).map(|i| (i, Infectious))).for_each(drop);
/// let mut flipped =
///     QueryState::<RefRO<u32>, IgnoreEnabled<Changed<Infectious>>>::new(&mut world);
/// assert_eq!(flipped.iter(&world).count(), 8); // a new state sees the spawns
/// world.query::<(RefRO<u32>, EnabledRW<Infectious>)>().for_each(|(i, mut on)| {
///     on.set(*i != 3); // only row 3 flips
/// });
/// assert_eq!(flipped.iter(&world).copied().collect::<Vec<_>>(), [3]);
/// ```
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{EnabledRW, QueryExt, RefRO};
/// struct Alive;
/// let mut world = World::new();
/// world.register_enableable::<Alive>();
/// world.spawn_batch((0..10u32).map(|i| (i, Alive))).for_each(drop);
/// world.query::<(RefRO<u32>, EnabledRW<Alive>)>().for_each(|(i, mut alive)| {
///     alive.set(i % 2 == 0);
/// });
/// assert_eq!(world.query::<RefRO<Alive>>().iter().count(), 5);
/// ```
pub struct EnabledRW<T>(PhantomData<fn() -> T>);

/// Query element: whether `T` is enabled, for each row that has a `T`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{EnabledRO, QueryExt};
/// struct Alive;
/// let mut world = World::new();
/// world.register_enableable::<Alive>();
/// let e = world.spawn((Alive,));
/// world.spawn((Alive,));
/// world.set_enabled::<Alive>(e, false).unwrap();
/// assert_eq!(world.query::<EnabledRO<Alive>>().iter().filter(|on| *on).count(), 1);
/// ```
pub struct EnabledRO<T>(PhantomData<fn() -> T>);

/// One row's enable bit, from [`EnabledRW`].
///
/// Not `Send`: a toggle is a plain load and store of the row's 64-row mask word, which is
/// right only while every handle of that word stays on one thread (a parallel loop gives each
/// word to one task). Handles on two threads would lose each other's writes, so moving one
/// to another thread does not compile:
///
/// ```compile_fail,E0277
/// # use ecs_core::World;
/// # use ecs_query::{EnabledRW, QueryExt};
/// struct Alive;
/// let mut world = World::new();
/// world.register_enableable::<Alive>();
/// world.spawn_batch((0..64u32).map(|_| (Alive,))).for_each(drop);
/// let mut handles: Vec<_> = world.query::<EnabledRW<Alive>>().iter().collect();
/// let (left, right) = handles.split_at_mut(32);
/// std::thread::scope(|s| {
///     s.spawn(move || left.iter_mut().for_each(|h| { h.set(false); }));
///     right.iter_mut().for_each(|h| { h.set(false); });
/// });
/// ```
pub struct EnabledMut<'w> {
    mask: Option<&'w EnableMask>,
    /// The chunk, `T`'s column in it and the run's tick: a flip marks the row changed.
    chunk: &'w Chunk,
    col: u32,
    tick: Tick,
    row: usize,
    /// `!Send` (see the type's doc); still `Sync`, since `get` through `&self` only loads.
    _one_thread: PhantomData<std::sync::MutexGuard<'static, ()>>,
}

impl EnabledMut<'_> {
    /// Whether the row's component is enabled (always true for a type that is not
    /// enableable).
    #[inline]
    pub fn get(&self) -> bool {
        self.mask.is_none_or(|m| m.get(self.row))
    }

    /// Enables or disables the row's component; returns the previous state.
    ///
    /// # Panics
    /// If the type is not enableable and `on` is false.
    #[inline]
    pub fn set(&mut self, on: bool) -> bool {
        let Some(mask) = self.mask else {
            assert!(on, "the component is not enableable");
            return true;
        };
        // SAFETY: `row` is below the chunk's length (the fetch contract); the query holds the
        // write of the column's component, so nothing else reads or writes the bit meanwhile
        // except handles of this query on other rows. Those never write this row's 64-row
        // word from another thread: a parallel run gives each word to one task
        // (`EnableMask` invariant 3), and handles are not `Send`, so none leaves its thread.
        let was = unsafe { mask.set_unchecked(self.row, on) };
        if was != on {
            // SAFETY: the query holds the write of `T` (so of its column's ticks), `col` is
            // `T`'s column in this chunk and `row` one of its rows (the fetch contract), and
            // `tick` is the running query's tick; the column is stamped before the row, as
            // `mark_row_unchecked` asks. Both are atomic stores, so handles of other rows on
            // other threads of a parallel run may store the same tick meanwhile.
            unsafe {
                self.chunk
                    .mark_changed_unchecked(self.col as usize, self.tick);
                self.chunk
                    .mark_row_unchecked(self.col as usize, self.row, self.tick);
            }
        }
        was
    }
}

/// Per-chunk fetch of [`EnabledRW`] / [`EnabledRO`]: the chunk's mask, if `T` is enableable,
/// and (for the handles' change marks) the chunk, `T`'s column and the run's tick.
#[derive(Clone, Copy)]
pub struct MaskFetch {
    mask: Option<NonNull<EnableMask>>,
    chunk: NonNull<Chunk>,
    col: u32,
    tick: Tick,
}

/// Where [`EnabledRW`] / [`EnabledRO`] find `T` in an archetype.
#[derive(Clone, Copy, Debug)]
pub struct EnableColumn {
    col: u32,
    slot: u32,
}

fn enable_column(arch: &Archetype, id: ComponentId) -> EnableColumn {
    let col = arch
        .column(id)
        .expect("the archetype matches the query, so it has the column");
    EnableColumn {
        col: col as u32,
        slot: slot_of(arch, id),
    }
}

#[inline(always)]
fn mask_fetch(column: &EnableColumn, chunk: &Chunk, tick: Tick) -> MaskFetch {
    MaskFetch {
        mask: (column.slot != NO_SLOT)
            .then(|| NonNull::from(chunk.enable_bits().get(column.slot as usize))),
        chunk: NonNull::from(chunk),
        col: column.col,
        tick,
    }
}

macro_rules! filter_body {
    () => {
        type Item<'w> = ();
        type Slice<'w> = ();
        type Fetch = ();
        type Kind = ReadKind;
        type ReadOnly = Self;
        type ArchetypeFetch = u32;

        #[inline(always)]
        unsafe fn fetch(_: &u32, _: &Chunk, _: Tick) {}

        #[inline(always)]
        unsafe fn item<'w>(_: &mut (), _: usize) -> Self::Item<'w> {}

        #[inline(always)]
        unsafe fn slice<'w>(_: &(), _: usize) -> Self::Slice<'w> {}

        #[inline(always)]
        unsafe fn unslice(_: ()) {}
    };
}

// SAFETY: touches no column; reads only enable bits (atomics) of `T`, declared as a filter
// read so that schedules order it against writers (togglers) of `T`.
unsafe impl<T: Component> WorldQuery for Disabled<T> {
    filter_body!();
    /// `T`'s id, and whether it is enableable.
    type State = (ComponentId, bool);

    fn init_state(components: &mut Components) -> Self::State {
        let id = components.register::<T>();
        (id, components.info(id).is_enableable())
    }

    fn update_access(
        state: &Self::State,
        access: &mut Access,
        _: &Components,
    ) -> Result<(), AccessConflict> {
        access.add_filter_read(state.0);
        Ok(())
    }

    fn update_masks(state: &Self::State, required: &mut Signature, _: &mut Signature) {
        required.insert(state.0);
    }

    fn matches(state: &Self::State, signature: &Signature) -> bool {
        state.1 && signature.contains(state.0)
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
}

// SAFETY: declares no write.
unsafe impl<T: Component> ReadOnlyQuery for Disabled<T> {}
impl<T: Component> QueryFilter for Disabled<T> {}
impl<T: Component> ExactQuery for Disabled<T> {}

// SAFETY: forwards every item to `Q` except the enable-bit hooks, which keep every row; so
// it reads and writes exactly what `Q` does. Forwarding, the invariant each `unsafe` call below
// relies on: `IgnoreEnabled<Q>`'s state, cached fetch, fetch and slice are `Q`'s own, so the
// caller's contract for a method here is `Q`'s contract for the same method and arguments.
unsafe impl<Q: WorldQuery> WorldQuery for IgnoreEnabled<Q> {
    type Item<'w> = Q::Item<'w>;
    type Slice<'w> = Q::Slice<'w>;
    type Fetch = Q::Fetch;
    type ArchetypeFetch = Q::ArchetypeFetch;
    type Kind = Q::Kind;
    type ReadOnly = IgnoreEnabled<Q::ReadOnly>;
    type State = Q::State;

    const CHUNK_FILTERED: bool = Q::CHUNK_FILTERED;
    const ROW_FILTERED: bool = Q::ROW_FILTERED;
    const ODD_WIDTH: bool = Q::ODD_WIDTH;

    fn row_ticks(state: &Q::State, out: &mut Vec<(ComponentId, RowTicks)>) {
        Q::row_ticks(state, out);
    }

    #[inline(always)]
    fn rows_all_match(cached: &Q::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
        Q::rows_all_match(cached, chunk, window)
    }

    #[inline(always)]
    fn row_matches(
        cached: &Q::ArchetypeFetch,
        chunk: &Chunk,
        row: usize,
        window: ChangeWindow,
    ) -> bool {
        Q::row_matches(cached, chunk, row, window)
    }

    #[inline(always)]
    unsafe fn mark_rows(
        cached: &Q::ArchetypeFetch,
        chunk: &Chunk,
        rows: std::ops::Range<usize>,
        tick: Tick,
    ) {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::mark_rows(cached, chunk, rows, tick) }
    }

    #[inline(always)]
    fn keeps_row_ticks(cached: &Q::ArchetypeFetch, chunk: &Chunk) -> bool {
        Q::keeps_row_ticks(cached, chunk)
    }

    #[inline(always)]
    unsafe fn mark_row(cached: &Q::ArchetypeFetch, chunk: &Chunk, row: usize, tick: Tick) {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::mark_row(cached, chunk, row, tick) }
    }

    #[inline]
    fn and_row_marks(
        cached: &Q::ArchetypeFetch,
        chunk: &Chunk,
        window: ChangeWindow,
        words: &mut [u64],
    ) {
        Q::and_row_marks(cached, chunk, window, words);
    }

    fn init_state(components: &mut Components) -> Q::State {
        Q::init_state(components)
    }

    fn update_access(
        state: &Q::State,
        access: &mut Access,
        components: &Components,
    ) -> Result<(), AccessConflict> {
        Q::update_access(state, access, components)
    }

    fn update_masks(state: &Q::State, required: &mut Signature, excluded: &mut Signature) {
        Q::update_masks(state, required, excluded);
    }

    fn matches(state: &Q::State, signature: &Signature) -> bool {
        Q::matches(state, signature)
    }

    fn archetype_fetch(state: &Q::State, archetype: &Archetype) -> Q::ArchetypeFetch {
        Q::archetype_fetch(state, archetype)
    }

    #[inline(always)]
    fn chunk_matches(cached: &Q::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
        Q::chunk_matches(cached, chunk, window)
    }

    #[inline(always)]
    unsafe fn fetch(cached: &Q::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Q::Fetch {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::fetch_ignoring_enabled(cached, chunk, tick) }
    }

    #[inline(always)]
    unsafe fn fetch_ignoring_enabled(
        cached: &Q::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
    ) -> Q::Fetch {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::fetch_ignoring_enabled(cached, chunk, tick) }
    }

    #[inline(always)]
    unsafe fn fetch_in(
        cached: &Q::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
        world: &World,
    ) -> Q::Fetch {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::fetch_ignoring_enabled_in(cached, chunk, tick, world) }
    }

    #[inline(always)]
    unsafe fn fetch_ignoring_enabled_in(
        cached: &Q::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
        world: &World,
    ) -> Q::Fetch {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::fetch_ignoring_enabled_in(cached, chunk, tick, world) }
    }

    #[inline(always)]
    unsafe fn item<'w>(fetch: &mut Q::Fetch, row: usize) -> Q::Item<'w> {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::item(fetch, row) }
    }

    #[inline(always)]
    unsafe fn slice<'w>(fetch: &Q::Fetch, len: usize) -> Q::Slice<'w> {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::slice(fetch, len) }
    }

    #[inline(always)]
    unsafe fn unslice(slice: Q::Slice<'_>) -> Q::Fetch {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::unslice(slice) }
    }

    #[inline(always)]
    unsafe fn for_each_row<'w, Func: FnMut(Q::Item<'w>)>(
        fetch: &mut Q::Fetch,
        len: usize,
        f: &mut Func,
    ) {
        // SAFETY: `Q`'s contract, for the same arguments (`IgnoreEnabled` forwards, see above).
        unsafe { Q::for_each_row(fetch, len, f) }
    }
}

// SAFETY: `Q` declares no write, and this forwards to it.
unsafe impl<Q: ReadOnlyQuery> ReadOnlyQuery for IgnoreEnabled<Q> {}
impl<Q: ExactQuery> ExactQuery for IgnoreEnabled<Q> {}
impl<Q: QueryFilter> QueryFilter for IgnoreEnabled<Q> {}

macro_rules! enabled_element {
    ($ty:ident, $Kind:ty, $Item:ty, $record:ident, |$fetch:ident, $row:ident| $make:expr) => {
        // SAFETY: touches only `T`'s enable bits (atomics) of rows below `len` and, for
        // `EnabledRW` when a bit flips, `T`'s column and row ticks (atomics), declared as a read
        // (`EnabledRO`) or a write (`EnabledRW`) of `T`; matches archetypes with `T`.
        unsafe impl<T: Component> WorldQuery for $ty<T> {
            type Item<'w> = $Item;
            type Slice<'w> = (MaskFetch, usize, PhantomData<&'w ()>);
            type Fetch = MaskFetch;
            type ArchetypeFetch = EnableColumn;
            type Kind = $Kind;
            type ReadOnly = EnabledRO<T>;
            type State = ComponentId;

            fn init_state(components: &mut Components) -> ComponentId {
                components.register::<T>()
            }

            fn update_access(
                id: &ComponentId,
                access: &mut Access,
                c: &Components,
            ) -> Result<(), AccessConflict> {
                access.$record(*id, c)
            }

            fn update_masks(id: &ComponentId, required: &mut Signature, _: &mut Signature) {
                required.insert(*id);
            }

            fn matches(id: &ComponentId, signature: &Signature) -> bool {
                signature.contains(*id)
            }

            fn archetype_fetch(id: &ComponentId, arch: &Archetype) -> EnableColumn {
                enable_column(arch, *id)
            }

            // Handing out rows marks nothing: a handle marks its row when its toggle flips
            // the bit (`EnabledMut::set`), so only flips are changes.
            #[inline(always)]
            unsafe fn fetch(column: &EnableColumn, chunk: &Chunk, tick: Tick) -> MaskFetch {
                mask_fetch(column, chunk, tick)
            }

            #[inline(always)]
            unsafe fn mark_rows(_: &EnableColumn, _: &Chunk, _: std::ops::Range<usize>, _: Tick) {}

            #[inline(always)]
            fn keeps_row_ticks(_: &EnableColumn, _: &Chunk) -> bool {
                false
            }

            #[inline(always)]
            unsafe fn mark_row(_: &EnableColumn, _: &Chunk, _: usize, _: Tick) {}

            #[inline(always)]
            unsafe fn item<'w>($fetch: &mut MaskFetch, $row: usize) -> Self::Item<'w> {
                $make
            }

            #[inline(always)]
            unsafe fn slice<'w>(fetch: &MaskFetch, len: usize) -> Self::Slice<'w> {
                (*fetch, len, PhantomData)
            }

            #[inline(always)]
            unsafe fn unslice(slice: Self::Slice<'_>) -> MaskFetch {
                slice.0
            }
        }

        impl<T: Component> ExactQuery for $ty<T> {}
    };
}

enabled_element!(
    EnabledRW,
    WriteKind,
    EnabledMut<'w>,
    add_write,
    |fetch, row| {
        EnabledMut {
            // SAFETY: the mask lives in the chunk, which outlives `'w` (caller contract).
            mask: fetch.mask.map(|m| unsafe { m.as_ref() }),
            // SAFETY: as the mask: the chunk outlives `'w` (caller contract).
            chunk: unsafe { fetch.chunk.as_ref() },
            col: fetch.col,
            tick: fetch.tick,
            row,
            _one_thread: PhantomData,
        }
    }
);
enabled_element!(EnabledRO, ReadKind, bool, add_read, |fetch, row| {
    // SAFETY: the mask lives in the chunk, alive during the call (caller contract).
    fetch.mask.is_none_or(|m| unsafe { m.as_ref() }.get(row))
});

// SAFETY: declares only a read of `T`, and reads only its enable bits.
unsafe impl<T: Component> ReadOnlyQuery for EnabledRO<T> {}

// SAFETY: the pointers are to an `EnableMask` (atomics) in a chunk and to the chunk, whose
// column and row ticks a handle writes (atomics too), shared between threads only under the
// query's declared access.
unsafe impl Send for MaskFetch {}
// SAFETY: sharing a `MaskFetch` shares only those pointers to atomics: mask words written as
// plain stores by one thread per 64-row word (`EnableMask` invariant 3), ticks as stores of the
// run's one tick, under the query's declared access.
unsafe impl Sync for MaskFetch {}
