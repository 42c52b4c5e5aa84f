//! State types: how to clone a value the engine holds only as `dyn Any` (a system's `Local`,
//! a run condition's counter), for simulation snapshots.
//!
//! A schedule keeps its systems' parameter state behind type erasure, so saving it needs a
//! clone function per type, recorded where the type is still known: at
//! `World::register_state`, and by every snapshot registration (`register_pod`,
//! `register_clone`, `register_pod_resource`, `register_snapshot_resource`), whose types are
//! `Clone` already. The primitive types (integers, floats, `bool`, `char`, `()`, `String`,
//! `Duration`) need no registration.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::time::Duration;

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

    pub(crate) fn clone_value(&self, value: &(dyn Any + Send + Sync)) -> Option<StateValue> {
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
