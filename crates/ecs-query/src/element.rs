//! The column elements of a query: [`RefRO`] / `&T` (one element under two names),
//! [`RefRW`] / `&mut T`, and [`Entity`], with [`ArchetypeColumn`], where a column sits in an
//! archetype's chunks.

use std::any::type_name;
use std::marker::PhantomData;
use std::ptr::NonNull;

use ecs_core::{Archetype, Chunk, Component, ComponentId, Components, Entity, Signature, Tick};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ExactQuery, ReadKind, ReadOnlyQuery, WorldQuery, WriteKind};
use crate::rows::{slot_and, slot_has, slot_rows, Rows, NO_SLOT};

/// Read access to a `T`; yields `&T`.
///
/// `RefRO<T>` and `&T` are one element under two names: both expand from one macro body
/// (`read_element!`), with the same item, access (a read of `T`), matching and cost, and either
/// may appear where the other does. `RefRO` reads like `RefRW` in a query that mixes the two;
/// `&T` reads like bevy's and hecs's queries.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// world.spawn((5u32,));
/// let a: u32 = world.query::<RefRO<u32>>().iter().copied().sum();
/// let b: u32 = world.query::<&u32>().iter().copied().sum();
/// assert_eq!(a, b);
/// ```
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// let e = world.spawn((5u32,));
/// let n: &u32 = world.query::<RefRO<u32>>().get(e).unwrap();
/// assert_eq!(*n, 5);
/// ```
pub struct RefRO<T>(PhantomData<fn() -> T>);

/// Write access to a `T`; yields `&mut T` and stamps the chunk column as changed.
///
/// `RefRW<T>` and `&mut T` are one element under two names (`write_element!`), as
/// [`RefRO<T>`] and `&T` are.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRW};
/// let mut world = World::new();
/// let e = world.spawn((5u32,));
/// let n: &mut u32 = world.query::<RefRW<u32>>().get(e).unwrap();
/// *n = 6;
/// assert_eq!(world.get::<u32>(e), Ok(&6));
/// ```
pub struct RefRW<T>(PhantomData<fn() -> T>);

/// Where one component's column sits in the chunks of one archetype: what [`RefRO`] and
/// [`RefRW`] cache per matched archetype.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{__private::ArchetypeColumn, RefRO, WorldQuery};
/// let mut world = World::new();
/// let e = world.spawn(('a', 7u32));
/// let id = world.register_component::<u32>(); // `RefRO<u32>`'s state
/// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
/// let column = ArchetypeColumn::find(arch, id).unwrap();
/// assert_eq!(column.index(), arch.column(id).unwrap());
/// assert_eq!(column.offset(), arch.layout().offset(column.index()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchetypeColumn {
    index: u32,
    offset: u32,
    /// The column's enable slot, or `NO_SLOT` if its type is not enableable.
    enable: u32,
}

impl ArchetypeColumn {
    /// The column of component `id` in `archetype`, if it has one.
    #[inline]
    pub fn find(archetype: &Archetype, id: ComponentId) -> Option<Self> {
        let index = archetype.column(id)?;
        // Chunks are at most 1 MiB and columns at most a few thousand: both fit in `u32`.
        Some(Self {
            index: index as u32,
            offset: archetype.layout().offset(index) as u32,
            enable: archetype.enable_slot(index).map_or(NO_SLOT, |s| s as u32),
        })
    }

    /// The column's index in its archetype (as [`Archetype::column`] gives it).
    #[inline]
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// The column's byte offset in each of the archetype's chunks.
    #[inline]
    pub fn offset(self) -> usize {
        self.offset as usize
    }

    /// The column's base pointer in `chunk`.
    ///
    /// # Safety
    /// `chunk` belongs to the archetype this column was found in.
    #[inline(always)]
    unsafe fn base<T>(self, chunk: &Chunk) -> NonNull<T> {
        // SAFETY: a layout offset of the chunk's archetype lands inside the chunk's non-null
        // block (caller contract), so the address is not null.
        unsafe { NonNull::new_unchecked(chunk.column_at(self.offset()).cast()) }
    }
}

/// Panics if component `id` is immutable: a query may not write it in place.
#[track_caller]
pub(crate) fn refuse_immutable(components: &Components, id: ComponentId) {
    let info = components.info(id);
    assert!(
        !info.is_immutable(),
        "`{}` is immutable (a relationship or its target list, or marked with \
         `ComponentHooks::immutable`): a query cannot write it in place; `insert` a new value \
         instead, which runs its hooks",
        info.name()
    );
}

/// Whether `T` is neither zero-sized nor a power of two wide (see `WorldQuery::ODD_WIDTH`).
const fn odd_width<T>() -> bool {
    size_of::<T>() != 0 && !size_of::<T>().is_power_of_two()
}

