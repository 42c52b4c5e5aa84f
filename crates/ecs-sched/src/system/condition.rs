//! Run conditions: read-only systems that return `bool` and gate another system.
//!
//! `schedule.add_system(s).run_if(c)` evaluates `c` right before `s`, on the same worker, each
//! run; `s` runs only if every one of its conditions returned `true`. A condition's access
//! joins its system's in the plan (a condition reading `Res<Paused>` orders the gated system
//! against writers of `Paused`), so evaluating it is as safe as running the system. Every
//! condition of a system is evaluated on every run (no short-circuit), so a counter such as
//! [`every_n_runs`] advances whatever the other conditions say.
//!
//! Conditions must be read-only: no `ResMut`, no writing query, no `Commands`, no
//! `EventWriter`, not exclusive (`run_if` panics otherwise). A skipped system records nothing:
//! no commands, no events. Cost: one virtual call and the parameters' `get` per condition per
//! run; a skipped system costs its conditions only, and shows as skipped in the timings.

use std::any::type_name;
use std::marker::PhantomData;

use ecs_core::{Components, World};

use crate::error::ScheduleError;
use crate::saved_state::{StateError, StateReader, StateWriter};
use crate::system::access::{Conflict, SystemAccess};
use crate::system::param::{Local, Res, SystemParam};
use crate::system::per_world::PerWorld;
use crate::system::{
    declare_params, default_name, init_params_for, load_param_state, save_param_state,
    SystemParamFunction,
};

/// A built condition, ready for the schedule (crate-private behind [`Condition`]).
pub(crate) trait ConditionSystem: Send + Sync + 'static {
    fn name(&self) -> &str;
    fn access(&self) -> &SystemAccess;
    /// As [`System::redeclare`](crate::System::redeclare).
    fn redeclare(&mut self, registry: &mut Components) -> Result<(), Conflict>;
    fn initialize(&mut self, world: &mut World);
    /// # Safety
    /// `initialize` was called with this world, and no system running at the same time
    /// conflicts with [`ConditionSystem::access`].
    unsafe fn evaluate(&mut self, world: &World) -> bool;
    /// As [`System::save_state`](crate::System::save_state).
    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<bool, StateError>;
    /// As [`System::load_state`](crate::System::load_state).
    fn load_state(&mut self, world: &World, input: Option<&mut StateReader<'_>>);
}

/// A condition built against a schedule's registry: what [`IntoCondition::into_condition`]
/// returns. Opaque; only this crate makes one, so the schedule trusts nothing user-written.
pub struct Condition(pub(crate) Box<dyn ConditionSystem>);

impl Condition {
    /// The condition's name (its function's, or the one given to [`named_condition`]).
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::{every_n_runs, IntoCondition};
    /// let c = every_n_runs(5).into_condition(&mut Components::default()).unwrap();
    /// assert_eq!(c.name(), "every_n_runs(5)");
    /// ```
    pub fn name(&self) -> &str {
        self.0.name()
    }
}

/// Something that can gate a system: a function of read-only system parameters returning
/// `bool`, or a named one from [`named_condition`] and the common conditions.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{Res, ResMut, Schedule};
/// struct Paused(bool);
/// fn not_paused(p: Res<Paused>) -> bool { !p.0 }
/// fn tick(mut n: ResMut<u32>) { *n += 1; }
/// let mut world = World::new();
/// world.insert_resource(Paused(true));
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(tick).run_if(not_paused);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(*world.resource::<u32>(), 0);
/// world.resource_mut::<Paused>().0 = false;
/// schedule.run(&mut world).unwrap();
/// assert_eq!(*world.resource::<u32>(), 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a run condition",
    label = "not a run condition",
    note = "a run condition is a function or closure returning `bool` whose parameters are \
            read-only system parameters: `Res<R>`, `Option<Res<R>>`, `Query` of `RefRO` items, \
            `Local<T>`, `EventReader<E>`, `&World`"
)]
pub trait IntoCondition<Marker> {
    /// Builds the condition, computing its access against `registry`.
    ///
    /// # Errors
    /// [`ScheduleError::ConflictingParams`] if its own parameters conflict.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::{IntoCondition, Res};
    /// fn ready(r: Res<bool>) -> bool { *r }
    /// let c = ready.into_condition(&mut Components::default()).unwrap();
    /// assert_eq!(c.name(), "ready");
    /// ```
    fn into_condition(self, registry: &mut Components) -> Result<Condition, ScheduleError>;
}

/// A condition function with the name it shows under (see [`named_condition`]).
pub struct NamedCondition<F> {
    name: String,
    func: F,
}

/// Gives a condition a name for `explain()` and timings (the default is its function's name).
///
/// ```
/// # use ecs_core::Components;
/// # use ecs_sched::{named_condition, IntoCondition, Res};
/// let c = named_condition("ready", |r: Res<bool>| *r);
/// assert_eq!(c.into_condition(&mut Components::default()).unwrap().name(), "ready");
/// ```
pub fn named_condition<F>(name: impl Into<String>, func: F) -> NamedCondition<F> {
    NamedCondition {
        name: name.into(),
        func,
    }
}

fn build<M: 'static, F: SystemParamFunction<M, Out = bool>>(
    func: F,
    name: String,
    registry: &mut Components,
) -> Result<Condition, ScheduleError> {
    let access = declare_params::<F::Param>(&name, registry)?;
    Ok(Condition(Box::new(ConditionFn {
        func,
        name,
        access,
        states: PerWorld::default(),
        _marker: PhantomData,
    })))
}

impl<M: 'static, F: SystemParamFunction<M, Out = bool>> IntoCondition<(M,)> for F {
    fn into_condition(self, registry: &mut Components) -> Result<Condition, ScheduleError> {
        build(self, default_name::<F>(), registry)
    }
}

