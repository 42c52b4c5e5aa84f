//! The small conveniences of issue #16: tuple refusal, `Entity::PLACEHOLDER`, `remove_one`,
//! `take`, `world.entity(e)` and typed column slices.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::World;

#[derive(Debug, PartialEq, Clone, Copy)]
struct Position(f32);
#[derive(Debug, PartialEq, Clone, Copy)]
struct Velocity(f32);
#[derive(Debug, PartialEq)]
struct Predator;

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn nested_tuple_in_a_bundle_is_refused_naming_the_tuple() {
    let mut world = World::new();
    let msg = panic_message(|| {
        world.spawn(((Position(0.0), Velocity(1.0)), Predator));
    });
    assert!(msg.contains("is a tuple, which is never a component"), "{msg}");
    assert!(msg.contains("Position") && msg.contains("Velocity"), "{msg}");
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
