//! The bottom-up pass (`Propagate::aggregate` / `par_aggregate`): children before parents,
//! each parent handed its children's finished results. Checked against a recursive reference
//! on random forests after random reparenting, with trees large enough to be cut into a spine
//! and subtrees, and bit for bit across thread counts with float sums.

use std::collections::HashMap;
use std::sync::Arc;

use ecs_core::{ChildOf, Entity, World};
use ecs_query::{Parallelism, Propagate, QueryExt, RefRO, UNIT_NODES};

#[derive(Clone, Copy)]
struct Weight(u64, f64);
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Total(u64, f64);

// Under Miri a hierarchy spawn costs ~30 ms (a plain one ~3), so its forests are small and
// few: the unsafe pass code is the same at any size below `UNIT_NODES`.
const N: usize = if cfg!(miri) {
    120
} else {
    3 * UNIT_NODES + 2_000
};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Moves `child` under `parent` unless that would close a cycle (`parent` is `child` or
/// below it): the pass leaves cycles alone, and the test is about trees.
fn reparent(world: &mut World, child: Entity, parent: Entity) {
    let mut up = Some(parent);
    while let Some(node) = up {
        if node == child {
            return;
        }
        up = world.get::<ChildOf>(node).ok().map(|p| p.0);
    }
    world.insert(child, (ChildOf(parent),)).unwrap();
}

/// A random forest: a few big trees (past `UNIT_NODES`, so spine and subtrees) and many
/// small ones, then random reparenting.
fn forest(seed: u64) -> (World, Vec<Entity>) {
    let mut rng = Rng(seed);
    let mut world = World::new();
    let mut ids: Vec<Entity> = Vec::with_capacity(N);
    for i in 0..N {
        let w = Weight(rng.next() % 1000, (rng.next() % 10_000) as f64 / 7.0);
        let e = if i == 0 || rng.below(20) == 0 {
            world.spawn((w, Total::default()))
        } else {
            // Mostly under a recent node: deep trees; sometimes under an early one: wide ones.
            let parent = if rng.below(2) == 0 {
                ids[i - 1 - rng.below(i.min(8))]
            } else {
                ids[rng.below(i.min(4))]
            };
            world.spawn((w, Total::default(), ChildOf(parent)))
        };
        ids.push(e);
    }
    for _ in 0..N / 10 {
        let (child, parent) = (ids[rng.below(N)], ids[rng.below(N)]);
        reparent(&mut world, child, parent);
    }
    world.check_invariants();
    (world, ids)
}

/// The integer sums by a plain recursive walk over `ChildOf`.
fn reference(world: &mut World) -> HashMap<Entity, u64> {
    let mut children: HashMap<Entity, Vec<Entity>> = HashMap::new();
    let mut roots = Vec::new();
    let mut weight = HashMap::new();
    for (e, w, parent) in world
        .query::<(Entity, RefRO<Weight>, Option<RefRO<ChildOf>>)>()
        .iter()
    {
        weight.insert(e, w.0);
        match parent {
            Some(p) => children.entry(p.0).or_default().push(e),
            None => roots.push(e),
        }
    }
    fn sum(
        e: Entity,
        children: &HashMap<Entity, Vec<Entity>>,
        weight: &HashMap<Entity, u64>,
        out: &mut HashMap<Entity, u64>,
    ) -> u64 {
        let below: u64 = children.get(&e).map_or(0, |cs| {
            cs.iter().map(|&c| sum(c, children, weight, out)).sum()
        });
        let total = weight[&e] + below;
        out.insert(e, total);
        total
    }
    let mut out = HashMap::new();
    for root in roots {
        sum(root, &children, &weight, &mut out);
    }
    out
}

fn init(w: &Weight, t: &mut Total) {
    *t = Total(w.0, w.1);
}

fn combine(parent: &mut Total, child: &Total) {
    parent.0 += child.0;
    parent.1 += child.1;
}

fn totals(world: &World, ids: &[Entity]) -> Vec<Total> {
    ids.iter()
        .map(|&e| *world.get::<Total>(e).unwrap())
        .collect()
}

#[test]
fn aggregate_equals_a_recursive_reference_on_random_forests() {
    let seeds: &[u64] = if cfg!(miri) { &[1] } else { &[1, 7, 0x5eed] };
    for &seed in seeds {
        let (mut world, ids) = forest(seed);
        let mut pass = Propagate::<Weight, Total>::new(&mut world);
        pass.aggregate(&mut world, init, combine);
        let want = reference(&mut world);
        assert_eq!(want.len(), N, "every node is in some tree");
        for &e in &ids {
            assert_eq!(
                world.get::<Total>(e).unwrap().0,
                want[&e],
                "seed {seed}, {e:?}"
            );
        }
        // Reparent a little more and run the kept state again: its order follows.
        let mut rng = Rng(seed ^ 0xabcdef);
        for _ in 0..50 {
            let (c, p) = (ids[rng.below(N)], ids[rng.below(N)]);
            reparent(&mut world, c, p);
        }
        pass.aggregate(&mut world, init, combine);
        let want = reference(&mut world);
        for &e in &ids {
            assert_eq!(
                world.get::<Total>(e).unwrap().0,
                want[&e],
                "seed {seed} after"
            );
        }
    }
}

fn par_totals(seed: u64, threads: Option<usize>) -> Vec<Total> {
    let (mut world, ids) = forest(seed);
    let mut pass = Propagate::<Weight, Total>::new(&mut world);
    match threads {
        None => pass.aggregate(&mut world, init, combine),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            Parallelism::Pool(Arc::new(pool))
                .scope(|| pass.par_aggregate(&mut world, init, combine));
        }
    }
    totals(&world, &ids)
}

#[test]
fn par_aggregate_is_bit_identical_to_aggregate_on_any_thread_count() {
    let seeds: &[u64] = if cfg!(miri) { &[3] } else { &[3, 11] };
    for &seed in seeds {
        let want = par_totals(seed, None);
        for threads in [1, 2, 4] {
            let got = par_totals(seed, Some(threads));
            let same = want
                .iter()
                .zip(&got)
                .all(|(a, b)| a.0 == b.0 && a.1.to_bits() == b.1.to_bits());
            assert!(same, "seed {seed}, {threads} threads");
        }
    }
}

#[test]
fn a_disabled_node_leaves_its_subtree_out_and_its_parent_sums_the_rest() {
    let mut world = World::new();
    world.register_enableable::<Weight>();
    let root = world.spawn((Weight(1, 0.0), Total::default()));
    let a = world.spawn((Weight(10, 0.0), Total::default(), ChildOf(root)));
    let a1 = world.spawn((Weight(100, 0.0), Total::default(), ChildOf(a)));
    let b = world.spawn((Weight(1000, 0.0), Total::default(), ChildOf(root)));
    world.set_enabled::<Weight>(a, false).unwrap();
    let mut pass = Propagate::<Weight, Total>::new(&mut world);
    pass.aggregate(&mut world, init, combine);
    assert_eq!(world.get::<Total>(root).unwrap().0, 1001);
    assert_eq!(world.get::<Total>(b).unwrap().0, 1000);
    // `a` and its subtree were not visited: their values are as they were.
    assert_eq!(world.get::<Total>(a).unwrap().0, 0);
    assert_eq!(world.get::<Total>(a1).unwrap().0, 0);
}
