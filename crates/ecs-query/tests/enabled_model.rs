//! Model test for enableable components: random spawns, despawns, inserts, removes and
//! enable/disable steps (through `World::set_enabled` and through an `EnabledRW` loop), after
//! each of which queries with `RefRO`, `With`, `Without`, `Disabled`, `IgnoreEnabled`, `Or`
//! and `Option` agree with a `HashMap` model on every iteration path (`iter`, `for_each`,
//! `for_each_chunk` with its mask, `par_for_each`, `get`, `count`).
//!
//! Small chunks (256 bytes, ~20 rows) give many chunks, so all-enabled, all-disabled and mixed
//! chunks all occur, and swap-removes cross chunk boundaries.
//!
//! Compaction steps run `World::compact` in between, and a chunk component (`Rows`) is
//! written per chunk and read back per row, so `check_invariants` walks chunk values through
//! every kind of row move.
//!
//! Cases: 128, or 4 under Miri; `PROPTEST_CASES` overrides.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use ecs_core::{ComponentError, Entity, World};
use ecs_query::{
    ChunkRO, ChunkRW, Disabled, EnabledRO, EnabledRW, IgnoreEnabled, Or, QueryExt, QueryState,
    RefRO, With, Without,
};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

#[path = "support/mod.rs"]
mod support;

/// Enableable.
#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
/// Enableable, zero-sized.
#[derive(Clone, Copy, Debug, PartialEq)]
struct B;
/// Plain.
#[derive(Clone, Copy, Debug, PartialEq)]
struct P(u16);
/// Chunk component: the chunk's row count when last written.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Rows(usize);

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Row {
    /// `(value, enabled)`.
    a: Option<(u32, bool)>,
    b: Option<bool>,
    p: bool,
}

#[derive(Clone, Debug)]
enum Op {
    Spawn {
        a: bool,
        b: bool,
        p: bool,
        v: u32,
    },
    Batch {
        n: usize,
        b: bool,
    },
    Despawn(usize),
    SetA(usize, bool),
    SetB(usize, bool),
    InsertP(usize),
    RemoveP(usize),
    InsertB(usize),
    RemoveA(usize),
    /// Through an `EnabledRW<A>` loop: enable `A` where `value % m == 0` (or everywhere, or
    /// nowhere), disable it elsewhere.
    ToggleLoop {
        m: u32,
        on_all: Option<bool>,
    },
    /// `World::compact`: moves chunk blocks, keeps every row, bit and value.
    Compact,
    /// Writes each chunk's row count into its `Rows` chunk component, then checks that every
    /// row reads its own chunk's count.
    CountRows,
}

/// Largest batch (exclusive): under Miri 40, which still fills two 256-byte chunks.
const MAX_BATCH: usize = if cfg!(miri) { 40 } else { 80 };

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<bool>(), any::<bool>(), any::<bool>(), 0..1000u32)
            .prop_map(|(a, b, p, v)| Op::Spawn { a, b, p, v }),
        1 => (1..MAX_BATCH, any::<bool>()).prop_map(|(n, b)| Op::Batch { n, b }),
        2 => any::<usize>().prop_map(Op::Despawn),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(w, on)| Op::SetA(w, on)),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(w, on)| Op::SetB(w, on)),
        1 => any::<usize>().prop_map(Op::InsertP),
        1 => any::<usize>().prop_map(Op::RemoveP),
        1 => any::<usize>().prop_map(Op::InsertB),
        1 => any::<usize>().prop_map(Op::RemoveA),
        1 => (1..5u32, prop_oneof![Just(None), any::<bool>().prop_map(Some)])
            .prop_map(|(m, on_all)| Op::ToggleLoop { m, on_all }),
        1 => Just(Op::Compact),
        1 => Just(Op::CountRows),
    ]
}

#[derive(Default)]
struct Model {
    rows: HashMap<Entity, Row>,
    alive: Vec<Entity>,
}

impl Model {
    fn pick(&self, who: usize) -> Option<Entity> {
        (!self.alive.is_empty()).then(|| self.alive[who % self.alive.len()])
    }
}

