//! Taking a snapshot: [`World::snapshot`] and [`World::snapshot_into`] (what a snapshot holds
//! is `crate::snapshot`'s).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::archetype::restore::disabled_rows;
use crate::archetype::Archetype;
use crate::component::signature::Signature;
use crate::component::ComponentId;
use crate::snapshot::buf::PodBuf;
use crate::snapshot::error::SnapshotError;
use crate::snapshot::registry::ColumnKind;
use crate::snapshot::ticks::KeepRows;
use crate::snapshot::{
    pod_bytes, ArchetypeData, Column, ComponentEntry, ResourceEntry, Snapshot, Unregistered,
    ID_PIECE,
};
use crate::world::World;

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
                codec: self.snapshots.codec(id),
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
                // go through a `rep movsb` that runs several times slower (see the `buf`
                // module).
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
                    Column::Encoded(_) => unreachable!("shaped as pod or cloned above"),
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
                codec: hooks.codec,
                hash: hooks
                    .hash
                    .filter(|_| !hooks.pod)
                    .and_then(|hash| (hash.live)(self.resources())),
            });
        }
        Ok(())
    }
}
