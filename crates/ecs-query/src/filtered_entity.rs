//! Filtered entity views: [`FilteredEntityRef<L>`] and [`FilteredEntityMut<L>`], an
//! [`EntityRef`] / [`EntityMut`] that may touch only the component types listed in `L` (a
//! tuple: `FilteredEntityMut<(Hp, Armor)>`), and declares only those.
//!
//! Where `EntityMut` declares a write of every component, and so runs beside nothing that
//! touches one, `FilteredEntityMut<(Hp,)>` declares a write of `Hp` alone: it runs beside a
//! system reading `Name`, and the scheduler orders it only against what touches `Hp`. Like
//! the full views it matches every archetype (narrow it with filters) and a listed type the
//! row lacks reads as `None`; a type that is not listed reads as `None` too, whatever the row
//! holds, since the access did not declare it.
//!
//! The views wrap the full ones and check `T` against the list (one `TypeId` comparison per
//! listed type) before forwarding; the fetches are the full views' own.

use std::any::TypeId;
use std::marker::PhantomData;

use ecs_core::{
    Archetype, ArchetypeId, Chunk, Component, ComponentId, Components, Entity, EntityRef,
    Signature, Tick, World,
};

use crate::access::{Access, AccessConflict};
use crate::entity_mut::{EntityMut, EntityMutFetch, EntityMuts};
use crate::entity_view::{EntityRefFetch, EntityRefs};
use crate::fetch::{ExactQuery, ReadKind, ReadOnlyQuery, WorldQuery, WriteKind};

/// A list of component types (a tuple of up to 12), the set a filtered view may touch.
///
/// ```
/// # use std::any::TypeId;
/// # use ecs_query::ComponentList;
/// assert!(<(u32, char)>::contains(TypeId::of::<char>()));
/// assert!(!<(u32, char)>::contains(TypeId::of::<u8>()));
/// ```
///
/// Sealed: the views trust `register` and `contains` to name the same types (a list that
/// declared one type and let another be written would let two systems race), so only the
/// tuple impls here exist.
pub trait ComponentList: sealed::Sealed + Send + Sync + 'static {
    /// Registers the listed types and returns their ids, in list order.
    fn register(components: &mut Components) -> Box<[ComponentId]>;

    /// Whether `type_id` is one of the listed types.
    fn contains(type_id: TypeId) -> bool;
}

mod sealed {
    /// Implemented only for the tuples that implement `ComponentList`.
    pub trait Sealed {}
}

macro_rules! component_list {
    ($($T:ident),+) => {
        impl<$($T: Component),+> sealed::Sealed for ($($T,)+) {}

        impl<$($T: Component),+> ComponentList for ($($T,)+) {
            fn register(components: &mut Components) -> Box<[ComponentId]> {
                Box::new([$(components.register::<$T>()),+])
            }

            #[inline]
            fn contains(type_id: TypeId) -> bool {
                false $(|| type_id == TypeId::of::<$T>())+
            }
        }
    };
}

component_list!(A);
component_list!(A, B);
component_list!(A, B, C);
component_list!(A, B, C, D);
component_list!(A, B, C, D, E);
component_list!(A, B, C, D, E, F);
component_list!(A, B, C, D, E, F, G);
component_list!(A, B, C, D, E, F, G, H);
component_list!(A, B, C, D, E, F, G, H, I);
component_list!(A, B, C, D, E, F, G, H, I, J);
component_list!(A, B, C, D, E, F, G, H, I, J, K);
component_list!(A, B, C, D, E, F, G, H, I, J, K, L);

/// Whether `T` is in `L`.
#[inline]
fn listed<L: ComponentList, T: Component>() -> bool {
    L::contains(TypeId::of::<T>())
}

/// A read-only view of one row limited to the types in `L` (see the module docs).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{FilteredEntityRef, QueryExt};
/// let mut world = World::new();
/// world.spawn((1u32, 'x'));
/// world.query::<FilteredEntityRef<(u32,)>>().for_each(|e| {
///     assert_eq!(e.get::<u32>(), Some(&1));
///     assert_eq!(e.get::<char>(), None); // held, but not listed
///     assert!(e.has::<char>()); // which types the row holds is no component read
/// });
/// ```
pub struct FilteredEntityRef<'w, L> {
    inner: EntityRef<'w>,
    _list: PhantomData<fn() -> L>,
}

