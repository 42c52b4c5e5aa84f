//! legion 0.4, as its docs recommend: `World::extend` for batches, queries built once and kept
//! (`<(Read<_>, Write<_>)>::query()`), `for_each_mut` / `for_each_chunk_mut` /
//! `par_for_each_mut`, and a `Schedule` of `SystemBuilder` systems (legion's parallel executor).

use legion::{Entity, IntoQuery, Read, Resources, Schedule, SystemBuilder, World, Write};

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
            let mut world = World::default();
            world.extend((0..SUITE_N).map(|_| suite_bundle()));
            world
        }),
        "simple_iter" => pos_vel_iter(suite_world()),
        "simple_iter_chunk" => pos_vel_chunks(suite_world()),
        "frag_iter" => {
            let mut world = World::default();
            for_each_letter!(spawn_letter(&mut world));
            data_iter(world)
        }
        "frag_iter_many" => data_iter(frag_many_world()),
        "heavy_compute" => {
            let mut world = World::default();
            world.extend((0..HEAVY_N).map(|_| heavy_bundle()));
            let mut query = <(Write<Position>, Write<Transform>)>::query();
            repeat(move || {
                query.par_for_each_mut(&mut world, |(p, t)| heavy_kernel(&mut t.0, &mut p.0));
            })
        }
        "schedule" => {
            let mut world = World::default();
            world.extend((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0))));
            world.extend((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0))));
            world.extend((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), D(3.0))));
            world.extend((0..SCHEDULE_N).map(|_| (A(0.0), B(1.0), C(2.0), E(4.0))));
            let ab = SystemBuilder::new("ab")
                .with_query(<(Write<A>, Write<B>)>::query())
                .build(|_, world, _, query| {
                    query.for_each_mut(world, |(a, b)| std::mem::swap(&mut a.0, &mut b.0));
                });
            let cd = SystemBuilder::new("cd")
                .with_query(<(Write<C>, Write<D>)>::query())
                .build(|_, world, _, query| {
                    query.for_each_mut(world, |(c, d)| std::mem::swap(&mut c.0, &mut d.0));
                });
            let ce = SystemBuilder::new("ce")
                .with_query(<(Write<C>, Write<E>)>::query())
                .build(|_, world, _, query| {
                    query.for_each_mut(world, |(c, e)| std::mem::swap(&mut c.0, &mut e.0));
                });
            let mut schedule = Schedule::builder()
                .add_system(ab)
                .add_system(cd)
                .add_system(ce)
                .build();
            let mut resources = Resources::default();
            repeat(move || schedule.execute(&mut world, &mut resources))
        }
        "systems_100" => trivial_systems(100),
        "systems_1000" => trivial_systems(1000),
        "add_remove" => {
            let mut world = World::default();
            let entities = world.extend((0..SUITE_N).map(|_| (A(0.0),))).to_vec();
            add_remove(world, entities)
        }
        "add_remove_wide" => {
            let mut world = World::default();
            let entities = world.extend((0..SUITE_N).map(|_| wide_bundle())).to_vec();
            add_remove(world, entities)
        }
        "iter_1m" => pos_vel_iter(million_world()),
        "iter_1m_chunk" => pos_vel_chunks(million_world()),
        "spawn_batch_1m" | "spawn_batch_1m_drop" => build(workload, || {
            let mut world = World::default();
            world.extend((0..MILLION).map(spawn_row));
            world
        }),
        _ => return None,
    })
}

fn suite_world() -> World {
    let mut world = World::default();
    world.extend((0..SUITE_N).map(|_| suite_bundle()));
    world
}

fn million_world() -> World {
    let mut world = World::default();
    world.extend((0..MILLION).map(pos_vel));
    world
}

fn pos_vel_iter(mut world: World) -> Run {
    let mut query = <(Read<Velocity>, Write<Position>)>::query();
    repeat(move || query.for_each_mut(&mut world, |(v, p)| p.0 += v.0))
}

fn pos_vel_chunks(mut world: World) -> Run {
    let mut query = <(Read<Velocity>, Write<Position>)>::query();
    repeat(move || {
        query.for_each_chunk_mut(&mut world, |chunk| {
            let (v, p) = chunk.into_components();
            add_assign_flat(as_f32s_mut(p), as_f32s(v));
        });
    })
}

fn spawn_letter<const N: usize>(world: &mut World) {
    world.extend((0..FRAG_PER_ARCH).map(|_| (Letter::<N>(0.0), Data(1.0))));
}

fn tag<const N: usize>(world: &mut World, e: Entity, subset: usize) {
    if subset & (1 << N) != 0 {
        world.entry(e).expect("alive").add_component(Tag::<N>(0.0));
    }
}

fn frag_many_world() -> World {
    let mut world = World::default();
    for subset in 0..FRAG_MANY_ARCHS {
        let ids = world
            .extend((0..FRAG_PER_ARCH).map(|_| (Data(1.0),)))
            .to_vec();
        for e in ids {
            for_each_tag!(tag(&mut world, e, subset));
        }
    }
    world
}

fn data_iter(mut world: World) -> Run {
    let mut query = <Write<Data>>::query();
    repeat(move || query.for_each_mut(&mut world, |d| d.0 *= 2.0))
}

fn add_remove(mut world: World, entities: Vec<Entity>) -> Run {
    repeat(move || {
        for &e in &entities {
            world.entry(e).expect("alive").add_component(B(0.0));
        }
        for &e in &entities {
            world.entry(e).expect("alive").remove_component::<B>();
        }
    })
}

/// `n` systems with no queries or resources in one legion schedule.
fn trivial_systems(n: usize) -> Run {
    let mut world = World::default();
    let mut builder = Schedule::builder();
    for i in 0..n {
        builder.add_system(
            SystemBuilder::new(format!("trivial_{i}")).build(move |_, _, _, _| {
                std::hint::black_box(i);
            }),
        );
    }
    let mut schedule = builder.build();
    let mut resources = Resources::default();
    repeat(move || schedule.execute(&mut world, &mut resources))
}
