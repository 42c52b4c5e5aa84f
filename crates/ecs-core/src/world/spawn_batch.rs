//! Batch spawning: many entities of one bundle type, a chunk's worth of rows at a time
//! (`Archetypes::spawn_batch` writes the rows), and the ids read back. Hooks of the bundle's
//! types run once the whole batch is written, entity by entity in spawn order; a bundle whose
//! only hooked type is a relationship source that nothing observes is linked in one pass over
//! its rows instead (`SourceUpkeep`, same lists, no command per entity).

use std::iter::FusedIterator;
use std::ops::Range;

use crate::component::bundle::Bundle;
use crate::entity::Entity;
use crate::ids::ArchetypeId;
use crate::world::World;

impl World {
    /// Spawns one entity per item of `iter` and returns an iterator over their ids (in order).
    /// The entities exist as soon as this returns, whether or not the ids are read.
    ///
    /// # Panics
    /// As [`World::spawn`]. If `iter` panics, the entities spawned before stay.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// let mut world = World::new();
    /// let ids: Vec<Entity> = world.spawn_batch((0..1000u32).map(|i| (i, i as f32))).collect();
    /// assert_eq!(world.len(), 1000);
    /// assert_eq!(world.get::<u32>(ids[7]), Ok(&7));
    /// ```
    pub fn spawn_batch<I>(&mut self, iter: I) -> SpawnBatch<'_>
    where
        I: IntoIterator,
        I::Item: Bundle,
    {
        self.flush();
        let tick = self.change_tick();
        let (entities, components, archetypes) = self.parts_mut();
        let (archetype, rows) =
            archetypes.spawn_batch(components, entities, iter.into_iter(), tick);
        if self.components().may_hook::<I::Item>() {
            return self.batch_with_hooks::<I::Item>(archetype, rows);
        }
        SpawnBatch {
            world: self,
            archetype,
            rows,
            ids: None,
        }
    }

    /// The hooks of a batch's entities, in spawn order. Their commands may move the new rows,
    /// so the ids are read before the hooks run and handed out from a list. A batch of types
    /// without hooks hands out its rows as a plain batch does.
    #[cold]
    fn batch_with_hooks<B: Bundle>(
        &mut self,
        archetype: ArchetypeId,
        rows: Range<usize>,
    ) -> SpawnBatch<'_> {
        let (_, components, _) = self.parts_mut();
        let ids = crate::component::bundle::bundle_ids::<B>(components);
        if !ids.iter().any(|&id| components.info(id).has_hooks()) {
            components.note_unhooked::<B>();
            return SpawnBatch {
                world: self,
                archetype,
                rows,
                ids: None,
            };
        }
        let spawned: Vec<Entity> = SpawnBatch {
            world: self,
            archetype,
            rows: rows.clone(),
            ids: None,
        }
        .collect();
        self.spawned_rows_with_hooks(&spawned, archetype, rows, &ids);
        SpawnBatch {
            world: self,
            archetype,
            rows: 0..0,
            ids: Some(spawned.into_iter()),
        }
    }
}

/// The ids of a [`World::spawn_batch`], read back from the archetype's entity column.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let batch = world.spawn_batch((0..3u32).map(|i| (i,)));
/// assert_eq!(batch.len(), 3);
/// let ids: Vec<_> = batch.collect();
/// assert_eq!(world.get::<u32>(ids[2]), Ok(&2));
/// ```
pub struct SpawnBatch<'w> {
    world: &'w World,
    archetype: ArchetypeId,
    rows: Range<usize>,
    /// The ids themselves, when hooks ran (their commands may have moved the rows).
    ids: Option<std::vec::IntoIter<Entity>>,
}

impl Iterator for SpawnBatch<'_> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        if let Some(ids) = &mut self.ids {
            return ids.next();
        }
        let row = self.rows.next()?;
        let arch = &self.world.archetypes()[self.archetype.index()];
        let (chunk, r) = arch.split_row(row);
        Some(arch.chunks()[chunk].entities()[r])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.ids {
            Some(ids) => ids.size_hint(),
            None => self.rows.size_hint(),
        }
    }
}

impl ExactSizeIterator for SpawnBatch<'_> {}
impl FusedIterator for SpawnBatch<'_> {}
