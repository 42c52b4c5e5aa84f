//! Batch spawning: many entities of one bundle type, a chunk's worth of rows at a time.
//!
//! The archetype and the column pointers are looked up once per chunk; each row is then one
//! entity-id allocation plus one typed store per component, the same work as pushing into a
//! few `Vec`s.

use std::iter::FusedIterator;
use std::ops::Range;

use crate::bundle::Bundle;
use crate::entity::{Entity, Location};
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
        let mut iter = iter.into_iter();
        let (entities, components, archetypes) = self.parts_mut();
        let (edge, list) = archetypes.insert_edge::<I::Item>(ArchetypeId::EMPTY, components);
        let target = edge.target;
        let arch = &mut list[target.index()];
        let first = arch.len();
        entities.reserve_capacity(iter.size_hint().0);
        // SAFETY: `bundle_cols[i]` is the column of bundle element `i` in `target` (edge
        // invariant), which is exactly what `extend_rows` asks of `cols`.
        unsafe {
            arch.extend_rows(tick, &edge.bundle_cols, |row| {
                let bundle = iter.next()?;
                let entity = entities.alloc(Location {
                    archetype: target,
                    row: row as u32,
                });
                Some((entity, bundle))
            });
        }
        let last = arch.len();
        SpawnBatch {
            world: self,
            archetype: target,
            rows: first..last,
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
}

impl Iterator for SpawnBatch<'_> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        let row = self.rows.next()?;
        let arch = &self.world.archetypes()[self.archetype.index()];
        let (chunk, r) = arch.split_row(row);
        Some(arch.chunks()[chunk].entities()[r])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
}

impl ExactSizeIterator for SpawnBatch<'_> {}
impl FusedIterator for SpawnBatch<'_> {}
