//! Snapshots: save a world, put it back exactly, prove two worlds agree.
//!
//! [`World::snapshot`](crate::World::snapshot) captures everything needed to restore the world: the entity table
//! (the slot count, the free list in order with each free slot's next generation, and the
//! retired slots, so later spawns return the same ids; live slots' generations are in the rows),
//! every archetype's rows (entity ids, then one buffer per column), the resources that opted in
//! and the change tick. [`World::restore`](crate::World::restore) puts it back.
//!
//! ```text
//! Snapshot
//! ├── change_tick
//! ├── components   [name, size, align, TypeId (in memory only), pod?]  (the ones used)
//! ├── slot_count   every other slot is live, its generation in its row
//! ├── free         [(index, next generation)]: the free list, in order
//! ├── retired      [index]: slots at generation u32::MAX, never reused
//! ├── archetypes   in archetype-id order, each
//! │     ├── components [index into `components`]
//! │     ├── entities   [Entity; rows]          (rows in storage order)
//! │     ├── columns    Pod: [u8; rows × size]  |  Clone: Vec<T> behind a trait object
//! │     ├── disabled   per column, the rows whose (enableable) component is switched off
//! │     └── ticks      per chunk its structural tick, per column its chunk ticks and (for
//! │                    types that keep them) per row the change and add ticks
//! └── resources    [name, size, align, value or "absent"]
//! ```
//!
//! Cost: a pod column is copied with one `memcpy` per chunk, into buffers that
//! [`World::snapshot_into`](crate::World::snapshot_into) reuses from one frame to the next; a cloned column costs one
//! `clone` per value. A snapshot does not depend on the chunk size: rows are stored densely per
//! archetype and restored into whatever chunks the target world uses.
//!
//! Enableable components keep their disabled rows. Chunk component values are not saved:
//! restored chunks start from `Default`, as any chunk joining an archetype does.
//!
//! Restoring keeps every archetype (the list is append-only, so `QueryState`s built before stay
//! valid: they cache archetype ids and column offsets), empties them, refills the ones the
//! snapshot names, and rebuilds entity locations from the rows. In a drop-free world the
//! refill reuses each archetype's own chunks in their old order, and a chunk that already holds
//! the snapshot's entity ids at the same rows (the usual rollback: same entities, new values)
//! keeps them: one `memcmp` of its ids replaces writing them and their entity-table slots,
//! which already point there. Only the column bytes are copied. The change tick never goes
//! back (world invariant 3): it becomes the larger of the world's and the snapshot's, and the
//! rows' change ticks come back moved by the same amount (the `ticks` module), so every row
//! keeps its age: a reader whose own tick moved with them (a simulation snapshot's systems)
//! sees the `Changed<T>` / `Added<T>` rows of the original run; a reader built after the
//! restore has never run and sees every row; a reader that ran before the restore and was not
//! rolled back sees only rows younger than its last run. [`World::restore_marking_changed`](crate::World::restore_marking_changed)
//! stamps every restored row changed instead.
//!
//! Safety rests on one rule: bytes are written into a column only if the world registered the
//! column's type with `register_pod::<T: bytemuck::Pod>`, which proves any bytes are a valid
//! `T`. A snapshot read from bytes carries names, sizes and alignments only, and must find a
//! pod type of the same name and layout in the world. Its serde columns (the `codec` module,
//! feature `serde`) are never written as bytes: the restoring world's codec decodes them into
//! values of its own type first, and they then move in as cloned columns do.

use std::any::TypeId;
use std::borrow::Cow;

use crate::archetype::Archetype;
use crate::chunk::Chunk;
use crate::entity::Entity;
use crate::ids::Tick;

pub(crate) mod buf;
#[cfg(feature = "serde")]
#[deny(unsafe_code)]
pub(crate) mod codec;
#[deny(unsafe_code)]
pub(crate) mod error;
#[deny(unsafe_code)]
mod format;
#[deny(unsafe_code)]
pub(crate) mod hash;
pub(crate) mod registry;
#[deny(unsafe_code)]
pub(crate) mod relationship_codec;
#[deny(unsafe_code)]
pub(crate) mod state_types;
#[deny(unsafe_code)]
pub(crate) mod ticks;

