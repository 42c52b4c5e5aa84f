//! The object-safe [`System`] trait every system of a schedule is boxed as, and
//! [`IntoSystem`], what turns a function or closure into one; beside them the systems that are
//! not functions of parameters: exclusive `&mut World` functions ([`Exclusive`]) and the
//! schedule's sync points. Functions of [`SystemParam`](crate::SystemParam)s become systems in
//! `function.rs`.

use std::any::type_name;

use ecs_core::{Components, World};

use crate::commands::id_lanes::LanePlan;
use crate::error::{CommandError, ScheduleError};
use crate::saved_state::{StateError, StateReader, StateWriter};
use crate::system::access::{Conflict, SystemAccess};

/// A unit of work the schedule runs.
///
/// The safe way to make one is a function or closure (see [`IntoSystem`]): its access set is
/// computed from its parameter types. Implementing `System` by hand is `unsafe`, because the
/// executor runs systems at the same time on the strength of what [`System::access`] says.
///
/// # Safety
/// Implementors promise:
/// 1. `run_shared` reads only what `access()` declares as read or written, writes only what it
///    declares as written, and reserves entity ids only if it declares `Commands` or a world
///    read; work that needs more is declared exclusive and done in `run_exclusive`;
/// 2. `access()` returns the same set on every call between two calls of
///    [`System::redeclare`], every component id in it comes from the registry handed to the
///    [`IntoSystem::into_system`] call that built the system (the schedule refuses an access
///    set whose [`SystemAccess::registry`] is another registry's), and it is right for the
///    component kinds that registry had at the last `into_system` or `redeclare`: a system
///    whose access depends on kinds (a `With<T>` / `Without<T>` over a type a world may make
///    enableable) recomputes it in `redeclare`;
/// 3. `run_exclusive` and `apply_deferred` touch the world only through the `&mut World`
///    they are given.
///
/// A system that declares nothing and reads the world anyway does not compile without `unsafe`:
///
/// ```compile_fail,E0200
/// # use ecs_core::World;
/// # use ecs_sched::{CommandError, System, SystemAccess};
/// struct Liar(SystemAccess);
/// impl System for Liar {
///     fn name(&self) -> &str { "liar" }
///     fn set_name(&mut self, _: String) {}
///     fn access(&self) -> &SystemAccess { &self.0 } // declares nothing...
///     fn initialize(&mut self, _: &mut World) {}
///     unsafe fn run_shared(&mut self, world: &World) {
///         let _ = world.get_resource::<u32>(); // ...reads anyway
///     }
///     fn run_exclusive(&mut self, _: &mut World) {}
///     fn apply_deferred(&mut self, _: &mut World, _: &mut Vec<CommandError>, _: bool) {}
/// }
/// ```
///
/// ```
/// # use ecs_core::{Components, World};
/// # use ecs_sched::{IntoSystem, System};
/// let mut registry = Components::default();
/// let exclusive = |w: &mut World| {
///     w.insert_resource(1u8);
/// };
/// let mut system = exclusive.into_system(&mut registry).unwrap();
/// let mut world = World::new();
/// system.initialize(&mut world);
/// system.run_exclusive(&mut world);
/// assert!(system.access().is_exclusive() && world.contains_resource::<u8>());
/// ```
pub unsafe trait System: Send + Sync + 'static {
    /// The system's name (unique within a schedule).
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::IntoSystem;
    /// fn physics() {}
    /// let system = physics.into_system(&mut Components::default()).unwrap();
    /// assert_eq!(system.name(), "physics");
    /// ```
    fn name(&self) -> &str;

    /// Renames the system.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::IntoSystem;
    /// fn physics() {}
    /// let mut system = physics.into_system(&mut Components::default()).unwrap();
    /// system.set_name("step".into());
    /// assert_eq!(system.name(), "step");
    /// ```
    fn set_name(&mut self, name: String);

    /// What the system reads and writes, known since it was built.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::{IntoSystem, Res};
    /// fn read(_: Res<u32>) {}
    /// let system = read.into_system(&mut Components::default()).unwrap();
    /// assert_eq!(system.access().read_names(), ["u32"]);
    /// ```
    fn access(&self) -> &SystemAccess;

    /// Recomputes [`System::access`] against `registry` (the one `into_system` was given)
    /// after the schedule adopted a world's component kinds into it
    /// ([`Components::adopt_kinds`]): a type the world made enableable changes what
    /// `With<T>` / `Without<T>` declare and prove disjoint. The default keeps the access as
    /// it is, which is right for a system whose access depends on no component kind.
    ///
    /// # Errors
    /// The conflict, if the system's own parameters conflict under the new kinds.
    ///
    /// ```
    /// # use ecs_core::{Components, World};
    /// # use ecs_query::{RefRW, With, Without};
    /// # use ecs_sched::{IntoSystem, Query};
    /// struct Hp(u32);
    /// struct Shield;
    /// fn split(_: Query<RefRW<Hp>, With<Shield>>, _: Query<RefRW<Hp>, Without<Shield>>) {}
    /// let mut registry = Components::for_planning();
    /// let mut system = split.into_system(&mut registry).unwrap(); // disjoint: fine
    /// let mut world = World::new();
    /// world.register_enableable::<Shield>();
    /// registry.adopt_kinds(world.components());
    /// // A disabled `Shield` matches both queries: their `&mut Hp` would alias.
    /// assert!(system.redeclare(&mut registry).is_err());
    /// ```
    fn redeclare(&mut self, registry: &mut Components) -> Result<(), Conflict> {
        let _ = registry;
        Ok(())
    }

    /// Builds (or rebuilds, for another world) the parameter states.
    ///
    /// ```
    /// # use ecs_core::{Components, World};
    /// # use ecs_sched::{IntoSystem, ResMut};
    /// fn bump(mut n: ResMut<u32>) { *n += 1; }
    /// let mut world = World::new();
    /// world.insert_resource(0u32);
    /// let mut system = bump.into_system(&mut Components::default()).unwrap();
    /// system.initialize(&mut world);
    /// system.run_exclusive(&mut world);
    /// assert_eq!(*world.resource::<u32>(), 1);
    /// ```
    fn initialize(&mut self, world: &mut World);

    /// Runs a non-exclusive system through a shared world.
    ///
    /// # Safety
    /// `initialize` was called with this world, and no system running at the same time
    /// conflicts with [`System::access`].
    ///
    /// ```
    /// # use ecs_core::{Components, World};
    /// # use ecs_sched::{IntoSystem, ResMut};
    /// fn bump(mut n: ResMut<u32>) { *n += 1; }
    /// let mut world = World::new();
    /// world.insert_resource(0u32);
    /// let mut system = bump.into_system(&mut Components::default()).unwrap();
    /// system.initialize(&mut world);
    /// // SAFETY: initialised with this world, and no other system runs.
    /// unsafe { system.run_shared(&world) };
    /// assert_eq!(*world.resource::<u32>(), 1);
    /// ```
    unsafe fn run_shared(&mut self, world: &World);

    /// Runs the system with exclusive world access.
    ///
    /// ```
    /// # use ecs_core::{Components, World};
    /// # use ecs_sched::IntoSystem;
    /// let exclusive = |w: &mut World| {
    ///     w.spawn(());
    /// };
    /// let mut system = exclusive.into_system(&mut Components::default()).unwrap();
    /// let mut world = World::new();
    /// system.initialize(&mut world);
    /// system.run_exclusive(&mut world);
    /// assert_eq!(world.len(), 1);
    /// ```
    fn run_exclusive(&mut self, world: &mut World);

    /// Whether the system can run now (its parameters'
    /// [`SystemParam::validate`](crate::SystemParam::validate)): `false` skips this run, as a
    /// false run condition does. The default is `true`.
    ///
    /// # Safety
    /// As [`System::run_shared`].
    unsafe fn validate(&mut self, world: &World) -> bool {
        let _ = world;
        true
    }

    /// Takes the id lanes the system's parameters reserve entities in during its coming run on
    /// `world` ([`SystemParam::plan_lanes`](crate::SystemParam::plan_lanes)). The schedule calls
    /// it, in plan order, before a parallel segment; the default takes none.
    fn plan_lanes(&mut self, world: &World, plan: &mut LanePlan) {
        let _ = (world, plan);
    }

    /// Saves the parameter state the system keeps for `out.world()` (its parameters'
    /// [`SystemParam::save_state`](crate::SystemParam::save_state), in order), for a simulation
    /// snapshot; `Ok(false)` when it keeps none for that world (never initialised there). The
    /// default saves nothing.
    ///
    /// # Errors
    /// As [`SystemParam::save_state`](crate::SystemParam::save_state).
    fn save_state(&self, out: &mut StateWriter<'_>) -> Result<bool, StateError> {
        let _ = out;
        Ok(true)
    }

    /// Reads back what [`System::save_state`] saved for `world` (`None`: it had no state there,
    /// so the state is dropped and built afresh at the next run). Called after
    /// [`System::initialize`] with the same world. The default reads nothing.
    fn load_state(&mut self, world: &World, input: Option<&mut StateReader<'_>>) {
        let _ = (world, input);
    }

    /// Applies (or with `discard`, drops) recorded commands.
    ///
    /// ```
    /// # use ecs_core::{Components, World};
    /// # use ecs_sched::{Commands, IntoSystem};
    /// fn spawner(mut commands: Commands) { commands.spawn((1u32,)); }
    /// let mut world = World::new();
    /// let mut system = spawner.into_system(&mut Components::default()).unwrap();
    /// system.initialize(&mut world);
    /// system.run_exclusive(&mut world);
    /// let mut errors = Vec::new();
    /// system.apply_deferred(&mut world, &mut errors, false);
    /// assert_eq!((world.len(), errors.len()), (1, 0));
    /// ```
    fn apply_deferred(&mut self, world: &mut World, errors: &mut Vec<CommandError>, discard: bool);
}

