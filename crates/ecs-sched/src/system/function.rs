//! Function systems: a function or closure whose parameters are all [`SystemParam`]s
//! ([`SystemParamFunction`], implemented for up to twelve parameters) becomes a
//! [`FunctionSystem`], which keeps the parameters' access set and their state per world. The
//! helpers here (declaring parameters, building and saving their state) serve run conditions
//! too.

use std::marker::PhantomData;

use ecs_core::{Components, World};

use super::boxed::{default_name, IntoSystem, System};
use crate::commands::id_lanes::LanePlan;
use crate::error::{CommandError, ScheduleError};
use crate::saved_state::{StateError, StateReader, StateWriter};
use crate::system::access::{Conflict, SystemAccess};
use crate::system::param::{ParamItem, SystemParam};
use crate::system::per_world::PerWorld;

/// A function that can run as a system with parameters `Param`.
///
/// ```
/// # use ecs_sched::{Res, SystemParamFunction};
/// fn takes<M, F: SystemParamFunction<M>>(_: F) -> bool { true }
/// fn show(_: Res<u32>) {}
/// assert!(takes(show));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be called with system parameters",
    label = "a parameter of this function is not a system parameter",
    note = "accepted parameters: `Query<Q, F>`, `Res<R>`, `ResMut<R>`, `Option<Res<R>>`, \
            `Option<ResMut<R>>`, `Local<T>`, `Commands`, `EventReader<E>`, `EventWriter<E>`, \
            `ParamSet<(P0, P1, ..)>`, `Single<Q, F>`, `Option<Single<Q, F>>`, \
            `Populated<Q, F>`, `&World`, and tuples of these (up to twelve); an \
            exclusive system takes `&mut World` alone"
)]
pub trait SystemParamFunction<Marker>: Send + Sync + 'static {
    /// The parameters, as a tuple.
    ///
    /// ```
    /// # use ecs_sched::SystemParamFunction;
    /// fn param_name<M, F: SystemParamFunction<M>>(_: &F) -> &'static str {
    ///     std::any::type_name::<F::Param>()
    /// }
    /// fn no_params() {}
    /// assert_eq!(param_name(&no_params), "()");
    /// ```
    type Param: SystemParam;

    /// What the function returns: `()` for a system, `bool` for a run condition.
    ///
    /// ```
    /// # use ecs_sched::{Res, SystemParamFunction};
    /// fn out_name<M, F: SystemParamFunction<M>>(_: &F) -> &'static str {
    ///     std::any::type_name::<F::Out>()
    /// }
    /// fn paused(p: Res<bool>) -> bool { *p }
    /// assert_eq!(out_name(&paused), "bool");
    /// ```
    type Out;

    /// Calls the function.
    ///
    /// ```
    /// # use std::sync::atomic::{AtomicU32, Ordering};
    /// # use std::sync::Arc;
    /// # use ecs_sched::SystemParamFunction;
    /// let calls = Arc::new(AtomicU32::new(0));
    /// let counter = Arc::clone(&calls);
    /// let mut f = move || {
    ///     counter.fetch_add(1, Ordering::Relaxed);
    /// };
    /// SystemParamFunction::<fn()>::call(&mut f, ()); // no parameters: the item is `()`
    /// assert_eq!(calls.load(Ordering::Relaxed), 1);
    /// ```
    fn call(&mut self, params: ParamItem<'_, '_, Self::Param>) -> Self::Out;
}

macro_rules! function_system {
    ($($P:ident),*) => {
        #[allow(non_snake_case, reason = "names mirror the type parameters")]
        impl<Out, Func, $($P: SystemParam),*> SystemParamFunction<fn($($P,)*) -> Out> for Func
        where
            Func: Send + Sync + 'static,
            for<'a> &'a mut Func: FnMut($($P),*) -> Out + FnMut($(ParamItem<'_, '_, $P>),*) -> Out,
        {
            type Param = ($($P,)*);
            type Out = Out;

            #[allow(clippy::unused_unit, reason = "the empty tuple")]
            fn call(&mut self, params: ParamItem<'_, '_, ($($P,)*)>) -> Out {
                // Calling through a helper lets the compiler pick the `FnMut(Item..)` impl.
                #[allow(clippy::too_many_arguments, reason = "one argument per system parameter")]
                fn call_inner<Out, $($P,)*>(mut f: impl FnMut($($P,)*) -> Out, $($P: $P,)*) -> Out {
                    f($($P,)*)
                }
                let ($($P,)*) = params;
                call_inner(self, $($P,)*)
            }
        }
    };
}

function_system!();
function_system!(P0);
function_system!(P0, P1);
function_system!(P0, P1, P2);
function_system!(P0, P1, P2, P3);
function_system!(P0, P1, P2, P3, P4);
function_system!(P0, P1, P2, P3, P4, P5);
function_system!(P0, P1, P2, P3, P4, P5, P6);
function_system!(P0, P1, P2, P3, P4, P5, P6, P7);
function_system!(P0, P1, P2, P3, P4, P5, P6, P7, P8);
function_system!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9);
function_system!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10);
function_system!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11);

