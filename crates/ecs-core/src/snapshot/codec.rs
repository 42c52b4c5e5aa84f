//! The `serde` path of snapshot bytes (feature `serde`): components and resources that are
//! `Clone` but not `Pod` (a `String`, a `Vec`, an enum holding data), written by
//! `Snapshot::to_bytes` through a serde format the user picks ([`SerdeFormat`]) and decoded
//! when the snapshot is restored.
//!
//! A type is registered with `World::register_serde::<T, F>()` (or
//! `register_serde_resource`), which records two monomorphic functions (the registry's
//! `ColumnCodec` / `ResourceCodec`): one that encodes a snapshot's cloned column (every value,
//! in row order, as one `[T]`) and one that decodes such bytes back into a column of `T`. A
//! snapshot read from bytes keeps each encoded column as its bytes (it knows no types);
//! restore decodes it with the restoring world's function, before the world changes, and
//! checks it holds one value per row.
//!
//! Nothing here is unsafe: the typed view of a cloned column is a checked downcast.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::component::Component;
use crate::snapshot::registry::{AnyValue, ClonedColumn, ColumnCodec, ResourceCodec, Values};
use crate::snapshot::state_types::{StateCodec, StateValue};

/// A serde data format for snapshot bytes (JSON, bincode, postcard, MessagePack...): the
/// engine hands it values to write and bytes to read, and never looks inside.
///
/// ```
/// # use ecs_core::{SerdeFormat, Snapshot, World};
/// struct Json;
/// impl SerdeFormat for Json {
///     type Error = serde_json::Error;
///     fn to_vec<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Self::Error> {
///         serde_json::to_vec(value)
///     }
///     fn from_slice<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Self::Error> {
///         serde_json::from_slice(bytes)
///     }
/// }
///
/// let mut world = World::new();
/// world.register_serde::<String, Json>();
/// let e = world.spawn((String::from("scout"),));
/// let bytes = world.snapshot().unwrap().to_bytes().unwrap();
///
/// let mut loaded = World::new();
/// loaded.register_serde::<String, Json>();
/// loaded.restore(&Snapshot::from_bytes(&bytes).unwrap()).unwrap();
/// assert_eq!(loaded.get::<String>(e).unwrap(), "scout");
/// ```
pub trait SerdeFormat: 'static {
    /// What the format reports when a value cannot be written or read.
    type Error: std::fmt::Display;
    /// Writes `value`.
    ///
    /// # Errors
    /// The format's, when it cannot represent the value.
    fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Self::Error>;
    /// Reads a value written by [`SerdeFormat::to_vec`].
    ///
    /// # Errors
    /// The format's, when the bytes are not a `T`.
    fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Self::Error>;
}

fn encode_column<T, F>(column: &dyn ClonedColumn) -> Result<Vec<u8>, String>
where
    T: Component + Clone + Serialize,
    F: SerdeFormat,
{
    let values = column
        .as_any()
        .downcast_ref::<Values<T>>()
        .ok_or("the column holds another type")?;
    F::to_vec(values.0.as_slice()).map_err(|e| e.to_string())
}

fn decode_column<T, F>(bytes: &[u8]) -> Result<Box<dyn ClonedColumn>, String>
where
    T: Component + Clone + DeserializeOwned,
    F: SerdeFormat,
{
    let values: Vec<T> = F::from_slice(bytes).map_err(|e| e.to_string())?;
    Ok(Box::new(Values(values)))
}

/// The codec of component type `T` in format `F`.
pub(crate) fn column_codec<T, F>() -> ColumnCodec
where
    T: Component + Clone + Serialize + DeserializeOwned,
    F: SerdeFormat,
{
    ColumnCodec {
        encode: encode_column::<T, F>,
        decode: decode_column::<T, F>,
    }
}

fn encode_resource<R, F>(value: &(dyn Any + Send + Sync)) -> Result<Vec<u8>, String>
where
    R: Serialize + 'static,
    F: SerdeFormat,
{
    let value = value
        .downcast_ref::<R>()
        .ok_or("the value is of another type")?;
    F::to_vec(value).map_err(|e| e.to_string())
}

fn decode_resource<R, F>(bytes: &[u8]) -> Result<AnyValue, String>
where
    R: DeserializeOwned + Send + Sync + 'static,
    F: SerdeFormat,
{
    let value: R = F::from_slice(bytes).map_err(|e| e.to_string())?;
    Ok(Box::new(value))
}

/// The codec of resource type `R` in format `F`.
pub(crate) fn resource_codec<R, F>() -> ResourceCodec
where
    R: Serialize + DeserializeOwned + Send + Sync + 'static,
    F: SerdeFormat,
{
    ResourceCodec {
        encode: encode_resource::<R, F>,
        decode: decode_resource::<R, F>,
    }
}

fn encode_state<T, F>(value: &(dyn Any + Send + Sync)) -> Option<Result<Vec<u8>, String>>
where
    T: Serialize + 'static,
    F: SerdeFormat,
{
    let value = value.downcast_ref::<T>()?;
    Some(F::to_vec(value).map_err(|e| e.to_string()))
}

fn decode_state<T, F>(bytes: &[u8]) -> Result<StateValue, String>
where
    T: DeserializeOwned + Send + Sync + 'static,
    F: SerdeFormat,
{
    let value: T = F::from_slice(bytes).map_err(|e| e.to_string())?;
    Ok(Box::new(value))
}

/// The codec of state type `T` in format `F`.
pub(crate) fn state_codec<T, F>() -> StateCodec
where
    T: Serialize + DeserializeOwned + Send + Sync + 'static,
    F: SerdeFormat,
{
    StateCodec {
        name: std::any::type_name::<T>(),
        encode: encode_state::<T, F>,
        decode: decode_state::<T, F>,
    }
}
