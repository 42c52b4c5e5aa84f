//! A default world's chunk layout does not depend on history: the same entities built by one
//! batch, several batches or one at a time get the same 16 KiB chunks, and batch-fitted chunks
//! come only from the opt-in `ChunkPolicy::FitBatch`. Every query path gives the same results
//! under both layouts.

use std::sync::Mutex;

use ecs_core::{ChunkPolicy, Entity, World};
use ecs_query::{QueryExt, QueryState, RefRO, RefRW};

mod support;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos([f32; 3]);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel([f32; 3]);

/// 28-byte rows: 100,000 of them are 2.8 MB, far past the 128 KiB where `FitBatch` resizes.
const N: usize = if cfg!(miri) { 1_500 } else { 100_000 };

fn row(i: usize) -> (Pos, Vel) {
    (Pos([i as f32, 0.0, 1.0]), Vel([1.0, i as f32, 0.5]))
}

/// (chunk size, chunk count) of every non-empty archetype, in archetype order.
fn chunks(world: &World) -> Vec<(usize, usize)> {
    world
        .archetypes()
        .iter()
        .filter(|a| !a.is_empty())
        .map(|a| (a.layout().chunk_size(), a.chunks().len()))
        .collect()
}

#[test]
fn one_batch_several_batches_and_one_by_one_give_the_same_chunks() {
    let mut one = World::new();
    one.spawn_batch((0..N).map(row)).for_each(drop);
    let mut several = World::new();
    for part in 0..4 {
        let rows = (part * N / 4)..((part + 1) * N / 4);
        several.spawn_batch(rows.map(row)).for_each(drop);
    }
    let mut single = World::new();
    for i in 0..N {
        single.spawn(row(i));
    }
    let layout = chunks(&one);
    assert_eq!(layout.len(), 1);
    assert_eq!(
        layout[0].0,
        16 * 1024,
        "a default world keeps 16 KiB chunks"
    );
    assert!(layout[0].1 > 1, "{N} rows span many chunks");
    assert_eq!(chunks(&several), layout);
    assert_eq!(chunks(&single), layout);

    if cfg!(miri) {
        // Miri's batch (42 KB) is below the 128 KiB where FitBatch resizes; natively it is not.
        return;
    }
    let mut fit = World::with_chunk_policy(ChunkPolicy::FitBatch).unwrap();
    fit.spawn_batch((0..N).map(row)).for_each(drop);
    let fitted = chunks(&fit);
    assert!(
        fitted[0].0 > 16 * 1024,
        "FitBatch sizes a large batch's chunks"
    );
    assert!(fitted[0].1 < layout[0].1);
}

/// What each query path reports of a world after one `pos += vel` pass through `for_each`.
fn results(world: &mut World) -> Vec<Vec<(Entity, [f32; 3])>> {
    let mut writer = QueryState::<(RefRW<Pos>, RefRO<Vel>)>::new(world);
    writer.for_each(world, |(p, v)| {
        for k in 0..3 {
            p.0[k] += v.0[k];
        }
    });
    let mut reader = QueryState::<(Entity, RefRO<Pos>)>::new(world);
    let mut by_for_each = Vec::new();
    reader.for_each(world, |(e, p)| by_for_each.push((e, p.0)));
    let by_iter: Vec<_> = reader.iter(world).map(|(e, p)| (e, p.0)).collect();
    let mut by_chunk = Vec::new();
    reader.for_each_chunk(world, |chunk| {
        let pos = chunk.column::<Pos>();
        by_chunk.extend(chunk.entities().iter().zip(pos).map(|(&e, p)| (e, p.0)));
    });
    let par = Mutex::new(Vec::new());
    support::in_pool(|| reader.par_for_each(world, |(e, p)| par.lock().unwrap().push((e, p.0))));
    let mut by_par = par.into_inner().unwrap();
    by_par.sort_by_key(|&(e, _)| e);
    let one_shot: Vec<_> = world
        .query::<(Entity, RefRO<Pos>)>()
        .iter()
        .map(|(e, p)| (e, p.0))
        .collect();
    assert_eq!(reader.count(world), by_for_each.len());
    let mut all = vec![by_for_each, by_iter, by_chunk, one_shot, by_par];
    for list in &mut all {
        list.sort_by_key(|&(e, _)| e);
    }
    all
}

#[test]
fn par_every_query_path_agrees_under_fixed_and_fit_batch_chunks() {
    let mut fixed = World::new();
    fixed.spawn_batch((0..N).map(row)).for_each(drop);
    if cfg!(miri) {
        // Miri's batch (42 KB) is below the 128 KiB where FitBatch resizes; natively it is not.
        return;
    }
    let mut fit = World::with_chunk_policy(ChunkPolicy::FitBatch).unwrap();
    fit.spawn_batch((0..N).map(row)).for_each(drop);
    assert_ne!(chunks(&fixed), chunks(&fit));
    let a = results(&mut fixed);
    let b = results(&mut fit);
    for paths in [&a, &b] {
        assert_eq!(paths[0].len(), N);
        for other in &paths[1..] {
            assert_eq!(other, &paths[0]);
        }
    }
    assert_eq!(a, b);
}
