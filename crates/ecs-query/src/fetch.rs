//! The [`WorldQuery`] trait, its read/write kinds and the marker traits; the elements that
//! implement it live in `element` ([`RefRO`](crate::RefRO), [`RefRW`](crate::RefRW), `&T`,
//! `&mut T`, `Entity`), `option` and `tuple`.
//!
//! A query works at three levels. When its state first matches an archetype it finds where its
//! columns sit in that archetype's chunks (an *archetype fetch*: column indices and byte
//! offsets, cached in the state). For each chunk it builds a *fetch* from that (the column base
//! pointers, one addition each; writers stamp the column's change tick here). Then it reads row
//! `i` of each column as `base.add(i)`: the per-row work is one pointer offset per element, which
//! the compiler turns into the same loop as over plain slices.

use ecs_core::{
    Archetype, ChangeWindow, Chunk, ComponentId, Components, RowTicks, Signature, Tick, World,
};

use crate::access::{Access, AccessConflict};
use crate::rows::Rows;

/// Whether a query only reads ([`ReadKind`]) or may write ([`WriteKind`]): a type-level flag
/// that lets a read-only `Query` system parameter take `&self` in `get`, `iter` and `for_each`
/// while a writing one keeps `&mut self` there. Every [`WorldQuery`] names its kind; tuples
/// write if any element does.
///
/// ```
/// # use std::any::TypeId;
/// # use ecs_core::Entity;
/// # use ecs_query::{ReadKind, RefRO, RefRW, WorldQuery, WriteKind};
/// fn kind<Q: WorldQuery>() -> TypeId { TypeId::of::<Q::Kind>() }
/// assert_eq!(kind::<(Entity, RefRO<u32>)>(), TypeId::of::<ReadKind>());
/// assert_eq!(kind::<(RefRO<u32>, Option<RefRW<f32>>)>(), TypeId::of::<WriteKind>());
/// ```
pub trait QueryKind: Send + Sync + 'static {
    /// The kind of a tuple of an element of this kind and one of kind `K`.
    type Join<K: QueryKind>: QueryKind;
}

/// The [`QueryKind`] of queries that only read.
pub enum ReadKind {}

/// The [`QueryKind`] of queries that may write.
pub enum WriteKind {}

impl QueryKind for ReadKind {
    type Join<K: QueryKind> = K;
}

impl QueryKind for WriteKind {
    type Join<K: QueryKind> = WriteKind;
}

/// The kind of a tuple of query elements.
macro_rules! join_kinds {
    () => { ReadKind };
    ($Q:ident $(, $rest:ident)*) => {
        <<$Q as WorldQuery>::Kind as QueryKind>::Join<join_kinds!($($rest),*)>
    };
}
pub(crate) use join_kinds;

/// The item a query's read-only view yields: `&T` for `RefRW<T>`, the query's own item for a
/// read-only query.
pub type ROItem<'w, Q> = <<Q as WorldQuery>::ReadOnly as WorldQuery>::Item<'w>;

