//! Snapshots: save a world, put it back exactly, prove two worlds agree.
//!
//! [`World::snapshot`] captures everything needed to restore the world: the entity table
//! (the slot count, the free list in order with each free slot's next generation, and the
//! retired slots, so later spawns return the same ids; live slots' generations are in the rows),
//! every archetype's rows (entity ids, then one buffer per column), the resources that opted in
//! and the change tick. [`World::restore`] puts it back.
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
//! [`World::snapshot_into`] reuses from one frame to the next; a cloned column costs one
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
//! rolled back sees only rows younger than its last run. [`World::restore_marking_changed`]
//! stamps every restored row changed instead.
//!
//! Safety rests on one rule: bytes are written into a column only if the world registered the
//! column's type with `register_pod::<T: bytemuck::Pod>`, which proves any bytes are a valid
//! `T`. A snapshot read from bytes carries names, sizes and alignments only, and must find a
//! pod type of the same name and layout in the world.

use std::any::TypeId;
use std::borrow::Cow;
use std::collections::HashMap;
use std::ptr::NonNull;

use crate::archetype::restore::{disable_rows, disabled_rows, EmptiedChunk};
use crate::archetype::Archetype;
use crate::chunk::Chunk;
use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::SnapshotError;
use crate::signature::Signature;
use crate::unwind::{drop_each, resume_unless_unwinding};
use crate::world::{Tick, World};

mod buf;
#[deny(unsafe_code)]
mod format;
#[deny(unsafe_code)]
mod hash;
pub(crate) mod registry;
#[deny(unsafe_code)]
pub(crate) mod state_types;
#[deny(unsafe_code)]
pub(crate) mod ticks;

use buf::PodBuf;
use registry::{ClonedColumn, ColumnKind, ResourceValue};
use ticks::{KeepRows, SavedTicks};

/// A saved world; docs/architecture.md ("Snapshots, rollback and the state hash") says what it
/// holds.
///
/// Made by [`World::snapshot`] (or read by [`Snapshot::from_bytes`]), put back by
/// [`World::restore`], as often as needed.
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
    change_tick: Tick,
    components: Vec<ComponentEntry>,
    slot_count: u32,
    free: Vec<u32>,
    free_generations: Vec<u32>,
    retired: Vec<u32>,
    archetypes: Vec<ArchetypeData>,
    resources: Vec<ResourceEntry>,
}

/// One component type a snapshot uses.
pub(crate) struct ComponentEntry {
    name: Cow<'static, str>,
    size: usize,
    align: usize,
    /// Known for snapshots taken in this process; `None` when read from bytes.
    type_id: Option<TypeId>,
    pod: bool,
    /// The value hasher of a `register_hashed` type (cloned columns only: a snapshot read from
    /// bytes has none).
    hash: Option<registry::HashValues>,
}

/// One archetype's rows.
///
/// # Invariants
/// 1. `components` are ascending indices into the snapshot's components, and no other
///    archetype of the snapshot has the same set.
/// 2. `columns[i]` holds `entities.len()` values of `components[i]`'s type: `Pod` buffers are
///    exactly `rows × size` bytes of valid values.
/// 3. `disabled.len() == columns.len()`; `disabled[i]` lists, strictly ascending and below
///    `entities.len()`, the rows whose `components[i]` is disabled (empty for components that
///    are not enableable).
#[derive(Default)]
pub(crate) struct ArchetypeData {
    components: Vec<u32>,
    entities: Vec<Entity>,
    columns: Vec<Column>,
    disabled: Vec<Vec<u32>>,
    /// The rows' change ticks, per column (`ticks` module).
    ticks: SavedTicks,
}

pub(crate) enum Column {
    /// 64-byte aligned: see the `buf` module for why.
    Pod(PodBuf),
    Cloned(Box<dyn ClonedColumn>),
}

pub(crate) struct ResourceEntry {
    name: Cow<'static, str>,
    size: usize,
    align: usize,
    type_id: Option<TypeId>,
    pod: bool,
    value: Option<ResourceValue>,
}

