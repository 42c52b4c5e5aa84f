//! `World::compact`: values, ids, enable bits and ticks survive; memory goes back.

use ecs_core::{CompactReport, Entity, World};

#[derive(Debug, PartialEq, Clone)]
struct Name(String);
#[derive(Debug, PartialEq, Clone, Copy)]
struct Hidden(u64);

/// Entities per archetype: enough that the survivors span many 64-slot blocks. Too many for
/// Miri, which runs `chunks_move_out_of_a_drained_block` instead.
const N: usize = 3000;

/// Two archetypes (`(u32, Name)` and `(u32, Name, Hidden)`) spawned in turns, so their
/// chunks interleave in every block; then every second entity of the first and all but a
/// few of the second are despawned. Returns the world and the survivors.
fn spread_world() -> (World, Vec<(Entity, u32, bool)>) {
    // 256-byte chunks come from 64-slot blocks, so a few thousand rows span many blocks.
    let mut world = World::with_test_chunk_size(256);
    world.register_enableable::<Hidden>();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..N as u32 {
        a.push(world.spawn((i, Name(format!("a{i}")))));
        b.push(world.spawn((i, Name(format!("b{i}")), Hidden(u64::from(i)))));
    }
    let mut survivors = Vec::new();
    for (i, e) in a.into_iter().enumerate() {
        if i % 2 == 0 {
            world.despawn(e).unwrap();
        } else {
            survivors.push((e, i as u32, false));
        }
    }
    for (i, e) in b.into_iter().enumerate() {
        if i % 7 == 3 {
            // Survivors of `b` keep an alternating enable bit.
            world.set_enabled::<Hidden>(e, i % 2 == 0).unwrap();
            survivors.push((e, i as u32, true));
        } else {
            world.despawn(e).unwrap();
        }
    }
    world.check_invariants();
    (world, survivors)
}

fn assert_survivors(world: &World, survivors: &[(Entity, u32, bool)]) {
    assert_eq!(world.len() as usize, survivors.len());
    for &(e, i, in_b) in survivors {
        assert_eq!(world.get::<u32>(e), Ok(&i), "{e:?}");
        let prefix = if in_b { "b" } else { "a" };
        assert_eq!(world.get::<Name>(e), Ok(&Name(format!("{prefix}{i}"))));
        if in_b {
            assert_eq!(world.get::<Hidden>(e), Ok(&Hidden(u64::from(i))));
            assert_eq!(world.is_enabled::<Hidden>(e), Ok(i % 2 == 0));
        }
    }
}

#[test]
#[cfg_attr(miri, ignore)]
fn compaction_keeps_everything_and_frees_blocks() {
    let (mut world, survivors) = spread_world();
    let locations: Vec<_> = survivors
        .iter()
        .map(|s| world.location(s.0).unwrap())
        .collect();
    let ticks: Vec<Vec<u64>> = world
        .archetypes()
        .iter()
        .flat_map(|a| {
            a.chunks().iter().map(|c| {
                (0..a.signature().len())
                    .map(|col| c.changed_tick(col))
                    .collect()
            })
        })
        .collect();
    let layout = world.memory_report();
    let disabled: usize = layout.archetypes.iter().map(|a| a.disabled_rows).sum();
    assert_eq!(
        disabled,
        (0..N).filter(|i| i % 7 == 3 && i % 2 == 1).count()
    );
    let predicted = layout.memory.compaction_frees_bytes;
    assert!(layout.to_string().contains("disabled rows"));
    let report = world.compact();
    world.check_invariants();
    assert_eq!(
        report.bytes_freed, predicted,
        "the layout report's prediction"
    );
    assert_eq!(world.memory_report().memory.compaction_frees_bytes, 0);
    assert_survivors(&world, &survivors);
    let after: Vec<_> = survivors
        .iter()
        .map(|s| world.location(s.0).unwrap())
        .collect();
    assert_eq!(locations, after, "no row moves");
    let ticks_after: Vec<Vec<u64>> = world
        .archetypes()
        .iter()
        .flat_map(|a| {
            a.chunks().iter().map(|c| {
                (0..a.signature().len())
                    .map(|col| c.changed_tick(col))
                    .collect()
            })
        })
        .collect();
    assert_eq!(ticks, ticks_after, "change ticks stay");

    let stats = world.chunk_pool().stats();
    assert_eq!(stats.chunks, report.chunks_after);
    assert_eq!(report.blocks_after, stats.blocks);
    // As few 64-slot blocks as hold the chunks, per class (both archetypes share one here).
    assert_eq!(stats.blocks, report.chunks_after.div_ceil(64));
    assert!(report.chunks_moved > 0, "{report:?}");
    assert!(report.bytes_freed > 0, "{report:?}");
    // Every byte given up either left the process or went to the process's block cache.
    assert_eq!(
        report.bytes_returned + report.bytes_cached,
        report.bytes_freed,
        "{report:?}"
    );
    assert_eq!(report.spare_chunks_freed, 2, "{report:?}");
    for arch in world.archetypes() {
        let partial = arch
            .chunks()
            .iter()
            .filter(|c| c.len() < arch.layout().capacity())
            .count();
        assert!(partial <= 1, "at most one chunk per archetype is not full");
        assert_eq!(arch.spare_chunks(), 0);
    }

    // A second compaction finds nothing to do.
    let again = world.compact();
    assert_eq!(
        again,
        CompactReport {
            chunks_before: report.chunks_after,
            chunks_after: report.chunks_after,
            blocks_before: stats.blocks,
            blocks_after: stats.blocks,
            ..CompactReport::default()
        }
    );

    // The world keeps working: moves, despawns and spawns after compaction.
    for &(e, _, in_b) in &survivors {
        if in_b {
            world.remove::<(Hidden,)>(e).unwrap();
        } else {
            world.insert_one(e, 1u8).unwrap();
        }
    }
    world.spawn((7u32, Name("new".into())));
    world.check_invariants();
    world.clear();
    world.check_invariants();
}

