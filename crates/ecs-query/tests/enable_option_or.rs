//! `Option<Q>` and `Or<..>` over enableable components, on every path.
//!
//! The contract: a disabled `T` counts as absent, so `Option<RefRO<T>>` yields `None` on a row
//! whose `T` is off, and `Or<(With<A>, ..)>` decides row by row. Each query here runs through
//! `iter`, `iter_mut`, `for_each`, `for_each_chunk` (the view's mask and `is_enabled`),
//! `par_for_each` on the sequential path and on a 2-thread pool, and `get` on every entity,
//! and each must give what a plain loop over the entities computes from `World::get` and
//! `World::is_enabled`.
//!
//! Chunks of 256 bytes (~20 rows) with bits switched off by pattern give chunks where a type
//! is all on, all off and mixed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use ecs_core::{Entity, World};
use ecs_query::{
    Changed, Disabled, ExactQuery, IgnoreEnabled, Or, Parallelism, QueryExt, QueryFilter,
    QueryState, RefRO, RefRW, With, Without, WorldQuery,
};

/// Enableable.
#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
/// Enableable, zero-sized.
#[derive(Clone, Copy, Debug, PartialEq)]
struct B;
/// Plain.
#[derive(Clone, Copy, Debug, PartialEq)]
struct C(u32);

/// Entities: natively 600 (several chunks per archetype, so chunks where `A` is all on, all
/// off and mixed). Under Miri 36, the fewest that still give every archetype a chunk where
/// `A` (or `B`) is mixed and the `A`-only archetype one where `A` is all off; each archetype
/// fits one chunk (capacities 16 and 21 rows), as it already did at the 90 rows Miri ran
/// before, so no code path is lost. Chunk masks are one `u64` word at this chunk size.
const N: u32 = if cfg!(miri) { 36 } else { 600 };

/// Entities in six archetypes; `A` off in whole runs of rows (all-off chunks) and in
/// scattered rows (mixed chunks), `B` off in other scattered rows.
fn build() -> (World, Vec<Entity>) {
    let mut world = World::with_test_chunk_size(256);
    world.register_enableable::<A>();
    world.register_enableable::<B>();
    let mut ids = Vec::new();
    for i in 0..N {
        let e = match i % 6 {
            0 => world.spawn((A(i), B)),
            1 => world.spawn((A(i), C(i))),
            2 => world.spawn((B, C(i))),
            3 => world.spawn((A(i), B, C(i))),
            4 => world.spawn((C(i),)),
            _ => world.spawn((A(i),)),
        };
        ids.push(e);
    }
    for (i, &e) in ids.iter().enumerate() {
        let a_off = (i / 6) % 20 < 5 || i % 7 == 0;
        if a_off && world.has::<A>(e) {
            world.set_enabled::<A>(e, false).unwrap();
        }
        if i % 5 == 0 && world.has::<B>(e) {
            world.set_enabled::<B>(e, false).unwrap();
        }
    }
    (world, ids)
}

/// Whether `e` has a `T` that counts as present (the oracle's view).
fn on<T: ecs_core::Component>(world: &World, e: Entity) -> bool {
    world
        .is_enabled::<T>(e)
        .unwrap_or_else(|_| world.has::<T>(e))
}

fn a_of(world: &World, e: Entity) -> Option<u32> {
    on::<A>(world, e).then(|| world.get::<A>(e).unwrap().0)
}

fn pool() -> Arc<rayon::ThreadPool> {
    Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap(),
    )
}

type Set = BTreeSet<(Entity, Option<u32>)>;

