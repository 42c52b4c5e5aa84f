//! The layout report as data: per-column padding, CSV and JSON exports that agree with it.

use ecs_core::{ColumnOrder, World};

#[derive(Clone, Copy)]
struct Wide(#[expect(dead_code, reason = "stored only for its bytes")] [u64; 3]);

/// Its type name has a comma, which the CSV must quote.
#[derive(Clone, Copy)]
struct Pair<A, B>(A, B);

fn world() -> World {
    let mut world = World::with_chunk_size(4096).unwrap();
    world.spawn_batch((0..500u32).map(|i| (i, 1u8, 2u64)));
    world.spawn_batch((0..100).map(|i| (i as u8, Pair(1u16, 'a'), Wide([0; 3]))));
    world.set_column_order(ColumnOrder::MinPadding);
    world.spawn_batch((0..300).map(|i| (i as u8, 1u64, 1u16)));
    world
}

#[test]
fn per_column_bytes_add_up_to_the_chunk() {
    let report = world().memory_report();
    assert_eq!(report.archetypes.len(), 3);
    for a in &report.archetypes {
        let rows: usize = a.capacity * (8 + a.columns.iter().map(|c| c.size).sum::<usize>());
        assert_eq!(rows + a.padding_bytes + a.tail_bytes, a.chunk_size, "{a:?}");
        for c in &a.columns {
            assert_eq!(c.offset % c.achieved_align, 0);
            assert!(c.achieved_align >= c.align);
        }
        let all: Vec<usize> = (0..a.columns.len()).collect();
        assert_eq!(a.footprint(&all, true), a.pass);
        assert!(a.pass.bytes == a.entities * (8 + a.columns.iter().map(|c| c.size).sum::<usize>()));
    }
    assert_eq!(report.archetypes[2].column_order, "min-padding");
    assert_eq!(report.archetypes[0].column_order, "registration");
}

#[test]
fn csv_has_one_line_per_column_and_fixed_fields() {
    let report = world().memory_report();
    let csv = report.to_csv();
    let columns: usize = report.archetypes.iter().map(|a| a.columns.len()).sum();
    assert_eq!(csv.lines().count(), columns + 1);
    let fields = |line: &str| {
        // Commas inside the quoted type name do not separate fields.
        let mut quoted = false;
        1 + line
            .chars()
            .filter(|&ch| {
                if ch == '"' {
                    quoted = !quoted;
                }
                ch == ',' && !quoted
            })
            .count()
    };
    let header = fields(csv.lines().next().unwrap());
    assert!(csv.lines().all(|l| fields(l) == header), "{csv}");
    assert!(csv.contains("Pair<u16, char>\""));
}

#[test]
fn json_is_balanced_and_names_every_column() {
    let report = world().memory_report();
    let json = report.to_json();
    let (mut depth, mut in_str, mut escaped) = (0i32, false, false);
    for ch in json.chars() {
        match (in_str, escaped, ch) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_str = !in_str,
            (false, _, '{' | '[') => depth += 1,
            (false, _, '}' | ']') => depth -= 1,
            _ => {}
        }
        assert!(depth >= 0);
    }
    assert_eq!((depth, in_str), (0, false));
    assert_eq!(json.matches("\"name\":").count(), 9);
    assert!(json.contains(&format!("\"total\":{}", report.memory.total())));
}
