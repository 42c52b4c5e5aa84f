//! The per-archetype layout drawing: every archetype's chunks as bars, each column a band at
//! its real byte offset, as SVG (written by hand, no dependency).
//!
//! One section per non-empty archetype, each with its own scale: a bar is always the same
//! width, whatever the archetype's chunk size, and the axis above it has five ticks (0, ¼, ½,
//! ¾ and the whole chunk) labelled in bytes, KiB or MiB, so a 4 KiB chunk and a 1 MiB one are
//! equally readable. In a band the solid part holds rows and the pale part is capacity not
//! yet used; hatching is padding and the tail no whole row fits in. Colours are one per
//! component type in order of first appearance (the entity column first), from the same
//! palette as the sweep chart: Okabe–Ito first, then golden-angle hues, so any number of types
//! stay distinct. Names sit in the legend (which wraps), never on the bands, so narrow columns
//! in a 1 MiB chunk do not stack labels; each band carries its name, size and byte range as a
//! tooltip. A world of a million rows has thousands of chunks: at most
//! [`LayoutDrawing::max_chunks`] are drawn per archetype, and a line says how many more there
//! are.

use std::fmt::Write as _;

use ecs_core::{short_name, Archetype, World};

use crate::svg::{colour, escape};

const LABEL_W: f64 = 190.0;
const BAR_H: f64 = 20.0;
const ROW: f64 = 26.0;

/// How [`layout_svg_with`] draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayoutDrawing {
    /// Chunks drawn per archetype (the first ones); the rest are counted in a line.
    pub max_chunks: usize,
    /// Width of a chunk's bar in pixels.
    pub bar_width: f64,
}

impl Default for LayoutDrawing {
    /// Eight chunks per archetype, 1,024-pixel bars.
    fn default() -> Self {
        Self {
            max_chunks: 8,
            bar_width: 1024.0,
        }
    }
}

/// [`layout_svg_with`] with the default drawing.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.spawn_batch((0..100).map(|i| (i as u8, i as f64))).for_each(drop);
/// let svg = ecs_lab::layout_svg(&world);
/// assert_eq!(svg.matches("class=\"chunk\"").count(), 1);
/// assert!(svg.contains(">u8</text>") && svg.contains(">f64</text>"));
/// ```
pub fn layout_svg(world: &World) -> String {
    layout_svg_with(world, &LayoutDrawing::default())
}

/// The chunks of every non-empty archetype of `world`, drawn as the module docs say.
pub fn layout_svg_with(world: &World, drawing: &LayoutDrawing) -> String {
    let archetypes: Vec<&Archetype> = world
        .archetypes()
        .iter()
        .filter(|a| !a.is_empty())
        .collect();
    let mut names: Vec<&'static str> = vec!["Entity"];
    for arch in &archetypes {
        for (name, _) in arch.component_names() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let colour_of = |name: &str| colour(names.iter().position(|n| *n == name).unwrap_or(0));
    let width = LABEL_W + drawing.bar_width + 30.0;
    let legend = legend_rows(&names, width - 20.0);

    let mut body = String::new();
    let mut y = 40.0;
    for arch in &archetypes {
        y = draw_archetype(&mut body, arch, drawing, y, &colour_of);
    }
    let legend_y = y + 6.0;
    for (row, entries) in legend.iter().enumerate() {
        for &(x, name) in entries {
            let ly = legend_y + row as f64 * 20.0;
            let _ = writeln!(
                body,
                "<rect x=\"{:.1}\" y=\"{ly:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                10.0 + x,
                colour_of(name),
                10.0 + x + 16.0,
                ly + 11.0,
                escape(&short_name(name))
            );
        }
    }
    let height = legend_y + legend.len() as f64 * 20.0 + 10.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>"
    );
    svg.push_str(concat!(
        "<defs><pattern id=\"unused\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" ",
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#eeeeee\"/>",
        "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#bbbbbb\" stroke-width=\"2\"/>",
        "</pattern></defs>\n"
    ));
    let _ = writeln!(
        svg,
        "<text x=\"10\" y=\"20\" font-size=\"13\">One bar per chunk, each archetype at its own \
         chunk size: solid = rows in use, pale = free rows, hatched = padding and tail</text>"
    );
    svg.push_str(&body);
    svg.push_str("</svg>\n");
    svg
}

