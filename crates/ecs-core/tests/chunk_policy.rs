//! Chunk size per archetype and column order: sizes chosen, rows moved between archetypes of
//! different sizes, snapshots, and the padding-minimising order against registration order.

use ecs_core::{
    ChunkLayout, ChunkPolicy, ColumnOrder, ColumnSpec, Entity, World, WorldError, MAX_CHUNK_SIZE,
    MIN_CHUNK_SIZE,
};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos([f32; 3]);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Big([u64; 16]);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag(u8);

fn chunk_size_of(world: &World, e: Entity) -> usize {
    let arch = world.location(e).unwrap().archetype;
    world.archetypes()[arch.index()].layout().chunk_size()
}

#[test]
fn min_rows_picks_the_smallest_power_of_two_that_holds_them() {
    let mut world = World::with_chunk_policy(ChunkPolicy::MinRows(1000)).unwrap();
    let small = world.spawn((Tag(1),)); // 9-byte rows: 4 KiB holds 455, 16 KiB 1820
    let big = world.spawn((Big([1; 16]),)); // 136-byte rows: 256 KiB holds 1927
    assert_eq!(chunk_size_of(&world, small), 16 * 1024);
    assert_eq!(chunk_size_of(&world, big), 256 * 1024);
    for arch in world.archetypes().iter().filter(|a| !a.is_empty()) {
        let l = arch.layout();
        assert!(l.capacity() >= 1000);
        let half = ChunkLayout::new(l.chunk_size() / 2, &specs_of(&world, arch));
        assert!(half.is_none_or(|h| h.capacity() < 1000), "not the smallest");
    }
    world.check_invariants();
}

fn specs_of(world: &World, arch: &ecs_core::Archetype) -> Vec<ColumnSpec> {
    arch.component_ids()
        .map(|id| {
            let i = world.components().info(id);
            ColumnSpec {
                size: i.size(),
                align: i.align(),
            }
        })
        .collect()
}

#[test]
fn min_rows_beyond_one_mib_takes_the_largest_chunk() {
    let mut world = World::with_chunk_policy(ChunkPolicy::MinRows(1 << 30)).unwrap();
    let e = world.spawn((Pos([0.0; 3]),));
    assert_eq!(chunk_size_of(&world, e), MAX_CHUNK_SIZE);
}

#[test]
fn invalid_sizes_are_typed_errors() {
    for bytes in [
        0,
        1000,
        MIN_CHUNK_SIZE / 2,
        MIN_CHUNK_SIZE + 1,
        MAX_CHUNK_SIZE * 2,
    ] {
        assert_eq!(
            World::with_chunk_policy(ChunkPolicy::Fixed(bytes)).unwrap_err(),
            WorldError::InvalidChunkSize(bytes)
        );
        let mut world = World::new();
        assert_eq!(
            world.set_chunk_size_for::<(Pos,)>(bytes),
            Err(WorldError::InvalidChunkSize(bytes))
        );
        assert_eq!(
            world.set_chunk_policy(ChunkPolicy::Fixed(bytes)),
            Err(WorldError::InvalidChunkSize(bytes))
        );
        assert_eq!(world.chunk_policy(), ChunkPolicy::Fixed(16 * 1024));
    }
    assert_eq!(
        World::with_chunk_policy(ChunkPolicy::MinRows(0)).unwrap_err(),
        WorldError::ZeroMinRows
    );
}