/// Runs `(Entity, Q)` with filter `F` through every item path, mapping items with `key`,
/// and compares each with `want`.
fn check_items<Q, F>(
    world: &mut World,
    want: &Set,
    name: &str,
    key: impl Fn(Q::Item<'_>) -> Option<u32> + Sync + Copy,
) where
    Q: WorldQuery + 'static,
    F: QueryFilter + 'static,
    for<'w> Q::Item<'w>: Send,
{
    let mut state = QueryState::<(Entity, Q), F>::new(world);
    let got: Set = state.iter_mut(world).map(|(e, q)| (e, key(q))).collect();
    assert_eq!(&got, want, "{name}: iter_mut");
    assert_eq!(state.count(world), want.len(), "{name}: count");
    let mut each = Set::new();
    state.for_each(world, |(e, q)| {
        each.insert((e, key(q)));
    });
    assert_eq!(&each, want, "{name}: for_each");
    // Under Miri only the sequential path: rayon's pool trips Stacked Borrows inside
    // crossbeam-epoch (CI runs pool tests, named `par_`, under Tree Borrows).
    let pools = if cfg!(miri) {
        vec![None]
    } else {
        vec![None, Some(pool())]
    };
    for threads in pools {
        let par = Mutex::new(Set::new());
        let mut run = |world: &mut World| {
            state.par_for_each(world, |(e, q)| {
                par.lock().unwrap().insert((e, key(q)));
            })
        };
        let label = if threads.is_some() { 2 } else { 1 };
        match threads {
            None => Parallelism::Sequential.scope(|| run(world)),
            Some(p) => Parallelism::Pool(p).scope(|| run(world)),
        }
        assert_eq!(
            &par.into_inner().unwrap(),
            want,
            "{name}: par_for_each on {label} thread(s)"
        );
    }
    // `want` keyed by entity: a lookup per entity rather than a scan (quadratic under Miri).
    let by_entity: BTreeMap<Entity, Option<u32>> = want.iter().copied().collect();
    let ids: Vec<Entity> = world.query_ref::<Entity>().iter().collect();
    for e in ids {
        let got = state.get_mut(world, e).ok().map(|(e, q)| (e, key(q)));
        let expect = by_entity.get(&e).map(|&v| (e, v));
        assert_eq!(got, expect, "{name}: get {e:?}");
    }
}

/// `(Entity, Option<RefRO<A>>)` through a read-only `iter` and through chunk views.
fn check_read_only_paths<F: QueryFilter + ExactQuery + 'static>(
    world: &mut World,
    want: &Set,
    name: &str,
) {
    let mut state = QueryState::<(Entity, Option<RefRO<A>>), F>::new(world);
    let got: Set = state
        .iter(world)
        .map(|(e, a)| (e, a.map(|a| a.0)))
        .collect();
    assert_eq!(&got, want, "{name}: iter");
    assert_eq!(state.iter(world).len(), want.len(), "{name}: len");
    let mut chunks = Set::new();
    state.for_each_chunk(world, |mut view| {
        let mask = view.enabled_rows().map(<[u64]>::to_vec);
        let on: Vec<bool> = (0..view.len()).map(|r| view.is_enabled::<A>(r)).collect();
        let (es, a) = view.columns();
        for (r, e) in es.iter().enumerate() {
            if mask
                .as_ref()
                .is_none_or(|m| m[r / 64] & (1 << (r % 64)) != 0)
            {
                let a = a.filter(|_| on[r]).map(|col| col[r].0);
                chunks.insert((*e, a));
            }
        }
    });
    assert_eq!(&chunks, want, "{name}: for_each_chunk");
}

fn oracle(world: &World, f: impl Fn(&World, Entity) -> Option<Option<u32>>) -> Set {
    world
        .query_ref::<Entity>()
        .iter()
        .filter_map(|e| f(world, e).map(|v| (e, v)))
        .collect()
}

