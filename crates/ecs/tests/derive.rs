//! `#[derive(Bundle)]` and `#[derive(Query)]` in every place a tuple goes.

use ecs::prelude::*;

#[derive(Debug, PartialEq, Clone, Copy)]
struct Position(f32);
#[derive(Debug, PartialEq, Clone, Copy)]
struct Velocity(f32);
#[derive(Debug, PartialEq, Clone, Copy)]
struct Health(u32);
struct Player;

#[derive(Bundle)]
struct Body {
    position: Position,
    velocity: Velocity,
}

#[derive(Bundle)]
struct PlayerBundle {
    health: Health,
    player: Player,
}

#[derive(Query)]
struct Movement {
    position: RefRW<Position>,
    velocity: RefRO<Velocity>,
}

#[derive(Query)]
struct Status {
    entity: Entity,
    health: RefRO<Health>,
    velocity: Option<RefRO<Velocity>>,
    _player: With<Player>,
}

fn body(x: f32) -> Body {
    Body {
        position: Position(x),
        velocity: Velocity(1.0),
    }
}

#[test]
fn derived_bundles_spawn_insert_remove_take() {
    let mut world = World::new();
    let a = world.spawn(body(0.0));
    assert!(world.has::<Position>(a) && world.has::<Velocity>(a));
    assert!(!world.has::<Body>(a));
    let batch: Vec<Entity> = world.spawn_batch((0..10).map(|i| body(i as f32))).collect();
    assert_eq!(batch.len(), 10);
    world
        .insert(
            a,
            PlayerBundle {
                health: Health(3),
                player: Player,
            },
        )
        .unwrap();
    assert_eq!(world.get::<Health>(a), Ok(&Health(3)));
    let removed: PlayerBundle = world.remove(a).unwrap();
    assert_eq!(removed.health, Health(3));
    assert!(!world.has::<Player>(a));
    let taken: Body = world.take(batch[3]).unwrap();
    assert_eq!(taken.position, Position(3.0));
    assert!(!world.contains(batch[3]));
    // Overwriting insert hands the old values back as the tuple's `Replaced`.
    world.insert(a, body(7.0)).unwrap();
    assert_eq!(world.get::<Position>(a), Ok(&Position(7.0)));
    world.check_invariants();
}

#[test]
fn derived_bundle_with_a_repeated_type_panics_like_the_tuple() {
    #[derive(Bundle)]
    struct Twice {
        a: Health,
        b: Health,
    }
    let mut world = World::new();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.spawn(Twice {
            a: Health(1),
            b: Health(2),
        });
    }));
    let payload = result.unwrap_err();
    let msg = payload.downcast_ref::<String>().unwrap();
    assert!(msg.contains("more than once"), "{msg}");
}

#[test]
fn derived_queries_in_one_shot_queries() {
    let mut world = World::new();
    let p = world.spawn((Position(0.0), Velocity(2.0), Health(5), Player));
    world
        .spawn_batch((0..100).map(|i| body(i as f32)))
        .for_each(drop);
    world.spawn((Health(1),)); // not a player
    world
        .query::<Movement>()
        .for_each(|m| m.position.0 += m.velocity.0);
    assert_eq!(world.get::<Position>(p), Ok(&Position(2.0)));
    world
        .query::<Movement>()
        .par_for_each(|m| m.position.0 += m.velocity.0);
    assert_eq!(world.get::<Position>(p), Ok(&Position(4.0)));
    let item: MovementItem<'_> = world.query::<Movement>().get(p).unwrap();
    item.position.0 = 10.0;
    assert_eq!(world.get::<Position>(p), Ok(&Position(10.0)));
    // Read-only derived queries work through `&World`, filter fields included.
    let status = world.query_ref::<Status>().single().unwrap();
    assert_eq!(
        (status.entity, status.health, status.velocity),
        (p, &Health(5), Some(&Velocity(2.0)))
    );
    assert_eq!(world.query_ref::<Status>().iter().len(), 1);
    // And with a separate filter.
    assert_eq!(
        world.query_filtered::<Movement, Without<Player>>().count(),
        100
    );
}

