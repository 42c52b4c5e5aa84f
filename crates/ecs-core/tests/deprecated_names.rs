//! The names this release replaced still compile and mean what they meant, for one release.
#![allow(deprecated)]

use ecs_core::{RowMarks, RowTicks, World};

#[test]
fn the_row_mark_names_forward_to_the_row_tick_names() {
    let mut world = World::new();
    let e = world.spawn((1u32,));
    let id = world
        .component_id::<u32>()
        .expect("registered by the spawn");
    let kinds: RowMarks = RowTicks::CHANGED;
    world.enable_row_marks(id, kinds);
    assert_eq!(world.components().row_marks(id), RowTicks::CHANGED);
    assert_eq!(world.components().row_ticks(id), RowTicks::CHANGED);
    let arch = &world.archetypes()[world.location(e).expect("alive").archetype.index()];
    assert!(arch.keeps_row_marks() && arch.keeps_row_ticks());
    assert_eq!(arch.row_marks(0), arch.row_ticks(0));
    let chunk = &arch.chunks()[0];
    assert!(chunk.keeps_change_marks(0) && chunk.keeps_change_ticks(0));
    assert!(!chunk.keeps_add_marks(0) && !chunk.keeps_add_ticks(0));
    let layout = world.layout();
    assert_eq!(
        layout.archetypes.len(),
        world.memory_report().archetypes.len()
    );
}
