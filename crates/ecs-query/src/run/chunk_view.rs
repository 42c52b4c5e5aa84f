//! The per-chunk [`ChunkView`] that `for_each_chunk` hands out: a chunk's entity slice and
//! the query's column slices, with the rows that pass when not all do.

use std::any::{type_name, TypeId};
use std::marker::PhantomData;

use ecs_core::{Archetype, Chunk, Component, ComponentId, Entity, Tick, World};

use crate::access::Access;
use crate::fetch::WorldQuery;
use crate::rows::RowMask;

/// One chunk of a `for_each_chunk` run: the entity slice and the query's column slices, all of
/// the chunk's length and aligned row by row.
///
/// ```
/// # use ecs_core::{Entity, World};
/// # use ecs_query::{QueryExt, RefRW};
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// world.query::<(Entity, RefRW<u32>)>().for_each_chunk(|mut view| {
///     let (ids, nums) = view.columns();
///     assert_eq!(ids, [e]);
///     nums[0] = 2;
/// });
/// assert_eq!(world.get::<u32>(e), Ok(&2));
/// ```
pub struct ChunkView<'w, Q: WorldQuery> {
    world: &'w World,
    access: &'w Access,
    arch: &'w Archetype,
    chunk: &'w Chunk,
    fetch: Q::Fetch,
    /// The rows that pass by enable bits, when not all do.
    mask: Option<RowMask>,
    _query: PhantomData<fn() -> Q>,
}

impl<'w, Q: WorldQuery> ChunkView<'w, Q> {
    /// # Safety
    /// `cached` was found in `arch` (by `Q::archetype_fetch`), which owns `chunk`; the caller
    /// has the query's access to the chunk for `'w`, and hands out one view per chunk; `tick`
    /// was handed out by `world` (writers stamp it).
    pub(crate) unsafe fn new(
        world: &'w World,
        cached: &Q::ArchetypeFetch,
        access: &'w Access,
        arch: &'w Archetype,
        chunk: &'w Chunk,
        tick: Tick,
    ) -> Self {
        debug_assert!(
            arch.chunks().iter().any(|c| std::ptr::eq(c, chunk)),
            "chunk view of a chunk its archetype does not own"
        );
        debug_assert!(
            tick <= world.change_tick(),
            "a tick the world has not handed out"
        );
        // SAFETY: `new`'s contract (`cached` from the archetype owning `chunk`, the query's
        // access held for `'w`, one view per chunk) is `fetch`'s and `mark_rows`'; the view hands
        // out every row, so every row is marked (a bulk stamp).
        let fetch = unsafe {
            Q::mark_rows(cached, chunk, 0..chunk.len(), tick);
            Q::fetch_in(cached, chunk, tick, world)
        };
        Self {
            world,
            access,
            arch,
            chunk,
            fetch,
            mask: None,
            _query: PhantomData,
        }
    }

    /// The view with `mask` as its enable mask (`None`: every row passes).
    pub(crate) fn with_mask(mut self, mask: Option<RowMask>) -> Self {
        self.mask = mask;
        self
    }

    /// The rows of this chunk that pass the query's enable-bit tests (see the `enabled`
    /// module), one bit per row (bit `b` of word `i` is row `64 * i + b`), or `None` when
    /// every row passes. The column slices hold every row of the chunk: a chunk-level loop
    /// over a query with enableable components must consult this mask.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// struct Hidden;
    /// let mut world = World::new();
    /// world.register_enableable::<Hidden>();
    /// let e = world.spawn((Hidden,));
    /// world.spawn((Hidden,));
    /// world.query::<RefRO<Hidden>>().for_each_chunk(|v| assert!(v.enabled_rows().is_none()));
    /// world.set_enabled::<Hidden>(e, false).unwrap();
    /// world.query::<RefRO<Hidden>>().for_each_chunk(|v| assert_eq!(v.enabled_rows(), Some(&[0b10][..])));
    /// ```
    pub fn enabled_rows(&self) -> Option<&[u64]> {
        self.mask.as_ref().map(RowMask::words)
    }

