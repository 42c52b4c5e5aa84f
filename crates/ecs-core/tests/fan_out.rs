//! Huge fan-out (issue 53): a source leaving a target list costs O(1) whatever the list's
//! length. Short tails keep their order; a list with more than 64 entries after the leaving one
//! moves its last entry into the hole. Both sides agree after every removal, in any order.

use ecs_core::{ChildOf, Entity, World};

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
