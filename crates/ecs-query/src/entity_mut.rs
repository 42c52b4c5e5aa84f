//! [`EntityMut`] as a query element: a view of each matched row that reads and writes any of
//! its components (bevy's `Query<EntityMut>`), without moving it (no insert or remove).
//!
//! The element declares a write of *every* component ([`Access::add_write_all`]), so it
//! conflicts with any query or system that touches a component, unless `With` / `Without`
//! filters prove the two never meet the same archetype; a query that pairs it with any other
//! component element (`(EntityMut, RefRO<A>)`) panics when built, naming `A`. It matches every
//! archetype, like `Entity`, and narrows with filters: `Query<EntityMut, With<Unit>>`. Its
//! read-only view ([`QueryState::iter`](crate::QueryState) through `&World`) is
//! [`EntityRef`].
//!
//! Change detection is per component and per row: [`EntityMut::get_mut`] stamps the column's
//! chunk tick and the row's tick, as a `RefRW<T>` item does, and only for the `T` asked for,
//! so a system that looks at many components and writes one marks one. Like
//! [`EntityRef::get`], a view reads a component whatever its enable bit.
//!
//! The item is built from the chunk and row the run is at (no entity-table lookup); each
//! `get` / `get_mut` costs a registry lookup of `T` and a column lookup in the archetype.

use std::marker::PhantomData;
use std::ptr::NonNull;

use ecs_core::{
    Archetype, ArchetypeId, Chunk, Component, Components, Entity, EntityRef, Signature, Tick, World,
};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ExactQuery, WorldQuery, WriteKind};

/// One row's components, readable and writable (see the module docs).
///
/// # Invariants
/// 1. `row < chunk.len()` and `chunk` is one of `archetype`'s chunks, both `world`'s.
/// 2. For `'w`, the holder has exclusive access to every component value of this row that it
///    touches through the view (an `EntityMut` query declares a write of every component; a
///    [`FilteredEntityMut`](crate::FilteredEntityMut) wraps the view and touches only the
///    types it declared), each row is yielded once while alive, and `tick` is the running
///    query's change tick.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{EntityMut, QueryExt, With};
/// struct Unit;
/// let mut world = World::new();
/// let a = world.spawn((Unit, 3u32, 'x'));
/// let b = world.spawn((Unit, 'y'));
/// world.query_filtered::<EntityMut, With<Unit>>().for_each(|mut e| {
///     if let Some(n) = e.get_mut::<u32>() {
///         *n += 1;
///     }
///     if e.get::<char>() == Some(&'y') {
///         *e.get_mut::<char>().unwrap() = 'z';
///     }
/// });
/// assert_eq!(world.get::<u32>(a), Ok(&4));
/// assert_eq!(world.get::<char>(b), Ok(&'z'));
/// ```
pub struct EntityMut<'w> {
    world: &'w World,
    archetype: &'w Archetype,
    chunk: &'w Chunk,
    entity: Entity,
    row: usize,
    tick: Tick,
    /// A view is handed out once per row: not `Copy`, not `Clone`.
    _exclusive: PhantomData<&'w mut ()>,
}

impl<'w> EntityMut<'w> {
    /// The entity this view shows.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_query::{EntityMut, QueryExt};
    /// let mut world = World::new();
    /// let e = world.spawn((1u8,));
    /// let ids: Vec<Entity> = world.query::<EntityMut>().iter().map(|v| v.id()).collect();
    /// assert_eq!(ids, [e]);
    /// ```
    pub fn id(&self) -> Entity {
        self.entity
    }

