//! The component types and helpers the panic-safety tests (`drop_panics.rs`,
//! `chunk_value_panics.rs`) share.

use ecs_core::{Entity, World};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num(pub u32);

#[derive(Debug, Clone, PartialEq)]
pub struct Name(pub String);

/// The capacity of the archetype holding `e`.
pub fn capacity_of(world: &World, e: Entity) -> usize {
    let loc = world.location(e).expect("live");
    world.archetypes()[loc.archetype.index()]
        .layout()
        .capacity()
}
