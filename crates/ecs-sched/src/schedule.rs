//! [`Schedule`]: systems, their order, and running them on a world.

use std::fmt::Write as _;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ecs_core::{Components, RegistryId, World};
use ecs_query::Parallelism;

use crate::access_set::{Conflict, EventUpdate, SystemAccess};
use crate::condition::{is_read_only, IntoCondition};
use crate::error::{CommandError, ScheduleError};
use crate::executor::{run_exclusive, run_segment, worth_parallel, SystemCell, SystemPanic};
use crate::graph::{self, EdgeReason, NodeInfo, Plan, SetInfo};
use crate::panics::{drop_payload, keep_first, panic_message, Payload};
use crate::sync::Mutex;
use crate::system::{IntoSystem, SyncPoint, System};
use crate::timings::{Sample, Timings};

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
/// 1. `systems`, `accesses`, `timings` and `orders` have one entry per system, by insertion
///    index; `accesses[i]` is system `i`'s access set as it was when the system was added,
///    merged with the access set of each of its run conditions as it was when added.
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
    timings: Vec<Mutex<Sample>>,
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
            timings: Vec::new(),
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

    /// Adds a system.
    ///
    /// # Panics
    /// If the system's own parameters conflict; the message names the system and the type.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{ResMut, Schedule};
    /// fn bump(mut n: ResMut<u32>) { *n += 1; }
    /// let mut world = World::new();
    /// world.insert_resource(0u32);
    /// let mut schedule = Schedule::single_threaded();
    /// schedule.add_system(bump);
    /// schedule.add_system(|world: &mut World| *world.resource_mut::<u32>() *= 10);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<u32>(), 10);
    /// ```
    ///
    /// A system whose name is already taken (two closures of one function, or one function
    /// added twice) must be given a name of its own with `.named(...)` on the returned
    /// [`SystemConfig`]; if it is not, dropping the config (the end of the `add_system`
    /// statement) panics with [`ScheduleError::DuplicateName`].
    ///
    /// ```should_panic
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &World| {});
    /// schedule.add_system(|_: &World| {}); // panics: two systems are named `main::{{closure}}`
    /// ```
    #[track_caller]
    pub fn add_system<M>(&mut self, system: impl IntoSystem<M>) -> SystemConfig<'_> {
        match self.try_add_system(system) {
            Ok(mut config) => {
                config.check_name_on_drop = true;
                config
            }
            Err(err) => panic!("{err}"),
        }
    }

    /// Adds a system, or says why its parameters conflict.
    ///
    /// Unlike [`Schedule::add_system`], a name left duplicated is reported by
    /// [`Schedule::build`] (and `run`), not when the returned config is dropped.
    ///
    /// # Errors
    /// [`ScheduleError::ConflictingParams`] naming the system and the type;
    /// [`ScheduleError::ForeignRegistry`] if the system's access set was built against another
    /// component registry than the one `into_system` was given (or that registry was replaced).
    ///
    /// ```
    /// # use ecs_query::{RefRO, RefRW};
    /// # use ecs_sched::{Query, Schedule};
    /// fn aliased(_a: Query<RefRW<u32>>, _b: Query<RefRO<u32>>) {}
    /// fn fine(_a: Query<RefRW<u32>>) {}
    /// let mut schedule = Schedule::new();
    /// assert!(schedule.try_add_system(aliased).is_err());
    /// assert!(schedule.try_add_system(fine).is_ok());
    /// ```
    pub fn try_add_system<M>(
        &mut self,
        system: impl IntoSystem<M>,
    ) -> Result<SystemConfig<'_>, ScheduleError> {
        let before = self.registry.registry_id();
        let system = system.into_system(&mut self.registry)?;
        let replaced = self.registry.registry_id() != before;
        if replaced
            || system
                .access()
                .registry()
                .is_some_and(|r| r != self.registry_id)
        {
            return Err(ScheduleError::ForeignRegistry {
                system: system.name().to_owned(),
            });
        }
        Ok(self.push(system, false))
    }

    /// Adds a sync point: commands recorded by the systems before it are applied there.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Commands, Schedule};
    /// fn spawner(mut commands: Commands) { commands.spawn((1u32,)); }
    /// fn check(world: &mut World) { assert_eq!(world.len(), 1); }
    /// let mut world = World::new();
    /// let mut schedule = Schedule::single_threaded();
    /// schedule.add_system(spawner);
    /// schedule.add_sync_point();
    /// schedule.add_system(check);
    /// schedule.run(&mut world).unwrap();
    /// ```
    pub fn add_sync_point(&mut self) -> SystemConfig<'_> {
        self.sync_points += 1;
        let name = format!("sync_point_{}", self.sync_points);
        self.push(Box::new(SyncPoint::new(name)), true)
    }

    fn push(&mut self, system: Box<dyn System>, sync_point: bool) -> SystemConfig<'_> {
        self.plan = None;
        self.add_event_updates(system.access());
        self.accesses.push(system.access().clone());
        self.systems.push(SystemCell::new(system));
        self.timings.push(Mutex::new(Sample::default()));
        self.orders.push(Order {
            sync_point,
            ..Order::default()
        });
        SystemConfig {
            schedule: self,
            check_name_on_drop: false,
        }
    }

    /// Orders the named set as a whole: `.after(x)` / `.before(x)` on the returned
    /// [`SetConfig`] apply to every system in the set (`x` names a system or another set).
    /// Systems join sets with [`SystemConfig::in_set`]; a set needs no declaration to be used,
    /// only to have orders of its own.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("render");
    /// schedule.add_system(|_: &mut World| {}).named("collide").in_set("physics");
    /// schedule.add_system(|_: &mut World| {}).named("integrate").in_set("physics");
    /// schedule.configure_set("physics").before("render");
    /// assert_eq!(schedule.order().unwrap(), ["collide", "integrate", "render"]);
    /// ```
    pub fn configure_set(&mut self, name: impl Into<String>) -> SetConfig<'_> {
        let name = name.into();
        self.plan = None;
        let index = match self.sets.iter().position(|s| s.name == name) {
            Some(i) => i,
            None => {
                self.sets.push(SetOrder {
                    name,
                    after: Vec::new(),
                    before: Vec::new(),
                });
                self.sets.len() - 1
            }
        };
        SetConfig {
            schedule: self,
            index,
        }
    }

    /// Takes back the system added last (one refused by its config), with its access set,
    /// timings and orders (invariant 1); event queues only it used are no longer updated.
    fn remove_last_system(&mut self) {
        self.plan = None;
        self.systems.pop();
        self.accesses.pop();
        self.timings.pop();
        if self.orders.pop().is_some_and(|o| o.sync_point) {
            self.sync_points -= 1;
        }
        self.event_updates.clear();
        for i in 0..self.accesses.len() {
            let access = std::mem::take(&mut self.accesses[i]);
            self.add_event_updates(&access);
            self.accesses[i] = access;
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

    /// Runs every system once, then applies recorded commands in system order.
    ///
    /// # Errors
    /// As [`Schedule::build`]; nothing runs then.
    ///
    /// # Panics
    /// If a system panics: systems already running finish, later ones are skipped, the
    /// run's commands are dropped, and the panic continues with the system's name in its
    /// message (``system `NAME` panicked: …``). If dropping those commands panics too (a
    /// recorded value's `Drop`), the rest are still dropped and that panic is named after the
    /// system's, never instead of it. If an applied command panics, the commands after it are
    /// dropped and the command's panic continues. Either way no command of this run is left
    /// for the next, and the world stays consistent and usable.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn grow(mut q: Query<RefRW<u32>>) { q.for_each(|n| *n += 1); }
    /// let mut world = World::new();
    /// let e = world.spawn((0u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(grow);
    /// schedule.run(&mut world).unwrap();
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&2));
    /// ```
    pub fn run(&mut self, world: &mut World) -> Result<(), ScheduleError> {
        self.build_for(world)?;
        // O(1) unless 2^30 ticks passed: keeps 32-bit row ticks from wrapping.
        world.check_change_ticks();
        let frame_start = Instant::now();
        self.skipped.clear();
        for cell in &mut self.systems {
            let unit = cell.unit_mut();
            unit.system.initialize(world);
            for condition in &mut unit.conditions {
                condition.0.initialize(world);
            }
        }
        let plan = self.plan.as_ref().expect("built above");
        let inline_below = self.inline_below;
        let any_parallel = plan
            .segments
            .iter()
            .any(|s| worth_parallel(s, &self.timings, inline_below));
        let mut commands_time = Duration::ZERO;
        let run = Run {
            plan,
            inline_below,
            systems: &mut self.systems,
            timings: &self.timings,
            orders: &self.orders,
            skipped: &mut self.skipped,
            commands_time: &mut commands_time,
            event_updates: &self.event_updates,
        };
        let (panic, commands) = match &self.threads {
            Threads::Single => Parallelism::Sequential.scope(|| run.execute(world, false)),
            Threads::Global => run.execute(world, true),
            Threads::Pool(pool) if !any_parallel => {
                Parallelism::Pool(Arc::clone(pool)).scope(|| run.execute(world, false))
            }
            Threads::Pool(pool) => pool.install(|| run.execute(world, true)),
        };
        self.command_timing.record(commands_time, true);
        self.frame_timing.record(frame_start.elapsed(), true);
        let CommandPanics { apply, cleanup } = commands;
        let mut report = panic.map(|(name, payload)| {
            let message = format!("system `{name}` panicked: {}", panic_message(&*payload));
            drop_payload(payload);
            message
        });
        if let (Some(message), Some(first)) = (&mut report, cleanup.first()) {
            let _ = write!(
                message,
                " (then dropping the run's unapplied commands panicked too, in {} system(s); \
                 the first: {})",
                cleanup.len(),
                panic_message(&**first)
            );
        }
        // Every payload not passed on is dropped here, before unwinding starts: one whose
        // `Drop` panics would otherwise abort the process.
        cleanup.into_iter().for_each(drop_payload);
        if let Some(message) = report {
            if let Some(payload) = apply {
                drop_payload(payload);
            }
            resume_unwind(Box::new(message));
        }
        if let Some(payload) = apply {
            resume_unwind(payload);
        }
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
            let sample = *self.timings[i].lock().unwrap_or_else(|p| p.into_inner());
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

    /// A text report: each system's reads and writes, and for each pair that cannot run
    /// together, why (the type they conflict on, or an explicit order).
    ///
    /// ```
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn first(_q: Query<RefRW<u32>>) {}
    /// fn second(_q: Query<RefRW<u32>>) {}
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(first).named("first");
    /// schedule.add_system(second).named("second");
    /// let report = schedule.explain();
    /// assert!(report.contains("first -> second"));
    /// ```
    pub fn explain(&mut self) -> String {
        let mut out = String::new();
        if let Err(err) = self.build() {
            let _ = writeln!(out, "schedule cannot be built: {err}");
            return out;
        }
        let plan = self.plan.as_ref().expect("built");
        let name = |i: usize| self.systems[i].get().name().to_owned();
        let _ = writeln!(out, "systems, in order:");
        for (n, &i) in plan.order.iter().enumerate() {
            let access = &self.accesses[i];
            let list = |v: Vec<&str>| {
                if v.is_empty() {
                    "-".to_owned()
                } else {
                    v.join(", ")
                }
            };
            let _ = writeln!(
                out,
                "  {}. {}\n       reads:  {}\n       writes: {}",
                n + 1,
                name(i),
                list(access.read_names()),
                list(access.write_names())
            );
            let sends = access.event_write_names();
            if !sends.is_empty() {
                let _ = writeln!(out, "       sends:  {}", sends.join(", "));
            }
            let conditions = &self.systems[i].unit().conditions;
            if !conditions.is_empty() {
                let names: Vec<&str> = conditions.iter().map(|c| c.name()).collect();
                let _ = writeln!(out, "       run if: {}", names.join(" && "));
            }
            if !self.orders[i].sets.is_empty() {
                let _ = writeln!(out, "       in sets: {}", self.orders[i].sets.join(", "));
            }
        }
        let _ = writeln!(out, "ordering constraints:");
        if plan.edges.is_empty() {
            let _ = writeln!(out, "  none: every system may run at the same time");
        }
        for (a, b, reason) in &plan.edges {
            let why = reason.to_string();
            let _ = writeln!(out, "  {} -> {}: {why}", name(*a), name(*b));
        }
        out
    }

    /// The same graph as [`Schedule::explain`], in Graphviz `dot` syntax.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("only");
    /// let dot = schedule.to_dot();
    /// assert!(dot.starts_with("digraph schedule {"));
    /// assert!(dot.contains("only"));
    /// ```
    pub fn to_dot(&mut self) -> String {
        let mut out = String::from("digraph schedule {\n  rankdir=LR;\n");
        if self.build().is_err() {
            out.push_str("}\n");
            return out;
        }
        let plan = self.plan.as_ref().expect("built");
        let quote = |s: &str| s.replace('"', "\\\"");
        for &i in &plan.order {
            let sys = self.systems[i].get();
            let access = &self.accesses[i];
            let _ = writeln!(
                out,
                "  \"{}\" [shape=box, label=\"{}\\nreads: {}\\nwrites: {}\"];",
                quote(sys.name()),
                quote(sys.name()),
                quote(&access.read_names().join(", ")),
                quote(&access.write_names().join(", "))
            );
        }
        for (a, b, reason) in &plan.edges {
            let label = match reason {
                EdgeReason::Explicit => "order".to_owned(),
                EdgeReason::Conflict(c) | EdgeReason::ExplicitAndConflict(c) => c.to_string(),
            };
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [label=\"{}\"];",
                quote(self.systems[*a].get().name()),
                quote(self.systems[*b].get().name()),
                quote(&label)
            );
        }
        out.push_str("}\n");
        out
    }
}