fn apply(world: &mut World, model: &mut Model, op: &Op) {
    match *op {
        Op::Spawn { a, b, p, v } => {
            let e = world.spawn(());
            if a {
                world.insert_one(e, A(v)).unwrap();
            }
            if b {
                world.insert_one(e, B).unwrap();
            }
            if p {
                world.insert_one(e, P(v as u16)).unwrap();
            }
            let row = Row {
                a: a.then_some((v, true)),
                b: b.then_some(true),
                p,
            };
            model.rows.insert(e, row);
            model.alive.push(e);
        }
        Op::Batch { n, b } => {
            let base = model.alive.len() as u32;
            let es: Vec<Entity> = if b {
                world
                    .spawn_batch((0..n as u32).map(|i| (A(base + i), B)))
                    .collect()
            } else {
                world
                    .spawn_batch((0..n as u32).map(|i| (A(base + i),)))
                    .collect()
            };
            for (i, e) in es.into_iter().enumerate() {
                let row = Row {
                    a: Some((base + i as u32, true)),
                    b: b.then_some(true),
                    p: false,
                };
                model.rows.insert(e, row);
                model.alive.push(e);
            }
        }
        Op::Despawn(who) => {
            let Some(e) = model.pick(who) else { return };
            world.despawn(e).unwrap();
            model.rows.remove(&e);
            model.alive.retain(|&x| x != e);
            assert_eq!(
                world.is_enabled::<A>(e),
                Err(ComponentError::NoSuchEntity(e))
            );
        }
        Op::SetA(who, on) => {
            let Some(e) = model.pick(who) else { return };
            let row = model.rows.get_mut(&e).unwrap();
            match &mut row.a {
                Some((_, en)) => {
                    assert_eq!(world.set_enabled::<A>(e, on), Ok(*en));
                    *en = on;
                }
                None => assert!(matches!(
                    world.set_enabled::<A>(e, on),
                    Err(ComponentError::MissingComponent { .. })
                )),
            }
        }
        Op::SetB(who, on) => {
            let Some(e) = model.pick(who) else { return };
            let row = model.rows.get_mut(&e).unwrap();
            match &mut row.b {
                Some(en) => {
                    assert_eq!(world.set_enabled::<B>(e, on), Ok(*en));
                    *en = on;
                }
                None => assert!(world.set_enabled::<B>(e, on).is_err()),
            }
        }
        Op::InsertP(who) => {
            let Some(e) = model.pick(who) else { return };
            world.insert_one(e, P(1)).unwrap();
            model.rows.get_mut(&e).unwrap().p = true;
        }
        Op::RemoveP(who) => {
            let Some(e) = model.pick(who) else { return };
            let row = model.rows.get_mut(&e).unwrap();
            assert_eq!(world.remove::<(P,)>(e).is_ok(), row.p);
            row.p = false;
        }
        Op::InsertB(who) => {
            let Some(e) = model.pick(who) else { return };
            world.insert_one(e, B).unwrap();
            // An overwriting insert keeps the bit; a new `B` starts enabled.
            let row = model.rows.get_mut(&e).unwrap();
            row.b = Some(row.b.unwrap_or(true));
        }
        Op::RemoveA(who) => {
            let Some(e) = model.pick(who) else { return };
            let row = model.rows.get_mut(&e).unwrap();
            assert_eq!(world.remove::<(A,)>(e).is_ok(), row.a.is_some());
            row.a = None;
        }
        Op::ToggleLoop { m, on_all } => {
            let want = |v: u32| on_all.unwrap_or(v % m == 0);
            let mut toggles = Vec::new();
            world
                .query::<(Entity, EnabledRW<A>)>()
                .for_each(|(e, mut en)| {
                    let v = model.rows[&e].a.unwrap().0;
                    en.set(want(v));
                    toggles.push(e);
                });
            for e in toggles {
                let a = model.rows.get_mut(&e).unwrap().a.as_mut().unwrap();
                a.1 = want(a.0);
            }
        }
        Op::Compact => {
            let report = world.compact();
            assert!(report.chunks_after <= report.chunks_before, "{report:?}");
            for arch in world.archetypes() {
                assert_eq!(arch.spare_chunks(), 0);
            }
        }
        Op::CountRows => {
            world.query::<ChunkRW<Rows>>().for_each_chunk(|mut view| {
                let len = view.len();
                view.chunk_value_mut::<Rows>().0 = len;
            });
            let mut per_value: HashMap<usize, usize> = HashMap::new();
            world
                .query::<(Entity, ChunkRO<Rows>)>()
                .for_each_chunk(|view| {
                    let n = view.chunk_value::<Rows>().0;
                    assert_eq!(n, view.len(), "a chunk's value is its own");
                    *per_value.entry(n).or_default() += view.entities().len();
                });
            let rows: usize = world.query::<ChunkRO<Rows>>().iter().map(|r| r.0).sum();
            let want: usize = per_value.iter().map(|(n, rows)| n * rows).sum();
            assert_eq!(rows, want, "every row reads its chunk's value");
        }
    }
}

type Set = BTreeSet<(Entity, u32)>;

fn expect(model: &Model, f: impl Fn(&Row) -> Option<u32>) -> Set {
    model
        .rows
        .iter()
        .filter_map(|(&e, row)| f(row).map(|v| (e, v)))
        .collect()
}

