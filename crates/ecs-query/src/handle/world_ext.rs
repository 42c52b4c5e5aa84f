//! `world.query::<Q>()`: one-shot queries straight off a world.
//!
//! [`QueryExt::query`] takes the world's cached [`QueryState`] for the query type (built on
//! the first call, then only brought up to date with archetypes created since: see
//! `state/cache.rs`) and wraps it with the world, exclusively borrowed, in a [`QueryBorrow`];
//! each of its methods consumes it, so the items borrow the world. A one-shot query sees every
//! chunk as changed; keep a `QueryState` to see only what changed since its last run.

use ecs_core::{Entity, World};

use crate::error::QueryError;
use crate::fetch::{ReadOnlyQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::handle::shared::SharedQuery;
use crate::run::chunk_view::ChunkView;
use crate::run::iter::QueryIter;
use crate::run::QueryRun;
use crate::state::cache::cached_state;
use crate::state::{QueryState, RunTicks};

/// Adds `query` to [`World`].
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// world.spawn((1u32,));
/// assert_eq!(world.query::<RefRO<u32>>().count(), 1);
/// ```
pub trait QueryExt {
    /// A one-shot query; filters go inside the tuple (`(RefRO<A>, With<B>)`).
    ///
    /// # Panics
    /// If the query aliases itself; the message names the component.
    ///
    /// ```
    /// use ecs_core::World;
    /// use ecs_query::{QueryExt, RefRO, RefRW, With};
    /// let mut world = World::new();
    /// world.spawn((1u32, 'a'));
    /// world.spawn((2u32,));
    /// world.query::<(RefRW<u32>, With<char>)>().for_each(|(n, ())| *n *= 10);
    /// let mut all: Vec<u32> = world.query::<RefRO<u32>>().iter().copied().collect();
    /// all.sort();
    /// assert_eq!(all, [2, 10]);
    /// ```
    fn query<Q: WorldQuery + 'static>(&mut self) -> QueryBorrow<'_, Q>;

    /// A one-shot query with a separate filter parameter.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO, Without};
    /// let mut world = World::new();
    /// world.spawn((1u32, 'a'));
    /// world.spawn((2u32,));
    /// let query = world.query_filtered::<RefRO<u32>, Without<char>>();
    /// let only: Vec<u32> = query.iter().copied().collect();
    /// assert_eq!(only, [2]);
    /// ```
    fn query_filtered<Q: WorldQuery + 'static, F: QueryFilter + 'static>(
        &mut self,
    ) -> QueryBorrow<'_, Q, F>;

    /// A read-only one-shot query through `&World`: any number can be alive at once, beside
    /// `world.get` and `world.entity`. See [`SharedQuery`].
    ///
    /// # Panics
    /// If the query aliases itself (it cannot, being read-only, unless a hand-written
    /// `WorldQuery` does).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((1u32, 'a'));
    /// let (numbers, letters) = (world.query_ref::<RefRO<u32>>(), world.query_ref::<RefRO<char>>());
    /// assert_eq!((numbers.count(), letters.count()), (1, 1));
    /// ```
    fn query_ref<Q: ReadOnlyQuery + 'static>(&self) -> SharedQuery<'_, Q>;

    /// [`QueryExt::query_ref`] with a separate filter parameter.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO, Without};
    /// let mut world = World::new();
    /// world.spawn((1u32, 'a'));
    /// world.spawn((2u32,));
    /// assert_eq!(world.query_ref_filtered::<RefRO<u32>, Without<char>>().single(), Ok(&2));
    /// ```
    fn query_ref_filtered<Q: ReadOnlyQuery + 'static, F: QueryFilter + 'static>(
        &self,
    ) -> SharedQuery<'_, Q, F>;
}

impl QueryExt for World {
    fn query<Q: WorldQuery + 'static>(&mut self) -> QueryBorrow<'_, Q> {
        self.query_filtered::<Q, ()>()
    }

    fn query_filtered<Q: WorldQuery + 'static, F: QueryFilter + 'static>(
        &mut self,
    ) -> QueryBorrow<'_, Q, F> {
        let (world, state) = cached_state(self);
        QueryBorrow { world, state }
    }

    fn query_ref<Q: ReadOnlyQuery + 'static>(&self) -> SharedQuery<'_, Q> {
        SharedQuery::new(self)
    }

    fn query_ref_filtered<Q: ReadOnlyQuery + 'static, F: QueryFilter + 'static>(
        &self,
    ) -> SharedQuery<'_, Q, F> {
        SharedQuery::new(self)
    }
}

