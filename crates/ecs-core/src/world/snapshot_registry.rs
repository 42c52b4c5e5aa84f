//! Snapshot registration: the `World` methods that register component and resource types for
//! snapshots (`register_pod`, `register_clone`, ...). The registry is
//! `crate::snapshot::registry`'s; taking and restoring snapshots is `crate::snapshot`'s.

use bytemuck::Pod;

use crate::component::{Component, ComponentId};
use crate::snapshot::registry::{clone_hooks, new_values, pod_hooks, ColumnKind};
use crate::world::World;

impl World {
    /// Registers `T` as a *pod* component: snapshots copy its columns as bytes (`memcpy` per
    /// chunk), [`World::state_hash`] hashes them, and `Snapshot::to_bytes` can write them.
    /// The `bytemuck::Pod` bound is the proof that any bytes are a valid `T`; nothing else can
    /// mark a column as plain bytes. Registering again, or after `register_clone`, is fine.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    /// #[repr(C)]
    /// struct Position([f32; 3]);
    ///
    /// let mut world = World::new();
    /// let id = world.register_pod::<Position>();
    /// assert_eq!(world.component_id::<Position>(), Some(id));
    /// assert!(world.is_pod(id));
    /// ```
    pub fn register_pod<T: Pod + Component>(&mut self) -> ComponentId {
        let id = self.register_component::<T>();
        self.snapshots.set(id, ColumnKind::Pod);
        self.snapshots.states.add::<T>();
        self.add_cloner::<T>();
        id
    }

    /// Registers `T` as a *cloned* component: snapshots hold a clone of every value, and
    /// restoring clones them back. Such snapshots stay in memory (`to_bytes` refuses them). A
    /// type already registered as pod stays pod.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_clone::<String>();
    /// let e = world.spawn((String::from("saved"),));
    /// let snap = world.snapshot().unwrap();
    /// *world.get_mut::<String>(e).unwrap() = String::from("changed");
    /// world.restore(&snap).unwrap();
    /// assert_eq!(world.get::<String>(e).unwrap(), "saved");
    /// ```
    pub fn register_clone<T: Clone + Component>(&mut self) -> ComponentId {
        let id = self.register_component::<T>();
        self.snapshots.set(id, ColumnKind::Clone(new_values::<T>));
        self.snapshots.states.add::<T>();
        self.add_cloner::<T>();
        id
    }

    /// Whether component `id` was registered with [`World::register_pod`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let a = world.register_pod::<u32>();
    /// let b = world.register_clone::<String>();
    /// assert!(world.is_pod(a) && !world.is_pod(b));
    /// ```
    pub fn is_pod(&self, id: ComponentId) -> bool {
        self.snapshots.kind(id).is_some_and(ColumnKind::is_pod)
    }

    /// Opts resource `R` into snapshots as plain bytes: snapshots save it (or its absence)
    /// and restoring puts it back; `to_bytes` can write it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_pod_resource::<u64>();
    /// world.insert_resource(1u64);
    /// let snap = world.snapshot().unwrap();
    /// *world.resource_mut::<u64>() = 2;
    /// world.restore(&snap).unwrap();
    /// assert_eq!(*world.resource::<u64>(), 1);
    /// ```
    pub fn register_pod_resource<R: Pod + Send + Sync>(&mut self) {
        self.snapshots.add_resource(pod_hooks::<R>());
        self.snapshots.states.add::<R>();
    }

    /// Opts resource `R` into snapshots by cloning: snapshots hold a clone of it (or its
    /// absence), and restoring clones it back. Such snapshots stay in memory.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_snapshot_resource::<Vec<u32>>();
    /// world.insert_resource(vec![1u32]);
    /// let snap = world.snapshot().unwrap();
    /// world.resource_mut::<Vec<u32>>().push(2);
    /// world.restore(&snap).unwrap();
    /// assert_eq!(world.resource::<Vec<u32>>(), &[1]);
    /// ```
    pub fn register_snapshot_resource<R: Clone + Send + Sync + 'static>(&mut self) {
        self.snapshots.add_resource(clone_hooks::<R>());
        self.snapshots.states.add::<R>();
    }

    /// Whether resource `R` was opted into snapshots ([`World::register_pod_resource`] or
    /// [`World::register_snapshot_resource`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert!(!world.is_snapshot_resource::<u64>());
    /// world.register_pod_resource::<u64>();
    /// assert!(world.is_snapshot_resource::<u64>());
    /// ```
    pub fn is_snapshot_resource<R: 'static>(&self) -> bool {
        let id = std::any::TypeId::of::<R>();
        self.snapshots.resources().iter().any(|h| h.type_id == id)
    }
}
