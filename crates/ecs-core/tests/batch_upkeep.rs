//! A batch spawn, or a despawn, whose only hooked type is a relationship source keeps both
//! sides in one direct pass instead of one hook command per entity. Users rely on it giving
//! exactly what the hooks give: each test runs the same steps in a world where nothing
//! watches the relationship (the direct pass) and in one where an observer does (the hooks'
//! path), and compares every list.

use std::any::TypeId;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{ChildOf, Children, Entity, Lifecycle, ObserverKey, World};

mod common;
use common::relations::{LikedBy, Likes};

/// Children in a batch (fewer under Miri, still over several chunks).
const N: u64 = if cfg!(miri) { 100 } else { 3000 };

/// A world with small chunks (about 40 rows), so a batch spans several.
fn world() -> World {
    World::with_test_chunk_size(1024)
}

/// A world on the hooks' path: observers of every lifecycle change of `R`, doing nothing.
fn watched<R: 'static>(mut world: World) -> World {
    for kind in [
        Lifecycle::Add,
        Lifecycle::Insert,
        Lifecycle::Replace,
        Lifecycle::Remove,
    ] {
        world.add_observer_fn(
            ObserverKey::Lifecycle(kind, TypeId::of::<R>()),
            None,
            |_, _| {},
        );
    }
    world
}

/// Every parent's children, as indexes into `order` (so two worlds compare by shape).
fn lists(world: &World, parents: &[Entity], order: &[Entity]) -> Vec<Vec<usize>> {
    let index = |e: &Entity| order.iter().position(|o| o == e).expect("a known entity");
    parents
        .iter()
        .map(|&p| {
            world
                .get::<Children>(p)
                .map(|c| c.iter().map(index).collect())
                .unwrap_or_default()
        })
        .collect()
}

/// Parents (one despawned before the batch, one living in the batch's own archetype), then a
/// batch of `N` children over several chunks whose parents come in runs and alternate.
fn spawn_families(world: &mut World) -> (Vec<Entity>, Vec<Entity>) {
    let (a, b, dead) = (world.spawn(()), world.spawn(()), world.spawn(()));
    let inner = world.spawn((7u64, ChildOf(a)));
    world.despawn(dead).unwrap();
    let parents = [a, b, dead, inner];
    let kids: Vec<Entity> = world
        .spawn_batch((0..N).map(|i| {
            let parent = match i % 10 {
                0..=3 => a,
                4 | 5 => b,
                6 => dead,
                _ => inner,
            };
            (i, ChildOf(parent))
        }))
        .collect();
    let mut order = parents.to_vec();
    order.extend(&kids);
    (parents.to_vec(), order)
}

#[test]
fn a_batch_of_children_is_linked_as_the_hooks_link_it() {
    let mut direct = world();
    let mut hooked = watched::<ChildOf>(world());
    let (parents, order) = spawn_families(&mut direct);
    let (parents_h, order_h) = spawn_families(&mut hooked);
    direct.check_invariants();
    hooked.check_invariants();
    let got = lists(&direct, &parents, &order);
    assert_eq!(got, lists(&hooked, &parents_h, &order_h));
    // Spawn order within each list; the dead parent's children lost their `ChildOf`.
    assert_eq!(got[0].len() as u64, 1 + N / 10 * 4);
    assert!(got[0].windows(2).all(|w| w[0] < w[1]));
    assert!(got[2].is_empty());
    let orphan = order[4 + 6];
    assert!(direct.contains(orphan) && !direct.has::<ChildOf>(orphan));
    assert_eq!(
        direct.get::<Children>(parents[3]).unwrap().len() as u64,
        N / 10 * 3
    );
}

#[test]
fn children_despawned_one_by_one_leave_lists_as_the_hooks_leave_them() {
    let mut direct = world();
    let mut hooked = watched::<ChildOf>(world());
    let (parents, order) = spawn_families(&mut direct);
    let (parents_h, order_h) = spawn_families(&mut hooked);
    for (world, order) in [(&mut direct, &order), (&mut hooked, &order_h)] {
        // Every third child, then the nested parent itself (its children go with it).
        for &kid in order[4..].iter().step_by(3) {
            world.despawn(kid).unwrap();
        }
        world.despawn(order[3]).unwrap();
        world.check_invariants();
    }
    assert_eq!(
        lists(&direct, &parents[..2], &order),
        lists(&hooked, &parents_h[..2], &order_h)
    );
    assert_eq!(direct.len(), hooked.len());
}

/// Panics when dropped while armed.
struct Fuse(bool);

impl Drop for Fuse {
    fn drop(&mut self) {
        if self.0 && !std::thread::panicking() {
            panic!("fuse blew");
        }
    }
}

#[test]
fn a_child_whose_drop_panics_still_leaves_its_parents_list() {
    for world in [world(), watched::<ChildOf>(world())] {
        child_with_a_panicking_drop(world);
    }
}

fn child_with_a_panicking_drop(mut world: World) {
    let parent = world.spawn(());
    let kids: Vec<Entity> = world
        .spawn_batch((0..5).map(|i| (Fuse(i == 2), ChildOf(parent))))
        .collect();
    let blew = catch_unwind(AssertUnwindSafe(|| world.despawn(kids[2])));
    assert!(blew.is_err());
    assert!(!world.contains(kids[2]));
    world.check_invariants();
    let left: Vec<Entity> = world.get::<Children>(parent).unwrap().to_vec();
    assert_eq!(left, [kids[0], kids[1], kids[3], kids[4]]);
}

