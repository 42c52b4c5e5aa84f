//! `World::set_enabled_many` as a query sees it: a batch toggle is a change of the toggled
//! rows only (a kept `Changed<T>` query, which keeps row marks for `T`, finds exactly them),
//! and a call that fails part-way changes nothing a query can see.

use std::collections::BTreeSet;

use ecs_core::{ComponentError, Entity, World};
use ecs_query::{Changed, QueryState, RefRO};

/// Enableable.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Awake(u32);

/// 900 rows over several 4 KiB chunks (several enable words each) and two archetypes.
fn world() -> (World, Vec<Entity>) {
    let mut world = World::with_chunk_size(4096).unwrap();
    world.register_enableable::<Awake>();
    let ids = (0..900u32)
        .map(|i| match i % 3 {
            0 => world.spawn((Awake(i), 1u8)),
            _ => world.spawn((Awake(i),)),
        })
        .collect();
    (world, ids)
}

fn changed(
    world: &mut World,
    state: &mut QueryState<(Entity, RefRO<Awake>), Changed<Awake>>,
) -> BTreeSet<Entity> {
    let mut seen = BTreeSet::new();
    state.for_each(world, |(e, _)| {
        seen.insert(e);
    });
    seen
}

#[test]
fn a_kept_changed_query_sees_exactly_the_rows_a_batch_turned_back_on() {
    let (mut world, ids) = world();
    let mut state = QueryState::<(Entity, RefRO<Awake>), Changed<Awake>>::new(&mut world);
    // The first run sees everything (all rows were added); afterwards nothing has changed.
    assert_eq!(changed(&mut world, &mut state).len(), ids.len());
    assert!(changed(&mut world, &mut state).is_empty());
    // Off in a scattered order across chunks and archetypes, then back on: a disabled `Awake`
    // is absent to the query, so the second run sees only the rows turned back on.
    let some: Vec<Entity> = (0..ids.len())
        .step_by(7)
        .map(|i| ids[i * 13 % ids.len()])
        .collect();
    world.advance_tick();
    assert_eq!(
        world.set_enabled_many::<Awake>(&some, false),
        Ok(some.len())
    );
    assert!(
        changed(&mut world, &mut state).is_empty(),
        "disabled rows are absent"
    );
    world.advance_tick();
    assert_eq!(world.set_enabled_many::<Awake>(&some, true), Ok(some.len()));
    let want: BTreeSet<Entity> = some.iter().copied().collect();
    assert_eq!(changed(&mut world, &mut state), want);
    // A call that fails on its last entity changes nothing, not even a chunk tick: the same
    // list turned off again, with a dead entity at the end, leaves every row on and unchanged.
    let dead = world.spawn((Awake(0),));
    world.despawn(dead).unwrap();
    assert!(changed(&mut world, &mut state).is_empty());
    world.advance_tick();
    let mut bad = some.clone();
    bad.push(dead);
    assert_eq!(
        world.set_enabled_many::<Awake>(&bad, false),
        Err(ComponentError::NoSuchEntity(dead))
    );
    assert!(ids
        .iter()
        .all(|&e| world.is_enabled::<Awake>(e) == Ok(true)));
    assert!(changed(&mut world, &mut state).is_empty());
    world.check_invariants();
}