/// Something that can become a [`System`]: functions of system parameters, and
/// `FnMut(&mut World)` for exclusive systems. `Marker` only keeps the impls apart.
///
/// Implementing it is safe (an adapter can wrap another `IntoSystem`), so the schedule trusts
/// nothing it returns unchecked: the system's access set must have been built against the
/// registry `into_system` is given, and that registry must not be replaced, or
/// [`Schedule::try_add_system`](crate::Schedule::try_add_system) refuses the system with
/// [`ScheduleError::ForeignRegistry`].
///
/// A function with a parameter that is not a system parameter is refused at compile time; the
/// error names the function's type (with the bad parameter in it) and lists what is accepted
/// (`the trait bound ... is not satisfied` / ``fn(&Time) {bad}` is not a system``):
///
/// ```compile_fail,E0277
/// # use ecs_sched::Schedule;
/// struct Time(f32);
/// fn bad(time: &Time) {} // `Res<Time>` would be a parameter; `&Time` is not
/// Schedule::new().add_system(bad);
/// ```
///
/// ```
/// # use ecs_core::Components;
/// # use ecs_sched::{IntoSystem, ResMut};
/// fn tick(mut n: ResMut<u32>) { *n += 1; }
/// let mut registry = Components::default();
/// let system = tick.into_system(&mut registry).unwrap();
/// assert_eq!(system.name(), "tick");
/// assert_eq!(system.access().write_names(), ["u32"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a system",
    label = "a parameter of this function is not a system parameter, or it returns a value",
    note = "accepted parameters: `Query<Q, F>`, `Res<R>`, `ResMut<R>`, `Option<Res<R>>`, \
            `Option<ResMut<R>>`, `Local<T>`, `Commands`, `EventReader<E>`, `EventWriter<E>`, \
            `ParamSet<(P0, P1, ..)>`, `Single<Q, F>`, `Option<Single<Q, F>>`, \
            `Populated<Q, F>`, `&World`, and tuples of these (up to twelve); an \
            exclusive system takes `&mut World` alone"
)]
pub trait IntoSystem<Marker> {
    /// Builds the system, computing its access against `registry`.
    ///
    /// # Errors
    /// [`ScheduleError::ConflictingParams`] if its own parameters conflict.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::{IntoSystem, Res, ResMut};
    /// fn bad(_a: Res<u32>, _b: ResMut<u32>) {}
    /// assert!(bad.into_system(&mut Components::default()).is_err());
    /// ```
    fn into_system(self, registry: &mut Components) -> Result<Box<dyn System>, ScheduleError>;
}

