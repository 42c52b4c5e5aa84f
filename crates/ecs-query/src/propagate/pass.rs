//! One run of a [`Propagate`]: the column pointers of every slot, and the
//! loops over nodes: top-down (parents before children) and bottom-up (children before
//! parents).

use std::sync::atomic::{AtomicBool, Ordering};

use ecs_core::{Chunk, Component, EnableMask, World};

use super::state::{Cell, Propagate, NO_PARENT};

/// One slot's enable masks and chunk, for masked passes.
struct SlotMasks<'w> {
    chunk: &'w Chunk,
    global_col: usize,
    local: Option<&'w EnableMask>,
    global: Option<&'w EnableMask>,
}

/// One pass of a [`Propagate`]: column pointers of every slot, valid for one call.
///
/// # Invariants
/// Made from `&mut World` by the running method, which keeps the world borrowed while the
/// pass lives: `locals[s]` / `globals[s]` are the `L` and `G` column bases of slot `s`'s chunk,
/// whose rows are the ones the order was built from (refreshed just before), so every cell of
/// `cells` and `parents` is a live row.
pub(super) struct Pass<'a, L, G> {
    locals: Vec<*const L>,
    globals: Vec<*mut G>,
    cells: &'a [Cell],
    parents: &'a [Cell],
    row_bits: u32,
    /// Masked passes only: per slot its masks, per node its parent's node and whether it was
    /// written this pass.
    masks: Vec<SlotMasks<'a>>,
    parent_nodes: &'a [u32],
    written: Vec<AtomicBool>,
    tick: u64,
}

// SAFETY: the pass hands out cells only through `run_nodes`, whose callers give each task its
// own subtrees (disjoint cells); `L` and `G` are `Sync + Send` (`Component`), the masks and
// chunks are read only (tick stamps are atomic).
unsafe impl<L, G> Sync for Pass<'_, L, G> {}

impl<'a, L: Component, G: Component> Pass<'a, L, G> {
    /// The pass's pointers; stamps every node's `G` row changed at `tick` (unmasked passes:
    /// before any is written, so a panic of the caller's function leaves no write unstamped).
    pub(super) fn new(state: &'a Propagate<L, G>, world: &'a World, tick: u64) -> Self {
        let archetypes = world.archetypes();
        let mut locals = Vec::with_capacity(state.slots.len());
        let mut globals = Vec::with_capacity(state.slots.len());
        let mut masks = Vec::new();
        for (slot, &nodes) in state.slots.iter().zip(&state.slot_nodes) {
            let m = &state.matched[slot.arch as usize];
            let arch = &archetypes[m.index];
            let chunk = &arch.chunks()[slot.chunk as usize];
            locals.push(
                arch.column_base(chunk, m.local)
                    .as_ptr()
                    .cast::<L>()
                    .cast_const(),
            );
            globals.push(arch.column_base(chunk, m.global).as_ptr().cast::<G>());
            if state.masked {
                let bits = chunk.enable_bits();
                masks.push(SlotMasks {
                    chunk,
                    global_col: m.global,
                    local: m.local_bit.map(|s| bits.get(s)),
                    global: m.global_bit.map(|s| bits.get(s)),
                });
            } else if nodes as usize == chunk.len() {
                // SAFETY: every row of the chunk is a node this pass writes, on one of the
                // pass's calls; `tick` is the pass's own, from the world.
                unsafe { chunk.mark_rows_unchecked(m.global, 0..chunk.len(), tick) };
            }
        }
        if !state.masked {
            let mask = (1u32 << state.row_bits) - 1;
            for &cell in &state.partial {
                let slot = state.slots[(cell >> state.row_bits) as usize];
                let m = &state.matched[slot.arch as usize];
                let chunk = &archetypes[m.index].chunks()[slot.chunk as usize];
                let row = (cell & mask) as usize;
                // SAFETY: as above, for this one row.
                unsafe { chunk.mark_rows_unchecked(m.global, row..row + 1, tick) };
            }
        }
        let written = if state.masked {
            (0..state.cells.len())
                .map(|_| AtomicBool::new(false))
                .collect()
        } else {
            Vec::new()
        };
        Self {
            locals,
            globals,
            cells: &state.cells,
            parents: &state.parents,
            row_bits: state.row_bits,
            masks,
            parent_nodes: &state.parent_nodes,
            written,
            tick,
        }
    }