/// What `snapshot` does with a component registered neither as pod nor as clone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unregistered {
    /// Return [`SnapshotError::NotSnapshotable`] naming it (the default).
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
    /// [`World::snapshot_into`] may hold more capacity.
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
                };
            }
            bytes += arch.disabled.iter().map(Vec::len).sum::<usize>() * size_of::<u32>();
            bytes += arch.ticks.size_bytes();
        }
        for res in &self.resources {
            bytes += match &res.value {
                Some(ResourceValue::Bytes(b)) => b.len(),
                Some(ResourceValue::Cloned(_)) => res.size,
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

    /// The [`World::state_hash`] a world restored from this snapshot has, computed from the
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
                            assert!(Some(values.item_type()) == entry.type_id);
                            // SAFETY: `values` holds `len` initialised values of the entry's
                            // type (`ClonedColumn`'s contract, checked just above), which is the
                            // type `hash` was made for (the registry's invariant 3).
                            unsafe { hash(values.as_ptr(), values.len(), &mut hashes) };
                            h.hashed(keys[c as usize], &hashes);
                        }
                    }
                }
                h.disabled(keys[c as usize], off.iter().map(|&r| r as usize));
            }
        }
        for res in self.resources.iter().filter(|r| r.pod) {
            h.resource(
                &res.name,
                res.value.as_ref().and_then(ResourceValue::as_bytes),
            );
        }
        h.finish()
    }
}

impl World {
    /// Saves the world; see [`Snapshot`].
    ///
    /// Cost: one `memcpy` per chunk and pod column, one `clone` per cloned value, plus the
    /// entity table (4 bytes per slot).
    ///
    /// # Errors
    /// [`SnapshotError::NotSnapshotable`] naming the first component of a live entity that was
    /// registered neither with [`World::register_pod`] nor [`World::register_clone`]; use
    /// [`World::snapshot_into`] with [`Unregistered::Skip`] to leave such components out.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_pod::<[f32; 3]>();
    /// let e = world.spawn(([1.0f32, 2.0, 3.0],));
    /// let snap = world.snapshot().unwrap();
    /// world.get_mut::<[f32; 3]>(e).unwrap()[0] = 9.0;
    /// world.restore(&snap).unwrap();
    /// assert_eq!(world.get::<[f32; 3]>(e), Ok(&[1.0, 2.0, 3.0]));
    /// ```
    pub fn snapshot(&self) -> Result<Snapshot, SnapshotError> {
        let mut snap = Snapshot::default();
        self.snapshot_into(&mut snap, Unregistered::Fail)?;
        Ok(snap)
    }