/// The parts of a schedule one run needs, borrowed apart from its thread pool.
struct Run<'a> {
    plan: &'a Plan,
    inline_below: Duration,
    systems: &'a mut [SystemCell],
    timings: &'a [Mutex<Sample>],
    orders: &'a [Order],
    skipped: &'a mut Vec<CommandError>,
    commands_time: &'a mut Duration,
    event_updates: &'a [EventUpdate],
}

impl Run<'_> {
    /// Runs the plan's segments in order, then applies (or, after a panic, drops) the commands
    /// not yet applied at a sync point. Returns the first system panic and what panicked while
    /// commands were applied or dropped; every system's commands are gone either way.
    fn execute(self, world: &mut World, parallel: bool) -> (Option<SystemPanic>, CommandPanics) {
        let Run {
            plan,
            inline_below,
            systems,
            timings,
            orders,
            skipped,
            commands_time,
            event_updates,
        } = self;
        let mut panic: Option<SystemPanic> = None;
        let mut commands = CommandPanics::default();
        let mut applied = 0;
        for segment in &plan.segments {
            if segment.exclusive {
                let index = segment.systems[0];
                if orders[index].sync_point {
                    let upto = plan
                        .order
                        .iter()
                        .position(|&i| i == index)
                        .expect("in order");
                    let order = &plan.order[applied..upto];
                    let start = Instant::now();
                    apply_commands(systems, order, world, skipped, false, &mut commands);
                    *commands_time += start.elapsed();
                    applied = upto;
                    if commands.apply.is_some() {
                        break;
                    }
                    continue;
                }
                panic = run_exclusive(world, &mut systems[index], &timings[index]);
            } else {
                let parallel = parallel && worth_parallel(segment, timings, inline_below);
                // `run_segment` catches each system's panic; this catches anything else, so
                // commands are still dropped and the world flushed below.
                panic = catch_unwind(AssertUnwindSafe(|| {
                    run_segment(parallel, world, systems, segment, timings)
                }))
                .unwrap_or_else(|payload| Some(("<executor>".to_owned(), payload)));
            }
            if panic.is_some() {
                break;
            }
        }
        let discard = panic.is_some() || commands.apply.is_some();
        let order = &plan.order[applied..];
        let start = Instant::now();
        // Events applied before the previous end of run are dropped now, before this run's are
        // applied: each event stays readable for two runs (events.rs).
        for (_, update) in event_updates {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| update(world))) {
                keep_first(&mut commands.apply, payload);
            }
        }
        apply_commands(systems, order, world, skipped, discard, &mut commands);
        *commands_time += start.elapsed();
        // Ids reserved by dropped or failed commands still become (empty) entities now, so the
        // world has no pending reservations between runs.
        world.flush();
        (panic, commands)
    }
}

