//! The [`Added`] filter: rows that gained `T`, or were spawned with it, since the running
//! query state last ran.
//!
//! It reads the add ticks that `ecs_core` keeps per row for the types some `Added` reader asks
//! about (`RowMarks::ADDED`, switched on when the first such query state is built). A chunk
//! whose newest add is older than the window is skipped in O(1); in a chunk that passes, the
//! rows are tested 64 at a time. Writes never count: only spawning with `T`, inserting `T`
//! into an entity without it, and restoring a snapshot do. Moving a row (another component
//! added or removed, a swap-remove) carries its add tick along.
//!
//! Like `Changed`, it declares a filter read of `T`, so a schedule orders it against writers
//! of `T` (inserting `T` is a structural change, done through `&mut World` or commands).

use std::marker::PhantomData;

use ecs_core::{
    Archetype, ChangeWindow, Chunk, Component, ComponentId, Components, RowMarks, Signature, Tick,
};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ReadKind, ReadOnlyQuery, WorldQuery};
use crate::filter::{tick_column, unit_fetch, QueryFilter};

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
pub struct Added<T>(PhantomData<fn() -> T>);

// SAFETY: reads only row and chunk ticks, never column data, and writes nothing. It declares
// a (filter) read of `T` so that a schedule orders it against writers of `T`.
unsafe impl<T: Component> WorldQuery for Added<T> {
    unit_fetch!(|access, id, _c| {
        access.add_filter_read(*id);
    });
    /// The index of the `T` column, whose add ticks the filter reads.
    type ArchetypeFetch = usize;

    const CHUNK_FILTERED: bool = true;
    const ROW_FILTERED: bool = true;

    fn row_marks(id: &ComponentId, out: &mut Vec<(ComponentId, RowMarks)>) {
        out.push((*id, RowMarks::ADDED));
    }

    fn update_masks(id: &ComponentId, required: &mut Signature, _: &mut Signature) {
        required.insert(*id);
    }

    fn matches(id: &ComponentId, signature: &Signature) -> bool {
        signature.contains(*id)
    }

    fn archetype_fetch(id: &ComponentId, arch: &Archetype) -> usize {
        tick_column::<T>(arch, *id, "Added")
    }

    #[inline]
    fn chunk_matches(col: &usize, chunk: &Chunk, window: ChangeWindow) -> bool {
        chunk.added_since(*col, window)
    }

    #[inline]
    fn rows_all_match(col: &usize, chunk: &Chunk, _: ChangeWindow) -> bool {
        // Without add ticks the chunk test decided; with them, rows are tested.
        !chunk.keeps_add_marks(*col)
    }

    #[inline]
    fn row_matches(col: &usize, chunk: &Chunk, row: usize, window: ChangeWindow) -> bool {
        chunk.row_added_since(*col, row, window)
    }

    #[inline]
    fn and_row_marks(col: &usize, chunk: &Chunk, window: ChangeWindow, words: &mut [u64]) {
        chunk.and_added_rows(*col, window, words);
    }
}

// SAFETY: declares no write.
unsafe impl<T: Component> ReadOnlyQuery for Added<T> {}
impl<T: Component> QueryFilter for Added<T> {}
