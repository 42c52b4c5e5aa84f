//! Configuring what was added to a schedule: [`SystemConfig`] (name, run conditions, sets,
//! order) and [`SetConfig`] (a set's order).

use crate::error::ScheduleError;
use crate::schedule::executor::SystemCell;
use crate::system::condition::{is_read_only, IntoCondition};
use crate::system::{IntoSystem, SyncPoint, System};

use super::{Order, Schedule, SetOrder};

impl Schedule {
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
        self.orders.push(Order {
            sync_point,
            ..Order::default()
        });
        let index = self.systems.len() - 1;
        SystemConfig {
            schedule: self,
            index,
            check_name_on_drop: false,
        }
    }

    /// Configures the system named `name` again: its orders, sets and run conditions, later
    /// than the `add_system` statement (so a configuration can depend on a flag without
    /// keeping the first config, and its borrow of the schedule, alive).
    ///
    /// # Panics
    /// If no system has that name (see [`Schedule::try_configure_system`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("render");
    /// schedule.add_system(|_: &mut World| {}).named("physics");
    /// let physics_first = true;
    /// if physics_first {
    ///     schedule.configure_system("physics").before("render");
    /// }
    /// assert_eq!(schedule.order().unwrap(), ["physics", "render"]);
    /// ```
    #[track_caller]
    pub fn configure_system(&mut self, name: &str) -> SystemConfig<'_> {
        match self.try_configure_system(name) {
            Ok(config) => config,
            Err(err) => panic!("{err}"),
        }
    }

    /// [`Schedule::configure_system`], or [`ScheduleError::UnknownSystem`] if no system has
    /// that name.
    ///
    /// # Errors
    /// [`ScheduleError::UnknownSystem`].
    pub fn try_configure_system(&mut self, name: &str) -> Result<SystemConfig<'_>, ScheduleError> {
        let index = self
            .systems
            .iter()
            .position(|cell| cell.get().name() == name)
            .ok_or_else(|| ScheduleError::UnknownSystem {
                system: "configure_system".to_owned(),
                referenced: name.to_owned(),
            })?;
        Ok(SystemConfig {
            schedule: self,
            index,
            check_name_on_drop: false,
        })
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
    /// The configured system's index (the last one, from `add_system`).
    index: usize,
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
        let systems = &self.schedule.systems;
        let name = name.unwrap_or_else(|| systems[self.index].get().name());
        systems
            .iter()
            .enumerate()
            .any(|(i, cell)| i != self.index && cell.get().name() == name)
            .then(|| name.to_owned())
    }

    fn order(&mut self) -> &mut Order {
        self.schedule.plan = None;
        &mut self.schedule.orders[self.index]
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
        self.schedule.systems[self.index].get_mut().set_name(name);
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
        let index = self.index;
        let schedule = &mut *self.schedule;
        let system = schedule.systems[index].get().name().to_owned();
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
