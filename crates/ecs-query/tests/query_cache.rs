//! The world-level query cache: `world.query::<Q>()` keeps its matched archetypes in the world
//! between calls. These tests check that a cached one-shot query yields what a fresh
//! `QueryState` yields as archetypes come and go, that worlds and (query, filter) pairs never
//! share an entry, and that one-shot change detection is what it was (every chunk counts as
//! changed, `for_each` and `iter` advance the tick once, `count` and `get` not at all).

use ecs_core::{Entity, World};
use ecs_query::{Changed, QueryExt, QueryState, RefRO, RefRW, With, Without};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct C(u8);

/// Sorted (entity, value) pairs of the one-shot `A` query.
fn one_shot(world: &mut World) -> Vec<(Entity, u32)> {
    let mut v: Vec<_> = world
        .query::<(Entity, RefRO<A>)>()
        .iter()
        .map(|(e, a)| (e, a.0))
        .collect();
    v.sort_by_key(|p| p.0);
    v
}

/// The same through a fresh `QueryState`.
fn fresh(world: &mut World) -> Vec<(Entity, u32)> {
    let mut state = QueryState::<(Entity, RefRO<A>)>::new(world);
    let mut v: Vec<_> = state.iter(world).map(|(e, a)| (e, a.0)).collect();
    v.sort_by_key(|p| p.0);
    v
}

#[test]
fn cache_follows_new_archetypes_between_calls() {
    let mut world = World::with_test_chunk_size(256);
    assert!(one_shot(&mut world).is_empty()); // built before `A` has any archetype
    let mut all = Vec::new();
    for i in 0..12u32 {
        // Each round adds entities to a new archetype or to an old one.
        let e = match i % 4 {
            0 => world.spawn((A(i),)),
            1 => world.spawn((A(i), B(i))),
            2 => world.spawn((A(i), C(i as u8))),
            _ => world.spawn((B(i),)),
        };
        // Under Miri 8 a round: the 12 rounds still fill several 256-byte chunks.
        world
            .spawn_batch((0..if cfg!(miri) { 8 } else { 20 }).map(|k| (A(k), B(k), C(i as u8))))
            .for_each(drop);
        if i == 5 {
            world.insert_one(e, C(0)).unwrap(); // moves an entity into another archetype
        }
        let got = one_shot(&mut world);
        assert_eq!(got, fresh(&mut world), "round {i}");
        all = got;
    }
    assert_eq!(all.len(), world.query::<RefRO<A>>().count());
    // One entry per (query, filter) pair, however many calls.
    let entries = world.query_cache().len();
    one_shot(&mut world);
    assert_eq!(world.query_cache().len(), entries);
}

#[test]
fn cache_matches_a_fresh_state_for_every_entry_point() {
    let mut world = World::with_test_chunk_size(256);
    // Under Miri 12 rounds: each of the three archetypes still grows four times.
    for i in 0..if cfg!(miri) { 12 } else { 50u32 } {
        match i % 3 {
            0 => world.spawn((A(i),)),
            1 => world.spawn((A(i), B(i))),
            _ => world.spawn((B(i), C(1))),
        };
        let mut state = QueryState::<RefRO<A>, Without<B>>::new(&mut world);
        let expect: u32 = state.iter(&world).map(|a| a.0).sum();
        let mut sum = 0;
        world
            .query_filtered::<RefRO<A>, Without<B>>()
            .for_each(|a| sum += a.0);
        assert_eq!(sum, expect);
        let mut sum = 0;
        world
            .query_filtered::<RefRO<A>, Without<B>>()
            .for_each_chunk(|mut v| sum += v.columns().iter().map(|a| a.0).sum::<u32>());
        assert_eq!(sum, expect);
        let iter_sum: u32 = world
            .query_filtered::<RefRO<A>, Without<B>>()
            .iter()
            .map(|a| a.0)
            .sum();
        assert_eq!(iter_sum, expect);
        assert_eq!(
            world.query_filtered::<RefRO<A>, Without<B>>().count(),
            state.count(&world)
        );
        let shared: u32 = world
            .query_ref_filtered::<RefRO<A>, Without<B>>()
            .iter()
            .map(|a| a.0)
            .sum();
        assert_eq!(shared, expect);
    }
}

#[test]
fn two_worlds_do_not_share_matches() {
    let mut w1 = World::new();
    let mut w2 = World::new();
    w1.spawn((A(1),));
    w1.spawn((A(2), B(0)));
    w2.spawn((B(0), C(0))); // `A` unregistered in w2 at first
    assert_eq!(w1.query::<RefRO<A>>().count(), 2);
    assert_eq!(w2.query::<RefRO<A>>().count(), 0);
    w2.spawn((C(0), A(10)));
    let in_w2: Vec<u32> = w2.query::<RefRO<A>>().iter().map(|a| a.0).collect();
    assert_eq!(in_w2, [10]);
    let mut in_w1: Vec<u32> = w1.query::<RefRO<A>>().iter().map(|a| a.0).collect();
    in_w1.sort();
    assert_eq!(in_w1, [1, 2]);
    assert_eq!(w1.query_cache().world_id(), w1.id());
    assert_eq!(w2.query_cache().world_id(), w2.id());
    assert_ne!(w1.query_cache().world_id(), w2.query_cache().world_id());
}

