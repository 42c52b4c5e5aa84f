//! Deferred structural changes: [`Commands`] records them while systems run in parallel over a
//! shared world; the schedule applies them later, in system order, with `&mut World`.
//!
//! `spawn` reserves the entity id at once, so the caller can store it or use it in later
//! commands. Systems that take `Commands` run side by side like any others: before a parallel
//! segment the schedule opens one id lane per `Commands` parameter, in plan order
//! ([`World::open_id_lanes`], `id_lanes.rs` beside this file), and a queue reserves in its own
//! lane, so the ids a system gets depend on what it spawned, never on which thread came first.
//! A queue used outside a schedule (one-shot systems, observers) reserves through the world's
//! cursor. [`CommandBuffer`](crate::CommandBuffer) (`buffer.rs`) records the same commands
//! without a schedule.
//!
//! Panics: a recorded command owns user values (bundles, closures) whose code may panic, when
//! the command runs or when it is dropped unapplied. A queue never drops a command while
//! unwinding from another panic (that would abort the process), and never keeps a command past
//! the call that was meant to consume it: [`CommandQueue::apply`] stops at a panicking command
//! and leaves the rest queued, and [`CommandQueue::clear`] drops every command, each on its
//! own, before it reports the first panicking `Drop`.

pub(crate) mod buffer;
pub(crate) mod id_lanes;

use std::any::type_name;
use std::collections::VecDeque;

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use ecs_core::{drop_each, resume_unless_unwinding, ArchetypeId, Bundle, Component, Entity, World};

use crate::commands::id_lanes::LanePlan;
use crate::error::CommandError;

type Command = Box<dyn FnOnce(&mut World) -> Result<(), Failure> + Send + Sync>;