/// A [`SystemParamFunction`] with its name, access and parameter state.
///
/// ```
/// # use ecs_core::Components;
/// # use ecs_sched::{IntoSystem, Res};
/// fn read(_: Res<u32>) {}
/// let system = read.into_system(&mut Components::default()).unwrap();
/// assert_eq!(system.access().read_names(), ["u32"]);
/// ```
pub struct FunctionSystem<Marker, F: SystemParamFunction<Marker>> {
    func: F,
    name: String,
    access: SystemAccess,
    states: PerWorld<<F::Param as SystemParam>::State>,
    _marker: PhantomData<fn() -> Marker>,
}

/// Declares `P` against `registry`, naming `system` in the error.
pub(crate) fn declare_params<P: SystemParam>(
    system: &str,
    registry: &mut Components,
) -> Result<SystemAccess, ScheduleError> {
    let mut access = SystemAccess::default();
    if let Err(conflict) = P::declare(&mut access, registry) {
        let mut component = conflict.to_string();
        if let Some(fix) = access.take_fix() {
            // `ScheduleError`'s message shows the fix in place of its generic hint.
            component = format!("{component} ({fix})");
        }
        return Err(ScheduleError::ConflictingParams {
            system: system.to_owned(),
            component,
        });
    }
    Ok(access)
}

/// Builds `P`'s state for `world`, after checking that `P`'s parameters do not conflict under
/// `world`'s component kinds. The access was declared against a registry that may not know
/// them (a schedule's, before it saw this world): a `With<T>` / `Without<T>` pair proves
/// nothing once `world` made `T` enableable, and the two queries' `&mut` items would alias.
/// A schedule finds this first (as a typed error); this check keeps a system driven by hand
/// (`run_exclusive`) just as safe.
///
/// # Panics
/// If the parameters conflict in `world`.
pub(crate) fn init_params_for<P: SystemParam>(world: &mut World, system: &str) -> P::State {
    if let Err(err) = declare_params::<P>(system, &mut world.components().fork()) {
        panic!(
            "{err} (in world {:?}, with its component kinds)",
            world.id()
        );
    }
    P::init_state(world)
}

impl<Marker: 'static, F: SystemParamFunction<Marker, Out = ()>> IntoSystem<(Marker,)> for F {
    fn into_system(self, registry: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        let name = default_name::<F>();
        let access = declare_params::<F::Param>(&name, registry)?;
        Ok(Box::new(FunctionSystem {
            func: self,
            name,
            access,
            states: PerWorld::default(),
            _marker: PhantomData,
        }))
    }
}

// SAFETY: `access` is computed once, in `into_system`, by the parameters' `declare` against the
// registry `into_system` was given; `SystemParam` implementors promise that `get` touches only
// what `declare` recorded (contract 1, 2). `run_exclusive` goes through the `&mut World` (3).
unsafe impl<Marker: 'static, F: SystemParamFunction<Marker, Out = ()>> System
    for FunctionSystem<Marker, F>
{
    fn name(&self) -> &str {
        &self.name
    }

    fn set_name(&mut self, name: String) {
        self.name = name;
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

    unsafe fn run_shared(&mut self, world: &World) {
        let Some(state) = self.states.current(world.id()) else {
            panic!(
                "system `{}` run on a world it was not initialised for",
                self.name
            );
        };
        // SAFETY: the caller promises that no conflicting system runs meanwhile, and the
        // parameters declared everything they touch.
        let params = unsafe { F::Param::get(state, world, &self.name) };
        self.func.call(params);
    }

    fn run_exclusive(&mut self, world: &mut World) {
        self.initialize(world);
        // SAFETY: `&mut World` excludes every other access.
        unsafe { self.run_shared(world) }
    }

    unsafe fn validate(&mut self, world: &World) -> bool {
        match self.states.current(world.id()) {
            // SAFETY: the caller's contract is `run_shared`'s, which covers the parameters'
            // declared access.
            Some(state) => unsafe { F::Param::validate(state, world) },
            None => true, // `run_shared` reports the missing initialisation
        }
    }

    fn plan_lanes(&mut self, world: &World, plan: &mut LanePlan) {
        if let Some(state) = self.states.get_mut(world.id()) {
            F::Param::plan_lanes(state, plan);
        }
    }

    fn apply_deferred(&mut self, world: &mut World, errors: &mut Vec<CommandError>, discard: bool) {
        if let Some(state) = self.states.get_mut(world.id()) {
            F::Param::apply(state, world, &self.name, errors, discard);
        }
    }

    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<bool, StateError> {
        save_param_state::<F::Param>(&self.states, out)
    }

    fn load_state(&mut self, world: &World, input: Option<&mut StateReader<'_>>) {
        load_param_state::<F::Param>(&mut self.states, world, input);
    }
}

/// [`System::save_state`] for a system whose parameters `P` keep `states`.
pub(crate) fn save_param_state<P: SystemParam>(
    states: &PerWorld<P::State>,
    out: &mut StateWriter<'_>,
) -> Result<bool, StateError> {
    match states.get(out.world().id()) {
        Some(state) => P::save_state(state, out).map(|()| true),
        None => Ok(false),
    }
}

/// [`System::load_state`] for a system whose parameters `P` keep `states`.
pub(crate) fn load_param_state<P: SystemParam>(
    states: &mut PerWorld<P::State>,
    world: &World,
    input: Option<&mut StateReader<'_>>,
) {
    match input {
        Some(input) => {
            let state = states
                .get_mut(world.id())
                .expect("initialised for this world before its state is loaded");
            P::load_state(state, input);
        }
        None => states.remove(world.id()),
    }
}
