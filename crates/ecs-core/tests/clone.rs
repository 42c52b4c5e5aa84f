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
        world.clone_entity_with(e, &CloneOptions::new().strict()),
        Err(CloneError::NotClonable { component, .. }) if component.ends_with("Opaque")
    ));
    assert_eq!(world.len(), before, "a failed clone spawns nothing");
    // By default what cannot be cloned is left out, and the rest copied.
    let lenient = world.clone_entity(e).unwrap();
    assert!(world.has::<Name>(lenient) && world.has::<Hp>(lenient));
    assert!(!world.has::<Opaque>(lenient));
    world.despawn(lenient).unwrap();
    // Strict, with the type denied: no refusal.
    world
        .clone_entity_with(e, &CloneOptions::new().strict().deny::<Opaque>())
        .unwrap();
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

#[test]
fn a_subtree_with_unclonable_components_is_copied_without_them_into_another_world() {
    let mut world = world();
    let root = world.spawn((Name("tank".into()), Opaque));
    let child = world.spawn((ChildOf(root), Hp(3), Opaque));
    let mut other = World::new();
    other.register_clone::<Name>();
    other.register_clone::<Hp>();
    let copy = world
        .clone_entity_into(root, &mut other, &CloneOptions::new().with_children())
        .unwrap();
    assert_eq!(other.get::<Name>(copy), Ok(&Name("tank".into())));
    assert!(!other.has::<Opaque>(copy));
    let copied_child = other.children(copy)[0];
    assert_eq!(other.get::<Hp>(copied_child), Ok(&Hp(3)));
    assert!(!other.has::<Opaque>(copied_child));
    // Strict refuses the same subtree, naming the type, and spawns nothing there.
    let before = other.len();
    let strict = CloneOptions::new().with_children().strict();
    assert!(matches!(
        world.clone_entity_into(child, &mut other, &strict),
        Err(CloneError::NotClonable { component, .. }) if component.ends_with("Opaque")
    ));
    assert_eq!(other.len(), before);
    other.check_invariants();
}