/// Many-to-many: a source may name a target twice; it is listed once.
#[test]
fn a_batch_of_many_to_many_sources_lists_each_source_once_per_target() {
    let run = |watch: bool| {
        let mut world = world();
        world.register_relationship::<Likes>().unwrap();
        if watch {
            world = watched::<Likes>(world);
        }
        let units: Vec<Entity> = (0..3).map(|_| world.spawn(())).collect();
        let turrets: Vec<Entity> = world
            .spawn_batch((0..if cfg!(miri) { 30 } else { 200usize }).map(|i| {
                let (x, y) = (units[i % 3], units[(i / 3) % 3]);
                (Likes(vec![x, y, x]),)
            }))
            .collect();
        world.check_invariants();
        for &t in turrets.iter().step_by(4) {
            world.despawn(t).unwrap();
        }
        world.check_invariants();
        let mut order = units.clone();
        order.extend(&turrets);
        units
            .iter()
            .map(|&u| {
                let list = world
                    .get::<LikedBy>(u)
                    .map(|l| l.0.clone())
                    .unwrap_or_default();
                list.iter()
                    .map(|e| order.iter().position(|o| o == e).unwrap())
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let direct = run(false);
    assert_eq!(direct, run(true));
    assert!(direct.iter().all(|l| !l.is_empty()));
}

#[test]
fn an_observer_added_after_the_first_despawn_sees_the_next_ones() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let mut world = world();
    let parent = world.spawn(());
    let kids: Vec<Entity> = world
        .spawn_batch((0..4u32).map(|i| (i, ChildOf(parent))))
        .collect();
    world.despawn(kids[0]).unwrap(); // the archetype's despawn plan is worked out here
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let observer = world.add_observer_fn(
        ObserverKey::Lifecycle(Lifecycle::Remove, TypeId::of::<ChildOf>()),
        None,
        move |world, entity| {
            // Before the change: the child is still listed.
            assert!(world
                .children(world.parent(entity).unwrap())
                .contains(&entity));
            counter.fetch_add(1, Ordering::Relaxed);
        },
    );
    world.despawn(kids[1]).unwrap();
    assert_eq!(seen.load(Ordering::Relaxed), 1);
    assert!(world.remove_observer(observer));
    world.despawn(kids[2]).unwrap();
    assert_eq!(seen.load(Ordering::Relaxed), 1);
    assert_eq!(world.children(parent), [kids[3]]);
    world.check_invariants();
}

/// Counts its drops; panics on drop while armed.
struct Counted(std::sync::Arc<std::sync::atomic::AtomicUsize>, bool);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.1 && !std::thread::panicking() {
            panic!("armed");
        }
    }
}

#[test]
fn a_subtree_that_is_whole_archetypes_drops_each_value_once_even_if_one_panics() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    for (armed, beside) in [(false, false), (true, false), (false, true), (true, true)] {
        let drops = std::sync::Arc::new(AtomicUsize::new(0));
        let mut world = world();
        // Only the first tree's node 77 is armed (the second tree stays).
        let tree = |world: &mut World, armed: bool| {
            let root = world.spawn(());
            let mut nodes = vec![root];
            for i in 0..120usize {
                let parent = nodes[i / 3];
                let value = Counted(drops.clone(), armed && i == 77);
                nodes.push(world.spawn((value, ChildOf(parent))));
            }
            root
        };
        let root = tree(&mut world, armed);
        let other = beside.then(|| tree(&mut world, false));
        let despawned = catch_unwind(AssertUnwindSafe(|| world.despawn(root)));
        assert_eq!(despawned.is_err(), armed);
        world.check_invariants();
        assert!(!world.contains(root));
        let left = if beside { 121 } else { 0 };
        assert_eq!(world.len() as usize, left);
        assert_eq!(drops.load(Ordering::Relaxed), 120);
        if let Some(other) = other {
            assert_eq!(world.children(other).len(), 3);
        }
    }
}

#[test]
fn an_archetype_emptied_at_once_by_a_subtree_despawn_takes_new_rows_cleanly() {
    let mut world = world();
    let root = world.spawn(());
    let leaves: Vec<Entity> = world
        .spawn_batch((0..150u32).map(|i| (i, ChildOf(root))))
        .collect();
    let arch = world.location(leaves[0]).unwrap().archetype;
    world.despawn(root).unwrap(); // every row of the leaves' archetype goes at once
    assert!(world.is_empty());
    assert!(leaves.iter().all(|&e| !world.contains(e)));
    assert_eq!(world.archetypes()[arch.index()].len(), 0);
    world.check_invariants();
    // The archetype takes rows again, and they hold what was written, not the old rows.
    let parent = world.spawn(());
    let kids: Vec<Entity> = world
        .spawn_batch((1000..1060u32).map(|i| (i, ChildOf(parent))))
        .collect();
    assert_eq!(world.archetypes()[arch.index()].len(), 60);
    for (i, &kid) in kids.iter().enumerate() {
        assert_eq!(world.get::<u32>(kid), Ok(&(1000 + i as u32)));
    }
    assert_eq!(world.children(parent), kids);
    world.check_invariants();
}
