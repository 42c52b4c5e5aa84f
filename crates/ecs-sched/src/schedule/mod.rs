//! [`Schedule`]: systems, their order, and running them on a world.
//!
//! This file holds the schedule and its build; `config` adds and configures systems and sets,
//! `run` runs the schedule, and `explain` reports on it. None of them is imported back here.
//!
//! Below them, this folder owns everything between a list of systems and a frame run: the
//! dependency graph and its plan (`graph`), the executor that runs a plan's segments on the
//! pool (`executor`, with its synchronisation primitives in `sync`, its clock in `clock` and
//! caught panics in `panics`), the timings it records (`timings`), a schedule's saved state for
//! simulation snapshots (`saved`) and the fixed-timestep driver (`fixed`). It runs systems
//! (`system/`, below it) and knows nothing of simulation snapshots as a whole (`sim/`, above).

#[cfg_attr(
    all(target_arch = "x86_64", not(miri), not(loom)),
    expect(unsafe_code, reason = "reads the CPU's time-stamp counter")
)]
mod clock;
pub(crate) mod config;
#[expect(
    unsafe_code,
    reason = "hands systems to workers through counters and UnsafeCell"
)]
pub(crate) mod executor;
pub(crate) mod explain;
pub(crate) mod fixed;
pub(crate) mod graph;
mod panics;
mod run;
pub(crate) mod saved;
mod sync;
pub(crate) mod timings;

use std::sync::Arc;
use std::time::Duration;

use ecs_core::{Components, RegistryId, World};

use crate::error::{CommandError, ScheduleError};
use crate::schedule::executor::SystemCell;
use crate::schedule::graph::{NodeInfo, Plan, SetInfo};
use crate::system::access::{Conflict, EventUpdate, SystemAccess};

use crate::schedule::timings::{Sample, Timings};

/// Default of [`Schedule::set_inline_threshold`]: about what waking a worker costs here.
const DEFAULT_INLINE_BELOW: Duration = Duration::from_micros(20);

/// How a schedule runs its systems, and where `par_*` query methods inside them run.
enum Threads {
    /// Everything on the calling thread, in plan order; `par_*` methods run their tasks one
    /// after another there too.
    Single,
    /// On rayon's global pool (one worker per core), which `par_*` methods inside systems also
    /// use: the calling thread takes the first ready system itself, so a run pays at most the
    /// hand-offs its parallel systems need.
    Global,
    /// On a rayon pool of its own: a run with parallel segments is installed in the pool; a run
    /// without them stays on the calling thread, and `par_*` methods still send their tasks to
    /// this pool (never to rayon's global one).
    Pool(Arc<rayon::ThreadPool>),
}

/// Explicit order constraints of one system, and whether it is a sync point.
#[derive(Default)]
struct Order {
    after: Vec<String>,
    before: Vec<String>,
    sets: Vec<String>,
    sync_point: bool,
}

/// A named set's own orders (`configure_set`).
struct SetOrder {
    name: String,
    after: Vec<String>,
    before: Vec<String>,
}