use buf::PodBuf;
use registry::{ClonedColumn, ResourceValue};
use ticks::SavedTicks;

/// A saved world; docs/architecture.md ("Snapshots, rollback and the state hash") says what it
/// holds.
///
/// Made by [`World::snapshot`](crate::World::snapshot) (or read by [`Snapshot::from_bytes`]), put back by
/// [`World::restore`](crate::World::restore), as often as needed.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.register_pod::<u32>();
/// let a = world.spawn((1u32,));
/// let snap = world.snapshot().unwrap();
/// world.despawn(a).unwrap();
/// let b = world.spawn((2u32,));
/// world.restore(&snap).unwrap();
/// assert_eq!(world.get::<u32>(a), Ok(&1));
/// assert!(!world.contains(b));
/// // The free list came back too: the next spawn gets `b`'s id again.
/// world.despawn(a).unwrap();
/// assert_eq!(world.spawn((2u32,)), b);
/// ```
///
/// # Invariants
/// Every slot index below `slot_count` is exactly one of: the entity of one row of one
/// archetype, on `free` (with its generation at the same position of `free_generations`), or
/// in `retired`. `snapshot_into` builds it so; `from_bytes` refuses buffers that break it.
/// `restore` relies on it to write each entity-table slot once, without clearing the table.
#[derive(Default)]
pub struct Snapshot {
    pub(crate) change_tick: Tick,
    pub(crate) components: Vec<ComponentEntry>,
    pub(crate) slot_count: u32,
    pub(crate) free: Vec<u32>,
    pub(crate) free_generations: Vec<u32>,
    pub(crate) retired: Vec<u32>,
    pub(crate) archetypes: Vec<ArchetypeData>,
    pub(crate) resources: Vec<ResourceEntry>,
}

/// One component type a snapshot uses.
pub(crate) struct ComponentEntry {
    pub(crate) name: Cow<'static, str>,
    pub(crate) size: usize,
    pub(crate) align: usize,
    /// Known for snapshots taken in this process; `None` when read from bytes.
    pub(crate) type_id: Option<TypeId>,
    pub(crate) pod: bool,
    /// The value hasher of a `register_hashed` type (cloned columns only: a snapshot read from
    /// bytes has none).
    pub(crate) hash: Option<registry::HashValues>,
    /// How `to_bytes` writes a cloned column of a `register_serde` type (none for snapshots
    /// read from bytes, whose serde columns stay encoded).
    pub(crate) codec: Option<registry::ColumnCodec>,
}

/// One archetype's rows.
///
/// # Invariants
/// 1. `components` are ascending indices into the snapshot's components, and no other
///    archetype of the snapshot has the same set.
/// 2. `columns[i]` holds `entities.len()` values of `components[i]`'s type: `Pod` buffers are
///    exactly `rows × size` bytes of valid values; `Encoded` ones carry one hash per row
///    when they carry hashes (their values are checked when decoded).
/// 3. `disabled.len() == columns.len()`; `disabled[i]` lists, strictly ascending and below
///    `entities.len()`, the rows whose `components[i]` is disabled (empty for components that
///    are not enableable).
#[derive(Default)]
pub(crate) struct ArchetypeData {
    pub(crate) components: Vec<u32>,
    pub(crate) entities: Vec<Entity>,
    pub(crate) columns: Vec<Column>,
    pub(crate) disabled: Vec<Vec<u32>>,
    /// The rows' change ticks, per column (`ticks` module).
    pub(crate) ticks: SavedTicks,
}

pub(crate) enum Column {
    /// 64-byte aligned: see the `buf` module for why.
    Pod(PodBuf),
    Cloned(Box<dyn ClonedColumn>),
    /// A serde column read from bytes: its values in the format of the type's
    /// `register_serde`, decoded by the restoring world.
    Encoded(Encoded),
}