/// Why a command was skipped: `(command, entity, reason)`.
type Failure = (&'static str, Entity, String);

/// The commands one system recorded, in order.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{CommandQueue, Commands, SystemParam};
/// let mut world = World::new();
/// let mut queue: CommandQueue = <Commands>::init_state(&mut world);
/// // SAFETY: no system runs at the same time.
/// let mut commands = unsafe { <Commands>::get(&mut queue, &world, "doc") };
/// commands.spawn((1u32,));
/// commands.spawn((2u32,));
/// assert_eq!(queue.len(), 2); // recorded, not yet applied
/// assert_eq!(world.len(), 0);
/// ```
#[derive(Default)]
pub struct CommandQueue {
    commands: VecDeque<Command>,
    /// The id lane this run's spawns reserve in, if the schedule opened one.
    lane: Option<u32>,
    /// The spawns among `commands`: each one's position (counted as `front`) and the id it
    /// reserved, in order. A spawn that never runs, or fails, frees its id
    /// ([`CommandQueue::discard`]), so no entity is left alive and empty by accident.
    spawns: VecDeque<(usize, Entity)>,
    /// The position of `commands[0]`: commands applied since the queue was last empty.
    front: usize,
}

impl CommandQueue {
    /// Applies every command in order; failures are skipped and appended to `errors`.
    ///
    /// # Panics
    /// If a command panics, the panic goes on at once and the commands after it stay in the
    /// queue, unapplied and not dropped (so no `Drop` runs during the unwind): the caller
    /// decides whether to apply or drop them ([`discard`](CommandQueue::discard) frees the ids
    /// their spawns reserved). A spawn that panicked before its entity got a component frees
    /// its id first.
    ///
    /// From an `OnReplace` / `OnRemove` observer, which runs before its change while the old
    /// value can be read ([`World::is_deferring`]), the commands are handed to
    /// [`World::defer`] instead: they run once that change completes, and failures are skipped
    /// without a report (the change's caller has no list to take them).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{CommandQueue, Commands, SystemParam};
    /// let mut world = World::new();
    /// let mut queue: CommandQueue = <Commands>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// let mut commands = unsafe { <Commands>::get(&mut queue, &world, "doc") };
    /// let e = commands.spawn((1u32,));
    /// commands.despawn(e);
    /// commands.despawn(e); // gone by then: skipped and reported
    /// let mut errors = Vec::new();
    /// queue.apply(&mut world, "doc", &mut errors);
    /// assert_eq!((world.len(), errors.len(), queue.len()), (0, 1, 0));
    /// ```
    pub fn apply(&mut self, world: &mut World, system: &str, errors: &mut Vec<CommandError>) {
        self.lane = None;
        if world.is_deferring() && !self.commands.is_empty() {
            let commands = std::mem::take(&mut self.commands);
            self.spawns.clear();
            self.front = 0;
            world.defer(move |world| {
                for command in commands {
                    let _ = command(world);
                }
            });
            return;
        }
        while let Some(command) = self.commands.pop_front() {
            let at = self.front;
            self.front += 1;
            let spawned = match self.spawns.front() {
                Some(&(spawn_at, entity)) if spawn_at == at => {
                    self.spawns.pop_front();
                    Some(entity)
                }
                _ => None,
            };
            let result = match spawned {
                None => command(world),
                Some(entity) => match catch_unwind(AssertUnwindSafe(|| command(world))) {
                    Ok(result) => result,
                    Err(panic) => {
                        free_if_empty(world, entity);
                        resume_unwind(panic);
                    }
                },
            };
            if let Err((command, entity, reason)) = result {
                if spawned.is_some() {
                    free_if_empty(world, entity);
                }
                errors.push(CommandError {
                    system: system.to_owned(),
                    command,
                    entity,
                    reason,
                });
            }
        }
        self.front = 0;
    }

    /// Drops every recorded command, as [`clear`](CommandQueue::clear), and frees the ids
    /// their spawns reserved: those entities never got their components, so they are
    /// despawned rather than left alive and empty (one something else gave a component
    /// meanwhile is kept). Schedules discard the commands of a run that panicked this way.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{CommandQueue, Commands, SystemParam};
    /// let mut world = World::new();
    /// let mut queue: CommandQueue = <Commands>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// let mut commands = unsafe { <Commands>::get(&mut queue, &world, "doc") };
    /// let e = commands.spawn((1u32,));
    /// queue.discard(&mut world);
    /// world.flush();
    /// assert!(queue.is_empty() && !world.contains(e) && world.is_empty());
    /// ```
    pub fn discard(&mut self, world: &mut World) {
        for (_, entity) in std::mem::take(&mut self.spawns) {
            free_if_empty(world, entity);
        }
        self.clear();
    }

    /// Drops every recorded command.
    ///
    /// # Panics
    /// If a recorded value's `Drop` panics: the other commands are still dropped first (each
    /// panic is caught), the queue is left empty, and then the first panic goes on.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{CommandQueue, Commands, SystemParam};
    /// let mut world = World::new();
    /// let mut queue: CommandQueue = <Commands>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// let mut commands = unsafe { <Commands>::get(&mut queue, &world, "doc") };
    /// commands.spawn((1u32,));
    /// queue.clear();
    /// assert!(queue.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.lane = None;
        self.spawns.clear();
        self.front = 0;
        resume_unless_unwinding(drop_each(self.commands.drain(..)));
    }

    /// Number of recorded commands.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{CommandQueue, Commands, SystemParam};
    /// let mut world = World::new();
    /// let mut queue: CommandQueue = <Commands>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// let mut commands = unsafe { <Commands>::get(&mut queue, &world, "doc") };
    /// commands.add(|_| {});
    /// assert_eq!(queue.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether nothing is recorded.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{CommandQueue, Commands, SystemParam};
    /// let mut world = World::new();
    /// let mut queue: CommandQueue = <Commands>::init_state(&mut world);
    /// // SAFETY: no system runs at the same time.
    /// let mut commands = unsafe { <Commands>::get(&mut queue, &world, "doc") };
    /// commands.spawn(());
    /// assert!(!queue.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Takes a lane of `plan` for the coming run.
    pub(crate) fn plan_lane(&mut self, plan: &mut LanePlan) {
        self.lane = Some(plan.lane());
    }

    /// Reserves the id of an entity a command will spawn: in the queue's lane if it has one.
    pub(crate) fn reserve(&self, world: &World) -> Entity {
        match self.lane {
            Some(lane) => world.reserve_entity_in_lane(lane),
            None => world.reserve_entity(),
        }
    }

    fn push(&mut self, f: impl FnOnce(&mut World) -> Result<(), Failure> + Send + Sync + 'static) {
        self.commands.push_back(Box::new(f));
    }

    /// Moves every command of `other` to the end of this queue, in order.
    pub(crate) fn append(&mut self, other: &mut CommandQueue) {
        let end = self.front + self.commands.len();
        let rebase = |(at, e): (usize, Entity)| (at - other.front + end, e);
        self.spawns.extend(other.spawns.drain(..).map(rebase));
        other.front = 0;
        self.commands.append(&mut other.commands);
    }

    /// Records the spawn of `bundle` into the reserved id `entity`.
    pub(crate) fn spawn_reserved<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.spawns
            .push_back((self.front + self.commands.len(), entity));
        self.insert("spawn", entity, bundle);
    }

    pub(crate) fn insert<B: Bundle>(&mut self, command: &'static str, entity: Entity, bundle: B) {
        self.push(move |world| {
            world
                .insert(entity, bundle)
                .map_err(|e| (command, entity, e.to_string()))
        });
    }

    pub(crate) fn despawn(&mut self, entity: Entity) {
        self.push(move |world| {
            world
                .despawn(entity)
                .map_err(|e| ("despawn", entity, e.to_string()))
        });
    }

    pub(crate) fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.push(move |world| {
            world.remove::<B>(entity).map(drop).map_err(|e| {
                (
                    "remove",
                    entity,
                    format!("{e} (removing `{}`)", type_name::<B>()),
                )
            })
        });
    }

    pub(crate) fn set_enabled<T: Component>(&mut self, entity: Entity, enabled: bool) {
        self.push(move |world| {
            world
                .set_enabled::<T>(entity, enabled)
                .map(drop)
                .map_err(|e| {
                    (
                        "set_enabled",
                        entity,
                        format!("{e} (setting `{}` enabled = {enabled})", type_name::<T>()),
                    )
                })
        });
    }

    pub(crate) fn add(&mut self, f: impl FnOnce(&mut World) + Send + Sync + 'static) {
        self.push(move |world| {
            f(world);
            Ok(())
        });
    }

    /// Records a command that may be skipped: `Err((command, entity, reason))` becomes a
    /// [`CommandError`] of the applying schedule.
    pub(crate) fn add_fallible(
        &mut self,
        f: impl FnOnce(&mut World) -> Result<(), (&'static str, Entity, String)> + Send + Sync + 'static,
    ) {
        self.push(f);
    }
}

