//! [`Query`], the system parameter, and [`QueryRef`], its shared read-only view.
//!
//! A `Query` is one run of a [`QueryState`]: the state is brought up to date and the change
//! window fixed ([`RunTicks`]) when the system starts, so every method of the query sees the
//! same window and needs the state only by shared reference.
//!
//! Which methods take `&self` follows the query's [`QueryKind`]: on a read-only query
//! (`RefRO`, `&T`, `Entity`, `Option` of those, filters) `get`, `iter` and `for_each` take
//! `&self`, so the query can be used from many threads at once, for example inside another
//! query's `par_for_each`. A writing query keeps `&mut self` there (its items are `&mut`), and
//! offers [`Query::as_readonly`] for shared reads. `count`, `contains` and `is_empty` take
//! `&self` on every query.
//!
//! Soundness: the schedule guarantees that nothing running at the same time conflicts with the
//! query's declared access. Within the system, mutable items are only handed out through
//! `&mut self` (one at a time, or disjoint rows in `get_many_mut` and the `par_` methods), and a
//! [`QueryRef`] borrows the query shared, so no `&mut` item can be alive beside it.

use std::marker::PhantomData;

use ecs_core::{Components, Entity, World};
use ecs_query::{
    ChunkView, QueryError, QueryFilter, QueryIter, QueryKind, QueryState, ROItem, ReadKind,
    ReadOnlyQuery, RunTicks, WorldQuery, WriteKind,
};

use crate::access_set::{Conflict, SystemAccess};
use crate::commands::{Commands, ParCommands};
use crate::param::SystemParam;

/// A query as a system parameter; keeps its [`QueryState`] cache between runs.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{RefRW, With};
/// # use ecs_sched::{Query, Schedule};
/// fn tagged(mut q: Query<RefRW<u32>, With<char>>) { q.for_each(|n| *n = 0); }
/// let mut world = World::new();
/// let (a, b) = (world.spawn((5u32, 'x')), world.spawn((5u32,)));
/// let mut schedule = Schedule::new();
/// schedule.add_system(tagged);
/// schedule.run(&mut world).unwrap();
/// assert_eq!((world.get::<u32>(a), world.get::<u32>(b)), (Ok(&0), Ok(&5)));
/// ```
///
/// The last parameter is the query's [`QueryKind`], computed from `Q`; leave it out.
pub struct Query<'w, 's, Q: WorldQuery, F: QueryFilter = (), K: QueryKind = <Q as WorldQuery>::Kind>
{
    world: &'w World,
    state: &'s QueryState<Q, F>,
    ticks: RunTicks,
    _kind: PhantomData<fn() -> K>,
}

/// A shared, read-only view of a query: what [`Query::as_readonly`] returns, and what a
/// read-only `Query`'s `&self` methods use. It is `Copy`, `Send` and `Sync`; its items are the
/// query's read-only items (`&T` for `RefRW<T>`).
///
/// ```
/// # use ecs_core::{Entity, World};
/// # use ecs_query::{RefRO, RefRW};
/// # use ecs_sched::{Query, Schedule};
/// struct Pos(f32);
/// struct Target(Entity);
/// // Each chaser steps towards its target's position, read through the same query.
/// fn chase(mut q: Query<(RefRW<Pos>, RefRO<Target>)>) {
///     let targets: Vec<(f32, f32)> = {
///         let view = q.as_readonly();
///         view.iter().map(|(p, t)| (p.0, view.get(t.0).map_or(p.0, |(tp, _)| tp.0))).collect()
///     };
///     let mut steps = targets.into_iter();
///     q.for_each(|(p, _)| {
///         let (from, to) = steps.next().unwrap();
///         p.0 = from + (to - from) / 2.0;
///     });
/// }
/// let mut world = World::new();
/// let a = world.spawn((Pos(0.0),));
/// let b = world.spawn((Pos(10.0), Target(a)));
/// world.insert(a, (Target(b),)).unwrap();
/// let mut schedule = Schedule::new();
/// schedule.add_system(chase);
/// schedule.run(&mut world).unwrap();
/// assert_eq!((world.get::<Pos>(a).unwrap().0, world.get::<Pos>(b).unwrap().0), (5.0, 5.0));
/// ```
pub struct QueryRef<'a, Q: WorldQuery, F: QueryFilter = ()> {
    world: &'a World,
    state: &'a QueryState<Q, F>,
    ticks: RunTicks,
}

impl<Q: WorldQuery, F: QueryFilter> Clone for QueryRef<'_, Q, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Q: WorldQuery, F: QueryFilter> Copy for QueryRef<'_, Q, F> {}

