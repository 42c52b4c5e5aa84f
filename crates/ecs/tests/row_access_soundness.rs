//! Rows written and borrowed through the safe API stay sound: a lying `size_hint` in
//! `spawn_batch` changes nothing but capacity, a chunk view refuses columns its query does not
//! grant, items kept past the loop alias nothing, and a zero-sized column beside the entity
//! column aliases nothing (Miri checks the last two).
//!
//! From the second outside review's attacks on the public API from safe code only (no
//! `unsafe` block, no `unsafe impl`), after issue 12 closed the registry and `System` routes.
//! Each test is named after the behaviour a user relies on and asserts it.
//!
//! Small and single-threaded, so Miri runs it:
//! `MIRIFLAGS="-Zmiri-tree-borrows" cargo +nightly miri test -p ecs --test row_access_soundness`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs::prelude::*;

mod common;
use common::{message, Pos, Tag};

#[test]
fn a_lying_size_hint_in_spawn_batch_changes_nothing_but_capacity() {
    /// Yields `n` bundles but claims `hint`.
    struct Liar {
        n: u32,
        hint: (usize, Option<usize>),
    }
    impl Iterator for Liar {
        type Item = (Pos,);
        fn next(&mut self) -> Option<(Pos,)> {
            self.n = self.n.checked_sub(1)?;
            Some((Pos(self.n),))
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            self.hint
        }
    }
    let mut world = World::with_test_chunk_size(256);
    let many: Vec<Entity> = world
        .spawn_batch(Liar {
            n: 50,
            hint: (0, Some(0)),
        })
        .collect();
    let few: Vec<Entity> = world
        .spawn_batch(Liar {
            n: 3,
            hint: (1000, Some(1)),
        })
        .collect();
    assert_eq!((many.len(), few.len(), world.len()), (50, 3, 53));
    for (i, e) in many.iter().enumerate() {
        assert_eq!(world.get::<Pos>(*e), Ok(&Pos(49 - i as u32)));
    }
    world.check_invariants();
}

#[test]
fn a_chunk_view_refuses_columns_its_query_does_not_grant() {
    let mut world = World::new();
    world.spawn((Pos(1), Tag));
    let write = catch_unwind(AssertUnwindSafe(|| {
        world
            .query::<RefRO<Pos>>()
            .for_each_chunk(|mut v| v.column_mut::<Pos>()[0].0 = 7);
    }))
    .unwrap_err();
    assert!(
        message(&*write).contains("does not write"),
        "{}",
        message(&*write)
    );
    let filter = catch_unwind(AssertUnwindSafe(|| {
        world
            .query_filtered::<RefRO<Pos>, With<Tag>>()
            .for_each_chunk(|v| assert_eq!(v.column::<Tag>().len(), 1));
    }))
    .unwrap_err();
    assert!(
        message(&*filter).contains("does not access"),
        "{}",
        message(&*filter)
    );
    assert_eq!(world.query::<RefRO<Pos>>().iter().next(), Some(&Pos(1)));
}

/// `QueryBorrow::for_each` and `iter` hand out items for the whole world borrow, so a caller may
/// keep every `&mut` past the loop (tuple queries derive them from per-chunk slices). Keeping and
/// writing them all afterwards must stay sound (Miri) and touch each row exactly once.
#[test]
fn items_kept_past_the_loop_alias_nothing() {
    let mut world = World::with_test_chunk_size(256);
    world
        .spawn_batch((0..50).map(|i| (Pos(i), Tag)))
        .for_each(drop);
    let mut kept: Vec<(Entity, &mut Pos)> = Vec::new();
    world
        .query::<(Entity, RefRW<Pos>, With<Tag>)>()
        .for_each(|(e, p, ())| kept.push((e, p)));
    let mut entities: Vec<Entity> = kept.iter().map(|(e, _)| *e).collect();
    for (_, p) in &mut kept {
        p.0 += 1000;
    }
    let mut kept_iter: Vec<&mut Pos> = world.query::<RefRW<Pos>>().iter().collect();
    for p in &mut kept_iter {
        p.0 += 1;
    }
    entities.sort_unstable();
    entities.dedup();
    assert_eq!(entities.len(), 50, "each row yielded once");
    let mut values: Vec<u32> = world.query::<RefRO<Pos>>().iter().map(|p| p.0).collect();
    values.sort_unstable();
    assert_eq!(values, (1001..1051).collect::<Vec<_>>());
}

/// A zero-sized column sits at offset 0, on top of the entity column: a chunk view's
/// `&'w [Entity]` kept beside its `&mut [Zst]` (and a `&mut` item of it) must stay sound.
#[test]
fn a_zero_sized_column_beside_the_entity_column_aliases_nothing() {
    #[derive(Debug, PartialEq)]
    struct Zst;
    let mut world = World::with_test_chunk_size(256);
    let spawned: Vec<Entity> = world.spawn_batch((0..40).map(|i| (Zst, Pos(i)))).collect();
    let mut seen = Vec::new();
    world
        .query::<(Entity, RefRW<Zst>, RefRW<Pos>)>()
        .for_each_chunk(|mut view| {
            let ids = view.entities();
            let (entities, zsts, pos) = view.columns();
            assert_eq!(entities, ids);
            assert_eq!(zsts.len(), ids.len());
            *zsts.first_mut().expect("a row") = Zst;
            for p in pos.iter_mut() {
                p.0 += 1;
            }
            seen.extend_from_slice(ids);
        });
    assert_eq!(seen, spawned);
    let mut kept: Vec<(Entity, &mut Zst)> = Vec::new();
    world
        .query::<(Entity, RefRW<Zst>)>()
        .for_each(|(e, z)| kept.push((e, z)));
    assert!(kept.iter().map(|(e, _)| *e).eq(spawned.iter().copied()));
    assert_eq!(world.get::<Pos>(spawned[39]), Ok(&Pos(40)));
}
