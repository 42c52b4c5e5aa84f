//! State types: how to clone a value the engine holds only as `dyn Any` (a system's `Local`,
//! a run condition's counter), for simulation snapshots.
//!
//! A schedule keeps its systems' parameter state behind type erasure, so saving it needs a
//! clone function per type, recorded where the type is still known: at
//! [`World::register_state`], and by every snapshot registration (`register_pod`,
//! `register_clone`, `register_pod_resource`, `register_snapshot_resource`), whose types are
//! `Clone` already. The primitive types (integers, floats, `bool`, `char`, `()`, `String`,
//! `Duration`) need no registration.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::time::Duration;

use crate::world::World;

/// A type-erased value that can go into a simulation snapshot.
pub type StateValue = Box<dyn Any + Send + Sync>;

/// Clones a value of the type it was made for (invariant of [`StateTypes`]).
type CloneFn = fn(&(dyn Any + Send + Sync)) -> Option<StateValue>;

fn clone_as<T: Clone + Send + Sync + 'static>(
    value: &(dyn Any + Send + Sync),
) -> Option<StateValue> {
    value
        .downcast_ref::<T>()
        .map(|v| Box::new(v.clone()) as StateValue)
}

/// The clone functions of one world, by `TypeId`.
///
/// # Invariants
/// `clones[&TypeId::of::<T>()]` is `clone_as::<T>`.
#[derive(Default)]
pub(crate) struct StateTypes {
    clones: HashMap<TypeId, CloneFn>,
}

impl StateTypes {
    pub(crate) fn add<T: Clone + Send + Sync + 'static>(&mut self) {
        self.clones.insert(TypeId::of::<T>(), clone_as::<T>);
    }

    fn clone_value(&self, value: &(dyn Any + Send + Sync)) -> Option<StateValue> {
        macro_rules! primitives {
            ($($t:ty),*) => {
                $(if let Some(v) = value.downcast_ref::<$t>() {
                    return Some(Box::new(v.clone()));
                })*
            };
        }
        primitives!(
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
            Duration
        );
        self.clones.get(&(*value).type_id())?(value)
    }
}

impl World {
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
    use super::*;

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
