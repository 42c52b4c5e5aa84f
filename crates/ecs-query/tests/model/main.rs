//! Model test: random worlds, and a fixed family of query shapes run through every iteration
//! path (`iter`, `for_each`, `for_each_chunk`, `par_for_each`, `get`), each checked against a
//! naive `HashMap<Entity, Row>` model of the world.
//!
//! Query types are static, so the family is fixed (required, excluded, optional, `Or`, nested
//! tuples, a separate filter parameter, bare non-tuple queries); proptest randomises the world
//! (spawns of random component subsets, batch spawns, inserts, removes, despawns) and which query
//! runs, how, and whether through a cached `QueryState` or a one-shot `world.query()`.
//!
//! Cases: 256, or a few small worlds under Miri; `PROPTEST_CASES` overrides both (under Miri,
//! forward it with `-Zmiri-env-forward=PROPTEST_CASES`).

use std::collections::HashMap;

use ecs_core::{Entity, World};
use ecs_query::{QueryError, QueryExt};
use ecs_test_support::shapes::{self, Path, States};
use ecs_test_support::{nth_alive, strategy, worlds};
use proptest::prelude::*;

mod cases;
mod components;

use cases::{Case, Obs, CASES, Q0, Q1, Q10, Q11, Q12, Q2, Q3, Q4, Q5, Q6, Q7, Q8, Q9};
use components::{
    value, with_type, Comp, Look, Norm, Put, Row, Take, A, B, C, D, F, G, H, I, TYPES,
};

// ----- the model ----------------------------------------------------------------------------

#[derive(Default)]
struct Model {
    rows: HashMap<Entity, Row>,
    /// Live entities, for picking one by index.
    alive: Vec<Entity>,
    /// Despawned handles, which must never resolve again.
    dead: Vec<Entity>,
}

impl Model {
    fn add(&mut self, e: Entity, row: Row) {
        assert!(self.rows.insert(e, row).is_none(), "{e:?} handed out twice");
        self.alive.push(e);
    }

    fn pick(&self, who: usize) -> Option<Entity> {
        nth_alive(&self.alive, who)
    }
}

/// The whole world agrees with the model, through `World::get` / `has` / `contains`.
fn check_world(world: &World, model: &Model) {
    world.check_invariants();
    assert_eq!(world.len() as usize, model.rows.len());
    for &entity in model.rows.keys() {
        check_entity(world, model, entity);
    }
    for &e in &model.dead {
        assert!(!world.contains(e), "{e:?} was despawned");
    }
}

/// One live entity agrees with the model.
fn check_entity(world: &World, model: &Model, entity: Entity) {
    assert!(world.contains(entity));
    for (ty, want) in model.rows[&entity].iter().enumerate() {
        let got = with_type(ty, Look { world, entity });
        assert_eq!(got, *want, "{entity:?}, component {ty}");
    }
}

// ----- running one query --------------------------------------------------------------------

/// The paths that run on the calling thread.
const SEQ_MODES: [Path; 4] = [Path::Iter, Path::ForEach, Path::Chunks, Path::Get];

/// Runs query `K` by `mode` and checks what it saw and wrote against the model, which it then
/// updates with the query's writes.
fn run<K: Case>(
    world: &mut World,
    model: &mut Model,
    states: &mut States,
    mode: Path,
    cached: bool,
) {
    let matching: Vec<Entity> = model
        .rows
        .iter()
        .filter(|(_, r)| K::matches(r))
        .map(|(&e, _)| e)
        .collect();
    let want: Vec<Obs> = matching
        .iter()
        .map(|e| K::expect(*e, &model.rows[e]))
        .collect();
    let mut got: Vec<Obs> = Vec::new();
    match mode {
        Path::Iter | Path::ForEach | Path::ParForEach => {
            let state = cached.then(|| states.get::<K::Q, K::F>(world));
            let seen = shapes::observe(world, state, mode, |item| K::item(item));
            if mode == Path::Iter {
                assert_eq!(seen.size_hint, Some((want.len(), Some(want.len()))));
                let count = world.query_filtered::<K::Q, K::F>().count();
                assert_eq!(count, want.len());
            }
            got = seen.items;
        }
        Path::Chunks => {
            let state = cached.then(|| states.get::<K::Q, K::F>(world));
            shapes::chunks(world, state, |view| K::chunk(view, &mut got));
        }
        Path::Get => {
            let mut all: Vec<Entity> = model.alive.clone();
            all.sort();
            for e in all {
                let state = cached.then(|| states.get::<K::Q, K::F>(world));
                match shapes::get(world, state, e).map(K::item) {
                    Ok(obs) => got.push(obs),
                    Err(QueryError::NoMatch { entity, .. }) => {
                        assert_eq!(entity, e);
                        assert!(!K::matches(&model.rows[&e]), "{e:?} should match");
                    }
                    Err(err) => panic!("get({e:?}) of a live entity: {err}"),
                }
            }
            for &e in model.dead.iter().rev().take(4) {
                let state = Some(states.get::<K::Q, K::F>(world));
                let err = shapes::get(world, state, e).err();
                assert_eq!(err, Some(QueryError::NoSuchEntity(e)));
            }
        }
        Path::Count => unreachable!("`count` is checked with `iter`"),
    }
    shapes::assert_same(
        got,
        want,
        &format!(
            "query {} ({mode:?}, cached: {cached})",
            std::any::type_name::<K::Q>()
        ),
    );
    // The writes landed: every matched entity now reads as the model says. A stray write to an
    // unmatched entity shows up in a later query or in the final whole-world check.
    for e in matching {
        K::write(e, model.rows.get_mut(&e).expect("live"));
        check_entity(world, model, e);
    }
}

