//! One-shot systems: run a system on a world outside any schedule, once
//! ([`RunSystemExt::run_system_once`]) or again and again by id
//! ([`RunSystemExt::register_system`], [`RunSystemExt::run_system`],
//! [`Commands::run_system`]), keeping its `Local`s, query caches and event cursors between
//! calls, as bevy's registered systems do.
//!
//! A one-shot run is exclusive: the system gets the whole world (`System::run_exclusive`), then
//! its commands are applied at once, in the order recorded. Its access is still checked: a
//! system whose own parameters conflict (two queries writing one type without a filter that
//! makes them disjoint, including through a type this world made enableable) is refused with
//! the same [`ScheduleError::ConflictingParams`] a schedule gives, so no run can alias.
//!
//! Registered systems live in a resource of the world (`RegisteredSystems`). A [`SystemId`]
//! names its world and carries a generation, so an id from another world, or of a system that
//! was unregistered, is an error rather than another system.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use ecs_core::{Components, Entity, World, WorldId};

use crate::commands::Commands;
use crate::error::{CommandError, RunSystemError, ScheduleError};
use crate::system::{validate_exclusive, IntoSystem, System};

/// The id of a system registered on a world with [`RunSystemExt::register_system`].
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{ResMut, RunSystemExt};
/// fn bump(mut n: ResMut<u32>) { *n += 1; }
/// let mut world = World::new();
/// world.insert_resource(0u32);
/// let id = world.register_system(bump);
/// world.run_system(id).unwrap();
/// world.run_system(id).unwrap();
/// assert_eq!(*world.resource::<u32>(), 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SystemId {
    world: WorldId,
    index: u32,
    generation: u32,
}

/// A system built for one-shot runs, with the planning registry its access was declared
/// against (kept so that a kind the world adopts later re-declares it, as a schedule does).
struct OneShot {
    system: Box<dyn System>,
    registry: Components,
}

impl OneShot {
    fn build<M>(system: impl IntoSystem<M>, world: &World) -> Result<Self, ScheduleError> {
        let mut registry = Components::for_planning();
        let system = system.into_system(&mut registry)?;
        let mut this = Self { system, registry };
        this.adopt_kinds(world)?;
        Ok(this)
    }

    /// Re-declares the access if `world` has kinds (enableable, chunk components) the planning
    /// registry did not know: a `With<T>` / `Without<T>` pair is disjoint only while `T` is not
    /// enableable.
    fn adopt_kinds(&mut self, world: &World) -> Result<(), ScheduleError> {
        if self.registry.adopt_kinds(world.components()) {
            let name = self.system.name().to_owned();
            self.system
                .redeclare(&mut self.registry)
                .map_err(|conflict| ScheduleError::ConflictingParams {
                    system: name,
                    component: format!(
                        "{conflict} (`{}` is enableable or a chunk component in this world)",
                        conflict.type_name()
                    ),
                })?;
        }
        Ok(())
    }

    /// Runs the system on `world` and applies its commands; returns the commands that were
    /// skipped, or [`RunSystemError::Skipped`] when a parameter (`Single`, `Populated`) says the
    /// system cannot run now. If the system panics, its recorded commands are dropped and the
    /// panic goes on.
    fn run(&mut self, world: &mut World) -> Result<Vec<CommandError>, RunSystemError> {
        self.system.initialize(world);
        if !validate_exclusive(self.system.as_mut(), world) {
            return Err(RunSystemError::Skipped {
                system: self.system.name().to_owned(),
            });
        }
        let ran = {
            let _span = crate::trace::system(&crate::trace::current(), || self.system.name());
            catch_unwind(AssertUnwindSafe(|| self.system.run_exclusive(world)))
        };
        let mut skipped = Vec::new();
        if let Err(panic) = ran {
            // Drop what the system recorded before it panicked; a panicking `Drop` there is
            // swallowed, the system's own panic is the one that goes on.
            let _ = catch_unwind(AssertUnwindSafe(|| {
                self.system.apply_deferred(world, &mut skipped, true);
            }));
            resume_unwind(panic);
        }
        let _span = crate::trace::apply_commands(self.system.name(), false);
        self.system.apply_deferred(world, &mut skipped, false);
        Ok(skipped)
    }
}

/// A registered system's slot: its generation, and the system unless it is running (then it
/// is out of the slot, on the stack of the call that runs it) or was unregistered.
struct Slot {
    generation: u32,
    state: SlotState,
}

enum SlotState {
    Vacant,
    Idle(Box<OneShot>),
    Running,
}

/// The systems registered on a world, kept as one of its resources.
#[derive(Default)]
struct RegisteredSystems {
    slots: Vec<Slot>,
}

