//! Hierarchy-ordered propagation (bevy's transform propagation): for every node of the
//! [`ChildOf`] forest, a value `G` computed from the node's own `L` and its parent's `G`,
//! parents before children.
//!
//! A node is an entity with both `L` and `G` (both enabled, where either is enableable). A
//! node without `ChildOf` is a root; a node is visited when it is a root or its parent is a
//! visited node, so a node whose parent is not a node (lacks `L` or `G`, or has one disabled)
//! is left alone with its whole subtree, as are nodes on a `ChildOf` cycle.
//!
//! [`Propagate`] keeps the forest's order between runs: per node, where its cells are and
//! where its parent's `G` is, each packed into a `u32` (chunk slot and row), so a pass is one
//! flat loop over 8 bytes per node plus the cells themselves, the shape of a hand-written loop
//! over `Vec`s with parent indices. The order is rebuilt when the hierarchy's shape may
//! have changed: a row of a matched archetype added, removed or moved
//! ([`Archetype::rows_epoch`](ecs_core::Archetype::rows_epoch)), a relationship written
//! ([`World::relationship_version`]), or a new archetype holding `L` and `G`. Values, and
//! enable bits, change without a rebuild.
//!
//! **Order.** Within a tree, nodes go in memory order (archetype, chunk, row) when that puts
//! every parent first, as it does when children were spawned after their parents; otherwise
//! level by level, each level in memory order. A tree of more than [`UNIT_NODES`] nodes is cut
//! into subtrees of at most that many, below a *spine* of the nodes above the cut.
//!
//! **Parallel runs and determinism.** [`Propagate::par_run`] runs the spine first, on the
//! calling thread, then the subtrees as tasks on the thread's
//! [`Parallelism`](crate::Parallelism). Each node's value is computed from its parent's by the
//! same call on any thread, and a subtree's nodes are all in one task, so the result is
//! bit-identical to [`Propagate::run`] on any number of threads.

use std::any::type_name;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use ecs_core::{
    Archetype, ChildOf, Chunk, Component, ComponentId, EnableMask, Entity, World, WorldId,
};

use crate::element::refuse_immutable;
use crate::par::Parallelism;

/// The most nodes one subtree task holds: a larger tree is cut below a spine of its upper
/// nodes. A constant, not a share of the thread count, so the order is the same on any pool.
pub const UNIT_NODES: usize = 4096;

/// The parent cell, and parent node, of a root.
const NO_PARENT: u32 = u32::MAX;
/// The parent rank of a node whose parent is not a node.
const DETACHED: u32 = u32::MAX - 1;

/// A node's cell (chunk slot and row) packed into a `u32`: `slot << row_bits | row`.
type Cell = u32;

/// An archetype holding `L` and `G`, as the order was built from it.
struct Matched {
    index: usize,
    rows_epoch: u64,
    local: usize,
    global: usize,
    child_of: Option<usize>,
    /// Enable-mask slots of `L` and `G`, where enableable.
    local_bit: Option<usize>,
    global_bit: Option<usize>,
}

/// A chunk of a matched archetype: `matched[arch]`, chunk `chunk`.
#[derive(Clone, Copy)]
struct Slot {
    arch: u32,
    chunk: u32,
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
    world: WorldId,
    local: ComponentId,
    global: ComponentId,
    child_of: ComponentId,
    /// `world.archetypes().len()` when `matched` was last brought up to date.
    archetypes_seen: usize,
    relationship_version: u64,
    built: bool,
    matched: Vec<Matched>,
    slots: Vec<Slot>,
    /// Per slot, how many of its rows are nodes.
    slot_nodes: Vec<u32>,
    /// Bits of a packed [`Cell`] that hold the row.
    row_bits: u32,
    /// Per node in pass order (the spine's, then each subtree's), its cell and its parent's
    /// (`NO_PARENT` for a root).
    cells: Vec<Cell>,
    parents: Vec<Cell>,
    /// Node index where each subtree starts (the spine is `..units[0]`).
    units: Vec<u32>,
    /// Cells of the nodes in slots not every row of which is a node: stamped one by one.
    partial: Vec<Cell>,
    /// Per node, its parent's node index (`NO_PARENT` for a root); kept only when some
    /// matched archetype has `L` or `G` enableable, where a skipped parent skips the child.
    parent_nodes: Vec<u32>,
    masked: bool,
    rebuilds: u64,
    _types: PhantomData<fn() -> (L, G)>,
}

impl<L: Component, G: Component> Propagate<L, G> {
    /// A pass over `world`'s hierarchy, registering `L` and `G`. The order is built at the
    /// first run.
    ///
    /// # Panics
    /// If `L` and `G` are one type (read and written at once), or `G` is immutable.
    pub fn new(world: &mut World) -> Self {
        let local = world.register_component::<L>();
        let global = world.register_component::<G>();
        assert!(
            local != global,
            "`Propagate<{0}, {0}>` reads and writes `{0}`: the local and the propagated value \
             must be two types",
            type_name::<L>()
        );
        refuse_immutable(world.components(), global);
        Self {
            world: world.id(),
            local,
            global,
            child_of: world.register_component::<ChildOf>(),
            archetypes_seen: 0,
            relationship_version: 0,
            built: false,
            matched: Vec::new(),
            slots: Vec::new(),
            slot_nodes: Vec::new(),
            row_bits: 0,
            cells: Vec::new(),
            parents: Vec::new(),
            units: Vec::new(),
            partial: Vec::new(),
            parent_nodes: Vec::new(),
            masked: false,
            rebuilds: 0,
            _types: PhantomData,
        }
    }

