//! A transform hierarchy: a forest of 100,000 nodes (depth up to 8) built with `ChildOf`,
//! whose local transforms change every frame and are propagated to global transforms, parents
//! before children, one subtree per task on several threads; a spatial grid index kept in step
//! by component hooks; and a subtree despawned at the end (the engine despawns the
//! descendants and the hooks take them out of the grid).
//!
//! Propagation reads the hierarchy through `&World` (`children`, `get`), so subtrees can be
//! walked on several threads at once; each node's global transform is a pure function of its
//! ancestors' locals, so the result is the same on any thread count (the example checks it).
//!
//! ```text
//! cargo run --release --example hierarchy
//! ```

use std::collections::BTreeMap;
use std::sync::Mutex;

use ecs::prelude::*;

/// A node's transform relative to its parent: a translation and a uniform scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Local {
    /// Offset along x, in the parent's units.
    pub x: f32,
    /// Offset along y, in the parent's units.
    pub y: f32,
    /// Scale applied to the children.
    pub scale: f32,
}

/// A node's transform in world space, written by [`propagate`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Global {
    /// World x.
    pub x: f32,
    /// World y.
    pub y: f32,
    /// World scale.
    pub scale: f32,
}

impl Global {
    fn of_root(local: Local) -> Self {
        Global {
            x: local.x,
            y: local.y,
            scale: local.scale,
        }
    }

    fn then(self, local: Local) -> Self {
        Global {
            x: self.x + self.scale * local.x,
            y: self.y + self.scale * local.y,
            scale: self.scale * local.scale,
        }
    }
}

/// The grid cell a node's global position falls in; its hooks keep [`Grid`] in step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell(pub i32, pub i32);

/// Side of a grid cell, in world units.
pub const CELL: f32 = 16.0;

impl Cell {
    fn of(g: Global) -> Self {
        Cell((g.x / CELL).floor() as i32, (g.y / CELL).floor() as i32)
    }
}

/// The spatial index: the entities in each cell. Hooks get `&World`, so it sits behind a
/// `Mutex`; hooks run one at a time, in the order of the structural changes.
#[derive(Default)]
pub struct Grid(pub Mutex<BTreeMap<(i32, i32), Vec<Entity>>>);

fn cell_inserted(world: DeferredWorld<'_>, ctx: HookContext) {
    let cell = *world
        .get::<Cell>(ctx.entity)
        .expect("the hook runs after the write");
    let mut grid = world.resource::<Grid>().0.lock().unwrap();
    grid.entry((cell.0, cell.1)).or_default().push(ctx.entity);
}

fn cell_replaced(world: DeferredWorld<'_>, ctx: HookContext) {
    let cell = *world
        .get::<Cell>(ctx.entity)
        .expect("the old value is still there");
    let mut grid = world.resource::<Grid>().0.lock().unwrap();
    let list = grid.get_mut(&(cell.0, cell.1)).expect("indexed on insert");
    list.retain(|&e| e != ctx.entity);
    if list.is_empty() {
        grid.remove(&(cell.0, cell.1));
    }
}

/// A small deterministic generator, so every run builds the same forest.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
}

/// A world holding a forest of `nodes` nodes, each tree at most `depth` levels deep, with the
/// grid's hooks installed. Returns the world and the roots.
pub fn build(nodes: usize, depth: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.insert_resource(Grid::default());
    world
        .set_component_hooks::<Cell>(
            ComponentHooks::new()
                .on_insert(cell_inserted)
                .on_replace(cell_replaced),
        )
        .expect("Cell is not used yet");
    let mut rng = Lcg(7);
    let mut roots = Vec::new();
    // (entity, level) of every node that may still take children.
    let mut open: Vec<(Entity, usize)> = Vec::new();
    for n in 0..nodes {
        let local = Local {
            x: (rng.next() % 64) as f32 - 32.0,
            y: (rng.next() % 64) as f32 - 32.0,
            scale: 0.5 + (rng.next() % 100) as f32 / 100.0,
        };
        if open.is_empty() || n % 50 == 0 {
            let e = world.spawn((local, Global::default()));
            roots.push(e);
            open.push((e, 1));
        } else {
            let at = rng.next() as usize % open.len();
            let (parent, level) = open[at];
            let e = world.spawn((local, Global::default(), ChildOf(parent)));
            if level + 1 < depth {
                open.push((e, level + 1));
            }
            if rng.next() % 4 == 0 {
                open.swap_remove(at); // a parent with enough children
            }
        }
    }
    (world, roots)
}

/// Moves every node a little: frame `frame` of the animation.
pub fn animate(world: &mut World, frame: u32) {
    let wobble = (frame % 8) as f32 * 0.25 - 1.0;
    world.query::<RefRW<Local>>().for_each(|l| {
        l.x += wobble;
        l.y -= wobble * 0.5;
    });
}

