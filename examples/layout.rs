//! The layout explorer: builds a few archetypes, prints how they use their chunks, and draws
//! every chunk as an SVG bar.
//!
//! In the picture each chunk is one bar of `chunk_size` bytes. Each column is a band at its
//! real byte offset, one colour per component: the solid part holds rows, the pale part is
//! capacity not yet used. Grey hatching is padding between columns and the tail no whole row
//! fits in.
//!
//! ```text
//! cargo run --release --example layout -- chunks.svg
//! cargo run --release --example layout -- --csv    # or --json: the report as data
//! ```

use std::fmt::Write as _;
use std::path::Path;

use ecs::core::{short_name, Archetype};
use ecs::prelude::*;

/// 8 bytes, align 4.
#[derive(Clone, Copy)]
pub struct Position {
    /// Horizontal.
    pub x: f32,
    /// Vertical.
    pub y: f32,
}

/// 8 bytes, align 4.
#[derive(Clone, Copy)]
pub struct Velocity {
    /// Horizontal.
    pub x: f32,
    /// Vertical.
    pub y: f32,
}

/// 1 byte: makes the next 8-aligned column start after padding.
#[derive(Clone, Copy)]
pub struct Team(pub u8);

/// 8 bytes, align 8.
#[derive(Clone, Copy)]
pub struct Mass(pub f64);

/// 4 bytes, added to one entity by [`move_demo`].
#[derive(Clone, Copy)]
pub struct Health(pub u32);

/// A zero-sized tag: an archetype of its own, no bytes.
#[derive(Clone, Copy)]
pub struct Frozen;

/// Builds four archetypes of different shapes and fill levels.
pub fn build_world() -> World {
    let mut world = World::new();
    let pos = |i: usize| Position {
        x: i as f32,
        y: 0.0,
    };
    let vel = Velocity { x: 1.0, y: 0.0 };
    // Three chunks: two full, one partly used.
    world.spawn_batch((0..1500).map(|i| (pos(i), vel)));
    // Alignment padding between the 1-byte `Team` column and the 8-byte `Mass` column.
    world.spawn_batch((0..700).map(|i| (pos(i), Team(i as u8), Mass(1.0))));
    // A heap-owning component: the chunk holds the `String`'s three words.
    world.spawn_batch((0..300).map(|i| (pos(i), format!("name {i}"))));
    // A tag adds an archetype but no bytes per row.
    world.spawn_batch((0..200).map(|i| (pos(i), vel, Frozen)));
    world
}

/// One line per column of every non-empty archetype: its byte range in a chunk.
pub fn describe(world: &World) -> Vec<String> {
    let mut out = Vec::new();
    for arch in world.archetypes().iter().filter(|a| !a.is_empty()) {
        let layout = arch.layout();
        let cap = layout.capacity();
        out.push(format!(
            "archetype {}: {} rows per chunk, {} chunks, {} B unused per full chunk",
            arch.id().index(),
            cap,
            arch.chunks().len(),
            layout.unused_bytes_when_full()
        ));
        out.push(format!("  {:>5}..{:<5}  Entity ({} B each)", 0, cap * 8, 8));
        for (col, (name, size)) in arch.component_names().enumerate() {
            let start = layout.offset(col);
            out.push(format!(
                "  {:>5}..{:<5}  {} ({size} B each)",
                start,
                start + cap * size,
                short_name(name)
            ));
        }
    }
    out
}

/// Moves one entity along a graph edge (`insert` of a `Health`) and says where its row went,
/// and which row filled the hole it left.
pub fn move_demo() -> Vec<String> {
    let mut world = World::new();
    let ids: Vec<Entity> = world
        .spawn_batch((0..1500).map(|i| {
            let p = Position {
                x: i as f32,
                y: 0.0,
            };
            (p, Velocity { x: 1.0, y: 0.0 })
        }))
        .collect();
    let (moved, last) = (ids[700], ids[1499]);
    let place = |world: &World, e: Entity| {
        let loc = world.location(e).expect("alive");
        let arch = &world.archetypes()[loc.archetype.index()];
        let (chunk, r) = arch.split_row(loc.row as usize);
        let names: Vec<String> = arch.component_names().map(|(n, _)| short_name(n)).collect();
        format!(
            "archetype {} ({}) row {} = chunk {chunk}, row {r} of {}",
            loc.archetype.index(),
            names.join(", "),
            loc.row,
            arch.layout().capacity()
        )
    };
    let mut out = vec![
        format!("before: {moved:?} at {}", place(&world, moved)),
        format!("        {last:?} at {}", place(&world, last)),
    ];
    world.insert(moved, (Health(100),)).expect("alive");
    out.push(format!("insert Health into {moved:?}"));
    out.push(format!("after:  {moved:?} at {}", place(&world, moved)));
    out.push(format!("        {last:?} at {}", place(&world, last)));
    out
}

const COLOURS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];
const BAR_WIDTH: f64 = 1024.0;
const BAR_HEIGHT: f64 = 22.0;
const LABEL_WIDTH: f64 = 230.0;
const ROW: f64 = 30.0;

/// One column band: its used part solid, its unused capacity pale.
fn band(svg: &mut String, x: f64, y: f64, scale: f64, used: usize, cap: usize, colour: &str) {
    let _ = writeln!(
        svg,
        r#"<rect x="{x:.2}" y="{y}" width="{:.2}" height="{BAR_HEIGHT}" fill="{colour}"/>"#,
        used as f64 * scale
    );
    if cap > used {
        let _ = writeln!(
            svg,
            r#"<rect x="{:.2}" y="{y}" width="{:.2}" height="{BAR_HEIGHT}" fill="{colour}" fill-opacity="0.3"/>"#,
            x + used as f64 * scale,
            (cap - used) as f64 * scale
        );
    }
}