/// An ordered set of systems, run together on a world.
///
/// Systems that conflict (one writes what the other reads or writes) run in the order they
/// were added, unless `after` / `before` say otherwise; the others may run at the same time.
///
/// ```
/// use ecs_core::World;
/// use ecs_query::{RefRO, RefRW};
/// use ecs_sched::{Query, Res, Schedule};
///
/// struct Position(f32);
/// struct Velocity(f32);
/// struct Time(f32);
///
/// fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>, time: Res<Time>) {
///     q.for_each(|(p, v)| p.0 += v.0 * time.0);
/// }
///
/// let mut world = World::new();
/// world.insert_resource(Time(0.5));
/// let e = world.spawn((Position(0.0), Velocity(2.0)));
/// let mut schedule = Schedule::new();
/// schedule.add_system(movement);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.get::<Position>(e).unwrap().0, 1.0);
/// assert!(schedule.explain().contains("movement"));
/// ```
///
/// # Invariants
/// 1. `systems` (each with its timing), `accesses` and `orders` have one entry per system, by
///    insertion index; `accesses[i]` is system `i`'s access set as it was when the system was
///    added, merged with the access set of each of its run conditions as it was when added.
/// 2. `plan` is `None` or was built from the current systems, names and orders.
/// 3. Every access set in `accesses` that has component ids has them from `registry`, which is
///    the registry `registry_id` names (checked by `try_add_system`; `registry` is only ever
///    lent to `IntoSystem::into_system`, and a system whose building replaced it is refused,
///    as is every later system with queries).
/// 4. `event_updates` lists, once each, every event queue that the access set of a system or
///    run condition in the schedule uses; each is updated once at the end of every run.
/// 5. Every set named in `sets` or in an `Order::sets` is a set name, never a system name
///    (checked by `build`: `ScheduleError::SetNameClash`).
/// 6. `registry` is a planning registry that knows the component kinds (enableable, chunk
///    component) of every world the schedule ran on, and every access set in `accesses` was
///    declared with those kinds: `run` adopts a world's kinds, and re-declares every system
///    and condition when that changed anything, before it trusts an access set for that world
///    (`With<T>` / `Without<T>` prove nothing for an enableable `T`).
pub struct Schedule {
    systems: Vec<SystemCell>,
    accesses: Vec<SystemAccess>,
    command_timing: Sample,
    frame_timing: Sample,
    orders: Vec<Order>,
    sets: Vec<SetOrder>,
    event_updates: Vec<EventUpdate>,
    registry: Components,
    registry_id: RegistryId,
    /// The world registry and its [`Components::kinds_version`] whose kinds `registry` last
    /// adopted (invariant 6).
    kinds_seen: Option<(RegistryId, u64)>,
    /// `registry` learnt kinds that some access set was not yet re-declared with.
    redeclare_pending: bool,
    plan: Option<Plan>,
    threads: Threads,
    skipped: Vec<CommandError>,
    sync_points: usize,
    inline_below: Duration,
}

impl Default for Schedule {
    fn default() -> Self {
        Self::new()
    }
}

impl Schedule {
    /// A schedule on rayon's global pool, with one worker per core (on a one-core machine, a
    /// pool of its own with two workers).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// assert!(schedule.threads() >= 2);
    /// schedule.run(&mut World::new()).unwrap();
    /// ```
    pub fn new() -> Self {
        if rayon::current_num_threads() >= 2 {
            Self::with(Threads::Global)
        } else {
            Self::with_threads(2)
        }
    }

