//! The row-tick filters [`Changed`] and [`Added`]: one filter, [`TickFilter`], over the row
//! tick it reads ([`TickKind`]: the change tick or the add tick).
//!
//! Both are row-precise. `ecs_core` keeps the tick a filter reads per row for the types some
//! such reader asks about ([`RowTicks`], switched on when the first query state is built). A
//! chunk whose newest tick is older than the window is skipped in O(1); in a chunk that
//! passes, rows are tested 64 at a time. See `ecs_core::RowTicks` and docs/queries.md for
//! the ticks and their cost.
//!
//! - `Changed<T>` passes the rows whose `T` was written (through `RefRW`, `get_mut`, an
//!   overwriting `insert`) or that were spawned with or gained `T` since the running query
//!   state last ran.
//! - `Added<T>` passes only rows that gained `T`: spawned with it, `T` inserted into an entity
//!   without it, or restored from a snapshot. Writes never count. Moving a row (another
//!   component added or removed, a swap-remove) carries its add tick along.
//!
//! Both declare a filter read of `T`, so a schedule orders them against writers of `T`: run
//! beside one, a filter could look at a chunk before the writer stamps it, and miss the write
//! for good.

use std::marker::PhantomData;

use ecs_core::{
    Archetype, ChangeWindow, Chunk, Component, ComponentId, Components, RowTicks, Signature, Tick,
};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ReadKind, ReadOnlyQuery, WorldQuery};
use crate::filter::{tick_column, unit_fetch, QueryFilter};

/// A filter on one row tick of `T`, chosen by `K`; use it as [`Changed`] or [`Added`].
pub struct TickFilter<T, K>(PhantomData<fn() -> (T, K)>);

/// Matches the rows whose `T` changed since the query state last ran (see the module doc).
/// A new query state sees every row as changed.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{Changed, QueryState, RefRO};
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// let mut state = QueryState::<RefRO<u32>, Changed<u32>>::new(&mut world);
/// assert_eq!(state.iter(&world).count(), 1); // a new state sees everything as changed
/// assert_eq!(state.iter(&world).count(), 0);
/// *world.get_mut::<u32>(e).unwrap() = 2;
/// assert_eq!(state.iter(&world).count(), 1);
/// ```
pub type Changed<T> = TickFilter<T, ChangeTick>;

/// Matches the rows that gained `T` (spawned with it, or `T` inserted) since the query state
/// last ran. A new query state sees every row as added.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{Added, QueryState, RefRO};
/// let mut world = World::new();
/// let a = world.spawn((1u32,));
/// let mut state = QueryState::<RefRO<u32>, Added<u32>>::new(&mut world);
/// assert_eq!(state.iter(&world).count(), 1); // a new state sees everything as added
/// *world.get_mut::<u32>(a).unwrap() = 5; // a write is not an add
/// assert_eq!(state.iter(&world).count(), 0);
/// let b = world.spawn(('x',));
/// world.insert_one(b, 2u32).unwrap();
/// assert_eq!(state.iter(&world).copied().collect::<Vec<_>>(), [2]);
/// ```
pub type Added<T> = TickFilter<T, AddTick>;

/// The row tick a [`TickFilter`] reads, with the chunk tests for it. Implemented by
/// [`ChangeTick`] and [`AddTick`] only.
pub trait TickKind: sealed::Sealed + 'static {
    /// The row ticks the filter needs kept for its type.
    const MARKS: RowTicks;
    /// The filter's name, for messages.
    const NAME: &'static str;
    /// The O(1) test: some row of column `col` may pass in `window`.
    fn chunk_passes(chunk: &Chunk, col: usize, window: ChangeWindow) -> bool;
    /// Every row of a chunk that passed `chunk_passes` passes: no row need be tested.
    fn all_rows_pass(chunk: &Chunk, col: usize, window: ChangeWindow) -> bool;
    /// Row `row` passes.
    fn row_passes(chunk: &Chunk, col: usize, row: usize, window: ChangeWindow) -> bool;
    /// Clears the bits of `words` (64 rows each) whose rows do not pass.
    fn and_rows(chunk: &Chunk, col: usize, window: ChangeWindow, words: &mut [u64]);
}