    /// Visits nodes `range`.
    ///
    /// # Safety
    /// The world this pass was made from is not otherwise used while it runs, every node of
    /// `range` has its parent in `range` or among nodes visited before this call, and no other
    /// call visits the same nodes, or their parents, at the same time.
    pub(super) unsafe fn run_nodes(
        &self,
        range: std::ops::Range<usize>,
        f: &mut impl FnMut(Option<&G>, &L, &mut G),
    ) {
        let cells = &self.cells[range.clone()];
        let parents = &self.parents[range.clone()];
        let bits = self.row_bits;
        let mask = (1u32 << bits) - 1;
        let (locals, globals) = (self.locals.as_slice(), self.globals.as_slice());
        let masked = !self.masks.is_empty();
        for (k, (&cell, &parent)) in cells.iter().zip(parents).enumerate() {
            let (slot, row) = ((cell >> bits) as usize, (cell & mask) as usize);
            if masked && !self.enabled(range.start + k, slot, row) {
                continue;
            }
            debug_assert!(
                slot < globals.len()
                    && (parent == NO_PARENT || (parent >> bits) < globals.len() as u32)
            );
            let parent = (parent != NO_PARENT).then(|| {
                let (slot, row) = ((parent >> bits) as usize, (parent & mask) as usize);
                // SAFETY: every cell of the order names a slot of this pass (`Pass` invariant:
                // the order and `globals` were built from the same slots); the cell is the
                // parent's `G`, a live row, not the node's own (a node is not its own parent),
                // written before this node and not meanwhile (this fn's contract).
                unsafe { &*globals.get_unchecked(slot).add(row) }
            });
            // SAFETY: the node's slot is one of this pass's and its cells are live (`Pass`
            // invariant); `L` is only read, and the node's `G` is this call's alone (this fn's
            // contract).
            let (l, g) = unsafe {
                (
                    &*locals.get_unchecked(slot).add(row),
                    &mut *globals.get_unchecked(slot).add(row),
                )
            };
            f(parent, l, g);
        }
    }

    /// Hands each node of `range` that has a parent, last node first, to `combine` with its
    /// parent's `G`: `combine(parent, child)`. Nodes are in pass order (parents before
    /// children), so walking it backwards completes every node's children before the node is
    /// handed to its own parent. In masked passes only nodes the forward pass wrote take part
    /// (their parents were written too).
    ///
    /// # Safety
    /// The world this pass was made from is not otherwise used while it runs, the forward
    /// pass ran over every node of `range` and their parents, every node of `range` has its
    /// parent in `range` (a node whose parent lies elsewhere must be left out of it), and no
    /// other call touches the nodes of `range` at the same time.
    pub(super) unsafe fn combine_nodes(
        &self,
        range: std::ops::Range<usize>,
        combine: &mut impl FnMut(&mut G, &G),
    ) {
        let bits = self.row_bits;
        let mask = (1u32 << bits) - 1;
        let globals = self.globals.as_slice();
        let masked = !self.masks.is_empty();
        for k in range.rev() {
            let (cell, parent) = (self.cells[k], self.parents[k]);
            if parent == NO_PARENT || (masked && !self.written[k].load(Ordering::Relaxed)) {
                continue;
            }
            let (slot, row) = ((cell >> bits) as usize, (cell & mask) as usize);
            let (pslot, prow) = ((parent >> bits) as usize, (parent & mask) as usize);
            debug_assert!(slot < globals.len() && pslot < globals.len());
            // SAFETY: both cells name slots of this pass and live rows (`Pass` invariant); they
            // are two rows (a node is not its own parent), so the shared borrow of the child's
            // `G` and the exclusive one of its parent's do not overlap; both nodes are this
            // call's alone (this fn's contract).
            let (child, parent) = unsafe {
                (
                    &*globals.get_unchecked(slot).add(row),
                    &mut *globals.get_unchecked(pslot).add(prow),
                )
            };
            combine(parent, child);
        }
    }

    /// Masked passes: whether `node` (row `row` of `slot`) has both values enabled and a
    /// written parent; records the node as written, and stamps its row.
    #[cold]
    fn enabled(&self, node: usize, slot: usize, row: usize) -> bool {
        let m = &self.masks[slot];
        let on = m.local.is_none_or(|b| b.get(row))
            && m.global.is_none_or(|b| b.get(row))
            && match self.parent_nodes[node] {
                NO_PARENT => true,
                p => self.written[p as usize].load(Ordering::Relaxed),
            };
        if on {
            self.written[node].store(true, Ordering::Relaxed);
            // SAFETY: the node's row is ours to write (`run_nodes` contract), `tick` the pass's.
            unsafe {
                m.chunk
                    .mark_rows_unchecked(m.global_col, row..row + 1, self.tick)
            };
        }
        on
    }
}