/// A type that can be fetched by a query: one element of a query tuple, or the tuple itself.
///
/// # Safety
/// Implementors promise:
/// - `Kind` is [`WriteKind`] if `update_access` may record a write;
/// - `ReadOnly` reads (only) what this query reads or writes, from the same columns, so that its
///   `fetch` / `item` may run on this query's cached `ArchetypeFetch` while nothing writes;
/// - `init_state` takes its component ids from `components`, registering as needed, and never
///   replaces `components` (it is the world's registry: see `ecs_core::Components`);
/// - `update_access` records every component that `fetch`, `item` or `slice` reads (as a read)
///   or writes (as a write), and panics if the element aliases itself;
/// - `matches` is true only for archetypes in which `archetype_fetch` finds every column it
///   needs, and what it finds there are the columns named by `update_access`;
/// - `item` and `slice` only touch the rows `0..len` of those columns;
/// - `for_each_row` (if overridden) calls its function once per row `0..len`, in order, with
///   that row's item, and nothing else;
/// - `mark_rows` / `mark_row` stamp only columns `update_access` recorded as writes, and only
///   the rows they are given; `keeps_row_ticks` is true whenever `mark_row` would stamp a row
///   tick;
/// - `enabled_rows`, `and_rows` and `row_enabled` agree: a row passes `row_enabled` exactly
///   when `enabled_rows` says [`Rows::All`](crate::Rows::All), or `Some` and `and_rows` keeps
///   its bit; likewise `chunk_matches`, `rows_all_match`, `row_matches` and `and_row_marks`
///   agree for the row ticks. The engine trusts each of them alone (a `get` tests one row, a
///   loop masks 64 at a time), so a disagreement would hand out a row the access rules never
///   checked for that path.
///
/// ```
/// # use ecs_core::{Components, Entity};
/// # use ecs_query::{RefRO, RefRW, WorldQuery};
/// let mut components = Components::default();
/// // Tuples, `Entity`, `Option<Q>`, `RefRO<T>` and `RefRW<T>` are queries.
/// <(Entity, RefRW<u32>, Option<RefRO<char>>)>::init_state(&mut components);
/// assert!(components.id::<u32>().is_some() && components.id::<char>().is_some());
/// ```
pub unsafe trait WorldQuery {
    /// What the query yields per entity.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_query::{RefRW, WorldQuery};
    /// type Item = <RefRW<u32> as WorldQuery>::Item<'static>;
    /// assert_eq!(TypeId::of::<Item>(), TypeId::of::<&'static mut u32>());
    /// ```
    type Item<'w>;
    /// What [`ChunkView::columns`](crate::ChunkView::columns) yields per chunk.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// type Slice = <Option<RefRO<u32>> as WorldQuery>::Slice<'static>;
    /// assert_eq!(TypeId::of::<Slice>(), TypeId::of::<Option<&'static [u32]>>());
    /// ```
    type Slice<'w>;
    /// Per-chunk column pointers.
    type Fetch: Clone;
    /// Where the element's columns sit in one matched archetype's chunks (column indices and
    /// byte offsets): found once, when a query state first matches the archetype, and cached
    /// there, so that fetching a chunk is an addition per column.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_query::{__private::ArchetypeColumn, RefRW, WorldQuery};
    /// type Cached = <RefRW<u32> as WorldQuery>::ArchetypeFetch;
    /// assert_eq!(TypeId::of::<Cached>(), TypeId::of::<ArchetypeColumn>());
    /// ```
    type ArchetypeFetch: Copy + Send + Sync + 'static;
    /// Whether the query only reads (see [`QueryKind`]).
    type Kind: QueryKind;
    /// The same query with every write turned into a read (`RefRW<T>` → `RefRO<T>`): what a
    /// writing query's read-only view yields. It shares this query's state and cached fetch.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_core::Entity;
    /// # use ecs_query::{RefRO, RefRW, WorldQuery};
    /// type RO = <(Entity, RefRW<u32>) as WorldQuery>::ReadOnly;
    /// assert_eq!(TypeId::of::<RO>(), TypeId::of::<(Entity, RefRO<u32>)>());
    /// ```
    type ReadOnly: ReadOnlyQuery<State = Self::State, ArchetypeFetch = Self::ArchetypeFetch>;
    /// Per-world data computed once (component ids).
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_core::ComponentId;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// type State = <RefRO<u32> as WorldQuery>::State;
    /// assert_eq!(TypeId::of::<State>(), TypeId::of::<ComponentId>());
    /// ```
    type State: Send + Sync + 'static;

    /// Whether `chunk_matches` can reject a chunk of a matched archetype (change filters).
    ///
    /// ```
    /// # use ecs_query::{Changed, RefRO, WorldQuery};
    /// assert!(!<RefRO<u32> as WorldQuery>::CHUNK_FILTERED);
    /// assert!(<Changed<u32> as WorldQuery>::CHUNK_FILTERED);
    /// ```
    const CHUNK_FILTERED: bool = false;

    /// Whether the element reads or writes a column whose values are not a power of two wide
    /// (12-byte `[f32; 3]`s, say): `for_each` over a tuple then steps four rows at a time, so
    /// the vectoriser finds whole registers' worth of consecutive values. Tuples of 4- or 8-byte
    /// columns run as plain loops, which the compiler widens and unrolls itself; stepping by
    /// four there made them slower (docs/performance.md, "Design measurements").
    ///
    /// ```
    /// # use ecs_query::{RefRO, RefRW, WorldQuery};
    /// assert!(<(RefRW<[f32; 3]>, RefRO<f32>)>::ODD_WIDTH);
    /// assert!(!<(RefRW<f32>, RefRO<[f32; 4]>)>::ODD_WIDTH);
    /// ```
    const ODD_WIDTH: bool = false;

