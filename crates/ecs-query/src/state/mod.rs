//! [`QueryState`]: a query's cached matching and access, reused between runs.
//!
//! Building a state registers the query's component types, computes its access set (panicking
//! on self-aliasing) and its required / excluded masks. Each run then only tests archetypes
//! created since the last run (archetypes are append-only), and walks the cached list.
//!
//! Each run advances the world's change tick: writes are stamped with the run's tick and
//! `Changed<T>` passes chunks stamped at or after the state's previous run. A run's window is a
//! [`RunTicks`] value: the safe methods start a run per call; a scheduler starts one per system
//! run ([`QueryState::start_run`]) and wraps it in a [`QueryRun`](crate::QueryRun), which needs
//! the state only by `&self`, so several read-only views of one state can work at once.
//!
//! This file builds a state, matches archetypes and classifies chunks; beside it, `chunk_list.rs`
//! keeps the flat list of chunks a run visits, `iteration.rs` the state's choice of chunk loop,
//! and `cache.rs` the world-level cache of one-shot queries' states. The loops of a run and the
//! state's own entry points (`for_each`, `get`, ...) live in `run/state_run.rs`: this folder
//! owns matching and its caches, and imports nothing of the runs built on it.

pub(crate) mod cache;
pub(crate) mod chunk_list;
pub(crate) mod iteration;

use std::any::type_name;
use std::sync::OnceLock;

use ecs_core::{
    Archetype, ArchetypeId, CacheSizes, ChangeWindow, Chunk, ComponentId, Components, Signature,
    Tick, World, WorldId,
};

use crate::access::{Access, AccessConflict, FilteredAccess};
use crate::fetch::{ReadOnlyQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::rows::{ChunkRows, RowMask, Rows};
use crate::state::iteration::Iteration;
use chunk_list::{ChunkList, ChunkRecord, MatchedArchetype};

/// The change-tick window of one query run: writes are stamped with `tick`, and change
/// filters pass what was stamped at or after `last_seen`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryState, RefRO};
/// let mut world = World::new();
/// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
/// let first = state.start_run(&world);
/// let second = state.start_run(&world);
/// assert!(second.tick() > first.tick());
/// assert_eq!(second.last_seen(), first.tick() + 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunTicks {
    pub(crate) tick: Tick,
    pub(crate) last_seen: Tick,
}

impl RunTicks {
    /// The window of a fresh query on `world`: its current tick, every change unseen.
    pub(crate) fn fresh(world: &World) -> Self {
        Self {
            tick: world.change_tick(),
            last_seen: 0,
        }
    }

    /// The window of a one-shot run on `world` (`world.query::<Q>()`): advances the world's
    /// tick, as [`QueryState::start_run`] does, and counts every change as unseen, as a fresh
    /// state's first run does.
    pub(crate) fn one_shot(world: &World) -> Self {
        Self {
            tick: world.advance_tick(),
            last_seen: 0,
        }
    }

    /// The tick this run stamps its writes with.
    pub fn tick(self) -> Tick {
        self.tick
    }

    /// Change filters pass what was stamped at or after this tick.
    pub fn last_seen(self) -> Tick {
        self.last_seen
    }

    /// The window change filters pass in this run.
    pub fn window(self) -> ChangeWindow {
        ChangeWindow::new(self.tick, self.last_seen)
    }
}