    /// Whether row `row` of this chunk has a `T` that counts as present: the chunk has a `T`
    /// column and, if `T` is enableable, the row's bit is on. What an `Option<RefRO<T>>`
    /// item would say about the row: [`ChunkView::columns`] gives an optional column whole
    /// (`Some`) when only some of its rows are enabled.
    ///
    /// # Panics
    /// If the query does not access `T`, or `row >= len()`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// struct Hidden(u8);
    /// let mut world = World::new();
    /// world.register_enableable::<Hidden>();
    /// let e = world.spawn((1u32, Hidden(0)));
    /// world.spawn((2u32, Hidden(1)));
    /// world.set_enabled::<Hidden>(e, false).unwrap();
    /// world.query::<(RefRO<u32>, Option<RefRO<Hidden>>)>().for_each_chunk(|v| {
    ///     assert_eq!([v.is_enabled::<Hidden>(0), v.is_enabled::<Hidden>(1)], [false, true]);
    /// });
    /// ```
    pub fn is_enabled<T: Component>(&self, row: usize) -> bool {
        let id = self.accessed_id::<T>(false);
        assert!(
            row < self.chunk.len(),
            "row {row} past the chunk's {} rows",
            self.chunk.len()
        );
        let Some(col) = self.arch.column(id) else {
            return false;
        };
        self.arch
            .enable_slot(col)
            .is_none_or(|slot| self.chunk.enable_bits().get(slot).get(row))
    }

    /// Rows in this chunk.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn_batch((0..3u32).map(|i| (i,))).for_each(drop);
    /// world.query::<RefRO<u32>>().for_each_chunk(|view| assert_eq!(view.len(), 3));
    /// ```
    pub fn len(&self) -> usize {
        self.chunk.len()
    }

    /// Whether the chunk has no row (never, for a view handed out by a query).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.query::<RefRO<u32>>().for_each_chunk(|view| assert!(!view.is_empty()));
    /// ```
    pub fn is_empty(&self) -> bool {
        self.chunk.is_empty()
    }

