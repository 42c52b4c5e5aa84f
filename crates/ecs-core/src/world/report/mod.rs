//! What a world reports about itself: its memory and chunk usage, and the invariant check
//! tests run after structural changes.

mod layout;
mod memory;
mod text;

pub use layout::{ArchetypeLayout, ColumnLayout, Footprint, WorldLayout};
pub use memory::WorldMemory;
pub use text::short_name;

use crate::entity::Location;
use crate::world::World;

impl World {
    /// The world's memory and chunk usage: per archetype its chunk size, rows per chunk, chunks,
    /// fill and unused bytes, and the memory totals ([`WorldMemory`](crate::WorldMemory));
    /// `Display` prints it as a table. O(archetypes + chunks).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// let report = world.memory_report();
    /// assert_eq!(report.archetypes.len(), 1);
    /// assert_eq!(report.archetypes[0].entities, 1);
    /// ```
    pub fn memory_report(&self) -> WorldLayout {
        WorldLayout::of(self)
    }

    /// Walks every entity, archetype, chunk and cached edge, and both sides of every
    /// relationship, and panics, with a message saying what broke, if an invariant written on
    /// those types does not hold. A debugging aid, O(entities + archetypes); tests call it
    /// after structural changes.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u8,));
    /// world.check_invariants();
    /// ```
    pub fn check_invariants(&self) {
        self.archetypes.check(&self.components);
        let archetypes = self.archetypes.as_slice();
        self.entities.check(|index, loc| {
            let Some(arch) = archetypes.get(loc.archetype.index()) else {
                return false;
            };
            let row = loc.row as usize;
            if row >= arch.len() {
                return false;
            }
            let (chunk, r) = arch.split_row(row);
            arch.chunks()[chunk].entities()[r].index() == index
        });
        let mut rows = 0usize;
        for arch in archetypes {
            arch.check(|entity, row| {
                let here = Location {
                    archetype: arch.id(),
                    row: row as u32,
                };
                assert_eq!(
                    self.location(entity),
                    Some(here),
                    "row of {entity:?} is stale"
                );
            });
            rows += arch.len();
        }
        assert_eq!(rows, self.len() as usize, "rows and live entities disagree");
        self.check_hook_invariants();
    }
}