    /// The entity's archetype.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{EntityMut, QueryExt};
    /// let mut world = World::new();
    /// world.spawn((1u8, 2u16));
    /// world.query::<EntityMut>().for_each(|v| assert_eq!(v.archetype().len(), 1));
    /// ```
    pub fn archetype(&self) -> &'w Archetype {
        self.archetype
    }

    /// Whether the entity has a `T`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{EntityMut, QueryExt};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.query::<EntityMut>().for_each(|v| assert!(v.has::<u32>() && !v.has::<u8>()));
    /// ```
    pub fn has<T: Component>(&self) -> bool {
        self.column::<T>().is_some()
    }

    /// The entity's `T`, if it has one.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{EntityMut, QueryExt};
    /// let mut world = World::new();
    /// world.spawn((String::from("name"),));
    /// world.query::<EntityMut>().for_each(|v| {
    ///     assert_eq!(v.get::<String>().map(String::as_str), Some("name"));
    ///     assert_eq!(v.get::<u32>(), None);
    /// });
    /// ```
    pub fn get<T: Component>(&self) -> Option<&T> {
        let col = self.column::<T>()?;
        // SAFETY: `col` is `T`'s column of the chunk's archetype and `row < len` (invariant 1);
        // `&self` keeps `get_mut` out for the reference's life (invariant 2 makes the row ours).
        Some(unsafe { self.cell::<T>(col).as_ref() })
    }

    /// The entity's `T` for writing, if it has one; marks that component of this row changed
    /// (chunk tick and row tick), as a `RefRW<T>` item does.
    ///
    /// # Panics
    /// If `T` is immutable (`ChildOf`, `Children`, other relationships): `insert` instead.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{Changed, EntityMut, QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((1u32, 1u8));
    /// world.advance_tick();
    /// let since = world.change_tick();
    /// world.query::<EntityMut>().for_each(|mut v| *v.get_mut::<u32>().unwrap() += 1);
    /// // Only the component written is marked.
    /// let window = ecs_core::ChangeWindow::new(world.change_tick(), since);
    /// let chunk = &world.archetypes().iter().find(|a| a.len() == 1).unwrap().chunks()[0];
    /// let (c32, c8) = (world.component_id::<u32>().unwrap(), world.component_id::<u8>().unwrap());
    /// let arch = world.archetypes().iter().find(|a| a.len() == 1).unwrap();
    /// assert!(chunk.changed_since(arch.column(c32).unwrap(), window));
    /// assert!(!chunk.changed_since(arch.column(c8).unwrap(), window));
    /// ```
    pub fn get_mut<T: Component>(&mut self) -> Option<&mut T> {
        let col = self.writable_column::<T>()?;
        // SAFETY: as in `into_mut`; `&mut self` makes this the only reference for its life.
        Some(unsafe { self.mark_and_cell::<T>(col).as_mut() })
    }

    /// [`EntityMut::get_mut`] for the whole life of the view, consuming it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{EntityMut, QueryExt};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let values: Vec<&mut u32> =
    ///     world.query::<EntityMut>().iter().filter_map(|v| v.into_mut::<u32>()).collect();
    /// for v in values {
    ///     *v = 9;
    /// }
    /// assert_eq!(world.get::<u32>(e), Ok(&9));
    /// ```
    pub fn into_mut<T: Component>(self) -> Option<&'w mut T> {
        let col = self.writable_column::<T>()?;
        // SAFETY: `col` is `T`'s column and `row < len` (invariant 1); the row is exclusively
        // ours for `'w` (invariant 2) and consuming the view ends every other borrow of it.
        Some(unsafe { self.mark_and_cell::<T>(col).as_mut() })
    }

    /// A read-only view of the same entity (one entity-table lookup).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{EntityMut, QueryExt};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.query::<EntityMut>().for_each(|v| assert_eq!(v.as_readonly().get::<u32>(), Some(&1)));
    /// ```
    pub fn as_readonly(&self) -> EntityRef<'_> {
        self.world
            .entity(self.entity)
            .expect("a row's entity is live")
    }

    /// `T`'s column in the archetype, if it has one; panics if `T` is immutable.
    #[track_caller]
    fn writable_column<T: Component>(&self) -> Option<usize> {
        let id = self.world.components().id::<T>()?;
        crate::element::refuse_immutable(self.world.components(), id);
        self.archetype.column(id)
    }

    /// `T`'s column in the archetype, if it has one.
    fn column<T: Component>(&self) -> Option<usize> {
        let id = self.world.components().id::<T>()?;
        self.archetype.column(id)
    }

    /// The address of this row's value in column `col`.
    ///
    /// # Safety
    /// `col` is a column of the archetype holding `T`s.
    unsafe fn cell<T>(&self, col: usize) -> NonNull<T> {
        let base = self.chunk.column_at(self.archetype.layout().offset(col));
        // SAFETY: the column's base lies in the chunk's block and `row < len` (invariant 1), so
        // `row` values on is still inside the column; the block pointer is not null.
        unsafe { NonNull::new_unchecked(base.cast::<T>().add(self.row)) }
    }

    /// Stamps this row of column `col` written at the query's tick; returns its address.
    ///
    /// # Safety
    /// As [`EntityMut::cell`].
    unsafe fn mark_and_cell<T>(&self, col: usize) -> NonNull<T> {
        // SAFETY: the row is ours to write (invariant 2), `col` is a column of this chunk and
        // `tick` is the query's tick; the chunk column is stamped before the row.
        unsafe {
            self.chunk.mark_changed_unchecked(col, self.tick);
            self.chunk.mark_row_unchecked(col, self.row, self.tick);
            self.cell(col)
        }
    }
}

