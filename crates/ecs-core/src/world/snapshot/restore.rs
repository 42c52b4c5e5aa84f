//! Restoring a snapshot: [`World::restore`] and [`World::restore_marking_changed`].
//!
//! Two phases. Planning checks the snapshot against the world's registry (every type known,
//! same layout and kind, bytes from outside the process valid values, rows fitting the
//! chunks) and runs every piece of user code the restore needs (clones of cloned columns and
//! resources, decoding of serde columns, chunk component defaults) while the world is still
//! untouched; an error or a panic there changes nothing. Then the world is emptied and
//! refilled a chunk at a time, which copies only and cannot fail.

use std::ptr::NonNull;

use crate::archetype::restore::{disable_rows, EmptiedChunk};
use crate::component::signature::Signature;
use crate::component::ComponentId;
use crate::entity::{Entities, Entity};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::registry::{self, ClonedColumn, ColumnKind, ResourceValue};
use crate::snapshot::{ArchetypeData, Column, Encoded, Snapshot};
use crate::unwind::{drop_each, resume_unless_unwinding};
use crate::world::World;

impl World {
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
        // and resources, decoding of encoded ones. A panic or an error here leaves the world
        // untouched.
        let mut cloned: Vec<Vec<Option<Box<dyn ClonedColumn>>>> =
            Vec::with_capacity(snap.archetypes.len());
        for data in &snap.archetypes {
            let mut columns = Vec::with_capacity(data.columns.len());
            for (col, &c) in data.columns.iter().zip(&data.components) {
                columns.push(match col {
                    Column::Pod(_) => None,
                    Column::Cloned(values) => Some(values.duplicate()),
                    Column::Encoded(enc) => {
                        Some(self.decode_column(snap, &plan, c as usize, enc, data)?)
                    }
                });
            }
            cloned.push(columns);
        }
        let mut resources = Vec::with_capacity(plan.resources.len());
        for (hooks, entry) in plan.resources.iter().zip(&snap.resources) {
            let value = match &entry.value {
                None => None,
                Some(ResourceValue::Encoded(bytes)) => {
                    let codec = hooks
                        .codec
                        .expect("checked while planning: a serde resource");
                    let name = || entry.name.to_string();
                    let value = (codec.decode)(bytes).map_err(|reason| SnapshotError::Decode {
                        name: name(),
                        reason,
                    })?;
                    // A saved hash must be the value's (the snapshot's `state_hash` used it).
                    if let (Some(saved), Some(hash)) = (entry.hash, hooks.hash) {
                        if (hash.value)(&*value) != Some(saved) {
                            return Err(SnapshotError::Decode {
                                name: name(),
                                reason: "the saved value hash is not the decoded value's".into(),
                            });
                        }
                    }
                    Some(value)
                }
                Some(v) => {
                    Some((hooks.prepare)(v).expect("checked while planning: same type and length"))
                }
            };
            resources.push((hooks.install, value));
        }

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
                // several times faster, and a large restore spent much of its time there
                // (docs/performance.md, "Design measurements").
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
                        // (checked by `TypeId` while planning, or after decoding); each range
                        // is moved once.
                        (_, Some(values)) => unsafe {
                            values.move_out(first, count, base.as_ptr());
                        },
                        (_, None) => unreachable!("cloned or decoded above"),
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
                data.ticks
                    .restore_into(arch, &target.from, tick - snap.change_tick, tick);
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
            // A snapshot read from bytes names its types: a pod entry looks for a pod type of
            // that name, an encoded one for a serde type.
            let fits = |id: ComponentId| {
                if entry.pod {
                    self.is_pod(id)
                } else {
                    self.snapshots.codec(id).is_some()
                }
            };
            let id = match entry.type_id {
                Some(type_id) => components.id_of(type_id).ok_or_else(unknown)?,
                None => components
                    .iter()
                    .find(|info| info.name() == entry.name && fits(info.id()))
                    .or_else(|| components.iter().find(|info| info.name() == entry.name))
                    .ok_or_else(unknown)?
                    .id(),
            };
            let info = components.info(id);
            let encoded = entry.type_id.is_none() && !entry.pod;
            // Encoded values do not depend on the layout (it may differ between builds).
            if !encoded && (info.size(), info.align()) != (entry.size, entry.align) {
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
                Some(_) if encoded && self.snapshots.codec(id).is_none() => {
                    return Err(SnapshotError::NotSerdeInWorld {
                        name: entry.name.to_string(),
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
                    // From bytes: a pod resource of that name and layout, or a serde one.
                    None if entry.pod => {
                        h.pod
                            && h.name == entry.name
                            && (h.size, h.align) == (entry.size, entry.align)
                    }
                    None => h.name == entry.name,
                })
                .ok_or_else(|| SnapshotError::UnknownResource {
                    resource: entry.name.to_string(),
                })?;
            if entry.type_id.is_none() && !entry.pod && hooks.codec.is_none() {
                return Err(SnapshotError::NotSerdeInWorld {
                    name: entry.name.to_string(),
                });
            }
            let fits = match &entry.value {
                Some(ResourceValue::Bytes(b)) => hooks.pod && entry.pod && b.len() == hooks.size,
                Some(ResourceValue::Cloned(_)) => !hooks.pod && !entry.pod,
                Some(ResourceValue::Encoded(_)) => hooks.codec.is_some(),
                None => true,
            };
            if !fits {
                return Err(SnapshotError::UnknownResource {
                    resource: entry.name.to_string(),
                });
            }
            resources.push(*hooks);
        }
        Ok(RestorePlan {
            world_ids,
            archetypes,
            resources,
        })
    }