/// A system parameter that records structural changes for later.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{Commands, Schedule};
/// fn spawner(mut commands: Commands) {
///     let e = commands.spawn((1u32,));
///     commands.insert(e, (2.0f32,));
/// }
/// let mut world = World::new();
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(spawner);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.len(), 1);
/// ```
pub struct Commands<'w, 's> {
    world: &'w World,
    queue: &'s mut CommandQueue,
}

impl<'w, 's> Commands<'w, 's> {
    /// The queue the commands go to, for commands defined beside their feature (`one_shot`).
    pub(crate) fn queue(&mut self) -> &mut CommandQueue {
        self.queue
    }

    pub(crate) fn new(world: &'w World, queue: &'s mut CommandQueue) -> Self {
        Self { world, queue }
    }

    /// Reserves an entity now and spawns it with `bundle` when commands are applied.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Commands, Schedule};
    /// fn spawner(mut commands: Commands) { commands.spawn((7u32,)); }
    /// let mut world = World::new();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(spawner);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.len(), 1);
    /// ```
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        let entity = self.queue.reserve(self.world);
        self.queue.spawn_reserved(entity, bundle);
        entity
    }

    /// Despawns `entity` when applied; skipped (and reported) if it is gone by then.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_sched::{Commands, Res, Schedule};
    /// struct Target(Entity);
    /// fn reaper(mut commands: Commands, t: Res<Target>) { commands.despawn(t.0); }
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert_resource(Target(e));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(reaper);
    /// schedule.run(&mut world).unwrap();
    /// assert!(!world.contains(e));
    /// ```
    pub fn despawn(&mut self, entity: Entity) {
        self.queue.despawn(entity);
    }

    /// Inserts `bundle` into `entity` when applied.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_sched::{Commands, Res, Schedule};
    /// struct Target(Entity);
    /// fn tag(mut commands: Commands, t: Res<Target>) { commands.insert(t.0, ('x',)); }
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert_resource(Target(e));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(tag);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<char>(e), Ok(&'x'));
    /// ```
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.queue.insert("insert", entity, bundle);
    }

    /// Removes (and drops) the components of `B` from `entity` when applied.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_sched::{Commands, Res, Schedule};
    /// struct Target(Entity);
    /// fn untag(mut commands: Commands, t: Res<Target>) { commands.remove::<(char,)>(t.0); }
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 'x'));
    /// world.insert_resource(Target(e));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(untag);
    /// schedule.run(&mut world).unwrap();
    /// assert!(!world.has::<char>(e) && world.has::<u32>(e));
    /// ```
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.queue.remove::<B>(entity);
    }

    /// Enables or disables `entity`'s enableable `T` when applied (see
    /// `World::set_enabled`; no row moves). A dead entity, a missing `T` or a type that is
    /// not enableable is reported as a `CommandError`.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_sched::{Commands, Res, Schedule};
    /// struct Stunned;
    /// struct Target(Entity);
    /// fn wake(mut commands: Commands, t: Res<Target>) { commands.set_enabled::<Stunned>(t.0, false); }
    /// let mut world = World::new();
    /// world.register_enableable::<Stunned>();
    /// let e = world.spawn((Stunned,));
    /// world.insert_resource(Target(e));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(wake);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.is_enabled::<Stunned>(e), Ok(false));
    /// ```
    pub fn set_enabled<T: Component>(&mut self, entity: Entity, enabled: bool) {
        self.queue.set_enabled::<T>(entity, enabled);
    }

    /// Runs `f` with the world when applied.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{Commands, Schedule};
    /// fn later(mut commands: Commands) { commands.add(|world| { world.insert_resource(1u8); }); }
    /// let mut world = World::new();
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(later);
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get_resource::<u8>(), Some(&1));
    /// ```
    pub fn add(&mut self, f: impl FnOnce(&mut World) + Send + Sync + 'static) {
        self.queue.add(f);
    }

    /// Appends the buffers a parallel loop recorded, in the order given (for
    /// `Query::par_for_each_commands`: row order).
    pub(crate) fn append_all(&mut self, buffers: Vec<ParCommands>) {
        for mut buffer in buffers {
            self.queue.append(&mut buffer.queue);
        }
    }
}

