//! [`CommandBuffer`]: structural changes recorded anywhere, without a schedule, and applied
//! later with [`CommandBuffer::apply`] (hecs's `CommandBuffer::run_on`).
//!
//! It records into the same [`CommandQueue`] a system's [`Commands`](crate::Commands) uses, so
//! applying has the same semantics: commands run in recording order, one that fails (its entity
//! is gone, a component is missing) is skipped and reported as a [`CommandError`], and a
//! panicking command leaves the rest queued (see [`CommandQueue::apply`]).
//!
//! Entity ids: a buffer is not tied to a world, so [`CommandBuffer::spawn`] creates its entity
//! when applied and returns no id. To know the id up front, reserve it through `&World` with
//! [`CommandBuffer::spawn_in`] (or `world.reserve_entity()` and then
//! [`CommandBuffer::insert`]); such an id belongs to that world, and the buffer must then be
//! applied to it (applied elsewhere, the id names whatever entity that world has under it).

use ecs_core::{Bundle, Component, Entity, World};

use crate::commands::CommandQueue;
use crate::error::CommandError;

/// The `system` name a buffer's [`CommandError`]s carry.
const SOURCE: &str = "command buffer";

/// Recorded structural changes, applied later to a world.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::CommandBuffer;
/// let mut world = World::new();
/// let a = world.spawn((1u32,));
/// let mut buffer = CommandBuffer::new();
/// for (e, n) in ecs_query::QueryExt::query_ref::<(ecs_core::Entity, &u32)>(&world).iter() {
///     buffer.insert(e, (*n as f32,)); // record while the world is borrowed
/// }
/// buffer.spawn((2u32,));
/// assert!(buffer.apply(&mut world).is_empty());
/// assert_eq!(world.get::<f32>(a), Ok(&1.0));
/// assert_eq!(world.len(), 2);
/// ```
#[derive(Default)]
pub struct CommandBuffer {
    queue: CommandQueue,
}

impl CommandBuffer {
    /// An empty buffer.
    ///
    /// ```
    /// # use ecs_sched::CommandBuffer;
    /// assert!(CommandBuffer::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Spawns an entity with `bundle` when applied; its id is chosen then.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut buffer = CommandBuffer::new();
    /// buffer.spawn((1u32, 'x'));
    /// let mut world = World::new();
    /// buffer.apply(&mut world);
    /// assert_eq!(world.len(), 1);
    /// ```
    pub fn spawn<B: Bundle>(&mut self, bundle: B) {
        self.queue.add(move |world| {
            world.spawn(bundle);
        });
    }

    /// Reserves an entity in `world` now and gives it `bundle` when applied (to that world).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut world = World::new();
    /// let mut buffer = CommandBuffer::new();
    /// let e = buffer.spawn_in(&world, (1u32,));
    /// buffer.insert(e, ('x',)); // the id can be used in later commands
    /// buffer.apply(&mut world);
    /// assert_eq!((world.get::<u32>(e), world.get::<char>(e)), (Ok(&1), Ok(&'x')));
    /// ```
    pub fn spawn_in<B: Bundle>(&mut self, world: &World, bundle: B) -> Entity {
        let entity = world.reserve_entity();
        self.queue.spawn_reserved(entity, bundle);
        entity
    }

