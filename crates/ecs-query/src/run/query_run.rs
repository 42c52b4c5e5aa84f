//! [`QueryRun`]: one run of a [`QueryState`] over a world, the core every query handle uses.
//!
//! A run is a state, the world it matches and the run's change window ([`RunTicks`]). Building
//! one is the only unsafe step of running a query: [`QueryRun::new`] takes the caller's word
//! that the access the query declares is free for as long as the run's items live. Every loop
//! (`iter`, `for_each`, `for_each_chunk`, the `par_` methods, `get`, `count`) is then a safe
//! method of the run. The handles build their run from what they know:
//! - [`QueryState::run`] and [`QueryState::run_shared`] from `&mut World` / a read-only query;
//! - [`QueryBorrow`](crate::QueryBorrow) and [`SharedQuery`](crate::SharedQuery), the one-shot
//!   queries, from their borrow of the world;
//! - a scheduler's system parameter from the access sets it has proven disjoint.
//!
//! The methods consume the run, so items live as long as the world borrow `'w`; a handle that
//! keeps its run calls [`QueryRun::reborrow`] (or, for reads, copies it: a read-only run is
//! `Copy`) to get items tied to its own borrow.
//!
//! `D` is the query whose items the run yields: `Q` itself, or `Q::ReadOnly` for the shared view
//! [`QueryRun::as_readonly`] gives out. Both fetch through the state's cached `Q` columns.

use std::marker::PhantomData;

use ecs_core::{Entity, World};