impl<L> Clone for FilteredEntityRef<'_, L> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<L> Copy for FilteredEntityRef<'_, L> {}

impl<'w, L: ComponentList> FilteredEntityRef<'w, L> {
    fn new(inner: EntityRef<'w>) -> Self {
        Self {
            inner,
            _list: PhantomData,
        }
    }

    /// The entity this view shows.
    pub fn id(&self) -> Entity {
        self.inner.id()
    }

    /// Whether the entity has a `T` (listed or not: the archetype says, no value is read).
    pub fn has<T: Component>(&self) -> bool {
        self.inner.has::<T>()
    }

    /// The entity's `T`, if `T` is listed and the entity has one.
    pub fn get<T: Component>(&self) -> Option<&'w T> {
        if listed::<L, T>() {
            self.inner.get::<T>()
        } else {
            None
        }
    }
}

/// A view of one row that reads and writes only the types in `L` (see the module docs).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{FilteredEntityMut, QueryExt};
/// let mut world = World::new();
/// let e = world.spawn((1u32, 'x'));
/// world.query::<FilteredEntityMut<(u32,)>>().for_each(|mut v| {
///     *v.get_mut::<u32>().unwrap() += 1;
///     assert!(v.get_mut::<char>().is_none()); // not listed
/// });
/// assert_eq!(world.get::<u32>(e), Ok(&2));
/// ```
pub struct FilteredEntityMut<'w, L> {
    inner: EntityMut<'w>,
    _list: PhantomData<fn() -> L>,
}

impl<'w, L: ComponentList> FilteredEntityMut<'w, L> {
    fn new(inner: EntityMut<'w>) -> Self {
        Self {
            inner,
            _list: PhantomData,
        }
    }

    /// The entity this view shows.
    pub fn id(&self) -> Entity {
        self.inner.id()
    }

    /// Whether the entity has a `T` (listed or not).
    pub fn has<T: Component>(&self) -> bool {
        self.inner.has::<T>()
    }

    /// The entity's `T`, if `T` is listed and the entity has one.
    pub fn get<T: Component>(&self) -> Option<&T> {
        if listed::<L, T>() {
            self.inner.get::<T>()
        } else {
            None
        }
    }

    /// The entity's `T` for writing, if `T` is listed and the entity has one; marks it
    /// changed as [`EntityMut::get_mut`] does.
    pub fn get_mut<T: Component>(&mut self) -> Option<&mut T> {
        if listed::<L, T>() {
            self.inner.get_mut::<T>()
        } else {
            None
        }
    }

    /// [`FilteredEntityMut::get_mut`] for the whole life of the view, consuming it.
    pub fn into_mut<T: Component>(self) -> Option<&'w mut T> {
        if listed::<L, T>() {
            self.inner.into_mut::<T>()
        } else {
            None
        }
    }
}

/// Declares a read (or write) of each listed type; refuses one the access already holds.
fn declare(
    ids: &[ComponentId],
    access: &mut Access,
    components: &Components,
    write: bool,
) -> Result<(), AccessConflict> {
    ids.iter().try_for_each(|&id| {
        if write {
            crate::element::refuse_immutable(components, id);
            access.add_write(id, components)
        } else {
            access.add_read(id, components)
        }
    })
}

/// One chunk's [`FilteredEntityRef`] column in chunk-slice iteration.
pub struct FilteredEntityRefs<'w, L> {
    inner: EntityRefs<'w>,
    _list: PhantomData<fn() -> L>,
}

impl<'w, L: ComponentList> FilteredEntityRefs<'w, L> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the chunk has no rows.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The view of row `row`.
    pub fn get(&self, row: usize) -> Option<FilteredEntityRef<'w, L>> {
        self.inner.get(row).map(FilteredEntityRef::new)
    }
}

/// One chunk's [`FilteredEntityMut`] column in chunk-slice iteration.
pub struct FilteredEntityMuts<'w, L> {
    inner: EntityMuts<'w>,
    _list: PhantomData<fn() -> L>,
}

