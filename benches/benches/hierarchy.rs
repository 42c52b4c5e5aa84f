//! The hierarchy (issue 28): transform propagation and recursive despawn.
//!
//! - `propagate/{100k,1m}`: every node's global transform from its local one and its parent's
//!   global, parents before children. `world_1t` / `world_2t` walk each tree through `&World`
//!   (`children`, `get`), the roots split across 1 or 2 threads, then write the results with
//!   one query; `propagate_{1,2}t` run a kept [`Propagate`] state (`run`, and `par_run` on a
//!   pool of 2), `propagate_rebuild_1t` with the order rebuilt before each pass (a root spawned
//!   and despawned), `propagate_1t_256k_chunks` the same forest in 256 KiB chunks; `vec` is the
//!   hand-written baseline, `Vec`s of locals and parent indices in an
//!   order that puts parents first, one pass.
//! - `aggregate/{100k,1m}`: the bottom-up pass, every node's subtree sum (of `Local`'s three
//!   fields), children before parents: `aggregate_1t` / `aggregate_2t` run a kept
//!   [`Propagate`] state's `aggregate` and `par_aggregate` (a pool of 2); `vec` is the
//!   hand-written child-sum, `Vec`s with parent indices walked backwards once.
//! - `fan_out_10k`, `fan_out_100k`, `fan_out_1m`: that many children of one parent from one
//!   `spawn_batch`, beside the same batch without `ChildOf`; and despawning those children one
//!   by one (in spawn order, in reverse, scrambled), beside plain despawns. Per-element
//!   throughput, so the three sizes show whether the cost per child stays flat.
//! - `despawn_100k`: despawning one root whose 100,000 descendants go with it
//!   (`DespawnSources`), alone in the world and beside a second tree of the same shape that
//!   stays, beside despawning 100,001 unrelated entities one by one.
//! - `hooks_elsewhere_10k`: what a world's hooks cost changes of other types: inserting and
//!   removing a hook-free component, spawning and despawning hook-free entities, in a world
//!   that never used `ChildOf`, and in one that did.
//!
//! Run with `cargo bench -p ecs-benches --bench hierarchy`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ecs::prelude::*;
use ecs::query::Parallelism;

#[derive(Clone, Copy)]
struct Local {
    x: f32,
    y: f32,
    scale: f32,
}

#[derive(Clone, Copy, Default)]
struct Global {
    x: f32,
    y: f32,
    scale: f32,
}

impl Global {
    fn then(self, l: Local) -> Self {
        Global {
            x: self.x + self.scale * l.x,
            y: self.y + self.scale * l.y,
            scale: self.scale * l.scale,
        }
    }
}

const ROOT: Global = Global {
    x: 0.0,
    y: 0.0,
    scale: 1.0,
};

fn local(i: usize) -> Local {
    Local {
        x: (i % 17) as f32,
        y: (i % 13) as f32,
        scale: 0.5 + (i % 7) as f32 * 0.1,
    }
}

/// The parent of node `i` (`None` for a root) in a forest of trees of 50 nodes, each node's
/// parent a few places before it, depth up to 8: the same shape for the world and the `Vec`s.
fn parent_of(i: usize) -> Option<usize> {
    let in_tree = i % 50;
    (in_tree != 0).then(|| i - 1 - (in_tree - 1) % 7)
}

fn forest(n: usize) -> (World, Vec<Entity>) {
    forest_in(World::new(), n)
}

fn forest_in(mut world: World, n: usize) -> (World, Vec<Entity>) {
    let mut ids: Vec<Entity> = Vec::with_capacity(n);
    let mut roots = Vec::new();
    for i in 0..n {
        let e = match parent_of(i) {
            None => {
                let e = world.spawn((local(i), Global::default()));
                roots.push(e);
                e
            }
            Some(p) => world.spawn((local(i), Global::default(), ChildOf(ids[p]))),
        };
        ids.push(e);
    }
    (world, roots)
}

fn walk(world: &World, root: Entity, out: &mut Vec<(Entity, Global)>) {
    let mut stack = vec![(root, ROOT.then(*world.get::<Local>(root).unwrap()))];
    while let Some((node, global)) = stack.pop() {
        out.push((node, global));
        for &child in world.children(node) {
            stack.push((child, global.then(*world.get::<Local>(child).unwrap())));
        }
    }
}

/// Query states kept between frames: a node's `Local` and its `Children`.
struct States {
    locals: QueryState<RefRO<Local>>,
    children: QueryState<RefRO<Children>>,
}

