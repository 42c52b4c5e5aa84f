//! The community ecs_bench_suite workloads on this engine, written the way the docs recommend:
//! a `QueryState` kept between iterations, `spawn_batch` for spawning, a `Schedule` of plain
//! function systems.
//!
//! Run with `cargo bench -p ecs-benches --bench suite`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ecs::prelude::*;
use ecs_benches::{
    for_each_letter, heavy_bundle, heavy_kernel, suite_bundle, Data, Letter, Position, Transform,
    Velocity, A, B, C, D, E,
};

/// Spawns 10,000 (Transform, Position, Rotation, Velocity) into a fresh world. The world is
/// dropped outside the timed region, as for every engine in `benches/compare`.
fn simple_insert(c: &mut Criterion) {
    c.bench_function("simple_insert", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                world.spawn_batch((0..10_000).map(|_| suite_bundle()));
                world
            },
            BatchSize::SmallInput,
        );
    });
}

/// `pos += vel` over 10,000 suite entities.
fn simple_iter(c: &mut Criterion) {
    let mut world = World::new();
    world.spawn_batch((0..10_000).map(|_| suite_bundle()));
    let mut state = QueryState::<(RefRO<Velocity>, RefRW<Position>)>::new(&mut world);
    c.bench_function("simple_iter", |b| {
        b.iter(|| {
            state.for_each(&mut world, |(v, p)| p.0 += v.0);
        });
    });
}

fn spawn_letter<const N: usize>(world: &mut World) {
    world.spawn_batch((0..20).map(|_| (Letter::<N>(0.0), Data(1.0))));
}

/// `data *= 2` over 26 archetypes (one letter component each, plus `Data`) of 20 entities.
fn frag_iter(c: &mut Criterion) {
    let mut world = World::new();
    for_each_letter!(spawn_letter(&mut world));
    let mut state = QueryState::<RefRW<Data>>::new(&mut world);
    c.bench_function("frag_iter", |b| {
        b.iter(|| state.for_each(&mut world, |d| d.0 *= 2.0));
    });
}

/// 1,000 entities; per entity, invert the transform 100 times, in parallel.
fn heavy_compute(c: &mut Criterion) {
    let mut world = World::new();
    world.spawn_batch((0..1_000).map(|_| heavy_bundle()));
    let mut state = QueryState::<(RefRW<Position>, RefRW<Transform>)>::new(&mut world);
    c.bench_function("heavy_compute", |b| {
        b.iter(|| state.par_for_each(&mut world, |(p, t)| heavy_kernel(&mut t.0, &mut p.0)));
    });
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

/// Systems ab, cd, ce swapping values over 10,000 each of (A,B), (A,B,C), (A,B,C,D), (A,B,C,E).
fn schedule(c: &mut Criterion) {
    let mut world = World::new();
    world.spawn_batch((0..10_000).map(|_| (A(0.0), B(1.0))));
    world.spawn_batch((0..10_000).map(|_| (A(0.0), B(1.0), C(2.0))));
    world.spawn_batch((0..10_000).map(|_| (A(0.0), B(1.0), C(2.0), D(3.0))));
    world.spawn_batch((0..10_000).map(|_| (A(0.0), B(1.0), C(2.0), E(4.0))));
    let mut schedule = Schedule::new();
    schedule.add_system(ab);
    schedule.add_system(cd);
    schedule.add_system(ce);
    schedule.run(&mut world).expect("the schedule builds");
    c.bench_function("schedule", |b| {
        b.iter(|| schedule.run(&mut world).expect("the schedule builds"));
    });
}

/// 10,000 entities with `A`: add `B` to each, then remove `B` from each.
fn add_remove(c: &mut Criterion) {
    let mut world = World::new();
    let entities: Vec<Entity> = world.spawn_batch((0..10_000).map(|_| (A(0.0),))).collect();
    c.bench_function("add_remove", |b| {
        b.iter(|| add_remove_pass(&mut world, &entities));
    });
}

/// Adds `B` to each of `entities`, then removes it from each.
fn add_remove_pass(world: &mut World, entities: &[Entity]) {
    for &e in entities {
        world.insert_one(e, B(0.0)).expect("alive");
    }
    for &e in entities {
        black_box(world.remove::<(B,)>(e).expect("has B"));
    }
}

/// `add_remove` in a world with nothing registered beside one where a hook and an observer
/// listen on *other* types (issue 50: those must cost the change nothing).
fn add_remove_listeners(c: &mut Criterion) {
    struct Watched;
    fn noop(_: DeferredWorld<'_>, _: HookContext) {}
    let mut group = c.benchmark_group("add_remove_listeners");
    for listening in [false, true] {
        let mut world = World::new();
        if listening {
            world
                .set_component_hooks::<Watched>(ComponentHooks::new().on_add(noop))
                .expect("no hooks yet");
            world.add_observer_fn(
                ecs::core::ObserverKey::Lifecycle(
                    ecs::core::Lifecycle::Insert,
                    std::any::TypeId::of::<C>(),
                ),
                None,
                |_, _| {},
            );
        }
        let entities: Vec<Entity> = world.spawn_batch((0..10_000).map(|_| (A(0.0),))).collect();
        let name = if listening {
            "hook_and_observer_elsewhere"
        } else {
            "nothing_registered"
        };
        group.bench_function(name, |b| {
            b.iter(|| add_remove_pass(&mut world, &entities));
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = suite;
    config = config();
    targets = simple_insert, simple_iter, frag_iter, heavy_compute, schedule, add_remove,
        add_remove_listeners
}
criterion_main!(suite);