impl<L: ComponentList> FilteredEntityMuts<'_, L> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the chunk has no rows.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The view of row `row`, borrowed from the column.
    pub fn get_mut(&mut self, row: usize) -> Option<FilteredEntityMut<'_, L>> {
        self.inner.get_mut(row).map(FilteredEntityMut::new)
    }
}

/// The `WorldQuery` impl of a filtered view: state, access and matching of its own, every
/// fetch forwarded to the full view `$full` it wraps (same `Fetch`, same cache).
macro_rules! filtered_view_query {
    ($view:ident, $slice:ident, $full:ident, $fetch:ty, $kind:ty, $read_only:ty, write: $write:expr) => {
        // SAFETY: forwards every fetch to `$full`'s (which touches only rows `0..len` of the
        // chunk: its entity column, and the row's components through the views); items touch
        // only listed types, each declared by `update_access` (as a write where `$write`, a
        // read otherwise); matches every archetype; `ReadOnly` is the read-only view, with the
        // same state and cache.
        unsafe impl<'a, L: ComponentList> WorldQuery for $view<'a, L> {
            type Item<'w> = $view<'w, L>;
            type Slice<'w> = $slice<'w, L>;
            type Fetch = $fetch;
            type ArchetypeFetch = ArchetypeId;
            type Kind = $kind;
            type ReadOnly = $read_only;
            type State = Box<[ComponentId]>;

            fn init_state(components: &mut Components) -> Self::State {
                L::register(components)
            }

            fn update_access(
                ids: &Self::State,
                access: &mut Access,
                components: &Components,
            ) -> Result<(), AccessConflict> {
                declare(ids, access, components, $write)
            }

            fn matches(_: &Self::State, _: &Signature) -> bool {
                true
            }

            fn archetype_fetch(_: &Self::State, archetype: &Archetype) -> ArchetypeId {
                archetype.id()
            }

            #[inline]
            unsafe fn fetch(cached: &ArchetypeId, chunk: &Chunk, tick: Tick) -> $fetch {
                // SAFETY: the caller's contract, forwarded.
                unsafe { <$full<'a> as WorldQuery>::fetch(cached, chunk, tick) }
            }

            #[inline]
            unsafe fn fetch_in(
                cached: &ArchetypeId,
                chunk: &Chunk,
                tick: Tick,
                world: &World,
            ) -> $fetch {
                // SAFETY: the caller's contract, forwarded.
                unsafe { <$full<'a> as WorldQuery>::fetch_in(cached, chunk, tick, world) }
            }

            #[inline]
            unsafe fn item<'w>(fetch: &mut $fetch, row: usize) -> Self::Item<'w> {
                // SAFETY: the caller's contract, forwarded.
                $view::new(unsafe { <$full<'a> as WorldQuery>::item(fetch, row) })
            }

            #[inline]
            unsafe fn slice<'w>(fetch: &$fetch, len: usize) -> Self::Slice<'w> {
                $slice {
                    // SAFETY: the caller's contract, forwarded.
                    inner: unsafe { <$full<'a> as WorldQuery>::slice(fetch, len) },
                    _list: PhantomData,
                }
            }

            #[inline]
            unsafe fn unslice(slice: Self::Slice<'_>) -> $fetch {
                // SAFETY: the slice came from `slice` (caller contract), forwarded.
                unsafe { <$full<'a> as WorldQuery>::unslice(slice.inner) }
            }
        }

        impl<L: ComponentList> ExactQuery for $view<'_, L> {}
    };
}

filtered_view_query!(FilteredEntityRef, FilteredEntityRefs, EntityRef, EntityRefFetch, ReadKind, Self, write: false);
filtered_view_query!(
    FilteredEntityMut,
    FilteredEntityMuts,
    EntityMut,
    EntityMutFetch,
    WriteKind,
    FilteredEntityRef<'a, L>,
    write: true
);

// SAFETY: declares reads only (`write: false`), and items only read.
unsafe impl<L: ComponentList> ReadOnlyQuery for FilteredEntityRef<'_, L> {}