/// One-shot systems on a [`World`]: the methods bevy users know from `World`, as an extension
/// trait (the world lives in `ecs-core`, systems here). In the prelude.
pub trait RunSystemExt {
    /// Builds `system`, runs it once on this world with exclusive access, and applies its
    /// commands. Returns the commands that were skipped (a despawn of a missing entity, ...),
    /// as [`Schedule::skipped_commands`](crate::Schedule::skipped_commands) does.
    ///
    /// # Errors
    /// [`RunSystemError::Conflict`] if the system's own parameters conflict,
    /// [`RunSystemError::Skipped`] if a parameter says it cannot run now (a [`Single`](crate::Single)
    /// that does not match exactly one entity).
    ///
    /// # Panics
    /// If the system panics (its recorded commands are dropped first).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Commands, Query, RunSystemExt};
    /// fn grow(mut q: Query<RefRW<u32>>, mut commands: Commands) {
    ///     q.for_each(|n| *n += 1);
    ///     commands.spawn((100u32,));
    /// }
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// assert!(world.run_system_once(grow).unwrap().is_empty());
    /// assert_eq!((world.get::<u32>(e), world.len()), (Ok(&2), 2));
    /// ```
    fn run_system_once<M>(
        &mut self,
        system: impl IntoSystem<M>,
    ) -> Result<Vec<CommandError>, RunSystemError>;

    /// Registers `system` on this world and returns its id; its state (`Local`s, query caches,
    /// event cursors) lives until [`RunSystemExt::unregister_system`].
    ///
    /// # Panics
    /// If the system's own parameters conflict (use [`RunSystemExt::try_register_system`] for
    /// the error).
    fn register_system<M>(&mut self, system: impl IntoSystem<M>) -> SystemId;

    /// [`RunSystemExt::register_system`], with the conflict as an error.
    ///
    /// # Errors
    /// [`RunSystemError::Conflict`] if the system's own parameters conflict.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Res, ResMut, RunSystemError, RunSystemExt};
    /// fn bad(_: Res<u32>, _: ResMut<u32>) {}
    /// let mut world = World::new();
    /// assert!(matches!(world.try_register_system(bad), Err(RunSystemError::Conflict(_))));
    /// ```
    fn try_register_system<M>(
        &mut self,
        system: impl IntoSystem<M>,
    ) -> Result<SystemId, RunSystemError>;

    /// Runs the registered system `id` with exclusive access and applies its commands; returns
    /// the commands that were skipped. The system may itself run other registered systems.
    ///
    /// # Errors
    /// [`RunSystemError::NoSuchSystem`] for an id of another world or of an unregistered
    /// system, [`RunSystemError::AlreadyRunning`] when a system runs itself, and
    /// [`RunSystemError::Conflict`] when the world made a type enableable that makes the
    /// system's own queries alias, [`RunSystemError::Skipped`] as for
    /// [`RunSystemExt::run_system_once`].
    ///
    /// # Panics
    /// If the system panics; it stays registered and can run again.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Local, ResMut, RunSystemExt};
    /// fn count(mut seen: Local<u32>, mut out: ResMut<u32>) { *seen += 1; *out = *seen; }
    /// let mut world = World::new();
    /// world.insert_resource(0u32);
    /// let id = world.register_system(count);
    /// for _ in 0..3 {
    ///     world.run_system(id).unwrap();
    /// }
    /// assert_eq!(*world.resource::<u32>(), 3); // the `Local` was kept between runs
    /// ```
    fn run_system(&mut self, id: SystemId) -> Result<Vec<CommandError>, RunSystemError>;

    /// Removes the registered system `id`, dropping its state. A system may unregister itself
    /// while it runs: it is dropped when its run ends.
    ///
    /// # Errors
    /// [`RunSystemError::NoSuchSystem`] if `id` is not registered on this world.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{RunSystemError, RunSystemExt};
    /// let mut world = World::new();
    /// let id = world.register_system(|| {});
    /// world.unregister_system(id).unwrap();
    /// assert_eq!(world.run_system(id), Err(RunSystemError::NoSuchSystem(id)));
    /// ```
    fn unregister_system(&mut self, id: SystemId) -> Result<(), RunSystemError>;
}

impl RunSystemExt for World {
    fn run_system_once<M>(
        &mut self,
        system: impl IntoSystem<M>,
    ) -> Result<Vec<CommandError>, RunSystemError> {
        let mut one_shot = OneShot::build(system, self).map_err(RunSystemError::Conflict)?;
        one_shot.run(self)
    }

    fn register_system<M>(&mut self, system: impl IntoSystem<M>) -> SystemId {
        self.try_register_system(system)
            .unwrap_or_else(|e| panic!("cannot register the system: {e}"))
    }

