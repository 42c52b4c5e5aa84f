//! A layout report as text: the `Display` tables, JSON pieces, and short type names.

use std::fmt::{self, Write as _};

use super::layout::{Footprint, WorldLayout};
use super::memory::MEMORY_BYTES;

impl WorldLayout {
    /// One CSV line per column of every non-empty archetype, after a header line.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// let csv = world.memory_report().to_csv();
    /// assert!(csv.starts_with("archetype,chunk_size,"));
    /// assert_eq!(csv.lines().count(), 2);
    /// ```
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "archetype,chunk_size,column_order,capacity,chunks,entities,padding_bytes,tail_bytes,\
             rows_lost_to_padding,column,name,size,align,offset,achieved_align,padding_before,\
             pass_bytes,pass_cache_lines,pass_pages\n",
        );
        for a in &self.archetypes {
            for (c, col) in a.columns.iter().enumerate() {
                // Type names may hold commas (tuples, generics): quote them.
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{c},\"{}\",{},{},{},{},{},{},{},{}",
                    a.id.index(),
                    a.chunk_size,
                    a.column_order,
                    a.capacity,
                    a.chunks,
                    a.entities,
                    a.padding_bytes,
                    a.tail_bytes,
                    a.rows_lost_to_padding,
                    col.name.replace('"', "\"\""),
                    col.size,
                    col.align,
                    col.offset,
                    col.achieved_align,
                    col.padding_before,
                    col.pass.bytes,
                    col.pass.cache_lines,
                    col.pass.pages,
                );
            }
        }
        out
    }

    /// The whole report as one JSON object.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// let json = world.memory_report().to_json();
    /// assert!(json.starts_with("{\"chunk_size\":16384,"));
    /// assert!(json.contains("\"name\":\"u32\""));
    /// ```
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        let m = &self.memory;
        let _ = write!(
            out,
            "{{\"chunk_size\":{},\"policy\":{},\"memory\":{{",
            self.chunk_size,
            json_str(&format!("{:?}", self.policy)),
        );
        for (name, _, bytes) in MEMORY_BYTES {
            let _ = write!(out, "\"{name}\":{},", bytes(m));
        }
        let _ = write!(
            out,
            "\"empty_archetypes\":{},\"compaction_frees_bytes\":{},\"process_cache_bytes\":{},\
             \"huge_page_bytes\":{},\"total\":{}}},\"archetypes\":[",
            m.empty_archetypes,
            m.compaction_frees_bytes,
            m.process_cache_bytes,
            m.huge_page_bytes
                .map_or_else(|| "null".to_owned(), |b| b.to_string()),
            m.total()
        );
        for (i, a) in self.archetypes.iter().enumerate() {
            let _ = write!(
                out,
                "{}{{\"id\":{},\"chunk_size\":{},\"column_order\":{},\"capacity\":{},\
                 \"chunks\":{},\"spare_chunks\":{},\"entities\":{},\"fill_percent\":{:.3},\
                 \"bytes_unused\":{},\"padding_bytes\":{},\"tail_bytes\":{},\
                 \"rows_lost_to_padding\":{},\"disabled_rows\":{},\"pass\":{},\"entity_pass\":{},\"columns\":[",
                if i == 0 { "" } else { "," },
                a.id.index(),
                a.chunk_size,
                json_str(a.column_order),
                a.capacity,
                a.chunks,
                a.spare_chunks,
                a.entities,
                a.fill_percent,
                a.bytes_unused,
                a.padding_bytes,
                a.tail_bytes,
                a.rows_lost_to_padding,
                a.disabled_rows,
                json_footprint(a.pass),
                json_footprint(a.entity_pass),
            );
            for (c, col) in a.columns.iter().enumerate() {
                let _ = write!(
                    out,
                    "{}{{\"name\":{},\"size\":{},\"align\":{},\"offset\":{},\
                     \"achieved_align\":{},\"padding_before\":{},\"pass\":{}}}",
                    if c == 0 { "" } else { "," },
                    json_str(col.name),
                    col.size,
                    col.align,
                    col.offset,
                    col.achieved_align,
                    col.padding_before,
                    json_footprint(col.pass),
                );
            }
            out.push_str("]}");
        }
        out.push_str("]}");
        out
    }
}

fn json_footprint(f: Footprint) -> String {
    format!(
        "{{\"bytes\":{},\"cache_lines\":{},\"pages\":{}}}",
        f.bytes, f.cache_lines, f.pages
    )
}

