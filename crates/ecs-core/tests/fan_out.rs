//! Huge fan-out (issue 53): a source leaving a target list costs O(1) whatever the list's
//! length. Short tails keep their order; a list with more than 64 entries after the leaving one
//! moves its last entry into the hole. Both sides agree after every removal, in any order.

use ecs_core::{ChildOf, Children, Entity, RelationshipTarget, World};

fn children(world: &World, parent: Entity) -> Vec<Entity> {
    world
        .get::<ecs_core::Children>(parent)
        .map(|c| c.to_vec())
        .unwrap_or_default()
}

/// A parent and `n` children, spawned in order.
fn family(n: usize) -> (World, Entity, Vec<Entity>) {
    let mut world = World::new();
    let parent = world.spawn(());
    let kids = world
        .spawn_batch((0..n as u32).map(|i| (i, ChildOf(parent))))
        .collect();
    (world, parent, kids)
}

#[test]
fn a_short_list_keeps_its_order_when_a_child_leaves() {
    let (mut world, parent, kids) = family(10);
    world.despawn(kids[3]).unwrap();
    world.remove::<(ChildOf,)>(kids[0]).unwrap();
    let mut want = kids.clone();
    want.retain(|&k| k != kids[3] && k != kids[0]);
    assert_eq!(children(&world, parent), want);
    world.check_invariants();
}

#[test]
fn a_long_list_moves_its_last_child_into_the_hole() {
    let (mut world, parent, kids) = family(100);
    // 99 children follow the first: the last one takes its place.
    world.despawn(kids[0]).unwrap();
    let list = children(&world, parent);
    assert_eq!(list.len(), 99);
    assert_eq!(list[0], kids[99]);
    assert_eq!(&list[1..], &kids[1..99]);
    // 20 follow the 80th (now at position 79): an ordered removal.
    world.despawn(kids[79]).unwrap();
    let list = children(&world, parent);
    assert_eq!(list[79..], kids[80..99]);
    world.check_invariants();
}

/// Children leaving in order, in reverse and in a scrambled order: after every removal the
/// list holds exactly the live children, each once, and every child's `ChildOf` agrees.
#[test]
fn both_sides_agree_after_every_removal_in_any_order() {
    let n = if cfg!(miri) { 80 } else { 600 };
    for order in 0..3 {
        let (mut world, parent, mut kids) = family(n);
        match order {
            1 => kids.reverse(),
            2 => {
                // A fixed scramble (a multiplicative walk over the indices).
                let scrambled = (0..n).map(|i| kids[(i * 7919) % n]).collect();
                kids = scrambled;
            }
            _ => {}
        }
        for (step, &kid) in kids.iter().enumerate() {
            if step % 3 == 0 {
                world.despawn(kid).unwrap();
            } else {
                world.remove::<(ChildOf,)>(kid).unwrap();
            }
            let mut left = children(&world, parent);
            left.sort();
            let mut want: Vec<Entity> = kids[step + 1..].to_vec();
            want.sort();
            assert_eq!(left, want, "order {order}, step {step}");
        }
        assert!(world.get::<ecs_core::Children>(parent).is_err());
        world.check_invariants();
    }
}

/// Two long lists, children moving between them, joining and leaving in a scrambled order, and
/// once a hand-written list in between (the removal search keeps an index of a long list; a
/// list rewritten behind it must not mislead it): after every step each list holds exactly
/// the children a plain model says it holds (looked at every 16 steps).
#[test]
fn long_lists_stay_exact_under_scrambled_joins_leaves_and_rewrites() {
    let (n, steps) = if cfg!(miri) {
        (270, 60)
    } else {
        (2_000, 6_000)
    };
    let mut world = World::new();
    let parents = [world.spawn(()), world.spawn(())];
    let mut model: [Vec<Entity>; 2] = [Vec::new(), Vec::new()];
    for (p, list) in parents.iter().zip(model.iter_mut()) {
        list.extend(world.spawn_batch((0..n as u32).map(|i| (i, ChildOf(*p)))));
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % below as u64) as usize
    };
    for step in 0..steps {
        let from = next(2);
        if model[from].is_empty() {
            continue;
        }
        let kid = model[from].swap_remove(next(model[from].len()));
        match next(4) {
            0 => world.despawn(kid).unwrap(),
            1 => {
                world.set_parent(kid, parents[1 - from]).unwrap();
                model[1 - from].push(kid);
            }
            2 => {
                world.remove::<(ChildOf,)>(kid).unwrap();
                let newcomer = world.spawn((0u32, ChildOf(parents[from])));
                model[from].push(newcomer);
            }
            _ => world.despawn(kid).unwrap(),
        }
        if step == steps / 2 {
            // The list rewritten by hand, reversed.
            let mut list = children(&world, parents[from]);
            list.reverse();
            world
                .insert(parents[from], (Children::from_sources(list),))
                .unwrap();
        }
        // A wrong removal stays wrong, so a look every few steps catches it.
        if step % 16 != 0 && step + 1 != steps {
            continue;
        }
        for (p, want) in parents.iter().zip(&model) {
            let mut got = children(&world, *p);
            got.sort();
            let mut want = want.clone();
            want.sort();
            assert_eq!(got, want, "step {step}");
        }
    }
    world.check_invariants();
}
