//! Helpers shared by several integration test files of the `ecs` facade, each file pulling
//! them in with `mod common;`.

// Each test binary uses only part of these.
#![allow(dead_code)]

use std::any::Any;

use ecs::prelude::*;

pub struct Marker;

/// A panic payload's message: a `String` or `&str` payload, else a placeholder.
pub fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "<non-string payload>".to_owned())
}

/// How many entities have a `Marker`.
pub fn markers(world: &mut World) -> usize {
    world.query::<With<Marker>>().count()
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pos(pub u32);

pub struct Tag;