#[test]
fn option_of_a_disabled_component_is_none_on_every_path() {
    let (mut world, _) = build();
    let want = oracle(&world, |w, e| Some(a_of(w, e)));
    // The world must hold all three kinds of chunk for the test to mean anything.
    assert!(want.iter().any(|(_, a)| a.is_none()) && want.iter().any(|(_, a)| a.is_some()));
    check_read_only_paths::<()>(&mut world, &want, "Option<RefRO<A>>");
    check_items::<Option<RefRO<A>>, ()>(&mut world, &want, "Option<RefRO<A>>", |a| a.map(|a| a.0));
    check_items::<Option<&A>, ()>(&mut world, &want, "Option<&A>", |a| a.map(|a| a.0));
    check_items::<Option<RefRW<A>>, ()>(&mut world, &want, "Option<RefRW<A>>", |a| a.map(|a| a.0));
    check_items::<Option<&mut A>, ()>(&mut world, &want, "Option<&mut A>", |a| a.map(|a| a.0));
    // With a filter that leaves mixed chunks of its own.
    let want_c = oracle(&world, |w, e| w.has::<C>(e).then(|| a_of(w, e)));
    check_read_only_paths::<With<C>>(&mut world, &want_c, "Option<RefRO<A>>, With<C>");
    check_items::<Option<RefRO<A>>, With<C>>(&mut world, &want_c, "with C", |a| a.map(|a| a.0));
    // `IgnoreEnabled` around the option sees every `A`.
    let every = oracle(&world, |w, e| Some(w.get::<A>(e).ok().map(|a| a.0)));
    check_items::<IgnoreEnabled<Option<RefRO<A>>>, ()>(&mut world, &every, "IgnoreEnabled", |a| {
        a.map(|a| a.0)
    });
    let want_c = oracle(&world, |w, e| {
        w.has::<C>(e).then(|| w.get::<A>(e).ok().map(|a| a.0))
    });
    check_items::<IgnoreEnabled<(RefRO<C>, Option<RefRO<A>>)>, ()>(
        &mut world,
        &want_c,
        "IgnoreEnabled tuple",
        |(_, a)| a.map(|a| a.0),
    );
}

#[test]
fn option_of_a_tuple_needs_every_element_kept() {
    let (mut world, _) = build();
    let want = oracle(&world, |w, e| Some(a_of(w, e).filter(|_| on::<B>(w, e))));
    check_items::<Option<(RefRO<A>, With<B>)>, ()>(
        &mut world,
        &want,
        "Option<(A, With<B>)>",
        |q| q.map(|(a, ())| a.0),
    );
    let want = oracle(&world, |w, e| Some(a_of(w, e).filter(|_| !on::<B>(w, e))));
    check_items::<Option<(RefRO<A>, Without<B>)>, ()>(
        &mut world,
        &want,
        "Option<(A, Without<B>)>",
        |q| q.map(|(a, ())| a.0),
    );
}

#[test]
fn option_writers_mark_only_the_rows_they_hand_out() {
    let (mut world, ids) = build();
    let mut changed = QueryState::<Entity, Changed<A>>::new(&mut world);
    assert_eq!(
        changed.iter(&world).count(),
        ids.iter().filter(|&&e| world.has::<A>(e)).count()
    );
    world.advance_tick();
    let mut writer = QueryState::<Option<RefRW<A>>>::new(&mut world);
    writer.for_each(&mut world, |a| {
        if let Some(a) = a {
            a.0 += 1000;
        }
    });
    let written: BTreeSet<Entity> = changed.iter(&world).collect();
    let want: BTreeSet<Entity> = ids
        .iter()
        .copied()
        .filter(|&e| on::<A>(&world, e))
        .collect();
    assert_eq!(written, want, "Changed<A> after an Option<RefRW<A>> loop");
    for &e in &ids {
        if let Ok(a) = world.get::<A>(e) {
            let i = ids.iter().position(|&x| x == e).unwrap() as u32;
            let bump = if on::<A>(&world, e) { 1000 } else { 0 };
            assert_eq!(a.0, i + bump, "value of {e:?}");
        }
    }
}

fn check_filter<F: QueryFilter + ExactQuery + 'static>(
    world: &mut World,
    name: &str,
    pass: impl Fn(&World, Entity) -> bool,
) {
    let want = oracle(world, |w, e| pass(w, e).then_some(None));
    check_items::<(), F>(world, &want, name, |()| None);
    let want_a = oracle(world, |w, e| pass(w, e).then(|| a_of(w, e)));
    check_read_only_paths::<F>(world, &want_a, name);
}