/// The per-chunk fetch of [`EntityMut`]: the chunk, its entity column and, once fetched
/// through [`WorldQuery::fetch_in`], the world and the chunk's archetype.
///
/// # Invariants
/// `world` is `Some` for every fetch an item is made from (every engine run fetches with
/// `fetch_in`); every pointer is into data borrowed for the run.
#[derive(Clone, Copy)]
pub struct EntityMutFetch {
    chunk: NonNull<Chunk>,
    entities: NonNull<Entity>,
    world: Option<(NonNull<World>, NonNull<Archetype>)>,
    tick: Tick,
}

impl EntityMutFetch {
    fn new(chunk: &Chunk, tick: Tick, in_world: Option<(&World, ArchetypeId)>) -> Self {
        Self {
            chunk: NonNull::from(chunk),
            entities: NonNull::from(chunk.entities()).cast(),
            world: in_world.map(|(world, id)| {
                let archetype = &world.archetypes()[id.index()];
                (NonNull::from(world), NonNull::from(archetype))
            }),
            tick,
        }
    }

    /// The view of row `row`.
    ///
    /// # Safety
    /// `row` is a live row of the chunk, yielded once while its view lives, and everything the
    /// fetch points to outlives `'w`.
    unsafe fn view<'w>(&self, row: usize) -> EntityMut<'w> {
        let (world, archetype) = self
            .world
            .expect("an EntityMut element fetched without its world (use WorldQuery::fetch_in)");
        // SAFETY: the pointers come from references the run keeps alive for `'w`; `row` is an
        // initialised entity of the chunk (caller contract).
        unsafe {
            EntityMut {
                world: world.as_ref(),
                archetype: archetype.as_ref(),
                chunk: self.chunk.as_ref(),
                entity: self.entities.add(row).read(),
                row,
                tick: self.tick,
                _exclusive: PhantomData,
            }
        }
    }
}

/// The [`EntityMut`] column of one chunk in chunk-slice iteration
/// ([`ChunkView::columns`](crate::ChunkView::columns)): a view per row.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{EntityMut, QueryExt};
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// world.query::<EntityMut>().for_each_chunk(|mut view| {
///     let mut rows = view.columns();
///     assert_eq!(rows.len(), 1);
///     *rows.get_mut(0).unwrap().get_mut::<u32>().unwrap() = 5;
///     rows.iter_mut().for_each(|mut v| *v.get_mut::<u32>().unwrap() += 1);
/// });
/// assert_eq!(world.get::<u32>(e), Ok(&6));
/// ```
pub struct EntityMuts<'w> {
    fetch: EntityMutFetch,
    len: usize,
    _rows: PhantomData<&'w mut ()>,
}

impl EntityMuts<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the chunk has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The view of row `row`, borrowed from the column.
    pub fn get_mut(&mut self, row: usize) -> Option<EntityMut<'_>> {
        // SAFETY: `row < len`, a live row; `&mut self` keeps every other view of the chunk
        // out while this one lives; the fetch's data outlives `'w`, which outlives `'_`.
        (row < self.len).then(|| unsafe { self.fetch.view(row) })
    }

    /// The views of every row, in row order.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = EntityMut<'_>> + '_ {
        let fetch = self.fetch;
        // SAFETY: each row once, all live; `&mut self` is held by the iterator.
        (0..self.len).map(move |row| unsafe { fetch.view(row) })
    }
}

// SAFETY: declares a write of every component (`add_write_all`), and items only touch the
// component values of their own row (`EntityMut::get` / `get_mut`), stamping the column and row
// they write; it matches every archetype and its fetch reads only the entity column's rows
// `0..len`; `ReadOnly` is `EntityRef`, which reads the same rows with the same state and cache.
unsafe impl<'a> WorldQuery for EntityMut<'a> {
    type Item<'w> = EntityMut<'w>;
    type Slice<'w> = EntityMuts<'w>;
    type Fetch = EntityMutFetch;
    type ArchetypeFetch = ArchetypeId;
    type Kind = WriteKind;
    type ReadOnly = EntityRef<'a>;
    type State = ();

