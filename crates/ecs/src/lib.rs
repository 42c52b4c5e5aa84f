//! The `ecs` engine: re-exports the core, query and scheduler crates.
pub use ecs_core as core;

/// Everything most programs need, in one import.
pub mod prelude {
    pub use ecs_core::{ComponentError, Entity, EntityError, World};
}