#[test]
fn rows_keep_values_and_ids_across_chunk_sizes() {
    let mut world = World::with_chunk_size(4096).unwrap();
    world.set_chunk_size_for::<(Pos, Big)>(64 * 1024).unwrap();
    world
        .set_chunk_size_for::<(Pos, Big, Tag)>(MAX_CHUNK_SIZE)
        .unwrap();
    world.set_column_order(ColumnOrder::MinPadding);
    let ids: Vec<Entity> = world
        .spawn_batch((0..if cfg!(miri) { 200 } else { 2000 }).map(|i| (Pos([i as f32; 3]),)))
        .collect();
    assert_eq!(chunk_size_of(&world, ids[0]), 4096);
    for (i, &e) in ids.iter().enumerate().step_by(3) {
        world.insert(e, (Big([i as u64; 16]),)).unwrap();
    }
    assert_eq!(chunk_size_of(&world, ids[0]), 64 * 1024);
    for (i, &e) in ids.iter().enumerate().step_by(6) {
        world.insert(e, (Tag(i as u8),)).unwrap();
    }
    assert_eq!(chunk_size_of(&world, ids[0]), MAX_CHUNK_SIZE);
    world.check_invariants();
    for &e in ids.iter().step_by(4) {
        let _ = world.remove::<(Big,)>(e);
    }
    world.check_invariants();
    for (i, &e) in ids.iter().enumerate() {
        assert_eq!(world.get::<Pos>(e), Ok(&Pos([i as f32; 3])), "{i}");
        let big = i % 3 == 0 && i % 4 != 0;
        assert_eq!(
            world.get::<Big>(e).ok(),
            big.then_some(&Big([i as u64; 16]))
        );
        let tagged = i % 6 == 0;
        assert_eq!(world.get::<Tag>(e).ok(), tagged.then_some(&Tag(i as u8)));
    }
    let sizes: std::collections::BTreeSet<usize> = world
        .memory_report()
        .archetypes
        .iter()
        .map(|a| a.chunk_size)
        .collect();
    assert_eq!(
        sizes.into_iter().collect::<Vec<_>>(),
        [4096, 64 * 1024, MAX_CHUNK_SIZE]
    );
}

#[test]
fn set_chunk_size_for_refuses_an_existing_archetype() {
    let mut world = World::new();
    let e = world.spawn((Pos([0.0; 3]), Tag(0)));
    let arch = world.location(e).unwrap().archetype;
    assert_eq!(
        world.set_chunk_size_for::<(Tag, Pos)>(4096),
        Err(WorldError::ArchetypeExists(arch))
    );
}

#[test]
fn snapshots_restore_into_per_archetype_sizes() {
    // Natively 3000 rows from default 16 KiB chunks into `MinRows(2000)` chunks (64 KiB);
    // under Miri 300 rows from 1 KiB chunks into `MinRows(200)` chunks (4 KiB). Either way
    // the saved rows span several chunks (asserted below).
    let (n, min_rows, restored_size, mut world) = if cfg!(miri) {
        (300u32, 200, 4096, World::with_test_chunk_size(1024))
    } else {
        (3000, 2000, 64 * 1024, World::new())
    };
    world.register_pod::<u32>();
    world.register_pod::<u64>();
    let ids: Vec<Entity> = world
        .spawn_batch((0..n).map(|i| (i, u64::from(i) * 3)))
        .collect();
    let chunks_of = |w: &World| {
        w.archetypes()[w.location(ids[0]).unwrap().archetype.index()]
            .chunks()
            .len()
    };
    assert!(chunks_of(&world) > 1, "the saved rows span chunks");
    let snap = world.snapshot().unwrap();
    let mut other = World::with_chunk_policy(ChunkPolicy::MinRows(min_rows)).unwrap();
    other.register_pod::<u32>();
    other.register_pod::<u64>();
    other.set_column_order(ColumnOrder::First(vec![other
        .component_id::<u64>()
        .unwrap()]));
    other.restore(&snap).unwrap();
    other.check_invariants();
    assert_eq!(chunk_size_of(&other, ids[0]), restored_size);
    for (i, &e) in ids.iter().enumerate() {
        assert_eq!(other.get::<u32>(e), Ok(&(i as u32)));
        assert_eq!(other.get::<u64>(e), Ok(&(i as u64 * 3)));
    }
    assert_eq!(
        other.memory_report().archetypes[0].column_order,
        "chosen-first"
    );
}

/// Random column mixes: sizes 0..=300 in multiples of their alignment (1..=64).
fn specs() -> impl Strategy<Value = Vec<ColumnSpec>> {
    prop::collection::vec(
        (0u32..=6, 0usize..=40).prop_map(|(a, n)| {
            let align = 1usize << a;
            ColumnSpec {
                size: (n * align).min(300 / align * align),
                align,
            }
        }),
        1..10,
    )
}