/// Marker of [`NamedCondition`]'s impl.
pub struct Named;

impl<M: 'static, F: SystemParamFunction<M, Out = bool>> IntoCondition<(M, Named)>
    for NamedCondition<F>
{
    fn into_condition(self, registry: &mut Components) -> Result<Condition, ScheduleError> {
        build(self.func, self.name, registry)
    }
}

/// A condition function with its name, access and parameter state.
struct ConditionFn<M, F: SystemParamFunction<M>> {
    func: F,
    name: String,
    access: SystemAccess,
    states: PerWorld<<F::Param as SystemParam>::State>,
    _marker: PhantomData<fn() -> M>,
}

impl<M: 'static, F: SystemParamFunction<M, Out = bool>> ConditionSystem for ConditionFn<M, F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    fn redeclare(&mut self, registry: &mut Components) -> Result<(), Conflict> {
        let mut access = SystemAccess::default();
        F::Param::declare(&mut access, registry)?;
        self.access = access;
        Ok(())
    }

    fn initialize(&mut self, world: &mut World) {
        let name = &self.name;
        self.states
            .select(world.id(), || init_params_for::<F::Param>(world, name));
    }

    unsafe fn evaluate(&mut self, world: &World) -> bool {
        let Some(state) = self.states.current(world.id()) else {
            panic!(
                "condition `{}` run on a world it was not initialised for",
                self.name
            );
        };
        // SAFETY: the caller promises that nothing running meanwhile conflicts with the
        // declared access, and the parameters declared everything they touch.
        let params = unsafe { F::Param::get(state, world, &self.name) };
        self.func.call(params)
    }

    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<bool, StateError> {
        save_param_state::<F::Param>(&self.states, out)
    }

    fn load_state(&mut self, world: &World, input: Option<&mut StateReader<'_>>) {
        load_param_state::<F::Param>(&mut self.states, world, input);
    }
}

// ----- common conditions ---------------------------------------------------------------------

/// True on the first run and then every `n`th (runs 0, n, 2n, ...); `n == 0` counts as 1.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{every_n_runs, ResMut, Schedule};
/// fn tick(mut n: ResMut<u32>) { *n += 1; }
/// let mut world = World::new();
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(tick).run_if(every_n_runs(5));
/// for _ in 0..10 { schedule.run(&mut world).unwrap(); }
/// assert_eq!(*world.resource::<u32>(), 2);
/// ```
pub fn every_n_runs(
    n: u64,
) -> NamedCondition<impl FnMut(Local<u64>) -> bool + Send + Sync + 'static> {
    let n = n.max(1);
    named_condition(format!("every_n_runs({n})"), move |mut runs: Local<u64>| {
        let due = *runs % n == 0;
        *runs += 1;
        due
    })
}

/// True when resource `R` is in the world.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{resource_exists, ResMut, Schedule};
/// struct Enabled;
/// fn tick(mut n: ResMut<u32>) { *n += 1; }
/// let mut world = World::new();
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(tick).run_if(resource_exists::<Enabled>());
/// schedule.run(&mut world).unwrap();
/// world.insert_resource(Enabled);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(*world.resource::<u32>(), 1);
/// ```
pub fn resource_exists<R: Send + Sync + 'static>(
) -> NamedCondition<impl FnMut(Option<Res<R>>) -> bool + Send + Sync + 'static> {
    named_condition(
        format!("resource_exists::<{}>", short(type_name::<R>())),
        |r: Option<Res<R>>| r.is_some(),
    )
}

/// True when resource `R` exists and differs from what this condition saw on its previous
/// evaluation (or it is the first evaluation that finds it). Compares values, so `R` must be
/// `PartialEq + Clone`; the copy is kept in the condition's own state.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{resource_changed, ResMut, Schedule};
/// #[derive(Clone, PartialEq)]
/// struct Level(u32);
/// fn count(mut n: ResMut<u32>) { *n += 1; }
/// let mut world = World::new();
/// world.insert_resource(Level(1));
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(count).run_if(resource_changed::<Level>());
/// schedule.run(&mut world).unwrap(); // first sight: changed
/// schedule.run(&mut world).unwrap(); // same value
/// world.resource_mut::<Level>().0 = 2;
/// schedule.run(&mut world).unwrap(); // changed
/// assert_eq!(*world.resource::<u32>(), 2);
/// ```
#[expect(
    clippy::type_complexity,
    reason = "the condition's parameter types are its access declaration"
)]
pub fn resource_changed<R: PartialEq + Clone + Send + Sync + 'static>(
) -> NamedCondition<impl FnMut(Option<Res<R>>, Local<Seen<R>>) -> bool + Send + Sync + 'static> {
    named_condition(
        format!("resource_changed::<{}>", short(type_name::<R>())),
        |r: Option<Res<R>>, mut seen: Local<Seen<R>>| match r {
            Some(r) if seen.0.as_ref() != Some(&*r) => {
                seen.0 = Some(R::clone(&r));
                true
            }
            Some(_) => false,
            None => {
                seen.0 = None;
                false
            }
        },
    )
}

/// The last value [`resource_changed`] saw.
pub struct Seen<R>(Option<R>);

impl<R> Default for Seen<R> {
    fn default() -> Self {
        Self(None)
    }
}

/// A type name without its module path (`game::Paused` becomes `Paused`).
fn short(name: &str) -> &str {
    match name.find('<') {
        Some(_) => name,
        None => name.rsplit("::").next().unwrap_or(name),
    }
}

/// Whether a condition's access is read-only (what `run_if` requires).
pub(crate) fn is_read_only(access: &SystemAccess) -> bool {
    access.write_names().is_empty() && access.event_write_names().is_empty()
}
