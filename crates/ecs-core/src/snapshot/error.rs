//! [`SnapshotError`]: why a snapshot could not be taken, written, read or restored.

use std::fmt;

use crate::entity::Entity;
use crate::error::RowTooLarge;

/// A snapshot could not be taken, written, read or restored.
///
/// Every variant names what it is about: the component or resource type, the entity, or the
/// byte offset in a buffer. Nothing is changed in the world when `snapshot`, `restore` or
/// `from_bytes` return one of these.
///
/// ```
/// # use ecs_core::{SnapshotError, World};
/// struct Handle(u32); // neither Pod nor registered for snapshots
/// let mut world = World::new();
/// let e = world.spawn((Handle(1),));
/// let err = world.snapshot().unwrap_err();
/// assert!(matches!(err, SnapshotError::NotSnapshotable { entity, .. } if entity == e));
/// assert!(err.to_string().contains("Handle` of entity 0v1 is registered neither"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// A live entity has a component registered with neither `register_pod` nor
    /// `register_clone` (and the caller did not ask to skip such components).
    NotSnapshotable {
        /// The component's type name.
        component: &'static str,
        /// The first entity found with it.
        entity: Entity,
    },
    /// `to_bytes` met a column or resource that was cloned rather than copied as `Pod` bytes,
    /// and has no serde codec (`register_serde`, feature `serde`).
    NotPod {
        /// The type's name.
        name: String,
    },
    /// `restore`: the world has no component of this name (or `TypeId`) registered for
    /// snapshots.
    UnknownComponent {
        /// The component's type name, as the snapshot records it.
        component: String,
    },
    /// `restore`: the world registered a type of this name with another size or alignment.
    LayoutMismatch {
        /// The component's type name.
        component: String,
        /// `(size, align)` in the snapshot.
        snapshot: (usize, usize),
        /// `(size, align)` in the world.
        world: (usize, usize),
    },
    /// `restore`: the snapshot holds raw bytes for a component the world did not register with
    /// `register_pod`, so the bytes cannot be proven valid values of it.
    NotPodInWorld {
        /// The component's type name.
        component: String,
    },
    /// `try_state_hash`: an entity holds a component whose value the hash cannot see
    /// (registered neither as pod nor with `register_hashed`).
    Unhashed {
        /// The component's type name.
        component: String,
        /// An entity holding it.
        entity: Entity,
    },
    /// `try_state_hash`: a resource registered for snapshots by cloning is present, but its
    /// value is not hashed (register it with `register_hashed_resource`).
    UnhashedResource {
        /// The resource's type name.
        resource: String,
    },
    /// `restore`: a snapshot read from bytes holds a value that is not a valid bit pattern of
    /// a component registered with `register_checked` (an entity id with generation zero, say).
    InvalidValue {
        /// The component's type name.
        component: String,
        /// The entity whose value it is.
        entity: Entity,
    },
    /// `restore`: the snapshot holds serde-encoded values of a component or resource the world
    /// did not register with `register_serde` / `register_serde_resource`.
    NotSerdeInWorld {
        /// The type's name.
        name: String,
    },
    /// `to_bytes`: the serde format could not write a value of this type.
    Encode {
        /// The type's name.
        name: String,
        /// The format's message.
        reason: String,
    },
    /// `restore`: the serde-encoded values of this type could not be read back (the format's
    /// error, or not one value per row).
    Decode {
        /// The type's name.
        name: String,
        /// The format's message, or what does not match.
        reason: String,
    },
    /// `restore`: the snapshot has rows whose component is disabled, but the world did not
    /// register that component with `register_enableable`.
    NotEnableableInWorld {
        /// The component's type name.
        component: String,
    },
    /// `restore`: the world has no resource of this name registered for snapshots, or one with
    /// another size, alignment or kind.
    UnknownResource {
        /// The resource's type name.
        resource: String,
    },
    /// `restore`: one row of an archetype in the snapshot does not fit in this world's chunks.
    RowTooLarge(RowTooLarge),
    /// `from_bytes`: the buffer does not start with the snapshot magic.
    BadMagic,
    /// `from_bytes`: the format version is not one this build reads.
    UnsupportedVersion(u32),
    /// `from_bytes`: the buffer was written on a machine of the other byte order.
    WrongEndianness,
    /// `from_bytes`: the buffer ends before the data it announces.
    Truncated {
        /// Byte offset where more data was needed.
        at: usize,
        /// Bytes needed there.
        needed: usize,
    },
    /// `from_bytes`: the trailing checksum does not match the contents.
    ChecksumMismatch {
        /// The checksum stored in the buffer.
        stored: u64,
        /// The checksum of the contents.
        computed: u64,
    },
    /// `from_bytes`: the contents are well-framed but inconsistent.
    Corrupt {
        /// Byte offset of the offending field.
        at: usize,
        /// What is wrong, e.g. "entity 5v2 appears twice".
        reason: String,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSnapshotable { component, entity } => write!(
                f,
                "component `{component}` of entity {entity:?} is registered neither as pod nor \
                 as clone, so it cannot be snapshotted"
            ),
            Self::NotPod { name } => write!(
                f,
                "`{name}` is cloned, not pod, so it cannot be written as bytes (register it \
                 with `register_serde` to write it through a serde format)"
            ),
            Self::NotSerdeInWorld { name } => write!(
                f,
                "the snapshot holds serde-encoded `{name}` values, which the world did not \
                 register with `register_serde`"
            ),
            Self::Encode { name, reason } => {
                write!(
                    f,
                    "cannot write `{name}` through its serde format: {reason}"
                )
            }
            Self::Decode { name, reason } => {
                write!(
                    f,
                    "cannot read `{name}` back through its serde format: {reason}"
                )
            }
            Self::UnknownComponent { component } => write!(
                f,
                "the world has no component `{component}` registered for snapshots"
            ),
            Self::LayoutMismatch {
                component,
                snapshot,
                world,
            } => write!(
                f,
                "component `{component}` has size {} and alignment {} in the snapshot but {} \
                 and {} in the world",
                snapshot.0, snapshot.1, world.0, world.1
            ),
            Self::NotPodInWorld { component } => write!(
                f,
                "the snapshot holds bytes of `{component}`, which the world did not register \
                 as pod"
            ),
            Self::Unhashed { component, entity } => write!(
                f,
                "entity {entity:?} holds `{component}`, whose value the state hash cannot see: \
                 register it with `register_pod`, `register_checked` or `register_hashed`"
            ),
            Self::UnhashedResource { resource } => write!(
                f,
                "resource `{resource}` is snapshotted by cloning, so the state hash cannot see \
                 its value: register it with `register_hashed_resource`"
            ),
            Self::InvalidValue { component, entity } => write!(
                f,
                "the snapshot's `{component}` of entity {entity:?} is not a valid value of it"
            ),
            Self::NotEnableableInWorld { component } => write!(
                f,
                "the snapshot has rows with `{component}` disabled, which the world did not \
                 register as enableable"
            ),
            Self::UnknownResource { resource } => write!(
                f,
                "the world has no resource `{resource}` registered for snapshots with this \
                 layout"
            ),
            Self::RowTooLarge(err) => write!(f, "cannot restore: {err}"),
            Self::BadMagic => f.write_str("not a snapshot: bad magic bytes"),
            Self::UnsupportedVersion(v) => write!(f, "unsupported snapshot format version {v}"),
            Self::WrongEndianness => {
                f.write_str("the snapshot was written on a machine of the other byte order")
            }
            Self::Truncated { at, needed } => write!(
                f,
                "snapshot truncated: {needed} more bytes needed at offset {at}"
            ),
            Self::ChecksumMismatch { stored, computed } => write!(
                f,
                "snapshot corrupted: checksum {stored:#018x} stored, {computed:#018x} computed"
            ),
            Self::Corrupt { at, reason } => {
                write!(f, "snapshot corrupted at offset {at}: {reason}")
            }
        }
    }
}

impl std::error::Error for SnapshotError {}
