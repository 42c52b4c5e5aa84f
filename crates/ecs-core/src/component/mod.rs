//! Component types and their per-world registry.
//!
//! Any `T: Send + Sync + 'static` is a component. The first time a world sees `T` it gives it the
//! next dense [`ComponentId`] and records a [`ComponentInfo`]: name, memory layout and the
//! type-erased drop function that chunks use to drop values they only know as bytes.
//!
//! A registry is the meaning of every [`ComponentId`] handed out against it: id 3 means "the
//! fourth type this registry saw" and nothing else. Each registry therefore carries a
//! [`RegistryId`] of its own, so that ids (and access sets built from them) can be checked
//! against the registry they are used with, and the owners of a registry (a `World`, a
//! schedule) never hand it out as `&mut Components` to safe code, so it cannot be replaced.

#[expect(
    unsafe_code,
    reason = "writes and reads tuple elements through column pointers"
)]
pub(crate) mod bundle;
pub mod derived_bundles;
mod id;
#[expect(unsafe_code, reason = "type-erased drop glue")]
mod info;
mod registry;
pub(crate) mod signature;
mod type_map;

pub use id::{Component, ComponentId};
pub use info::ComponentInfo;
pub use registry::{Components, RegistryId};
pub use type_map::{TypeIdHasher, TypeIdMap};
