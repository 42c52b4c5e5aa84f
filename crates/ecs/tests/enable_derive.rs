//! `#[derive(Query)]` structs with `Option` fields and `Or` filters over enableable
//! components agree with the tuple they stand for, on the per-row and the chunk-loop paths.

use ecs::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shield(u32);
struct Tag;

#[derive(Query)]
struct Unit {
    entity: Entity,
    pos: RefRO<Pos>,
    shield: Option<RefRO<Shield>>,
}

#[derive(Query)]
struct Shielded {
    shield: RefRO<Shield>,
}

#[derive(Query)]
struct Tagged {
    entity: Entity,
    _tag: Or<(With<Shield>, With<Tag>)>,
}

fn world() -> World {
    let mut world = World::with_test_chunk_size(256);
    world.register_enableable::<Shield>();
    world.register_enableable::<Tag>();
    for i in 0..200u32 {
        let e = match i % 3 {
            0 => world.spawn((Pos(i), Shield(i))),
            1 => world.spawn((Pos(i), Shield(i), Tag)),
            _ => world.spawn((Pos(i),)),
        };
        if i % 4 == 0 && world.has::<Shield>(e) {
            world.set_enabled::<Shield>(e, false).unwrap();
        }
        if i % 5 == 0 && world.has::<Tag>(e) {
            world.set_enabled::<Tag>(e, false).unwrap();
        }
    }
    world
}

fn on<T: Component>(world: &World, e: Entity) -> bool {
    world.is_enabled::<T>(e).unwrap_or(false)
}

#[test]
fn derived_option_fields_are_none_where_the_component_is_off() {
    let mut world = world();
    let want: Vec<(Entity, Option<u32>)> = world
        .query::<(Entity, IgnoreEnabled<Option<RefRO<Shield>>>)>()
        .iter()
        .map(|(e, s)| (e, s.map(|s| s.0)))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(e, s)| (e, s.filter(|_| on::<Shield>(&world, e))))
        .collect();
    let mut iter: Vec<_> = world
        .query::<Unit>()
        .iter()
        .map(|u| (u.entity, u.shield.map(|s| s.0)))
        .collect();
    let mut each = Vec::new();
    world
        .query::<Unit>()
        .for_each(|u| each.push((u.entity, u.shield.map(|s| s.0))));
    let mut sorted = want.clone();
    sorted.sort();
    iter.sort();
    each.sort();
    assert_eq!(iter, sorted, "iter");
    assert_eq!(each, sorted, "for_each");
    assert!(sorted.iter().any(|(_, s)| s.is_none()) && sorted.iter().any(|(_, s)| s.is_some()));
}

#[test]
fn derived_or_filters_decide_row_by_row() {
    let mut world = world();
    let mut want: Vec<Entity> = world
        .query::<Entity>()
        .iter()
        .collect::<Vec<_>>()
        .into_iter()
        .filter(|&e| on::<Shield>(&world, e) || on::<Tag>(&world, e))
        .collect();
    let mut got: Vec<Entity> = world.query::<Tagged>().iter().map(|t| t.entity).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn derived_queries_nest_in_option_and_ignore_enabled() {
    let mut world = world();
    let ids: Vec<Entity> = world.query::<Entity>().iter().collect();
    let want: std::collections::HashMap<Entity, Option<u32>> = ids
        .iter()
        .map(|&e| {
            let s = world.get::<Shield>(e).ok().map(|s| s.0);
            (e, s.filter(|_| on::<Shield>(&world, e)))
        })
        .collect();
    for (e, s) in world.query::<(Entity, Option<Shielded>)>().iter() {
        assert_eq!(s.map(|s| s.shield.0), want[&e], "iter {e:?}");
    }
    let mut seen = 0;
    world
        .query::<(Entity, Option<Shielded>)>()
        .for_each(|(e, s)| {
            seen += 1;
            assert_eq!(s.map(|s| s.shield.0), want[&e], "for_each {e:?}");
        });
    assert_eq!(seen, ids.len());
    // `IgnoreEnabled` reaches the option inside the derived struct: every `Shield` shows.
    let every = world
        .query::<IgnoreEnabled<Unit>>()
        .iter()
        .filter(|u| u.shield.is_some())
        .count();
    assert_eq!(
        every,
        ids.iter().filter(|&&e| world.has::<Shield>(e)).count()
    );
}
