//! Snapshot registration: the `World` methods that register component and resource types for
//! snapshots (`register_pod`, `register_clone`, ...) and state types for simulation snapshots
//! (`register_state`, `clone_state`). The registry is
//! `crate::snapshot::registry`'s; taking and restoring snapshots is `crate::snapshot`'s.

use std::any::Any;
use std::hash::Hash;

use bytemuck::{CheckedBitPattern, NoUninit, Pod};

use crate::component::{Component, ComponentId};
use crate::relationship::Relationship;
use crate::snapshot::registry::{
    check_bytes, clone_hooks, hash_values, new_values, pod_hooks, resource_hash, ColumnKind,
};
use crate::snapshot::relationship_codec;
use crate::snapshot::state_types::StateValue;
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
        self.snapshots.set(id, ColumnKind::Pod(None));
        self.snapshots.states.add::<T>();
        self.add_cloner::<T>();
        id
    }

    /// Registers `T` as a pod component whose bytes are not all valid values: a type holding
    /// an [`Entity`](crate::Entity) (whose generation is never zero), a `bool` or an enum.
    /// `bytemuck::NoUninit` proves its bytes can be read; `bytemuck::CheckedBitPattern` says
    /// which are valid. In every other way it is [`World::register_pod`]'s: copied as bytes,
    /// hashed by value, written by `to_bytes`. A snapshot read back with
    /// `Snapshot::from_bytes` has every value of such a column checked when it is restored
    /// ([`SnapshotError::InvalidValue`](crate::SnapshotError::InvalidValue) names the first bad
    /// one, before anything changes); snapshots taken in this process are not re-checked.
    ///
    /// Entity ids restored this way are the ids the saving world had: restoring into the world
    /// that saved them (rollback, a save game of the same world) keeps them meaningful.
    ///
    /// ```
    /// # use ecs_core::{Entity, Snapshot, SnapshotError, World};
    /// #[derive(Clone, Copy, bytemuck::NoUninit, bytemuck::CheckedBitPattern)]
    /// #[repr(C)]
    /// struct Target(Entity);
    ///
    /// let mut world = World::new();
    /// world.register_checked::<Target>();
    /// let prey = world.spawn(());
    /// let hunter = world.spawn((Target(prey),));
    /// let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    ///
    /// let mut copy = World::new();
    /// copy.register_checked::<Target>();
    /// copy.restore(&Snapshot::from_bytes(&bytes).unwrap()).unwrap();
    /// assert_eq!(copy.get::<Target>(hunter).unwrap().0, prey);
    /// assert_eq!(copy.state_hash(), world.state_hash());
    /// ```
    pub fn register_checked<T: NoUninit + CheckedBitPattern + Component>(&mut self) -> ComponentId {
        let id = self.register_component::<T>();
        self.snapshots
            .set(id, ColumnKind::Pod(Some(check_bytes::<T>)));
        self.snapshots.states.add::<T>();
        self.add_cloner::<T>();
        id
    }

    /// [`World::register_clone`], and [`World::state_hash`] hashes every value through `T`'s
    /// `Hash` impl (with a fixed-seed hasher, so runs and processes agree) instead of counting
    /// it by presence only. A type already pod stays pod (and hashed as bytes).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let build = |name: &str| {
    ///     let mut world = World::new();
    ///     world.register_hashed::<String>();
    ///     world.spawn((name.to_string(),));
    ///     world
    /// };
    /// assert_eq!(build("ann").state_hash(), build("ann").state_hash());
    /// assert_ne!(build("ann").state_hash(), build("bob").state_hash());
    /// let world = build("ann");
    /// assert_eq!(world.snapshot().unwrap().state_hash(), world.state_hash());
    /// ```
    pub fn register_hashed<T: Clone + Hash + Component>(&mut self) -> ComponentId {
        let id = self.register_clone::<T>();
        self.snapshots.set_hasher(id, hash_values::<T>);
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

    /// Registers both sides of relationship `R` for snapshots that can be written to bytes:
    /// each is cloned as [`World::register_clone`] does, and `Snapshot::to_bytes` writes it in
    /// a built-in form (each value's entity ids), so a world with a hierarchy, or with any
    /// relationship of its own, can be saved and read back without a serde format. The
    /// restoring world makes the same call. `world.register_relationship_bytes::<ChildOf>()`
    /// does it for the hierarchy.
    ///
    /// Bytes are checked value by value on restore (a truncated list, an invalid id, a
    /// one-to-many source naming two targets is [`SnapshotError::Decode`](crate::SnapshotError::Decode));
    /// whether both sides agree is [`World::check_invariants`]' to tell.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, Snapshot, World};
    /// let mut world = World::new();
    /// world.register_relationship_bytes::<ChildOf>();
    /// world.register_pod::<u32>();
    /// let root = world.spawn((1u32,));
    /// let leaf = world.spawn((2u32, ChildOf(root)));
    /// let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    ///
    /// let mut loaded = World::new();
    /// loaded.register_relationship_bytes::<ChildOf>();
    /// loaded.register_pod::<u32>();
    /// loaded.restore(&Snapshot::from_bytes(&bytes).unwrap()).unwrap();
    /// assert_eq!(loaded.children(root), [leaf]);
    /// assert_eq!(loaded.parent(leaf), Some(root));
    /// loaded.check_invariants();
    /// ```
    pub fn register_relationship_bytes<R>(&mut self)
    where
        R: Relationship + Clone,
        R::Target: Clone,
    {
        let source = self.register_clone::<R>();
        self.snapshots
            .set_codec(source, relationship_codec::source_codec::<R>());
        let list = self.register_clone::<R::Target>();
        self.snapshots
            .set_codec(list, relationship_codec::list_codec::<R::Target>());
    }

    /// Registers `T` as a *serde* component: snapshots clone it as [`World::register_clone`]
    /// does, and `Snapshot::to_bytes` writes its columns through the serde format `F` (one
    /// `[T]` per archetype), so a snapshot of a world holding `String`s, `Vec`s or enums with
    /// data can be saved to disk. `Snapshot::from_bytes` keeps those values encoded; restoring
    /// decodes them with the restoring world's registration (which must be `register_serde`
    /// of the same type, in the same format) before anything changes. Registering again
    /// replaces the format. Pod types stay pod (written as bytes).
    ///
    /// The state hash of a snapshot read from bytes sees these values if the writing world
    /// also registered `T` with [`World::register_hashed`] (the bytes then carry one hash per
    /// value); otherwise they count by presence, as in a world without `register_hashed`.
    ///
    /// Requires the `serde` feature. See [`SerdeFormat`](crate::SerdeFormat) for an example.
    #[cfg(feature = "serde")]
    pub fn register_serde<T, F>(&mut self) -> ComponentId
    where
        T: Clone + Component + serde::Serialize + serde::de::DeserializeOwned,
        F: crate::SerdeFormat,
    {
        let id = self.register_clone::<T>();
        self.snapshots
            .set_codec(id, crate::snapshot::codec::column_codec::<T, F>());
        self.register_state_serde::<T, F>();
        id
    }

    /// Registers `T` as a state type ([`World::register_state`]) that a simulation snapshot
    /// can write to bytes through the serde format `F` (ecs-sched's `SimSnapshot::to_bytes`):
    /// a system's `Local<T>`, for instance. Types registered with [`World::register_serde`]
    /// or [`World::register_serde_resource`] need no call;
    /// [`World::register_serde_primitives`] registers the primitive types at once.
    ///
    /// Requires the `serde` feature.
    #[cfg(feature = "serde")]
    pub fn register_state_serde<T, F>(&mut self)
    where
        T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
        F: crate::SerdeFormat,
    {
        self.snapshots.states.add::<T>();
        self.snapshots
            .states
            .add_codec::<T>(crate::snapshot::codec::state_codec::<T, F>());
    }

    /// [`World::register_state_serde`] for the integer and float types, `bool`, `char`,
    /// `()`, `String` and `Duration`: the state types a schedule keeps without registration
    /// (an `every_n_runs` counter, a `Local<u32>`), written in format `F`.
    ///
    /// Requires the `serde` feature.
    #[cfg(feature = "serde")]
    pub fn register_serde_primitives<F: crate::SerdeFormat>(&mut self) {
        macro_rules! each {
            ($($t:ty),*) => { $(self.register_state_serde::<$t, F>();)* };
        }
        each!(
            u8,
            u16,
            u32,
            u64,
            u128,
            usize,
            i8,
            i16,
            i32,
            i64,
            i128,
            isize,
            f32,
            f64,
            bool,
            char,
            (),
            String,
            std::time::Duration
        );
    }

    /// A state value as bytes, through its type's `register_state_serde` codec (feature
    /// `serde`):
    /// the type's name (to find the codec when reading) and the encoded value.
    ///
    /// # Errors
    /// [`SnapshotError::NotSerdeInWorld`](crate::SnapshotError::NotSerdeInWorld) naming
    /// `type_name` if the type has no codec; [`SnapshotError::Encode`](crate::SnapshotError::Encode)
    /// if the format fails.
    pub fn encode_state(
        &self,
        value: &(dyn Any + Send + Sync),
        type_name: &str,
    ) -> Result<(&'static str, Vec<u8>), crate::SnapshotError> {
        let codec = self.snapshots.states.codec_of(value).ok_or_else(|| {
            crate::SnapshotError::NotSerdeInWorld {
                name: type_name.to_owned(),
            }
        })?;
        let bytes = (codec.encode)(value)
            .expect("the codec found by the value's TypeId takes it")
            .map_err(|reason| crate::SnapshotError::Encode {
                name: codec.name.to_owned(),
                reason,
            })?;
        Ok((codec.name, bytes))
    }

    /// Reads a state value written by [`World::encode_state`] under the type name `name`;
    /// returns it with the name as the codec holds it.
    ///
    /// # Errors
    /// [`SnapshotError::NotSerdeInWorld`](crate::SnapshotError::NotSerdeInWorld) if no codec
    /// is registered under `name`; [`SnapshotError::Decode`](crate::SnapshotError::Decode) if
    /// the bytes are not a value of it.
    pub fn decode_state(
        &self,
        name: &str,
        bytes: &[u8],
    ) -> Result<(StateValue, &'static str), crate::SnapshotError> {
        let codec = self.snapshots.states.codec_named(name).ok_or_else(|| {
            crate::SnapshotError::NotSerdeInWorld {
                name: name.to_owned(),
            }
        })?;
        let value = (codec.decode)(bytes).map_err(|reason| crate::SnapshotError::Decode {
            name: name.to_owned(),
            reason,
        })?;
        Ok((value, codec.name))
    }

    /// Opts resource `R` into snapshots by cloning, as
    /// [`World::register_snapshot_resource`] does, and `Snapshot::to_bytes` writes it through
    /// the serde format `F`; restoring a snapshot read from bytes decodes it (with this
    /// world's registration). A resource already registered pod stays pod.
    ///
    /// Requires the `serde` feature.
    #[cfg(feature = "serde")]
    pub fn register_serde_resource<R, F>(&mut self)
    where
        R: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
        F: crate::SerdeFormat,
    {
        let mut hooks = clone_hooks::<R>();
        hooks.codec = Some(crate::snapshot::codec::resource_codec::<R, F>());
        self.snapshots.add_resource(hooks);
        self.register_state_serde::<R, F>();
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

    /// [`World::register_snapshot_resource`], and [`World::state_hash`] hashes the value
    /// through `R`'s `Hash` impl (a fixed-seed hasher, so runs and processes agree); a
    /// snapshot keeps the hash with the clone. [`World::try_state_hash`] refuses a world
    /// holding a resource snapshotted by cloning without it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let build = |names: &[&str]| {
    ///     let mut world = World::new();
    ///     world.register_hashed_resource::<Vec<String>>();
    ///     world.insert_resource(names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
    ///     world
    /// };
    /// assert_eq!(build(&["a"]).state_hash(), build(&["a"]).state_hash());
    /// assert_ne!(build(&["a"]).state_hash(), build(&["b"]).state_hash());
    /// let world = build(&["a"]);
    /// assert_eq!(world.snapshot().unwrap().state_hash(), world.state_hash());
    /// assert!(world.try_state_hash().is_ok());
    /// ```
    pub fn register_hashed_resource<R: Clone + Hash + Send + Sync + 'static>(&mut self) {
        let mut hooks = clone_hooks::<R>();
        hooks.hash = Some(resource_hash::<R>());
        self.snapshots.add_resource(hooks);
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

    /// Declares resource `R` outside the simulation (a debug probe, a render buffer, a metrics
    /// sink): snapshots leave it out, a restore leaves it as it is, and a simulation snapshot
    /// (`ecs_sched::SimSnapshot`) of systems that write it succeeds, where an undeclared
    /// resource a system writes is refused. Any type can be declared, `Mutex<Vec<_>>`
    /// included. Declaring a resource registered for snapshots takes it out of them; a later
    /// `register_*_resource` puts it back.
    ///
    /// ```
    /// # use std::sync::Mutex;
    /// # use ecs_core::World;
    /// struct Probe(Mutex<Vec<u32>>);
    /// let mut world = World::new();
    /// world.register_resource_outside_snapshots::<Probe>();
    /// world.insert_resource(Probe(Mutex::new(vec![1])));
    /// let snap = world.snapshot().unwrap();
    /// world.resource::<Probe>().0.lock().unwrap().push(2);
    /// world.restore(&snap).unwrap();
    /// assert_eq!(*world.resource::<Probe>().0.lock().unwrap(), [1, 2]); // left as it is
    /// assert!(world.is_resource_outside_snapshots::<Probe>());
    /// ```
    pub fn register_resource_outside_snapshots<R: 'static>(&mut self) {
        self.snapshots.put_outside(std::any::TypeId::of::<R>());
    }

    /// Whether resource `R` was declared outside snapshots
    /// ([`World::register_resource_outside_snapshots`]).
    pub fn is_resource_outside_snapshots<R: 'static>(&self) -> bool {
        self.snapshots.is_outside(std::any::TypeId::of::<R>())
    }

    /// Records that values of `T` may be cloned into a simulation snapshot (a system's
    /// `Local<T>`, for instance). Types registered for world snapshots and the primitive types
    /// need no call.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Clone, Default, PartialEq, Debug)]
    /// struct Histogram(Vec<u32>);
    /// let mut world = World::new();
    /// let value: ecs_core::StateValue = Box::new(Histogram(vec![3]));
    /// assert!(world.clone_state(&*value).is_none());
    /// world.register_state::<Histogram>();
    /// let copy = world.clone_state(&*value).unwrap();
    /// assert_eq!(copy.downcast_ref::<Histogram>(), Some(&Histogram(vec![3])));
    /// assert!(world.clone_state(&7u64).is_some()); // primitives are known
    /// ```
    pub fn register_state<T: Clone + Send + Sync + 'static>(&mut self) {
        self.snapshots.states.add::<T>();
    }

    /// A clone of `value`, if its type is known (see [`World::register_state`]).
    pub fn clone_state(&self, value: &(dyn Any + Send + Sync)) -> Option<StateValue> {
        self.snapshots.states.clone_value(value)
    }
}

#[cfg(test)]
mod tests {
    use crate::world::World;

    #[test]
    fn snapshot_registrations_make_their_types_clonable_state() {
        #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(C)]
        struct Pos(f32);
        #[derive(Clone)]
        struct Name(String);
        let mut world = World::new();
        assert!(world.clone_state(&Pos(1.0)).is_none());
        world.register_pod::<Pos>();
        world.register_snapshot_resource::<Name>();
        assert_eq!(
            world
                .clone_state(&Pos(1.0))
                .unwrap()
                .downcast_ref::<Pos>()
                .unwrap()
                .0,
            1.0
        );
        let name = world.clone_state(&Name("a".into())).unwrap();
        assert_eq!(name.downcast_ref::<Name>().unwrap().0, "a");
    }
}