/// The name `type_name` gives a function, without its module path: `game::movement` becomes
/// `movement`, a closure `game::main::{{closure}}` becomes `main::{{closure}}`.
pub(crate) fn default_name<F>() -> String {
    let full = type_name::<F>();
    let mut parts: Vec<&str> = full.split("::").collect();
    let keep = if parts.last().is_some_and(|p| p.starts_with("{{")) {
        2
    } else {
        1
    };
    let start = parts.len().saturating_sub(keep);
    parts.drain(..start);
    parts.join("::")
}

/// [`System::validate`] with the whole world, so safe to call.
pub(crate) fn validate_exclusive(system: &mut dyn System, world: &mut World) -> bool {
    // SAFETY: `&mut World` excludes every other access.
    unsafe { system.validate(world) }
}

/// Marker for exclusive systems.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::Schedule;
/// let mut world = World::new();
/// let mut schedule = Schedule::new();
/// schedule.add_system(|w: &mut World| { w.spawn((1u32,)); }); // `IntoSystem<Exclusive>`
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.len(), 1);
/// ```
pub struct Exclusive;

/// A `FnMut(&mut World)` system: runs alone.
///
/// ```
/// # use ecs_core::{Components, World};
/// # use ecs_sched::IntoSystem;
/// let system = (|_: &mut World| {}).into_system(&mut Components::default()).unwrap();
/// assert!(system.access().is_exclusive());
/// ```
pub struct ExclusiveSystem<F> {
    func: F,
    name: String,
    access: SystemAccess,
}

