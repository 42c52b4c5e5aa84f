//! Entity cloning: same world and another, allow / deny lists, subtrees, and the hierarchy's
//! own components left to the engine.

use ecs_core::{ChildOf, CloneError, CloneOptions, Entity, World};

#[derive(Clone, Debug, PartialEq)]
struct Name(String);
#[derive(Clone, Debug, PartialEq)]
struct Hp(u32);
struct Opaque;

fn world() -> World {
    let mut world = World::new();
    world.register_clone::<Name>();
    world.register_clone::<Hp>();
    world
}

#[test]
fn subtree_clone_is_a_separate_subtree_and_the_original_keeps_its_children() {
    let mut world = world();
    let root = world.spawn((Name("tank".into()), Hp(100)));
    let turret = world.spawn((ChildOf(root), Name("turret".into())));
    let gun = world.spawn((ChildOf(turret), Hp(5)));
    let copy = world
        .clone_entity_with(root, &CloneOptions::new().with_children())
        .unwrap();
    assert_eq!(world.children(root), [turret]);
    assert_eq!(world.children(turret), [gun]);
    let copied: Vec<Entity> = world.iter_descendants(copy).collect();
    assert_eq!(copied.len(), 2);
    assert!(!copied.contains(&turret) && !copied.contains(&gun));
    assert_eq!(world.get::<Name>(copied[0]), Ok(&Name("turret".into())));
    assert_eq!(world.get::<Hp>(copied[1]), Ok(&Hp(5)));
    assert_eq!(world.parent(copy), None);
    world.check_invariants();
    // Despawning the copy leaves the original whole.
    world.despawn(copy).unwrap();
    assert!(world.contains(gun));
    world.check_invariants();
}

#[test]
fn allow_deny_and_unclonable_types() {
    let mut world = world();
    let e = world.spawn((Name("a".into()), Hp(1), Opaque));
    let before = world.len();
    assert!(matches!(
        world.clone_entity(e),
        Err(CloneError::NotClonable { component, .. }) if component.ends_with("Opaque")
    ));
    assert_eq!(world.len(), before, "a failed clone spawns nothing");
    let only_hp = world
        .clone_entity_with(e, &CloneOptions::new().allow::<Hp>())
        .unwrap();
    assert!(world.has::<Hp>(only_hp) && !world.has::<Name>(only_hp));
    let no_opaque = world
        .clone_entity_with(e, &CloneOptions::new().deny::<Opaque>())
        .unwrap();
    assert!(world.has::<Name>(no_opaque) && !world.has::<Opaque>(no_opaque));
    world.despawn(e).unwrap();
    assert_eq!(world.clone_entity(e), Err(CloneError::NoSuchEntity(e)));
}

#[test]
fn clone_into_another_world_links_the_subtree_there() {
    let mut world = world();
    let parent = world.spawn(());
    let root = world.spawn((ChildOf(parent), Name("squad".into())));
    for i in 0..3 {
        world.spawn((ChildOf(root), Hp(i)));
    }
    let mut other = World::new();
    let copy = world
        .clone_entity_into(root, &mut other, &CloneOptions::new().with_children())
        .unwrap();
    assert_eq!(
        other.parent(copy),
        None,
        "the source world's parent is not carried over"
    );
    let hps: Vec<u32> = other
        .children(copy)
        .iter()
        .map(|&c| other.get::<Hp>(c).unwrap().0)
        .collect();
    assert_eq!(hps, [0, 1, 2]);
    other.check_invariants();
    world.check_invariants();
}