    /// Saves the world into `snap`, reusing its buffers: a rollback loop that keeps a ring of
    /// snapshots allocates nothing once the ring is warm. Ids reserved through
    /// [`World::reserve_entity`] but not yet flushed are not saved.
    ///
    /// # Errors
    /// As [`World::snapshot`] with [`Unregistered::Fail`]; `snap` is then left empty.
    ///
    /// ```
    /// # use ecs_core::{Snapshot, Unregistered, World};
    /// struct Scratch; // not registered: skipped
    /// let mut world = World::new();
    /// world.register_pod::<u32>();
    /// let e = world.spawn((1u32, Scratch));
    /// let mut snap = Snapshot::default();
    /// world.snapshot_into(&mut snap, Unregistered::Skip).unwrap();
    /// world.restore(&snap).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&1));
    /// assert!(!world.has::<Scratch>(e));
    /// ```
    pub fn snapshot_into(
        &self,
        snap: &mut Snapshot,
        unregistered: Unregistered,
    ) -> Result<(), SnapshotError> {
        let components = self.components();
        // Per world component id: its index in `snap.components`, once used.
        let mut entry_of: Vec<u32> = vec![u32::MAX; components.len()];
        let mut kept_sets: HashMap<Signature, usize> = HashMap::new();
        // Which world archetypes go where: (archetype, columns kept, target index in snapshot).
        let mut plan: Vec<(&Archetype, Vec<usize>, usize)> = Vec::new();
        snap.components.clear();
        let mut n_targets = 0;
        for arch in self.archetypes() {
            let mut kept = Vec::with_capacity(arch.signature().len());
            let mut skip_archetype = false;
            for (col, id) in arch.component_ids().enumerate() {
                if self.snapshots.kind(id).is_some() {
                    kept.push(col);
                } else if arch.is_empty() {
                    // Nothing to save, and a restore could not rebuild its type: leave it out.
                    skip_archetype = true;
                } else if unregistered == Unregistered::Fail {
                    snap.archetypes.clear();
                    return Err(SnapshotError::NotSnapshotable {
                        component: components.info(id).name(),
                        entity: arch.chunks()[0].entities()[0],
                    });
                }
            }
            if skip_archetype {
                continue;
            }
            let ids: Vec<ComponentId> = arch.component_ids().collect();
            let set: Signature = kept.iter().map(|&c| ids[c]).collect();
            let target = *kept_sets.entry(set).or_insert_with(|| {
                n_targets += 1;
                n_targets - 1
            });
            for &c in &kept {
                entry_of[ids[c].index()] = 0; // used; numbered below
            }
            plan.push((arch, kept, target));
        }

        // Number the used components in id order, so each archetype's list is ascending.
        for (index, entry) in entry_of.iter_mut().enumerate() {
            if *entry == u32::MAX {
                continue;
            }
            *entry = snap.components.len() as u32;
            let id = ComponentId::from_index(index);
            let info = components.info(id);
            snap.components.push(ComponentEntry {
                name: Cow::Borrowed(info.name()),
                size: info.size(),
                align: info.align(),
                type_id: Some(info.type_id()),
                pod: self.is_pod(id),
                hash: self.snapshots.hasher(id),
            });
        }

        // Shape the archetype buffers, reusing what the last snapshot left.
        snap.archetypes.truncate(n_targets);
        snap.archetypes
            .resize_with(n_targets, ArchetypeData::default);
        let mut shaped = vec![false; n_targets];
        for (arch, kept, target) in &plan {
            let data = &mut snap.archetypes[*target];
            if std::mem::replace(&mut shaped[*target], true) {
                continue;
            }
            let ids: Vec<ComponentId> = arch.component_ids().collect();
            data.components.clear();
            data.components
                .extend(kept.iter().map(|&c| entry_of[ids[c].index()]));
            data.entities.clear();
            data.disabled.resize_with(kept.len(), Vec::new);
            for rows in &mut data.disabled {
                rows.clear();
            }
            data.columns.truncate(kept.len());
            data.ticks.shape(kept.len());
            for (i, &c) in kept.iter().enumerate() {
                let kind = self
                    .snapshots
                    .kind(ids[c])
                    .expect("kept columns are registered");
                let fits = match (data.columns.get_mut(i), kind) {
                    (Some(Column::Pod(bytes)), ColumnKind::Pod(_)) => {
                        bytes.clear();
                        true
                    }
                    (Some(Column::Cloned(values)), ColumnKind::Clone(_))
                        if values.item_type() == components.info(ids[c]).type_id() =>
                    {
                        values.clear();
                        true
                    }
                    _ => false,
                };
                if !fits {
                    let fresh = match kind {
                        ColumnKind::Pod(_) => Column::Pod(PodBuf::default()),
                        ColumnKind::Clone(new) => Column::Cloned(new()),
                    };
                    if i < data.columns.len() {
                        data.columns[i] = fresh;
                    } else {
                        data.columns.push(fresh);
                    }
                }
            }
        }

        // Copy the rows.
        let now = self.change_tick();
        for (arch, kept, target) in &plan {
            let data = &mut snap.archetypes[*target];
            let first_row = data.entities.len();
            let ids: Vec<ComponentId> = arch.component_ids().collect();
            let keep: Vec<KeepRows> = kept
                .iter()
                .map(|&c| {
                    let marks = components.row_ticks(ids[c]);
                    KeepRows {
                        changed: marks.changed(),
                        added: marks.added(),
                    }
                })
                .collect();
            for chunk in arch.chunks() {
                data.ticks.save_chunk(chunk, kept, &keep, now);
            }
            data.entities.reserve(arch.len());
            for chunk in arch.chunks() {
                // In pieces of at most 2 KiB: `data.entities` is a `Vec` (16 bytes past a
                // cache line for large blocks), and bigger copies to a misaligned destination
                // go through a `rep movsb` that runs about 3× slower (see the `buf` module).
                for ids in chunk.entities().chunks(ID_PIECE) {
                    data.entities.extend_from_slice(ids);
                }
            }
            for (i, &c) in kept.iter().enumerate() {
                if let Some(slot) = arch.enable_slot(c) {
                    disabled_rows(arch, slot, first_row, &mut data.disabled[i]);
                }
            }
            for (i, &c) in kept.iter().enumerate() {
                let size = arch.layout().size(c);
                match &mut data.columns[i] {
                    Column::Pod(bytes) => {
                        bytes.reserve(arch.len() * size);
                        for chunk in arch.chunks() {
                            bytes.extend_from_slice(pod_bytes(arch, chunk, c));
                        }
                    }
                    Column::Cloned(values) => {
                        for chunk in arch.chunks() {
                            let base = arch.column_base(chunk, c);
                            // SAFETY: rows `0..len` of column `c` are initialised values of
                            // its type (`Chunk` invariant 2), which is `values`' item type
                            // (registry invariant 1, checked when shaping); `&self` keeps
                            // writers out while they are cloned.
                            unsafe { values.extend_cloned(base.as_ptr(), chunk.len()) };
                        }
                    }
                }
            }
        }

        snap.slot_count = self
            .entities_for_snapshot()
            .export_vacant(&mut snap.free_generations, &mut snap.retired);
        snap.free.clear();
        snap.free
            .extend_from_slice(self.entities_for_snapshot().free_list());
        snap.change_tick = self.change_tick();
        snap.resources.clear();
        for hooks in self.snapshots.resources() {
            snap.resources.push(ResourceEntry {
                name: Cow::Borrowed(hooks.name),
                size: hooks.size,
                align: hooks.align,
                type_id: Some(hooks.type_id),
                pod: hooks.pod,
                value: (hooks.save)(self.resources()),
            });
        }
        Ok(())
    }