use crate::error::QueryError;
use crate::fetch::{ReadOnlyQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::run::chunk_view::ChunkView;
use crate::run::iter::QueryIter;
use crate::state::{QueryState, RunTicks};

/// One run of a [`QueryState`] over its world: every way to visit the matched rows, as safe
/// methods.
///
/// # Invariant
/// While `'w` lasts, nothing but this run (and runs it was reborrowed or copied from) accesses
/// the components `D` writes, and nothing writes the components `D` or `F` read; `state` was
/// built for `world`; `ticks` belong to `world`. A writing run is never copied, and its items
/// are handed out by methods that consume it, so two `&mut` items of one row never coexist.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryState, RefRO, RefRW};
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
/// let mut run = state.run(&mut world);
/// run.reborrow().for_each(|n| *n += 1);
/// *run.reborrow().get(e).unwrap() += 1;
/// assert_eq!(run.as_readonly().iter().copied().collect::<Vec<_>>(), [3]);
/// ```
///
/// A writing run is not `Copy`, and each reborrow's items borrow it mutably, so two `&mut` to
/// one row cannot be alive at once:
///
/// ```compile_fail
/// # use ecs_core::World;
/// # use ecs_query::{QueryState, RefRW};
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
/// let mut run = state.run(&mut world);
/// let a = run.reborrow().get(e).unwrap();
/// let b = run.reborrow().get(e).unwrap(); // `run` is still borrowed by `a`
/// *a += *b;
/// ```
pub struct QueryRun<'w, 's, Q: WorldQuery, F: QueryFilter = (), D = Q> {
    world: &'w World,
    state: &'s QueryState<Q, F>,
    ticks: RunTicks,
    _items: PhantomData<fn() -> D>,
}

impl<'w, 's, Q: WorldQuery, F: QueryFilter, D> QueryRun<'w, 's, Q, F, D>
where
    D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
{
    /// A run of `state` over `world` in the window `ticks`.
    ///
    /// `ticks` should come from `world` ([`QueryState::start_run`], or the world's current
    /// tick); a foreign window only misreports which rows changed.
    ///
    /// # Safety
    /// For as long as `'w`, nothing else accesses the components `D` writes, and nothing writes
    /// the components `D` or `F` read (as a scheduler proves with access sets, or `&mut World`
    /// guarantees). The run checks that `state` is `world`'s.
    ///
    /// # Panics
    /// If `state` was built for another world.
    #[inline]
    pub unsafe fn new(state: &'s QueryState<Q, F>, world: &'w World, ticks: RunTicks) -> Self {
        state.check_world(world);
        Self {
            world,
            state,
            ticks,
            _items: PhantomData,
        }
    }

    /// The same run, borrowed: items of the returned run borrow `self`, so `self` can run
    /// again afterwards.
    #[inline]
    pub fn reborrow(&mut self) -> QueryRun<'_, 's, Q, F, D> {
        QueryRun {
            world: self.world,
            state: self.state,
            ticks: self.ticks,
            _items: PhantomData,
        }
    }

    /// A shared, read-only view of this run: `&T` for every `RefRW<T>`; `Copy`, usable from
    /// many threads. Its items borrow `self`, so no `&mut` item of this run is alive beside it.
    #[inline]
    pub fn as_readonly(&self) -> QueryRun<'_, 's, Q, F, Q::ReadOnly> {
        QueryRun {
            world: self.world,
            state: self.state,
            ticks: self.ticks,
            _items: PhantomData,
        }
    }

    /// The run's change window.
    pub fn ticks(&self) -> RunTicks {
        self.ticks
    }

    /// The state the run walks.
    pub fn state(&self) -> &'s QueryState<Q, F> {
        self.state
    }

    /// An iterator over the items.
    pub fn iter(self) -> QueryIter<'w, 's, Q, F, D> {
        // SAFETY: the run's invariant grants `D`'s access for `'w` and its ticks are the
        // world's; the iterator yields each row once.
        unsafe { self.state.run_iter::<D>(self.world, self.ticks) }
    }

    /// Calls `f` on every matched entity: an internal loop over each chunk's columns, faster
    /// than `iter` where the loop body is small.
    pub fn for_each(self, f: impl FnMut(D::Item<'w>)) {
        // SAFETY: as in `iter`; the loop hands each row out once.
        unsafe { self.state.run_for_each::<D>(self.world, self.ticks, f) }
    }

    /// Calls `f` on every matched entity, from the current
    /// [`Parallelism`](crate::Parallelism), split into row ranges of chunks.
    pub fn par_for_each(self, f: impl Fn(D::Item<'_>) + Send + Sync) {
        // SAFETY: as in `iter`; the tasks are disjoint row ranges.
        unsafe { self.state.run_par_for_each::<D>(self.world, self.ticks, f) }
    }

    /// The item of one entity.
    ///
    /// Cost: the entity's location, a binary search of the matched archetypes, and per element
    /// an O(1) test of the row (its enable bit, its row ticks for a change filter).
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    pub fn get(self, entity: Entity) -> Result<D::Item<'w>, QueryError> {
        // SAFETY: as in `iter`; one item is handed out.
        unsafe { self.state.run_get::<D>(self.world, self.ticks, entity) }
    }

    /// The items of several distinct entities at once (a pair-wise interaction: an attacker
    /// and its victim).
    ///
    /// # Errors
    /// [`QueryError::AliasedEntities`] if an entity is named twice, else as [`QueryRun::get`]
    /// for the first entity that fails.
    pub fn get_many<const N: usize>(
        self,
        entities: [Entity; N],
    ) -> Result<[D::Item<'w>; N], QueryError> {
        for (i, e) in entities.iter().enumerate() {
            if entities[..i].contains(e) {
                return Err(QueryError::AliasedEntities(*e));
            }
            self.state.run_find(self.world, self.ticks, *e)?;
        }
        // SAFETY: as in `iter`; the entities are distinct, so their rows are, and each row's
        // item is handed out once.
        Ok(entities.map(|e| unsafe {
            self.state
                .run_get::<D>(self.world, self.ticks, e)
                .unwrap_or_else(|_| unreachable!("found above"))
        }))
    }

    /// The item of the only matched entity (the player, the camera).
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`], naming the query.
    pub fn single(self) -> Result<D::Item<'w>, QueryError> {
        self.iter().single()
    }

    /// Whether `entity` is alive and matched.
    pub fn contains(&self, entity: Entity) -> bool {
        self.state.run_find(self.world, self.ticks, entity).is_ok()
    }

    /// Number of matched entities: O(matched chunks), touching no column.
    pub fn count(&self) -> usize {
        self.state.count_in(self.world, self.ticks)
    }

    /// Whether no entity matches.
    pub fn is_empty(&self) -> bool {
        self.as_readonly().iter().next().is_none()
    }
}

impl<'w, 's, Q: ReadOnlyQuery, F: QueryFilter> QueryRun<'w, 's, Q, F> {
    /// A run of a read-only query over a shared world; safe, since `&'w World` keeps every
    /// writer out for `'w`. `ticks` as for [`QueryRun::new`].
    ///
    /// # Panics
    /// If `state` was built for another world.
    #[inline]
    pub fn read_only(state: &'s QueryState<Q, F>, world: &'w World, ticks: RunTicks) -> Self {
        // SAFETY: `Q` and `F` only read (`ReadOnlyQuery`; filters never write), and `&'w World`
        // keeps every writer out while `'w` lasts.
        unsafe { Self::new(state, world, ticks) }
    }
}

/// The methods whose items are `Q`'s own: chunk views and the `par_` methods with a state.
impl<'w, 's, Q: WorldQuery, F: QueryFilter> QueryRun<'w, 's, Q, F, Q> {
    /// Calls `f` once per matched chunk with a view of its column slices.
    pub fn for_each_chunk(self, f: impl FnMut(ChunkView<'_, Q>)) {
        // SAFETY: the run's invariant grants `Q`'s access for `'w`; each chunk is viewed once.
        unsafe { self.state.run_for_each_chunk(self.world, self.ticks, f) }
    }

    /// Calls `f` once per matched chunk, chunks in parallel.
    pub fn par_for_each_chunk(self, f: impl Fn(ChunkView<'_, Q>) + Send + Sync) {
        // SAFETY: as in `for_each_chunk`; one task per chunk.
        unsafe { self.state.run_par_for_each_chunk(self.world, self.ticks, f) }
    }

    /// `par_for_each` with a state per rayon job made by `init`; how many states are made
    /// depends on the pool, so use it for work whose result does not depend on them.
    pub fn par_for_each_init<S>(
        self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) {
        // SAFETY: as in `for_each_chunk`; the tasks are disjoint row ranges.
        unsafe {
            self.state
                .run_par_for_each_init(self.world, self.ticks, init, f)
        }
    }

    /// Runs `f` on every row with a state that `init` makes per task, and returns the states
    /// in row order (tasks are row ranges, listed in row order), whatever the pool.
    pub fn par_for_each_collect<S: Send>(
        self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) -> Vec<S> {
        // SAFETY: as in `par_for_each_init`.
        unsafe {
            self.state
                .run_par_for_each_collect(self.world, self.ticks, init, f)
        }
    }

    /// Folds every item in parallel: each chunk from `identity()` with `fold`, then the
    /// chunks' results with `reduce`, in chunk order, so the result is bit-identical on any
    /// number of threads.
    pub fn par_fold<T: Send>(
        self,
        identity: impl Fn() -> T + Send + Sync,
        fold: impl Fn(T, Q::Item<'_>) -> T + Send + Sync,
        reduce: impl Fn(T, T) -> T,
    ) -> T {
        // SAFETY: as in `par_for_each_init`.
        unsafe {
            self.state
                .run_par_fold(self.world, self.ticks, identity, fold, reduce)
        }
    }
}

impl<Q: WorldQuery, F: QueryFilter, D: ReadOnlyQuery> Clone for QueryRun<'_, '_, Q, F, D> {
    fn clone(&self) -> Self {
        *self
    }
}

/// A read-only run is shared freely: its items are shared references.
impl<Q: WorldQuery, F: QueryFilter, D: ReadOnlyQuery> Copy for QueryRun<'_, '_, Q, F, D> {}

impl<Q: WorldQuery, F: QueryFilter> QueryState<Q, F> {
    /// This state's run over `world`, borrowed exclusively: starts a run (refreshing the
    /// archetype cache and advancing the world's change tick) and returns it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((2u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.run(&mut world).for_each(|n| *n *= 10);
    /// assert_eq!(world.get::<u32>(e), Ok(&20));
    /// ```
    pub fn run<'w, 's>(&'s mut self, world: &'w mut World) -> QueryRun<'w, 's, Q, F> {
        let ticks = self.start_run(world);
        // SAFETY: `&'w mut World` excludes every other access for `'w`; `ticks` were just
        // started on it.
        unsafe { QueryRun::new(self, world, ticks) }
    }

    /// A run of a read-only query over a shared world (several can be alive at once).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// world.spawn((2u32,));
    /// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
    /// let run = state.run_shared(&world);
    /// assert_eq!((run.count(), run.iter().sum::<u32>()), (1, 2));
    /// ```
    pub fn run_shared<'w, 's>(&'s mut self, world: &'w World) -> QueryRun<'w, 's, Q, F>
    where
        Q: ReadOnlyQuery,
    {
        let ticks = self.start_run(world);
        QueryRun::read_only(self, world, ticks)
    }

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
        self.run_shared(world).iter()
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
        self.run(world).iter()
    }

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
        let ticks = self.start_run(world);
        // SAFETY: the access for `'w` is this fn's caller's contract, which is
        // `QueryRun::new`'s; `ticks` were just started on `world`.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.iter()
    }
}