    /// A schedule on a pool of `threads` workers of its own (`0` or `1` means single-threaded).
    ///
    /// ```
    /// # use ecs_sched::Schedule;
    /// assert_eq!(Schedule::with_threads(3).threads(), 3);
    /// assert_eq!(Schedule::with_threads(0).threads(), 1);
    /// ```
    pub fn with_threads(threads: usize) -> Self {
        let threads = if threads <= 1 {
            Threads::Single
        } else {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("ecs-sched-{i}"))
                .build()
                .expect("the schedule's thread pool starts");
            Threads::Pool(Arc::new(pool))
        };
        Self::with(threads)
    }

    fn with(threads: Threads) -> Self {
        let registry = Components::for_planning();
        Self {
            systems: Vec::new(),
            accesses: Vec::new(),
            command_timing: Sample::default(),
            frame_timing: Sample::default(),
            orders: Vec::new(),
            sets: Vec::new(),
            event_updates: Vec::new(),
            registry_id: registry.registry_id(),
            registry,
            kinds_seen: None,
            redeclare_pending: false,
            plan: None,
            threads,
            skipped: Vec::new(),
            sync_points: 0,
            inline_below: DEFAULT_INLINE_BELOW,
        }
    }

    /// A schedule that runs every system on the calling thread, in plan order, and the tasks
    /// of `par_*` query methods inside them there too, one after another (for debugging, or a
    /// host that owns its threads; it yields the same results as the pool).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn spin(mut q: Query<RefRW<u64>>) {
    ///     q.par_for_each(|n| *n = format!("{:?}", std::thread::current().id()).len() as u64);
    /// }
    /// let mut world = World::new();
    /// world.spawn_batch((0..10_000u64).map(|i| (i,))).for_each(drop);
    /// let mut schedule = Schedule::single_threaded();
    /// assert_eq!(schedule.threads(), 1);
    /// schedule.add_system(spin);
    /// schedule.run(&mut world).unwrap();
    /// ```
    pub fn single_threaded() -> Self {
        Self::with_threads(1)
    }

    /// Segments whose parallel run could save at most `threshold` (judged from the systems'
    /// times in the last run) run on the calling thread instead: a thread hand-off costs
    /// microseconds, more than tiny systems gain. `Duration::ZERO` always uses the pool. The
    /// default is 20 µs. Either way the result is the same; only the timing changes.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{ResMut, Schedule};
    /// fn bump(mut n: ResMut<u32>) { *n += 1; }
    /// let mut world = World::new();
    /// world.insert_resource(0u32);
    /// let mut schedule = Schedule::with_threads(2);
    /// schedule.set_inline_threshold(std::time::Duration::ZERO);
    /// schedule.add_system(bump);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<u32>(), 1);
    /// ```
    pub fn set_inline_threshold(&mut self, threshold: Duration) {
        self.inline_below = threshold;
    }

    /// Worker threads (1 when single-threaded).
    ///
    /// ```
    /// # use ecs_sched::Schedule;
    /// assert_eq!(Schedule::with_threads(4).threads(), 4);
    /// ```
    pub fn threads(&self) -> usize {
        match &self.threads {
            Threads::Single => 1,
            Threads::Global => rayon::current_num_threads(),
            Threads::Pool(pool) => pool.current_num_threads(),
        }
    }

    /// Remembers the event queues `access` uses, to update them at the end of each run.
    fn add_event_updates(&mut self, access: &SystemAccess) {
        for &(id, update) in access.event_queues() {
            if !self.event_updates.iter().any(|e| e.0 == id) {
                self.event_updates.push((id, update));
            }
        }
    }

    /// Checks orders and builds the plan now, instead of at the first run.
    ///
    /// Cost: O(systems² × access entries) to compare every pair's access sets, plus the
    /// ordering graph's topological sort; nothing when the plan is already built and no system,
    /// order or component kind changed since. Later runs reuse the plan.
    ///
    /// # Errors
    /// An order naming an unknown system, a cycle of orders, or two systems of one name.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("a").after("missing");
    /// assert!(schedule.build().is_err());
    /// ```
    pub fn build(&mut self) -> Result<(), ScheduleError> {
        if self.plan.is_none() {
            let nodes: Vec<NodeInfo<'_>> = self
                .systems
                .iter()
                .zip(&self.orders)
                .zip(&self.accesses)
                .map(|((cell, order), access)| NodeInfo {
                    name: cell.get().name(),
                    access,
                    after: &order.after,
                    before: &order.before,
                    sets: &order.sets,
                })
                .collect();
            let sets: Vec<SetInfo<'_>> = self
                .sets
                .iter()
                .map(|s| SetInfo {
                    name: &s.name,
                    after: &s.after,
                    before: &s.before,
                })
                .collect();
            self.plan = Some(graph::build(&nodes, &sets)?);
        }
        Ok(())
    }

    /// As [`Schedule::build`], for `world`: first takes on the component kinds `world` gives
    /// the systems' types (a type it made enableable, or a chunk component), re-declaring
    /// every system's access when they changed, so that [`Schedule::explain`] and the plan
    /// are what [`Schedule::run`] on `world` uses. `run` does this itself; kinds only add up,
    /// so a schedule that ran on several worlds plans for the most cautious of them.
    ///
    /// # Errors
    /// As [`Schedule::build`], and [`ScheduleError::ConflictingParams`] for a system whose
    /// own parameters conflict under `world`'s kinds.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, RefRW, With};
    /// # use ecs_sched::{Query, Schedule};
    /// struct Hp(u32);
    /// struct Shield;
    /// fn shielded(_: Query<RefRO<Hp>, With<Shield>>) {}
    /// fn toggle(_: Query<ecs_query::EnabledRW<Shield>>) {}
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(shielded).named("shielded");
    /// schedule.add_system(toggle).named("toggle");
    /// let mut world = World::new();
    /// world.register_enableable::<Shield>();
    /// schedule.build_for(&world).unwrap();
    /// // `With<Shield>` reads the enable bits `toggle` writes: the two are ordered.
    /// assert!(schedule.explain().contains("shielded -> toggle"));
    /// ```
    pub fn build_for(&mut self, world: &World) -> Result<(), ScheduleError> {
        self.adopt_kinds(world.components())?;
        self.build()
    }

    /// Invariant 6: adopts `world`'s kinds, re-declaring every access set if they changed.
    fn adopt_kinds(&mut self, world: &Components) -> Result<(), ScheduleError> {
        let seen = (world.registry_id(), world.kinds_version());
        if self.kinds_seen == Some(seen) {
            return Ok(());
        }
        // A re-declaration that failed (a system whose queries alias under the new kinds)
        // stays pending, so the next run tries again instead of planning with the access
        // sets declared before the kinds were known.
        self.redeclare_pending |= self.registry.adopt_kinds(world);
        if self.redeclare_pending {
            self.plan = None;
            for (i, cell) in self.systems.iter_mut().enumerate() {
                let unit = cell.unit_mut();
                let conflicting =
                    |name: &str, conflict: Conflict| ScheduleError::ConflictingParams {
                        system: name.to_owned(),
                        component: format!(
                            "{conflict} (`{}` is enableable or a chunk component in this world)",
                            conflict.type_name()
                        ),
                    };
                unit.system
                    .redeclare(&mut self.registry)
                    .map_err(|c| conflicting(unit.system.name(), c))?;
                let mut access = unit.system.access().clone();
                for condition in &mut unit.conditions {
                    condition
                        .0
                        .redeclare(&mut self.registry)
                        .map_err(|c| conflicting(condition.name(), c))?;
                    access.merge(condition.0.access());
                }
                if self.registry.registry_id() != self.registry_id
                    || access.registry().is_some_and(|r| r != self.registry_id)
                {
                    return Err(ScheduleError::ForeignRegistry {
                        system: unit.system.name().to_owned(),
                    });
                }
                self.accesses[i] = access;
            }
            self.redeclare_pending = false;
        }
        self.kinds_seen = Some(seen);
        Ok(())
    }

    /// Commands skipped during the last run (their entity was gone), in application order.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_sched::{Commands, Res, Schedule};
    /// struct Target(Entity);
    /// fn twice(mut commands: Commands, t: Res<Target>) {
    ///     commands.despawn(t.0);
    ///     commands.despawn(t.0);
    /// }
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert_resource(Target(e));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(twice);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(schedule.skipped_commands().len(), 1);
    /// ```
    pub fn skipped_commands(&self) -> &[CommandError] {
        &self.skipped
    }

    /// Each system's time, cumulative over runs (runs, skipped, last, mean, min, max), in plan
    /// order, with command application and the frame's wall time as rows of their own. Prints
    /// as a table; [`Timings::last_run`] gives the last run's `(name, time)` pairs.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("noop");
    /// schedule.run(&mut World::new()).unwrap();
    /// let timings = schedule.timings().last_run();
    /// assert_eq!(timings.len(), 1);
    /// assert_eq!(timings[0].0, "noop");
    /// ```
    pub fn timings(&self) -> Timings {
        let order: Vec<usize> = match &self.plan {
            Some(plan) => plan.order.clone(),
            None => (0..self.systems.len()).collect(),
        };
        let rows = order.into_iter().map(|i| {
            let sample = self.systems[i].unit().sample;
            (self.systems[i].get().name(), sample)
        });
        Timings::new(rows, &self.command_timing, &self.frame_timing)
    }

    /// System names in plan order.
    ///
    /// # Errors
    /// As [`Schedule::build`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("b");
    /// schedule.add_system(|_: &mut World| {}).named("a").before("b");
    /// assert_eq!(schedule.order().unwrap(), ["a", "b"]);
    /// ```
    pub fn order(&mut self) -> Result<Vec<String>, ScheduleError> {
        self.build()?;
        let plan = self.plan.as_ref().expect("built");
        Ok(plan
            .order
            .iter()
            .map(|&i| self.systems[i].get().name().to_owned())
            .collect())
    }
}
