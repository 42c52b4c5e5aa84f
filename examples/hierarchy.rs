//! A transform hierarchy: a forest of 100,000 nodes (depth up to 8) built with `ChildOf`,
//! whose local transforms change every frame and are propagated to global transforms, parents
//! before children, subtrees as tasks on several threads ([`Propagate::par_run`]); a spatial
//! grid index kept in step
//! by two observers (`OnInsert<Cell>`, `OnRemove<Cell>`); and a subtree despawned at the end
//! (the engine despawns the descendants and the observers take them out of the grid).
//!
//! A kept [`Propagate`] state remembers the forest's order between frames (rebuilt only when the
//! hierarchy's shape changes) and writes each node's global transform in place from its
//! parent's; each is a pure function of its ancestors' locals, so the result is the same on any
//! thread count (the example checks it).
//!
//! ```text
//! cargo run --release --example hierarchy
//! ```

use std::collections::{BTreeMap, HashMap};

use ecs::prelude::*;
use ecs::query::Parallelism;

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

/// The grid cell a node's global position falls in; observers keep [`Grid`] in step with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell(pub i32, pub i32);

/// Side of a grid cell, in world units.
pub const CELL: f32 = 16.0;

impl Cell {
    fn of(g: Global) -> Self {
        Cell((g.x / CELL).floor() as i32, (g.y / CELL).floor() as i32)
    }
}

/// The spatial index: the entities in each cell, and each entity's cell (an `OnRemove`
/// observer runs after the value is gone, so the index remembers where each entity was).
#[derive(Default)]
pub struct Grid {
    /// Entities per cell, in the order they entered it.
    pub cells: BTreeMap<(i32, i32), Vec<Entity>>,
    at: HashMap<Entity, (i32, i32)>,
}

impl Grid {
    fn leave(&mut self, entity: Entity) {
        if let Some(cell) = self.at.remove(&entity) {
            let list = self.cells.get_mut(&cell).expect("indexed when entered");
            list.retain(|&e| e != entity);
            if list.is_empty() {
                self.cells.remove(&cell);
            }
        }
    }

    fn enter(&mut self, entity: Entity, cell: Cell) {
        self.leave(entity);
        self.cells.entry((cell.0, cell.1)).or_default().push(entity);
        self.at.insert(entity, (cell.0, cell.1));
    }
}

/// Installs the two observers that keep [`Grid`] in step with every [`Cell`].
fn observe_cells(world: &mut World) {
    world.add_observer(
        |moved: Trigger<OnInsert<Cell>>, cells: Query<RefRO<Cell>>, mut grid: ResMut<Grid>| {
            if let Ok(&cell) = cells.get(moved.entity()) {
                grid.enter(moved.entity(), cell);
            }
        },
    );
    world.add_observer(|gone: Trigger<OnRemove<Cell>>, mut grid: ResMut<Grid>| {
        grid.leave(gone.entity());
    });
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
/// grid's observers installed. Returns the world and the roots.
pub fn build(nodes: usize, depth: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.insert_resource(Grid::default());
    observe_cells(&mut world);
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

/// Propagates local transforms to global ones with `pass`, its subtrees as tasks on a pool of
/// `threads`; then each node whose cell changed gets its new [`Cell`] (an observer moves it in
/// the grid). The globals do not depend on `threads`.
pub fn propagate(world: &mut World, pass: &mut Propagate<Local, Global>, threads: usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("a thread pool");
    Parallelism::Pool(pool.into()).scope(|| {
        pass.par_run(world, |parent, local, global| {
            *global = match parent {
                Some(&p) => p.then(*local),
                None => Global::of_root(*local),
            };
        });
    });
    let mut moved = Vec::new();
    world
        .query::<(Entity, RefRO<Global>, Option<RefRO<Cell>>)>()
        .for_each(|(e, g, cell)| {
            let c = Cell::of(*g);
            if cell != Some(&c) {
                moved.push((e, c));
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
    world.resource::<Grid>().cells.values().map(Vec::len).sum()
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
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    for frame in 0..frames {
        animate(&mut world, frame);
        propagate(&mut world, &mut pass, threads);
    }
    lines.push(format!(
        "after {frames} frames: digest {:016x}, {} nodes indexed in {} cells",
        digest(&mut world),
        grid_len(&world),
        world.resource::<Grid>().cells.len()
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
