//! Error types of the core crate.

use std::fmt;

use crate::entity::Entity;

/// An operation named an entity that is not alive.
///
/// ```
/// # use ecs_core::{EntityError, World};
/// let mut world = World::new();
/// let e = world.spawn(());
/// world.despawn(e).unwrap();
/// assert_eq!(world.despawn(e), Err(EntityError::NoSuchEntity(e)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntityError {
    /// The handle is stale (despawned, or from before `clear`) or was never issued.
    NoSuchEntity(Entity),
    /// The entity is the target of a relationship whose policy is `DespawnPolicy::Refuse`,
    /// and some entity still points at it; nothing changed.
    DespawnRefused {
        /// The entity that was to be despawned.
        entity: Entity,
        /// The relationship type (the sources' component) that refuses.
        relationship: &'static str,
        /// How many sources point at it.
        sources: usize,
    },
}

impl fmt::Display for EntityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::DespawnRefused {
                entity,
                relationship,
                sources,
            } => write!(
                f,
                "entity {entity:?} cannot be despawned: {sources} entities point at it through \
                 `{relationship}`, whose despawn policy is `Refuse` (remove those first)"
            ),
        }
    }
}

impl std::error::Error for EntityError {}

/// [`World::set_parent`](crate::World::set_parent) refused.
///
/// ```
/// # use ecs_core::{HierarchyError, World};
/// let mut world = World::new();
/// let a = world.spawn(());
/// assert_eq!(world.set_parent(a, a), Err(HierarchyError::Cycle { child: a, parent: a }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HierarchyError {
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// `parent` is `child` or one of its descendants.
    Cycle {
        /// The entity that was to get a parent.
        child: Entity,
        /// The parent it was to get.
        parent: Entity,
    },
}

impl fmt::Display for HierarchyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::Cycle { child, parent } => write!(
                f,
                "{parent:?} cannot be the parent of {child:?}: it is {child:?} or one of its \
                 descendants, so the hierarchy would have a cycle"
            ),
        }
    }
}

impl std::error::Error for HierarchyError {}

/// [`World::clone_entity`](crate::World::clone_entity) could not clone.
///
/// ```
/// # use ecs_core::{CloneError, CloneOptions, World};
/// struct Handle(u32); // registered neither as pod nor as clone
/// let mut world = World::new();
/// let e = world.spawn((Handle(1),));
/// let err = world.clone_entity_with(e, &CloneOptions::new().strict()).unwrap_err();
/// assert!(matches!(err, CloneError::NotClonable { entity, .. } if entity == e));
/// assert!(err.to_string().contains("Handle"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloneError {
    /// The entity is not alive.
    NoSuchEntity(Entity),
    /// The entity holds a component registered neither with `register_pod` nor with
    /// `register_clone`, the options are [`strict`](crate::CloneOptions::strict), and they do
    /// not leave it out.
    NotClonable {
        /// The entity.
        entity: Entity,
        /// The component's type name.
        component: &'static str,
    },
    /// Cloning into another world, a component registered with
    /// [`World::register_map_entities`](crate::World::register_map_entities) holds an entity id
    /// naming an entity that is not part of the copy: in the other world it would name nothing
    /// (or an unrelated entity).
    OutsideTheCopy {
        /// The entity holding the component.
        entity: Entity,
        /// The component's type name.
        component: &'static str,
        /// The id it holds.
        held: Entity,
    },
}

impl fmt::Display for CloneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::NotClonable { entity, component } => write!(
                f,
                "entity {entity:?} holds `{component}`, which cannot be cloned: register it with \
                 `register_clone` (or `register_pod`), leave it out with `CloneOptions::deny`, or \
                 clone without `CloneOptions::strict`"
            ),
            Self::OutsideTheCopy {
                entity,
                component,
                held,
            } => write!(
                f,
                "entity {entity:?} holds `{component}` naming {held:?}, which is not part of the \
                 copy: cloned into another world the id would name nothing there; clone {held:?} \
                 with it (e.g. `CloneOptions::with_children`) or leave `{component}` out with \
                 `CloneOptions::deny`"
            ),
        }
    }
}

impl std::error::Error for CloneError {}