    /// Registers the element's component types and returns its state.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut components = Components::default();
    /// let id = RefRO::<u32>::init_state(&mut components);
    /// assert_eq!(components.id::<u32>(), Some(id));
    /// ```
    fn init_state(components: &mut Components) -> Self::State;

    /// Records what the element reads and writes.
    ///
    /// # Errors
    /// If the element aliases a component already in `access`.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::{Access, RefRW, WorldQuery};
    /// let mut components = Components::default();
    /// let state = RefRW::<u32>::init_state(&mut components);
    /// let mut access = Access::new();
    /// RefRW::<u32>::update_access(&state, &mut access, &components).unwrap();
    /// assert!(access.writes().contains(state));
    /// assert!(RefRW::<u32>::update_access(&state, &mut access, &components).is_err());
    /// ```
    fn update_access(
        state: &Self::State,
        access: &mut Access,
        components: &Components,
    ) -> Result<(), AccessConflict>;

    /// Adds the components every matched archetype must have or must lack.
    ///
    /// ```
    /// # use ecs_core::{Components, Signature};
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut components = Components::default();
    /// let state = RefRO::<u32>::init_state(&mut components);
    /// let (mut required, mut excluded) = (Signature::new(), Signature::new());
    /// RefRO::<u32>::update_masks(&state, &mut required, &mut excluded);
    /// assert!(required.contains(state) && excluded.is_empty());
    /// ```
    fn update_masks(_state: &Self::State, _required: &mut Signature, _excluded: &mut Signature) {}

    /// The exact archetype test.
    ///
    /// ```
    /// # use ecs_core::{Components, Signature};
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut components = Components::default();
    /// let state = <Option<RefRO<u32>>>::init_state(&mut components);
    /// assert!(<Option<RefRO<u32>>>::matches(&state, &Signature::new())); // optional: always
    /// ```
    fn matches(state: &Self::State, signature: &Signature) -> bool;

    /// Finds the element's columns in `archetype`, for [`WorldQuery::fetch`] and
    /// [`WorldQuery::chunk_matches`] on its chunks.
    ///
    /// # Panics
    /// If `matches` is false for the archetype's signature (a column is missing).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut world = World::new();
    /// let e = world.spawn(('a', 7u32));
    /// let state = world.register_component::<u32>(); // `RefRO<u32>`'s state
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let column = RefRO::<u32>::archetype_fetch(&state, arch);
    /// assert_eq!(column.index(), arch.column(state).unwrap());
    /// ```
    fn archetype_fetch(state: &Self::State, archetype: &Archetype) -> Self::ArchetypeFetch;

    /// The chunk-level test for change filters (O(1) per chunk); `window` holds the first tick
    /// the running query has not seen yet.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let state = world.register_component::<u32>(); // `RefRO<u32>`'s state
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let cached = RefRO::<u32>::archetype_fetch(&state, arch);
    /// let window = ecs_core::ChangeWindow::new(world.change_tick(), world.change_tick());
    /// assert!(RefRO::<u32>::chunk_matches(&cached, &arch.chunks()[0], window));
    /// ```
    #[inline]
    fn chunk_matches(
        _cached: &Self::ArchetypeFetch,
        _chunk: &Chunk,
        _window: ChangeWindow,
    ) -> bool {
        true
    }

    /// Whether the element filters single rows (`Changed`, `Added`): then a chunk that passes
    /// [`WorldQuery::chunk_matches`] still has its rows tested, unless
    /// [`WorldQuery::rows_all_match`] says every row passes.
    const ROW_FILTERED: bool = false;

    /// The per-row ticks the element's filters read, by component: a query state switches them
    /// on in its world when built ([`World::keep_row_ticks`](ecs_core::World::keep_row_ticks)).
    ///
    /// ```
    /// # use ecs_core::{Components, RowTicks};
    /// # use ecs_query::{Changed, WorldQuery};
    /// let mut components = Components::default();
    /// let state = Changed::<u32>::init_state(&mut components);
    /// let mut marks = Vec::new();
    /// Changed::<u32>::row_ticks(&state, &mut marks);
    /// assert_eq!(marks, [(state, RowTicks::CHANGED)]);
    /// ```
    fn row_ticks(_state: &Self::State, _out: &mut Vec<(ComponentId, RowTicks)>) {}

