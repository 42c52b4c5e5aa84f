//! Panic safety of chunk component values: a user `Default` that panics while registering,
//! while spawn or a flush opens a chunk, or during a restore, and a user `Drop` that panics
//! when a spare chunk is reused, when a row move frees a chunk, or when the world is dropped or
//! cleared (issue 26). The world must stay consistent, keep every entity at its row, never
//! read a value as another type, and balance its drop ledger.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{Entity, World};

mod common;
use common::panics::{capacity_of, Name, Num};

thread_local! {
    /// Per test thread: after how many more `Flaky::default` calls the next one panics.
    static DEFAULT_FUSE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Whether `Flaky`'s `Drop` panics.
    static DROP_ARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// `Flaky` values made and dropped on this thread: the drop ledger.
    static LEDGER: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// A chunk component whose `Default` panics when its fuse runs out and whose `Drop` panics
/// while armed; every value made and dropped is counted.
struct Flaky(u64);

impl Default for Flaky {
    fn default() -> Self {
        DEFAULT_FUSE.with(|f| match f.get() {
            Some(0) => {
                f.set(None);
                panic!("Flaky::default failed");
            }
            Some(n) => f.set(Some(n - 1)),
            None => {}
        });
        LEDGER.with(|l| l.set((l.get().0 + 1, l.get().1)));
        Flaky(7)
    }
}

impl Drop for Flaky {
    fn drop(&mut self) {
        LEDGER.with(|l| l.set((l.get().0, l.get().1 + 1)));
        if DROP_ARMED.with(std::cell::Cell::get) {
            panic!("Flaky dropped");
        }
    }
}

/// Panics on the `n`th `Flaky::default` from now (0: the next one).
fn fail_default_after(n: usize) {
    DEFAULT_FUSE.with(|f| f.set(Some(n)));
}

fn arm_drop(on: bool) {
    DROP_ARMED.with(|d| d.set(on));
}

/// `(made, dropped)` `Flaky` values on this thread since the last call.
fn take_ledger() -> (usize, usize) {
    LEDGER.with(|l| l.replace((0, 0)))
}

#[derive(Default, Debug, PartialEq, Clone)]
struct Label(String);

#[test]
fn a_panicking_chunk_component_default_registers_nothing_and_no_value_is_read_as_another_type() {
    take_ledger();
    let mut world = World::with_test_chunk_size(256);
    let mut ids: Vec<Entity> = (0..40).map(|i| world.spawn((Num(i),))).collect();
    ids.extend((0..40).map(|i| world.spawn((Num(i), 1u8))));
    fail_default_after(2); // the third chunk's value panics
    let caught = catch_unwind(AssertUnwindSafe(|| {
        world.register_chunk_component::<Flaky>()
    }));
    assert!(caught.is_err());
    world.check_invariants();
    assert!(
        world.component_id::<Flaky>().is_none(),
        "nothing registered"
    );
    let (made, dropped) = take_ledger();
    assert_eq!(
        (made, dropped),
        (2, 2),
        "the values made before the panic were dropped"
    );
    // A second type now gets the slots: each value is read as what it is.
    world.register_chunk_component::<Label>();
    for &e in &ids {
        assert_eq!(world.chunk_component::<Label>(e), Ok(&Label::default()));
    }
    // And the first can be registered once its `Default` works.
    world.register_chunk_component::<Flaky>();
    world.check_invariants();
    assert_eq!(world.chunk_component::<Flaky>(ids[0]).map(|f| f.0), Ok(7));
    drop(world);
    let (made, dropped) = take_ledger();
    assert_eq!(made, dropped, "drop ledger");
}

#[test]
fn a_panicking_chunk_value_default_while_spawn_opens_a_chunk_leaves_no_rowless_entity() {
    take_ledger();
    let mut world = World::with_test_chunk_size(256);
    world.register_chunk_component::<Flaky>();
    let first = world.spawn((Num(0),));
    let cap = capacity_of(&world, first);
    for i in 1..cap as u32 {
        world.spawn((Num(i),));
    }
    fail_default_after(0);
    let caught = catch_unwind(AssertUnwindSafe(|| world.spawn((Num(99),))));
    assert!(caught.is_err());
    world.check_invariants();
    assert_eq!(world.len() as usize, cap, "no entity without a row");
    let e = world.spawn((Num(99),)); // the fuse is spent
    assert_eq!(world.get::<Num>(e), Ok(&Num(99)));
    // Reserved ids flushed into a new chunk: the same guarantee.
    let reserved: Vec<Entity> = (0..cap * 2).map(|_| world.reserve_entity()).collect();
    fail_default_after(1);
    assert!(catch_unwind(AssertUnwindSafe(|| world.flush())).is_err());
    world.check_invariants();
    world.flush();
    assert!(reserved.iter().all(|&r| world.contains(r)));
    world.check_invariants();
    drop(world);
    let (made, dropped) = take_ledger();
    assert_eq!(made, dropped, "drop ledger");
}

#[test]
fn a_panicking_chunk_value_drop_on_spare_reuse_keeps_every_slot_at_its_row() {
    take_ledger();
    let mut world = World::with_test_chunk_size(256);
    world.register_chunk_component::<Flaky>();
    let first = world.spawn((Num(0),));
    let cap = capacity_of(&world, first);
    let mut ids = vec![first];
    ids.extend((1..=cap as u32).map(|i| world.spawn((Num(i),))));
    // The second chunk's only row goes: that chunk becomes the spare, its value stale.
    world.despawn(ids.pop().unwrap()).unwrap();
    arm_drop(true);
    let caught = catch_unwind(AssertUnwindSafe(|| world.spawn((Num(50),))));
    arm_drop(false);
    assert!(caught.is_err());
    world.check_invariants();
    assert_eq!(world.len() as usize, cap);
    for (i, &e) in ids.iter().enumerate() {
        assert_eq!(world.get::<Num>(e), Ok(&Num(i as u32)));
    }
    let e = world.spawn((Num(50),));
    assert_eq!(world.chunk_component::<Flaky>(e).map(|f| f.0), Ok(7));
    world.check_invariants();
    drop(world);
    let (made, dropped) = take_ledger();
    assert_eq!(made, dropped, "drop ledger");
}

/// A row move that empties the source's last chunk while a spare already exists frees that
/// chunk, dropping its chunk values: user code, which must run only once the entity table knows
/// where the moved row and the row that filled its hole went.
#[test]
fn a_panicking_chunk_value_drop_when_a_row_move_frees_a_chunk_keeps_every_entity_at_its_row() {
    for remove in [false, true] {
        take_ledger();
        let mut world = World::with_test_chunk_size(256);
        world.register_chunk_component::<Flaky>();
        let first = world.spawn((Num(0), 'c'));
        let cap = capacity_of(&world, first);
        let mut ids = vec![first];
        ids.extend((1..=cap as u32).map(|i| world.spawn((Num(i), 'c'))));
        // The second chunk's only row leaves: that chunk becomes the spare.
        world.despawn(ids.pop().unwrap()).unwrap();
        // Move rows out of the first (now last) chunk until one row is left.
        let moved_early: Vec<Entity> = ids.drain(1..).collect();
        for &e in &moved_early {
            if remove {
                world.remove::<(char,)>(e).unwrap();
            } else {
                world.insert(e, (1u8,)).unwrap();
            }
        }
        // The last row's move empties the chunk; a spare exists, so the chunk is freed and its
        // `Flaky` dropped, which panics.
        arm_drop(true);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            if remove {
                world.remove::<(char,)>(first).unwrap();
            } else {
                world.insert(first, (1u8,)).unwrap();
            }
        }));
        arm_drop(false);
        assert!(caught.is_err(), "the chunk value's drop panicked");
        world.check_invariants();
        assert_eq!(world.get::<Num>(first), Ok(&Num(0)));
        assert_eq!(world.has::<char>(first), !remove);
        for (i, &e) in moved_early.iter().enumerate() {
            assert_eq!(world.get::<Num>(e), Ok(&Num(i as u32 + 1)));
        }
        drop(world);
        let (made, dropped) = take_ledger();
        assert_eq!(made, dropped, "drop ledger");
    }
}

