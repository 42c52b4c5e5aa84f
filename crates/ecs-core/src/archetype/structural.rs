//! Structural changes through the archetype store: spawn, insert, remove and despawn of one
//! entity, and the rows of a batch spawn. Each finds the cached edge for its bundle type, then either writes the bundle in place
//! or moves the row along the edge with the one row move ([`move_row`]); `World` adds only the
//! flush of reserved ids, the tick and the error for a stale handle.
//!
//! The world's entity table comes in as `entities`: a row move tells it where rows went before
//! any user code runs (see the module doc of `row_move`).

use std::ops::Range;

use super::graph::{Archetypes, RemoveEdge};
use super::row_move::move_row;
use super::rows::RowAddr;
use crate::component::bundle::Bundle;
use crate::component::Components;
use crate::entity::{Entities, Entity, Location};
use crate::error::{ComponentError, EntityError};
use crate::ids::ArchetypeId;

impl Archetypes {
    /// Where `entity` lives, with its row's address, or `None` for a stale or unknown handle
    /// (the generation check reads the row's entity id, which the address gives anyway).
    #[inline(always)]
    pub(crate) fn locate(
        &self,
        entities: &Entities,
        entity: Entity,
    ) -> Option<(Location, RowAddr)> {
        let loc = entities.locate(entity.index())?;
        let arch = &self.as_slice()[loc.archetype.index()];
        let addr = arch.addr(loc.row as usize);
        (arch.entity_at(addr) == entity).then_some((loc, addr))
    }

    /// Spawns an entity with the components of `bundle` (`World::spawn`).
    ///
    /// # Panics
    /// As `World::spawn`; a panic leaves no entity behind.
    #[inline(always)]
    pub(crate) fn spawn<B: Bundle>(
        &mut self,
        components: &mut Components,
        entities: &mut Entities,
        bundle: B,
        tick: u64,
    ) -> Entity {
        let (edge, archetypes) = self.insert_edge::<B>(ArchetypeId::EMPTY, components);
        let target = edge.target;
        let arch = &mut archetypes[target.index()];
        // User code (chunk values of a new chunk) runs before the entity's slot goes live.
        arch.prepare_rows(1);
        let entity = entities.alloc(Location {
            archetype: target,
            row: arch.len() as u32,
        });
        let at = arch.push_row(entity, tick);
        // SAFETY: `at` was just pushed and `bundle_cols` are columns of `target` (`Archetypes`
        // invariant 4).
        unsafe {
            arch.with_cells(at, &edge.bundle_cols, wide::<B>(), |cells| {
                // SAFETY: `cells[i]` is the fresh, uninitialised cell of bundle element `i`'s
                // column (the edge maps bundle positions to the target's columns, invariant 5).
                bundle.write_row(cells, 0)
            })
        };
        arch.stamp_row(at, &edge.bundle_cols, true, tick);
        entity
    }

    /// Adds or overwrites the components of `bundle` on `entity` (`World::insert`) and hands
    /// back the values it overwrote, for the caller to drop once it is done.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a stale handle; nothing changes.
    #[inline(always)]
    pub(crate) fn insert<B: Bundle>(
        &mut self,
        components: &mut Components,
        entities: &mut Entities,
        entity: Entity,
        bundle: B,
        tick: u64,
    ) -> Result<B::Replaced, EntityError> {
        let (loc, from) = self
            .locate(entities, entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        // `from` keeps the base address of the row's chunk across the edge lookup, which may
        // add archetypes and so move every `Archetype` value. It stays valid because a chunk's
        // block never moves or is freed while its archetype holds it (`Chunk` invariant 4),
        // and finding or making an edge releases no chunk.
        let (edge, archetypes) = self.insert_edge::<B>(loc.archetype, components);
        debug_assert!(archetypes[loc.archetype.index()].holds_addr(from));
        if edge.target == loc.archetype {
            let arch = &mut archetypes[loc.archetype.index()];
            // SAFETY: `from` is the entity's row; the columns belong to this archetype.
            let replaced = unsafe {
                arch.with_cells(from, &edge.bundle_cols, wide::<B>(), |cells| {
                    // SAFETY: every element is present (`target == source`), so each cell
                    // holds an initialised value of its type, and `overwrite` is all `true`.
                    bundle.replace(cells, &edge.overwrite)
                })
            };
            arch.stamp_row(from, &edge.bundle_cols, false, tick);
            return Ok(replaced);
        }
        let [src, dst] = archetypes
            .get_disjoint_mut([loc.archetype.index(), edge.target.index()])
            .expect("an edge never loops when it adds types");
        let finish = |_: &_, _: &_, dst: &mut super::Archetype, to: &RowAddr| {
            // SAFETY: `to` was just pushed; the columns belong to `dst`.
            let replaced = unsafe {
                dst.with_cells(*to, &edge.bundle_cols, wide::<B>(), |cells| {
                    // SAFETY: cells of types the source had were copied in by the move
                    // (initialised, and `overwrite` says so); the others are fresh.
                    bundle.replace(cells, &edge.overwrite)
                })
            };
            // Overwritten values were written; the others were also added.
            for (&c, &overwrite) in edge.bundle_cols.iter().zip(edge.overwrite.iter()) {
                dst.stamp_row(*to, &[c], !overwrite, tick);
            }
            replaced
        };
        // SAFETY: `from` is the entity's live row (checked by `locate`); an insert edge maps
        // every source column to the target column of its type (invariant 5); `finish` writes
        // every bundle element, which covers each target column the source lacks, and cannot
        // unwind (plain writes).
        let (_, replaced) = unsafe {
            move_row(
                src,
                entity,
                from,
                dst,
                &edge.src_to_dst,
                entities,
                tick,
                finish,
            )
        };
        Ok(replaced)
    }

    /// Removes the components of `B` from `entity` and hands them back (`World::remove`).
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] for a stale handle, and
    /// [`ComponentError::MissingComponent`] naming the first type of `B` the entity lacks; in
    /// both cases nothing changes.
    #[inline(always)]
    pub(crate) fn remove<B: Bundle>(
        &mut self,
        components: &mut Components,
        entities: &mut Entities,
        entity: Entity,
        tick: u64,
    ) -> Result<B, ComponentError> {
        let (loc, from) = self
            .locate(entities, entity)
            .ok_or(ComponentError::NoSuchEntity(entity))?;
        // `from` stays valid across the edge lookup by `Chunk` invariant 4, as in `insert`.
        let (edge, archetypes) = self.remove_edge::<B>(loc.archetype, components);
        debug_assert!(archetypes[loc.archetype.index()].holds_addr(from));
        let (target, bundle_cols, src_to_dst) = match edge {
            RemoveEdge::Missing(id) => {
                let component = components.info(*id).name();
                return Err(ComponentError::MissingComponent { entity, component });
            }
            RemoveEdge::Move {
                target,
                bundle_cols,
                src_to_dst,
            } => (*target, bundle_cols, src_to_dst),
        };
        if target == loc.archetype {
            // Only the empty bundle maps an archetype to itself.
            // SAFETY: `B` has no element, so `read` touches no cell.
            return Ok(unsafe { B::read(&[]) });
        }
        let [src, dst] = archetypes
            .get_disjoint_mut([loc.archetype.index(), target.index()])
            .expect("source and target differ");
        let finish = |src: &super::Archetype, from: &RowAddr, _: &mut _, _: &_| {
            // SAFETY: `from` is the entity's row; the columns belong to `src`.
            unsafe {
                src.with_cells(*from, bundle_cols, wide::<B>(), |cells| {
                    // SAFETY: each cell holds an initialised value of the bundle element's
                    // type; the move treats the source row as moved-out right after.
                    B::read(cells)
                })
            }
        };
        let (_, values) =
            // SAFETY: `from` is the entity's live row (checked by `locate`); a remove edge maps
            // each kept column to the target column of its type and the bundle's to `REMOVED`
            // (invariant 5); `finish` reads exactly the `REMOVED` columns (the bundle's), the
            // target has no column the source lacks, and reading cannot unwind.
            unsafe { move_row(src, entity, from, dst, src_to_dst, entities, tick, finish) };
        Ok(values)
    }