/// Cached matching and access of the query `Q` with filter `F`.
///
/// # Invariants
/// 1. `matched` lists, in id order, exactly the archetypes among the first `archetypes_seen`
///    of world `world_id` that match `required`, `excluded`, `Q::matches` and `F::matches`.
/// 2. `cached[k]` is what `Q::archetype_fetch` and `F::archetype_fetch` found in archetype
///    `matched[k]`.
/// 3. `access` is what `Q` and `F` declare, and declares no alias (checked in `new`).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryState, RefRO};
/// let mut world = World::new();
/// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
/// world.spawn((3u32,));
/// assert_eq!(state.iter(&world).copied().collect::<Vec<_>>(), [3]);
/// ```
pub struct QueryState<Q: WorldQuery, F: QueryFilter = ()> {
    world_id: WorldId,
    pub(crate) query: Q::State,
    pub(crate) filter: F::State,
    pub(crate) access: FilteredAccess,
    /// The components `access` reads or writes: the columns worth prefetching.
    touched: Box<[ComponentId]>,
    pub(crate) matched: Vec<ArchetypeId>,
    /// For `matched[k]`, where the query's and the filter's columns sit in its chunks.
    cached: Vec<(Q::ArchetypeFetch, F::ArchetypeFetch)>,
    /// For `matched[k]`, the (byte offset, element size) in its chunks of each column of
    /// `touched`, at `k * touched.len()..` ((0, 0) where an optional one is absent): computed
    /// once per archetype, read only when a run prefetches a next chunk.
    prefetch_cols: Vec<(u32, u32)>,
    archetypes_seen: usize,
    pub(crate) last_seen: Tick,
    /// The chunk loop `for_each` runs.
    iteration: Iteration,
    /// The chunks of `matched`, flat, for the loops (see `chunk_list`).
    chunk_list: ChunkList,
}

impl<Q: WorldQuery, F: QueryFilter> QueryState<Q, F> {
    /// Builds the state, registering the query's component types in `world`.
    ///
    /// # Panics
    /// If the query aliases itself, e.g. `(RefRW<A>, RefRO<A>)`; the message names `A`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, RefRW};
    /// let mut world = World::new();
    /// world.spawn((1u32, 2.0f32));
    /// let mut state = QueryState::<(RefRW<u32>, RefRO<f32>)>::new(&mut world);
    /// state.for_each(&mut world, |(a, b)| *a += *b as u32);
    /// let mut read = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(read.iter(&world).copied().collect::<Vec<_>>(), [3]);
    /// ```
    pub fn new(world: &mut World) -> Self {
        // SAFETY: `WorldQuery` implementors promise that `init_state` only registers types
        // and never replaces the registry (the trait's contract).
        let (query, filter) = unsafe {
            let components = world.components_mut();
            (Q::init_state(components), F::init_state(components))
        };
        // Row ticks are switched on for the types this query's change filters read.
        let mut marks = Vec::new();
        Q::row_ticks(&query, &mut marks);
        F::row_ticks(&filter, &mut marks);
        for (id, m) in marks {
            world.keep_row_ticks(id, m);
        }
        Self::from_states(world, world.components(), query, filter)
    }

    /// Builds the state of a read-only query through `&World`, for
    /// [`QueryExt::query_ref`](crate::QueryExt::query_ref): the query's types are looked up
    /// in a [fork](Components::fork) of the world's registry, which gives the types the world
    /// knows their world ids and any other type an id no archetype of the world holds (so a
    /// required one matches nothing and an optional one is absent).
    ///
    /// Crate-private, and the state must not outlive the `&World` borrow it was built under:
    /// once the world registers more types, the fork's extra ids would name other types there.
    pub(crate) fn new_shared(world: &World) -> Self
    where
        Q: ReadOnlyQuery,
    {
        let mut fork = world.components().fork();
        let (query, filter) = (Q::init_state(&mut fork), F::init_state(&mut fork));
        Self::from_states(world, &fork, query, filter)
    }

    /// The state for `query` and `filter`, whose ids come from `components`: the world's
    /// registry or a fork of it.
    fn from_states(
        world: &World,
        components: &Components,
        query: Q::State,
        filter: F::State,
    ) -> Self {
        let access = Self::compute_access(&query, &filter, components)
            .unwrap_or_else(|conflict| conflict.panic(type_name::<Q>()));
        let touched = access
            .access
            .reads()
            .iter()
            .chain(access.access.writes().iter())
            .collect();
        let mut state = Self {
            world_id: world.id(),
            query,
            filter,
            access,
            touched,
            matched: Vec::new(),
            cached: Vec::new(),
            prefetch_cols: Vec::new(),
            archetypes_seen: 0,
            last_seen: 0,
            iteration: Iteration::Auto,
            chunk_list: ChunkList::default(),
        };
        state.update_archetypes(world);
        state
    }