proptest! {
    // Layout arithmetic only (no unsafe, no chunk memory), and proptest's failure files need
    // the file system Miri isolates: not run under Miri.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn min_padding_never_holds_fewer_rows(
        cols in specs(),
        size in prop::sample::select(vec![4096usize, 16 * 1024, 256 * 1024]),
    ) {
        let Some(reg) = ChunkLayout::new(size, &cols) else { return Ok(()) };
        let min = ColumnOrder::MinPadding.layout(size, &cols, &[]).expect("registration fits");
        prop_assert!(min.capacity() >= reg.capacity());
        // Still a valid layout: aligned, disjoint, inside the chunk.
        let cap = min.capacity();
        let mut ranges = vec![(0, cap * 8)];
        for (c, s) in cols.iter().enumerate().filter(|(_, s)| s.size > 0) {
            prop_assert_eq!(min.offset(c) % s.align, 0);
            ranges.push((min.offset(c), min.offset(c) + cap * s.size));
        }
        ranges.sort_unstable();
        prop_assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0));
        prop_assert!(ranges.last().unwrap().1 <= size);
    }
}

/// Every column of every chunk of `world`'s archetypes, as (address, size) pairs.
fn column_addresses(world: &World) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for arch in world.archetypes().iter() {
        let layout = arch.layout();
        for chunk in arch.chunks() {
            let base = chunk.column_at(0).addr();
            let ids: Vec<_> = arch.component_ids().collect();
            for (c, id) in ids.iter().enumerate() {
                let size = world.components().info(*id).size();
                out.push((base + layout.offset(c), size));
            }
        }
    }
    out
}

#[test]
fn a_column_alignment_starts_every_array_on_it_and_rows_move_intact() {
    let mut plain = World::with_chunk_policy(ChunkPolicy::Fixed(4096)).unwrap();
    let mut aligned = World::with_chunk_policy(ChunkPolicy::Fixed(4096)).unwrap();
    aligned.set_column_alignment(64).unwrap();
    let mut ids = Vec::new();
    for world in [&mut plain, &mut aligned] {
        let spawned: Vec<Entity> = world
            .spawn_batch((0..1000u32).map(|i| (Tag(i as u8), Pos([i as f32; 3]))))
            .collect();
        // Half of them move into a second archetype (new columns, new layout) and back.
        for &e in spawned.iter().step_by(2) {
            world.insert_one(e, Big([7; 16])).unwrap();
        }
        for &e in spawned.iter().step_by(4) {
            world.remove::<(Big,)>(e).unwrap();
        }
        ids.push(spawned);
    }
    for (c, (addr, size)) in column_addresses(&aligned).into_iter().enumerate() {
        assert!(size == 0 || addr % 64 == 0, "column {c} at {addr:#x}");
    }
    // Without the setting a 1-byte column after 8-byte ids lands off a line in a full chunk.
    assert!(column_addresses(&plain)
        .iter()
        .any(|&(addr, size)| size > 0 && addr % 64 != 0));
    // Alignment may cost rows, never values.
    for arch in aligned.archetypes().iter().filter(|a| !a.is_empty()) {
        let twin = plain
            .archetypes()
            .iter()
            .find(|p| p.component_ids().eq(arch.component_ids()))
            .unwrap();
        assert!(arch.layout().capacity() <= twin.layout().capacity());
    }
    for (i, &e) in ids[1].iter().enumerate() {
        assert_eq!(aligned.get::<Pos>(e), Ok(&Pos([i as f32; 3])));
        assert_eq!(aligned.get::<Tag>(e), Ok(&Tag(i as u8)));
        assert_eq!(aligned.get::<Big>(e).is_ok(), i % 2 == 0 && i % 4 != 0);
    }
    aligned.check_invariants();
    for bad in [0, 3, 48, 8192] {
        assert_eq!(
            aligned.set_column_alignment(bad),
            Err(WorldError::InvalidColumnAlignment(bad))
        );
    }
    assert_eq!(aligned.column_alignment(), 64);
}