    /// Writes `G` of every visited node, parents before children: `f(parent, local, global)`
    /// gets the parent's `G` (`None` for a root), the node's `L` and its `G`. Rows written are
    /// stamped changed at a tick of their own (the world's tick advances, as a one-shot query's
    /// run does).
    ///
    /// # Panics
    /// If `world` is not the world this state was made for.
    pub fn run(&mut self, world: &mut World, mut f: impl FnMut(Option<&G>, &L, &mut G)) {
        self.refresh(world);
        let tick = world.advance_tick();
        let pass = Pass::new(self, world, tick);
        // SAFETY: `pass` was made from `&mut World` just now and lives only for this call, so
        // nothing else touches the world meanwhile; every node, once, in order, on this thread.
        unsafe { pass.run_nodes(0..self.cells.len(), &mut f) };
    }

    /// [`Propagate::run`] with the subtrees as tasks on this thread's
    /// [`Parallelism`](crate::Parallelism): the same values, bit for bit, on any number of
    /// threads (see the module docs).
    ///
    /// # Panics
    /// As [`Propagate::run`]; a panic of `f` on a task reaches the caller.
    pub fn par_run(&mut self, world: &mut World, f: impl Fn(Option<&G>, &L, &mut G) + Send + Sync) {
        self.refresh(world);
        let tick = world.advance_tick();
        let pass = Pass::new(self, world, tick);
        let spine = self.units.first().map_or(self.cells.len(), |&u| u as usize);
        // SAFETY: as in `run`: the spine runs here, before any task starts.
        unsafe { pass.run_nodes(0..spine, &mut |p, l, g| f(p, l, g)) };
        let target = Parallelism::current();
        let tasks = self.tasks(target.threads());
        target.for_each(tasks, |nodes| {
            // SAFETY: every task's nodes are whole subtrees, each in exactly one task; a
            // subtree's nodes read only their own and their ancestors' cells (the spine's,
            // written before the tasks started, or the subtree's own), so no cell is written
            // by one task while another reads or writes it.
            unsafe { pass.run_nodes(nodes, &mut |p, l, g| f(p, l, g)) }
        });
    }

    /// The nodes the last run visited (enable bits aside), for reports and tests.
    pub fn nodes(&self) -> usize {
        self.cells.len()
    }

    /// How many times the order was built: once at the first run, then once per run that
    /// followed a change to the hierarchy's shape (see the module docs).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// Node ranges of the subtrees, grouped into about four tasks per thread by node count.
    fn tasks(&self, threads: usize) -> Vec<std::ops::Range<usize>> {
        let Some(&spine) = self.units.first() else {
            return Vec::new();
        };
        let end = self.cells.len();
        let per_task = (end - spine as usize).div_ceil(threads.max(1) * 4).max(1);
        let mut tasks = Vec::new();
        let mut start = spine as usize;
        for &unit in &self.units[1..] {
            if unit as usize - start >= per_task {
                tasks.push(start..unit as usize);
                start = unit as usize;
            }
        }
        if start < end {
            tasks.push(start..end);
        }
        tasks
    }

    /// Brings the order up to date with `world`.
    fn refresh(&mut self, world: &World) {
        assert!(
            world.id() == self.world,
            "`Propagate<{}, {}>` used with a world it was not made for",
            type_name::<L>(),
            type_name::<G>()
        );
        let archetypes = world.archetypes();
        let mut current = self.built && world.relationship_version() == self.relationship_version;
        if current && archetypes.len() != self.archetypes_seen {
            // A new archetype matters only if it holds both types.
            current = !archetypes[self.archetypes_seen..]
                .iter()
                .any(|a| a.column(self.local).is_some() && a.column(self.global).is_some());
            self.archetypes_seen = archetypes.len();
        }
        current = current
            && self
                .matched
                .iter()
                .all(|m| archetypes[m.index].rows_epoch() == m.rows_epoch);
        if !current {
            self.rebuild(world);
        }
    }

    fn rebuild(&mut self, world: &World) {
        let archetypes = world.archetypes();
        self.archetypes_seen = archetypes.len();
        self.relationship_version = world.relationship_version();
        self.built = true;
        self.rebuilds += 1;
        self.matched.clear();
        for (index, arch) in archetypes.iter().enumerate() {
            let (Some(local), Some(global)) = (arch.column(self.local), arch.column(self.global))
            else {
                continue;
            };
            self.matched.push(Matched {
                index,
                rows_epoch: arch.rows_epoch(),
                local,
                global,
                child_of: arch.column(self.child_of),
                local_bit: arch.enable_slot(local),
                global_bit: arch.enable_slot(global),
            });
        }
        self.masked = self
            .matched
            .iter()
            .any(|m| m.local_bit.is_some() || m.global_bit.is_some());
        let forest = Forest::of(world, &self.matched);
        forest.order(self);
        self.slots = forest.slots;
    }
}

/// The forest as ranks: every node of the matched archetypes numbered in memory order, with
/// its cell, its parent's rank and its children.
struct Forest {
    slots: Vec<Slot>,
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
    fn of(world: &World, matched: &[Matched]) -> Self {
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
    fn order<L: Component, G: Component>(&self, state: &mut Propagate<L, G>) {
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
struct Pass<'a, L, G> {
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
    fn new(state: &'a Propagate<L, G>, world: &'a World, tick: u64) -> Self {
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
    unsafe fn run_nodes(
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
