//! Issue #16 in the query crate: `single`, and read-only queries through `&World`.

use ecs_core::{Entity, World};
use ecs_query::{
    Changed, QueryError, QueryExt, QueryState, RefRO, RefRW, SharedQuery, With, Without,
};

#[derive(Debug, PartialEq)]
struct Position(f32);
#[derive(Debug, PartialEq)]
struct Velocity(f32);
struct Player;
#[derive(Debug, PartialEq)]
struct NeverSpawned;

#[test]
fn single_reports_none_one_or_many() {
    let mut world = World::new();
    let err = world.query::<RefRW<Position>>().single().unwrap_err();
    assert!(matches!(err, QueryError::NoEntities { query } if query.contains("Position")));
    let p = world.spawn((Position(0.0), Player));
    world.query::<RefRW<Position>>().single().unwrap().0 = 5.0;
    assert_eq!(world.get::<Position>(p), Ok(&Position(5.0)));
    world.spawn((Position(1.0),));
    let err = world.query::<RefRW<Position>>().single().unwrap_err();
    assert!(matches!(err, QueryError::MultipleEntities { .. }));
    assert!(err
        .to_string()
        .starts_with("more than one entity matches query `"));
    // A filter narrows it back to one.
    let mut state = QueryState::<RefRW<Position>, With<Player>>::new(&mut world);
    state.single_mut(&mut world).unwrap().0 += 1.0;
    assert_eq!(world.get::<Position>(p), Ok(&Position(6.0)));
    let mut read = QueryState::<(Entity, RefRO<Position>), With<Player>>::new(&mut world);
    assert_eq!(read.single(&world).unwrap().0, p);
}

#[test]
fn shared_queries_coexist_with_each_other_and_world_reads() {
    let mut world = World::new();
    let a = world.spawn((Position(1.0), Velocity(1.0)));
    let b = world.spawn((Position(2.0),));
    let world = &world; // from here on, shared only
    let positions: SharedQuery<'_, (Entity, RefRO<Position>)> = world.query_ref();
    let moving = world.query_ref::<(RefRO<Position>, RefRO<Velocity>)>();
    let still = world.query_ref_filtered::<RefRO<Position>, Without<Velocity>>();
    let kept: Vec<(Entity, &Position)> = positions.iter().collect();
    let view = world.entity(a).unwrap();
    assert_eq!(kept.len(), 2);
    assert_eq!(moving.single().unwrap().1, &Velocity(1.0));
    assert_eq!(still.get(b), Ok(&Position(2.0)));
    assert!(matches!(still.get(a), Err(QueryError::NoMatch { .. })));
    assert_eq!(
        view.get::<Position>(),
        kept.iter().find(|(e, _)| *e == a).map(|(_, p)| *p)
    );
    assert_eq!(positions.count(), 2);
    assert!(!moving.is_empty() && moving.contains(a) && !moving.contains(b));
    let mut sum = 0.0;
    positions.for_each(|(_, p)| sum += p.0);
    assert_eq!(sum, 3.0);
}

#[test]
fn shared_query_with_types_the_world_never_saw() {
    let mut world = World::new();
    let a = world.spawn((Position(1.0),));
    let before = world.components().len();
    {
        let w = &world;
        assert!(w.query_ref::<RefRO<NeverSpawned>>().is_empty());
        assert_eq!(
            w.query_ref::<(RefRO<Position>, With<NeverSpawned>)>()
                .count(),
            0
        );
        let opt = w.query_ref::<(RefRO<Position>, Option<RefRO<NeverSpawned>>)>();
        assert_eq!(opt.single().unwrap(), (&Position(1.0), None));
        let without = w.query_ref_filtered::<Entity, Without<NeverSpawned>>();
        assert_eq!(without.single(), Ok(a));
        let changed = w.query_ref_filtered::<Entity, Changed<NeverSpawned>>();
        assert_eq!(changed.count(), 0);
    }
    // Nothing was registered in the world itself.
    assert_eq!(world.components().len(), before);
    // Registering the type later (it takes `&mut World`, so no shared query is alive) works.
    world.spawn((Velocity(0.0), NeverSpawned));
    assert_eq!(world.query_ref::<RefRO<NeverSpawned>>().count(), 1);
    assert_eq!(world.query_ref::<RefRO<Position>>().count(), 1);
}

#[test]
fn shared_change_filter_sees_everything_as_new() {
    let mut world = World::new();
    world.spawn((Position(1.0),));
    world.spawn((Velocity(1.0),));
    assert_eq!(world.query_ref::<(Entity, Changed<Position>)>().count(), 1);
}