/// `(Entity, RefRO<A>)`-shaped query results through every path.
fn check_paths<F: ecs_query::QueryFilter + ecs_query::ExactQuery>(
    world: &mut World,
    want: &Set,
    name: &str,
) {
    let mut state = QueryState::<(Entity, RefRO<A>), F>::new(world);
    let got: Set = state.iter(world).map(|(e, a)| (e, a.0)).collect();
    assert_eq!(&got, want, "{name}: iter");
    assert_eq!(state.iter(world).len(), want.len(), "{name}: len");
    assert_eq!(state.count(world), want.len(), "{name}: count");
    let mut each = Set::new();
    state.for_each(world, |(e, a)| {
        each.insert((e, a.0));
    });
    assert_eq!(&each, want, "{name}: for_each");
    let mut chunks = Set::new();
    state.for_each_chunk(world, |mut view| {
        let mask = view.enabled_rows().map(<[u64]>::to_vec);
        let (es, as_) = view.columns();
        for (r, (e, a)) in es.iter().zip(as_.iter()).enumerate() {
            if mask
                .as_ref()
                .is_none_or(|m| m[r / 64] & (1 << (r % 64)) != 0)
            {
                chunks.insert((*e, a.0));
            }
        }
    });
    assert_eq!(&chunks, want, "{name}: for_each_chunk");
    let par = Mutex::new(Set::new());
    support::in_pool(|| {
        state.par_for_each(world, |(e, a)| {
            par.lock().unwrap().insert((e, a.0));
        })
    });
    assert_eq!(&par.into_inner().unwrap(), want, "{name}: par_for_each");
    let entities: Vec<Entity> = world.query::<Entity>().iter().collect();
    for e in entities {
        let got = state.get(world, e).ok().map(|(e, a)| (e, a.0));
        // `want` is sorted by entity first: a range lookup rather than a scan per entity.
        let wanted = want.range((e, 0)..=(e, u32::MAX)).next().copied();
        assert_eq!(got, wanted, "{name}: get {e:?}");
    }
}

fn check(world: &mut World, model: &Model) {
    world.check_invariants();
    for (&e, row) in &model.rows {
        match row.a {
            Some((_, en)) => assert_eq!(world.is_enabled::<A>(e), Ok(en)),
            None => assert!(world.is_enabled::<A>(e).is_err()),
        }
    }
    let a_on = |r: &Row| r.a.filter(|a| a.1).map(|a| a.0);
    check_paths::<()>(world, &expect(model, a_on), "RefRO<A>");
    check_paths::<With<B>>(
        world,
        &expect(model, |r| a_on(r).filter(|_| r.b == Some(true))),
        "With<B>",
    );
    check_paths::<Without<B>>(
        world,
        &expect(model, |r| a_on(r).filter(|_| r.b != Some(true))),
        "Without<B>",
    );
    check_paths::<Disabled<B>>(
        world,
        &expect(model, |r| a_on(r).filter(|_| r.b == Some(false))),
        "Disabled<B>",
    );
    check_paths::<(With<P>, Without<B>)>(
        world,
        &expect(model, |r| a_on(r).filter(|_| r.p && r.b != Some(true))),
        "(With<P>, Without<B>)",
    );
    // `Or` decides per row: a row passes if some element keeps it.
    check_paths::<Or<(With<B>, With<P>)>>(
        world,
        &expect(model, |r| a_on(r).filter(|_| r.b == Some(true) || r.p)),
        "Or<(With<B>, With<P>)>",
    );
    check_paths::<Or<(Disabled<B>, Without<P>)>>(
        world,
        &expect(model, |r| a_on(r).filter(|_| r.b == Some(false) || !r.p)),
        "Or<(Disabled<B>, Without<P>)>",
    );
    // `Option<RefRO<A>>` is `None` where `A` is missing or off.
    let want: BTreeSet<(Entity, Option<u32>)> =
        model.rows.iter().map(|(&e, r)| (e, a_on(r))).collect();
    let mut opt = QueryState::<(Entity, Option<RefRO<A>>)>::new(world);
    let got: BTreeSet<_> = opt.iter(world).map(|(e, a)| (e, a.map(|a| a.0))).collect();
    assert_eq!(got, want, "Option<RefRO<A>>: iter");
    let mut each = BTreeSet::new();
    opt.for_each(world, |(e, a)| {
        each.insert((e, a.map(|a| a.0)));
    });
    assert_eq!(each, want, "Option<RefRO<A>>: for_each");
    let par = Mutex::new(BTreeSet::new());
    support::in_pool(|| {
        opt.par_for_each(world, |(e, a)| {
            par.lock().unwrap().insert((e, a.map(|a| a.0)));
        })
    });
    assert_eq!(
        par.into_inner().unwrap(),
        want,
        "Option<RefRO<A>>: par_for_each"
    );
    for &(e, a) in &want {
        let got = opt.get(world, e).map(|(_, a)| a.map(|a| a.0));
        assert_eq!(got, Ok(a), "Option<RefRO<A>>: get {e:?}");
    }
    // Rows whatever their bits.
    let all: Set = world
        .query::<(Entity, IgnoreEnabled<RefRO<A>>)>()
        .iter()
        .map(|(e, a)| (e, a.0))
        .collect();
    assert_eq!(all, expect(model, |r| r.a.map(|a| a.0)), "IgnoreEnabled");
    // `Without<A>`: no `A`, or a disabled one.
    let without: BTreeSet<Entity> = world
        .query_filtered::<Entity, Without<A>>()
        .iter()
        .collect();
    let want: BTreeSet<Entity> = model
        .rows
        .iter()
        .filter(|(_, r)| r.a.is_none_or(|a| !a.1))
        .map(|(&e, _)| e)
        .collect();
    assert_eq!(without, want, "Without<A>");
    let disabled = world.query_filtered::<Entity, Disabled<A>>().iter().count();
    assert_eq!(
        disabled,
        model
            .rows
            .values()
            .filter(|r| r.a.is_some_and(|a| !a.1))
            .count(),
        "Disabled<A>"
    );
    let on: usize = world
        .query::<EnabledRO<A>>()
        .iter()
        .filter(|on| *on)
        .count();
    assert_eq!(
        on,
        model.rows.values().filter(|r| a_on(r).is_some()).count()
    );
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if cfg!(miri) { 2 } else { 128 })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        // Miri's isolation has no file system for the regression file.
        failure_persistence: if cfg!(miri) {
            None
        } else {
            Some(Box::new(FileFailurePersistence::WithSource("regressions")))
        },
        ..ProptestConfig::default()
    })]

    #[test]
    fn par_enabled_queries_agree_with_the_model(ops in prop::collection::vec(op(), 1..if cfg!(miri) { 8 } else { 40 })) {
        let mut world = World::with_test_chunk_size(256);
        world.register_enableable::<A>();
        world.register_enableable::<B>();
        world.register_chunk_component::<Rows>();
        let mut model = Model::default();
        for op in &ops {
            apply(&mut world, &mut model, op);
            check(&mut world, &model);
        }
    }
}