/// Draws every chunk of every non-empty archetype as one bar.
pub fn svg(world: &World) -> String {
    let chunk_size = world.chunk_size();
    let scale = BAR_WIDTH / chunk_size as f64;
    let archetypes: Vec<&Archetype> = world
        .archetypes()
        .iter()
        .filter(|a| !a.is_empty())
        .collect();
    // One colour per component name, in order of first appearance; the entity column first.
    let mut names: Vec<&'static str> = vec!["Entity"];
    for arch in &archetypes {
        for (name, _) in arch.component_names() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let colour =
        |name: &str| COLOURS[names.iter().position(|n| *n == name).unwrap_or(0) % COLOURS.len()];
    let bars: usize = archetypes.iter().map(|a| a.chunks().len()).sum();
    let legend_y = 50.0 + bars as f64 * ROW + archetypes.len() as f64 * ROW;
    let width = LABEL_WIDTH + BAR_WIDTH + 20.0;
    let height = legend_y + 30.0;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" font-size="12">"#
    );
    svg.push_str(concat!(
        r#"<defs><pattern id="unused" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">"#,
        r##"<rect width="6" height="6" fill="#eeeeee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" stroke-width="2"/>"##,
        "</pattern></defs>\n"
    ));
    let _ = writeln!(
        svg,
        r#"<text x="10" y="20" font-size="14">Chunks of {chunk_size} B: one bar per chunk; solid = rows in use, pale = free rows, hatched = padding and tail</text>"#
    );
    for kib in 0..=chunk_size / 4096 {
        let x = LABEL_WIDTH + (kib * 4096) as f64 * scale;
        let _ = writeln!(
            svg,
            r##"<text x="{x:.1}" y="40" text-anchor="middle" fill="#555">{} KiB</text>"##,
            kib * 4
        );
    }
    let mut y = 50.0;
    for arch in &archetypes {
        let layout = arch.layout();
        let cap = layout.capacity();
        let cols: Vec<String> = arch.component_names().map(|(n, _)| short_name(n)).collect();
        let _ = writeln!(
            svg,
            r#"<text x="10" y="{:.1}" font-weight="bold">archetype {}: ({}), {cap} rows per chunk</text>"#,
            y + 16.0,
            arch.id().index(),
            cols.join(", ")
        );
        y += ROW;
        for (i, chunk) in arch.chunks().iter().enumerate() {
            let len = chunk.len();
            let _ = writeln!(
                svg,
                r#"<text x="10" y="{:.1}">chunk {i}: {len}/{cap} rows</text>"#,
                y + 15.0
            );
            let _ = writeln!(
                svg,
                r##"<rect class="chunk" x="{LABEL_WIDTH}" y="{y}" width="{BAR_WIDTH}" height="{BAR_HEIGHT}" fill="url(#unused)" stroke="#333"/>"##
            );
            band(
                &mut svg,
                LABEL_WIDTH,
                y,
                scale,
                len * 8,
                cap * 8,
                colour("Entity"),
            );
            for (col, (name, size)) in arch.component_names().enumerate() {
                if size > 0 {
                    let x = LABEL_WIDTH + layout.offset(col) as f64 * scale;
                    band(&mut svg, x, y, scale, len * size, cap * size, colour(name));
                }
            }
            y += ROW;
        }
    }
    let mut x = 10.0;
    for name in &names {
        let label = short_name(name);
        let _ = writeln!(
            svg,
            r#"<rect x="{x}" y="{legend_y}" width="14" height="14" fill="{}"/><text x="{}" y="{}">{label}</text>"#,
            colour(name),
            x + 18.0,
            legend_y + 12.0
        );
        x += 30.0 + 8.0 * label.len() as f64;
    }
    svg.push_str("</svg>\n");
    svg
}

/// Builds the world and returns the printout; writes the SVG to `svg_path` if given.
///
/// # Errors
/// If the SVG cannot be written.
pub fn run(svg_path: Option<&Path>) -> std::io::Result<Vec<String>> {
    let world = build_world();
    let mut out: Vec<String> = world
        .memory_report()
        .to_string()
        .lines()
        .map(str::to_owned)
        .collect();
    out.push(String::new());
    out.extend(describe(&world));
    out.push(String::new());
    out.extend(move_demo());
    match svg_path {
        Some(path) => {
            std::fs::write(path, svg(&world))?;
            out.push(String::new());
            out.push(format!("wrote {}", path.display()));
        }
        None => {
            out.push(String::new());
            out.push(
                "pass a file name to draw the chunks: cargo run --example layout -- chunks.svg"
                    .to_owned(),
            );
        }
    }
    Ok(out)
}

fn main() {
    // `--csv` / `--json`: print the report as data instead of the tables and the SVG.
    match std::env::args().nth(1).as_deref() {
        Some("--csv") => return print!("{}", build_world().memory_report().to_csv()),
        Some("--json") => return println!("{}", build_world().memory_report().to_json()),
        _ => {}
    }
    let path = std::env::args_os().nth(1);
    match run(path.as_deref().map(Path::new)) {
        Ok(lines) => lines.iter().for_each(|line| println!("{line}")),
        Err(err) => {
            eprintln!("layout: cannot write the SVG: {err}");
            std::process::exit(1);
        }
    }
}