    /// Decodes snapshot component `c`'s encoded column of `data` with the world's codec, and
    /// checks it holds one value of the world's type per row.
    fn decode_column(
        &self,
        snap: &Snapshot,
        plan: &RestorePlan,
        c: usize,
        enc: &Encoded,
        data: &ArchetypeData,
    ) -> Result<Box<dyn ClonedColumn>, SnapshotError> {
        let id = plan.world_ids[c];
        let name = || snap.components[c].name.to_string();
        let codec = self
            .snapshots
            .codec(id)
            .expect("checked while planning: a serde type");
        let values = (codec.decode)(&enc.bytes).map_err(|reason| SnapshotError::Decode {
            name: name(),
            reason,
        })?;
        // The registry's invariant 4: the codec decodes into its own type, the world's.
        assert!(values.item_type() == self.components().info(id).type_id());
        if values.len() != data.entities.len() {
            return Err(SnapshotError::Decode {
                name: name(),
                reason: format!("{} values for {} rows", values.len(), data.entities.len()),
            });
        }
        // Value hashes in the bytes must be the values' (the snapshot's `state_hash` used
        // them); checked where this world can compute them.
        if let (Some(saved), Some(hash)) = (&enc.hashes, self.snapshots.hasher(id)) {
            let mut hashes = Vec::with_capacity(saved.len());
            let type_id = Some(values.item_type());
            registry::hash_cloned(hash, type_id, &*values, &mut hashes);
            if hashes != *saved {
                return Err(SnapshotError::Decode {
                    name: name(),
                    reason: "the saved value hashes are not the decoded values'".into(),
                });
            }
        }
        Ok(values)
    }

    /// Empties every archetype for the refill, running no hook or observer (a restore puts
    /// back a state in which they all ran): each archetype forgets its rows and hands its
    /// chunks back for the refill to reuse (no allocation, no page faults), and the entity
    /// table is rewritten by the refill. Then the values that need a drop are dropped in the
    /// taken chunks. A `Drop` is user code: if one panics, the slots of every forgotten row
    /// are freed on the way out (the values not yet dropped leak), leaving the world empty
    /// and consistent, as a panicking [`World::clear`] does.
    fn empty_for_restore(&mut self) -> Vec<Vec<EmptiedChunk>> {
        let (entities, _, archetypes) = self.parts_mut();
        let archetypes = archetypes.as_mut_slice();
        let mut taken: Vec<Vec<EmptiedChunk>> = Vec::with_capacity(archetypes.len());
        for arch in archetypes.iter_mut() {
            let mut chunks = Vec::new();
            if !arch.is_empty() {
                arch.take_chunks(&mut chunks);
            }
            taken.push(chunks);
        }

        /// Unwinding from a `Drop`: frees the slots of the forgotten rows.
        struct FreeOnUnwind<'a> {
            entities: &'a mut Entities,
            taken: &'a [Vec<EmptiedChunk>],
        }
        impl Drop for FreeOnUnwind<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    for chunk in self.taken.iter().flatten() {
                        for &entity in chunk.held_ids() {
                            self.entities.free(entity);
                        }
                    }
                }
            }
        }
        let guard = FreeOnUnwind {
            entities,
            taken: &taken,
        };
        for (arch, chunks) in archetypes.iter().zip(guard.taken) {
            if arch.needs_drop() {
                for chunk in chunks {
                    // SAFETY: `chunk` was taken from `arch` just above; nothing dropped its
                    // values, and on unwinding `taken` is dropped, never reused.
                    unsafe { arch.drop_held_values(chunk) };
                }
            }
        }
        drop(guard);
        taken
    }
}

/// Where each snapshot archetype goes in the world.
struct RestorePlan {
    /// Per snapshot component, the world's type.
    world_ids: Vec<ComponentId>,
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
