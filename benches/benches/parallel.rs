//! Parallel work inside a system: recording commands from a parallel loop (per-task buffers
//! applied in row order) beside the same loop with sequential `Commands`, and
//! `par_for_each_init` beside `par_for_each`.
//!
//! Run with `cargo bench -p ecs-benches --bench parallel`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::prelude::*;
use ecs_benches::{Position, Vec3, Velocity};

/// Runs left before an entity expires; one in ten expires each run.
#[derive(Clone, Copy)]
struct Life(u32);

const ENTITIES: u32 = 100_000;

fn population() -> World {
    let mut world = World::new();
    world.spawn_batch(
        (0..ENTITIES).map(|i| (Life(i % 10 + 1), Position(Vec3::new(i as f32, 0.0, 0.0)))),
    );
    world
}

fn expire_par(mut q: Query<(Entity, RefRW<Life>, RefRO<Position>)>, mut commands: Commands) {
    q.par_for_each_commands(&mut commands, |cmds, (e, life, p)| {
        life.0 -= 1;
        if life.0 == 0 {
            cmds.despawn(e);
            cmds.spawn((Life(10), *p));
        }
    });
}

fn expire_seq(mut q: Query<(Entity, RefRW<Life>, RefRO<Position>)>, mut commands: Commands) {
    q.for_each(|(e, life, p)| {
        life.0 -= 1;
        if life.0 == 0 {
            commands.despawn(e);
            commands.spawn((Life(10), *p));
        }
    });
}

/// 100,000 entities; each run 10 % expire and are replaced, from a parallel loop through
/// `par_for_each_commands` or from a sequential loop through `Commands`. One iteration is one
/// schedule run on two threads: the loop plus applying 20,000 commands.
fn par_commands_100k(c: &mut Criterion) {
    let mut group = c.benchmark_group("par_commands_100k");
    for (name, parallel) in [
        ("par_for_each_commands", true),
        ("sequential_commands", false),
    ] {
        let mut world = population();
        let mut schedule = Schedule::with_threads(2);
        if parallel {
            schedule.add_system(expire_par);
        } else {
            schedule.add_system(expire_seq);
        }
        schedule.run(&mut world).unwrap();
        assert_eq!(world.len(), ENTITIES);
        group.bench_function(name, |b| b.iter(|| schedule.run(&mut world).unwrap()));
    }
    group.finish();
}

/// `pos += vel` over 1,000,000 entities with `par_for_each`, and with `par_for_each_init`
/// carrying a per-job scratch counter.
fn par_for_each_init(c: &mut Criterion) {
    let mut world = World::new();
    world.spawn_batch((0..1_000_000).map(|i| {
        (
            Position(Vec3::new(i as f32, 0.0, 0.0)),
            Velocity(Vec3::UNIT_X),
        )
    }));
    let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(&mut world);
    let mut group = c.benchmark_group("par_for_each_init_1m");
    group.bench_function("par_for_each", |b| {
        b.iter(|| state.par_for_each(&mut world, |(p, v)| p.0 += v.0));
    });
    group.bench_function("par_for_each_init", |b| {
        b.iter(|| {
            state.par_for_each_init(
                &mut world,
                || 0u32,
                |n, (p, v)| {
                    *n += 1;
                    p.0 += v.0;
                },
            )
        });
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(15)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = parallel;
    config = config();
    targets = par_commands_100k, par_for_each_init
}
criterion_main!(parallel);