    /// Whether every row of a chunk that passed [`WorldQuery::chunk_matches`] passes (a bulk
    /// stamp in the window, say), so that no row need be tested.
    #[inline]
    fn rows_all_match(
        _cached: &Self::ArchetypeFetch,
        _chunk: &Chunk,
        _window: ChangeWindow,
    ) -> bool {
        true
    }

    /// Whether row `row` of a chunk that passed [`WorldQuery::chunk_matches`] passes.
    #[inline]
    fn row_matches(
        _cached: &Self::ArchetypeFetch,
        _chunk: &Chunk,
        _row: usize,
        _window: ChangeWindow,
    ) -> bool {
        true
    }

    /// Records that the element writes rows `rows` of `chunk` at `tick` (writers stamp the
    /// chunk column, and its row ticks: a bulk stamp when `rows` is the whole chunk). Every
    /// path that hands out items or slices of a writer calls this for the rows it hands out.
    ///
    /// # Safety
    /// As [`WorldQuery::fetch`] (the caller holds the declared write of those rows), and
    /// `rows` lies within `0..chunk.len()`.
    #[inline(always)]
    unsafe fn mark_rows(
        _cached: &Self::ArchetypeFetch,
        _chunk: &Chunk,
        _rows: std::ops::Range<usize>,
        _tick: Tick,
    ) {
    }

    /// Clears in `words` (bit `b` of word `i` = row `64 * i + b` of `chunk`) the rows the
    /// element's row filter rejects in `window`, for a chunk that passed
    /// [`WorldQuery::chunk_matches`] and not [`WorldQuery::rows_all_match`]: the bulk form of
    /// [`WorldQuery::row_matches`], which row masks use.
    #[inline]
    fn and_row_marks(
        _cached: &Self::ArchetypeFetch,
        _chunk: &Chunk,
        _window: ChangeWindow,
        _words: &mut [u64],
    ) {
    }

    /// Records that the element writes row `row` of `chunk` at `tick`, in row ticks only: for
    /// paths that hand out single rows after [`WorldQuery::fetch`] stamped the chunk, where
    /// [`WorldQuery::keeps_row_ticks`] holds.
    ///
    /// # Safety
    /// As [`WorldQuery::mark_rows`] for `row..row + 1`, after `fetch` for this chunk and tick.
    #[inline(always)]
    unsafe fn mark_row(_cached: &Self::ArchetypeFetch, _chunk: &Chunk, _row: usize, _tick: Tick) {}

    /// Whether the element writes a column that keeps row ticks in `chunk`: then a path that
    /// hands out single rows (`iter`) calls [`WorldQuery::mark_rows`] for each. `false` lets
    /// it skip the call: [`WorldQuery::fetch`] has stamped the chunk column already, and a
    /// type no `Changed` / `Added` reader asks about pays nothing per row.
    #[inline(always)]
    fn keeps_row_ticks(_cached: &Self::ArchetypeFetch, _chunk: &Chunk) -> bool {
        false
    }

    /// Which rows of `chunk` the element keeps by enable bits (see the `enabled` module):
    /// a disabled `T` counts as absent for `RefRO<T>`, `With<T>` and the like. Elements that
    /// never look at enable bits keep the default, `All`, which costs nothing.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, Rows, WorldQuery};
    /// struct Hidden;
    /// let mut world = World::new();
    /// let id = world.register_enableable::<Hidden>();
    /// let e = world.spawn((Hidden,));
    /// world.set_enabled::<Hidden>(e, false).unwrap();
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let cached = RefRO::<Hidden>::archetype_fetch(&id, arch);
    /// assert_eq!(RefRO::<Hidden>::enabled_rows(&cached, &arch.chunks()[0]), Rows::None);
    /// ```
    #[inline(always)]
    fn enabled_rows(_cached: &Self::ArchetypeFetch, _chunk: &Chunk) -> Rows {
        Rows::All
    }