    /// The access set and masks of `Q` with `F`, with ids from `components` (a scheduler computes
    /// this against its own registry, before any world exists).
    ///
    /// # Errors
    /// If the query aliases itself.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, RefRW, WorldQuery};
    /// let mut world = World::new();
    /// let q = (world.register_component::<u32>(), world.register_component::<char>());
    /// type Q = (RefRW<u32>, RefRO<char>);
    /// let access = QueryState::<Q>::compute_access(&q, &(), world.components()).unwrap();
    /// let u32_id = world.component_id::<u32>().unwrap();
    /// assert!(access.access.writes().contains(u32_id));
    /// assert!(access.required.contains(u32_id));
    /// ```
    pub fn compute_access(
        query: &Q::State,
        filter: &F::State,
        components: &Components,
    ) -> Result<FilteredAccess, AccessConflict> {
        let mut access = FilteredAccess::default();
        Q::update_access(query, &mut access.access, components)?;
        F::update_access(filter, &mut access.access, components)?;
        Q::update_masks(query, &mut access.required, &mut access.excluded);
        F::update_masks(filter, &mut access.required, &mut access.excluded);
        Ok(access)
    }

    /// What the query reads and writes, with its archetype masks.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, Without};
    /// let mut world = World::new();
    /// let state = QueryState::<RefRO<u32>, Without<char>>::new(&mut world);
    /// let char_id = world.component_id::<char>().unwrap();
    /// assert!(state.access().excluded.contains(char_id));
    /// ```
    pub fn access(&self) -> &FilteredAccess {
        &self.access
    }

    /// Components read and written.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, RefRW};
    /// let mut world = World::new();
    /// let state = QueryState::<(RefRW<u32>, RefRO<char>)>::new(&mut world);
    /// let (u, c) = (world.component_id::<u32>().unwrap(), world.component_id::<char>().unwrap());
    /// assert!(state.component_access().writes().contains(u));
    /// assert!(state.component_access().reads().contains(c));
    /// ```
    pub fn component_access(&self) -> &Access {
        &self.access.access
    }

    /// The archetypes matched so far, in id order.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn((2u32, 'a'));
    /// world.spawn(('b',));
    /// let state = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(state.matched_archetypes().len(), 2);
    /// ```
    pub fn matched_archetypes(&self) -> &[ArchetypeId] {
        &self.matched
    }

    /// Whether an archetype with `signature` matches.
    ///
    /// ```
    /// # use ecs_core::{Signature, World};
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// let state = QueryState::<RefRO<u32>>::new(&mut world);
    /// let id = world.component_id::<u32>().unwrap();
    /// assert!(state.matches_signature(&Signature::from_ids([id])));
    /// assert!(!state.matches_signature(&Signature::new()));
    /// ```
    pub fn matches_signature(&self, signature: &Signature) -> bool {
        signature.is_superset(&self.access.required)
            && signature.is_disjoint(&self.access.excluded)
            && Q::matches(&self.query, signature)
            && F::matches(&self.filter, signature)
    }

    /// Tests the archetypes created since the last call; O(new archetypes).
    ///
    /// # Panics
    /// If `world` is not the world this state was built for.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
    /// world.spawn((1u32,));
    /// assert!(state.matched_archetypes().is_empty());
    /// state.update_archetypes(&world);
    /// assert_eq!(state.matched_archetypes().len(), 1);
    /// ```
    pub fn update_archetypes(&mut self, world: &World) {
        self.update_from(world.id(), world.archetypes());
    }

    /// [`QueryState::update_archetypes`] given the world's id and archetypes, which the
    /// world's query cache borrows beside itself.
    ///
    /// # Panics
    /// If `world` is not the world this state was built for.
    pub(crate) fn update_from(&mut self, world: WorldId, archetypes: &[Archetype]) {
        assert!(
            world == self.world_id,
            "query state for `{}` used with a world it was not built for",
            type_name::<Q>()
        );
        for arch in &archetypes[self.archetypes_seen..] {
            if self.matches_signature(arch.signature()) {
                self.matched.push(arch.id());
                self.cached.push((
                    Q::archetype_fetch(&self.query, arch),
                    F::archetype_fetch(&self.filter, arch),
                ));
                let layout = arch.layout();
                let cols = self.touched.iter().map(|&id| {
                    // Chunks are at most 1 MiB, so offsets and sizes fit in `u32`.
                    arch.column(id)
                        .map_or((0, 0), |c| (layout.offset(c) as u32, layout.size(c) as u32))
                });
                self.prefetch_cols.extend(cols);
            }
        }
        self.archetypes_seen = archetypes.len();
    }

