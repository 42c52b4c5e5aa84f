//! [`QueryState`]: a query's cached matching and access, reused between runs.
//!
//! Building a state registers the query's component types, computes its access set (panicking
//! on self-aliasing) and its required / excluded masks. Each run then only tests archetypes
//! created since the last run (archetypes are append-only), and walks the cached list.
//!
//! Each run advances the world's change tick: writes are stamped with the run's tick and
//! `Changed<T>` passes chunks stamped at or after the state's previous run.

use std::any::type_name;

use ecs_core::{
    Archetype, ArchetypeId, Chunk, ComponentId, Components, Entity, Signature, Tick, World, WorldId,
};
use rayon::prelude::*;

use crate::access::{Access, AccessConflict, FilteredAccess};
use crate::error::QueryError;
use crate::fetch::{ReadOnlyQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::iter::{ChunkView, QueryIter};

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
    access: FilteredAccess,
    /// The components `access` reads or writes: the columns worth prefetching.
    touched: Box<[ComponentId]>,
    matched: Vec<ArchetypeId>,
    /// For `matched[k]`, where the query's and the filter's columns sit in its chunks.
    cached: Vec<(Q::ArchetypeFetch, F::ArchetypeFetch)>,
    /// For `matched[k]`, the (byte offset, element size) in its chunks of each column of
    /// `touched`, at `k * touched.len()..` ((0, 0) where an optional one is absent): computed
    /// once per archetype, read only when a run prefetches a next chunk.
    prefetch_cols: Vec<(u32, u32)>,
    archetypes_seen: usize,
    last_seen: Tick,
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
        let access = Self::compute_access(&query, &filter, world.components())
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
        assert!(
            world.id() == self.world_id,
            "query state for `{}` used with a world it was not built for",
            type_name::<Q>()
        );
        let archetypes = world.archetypes();
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

    /// Starts a run: refreshes the cache, advances the tick, returns `(run tick, last seen)`.
    pub(crate) fn begin_run(&mut self, world: &World) -> (Tick, Tick) {
        self.update_archetypes(world);
        let tick = world.advance_tick();
        let last_seen = std::mem::replace(&mut self.last_seen, tick + 1);
        (tick, last_seen)
    }

    /// Starts loading the columns this query touches in chunk `i + 1` of `arch`, the `k`-th
    /// matched archetype, if that chunk exists.
    #[inline(always)]
    pub(crate) fn prefetch_next(&self, k: usize, arch: &Archetype, i: usize) {
        if let Some(next) = arch.chunks().get(i + 1) {
            let n = self.touched.len();
            for &(offset, size) in &self.prefetch_cols[k * n..(k + 1) * n] {
                next.prefetch_column(offset as usize, size as usize);
            }
        }
    }

    /// Whether a change filter lets chunk `chunk` of the `k`-th matched archetype through.
    #[inline(always)]
    pub(crate) fn chunk_passes(&self, k: usize, chunk: &Chunk, last_seen: Tick) -> bool {
        let (q, f) = &self.cached[k];
        Q::chunk_matches(q, chunk, last_seen) && F::chunk_matches(f, chunk, last_seen)
    }

    /// Where the query's columns sit in the `k`-th matched archetype's chunks.
    #[inline(always)]
    pub(crate) fn cached(&self, k: usize) -> &Q::ArchetypeFetch {
        &self.cached[k].0
    }

    // ----- safe entry points ----------------------------------------------------------------

    /// Iterates a read-only query through a shared world.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn((2u32,));
    /// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(state.iter(&world).sum::<u32>(), 3);
    /// ```
    pub fn iter<'w, 's>(&'s mut self, world: &'w World) -> QueryIter<'w, 's, Q, F>
    where
        Q: ReadOnlyQuery,
    {
        // SAFETY: the query only reads, and `&World` keeps writers out.
        unsafe { self.iter_unchecked(world) }
    }

    /// Iterates, with write access, through an exclusive world borrow.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.iter_mut(&mut world).for_each(|n| *n += 1);
    /// assert_eq!(world.get::<u32>(e), Ok(&2));
    /// ```
    pub fn iter_mut<'w, 's>(&'s mut self, world: &'w mut World) -> QueryIter<'w, 's, Q, F> {
        // SAFETY: `&mut World` excludes every other access; the iterator yields each row once.
        unsafe { self.iter_unchecked(world) }
    }

    /// Calls `f` on every matched entity; an internal loop over each chunk's columns.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.for_each(&mut world, |n| *n *= 5);
    /// assert_eq!(world.get::<u32>(e), Ok(&5));
    /// ```
    pub fn for_each(&mut self, world: &mut World, f: impl FnMut(Q::Item<'_>)) {
        // SAFETY: `&mut World` excludes every other access.
        unsafe { self.for_each_unchecked(world, f) }
    }

    /// Calls `f` once per matched chunk with a view of its column slices.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// world.spawn_batch((0..10u32).map(|i| (i,))).for_each(drop);
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// let mut rows = 0;
    /// state.for_each_chunk(&mut world, |mut view| rows += view.columns().len());
    /// assert_eq!(rows, 10);
    /// ```
    pub fn for_each_chunk(&mut self, world: &mut World, f: impl FnMut(ChunkView<'_, Q>)) {
        // SAFETY: `&mut World` excludes every other access.
        unsafe { self.for_each_chunk_unchecked(world, f) }
    }

    /// Calls `f` on every matched entity from rayon's pool, split into row ranges of chunks.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, RefRW};
    /// let mut world = World::new();
    /// world.spawn_batch((0..100u32).map(|i| (i,))).for_each(drop);
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.par_for_each(&mut world, |n| *n += 1);
    /// let mut read = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(read.iter(&world).sum::<u32>(), (1..=100).sum());
    /// ```
    pub fn par_for_each(&mut self, world: &mut World, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        // SAFETY: `&mut World` excludes every other access.
        unsafe { self.par_for_each_unchecked(world, f) }
    }

    /// The item of one entity of a read-only query.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let other = world.spawn(('x',));
    /// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(state.get(&world, e), Ok(&7));
    /// assert!(state.get(&world, other).is_err());
    /// ```
    pub fn get<'w>(&mut self, world: &'w World, entity: Entity) -> Result<Q::Item<'w>, QueryError>
    where
        Q: ReadOnlyQuery,
    {
        // SAFETY: read-only through `&World`.
        unsafe { self.get_unchecked(world, entity) }
    }

    /// The item of one entity, with write access.
    ///
    /// # Errors
    /// As [`QueryState::get`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// *state.get_mut(&mut world, e).unwrap() = 8;
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// ```
    pub fn get_mut<'w>(
        &mut self,
        world: &'w mut World,
        entity: Entity,
    ) -> Result<Q::Item<'w>, QueryError> {
        // SAFETY: `&mut World` excludes every other access, and one item is handed out.
        unsafe { self.get_unchecked(world, entity) }
    }

    /// Number of matched entities: O(matched chunks), touching no column. Does not count as a
    /// run (the change tick stays).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, With};
    /// let mut world = World::new();
    /// world.spawn((1u32, 'a'));
    /// world.spawn((2u32,));
    /// let mut state = QueryState::<RefRO<u32>, With<char>>::new(&mut world);
    /// assert_eq!(state.count(&world), 1);
    /// ```
    pub fn count(&mut self, world: &World) -> usize {
        self.update_archetypes(world);
        let archetypes = world.archetypes();
        self.matched
            .iter()
            .enumerate()
            .map(|(k, id)| {
                archetypes[id.index()]
                    .chunks()
                    .iter()
                    .filter(|c| self.chunk_passes(k, c, self.last_seen))
                    .map(Chunk::len)
                    .sum::<usize>()
            })
            .sum()
    }

    // ----- unchecked entry points (schedulers) ----------------------------------------------

    /// Iterates through a shared world, even for writing queries.
    ///
    /// # Safety
    /// While the iterator or its items live, nothing else accesses the components this query
    /// writes, and nothing writes the components it reads (as a scheduler proves with access
    /// sets).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world while the iterator lives.
    /// unsafe { state.iter_unchecked(&world) }.for_each(|n| *n = 4);
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn iter_unchecked<'w, 's>(
        &'s mut self,
        world: &'w World,
    ) -> QueryIter<'w, 's, Q, F> {
        let (tick, last_seen) = self.begin_run(world);
        // SAFETY: forwarded caller contract.
        unsafe { QueryIter::new(world, self, tick, last_seen) }
    }

    /// [`QueryState::for_each`] through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::iter_unchecked`], for the duration of the call.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world during the call.
    /// unsafe { state.for_each_unchecked(&world, |n| *n = 4) };
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn for_each_unchecked(&mut self, world: &World, f: impl FnMut(Q::Item<'_>)) {
        // SAFETY: forwarded caller contract.
        unsafe { self.for_each_in(world, f) }
    }

    /// The `for_each` loop, with items of the world's lifetime.
    ///
    /// # Safety
    /// As [`QueryState::iter_unchecked`], for as long as `'w`.
    pub(crate) unsafe fn for_each_in<'w>(
        &mut self,
        world: &'w World,
        mut f: impl FnMut(Q::Item<'w>),
    ) {
        let (tick, last_seen) = self.begin_run(world);
        let archetypes = world.archetypes();
        for (k, (id, (cached, _))) in self.matched.iter().zip(&self.cached).enumerate() {
            let arch = &archetypes[id.index()];
            for (i, chunk) in arch.chunks().iter().enumerate() {
                if !self.chunk_passes(k, chunk, last_seen) {
                    continue;
                }
                self.prefetch_next(k, arch, i);
                // SAFETY: `cached` was found in `arch` (invariant 2), which owns `chunk`; its
                // rows are handed out once each, and exclusivity is the caller's contract.
                unsafe {
                    let mut fetch = Q::fetch(cached, chunk, tick);
                    Q::for_each_row(&mut fetch, chunk.len(), &mut f);
                }
            }
        }
    }

    /// [`QueryState::for_each_chunk`] through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::iter_unchecked`], for the duration of the call.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world during the call.
    /// unsafe { state.for_each_chunk_unchecked(&world, |mut v| v.column_mut::<u32>()[0] = 4) };
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn for_each_chunk_unchecked(
        &mut self,
        world: &World,
        mut f: impl FnMut(ChunkView<'_, Q>),
    ) {
        let (tick, last_seen) = self.begin_run(world);
        let archetypes = world.archetypes();
        for (k, (id, (cached, _))) in self.matched.iter().zip(&self.cached).enumerate() {
            let arch = &archetypes[id.index()];
            for (i, chunk) in arch.chunks().iter().enumerate() {
                if !self.chunk_passes(k, chunk, last_seen) {
                    continue;
                }
                self.prefetch_next(k, arch, i);
                let access = &self.access.access;
                // SAFETY: `cached` was found in `arch` (invariant 2), which owns `chunk`; the
                // view is handed out once per chunk, and exclusivity is the caller's contract.
                let view = unsafe { ChunkView::new(world, cached, access, arch, chunk, tick) };
                f(view);
            }
        }
    }

    /// [`QueryState::par_for_each`] through a shared world.
    ///
    /// # Safety
    /// As [`QueryState::iter_unchecked`], for the duration of the call.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world during the call.
    /// unsafe { state.par_for_each_unchecked(&world, |n| *n = 4) };
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn par_for_each_unchecked(
        &mut self,
        world: &World,
        f: impl Fn(Q::Item<'_>) + Send + Sync,
    ) {
        let (tick, last_seen) = self.begin_run(world);
        let archetypes = world.archetypes();
        let mut tasks: Vec<Task<'_, Q::ArchetypeFetch>> = Vec::new();
        let total: usize = self
            .matched
            .iter()
            .map(|id| archetypes[id.index()].len())
            .sum();
        // Enough pieces to balance the pool, but never smaller than a few dozen rows.
        let batch = (total / (rayon::current_num_threads() * 8)).max(32);
        for (k, (id, (cached, _))) in self.matched.iter().zip(&self.cached).enumerate() {
            for chunk in archetypes[id.index()].chunks() {
                if !self.chunk_passes(k, chunk, last_seen) {
                    continue;
                }
                let mut start = 0;
                while start < chunk.len() {
                    let end = (start + batch).min(chunk.len());
                    tasks.push(Task {
                        cached,
                        chunk,
                        rows: start..end,
                    });
                    start = end;
                }
            }
        }
        let run = |task: Task<'_, Q::ArchetypeFetch>| {
            // SAFETY: `task.cached` was found in the archetype that owns `task.chunk`. Tasks
            // cover disjoint row ranges, so no row is yielded twice; stamping a tick twice is
            // idempotent.
            let mut fetch = unsafe { Q::fetch(task.cached, task.chunk, tick) };
            for row in task.rows {
                // SAFETY: `row < len`, disjoint across tasks.
                f(unsafe { Q::item(&mut fetch, row) });
            }
        };
        if tasks.len() <= 1 {
            tasks.into_iter().for_each(run);
        } else {
            tasks.into_par_iter().for_each(run);
        }
    }

    /// [`QueryState::get`] through a shared world, for any query.
    ///
    /// # Safety
    /// As [`QueryState::iter_unchecked`], while the item lives.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world while the item lives.
    /// *unsafe { state.get_unchecked(&world, e) }.unwrap() = 4;
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn get_unchecked<'w>(
        &mut self,
        world: &'w World,
        entity: Entity,
    ) -> Result<Q::Item<'w>, QueryError> {
        self.update_archetypes(world);
        let loc = world
            .location(entity)
            .ok_or(QueryError::NoSuchEntity(entity))?;
        let arch = &world.archetypes()[loc.archetype.index()];
        let no_match = QueryError::NoMatch {
            entity,
            query: type_name::<Q>(),
        };
        let Ok(k) = self.matched.binary_search(&loc.archetype) else {
            return Err(no_match);
        };
        let (c, row) = arch.split_row(loc.row as usize);
        let chunk = &arch.chunks()[c];
        if !self.chunk_passes(k, chunk, self.last_seen) {
            return Err(no_match);
        }
        // SAFETY: `cached[k]` was found in `arch` (invariant 2), which owns `chunk`;
        // `row < chunk.len()` (entity table invariant); exclusivity is the caller's contract.
        unsafe {
            let mut fetch = Q::fetch(self.cached(k), chunk, world.change_tick());
            Ok(Q::item(&mut fetch, row))
        }
    }
}

/// A slice of one chunk's rows for one parallel worker; `cached` is the query's
/// `ArchetypeFetch` for the chunk's archetype.
struct Task<'w, A> {
    cached: &'w A,
    chunk: &'w Chunk,
    rows: std::ops::Range<usize>,
}
