//! System parameters: the types a system function may take, and what each one accesses.
//!
//! A parameter declares its access when the system is added ([`SystemParam::declare`]); the
//! schedule uses those declarations to decide what may run in parallel, and that decision is
//! what makes handing out `&mut` data through a shared `&World` sound here.

use std::any::{type_name, TypeId};
use std::ops::{Deref, DerefMut};

use ecs_core::{Components, World};

use crate::commands::id_lanes::LanePlan;
use crate::commands::{CommandQueue, Commands};
use crate::error::CommandError;
use crate::saved_state::{StateError, StateReader, StateWriter};
use crate::system::access::{Conflict, SystemAccess};

/// A value a system can take as a parameter.
///
/// # Safety
/// Implementors promise that `declare` records every component and resource `get`'s item reads
/// (as reads) or writes (as writes), or the whole world, with component ids taken from the
/// registry `declare` is given (registering as needed), which it never replaces.
///
/// ```
/// # use ecs_core::Components;
/// # use ecs_sched::{Res, ResMut, SystemAccess, SystemParam};
/// let mut access = SystemAccess::default();
/// let mut registry = Components::default();
/// <(Res<u32>, ResMut<u64>)>::declare(&mut access, &mut registry).unwrap();
/// assert_eq!((access.read_names(), access.write_names()), (vec!["u32"], vec!["u64"]));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system parameter",
    label = "not a system parameter",
    note = "accepted parameters: `Query<Q, F>`, `Res<R>`, `ResMut<R>`, `Option<Res<R>>`, \
            `Option<ResMut<R>>`, `Local<T>`, `Commands`, `EventReader<E>`, `EventWriter<E>`, \
            `ParamSet<(P0, P1, ..)>`, `Single<Q, F>`, `Option<Single<Q, F>>`, \
            `Populated<Q, F>`, `&World`, and tuples of these (up to twelve); an \
            exclusive system takes `&mut World` alone"
)]
pub unsafe trait SystemParam: Sized {
    /// Per-system data kept between runs (query caches, local values, command queues).
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::{Local, SystemParam};
    /// type State = <Local<'static, u64> as SystemParam>::State;
    /// assert_eq!(TypeId::of::<State>(), TypeId::of::<u64>()); // the local value itself
    /// ```
    type State: Send + Sync + 'static;
    /// The value handed to the system.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::{Res, SystemParam};
    /// type Item = <Res<'static, u32> as SystemParam>::Item<'static, 'static>;
    /// assert_eq!(TypeId::of::<Item>(), TypeId::of::<Res<'static, u32>>());
    /// ```
    type Item<'w, 's>;

    /// Records the parameter's access, with ids from the schedule's type registry.
    ///
    /// # Errors
    /// The conflict, if it clashes with what the system's other parameters access.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::{Conflict, Res, ResMut, SystemAccess, SystemParam};
    /// let (mut access, mut registry) = (SystemAccess::default(), Components::default());
    /// <Res<u32>>::declare(&mut access, &mut registry).unwrap();
    /// let err = <ResMut<u32>>::declare(&mut access, &mut registry).unwrap_err();
    /// assert_eq!(err, Conflict::Resource("u32"));
    /// ```
    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict>;

    /// Builds the state for `world`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Local, SystemParam};
    /// let mut world = World::new();
    /// let state: u32 = <Local<u32>>::init_state(&mut world);
    /// assert_eq!(state, 0); // `Local<T>` starts at `T::default()`
    /// ```
    fn init_state(world: &mut World) -> Self::State;