    /// The first tick the next run's change filters pass (0: never run, everything passes).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(state.last_seen(), 0);
    /// let run = state.start_run(&world);
    /// assert_eq!(state.last_seen(), run.tick() + 1);
    /// ```
    pub fn last_seen(&self) -> Tick {
        self.last_seen
    }

    /// Sets [`QueryState::last_seen`]: for rewinding a reader with the world it reads (a
    /// simulation snapshot's restore), never needed otherwise.
    pub fn set_last_seen(&mut self, tick: Tick) {
        self.last_seen = tick;
    }

    /// Starts a run: refreshes the cache for `world`, advances the world's change tick, and
    /// returns the run's window (the next run's changes start after this run's writes).
    ///
    /// # Panics
    /// If `world` is not the world this state was built for.
    pub fn start_run(&mut self, world: &World) -> RunTicks {
        self.update_archetypes(world);
        self.refresh_chunk_list(world.chunk_set_version(), world.archetypes());
        let tick = world.advance_tick();
        let last_seen = std::mem::replace(&mut self.last_seen, tick + 1);
        RunTicks { tick, last_seen }
    }

    /// Brings the chunk list up to date, if a loop has asked for it: `version` is the world's
    /// chunk set version and `archetypes` its archetypes, which `update_from` has matched.
    pub(crate) fn refresh_chunk_list(&mut self, version: u64, archetypes: &[Archetype]) {
        let matched = matched_for_list(
            &self.matched,
            &self.prefetch_cols,
            self.touched.len(),
            archetypes,
        );
        self.chunk_list.refresh(version, matched);
    }

