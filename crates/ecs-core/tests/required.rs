//! Required components: inserted where missing on spawn, batch spawn and insert, transitively,
//! before the requiring type's hooks run; cycles refused with a typed error.

use ecs_core::{ComponentHooks, DeferredWorld, Entity, HookContext, World, WorldError};

#[derive(Debug, Default, PartialEq, Clone, Copy)]
struct Position(f32);
#[derive(Debug, PartialEq, Clone, Copy)]
struct Health(u32);
#[derive(Debug, Default, PartialEq)]
struct Transform;
#[derive(Debug, Default, PartialEq)]
struct Unit;
#[derive(Debug, Default, PartialEq)]
struct Seen(bool);

fn world() -> World {
    let mut world = World::new();
    world.register_required::<Unit, Position>().unwrap();
    world
        .register_required_with::<Unit, Health>(|| Health(100))
        .unwrap();
    world.register_required::<Position, Transform>().unwrap();
    world
}

#[test]
fn spawn_batch_and_insert_add_what_is_missing_transitively() {
    let mut world = world();
    let a = world.spawn((Unit,));
    assert_eq!(world.get::<Position>(a), Ok(&Position(0.0)));
    assert_eq!(world.get::<Health>(a), Ok(&Health(100)));
    assert!(world.has::<Transform>(a), "Position requires Transform");

    // What the bundle brings is kept.
    let b = world.spawn((Unit, Health(7)));
    assert_eq!(world.get::<Health>(b), Ok(&Health(7)));

    let n = if cfg!(miri) { 20 } else { 300 };
    let ids: Vec<Entity> = world.spawn_batch((0..n).map(|_| (Unit,))).collect();
    assert!(ids
        .iter()
        .all(|&e| world.has::<Health>(e) && world.has::<Transform>(e)));

    let c = world.spawn((5u8,));
    world.insert(c, (Unit,)).unwrap();
    assert_eq!(world.get::<Health>(c), Ok(&Health(100)));
    // Re-inserting overwrites only what it names; a removed requirement is not re-added
    // by an overwrite (requirements are about additions).
    world.remove::<(Health,)>(c).unwrap();
    world.insert(c, (Unit,)).unwrap();
    assert!(!world.has::<Health>(c));
    world.check_invariants();
}

#[test]
fn required_components_are_in_place_before_the_requirer_s_hooks() {
    fn check(mut world: DeferredWorld<'_>, ctx: HookContext) {
        let ready = world.has::<Position>(ctx.entity) && world.has::<Health>(ctx.entity);
        world.commands().insert(ctx.entity, (Seen(ready),));
    }
    let mut world = world();
    world
        .set_component_hooks::<Unit>(ComponentHooks::new().on_add(check))
        .unwrap();
    let e = world.spawn((Unit,));
    assert_eq!(world.get::<Seen>(e), Ok(&Seen(true)));
}

#[test]
fn cycles_are_refused_and_change_nothing() {
    let mut world = world();
    assert_eq!(
        world.register_required::<Transform, Unit>(),
        Err(WorldError::RequiredCycle {
            component: std::any::type_name::<Transform>(),
            required: std::any::type_name::<Unit>(),
        })
    );
    assert!(world.register_required::<Unit, Unit>().is_err());
    let err = world.register_required::<Position, Unit>().unwrap_err();
    assert!(err.to_string().contains("already requires"), "{err}");
    assert!(world.required_components::<Transform>().is_empty());
    let e = world.spawn((Transform,));
    assert!(!world.has::<Unit>(e));
}