    /// Puts the world back as `snap` saved it: the same entity ids (and free list, so later
    /// spawns return the same ids), components, query results and opted-in resources.
    /// Resources that did not opt in are left alone. Existing `QueryState`s stay valid.
    ///
    /// Cost: clearing the world, then one `memcpy` per chunk and pod column, one `clone` per
    /// cloned value, and one entity-table write per row; rows of a drop-free world that keep
    /// their entity at the same place (see the `snapshot` module docs) cost a compare of their ids
    /// instead of the id copy and table write.
    ///
    /// # Errors
    /// Checked before anything changes: [`SnapshotError::UnknownComponent`],
    /// [`SnapshotError::LayoutMismatch`] or [`SnapshotError::NotPodInWorld`] when the world's
    /// registry does not hold the snapshot's component types with the same layout and kind;
    /// [`SnapshotError::UnknownResource`] likewise for resources; and
    /// [`SnapshotError::RowTooLarge`] when a row does not fit this world's chunks.
    ///
    /// # Panics
    /// If a component's `Clone` or `Drop` panics (the world is then left empty, or as it was
    /// if the panic came from cloning).
    ///
    /// ```
    /// # use ecs_core::{SnapshotError, World};
    /// let mut a = World::new();
    /// a.register_pod::<u64>();
    /// let e = a.spawn((7u64,));
    /// let snap = a.snapshot().unwrap();
    ///
    /// let mut b = World::new();
    /// assert!(matches!(b.restore(&snap), Err(SnapshotError::UnknownComponent { .. })));
    /// b.register_pod::<u64>();
    /// b.restore(&snap).unwrap();
    /// assert_eq!(b.get::<u64>(e), Ok(&7));
    /// ```
    pub fn restore(&mut self, snap: &Snapshot) -> Result<(), SnapshotError> {
        self.restore_with(snap, true)
    }

    /// [`World::restore`], but every restored row reads as changed (and added) at the
    /// restore, whatever the snapshot's ticks say: for readers that are not rolled back with
    /// the world (a renderer's `Changed<T>` cache) and must see every value the restore
    /// replaced.
    ///
    /// # Errors
    /// As [`World::restore`].
    ///
    /// ```
    /// # use ecs_core::{ChangeWindow, World};
    /// let mut world = World::new();
    /// world.register_pod::<u32>();
    /// let e = world.spawn((1u32,));
    /// let snap = world.snapshot().unwrap();
    /// world.advance_tick();
    /// let since = world.change_tick();
    /// world.restore_marking_changed(&snap).unwrap();
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert!(arch.chunks()[0].changed_since(0, ChangeWindow::new(world.change_tick(), since)));
    /// ```
    pub fn restore_marking_changed(&mut self, snap: &Snapshot) -> Result<(), SnapshotError> {
        self.restore_with(snap, false)
    }