/// The bytes of an encoded column, and the writer's per-row value hashes if the type was
/// also `register_hashed` there (so the snapshot's own `state_hash` sees its values).
pub(crate) struct Encoded {
    pub(crate) bytes: Vec<u8>,
    pub(crate) hashes: Option<Vec<u64>>,
}

pub(crate) struct ResourceEntry {
    pub(crate) name: Cow<'static, str>,
    pub(crate) size: usize,
    pub(crate) align: usize,
    pub(crate) type_id: Option<TypeId>,
    pub(crate) pod: bool,
    pub(crate) value: Option<ResourceValue>,
    /// How `to_bytes` writes a cloned value of a `register_serde_resource` type.
    pub(crate) codec: Option<registry::ResourceCodec>,
    /// The value's state-hash term, for a present `register_hashed_resource` type.
    pub(crate) hash: Option<u64>,
}

/// What `snapshot` does with a component registered neither as pod nor as clone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unregistered {
    /// Return [`SnapshotError::NotSnapshotable`](crate::SnapshotError::NotSnapshotable) naming it (the default).
    #[default]
    Fail,
    /// Leave it out: restored entities lack it (and so sit in another archetype).
    Skip,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("entities", &self.len())
            .field("archetypes", &self.archetypes.len())
            .field("resources", &self.resources.len())
            .field("change_tick", &self.change_tick)
            .finish()
    }
}

impl Snapshot {
    /// Live entities saved.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn(());
    /// assert_eq!(world.snapshot().unwrap().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.archetypes.iter().map(|a| a.entities.len()).sum()
    }

    /// Whether no entity was saved.
    ///
    /// ```
    /// # use ecs_core::World;
    /// assert!(ecs_core::World::new().snapshot().unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of saved data: entity ids and the entity table, pod column and resource bytes,
    /// cloned values at their in-memory size (not counting what they own on the heap), and
    /// the saved change ticks. What sending or keeping the snapshot costs; buffers reused by
    /// [`World::snapshot_into`](crate::World::snapshot_into) may hold more capacity.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_pod::<[f32; 4]>();
    /// for _ in 0..1000 {
    ///     world.spawn(([0.0f32; 4],));
    /// }
    /// let size = world.snapshot().unwrap().size_bytes();
    /// // 16 bytes of values and 8 of id per row, plus the table and chunk ticks.
    /// assert!((24_000..26_000).contains(&size), "{size}");
    /// ```
    pub fn size_bytes(&self) -> usize {
        let u32s = self.free.len() + self.free_generations.len() + self.retired.len();
        let mut bytes = u32s * size_of::<u32>();
        for arch in &self.archetypes {
            bytes += arch.entities.len() * size_of::<Entity>();
            for (&c, col) in arch.components.iter().zip(&arch.columns) {
                bytes += match col {
                    Column::Pod(buf) => buf.len(),
                    Column::Cloned(values) => values.len() * self.components[c as usize].size,
                    Column::Encoded(enc) => {
                        enc.bytes.len() + enc.hashes.as_ref().map_or(0, |h| h.len() * 8)
                    }
                };
            }
            bytes += arch.disabled.iter().map(Vec::len).sum::<usize>() * size_of::<u32>();
            bytes += arch.ticks.size_bytes();
        }
        for res in &self.resources {
            bytes += match &res.value {
                Some(ResourceValue::Bytes(b)) => b.len(),
                Some(ResourceValue::Cloned(_)) => res.size,
                Some(ResourceValue::Encoded(bytes)) => bytes.len(),
                None => 0,
            };
        }
        bytes
    }

    /// The world's change tick when it was taken.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// assert_eq!(world.snapshot().unwrap().change_tick(), world.change_tick());
    /// ```
    pub fn change_tick(&self) -> Tick {
        self.change_tick
    }

    /// The saved entities, archetype by archetype, in storage order.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_pod::<u8>();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(world.snapshot().unwrap().entities().collect::<Vec<_>>(), [e]);
    /// ```
    pub fn entities(&self) -> impl Iterator<Item = Entity> + '_ {
        self.archetypes
            .iter()
            .flat_map(|a| a.entities.iter().copied())
    }

    /// Whether this snapshot, read from bytes, holds serde-encoded values whose writer did
    /// not hash them (`register_hashed`): its [`Snapshot::state_hash`] counts those by
    /// presence, so it equals a restored world's only if that world does not hash them either.
    #[doc(hidden)]
    pub fn has_unhashed_encoded_values(&self) -> bool {
        self.archetypes.iter().any(|a| {
            a.columns
                .iter()
                .any(|c| matches!(c, Column::Encoded(enc) if enc.hashes.is_none()))
        }) || self
            .resources
            .iter()
            .any(|r| matches!(r.value, Some(ResourceValue::Encoded(_))) && r.hash.is_none())
    }

    /// The [`World::state_hash`](crate::World::state_hash) a world restored from this snapshot has, computed from the
    /// snapshot alone. (A pod resource the restoring world registered but the snapshot does
    /// not carry keeps its value, and counts in the world's hash if present.)
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_pod::<f32>();
    /// world.spawn((1.5f32,));
    /// assert_eq!(world.snapshot().unwrap().state_hash(), world.state_hash());
    /// ```
    pub fn state_hash(&self) -> u64 {
        let mut h = hash::StateHasher::default();
        let mut hashes = Vec::new();
        let keys: Vec<u64> = self
            .components
            .iter()
            .map(|c| hash::component_key(&c.name))
            .collect();
        for arch in &self.archetypes {
            let key = hash::archetype_key(arch.components.iter().map(|&c| keys[c as usize]));
            h.rows(&arch.entities, key);
            for ((&c, col), off) in arch
                .components
                .iter()
                .zip(&arch.columns)
                .zip(&arch.disabled)
            {
                let entry = &self.components[c as usize];
                match col {
                    Column::Pod(bytes) => h.column(keys[c as usize], entry.size, bytes),
                    Column::Cloned(values) => {
                        if let Some(hash) = entry.hash {
                            registry::hash_cloned(hash, entry.type_id, &**values, &mut hashes);
                            h.hashed(keys[c as usize], &hashes);
                        }
                    }
                    Column::Encoded(enc) => {
                        if let Some(hashes) = &enc.hashes {
                            h.hashed(keys[c as usize], hashes);
                        }
                    }
                }
                h.disabled(keys[c as usize], off.iter().map(|&r| r as usize));
            }
        }
        for res in &self.resources {
            if res.pod {
                let bytes = res.value.as_ref().and_then(ResourceValue::as_bytes);
                h.resource(&res.name, bytes);
            } else if let Some(hash) = res.hash {
                h.resource(&res.name, Some(&hash.to_le_bytes()));
            }
        }
        h.finish()
    }
}