    fn try_register_system<M>(
        &mut self,
        system: impl IntoSystem<M>,
    ) -> Result<SystemId, RunSystemError> {
        let one_shot = OneShot::build(system, self).map_err(RunSystemError::Conflict)?;
        let world = self.id();
        if !self.contains_resource::<RegisteredSystems>() {
            self.insert_resource(RegisteredSystems::default());
        }
        let systems = self.resource_mut::<RegisteredSystems>();
        let state = SlotState::Idle(Box::new(one_shot));
        let index = match systems
            .slots
            .iter()
            .position(|s| matches!(s.state, SlotState::Vacant))
        {
            Some(i) => {
                systems.slots[i].state = state;
                i
            }
            None => {
                systems.slots.push(Slot {
                    generation: 0,
                    state,
                });
                systems.slots.len() - 1
            }
        };
        Ok(SystemId {
            world,
            index: u32::try_from(index).expect("fewer than 2^32 registered systems"),
            generation: systems.slots[index].generation,
        })
    }

    fn run_system(&mut self, id: SystemId) -> Result<Vec<CommandError>, RunSystemError> {
        let mut one_shot = {
            let slot = slot_of(self, id)?;
            match std::mem::replace(&mut slot.state, SlotState::Running) {
                SlotState::Idle(one_shot) => one_shot,
                SlotState::Running => return Err(RunSystemError::AlreadyRunning(id)),
                SlotState::Vacant => unreachable!("slot_of refuses vacant slots"),
            }
        };
        let result = match one_shot.adopt_kinds(self) {
            Err(conflict) => Err(RunSystemError::Conflict(conflict)),
            Ok(()) => match catch_unwind(AssertUnwindSafe(|| one_shot.run(self))) {
                Ok(result) => result,
                Err(panic) => {
                    put_back(self, id, one_shot);
                    resume_unwind(panic);
                }
            },
        };
        put_back(self, id, one_shot);
        result
    }

    fn unregister_system(&mut self, id: SystemId) -> Result<(), RunSystemError> {
        let slot = slot_of(self, id)?;
        // A running system is on its caller's stack: `put_back` drops it when the run ends.
        slot.state = SlotState::Vacant;
        slot.generation = slot.generation.wrapping_add(1);
        Ok(())
    }
}

/// The slot of a registered, not unregistered, system of this world.
fn slot_of(world: &mut World, id: SystemId) -> Result<&mut Slot, RunSystemError> {
    let this_world = world.id() == id.world;
    let slot = world
        .get_resource_mut::<RegisteredSystems>()
        .filter(|_| this_world)
        .and_then(|systems| systems.slots.get_mut(id.index as usize))
        .filter(|slot| {
            slot.generation == id.generation && !matches!(slot.state, SlotState::Vacant)
        });
    slot.ok_or(RunSystemError::NoSuchSystem(id))
}

/// Returns a system to its slot after a run, unless it was unregistered meanwhile (then it is
/// dropped here).
fn put_back(world: &mut World, id: SystemId, one_shot: Box<OneShot>) {
    if let Some(slot) = world
        .get_resource_mut::<RegisteredSystems>()
        .and_then(|systems| systems.slots.get_mut(id.index as usize))
        .filter(|slot| slot.generation == id.generation)
    {
        slot.state = SlotState::Idle(one_shot);
    }
}

impl Commands<'_, '_> {
    /// Runs the registered system `id` when the commands are applied, at this command's place
    /// in the order; a failed run is skipped and reported like a failed despawn
    /// ([`Schedule::skipped_commands`](crate::Schedule::skipped_commands)), and the commands
    /// it skipped itself are reported with it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Commands, ResMut, RunSystemExt, Schedule, SystemId};
    /// struct Spawner(SystemId);
    /// fn wave(mut commands: Commands) { commands.spawn((1u8,)); }
    /// let mut world = World::new();
    /// let id = world.register_system(wave);
    /// world.insert_resource(Spawner(id));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|s: ecs_sched::Res<Spawner>, mut commands: Commands| {
    ///     commands.run_system(s.0);
    /// });
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.len(), 1);
    /// ```
    pub fn run_system(&mut self, id: SystemId) {
        self.queue()
            .add_fallible(move |world| match world.run_system(id) {
                Ok(skipped) if skipped.is_empty() => Ok(()),
                Ok(skipped) => Err((
                    "run_system",
                    Entity::PLACEHOLDER,
                    format!(
                        "the system skipped {} command(s): {}",
                        skipped.len(),
                        skipped
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                )),
                Err(e) => Err(("run_system", Entity::PLACEHOLDER, e.to_string())),
            });
    }
}
