//! Entity ids inside cloned components (`register_map_entities`): ids naming entities of the
//! copy point at their clones, ids outside the copy are kept in the same world and refused into
//! another one, before anything is spawned.

use ecs_core::{ChildOf, CloneError, CloneOptions, Entity, MapEntities, World};

/// An entity's aim at another, and a list of the entities it commands.
#[derive(Clone, Debug, PartialEq)]
struct Orders {
    aim: Option<Entity>,
    squad: Vec<Entity>,
}

impl MapEntities for Orders {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        self.aim.map_entities(map);
        self.squad.map_entities(map);
    }
}

/// A type holding an id that is *not* registered for mapping: copied as it is.
#[derive(Clone, Debug, PartialEq)]
struct Note(Entity);

fn world() -> World {
    let mut world = World::new();
    world.register_map_entities::<Orders>();
    world.register_clone::<Note>();
    world.register_pod::<u32>();
    world
}

/// A root with two children; the root's `Orders` name both, the first child aims at the second.
fn squad(world: &mut World) -> (Entity, Entity, Entity) {
    let root = world.spawn((1u32,));
    let a = world.spawn((ChildOf(root), 2u32));
    let b = world.spawn((ChildOf(root), 3u32));
    world
        .insert(
            root,
            (Orders {
                aim: None,
                squad: vec![a, b],
            },),
        )
        .unwrap();
    world
        .insert(
            a,
            (Orders {
                aim: Some(b),
                squad: vec![],
            },),
        )
        .unwrap();
    (root, a, b)
}

#[test]
fn a_subtree_clone_points_at_the_clones_and_leaves_the_original_alone() {
    let mut world = world();
    let (root, a, b) = squad(&mut world);
    world.insert(a, (Note(b),)).unwrap();
    let copy = world
        .clone_entity_with(root, &CloneOptions::new().with_children())
        .unwrap();
    let kids = world.children(copy).to_vec();
    assert_eq!(kids.len(), 2);
    assert_eq!(world.get::<Orders>(copy).unwrap().squad, kids);
    assert_eq!(world.get::<Orders>(kids[0]).unwrap().aim, Some(kids[1]));
    // The unregistered type keeps the original's id.
    assert_eq!(world.get::<Note>(kids[0]).unwrap().0, b);
    // The originals are untouched.
    assert_eq!(world.get::<Orders>(root).unwrap().squad, [a, b]);
    assert_eq!(world.get::<Orders>(a).unwrap().aim, Some(b));
    world.check_invariants();
}

#[test]
fn in_the_same_world_ids_outside_the_copy_are_kept() {
    let mut world = world();
    let (_root, a, b) = squad(&mut world);
    // Cloning `a` alone: its aim at `b` (not copied) still names `b`.
    let copy = world.clone_entity(a).unwrap();
    assert_eq!(world.get::<Orders>(copy).unwrap().aim, Some(b));
}

#[test]
fn into_another_world_the_ids_name_the_clones_there_even_when_the_ids_are_taken() {
    let mut world = world();
    let (root, _a, _b) = squad(&mut world);
    let mut other = World::new();
    other.register_map_entities::<Orders>();
    // Occupy the ids the originals have, so a copied-through id would name a stranger.
    let strangers: Vec<Entity> = (0..8).map(|_| other.spawn(())).collect();
    let copy = world
        .clone_entity_into(root, &mut other, &CloneOptions::new().with_children())
        .unwrap();
    let kids = other.children(copy).to_vec();
    assert_eq!(other.get::<Orders>(copy).unwrap().squad, kids);
    assert_eq!(other.get::<Orders>(kids[0]).unwrap().aim, Some(kids[1]));
    assert_eq!(other.get::<u32>(kids[1]), Ok(&3));
    for id in &other.get::<Orders>(copy).unwrap().squad {
        assert!(!strangers.contains(id));
    }
    other.check_invariants();
}

#[test]
fn into_another_world_an_id_outside_the_copy_is_refused_before_anything_is_spawned() {
    let mut world = world();
    let (_root, a, b) = squad(&mut world);
    let mut other = World::new();
    let before = other.len();
    let err = world
        .clone_entity_into(a, &mut other, &CloneOptions::new())
        .unwrap_err();
    assert_eq!(
        err,
        CloneError::OutsideTheCopy {
            entity: a,
            component: std::any::type_name::<Orders>(),
            held: b,
        }
    );
    assert!(err.to_string().contains("Orders"), "{err}");
    assert_eq!(other.len(), before);
    // Leaving the component out makes the clone possible.
    let copy = world
        .clone_entity_into(a, &mut other, &CloneOptions::new().deny::<Orders>())
        .unwrap();
    assert_eq!(other.get::<u32>(copy), Ok(&2));
    assert!(!other.has::<Orders>(copy));
}

#[test]
fn registering_for_snapshots_after_mapping_keeps_the_mapping() {
    let mut world = world();
    world.register_clone::<Orders>();
    let (root, _a, _b) = squad(&mut world);
    let copy = world
        .clone_entity_with(root, &CloneOptions::new().with_children())
        .unwrap();
    assert_eq!(
        world.get::<Orders>(copy).unwrap().squad,
        world.children(copy)
    );
}