    /// [`World::restore`]; `keep_ticks`: write the snapshot's change ticks back (shifted, see
    /// the `ticks` module) instead of stamping every row changed at the restore.
    fn restore_with(&mut self, snap: &Snapshot, keep_ticks: bool) -> Result<(), SnapshotError> {
        self.flush();
        let plan = self.plan_restore(snap)?;

        // Everything that runs user code before the world changes: clones of cloned columns
        // and resources. A panic here leaves the world untouched.
        let mut cloned: Vec<Vec<Option<Box<dyn ClonedColumn>>>> = snap
            .archetypes
            .iter()
            .map(|a| {
                a.columns
                    .iter()
                    .map(|c| match c {
                        Column::Cloned(values) => Some(values.duplicate()),
                        Column::Pod(_) => None,
                    })
                    .collect()
            })
            .collect();
        let resources: Vec<_> = plan
            .resources
            .iter()
            .zip(&snap.resources)
            .map(|(hooks, entry)| {
                let value = entry.value.as_ref().map(|v| {
                    (hooks.prepare)(v).expect("checked while planning: same type and length")
                });
                (hooks.install, value)
            })
            .collect();

        // Chunk component values for every chunk the restore fills (user code too), made
        // while nothing has changed yet.
        {
            let (_, components, archetypes) = self.parts_mut();
            for (data, target) in snap.archetypes.iter().zip(&plan.archetypes) {
                let id = archetypes.get_or_create(target.signature.clone(), components);
                archetypes.as_mut_slice()[id.index()].prepare_restore(data.entities.len());
            }
        }

        let tick = self.change_tick().max(snap.change_tick);
        let mut reuse = self.empty_for_restore();
        let mut stale = Vec::new();
        self.raise_change_tick(tick);

        let (entities, components, archetypes) = self.parts_mut();
        entities.restore_slots(
            snap.slot_count,
            &snap.free,
            &snap.free_generations,
            &snap.retired,
        );
        for ((data, target), cloned) in snap
            .archetypes
            .iter()
            .zip(&plan.archetypes)
            .zip(&mut cloned)
        {
            let id = archetypes.get_or_create(target.signature.clone(), components);
            let arch = &mut archetypes.as_mut_slice()[id.index()];
            let rows = data.entities.len();
            let fill = |ids: NonNull<Entity>,
                        held: usize,
                        bases: &[NonNull<u8>],
                        first: usize,
                        count: usize| {
                let src = &data.entities[first..first + count];
                // Compared as bytes: `[Entity] == [Entity]` goes id by id, a `memcmp` is
                // several times faster (a million-row restore spent 30% of its time there).
                let kept = held >= count
                    // SAFETY: rows `0..held` of the entity column still hold initialised ids
                    // (`fill_empty`'s contract), and `&&` reads `count` of them only when
                    // `count <= held`; `Entity` is `repr(C)` of two `u32`s, 8 bytes without
                    // padding, so every byte of an id is initialised. The slices are dropped
                    // before anything writes the column.
                    && unsafe {
                        let len = count * size_of::<Entity>();
                        let old = std::slice::from_raw_parts(ids.as_ptr().cast::<u8>(), len);
                        old == std::slice::from_raw_parts(src.as_ptr().cast::<u8>(), len)
                    };
                if kept {
                    // The usual rollback: the chunk holds the same entities at the same rows
                    // (of the same archetype, since `reuse` came from it), so their table
                    // slots already point here, and `restore_slots` wrote only slots the
                    // snapshot has vacant. Neither the ids nor the slots need writing.
                    entities.keep_live(count);
                } else {
                    // SAFETY: `fill_empty` hands out room for rows `0..count` of the chunk's
                    // entity column; the snapshot holds `rows` ids and `first + count <= rows`.
                    // Nothing here unwinds (`place_live` never panics).
                    unsafe {
                        std::ptr::copy_nonoverlapping(src.as_ptr(), ids.as_ptr(), count);
                    }
                    // While the ids are in cache: the rows' entity-table slots.
                    entities.place_live(id, first, src);
                }
                for (c, &base) in bases.iter().enumerate() {
                    let (from, size) = (target.from[c], target.sizes[c]);
                    match (&data.columns[from], &cloned[from]) {
                        // SAFETY: the buffer holds `rows * size` bytes (`ArchetypeData`
                        // invariant 2), the chunk column has room for `count` values of
                        // `size` bytes; the planned type of world column `c` was registered
                        // pod, so the bytes are valid values of it.
                        (Column::Pod(bytes), _) => unsafe {
                            let src = bytes.as_ptr().add(first * size);
                            std::ptr::copy_nonoverlapping(src, base.as_ptr(), count * size);
                        },
                        // SAFETY: `values` holds `rows` values of the column's own type
                        // (checked by `TypeId` while planning); each range is moved once.
                        (Column::Cloned(_), Some(values)) => unsafe {
                            values.move_out(first, count, base.as_ptr());
                        },
                        (Column::Cloned(_), None) => unreachable!("cloned above"),
                    }
                }
            };
            let mut none = Vec::new();
            let chunks = reuse.get_mut(id.index()).unwrap_or(&mut none);
            // SAFETY: `arch` was emptied above and each snapshot archetype has a target of its
            // own (distinct component sets map to distinct signatures), so it is still empty;
            // `chunks` are the ones `take_chunks` took from this very archetype; `fill`
            // initialises every row it is handed and, copying only, cannot unwind.
            unsafe { arch.fill_empty(tick, rows, chunks, &mut stale, fill) };
            if keep_ticks && data.ticks.saved {
                arch.restore_ticks(&target.from, &data.ticks, tick - snap.change_tick, tick);
            }
            for (c, &from) in target.from.iter().enumerate() {
                if !data.disabled[from].is_empty() {
                    disable_rows(arch, c, &data.disabled[from]);
                }
            }
        }
        entities.finish_restore(snap.retired.len());
        for column in cloned.iter_mut().flatten().flatten() {
            // SAFETY: `fill_empty` moved every value of every cloned column into the world.
            unsafe { column.forget_all() };
        }
        for (install, value) in resources {
            install(&mut self.resources, value);
        }
        // The world is restored; reused chunks' old chunk values go last (their `Drop`s are
        // user code: the first panic among them continues from here).
        resume_unless_unwinding(drop_each(stale));
        Ok(())
    }

