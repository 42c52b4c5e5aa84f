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
//! Both are handles of one [`QueryRun`], the query crate's run core: `SystemParam::get` builds
//! it once per system run, on the schedule's word that nothing running at the same time
//! conflicts with the query's declared access (the one unsafe step); every method here is one
//! of the run's safe methods. Within the system, mutable items are only handed out through
//! `&mut self` ([`QueryRun::reborrow`]: one at a time, or disjoint rows in `get_many_mut` and
//! the `par_` methods), and a [`QueryRef`] borrows the query shared, so no `&mut` item can be
//! alive beside it.

use std::marker::PhantomData;

use ecs_core::{Components, Entity, World};
use ecs_query::{
    ChunkView, QueryError, QueryFilter, QueryIter, QueryKind, QueryRun, QueryState, ReadKind,
    ReadOnlyQuery, WorldQuery, WriteKind,
};

use crate::commands::{Commands, ParCommands};
use crate::saved_state::{StateError, StateReader, StateWriter};
use crate::system::access::{Conflict, SystemAccess};
use crate::system::param::SystemParam;

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
    pub(crate) run: QueryRun<'w, 's, Q, F>,
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
///
/// It is the query's [`QueryRun`] with read-only items, so its methods are the run's: `get`,
/// `contains`, `iter`, `for_each`, `par_for_each`, `count`, `is_empty`, `single`.
pub type QueryRef<'a, Q, F = ()> = QueryRun<'a, 'a, Q, F, <Q as WorldQuery>::ReadOnly>;

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
        self.run.as_readonly()
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
        self.run.count()
    }

    /// Whether `entity` is alive and matched by this query.
    pub fn contains(&self, entity: Entity) -> bool {
        self.run.contains(entity)
    }

    /// Whether no entity matches.
    pub fn is_empty(&self) -> bool {
        self.run.is_empty()
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
        self.run.reborrow().iter()
    }

    /// The item of one entity, with write access.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    pub fn get_mut(&mut self, entity: Entity) -> Result<Q::Item<'_>, QueryError> {
        self.run.reborrow().get(entity)
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
        self.run.reborrow().get_many(entities)
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
        self.run.reborrow().for_each_chunk(f);
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
        self.run.reborrow().par_for_each(f);
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
        self.run.reborrow().par_for_each_init(init, f);
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
        self.run.reborrow().par_for_each_chunk(f);
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
        self.run.reborrow().par_fold(identity, fold, reduce)
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
        let buffers = self
            .run
            .reborrow()
            .par_for_each_collect(ParCommands::default, f);
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
        self.run.get(entity)
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
        self.run.iter()
    }

    /// Calls `f` on every matched entity (the chunk-wise loop); `&self`.
    pub fn for_each(&self, f: impl FnMut(Q::Item<'_>)) {
        self.run.for_each(f);
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
        self.run.reborrow().for_each(f);
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

    fn save_state(state: &Self::State, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.save_tick(state.last_seen());
        Ok(())
    }

    fn load_state(state: &mut Self::State, input: &mut StateReader<'_>) {
        state.set_last_seen(input.load_tick());
    }

    unsafe fn get<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        _: &str,
    ) -> Self::Item<'w, 's> {
        let ticks = state.start_run(world);
        Query {
            // SAFETY: this fn's contract: the schedule runs nothing that conflicts with the
            // access `declare` recorded (the query's reads, writes and filter reads) while the
            // system's items live.
            run: unsafe { QueryRun::new(state, world, ticks) },
            _kind: PhantomData,
        }
    }
}