/// A component access failed.
///
/// ```
/// # use ecs_core::{ComponentError, World};
/// let mut world = World::new();
/// let e = world.spawn((1u32,));
/// let err = world.get::<char>(e).unwrap_err();
/// assert!(matches!(err, ComponentError::MissingComponent { component: "char", .. }));
/// assert!(err.to_string().contains("has no `char` component"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComponentError {
    /// The handle is stale or was never issued.
    NoSuchEntity(Entity),
    /// The entity is alive but lacks the component.
    MissingComponent {
        /// The entity.
        entity: Entity,
        /// The missing type's name.
        component: &'static str,
    },
    /// The component is not enableable (see `World::register_enableable`).
    NotEnableable {
        /// The type's name.
        component: &'static str,
    },
    /// The type is not a chunk component (see `World::register_chunk_component`).
    NotChunkComponent {
        /// The type's name.
        component: &'static str,
    },
    /// `take` would despawn an entity a `Refuse` relationship protects (see
    /// [`EntityError::DespawnRefused`]); nothing changed.
    DespawnRefused {
        /// The entity.
        entity: Entity,
        /// The relationship type that refuses.
        relationship: &'static str,
        /// How many sources point at it.
        sources: usize,
    },
    /// The component is immutable (a relationship, its target list, or a type made so with
    /// `ComponentHooks::immutable`): change it with `insert`, which runs its hooks.
    Immutable {
        /// The entity.
        entity: Entity,
        /// The type's name.
        component: &'static str,
    },
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::MissingComponent { entity, component } => {
                write!(f, "entity {entity:?} has no `{component}` component")
            }
            Self::NotEnableable { component } => {
                write!(f, "`{component}` is not an enableable component")
            }
            Self::NotChunkComponent { component } => {
                write!(f, "`{component}` is not a chunk component")
            }
            Self::Immutable { entity, component } => write!(
                f,
                "`{component}` of entity {entity:?} is immutable: change it with `insert`, \
                 which runs its hooks"
            ),
            Self::DespawnRefused {
                entity,
                relationship,
                sources,
            } => EntityError::DespawnRefused {
                entity: *entity,
                relationship,
                sources: *sources,
            }
            .fmt(f),
        }
    }
}

impl std::error::Error for ComponentError {}

impl From<EntityError> for ComponentError {
    fn from(err: EntityError) -> Self {
        match err {
            EntityError::NoSuchEntity(e) => Self::NoSuchEntity(e),
            EntityError::DespawnRefused {
                entity,
                relationship,
                sources,
            } => Self::DespawnRefused {
                entity,
                relationship,
                sources,
            },
        }
    }
}

/// A world could not be built as asked.
///
/// ```
/// # use ecs_core::{World, WorldError};
/// let err = World::with_chunk_size(1000).unwrap_err();
/// assert_eq!(err, WorldError::InvalidChunkSize(1000));
/// assert!(err.to_string().starts_with("invalid chunk size 1000"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorldError {
    /// `with_chunk_size` takes a power of two from 4 KiB to 1 MiB.
    InvalidChunkSize(usize),
    /// `ChunkPolicy::MinRows(0)`: a chunk holds at least one row.
    ZeroMinRows,
    /// `set_column_alignment` takes a power of two from 1 to 4096.
    InvalidColumnAlignment(usize),
    /// `set_chunk_size_for` came after the archetype was created, so its chunks are sized.
    ArchetypeExists(crate::ArchetypeId),
    /// `set_component_hooks` (or a relationship's registration) for a type that has hooks.
    HooksAlreadySet {
        /// The type's name.
        component: &'static str,
    },
    /// `set_component_hooks` for a type some entity already holds: its `on_add` never ran.
    HooksAfterUse {
        /// The type's name.
        component: &'static str,
    },
    /// `register_required` would make a type require itself, directly or through others.
    RequiredCycle {
        /// The type that was to require another.
        component: &'static str,
        /// The type it was to require, which already requires it (perhaps through others).
        required: &'static str,
    },
}

impl fmt::Display for WorldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidChunkSize(size) => write!(
                f,
                "invalid chunk size {size}: expected a power of two from 4096 to 1048576 bytes"
            ),
            Self::ZeroMinRows => {
                f.write_str("invalid chunk policy: `MinRows` needs at least 1 row")
            }
            Self::InvalidColumnAlignment(bytes) => write!(
                f,
                "invalid column alignment {bytes}: expected a power of two from 1 to 4096 bytes"
            ),
            Self::ArchetypeExists(id) => write!(
                f,
                "archetype {} already exists, so its chunk size is fixed",
                id.index()
            ),
            Self::HooksAlreadySet { component } => {
                write!(f, "`{component}` already has component hooks")
            }
            Self::HooksAfterUse { component } => write!(
                f,
                "`{component}` is already held by an entity: install its hooks before first use"
            ),
            Self::RequiredCycle {
                component,
                required,
            } => write!(
                f,
                "`{component}` cannot require `{required}`: `{required}` already requires \
                 `{component}` (directly or through other types), so spawning either would never end"
            ),
        }
    }
}

impl std::error::Error for WorldError {}

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

/// An archetype whose single row does not fit in one chunk.
///
/// ```
/// # use ecs_core::RowTooLarge;
/// let err = RowTooLarge {
///     components: vec![("Big", 20_000)],
///     chunk_size: 16_384,
///     row_bytes: 20_008,
/// };
/// assert!(err.to_string().contains("20008 bytes"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowTooLarge {
    /// `(type name, size)` of every column.
    pub components: Vec<(&'static str, usize)>,
    /// The chunk size in bytes.
    pub chunk_size: usize,
    /// Bytes one row needs: entity id, values and alignment padding between columns.
    pub row_bytes: usize,
}

impl fmt::Display for RowTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "one row of (")?;
        for (i, (name, size)) in self.components.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name}: {size} B")?;
        }
        write!(
            f,
            ") needs {} bytes with its entity id and alignment padding, more than a {}-byte chunk holds",
            self.row_bytes, self.chunk_size
        )
    }
}

impl std::error::Error for RowTooLarge {}