#[test]
fn or_decides_row_by_row_on_every_path() {
    let (mut world, _) = build();
    check_filter::<Or<(With<A>, With<B>)>>(&mut world, "Or<(With<A>, With<B>)>", |w, e| {
        on::<A>(w, e) || on::<B>(w, e)
    });
    check_filter::<Or<(Without<A>, With<C>)>>(&mut world, "Or<(Without<A>, With<C>)>", |w, e| {
        !on::<A>(w, e) || w.has::<C>(e)
    });
    check_filter::<Or<(With<A>, Disabled<B>)>>(&mut world, "Or<(With<A>, Disabled<B>)>", |w, e| {
        on::<A>(w, e) || (w.has::<B>(e) && !on::<B>(w, e))
    });
    check_filter::<Or<(Without<A>, Without<B>)>>(
        &mut world,
        "Or<(Without<A>, Without<B>)>",
        |w, e| !on::<A>(w, e) || !on::<B>(w, e),
    );
    check_filter::<(With<C>, Or<(With<A>, With<B>)>)>(&mut world, "(With<C>, Or<..>)", |w, e| {
        w.has::<C>(e) && (on::<A>(w, e) || on::<B>(w, e))
    });
}

#[test]
fn or_with_a_change_filter_tests_each_element_whole() {
    let (mut world, ids) = build();
    let mut state = QueryState::<Entity, Or<(Changed<C>, With<B>)>>::new(&mut world);
    // A new state sees every `C` as changed.
    let first: BTreeSet<Entity> = state.iter(&world).collect();
    let want: BTreeSet<Entity> = ids
        .iter()
        .copied()
        .filter(|&e| world.has::<C>(e) || on::<B>(&world, e))
        .collect();
    assert_eq!(first, want, "first run");
    world.advance_tick();
    // Write `C` of every third entity: now a row passes if that wrote it or its `B` is on.
    let touched: BTreeSet<Entity> = ids
        .iter()
        .copied()
        .step_by(3)
        .filter(|&e| world.has::<C>(e))
        .collect();
    for &e in &touched {
        world.get_mut::<C>(e).unwrap().0 += 1;
    }
    let want: BTreeSet<Entity> = ids
        .iter()
        .copied()
        .filter(|&e| touched.contains(&e) || on::<B>(&world, e))
        .collect();
    let mut each = BTreeSet::new();
    // `for_each` runs the same window as `iter` would; compare through a fresh state copy of
    // the ticks by running `get` first (it does not advance the state).
    for &e in &ids {
        assert_eq!(state.get(&world, e).is_ok(), want.contains(&e), "get {e:?}");
    }
    state.for_each(&mut world, |e| {
        each.insert(e);
    });
    assert_eq!(each, want, "for_each");
}

#[test]
fn par_writers_over_masked_chunks_mark_exactly_the_rows_they_hand_out() {
    for threads in [None, Some(pool())] {
        let (mut world, ids) = build();
        let mut changed = QueryState::<Entity, Changed<A>>::new(&mut world);
        changed.iter(&world).for_each(drop);
        world.advance_tick();
        let mut writer = QueryState::<RefRW<A>>::new(&mut world);
        let mut run = |world: &mut World| writer.par_for_each(world, |a| a.0 += 1000);
        match threads {
            None => Parallelism::Sequential.scope(|| run(&mut world)),
            Some(p) => Parallelism::Pool(p).scope(|| run(&mut world)),
        }
        let written: BTreeSet<Entity> = changed.iter(&world).collect();
        let want: BTreeSet<Entity> = ids
            .iter()
            .copied()
            .filter(|&e| on::<A>(&world, e))
            .collect();
        assert_eq!(written, want, "Changed<A> after a par RefRW<A> loop");
    }
}
