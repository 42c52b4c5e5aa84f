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

use ecs_core::{ChildOf, Component, World};

use crate::element::refuse_immutable;
use crate::run::par::Parallelism;

mod forest;
mod pass;
mod state;

use forest::Forest;
use pass::Pass;
use state::Matched;
pub use state::{Propagate, UNIT_NODES};

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

    /// The bottom-up pass: children before parents, each parent handed its children's
    /// results. First `init(local, global)` sets every visited node's `G` from its `L`
    /// (parents first, the nodes [`Propagate::run`] visits); then `combine(parent, child)`
    /// folds each node's finished `G` into its parent's, a node only after all of its children
    /// were folded into it. A parent's children are folded in one fixed order (the reverse of
    /// the pass order), so sums of floats come out the same on every run. Rows written are
    /// stamped changed, as by [`Propagate::run`].
    ///
    /// ```
    /// use ecs_core::{ChildOf, World};
    /// use ecs_query::Propagate;
    ///
    /// struct People(u32);
    /// struct Total(u32);
    ///
    /// let mut world = World::new();
    /// let city = world.spawn((People(0), Total(0)));
    /// let district = world.spawn((People(10), Total(0), ChildOf(city)));
    /// world.spawn((People(5), Total(0), ChildOf(district)));
    /// world.spawn((People(7), Total(0), ChildOf(city)));
    ///
    /// let mut totals = Propagate::<People, Total>::new(&mut world);
    /// totals.aggregate(&mut world, |people, total| total.0 = people.0, |parent, child| {
    ///     parent.0 += child.0;
    /// });
    /// assert_eq!(world.get::<Total>(district).unwrap().0, 15);
    /// assert_eq!(world.get::<Total>(city).unwrap().0, 22);
    /// ```
    ///
    /// # Panics
    /// As [`Propagate::run`].
    pub fn aggregate(
        &mut self,
        world: &mut World,
        mut init: impl FnMut(&L, &mut G),
        mut combine: impl FnMut(&mut G, &G),
    ) {
        self.refresh(world);
        let tick = world.advance_tick();
        let pass = Pass::new(self, world, tick);
        let all = 0..self.cells.len();
        // SAFETY: as in `run`, for both loops: the pass lives only for this call, on this
        // thread, and each covers every node, whose parents are nodes too.
        unsafe {
            pass.run_nodes(all.clone(), &mut |_, l, g| init(l, g));
            pass.combine_nodes(all, &mut combine);
        }
    }

    /// [`Propagate::aggregate`] with the subtrees as tasks on this thread's
    /// [`Parallelism`](crate::Parallelism): each task sets and folds its own subtrees, then
    /// the calling thread folds the subtrees' roots and the spine. Every parent's children are
    /// folded in the same order as by `aggregate`, so the values are the same, bit for bit, on
    /// any number of threads.
    ///
    /// # Panics
    /// As [`Propagate::run`]; a panic of `init` or `combine` on a task reaches the caller.
    pub fn par_aggregate(
        &mut self,
        world: &mut World,
        init: impl Fn(&L, &mut G) + Send + Sync,
        combine: impl Fn(&mut G, &G) + Send + Sync,
    ) {
        self.refresh(world);
        let tick = world.advance_tick();
        let pass = Pass::new(self, world, tick);
        let spine = self.units.first().map_or(self.cells.len(), |&u| u as usize);
        // SAFETY: as in `par_run`: the spine's forward pass runs here, before any task.
        unsafe { pass.run_nodes(0..spine, &mut |_, l, g| init(l, g)) };
        let target = Parallelism::current();
        let tasks = self.tasks(target.threads());
        let units = &self.units;
        target.for_each(tasks, |nodes| {
            // SAFETY: as in `par_run` for the forward pass. The fold of each subtree leaves out
            // its root (the subtree's first node, whose parent is on the spine or none), so every
            // node folded has its parent in the same subtree, which is this task's alone.
            unsafe {
                pass.run_nodes(nodes.clone(), &mut |_, l, g| init(l, g));
                for unit in unit_ranges(units, nodes) {
                    pass.combine_nodes(unit.start + 1..unit.end, &mut |p, c| combine(p, c));
                }
            }
        });
        // The subtrees' roots, then the spine, each last node first: for every parent, the same
        // order of children as `aggregate`'s single backward walk (roots come after the spine).
        for &root in units.iter().rev() {
            let root = root as usize;
            // SAFETY: every task has finished; a root's parent is a spine node or none, and
            // nothing else runs on the pass now.
            unsafe { pass.combine_nodes(root..root + 1, &mut |p, c| combine(p, c)) };
        }
        // SAFETY: as above; spine nodes' parents are spine nodes.
        unsafe { pass.combine_nodes(0..spine, &mut |p, c| combine(p, c)) };
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

/// The subtrees (`units[i]..units[i + 1]`, the last ending at `nodes.end`) inside `nodes`, a
/// task's range of whole subtrees.
fn unit_ranges(
    units: &[u32],
    nodes: std::ops::Range<usize>,
) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let first = units.partition_point(|&u| (u as usize) < nodes.start);
    let last = units.partition_point(|&u| (u as usize) < nodes.end);
    (first..last).map(move |i| {
        let end = units
            .get(i + 1)
            .map_or(nodes.end, |&u| (u as usize).min(nodes.end));
        units[i] as usize..end
    })
}
