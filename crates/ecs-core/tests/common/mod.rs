//! Helpers shared by several integration test files of `ecs-core`, each file pulling in the
//! module it needs with `mod common;`.

// Each test binary uses only part of these.
#![allow(dead_code)]

pub mod panics;
pub mod relations;
pub mod snapshots;