    /// ANDs into `words` (bit `b` of word `i` = row `64 * i + b` of `chunk`) the rows the
    /// element keeps; called only for chunks where some element answered [`Rows::Some`].
    #[inline(always)]
    fn and_rows(_cached: &Self::ArchetypeFetch, _chunk: &Chunk, _words: &mut [u64]) {}

    /// Whether the element keeps row `row` of `chunk` by enable bits: the per-row form of
    /// [`WorldQuery::and_rows`], for elements that decide row by row inside another element
    /// (`Option<Q>` yields `None` where `Q` does not keep the row; `Or` passes a row some
    /// element keeps). Elements that never look at enable bits keep the default, `true`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, Without, WorldQuery};
    /// struct Hidden;
    /// let mut world = World::new();
    /// let id = world.register_enableable::<Hidden>();
    /// let a = world.spawn((Hidden,));
    /// world.spawn((Hidden,));
    /// world.set_enabled::<Hidden>(a, false).unwrap();
    /// let arch = &world.archetypes()[world.location(a).unwrap().archetype.index()];
    /// let cached = RefRO::<Hidden>::archetype_fetch(&id, arch);
    /// let chunk = &arch.chunks()[0];
    /// assert!(!RefRO::<Hidden>::row_enabled(&cached, chunk, 0));
    /// assert!(RefRO::<Hidden>::row_enabled(&cached, chunk, 1));
    /// ```
    #[inline(always)]
    fn row_enabled(_cached: &Self::ArchetypeFetch, _chunk: &Chunk, _row: usize) -> bool {
        true
    }