/// Draws `arch`'s heading, axis and chunks from `y` down; returns the next free `y`.
fn draw_archetype(
    out: &mut String,
    arch: &Archetype,
    drawing: &LayoutDrawing,
    mut y: f64,
    colour_of: &dyn Fn(&str) -> String,
) -> f64 {
    let layout = arch.layout();
    let (cap, chunk_size) = (layout.capacity(), layout.chunk_size());
    let scale = drawing.bar_width / chunk_size as f64;
    let cols: Vec<String> = arch.component_names().map(|(n, _)| short_name(n)).collect();
    let _ = writeln!(
        out,
        "<text x=\"10\" y=\"{:.1}\" font-weight=\"bold\">archetype {}: ({}), {} chunks, {cap} \
         rows per chunk, {} column order</text>",
        y + 12.0,
        arch.id().index(),
        escape(&cols.join(", ")),
        bytes_label(chunk_size),
        layout.column_order()
    );
    y += 20.0;
    for q in 0..=4 {
        let x = LABEL_W + drawing.bar_width * q as f64 / 4.0;
        let anchor = match q {
            0 => "start",
            4 => "end",
            _ => "middle",
        };
        let _ = writeln!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" fill=\"#555\">{}</text>",
            y + 10.0,
            y + 14.0,
            y + 8.0,
            bytes_label(chunk_size * q / 4)
        );
    }
    y += 16.0;
    let bands: Vec<(&'static str, usize, usize)> = std::iter::once(("Entity", 0, 8))
        .chain(
            arch.component_names()
                .enumerate()
                .map(|(c, (name, size))| (name, layout.offset(c), size)),
        )
        .filter(|&(_, _, size)| size > 0)
        .collect();
    let chunks = arch.chunks();
    for (i, chunk) in chunks.iter().take(drawing.max_chunks).enumerate() {
        let len = chunk.len();
        let _ = writeln!(
            out,
            "<text x=\"10\" y=\"{:.1}\">chunk {i}: {len}/{cap} rows</text>\n<rect \
             class=\"chunk\" x=\"{LABEL_W}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{BAR_H}\" \
             fill=\"url(#unused)\" stroke=\"#333\"/>",
            y + 14.0,
            drawing.bar_width
        );
        for &(name, offset, size) in &bands {
            let x = LABEL_W + offset as f64 * scale;
            let fill = colour_of(name);
            let tip = format!(
                "{}: {size} B × {cap} rows at bytes {offset}–{}",
                escape(&short_name(name)),
                offset + cap * size
            );
            let _ = writeln!(
                out,
                "<rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{BAR_H}\" \
                 fill=\"{fill}\"><title>{tip}</title></rect>",
                (len * size) as f64 * scale
            );
            if cap > len {
                let _ = writeln!(
                    out,
                    "<rect x=\"{:.2}\" y=\"{y:.1}\" width=\"{:.2}\" height=\"{BAR_H}\" \
                     fill=\"{fill}\" fill-opacity=\"0.3\"><title>{tip}</title></rect>",
                    x + (len * size) as f64 * scale,
                    ((cap - len) * size) as f64 * scale
                );
            }
        }
        y += ROW;
    }
    if chunks.len() > drawing.max_chunks {
        let rest = chunks.len() - drawing.max_chunks;
        let rows: usize = chunks[drawing.max_chunks..].iter().map(|c| c.len()).sum();
        let _ = writeln!(
            out,
            "<text x=\"{LABEL_W}\" y=\"{:.1}\" fill=\"#555\">… and {rest} more chunks \
             ({rows} rows) of the same layout</text>",
            y + 12.0
        );
        y += ROW;
    }
    y + 8.0
}

/// Legend entries as rows of `(x, name)`, wrapped at `width` (about 6.5 px per character).
fn legend_rows(names: &[&'static str], width: f64) -> Vec<Vec<(f64, &'static str)>> {
    let mut rows: Vec<Vec<(f64, &'static str)>> = vec![Vec::new()];
    let mut x = 0.0;
    for &name in names {
        let w = 28.0 + 6.5 * short_name(name).chars().count() as f64;
        if x > 0.0 && x + w > width {
            rows.push(Vec::new());
            x = 0.0;
        }
        rows.last_mut().expect("one row at least").push((x, name));
        x += w;
    }
    rows
}

/// `0`, `512 B`, `4 KiB`, `1.5 KiB`, `1 MiB`.
fn bytes_label(bytes: usize) -> String {
    let trim = |v: f64| {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    };
    match bytes {
        0 => "0".to_owned(),
        b if b >= 1 << 20 => format!("{} MiB", trim(b as f64 / (1 << 20) as f64)),
        b if b >= 1 << 10 => format!("{} KiB", trim(b as f64 / 1024.0)),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_labels_read_at_every_scale() {
        assert_eq!(bytes_label(0), "0");
        assert_eq!(bytes_label(1024), "1 KiB");
        assert_eq!(bytes_label(1536), "1.5 KiB");
        assert_eq!(bytes_label(262_144), "256 KiB");
        assert_eq!(bytes_label(1 << 20), "1 MiB");
        assert_eq!(bytes_label(600), "600 B");
    }

    #[test]
    fn the_legend_wraps_and_keeps_every_name() {
        let names: Vec<&'static str> = (0..40)
            .map(|i| &*Box::leak(format!("Component{i}").into_boxed_str()))
            .collect();
        let rows = legend_rows(&names, 600.0);
        assert!(rows.len() > 1);
        assert_eq!(rows.iter().map(Vec::len).sum::<usize>(), 40);
        for row in &rows {
            let last = row.last().unwrap();
            assert!(last.0 + 28.0 + 6.5 * 11.0 <= 600.0, "{last:?}");
        }
    }
}
