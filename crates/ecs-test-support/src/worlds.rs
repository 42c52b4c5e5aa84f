//! Worlds with unusual chunk layouts, so that model tests move rows between archetypes whose
//! chunk sizes and column placements differ.

use ecs_core::{Bundle, ChunkPolicy, ColumnOrder, Component, World};

/// A world that sizes each archetype's chunks to hold at least `min_rows` rows
/// (`ChunkPolicy::MinRows`), gives the archetype of bundle `B` `bytes`-byte chunks by
/// override, and orders columns to minimise padding.
///
/// # Panics
/// If `min_rows` is 0 or `bytes` is not a valid chunk size.
pub fn mixed<B: Bundle>(min_rows: usize, bytes: usize) -> World {
    let mut world = World::with_chunk_policy(ChunkPolicy::MinRows(min_rows)).unwrap();
    world.set_chunk_size_for::<B>(bytes).unwrap();
    world.set_column_order(ColumnOrder::MinPadding);
    world
}

/// A world of `bytes`-byte chunks whose columns of `X` and `Y` are placed first
/// (`ColumnOrder::First`).
///
/// # Panics
/// If `bytes` is not a valid chunk size.
pub fn hot_first<X: Component, Y: Component>(bytes: usize) -> World {
    let mut world = World::with_chunk_size(bytes).unwrap();
    let hot = vec![
        world.register_component::<X>(),
        world.register_component::<Y>(),
    ];
    world.set_column_order(ColumnOrder::First(hot));
    world
}