    /// Checks `snap` against this world's registry and works out where everything goes.
    fn plan_restore(&self, snap: &Snapshot) -> Result<RestorePlan, SnapshotError> {
        let components = self.components();
        let mut world_ids = Vec::with_capacity(snap.components.len());
        for entry in &snap.components {
            let unknown = || SnapshotError::UnknownComponent {
                component: entry.name.to_string(),
            };
            let id = match entry.type_id {
                Some(type_id) => components.id_of(type_id).ok_or_else(unknown)?,
                None => components
                    .iter()
                    .find(|info| info.name() == entry.name && self.is_pod(info.id()))
                    .or_else(|| components.iter().find(|info| info.name() == entry.name))
                    .ok_or_else(unknown)?
                    .id(),
            };
            let info = components.info(id);
            if (info.size(), info.align()) != (entry.size, entry.align) {
                return Err(SnapshotError::LayoutMismatch {
                    component: entry.name.to_string(),
                    snapshot: (entry.size, entry.align),
                    world: (info.size(), info.align()),
                });
            }
            match self.snapshots.kind(id) {
                None => return Err(unknown()),
                Some(kind) if entry.pod && !kind.is_pod() => {
                    return Err(SnapshotError::NotPodInWorld {
                        component: entry.name.to_string(),
                    })
                }
                Some(_) => {}
            }
            world_ids.push(id);
        }

        let mut archetypes = Vec::with_capacity(snap.archetypes.len());
        for data in &snap.archetypes {
            // World columns are in ascending world id order; `from[c]` is the snapshot column.
            let mut order: Vec<(ComponentId, usize)> = data
                .components
                .iter()
                .enumerate()
                .map(|(i, &c)| (world_ids[c as usize], i))
                .collect();
            order.sort_unstable();
            for &(id, from) in &order {
                if let Column::Cloned(values) = &data.columns[from] {
                    // A cloned column's entry always has a `TypeId`, mapped exactly above.
                    assert!(
                        values.item_type() == components.info(id).type_id()
                            && values.len() == data.entities.len(),
                        "a cloned column moves into a column of its own type, one value a row"
                    );
                }
            }
            // Bytes from outside the process, for a type not every bit pattern of which is a
            // value (`register_checked`): every value is checked before anything changes.
            for &(id, from) in &order {
                let entry = &snap.components[data.components[from] as usize];
                if let (Column::Pod(bytes), None, Some(ColumnKind::Pod(Some(check)))) =
                    (&data.columns[from], entry.type_id, self.snapshots.kind(id))
                {
                    if let Some(row) = check(bytes) {
                        return Err(SnapshotError::InvalidValue {
                            component: entry.name.to_string(),
                            entity: data.entities[row],
                        });
                    }
                }
            }
            for &(id, from) in &order {
                if !data.disabled[from].is_empty() && !components.info(id).is_enableable() {
                    return Err(SnapshotError::NotEnableableInWorld {
                        component: components.info(id).name().to_string(),
                    });
                }
            }
            let signature: Signature = order.iter().map(|&(id, _)| id).collect();
            let sizes: Vec<usize> = order
                .iter()
                .map(|&(id, _)| components.info(id).size())
                .collect();
            if self.archetypes_find(&signature).is_none() {
                // The layout this world's chunk policy would give the new archetype.
                let infos: Vec<_> = order.iter().map(|&(id, _)| components.info(id)).collect();
                if let Err(too_large) = self.graph().sizing.layout(&infos) {
                    return Err(SnapshotError::RowTooLarge(too_large));
                }
            }
            archetypes.push(TargetArchetype {
                signature,
                from: order.iter().map(|&(_, from)| from).collect(),
                sizes,
            });
        }

        let mut resources = Vec::with_capacity(snap.resources.len());
        for entry in &snap.resources {
            let hooks = self
                .snapshots
                .resources()
                .iter()
                .find(|h| match entry.type_id {
                    Some(type_id) => h.type_id == type_id,
                    None => {
                        h.pod
                            && h.name == entry.name
                            && (h.size, h.align) == (entry.size, entry.align)
                    }
                })
                .filter(|h| match &entry.value {
                    Some(ResourceValue::Bytes(b)) => h.pod && entry.pod && b.len() == h.size,
                    Some(ResourceValue::Cloned(_)) => !h.pod && !entry.pod,
                    None => true,
                })
                .ok_or_else(|| SnapshotError::UnknownResource {
                    resource: entry.name.to_string(),
                })?;
            resources.push(*hooks);
        }
        Ok(RestorePlan {
            archetypes,
            resources,
        })
    }

