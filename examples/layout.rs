//! The layout explorer: builds a few archetypes, prints how they use their chunks, and draws
//! every chunk as an SVG bar.
//!
//! In the picture (drawn by `ecs_lab::layout_svg`) each chunk is one bar of its archetype's
//! chunk size. Each column is a band at its real byte offset, one colour per component: the
//! solid part holds rows, the pale part is capacity not yet used. Grey hatching is padding
//! between columns and the tail no whole row fits in.
//!
//! ```text
//! cargo run --release --example layout -- chunks.svg
//! cargo run --release --example layout -- --csv    # or --json: the report as data
//! ```

use std::path::Path;

use ecs::core::short_name;
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

/// Draws every chunk of every non-empty archetype as one bar (`ecs_lab::layout_svg`: each
/// archetype at its own chunk size, one colour per type, at most eight chunks each).
pub fn svg(world: &World) -> String {
    ecs_lab::layout_svg(world)
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