    /// Inserts `bundle` into `entity` when applied; skipped (and reported) if it is gone.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut buffer = CommandBuffer::new();
    /// buffer.insert(e, ('x',));
    /// buffer.apply(&mut world);
    /// assert_eq!(world.get::<char>(e), Ok(&'x'));
    /// ```
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.queue.insert("insert", entity, bundle);
    }

    /// Inserts one component; shorthand for `insert(entity, (component,))`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// let mut buffer = CommandBuffer::new();
    /// buffer.insert_one(e, 5u8);
    /// buffer.apply(&mut world);
    /// assert_eq!(world.get::<u8>(e), Ok(&5));
    /// ```
    pub fn insert_one<T: Component>(&mut self, entity: Entity, component: T) {
        self.insert(entity, (component,));
    }

    /// Removes (and drops) the components of `B` from `entity` when applied; skipped (and
    /// reported) if the entity is gone or lacks one of them.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 'x'));
    /// let mut buffer = CommandBuffer::new();
    /// buffer.remove::<(char,)>(e);
    /// buffer.remove::<(char,)>(e); // gone by then
    /// let errors = buffer.apply(&mut world);
    /// assert_eq!(errors.len(), 1);
    /// assert!(!world.has::<char>(e));
    /// ```
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.queue.remove::<B>(entity);
    }

    /// Despawns `entity` when applied; skipped (and reported) if it is gone by then.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut buffer = CommandBuffer::new();
    /// buffer.despawn(e);
    /// buffer.apply(&mut world);
    /// assert!(!world.contains(e));
    /// ```
    pub fn despawn(&mut self, entity: Entity) {
        self.queue.despawn(entity);
    }

    /// Enables or disables `entity`'s enableable `T` when applied (see
    /// `World::set_enabled`; no row moves); skipped (and reported) if the entity is gone,
    /// lacks `T`, or `T` is not enableable.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// struct Stunned;
    /// let mut world = World::new();
    /// world.register_enableable::<Stunned>();
    /// let e = world.spawn((Stunned, 1u32));
    /// let mut buffer = CommandBuffer::new();
    /// buffer.set_enabled::<Stunned>(e, false);
    /// buffer.set_enabled::<u32>(e, false); // not enableable: reported
    /// let errors = buffer.apply(&mut world);
    /// assert_eq!(errors.len(), 1);
    /// assert_eq!(world.is_enabled::<Stunned>(e), Ok(false));
    /// ```
    pub fn set_enabled<T: Component>(&mut self, entity: Entity, enabled: bool) {
        self.queue.set_enabled::<T>(entity, enabled);
    }

    /// Runs `f` with the world when applied.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut buffer = CommandBuffer::new();
    /// buffer.add(|world| {
    ///     world.insert_resource(3u8);
    /// });
    /// let mut world = World::new();
    /// buffer.apply(&mut world);
    /// assert_eq!(world.get_resource::<u8>(), Some(&3));
    /// ```
    pub fn add(&mut self, f: impl FnOnce(&mut World) + Send + Sync + 'static) {
        self.queue.add(f);
    }

    /// Applies every command in recording order and empties the buffer; returns the commands
    /// that were skipped, each with why (their `system` is `"command buffer"`).
    ///
    /// # Panics
    /// If a command panics: the panic goes on and the later commands stay in the buffer,
    /// neither applied nor dropped (as [`CommandQueue::apply`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::CommandBuffer;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// let mut buffer = CommandBuffer::new();
    /// buffer.despawn(e);
    /// buffer.insert(e, (1u8,));
    /// let errors = buffer.apply(&mut world);
    /// assert_eq!(errors[0].command, "insert");
    /// assert!(errors[0].to_string().contains("from system `command buffer`"));
    /// assert!(buffer.is_empty());
    /// ```
    pub fn apply(&mut self, world: &mut World) -> Vec<CommandError> {
        let mut errors = Vec::new();
        self.queue.apply(world, SOURCE, &mut errors);
        errors
    }

    /// Drops every recorded command unapplied (see [`CommandQueue::clear`] for `Drop` panics).
    ///
    /// ```
    /// # use ecs_sched::CommandBuffer;
    /// let mut buffer = CommandBuffer::new();
    /// buffer.spawn((1u32,));
    /// buffer.clear();
    /// assert!(buffer.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.queue.clear();
    }

    /// Number of recorded commands.
    ///
    /// ```
    /// # use ecs_sched::CommandBuffer;
    /// let mut buffer = CommandBuffer::new();
    /// buffer.spawn(());
    /// assert_eq!(buffer.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is recorded.
    ///
    /// ```
    /// # use ecs_sched::CommandBuffer;
    /// assert!(CommandBuffer::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

impl std::fmt::Debug for CommandBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandBuffer")
            .field("commands", &self.len())
            .finish()
    }
}