    /// The item for one run.
    ///
    /// # Safety
    /// No system running at the same time conflicts with this parameter's declared access.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{ResMut, SystemParam};
    /// let mut world = World::new();
    /// world.insert_resource(1u32);
    /// let mut state = <ResMut<u32>>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// *unsafe { <ResMut<u32>>::get(&mut state, &world, "doc") } = 2;
    /// assert_eq!(*world.resource::<u32>(), 2);
    /// ```
    unsafe fn get<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        system: &str,
    ) -> Self::Item<'w, 's>;

    /// Whether the system can run now: `false` skips this run of the system, as a false run
    /// condition does ([`Single`](crate::Single) when not exactly one entity matches,
    /// [`Populated`](crate::Populated) when none does). Called just before [`SystemParam::get`],
    /// with the same access. The default is `true`.
    ///
    /// # Safety
    /// As [`SystemParam::get`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRO;
    /// # use ecs_sched::{Single, SystemParam};
    /// let mut world = World::new();
    /// let mut state = <Single<RefRO<u32>>>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// assert!(!unsafe { <Single<RefRO<u32>>>::validate(&mut state, &world) });
    /// world.spawn((1u32,));
    /// // SAFETY: as above, no system runs at the same time.
    /// assert!(unsafe { <Single<RefRO<u32>>>::validate(&mut state, &world) });
    /// ```
    unsafe fn validate(_state: &mut Self::State, _world: &World) -> bool {
        true
    }

    /// Takes the id lanes this parameter reserves entities in during the coming run (see
    /// [`LanePlan`]); called by the schedule with `&mut World`, in plan order, before a
    /// parallel segment. `Commands` takes one lane; containers forward to their members. The
    /// default takes none.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Commands, LanePlan, Res, SystemParam};
    /// let mut world = World::new();
    /// let mut state = <(Commands, Res<u32>, Commands)>::init_state(&mut world);
    /// let mut plan = LanePlan::default();
    /// <(Commands, Res<u32>, Commands)>::plan_lanes(&mut state, &mut plan);
    /// assert_eq!(plan.lanes(), 2);
    /// ```
    fn plan_lanes(_state: &mut Self::State, _plan: &mut LanePlan) {}

    /// Saves what this parameter keeps between runs that changes later runs, for a
    /// simulation snapshot (the `saved_state` module lists what each parameter saves). The
    /// default saves nothing.
    ///
    /// # Errors
    /// A [`StateError`] naming the system and the type that cannot be saved.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Local, SimSnapshot, Schedule};
    /// fn count(mut n: Local<u32>) { *n += 1; }
    /// let mut world = World::new();
    /// let mut schedule = Schedule::single_threaded();
    /// schedule.add_system(count);
    /// schedule.run(&mut world).unwrap();
    /// let snap = SimSnapshot::capture(&world, &[&schedule], None).unwrap(); // saves `n == 1`
    /// # let _ = snap;
    /// ```
    fn save_state(_state: &Self::State, _out: &mut StateWriter<'_>) -> Result<(), StateError> {
        Ok(())
    }

    /// Reads back what [`SystemParam::save_state`] saved, in the same order. The default reads
    /// nothing.
    fn load_state(_state: &mut Self::State, _input: &mut StateReader<'_>) {}

    /// Applies (or with `discard`, drops) deferred work, such as recorded commands.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Commands, SystemParam};
    /// let mut world = World::new();
    /// let mut state = <Commands>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// unsafe { <Commands>::get(&mut state, &world, "doc") }.spawn((1u32,));
    /// let mut errors = Vec::new();
    /// <Commands>::apply(&mut state, &mut world, "doc", &mut errors, false);
    /// assert_eq!((world.len(), errors.len()), (1, 0));
    /// ```
    fn apply(
        _state: &mut Self::State,
        _world: &mut World,
        _system: &str,
        _errors: &mut Vec<CommandError>,
        _discard: bool,
    ) {
    }
}

/// The item type of parameter `P`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{ParamItem, Res, SystemParam};
/// let mut world = World::new();
/// world.insert_resource(3u32);
/// let mut state = <Res<u32>>::init_state(&mut world);
/// // SAFETY: no system runs at the same time.
/// let item: ParamItem<'_, '_, Res<u32>> = unsafe { <Res<u32>>::get(&mut state, &world, "doc") };
/// assert_eq!(*item, 3);
/// ```
pub type ParamItem<'w, 's, P> = <P as SystemParam>::Item<'w, 's>;

// ----- resources -----------------------------------------------------------------------------

