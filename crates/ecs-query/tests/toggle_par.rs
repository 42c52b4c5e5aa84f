//! Toggling enable bits from parallel tasks: bits are written with plain word stores, which
//! is correct only because a parallel run never gives rows of one 64-row word to two tasks
//! and `EnabledMut` handles cannot leave their thread (a `compile_fail` doctest on the type).
//! Every thread count must give the bits a sequential run gives, also where a filter leaves
//! mixed chunks (tasks then carry the chunk's mask).

use std::sync::Arc;

use ecs_core::{Entity, World};
use ecs_query::{EnabledRW, Parallelism, QueryExt, QueryState, RefRO, With};

struct A;
struct B;

const N: u32 = if cfg!(miri) { 300 } else { 40_000 };

fn build() -> (World, Vec<Entity>) {
    // 4 KiB chunks of (u32, A, B) rows: hundreds of rows, so several words and tasks each.
    let mut world = World::with_chunk_size(4096).unwrap();
    world.register_enableable::<A>();
    world.register_enableable::<B>();
    let ids: Vec<Entity> = world.spawn_batch((0..N).map(|i| (i, A, B))).collect();
    // `B` off in scattered rows, so `With<B>` leaves mixed chunks.
    for (i, &e) in ids.iter().enumerate() {
        if (i * 7) % 5 == 0 {
            world.set_enabled::<B>(e, false).unwrap();
        }
    }
    (world, ids)
}

fn run(pool: Option<Arc<rayon::ThreadPool>>) -> Vec<bool> {
    let (mut world, ids) = build();
    let mut all = QueryState::<(EnabledRW<A>, RefRO<u32>)>::new(&mut world);
    let mut filtered = QueryState::<(EnabledRW<A>, RefRO<u32>), With<B>>::new(&mut world);
    let mut go = |world: &mut World| {
        all.par_for_each(world, |(mut on, &v)| {
            on.set(v % 3 != 0);
        });
        filtered.par_for_each(world, |(mut on, &v)| {
            on.set(v % 2 == 0);
        });
    };
    match pool {
        None => Parallelism::Sequential.scope(|| go(&mut world)),
        Some(pool) => Parallelism::Pool(pool).scope(|| go(&mut world)),
    }
    let bits = ids
        .iter()
        .map(|&e| world.is_enabled::<A>(e).unwrap())
        .collect();
    world.check_invariants();
    bits
}

#[test]
fn par_toggles_match_sequential_on_any_thread_count() {
    let want = run(None);
    // The expected bits, from the rules themselves.
    let (world, ids) = build();
    for (i, &e) in ids.iter().enumerate() {
        let v = i as u32;
        let b_on = world.is_enabled::<B>(e).unwrap();
        let expect = if b_on { v % 2 == 0 } else { v % 3 != 0 };
        assert_eq!(want[i], expect, "row {i}");
    }
    let threads: &[usize] = if cfg!(miri) { &[3] } else { &[2, 4, 7] };
    for &n in threads {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap(),
        );
        assert_eq!(run(Some(pool)), want, "{n} threads");
    }
}

#[test]
fn par_fold_skips_disabled_rows_in_mixed_chunks() {
    let (mut world, _) = build();
    let want: u32 = world
        .query::<RefRO<u32>>()
        .iter()
        .copied()
        .fold(0, u32::wrapping_add);
    let on: u32 = world
        .query_filtered::<RefRO<u32>, With<B>>()
        .iter()
        .copied()
        .fold(0, u32::wrapping_add);
    assert_ne!(want, on);
    let mut state = QueryState::<RefRO<u32>, With<B>>::new(&mut world);
    for n in [1, 3] {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap(),
        );
        let got = Parallelism::Pool(pool).scope(|| {
            state.par_fold(
                &mut world,
                || 0u32,
                |a, &v| a.wrapping_add(v),
                u32::wrapping_add,
            )
        });
        assert_eq!(got, on, "{n} threads");
    }
}