/// [`Changed`]: the tick of the last write, or of the add.
pub enum ChangeTick {}

/// [`Added`]: the tick the row gained the type.
pub enum AddTick {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ChangeTick {}
    impl Sealed for super::AddTick {}
}

impl TickKind for ChangeTick {
    const MARKS: RowTicks = RowTicks::CHANGED;
    const NAME: &'static str = "Changed";

    #[inline]
    fn chunk_passes(chunk: &Chunk, col: usize, window: ChangeWindow) -> bool {
        chunk.changed_since(col, window)
    }

    #[inline]
    fn all_rows_pass(chunk: &Chunk, col: usize, window: ChangeWindow) -> bool {
        chunk.all_changed_since(col, window)
    }

    #[inline]
    fn row_passes(chunk: &Chunk, col: usize, row: usize, window: ChangeWindow) -> bool {
        chunk.row_changed_since(col, row, window)
    }

    #[inline]
    fn and_rows(chunk: &Chunk, col: usize, window: ChangeWindow, words: &mut [u64]) {
        chunk.and_changed_rows(col, window, words);
    }
}

impl TickKind for AddTick {
    const MARKS: RowTicks = RowTicks::ADDED;
    const NAME: &'static str = "Added";

    #[inline]
    fn chunk_passes(chunk: &Chunk, col: usize, window: ChangeWindow) -> bool {
        chunk.added_since(col, window)
    }

    #[inline]
    fn all_rows_pass(chunk: &Chunk, col: usize, _: ChangeWindow) -> bool {
        // Without add ticks the chunk test decided; with them, rows are tested.
        !chunk.keeps_add_ticks(col)
    }

    #[inline]
    fn row_passes(chunk: &Chunk, col: usize, row: usize, window: ChangeWindow) -> bool {
        chunk.row_added_since(col, row, window)
    }

    #[inline]
    fn and_rows(chunk: &Chunk, col: usize, window: ChangeWindow, words: &mut [u64]) {
        chunk.and_added_rows(col, window, words);
    }
}

// SAFETY: reads only row and chunk ticks, never column data, and writes nothing. It declares
// a (filter) read of `T` so that a schedule orders it against writers of `T`.
unsafe impl<T: Component, K: TickKind> WorldQuery for TickFilter<T, K> {
    unit_fetch!(|access, id, _c| {
        access.add_filter_read(*id);
    });
    /// The index of the `T` column, whose ticks the filter reads.
    type ArchetypeFetch = usize;

    const CHUNK_FILTERED: bool = true;
    const ROW_FILTERED: bool = true;

    fn row_ticks(id: &ComponentId, out: &mut Vec<(ComponentId, RowTicks)>) {
        out.push((*id, K::MARKS));
    }

    fn update_masks(id: &ComponentId, required: &mut Signature, _: &mut Signature) {
        required.insert(*id);
    }

    fn matches(id: &ComponentId, signature: &Signature) -> bool {
        signature.contains(*id)
    }

    fn archetype_fetch(id: &ComponentId, arch: &Archetype) -> usize {
        tick_column::<T>(arch, *id, K::NAME)
    }

    #[inline]
    fn chunk_matches(col: &usize, chunk: &Chunk, window: ChangeWindow) -> bool {
        K::chunk_passes(chunk, *col, window)
    }

    #[inline]
    fn rows_all_match(col: &usize, chunk: &Chunk, window: ChangeWindow) -> bool {
        K::all_rows_pass(chunk, *col, window)
    }

    #[inline]
    fn row_matches(col: &usize, chunk: &Chunk, row: usize, window: ChangeWindow) -> bool {
        K::row_passes(chunk, *col, row, window)
    }

    #[inline]
    fn and_row_marks(col: &usize, chunk: &Chunk, window: ChangeWindow, words: &mut [u64]) {
        K::and_rows(chunk, *col, window, words);
    }
}

// SAFETY: declares no write.
unsafe impl<T: Component, K: TickKind> ReadOnlyQuery for TickFilter<T, K> {}
impl<T: Component, K: TickKind> QueryFilter for TickFilter<T, K> {}
