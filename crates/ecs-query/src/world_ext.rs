//! `world.query::<Q>()`: one-shot queries straight off a world.
//!
//! [`QueryExt::query`] builds a fresh [`QueryState`] and wraps it with the exclusive world
//! borrow in a [`QueryBorrow`]; each of its methods consumes it, so the items borrow the world.
//! Code that runs every frame should keep a `QueryState` instead, which caches its matched
//! archetypes (a fresh state also sees every chunk as changed).

use ecs_core::{Entity, World};

use crate::error::QueryError;
use crate::fetch::{ReadOnlyQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::iter::{ChunkView, QueryIter, StateRef};
use crate::shared::SharedQuery;
use crate::state::QueryState;

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
    fn query<Q: WorldQuery>(&mut self) -> QueryBorrow<'_, Q>;

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
    fn query_filtered<Q: WorldQuery, F: QueryFilter>(&mut self) -> QueryBorrow<'_, Q, F>;

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
    fn query_ref<Q: ReadOnlyQuery>(&self) -> SharedQuery<'_, Q>;

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
    fn query_ref_filtered<Q: ReadOnlyQuery, F: QueryFilter>(&self) -> SharedQuery<'_, Q, F>;
}

impl QueryExt for World {
    fn query<Q: WorldQuery>(&mut self) -> QueryBorrow<'_, Q> {
        self.query_filtered::<Q, ()>()
    }

    fn query_filtered<Q: WorldQuery, F: QueryFilter>(&mut self) -> QueryBorrow<'_, Q, F> {
        let state = QueryState::new(self);
        QueryBorrow { world: self, state }
    }

    fn query_ref<Q: ReadOnlyQuery>(&self) -> SharedQuery<'_, Q> {
        SharedQuery::new(self)
    }

    fn query_ref_filtered<Q: ReadOnlyQuery, F: QueryFilter>(&self) -> SharedQuery<'_, Q, F> {
        SharedQuery::new(self)
    }
}

/// A query over an exclusively borrowed world; each method consumes it.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// world.spawn((1u32,));
/// assert_eq!(world.query::<RefRO<u32>>().count(), 1);
/// ```
pub struct QueryBorrow<'w, Q: WorldQuery, F: QueryFilter = ()> {
    world: &'w mut World,
    state: QueryState<Q, F>,
}

impl<'w, Q: WorldQuery, F: QueryFilter> QueryBorrow<'w, Q, F> {
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
    pub fn for_each(mut self, f: impl FnMut(Q::Item<'w>)) {
        let world: &'w World = self.world;
        // SAFETY: the world is exclusively borrowed for `'w`; each row is yielded once.
        unsafe { self.state.for_each_in(world, f) }
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
    pub fn for_each_chunk(mut self, f: impl FnMut(ChunkView<'_, Q>)) {
        self.state.for_each_chunk(self.world, f);
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
    pub fn par_for_each(mut self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        self.state.par_for_each(self.world, f);
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
    pub fn iter(self) -> QueryIter<'w, 'static, Q, F> {
        let Self { world, mut state } = self;
        let world: &'w World = world;
        let ticks = state.start_run(world);
        let state = StateRef::Owned(Box::new(state));
        // SAFETY: the world is exclusively borrowed for `'w`; the iterator owns the state.
        unsafe { QueryIter::with_state(world, state, ticks.tick(), ticks.last_seen()) }
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
    pub fn get(mut self, entity: Entity) -> Result<Q::Item<'w>, QueryError> {
        let world: &'w World = self.world;
        // SAFETY: the world is exclusively borrowed for `'w`, and one item is handed out.
        unsafe { self.state.get_unchecked(world, entity) }
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
    pub fn single(mut self) -> Result<Q::Item<'w>, QueryError> {
        let world: &'w World = self.world;
        let ticks = self.state.start_run(world);
        // SAFETY: the world is exclusively borrowed for `'w`; the iterator yields each row
        // once, and `single` keeps at most one item.
        unsafe { self.state.iter_at::<Q>(world, ticks) }.single()
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
    pub fn count(mut self) -> usize {
        self.state.count(self.world)
    }
}
