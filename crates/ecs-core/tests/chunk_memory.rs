//! Chunk memory comes from the world's pool of large blocks (`chunk/pool.rs`): many chunks
//! share a block, freed chunks are reused, and blocks go back to the system when empty.

use ecs_core::__private::BLOCK_BYTES;
use ecs_core::{World, CHUNK_SIZE};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Position([f32; 3]);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Velocity([f32; 3]);

/// Entities for a few dozen chunks; fewer under Miri, where each row costs far more.
const N: u32 = if cfg!(miri) { 1_000 } else { 60_000 };

fn chunks(world: &World) -> usize {
    world.archetypes().iter().map(|a| a.chunks().len()).sum()
}

#[test]
fn chunks_share_blocks_and_empty_blocks_go_back() {
    let mut world = World::new();
    let ids: Vec<_> = world
        .spawn_batch((0..N).map(|i| (Position([i as f32; 3]), Velocity([1.0; 3]))))
        .collect();
    let per_block = BLOCK_BYTES / CHUNK_SIZE;
    let stats = world.chunk_pool().stats();
    assert_eq!(stats.chunks, chunks(&world));
    assert_eq!(stats.blocks, chunks(&world).div_ceil(per_block));
    assert_eq!(stats.block_bytes, stats.blocks * BLOCK_BYTES);

    for &e in &ids {
        world.despawn(e).unwrap();
    }
    // Every chunk but the archetype's spare is back in the pool; one empty block at most
    // stays for reuse, and `release_empty` returns it.
    world.chunk_pool().release_empty();
    let stats = world.chunk_pool().stats();
    assert_eq!((stats.blocks, stats.chunks), (1, 1));

    // Spawning again reuses the pool and keeps every value.
    let again: Vec<_> = world
        .spawn_batch((0..N).map(|i| (Position([i as f32; 3]), Velocity([2.0; 3]))))
        .collect();
    for (i, &e) in again.iter().enumerate() {
        assert_eq!(world.get::<Position>(e), Ok(&Position([i as f32; 3])));
    }
    world.check_invariants();
}

#[test]
fn worlds_do_not_share_pools_and_chunks_outlive_nothing() {
    let mut a = World::with_test_chunk_size(256);
    let mut b = World::with_test_chunk_size(256);
    a.spawn_batch((0..500u32).map(|i| (i,))).for_each(drop);
    b.spawn((1u64,));
    assert_eq!(a.chunk_pool().stats().chunks, chunks(&a));
    assert_eq!(b.chunk_pool().stats().chunks, 1);
    // Dropping a world drops its chunks, then its pool (Miri checks nothing leaks or dangles).
    drop(a);
    assert_eq!(b.chunk_pool().stats().chunks, 1);
}

#[derive(Clone, Copy)]
struct Tag<const N: usize>;

fn tag(world: &mut World, e: ecs_core::Entity, bit: usize) {
    match bit {
        0 => world.insert_one(e, Tag::<0>),
        1 => world.insert_one(e, Tag::<1>),
        2 => world.insert_one(e, Tag::<2>),
        3 => world.insert_one(e, Tag::<3>),
        4 => world.insert_one(e, Tag::<4>),
        5 => world.insert_one(e, Tag::<5>),
        _ => world.insert_one(e, Tag::<6>),
    }
    .expect("alive");
}

#[test]
fn small_chunks_of_many_archetypes_do_not_share_cache_sets() {
    // 128 archetypes of one row each: one 16 KiB chunk apiece. Were the slots 16 KiB apart,
    // every `Position` column would start at one offset modulo 16 KiB, and a loop over them
    // would meet the same few sets of a set-indexed cache (see "Colouring" in `chunk/pool.rs`).
    let mut world = World::new();
    let archetypes = if cfg!(miri) { 16 } else { 128 };
    for k in 0..archetypes {
        let e = world.spawn((Position([k as f32; 3]),));
        for bit in (0..7).filter(|b| k >> b & 1 == 1) {
            tag(&mut world, e, bit);
        }
    }
    let mut starts: Vec<usize> = world
        .archetypes()
        .iter()
        .filter(|a| a.len() == 1)
        .map(|a| a.chunks()[0].entities().as_ptr() as usize % CHUNK_SIZE)
        .collect();
    assert_eq!(starts.len(), archetypes);
    starts.sort_unstable();
    starts.dedup();
    assert!(
        starts.len() >= archetypes / 2,
        "{} distinct chunk starts modulo 16 KiB among {archetypes} chunks",
        starts.len()
    );
    world.check_invariants();
}