/// The column of `T` in an archetype a query matched.
///
/// # Panics
/// If the archetype has no `T` (the query's `matches` was not checked).
#[inline]
fn required_column<T>(archetype: &Archetype, id: ComponentId) -> ArchetypeColumn {
    ArchetypeColumn::find(archetype, id).unwrap_or_else(|| {
        panic!(
            "archetype {:?} has no `{}` column: it does not match the query",
            archetype.id(),
            type_name::<T>()
        )
    })
}

/// The `WorldQuery` items a reader and a writer of one required column `T` share: registering
/// `T`, requiring it in the archetype, finding its column, and keeping the rows whose enable
/// bit is set (a disabled `T` counts as absent).
macro_rules! column_element_items {
    ($T:ident) => {
        const ODD_WIDTH: bool = odd_width::<$T>();

        fn init_state(components: &mut Components) -> ComponentId {
            components.register::<$T>()
        }

        fn update_masks(id: &ComponentId, required: &mut Signature, _: &mut Signature) {
            required.insert(*id);
        }

        fn matches(id: &ComponentId, signature: &Signature) -> bool {
            signature.contains(*id)
        }

        fn archetype_fetch(id: &ComponentId, arch: &Archetype) -> ArchetypeColumn {
            required_column::<$T>(arch, *id)
        }

        #[inline(always)]
        fn enabled_rows(column: &ArchetypeColumn, chunk: &Chunk) -> Rows {
            slot_rows(column.enable, chunk, true)
        }

        #[inline]
        fn and_rows(column: &ArchetypeColumn, chunk: &Chunk, words: &mut [u64]) {
            slot_and(column.enable, chunk, words, true);
        }

        #[inline(always)]
        fn row_enabled(column: &ArchetypeColumn, chunk: &Chunk, row: usize) -> bool {
            slot_has(column.enable, chunk, row, true)
        }
    };
}

macro_rules! read_element {
    ($ty:ty, $T:ident) => {
        // SAFETY: reads column `T` only, declared as a read; matches only archetypes with `T`.
        unsafe impl<$T: Component> WorldQuery for $ty {
            type Item<'w> = &'w $T;
            type Slice<'w> = &'w [$T];
            type Fetch = NonNull<$T>;
            type ArchetypeFetch = ArchetypeColumn;
            type Kind = ReadKind;
            type ReadOnly = Self;
            type State = ComponentId;

            column_element_items!($T);

            fn update_access(
                id: &ComponentId,
                access: &mut Access,
                c: &Components,
            ) -> Result<(), AccessConflict> {
                access.add_read(*id, c)
            }

            #[inline(always)]
            unsafe fn fetch(column: &ArchetypeColumn, chunk: &Chunk, _: Tick) -> NonNull<$T> {
                // SAFETY: the column was found in the chunk's archetype (caller contract).
                unsafe { column.base(chunk) }
            }

            #[inline(always)]
            unsafe fn item<'w>(fetch: &mut NonNull<$T>, row: usize) -> &'w $T {
                // SAFETY: `row < len`, so the value is initialised (caller contract).
                unsafe { fetch.add(row).as_ref() }
            }

            #[inline(always)]
            unsafe fn slice<'w>(fetch: &NonNull<$T>, len: usize) -> &'w [$T] {
                // SAFETY: rows `0..len` are initialised and only read (caller contract).
                unsafe { std::slice::from_raw_parts(fetch.as_ptr(), len) }
            }

            #[inline(always)]
            unsafe fn unslice(slice: &[$T]) -> NonNull<$T> {
                NonNull::from(slice).cast()
            }

            #[inline(always)]
            unsafe fn advance(fetch: &NonNull<$T>, rows: usize) -> Option<NonNull<$T>> {
                // SAFETY: the chunk holds at least `rows` rows (caller contract), so the
                // column's base plus `rows` stays within (or one past) its array.
                Some(unsafe { fetch.add(rows) })
            }
        }

        // SAFETY: `update_access` records a read only.
        unsafe impl<$T: Component> ReadOnlyQuery for $ty {}
        impl<$T: Component> ExactQuery for $ty {}
    };
}