/// Shared access to resource `R`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{Res, ResMut, Schedule};
/// struct Gravity(f32);
/// fn fall(g: Res<Gravity>, mut speed: ResMut<f32>) { *speed += g.0; }
/// let mut world = World::new();
/// world.insert_resource(Gravity(9.8));
/// world.insert_resource(0.0f32);
/// let mut schedule = Schedule::new();
/// schedule.add_system(fall);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(*world.resource::<f32>(), 9.8);
/// ```
pub struct Res<'w, R: Send + Sync + 'static> {
    value: &'w R,
}

impl<'w, R: Send + Sync + 'static> Res<'w, R> {
    /// The reference itself, for parameters built on `Res`.
    pub(crate) fn into_inner(self) -> &'w R {
        self.value
    }
}

impl<R: Send + Sync + 'static> Deref for Res<'_, R> {
    type Target = R;

    fn deref(&self) -> &R {
        self.value
    }
}

/// Exclusive access to resource `R`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{ResMut, Schedule};
/// fn count_frames(mut frames: ResMut<u64>) { *frames += 1; }
/// let mut world = World::new();
/// world.insert_resource(0u64);
/// let mut schedule = Schedule::new();
/// schedule.add_system(count_frames);
/// schedule.run(&mut world).unwrap();
/// schedule.run(&mut world).unwrap();
/// assert_eq!(*world.resource::<u64>(), 2);
/// ```
pub struct ResMut<'w, R: Send + Sync + 'static> {
    value: &'w mut R,
}

impl<R: Send + Sync + 'static> Deref for ResMut<'_, R> {
    type Target = R;

    fn deref(&self) -> &R {
        self.value
    }
}

impl<R: Send + Sync + 'static> DerefMut for ResMut<'_, R> {
    fn deref_mut(&mut self) -> &mut R {
        self.value
    }
}

#[cold]
#[track_caller]
fn missing_resource<R>(system: &str) -> ! {
    panic!(
        "system `{system}` needs resource `{}`, which is not in the world",
        type_name::<R>()
    )
}

// SAFETY: declares a read of `R` and only reads it.
unsafe impl<R: Send + Sync + 'static> SystemParam for Res<'_, R> {
    type State = ();
    type Item<'w, 's> = Res<'w, R>;

    fn declare(access: &mut SystemAccess, _: &mut Components) -> Result<(), Conflict> {
        access.add_resource_read(TypeId::of::<R>(), type_name::<R>())
    }

    fn init_state(_: &mut World) {}

    unsafe fn get<'w, 's>(_: &'s mut (), world: &'w World, system: &str) -> Self::Item<'w, 's> {
        let ptr = world
            .resources()
            .get_ptr::<R>()
            .unwrap_or_else(|| missing_resource::<R>(system));
        // SAFETY: no concurrently running system writes `R` (declared read, caller contract).
        let value = unsafe { ptr.as_ref() };
        Res { value }
    }
}

// SAFETY: declares a write of `R`, the only access it makes.
unsafe impl<R: Send + Sync + 'static> SystemParam for ResMut<'_, R> {
    type State = ();
    type Item<'w, 's> = ResMut<'w, R>;

    fn declare(access: &mut SystemAccess, _: &mut Components) -> Result<(), Conflict> {
        access.add_resource_write(TypeId::of::<R>(), type_name::<R>())
    }

    fn init_state(_: &mut World) {}

    fn save_state(_: &(), out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.require_snapshot_resource::<R>()
    }

    unsafe fn get<'w, 's>(_: &'s mut (), world: &'w World, system: &str) -> Self::Item<'w, 's> {
        let mut ptr = world
            .resources()
            .get_ptr::<R>()
            .unwrap_or_else(|| missing_resource::<R>(system));
        // SAFETY: no concurrently running system touches `R` (declared write, caller contract),
        // and the system's own parameters cannot also hold `R` (`declare` refuses it).
        let value = unsafe { ptr.as_mut() };
        ResMut { value }
    }
}

