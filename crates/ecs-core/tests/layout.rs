//! Chunk layouts, checked through the public API, and entity-slot generation retirement.
//!
//! For archetypes with zero-sized, over-aligned, 1 KiB and mixed-size components, in worlds
//! with several chunk sizes: every column starts aligned for its type (in the layout and in
//! the real chunk memory), no column overlaps another or the entity column
//! (`0..capacity * 8`), everything fits in the chunk, and the capacity is the largest that
//! fits, recomputed here independently of `ChunkLayout`.

use std::num::NonZeroU32;

use ecs_core::{
    Archetype, ChunkLayout, ColumnSpec, Component, ComponentError, Entity, World, CHUNK_ALIGN,
    CHUNK_SIZE,
};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Zst;

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct ZstAligned;

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct A64(u64);

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(128))]
struct A128([u8; 3]);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Kib([u8; 1024]);

#[derive(Debug, Clone, Copy, PartialEq)]
struct B1(u8);

#[derive(Debug, Clone, Copy, PartialEq)]
struct B2(u16);

#[derive(Debug, Clone, Copy, PartialEq)]
struct B3([u8; 3]);

#[derive(Debug, Clone, Copy, PartialEq)]
struct B8(u64);

#[derive(Debug, Clone, Copy, PartialEq)]
struct B16(u128);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Odd([u16; 5]);

#[derive(Debug, Clone, PartialEq)]
struct Name(String);

const ENTITY: usize = size_of::<Entity>();

/// Whether `rows` rows of `columns` fit in `chunk_size` bytes when laid out as documented:
/// the entity column at 0, then each sized column in order at the next multiple of its
/// alignment. Written without `ChunkLayout` so it can check it.
fn fits(rows: usize, columns: &[ColumnSpec], chunk_size: usize) -> bool {
    let mut end = rows * ENTITY;
    for c in columns.iter().filter(|c| c.size > 0) {
        let misalign = end % c.align;
        if misalign != 0 {
            end += c.align - misalign;
        }
        end += rows * c.size;
    }
    end <= chunk_size
}

/// Like [`fits`], with every sized column starting at a multiple of `boundary` as well.
fn fits_on(boundary: usize, rows: usize, columns: &[ColumnSpec], chunk_size: usize) -> bool {
    let wider: Vec<ColumnSpec> = columns
        .iter()
        .map(|c| ColumnSpec {
            size: c.size,
            align: c.align.max(boundary),
        })
        .collect();
    fits(rows, &wider, chunk_size)
}

/// Checks a layout against its column specs: alignment, no overlap, fit, maximal capacity,
/// and columns on 16-byte boundaries whenever the full chunk has room for that padding.
fn check_layout(layout: &ChunkLayout, columns: &[ColumnSpec]) {
    let cap = layout.capacity();
    let size = layout.chunk_size();
    assert!(cap >= 1, "no row fits");
    assert_eq!(layout.columns(), columns.len());
    assert!(layout.align().is_power_of_two() && layout.align() >= CHUNK_ALIGN);
    let mut ranges = vec![(0, cap * ENTITY)];
    for (col, c) in columns.iter().enumerate() {
        let offset = layout.offset(col);
        assert_eq!(layout.size(col), c.size);
        assert_eq!(
            offset % c.align,
            0,
            "column {col} misaligned: {c:?} at {offset}"
        );
        assert!(
            layout.align() >= c.align,
            "chunk alignment below column {col}'s"
        );
        assert!(offset <= size);
        if c.size > 0 {
            ranges.push((offset, offset + cap * c.size));
        }
    }
    ranges.sort_unstable();
    for pair in ranges.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "columns overlap: {ranges:?}");
    }
    let end = ranges.last().expect("entity column").1;
    assert!(
        end <= size,
        "columns end at {end}, past the {size}-byte chunk"
    );
    assert!(fits(cap, columns, size));
    // A chunk above the default size may give up to 1/64 of its rows for aligned columns
    // that start apart within a page.
    let given_up = if size > CHUNK_SIZE { cap / 63 } else { 0 };
    assert!(
        !fits(cap + given_up + 1, columns, size),
        "capacity {cap} is not maximal for {columns:?} in {size} bytes"
    );
    if fits_on(16, cap, columns, size) {
        for (col, c) in columns.iter().enumerate().filter(|(_, c)| c.size > 0) {
            let offset = layout.offset(col);
            assert_eq!(
                offset % 16,
                0,
                "column {col} ({c:?}) at {offset} is not on 16 B"
            );
        }
    }
}

