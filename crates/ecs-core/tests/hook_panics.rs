//! Unwinding keeps both sides of the hierarchy (issue 53, finding 1): a hook that panics in the
//! middle of a subtree's despawn does not leave a live entity whose `ChildOf` names a
//! despawned parent. The cascade finishes (a consequence's despawn is made even when its hook
//! panics), every queued fix-up runs, and then the panic reaches the caller.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{ChildOf, ComponentHooks, DeferredWorld, Entity, HookContext, World};

struct Fragile;

fn explode(_: DeferredWorld<'_>, _: HookContext) {
    panic!("on_remove of a grandchild");
}

/// A root with `width` children, each with `width` grandchildren; one grandchild holds a
/// `Fragile` whose `on_remove` panics.
fn tree(width: usize) -> (World, Entity, Vec<Entity>) {
    let mut world = World::new();
    world
        .set_component_hooks::<Fragile>(ComponentHooks::new().on_remove(explode))
        .unwrap();
    let root = world.spawn(());
    let mut all = Vec::new();
    for c in 0..width {
        let child = world.spawn((ChildOf(root),));
        all.push(child);
        for g in 0..width {
            let grandchild = if c == 1 && g == width / 2 {
                world.spawn((ChildOf(child), Fragile))
            } else {
                world.spawn((ChildOf(child),))
            };
            all.push(grandchild);
        }
    }
    (world, root, all)
}

#[test]
fn a_hook_panicking_in_a_subtree_despawn_leaves_both_sides_agreeing() {
    let (mut world, root, all) = tree(4);
    let result = catch_unwind(AssertUnwindSafe(|| world.despawn(root)));
    let message = *result.unwrap_err().downcast::<&str>().unwrap();
    assert_eq!(message, "on_remove of a grandchild");
    world.check_invariants();
    assert!(!world.contains(root));
    let alive: Vec<Entity> = all.into_iter().filter(|&e| world.contains(e)).collect();
    assert!(
        alive.is_empty(),
        "the cascade finished: {alive:?} still alive"
    );
    assert!(world.is_empty());
}

#[test]
fn a_panicking_hook_command_does_not_drop_the_fix_ups_queued_behind_it() {
    fn bomb(mut world: DeferredWorld<'_>, _: HookContext) {
        world.commands().add(|_| panic!("a hook's command"));
    }
    let mut world = World::new();
    world
        .set_component_hooks::<Fragile>(ComponentHooks::new().on_insert(bomb))
        .unwrap();
    let parent = world.spawn(());
    // One bundle: the `Fragile` hook's command is queued before `ChildOf`'s link.
    let result = catch_unwind(AssertUnwindSafe(|| {
        world.spawn((Fragile, ChildOf(parent)));
    }));
    assert!(result.is_err());
    world.check_invariants();
    assert_eq!(world.children(parent).len(), 1, "the link was still made");
}