/// Panics raised while a run's commands were applied or dropped.
#[derive(Default)]
struct CommandPanics {
    /// The first command that panicked while applied; every command after it is dropped.
    apply: Option<Payload>,
    /// Panics of `Drop`s while unapplied commands were dropped: reported beside the panic
    /// that made the run drop them, never instead of it.
    cleanup: Vec<Payload>,
}

/// Applies (or with `discard`, drops) the commands of `order`'s systems, in order; once a
/// command has panicked (now or earlier in the run), drops them instead. Each system's
/// application and each drop is caught on its own, so every queue in `order` is empty when
/// this returns, whatever panicked: nothing leaks into the next run.
fn apply_commands(
    systems: &mut [SystemCell],
    order: &[usize],
    world: &mut World,
    skipped: &mut Vec<CommandError>,
    discard: bool,
    panics: &mut CommandPanics,
) {
    for &i in order {
        let system = systems[i].get_mut();
        if !discard && panics.apply.is_none() {
            let applied = catch_unwind(AssertUnwindSafe(|| {
                system.apply_deferred(world, skipped, false);
            }));
            match applied {
                Ok(()) => continue,
                Err(payload) => keep_first(&mut panics.apply, payload),
            }
        }
        let dropped = catch_unwind(AssertUnwindSafe(|| {
            system.apply_deferred(world, skipped, true);
        }));
        if let Err(payload) = dropped {
            panics.cleanup.push(payload);
        }
    }
}