impl<'a, Q: WorldQuery, F: QueryFilter> QueryRef<'a, Q, F> {
    /// The read-only item of one entity.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    pub fn get(&self, entity: Entity) -> Result<ROItem<'a, Q>, QueryError> {
        // SAFETY: reads only what the query declares (its read-only form reads a subset of
        // it); the schedule keeps conflicting systems out, and this view borrows the query
        // shared, so none of its `&mut` items is alive (module doc).
        unsafe {
            self.state
                .get_at::<Q::ReadOnly>(self.world, self.ticks, entity)
        }
    }

    /// Whether `entity` is alive and matched.
    pub fn contains(&self, entity: Entity) -> bool {
        self.state.contains_at(self.world, self.ticks, entity)
    }

    /// Iterates the read-only items.
    pub fn iter(&self) -> QueryIter<'a, 'a, Q, F, Q::ReadOnly> {
        // SAFETY: as in `get`.
        unsafe { self.state.iter_at::<Q::ReadOnly>(self.world, self.ticks) }
    }

    /// Calls `f` on every read-only item (the chunk-wise loop of `for_each`).
    pub fn for_each(&self, f: impl FnMut(ROItem<'a, Q>)) {
        // SAFETY: as in `get`.
        unsafe {
            self.state
                .for_each_at::<Q::ReadOnly>(self.world, self.ticks, f)
        }
    }

    /// Calls `f` on every read-only item, in parallel.
    pub fn par_for_each(&self, f: impl Fn(ROItem<'_, Q>) + Send + Sync) {
        // SAFETY: as in `get`.
        unsafe {
            self.state
                .par_for_each_at::<Q::ReadOnly>(self.world, self.ticks, f)
        }
    }

    /// Number of matched entities, O(matched chunks).
    pub fn count(&self) -> usize {
        self.iter().map(drop).count()
    }

    /// Whether no entity matches.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// The read-only item of the only matched entity.
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`].
    pub fn single(&self) -> Result<ROItem<'a, Q>, QueryError> {
        self.iter().single()
    }
}

impl<'w, 's, Q: WorldQuery, F: QueryFilter, K: QueryKind> Query<'w, 's, Q, F, K> {
    /// A shared read-only view: `&T` for every `RefRW<T>`, usable from many threads.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, ResMut, Schedule};
    /// fn total(q: Query<RefRW<u32>>, mut sum: ResMut<u32>) {
    ///     *sum = q.as_readonly().iter().sum();
    /// }
    /// let mut world = World::new();
    /// world.spawn((2u32,));
    /// world.spawn((3u32,));
    /// world.insert_resource(0u32);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(total);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<u32>(), 5);
    /// ```
    pub fn as_readonly(&self) -> QueryRef<'_, Q, F> {
        QueryRef {
            world: self.world,
            state: self.state,
            ticks: self.ticks,
        }
    }

    /// Number of matched entities, O(matched chunks), touching no column.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRO;
    /// # use ecs_sched::{Query, ResMut, Schedule};
    /// fn census(q: Query<RefRO<u32>>, mut n: ResMut<usize>) { *n = q.count(); }
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn((2u32,));
    /// world.insert_resource(0usize);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(census);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<usize>(), 2);
    /// ```
    pub fn count(&self) -> usize {
        self.as_readonly().count()
    }

    /// Whether `entity` is alive and matched by this query.
    pub fn contains(&self, entity: Entity) -> bool {
        self.as_readonly().contains(entity)
    }

    /// Whether no entity matches.
    pub fn is_empty(&self) -> bool {
        self.as_readonly().is_empty()
    }

    /// Iterates with write access.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn double(mut q: Query<RefRW<u32>>) { q.iter_mut().for_each(|n| *n *= 2); }
    /// let mut world = World::new();
    /// let e = world.spawn((4u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(double);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// ```
    pub fn iter_mut(&mut self) -> QueryIter<'_, '_, Q, F> {
        // SAFETY: the schedule keeps conflicting systems out; `&mut self` keeps one iterator
        // (and no other item of this query) alive at a time.
        unsafe { self.state.iter_at::<Q>(self.world, self.ticks) }
    }

    /// The item of one entity, with write access.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    pub fn get_mut(&mut self, entity: Entity) -> Result<Q::Item<'_>, QueryError> {
        // SAFETY: as in `iter_mut`; the item borrows `self` mutably.
        unsafe { self.state.get_at::<Q>(self.world, self.ticks, entity) }
    }

    /// The item of the only matched entity, with write access: for a query expected to match
    /// exactly one entity (the player, the camera).
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`], naming the query.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRW, With};
    /// # use ecs_sched::{Query, Schedule};
    /// struct Player;
    /// struct Health(u32);
    /// fn heal(mut q: Query<RefRW<Health>, With<Player>>) { q.single_mut().unwrap().0 += 1; }
    /// let mut world = World::new();
    /// let p = world.spawn((Player, Health(1)));
    /// world.spawn((Health(1),));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(heal);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<Health>(p).unwrap().0, 2);
    /// ```
    pub fn single_mut(&mut self) -> Result<Q::Item<'_>, QueryError> {
        self.iter_mut().single()
    }

    /// The items of several distinct entities at once, with write access (a pair-wise
    /// interaction: an attacker and its victim).
    ///
    /// # Errors
    /// [`QueryError::AliasedEntities`] if an entity is named twice, else as
    /// [`Query::get_mut`] for the first entity that fails.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_query::{QueryError, RefRW};
    /// # use ecs_sched::{Query, Res, Schedule};
    /// struct Pair(Entity, Entity);
    /// fn swap(mut q: Query<RefRW<u32>>, pair: Res<Pair>) {
    ///     let [a, b] = q.get_many_mut([pair.0, pair.1]).unwrap();
    ///     std::mem::swap(a, b);
    ///     assert!(matches!(q.get_many_mut([pair.0, pair.0]), Err(QueryError::AliasedEntities(_))));
    /// }
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn((1u32,)), world.spawn((2u32,)));
    /// world.insert_resource(Pair(a, b));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(swap);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!((world.get::<u32>(a), world.get::<u32>(b)), (Ok(&2), Ok(&1)));
    /// ```
    pub fn get_many_mut<const N: usize>(
        &mut self,
        entities: [Entity; N],
    ) -> Result<[Q::Item<'_>; N], QueryError> {
        for (i, e) in entities.iter().enumerate() {
            if entities[..i].contains(e) {
                return Err(QueryError::AliasedEntities(*e));
            }
            if !self.contains(*e) {
                // The same lookup `get_at` makes, for its typed error.
                self.as_readonly().get(*e)?;
            }
        }
        // SAFETY: as in `iter_mut`; the entities are distinct, so their rows are, and each
        // row's item is handed out once; every one was just found.
        Ok(entities.map(|e| unsafe {
            self.state
                .get_at::<Q>(self.world, self.ticks, e)
                .unwrap_or_else(|_| unreachable!("checked above"))
        }))
    }

    /// Calls `f` once per matched chunk.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn zero(mut q: Query<RefRW<u32>>) { q.for_each_chunk(|mut view| view.columns().fill(0)); }
    /// let mut world = World::new();
    /// let e = world.spawn((4u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(zero);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&0));
    /// ```
    pub fn for_each_chunk(&mut self, f: impl FnMut(ChunkView<'_, Q>)) {
        // SAFETY: as in `iter_mut`.
        unsafe { self.state.for_each_chunk_at(self.world, self.ticks, f) }
    }

    /// Calls `f` on every matched entity in parallel, on the schedule's threads (on the
    /// calling thread in a single-threaded schedule).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn square(mut q: Query<RefRW<u32>>) { q.par_for_each(|n| *n *= *n); }
    /// let mut world = World::new();
    /// let e = world.spawn((4u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(square);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&16));
    /// ```
    pub fn par_for_each(&mut self, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        // SAFETY: as in `iter_mut`; tasks are disjoint rows.
        unsafe { self.state.par_for_each_at::<Q>(self.world, self.ticks, f) }
    }

    /// `par_for_each` with a state per rayon job made by `init` (scratch space, a counter);
    /// like rayon's `for_each_init`, how many states are made depends on the pool, so use it
    /// for work whose result does not depend on them (see [`Query::par_fold`] for sums).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn bump(mut q: Query<RefRW<u32>>) {
    ///     q.par_for_each_init(Vec::new, |scratch: &mut Vec<u32>, n| {
    ///         scratch.clear();
    ///         scratch.extend([*n, 1]);
    ///         *n = scratch.iter().sum();
    ///     });
    /// }
    /// let mut world = World::new();
    /// let e = world.spawn((4u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(bump);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&5));
    /// ```
    pub fn par_for_each_init<S>(
        &mut self,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) {
        // SAFETY: as in `par_for_each`.
        unsafe {
            self.state
                .par_for_each_init_at(self.world, self.ticks, init, f)
        }
    }

    /// Calls `f` once per matched chunk, chunks in parallel.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn seven(mut q: Query<RefRW<u32>>) { q.par_for_each_chunk(|mut v| v.columns().fill(7)); }
    /// let mut world = World::new();
    /// let e = world.spawn((4u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(seven);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&7));
    /// ```
    pub fn par_for_each_chunk(&mut self, f: impl Fn(ChunkView<'_, Q>) + Send + Sync) {
        // SAFETY: as in `par_for_each`; one task per chunk.
        unsafe { self.state.par_for_each_chunk_at(self.world, self.ticks, f) }
    }

    /// Folds every item in parallel: each chunk from `identity()` with `fold`, then the
    /// chunks' results with `reduce`, in chunk order. Neither the split nor the order depends on
    /// the number of threads, so the result is bit-identical on any schedule, even for
    /// floating-point sums.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRO;
    /// # use ecs_sched::{Query, ResMut, Schedule};
    /// fn energy(mut q: Query<RefRO<f32>>, mut total: ResMut<f32>) {
    ///     *total = q.par_fold(|| 0.0, |acc, e| acc + e, |a, b| a + b);
    /// }
    /// let mut world = World::new();
    /// world.spawn_batch((0..1000).map(|i| (i as f32 * 0.5,))).for_each(drop);
    /// world.insert_resource(0.0f32);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(energy);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<f32>(), (0..1000).map(|i| i as f32 * 0.5).sum::<f32>());
    /// ```
    pub fn par_fold<T: Send>(
        &mut self,
        identity: impl Fn() -> T + Send + Sync,
        fold: impl Fn(T, Q::Item<'_>) -> T + Send + Sync,
        reduce: impl Fn(T, T) -> T,
    ) -> T {
        // SAFETY: as in `par_for_each`.
        unsafe {
            self.state
                .par_fold_at(self.world, self.ticks, identity, fold, reduce)
        }
    }

    /// `par_for_each` that records commands: each task records into a [`ParCommands`] of its
    /// own, and the buffers are appended to `commands` in row order after the loop. The applied
    /// commands, and so the entity ids of spawned entities, are the same on any number of
    /// threads (see [`ParCommands`]).
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_query::{RefRO, With};
    /// # use ecs_sched::{Commands, Query, Schedule};
    /// struct Health(i32);
    /// fn reap(mut q: Query<(Entity, RefRO<Health>)>, mut commands: Commands) {
    ///     q.par_for_each_commands(&mut commands, |cmds, (e, h)| {
    ///         if h.0 <= 0 { cmds.despawn(e); }
    ///     });
    /// }
    /// let mut world = World::new();
    /// world.spawn_batch((-2..3).map(|h| (Health(h),))).for_each(drop);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(reap);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(ecs_query::QueryExt::query::<With<Health>>(&mut world).count(), 2);
    /// ```
    pub fn par_for_each_commands(
        &mut self,
        commands: &mut Commands,
        f: impl Fn(&mut ParCommands, Q::Item<'_>) + Send + Sync,
    ) {
        // SAFETY: as in `par_for_each`.
        let buffers = unsafe {
            self.state
                .par_for_each_collect_at(self.world, self.ticks, ParCommands::default, f)
        };
        commands.append_all(buffers);
    }
}

impl<'w, 's, Q: ReadOnlyQuery, F: QueryFilter> Query<'w, 's, Q, F, ReadKind> {
    /// The item of one entity; `&self`, so many lookups can run at once.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_query::{RefRO, RefRW};
    /// # use ecs_sched::{Query, Schedule};
    /// struct Pos(f32);
    /// struct Chases(Entity);
    /// struct Seen(f32);
    /// // Predators read their prey's position from inside a parallel loop.
    /// fn look(mut predators: Query<(RefRO<Chases>, RefRW<Seen>)>, prey: Query<RefRO<Pos>>) {
    ///     predators.par_for_each(|(c, seen)| seen.0 = prey.get(c.0).map_or(-1.0, |p| p.0));
    /// }
    /// let mut world = World::new();
    /// let p = world.spawn((Pos(4.0),));
    /// let hunter = world.spawn((Chases(p), Seen(0.0)));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(look);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<Seen>(hunter).unwrap().0, 4.0);
    /// ```
    pub fn get(&self, entity: Entity) -> Result<Q::Item<'_>, QueryError> {
        // SAFETY: `Q` only reads (`ReadOnlyQuery`); the schedule keeps writers out.
        unsafe { self.state.get_at::<Q>(self.world, self.ticks, entity) }
    }

    /// Iterates; `&self`, so several iterations can run at once.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRO;
    /// # use ecs_sched::{Query, ResMut, Schedule};
    /// fn sum(q: Query<RefRO<u32>>, mut total: ResMut<u64>) {
    ///     *total = q.iter().map(|&n| n as u64).sum();
    /// }
    /// let mut world = World::new();
    /// world.spawn((2u32,));
    /// world.spawn((3u32,));
    /// world.insert_resource(0u64);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(sum);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<u64>(), 5);
    /// ```
    pub fn iter(&self) -> QueryIter<'_, '_, Q, F> {
        // SAFETY: as in `get`.
        unsafe { self.state.iter_at::<Q>(self.world, self.ticks) }
    }

    /// Calls `f` on every matched entity (the chunk-wise loop); `&self`.
    pub fn for_each(&self, f: impl FnMut(Q::Item<'_>)) {
        // SAFETY: as in `get`.
        unsafe { self.state.for_each_at::<Q>(self.world, self.ticks, f) }
    }

    /// The item of the only matched entity; `&self`.
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`], naming the query.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryError, RefRO};
    /// # use ecs_sched::{Query, ResMut, Schedule};
    /// struct Camera(f32);
    /// fn look(q: Query<RefRO<Camera>>, mut out: ResMut<Vec<String>>) {
    ///     match q.single() {
    ///         Ok(c) => out.push(format!("zoom {}", c.0)),
    ///         Err(e) => out.push(e.to_string()),
    ///     }
    /// }
    /// let mut world = World::new();
    /// world.insert_resource(Vec::<String>::new());
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(look);
    /// schedule.run(&mut world).unwrap(); // no camera yet
    /// world.spawn((Camera(2.0),));
    /// schedule.run(&mut world).unwrap();
    /// world.spawn((Camera(3.0),));
    /// schedule.run(&mut world).unwrap();
    /// let out = world.resource::<Vec<String>>();
    /// assert!(out[0].starts_with("no entity matches query"));
    /// assert_eq!(out[1], "zoom 2");
    /// assert!(out[2].starts_with("more than one entity matches query"));
    /// ```
    pub fn single(&self) -> Result<Q::Item<'_>, QueryError> {
        self.iter().single()
    }
}

impl<'w, 's, Q: WorldQuery, F: QueryFilter> Query<'w, 's, Q, F, WriteKind> {
    /// The item of one entity, with write access.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Res, Schedule};
    /// struct Target(Entity);
    /// fn hit(mut q: Query<RefRW<u32>>, t: Res<Target>) { *q.get(t.0).unwrap() -= 1; }
    /// let mut world = World::new();
    /// let e = world.spawn((10u32,));
    /// world.insert_resource(Target(e));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(hit);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&9));
    /// ```
    pub fn get(&mut self, entity: Entity) -> Result<Q::Item<'_>, QueryError> {
        self.get_mut(entity)
    }

    /// Iterates the read-only items (`&T` for `RefRW<T>`); `iter_mut` writes.
    pub fn iter(&self) -> QueryIter<'_, '_, Q, F, Q::ReadOnly> {
        self.as_readonly().iter()
    }

    /// Calls `f` on every matched entity, with write access.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn inc(mut q: Query<RefRW<u32>>) { q.for_each(|n| *n += 1); }
    /// let mut world = World::new();
    /// let e = world.spawn((4u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(inc);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&5));
    /// ```
    pub fn for_each(&mut self, f: impl FnMut(Q::Item<'_>)) {
        // SAFETY: as in `iter_mut`.
        unsafe { self.state.for_each_at::<Q>(self.world, self.ticks, f) }
    }
}

// SAFETY: `declare` records the query's full access (reads, writes, filter masks); `get` hands
// out views of exactly that access.
unsafe impl<Q: WorldQuery + 'static, F: QueryFilter + 'static> SystemParam for Query<'_, '_, Q, F> {
    type State = QueryState<Q, F>;
    type Item<'w, 's> = Query<'w, 's, Q, F>;

    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
        let query = Q::init_state(registry);
        let filter = F::init_state(registry);
        let declared = QueryState::<Q, F>::compute_access(&query, &filter, registry)
            .map_err(|c| Conflict::Component(c.component))?;
        access.add_query(declared, registry)
    }

    fn init_state(world: &mut World) -> Self::State {
        QueryState::new(world)
    }

    unsafe fn get<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        _: &str,
    ) -> Self::Item<'w, 's> {
        let ticks = state.start_run(world);
        Query {
            world,
            state,
            ticks,
            _kind: PhantomData,
        }
    }
}