    /// The entity ids, row by row.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.query::<RefRO<u32>>().for_each_chunk(|view| assert_eq!(view.entities(), [e]));
    /// ```
    pub fn entities(&self) -> &'w [Entity] {
        self.chunk.entities()
    }

    /// All of the query's columns as slices (`RefRW<T>` gives `&mut [T]`, `RefRO<T>` gives
    /// `&[T]`, `Entity` gives `&[Entity]`, options give `Option<..>`), borrowed from the view.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 10u64));
    /// world.query::<(RefRW<u32>, RefRO<u64>)>().for_each_chunk(|mut view| {
    ///     let (a, b) = view.columns();
    ///     a[0] += b[0] as u32;
    /// });
    /// assert_eq!(world.get::<u32>(e), Ok(&11));
    /// ```
    pub fn columns(&mut self) -> Q::Slice<'_> {
        // SAFETY: the view holds the query's access to this chunk (constructor contract), and
        // `&mut self` keeps the slices from being handed out twice at once.
        unsafe { Q::slice(&self.fetch, self.chunk.len()) }
    }

    /// One column the query reads or writes, as a shared slice.
    ///
    /// # Panics
    /// If the query does not access `T`, or takes it as optional and this chunk lacks it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((4u32,));
    /// world.query::<RefRO<u32>>().for_each_chunk(|view| assert_eq!(view.column::<u32>(), [4]));
    /// ```
    pub fn column<T: Component>(&self) -> &[T] {
        let base = self.column_base::<T>(false);
        // SAFETY: rows `0..len` are initialised `T`s; the query's access covers `T`, and
        // `&self` means no `&mut` from `columns`/`column_mut` is alive.
        unsafe { std::slice::from_raw_parts(base.cast::<T>(), self.chunk.len()) }
    }

    /// One column the query writes, as a mutable slice.
    ///
    /// # Panics
    /// If the query does not write `T`, or takes it as optional and this chunk lacks it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((4u32,));
    /// world.query::<RefRW<u32>>().for_each_chunk(|mut view| view.column_mut::<u32>()[0] = 9);
    /// assert_eq!(world.get::<u32>(e), Ok(&9));
    /// ```
    pub fn column_mut<T: Component>(&mut self) -> &mut [T] {
        let base = self.column_base::<T>(true);
        // SAFETY: as in `column`, with write access declared and `&mut self` exclusive.
        unsafe { std::slice::from_raw_parts_mut(base.cast::<T>(), self.chunk.len()) }
    }

    /// The chunk's value of chunk component `C`, which the query reads (`ChunkRO<C>`) or
    /// writes (`ChunkRW<C>`); see the `chunk_value` module.
    ///
    /// # Panics
    /// If the query does not access `C`, or `C` is not a chunk component.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{ChunkRO, QueryExt};
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Lod(u8);
    /// let mut world = World::new();
    /// world.register_chunk_component::<Lod>();
    /// let e = world.spawn((1u32,));
    /// world.chunk_component_mut::<Lod>(e).unwrap().0 = 2;
    /// world.query::<ChunkRO<Lod>>().for_each_chunk(|view| assert_eq!(view.chunk_value::<Lod>(), &Lod(2)));
    /// ```
    pub fn chunk_value<C: Component>(&self) -> &C {
        let ptr = self.chunk_value_ptr::<C>(false);
        // SAFETY: a `C` (checked by `chunk_value_ptr`) alive as long as the chunk; the query's
        // access covers `C`, and `&self` means no `&mut` from `columns`/`chunk_value_mut` is
        // alive.
        unsafe { ptr.as_ref() }
    }

    /// The chunk's value of chunk component `C`, which the query writes (`ChunkRW<C>`),
    /// mutably.
    ///
    /// # Panics
    /// If the query does not write `C`, or `C` is not a chunk component.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{ChunkRW, QueryExt};
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Lod(u8);
    /// let mut world = World::new();
    /// world.register_chunk_component::<Lod>();
    /// let e = world.spawn((1u32,));
    /// world.query::<ChunkRW<Lod>>().for_each_chunk(|mut view| view.chunk_value_mut::<Lod>().0 = 3);
    /// assert_eq!(world.chunk_component::<Lod>(e), Ok(&Lod(3)));
    /// ```
    pub fn chunk_value_mut<C: Component>(&mut self) -> &mut C {
        let mut ptr = self.chunk_value_ptr::<C>(true);
        // SAFETY: as in `chunk_value`, with the write declared, one view per chunk, and
        // `&mut self` exclusive.
        unsafe { ptr.as_mut() }
    }

    /// `T`'s id, after checking that the query writes `T` (or, for `write == false`, reads
    /// it); panics naming the query and `T` otherwise.
    fn accessed_id<T: Component>(&self, write: bool) -> ComponentId {
        let id = self.world.components().id_of(TypeId::of::<T>());
        match id {
            Some(id)
                if self.access.writes().contains(id)
                    || (!write && self.access.reads().contains(id)) =>
            {
                id
            }
            _ => panic!(
                "query `{}` does not {} `{}`",
                type_name::<Q>(),
                if write { "write" } else { "access" },
                type_name::<T>()
            ),
        }
    }

    fn chunk_value_ptr<C: Component>(&self, write: bool) -> std::ptr::NonNull<C> {
        let id = self.accessed_id::<C>(write);
        let Some(slot) = self.arch.chunk_value_slot(id) else {
            panic!("`{}` is not a chunk component", type_name::<C>())
        };
        // The slot of `id` holds a `C` (`ChunkValues` invariant 1); `typed_ptr` checks it.
        self.chunk.chunk_values().typed_ptr::<C>(slot)
    }

    fn column_base<T: Component>(&self, write: bool) -> *mut u8 {
        let id = self.accessed_id::<T>(write);
        let Some(col) = self.arch.column(id) else {
            panic!(
                "this chunk has no `{}` column: the query takes it as optional; use \
                 `columns()`, which gives `Option<&[T]>` for optional elements",
                type_name::<T>()
            )
        };
        self.arch.column_base(self.chunk, col).as_ptr()
    }
}