/// The small case Miri runs: a filler archetype takes most of the first 64-slot block, the
/// kept one spills into the second, and the filler goes, so the kept chunks of the thinner
/// block are copied into the other (the unsafe byte copy of `Chunk::relocate`).
#[test]
fn chunks_move_out_of_a_drained_block() {
    let mut world = World::with_test_chunk_size(128);
    world.register_enableable::<Hidden>();
    // `(u64,)`: 8 rows of 16 bytes per 128-byte chunk, so 60 chunks.
    let filler: Vec<Entity> = world.spawn_batch((0..480u64).map(|i| (i,))).collect();
    let kept: Vec<Entity> = (0..24u32)
        .map(|i| world.spawn((i, Name(format!("k{i}")), Hidden(u64::from(i)))))
        .collect();
    for (i, &e) in kept.iter().enumerate() {
        world.set_enabled::<Hidden>(e, i % 3 != 0).unwrap();
    }
    for e in filler {
        world.despawn(e).unwrap();
    }
    let blocks = world.chunk_pool().stats().blocks;
    let report = world.compact();
    world.check_invariants();
    assert!(report.chunks_moved > 0, "{report:?}");
    assert!(report.blocks_after < blocks, "{report:?}");
    assert_eq!(report.blocks_after, 1);
    for (i, &e) in kept.iter().enumerate() {
        let i = i as u32;
        assert_eq!(world.get::<u32>(e), Ok(&i));
        assert_eq!(world.get::<Name>(e), Ok(&Name(format!("k{i}"))));
        assert_eq!(world.get::<Hidden>(e), Ok(&Hidden(u64::from(i))));
        assert_eq!(world.is_enabled::<Hidden>(e), Ok(i % 3 != 0));
    }
    // Dropping the world drops the moved `String`s once each (Miri checks the frees).
    world.despawn(kept[0]).unwrap();
    world.check_invariants();
}

#[test]
fn empty_archetypes_are_reclaimed_but_keep_their_ids() {
    let mut world = World::with_test_chunk_size(256);
    let e = world.spawn((1u32,));
    let first = world.location(e).unwrap().archetype;
    world.insert_one(e, 2u16).unwrap(); // caches an edge out of `(u32,)`
    world.despawn(e).unwrap();
    let archetypes = world.archetypes().len();
    let report = world.compact();
    // `(u32,)` had a spare chunk and an edge, `(u32, u16)` a spare chunk, and the empty
    // archetype the edge `spawn` took.
    assert_eq!(report.archetypes_reclaimed, 3, "{report:?}");
    assert_eq!(report.chunks_after, 0);
    assert_eq!(world.archetypes().len(), archetypes, "ids stay");
    world.check_invariants();
    // Edges rebuild on demand and lead to the same archetypes.
    let e = world.spawn((3u32,));
    assert_eq!(world.location(e).unwrap().archetype, first);
    world.insert_one(e, 4u16).unwrap();
    assert_eq!(world.archetypes().len(), archetypes);
    assert_eq!(world.get::<u16>(e), Ok(&4));
    world.check_invariants();
}

/// With the default 16 KiB chunks (2 MiB blocks), the blocks a compaction empties either go
/// back to the system or into the process's block cache, and the report says which; the
/// memory report shows the cache, outside the world's total.
#[test]
#[cfg_attr(miri, ignore = "allocates tens of megabytes")]
fn compaction_says_which_freed_blocks_left_the_process() {
    const BLOCK: usize = 2 * 1024 * 1024;
    let mut world = World::new();
    let ids: Vec<Entity> = world
        .spawn_batch((0..600_000u64).map(|i| (i, [0u8; 24])))
        .collect();
    for (i, e) in ids.iter().enumerate() {
        if i % 10 != 0 {
            world.despawn(*e).unwrap();
        }
    }
    let report = world.compact();
    world.check_invariants();
    assert!(report.bytes_freed >= BLOCK, "{report:?}");
    assert_eq!(
        report.bytes_returned + report.bytes_cached,
        report.bytes_freed
    );
    assert_eq!(
        (report.bytes_returned % BLOCK, report.bytes_cached % BLOCK),
        (0, 0)
    );
    let memory = world.memory_report().memory;
    assert!(memory.process_cache_bytes <= ecs_core::__private::CACHED_BLOCKS * BLOCK);
    assert!(world
        .memory_report()
        .to_json()
        .contains("\"process_cache_bytes\":"));
    let survivors: Vec<u64> = ids
        .iter()
        .step_by(10)
        .map(|e| *world.get::<u64>(*e).unwrap())
        .collect();
    assert_eq!(survivors, (0..600_000u64).step_by(10).collect::<Vec<_>>());
}
