//! What a [`Propagate`] keeps between runs: the matched archetypes, their chunk slots and the
//! forest's order as packed cells (see the module docs of `propagate` for the order). Shared by
//! the order's builder (`forest.rs`), one pass's loops (`pass.rs`) and the API (`mod.rs`); it
//! imports none of them.
//!
//! Invariant: `cells`, `parents` (and `parent_nodes`, when kept) have one entry per node, in
//! pass order; each cell names a live row of `slots[slot]` for the world's rows as they were
//! when the order was built (`Matched::rows_epoch`, `relationship_version`).

use std::marker::PhantomData;

use ecs_core::{Component, ComponentId, WorldId};

/// The most nodes one subtree task holds: a larger tree is cut below a spine of its upper
/// nodes. A constant, not a share of the thread count, so the order is the same on any pool.
pub const UNIT_NODES: usize = 4096;

/// The parent cell, and parent node, of a root.
pub(super) const NO_PARENT: u32 = u32::MAX;
/// The parent rank of a node whose parent is not a node.
pub(super) const DETACHED: u32 = u32::MAX - 1;

/// A node's cell (chunk slot and row) packed into a `u32`: `slot << row_bits | row`.
pub(super) type Cell = u32;

/// An archetype holding `L` and `G`, as the order was built from it.
pub(super) struct Matched {
    pub(super) index: usize,
    pub(super) rows_epoch: u64,
    pub(super) local: usize,
    pub(super) global: usize,
    pub(super) child_of: Option<usize>,
    /// Enable-mask slots of `L` and `G`, where enableable.
    pub(super) local_bit: Option<usize>,
    pub(super) global_bit: Option<usize>,
}

/// A chunk of a matched archetype: `matched[arch]`, chunk `chunk`.
#[derive(Clone, Copy)]
pub(super) struct Slot {
    pub(super) arch: u32,
    pub(super) chunk: u32,
}

/// Kept state of a hierarchy-ordered pass writing `G` from `L` and the parent's `G`.
///
/// ```
/// use ecs_core::{ChildOf, World};
/// use ecs_query::Propagate;
///
/// struct Local(f32);
/// struct Global(f32);
///
/// let mut world = World::new();
/// let root = world.spawn((Local(1.0), Global(0.0)));
/// let child = world.spawn((Local(2.0), Global(0.0), ChildOf(root)));
/// let grandchild = world.spawn((Local(3.0), Global(0.0), ChildOf(child)));
///
/// let mut propagate = Propagate::<Local, Global>::new(&mut world);
/// propagate.run(&mut world, |parent, local, global| {
///     global.0 = parent.map_or(0.0, |p| p.0) + local.0;
/// });
/// assert_eq!(world.get::<Global>(grandchild).unwrap().0, 6.0);
/// ```
pub struct Propagate<L: Component, G: Component> {
    pub(super) world: WorldId,
    pub(super) local: ComponentId,
    pub(super) global: ComponentId,
    pub(super) child_of: ComponentId,
    /// `world.archetypes().len()` when `matched` was last brought up to date.
    pub(super) archetypes_seen: usize,
    pub(super) relationship_version: u64,
    pub(super) built: bool,
    pub(super) matched: Vec<Matched>,
    pub(super) slots: Vec<Slot>,
    /// Per slot, how many of its rows are nodes.
    pub(super) slot_nodes: Vec<u32>,
    /// Bits of a packed [`Cell`] that hold the row.
    pub(super) row_bits: u32,
    /// Per node in pass order (the spine's, then each subtree's), its cell and its parent's
    /// (`NO_PARENT` for a root).
    pub(super) cells: Vec<Cell>,
    pub(super) parents: Vec<Cell>,
    /// Node index where each subtree starts (the spine is `..units[0]`).
    pub(super) units: Vec<u32>,
    /// Cells of the nodes in slots not every row of which is a node: stamped one by one.
    pub(super) partial: Vec<Cell>,
    /// Per node, its parent's node index (`NO_PARENT` for a root); kept only when some
    /// matched archetype has `L` or `G` enableable, where a skipped parent skips the child.
    pub(super) parent_nodes: Vec<u32>,
    pub(super) masked: bool,
    pub(super) rebuilds: u64,
    pub(super) _types: PhantomData<fn() -> (L, G)>,
}
