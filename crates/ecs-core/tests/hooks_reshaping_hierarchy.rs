//! Hooks that change the hierarchy in the middle of the change that runs them (issue 53,
//! finding 5): a child whose `on_add` hook despawns its new parent goes with that parent, as
//! its siblings do, rather than surviving as a root with its `ChildOf` silently dropped.

use ecs_core::{ChildOf, ComponentHooks, DeferredWorld, Entity, HookContext, World};

/// Despawns its holder's parent when added.
struct Fuse;

fn despawn_parent(mut world: DeferredWorld<'_>, ctx: HookContext) {
    if let Ok(&ChildOf(parent)) = world.get::<ChildOf>(ctx.entity) {
        world.commands().despawn(parent);
    }
}

fn world() -> World {
    let mut world = World::new();
    world
        .set_component_hooks::<Fuse>(ComponentHooks::new().on_add(despawn_parent))
        .unwrap();
    world
}

fn assert_gone(world: &World, entities: &[Entity]) {
    for &e in entities {
        assert!(!world.contains(e), "{e:?} outlived its parent");
    }
}

#[test]
fn a_child_whose_hook_despawns_its_new_parent_goes_with_it() {
    let mut world = world();
    let parent = world.spawn(());
    let sibling = world.spawn((ChildOf(parent),));
    let child = world.spawn((ChildOf(parent), Fuse));
    assert_gone(&world, &[parent, sibling, child]);
    world.check_invariants();
}

#[test]
fn inserting_the_link_and_the_fuse_on_an_existing_entity_does_the_same() {
    let mut world = world();
    let parent = world.spawn(());
    let sibling = world.spawn((ChildOf(parent),));
    let child = world.spawn((7u32,));
    world.insert(child, (ChildOf(parent), Fuse)).unwrap();
    assert_gone(&world, &[parent, sibling, child]);
    world.check_invariants();
}

#[test]
fn a_batch_of_such_children_goes_whole_and_leaves_the_rest_alone() {
    let mut world = world();
    let parent = world.spawn(());
    let elsewhere = world.spawn(());
    let kept = world.spawn((ChildOf(elsewhere),));
    let kids: Vec<Entity> = world
        .spawn_batch((0..5).map(|_| (ChildOf(parent), Fuse)))
        .collect();
    assert_gone(&world, &[parent]);
    assert_gone(&world, &kids);
    assert!(world.contains(kept) && world.contains(elsewhere));
    assert_eq!(world.children(elsewhere), [kept]);
    world.check_invariants();
}

#[test]
fn a_parent_that_was_dead_before_the_insert_only_drops_the_link() {
    // Not a cascade: the relationship named a dead entity from the start.
    let mut world = World::new();
    let parent = world.spawn(());
    world.despawn(parent).unwrap();
    let orphan = world.spawn((ChildOf(parent), 1u32));
    assert!(world.contains(orphan));
    assert!(!world.has::<ChildOf>(orphan));
    world.check_invariants();
}