/// The bytes of rows `0..len` of pod column `col` of `chunk`, an `arch` chunk.
///
/// Only for columns whose type was registered with `register_pod` (the caller's check).
pub(crate) fn pod_bytes<'a>(arch: &Archetype, chunk: &'a Chunk, col: usize) -> &'a [u8] {
    let size = arch.layout().size(col);
    let base = arch.column_base(chunk, col);
    if size == 0 {
        return &[];
    }
    // SAFETY: rows `0..len` of the column are initialised values of a `Pod` type (`Chunk`
    // invariant 2; the caller checked the registry), and a `Pod` type has no padding, so every
    // byte is initialised; the rows lie inside the chunk (`ChunkLayout` invariant 1); `&chunk`
    // keeps writers out for `'a`.
    unsafe { std::slice::from_raw_parts(base.as_ptr().cast_const(), chunk.len() * size) }
}

// A snapshot can be sent to another thread (a network or disk writer).
const _: () = {
    const fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Snapshot>()
};

/// Entity ids `snapshot_into` copies at a time: 2 KiB, below glibc's `rep movsb` threshold.
pub(crate) const ID_PIECE: usize = 2048 / size_of::<Entity>();

// `restore` compares entity ids as bytes: two `u32`s and no padding.
const _: () = assert!(size_of::<Entity>() == 2 * size_of::<u32>());
