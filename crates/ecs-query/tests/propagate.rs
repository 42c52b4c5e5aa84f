//! `Propagate`: hierarchy-ordered passes against a walk of the world, the kept order's
//! rebuilds, parallel runs, change ticks, enable bits, snapshots, compaction and panics.

use std::sync::Arc;

use ecs_core::{ChildOf, Entity, World};
use ecs_query::{Changed, Parallelism, Propagate, QueryState, UNIT_NODES};

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Local {
    x: f32,
    scale: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Global {
    x: f32,
    scale: f32,
}

/// Splits archetypes: some nodes carry it.
#[derive(Clone, Copy)]
struct Tag(#[allow(dead_code)] u8);

const UNSET: Global = Global {
    x: f32::NAN,
    scale: f32::NAN,
};

fn step(parent: Option<&Global>, local: &Local, global: &mut Global) {
    let base = parent.copied().unwrap_or(Global { x: 0.0, scale: 1.0 });
    *global = Global {
        x: base.x + base.scale * local.x,
        scale: base.scale * local.scale,
    };
}

/// What a pass must leave: every node reachable from a root through nodes, computed from its
/// parent; `None` for entities the pass must not touch.
fn expected(world: &World) -> Vec<(Entity, Option<Global>)> {
    fn is_node(world: &World, e: Entity) -> bool {
        world.get::<Local>(e).is_ok() && world.get::<Global>(e).is_ok()
    }
    let all: Vec<Entity> = world
        .archetypes()
        .iter()
        .flat_map(|a| a.chunks().iter().flat_map(|c| c.entities().to_vec()))
        .collect();
    let mut out: Vec<(Entity, Option<Global>)> = all.iter().map(|&e| (e, None)).collect();
    out.sort_by_key(|p| p.0);
    let mut stack: Vec<(Entity, Option<Global>)> = all
        .iter()
        .filter(|&&e| is_node(world, e) && world.parent(e).is_none())
        .map(|&e| (e, None))
        .collect();
    while let Some((e, parent)) = stack.pop() {
        let mut g = UNSET;
        step(parent.as_ref(), world.get::<Local>(e).unwrap(), &mut g);
        let i = out.binary_search_by_key(&e, |p| p.0).unwrap();
        out[i].1 = Some(g);
        for &c in world.children(e) {
            if is_node(world, c) {
                stack.push((c, Some(g)));
            }
        }
    }
    out
}

/// Every entity's `Global`, after resetting them all to `UNSET` and running `pass`.
fn actual(world: &World) -> Vec<(Entity, Option<Global>)> {
    let mut out: Vec<(Entity, Option<Global>)> = world
        .archetypes()
        .iter()
        .flat_map(|a| a.chunks().iter().flat_map(|c| c.entities().to_vec()))
        .map(|e| (e, world.get::<Global>(e).ok().copied()))
        .collect();
    out.sort_by_key(|p| p.0);
    out
}

fn reset(world: &mut World) {
    let ids: Vec<Entity> = world
        .archetypes()
        .iter()
        .flat_map(|a| a.chunks().iter().flat_map(|c| c.entities().to_vec()))
        .collect();
    for e in ids {
        if let Ok(g) = world.get_mut::<Global>(e) {
            *g = UNSET;
        }
    }
}

/// Runs `pass` on a reset world and checks it against the walk (bit for bit).
fn check(world: &mut World, pass: &mut Propagate<Local, Global>) {
    reset(world);
    pass.run(world, step);
    let want: Vec<_> = expected(world)
        .into_iter()
        .map(|(e, g)| (e, g.map(|g| g.to_bits()), world.get::<Global>(e).is_ok()))
        .collect();
    let got: Vec<_> = actual(world)
        .into_iter()
        .map(|(e, g)| {
            let untouched = g.is_some_and(|g| g.x.is_nan());
            (
                e,
                g.filter(|_| !untouched).map(|g| g.to_bits()),
                g.is_some(),
            )
        })
        .collect();
    assert_eq!(got, want);
}

impl Global {
    fn to_bits(self) -> (u32, u32) {
        (self.x.to_bits(), self.scale.to_bits())
    }
}

/// `native` nodes or rounds, or `miri` under Miri (which runs this file for the unsafe pass).
fn size(native: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn local(i: usize) -> Local {
    Local {
        x: (i % 17) as f32,
        scale: 0.5 + (i % 7) as f32 * 0.1,
    }
}

/// A forest of `n` nodes: each node's parent one of the nodes before it (or none), some nodes
/// tagged (a second archetype), every 13th missing `Global` (its subtree is not visited).
fn forest(world: &mut World, n: usize, rng: &mut Rng) -> Vec<Entity> {
    let mut ids: Vec<Entity> = Vec::with_capacity(n);
    for i in 0..n {
        let e = world.spawn((local(i), UNSET));
        if i % 13 == 5 {
            world.remove::<(Global,)>(e).unwrap();
        }
        if i % 3 == 0 {
            world.insert(e, (Tag(1),)).unwrap();
        }
        if i > 0 && rng.below(8) != 0 {
            let p = ids[i - 1 - rng.below(i.min(12))];
            world.insert(e, (ChildOf(p),)).unwrap();
        }
        ids.push(e);
    }
    ids
}

#[test]
fn a_pass_matches_a_walk_of_the_world() {
    let mut world = World::with_test_chunk_size(1024);
    let mut rng = Rng(7);
    let ids = forest(&mut world, size(700, 40), &mut rng);
    // A parent that is not a node: its child (a node) is not visited.
    let plain = world.spawn(());
    world.insert(ids[10], (ChildOf(plain),)).unwrap();
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    check(&mut world, &mut pass);
    assert_eq!(pass.rebuilds(), 1);
    assert!(pass.nodes() > 0 && pass.nodes() < ids.len());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "safe bookkeeping over 300 nodes; the passes it runs are covered"
)]
fn the_order_is_kept_until_the_shape_changes() {
    let mut world = World::with_test_chunk_size(1024);
    let mut rng = Rng(11);
    let ids = forest(&mut world, 300, &mut rng);
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    check(&mut world, &mut pass);
    let mut rebuilds = pass.rebuilds();

    // Values change, entities outside the matched archetypes come and go: no rebuild.
    world.get_mut::<Local>(ids[4]).unwrap().x = 100.0;
    let other = world.spawn((5u64,));
    world.despawn(other).unwrap();
    check(&mut world, &mut pass);
    assert_eq!(
        pass.rebuilds(),
        rebuilds,
        "values and other archetypes keep the order"
    );

    // Each change of shape rebuilds, and the pass follows it.
    let lacking = *ids
        .iter()
        .find(|&&e| world.get::<Global>(e).is_err())
        .expect("every 13th node lacks `Global`");
    let changes: [&dyn Fn(&mut World); 6] = [
        &|w| w.insert(ids[40], (ChildOf(ids[200]),)).unwrap(), // re-parent in place
        &|w| w.remove::<(ChildOf,)>(ids[41]).map(drop).unwrap(), // becomes a root
        &|w| {
            w.spawn((local(1), UNSET, ChildOf(ids[250])));
        },
        &|w| w.insert(lacking, (UNSET,)).unwrap(), // gains `Global`: becomes a node
        &|w| w.insert(ids[60], (7u16,)).unwrap(),  // a new archetype holding both
        &|w| w.despawn(ids[2]).unwrap(),           // a subtree goes
    ];
    for (k, change) in changes.iter().enumerate() {
        change(&mut world);
        check(&mut world, &mut pass);
        assert_eq!(pass.rebuilds(), rebuilds + 1, "change {k} rebuilds once");
        rebuilds = pass.rebuilds();
    }
}

#[test]
fn par_run_is_bit_identical_to_run_on_any_thread_count() {
    let mut world = World::new();
    // One tree far larger than a subtree task (a spine above the cut), and many small ones.
    // Under Miri (which checks the tasks' disjoint writes here) the small ones only: a spine
    // takes more than `UNIT_NODES` nodes, minutes of Miri's time.
    let root = world.spawn((local(0), UNSET));
    let mut level = vec![root];
    let mut count = 1;
    while count < size(UNIT_NODES * 5, 20) {
        let mut next = Vec::new();
        for (k, &p) in level.iter().enumerate() {
            for j in 0..3 {
                next.push(world.spawn((local(k + j), UNSET, ChildOf(p))));
                count += 1;
            }
        }
        level = next;
    }
    let mut rng = Rng(3);
    forest(&mut world, size(5_000, 60), &mut rng);

    let mut reference = Propagate::<Local, Global>::new(&mut world);
    check(&mut world, &mut reference);
    let want = actual(&world);
    for threads in [1, 2, 4].into_iter().take(size(3, 2)) {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap(),
        );
        reset(&mut world);
        let mut pass = Propagate::<Local, Global>::new(&mut world);
        Parallelism::Pool(pool).scope(|| pass.par_run(&mut world, step));
        let got = actual(&world);
        let bits = |v: &[(Entity, Option<Global>)]| -> Vec<_> {
            v.iter()
                .map(|(e, g)| (*e, g.map(Global::to_bits)))
                .collect()
        };
        assert_eq!(bits(&got), bits(&want), "{threads} threads");
    }
}

#[test]
fn written_rows_read_as_changed_and_skipped_ones_do_not() {
    let mut world = World::new();
    let root = world.spawn((local(0), UNSET));
    let child = world.spawn((local(1), UNSET, ChildOf(root)));
    let plain = world.spawn(());
    let orphan = world.spawn((local(2), UNSET, ChildOf(plain)));
    let mut changed = QueryState::<Entity, Changed<Global>>::new(&mut world);
    assert_eq!(
        changed.iter(&world).count(),
        3,
        "spawned rows read as changed"
    );
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    pass.run(&mut world, step);
    let mut seen: Vec<Entity> = changed.iter(&world).collect();
    seen.sort();
    assert_eq!(seen, [root, child]);
    assert!(!seen.contains(&orphan));
    pass.run(&mut world, step);
    assert_eq!(changed.iter(&world).count(), 2, "every pass writes");
}

#[test]
fn disabled_nodes_are_skipped_with_their_subtrees() {
    let mut world = World::new();
    world.register_enableable::<Global>();
    let root = world.spawn((local(0), UNSET));
    let mid = world.spawn((local(1), UNSET, ChildOf(root)));
    let leaf = world.spawn((local(2), UNSET, ChildOf(mid)));
    let other = world.spawn((local(3), UNSET, ChildOf(root)));
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    world.set_enabled::<Global>(mid, false).unwrap();
    pass.run(&mut world, step);
    for e in [mid, leaf] {
        assert!(world.get::<Global>(e).unwrap().x.is_nan(), "{e:?} skipped");
    }
    assert!(!world.get::<Global>(other).unwrap().x.is_nan());
    world.set_enabled::<Global>(mid, true).unwrap();
    check(&mut world, &mut pass);
    assert!(!world.get::<Global>(leaf).unwrap().x.is_nan());
    assert_eq!(
        pass.rebuilds(),
        1,
        "enable bits are read per pass, not built in"
    );
}

#[test]
fn a_pass_follows_restore_and_compaction() {
    let mut world = World::with_test_chunk_size(512);
    world.register_clone::<ChildOf>();
    world.register_clone::<ecs_core::Children>();
    world.register_pod::<Local>();
    world.register_pod::<Global>();
    world.register_clone::<Tag>();
    let mut rng = Rng(5);
    let ids = forest(&mut world, size(400, 30), &mut rng);
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    check(&mut world, &mut pass);
    let snap = world.snapshot().unwrap();
    for &e in ids.iter().step_by(3) {
        if world.contains(e) {
            world.despawn(e).unwrap();
        }
    }
    check(&mut world, &mut pass);
    world.compact();
    check(&mut world, &mut pass);
    world.restore(&snap).unwrap();
    world.check_invariants();
    check(&mut world, &mut pass);
}

#[test]
fn a_panicking_pass_leaves_the_world_consistent() {
    let mut world = World::new();
    let mut rng = Rng(9);
    forest(&mut world, size(200, 40), &mut rng);
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    let mut calls = 0;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pass.run(&mut world, |p, l, g| {
            calls += 1;
            assert!(calls < 10, "the user's function panics");
            step(p, l, g);
        })
    }));
    assert!(result.is_err());
    world.check_invariants();
    check(&mut world, &mut pass);
}