    /// Empties every archetype without running user code where it can: a world whose columns
    /// need no drop (pod components, tags) just forgets its rows, since the entity table is
    /// rebuilt next, and hands back each archetype's chunks for the refill to reuse (no
    /// allocation, no page faults); otherwise [`World::clear`], which is panic-safe.
    fn empty_for_restore(&mut self) -> Vec<Vec<EmptiedChunk>> {
        let components = self.components();
        let any_drop = self.archetypes().iter().any(|arch| {
            !arch.is_empty()
                && arch
                    .component_ids()
                    .any(|id| components.info(id).drop_fn().is_some())
        });
        if any_drop {
            self.clear();
            return Vec::new();
        }
        let (_, _, archetypes) = self.parts_mut();
        archetypes
            .as_mut_slice()
            .iter_mut()
            .map(|arch| {
                let mut chunks = Vec::new();
                if !arch.is_empty() {
                    arch.take_chunks(&mut chunks);
                }
                chunks
            })
            .collect()
    }
}

/// Where each snapshot archetype goes in the world.
struct RestorePlan {
    archetypes: Vec<TargetArchetype>,
    resources: Vec<registry::ResourceHooks>,
}

struct TargetArchetype {
    signature: Signature,
    /// Per world column, the snapshot column it is filled from.
    from: Vec<usize>,
    /// Per world column, the value size.
    sizes: Vec<usize>,
}

/// The bytes of rows `0..len` of pod column `col` of `chunk`, an `arch` chunk.
///
/// Only for columns whose type was registered with `register_pod` (the caller's check).
fn pod_bytes<'a>(arch: &Archetype, chunk: &'a Chunk, col: usize) -> &'a [u8] {
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

impl World {
    /// [`World::state_hash`] with no blind spots: an error, rather than a hash that counts a
    /// component by presence only, when a live entity holds a component whose value the hash
    /// cannot see: one registered neither as pod ([`World::register_pod`],
    /// [`World::register_checked`]) nor as hashed ([`World::register_hashed`]). Zero-sized
    /// components (tags) are all presence and always pass.
    ///
    /// # Errors
    /// [`SnapshotError::Unhashed`], naming the first such component and an entity holding it.
    ///
    /// ```
    /// # use ecs_core::{SnapshotError, World};
    /// struct Tag;
    /// let mut world = World::new();
    /// world.register_pod::<u32>();
    /// world.spawn((1u32, Tag));
    /// assert_eq!(world.try_state_hash(), Ok(world.state_hash()));
    /// world.spawn((String::from("x"),));
    /// assert!(matches!(world.try_state_hash(), Err(SnapshotError::Unhashed { .. })));
    /// world.register_hashed::<String>();
    /// assert!(world.try_state_hash().is_ok());
    /// ```
    pub fn try_state_hash(&self) -> Result<u64, SnapshotError> {
        let components = self.components();
        for arch in self.archetypes().iter().filter(|a| !a.is_empty()) {
            for id in arch.component_ids() {
                let info = components.info(id);
                if info.size() > 0 && !self.is_pod(id) && self.snapshots.hasher(id).is_none() {
                    return Err(SnapshotError::Unhashed {
                        component: info.name().to_string(),
                        entity: arch.chunks()[0].entities()[0],
                    });
                }
            }
        }
        Ok(self.state_hash())
    }