#[test]
fn all_disabled_chunks_are_skipped_and_mixed_ones_iterate_runs() {
    let mut world = World::with_test_chunk_size(1024);
    world.register_enableable::<A>();
    let es: Vec<Entity> = world.spawn_batch((0..500).map(|i| (A(i),))).collect();
    // Disable every row of the first chunk and every other run of 3 after it.
    let cap = world.archetypes()[world.location(es[0]).unwrap().archetype.index()]
        .layout()
        .capacity();
    for (i, &e) in es.iter().enumerate() {
        if i < cap || (i / 3) % 2 == 0 {
            world.set_enabled::<A>(e, false).unwrap();
        }
    }
    let got: Vec<u32> = world.query::<RefRO<A>>().iter().map(|a| a.0).collect();
    let want: Vec<u32> = (0..500u32)
        .filter(|&i| !(i < cap as u32 || (i / 3) % 2 == 0))
        .collect();
    let mut sorted = got.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, want);
    world.check_invariants();
}

#[test]
fn enabling_is_a_change_of_the_component() {
    use ecs_query::Changed;
    let mut world = World::new();
    world.register_enableable::<A>();
    let e = world.spawn((A(1),));
    let mut changed = QueryState::<Entity, Changed<A>>::new(&mut world);
    // Each `iter` is a run: it sees what changed since the previous one.
    assert_eq!(changed.iter(&world).count(), 1); // first run: everything is new
    assert_eq!(changed.iter(&world).count(), 0);
    world.set_enabled::<A>(e, false).unwrap();
    // `Changed<A>` passes the chunk (a chunk-level filter); `Entity` sees the disabled row.
    assert_eq!(changed.iter(&world).count(), 1);
    assert_eq!(changed.iter(&world).count(), 0);
    world.query::<EnabledRW<A>>().for_each(|mut on| {
        on.set(true);
    });
    assert_eq!(changed.iter(&world).count(), 1);
    // Enabling again makes the row visible to `RefRO<A>` and `get`.
    let mut state = QueryState::<RefRO<A>>::new(&mut world);
    assert_eq!(state.get(&world, e).map(|a| a.0), Ok(1));
    world.set_enabled::<A>(e, false).unwrap();
    assert!(matches!(
        state.get(&world, e),
        Err(ecs_query::QueryError::NoMatch { .. })
    ));
}
