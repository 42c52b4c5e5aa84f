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

/// Writes a state value of the codec's type; `None` if the value is of another type.
pub(crate) type EncodeState = fn(&(dyn Any + Send + Sync)) -> Option<Result<Vec<u8>, String>>;

/// How a state value of one type is written to bytes and read back (a serde format's
/// functions, monomorphic in the type: `World::register_state_serde`).
#[derive(Clone, Copy)]
pub(crate) struct StateCodec {
    /// The type's name, which the bytes carry to find the codec again.
    pub(crate) name: &'static str,
    pub(crate) encode: EncodeState,
    pub(crate) decode: fn(&[u8]) -> Result<StateValue, String>,
}

/// The clone functions of one world, by `TypeId`, and the byte codecs of the state types
/// registered for them.
///
/// # Invariants
/// `clones[&TypeId::of::<T>()]` is `clone_as::<T>`; `codecs[&TypeId::of::<T>()]` and
/// `by_name[type_name::<T>()]` are the same codec, made for `T`.
#[derive(Default)]
pub(crate) struct StateTypes {
    clones: HashMap<TypeId, CloneFn>,
    codecs: HashMap<TypeId, StateCodec>,
    by_name: HashMap<&'static str, StateCodec>,
}

impl StateTypes {
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn add_codec<T: 'static>(&mut self, codec: StateCodec) {
        self.codecs.insert(TypeId::of::<T>(), codec);
        self.by_name.insert(codec.name, codec);
    }

    /// The codec of `value`'s type, if registered.
    pub(crate) fn codec_of(&self, value: &(dyn Any + Send + Sync)) -> Option<StateCodec> {
        self.codecs.get(&(*value).type_id()).copied()
    }

    /// The codec registered under a type name.
    pub(crate) fn codec_named(&self, name: &str) -> Option<StateCodec> {
        self.by_name.get(name).copied()
    }

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