#[test]
fn a_panicking_chunk_value_default_during_restore_leaves_the_world_as_it_was() {
    take_ledger();
    let mut world = World::with_test_chunk_size(256);
    world.register_chunk_component::<Flaky>();
    world.register_pod::<u32>();
    let ids: Vec<Entity> = (0..100u32).map(|i| world.spawn((i,))).collect();
    let snap = world.snapshot().unwrap();
    for &e in &ids[50..] {
        world.despawn(e).unwrap();
    }
    let later: Vec<Entity> = (0..30u32).map(|i| world.spawn((1000 + i,))).collect();
    fail_default_after(1);
    let caught = catch_unwind(AssertUnwindSafe(|| world.restore(&snap)));
    assert!(caught.is_err());
    world.check_invariants();
    assert_eq!(world.len(), 80, "as it was");
    for (i, &e) in later.iter().enumerate() {
        assert_eq!(world.get::<u32>(e), Ok(&(1000 + i as u32)));
    }
    world.restore(&snap).unwrap();
    world.check_invariants();
    for (i, &e) in ids.iter().enumerate() {
        assert_eq!(world.get::<u32>(e), Ok(&(i as u32)));
    }
    let fresh = world.spawn((7u32,));
    assert!(world.contains(fresh));
    world.check_invariants();
    drop(world);
    let (made, dropped) = take_ledger();
    assert_eq!(made, dropped, "drop ledger");
}

#[test]
fn dropping_or_clearing_a_world_with_two_panicking_chunk_values_does_not_abort() {
    for clear in [false, true] {
        take_ledger();
        let mut world = World::with_test_chunk_size(256);
        world.register_chunk_component::<Flaky>();
        // Several chunks, so several chunk values whose `Drop` panics (fewer rows under Miri,
        // where each caught panic costs seconds: 16 rows of 256-byte chunks are still several).
        let rows = if cfg!(miri) { 16 } else { 200u32 };
        let first = world
            .spawn_batch((0..rows).map(|i| (Name(i.to_string()),)))
            .next()
            .expect("rows");
        let archetype = world.location(first).expect("live").archetype;
        assert!(world.archetypes()[archetype.index()].chunks().len() >= 2);
        arm_drop(true);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            if clear {
                world.clear();
            } else {
                drop(std::mem::take(&mut world));
            }
        }));
        arm_drop(false);
        let message = caught.expect_err("the first chunk value's panic is reported");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"Flaky dropped"));
        world.check_invariants();
        assert_eq!(world.len(), 0);
        world.spawn((Name("after".into()),));
        drop(world);
        let (made, dropped) = take_ledger();
        assert_eq!(made, dropped, "drop ledger, clear: {clear}");
    }
}