/// A query over an exclusively borrowed world; each method consumes it.
///
/// # Invariants
/// 1. `world` was borrowed exclusively for `'w` (`&'w mut World`, downgraded), so nothing else
///    reads or writes it while `'w` lasts; `state` is its cached state for `Q` and `F`, up to
///    date with its archetypes (which cannot change during `'w`).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// world.spawn((1u32,));
/// assert_eq!(world.query::<RefRO<u32>>().count(), 1);
/// ```
pub struct QueryBorrow<'w, Q: WorldQuery, F: QueryFilter = ()> {
    world: &'w World,
    state: &'w QueryState<Q, F>,
}

impl<'w, Q: WorldQuery, F: QueryFilter> QueryBorrow<'w, Q, F> {
    /// The query's run over the borrowed world in the window `ticks`: every method below is
    /// one of the run's.
    #[inline]
    fn run(self, ticks: RunTicks) -> QueryRun<'w, 'w, Q, F> {
        // SAFETY: the world is exclusively ours for `'w` (invariant 1), and the run is built
        // once, by a method that consumes `self`.
        unsafe { QueryRun::new(self.state, self.world, ticks) }
    }

    /// The window of a run: the world's tick advances, every change counts as unseen.
    #[inline]
    fn one_shot(self) -> QueryRun<'w, 'w, Q, F> {
        let ticks = RunTicks::one_shot(self.world);
        self.run(ticks)
    }

    /// Calls `f` on every matched entity.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.query::<RefRW<u32>>().for_each(|n| *n += 1);
    /// assert_eq!(world.get::<u32>(e), Ok(&2));
    /// ```
    pub fn for_each(self, f: impl FnMut(Q::Item<'w>)) {
        self.one_shot().for_each(f);
    }

    /// Calls `f` once per matched chunk with its column slices.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.query::<RefRW<u32>>().for_each_chunk(|mut view| view.columns().fill(7));
    /// assert_eq!(world.get::<u32>(e), Ok(&7));
    /// ```
    pub fn for_each_chunk(self, f: impl FnMut(ChunkView<'_, Q>)) {
        self.one_shot().for_each_chunk(f);
    }

    /// Calls `f` on every matched entity from rayon's pool.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.query::<RefRW<u32>>().par_for_each(|n| *n *= 3);
    /// assert_eq!(world.get::<u32>(e), Ok(&3));
    /// ```
    pub fn par_for_each(self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        self.one_shot().par_for_each(f);
    }

    /// An iterator over the items.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn((2u32,));
    /// assert_eq!(world.query::<RefRO<u32>>().iter().sum::<u32>(), 3);
    /// ```
    pub fn iter(self) -> QueryIter<'w, 'w, Q, F> {
        self.one_shot().iter()
    }

    /// The item of one entity.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// *world.query::<RefRW<u32>>().get(e).unwrap() = 5;
    /// assert_eq!(world.get::<u32>(e), Ok(&5));
    /// ```
    pub fn get(self, entity: Entity) -> Result<Q::Item<'w>, QueryError> {
        // Not a run: the tick stays, as it did for a fresh state's `get`.
        let ticks = RunTicks::fresh(self.world);
        self.run(ticks).get(entity)
    }

    /// The item of the only matched entity.
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryError, QueryExt, RefRW};
    /// let mut world = World::new();
    /// let player = world.spawn((100u32,));
    /// *world.query::<RefRW<u32>>().single().unwrap() -= 1;
    /// assert_eq!(world.get::<u32>(player), Ok(&99));
    /// world.spawn((1u32,));
    /// assert!(matches!(world.query::<RefRW<u32>>().single(), Err(QueryError::MultipleEntities { .. })));
    /// ```
    pub fn single(self) -> Result<Q::Item<'w>, QueryError> {
        self.iter().single()
    }

    /// Number of matched entities, O(matched chunks).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO, With};
    /// let mut world = World::new();
    /// world.spawn((1u32, 'a'));
    /// world.spawn((2u32,));
    /// assert_eq!(world.query::<(RefRO<u32>, With<char>)>().count(), 1);
    /// ```
    pub fn count(self) -> usize {
        // Not a run (the tick stays); the cached state's window is a fresh one (`state/cache.rs`).
        let ticks = RunTicks::fresh(self.world);
        self.run(ticks).count()
    }
}
