//! The [`WorldQuery`] trait and the data elements of a query: [`RefRO`], [`RefRW`], `&T`,
//! `&mut T`, [`Entity`], `Option<Q>` and tuples of those.
//!
//! A query works at three levels. When its state first matches an archetype it finds where its
//! columns sit in that archetype's chunks (an *archetype fetch*: column indices and byte
//! offsets, cached in the state). For each chunk it builds a *fetch* from that (the column base
//! pointers, one addition each; writers stamp the column's change tick here). Then it reads row
//! `i` of each column as `base.add(i)`: the per-row work is one pointer offset per element, which
//! the compiler turns into the same loop as over plain slices.

use std::any::type_name;
use std::marker::PhantomData;
use std::ptr::NonNull;

use ecs_core::{
    Archetype, ChangeWindow, Chunk, Component, ComponentId, Components, Entity, RowMarks,
    Signature, Tick,
};

use crate::access::{Access, AccessConflict};
use crate::rows::{slot_and, slot_has, slot_rows, Rows, NO_SLOT};

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
/// - `item` and `slice` only touch the rows `0..len` of those columns.
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
    /// # use ecs_query::{ArchetypeColumn, RefRW, WorldQuery};
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
    /// columns run as plain loops, which the compiler widens and unrolls itself (stepping by
    /// four there made the `schedule` workload's swaps 1.3× → 1.65× the raw loop).
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

    /// The per-row marks the element's filters read, by component: a query state switches them
    /// on in its world when built ([`World::enable_row_marks`](ecs_core::World::enable_row_marks)).
    ///
    /// ```
    /// # use ecs_core::{Components, RowMarks};
    /// # use ecs_query::{Changed, WorldQuery};
    /// let mut components = Components::default();
    /// let state = Changed::<u32>::init_state(&mut components);
    /// let mut marks = Vec::new();
    /// Changed::<u32>::row_marks(&state, &mut marks);
    /// assert_eq!(marks, [(state, RowMarks::CHANGED)]);
    /// ```
    fn row_marks(_state: &Self::State, _out: &mut Vec<(ComponentId, RowMarks)>) {}

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
    /// chunk column, and its row marks: a bulk stamp when `rows` is the whole chunk). Every
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

    /// Records that the element writes row `row` of `chunk` at `tick`, in row marks only: for
    /// paths that hand out single rows after [`WorldQuery::fetch`] stamped the chunk, where
    /// [`WorldQuery::keeps_row_marks`] holds.
    ///
    /// # Safety
    /// As [`WorldQuery::mark_rows`] for `row..row + 1`, after `fetch` for this chunk and tick.
    #[inline(always)]
    unsafe fn mark_row(_cached: &Self::ArchetypeFetch, _chunk: &Chunk, _row: usize, _tick: Tick) {}

    /// Whether the element writes a column that keeps row marks in `chunk`: then a path that
    /// hands out single rows (`iter`) calls [`WorldQuery::mark_rows`] for each. `false` lets
    /// it skip the call: [`WorldQuery::fetch`] has stamped the chunk column already, and a
    /// type no `Changed` / `Added` reader asks about pays nothing per row.
    #[inline(always)]
    fn keeps_row_marks(_cached: &Self::ArchetypeFetch, _chunk: &Chunk) -> bool {
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
        // SAFETY: forwarded caller contract.
        unsafe { Self::fetch(cached, chunk, tick) }
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

    /// Calls `f` with the items of rows `0..len`: the loop `for_each` runs over each chunk.
    ///
    /// This default steps four rows at a time: a short chunk (a 20-row archetype) then runs as
    /// one vector loop with the same trip count every time, instead of a vector loop plus a
    /// scalar tail (`frag_iter_many` 1.09–1.19× → 0.95–1.01× legion); long chunks still get the
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
        let mut row = 0;
        while row + 4 <= len {
            // SAFETY: `row + 3 < len`, and each row is yielded once (caller contract).
            unsafe {
                f(Self::item(fetch, row));
                f(Self::item(fetch, row + 1));
                f(Self::item(fetch, row + 2));
                f(Self::item(fetch, row + 3));
            }
            row += 4;
        }
        while row < len {
            // SAFETY: `row < len`, and each row is yielded once (caller contract).
            f(unsafe { Self::item(fetch, row) });
            row += 1;
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

/// Read access to a `T`; yields `&T`.
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
/// # use ecs_query::{ArchetypeColumn, RefRO, WorldQuery};
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
                access.add_write(*id, c)
            }

            #[inline(always)]
            unsafe fn fetch(column: &ArchetypeColumn, chunk: &Chunk, tick: Tick) -> NonNull<$T> {
                // SAFETY: the caller holds the write of `T`'s column this element declared, and
                // `tick` is the running query's tick (caller contract).
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
            fn keeps_row_marks(column: &ArchetypeColumn, chunk: &Chunk) -> bool {
                chunk.keeps_change_marks(column.index())
            }

            #[inline(always)]
            unsafe fn mark_row(column: &ArchetypeColumn, chunk: &Chunk, row: usize, tick: Tick) {
                // SAFETY: forwarded caller contract; `fetch` stamped the column with `tick`.
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
}

// SAFETY: declares no write.
unsafe impl ReadOnlyQuery for Entity {}
impl ExactQuery for Entity {}

/// Per-chunk fetch of `Option<Q>`: whether `Q` is there, and whether its rows must be tested
/// one by one against enable bits.
pub enum OptionFetch<Q: WorldQuery> {
    /// The archetype lacks `Q`, or `Q` keeps no row of the chunk: every item is `None`.
    Absent,
    /// `Q` keeps every row of the chunk: every item is `Some`.
    All(Q::Fetch),
    /// `Q` keeps some rows (an enableable `T` is off in some): each item asks
    /// [`WorldQuery::row_enabled`], with the chunk the fetch was made for.
    Mixed(Q::Fetch, Q::ArchetypeFetch, NonNull<Chunk>),
}

impl<Q: WorldQuery> Clone for OptionFetch<Q> {
    fn clone(&self) -> Self {
        match self {
            Self::Absent => Self::Absent,
            Self::All(f) => Self::All(f.clone()),
            Self::Mixed(f, c, chunk) => Self::Mixed(f.clone(), *c, *chunk),
        }
    }
}

// SAFETY: forwards to `Q` where `Q` matches, and yields `None` elsewhere (and, by enable
// bits, where `Q` does not keep the row); `Q`'s access is declared in full, so
// `Option<&mut A>` with `&A` is refused like `&mut A` with `&A`. `Mixed` keeps a pointer to
// the chunk the fetch was made for, which outlives the fetch (the `fetch` contract).
unsafe impl<Q: WorldQuery> WorldQuery for Option<Q> {
    type Item<'w> = Option<Q::Item<'w>>;
    type Slice<'w> = Option<Q::Slice<'w>>;
    type Fetch = OptionFetch<Q>;
    type ArchetypeFetch = Option<Q::ArchetypeFetch>;
    type Kind = Q::Kind;
    type ReadOnly = Option<Q::ReadOnly>;
    type State = Q::State;

    const ODD_WIDTH: bool = Q::ODD_WIDTH;

    fn init_state(components: &mut Components) -> Q::State {
        Q::init_state(components)
    }

    fn update_access(
        state: &Q::State,
        access: &mut Access,
        c: &Components,
    ) -> Result<(), AccessConflict> {
        Q::update_access(state, access, c)
    }

    fn matches(_: &Q::State, _: &Signature) -> bool {
        true
    }

    fn archetype_fetch(state: &Q::State, arch: &Archetype) -> Self::ArchetypeFetch {
        Q::matches(state, arch.signature()).then(|| Q::archetype_fetch(state, arch))
    }

    /// `Option` keeps every row, but a chunk where `Q` keeps only some is `Some`: that sends
    /// the chunk down the per-row paths, where the item tests each row, instead of the slice
    /// loop (whose `Option<&[T]>` cannot say "some rows").
    #[inline(always)]
    fn enabled_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> Rows {
        match cached.as_ref().map(|c| Q::enabled_rows(c, chunk)) {
            Some(Rows::Some) => Rows::Some,
            _ => Rows::All,
        }
    }

    #[inline(always)]
    unsafe fn fetch(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Self::Fetch {
        let Some(c) = cached else {
            return OptionFetch::Absent;
        };
        // SAFETY: forwarded caller contract.
        let fetch = unsafe { Q::fetch(c, chunk, tick) };
        match Q::enabled_rows(c, chunk) {
            Rows::All => OptionFetch::All(fetch),
            Rows::None => OptionFetch::Absent,
            Rows::Some => OptionFetch::Mixed(fetch, *c, NonNull::from(chunk)),
        }
    }

    #[inline(always)]
    unsafe fn fetch_ignoring_enabled(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
    ) -> Self::Fetch {
        match cached {
            // SAFETY: forwarded caller contract.
            Some(c) => OptionFetch::All(unsafe { Q::fetch_ignoring_enabled(c, chunk, tick) }),
            None => OptionFetch::Absent,
        }
    }

    #[inline(always)]
    unsafe fn mark_rows(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        rows: std::ops::Range<usize>,
        tick: Tick,
    ) {
        let Some(c) = cached else { return };
        // Only the rows handed out as `Some` are written: a row `Q` does not keep stays
        // unmarked.
        match Q::enabled_rows(c, chunk) {
            // SAFETY: forwarded caller contract.
            Rows::All => unsafe { Q::mark_rows(c, chunk, rows, tick) },
            Rows::None => {}
            Rows::Some => {
                for row in rows.filter(|&row| Q::row_enabled(c, chunk, row)) {
                    // SAFETY: forwarded caller contract, for one row of `rows`.
                    unsafe { Q::mark_rows(c, chunk, row..row + 1, tick) }
                }
            }
        }
    }

    #[inline(always)]
    fn keeps_row_marks(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> bool {
        cached
            .as_ref()
            .is_some_and(|c| Q::keeps_row_marks(c, chunk))
    }

    #[inline(always)]
    unsafe fn mark_row(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize, tick: Tick) {
        if let Some(c) = cached.as_ref().filter(|c| Q::row_enabled(c, chunk, row)) {
            // SAFETY: forwarded caller contract.
            unsafe { Q::mark_row(c, chunk, row, tick) }
        }
    }

    #[inline(always)]
    unsafe fn item<'w>(fetch: &mut Self::Fetch, row: usize) -> Self::Item<'w> {
        match fetch {
            OptionFetch::Absent => None,
            // SAFETY: forwarded caller contract.
            OptionFetch::All(f) => Some(unsafe { Q::item(f, row) }),
            OptionFetch::Mixed(f, c, chunk) => {
                // SAFETY: the chunk outlives the fetch (the `fetch` contract).
                let chunk = unsafe { chunk.as_ref() };
                // SAFETY: forwarded caller contract.
                Q::row_enabled(c, chunk, row).then(|| unsafe { Q::item(f, row) })
            }
        }
    }

    /// A mixed chunk's column comes whole (`Some`); [`ChunkView::is_enabled`] tells its rows
    /// apart.
    ///
    /// [`ChunkView::is_enabled`]: crate::ChunkView::is_enabled
    #[inline(always)]
    unsafe fn slice<'w>(fetch: &Self::Fetch, len: usize) -> Self::Slice<'w> {
        match fetch {
            OptionFetch::Absent => None,
            // SAFETY: forwarded caller contract.
            OptionFetch::All(f) | OptionFetch::Mixed(f, ..) => Some(unsafe { Q::slice(f, len) }),
        }
    }

    /// Only chunks where `Q` keeps all rows or none reach the slice loops (`enabled_rows`
    /// answers `Some` for the others), so `Some` slices are `All`.
    #[inline(always)]
    unsafe fn unslice(slice: Self::Slice<'_>) -> Self::Fetch {
        match slice {
            // SAFETY: forwarded caller contract.
            Some(s) => OptionFetch::All(unsafe { Q::unslice(s) }),
            None => OptionFetch::Absent,
        }
    }
}

// SAFETY: `Q` declares no write.
unsafe impl<Q: ReadOnlyQuery> ReadOnlyQuery for Option<Q> {}
impl<Q: ExactQuery> ExactQuery for Option<Q> {}

macro_rules! tuple_query {
    ($($Q:ident $q:ident $i:tt),*) => {
        // SAFETY: each method forwards to the elements; access is the union of the elements'
        // (aliasing between elements is refused by `Access`).
        unsafe impl<$($Q: WorldQuery),*> WorldQuery for ($($Q,)*) {
            type Item<'w> = ($($Q::Item<'w>,)*);
            type Slice<'w> = ($($Q::Slice<'w>,)*);
            type Fetch = ($($Q::Fetch,)*);
            type ArchetypeFetch = ($($Q::ArchetypeFetch,)*);
            type Kind = join_kinds!($($Q),*);
            type ReadOnly = ($($Q::ReadOnly,)*);
            type State = ($($Q::State,)*);

            const CHUNK_FILTERED: bool = false $(|| $Q::CHUNK_FILTERED)*;
            const ROW_FILTERED: bool = false $(|| $Q::ROW_FILTERED)*;
            const ODD_WIDTH: bool = false $(|| $Q::ODD_WIDTH)*;

            #[allow(unused_variables, reason = "the empty tuple")]
            fn row_marks(state: &Self::State, out: &mut Vec<(ComponentId, RowMarks)>) {
                $($Q::row_marks(&state.$i, out);)*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn rows_all_match(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
                true $(&& $Q::rows_all_match(&cached.$i, chunk, window))*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn row_matches(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize, window: ChangeWindow) -> bool {
                true $(&& $Q::row_matches(&cached.$i, chunk, row, window))*
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, reason = "the empty tuple")]
            unsafe fn mark_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk, rows: std::ops::Range<usize>, tick: Tick) {
                // SAFETY: forwarded caller contract, element by element.
                unsafe { $($Q::mark_rows(&cached.$i, chunk, rows.clone(), tick);)* }
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn keeps_row_marks(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> bool {
                false $(|| $Q::keeps_row_marks(&cached.$i, chunk))*
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, reason = "the empty tuple")]
            unsafe fn mark_row(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize, tick: Tick) {
                // SAFETY: forwarded caller contract, element by element.
                unsafe { $($Q::mark_row(&cached.$i, chunk, row, tick);)* }
            }

            #[inline]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn and_row_marks(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow, words: &mut [u64]) {
                $(if $Q::ROW_FILTERED && !$Q::rows_all_match(&cached.$i, chunk, window) {
                    $Q::and_row_marks(&cached.$i, chunk, window, words);
                })*
            }

            #[allow(unused_variables, clippy::unused_unit, reason = "the empty tuple")]
            fn init_state(components: &mut Components) -> Self::State {
                ($($Q::init_state(components),)*)
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn update_access(state: &Self::State, access: &mut Access, c: &Components) -> Result<(), AccessConflict> {
                $($Q::update_access(&state.$i, access, c)?;)*
                Ok(())
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn update_masks(state: &Self::State, required: &mut Signature, excluded: &mut Signature) {
                $($Q::update_masks(&state.$i, required, excluded);)*
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn matches(state: &Self::State, signature: &Signature) -> bool {
                true $(&& $Q::matches(&state.$i, signature))*
            }

            #[allow(unused_variables, clippy::unused_unit, reason = "the empty tuple")]
            fn archetype_fetch(state: &Self::State, arch: &Archetype) -> Self::ArchetypeFetch {
                ($($Q::archetype_fetch(&state.$i, arch),)*)
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn chunk_matches(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
                true $(&& $Q::chunk_matches(&cached.$i, chunk, window))*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn enabled_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> Rows {
                Rows::All $(.and($Q::enabled_rows(&cached.$i, chunk)))*
            }

            #[inline]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn and_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk, words: &mut [u64]) {
                $($Q::and_rows(&cached.$i, chunk, words);)*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn row_enabled(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize) -> bool {
                true $(&& $Q::row_enabled(&cached.$i, chunk, row))*
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn fetch_ignoring_enabled(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Self::Fetch {
                // SAFETY: forwarded caller contract, element by element.
                unsafe { ($($Q::fetch_ignoring_enabled(&cached.$i, chunk, tick),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn fetch(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Self::Fetch {
                // SAFETY: forwarded caller contract, element by element.
                unsafe { ($($Q::fetch(&cached.$i, chunk, tick),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn item<'w>(fetch: &mut Self::Fetch, row: usize) -> Self::Item<'w> {
                // SAFETY: forwarded caller contract.
                unsafe { ($($Q::item(&mut fetch.$i, row),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn slice<'w>(fetch: &Self::Fetch, len: usize) -> Self::Slice<'w> {
                // SAFETY: forwarded caller contract.
                unsafe { ($($Q::slice(&fetch.$i, len),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn unslice(slice: Self::Slice<'_>) -> Self::Fetch {
                // SAFETY: forwarded caller contract.
                unsafe { ($($Q::unslice(slice.$i),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, reason = "the empty tuple")]
            unsafe fn for_each_row<'w, Func: FnMut(Self::Item<'w>)>(
                fetch: &mut Self::Fetch,
                len: usize,
                f: &mut Func,
            ) {
                /// The loop over one chunk. Each column arrives as its own argument, so the
                /// compiler may assume that a `&mut` column overlaps no other; `#[inline]`
                /// rather than `#[inline(always)]` keeps the function until LLVM inlines it,
                /// which carries that no-alias fact into the caller.
                ///
                /// # Safety
                /// The slices hold rows `0..len` of one chunk, from `slice`; each row is
                /// handed out once.
                #[inline]
                #[allow(unused_variables, unused_mut, unused_unsafe, reason = "the empty tuple")]
                #[allow(clippy::extra_unused_lifetimes, reason = "the empty tuple")]
                #[allow(clippy::too_many_arguments, reason = "one argument per column is the point")]
                unsafe fn chunk_rows<'w, $($Q: WorldQuery,)* Func: FnMut(($($Q::Item<'w>,)*))>(
                    len: usize,
                    f: &mut Func,
                    $($q: $Q::Slice<'w>,)*
                ) {
                    // SAFETY: each slice came from `slice` (caller contract); the fetches
                    // stand in for them, and every row below `len` is yielded once.
                    unsafe {
                        let mut fetch = ($($Q::unslice($q),)*);
                        let mut row = 0;
                        // Four rows per step: four 12-byte values fill three registers.
                        while ($($Q::ODD_WIDTH ||)* false) && row + 4 <= len {
                            f(($($Q::item(&mut fetch.$i, row),)*));
                            f(($($Q::item(&mut fetch.$i, row + 1),)*));
                            f(($($Q::item(&mut fetch.$i, row + 2),)*));
                            f(($($Q::item(&mut fetch.$i, row + 3),)*));
                            row += 4;
                        }
                        while row < len {
                            f(($($Q::item(&mut fetch.$i, row),)*));
                            row += 1;
                        }
                    }
                }
                // SAFETY: rows `0..len` are the caller's to hand out once (forwarded contract).
                unsafe { chunk_rows::<$($Q,)* Func>(len, f, $($Q::slice(&fetch.$i, len),)*) }
            }
        }

        // SAFETY: no element declares a write.
        unsafe impl<$($Q: ReadOnlyQuery),*> ReadOnlyQuery for ($($Q,)*) {}
        impl<$($Q: ExactQuery),*> ExactQuery for ($($Q,)*) {}
    };
}

tuple_query!();
tuple_query!(A a 0);
tuple_query!(A a 0, B b 1);
tuple_query!(A a 0, B b 1, C c 2);
tuple_query!(A a 0, B b 1, C c 2, D d 3);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);