#[test]
#[should_panic(expected = "reads and writes")]
fn one_type_for_both_sides_is_refused() {
    let mut world = World::new();
    Propagate::<Global, Global>::new(&mut world);
}

#[test]
#[should_panic(expected = "is immutable")]
fn an_immutable_target_is_refused() {
    let mut world = World::new();
    Propagate::<Local, ChildOf>::new(&mut world);
}

#[test]
#[should_panic(expected = "not made for")]
fn another_world_is_refused() {
    let mut world = World::new();
    let mut other = World::new();
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    pass.run(&mut other, step);
}

/// A random walk of structural changes, each followed by a pass checked against the walk.
#[test]
fn random_changes_keep_every_pass_exact() {
    let mut world = World::with_test_chunk_size(1024);
    world.register_enableable::<Local>();
    let mut rng = Rng(21);
    let mut ids = forest(&mut world, size(120, 30), &mut rng);
    let mut pass = Propagate::<Local, Global>::new(&mut world);
    for round in 0..size(300, 6) {
        let e = ids[rng.below(ids.len())];
        match rng.below(8) {
            0 => ids.push(world.spawn((local(round), UNSET, ChildOf(e)))),
            1 => {
                let p = ids[rng.below(ids.len())];
                let _ = world.set_parent(e, p); // refused where it would close a cycle
            }
            2 => drop(world.remove::<(ChildOf,)>(e)),
            3 if ids.len() > size(40, 10) => drop(world.despawn(e)),
            4 => drop(world.set_enabled::<Local>(e, rng.below(2) == 0)),
            5 => drop(world.insert(e, (Tag(2),))),
            // A raw insert may close a cycle: its nodes are never reached.
            6 if round % 5 == 0 => {
                let p = ids[rng.below(ids.len())];
                let _ = world.insert(e, (ChildOf(p),)); // fails if `e` or `p` is gone
            }
            _ => {
                if let Ok(l) = world.get_mut::<Local>(e) {
                    l.x += 1.0;
                }
            }
        }
        ids.retain(|&e| world.contains(e));
        check_enabled(&mut world, &mut pass);
    }
}

