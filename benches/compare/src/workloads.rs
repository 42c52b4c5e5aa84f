//! The workloads and the engines that run them.

use crate::engines;
use crate::harness::Run;

/// Who runs a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// This repository's `ecs` crate.
    Ours,
    /// This engine's one-shot `world.query::<Q>()` each iteration (cached matches), beside
    /// `Ours`' kept `QueryState`: the iteration workloads only.
    OursOneShot,
    /// hecs 0.11.
    Hecs,
    /// hecs' one-shot `world.query_mut::<Q>()` each iteration, beside `Hecs`' `PreparedQuery`.
    HecsOneShot,
    /// bevy_ecs 0.20.
    Bevy,
    /// legion 0.4.
    Legion,
    /// Hand-written `Vec`s per component, natural per-element loops.
    Raw,
    /// The same columns as flat `f32` slices: the vectorised limit.
    RawFlat,
}

impl Engine {
    /// Every engine, in table order.
    pub const ALL: [Engine; 8] = [
        Engine::Ours,
        Engine::OursOneShot,
        Engine::Hecs,
        Engine::HecsOneShot,
        Engine::Bevy,
        Engine::Legion,
        Engine::Raw,
        Engine::RawFlat,
    ];

    /// Short name for tables and files.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Ours => "ours",
            Engine::OursOneShot => "ours_oneshot",
            Engine::Hecs => "hecs",
            Engine::HecsOneShot => "hecs_oneshot",
            Engine::Bevy => "bevy_ecs",
            Engine::Legion => "legion",
            Engine::Raw => "raw",
            Engine::RawFlat => "raw_flat",
        }
    }

    /// Whether this is an ECS (its times count for "fastest ECS").
    pub fn is_ecs(self) -> bool {
        !matches!(self, Engine::Raw | Engine::RawFlat)
    }

    /// Whether this is one of the peers we compare against.
    pub fn is_peer(self) -> bool {
        matches!(
            self,
            Engine::Hecs | Engine::HecsOneShot | Engine::Bevy | Engine::Legion
        )
    }

    /// The prepared workload of this engine, if it has one.
    pub fn prepare(self, workload: &str) -> Option<Run> {
        match self {
            Engine::Ours => engines::ours::prepare(workload),
            Engine::OursOneShot => engines::ours::prepare_one_shot(workload),
            Engine::Hecs => engines::hecs::prepare(workload),
            Engine::HecsOneShot => engines::hecs::prepare_one_shot(workload),
            Engine::Bevy => engines::bevy::prepare(workload),
            Engine::Legion => engines::legion::prepare(workload),
            Engine::Raw => engines::raw::prepare(workload, false),
            Engine::RawFlat => engines::raw::prepare(workload, true),
        }
    }
}

/// A workload: its name and what one iteration does.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// Name, as in issue 5.
    pub name: &'static str,
    /// What one iteration does.
    pub about: &'static str,
}

/// Every workload, in table order.
pub const WORKLOADS: [Workload; 15] = [
    Workload {
        name: "simple_insert",
        about: "fresh world + batch-spawn 10,000 (Transform, Position, Rotation, Velocity)",
    },
    Workload {
        name: "simple_iter",
        about: "pos += vel over 10,000 entities, per entity",
    },
    Workload {
        name: "simple_iter_chunk",
        about: "pos += vel over 10,000 entities, per column slice with a flat f32 loop",
    },
    Workload {
        name: "frag_iter",
        about: "data *= 2 over 26 archetypes x 20 entities",
    },
    Workload {
        name: "frag_iter_many",
        about: "data *= 2 over 500 archetypes x 20 entities",
    },
    Workload {
        name: "heavy_compute",
        about: "1,000 entities, 100 4x4 inversions each, in parallel",
    },
    Workload {
        name: "schedule",
        about: "systems ab, cd, ce swapping values over 4 x 10,000 entities",
    },
    Workload {
        name: "systems_100",
        about: "one schedule run of 100 trivial systems (no parameters): executor overhead",
    },
    Workload {
        name: "systems_1000",
        about: "one schedule run of 1,000 trivial systems (no parameters): executor overhead",
    },
    Workload {
        name: "add_remove",
        about: "add B to 10,000 entities with A, then remove it",
    },
    Workload {
        name: "add_remove_wide",
        about: "add B to 10,000 entities with 11 components, then remove it",
    },
    Workload {
        name: "iter_1m",
        about: "pos += vel over 1,000,000 entities, per entity",
    },
    Workload {
        name: "iter_1m_chunk",
        about: "pos += vel over 1,000,000 entities, per column slice with a flat f32 loop",
    },
    Workload {
        name: "spawn_batch_1m",
        about: "fresh world + batch-spawn 1,000,000 (Position, Velocity, Rotation)",
    },
    Workload {
        name: "spawn_batch_1m_drop",
        about: "spawn_batch_1m with the world dropped inside the timing",
    },
];