/// Checks one archetype of `world`: its layout, and the real column addresses of its chunks.
fn check_archetype(world: &World, arch: &Archetype) {
    let layout = arch.layout();
    assert_eq!(layout.chunk_size(), world.chunk_size());
    let infos: Vec<_> = arch
        .component_ids()
        .map(|id| world.components().info(id))
        .collect();
    let specs: Vec<ColumnSpec> = infos
        .iter()
        .map(|i| ColumnSpec {
            size: i.size(),
            align: i.align(),
        })
        .collect();
    check_layout(layout, &specs);
    for (col, info) in infos.iter().enumerate() {
        assert_eq!(arch.column(info.id()), Some(col));
    }
    let rebuilt = ChunkLayout::new(layout.chunk_size(), &specs).expect("fits");
    assert_eq!(rebuilt.capacity(), layout.capacity());
    for chunk in arch.chunks() {
        assert!(!chunk.is_empty() && chunk.len() <= layout.capacity());
        let base = chunk.entities().as_ptr() as usize;
        assert_eq!(base % layout.align(), 0, "chunk allocation misaligned");
        for (col, info) in infos.iter().enumerate() {
            let column = arch.column_base(chunk, col).as_ptr() as usize;
            assert_eq!(column, base + layout.offset(col));
            assert_eq!(
                column % info.align(),
                0,
                "{} column misaligned",
                info.name()
            );
        }
    }
}

/// `get::<T>` of every entity of `T`'s archetypes points into the right chunk column, at its
/// row, aligned for `T`.
fn check_cells<T: Component>(world: &World) {
    let Some(id) = world.component_id::<T>() else {
        return;
    };
    for arch in world.archetypes() {
        let Some(col) = arch.column(id) else { continue };
        for chunk in arch.chunks() {
            let base = arch.column_base(chunk, col).as_ptr() as usize;
            for (r, &e) in chunk.entities().iter().enumerate() {
                let cell = world.get::<T>(e).expect("present") as *const T as usize;
                assert_eq!(cell, base + r * size_of::<T>());
                assert_eq!(cell % align_of::<T>(), 0);
            }
        }
    }
}

/// Spawns `n` entities into each test archetype; bundles with `Kib` only when `big`.
fn populate(world: &mut World, n: u32, big: bool) {
    for i in 0..n {
        let b = i as u8;
        world.spawn(());
        world.spawn((Zst,));
        world.spawn((Zst, ZstAligned));
        world.spawn((ZstAligned, B1(b)));
        world.spawn((A64(i.into()), B1(b)));
        world.spawn((B1(b), A64(i.into()), B3([b; 3])));
        world.spawn((A128([b; 3]), B2(i as u16), Zst));
        world.spawn((B1(b), B2(2), B3([b; 3]), B8(8), B16(16), Odd([i as u16; 5])));
        world.spawn((Name(i.to_string()), B16(i.into())));
        if big {
            world.spawn((Kib([b; 1024]),));
            world.spawn((
                Kib([b; 1024]),
                A64(i.into()),
                Zst,
                B1(b),
                B2(2),
                B8(8),
                Name(i.to_string()),
            ));
        }
    }
}