/// [`walk`] through kept query states: the item of a node without a `TypeId` lookup per read.
fn walk_query(
    locals: &mut QueryRun<'_, '_, RefRO<Local>>,
    children: &mut QueryRun<'_, '_, RefRO<Children>>,
    root: Entity,
    out: &mut Vec<(Entity, Global)>,
) {
    let mut stack = vec![(root, ROOT.then(*locals.reborrow().get(root).unwrap()))];
    while let Some((node, global)) = stack.pop() {
        out.push((node, global));
        if let Ok(kids) = children.reborrow().get(node) {
            for &child in kids.iter() {
                stack.push((child, global.then(*locals.reborrow().get(child).unwrap())));
            }
        }
    }
}

fn propagate_query(
    world: &mut World,
    states: &mut States,
    roots: &[Entity],
    by_index: &mut [Global],
    out: &mut Vec<(Entity, Global)>,
) {
    out.clear();
    let mut locals = states.locals.run_shared(world);
    let mut children = states.children.run_shared(world);
    for &r in roots {
        walk_query(&mut locals, &mut children, r, out);
    }
    for &(e, g) in out.iter() {
        by_index[e.index() as usize] = g;
    }
    world
        .query::<(Entity, RefRW<Global>)>()
        .for_each(|(e, g)| *g = by_index[e.index() as usize]);
}

