//! The forest a [`Propagate`] walks, as ranks (every node numbered in memory
//! order), and the pass order built from it: the spine of large trees, then each subtree, every
//! parent before its children.

use ecs_core::{Archetype, ChildOf, Chunk, Component, Entity, World};

use super::state::{Cell, Matched, Propagate, Slot, DETACHED, NO_PARENT, UNIT_NODES};

/// The forest as ranks: every node of the matched archetypes numbered in memory order, with
/// its cell, its parent's rank and its children.
pub(super) struct Forest {
    pub(super) slots: Vec<Slot>,
    /// Per slot, its chunk's rows.
    slot_len: Vec<u32>,
    /// Bits of a packed [`Cell`] that hold the row: enough for the largest chunk capacity.
    row_bits: u32,
    /// Per rank, its packed cell.
    cell_of: Vec<Cell>,
    /// Per rank, the parent's rank, or `NO_PARENT` / `DETACHED`.
    parent: Vec<u32>,
    /// Children of rank `r`: `children[child_start[r]..child_start[r + 1]]`, in rank order.
    child_start: Vec<u32>,
    children: Vec<u32>,
}

impl Forest {
    pub(super) fn of(world: &World, matched: &[Matched]) -> Self {
        let archetypes = world.archetypes();
        let capacity = matched
            .iter()
            .map(|m| archetypes[m.index].layout().capacity())
            .max()
            .unwrap_or(1);
        let row_bits = usize::BITS - (capacity.max(2) - 1).leading_zeros();
        let mut slots = Vec::new();
        let mut slot_len = Vec::new();
        let mut cell_of = Vec::new();
        let mut entity_of: Vec<Entity> = Vec::new();
        for (a, m) in matched.iter().enumerate() {
            for (c, chunk) in archetypes[m.index].chunks().iter().enumerate() {
                let slot = (slots.len() as u32) << row_bits;
                cell_of.extend((0..chunk.len() as u32).map(|row| slot | row));
                slot_len.push(chunk.len() as u32);
                slots.push(Slot {
                    arch: a as u32,
                    chunk: c as u32,
                });
                entity_of.extend_from_slice(chunk.entities());
            }
        }
        let n = entity_of.len();
        assert!(
            n < DETACHED as usize && (slots.len() as u64) < (1u64 << (32 - row_bits)) - 1,
            "a hierarchy of {n} nodes in {} chunks is more than `Propagate` can address",
            slots.len()
        );
        let max_index = entity_of.iter().map(|e| e.index() as usize).max();
        let mut rank_of = vec![u32::MAX; max_index.map_or(0, |i| i + 1)];
        for (r, e) in entity_of.iter().enumerate() {
            rank_of[e.index() as usize] = r as u32;
        }
        let rank_of_entity = |e: Entity| {
            rank_of
                .get(e.index() as usize)
                .copied()
                .filter(|&r| r != u32::MAX && entity_of[r as usize] == e)
        };
        let mut parent = vec![NO_PARENT; n];
        let mut first = 0;
        for slot in &slots {
            let m = &matched[slot.arch as usize];
            let arch = &archetypes[m.index];
            let chunk = &arch.chunks()[slot.chunk as usize];
            if let Some(col) = m.child_of {
                let values = child_of_values(arch, chunk, col);
                for (p, child_of) in parent[first..].iter_mut().zip(values) {
                    *p = rank_of_entity(child_of.0).unwrap_or(DETACHED);
                }
            }
            first += chunk.len();
        }
        let mut child_start = vec![0u32; n + 1];
        for &p in &parent {
            if (p as usize) < n {
                child_start[p as usize + 1] += 1;
            }
        }
        for r in 0..n {
            child_start[r + 1] += child_start[r];
        }
        let mut fill = child_start.clone();
        let mut children = vec![0u32; child_start[n] as usize];
        for (r, &p) in parent.iter().enumerate() {
            if (p as usize) < n {
                children[fill[p as usize] as usize] = r as u32;
                fill[p as usize] += 1;
            }
        }
        Self {
            slots,
            slot_len,
            row_bits,
            cell_of,
            parent,
            child_start,
            children,
        }
    }

    #[inline]
    fn children_of(&self, r: u32) -> &[u32] {
        let r = r as usize;
        &self.children[self.child_start[r] as usize..self.child_start[r + 1] as usize]
    }

    /// The subtree under `root`, breadth-first, into `tree` (cleared first).
    fn subtree(&self, root: u32, tree: &mut Vec<u32>) {
        tree.clear();
        tree.push(root);
        let mut head = 0;
        while head < tree.len() {
            let r = tree[head];
            head += 1;
            tree.extend_from_slice(self.children_of(r));
        }
    }

