//! `#[derive(Bundle)]` nesting (`#[bundle]` fields flattened in place, to any depth), more
//! fields than any tuple impl, and the guarantee that a bundle is never stored as one
//! component by accident (inside a tuple, or as an unmarked field).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ecs::prelude::*;
use ecs_test_support::panic_message;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Frozen;
#[derive(Debug, Clone, PartialEq)]
struct Name(String);

#[derive(Bundle)]
struct Body {
    position: Position,
    velocity: Velocity,
}

#[derive(Bundle)]
struct Unit {
    #[bundle]
    body: Body,
    health: Health,
}

/// Three levels: a bundle holding a bundle holding a bundle, plus a tuple flattened with
/// `#[bundle]`.
#[derive(Bundle)]
struct Hero {
    name: Name,
    #[bundle]
    unit: Unit,
    #[bundle]
    extras: (Frozen, u64),
}

fn body() -> Body {
    Body {
        position: Position(1.0, 2.0),
        velocity: Velocity(3.0, 4.0),
    }
}

#[test]
fn a_bundle_field_is_flattened_into_its_components() {
    assert_eq!(<Unit as Bundle>::COMPONENT_COUNT, 3);
    assert_eq!(<Hero as Bundle>::COMPONENT_COUNT, 6);
    let mut world = World::new();
    let e = world.spawn(Unit {
        body: body(),
        health: Health(7),
    });
    assert_eq!(world.get::<Position>(e), Ok(&Position(1.0, 2.0)));
    assert_eq!(world.get::<Velocity>(e), Ok(&Velocity(3.0, 4.0)));
    assert_eq!(world.get::<Health>(e), Ok(&Health(7)));
    assert!(!world.has::<Body>(e) && !world.has::<Unit>(e));

    let h = world.spawn(Hero {
        name: Name("ada".into()),
        unit: Unit {
            body: body(),
            health: Health(9),
        },
        extras: (Frozen, 42),
    });
    assert_eq!(world.get::<Name>(h).unwrap().0, "ada");
    assert_eq!(world.get::<Health>(h), Ok(&Health(9)));
    assert_eq!(world.get::<Velocity>(h), Ok(&Velocity(3.0, 4.0)));
    assert!(world.has::<Frozen>(h));
    assert_eq!(world.get::<u64>(h), Ok(&42));
    assert_eq!(world.query::<(&Position, &Health)>().count(), 2);
    world.check_invariants();
}

#[test]
fn nested_bundles_insert_overwrite_remove_and_take_as_their_components() {
    let mut world = World::new();
    let e = world.spawn((Health(1),));
    // Insert over an entity that already has one of the types: the row gains the others.
    world
        .insert(
            e,
            Unit {
                body: body(),
                health: Health(2),
            },
        )
        .unwrap();
    assert_eq!(world.get::<Health>(e), Ok(&Health(2)));
    assert_eq!(world.get::<Position>(e), Ok(&Position(1.0, 2.0)));

    let hero = Hero {
        name: Name("bo".into()),
        unit: Unit {
            body: Body {
                position: Position(5.0, 5.0),
                velocity: Velocity(6.0, 6.0),
            },
            health: Health(3),
        },
        extras: (Frozen, 8),
    };
    world.insert(e, hero).unwrap();
    assert_eq!(world.get::<Position>(e), Ok(&Position(5.0, 5.0)));

    let taken: Hero = world.take(e).unwrap();
    assert_eq!(taken.name.0, "bo");
    assert_eq!(taken.unit.health, Health(3));
    assert_eq!(taken.unit.body.velocity, Velocity(6.0, 6.0));
    assert_eq!(taken.extras, (Frozen, 8));
    assert!(!world.contains(e));

    let f = world.spawn(Unit {
        body: body(),
        health: Health(4),
    });
    let removed: Body = world.remove(f).unwrap();
    assert_eq!(removed.position, Position(1.0, 2.0));
    assert!(world.has::<Health>(f) && !world.has::<Position>(f));
    world.check_invariants();
}

#[test]
fn nested_bundles_spawn_in_batches_and_through_commands() {
    let mut world = World::new();
    let ids: Vec<Entity> = world
        .spawn_batch((0..1000).map(|i| Unit {
            body: Body {
                position: Position(i as f32, 0.0),
                velocity: Velocity(1.0, 0.0),
            },
            health: Health(i),
        }))
        .collect();
    assert_eq!(ids.len(), 1000);
    assert_eq!(world.get::<Health>(ids[999]), Ok(&Health(999)));
    assert_eq!(world.get::<Position>(ids[10]), Ok(&Position(10.0, 0.0)));

    let mut schedule = Schedule::new();
    schedule.add_system(|mut commands: Commands| {
        commands.spawn(Unit {
            body: body(),
            health: Health(5000),
        });
    });
    schedule.run(&mut world).unwrap();
    assert_eq!(
        world
            .query::<&Health>()
            .iter()
            .filter(|h| h.0 == 5000)
            .count(),
        1
    );
    world.check_invariants();
}