    /// Despawns `entity`, dropping its components (`World::despawn`). The entity table agrees
    /// with the rows before any `Drop` runs.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a stale or unknown handle; nothing changes.
    #[inline(always)]
    pub(crate) fn despawn(
        &mut self,
        entities: &mut Entities,
        entity: Entity,
        tick: u64,
    ) -> Result<(), EntityError> {
        let (loc, _) = self
            .locate(entities, entity)
            .ok_or(EntityError::NoSuchEntity(entity))?;
        self.despawn_located(entities, entity, loc, tick);
        Ok(())
    }

    /// [`Archetypes::despawn`] of an entity located already: `loc` is where `entity` lives
    /// (from [`Archetypes::locate`], nothing changed since).
    #[inline(always)]
    pub(crate) fn despawn_located(
        &mut self,
        entities: &mut Entities,
        entity: Entity,
        loc: Location,
        tick: u64,
    ) {
        debug_assert_eq!(self.locate(entities, entity).map(|(l, _)| l), Some(loc));
        entities.free(entity);
        self.as_mut_slice()[loc.archetype.index()].despawn_row(loc.row as usize, entities, tick);
    }

    /// Spawns one entity per item of `bundles`, a chunk's worth of rows at a time
    /// (`World::spawn_batch`): the archetype and its column pointers are looked up once per
    /// chunk, then each row is one id allocation plus one typed store per component. Returns
    /// the archetype and the rows written. If `bundles` panics, the rows written before stay.
    #[inline(always)]
    pub(crate) fn spawn_batch<B: Bundle>(
        &mut self,
        components: &mut Components,
        entities: &mut Entities,
        mut bundles: impl Iterator<Item = B>,
        tick: u64,
    ) -> (ArchetypeId, Range<usize>) {
        let known = self.as_slice().len();
        let target = self
            .insert_edge::<B>(ArchetypeId::EMPTY, components)
            .0
            .target;
        if target.index() >= known {
            // Created just now, by this batch.
            self.size_for_batch(target, bundles.size_hint().0, components);
        }
        let (edge, list) = self.insert_edge::<B>(ArchetypeId::EMPTY, components);
        let arch = &mut list[target.index()];
        let first = arch.len();
        entities.reserve_capacity(bundles.size_hint().0);
        // SAFETY: `bundle_cols[i]` is the column of bundle element `i` in `target` (edge
        // invariant), which is exactly what `extend_rows` asks of `cols`.
        unsafe {
            arch.extend_rows(tick, &edge.bundle_cols, |row| {
                let bundle = bundles.next()?;
                let entity = entities.alloc(Location {
                    archetype: target,
                    row: row as u32,
                });
                Some((entity, bundle))
            });
        }
        (target, first..arch.len())
    }
}

/// Whether `B` has more components than [`Archetype::cells`](super::Archetype) keeps on the
/// stack (a derived bundle may): a constant, so each call site keeps one of the two paths.
#[inline(always)]
const fn wide<B: Bundle>() -> bool {
    B::COMPONENT_COUNT > super::MAX_BUNDLE
}