impl<F: FnMut(&mut World) + Send + Sync + 'static> IntoSystem<Exclusive> for F {
    fn into_system(self, _: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        let mut access = SystemAccess::default();
        access.set_exclusive();
        Ok(Box::new(ExclusiveSystem {
            func: self,
            name: default_name::<F>(),
            access,
        }))
    }
}

// SAFETY: declared exclusive, so it never runs beside another system; `run_shared` panics
// without touching the world.
unsafe impl<F: FnMut(&mut World) + Send + Sync + 'static> System for ExclusiveSystem<F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn set_name(&mut self, name: String) {
        self.name = name;
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    fn initialize(&mut self, _: &mut World) {}

    unsafe fn run_shared(&mut self, _: &World) {
        panic!("exclusive system `{}` needs `&mut World`", self.name);
    }

    fn run_exclusive(&mut self, world: &mut World) {
        (self.func)(world);
    }

    fn apply_deferred(&mut self, _: &mut World, _: &mut Vec<CommandError>, _: bool) {}
}

/// A pseudo-system that marks a sync point: commands recorded before it are applied there.
pub(crate) struct SyncPoint {
    name: String,
    access: SystemAccess,
}

impl SyncPoint {
    pub(crate) fn new(name: String) -> Self {
        let mut access = SystemAccess::default();
        access.set_exclusive();
        Self { name, access }
    }
}

// SAFETY: declared exclusive, and touches nothing.
unsafe impl System for SyncPoint {
    fn name(&self) -> &str {
        &self.name
    }

    fn set_name(&mut self, name: String) {
        self.name = name;
    }

    fn access(&self) -> &SystemAccess {
        &self.access
    }

    fn initialize(&mut self, _: &mut World) {}

    unsafe fn run_shared(&mut self, _: &World) {}

    fn run_exclusive(&mut self, _: &mut World) {}

    fn apply_deferred(&mut self, _: &mut World, _: &mut Vec<CommandError>, _: bool) {}
}

impl Conflict {
    /// The type named by a conflict, for messages.
    ///
    /// ```
    /// # use ecs_sched::Conflict;
    /// assert_eq!(Conflict::Component("Position").type_name(), "Position");
    /// assert_eq!(Conflict::World.type_name(), "&World");
    /// ```
    pub fn type_name(&self) -> String {
        self.to_string()
    }
}