/// The command recorder a parallel loop hands each of its tasks
/// ([`Query::par_for_each_commands`](crate::Query::par_for_each_commands)).
///
/// Each task records into a buffer of its own, with no locking; after the loop the buffers are
/// appended to the system's [`Commands`] in row order, so the applied commands are the same on
/// any number of threads and however the rows were split. For the same reason `spawn` reserves
/// no id while the loop runs (reserving is a race between tasks): the entity is created when
/// the commands are applied, in that fixed order, so its id is the same on every run too.
///
/// ```
/// # use ecs_core::{Entity, World};
/// # use ecs_query::{RefRO, With};
/// # use ecs_sched::{Commands, Query, Schedule};
/// struct Age(u32);
/// struct Egg;
/// fn life(mut q: Query<(Entity, RefRO<Age>)>, mut commands: Commands) {
///     q.par_for_each_commands(&mut commands, |cmds, (e, age)| {
///         if age.0 >= 3 {
///             cmds.despawn(e);
///             cmds.spawn((Egg,));
///         }
///     });
/// }
/// let mut world = World::new();
/// world.spawn_batch((0..6).map(|i| (Age(i),))).for_each(drop);
/// let mut schedule = Schedule::new();
/// schedule.add_system(life);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(ecs_query::QueryExt::query::<With<Age>>(&mut world).count(), 3);
/// assert_eq!(ecs_query::QueryExt::query::<With<Egg>>(&mut world).count(), 3);
/// ```
#[derive(Default)]
pub struct ParCommands {
    queue: CommandQueue,
}

impl ParCommands {
    /// Spawns an entity with `bundle` when applied; its id is chosen then (see the type's doc).
    pub fn spawn<B: Bundle>(&mut self, bundle: B) {
        self.queue.add(move |world| {
            world.spawn(bundle);
        });
    }

    /// Despawns `entity` when applied; skipped (and reported) if it is gone by then.
    pub fn despawn(&mut self, entity: Entity) {
        self.queue.despawn(entity);
    }

    /// Inserts `bundle` into `entity` when applied.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.queue.insert("insert", entity, bundle);
    }

    /// Removes (and drops) the components of `B` from `entity` when applied.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.queue.remove::<B>(entity);
    }

    /// Records a [`Commands::set_enabled`].
    pub fn set_enabled<T: Component>(&mut self, entity: Entity, enabled: bool) {
        self.queue.set_enabled::<T>(entity, enabled);
    }

    /// Runs `f` with the world when applied.
    pub fn add(&mut self, f: impl FnOnce(&mut World) + Send + Sync + 'static) {
        self.queue.add(f);
    }

    /// Number of recorded commands.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// Despawns `entity`, a spawn command's reserved id, if it is alive without a component (its
/// spawn never ran, failed or panicked); a panic of that despawn is swallowed, as the entity
/// holds nothing whose `Drop` could raise it.
fn free_if_empty(world: &mut World, entity: Entity) {
    world.flush();
    let empty = world
        .location(entity)
        .is_some_and(|loc| loc.archetype == ArchetypeId::EMPTY);
    if empty {
        let _ = catch_unwind(AssertUnwindSafe(|| world.despawn(entity)));
    }
}

/// Dropping a queue drops every recorded command, each on its own: two recorded values whose
/// `Drop` panics (or one while a panic unwinds, as when a `par_for_each_commands` task
/// panics and the other tasks' queues are dropped) must not abort the process. The first
/// panic continues afterwards, unless the thread is already unwinding.
impl Drop for CommandQueue {
    fn drop(&mut self) {
        self.clear();
    }
}