/// Runs query shape number `case`.
fn run_case(
    world: &mut World,
    model: &mut Model,
    states: &mut States,
    case: usize,
    mode: Path,
    cached: bool,
) {
    let f = match case {
        0 => run::<Q0>,
        1 => run::<Q1>,
        2 => run::<Q2>,
        3 => run::<Q3>,
        4 => run::<Q4>,
        5 => run::<Q5>,
        6 => run::<Q6>,
        7 => run::<Q7>,
        8 => run::<Q8>,
        9 => run::<Q9>,
        10 => run::<Q10>,
        11 => run::<Q11>,
        12 => run::<Q12>,
        _ => unreachable!("no query case {case}"),
    };
    f(world, model, states, mode, cached);
}

// ----- operations ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    /// `spawn(())`, then `insert_one` per type in `mask` (ascending, or descending if `rev`).
    Spawn {
        mask: u16,
        rev: bool,
        seed: u64,
    },
    /// `spawn_batch` of one of two fixed bundles.
    SpawnBatch {
        kind: bool,
        n: usize,
        seed: u64,
    },
    Despawn {
        who: usize,
    },
    /// Adds or overwrites one component.
    Insert {
        who: usize,
        ty: usize,
        val: u64,
    },
    /// Removes one component (a no-op error if absent).
    Remove {
        who: usize,
        ty: usize,
    },
    Query {
        case: usize,
        mode: Path,
        cached: bool,
    },
}

/// Subsets that come up often, so that some archetypes fill several chunks.
const POPULAR: [u16; 6] = [
    0b0_0000_0011,
    0b0_0110_0100,
    0b1_1111_1111,
    0,
    0b1_1010_0000,
    0b0_0001_1100,
];

fn op(max_batch: usize, modes: &'static [Path]) -> impl Strategy<Value = Op> {
    let mask = prop_oneof![
        3 => prop::sample::select(&POPULAR[..]),
        2 => 0u16..(1 << TYPES),
    ];
    prop_oneof![
        6 => (mask, any::<bool>(), any::<u64>())
            .prop_map(|(mask, rev, seed)| Op::Spawn { mask, rev, seed }),
        1 => (any::<bool>(), 0..=max_batch, any::<u64>())
            .prop_map(|(kind, n, seed)| Op::SpawnBatch { kind, n, seed }),
        2 => any::<usize>().prop_map(|who| Op::Despawn { who }),
        2 => (any::<usize>(), 0..TYPES, any::<u64>())
            .prop_map(|(who, ty, val)| Op::Insert { who, ty, val }),
        1 => (any::<usize>(), 0..TYPES).prop_map(|(who, ty)| Op::Remove { who, ty }),
        3 => (0..CASES, prop::sample::select(modes), any::<bool>())
            .prop_map(|(case, mode, cached)| Op::Query { case, mode, cached }),
    ]
}

