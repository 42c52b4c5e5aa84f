//! bevy_ecs 0.20, as its docs recommend: a cached `QueryState`, `spawn_batch`, internal
//! iteration (`for_each`), `contiguous_iter_mut` for slice access, `par_iter_mut` on the
//! compute task pool, and a `Schedule` with the multi-threaded executor.

use bevy_ecs::entity::Entity;
use bevy_ecs::schedule::{MultiThreadedExecutor, Schedule};
use bevy_ecs::system::Query;
use bevy_ecs::world::World;
use bevy_tasks::{ComputeTaskPool, TaskPool};

use crate::components::*;
use crate::flat::{add_assign_flat, as_f32s, as_f32s_mut};
use crate::harness::{build, build_each, repeat, Run};
use crate::math::heavy_kernel;
use crate::{for_each_letter, for_each_tag};
use crate::{FRAG_MANY_ARCHS, FRAG_PER_ARCH, HEAVY_N, MILLION, SCHEDULE_N, SUITE_N};

/// The timed iteration of `workload`, or `None` if this engine does not run it.
pub fn prepare(workload: &str) -> Option<Run> {
    ComputeTaskPool::get_or_init(TaskPool::default);
    Some(match workload {
        "simple_insert" => build_each(|| {
            let mut world = World::new();
            world.spawn_batch((0..SUITE_N).map(|_| suite_bundle()));
            world
        }),
        "simple_iter" => pos_vel_iter(suite_world()),
        "simple_iter_chunk" => pos_vel_contiguous(suite_world()),
        "frag_iter" => {
            let mut world = World::new();
            for_each_letter!(spawn_letter(&mut world));
            data_iter(world)
        }
        "frag_iter_many" => data_iter(frag_many_world()),
        "heavy_compute" => {
            let mut world = World::new();
            world.spawn_batch((0..HEAVY_N).map(|_| heavy_bundle()));
            let mut state = world.query::<(&mut Position, &mut Transform)>();
            repeat(move || {
                state
                    .par_iter_mut(&mut world)
                    .for_each(|(mut p, mut t)| heavy_kernel(&mut t.0, &mut p.0));
            })
        }
        "schedule" => {
            let mut world = World::new();
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), D(3.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), E(4.0))));
            let mut schedule = Schedule::default();
            schedule.set_executor(MultiThreadedExecutor::new());
            schedule.add_systems((ab, cd, ce));
            repeat(move || schedule.run(&mut world))
        }
        "systems_100" => trivial_systems(100),
        "systems_1000" => trivial_systems(1000),
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
        "iter_1m_chunk" => pos_vel_contiguous(million_world()),
        "spawn_batch_1m" | "spawn_batch_1m_drop" => build(workload, || {
            let mut world = World::new();
            world.spawn_batch((0..MILLION).map(spawn_row));
            world
        }),
        _ => return None,
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
    let mut state = world.query::<(&Velocity, &mut Position)>();
    repeat(move || {
        state.iter_mut(&mut world).for_each(|(v, mut p)| p.0 += v.0);
    })
}

fn pos_vel_contiguous(mut world: World) -> Run {
    let mut state = world.query::<(&Velocity, &mut Position)>();
    repeat(move || {
        for (v, mut p) in state
            .contiguous_iter_mut(&mut world)
            .expect("table storage is dense")
        {
            add_assign_flat(as_f32s_mut(&mut p), as_f32s(v));
        }
    })
}

fn spawn_letter<const N: usize>(world: &mut World) {
    world.spawn_batch((0..FRAG_PER_ARCH).map(|_| (Letter::<N>(0.0), Data(1.0))));
}

fn tag<const N: usize>(world: &mut World, e: Entity, subset: usize) {
    if subset & (1 << N) != 0 {
        world.entity_mut(e).insert(Tag::<N>(0.0));
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
    let mut state = world.query::<&mut Data>();
    repeat(move || state.iter_mut(&mut world).for_each(|mut d| d.0 *= 2.0))
}

fn ab(mut q: Query<(&mut A, &mut B)>) {
    q.iter_mut()
        .for_each(|(mut a, mut b)| std::mem::swap(&mut a.0, &mut b.0));
}

fn cd(mut q: Query<(&mut C, &mut D)>) {
    q.iter_mut()
        .for_each(|(mut c, mut d)| std::mem::swap(&mut c.0, &mut d.0));
}

fn ce(mut q: Query<(&mut C, &mut E)>) {
    q.iter_mut()
        .for_each(|(mut c, mut e)| std::mem::swap(&mut c.0, &mut e.0));
}

fn add_remove(mut world: World, entities: Vec<Entity>) -> Run {
    repeat(move || {
        for &e in &entities {
            world.entity_mut(e).insert(B(0.0));
        }
        for &e in &entities {
            world.entity_mut(e).remove::<B>();
        }
    })
}

/// `n` parameterless systems on bevy's multi-threaded executor (bevy#7208's measurement).
fn trivial_systems(n: usize) -> Run {
    let mut world = World::new();
    let mut schedule = Schedule::default();
    schedule.set_executor(MultiThreadedExecutor::new());
    for i in 0..n {
        schedule.add_systems(move || {
            std::hint::black_box(i);
        });
    }
    repeat(move || schedule.run(&mut world))
}