    /// The chunk list for a loop over `world`: the state's own if current, else one built into
    /// `scratch` (and the state's is rebuilt at its next run start).
    #[inline]
    pub(crate) fn chunk_records<'a>(
        &'a self,
        world: &World,
        scratch: &'a mut Vec<ChunkRecord>,
    ) -> &'a [ChunkRecord] {
        let version = world.chunk_set_version();
        let matched = || {
            matched_for_list(
                &self.matched,
                &self.prefetch_cols,
                self.touched.len(),
                world.archetypes(),
            )
        };
        if let Some(records) = self.chunk_list.get(version, self.matched.len()) {
            // Every change to a chunk list bumps the version: a missed bump shows up here, in
            // every native test run (Miri, there for the unsafe code, skips the rebuild).
            debug_assert!(
                cfg!(miri) || {
                    chunk_list::build(matched(), scratch);
                    records == scratch.as_slice()
                },
                "a chunk list changed without the chunk set version"
            );
            return records;
        }
        scratch.clear();
        chunk_list::build(matched(), scratch);
        scratch
    }

    /// Whether the cache is up to date for `world`: built for it, and no archetype was
    /// added since the last update.
    #[inline]
    pub(crate) fn is_current(&self, world: &World) -> bool {
        world.id() == self.world_id && world.archetypes().len() == self.archetypes_seen
    }

    /// Panics unless `world` is this state's world: its cached column positions are only
    /// valid there.
    #[inline]
    pub(crate) fn check_world(&self, world: &World) {
        assert!(
            world.id() == self.world_id,
            "query state for `{}` used with a world it was not built for",
            type_name::<Q>()
        );
    }

    /// Chooses the chunk loop `for_each` runs ([`Iteration`]; results never depend on it).
    pub fn set_iteration(&mut self, iteration: Iteration) {
        self.iteration = iteration;
    }

    /// The chunk loop `for_each` runs; [`Iteration::loop_name`] names it for reports.
    pub fn iteration(&self) -> Iteration {
        self.iteration
    }

    /// Starts loading the columns this query touches in chunk `i + 1` of `arch`, the `k`-th
    /// matched archetype, if that chunk exists and the archetype's touched bytes exceed the
    /// L2 cache (see `prefetch_above`).
    #[inline(always)]
    pub(crate) fn prefetch_next(&self, k: usize, arch: &Archetype, i: usize) {
        let Some(next) = arch.chunks().get(i + 1) else {
            return;
        };
        let row_bytes: usize = self.prefetch_cols(k).iter().map(|&(_, s)| s as usize).sum();
        if arch.len() * row_bytes > prefetch_above() {
            self.prefetch_chunk(k, next);
        }
    }

    /// Starts loading the columns this query touches in `chunk`, of the `k`-th matched
    /// archetype (a hint: see [`Chunk::prefetch_column`]).
    #[inline(always)]
    pub(crate) fn prefetch_chunk(&self, k: usize, chunk: &Chunk) {
        for &(offset, size) in self.prefetch_cols(k) {
            chunk.prefetch_column(offset as usize, size as usize);
        }
    }

    /// `(offset, element size)` of each column this query touches in the `k`-th matched
    /// archetype (`(0, 0)` where the archetype lacks it).
    #[inline(always)]
    pub(crate) fn prefetch_cols(&self, k: usize) -> &[(u32, u32)] {
        let n = self.touched.len();
        &self.prefetch_cols[k * n..(k + 1) * n]
    }

    /// Whether the query filters single rows (a `Changed` or `Added` filter).
    pub(crate) const ROW_FILTERED: bool = Q::ROW_FILTERED || F::ROW_FILTERED;

    /// Whether the query can reject whole chunks of a matched archetype (change filters).
    pub(crate) const CHUNK_FILTERED: bool = Q::CHUNK_FILTERED || F::CHUNK_FILTERED;

    /// Whether a change filter lets chunk `chunk` of the `k`-th matched archetype through
    /// (the O(1) test: some row may pass).
    #[inline(always)]
    pub(crate) fn chunk_passes(&self, k: usize, chunk: &Chunk, window: ChangeWindow) -> bool {
        let (q, f) = &self.cached[k];
        Q::chunk_matches(q, chunk, window) && F::chunk_matches(f, chunk, window)
    }

    /// Whether every row of a chunk that passed `chunk_passes` passes (no row filter, or a
    /// bulk stamp in the window).
    #[inline(always)]
    pub(crate) fn rows_all_pass(&self, k: usize, chunk: &Chunk, window: ChangeWindow) -> bool {
        let (q, f) = &self.cached[k];
        !Self::ROW_FILTERED
            || (Q::rows_all_match(q, chunk, window) && F::rows_all_match(f, chunk, window))
    }

    /// Whether row `row` of a chunk that passed `chunk_passes` passes.
    #[inline(always)]
    pub(crate) fn row_passes(
        &self,
        k: usize,
        chunk: &Chunk,
        row: usize,
        window: ChangeWindow,
    ) -> bool {
        let (q, f) = &self.cached[k];
        Q::row_matches(q, chunk, row, window) && F::row_matches(f, chunk, row, window)
    }

    /// The chunk classification, the one place every run (iteration, `for_each`,
    /// `for_each_chunk`, the parallel splits, `get`, `count`) decides which rows of `chunk` (of
    /// matched archetype `k`) it visits: first the O(1) change test of the chunk, then enable
    /// bits and row ticks; `window` is `None` to test enable bits only. For
    /// [`ChunkRows::Masked`], `mask` holds the passing rows (possibly none).
    #[inline(always)]
    pub(crate) fn classify(
        &self,
        k: usize,
        chunk: &Chunk,
        window: Option<ChangeWindow>,
        mask: &mut RowMask,
    ) -> ChunkRows {
        if window.is_some_and(|w| !self.chunk_passes(k, chunk, w)) {
            return ChunkRows::Rejected;
        }
        match self.chunk_rows(k, chunk, window) {
            Rows::All => ChunkRows::All,
            Rows::None => ChunkRows::Empty,
            Rows::Some => {
                self.fill_mask(k, chunk, window, mask);
                ChunkRows::Masked
            }
        }
    }

    /// Whether row `row` of `chunk` (of matched archetype `k`) passes by enable bits: the
    /// one-row form of the classification, O(elements), for `get`.
    #[inline(always)]
    pub(crate) fn row_enabled(&self, k: usize, chunk: &Chunk, row: usize) -> bool {
        let (q, f) = &self.cached[k];
        Q::row_enabled(q, chunk, row) && F::row_enabled(f, chunk, row)
    }

    /// Which rows of `chunk` (of matched archetype `k`) pass by enable bits and, for a chunk
    /// that passed `chunk_passes` in `window`, by row ticks; `None` for enable bits only.
    #[inline(always)]
    fn chunk_rows(&self, k: usize, chunk: &Chunk, window: Option<ChangeWindow>) -> Rows {
        let (q, f) = &self.cached[k];
        let rows = Q::enabled_rows(q, chunk).and(F::enabled_rows(f, chunk));
        match window {
            Some(window) if rows != Rows::None && !self.rows_all_pass(k, chunk, window) => {
                Rows::Some
            }
            _ => rows,
        }
    }

    /// Fills `mask` with the rows of `chunk` (of matched archetype `k`) that `chunk_rows`
    /// passes, for chunks where it answered [`Rows::Some`].
    #[inline]
    fn fill_mask(&self, k: usize, chunk: &Chunk, window: Option<ChangeWindow>, mask: &mut RowMask) {
        let (q, f) = &self.cached[k];
        let window = window.filter(|&w| !self.rows_all_pass(k, chunk, w));
        mask.fill(chunk.len(), |words| {
            Q::and_rows(q, chunk, words);
            F::and_rows(f, chunk, words);
            let Some(window) = window else { return };
            Q::and_row_marks(q, chunk, window, words);
            F::and_row_marks(f, chunk, window, words);
        });
    }

    /// How many rows of `chunk` pass by enable bits and, given `window`, by change filters.
    pub(crate) fn passing_count(
        &self,
        k: usize,
        chunk: &Chunk,
        window: Option<ChangeWindow>,
    ) -> usize {
        let mut mask = RowMask::default();
        match self.classify(k, chunk, window, &mut mask) {
            ChunkRows::All => chunk.len(),
            ChunkRows::Rejected | ChunkRows::Empty => 0,
            ChunkRows::Masked => mask.count(),
        }
    }

    #[inline(always)]
    pub(crate) fn cached(&self, k: usize) -> &Q::ArchetypeFetch {
        &self.cached[k].0
    }

    /// [`QueryState::cached`] without the bound check.
    ///
    /// # Safety
    /// `k < self.matched.len()` (a chunk list's records name matched archetypes).
    #[inline(always)]
    pub(crate) unsafe fn cached_unchecked(&self, k: usize) -> &Q::ArchetypeFetch {
        debug_assert!(k < self.cached.len());
        // SAFETY: `cached.len() == matched.len()` (invariant 2) and `k` is below (caller).
        unsafe { &self.cached.get_unchecked(k).0 }
    }
}

/// A state's matched archetypes as its chunk list sees them: `matched` and `prefetch_cols` are
/// the state's fields, `touched` its touched column count, `archetypes` the world's.
fn matched_for_list<'a>(
    matched: &'a [ArchetypeId],
    prefetch_cols: &'a [(u32, u32)],
    touched: usize,
    archetypes: &'a [Archetype],
) -> impl ExactSizeIterator<Item = MatchedArchetype<'a>> + 'a {
    let prefetch_above = prefetch_above();
    matched
        .iter()
        .enumerate()
        .map(move |(k, id)| MatchedArchetype {
            archetype: &archetypes[id.index()],
            touched: &prefetch_cols[k * touched..(k + 1) * touched],
            prefetch_above,
        })
}

/// The touched bytes of an archetype above which a run prefetches its next chunk: the L2 cache
/// the machine reports (1 MiB where it reports none). Below, a pass finds the columns in cache
/// and the prefetches only occupy load slots; from memory they pay (docs/performance.md,
/// "Design measurements").
fn prefetch_above() -> usize {
    static AT: OnceLock<usize> = OnceLock::new();
    *AT.get_or_init(|| CacheSizes::detect().l2.unwrap_or(1 << 20))
}