    fn init_state(_: &mut Components) {}

    fn update_access(
        _: &(),
        access: &mut Access,
        components: &Components,
    ) -> Result<(), AccessConflict> {
        access.add_write_all(components)
    }

    fn matches(_: &(), _: &Signature) -> bool {
        true
    }

    fn archetype_fetch(_: &(), archetype: &Archetype) -> ArchetypeId {
        archetype.id()
    }

    #[inline]
    unsafe fn fetch(_: &ArchetypeId, chunk: &Chunk, tick: Tick) -> EntityMutFetch {
        EntityMutFetch::new(chunk, tick, None)
    }

    #[inline]
    unsafe fn fetch_in(
        archetype: &ArchetypeId,
        chunk: &Chunk,
        tick: Tick,
        world: &World,
    ) -> EntityMutFetch {
        EntityMutFetch::new(chunk, tick, Some((world, *archetype)))
    }

    #[inline]
    unsafe fn item<'w>(fetch: &mut EntityMutFetch, row: usize) -> EntityMut<'w> {
        // SAFETY: `row < len`, yielded once while alive, data alive for `'w` (caller contract).
        unsafe { fetch.view(row) }
    }

    #[inline]
    unsafe fn slice<'w>(fetch: &EntityMutFetch, len: usize) -> EntityMuts<'w> {
        EntityMuts {
            fetch: *fetch,
            len,
            _rows: PhantomData,
        }
    }

    #[inline]
    unsafe fn unslice(slice: EntityMuts<'_>) -> EntityMutFetch {
        slice.fetch
    }
}

impl ExactQuery for EntityMut<'_> {}

#[cfg(test)]
mod tests {
    use ecs_core::World;

    use crate::{EntityMut, FilteredEntityMut, QueryExt, RefRO};

    /// Views of many rows alive at once, each holding `&mut` into its own row of shared
    /// columns, while others read their rows: what Miri checks for aliasing. Several chunks.
    #[test]
    fn views_of_different_rows_never_alias() {
        let mut world = World::with_test_chunk_size(256);
        for i in 0..40u32 {
            world.spawn((i, i as u64));
        }
        let mut views: Vec<EntityMut<'_>> = Vec::new();
        let query = world.query::<EntityMut>();
        let mut held: Vec<&mut u32> = Vec::new();
        for (k, view) in query.iter().enumerate() {
            if k % 2 == 0 {
                held.push(view.into_mut::<u32>().unwrap());
            } else {
                views.push(view);
            }
        }
        for v in &mut views {
            let wide = *v.get::<u64>().unwrap();
            *v.get_mut::<u32>().unwrap() += wide as u32;
        }
        for h in &mut held {
            **h += 1000;
        }
        drop((views, held));
        let mut values: Vec<u32> = world.query::<RefRO<u32>>().iter().copied().collect();
        values.sort_unstable();
        assert_eq!(values.iter().filter(|&&v| v >= 1000).count(), 20);
        assert!(values.iter().filter(|&&v| v < 1000).all(|v| v % 2 == 0));
    }

    #[test]
    fn chunk_slices_and_filtered_views_write_their_rows() {
        let mut world = World::with_test_chunk_size(256);
        for i in 0..30u32 {
            world.spawn((i, 'x'));
        }
        world.query::<EntityMut>().for_each_chunk(|mut chunk| {
            let mut col = chunk.columns();
            let mut rows: Vec<EntityMut<'_>> = col.iter_mut().collect();
            for r in rows.iter_mut().rev() {
                *r.get_mut::<u32>().unwrap() *= 2;
            }
        });
        world
            .query::<FilteredEntityMut<(char,)>>()
            .for_each(|mut v| *v.get_mut::<char>().unwrap() = 'y');
        let sum: u32 = world.query::<RefRO<u32>>().iter().sum();
        assert_eq!(sum, 2 * (0..30).sum::<u32>());
        assert!(world.query::<RefRO<char>>().iter().all(|&c| c == 'y'));
    }
}
