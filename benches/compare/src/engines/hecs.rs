//! hecs 0.11, as its docs recommend: `spawn_batch`, `PreparedQuery` (cached archetype matching)
//! with `query_mut`, archetype column borrows for slice access, and `into_iter_batched` fed to
//! rayon for parallel work. hecs has no scheduler: `schedule` runs the three systems one after
//! another, which is how a hecs program runs them.

use std::hint::black_box;

use hecs::{Entity, PreparedQuery, World};
use rayon::iter::{ParallelBridge, ParallelIterator};

use crate::components::*;
use crate::flat::{add_assign_flat, as_f32s, as_f32s_mut};
use crate::harness::{build_each, repeat, Run};
use crate::math::heavy_kernel;
use crate::{for_each_letter, for_each_tag};
use crate::{FRAG_MANY_ARCHS, FRAG_PER_ARCH, HEAVY_N, MILLION, SCHEDULE_N, SUITE_N};

/// The timed iteration of `workload`, or `None` if this engine does not run it.
pub fn prepare(workload: &str) -> Option<Run> {
    Some(match workload {
        "simple_insert" => build_each(|| {
            let mut world = World::new();
            world.spawn_batch((0..SUITE_N).map(|_| suite_bundle()));
            world
        }),
        "simple_iter" => pos_vel_iter(suite_world()),
        "simple_iter_chunk" => pos_vel_columns(suite_world()),
        "frag_iter" => {
            let mut world = World::new();
            for_each_letter!(spawn_letter(&mut world));
            data_iter(world)
        }
        "frag_iter_many" => data_iter(frag_many_world()),
        "heavy_compute" => {
            let mut world = World::new();
            world.spawn_batch((0..HEAVY_N).map(|_| heavy_bundle()));
            repeat(move || {
                world
                    .query_mut::<(&mut Position, &mut Transform)>()
                    .into_iter_batched(64)
                    .par_bridge()
                    .for_each(|batch| {
                        for (p, t) in batch {
                            heavy_kernel(&mut t.0, &mut p.0);
                        }
                    });
            })
        }
        "schedule" => {
            let mut world = World::new();
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), D(3.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), E(4.0))));
            let mut ab = PreparedQuery::<(&mut A, &mut B)>::new();
            let mut cd = PreparedQuery::<(&mut C, &mut D)>::new();
            let mut ce = PreparedQuery::<(&mut C, &mut E)>::new();
            repeat(move || {
                for (a, b) in ab.query_mut(&mut world) {
                    std::mem::swap(&mut a.0, &mut b.0);
                }
                for (c, d) in cd.query_mut(&mut world) {
                    std::mem::swap(&mut c.0, &mut d.0);
                }
                for (c, e) in ce.query_mut(&mut world) {
                    std::mem::swap(&mut c.0, &mut e.0);
                }
            })
        }
        "add_remove" => {
            let mut world = World::new();
            let entities: Vec<Entity> =
                world.spawn_batch((0..SUITE_N).map(|_| (A(0.0),))).collect();
            add_remove(world, entities)
        }
        "add_remove_wide" => {
            let mut world = World::new();
            let entities: Vec<Entity> = world
                .spawn_batch((0..SUITE_N).map(|_| wide_bundle()))
                .collect();
            add_remove(world, entities)
        }
        "iter_1m" => pos_vel_iter(million_world()),
        "iter_1m_chunk" => pos_vel_columns(million_world()),
        "spawn_batch_1m" => build_each(|| {
            let mut world = World::new();
            world.spawn_batch((0..MILLION).map(spawn_row));
            world
        }),
        _ => return None,
    })
}

/// `workload` through hecs' one-shot `world.query_mut::<Q>()` per iteration (hecs caches
/// matched archetypes per query type in the world), for the iteration workloads.
pub fn prepare_one_shot(workload: &str) -> Option<Run> {
    Some(match workload {
        "simple_iter" => pos_vel_one_shot(suite_world()),
        "frag_iter" => {
            let mut world = World::new();
            for_each_letter!(spawn_letter(&mut world));
            data_one_shot(world)
        }
        "frag_iter_many" => data_one_shot(frag_many_world()),
        "iter_1m" => pos_vel_one_shot(million_world()),
        _ => return None,
    })
}

fn pos_vel_one_shot(mut world: World) -> Run {
    repeat(move || {
        for (v, p) in world.query_mut::<(&Velocity, &mut Position)>() {
            p.0 += v.0;
        }
    })
}

fn data_one_shot(mut world: World) -> Run {
    repeat(move || {
        for d in world.query_mut::<&mut Data>() {
            d.0 *= 2.0;
        }
    })
}

fn suite_world() -> World {
    let mut world = World::new();
    world.spawn_batch((0..SUITE_N).map(|_| suite_bundle()));
    world
}

fn million_world() -> World {
    let mut world = World::new();
    world.spawn_batch((0..MILLION).map(pos_vel));
    world
}

fn pos_vel_iter(mut world: World) -> Run {
    let mut query = PreparedQuery::<(&Velocity, &mut Position)>::new();
    repeat(move || {
        for (v, p) in query.query_mut(&mut world) {
            p.0 += v.0;
        }
    })
}

fn pos_vel_columns(world: World) -> Run {
    repeat(move || {
        for arch in world.archetypes() {
            if let (Some(v), Some(mut p)) = (arch.get::<&Velocity>(), arch.get::<&mut Position>()) {
                add_assign_flat(as_f32s_mut(&mut p), as_f32s(&v));
            }
        }
    })
}

fn spawn_letter<const N: usize>(world: &mut World) {
    world.spawn_batch((0..FRAG_PER_ARCH).map(|_| (Letter::<N>(0.0), Data(1.0))));
}

fn tag<const N: usize>(world: &mut World, e: Entity, subset: usize) {
    if subset & (1 << N) != 0 {
        world.insert_one(e, Tag::<N>(0.0)).expect("alive");
    }
}

fn frag_many_world() -> World {
    let mut world = World::new();
    for subset in 0..FRAG_MANY_ARCHS {
        let ids: Vec<Entity> = world
            .spawn_batch((0..FRAG_PER_ARCH).map(|_| (Data(1.0),)))
            .collect();
        for e in ids {
            for_each_tag!(tag(&mut world, e, subset));
        }
    }
    world
}

fn data_iter(mut world: World) -> Run {
    let mut query = PreparedQuery::<&mut Data>::new();
    repeat(move || {
        for d in query.query_mut(&mut world) {
            d.0 *= 2.0;
        }
    })
}

fn add_remove(mut world: World, entities: Vec<Entity>) -> Run {
    repeat(move || {
        for &e in &entities {
            world.insert_one(e, B(0.0)).expect("alive");
        }
        for &e in &entities {
            black_box(world.remove_one::<B>(e).expect("has B"));
        }
    })
}