#[test]
fn derived_queries_as_system_parameters() {
    fn movement(mut q: Query<Movement, Without<Player>>) {
        q.for_each(|m| m.position.0 += m.velocity.0);
    }
    fn report(q: Query<Status>, mut out: ResMut<Vec<u32>>) {
        // A read-only derived query takes `&self`, like a read-only tuple.
        out.extend(q.iter().map(|s| s.health.0));
        let s = q.single().unwrap();
        assert_eq!(s.velocity, Some(&Velocity(0.5)));
    }
    fn player_moves(mut q: Query<Movement, With<Player>>) {
        q.single_mut().unwrap().position.0 = -1.0;
        // A writing derived query's read-only view yields tuples in field order.
        let (p, v) = q.iter().next().unwrap();
        assert_eq!((p.0, v.0), (-1.0, 0.5));
    }
    let mut world = World::new();
    world.insert_resource(Vec::<u32>::new());
    let a = world.spawn(body(0.0));
    let p = world.spawn((Position(0.0), Velocity(0.5), Health(9), Player));
    let mut schedule = Schedule::new();
    schedule.add_system(movement);
    schedule.add_system(report);
    schedule.add_system(player_moves);
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Position>(a), Ok(&Position(1.0)));
    assert_eq!(world.get::<Position>(p), Ok(&Position(-1.0)));
    assert_eq!(world.resource::<Vec<u32>>(), &[9]);
}

#[test]
fn aliasing_hidden_behind_a_type_alias_panics_when_built() {
    type P = Position;
    #[derive(Query)]
    struct Sneaky {
        a: RefRW<Position>,
        b: RefRO<P>,
    }
    let mut world = World::new();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.query::<Sneaky>().count();
    }));
    assert!(result.is_err());
}

#[test]
fn derived_query_chunk_columns_are_the_tuples() {
    let mut world = World::new();
    world
        .spawn_batch((0..10).map(|i| body(i as f32)))
        .for_each(drop);
    let mut total = 0.0;
    world.query::<Movement>().for_each_chunk(|mut chunk| {
        let (pos, vel) = chunk.columns();
        for (p, v) in pos.iter_mut().zip(vel.iter()) {
            p.0 += v.0;
            total += p.0;
        }
    });
    assert_eq!(total, (1..=10).sum::<i32>() as f32);
}

// Field names that are also names in the generated code (issue 26 item 10): each of these
// failed to compile before the derives used `__ecs_*` locals.
#[derive(Bundle)]
struct Shadowing {
    row: Position,
    cells: Velocity,
    bases: Health,
    overwrite: u8,
}

#[derive(Query)]
struct ShadowingQuery {
    f: RefRW<Position>,
    fetch: RefRO<Velocity>,
    row: Option<RefRO<Health>>,
    len: Entity,
}

#[derive(Query)]
struct Nothing {}

#[test]
fn derives_accept_field_names_the_generated_code_uses() {
    let mut world = World::new();
    let e = world.spawn(Shadowing {
        row: Position(1.0),
        cells: Velocity(2.0),
        bases: Health(3),
        overwrite: 4,
    });
    world
        .insert(
            e,
            Shadowing {
                row: Position(5.0),
                cells: Velocity(6.0),
                bases: Health(7),
                overwrite: 8,
            },
        )
        .unwrap();
    let Shadowing {
        row,
        cells,
        bases,
        overwrite,
    } = world.remove::<Shadowing>(e).unwrap();
    assert_eq!(
        (row, cells, bases, overwrite),
        (Position(5.0), Velocity(6.0), Health(7), 8)
    );
    world.insert(e, (Position(1.0), Velocity(2.0))).unwrap();
    world.query::<ShadowingQuery>().for_each(|item| {
        item.f.0 += item.fetch.0;
        assert!(item.row.is_none());
        assert_eq!(item.len, e);
    });
    assert_eq!(world.get::<Position>(e), Ok(&Position(3.0)));
    assert_eq!(world.query::<Nothing>().iter().count(), 1);
}
