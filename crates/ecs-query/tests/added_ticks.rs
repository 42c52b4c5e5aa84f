//! `Added<T>` (rows that gained `T` or were spawned with it since the reader's last run) and
//! the 32-bit row-tick wrap: changes across the wrap are seen exactly once, and
//! `World::check_change_ticks` keeps a long-unwritten row from reading as changed again.

use ecs_core::{Entity, World};
use ecs_query::{Added, Changed, QueryState, RefRO, RefRW};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Tag;

type Born = (Entity, Added<Hp>);
type Seen = (Entity, Changed<Hp>);

/// The entities a run of `state` passes, sorted, through `iter`; `count` must agree.
fn run<F: ecs_query::QueryFilter>(
    state: &mut QueryState<Entity, F>,
    world: &mut World,
) -> Vec<Entity> {
    let mut got: Vec<Entity> = state.iter(world).collect();
    got.sort();
    got
}

fn sorted(mut v: Vec<Entity>) -> Vec<Entity> {
    v.sort();
    v
}

#[test]
fn added_passes_spawned_and_inserted_rows_never_written_or_moved_ones() {
    let mut world = World::with_test_chunk_size(512);
    let old: Vec<Entity> = world.spawn_batch((0..40u32).map(|i| (Hp(i),))).collect();
    let mut born = QueryState::<Entity, Added<Hp>>::new(&mut world);
    assert_eq!(
        run(&mut born, &mut world),
        sorted(old.clone()),
        "a new state sees every row"
    );
    assert!(run(&mut born, &mut world).is_empty());

    // Writes are not adds, whatever the path; an overwriting insert is a write.
    *world.get_mut::<Hp>(old[3]).unwrap() = Hp(9);
    QueryState::<RefRW<Hp>>::new(&mut world).for_each(&mut world, |hp| hp.0 += 1);
    world.insert_one(old[4], Hp(1)).unwrap();
    assert!(run(&mut born, &mut world).is_empty());

    // Spawning with `Hp`, batch-spawning into the partly filled chunk, inserting `Hp`.
    let one = world.spawn((Hp(1),));
    let batch: Vec<Entity> = world.spawn_batch((0..5u32).map(|i| (Hp(i),))).collect();
    let late = world.spawn((Tag,));
    world.insert_one(late, Hp(7)).unwrap();
    let mut want = vec![one, late];
    want.extend(&batch);
    assert_eq!(run(&mut born, &mut world), sorted(want));
    // Each path agrees on the next window.
    let again = world.spawn((Hp(2),));
    assert_eq!(born.count(&world), 1);
    let mut seen = Vec::new();
    born.for_each(&mut world, |e| seen.push(e));
    assert_eq!(seen, [again], "`count` does not end a run");

    // Moving rows (another component added, a swap-remove) carries their add ticks.
    world.insert_one(old[0], Tag).unwrap();
    world.despawn(old[1]).unwrap();
    assert!(run(&mut born, &mut world).is_empty());
    world.check_invariants();
}

#[test]
fn added_and_changed_readers_keep_their_own_windows() {
    let mut world = World::new();
    let a = world.spawn((Hp(0),));
    let mut born = QueryState::<Born>::new(&mut world);
    let mut seen = QueryState::<Seen>::new(&mut world);
    assert_eq!(born.iter(&world).count(), 1);
    assert_eq!(seen.iter(&world).count(), 1);
    let b = world.spawn((Hp(1),));
    *world.get_mut::<Hp>(a).unwrap() = Hp(5);
    let got: Vec<Entity> = born.iter(&world).map(|(e, ())| e).collect();
    assert_eq!(got, [b]);
    let got: Vec<Entity> = sorted(seen.iter(&world).map(|(e, ())| e).collect());
    assert_eq!(got, sorted(vec![a, b]), "a spawned row is also changed");
    let mut read = QueryState::<RefRO<Hp>, Added<Hp>>::new(&mut world);
    assert_eq!(read.iter(&world).count(), 2);
}

#[test]
fn writes_across_the_u32_tick_wrap_are_seen_exactly_once() {
    let mut world = World::with_test_chunk_size(512);
    let ids: Vec<Entity> = world.spawn_batch((0..30u32).map(|i| (Hp(i),))).collect();
    let mut seen = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    world.set_change_tick_for_tests((1 << 32) - 3);
    // What `Schedule::run` does each run: clamp row ticks older than 2^31 ticks.
    world.check_change_ticks();
    assert_eq!(
        run(&mut seen, &mut world).len(),
        ids.len(),
        "a wide window passes all"
    );
    for (step, &e) in ids.iter().take(5).enumerate() {
        // Ticks 2^32 - 2, 2^32 - 1, 2^32, 2^32 + 1, ...: each write seen once, by the next run.
        *world.get_mut::<Hp>(e).unwrap() = Hp(100);
        assert_eq!(run(&mut seen, &mut world), [e], "step {step}");
    }
    assert!(run(&mut seen, &mut world).is_empty());
    assert!(world.change_tick() > 1 << 32);
}

/// A row written at `w`, and a reader running at `w + 2^32` with a narrow window over a chunk
/// that another row's write let through: the row's 32-bit age wraps to 0 and it would read as
/// written now. `check_change_ticks` clamps old ticks first, so only the new write is seen.
#[test]
fn check_change_ticks_keeps_old_rows_from_reading_as_changed_after_the_wrap() {
    for check in [false, true] {
        let mut world = World::new();
        let ids: Vec<Entity> = world.spawn_batch((0..3u32).map(|i| (Hp(i),))).collect();
        let mut seen = QueryState::<Entity, Changed<Hp>>::new(&mut world);
        assert_eq!(run(&mut seen, &mut world).len(), 3);
        world.set_change_tick_for_tests(100);
        let w = world.change_tick();
        *world.get_mut::<Hp>(ids[1]).unwrap() = Hp(9);
        world.set_change_tick_for_tests(w + (1 << 32) - 1);
        if check {
            world.check_change_ticks();
        }
        // This run's window spans 2^32 ticks: it passes everything (wide-window rule).
        assert_eq!(run(&mut seen, &mut world).len(), 3);
        // The next run is at `w + 2^32` with a window of one tick; `ids[0]` is written in it.
        assert_eq!(world.change_tick(), w + (1 << 32));
        *world.get_mut::<Hp>(ids[0]).unwrap() = Hp(1);
        let got = run(&mut seen, &mut world);
        if check {
            assert_eq!(got, [ids[0]], "clamped");
        } else {
            assert_eq!(got, [ids[0], ids[1]], "without the clamp the age wraps");
        }
        world.check_invariants();
    }
}

#[test]
fn set_if_neq_marks_only_rows_whose_value_changes() {
    let mut world = World::with_test_chunk_size(512);
    let ids: Vec<Entity> = world.spawn_batch((0..20u32).map(|i| (Hp(i),))).collect();
    let mut seen = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    assert_eq!(run(&mut seen, &mut world).len(), ids.len());
    for (i, &e) in ids.iter().enumerate() {
        // Even rows get their own value back, odd rows a new one.
        let v = if i % 2 == 0 { i as u32 } else { 100 };
        assert_eq!(world.set_if_neq(e, Hp(v)), Ok(i % 2 == 1));
    }
    let odd: Vec<Entity> = ids.iter().copied().skip(1).step_by(2).collect();
    assert_eq!(run(&mut seen, &mut world), sorted(odd));
    let gone = ids[0];
    world.despawn(gone).unwrap();
    assert!(world.set_if_neq(gone, Hp(1)).is_err());
}