/// The global transform of every node of the subtree under `root`, parents before children.
fn walk(world: &World, root: Entity, out: &mut Vec<(Entity, Global)>) {
    let local = *world.get::<Local>(root).expect("every node has a Local");
    let mut stack = vec![(root, Global::of_root(local))];
    while let Some((node, global)) = stack.pop() {
        out.push((node, global));
        for &child in world.children(node) {
            let local = *world.get::<Local>(child).expect("every node has a Local");
            stack.push((child, global.then(local)));
        }
    }
}

/// Propagates local transforms to global ones: the roots are split into `threads` contiguous
/// shares, each walked on its own thread through `&World`; the results are then written with
/// one query. Then each node whose cell changed gets its new [`Cell`] (the hooks move it in the
/// grid). The globals do not depend on `threads`.
pub fn propagate(world: &mut World, roots: &[Entity], threads: usize) {
    let share = roots.len().div_ceil(threads.max(1)).max(1);
    let results: Vec<Vec<(Entity, Global)>> = std::thread::scope(|scope| {
        let world = &*world;
        let tasks: Vec<_> = roots
            .chunks(share)
            .map(|part| {
                scope.spawn(move || {
                    let mut out = Vec::new();
                    for &root in part {
                        if world.contains(root) {
                            walk(world, root, &mut out);
                        }
                    }
                    out
                })
            })
            .collect();
        tasks.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let slots = results
        .iter()
        .flatten()
        .map(|(e, _)| e.index() as usize + 1)
        .max()
        .unwrap_or(0);
    let mut by_index = vec![None; slots];
    for (entity, global) in results.into_iter().flatten() {
        by_index[entity.index() as usize] = Some(global);
    }
    let mut moved = Vec::new();
    world
        .query::<(Entity, RefRW<Global>, Option<RefRO<Cell>>)>()
        .for_each(|(e, g, cell)| {
            if let Some(&Some(new)) = by_index.get(e.index() as usize) {
                *g = new;
                let c = Cell::of(new);
                if cell != Some(&c) {
                    moved.push((e, c));
                }
            }
        });
    for (e, c) in moved {
        world.insert(e, (c,)).expect("alive");
    }
}

/// A digest of every node's global transform, in entity order: equal digests mean equal
/// results.
pub fn digest(world: &mut World) -> u64 {
    let mut rows: Vec<(u32, u32, u32, u32)> = world
        .query::<(Entity, RefRO<Global>)>()
        .iter()
        .map(|(e, g)| (e.index(), g.x.to_bits(), g.y.to_bits(), g.scale.to_bits()))
        .collect();
    rows.sort_unstable();
    rows.iter().fold(0xcbf2_9ce4_8422_2325, |h, r| {
        let mut h = h;
        for v in [r.0, r.1, r.2, r.3] {
            h = (h ^ u64::from(v)).wrapping_mul(0x0100_0000_01b3);
        }
        h
    })
}

/// Entities the grid holds, summed over its cells.
pub fn grid_len(world: &World) -> usize {
    world
        .resource::<Grid>()
        .0
        .lock()
        .unwrap()
        .values()
        .map(Vec::len)
        .sum()
}

/// Builds the forest, runs `frames` frames on `threads` threads, despawns the largest tree,
/// and reports what happened.
pub fn run(nodes: usize, frames: u32, threads: usize) -> Vec<String> {
    let (mut world, roots) = build(nodes, 8);
    let deepest = roots
        .iter()
        .map(|&r| {
            world
                .iter_descendants(r)
                .map(|d| world.iter_ancestors(d).count())
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0);
    let mut lines = vec![format!(
        "{} nodes in {} trees, up to {} levels deep",
        world.len(),
        roots.len(),
        deepest + 1
    )];
    for frame in 0..frames {
        animate(&mut world, frame);
        propagate(&mut world, &roots, threads);
    }
    lines.push(format!(
        "after {frames} frames: digest {:016x}, {} nodes indexed in {} cells",
        digest(&mut world),
        grid_len(&world),
        world.resource::<Grid>().0.lock().unwrap().len()
    ));
    let largest = *roots
        .iter()
        .max_by_key(|&&r| (world.iter_descendants(r).count(), std::cmp::Reverse(r)))
        .expect("a tree");
    let size = world.iter_descendants(largest).count() + 1;
    world.despawn(largest).expect("alive");
    lines.push(format!(
        "despawned the largest tree ({size} nodes): {} nodes left, {} indexed",
        world.len(),
        grid_len(&world)
    ));
    world.check_invariants();
    lines
}

fn main() {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    for line in run(100_000, 30, threads) {
        println!("{line}");
    }
}