/// Returned by `add_system`: sets the new system's name and order.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::Schedule;
/// let mut schedule = Schedule::new();
/// schedule.add_system(|_: &mut World| {}).named("render");
/// schedule.add_system(|_: &mut World| {}).named("physics").before("render");
/// assert_eq!(schedule.order().unwrap(), ["physics", "render"]);
/// ```
pub struct SystemConfig<'a> {
    schedule: &'a mut Schedule,
    /// Whether dropping the config panics if the system's name is taken (`add_system`).
    check_name_on_drop: bool,
}

impl Drop for SystemConfig<'_> {
    fn drop(&mut self) {
        if self.check_name_on_drop && !std::thread::panicking() {
            if let Some(name) = self.duplicate_name(None) {
                // The refused system is not kept: the schedule stays buildable.
                self.schedule.remove_last_system();
                panic!("{}", ScheduleError::DuplicateName(name));
            }
        }
    }
}

impl SystemConfig<'_> {
    /// The system's name (or `name`, if given) when another system already has it.
    fn duplicate_name(&self, name: Option<&str>) -> Option<String> {
        let (last, others) = self.schedule.systems.split_last()?;
        let name = name.unwrap_or_else(|| last.get().name());
        others
            .iter()
            .any(|cell| cell.get().name() == name)
            .then(|| name.to_owned())
    }

    fn order(&mut self) -> &mut Order {
        self.schedule.plan = None;
        self.schedule
            .orders
            .last_mut()
            .expect("a system was just added")
    }

    /// Renames the system (the default is its function's name).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("setup");
    /// assert_eq!(schedule.order().unwrap(), ["setup"]);
    /// ```
    ///
    /// # Panics
    /// If another system already has the name (see [`SystemConfig::try_named`]).
    #[track_caller]
    pub fn named(self, name: impl Into<String>) -> Self {
        match self.try_named(name) {
            Ok(config) => config,
            Err(err) => panic!("{err}"),
        }
    }

    /// Renames the system, or says that another system already has the name.
    ///
    /// # Errors
    /// [`ScheduleError::DuplicateName`]; the system keeps its old name.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Schedule, ScheduleError};
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &World| {}).named("a");
    /// let err = schedule.add_system(|_: &World| {}).try_named("a").err().unwrap();
    /// assert_eq!(err, ScheduleError::DuplicateName("a".into()));
    /// ```
    pub fn try_named(mut self, name: impl Into<String>) -> Result<Self, ScheduleError> {
        let name = name.into();
        if let Some(taken) = self.duplicate_name(Some(&name)) {
            // The error replaces the config, whose own duplicate is reported there.
            self.check_name_on_drop = false;
            return Err(ScheduleError::DuplicateName(taken));
        }
        self.schedule.plan = None;
        self.schedule
            .systems
            .last_mut()
            .expect("a system was just added")
            .get_mut()
            .set_name(name);
        Ok(self)
    }

    /// Runs the system only in runs where `condition` returns `true`. The condition is a
    /// read-only system returning `bool`, evaluated right before the system on the same
    /// worker; its access joins the system's in the plan. A system may have several
    /// conditions: it runs when all are true, and all are evaluated every run. A skipped
    /// system records no commands or events and shows as skipped in
    /// [`Schedule::timings`].
    ///
    /// # Panics
    /// As [`SystemConfig::try_run_if`]'s errors.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{every_n_runs, ResMut, Schedule};
    /// fn tick(mut n: ResMut<u32>) { *n += 1; }
    /// let mut world = World::new();
    /// world.insert_resource(0u32);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(tick).run_if(every_n_runs(3));
    /// for _ in 0..6 { schedule.run(&mut world).unwrap(); }
    /// assert_eq!(*world.resource::<u32>(), 2);
    /// ```
    #[track_caller]
    pub fn run_if<M>(self, condition: impl IntoCondition<M>) -> Self {
        match self.try_run_if(condition) {
            Ok(config) => config,
            Err(err) => panic!("{err}"),
        }
    }

    /// Adds a run condition, or says why it cannot gate the system.
    ///
    /// # Errors
    /// [`ScheduleError::ConditionNotReadOnly`] if the condition writes anything (or records
    /// commands or events, or is exclusive); [`ScheduleError::ConflictingParams`] if its own
    /// parameters conflict; [`ScheduleError::ForeignRegistry`] as for systems.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{ResMut, Schedule, ScheduleError};
    /// let mut schedule = Schedule::new();
    /// let config = schedule.add_system(|_: &World| {}).named("gated");
    /// let err = config.try_run_if(|mut n: ResMut<u32>| { *n += 1; true }).err().unwrap();
    /// assert!(matches!(err, ScheduleError::ConditionNotReadOnly { .. }));
    /// ```
    pub fn try_run_if<M>(self, condition: impl IntoCondition<M>) -> Result<Self, ScheduleError> {
        let schedule = &mut *self.schedule;
        let system = schedule
            .systems
            .last()
            .expect("a system was just added")
            .get()
            .name()
            .to_owned();
        let before = schedule.registry.registry_id();
        let condition = condition.into_condition(&mut schedule.registry)?;
        let access = condition.0.access();
        if schedule.registry.registry_id() != before
            || access.registry().is_some_and(|r| r != schedule.registry_id)
        {
            return Err(ScheduleError::ForeignRegistry {
                system: condition.name().to_owned(),
            });
        }
        if !is_read_only(access) {
            return Err(ScheduleError::ConditionNotReadOnly {
                system,
                condition: condition.name().to_owned(),
                writes: access
                    .write_names()
                    .into_iter()
                    .chain(access.event_write_names())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        schedule.plan = None;
        let index = schedule.systems.len() - 1;
        schedule.accesses[index].merge(access);
        let access = access.clone();
        schedule.add_event_updates(&access);
        schedule.systems[index]
            .unit_mut()
            .conditions
            .push(condition);
        Ok(self)
    }

    /// Puts the system in the named set (it may be in several): orders given to the set with
    /// [`Schedule::configure_set`], and orders of other systems that name the set, apply to it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("draw").after("physics");
    /// schedule.add_system(|_: &mut World| {}).named("step").in_set("physics");
    /// assert_eq!(schedule.order().unwrap(), ["step", "draw"]);
    /// ```
    pub fn in_set(mut self, set: impl Into<String>) -> Self {
        let set = set.into();
        let sets = &mut self.order().sets;
        if !sets.contains(&set) {
            sets.push(set);
        }
        self
    }

    /// Runs the system after the one (or the set) named `name`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("late").after("early");
    /// schedule.add_system(|_: &mut World| {}).named("early");
    /// assert_eq!(schedule.order().unwrap(), ["early", "late"]);
    /// ```
    pub fn after(mut self, name: impl Into<String>) -> Self {
        self.order().after.push(name.into());
        self
    }

    /// Runs the system before the one (or the set) named `name`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("late");
    /// schedule.add_system(|_: &mut World| {}).named("early").before("late");
    /// assert_eq!(schedule.order().unwrap(), ["early", "late"]);
    /// ```
    pub fn before(mut self, name: impl Into<String>) -> Self {
        self.order().before.push(name.into());
        self
    }
}

/// Returned by [`Schedule::configure_set`]: orders a named set as a whole.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::Schedule;
/// let mut schedule = Schedule::new();
/// schedule.add_system(|_: &mut World| {}).named("move").in_set("physics");
/// schedule.add_system(|_: &mut World| {}).named("read_input").in_set("input");
/// schedule.configure_set("physics").after("input");
/// assert_eq!(schedule.order().unwrap(), ["read_input", "move"]);
/// ```
pub struct SetConfig<'a> {
    schedule: &'a mut Schedule,
    index: usize,
}

impl SetConfig<'_> {
    /// Every system of the set runs after the system or every system of the set named `name`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("b").in_set("late");
    /// schedule.add_system(|_: &mut World| {}).named("a");
    /// schedule.configure_set("late").after("a");
    /// assert_eq!(schedule.order().unwrap(), ["a", "b"]);
    /// ```
    pub fn after(self, name: impl Into<String>) -> Self {
        self.schedule.plan = None;
        self.schedule.sets[self.index].after.push(name.into());
        self
    }

    /// Every system of the set runs before the system or every system of the set named `name`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("b");
    /// schedule.add_system(|_: &mut World| {}).named("a").in_set("early");
    /// schedule.configure_set("early").before("b");
    /// assert_eq!(schedule.order().unwrap(), ["a", "b"]);
    /// ```
    pub fn before(self, name: impl Into<String>) -> Self {
        self.schedule.plan = None;
        self.schedule.sets[self.index].before.push(name.into());
        self
    }
}
