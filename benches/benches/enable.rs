//! Enableable components (issue 18): what the enable bits cost a query, and what toggling
//! saves over moving rows.
//!
//! - `enable_iter_1m`: `pos += vel` over 1,000,000 entities with a plain `Position`, an
//!   enableable one with every row enabled (target: within 1.05× of plain), and half the rows
//!   disabled in runs of 64 or at random.
//! - `toggle_10k`: switching 10,000 entities' state off and on again, through
//!   `World::set_enabled`, through an `EnabledRW` query loop, and by removing and adding a
//!   tag (target: toggling ≥ 10× faster than the tag).
//!
//! Run with `cargo bench -p ecs-benches --bench enable`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::prelude::*;
use ecs_benches::{Position, Tag, Vec3, Velocity};

const MILLION: usize = 1_000_000;

/// Which rows a case disables.
type Off = dyn Fn(usize) -> bool;

fn pos_vel(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
    )
}

/// A world of `MILLION` (Position, Velocity) rows; `Position` enableable if asked, and row
/// `i` disabled where `off(i)`.
fn world(enableable: bool, off: impl Fn(usize) -> bool) -> World {
    let mut world = World::new();
    if enableable {
        world.register_enableable::<Position>();
    }
    let ids: Vec<Entity> = world.spawn_batch((0..MILLION).map(pos_vel)).collect();
    for (i, e) in ids.into_iter().enumerate() {
        if off(i) {
            world.set_enabled::<Position>(e, false).unwrap();
        }
    }
    world
}

fn enable_iter_1m(c: &mut Criterion) {
    let mut group = c.benchmark_group("enable_iter_1m");
    // A fixed-seed xorshift: half the rows, scattered.
    let random = |i: usize| {
        let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        x ^= x >> 33;
        x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        x ^= x >> 33;
        x & 1 == 0
    };
    let cases: [(&str, bool, &Off); 4] = [
        ("plain", false, &|_| false),
        ("enableable_all_on", true, &|_| false),
        ("half_off_runs64", true, &|i| (i / 64) % 2 == 1),
        ("half_off_random", true, &random),
    ];
    for (name, enableable, off) in cases {
        let mut world = world(enableable, off);
        let mut state = QueryState::<(RefRW<Position>, RefRO<Velocity>)>::new(&mut world);
        group.bench_function(name, |b| {
            b.iter(|| state.for_each(&mut world, |(p, v)| p.0 += v.0));
        });
    }
    // `Option` over a type never registered enableable: must cost what it did before
    // `Option` learnt enable bits.
    let mut world = world(false, |_| false);
    let mut state = QueryState::<(RefRW<Position>, Option<RefRO<Velocity>>)>::new(&mut world);
    group.bench_function("plain_option", |b| {
        b.iter(|| {
            state.for_each(&mut world, |(p, v)| {
                if let Some(v) = v {
                    p.0 += v.0;
                }
            });
        });
    });
    group.finish();
}

fn toggle_10k(c: &mut Criterion) {
    const N: usize = 10_000;
    let mut group = c.benchmark_group("toggle_10k");
    {
        let mut world = World::new();
        world.register_enableable::<Tag<0>>();
        let ids: Vec<Entity> = world
            .spawn_batch((0..N).map(|i| (pos_vel(i).0, pos_vel(i).1, Tag::<0>(0.0))))
            .collect();
        group.bench_function("set_enabled", |b| {
            b.iter(|| {
                for &e in &ids {
                    world.set_enabled::<Tag<0>>(e, false).unwrap();
                }
                for &e in &ids {
                    world.set_enabled::<Tag<0>>(e, true).unwrap();
                }
            });
        });
    }
    {
        let mut world = World::new();
        world.register_enableable::<Tag<0>>();
        let ids: Vec<Entity> = world
            .spawn_batch((0..N).map(|i| (pos_vel(i).0, pos_vel(i).1, Tag::<0>(0.0))))
            .collect();
        group.bench_function("set_enabled_many", |b| {
            b.iter(|| {
                world.set_enabled_many::<Tag<0>>(&ids, false).unwrap();
                world.set_enabled_many::<Tag<0>>(&ids, true).unwrap();
            });
        });
    }
    {
        let mut world = World::new();
        world.register_enableable::<Tag<0>>();
        world.spawn_batch((0..N).map(|i| (pos_vel(i).0, pos_vel(i).1, Tag::<0>(0.0))));
        let mut state = QueryState::<EnabledRW<Tag<0>>>::new(&mut world);
        group.bench_function("enabled_rw_loop", |b| {
            b.iter(|| {
                state.for_each(&mut world, |mut on| {
                    on.set(false);
                });
                state.for_each(&mut world, |mut on| {
                    on.set(true);
                });
            });
        });
    }
    {
        // The toggle primitive alone, over every row of every chunk: the plain load-and-store
        // a parallel task that owns its 64-row words may use, against the atomic
        // read-modify-write an `EnabledMut` handle does (issue 26 item 3).
        let mut world = World::new();
        let id = world.register_enableable::<Tag<0>>();
        world.spawn_batch((0..N).map(|i| (pos_vel(i).0, pos_vel(i).1, Tag::<0>(0.0))));
        let arch = world
            .archetypes()
            .iter()
            .find(|a| a.signature().contains(id))
            .expect("the tagged archetype");
        let col = arch.column(id).expect("tagged");
        let slot = arch.enable_slot(col).expect("enableable");
        for (name, shared) in [("mask_plain_store", false), ("mask_atomic_rmw", true)] {
            group.bench_function(name, |b| {
                b.iter(|| {
                    for on in [false, true] {
                        for chunk in arch.chunks() {
                            let mask = chunk.enable_bits().get(slot);
                            for r in 0..chunk.len() {
                                toggle(mask, r, on, shared);
                            }
                        }
                    }
                });
            });
        }
    }
    {
        let mut world = World::new();
        let ids: Vec<Entity> = world
            .spawn_batch((0..N).map(|i| (pos_vel(i).0, pos_vel(i).1, Tag::<0>(0.0))))
            .collect();
        group.bench_function("remove_insert_tag", |b| {
            b.iter(|| {
                for &e in &ids {
                    world.remove::<(Tag<0>,)>(e).unwrap();
                }
                for &e in &ids {
                    world.insert_one(e, Tag::<0>(0.0)).unwrap();
                }
            });
        });
    }
    group.finish();
}

/// One toggle through the plain store or the atomic read-modify-write.
#[expect(
    unsafe_code,
    reason = "times the two unsafe toggle primitives against each other"
)]
#[inline(always)]
fn toggle(mask: &ecs::core::EnableMask, r: usize, on: bool, shared: bool) {
    // SAFETY: the caller passes a row below its chunk's length, and nothing else touches the
    // bits while the benchmark loop runs.
    unsafe {
        if shared {
            mask.set_shared(r, on);
        } else {
            mask.set_unchecked(r, on);
        }
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = enable_iter_1m, toggle_10k
}
criterion_main!(benches);
