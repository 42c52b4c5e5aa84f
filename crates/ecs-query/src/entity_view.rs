//! [`EntityRef`] as a query element: a read-only view of every component of each matched row.
//!
//! The element declares a read of *every* component ([`Access::add_read_all`]), so it
//! conflicts with any query or system that writes a component, unless `With` / `Without`
//! filters prove the two never meet the same archetype; a query that pairs it with a writer
//! (`(EntityRef, RefRW<A>)`) panics when built, naming `A`. It matches every archetype, like
//! `Entity`, and narrows with filters: `Query<EntityRef, With<Unit>>`.
//!
//! Each item is [`World::entity`] of the row's entity (one entity-table lookup per row); its
//! `get::<T>()` then reads like any `EntityRef`. The fetch keeps the chunk's entity column and
//! the world, both borrowed for the run ([`WorldQuery::fetch_in`]).

use std::ptr::NonNull;

use ecs_core::{
    Archetype, ArchetypeId, Chunk, Components, Entity, EntityRef, Signature, Tick, World,
};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ExactQuery, ReadKind, ReadOnlyQuery, WorldQuery};

/// The per-chunk fetch of [`EntityRef`]: the chunk's entity column and, once fetched through
/// [`WorldQuery::fetch_in`], the world that owns the chunk.
///
/// # Invariants
/// `world` is `Some` for every fetch an item is made from (every engine run fetches with
/// `fetch_in`); it and `entities` point into data borrowed for the run.
#[derive(Clone, Copy)]
pub struct EntityRefFetch {
    entities: NonNull<Entity>,
    world: Option<NonNull<World>>,
}

/// The [`EntityRef`] column of one chunk in chunk-slice iteration
/// ([`ChunkView::columns`](crate::ChunkView::columns)): a view per row.
///
/// ```
/// # use ecs_core::{EntityRef, World};
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// world.spawn((1u32,));
/// world.query::<(EntityRef, RefRO<u32>)>().for_each_chunk(|mut view| {
///     let (rows, values) = view.columns();
///     assert_eq!((rows.len(), values.len()), (1, 1));
///     assert_eq!(rows.get(0).and_then(|e| e.get::<u32>()), Some(&values[0]));
///     assert_eq!(rows.iter().count(), 1);
/// });
/// ```
#[derive(Clone, Copy)]
pub struct EntityRefs<'w> {
    entities: &'w [Entity],
    world: &'w World,
}

impl<'w> EntityRefs<'w> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    /// Whether the chunk has no rows.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The view of row `row`.
    pub fn get(&self, row: usize) -> Option<EntityRef<'w>> {
        let entity = *self.entities.get(row)?;
        self.world.entity(entity).ok()
    }

    /// The views of every row, in row order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = EntityRef<'w>> + 'w {
        let world = self.world;
        self.entities
            .iter()
            .map(move |&e| world.entity(e).expect("a row's entity is live"))
    }
}

/// Every component of each row, read-only (see the module docs).
///
/// ```
/// # use ecs_core::{EntityRef, World};
/// # use ecs_query::{QueryExt, With};
/// struct Unit;
/// let mut world = World::new();
/// world.spawn((Unit, 3u32));
/// world.spawn((Unit, 'x'));
/// world.spawn((2.0f32,));
/// let mut summary: Vec<(bool, bool)> = world
///     .query_filtered::<EntityRef, With<Unit>>()
///     .iter()
///     .map(|e| (e.has::<u32>(), e.get::<char>().is_some()))
///     .collect();
/// summary.sort();
/// assert_eq!(summary, [(false, true), (true, false)]);
/// ```
// SAFETY: declares a read of every component (`add_read_all`), and the items only read
// components (`World::entity` / `EntityRef::get`); it matches every archetype and its fetch
// touches only the entity column's rows `0..len`; it marks nothing and has no enable or tick
// rows of its own.
unsafe impl<'a> WorldQuery for EntityRef<'a> {
    type Item<'w> = EntityRef<'w>;
    type Slice<'w> = EntityRefs<'w>;
    type Fetch = EntityRefFetch;
    /// The archetype's id: unused here, but [`EntityMut`](crate::EntityMut), whose read-only
    /// view this is, needs it and shares the cache.
    type ArchetypeFetch = ArchetypeId;
    type Kind = ReadKind;
    type ReadOnly = Self;
    type State = ();

    fn init_state(_: &mut Components) {}

    fn update_access(
        _: &(),
        access: &mut Access,
        components: &Components,
    ) -> Result<(), AccessConflict> {
        access.add_read_all(components)
    }

    fn matches(_: &(), _: &Signature) -> bool {
        true
    }

    fn archetype_fetch(_: &(), archetype: &Archetype) -> ArchetypeId {
        archetype.id()
    }

    #[inline]
    unsafe fn fetch(_: &ArchetypeId, chunk: &Chunk, _: Tick) -> EntityRefFetch {
        EntityRefFetch {
            entities: NonNull::from(chunk.entities()).cast(),
            world: None,
        }
    }

    #[inline]
    unsafe fn fetch_in(_: &ArchetypeId, chunk: &Chunk, _: Tick, world: &World) -> EntityRefFetch {
        EntityRefFetch {
            entities: NonNull::from(chunk.entities()).cast(),
            world: Some(NonNull::from(world)),
        }
    }

    #[inline]
    unsafe fn item<'w>(fetch: &mut EntityRefFetch, row: usize) -> EntityRef<'w> {
        // SAFETY: `row < len`, an initialised entity id of a live row (the caller's contract);
        // the world outlives `'w` (`fetch_in`'s contract).
        let (entity, world) = unsafe { (fetch.entities.add(row).read(), world_of(fetch)) };
        world.entity(entity).expect("a row's entity is live")
    }

    #[inline]
    unsafe fn slice<'w>(fetch: &EntityRefFetch, len: usize) -> EntityRefs<'w> {
        // SAFETY: rows `0..len` of the entity column are initialised and never written while a
        // query runs (that needs `&mut World`); the world outlives `'w` (`fetch_in`).
        unsafe {
            EntityRefs {
                entities: std::slice::from_raw_parts(fetch.entities.as_ptr(), len),
                world: world_of(fetch),
            }
        }
    }

    #[inline]
    unsafe fn unslice(slice: EntityRefs<'_>) -> EntityRefFetch {
        EntityRefFetch {
            entities: NonNull::from(slice.entities).cast(),
            world: Some(NonNull::from(slice.world)),
        }
    }
}

/// The world of a fetch made by `fetch_in`.
///
/// # Safety
/// The world `fetch` was made with outlives `'w`.
#[inline]
unsafe fn world_of<'w>(fetch: &EntityRefFetch) -> &'w World {
    let world = fetch
        .world
        .expect("an EntityRef element fetched without its world (use WorldQuery::fetch_in)");
    // SAFETY: `fetch_in` stored a reference the caller keeps alive for `'w`.
    unsafe { world.as_ref() }
}

// SAFETY: declares no write.
unsafe impl ReadOnlyQuery for EntityRef<'_> {}
impl ExactQuery for EntityRef<'_> {}