    /// Appends the subtree `tree` (breadth-first from its root) to `out` in pass order: memory
    /// order when that puts every parent first (ranks are memory order), else level by level,
    /// each level in memory order.
    fn order_subtree(&self, tree: &mut [u32], out: &mut Vec<u32>) {
        if tree[1..].iter().all(|&r| self.parent[r as usize] < r) {
            tree.sort_unstable();
        } else {
            // Breadth-first lists each level whole, after the one above it.
            let (mut start, mut end) = (0, 1);
            while start < tree.len() {
                let next = end
                    + tree[start..end]
                        .iter()
                        .map(|&r| self.children_of(r).len())
                        .sum::<usize>();
                tree[start..end].sort_unstable();
                (start, end) = (end, next);
            }
        }
        out.extend_from_slice(tree);
    }

    /// Fills `state`'s cells, parents and units: the spine, then each subtree.
    pub(super) fn order<L: Component, G: Component>(&self, state: &mut Propagate<L, G>) {
        let n = self.parent.len();
        let mut spine = Vec::new();
        let mut ranks = Vec::with_capacity(n);
        let mut starts = Vec::new();
        let mut tree = Vec::new();
        let mut size: Vec<u32> = Vec::new();
        let mut stack = Vec::new();
        for root in (0..n as u32).filter(|&r| self.parent[r as usize] == NO_PARENT) {
            self.subtree(root, &mut tree);
            if tree.len() <= UNIT_NODES {
                starts.push(ranks.len());
                self.order_subtree(&mut tree, &mut ranks);
                continue;
            }
            // A large tree: subtree sizes, then a spine down to subtrees of `UNIT_NODES`.
            size.resize(n, 0);
            for &r in tree.iter().rev() {
                size[r as usize] += 1;
                let p = self.parent[r as usize];
                if r != root {
                    size[p as usize] += size[r as usize];
                }
            }
            stack.push(root);
            while let Some(r) = stack.pop() {
                if size[r as usize] as usize <= UNIT_NODES {
                    self.subtree(r, &mut tree);
                    starts.push(ranks.len());
                    self.order_subtree(&mut tree, &mut ranks);
                } else {
                    spine.push(r);
                    stack.extend(self.children_of(r).iter().rev());
                }
            }
        }
        let node_of = if state.masked {
            vec![NO_PARENT; n]
        } else {
            Vec::new()
        };
        let mut out = OrderBuilder {
            forest: self,
            node_of,
            state,
        };
        let st = &mut *out.state;
        st.slot_nodes.clear();
        st.slot_nodes.resize(self.slots.len(), 0);
        st.row_bits = self.row_bits;
        for v in [
            &mut st.cells,
            &mut st.parents,
            &mut st.units,
            &mut st.parent_nodes,
        ] {
            v.clear();
        }
        st.cells.reserve(spine.len() + ranks.len());
        st.parents.reserve(spine.len() + ranks.len());
        spine.iter().for_each(|&r| out.push(r));
        let spine_len = spine.len() as u32;
        out.state
            .units
            .extend(starts.iter().map(|&s| spine_len + s as u32));
        ranks.iter().for_each(|&r| out.push(r));
        let st = &mut *out.state;
        st.partial.clear();
        for &cell in &st.cells {
            let slot = (cell >> st.row_bits) as usize;
            if st.slot_nodes[slot] != self.slot_len[slot] {
                st.partial.push(cell);
            }
        }
    }
}

/// Appends nodes to a [`Propagate`]'s order.
struct OrderBuilder<'a, L: Component, G: Component> {
    forest: &'a Forest,
    /// Per rank, its node index once pushed (masked passes only read it).
    node_of: Vec<u32>,
    state: &'a mut Propagate<L, G>,
}

impl<L: Component, G: Component> OrderBuilder<'_, L, G> {
    /// Appends rank `r`, whose parent was pushed already.
    #[inline]
    fn push(&mut self, r: u32) {
        let f = self.forest;
        let cell = f.cell_of[r as usize];
        let st = &mut *self.state;
        st.slot_nodes[(cell >> f.row_bits) as usize] += 1;
        let p = f.parent[r as usize];
        let parent = if p == NO_PARENT {
            NO_PARENT
        } else {
            f.cell_of[p as usize]
        };
        if st.masked {
            self.node_of[r as usize] = st.cells.len() as u32;
            let node = if p == NO_PARENT {
                NO_PARENT
            } else {
                self.node_of[p as usize]
            };
            st.parent_nodes.push(node);
        }
        st.cells.push(cell);
        st.parents.push(parent);
    }
}

/// The `ChildOf` values of `chunk`, whose column `col` in `arch` holds them.
fn child_of_values<'c>(arch: &'c Archetype, chunk: &'c Chunk, col: usize) -> &'c [ChildOf] {
    let base = arch.column_base(chunk, col);
    // SAFETY: column `col` of `arch` was found by `ChildOf`'s id, so it holds `ChildOf` values
    // (`Archetype` invariant 1), rows `0..len` initialised (`Chunk` invariant 2); the shared
    // borrow of the archetype keeps anything from writing them while the slice lives.
    unsafe { std::slice::from_raw_parts(base.cast::<ChildOf>().as_ptr(), chunk.len()) }
}
