//! This engine, as its docs recommend: a `QueryState` kept between runs, `spawn_batch`, a
//! `Schedule` of function systems, `par_for_each` for parallel work.

use std::hint::black_box;

use ecs::prelude::*;

use crate::components::*;
use crate::flat::{add_assign_flat, as_f32s, as_f32s_mut};
use crate::harness::{build, build_each, repeat, Run};
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
        "simple_iter" => pos_vel_iter(suite_world(), false),
        "simple_iter_chunk" => pos_vel_iter(suite_world(), true),
        "frag_iter" => {
            let mut world = World::new();
            for_each_letter!(spawn_letter(&mut world));
            data_iter(world)
        }
        "frag_iter_many" => data_iter(frag_many_world()),
        "heavy_compute" => {
            let mut world = World::new();
            world.spawn_batch((0..HEAVY_N).map(|_| heavy_bundle()));
            let mut state = QueryState::<(RefRW<Position>, RefRW<Transform>)>::new(&mut world);
            repeat(move || {
                state.par_for_each(&mut world, |(p, t)| heavy_kernel(&mut t.0, &mut p.0));
            })
        }
        "schedule" => {
            let mut world = World::new();
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), D(3.0))));
            world.spawn_batch((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), E(4.0))));
            let mut schedule = Schedule::new();
            schedule.add_system(ab);
            schedule.add_system(cd);
            schedule.add_system(ce);
            repeat(move || schedule.run(&mut world).expect("the schedule builds"))
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
        "iter_1m" => pos_vel_iter(million_world(), false),
        "iter_1m_chunk" => pos_vel_iter(million_world(), true),
        "spawn_batch_1m" | "spawn_batch_1m_drop" => build(workload, || {
            let mut world = World::new();
            world.spawn_batch((0..MILLION).map(spawn_row));
            world
        }),
        _ => return None,
    })
}

/// `workload` through a one-shot `world.query::<Q>()` per iteration (the world caches the
/// query's matched archetypes), for the iteration workloads; `None` for the others.
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
        world
            .query::<(RefRO<Velocity>, RefRW<Position>)>()
            .for_each(|(v, p)| p.0 += v.0);
    })
}

fn data_one_shot(mut world: World) -> Run {
    repeat(move || world.query::<RefRW<Data>>().for_each(|d| d.0 *= 2.0))
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

fn pos_vel_iter(mut world: World, chunked: bool) -> Run {
    let mut state = QueryState::<(RefRO<Velocity>, RefRW<Position>)>::new(&mut world);
    if chunked {
        repeat(move || {
            state.for_each_chunk(&mut world, |mut view| {
                let (v, p) = view.columns();
                add_assign_flat(as_f32s_mut(p), as_f32s(v));
            });
        })
    } else {
        repeat(move || state.for_each(&mut world, |(v, p)| p.0 += v.0))
    }
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
    let mut state = QueryState::<RefRW<Data>>::new(&mut world);
    repeat(move || state.for_each(&mut world, |d| d.0 *= 2.0))
}

fn ab(mut q: Query<(RefRW<A>, RefRW<B>)>) {
    q.for_each(|(a, b)| std::mem::swap(&mut a.0, &mut b.0));
}

fn cd(mut q: Query<(RefRW<C>, RefRW<D>)>) {
    q.for_each(|(c, d)| std::mem::swap(&mut c.0, &mut d.0));
}

fn ce(mut q: Query<(RefRW<C>, RefRW<E>)>) {
    q.for_each(|(c, e)| std::mem::swap(&mut c.0, &mut e.0));
}

fn add_remove(mut world: World, entities: Vec<Entity>) -> Run {
    repeat(move || {
        for &e in &entities {
            world.insert_one(e, B(0.0)).expect("alive");
        }
        for &e in &entities {
            black_box(world.remove::<(B,)>(e).expect("has B"));
        }
    })
}

/// A schedule of `n` systems with no parameters (so none conflicts), run as one frame per
/// iteration: what the executor costs per system (bevy#7208).
fn trivial_systems(n: usize) -> Run {
    let mut world = World::new();
    let mut schedule = Schedule::new();
    for i in 0..n {
        schedule
            .add_system(move || {
                black_box(i);
            })
            .named(format!("trivial_{i}"));
    }
    repeat(move || schedule.run(&mut world).expect("the schedule builds"))
}