    /// Column pointers for one chunk; writers stamp `tick`.
    ///
    /// # Safety
    /// - `cached` came from [`WorldQuery::archetype_fetch`] for the archetype that owns `chunk`.
    /// - The caller holds the access [`WorldQuery::update_access`] declares to `chunk` while
    ///   the fetch is used, and `tick` was handed out by the chunk's world: writers stamp it
    ///   with [`Chunk::mark_changed_unchecked`], whose contract this forwards.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let state = world.register_component::<u32>(); // `RefRO<u32>`'s state
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let cached = RefRO::<u32>::archetype_fetch(&state, arch);
    /// let tick = world.change_tick();
    /// // SAFETY: `cached` was found in the archetype that owns the chunk.
    /// let mut fetch = unsafe { RefRO::<u32>::fetch(&cached, &arch.chunks()[0], tick) };
    /// // SAFETY: row 0 exists, and nothing writes the world meanwhile.
    /// assert_eq!(unsafe { RefRO::<u32>::item(&mut fetch, 0) }, &7);
    /// ```
    unsafe fn fetch(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Self::Fetch;

    /// [`WorldQuery::fetch`] for a run that ignores enable bits
    /// ([`IgnoreEnabled`](crate::IgnoreEnabled)): elements that read enable bits in their
    /// fetch (`Option<Q>`) fetch as if every row were enabled. The default is `fetch`.
    ///
    /// # Safety
    /// As [`WorldQuery::fetch`].
    #[inline(always)]
    unsafe fn fetch_ignoring_enabled(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
    ) -> Self::Fetch {
        // SAFETY: this method's contract is `fetch`'s, word for word (see its doc).
        unsafe { Self::fetch(cached, chunk, tick) }
    }

    /// [`WorldQuery::fetch`] given the world that owns `chunk`, for elements whose items read
    /// through the world ([`EntityRef`](ecs_core::EntityRef)). The engine's query runs call
    /// this (and [`WorldQuery::fetch_ignoring_enabled_in`]) rather than `fetch`; elements that
    /// wrap others forward it. The default is `fetch`.
    ///
    /// # Safety
    /// As [`WorldQuery::fetch`]; and `chunk` is one of `world`'s, and `world` outlives every
    /// item of the fetch.
    #[inline(always)]
    unsafe fn fetch_in(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
        world: &World,
    ) -> Self::Fetch {
        let _ = world;
        // SAFETY: this method's contract includes `fetch`'s (see its doc).
        unsafe { Self::fetch(cached, chunk, tick) }
    }

    /// [`WorldQuery::fetch_ignoring_enabled`] given the world that owns `chunk` (see
    /// [`WorldQuery::fetch_in`]). The default is `fetch_ignoring_enabled`.
    ///
    /// # Safety
    /// As [`WorldQuery::fetch_in`].
    #[inline(always)]
    unsafe fn fetch_ignoring_enabled_in(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
        world: &World,
    ) -> Self::Fetch {
        let _ = world;
        // SAFETY: this method's contract includes `fetch_ignoring_enabled`'s (see its doc).
        unsafe { Self::fetch_ignoring_enabled(cached, chunk, tick) }
    }

    /// The item of row `row`.
    ///
    /// # Safety
    /// `row` is below the fetched chunk's length; the chunk outlives `'w`; no other live
    /// reference conflicts with the access this element declared (each row of a `&mut` element
    /// is yielded at most once while alive).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRW, WorldQuery};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let state = world.register_component::<u32>(); // `RefRW<u32>`'s state
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let cached = RefRW::<u32>::archetype_fetch(&state, arch);
    /// let tick = world.change_tick();
    /// // SAFETY: `cached` was found in the archetype that owns the chunk; this example owns
    /// // the world, so the write of `u32` it declares conflicts with nothing.
    /// let mut fetch = unsafe { RefRW::<u32>::fetch(&cached, &arch.chunks()[0], tick) };
    /// // SAFETY: row 0 exists and is handed out once; nothing else accesses the world meanwhile.
    /// *unsafe { RefRW::<u32>::item(&mut fetch, 0) } = 8;
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// ```
    unsafe fn item<'w>(fetch: &mut Self::Fetch, row: usize) -> Self::Item<'w>;

    /// The element's column slices of the first `len` rows.
    ///
    /// # Safety
    /// As [`WorldQuery::item`], for all rows `0..len` at once (`len` = the chunk's length).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// world.spawn((8u32,));
    /// let state = world.register_component::<u32>(); // `RefRO<u32>`'s state
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let chunk = &arch.chunks()[0];
    /// let cached = RefRO::<u32>::archetype_fetch(&state, arch);
    /// // SAFETY: `cached` was found in the archetype that owns the chunk.
    /// let fetch = unsafe { RefRO::<u32>::fetch(&cached, chunk, world.change_tick()) };
    /// // SAFETY: `chunk.len()` rows exist, and nothing writes the world meanwhile.
    /// assert_eq!(unsafe { RefRO::<u32>::slice(&fetch, chunk.len()) }, [7, 8]);
    /// ```
    unsafe fn slice<'w>(fetch: &Self::Fetch, len: usize) -> Self::Slice<'w>;

    /// The fetch whose rows `slice` holds: [`WorldQuery::slice`] undone.
    ///
    /// # Safety
    /// `slice` came from [`WorldQuery::slice`]; the fetch is used as that slice may be (a
    /// writer's rows are written through it only while the slice's borrow would allow it).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let state = world.register_component::<u32>(); // `RefRO<u32>`'s state
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let chunk = &arch.chunks()[0];
    /// let cached = RefRO::<u32>::archetype_fetch(&state, arch);
    /// // SAFETY: `cached` was found in the archetype that owns the chunk; only reads follow.
    /// unsafe {
    ///     let fetch = RefRO::<u32>::fetch(&cached, chunk, world.change_tick());
    ///     let mut again = RefRO::<u32>::unslice(RefRO::<u32>::slice(&fetch, 1));
    ///     assert_eq!(RefRO::<u32>::item(&mut again, 0), &7);
    /// }
    /// ```
    unsafe fn unslice(slice: Self::Slice<'_>) -> Self::Fetch;

    /// The fetch of the same chunk from row `rows` on: row `r` of the result is row
    /// `rows + r` of `fetch`, so [`WorldQuery::for_each_row`] can run over a piece of a chunk
    /// and build its slices over that piece's rows only (never re-borrowing rows handed out
    /// before it). `None` (the default) where an element cannot shift its fetch; callers then
    /// hand rows out one by one through [`WorldQuery::item`]. Column elements, `Entity`,
    /// `Option`, `With` / `Without` and tuples of such shift.
    ///
    /// # Safety
    /// `fetch` came from [`WorldQuery::fetch`] on a chunk of at least `rows` rows; the result
    /// is used as `fetch` may be, for rows `rows..` of that chunk.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, WorldQuery};
    /// let mut world = World::new();
    /// world.spawn_batch((0..4u32).map(|n| (n,))).for_each(drop);
    /// let state = world.register_component::<u32>();
    /// let arch = world.archetypes().iter().find(|a| a.len() == 4).unwrap();
    /// let cached = RefRO::<u32>::archetype_fetch(&state, arch);
    /// // SAFETY: `cached` was found in the archetype that owns the chunk; only reads follow.
    /// unsafe {
    ///     let fetch = RefRO::<u32>::fetch(&cached, &arch.chunks()[0], world.change_tick());
    ///     let mut from_two = RefRO::<u32>::advance(&fetch, 2).unwrap();
    ///     assert_eq!(RefRO::<u32>::item(&mut from_two, 1), &3);
    /// }
    /// ```
    #[inline(always)]
    unsafe fn advance(fetch: &Self::Fetch, rows: usize) -> Option<Self::Fetch> {
        let _ = (fetch, rows);
        None
    }

    /// Calls `f` with the items of rows `0..len`: the loop `for_each` runs over each chunk.
    ///
    /// This default steps four rows at a time: a short chunk (a 20-row archetype) then runs as
    /// one vector loop with the same trip count every time, instead of a vector loop plus a
    /// scalar tail (docs/performance.md, "Design measurements"); long chunks still get the
    /// compiler's wide loop.
    ///
    /// Tuples override it: their loop takes each element's column as a separate slice argument,
    /// which tells the compiler that the columns written and the columns read do not overlap,
    /// and steps four rows at a time when [`WorldQuery::ODD_WIDTH`] says so, so that a
    /// per-entity closure such as `p.0 += v.0` on `[f32; 3]`-sized values compiles to the same
    /// vector code as a loop over flat slices.
    ///
    /// # Safety
    /// As [`WorldQuery::slice`] for rows `0..len`, which `f` receives once each.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRW, WorldQuery};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let state = (world.register_component::<u32>(),);
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let chunk = &arch.chunks()[0];
    /// let cached = <(RefRW<u32>,)>::archetype_fetch(&state, arch);
    /// // SAFETY: `cached` was found in the archetype that owns the chunk, whose rows are
    /// // handed out once; nothing else accesses the world meanwhile.
    /// unsafe {
    ///     let mut fetch = <(RefRW<u32>,)>::fetch(&cached, chunk, world.change_tick());
    ///     <(RefRW<u32>,)>::for_each_row(&mut fetch, chunk.len(), &mut |(n,)| *n += 1);
    /// }
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// ```
    #[inline(always)]
    unsafe fn for_each_row<'w, Func: FnMut(Self::Item<'w>)>(
        fetch: &mut Self::Fetch,
        len: usize,
        f: &mut Func,
    ) {
        // Counted in fours (`len / 4`, not `row + 4 <= len`): the compiler then needs no
        // overflow-proof trip count before each chunk's loop.
        for quad in 0..len / 4 {
            let row = quad * 4;
            // SAFETY: `row + 3 < len`, and each row is yielded once (caller contract).
            unsafe {
                f(Self::item(fetch, row));
                f(Self::item(fetch, row + 1));
                f(Self::item(fetch, row + 2));
                f(Self::item(fetch, row + 3));
            }
        }
        for row in len / 4 * 4..len {
            // SAFETY: `row < len`, and each row is yielded once (caller contract).
            f(unsafe { Self::item(fetch, row) });
        }
    }
}

/// A query that only reads, so it may run through `&World`.
///
/// # Safety
/// `update_access` records no write, and `fetch` / `item` / `slice` write nothing.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryState, ReadOnlyQuery, RefRO};
/// fn total<Q: ReadOnlyQuery>(world: &mut World) -> usize {
///     let mut state = QueryState::<Q>::new(world);
///     state.iter(world).count() // `iter` takes `&World`: read-only queries only
/// }
/// let mut world = World::new();
/// world.spawn((1u32,));
/// assert_eq!(total::<RefRO<u32>>(&mut world), 1);
/// ```
pub unsafe trait ReadOnlyQuery: WorldQuery<Kind = ReadKind> {}

/// A query that never skips rows of a matched archetype (no change filter), so its iterator
/// knows its exact length.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// world.spawn((1u32,));
/// world.spawn((2u32,));
/// assert_eq!(world.query::<RefRO<u32>>().iter().len(), 2); // `ExactSizeIterator`
/// ```
pub trait ExactQuery: WorldQuery {}