fn propagate(world: &mut World, roots: &[Entity], threads: usize, by_index: &mut [Global]) {
    let share = roots.len().div_ceil(threads);
    let parts: Vec<Vec<(Entity, Global)>> = std::thread::scope(|s| {
        let world = &*world;
        let tasks: Vec<_> = roots
            .chunks(share)
            .map(|part| {
                s.spawn(move || {
                    let mut out = Vec::new();
                    for &r in part {
                        walk(world, r, &mut out);
                    }
                    out
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for (e, g) in parts.into_iter().flatten() {
        by_index[e.index() as usize] = g;
    }
    world
        .query::<(Entity, RefRW<Global>)>()
        .for_each(|(e, g)| *g = by_index[e.index() as usize]);
}

fn bench_propagate(c: &mut Criterion) {
    let mut group = c.benchmark_group("propagate");
    group.sample_size(20);
    for (label, n) in [("100k", 100_000usize), ("1m", 1_000_000)] {
        group.throughput(Throughput::Elements(n as u64));
        let (mut world, roots) = forest(n);
        let mut by_index = vec![Global::default(); n + 1];
        for threads in [1, 2] {
            group.bench_function(format!("{label}/world_{threads}t"), |b| {
                b.iter(|| propagate(&mut world, &roots, threads, &mut by_index));
            });
        }
        let mut states = States {
            locals: QueryState::new(&mut world),
            children: QueryState::new(&mut world),
        };
        let mut out = Vec::with_capacity(n);
        group.bench_function(format!("{label}/query_1t"), |b| {
            b.iter(|| propagate_query(&mut world, &mut states, &roots, &mut by_index, &mut out));
        });
        let mut pass = Propagate::<Local, Global>::new(&mut world);
        let step = |parent: Option<&Global>, l: &Local, g: &mut Global| {
            *g = parent.copied().unwrap_or(ROOT).then(*l);
        };
        group.bench_function(format!("{label}/propagate_1t"), |b| {
            b.iter(|| pass.run(&mut world, step));
        });
        // A root spawned and despawned before each pass: the order is rebuilt every time.
        group.bench_function(format!("{label}/propagate_rebuild_1t"), |b| {
            b.iter(|| {
                let e = world.spawn((local(0), Global::default()));
                world.despawn(e).unwrap();
                pass.run(&mut world, step);
            });
        });
        let pool = std::sync::Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .expect("a pool of 2"),
        );
        group.bench_function(format!("{label}/propagate_2t"), |b| {
            b.iter(|| {
                Parallelism::Pool(pool.clone()).scope(|| pass.par_run(&mut world, step));
            });
        });
        // The same forest in 256 KiB chunks: a pass crosses a chunk boundary 16 times less
        // often, where the CPU's prefetcher loses each column's stream.
        let policy = ecs::core::ChunkPolicy::Fixed(256 * 1024);
        let (mut big, _) = forest_in(World::with_chunk_policy(policy).expect("valid"), n);
        let mut big_pass = Propagate::<Local, Global>::new(&mut big);
        group.bench_function(format!("{label}/propagate_1t_256k_chunks"), |b| {
            b.iter(|| big_pass.run(&mut big, step));
        });
        drop(big);
        let locals: Vec<Local> = (0..n).map(local).collect();
        let parents: Vec<u32> = (0..n)
            .map(|i| parent_of(i).map_or(u32::MAX, |p| p as u32))
            .collect();
        let mut globals = vec![Global::default(); n];
        group.bench_function(format!("{label}/vec"), |b| {
            b.iter(|| {
                for i in 0..n {
                    let base = match parents[i] {
                        u32::MAX => ROOT,
                        p => globals[p as usize],
                    };
                    globals[i] = base.then(locals[i]);
                }
                black_box(&globals);
            });
        });
    }
    group.finish();
}

fn bench_despawn(c: &mut Criterion) {
    let mut group = c.benchmark_group("despawn_100k");
    group.sample_size(10);
    const N: usize = 100_000;
    group.throughput(Throughput::Elements(N as u64 + 1));
    // Eight levels, each node a child of one on the level above.
    fn tree(world: &mut World) -> Entity {
        let root = world.spawn((local(0),));
        let mut last = vec![root];
        for i in 1..=N {
            let level = (i % 8).max(1);
            let parent = last[(level - 1).min(last.len() - 1)];
            let e = world.spawn((local(i), ChildOf(parent)));
            if last.len() <= level {
                last.push(e);
            } else if i % 97 == 0 {
                last[level] = e;
            }
        }
        root
    }
    // The subtree is every row of its archetypes, and (`subtree_beside_another`) half of
    // them: a second tree of the same shape stays.
    for (name, trees) in [("subtree", 1usize), ("subtree_beside_another", 2)] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let mut world = World::new();
                    let roots: Vec<Entity> = (0..trees).map(|_| tree(&mut world)).collect();
                    (world, roots[0])
                },
                |(mut world, root)| {
                    world.despawn(root).unwrap();
                    assert_eq!(world.len() as usize, (trees - 1) * (N + 1));
                    world
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.bench_function("plain_loop", |b| {
        b.iter_batched(
            || {
                let mut world = World::new();
                let ids: Vec<Entity> = world.spawn_batch((0..=N).map(|i| (local(i),))).collect();
                (world, ids)
            },
            |(mut world, ids)| {
                for e in ids {
                    world.despawn(e).unwrap();
                }
                world
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// Inserting and removing a type without hooks on 10,000 entities, and spawning and
/// despawning 10,000 entities without hooked types, in a world that never used `ChildOf` and
/// in one that did (so some registered type has hooks, and each change first asks whether its
/// bundle or entity has any).
fn bench_hooks_elsewhere(c: &mut Criterion) {
    let mut group = c.benchmark_group("hooks_elsewhere_10k");
    const N: usize = 10_000;
    group.throughput(Throughput::Elements(N as u64));
    for (label, hierarchy) in [("no_hooked_type", false), ("hierarchy_in_world", true)] {
        let mut world = World::new();
        if hierarchy {
            let parent = world.spawn((local(0),));
            world.spawn((local(1), ChildOf(parent)));
        }
        let ids: Vec<Entity> = world.spawn_batch((0..N).map(|i| (local(i),))).collect();
        group.bench_function(format!("add_remove/{label}"), |b| {
            b.iter(|| {
                for &e in &ids {
                    world.insert_one(e, Global::default()).unwrap();
                }
                for &e in &ids {
                    black_box(world.remove::<(Global,)>(e).unwrap());
                }
            });
        });
        group.bench_function(format!("spawn_despawn/{label}"), |b| {
            b.iter(|| {
                let spawned: Vec<Entity> = (0..N).map(|i| world.spawn((local(i),))).collect();
                for e in spawned {
                    world.despawn(e).unwrap();
                }
            });
        });
    }
    group.finish();
}

fn bench_aggregate(c: &mut Criterion) {
    let mut group = c.benchmark_group("aggregate");
    group.sample_size(20);
    let init = |l: &Local, g: &mut Global| {
        *g = Global {
            x: l.x,
            y: l.y,
            scale: l.scale,
        };
    };
    let combine = |parent: &mut Global, child: &Global| {
        parent.x += child.x;
        parent.y += child.y;
        parent.scale += child.scale;
    };
    for (label, n) in [("100k", 100_000usize), ("1m", 1_000_000)] {
        group.throughput(Throughput::Elements(n as u64));
        let (mut world, _) = forest(n);
        let mut pass = Propagate::<Local, Global>::new(&mut world);
        group.bench_function(format!("{label}/aggregate_1t"), |b| {
            b.iter(|| pass.aggregate(&mut world, init, combine));
        });
        let pool = std::sync::Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .expect("a pool of 2"),
        );
        group.bench_function(format!("{label}/aggregate_2t"), |b| {
            b.iter(|| {
                Parallelism::Pool(pool.clone())
                    .scope(|| pass.par_aggregate(&mut world, init, combine));
            });
        });
        drop(world);
        let locals: Vec<Local> = (0..n).map(local).collect();
        let parents: Vec<u32> = (0..n)
            .map(|i| parent_of(i).map_or(u32::MAX, |p| p as u32))
            .collect();
        let mut sums = vec![Global::default(); n];
        group.bench_function(format!("{label}/vec"), |b| {
            b.iter(|| {
                for (sum, l) in sums.iter_mut().zip(&locals) {
                    init(l, sum);
                }
                for i in (0..n).rev() {
                    if parents[i] != u32::MAX {
                        let child = sums[i];
                        combine(&mut sums[parents[i] as usize], &child);
                    }
                }
                black_box(&sums);
            });
        });
    }
    group.finish();
}

fn bench_fan_out(c: &mut Criterion) {
    fan_out_group(c, "fan_out_10k", 10_000);
    fan_out_group(c, "fan_out_100k", 100_000);
    fan_out_group(c, "fan_out_1m", 1_000_000);
}

/// `N` children of one parent: spawned in one batch, and despawned one by one in spawn order,
/// in reverse and in a scrambled order, each beside the same work without `ChildOf`.
fn fan_out_group(c: &mut Criterion, name: &str, count: u32) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.throughput(Throughput::Elements(u64::from(count)));
    group.bench_function("spawn_batch_children", |b| {
        b.iter_batched(
            || {
                let mut world = World::new();
                let root = world.spawn(());
                (world, root)
            },
            |(mut world, root)| {
                world
                    .spawn_batch((0..count).map(|i| (local(i as usize), ChildOf(root))))
                    .for_each(drop);
                world
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("spawn_batch_plain", |b| {
        b.iter_batched(
            World::new,
            |mut world| {
                world
                    .spawn_batch((0..count).map(|i| (local(i as usize), Global::default())))
                    .for_each(drop);
                world
            },
            BatchSize::PerIteration,
        );
    });
    // Each child leaves its parent's list: in spawn order, in reverse, and scrambled; beside
    // plain entities despawned in the same order.
    for (order, suffix) in [
        (Order::Spawned, ""),
        (Order::Reversed, "_reversed"),
        (Order::Scrambled, "_scrambled"),
    ] {
        for (kind, children) in [("children", true), ("plain", false)] {
            group.bench_function(format!("despawn_{kind}{suffix}"), |b| {
                b.iter_batched(
                    || {
                        let mut world = World::new();
                        let root = world.spawn(());
                        let entities: Vec<Entity> = if children {
                            world
                                .spawn_batch((0..count).map(|i| (local(i as usize), ChildOf(root))))
                                .collect()
                        } else {
                            world
                                .spawn_batch(
                                    (0..count).map(|i| (local(i as usize), Global::default())),
                                )
                                .collect()
                        };
                        (world, order.apply(entities))
                    },
                    |(mut world, entities)| {
                        for e in entities {
                            world.despawn(e).expect("alive");
                        }
                        world
                    },
                    BatchSize::PerIteration,
                );
            });
        }
    }
    group.finish();
}

#[derive(Clone, Copy)]
enum Order {
    Spawned,
    Reversed,
    Scrambled,
}

impl Order {
    /// The entities in this order; scrambled is a multiplicative walk over the indices (7919
    /// is prime to every size benched).
    fn apply(self, mut entities: Vec<Entity>) -> Vec<Entity> {
        match self {
            Order::Spawned => {}
            Order::Reversed => entities.reverse(),
            Order::Scrambled => {
                let n = entities.len();
                entities = (0..n).map(|i| entities[(i * 7919) % n]).collect();
            }
        }
        entities
    }
}

criterion_group!(
    benches,
    bench_propagate,
    bench_aggregate,
    bench_fan_out,
    bench_despawn,
    bench_hooks_elsewhere
);
criterion_main!(benches);