fn apply(world: &mut World, model: &mut Model, states: &mut States, op: &Op) {
    match *op {
        Op::Spawn { mask, rev, seed } => {
            let e = world.spawn(());
            let mut row = Row::default();
            let mut types: Vec<usize> = (0..TYPES).filter(|t| mask & (1 << t) != 0).collect();
            if rev {
                types.reverse();
            }
            for ty in types {
                let val = value(seed, ty);
                row[ty] = Some(with_type(
                    ty,
                    Put {
                        world,
                        entity: e,
                        val,
                    },
                ));
            }
            model.add(e, row);
            check_entity(world, model, e);
        }
        Op::SpawnBatch { kind, n, seed } => {
            let vals = |i: usize, ty: usize| value(seed.wrapping_add(i as u64), ty);
            let ids: Vec<Entity> = if kind {
                world
                    .spawn_batch(
                        (0..n)
                            .map(|i| (A::new(vals(i, 0)), B::new(vals(i, 1)), G::new(vals(i, 6)))),
                    )
                    .collect()
            } else {
                world
                    .spawn_batch((0..n).map(|i| {
                        let c = C::new(vals(i, 2));
                        (
                            c,
                            D::new(vals(i, 3)),
                            F,
                            H::new(vals(i, 7)),
                            I::new(vals(i, 8)),
                        )
                    }))
                    .collect()
            };
            assert_eq!(ids.len(), n);
            let types: &[usize] = if kind { &[0, 1, 6] } else { &[2, 3, 5, 7, 8] };
            for (i, e) in ids.into_iter().enumerate() {
                let mut row = Row::default();
                for &ty in types {
                    row[ty] = Some(with_type(ty, Norm(vals(i, ty))));
                }
                model.add(e, row);
                check_entity(world, model, e);
            }
        }
        Op::Despawn { who } => {
            if let Some(e) = model.pick(who) {
                world.despawn(e).unwrap();
                model.rows.remove(&e);
                model.alive.retain(|&x| x != e);
                model.dead.push(e);
                assert!(world.despawn(e).is_err(), "despawned twice");
            }
        }
        Op::Insert { who, ty, val } => {
            if let Some(entity) = model.pick(who) {
                let stored = with_type(ty, Put { world, entity, val });
                model.rows.get_mut(&entity).unwrap()[ty] = Some(stored);
                check_entity(world, model, entity);
            }
        }
        Op::Remove { who, ty } => {
            if let Some(entity) = model.pick(who) {
                let got = with_type(ty, Take { world, entity });
                let want = model.rows.get_mut(&entity).unwrap()[ty].take();
                assert_eq!(got, want, "removed component {ty} of {entity:?}");
                check_entity(world, model, entity);
            }
        }
        // `run` checks the entities it matched.
        Op::Query { case, mode, cached } => run_case(world, model, states, case, mode, cached),
    }
    // Structural changes move other entities' rows too: the walker checks every row's
    // bookkeeping; queries check the values they see, and the end of the case checks them all.
    // Under Miri, which is here for undefined behaviour (the logic is checked by the native
    // cases), the walk over every archetype runs once, in the final `check_world`.
    if !cfg!(miri) {
        world.check_invariants();
    }
    assert_eq!(world.len() as usize, model.rows.len());
}

// ----- the property -------------------------------------------------------------------------

/// Operations per case and entities per batch: small under Miri, which interprets every step.
const MAX_OPS: usize = if cfg!(miri) { 24 } else { 300 };
const MAX_BATCH: usize = if cfg!(miri) { 6 } else { 40 };

/// Mostly 512-byte chunks (a handful of rows each, so many chunks per archetype); sometimes
/// 4 KiB, so that small-row chunks outgrow one `par_for_each` task (at least 32 rows) and get
/// split into row ranges; sometimes a chunk size per archetype (`MIXED`, `HOT_FIRST`).
fn chunk_size() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(512), 1 => Just(4096), 1 => Just(MIXED), 1 => Just(HOT_FIRST)]
}

/// `chunk_size()` value for a world whose archetypes size their own chunks: `MinRows(200)`
/// (4 KiB for narrow rows, 8 KiB for wide ones), 16 KiB for `(A, B)` by override, and the
/// padding-minimising column order.
const MIXED: usize = 0;
/// `chunk_size()` value for 4 KiB chunks with `C` and `B` placed first.
const HOT_FIRST: usize = 1;

/// The world a `chunk_size()` value stands for.
fn world_for(chunk_size: usize) -> World {
    match chunk_size {
        MIXED => worlds::mixed::<(A, B)>(200, 16 * 1024),
        HOT_FIRST => worlds::hot_first::<C, B>(4096),
        bytes => World::with_test_chunk_size(bytes),
    }
}

/// In a world of `chunk_size`-byte chunks, applies `ops`, then runs every query shape once, in
/// one of `modes` picked by `sweep`.
fn check_ops(chunk_size: usize, ops: &[Op], sweep: u64, modes: &[Path]) {
    let mut world = world_for(chunk_size);
    let mut model = Model::default();
    let mut states = States::new();
    for op in ops {
        apply(&mut world, &mut model, &mut states, op);
    }
    for case in 0..CASES {
        let k = (sweep as usize).wrapping_add(case);
        let mode = modes[k % modes.len()];
        run_case(&mut world, &mut model, &mut states, case, mode, k % 2 == 0);
    }
    check_world(&world, &model);
}

proptest! {
    #![proptest_config(strategy::config(256, 2))]

    /// Every query shape, through `iter`, `for_each`, `for_each_chunk` and `get`, visits exactly
    /// the entities and values the model predicts, and its writes land where the model says.
    #[test]
    fn queries_agree_with_the_model(
        ops in prop::collection::vec(op(MAX_BATCH, &SEQ_MODES), 0..MAX_OPS),
        sweep in any::<u64>(),
        chunk_size in chunk_size(),
    ) {
        check_ops(chunk_size, &ops, sweep, &SEQ_MODES);
    }

    /// The same through `par_for_each`: its own test, named `par_` so that Miri can run it with
    /// the flags rayon needs (see `ecs_test_support::pool`).
    #[test]
    fn par_for_each_agrees_with_the_model(
        ops in prop::collection::vec(op(MAX_BATCH, &[Path::ParForEach]), 0..MAX_OPS),
        sweep in any::<u64>(),
        chunk_size in chunk_size(),
    ) {
        check_ops(chunk_size, &ops, sweep, &[Path::ParForEach]);
    }
}