#[test]
fn filtered_and_unfiltered_queries_are_distinct_entries() {
    let mut world = World::new();
    world.spawn((A(1),));
    world.spawn((A(2), B(0)));
    assert_eq!(world.query::<RefRO<A>>().count(), 2);
    assert_eq!(world.query_filtered::<RefRO<A>, With<B>>().count(), 1);
    assert_eq!(world.query_filtered::<RefRO<A>, Without<B>>().count(), 1);
    // The filter inside the tuple is another query type, with its own entry.
    assert_eq!(world.query::<(RefRO<A>, With<B>)>().count(), 1);
    // Read and write of the same component are distinct too.
    assert_eq!(world.query::<RefRW<A>>().count(), 2);
    assert_eq!(world.query_cache().len(), 5);
    assert_eq!(world.query::<RefRO<A>>().count(), 2);
    assert_eq!(world.query_cache().len(), 5);
}

#[test]
fn one_shot_change_detection_is_unchanged() {
    let mut world = World::new();
    let e = world.spawn((A(1),));
    world.spawn((A(2), B(0)));
    // A fresh one-shot `Changed` sees every chunk, on every call, cached or not.
    for _ in 0..3 {
        assert_eq!(world.query::<(Entity, Changed<A>)>().count(), 2);
        let seen = world.query::<(Entity, Changed<A>)>().iter().count();
        assert_eq!(seen, 2);
    }
    // `for_each`, `iter`, `single` advance the tick once; `count` and `get` do not.
    let t = world.change_tick();
    world.query::<RefRW<A>>().for_each(|a| a.0 += 1);
    assert_eq!(world.change_tick(), t + 1);
    world.query::<RefRW<A>>().iter().for_each(|a| a.0 += 1);
    assert_eq!(world.change_tick(), t + 2);
    let _ = world.query::<RefRO<B>>().single();
    assert_eq!(world.change_tick(), t + 3);
    world.query::<RefRW<A>>().count();
    assert_eq!(world.query::<RefRW<A>>().get(e).map(|a| a.0), Ok(3));
    assert_eq!(world.change_tick(), t + 3);
    // A kept state still sees only what changed since its last run.
    let mut seen = QueryState::<(Entity, Changed<A>)>::new(&mut world);
    assert_eq!(seen.iter(&world).count(), 2);
    assert_eq!(seen.iter(&world).count(), 0);
    world.query::<RefRW<A>>().get(e).map(|a| a.0 = 9).unwrap();
    world
        .query::<(RefRW<A>, Without<B>)>()
        .for_each(|(a, ())| a.0 += 1);
    assert_eq!(seen.iter(&world).map(|(x, ())| x).collect::<Vec<_>>(), [e]);
    assert_eq!(world.get::<A>(e), Ok(&A(10)));
}

#[test]
fn query_ref_uses_the_cache_only_while_it_is_current() {
    let mut world = World::new();
    world.spawn((A(1),));
    assert_eq!(world.query_ref::<RefRO<A>>().count(), 1); // no entry: builds its own
    assert!(world.query_cache().is_empty());
    assert_eq!(world.query::<RefRO<A>>().count(), 1); // fills the entry
    assert_eq!(world.query_cache().len(), 1);
    assert_eq!(world.query_ref::<RefRO<A>>().single(), Ok(&A(1))); // borrows it
    world.spawn((A(2), C(0))); // a new archetype: the entry is stale
    let q = world.query_ref::<RefRO<A>>();
    assert_eq!(q.iter().map(|a| a.0).sum::<u32>(), 3);
    assert_eq!(q.count(), 2);
    let first = world.query_ref::<(Entity, RefRO<A>)>();
    let second = world.query_ref::<RefRO<A>>(); // both alive at once, any mix
    assert_eq!(first.count(), second.count());
}

#[test]
fn cached_state_survives_clear_and_restore_of_rows() {
    let mut world = World::with_test_chunk_size(256);
    world
        .spawn_batch((0..30).map(|i| (A(i), B(i))))
        .for_each(drop);
    assert_eq!(world.query::<RefRO<A>>().count(), 30);
    world.clear();
    assert_eq!(world.query::<RefRO<A>>().count(), 0);
    world
        .spawn_batch((0..7).map(|i| (A(i), B(i))))
        .for_each(drop);
    assert_eq!(world.query::<RefRO<A>>().count(), 7);
    assert_eq!(one_shot(&mut world), fresh(&mut world));
}

#[test]
#[should_panic(expected = "alias a `&mut")]
fn an_aliasing_query_still_panics_and_caches_nothing() {
    let mut world = World::new();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.query::<(RefRW<A>, RefRO<A>)>();
    }));
    assert!(world.query_cache().is_empty());
    std::panic::resume_unwind(result.unwrap_err());
}