macro_rules! write_element {
    ($ty:ty, $T:ident) => {
        // SAFETY: writes column `T` only, declared as a write; matches only archetypes with `T`.
        unsafe impl<$T: Component> WorldQuery for $ty {
            type Item<'w> = &'w mut $T;
            type Slice<'w> = &'w mut [$T];
            type Fetch = NonNull<$T>;
            type ArchetypeFetch = ArchetypeColumn;
            type Kind = WriteKind;
            type ReadOnly = RefRO<$T>;
            type State = ComponentId;

            column_element_items!($T);

            fn update_access(
                id: &ComponentId,
                access: &mut Access,
                c: &Components,
            ) -> Result<(), AccessConflict> {
                refuse_immutable(c, *id);
                access.add_write(*id, c)
            }

            #[inline(always)]
            unsafe fn fetch(column: &ArchetypeColumn, chunk: &Chunk, tick: Tick) -> NonNull<$T> {
                // SAFETY: the caller holds the write of `T`'s column this element declared,
                // `tick` is the running query's tick, and the column was found in the chunk's
                // archetype (caller contract).
                unsafe { chunk.mark_changed_unchecked(column.index(), tick) };
                // SAFETY: the column was found in the chunk's archetype (caller contract).
                unsafe { column.base(chunk) }
            }

            #[inline(always)]
            unsafe fn mark_rows(
                column: &ArchetypeColumn,
                chunk: &Chunk,
                rows: std::ops::Range<usize>,
                tick: Tick,
            ) {
                // SAFETY: the caller holds the write of these rows of `T`'s column that this
                // element declared, `rows` is within the chunk, and `tick` is the running
                // query's tick (caller contract).
                unsafe { chunk.mark_rows_unchecked(column.index(), rows, tick) }
            }

            #[inline(always)]
            fn keeps_row_ticks(column: &ArchetypeColumn, chunk: &Chunk) -> bool {
                chunk.keeps_change_ticks(column.index())
            }

            #[inline(always)]
            unsafe fn mark_row(column: &ArchetypeColumn, chunk: &Chunk, row: usize, tick: Tick) {
                // SAFETY: the caller holds the write of `row` of this column (`mark_row`'s
                // contract is `mark_row_unchecked`'s), and `fetch` stamped the column with `tick`.
                unsafe { chunk.mark_row_unchecked(column.index(), row, tick) }
            }

            #[inline(always)]
            unsafe fn item<'w>(fetch: &mut NonNull<$T>, row: usize) -> &'w mut $T {
                // SAFETY: `row < len` and this row is yielded once while alive (caller contract).
                unsafe { fetch.add(row).as_mut() }
            }

            #[inline(always)]
            unsafe fn slice<'w>(fetch: &NonNull<$T>, len: usize) -> &'w mut [$T] {
                // SAFETY: rows `0..len` are initialised and exclusively ours (caller contract).
                unsafe { std::slice::from_raw_parts_mut(fetch.as_ptr(), len) }
            }

            #[inline(always)]
            unsafe fn unslice(slice: &mut [$T]) -> NonNull<$T> {
                NonNull::from(slice).cast()
            }

            #[inline(always)]
            unsafe fn advance(fetch: &NonNull<$T>, rows: usize) -> Option<NonNull<$T>> {
                // SAFETY: as the read element's: within (or one past) the column's array.
                Some(unsafe { fetch.add(rows) })
            }
        }

        impl<$T: Component> ExactQuery for $ty {}
    };
}

read_element!(RefRO<T>, T);
read_element!(&T, T);
write_element!(RefRW<T>, T);
write_element!(&mut T, T);

// SAFETY: reads only the entity column, which every archetype has; declares no component.
unsafe impl WorldQuery for Entity {
    type Item<'w> = Entity;
    type Slice<'w> = &'w [Entity];
    type Fetch = NonNull<Entity>;
    type ArchetypeFetch = ();
    type Kind = ReadKind;
    type ReadOnly = Self;
    type State = ();

    fn init_state(_: &mut Components) {}

    fn update_access(_: &(), _: &mut Access, _: &Components) -> Result<(), AccessConflict> {
        Ok(())
    }

    fn matches(_: &(), _: &Signature) -> bool {
        true
    }

    fn archetype_fetch(_: &(), _: &Archetype) {}

    #[inline(always)]
    unsafe fn fetch(_: &(), chunk: &Chunk, _: Tick) -> NonNull<Entity> {
        NonNull::from(chunk.entities()).cast()
    }

    #[inline(always)]
    unsafe fn item<'w>(fetch: &mut NonNull<Entity>, row: usize) -> Self::Item<'w> {
        // SAFETY: `row < len`: an initialised entity id.
        unsafe { fetch.add(row).read() }
    }

    #[inline(always)]
    unsafe fn slice<'w>(fetch: &NonNull<Entity>, len: usize) -> Self::Slice<'w> {
        // SAFETY: rows `0..len` are initialised; the entity column is never written while a
        // query runs (that needs `&mut World`).
        unsafe { std::slice::from_raw_parts(fetch.as_ptr(), len) }
    }

    #[inline(always)]
    unsafe fn unslice(slice: &[Entity]) -> NonNull<Entity> {
        NonNull::from(slice).cast()
    }

    #[inline(always)]
    unsafe fn advance(fetch: &NonNull<Entity>, rows: usize) -> Option<NonNull<Entity>> {
        // SAFETY: the chunk holds at least `rows` ids (caller contract).
        Some(unsafe { fetch.add(rows) })
    }
}

// SAFETY: declares no write.
unsafe impl ReadOnlyQuery for Entity {}
impl ExactQuery for Entity {}