fn check_world(world: &World) {
    world.check_invariants();
    for arch in world.archetypes() {
        check_archetype(world, arch);
    }
    check_cells::<Zst>(world);
    check_cells::<ZstAligned>(world);
    check_cells::<A64>(world);
    check_cells::<A128>(world);
    check_cells::<Kib>(world);
    check_cells::<B1>(world);
    check_cells::<B3>(world);
    check_cells::<B16>(world);
    check_cells::<Odd>(world);
    check_cells::<Name>(world);
}

#[test]
fn archetype_layouts_are_aligned_disjoint_and_maximal() {
    let n = if cfg!(miri) { 6 } else { 40 };
    let worlds = [
        (World::with_test_chunk_size(512), false),
        (World::with_test_chunk_size(2048), true),
        (World::with_chunk_size(4096).expect("valid"), true),
        (World::new(), true),
        (World::with_chunk_size(64 * 1024).expect("valid"), true),
    ];
    for (mut world, big) in worlds {
        populate(&mut world, n, big);
        check_world(&world);
        assert!(world.archetypes().len() >= if big { 11 } else { 9 });
        // Values survive being laid out this way (nothing written over a neighbour).
        for arch in world.archetypes() {
            for chunk in arch.chunks() {
                for &e in chunk.entities() {
                    if let (Ok(a), Ok(b)) = (world.get::<A64>(e), world.get::<B1>(e)) {
                        assert_eq!(a.0 as u8, b.0);
                    }
                    if let (Ok(o), Ok(b)) = (world.get::<Odd>(e), world.get::<B3>(e)) {
                        assert_eq!(o.0[4] as u8, b.0[2]);
                    }
                    if let (Ok(k), Ok(b)) = (world.get::<Kib>(e), world.get::<B1>(e)) {
                        assert!(k.0.iter().all(|&x| x == b.0));
                    }
                }
            }
        }
    }
}

#[test]
fn spare_bytes_put_columns_on_vector_boundaries() {
    // ecs_bench_suite's row: a 4x4 f32 matrix and three 3 x f32 vectors, 108 B with the id.
    let matrix = ColumnSpec { size: 64, align: 4 };
    let vector = ColumnSpec { size: 12, align: 4 };
    let columns = [matrix, vector, vector, vector];
    let layout = ChunkLayout::new(16 * 1024, &columns).unwrap();
    assert_eq!(
        layout.capacity(),
        16 * 1024 / 108,
        "spare bytes never cost a row"
    );
    for col in 0..columns.len() {
        let offset = layout.offset(col);
        assert_eq!(offset % 32, 0, "column {col} at {offset}");
    }
    check_layout(&layout, &columns);
}

#[test]
fn kib_row_does_not_fit_a_512_byte_chunk() {
    let mut world = World::with_test_chunk_size(512);
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.spawn((Kib([0; 1024]),));
    }))
    .expect_err("a 1 KiB row cannot fit 512 bytes");
    let msg = err.downcast_ref::<String>().expect("formatted message");
    assert!(msg.contains("Kib: 1024 B"), "{msg}");
    world.check_invariants();
}