// SAFETY: declares a read of `R`, like `Res<R>`, and only reads it.
unsafe impl<R: Send + Sync + 'static> SystemParam for Option<Res<'_, R>> {
    type State = ();
    type Item<'w, 's> = Option<Res<'w, R>>;

    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
        <Res<'_, R>>::declare(access, registry)
    }

    fn init_state(_: &mut World) {}

    /// `None` when `R` is not in the world.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Res, ResMut, Schedule};
    /// struct Time(f32);
    /// fn clock(time: Option<Res<Time>>, mut out: ResMut<f32>) {
    ///     *out = time.map_or(-1.0, |t| t.0);
    /// }
    /// let mut world = World::new();
    /// world.insert_resource(0.0f32);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(clock);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<f32>(), -1.0);
    /// world.insert_resource(Time(0.5));
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<f32>(), 0.5);
    /// ```
    unsafe fn get<'w, 's>(_: &'s mut (), world: &'w World, _: &str) -> Self::Item<'w, 's> {
        let ptr = world.resources().get_ptr::<R>()?;
        // SAFETY: no concurrently running system writes `R` (declared read, caller contract).
        let value = unsafe { ptr.as_ref() };
        Some(Res { value })
    }
}

// SAFETY: declares a write of `R`, like `ResMut<R>`, the only access it makes.
unsafe impl<R: Send + Sync + 'static> SystemParam for Option<ResMut<'_, R>> {
    type State = ();
    type Item<'w, 's> = Option<ResMut<'w, R>>;

    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
        <ResMut<'_, R>>::declare(access, registry)
    }

    fn init_state(_: &mut World) {}

    fn save_state(_: &(), out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.require_snapshot_resource::<R>()
    }

    /// `None` when `R` is not in the world.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{ResMut, Schedule};
    /// fn bump(n: Option<ResMut<u32>>) { if let Some(mut n) = n { *n += 1; } }
    /// let mut world = World::new();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(bump);
    /// schedule.run(&mut world).unwrap(); // no `u32`: nothing to do
    /// world.insert_resource(1u32);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<u32>(), 2);
    /// ```
    unsafe fn get<'w, 's>(_: &'s mut (), world: &'w World, _: &str) -> Self::Item<'w, 's> {
        let mut ptr = world.resources().get_ptr::<R>()?;
        // SAFETY: as for `ResMut<R>`: declared write, so nothing else touches `R` meanwhile,
        // and the system's own parameters cannot also hold `R` (`declare` refuses it).
        let value = unsafe { ptr.as_mut() };
        Some(ResMut { value })
    }
}

// ----- Local, Commands, &World ---------------------------------------------------------------

/// A value private to one system, kept between its runs (starts as `T::default()`).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{Local, ResMut, Schedule};
/// fn runs(mut seen: Local<u32>, mut out: ResMut<u32>) { *seen += 1; *out = *seen; }
/// let mut world = World::new();
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::new();
/// schedule.add_system(runs);
/// for _ in 0..3 { schedule.run(&mut world).unwrap(); }
/// assert_eq!(*world.resource::<u32>(), 3);
/// ```
pub struct Local<'s, T: Default + Send + Sync + 'static> {
    value: &'s mut T,
}

impl<T: Default + Send + Sync + 'static> Deref for Local<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: Default + Send + Sync + 'static> DerefMut for Local<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value
    }
}

// SAFETY: touches only its own state.
unsafe impl<T: Default + Send + Sync + 'static> SystemParam for Local<'_, T> {
    type State = T;
    type Item<'w, 's> = Local<'s, T>;

    fn declare(_: &mut SystemAccess, _: &mut Components) -> Result<(), Conflict> {
        Ok(())
    }

    fn init_state(_: &mut World) -> T {
        T::default()
    }

    fn save_state(state: &T, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.save_value(state)
    }

    fn load_state(state: &mut T, input: &mut StateReader<'_>) {
        *state = input.load_value();
    }

    unsafe fn get<'w, 's>(state: &'s mut T, _: &'w World, _: &str) -> Self::Item<'w, 's> {
        Local { value: state }
    }
}

// SAFETY: only reserves entity ids (atomics, in its own lane) while running; structural changes
// wait for `apply` with `&mut World`.
unsafe impl SystemParam for Commands<'_, '_> {
    type State = CommandQueue;
    type Item<'w, 's> = Commands<'w, 's>;

    fn declare(access: &mut SystemAccess, _: &mut Components) -> Result<(), Conflict> {
        access.add_commands();
        Ok(())
    }