/// [`check`] where `Local` may be disabled: a disabled node is not a node.
fn check_enabled(world: &mut World, pass: &mut Propagate<Local, Global>) {
    reset(world);
    pass.run(world, step);
    let enabled = |w: &World, e: Entity| {
        w.get::<Local>(e).is_ok() && w.is_enabled::<Local>(e).unwrap_or(false)
    };
    let mut want: Vec<(Entity, Option<(u32, u32)>)> = Vec::new();
    let mut stack: Vec<(Entity, Option<Global>)> = Vec::new();
    let all: Vec<Entity> = world
        .archetypes()
        .iter()
        .flat_map(|a| a.chunks().iter().flat_map(|c| c.entities().to_vec()))
        .collect();
    for &e in &all {
        if enabled(world, e) && world.get::<Global>(e).is_ok() && world.parent(e).is_none() {
            stack.push((e, None));
        }
    }
    while let Some((e, parent)) = stack.pop() {
        let mut g = UNSET;
        step(parent.as_ref(), world.get::<Local>(e).unwrap(), &mut g);
        want.push((e, Some(g.to_bits())));
        for &c in world.children(e) {
            if enabled(world, c) && world.get::<Global>(c).is_ok() {
                stack.push((c, Some(g)));
            }
        }
    }
    want.sort_by_key(|p| p.0);
    let got: Vec<(Entity, Option<(u32, u32)>)> = actual(world)
        .into_iter()
        .filter(|(_, g)| g.is_some_and(|g| !g.x.is_nan()))
        .map(|(e, g)| (e, g.map(Global::to_bits)))
        .collect();
    assert_eq!(got, want);
}
