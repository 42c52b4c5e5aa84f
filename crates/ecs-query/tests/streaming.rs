//! `for_each` over an archetype large enough to stream from memory: the loop that works
//! through each chunk in pieces while prefetching the next must still hand out every row once,
//! in order, and mark every row it hands a writer as changed.
//!
//! (The streaming threshold is 6 MiB of touched columns; under Miri it is 1 KiB, so the small
//! world built there takes the same loop.)

use ecs_core::{Entity, World};
use ecs_query::{Changed, QueryExt, QueryState, RefRO, RefRW};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(u64);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(u64);

/// 16 bytes of touched columns per row: 400,000 rows are 6.4 MB, past the threshold.
const ROWS: u64 = if cfg!(miri) { 300 } else { 400_000 };

fn world() -> (World, Vec<Entity>) {
    // Small chunks under Miri so that its 300 rows still span many of them.
    let mut world = if cfg!(miri) {
        World::with_test_chunk_size(512)
    } else {
        World::new()
    };
    let ids = world
        .spawn_batch((0..ROWS).map(|i| (Pos(i), Vel(3 * i + 1))))
        .collect();
    (world, ids)
}

#[test]
fn streaming_for_each_hands_out_every_row_once_in_order() {
    let (mut world, ids) = world();
    let arch = &world.archetypes()[world.location(ids[0]).unwrap().archetype.index()];
    assert!(arch.chunks().len() > 2, "the world spans several chunks");

    let mut state = QueryState::<(Entity, RefRW<Pos>, RefRO<Vel>)>::new(&mut world);
    let mut seen = Vec::with_capacity(ids.len());
    state.for_each(&mut world, |(e, p, v)| {
        p.0 += v.0;
        seen.push(e);
    });
    assert_eq!(seen, ids, "every row once, in chunk order");
    for (i, &e) in ids.iter().enumerate() {
        let i = i as u64;
        assert_eq!(world.get::<Pos>(e), Ok(&Pos(i + 3 * i + 1)), "row {i}");
    }
}

#[test]
fn streaming_for_each_marks_every_written_row_changed() {
    let (mut world, ids) = world();
    let mut changed = QueryState::<Entity, Changed<Pos>>::new(&mut world);
    assert_eq!(
        changed.iter(&world).count(),
        ids.len(),
        "a new state sees every row"
    );
    assert_eq!(changed.iter(&world).count(), 0, "nothing written since");

    // Touching both columns keeps the query's bytes past the threshold.
    let mut writer = QueryState::<(RefRW<Pos>, RefRO<Vel>)>::new(&mut world);
    writer.for_each(&mut world, |(p, v)| p.0 += v.0);
    let seen: Vec<Entity> = changed.iter(&world).collect();
    assert_eq!(seen, ids, "every written row reads as changed");
}

/// An enableable component in the archetype sends `for_each` down its general loop: chunks
/// whose rows are all enabled stream, a chunk with disabled rows walks its mask.
#[test]
fn streaming_and_masked_chunks_mix_in_one_pass() {
    struct Awake;
    let mut world = if cfg!(miri) {
        World::with_test_chunk_size(512)
    } else {
        World::new()
    };
    world.register_enableable::<Awake>();
    let ids: Vec<Entity> = world
        .spawn_batch((0..ROWS).map(|i| (Pos(i), Vel(1), Awake)))
        .collect();
    let asleep: Vec<Entity> = ids.iter().copied().skip(5).step_by(7).take(20).collect();
    world.set_enabled_many::<Awake>(&asleep, false).unwrap();

    let mut state = QueryState::<(Entity, RefRW<Pos>, RefRO<Vel>, RefRO<Awake>)>::new(&mut world);
    let mut seen = Vec::with_capacity(ids.len());
    state.for_each(&mut world, |(e, p, v, _)| {
        p.0 += v.0;
        seen.push(e);
    });
    let awake: Vec<Entity> = ids
        .iter()
        .copied()
        .filter(|e| !asleep.contains(e))
        .collect();
    assert_eq!(seen, awake, "every enabled row once, in order");
    for (i, &e) in ids.iter().enumerate() {
        let want = i as u64 + u64::from(!asleep.contains(&e));
        assert_eq!(world.get::<Pos>(e), Ok(&Pos(want)), "row {i}");
    }
}

/// Items handed out earlier in a chunk stay usable while later rows of the same chunk go
/// out: the loop must not borrow a row's column again after handing it out (Miri checks
/// the writes below against every borrow the loop made).
#[test]
fn streamed_items_outlive_the_rows_after_them() {
    let (mut world, ids) = world();
    let mut held: Vec<&mut Pos> = Vec::with_capacity(ids.len());
    // A one-shot query's items live as long as the world's borrow, so they can be kept.
    world
        .query::<(RefRW<Pos>, RefRO<Vel>)>()
        .for_each(|(p, _)| held.push(p));
    for p in held.iter_mut() {
        p.0 += 1;
    }
    drop(held);
    for (i, &e) in ids.iter().enumerate() {
        assert_eq!(world.get::<Pos>(e), Ok(&Pos(i as u64 + 1)), "row {i}");
    }
}
