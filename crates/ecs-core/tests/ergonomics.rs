//! The small conveniences of issue #16: tuple refusal, `Entity::PLACEHOLDER`, `remove_one`,
//! `take`, `world.entity(e)` and typed column slices.

use ecs_test_support::panic_message;

use ecs_core::World;

#[derive(Debug, PartialEq, Clone, Copy)]
struct Position(f32);
#[derive(Debug, PartialEq, Clone, Copy)]
struct Velocity(f32);
#[derive(Debug, PartialEq)]
struct Predator;

#[test]
fn nested_tuple_in_a_bundle_is_refused_naming_the_tuple() {
    let mut world = World::new();
    let msg = panic_message(|| {
        world.spawn(((Position(0.0), Velocity(1.0)), Predator));
    });
    assert!(
        msg.contains("is a tuple, which is never a component"),
        "{msg}"
    );
    assert!(
        msg.contains("Position") && msg.contains("Velocity"),
        "{msg}"
    );
    assert!(msg.contains("wrap it in a named struct"), "{msg}");
    // Nothing was spawned and the world is still usable.
    assert!(world.is_empty());
    world.check_invariants();
    let e = world.spawn((Position(0.0), Velocity(1.0), Predator));
    assert!(world.has::<Position>(e));
    world.check_invariants();
}

#[test]
fn tuple_refused_by_insert_and_unit_too() {
    let mut world = World::new();
    let e = world.spawn((Predator,));
    let msg = panic_message(|| {
        let _ = world.insert_one(e, (1u8, 2u8));
    });
    assert!(msg.contains("`(u8, u8)` is a tuple"), "{msg}");
    let msg = panic_message(|| {
        let _ = world.insert_one(e, ());
    });
    assert!(msg.contains("`()` is a tuple"), "{msg}");
    assert!(world.has::<Predator>(e));
    world.check_invariants();
    // Looking a tuple up registers nothing and simply finds nothing.
    assert!(!world.has::<(u8, u8)>(e));
    assert!(world.get::<(u8, u8)>(e).is_err());
}

#[test]
fn newtype_around_a_tuple_is_a_component() {
    struct Pair((Position, Velocity));
    let mut world = World::new();
    let e = world.spawn((Pair((Position(1.0), Velocity(2.0))), Predator));
    assert_eq!(world.get::<Pair>(e).unwrap().0 .1, Velocity(2.0));
    // Arrays and options of tuples are not tuples either.
    let f = world.spawn(([(1u8, 2u8); 2], Some((3u8,))));
    assert_eq!(world.get::<[(u8, u8); 2]>(f), Ok(&[(1, 2); 2]));
    world.check_invariants();
}

use ecs_core::{ComponentError, Entity, EntityError};

#[test]
fn placeholder_never_resolves() {
    let mut world = World::new();
    for _ in 0..10 {
        world.spawn((Predator,));
    }
    let p = Entity::PLACEHOLDER;
    assert!(!world.contains(p));
    assert_eq!(
        world.get::<Predator>(p),
        Err(ComponentError::NoSuchEntity(p))
    );
    assert_eq!(world.insert_one(p, 1u8), Err(EntityError::NoSuchEntity(p)));
    assert!(world.entity(p).is_err());
    assert_eq!(Entity::from_bits(p.to_bits()), Some(p));
}

#[test]
fn remove_one_and_take_hand_values_back() {
    let mut world = World::new();
    let e = world.spawn((
        Position(1.0),
        Velocity(2.0),
        String::from("dropped on take"),
    ));
    assert_eq!(world.remove_one::<Velocity>(e), Ok(Velocity(2.0)));
    assert!(matches!(
        world.remove_one::<Velocity>(e),
        Err(ComponentError::MissingComponent { component, .. }) if component.ends_with("Velocity")
    ));
    // A failed take changes nothing.
    assert!(world.take::<(Position, Velocity)>(e).is_err());
    assert!(world.contains(e));
    let (p,) = world.take::<(Position,)>(e).unwrap();
    assert_eq!(p, Position(1.0));
    assert!(!world.contains(e));
    assert_eq!(
        world.take::<(Position,)>(e),
        Err(ComponentError::NoSuchEntity(e))
    );
    world.check_invariants();
}

#[test]
fn entity_views_coexist_and_list_components() {
    let mut world = World::new();
    let a = world.spawn((Position(1.0), Velocity(2.0)));
    let b = world.spawn((Position(3.0),));
    let (va, vb) = (world.entity(a).unwrap(), world.entity(b).unwrap());
    assert_eq!(
        va.get::<Position>().unwrap().0 + vb.get::<Position>().unwrap().0,
        4.0
    );
    assert!(va.has::<Velocity>() && !vb.has::<Velocity>() && !vb.has::<u64>());
    let names: Vec<_> = va.component_names().collect();
    assert_eq!(names.len(), 2);
    assert!(names.iter().any(|n| n.ends_with("Velocity")));
    assert_eq!(va.id(), a);
    assert!(format!("{va:?}").contains("Position"));
}

#[test]
fn typed_columns_per_chunk() {
    let mut world = World::with_test_chunk_size(256);
    let first = world.spawn((Position(0.0), Velocity(1.0)));
    for i in 1..40 {
        world.spawn((Position(i as f32), Velocity(1.0)));
    }
    let arch = world.location(first).unwrap().archetype;
    let chunks = world.column_chunks::<Position>(arch).len();
    assert!(chunks > 1, "test needs several chunks");
    for c in 0..chunks {
        let vel: Vec<f32> = world
            .column::<Velocity>(arch, c)
            .unwrap()
            .iter()
            .map(|v| v.0)
            .collect();
        for (p, v) in world
            .column_mut::<Position>(arch, c)
            .unwrap()
            .iter_mut()
            .zip(vel)
        {
            p.0 += v;
        }
    }
    let total: f32 = world
        .column_chunks::<Position>(arch)
        .flatten()
        .map(|p| p.0)
        .sum();
    assert_eq!(total, (1..=40).sum::<i32>() as f32);
    assert!(world.column::<Predator>(arch, 0).is_none());
    assert_eq!(world.column_chunks::<Predator>(arch).len(), 0);
    // Zero-sized columns work too.
    let z = world.spawn((Predator,));
    let za = world.location(z).unwrap().archetype;
    assert_eq!(world.column::<Predator>(za, 0).unwrap().len(), 1);
    world.check_invariants();
}