    /// A 64-bit hash of the live entities and their pod component values: equal for two worlds
    /// that hold the same entity ids with the same components, the same pod values and the
    /// same values of pod resources ([`World::register_pod_resource`]; an absent one counts
    /// as unregistered), whatever their chunk sizes, archetype creation orders, row orders or
    /// the number of threads that ran them. Components registered with
    /// [`World::register_hashed`] count by their `Hash`; other non-pod components count by
    /// presence only ([`World::try_state_hash`] refuses those); cloned resources and the free
    /// list are not hashed. The way to check determinism across runs and machines (of the same byte order):
    /// compare hashes frame by frame. See the hash module's docs for the construction.
    ///
    /// Cost: about one 64-bit multiply per 8 bytes of pod data plus two per entity; one pass.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let build = |chunk| {
    ///     let mut world = World::with_chunk_size(chunk).unwrap();
    ///     world.register_pod::<f32>();
    ///     for i in 0..1000u32 {
    ///         world.spawn((i as f32,));
    ///     }
    ///     world
    /// };
    /// let (mut a, b) = (build(4096), build(65536));
    /// assert_eq!(a.state_hash(), b.state_hash());
    /// let e = a.snapshot().unwrap().entities().next().unwrap();
    /// *a.get_mut::<f32>(e).unwrap() += 1.0;
    /// assert_ne!(a.state_hash(), b.state_hash());
    /// ```
    pub fn state_hash(&self) -> u64 {
        let components = self.components();
        let mut keys: Vec<Option<u64>> = vec![None; components.len()];
        let mut key = |id: ComponentId| {
            *keys[id.index()].get_or_insert_with(|| hash::component_key(components.info(id).name()))
        };
        let mut h = hash::StateHasher::default();
        let mut hashes = Vec::new();
        for arch in self.archetypes().iter().filter(|a| !a.is_empty()) {
            let arch_key = hash::archetype_key(arch.component_ids().map(&mut key));
            let pods: Vec<(usize, u64)> = arch
                .component_ids()
                .enumerate()
                .filter(|&(_, id)| self.is_pod(id))
                .map(|(c, id)| (c, key(id)))
                .collect();
            let hashed: Vec<(usize, u64, registry::HashValues)> = arch
                .component_ids()
                .enumerate()
                // Pod columns are hashed as bytes above, even if also registered hashed.
                .filter(|&(_, id)| !self.is_pod(id))
                .filter_map(|(c, id)| Some((c, key(id), self.snapshots.hasher(id)?)))
                .collect();
            let toggled: Vec<(usize, u64)> = arch
                .enableable_columns()
                .iter()
                .enumerate()
                .map(|(slot, &c)| (slot, key(arch.component_ids().nth(c).expect("a column"))))
                .collect();
            for chunk in arch.chunks() {
                h.rows(chunk.entities(), arch_key);
                for &(c, k) in &pods {
                    h.column(k, arch.layout().size(c), pod_bytes(arch, chunk, c));
                }
                for &(c, k, hash) in &hashed {
                    // SAFETY: rows `0..len` of column `c` are initialised values of its type
                    // (`Chunk` invariant 2), the type `hash` was made for (the registry's
                    // invariant 3); `&self` keeps writers out.
                    unsafe {
                        hash(
                            arch.column_base(chunk, c).as_ptr(),
                            chunk.len(),
                            &mut hashes,
                        )
                    };
                    h.hashed(k, &hashes);
                }
                for &(slot, k) in &toggled {
                    let mask = chunk.enable_bits().get(slot);
                    if mask.count() < chunk.len() {
                        h.disabled(k, (0..chunk.len()).filter(|&r| !mask.get(r)));
                    }
                }
            }
        }
        for hooks in self.snapshots.resources().iter().filter(|h| h.pod) {
            let value = (hooks.save)(self.resources());
            h.resource(hooks.name, value.as_ref().and_then(ResourceValue::as_bytes));
        }
        h.finish()
    }
}

// A snapshot can be sent to another thread (a network or disk writer).
const _: () = {
    const fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Snapshot>()
};

/// Entity ids `snapshot_into` copies at a time: 2 KiB, below glibc's `rep movsb` threshold.
const ID_PIECE: usize = 2048 / size_of::<Entity>();

// `restore` compares entity ids as bytes: two `u32`s and no padding.
const _: () = assert!(size_of::<Entity>() == 2 * size_of::<u32>());
