//! The chunk loop `for_each` runs (`Iteration`: plain or streaming) never changes a result:
//! on every path (the all-rows loop, the change-filtered loop, chunks with enable masks,
//! items kept past later rows) and at several scales, each loop hands out every row once, in
//! the same order, with the same values and the same change marks.

use ecs_core::{Entity, World};
use ecs_query::{Changed, Iteration, QueryState, RefRO, RefRW};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(u64);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(u64);

struct Awake;

const LOOPS: [Iteration; 3] = [Iteration::Auto, Iteration::Plain, Iteration::Streaming];

/// One chunk, a few chunks, and (outside Miri) a world past every cache of a small machine.
const SCALES: &[u64] = if cfg!(miri) {
    &[3, 300]
} else {
    &[3, 5_000, 400_000]
};

fn world() -> World {
    // Small chunks under Miri so that its few rows still span many of them.
    if cfg!(miri) {
        World::with_test_chunk_size(512)
    } else {
        World::new()
    }
}

fn spawn(world: &mut World, rows: u64) -> Vec<Entity> {
    world
        .spawn_batch((0..rows).map(|i| (Pos(i), Vel(3 * i + 1))))
        .collect()
}

#[test]
fn every_loop_hands_out_every_row_once_in_order() {
    for &rows in SCALES {
        let mut results = Vec::new();
        for iteration in LOOPS {
            let mut world = world();
            let ids = spawn(&mut world, rows);
            let mut state = QueryState::<(Entity, RefRW<Pos>, RefRO<Vel>)>::new(&mut world);
            state.set_iteration(iteration);
            assert_eq!(state.iteration(), iteration);
            let mut seen = Vec::with_capacity(ids.len());
            state.for_each(&mut world, |(e, p, v)| {
                p.0 += v.0;
                seen.push(e);
            });
            assert_eq!(
                seen, ids,
                "{iteration:?} at {rows}: every row once, in chunk order"
            );
            let values: Vec<Pos> = ids.iter().map(|&e| *world.get::<Pos>(e).unwrap()).collect();
            for (i, v) in values.iter().enumerate() {
                let i = i as u64;
                assert_eq!(*v, Pos(i + 3 * i + 1), "{iteration:?} row {i}");
            }
            results.push(values);
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "at {rows}");
    }
}

#[test]
fn every_loop_marks_every_written_row_changed() {
    for &rows in SCALES {
        for iteration in LOOPS {
            let mut world = world();
            let ids = spawn(&mut world, rows);
            let mut changed = QueryState::<Entity, Changed<Pos>>::new(&mut world);
            assert_eq!(
                changed.iter(&world).count(),
                ids.len(),
                "a new state sees every row"
            );
            assert_eq!(changed.iter(&world).count(), 0, "nothing written since");
            let mut writer = QueryState::<(RefRW<Pos>, RefRO<Vel>)>::new(&mut world);
            writer.set_iteration(iteration);
            // Write every third row only through a change-filtered run, then all of them.
            writer.for_each(&mut world, |(p, v)| p.0 += v.0);
            let seen: Vec<Entity> = changed.iter(&world).collect();
            assert_eq!(
                seen, ids,
                "{iteration:?} at {rows}: every written row changed"
            );
            let mut filtered = QueryState::<(RefRW<Pos>,), Changed<Vel>>::new(&mut world);
            filtered.set_iteration(iteration);
            let mut n = 0;
            filtered.for_each(&mut world, |(_,)| n += 1);
            assert_eq!(
                n,
                ids.len(),
                "{iteration:?}: every Vel is new to this state"
            );
        }
    }
}

/// An enableable component sends `for_each` down its general loop: chunks whose rows are all
/// enabled take the chosen loop, a chunk with disabled rows walks its mask.
#[test]
fn every_loop_mixes_masked_and_unmasked_chunks() {
    for &rows in SCALES {
        let mut results = Vec::new();
        for iteration in LOOPS {
            let mut world = world();
            world.register_enableable::<Awake>();
            let ids: Vec<Entity> = world
                .spawn_batch((0..rows).map(|i| (Pos(i), Vel(1), Awake)))
                .collect();
            let asleep: Vec<Entity> = ids.iter().copied().skip(1).step_by(7).take(20).collect();
            world.set_enabled_many::<Awake>(&asleep, false).unwrap();
            let mut state =
                QueryState::<(Entity, RefRW<Pos>, RefRO<Vel>, RefRO<Awake>)>::new(&mut world);
            state.set_iteration(iteration);
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
            assert_eq!(
                seen, awake,
                "{iteration:?} at {rows}: every enabled row once"
            );
            let values: Vec<Pos> = ids.iter().map(|&e| *world.get::<Pos>(e).unwrap()).collect();
            for (i, (&e, v)) in ids.iter().zip(&values).enumerate() {
                let want = i as u64 + u64::from(!asleep.contains(&e));
                assert_eq!(*v, Pos(want), "{iteration:?} row {i}");
            }
            results.push(values);
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "at {rows}");
    }
}

/// Items handed out earlier in a chunk stay usable while later rows of the same chunk go
/// out: neither loop may borrow a row's column again after handing it out (Miri checks the
/// writes below against every borrow the loop made).
#[test]
fn items_outlive_the_rows_after_them_in_every_loop() {
    for iteration in LOOPS {
        let mut world = world();
        let ids = spawn(&mut world, SCALES[SCALES.len() - 1]);
        let mut state = QueryState::<(RefRW<Pos>, RefRO<Vel>)>::new(&mut world);
        state.set_iteration(iteration);
        let mut held: Vec<&mut Pos> = Vec::with_capacity(ids.len());
        state.run(&mut world).for_each(|(p, _)| held.push(p));
        for p in held.iter_mut() {
            p.0 += 1;
        }
        drop(held);
        for (i, &e) in ids.iter().enumerate() {
            assert_eq!(
                world.get::<Pos>(e),
                Ok(&Pos(i as u64 + 1)),
                "{iteration:?} row {i}"
            );
        }
    }
}
