//! `ArchetypeLayout::footprint` and the report's passes count *distinct* cache lines and pages,
//! the ones the slices `for_each_chunk` hands out really touch, for several layouts and sizes.

use std::collections::HashSet;

use ecs_core::{Component, World};
use ecs_query::{QueryExt, RefRO};

/// Distinct 64-byte lines and 4 KiB pages of `ranges` (address, bytes).
fn distinct(ranges: &[(usize, usize)]) -> (usize, usize, usize) {
    let mut lines = HashSet::new();
    let mut pages = HashSet::new();
    let mut bytes = 0;
    for &(start, len) in ranges {
        bytes += len;
        if len > 0 {
            // Every line and page from the first byte's to the last byte's (a set, so shared
            // ones count once: an independent count from the report's interval merge).
            lines.extend(start / 64..=(start + len - 1) / 64);
            pages.extend(start / 4096..=(start + len - 1) / 4096);
        }
    }
    (bytes, lines.len(), pages.len())
}

fn range<T>(slice: &[T]) -> (usize, usize) {
    (slice.as_ptr().addr(), std::mem::size_of_val(slice))
}

/// Compares the report's footprints with the slices of a two-column query.
fn check<A: Component + Clone, B: Component + Clone>(chunk: usize, n: usize, a: A, b: B) {
    let mut world = World::with_test_chunk_size(chunk);
    world
        .spawn_batch((0..n).map(|_| (a.clone(), b.clone())))
        .for_each(drop);
    let (mut ents, mut cols_a, mut cols_b) = (Vec::new(), Vec::new(), Vec::new());
    world
        .query::<(RefRO<A>, RefRO<B>)>()
        .for_each_chunk(|view| {
            ents.push(range(view.entities()));
            cols_a.push(range(view.column::<A>()));
            cols_b.push(range(view.column::<B>()));
        });
    let report = world.memory_report();
    let arch = &report.archetypes[0];
    // Column numbers as `Archetype::column` gives them, which the report's columns follow.
    let archetype = &world.archetypes()[arch.id.index()];
    let column = |id| archetype.column(id).expect("the archetype has the column");
    let ia = column(world.component_id::<A>().unwrap());
    let ib = column(world.component_id::<B>().unwrap());
    let got = |f: ecs_core::Footprint| (f.bytes, f.cache_lines, f.pages);
    let what = format!(
        "chunk {chunk}, {n} rows of {}",
        arch.components
            .iter()
            .map(|c| c.0)
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_eq!(
        got(arch.footprint(&[ia], false)),
        distinct(&cols_a),
        "{what}: column a"
    );
    assert_eq!(
        got(arch.columns[ib].pass),
        distinct(&cols_b),
        "{what}: column b"
    );
    let both: Vec<_> = cols_a.iter().chain(&cols_b).copied().collect();
    assert_eq!(
        got(arch.footprint(&[ia, ib], false)),
        distinct(&both),
        "{what}: a and b"
    );
    let all: Vec<_> = both.iter().chain(&ents).copied().collect();
    assert_eq!(
        got(arch.footprint(&[ia, ib], true)),
        distinct(&all),
        "{what}: full"
    );
    assert_eq!(got(arch.pass), distinct(&all), "{what}: pass");
    assert_eq!(got(arch.entity_pass), distinct(&ents), "{what}: entities");
}

#[test]
fn one_small_chunk_counts_its_one_page_once() {
    // The outside review's case: one 4 KiB chunk with a `u32` and an `f32` column is one page,
    // not one per column (nor three for a full pass).
    let mut world = World::with_chunk_size(4096).unwrap();
    world
        .spawn_batch((0..10u32).map(|i| (i, i as f32)))
        .for_each(drop);
    let report = world.memory_report();
    let arch = &report.archetypes[0];
    assert_eq!(arch.footprint(&[0, 1], false).pages, 1);
    assert_eq!(arch.pass.pages, 1);
    check(4096, 10, 1u32, 2.0f32);
}

#[test]
fn footprints_are_distinct_counts_of_real_addresses() {
    let rows: &[usize] = if cfg!(miri) { &[1, 70] } else { &[1, 70, 3000] };
    let chunks: &[usize] = if cfg!(miri) {
        &[1024, 4096]
    } else {
        &[1024, 4096, 16384, 65536]
    };
    for &chunk in chunks {
        for &n in rows {
            check(chunk, n, 1u32, 2.0f32);
            check(chunk, n, 7u64, 3u8);
            check(chunk, n, [1u8; 3], [2u16; 5]);
        }
    }
}