fn column_spec() -> impl Strategy<Value = ColumnSpec> {
    (0u32..=8, 0usize..=24).prop_map(|(a, k)| {
        let align = 1usize << a;
        ColumnSpec {
            size: align * k,
            align,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 8 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Any column list either fits at least one row, with a sound layout, or is refused
    /// because one row cannot fit.
    #[test]
    fn chunk_layout_new_is_sound(
        columns in proptest::collection::vec(column_spec(), 0..8),
        shift in 7u32..=16,
    ) {
        let chunk_size = 1usize << shift;
        match ChunkLayout::new(chunk_size, &columns) {
            Some(layout) => {
                prop_assert_eq!(layout.chunk_size(), chunk_size);
                check_layout(&layout, &columns);
            }
            None => prop_assert!(!fits(1, &columns, chunk_size)),
        }
    }
}

// ----- generation retirement ------------------------------------------------------------------

const MAX: NonZeroU32 = NonZeroU32::MAX;

/// Asserts that no handle with `index` resolves, whatever its generation.
fn assert_index_dead(world: &World, index: u32) {
    for generation in [1, 2, u32::MAX - 1, u32::MAX] {
        let e = Entity::from_bits(u64::from(generation) << 32 | u64::from(index)).expect("gen");
        assert!(!world.contains(e), "{e:?} resolves");
        assert_eq!(world.get::<B1>(e), Err(ComponentError::NoSuchEntity(e)));
    }
}

/// Spawns, despawns, reserves and clears a lot, checking that `index` is never handed out.
fn churn_avoiding(world: &mut World, index: u32) {
    let rounds = if cfg!(miri) { 3 } else { 20 };
    for round in 0..rounds {
        let mut made: Vec<Entity> = (0..20).map(|i| world.spawn((B1(i),))).collect();
        made.extend(world.spawn_batch((0..30).map(|i| (B1(i), B2(round)))));
        let reserved = world.reserve_entity();
        world.flush();
        made.push(reserved);
        assert!(
            made.iter().all(|e| e.index() != index),
            "retired slot {index} handed out again"
        );
        assert_index_dead(world, index);
        for e in made.iter().step_by(2) {
            world.despawn(*e).unwrap();
        }
        if round % 5 == 4 {
            world.clear();
        }
        world.check_invariants();
    }
}

#[test]
fn slot_aged_to_max_is_used_once_then_retired() {
    let mut world = World::with_test_chunk_size(512);
    // A live neighbour, so the aged slot is not slot 0.
    world.spawn((B1(0),));
    let first = world.spawn((B1(1),));
    world.despawn(first).unwrap();
    world.set_slot_generation_for_tests(first.index(), MAX);
    let last = world.spawn((B1(2),));
    assert_eq!(last.index(), first.index(), "the aged slot is reused");
    assert_eq!(last.generation(), u32::MAX);
    assert!(!world.contains(first));
    assert_eq!(world.get::<B1>(last), Ok(&B1(2)));
    world.check_invariants();
    world.despawn(last).unwrap();
    world.check_invariants();
    assert!(!world.contains(last) && !world.contains(first));
    assert_eq!(
        world.get::<B1>(last),
        Err(ComponentError::NoSuchEntity(last))
    );
    churn_avoiding(&mut world, first.index());
    assert_eq!(world.despawn(last).map_err(|_| ()), Err(()));
}

#[test]
fn slot_reaching_max_by_despawn_is_used_once_then_retired() {
    let mut world = World::new();
    let a = world.spawn((B1(1),));
    world.despawn(a).unwrap();
    world.set_slot_generation_for_tests(a.index(), NonZeroU32::new(u32::MAX - 1).expect("nz"));
    let b = world.spawn((B1(2),));
    assert_eq!((b.index(), b.generation()), (a.index(), u32::MAX - 1));
    // Freed at MAX - 1: the slot moves to generation MAX and may be used once more.
    world.despawn(b).unwrap();
    world.check_invariants();
    let c = world.spawn((B1(3),));
    assert_eq!((c.index(), c.generation()), (a.index(), u32::MAX));
    assert!(!world.contains(a) && !world.contains(b));
    world.check_invariants();
    // `clear` frees it at MAX: retired.
    world.clear();
    world.check_invariants();
    assert!(!world.contains(c));
    churn_avoiding(&mut world, a.index());
}

#[test]
fn reserved_slot_at_max_is_retired_after_despawn() {
    let mut world = World::new();
    let a = world.spawn(());
    world.despawn(a).unwrap();
    world.set_slot_generation_for_tests(a.index(), MAX);
    let r = world.reserve_entity();
    assert_eq!((r.index(), r.generation()), (a.index(), u32::MAX));
    world.flush();
    assert!(world.contains(r));
    world.insert_one(r, B1(5)).unwrap();
    world.check_invariants();
    world.despawn(r).unwrap();
    world.check_invariants();
    assert_index_dead(&world, a.index());
    churn_avoiding(&mut world, a.index());
}
