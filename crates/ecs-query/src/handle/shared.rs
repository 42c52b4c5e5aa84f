//! `world.query_ref::<Q>()`: read-only one-shot queries through `&World`.
//!
//! A [`SharedQuery`] holds `&World`, so any number of them (and `world.get`, `world.entity`)
//! can be alive at once, and its methods take `&self`. It borrows the world's cached state
//! for the query type when that is up to date (`world.query::<Q>()` with the same types keeps
//! it so; a shared borrow cannot update it). Otherwise building one costs what building a
//! [`QueryState`] costs (matching every archetype once) plus a copy of the world's component
//! registry, since the query's types are looked up without `&mut World` (see
//! `QueryState::new_shared`); keep a `QueryState` for queries that run every frame.
//!
//! Change filters see every chunk as changed, as on any fresh query state. Writing queries
//! keep [`QueryExt::query`](crate::QueryExt::query), which needs `&mut World`:
//!
//! ```compile_fail
//! # use ecs_core::World;
//! # use ecs_query::{QueryExt, RefRW};
//! let world = World::new();
//! world.query_ref::<RefRW<u32>>(); // `RefRW` writes: not a `ReadOnlyQuery`
//! ```

use ecs_core::{Entity, World};

use crate::error::QueryError;
use crate::fetch::ReadOnlyQuery;
use crate::filter::QueryFilter;
use crate::run::iter::{QueryIter, StateRef};
use crate::run::QueryRun;
use crate::state::cache::current_state;
use crate::state::{QueryState, RunTicks};

/// A read-only query over a shared world, from [`QueryExt::query_ref`](crate::QueryExt::query_ref).
///
/// # Invariants
/// 1. `state` is `world`'s: either its cached state for `Q` and `F`, up to date when
///    borrowed, or built by `QueryState::new_shared` on it; the world's registry and
///    archetypes cannot change while `'w` lasts, and an owned `state` never leaves this value.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO, With};
/// let mut world = World::new();
/// world.spawn((1u32, 'a'));
/// world.spawn((2u32,));
/// let numbers = world.query_ref::<RefRO<u32>>();
/// let tagged = world.query_ref::<(RefRO<u32>, With<char>)>(); // both alive at once
/// assert_eq!(numbers.iter().sum::<u32>(), 3);
/// assert_eq!(tagged.single().unwrap().0, &1);
/// ```
pub struct SharedQuery<'w, Q: ReadOnlyQuery, F: QueryFilter = ()> {
    world: &'w World,
    state: StateRef<'w, Q, F>,
}

impl<'w, Q: ReadOnlyQuery + 'static, F: QueryFilter + 'static> SharedQuery<'w, Q, F> {
    pub(crate) fn new(world: &'w World) -> Self {
        let state = match current_state(world) {
            Some(cached) => StateRef::Borrowed(cached),
            None => StateRef::Owned(Box::new(QueryState::new_shared(world))),
        };
        Self { world, state }
    }
}

impl<'w, Q: ReadOnlyQuery, F: QueryFilter> SharedQuery<'w, Q, F> {
    /// The query's run: the world's current tick, every change counted as unseen.
    #[inline]
    pub fn run(&self) -> QueryRun<'w, '_, Q, F> {
        QueryRun::read_only(&*self.state, self.world, RunTicks::fresh(self.world))
    }

    /// An iterator over the items; `&self`, so several can run at once.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn((2u32,));
    /// let q = world.query_ref::<RefRO<u32>>();
    /// let pairs = q.iter().flat_map(|a| q.iter().map(move |b| a + b)).count();
    /// assert_eq!(pairs, 4);
    /// ```
    pub fn iter(&self) -> QueryIter<'w, '_, Q, F> {
        self.run().iter()
    }

    /// Calls `f` on every matched entity (the chunk-wise loop).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((3u32,));
    /// let mut sum = 0;
    /// world.query_ref::<RefRO<u32>>().for_each(|n| sum += n);
    /// assert_eq!(sum, 3);
    /// ```
    pub fn for_each(&self, f: impl FnMut(Q::Item<'w>)) {
        self.run().for_each(f);
    }

    /// The item of one entity.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// let e = world.spawn((5u32,));
    /// assert_eq!(world.query_ref::<RefRO<u32>>().get(e), Ok(&5));
    /// ```
    pub fn get(&self, entity: Entity) -> Result<Q::Item<'w>, QueryError> {
        self.run().get(entity)
    }

    /// Whether `entity` is alive and matched.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn((5u32,)), world.spawn(('x',)));
    /// let q = world.query_ref::<RefRO<u32>>();
    /// assert!(q.contains(a) && !q.contains(b));
    /// ```
    pub fn contains(&self, entity: Entity) -> bool {
        self.run().contains(entity)
    }

    /// The item of the only matched entity.
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryError, QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((5u32,));
    /// assert_eq!(world.query_ref::<RefRO<u32>>().single(), Ok(&5));
    /// assert!(matches!(world.query_ref::<RefRO<char>>().single(), Err(QueryError::NoEntities { .. })));
    /// ```
    pub fn single(&self) -> Result<Q::Item<'w>, QueryError> {
        self.iter().single()
    }

    /// Number of matched entities, O(matched chunks).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let mut world = World::new();
    /// world.spawn((5u32,));
    /// assert_eq!(world.query_ref::<RefRO<u32>>().count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.run().count()
    }

    /// Whether no entity matches.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryExt, RefRO};
    /// let world = World::new();
    /// assert!(world.query_ref::<RefRO<u32>>().is_empty()); // `u32` never registered
    /// ```
    pub fn is_empty(&self) -> bool {
        self.run().is_empty()
    }
}