/// `s` as a JSON string literal.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for WorldLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "chunk size: {} B, policy {:?}",
            self.chunk_size, self.policy
        )?;
        writeln!(
            f,
            "{:>4}  {:>7}  {:>8}  {:>7}  {:>9}  {:>6}  {:>11}  {:>4}  {:>12}  components",
            "arch",
            "chunk B",
            "capacity",
            "chunks",
            "entities",
            "fill",
            "unused B",
            "lost",
            "order"
        )?;
        for a in &self.archetypes {
            let names: Vec<String> = a
                .components
                .iter()
                .map(|(name, size)| format!("{} ({size} B)", short_name(name)))
                .collect();
            writeln!(
                f,
                "{:>4}  {:>7}  {:>8}  {:>7}  {:>9}  {:>5.1}%  {:>11}  {:>4}  {:>12}  {}",
                a.id.index(),
                a.chunk_size,
                a.capacity,
                a.chunks,
                a.entities,
                a.fill_percent,
                a.bytes_unused,
                a.rows_lost_to_padding,
                a.column_order,
                if names.is_empty() {
                    "-".to_string()
                } else {
                    names.join(", ")
                }
            )?;
        }
        writeln!(
            f,
            "columns (offset, alignment achieved, padding before; one full pass):"
        )?;
        for a in &self.archetypes {
            writeln!(
                f,
                "  arch {}: padding {} B, tail {} B per chunk; pass {} B, {} lines, {} pages{}",
                a.id.index(),
                a.padding_bytes,
                a.tail_bytes,
                a.pass.bytes,
                a.pass.cache_lines,
                a.pass.pages,
                if a.disabled_rows == 0 {
                    String::new()
                } else {
                    format!("; {} disabled rows", a.disabled_rows)
                }
            )?;
            for col in &a.columns {
                writeln!(
                    f,
                    "    {:>7}  align {:>2}/{:<3}  pad {:>4}  {:>8} B {:>6} lines {:>4} pages  {}",
                    col.offset,
                    col.align,
                    col.achieved_align,
                    col.padding_before,
                    col.pass.bytes,
                    col.pass.cache_lines,
                    col.pass.pages,
                    short_name(col.name)
                )?;
            }
        }
        let m = &self.memory;
        f.write_str("memory: ")?;
        for (_, label, bytes) in MEMORY_BYTES {
            write!(f, "{label} {} B, ", bytes(m))?;
        }
        write!(
            f,
            "{} empty archetypes; total {} B; compaction would free {} B",
            m.empty_archetypes,
            m.total(),
            m.compaction_frees_bytes
        )?;
        writeln!(f)
    }
}

/// `alloc::string::String` → `String`, keeping generic arguments readable.
///
/// ```
/// # use ecs_core::short_name;
/// assert_eq!(short_name("alloc::vec::Vec<alloc::string::String>"), "Vec<String>");
/// ```
pub fn short_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut segment = String::new();
    for ch in name.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == ':' {
            segment.push(ch);
        } else {
            out.push_str(segment.rsplit("::").next().unwrap_or(""));
            segment.clear();
            out.push(ch);
        }
    }
    out.push_str(segment.rsplit("::").next().unwrap_or(""));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::World;

    #[test]
    fn short_names() {
        assert_eq!(short_name("alloc::string::String"), "String");
        assert_eq!(short_name("alloc::vec::Vec<u32>"), "Vec<u32>");
        assert_eq!(short_name("(a::B, c::D)"), "(B, D)");
    }

    #[test]
    fn footprint_counts_each_line_and_page_once() {
        let f = Footprint::of_ranges(&[(60, 68)]);
        assert_eq!((f.bytes, f.cache_lines, f.pages), (8, 2, 1));
        assert_eq!(Footprint::of_ranges(&[(0, 0)]), Footprint::default());
        // Two arrays sharing a line and a page count them once; a gap is not counted.
        let f = Footprint::of_ranges(&[(0, 40), (40, 100), (4096 * 3, 4096 * 3 + 1)]);
        assert_eq!((f.bytes, f.cache_lines, f.pages), (101, 3, 2));
        // Nested and repeated ranges.
        let f = Footprint::of_ranges(&[(0, 640), (64, 128), (0, 640)]);
        assert_eq!((f.cache_lines, f.pages), (10, 1));
    }

    #[test]
    #[cfg_attr(miri, ignore = "string formatting only, no unsafe path")]
    fn json_and_table_list_every_memory_field_once() {
        let mut world = World::new();
        world.spawn((1u32,));
        let report = world.memory_report();
        let (json, table) = (report.to_json(), report.to_string());
        for (name, label, bytes) in MEMORY_BYTES {
            let value = bytes(&report.memory);
            assert_eq!(
                json.matches(&format!("\"{name}\":{value},")).count(),
                1,
                "{name}"
            );
            assert!(table.contains(&format!(" {label} {value} B,")), "{label}");
        }
        assert!(json.contains(&format!("\"total\":{}}}", report.memory.total())));
        assert!(table.contains(&format!("; total {} B", report.memory.total())));
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