/// Counts drops, so that a flattened field is dropped exactly once on every path.
struct Tracked(Arc<AtomicUsize>);
impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[derive(Bundle)]
struct Inner {
    tracked: Tracked,
    name: Name,
}

#[derive(Bundle)]
struct Outer {
    #[bundle]
    inner: Inner,
    health: Health,
}

#[test]
fn flattened_fields_are_dropped_once_on_every_path() {
    let drops = Arc::new(AtomicUsize::new(0));
    let outer = || Outer {
        inner: Inner {
            tracked: Tracked(drops.clone()),
            name: Name("x".into()),
        },
        health: Health(1),
    };
    let mut world = World::new();
    let a = world.spawn(outer());
    let b = world.spawn(outer());
    let c = world.spawn(outer());
    world.insert(a, outer()).unwrap(); // overwrites: the old Tracked drops
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    drop(world.take::<Outer>(b).unwrap());
    assert_eq!(drops.load(Ordering::Relaxed), 2);
    world.despawn(c).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), 4);
}

/// Twenty fields: more than any tuple impl, no limit in the derive.
#[derive(Bundle)]
struct Wide {
    f0: [u8; 1],
    f1: [u8; 2],
    f2: [u8; 3],
    f3: [u8; 4],
    f4: [u8; 5],
    f5: [u8; 6],
    f6: [u8; 7],
    f7: [u8; 8],
    f8: [u8; 9],
    f9: [u8; 10],
    f10: [u8; 11],
    f11: [u8; 12],
    f12: [u8; 13],
    f13: [u8; 14],
    f14: [u8; 15],
    f15: [u8; 16],
    f16: [u8; 17],
    f17: [u8; 18],
    f18: [u8; 19],
    f19: [u8; 20],
}

#[test]
fn a_bundle_takes_more_fields_than_any_tuple() {
    let wide = Wide {
        f0: [0; 1],
        f1: [1; 2],
        f2: [2; 3],
        f3: [3; 4],
        f4: [4; 5],
        f5: [5; 6],
        f6: [6; 7],
        f7: [7; 8],
        f8: [8; 9],
        f9: [9; 10],
        f10: [10; 11],
        f11: [11; 12],
        f12: [12; 13],
        f13: [13; 14],
        f14: [14; 15],
        f15: [15; 16],
        f16: [16; 17],
        f17: [17; 18],
        f18: [18; 19],
        f19: [19; 20],
    };
    let mut world = World::new();
    let e = world.spawn(wide);
    assert_eq!(world.get::<[u8; 1]>(e), Ok(&[0; 1]));
    assert_eq!(world.get::<[u8; 13]>(e), Ok(&[12; 13]));
    assert_eq!(world.get::<[u8; 20]>(e), Ok(&[19; 20]));
    let back: Wide = world.take(e).unwrap();
    assert_eq!(back.f16, [16; 17]);
    // Sixteen-element tuples are bundles too.
    let t = world.spawn((
        0u8,
        1u16,
        2u32,
        3u64,
        4u128,
        5i8,
        6i16,
        7i32,
        8i64,
        9i128,
        'a',
        true,
        1.0f32,
        2.0f64,
        Frozen,
        Health(5),
    ));
    assert_eq!(world.get::<Health>(t), Ok(&Health(5)));
}

/// Never used as a bundle before the misuse: the refusal does not depend on a first use.
#[derive(Bundle)]
struct NeverSpawned {
    health: Health,
}

#[test]
fn a_bundle_inside_a_tuple_is_refused_naming_it() {
    let mut world = World::new();
    let message = panic_message(|| {
        world.spawn((body(), Frozen));
    });
    assert!(
        message.contains("Body") && message.contains("bundle"),
        "{message}"
    );
    assert!(world.is_empty(), "nothing was spawned");

    let message = panic_message(|| {
        world.spawn((NeverSpawned { health: Health(1) }, Frozen));
    });
    assert!(message.contains("NeverSpawned"), "{message}");

    let e = world.spawn((Frozen,));
    let message = panic_message(|| {
        let _ = world.insert(e, (Health(1), body()));
    });
    assert!(message.contains("Body"), "{message}");
    assert!(
        !world.has::<Health>(e),
        "the refused insert changed nothing"
    );
    world.check_invariants();
    // The world still works, and the bundle alone is fine.
    world.insert(e, body()).unwrap();
    assert!(world.has::<Position>(e));
}

#[test]
fn a_bundle_is_refused_in_spawn_batch_and_commands_too() {
    let mut world = World::new();
    let message = panic_message(|| {
        world
            .spawn_batch((0..3).map(|_| (body(), Frozen)))
            .for_each(drop);
    });
    assert!(message.contains("Body"), "{message}");
    assert!(world.is_empty());

    let mut schedule = Schedule::new();
    schedule.add_system(|mut commands: Commands| {
        commands.spawn((body(), Frozen));
    });
    let message = panic_message(|| drop(schedule.run(&mut world)));
    assert!(message.contains("Body"), "{message}");
    world.check_invariants();
}
