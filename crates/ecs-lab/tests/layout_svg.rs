//! The per-archetype layout drawing: one bar per drawn chunk, bands where the layout puts
//! the columns, distinct colours for many types, and readable at 4 KiB and 1 MiB.

use ecs_core::{ChunkPolicy, World};
use ecs_lab::{layout_svg, layout_svg_with, LayoutDrawing};

macro_rules! types {
    ($($name:ident($ty:ty)),*) => { $( #[derive(Clone, Copy)] struct $name(#[allow(dead_code)] $ty); )* };
}
types!(
    T1(u8),
    T2(u16),
    T3(u32),
    T4(u64),
    T5([u8; 3]),
    T6([u8; 5]),
    T7([u16; 3])
);
types!(
    T8([u32; 3]),
    T9([u64; 2]),
    T10([u8; 12]),
    T11(f32),
    T12(f64),
    T13([f32; 4]),
    T14(u128)
);

fn world(chunk: usize, n: usize) -> World {
    let mut w = World::with_chunk_policy(ChunkPolicy::Fixed(chunk)).unwrap();
    w.spawn_batch((0..n).map(|i| {
        let b = i as u8;
        (
            T1(b),
            T2(b.into()),
            T3(b.into()),
            T4(b.into()),
            T5([b; 3]),
            T6([b; 5]),
            T7([b.into(); 3]),
        )
    }))
    .for_each(drop);
    w.spawn_batch((0..n / 2).map(|i| {
        let b = i as u8;
        (
            T8([b.into(); 3]),
            T9([b.into(); 2]),
            T10([b; 12]),
            T11(1.0),
            T12(2.0),
            T13([3.0; 4]),
            T14(b.into()),
        )
    }))
    .for_each(drop);
    w
}

/// The distinct `fill` colours of the legend's swatches.
fn legend_fills(svg: &str) -> Vec<String> {
    let mut fills: Vec<String> = svg
        .lines()
        .filter(|l| l.starts_with("<rect") && l.contains("width=\"12\" height=\"12\""))
        .map(|l| {
            l.split("fill=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    let n = fills.len();
    fills.sort();
    fills.dedup();
    assert_eq!(fills.len(), n, "a colour repeats");
    fills
}

#[test]
fn fourteen_types_get_fifteen_distinct_colours_at_4_kib_and_1_mib() {
    for (chunk, n) in [(4096, 2000), (1 << 20, 40_000)] {
        let w = world(chunk, n);
        let svg = layout_svg(&w);
        assert_eq!(
            legend_fills(&svg).len(),
            15,
            "14 types and the entity column"
        );
        for t in 1..=14 {
            assert!(svg.contains(&format!(">T{t}</text>")), "legend lacks T{t}");
        }
        // Five ticks per archetype, labelled at this chunk's scale.
        let full = if chunk == 4096 {
            ">4 KiB</text>"
        } else {
            ">1 MiB</text>"
        };
        assert_eq!(svg.matches(full).count(), 2);
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}

#[test]
fn at_most_max_chunks_bars_and_the_rest_counted() {
    let w = world(4096, 2000);
    let report = w.memory_report();
    let chunks: Vec<usize> = report.archetypes.iter().map(|a| a.chunks).collect();
    assert!(chunks.iter().all(|&c| c > 3), "{chunks:?}");
    let svg = layout_svg_with(
        &w,
        &LayoutDrawing {
            max_chunks: 3,
            ..LayoutDrawing::default()
        },
    );
    assert_eq!(svg.matches("class=\"chunk\"").count(), 2 * 3);
    for c in chunks {
        assert!(svg.contains(&format!("… and {} more chunks", c - 3)), "{c}");
    }
}

#[test]
fn bands_sit_at_the_layout_offsets() {
    let w = world(16384, 300);
    let svg = layout_svg_with(
        &w,
        &LayoutDrawing {
            max_chunks: 1,
            bar_width: 1638.4,
        },
    );
    // 0.1 px per byte: the band of each column starts at 190 + offset / 10.
    for arch in w.archetypes().iter().filter(|a| !a.is_empty()) {
        let l = arch.layout();
        for (c, (_, size)) in arch.component_names().enumerate() {
            if size > 0 {
                let x = format!("<rect x=\"{:.2}\"", 190.0 + l.offset(c) as f64 / 10.0);
                assert!(svg.contains(&x), "column {c} at {}", l.offset(c));
            }
        }
    }
}