    fn init_state(_: &mut World) -> CommandQueue {
        CommandQueue::default()
    }

    unsafe fn get<'w, 's>(
        state: &'s mut CommandQueue,
        world: &'w World,
        _: &str,
    ) -> Commands<'w, 's> {
        Commands::new(world, state)
    }

    fn plan_lanes(state: &mut CommandQueue, plan: &mut LanePlan) {
        state.plan_lane(plan);
    }

    fn apply(
        state: &mut CommandQueue,
        world: &mut World,
        system: &str,
        errors: &mut Vec<CommandError>,
        discard: bool,
    ) {
        if discard {
            state.discard(world);
        } else {
            state.apply(world, system, errors);
        }
    }
}

// SAFETY: declares a read of the whole world, which conflicts with every writer.
unsafe impl SystemParam for &World {
    type State = ();
    type Item<'w, 's> = &'w World;

    fn declare(access: &mut SystemAccess, _: &mut Components) -> Result<(), Conflict> {
        access.add_world_read()
    }

    fn init_state(_: &mut World) {}

    unsafe fn get<'w, 's>(_: &'s mut (), world: &'w World, _: &str) -> Self::Item<'w, 's> {
        world
    }
}

macro_rules! param_tuple {
    ($($P:ident),*) => {
        // SAFETY: declares the union of the elements' access, refusing internal conflicts.
        #[allow(non_snake_case, reason = "names mirror the type parameters")]
        unsafe impl<$($P: SystemParam),*> SystemParam for ($($P,)*) {
            type State = ($($P::State,)*);
            type Item<'w, 's> = ($($P::Item<'w, 's>,)*);

            #[allow(unused_variables, reason = "the empty tuple")]
            fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
                $($P::declare(access, registry)?;)*
                Ok(())
            }

            #[allow(unused_variables, clippy::unused_unit, reason = "the empty tuple")]
            fn init_state(world: &mut World) -> Self::State {
                ($($P::init_state(world),)*)
            }

            #[allow(unused_variables, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn get<'w, 's>(state: &'s mut Self::State, world: &'w World, system: &str) -> Self::Item<'w, 's> {
                let ($($P,)*) = state;
                // SAFETY: the tuple's access is the union of its elements' (checked disjoint when
                // the system was built), so the caller's promise for the tuple (no conflicting
                // access while the items live) covers each element's `get`.
                ($(unsafe { $P::get($P, world, system) },)*)
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            unsafe fn validate(state: &mut Self::State, world: &World) -> bool {
                let ($($P,)*) = state;
                // SAFETY: as in `get`: the caller's promise for the tuple covers each element.
                true $(&& unsafe { $P::validate($P, world) })*
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn plan_lanes(state: &mut Self::State, plan: &mut LanePlan) {
                let ($($P,)*) = state;
                $($P::plan_lanes($P, plan);)*
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn save_state(state: &Self::State, out: &mut StateWriter<'_>) -> Result<(), StateError> {
                let ($($P,)*) = state;
                $($P::save_state($P, out)?;)*
                Ok(())
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn load_state(state: &mut Self::State, input: &mut StateReader<'_>) {
                let ($($P,)*) = state;
                $($P::load_state($P, input);)*
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn apply(state: &mut Self::State, world: &mut World, system: &str, errors: &mut Vec<CommandError>, discard: bool) {
                let ($($P,)*) = state;
                $($P::apply($P, world, system, errors, discard);)*
            }
        }
    };
}

param_tuple!();
param_tuple!(P0);
param_tuple!(P0, P1);
param_tuple!(P0, P1, P2);
param_tuple!(P0, P1, P2, P3);
param_tuple!(P0, P1, P2, P3, P4);
param_tuple!(P0, P1, P2, P3, P4, P5);
param_tuple!(P0, P1, P2, P3, P4, P5, P6);
param_tuple!(P0, P1, P2, P3, P4, P5, P6, P7);
param_tuple!(P0, P1, P2, P3, P4, P5, P6, P7, P8);
param_tuple!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9);
param_tuple!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10);
param_tuple!(P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11);
