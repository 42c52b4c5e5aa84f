//! `ChunkLayout::new` for random chunk sizes and column sizes / alignments.
//!
//! Checked against an independent packing of the same columns: every column aligned, columns
//! (and the entity column) disjoint, everything within the chunk, capacity at least one and
//! maximal (one more row does not fit), and `None` exactly when not even one row fits. A chunk
//! above `CHUNK_SIZE` may hold up to 1/64 fewer rows than the maximum, and only when those rows
//! buy every column a start on a 16-byte (or wider) boundary (and, for at most 1/256 of them,
//! nothing more; the rest buys column starts apart within a 4 KiB page).
//!
//! Column sizes are multiples of their alignment, as for every Rust type (a size that is not
//! would misalign every row after the first, whatever the layout).

#![no_main]

use ecs_core::{ChunkLayout, ColumnSpec, CHUNK_ALIGN, CHUNK_SIZE};
use ecs_fuzz::Input;
use libfuzzer_sys::fuzz_target;

const ENTITY: usize = 8;

/// The end of the last column when every column holds `rows` rows, packed in order after the
/// entity column, each at the next multiple of its alignment; zero-sized columns take nothing.
fn end(rows: usize, cols: &[ColumnSpec]) -> usize {
    cols.iter()
        .filter(|c| c.size > 0)
        .fold(rows * ENTITY, |end, c| {
            end.next_multiple_of(c.align) + rows * c.size
        })
}

fn decode(input: &mut Input<'_>) -> (usize, Vec<ColumnSpec>) {
    let mode = input.u8();
    let chunk_size = if mode & 1 == 0 {
        1 << (7 + usize::from(mode >> 1) % 14)
    } else {
        input.u32() as usize % (1 << 21)
    };
    let n = usize::from(input.u8() % 13);
    let cols = (0..n)
        .map(|_| {
            let kind = input.u8();
            let align = 1 << (kind % 13);
            let size = match kind >> 6 {
                0 => 0,
                1 => align * usize::from(1 + input.u8() % 4),
                _ => align * (1 + usize::from(input.u16()) % 1024),
            };
            ColumnSpec { size, align }
        })
        .collect();
    (chunk_size, cols)
}

fuzz_target!(|data: &[u8]| {
    let (chunk_size, cols) = decode(&mut Input::new(data));
    let Some(layout) = ChunkLayout::new(chunk_size, &cols) else {
        assert!(
            end(1, &cols) > chunk_size,
            "refused a layout where one row fits: {chunk_size} {cols:?}"
        );
        return;
    };
    let cap = layout.capacity();
    assert!(cap >= 1, "capacity 0");
    assert!(end(cap, &cols) <= chunk_size, "capacity {cap} does not fit");
    let most = (cap..)
        .take_while(|&n| end(n, &cols) <= chunk_size)
        .last()
        .expect("`cap` rows fit");
    let may_give_up = if chunk_size > CHUNK_SIZE {
        most / 64
    } else {
        0
    };
    assert!(
        most - cap <= may_give_up,
        "capacity {cap} not maximal: {most} rows fit in {chunk_size}"
    );
    if cap < most {
        for (c, spec) in cols.iter().enumerate().filter(|(_, s)| s.size > 0) {
            let offset = layout.offset(c);
            assert_eq!(
                offset % 16,
                0,
                "gave up {} rows, yet column {c} starts at {offset}",
                most - cap
            );
        }
    }
    if most - cap > most / 256 {
        // Rows beyond the cache-line budget buy column starts apart within a page.
        let streams = 1 + cols.iter().filter(|s| s.size > 0).count();
        let gap = (4096 / streams / 2).min(512);
        let starts: Vec<usize> = std::iter::once(0)
            .chain(
                (0..cols.len())
                    .filter(|&c| cols[c].size > 0)
                    .map(|c| layout.offset(c)),
            )
            .collect();
        for (i, &a) in starts.iter().enumerate() {
            for &b in &starts[..i] {
                let d = (a % 4096).abs_diff(b % 4096);
                assert!(
                    d.min(4096 - d) >= gap,
                    "gave up {} rows, yet columns start {a} and {b}",
                    most - cap
                );
            }
        }
    }
    assert_eq!(layout.chunk_size(), chunk_size);
    assert_eq!(layout.columns(), cols.len());
    assert!(layout.align().is_power_of_two() && layout.align() >= CHUNK_ALIGN);

    let mut ranges = vec![(0, cap * ENTITY)];
    let mut used = cap * ENTITY;
    for (c, spec) in cols.iter().enumerate() {
        let offset = layout.offset(c);
        assert_eq!(layout.size(c), spec.size);
        assert!(
            layout.align() >= spec.align,
            "chunk alignment below column {c}'s"
        );
        assert_eq!(offset % spec.align, 0, "column {c} misaligned: {offset}");
        if spec.size == 0 {
            assert_eq!(offset, 0, "zero-sized column {c} not at 0");
        } else {
            let end = offset + cap * spec.size;
            assert!(
                end <= chunk_size,
                "column {c} ends at {end} past {chunk_size}"
            );
            ranges.push((offset, end));
            used += cap * spec.size;
        }
    }
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        assert!(w[0].1 <= w[1].0, "columns overlap: {ranges:?}");
    }
    assert_eq!(layout.unused_bytes_when_full(), chunk_size - used);
});