/// `ChunkPolicy::FitBatch`: a batch of more than 128 KiB of rows creates its archetype with
/// `batch_chunk_size` chunks in a world that asked for the policy, and in no other case (a
/// default world keeps 16 KiB); rows, moves and snapshots work across the two sizes.
#[test]
fn a_large_batch_creates_its_archetype_with_large_chunks_only_under_fit_batch() {
    use ecs_core::batch_chunk_size;
    // 20-byte rows (`Pos` and the entity id): 4 MiB of them ask for 1 MiB chunks, 256 KiB of
    // them for one chunk of a seventh of a pool block; the rule asks for more than 16 KiB
    // from just past 128 KiB.
    let large = 4 << 20;
    let rows = large / 20;
    assert_eq!(batch_chunk_size(rows * 20), 1 << 20);
    let seventh = (2 << 20) / 7 / 64 * 64;
    assert_eq!(batch_chunk_size(256 << 10), seventh);
    let at_bound = (128 << 10) / 20;
    let batch = |world: &mut World, n: usize| -> Vec<Entity> {
        world
            .spawn_batch((0..n).map(|i| (Pos([i as f32, 1.0, 2.0]),)))
            .collect()
    };

    let fit = || World::with_chunk_policy(ChunkPolicy::FitBatch).unwrap();
    let mut world = fit();
    let below = batch(&mut world, at_bound);
    assert_eq!(
        chunk_size_of(&world, below[0]),
        16 * 1024,
        "128 KiB of rows"
    );
    let mut world = fit();
    let above = batch(&mut world, at_bound * 2);
    assert_eq!(chunk_size_of(&world, above[0]), seventh, "256 KiB of rows");
    let chunks_of = |world: &World, e: Entity| {
        let arch = world.location(e).unwrap().archetype;
        world.archetypes()[arch.index()].chunks().len()
    };
    assert_eq!(chunks_of(&world, above[0]), 1, "the fewest chunks");
    let mut default = World::new();
    let e = batch(&mut default, rows)[0];
    assert_eq!(
        chunk_size_of(&default, e),
        16 * 1024,
        "the default is fixed"
    );
    let mut world = fit();
    let ids = batch(&mut world, rows);
    assert_eq!(chunk_size_of(&world, ids[0]), 1 << 20);
    // An existing archetype keeps its size, whatever the next batch.
    let mut small_first = fit();
    let first = batch(&mut small_first, 10);
    batch(&mut small_first, rows);
    assert_eq!(chunk_size_of(&small_first, first[0]), 16 * 1024);
    // A chosen size or policy is kept to, and the rule can be turned off.
    let mut chosen = World::with_chunk_size(16 * 1024).unwrap();
    let e = batch(&mut chosen, rows)[0];
    assert_eq!(chunk_size_of(&chosen, e), 16 * 1024);
    let mut set = fit();
    set.set_chunk_policy(ChunkPolicy::Fixed(16 * 1024)).unwrap();
    let e = batch(&mut set, rows)[0];
    assert_eq!(chunk_size_of(&set, e), 16 * 1024);
    let mut off = fit();
    off.set_large_batch_chunks(false);
    let e = batch(&mut off, rows)[0];
    assert_eq!(chunk_size_of(&off, e), 16 * 1024);
    let mut sized = fit();
    sized.set_chunk_size_for::<(Pos,)>(64 * 1024).unwrap();
    let e = batch(&mut sized, rows)[0];
    assert_eq!(chunk_size_of(&sized, e), 64 * 1024);

    // Rows moved out of the large-chunk archetype land in a 16 KiB one, and back.
    let moved = ids[rows / 2];
    world.insert(moved, (Tag(3),)).unwrap();
    assert_eq!(chunk_size_of(&world, moved), 16 * 1024);
    assert_eq!(world.get::<Pos>(moved).unwrap().0[0], (rows / 2) as f32);
    world.remove::<(Tag,)>(moved).unwrap();
    assert_eq!(chunk_size_of(&world, moved), 1 << 20);
    world.despawn(ids[0]).unwrap();
    world.check_invariants();

    // A snapshot restores into a world of 16 KiB chunks: the same world, the same hash.
    world.register_clone::<Pos>();
    let snap = world.snapshot().unwrap();
    let mut other = World::with_chunk_size(16 * 1024).unwrap();
    other.register_clone::<Pos>();
    other.restore(&snap).unwrap();
    other.check_invariants();
    assert_eq!(other.state_hash(), world.state_hash());
    assert_eq!(other.get::<Pos>(moved), world.get::<Pos>(moved));
}
