//! Model-based property test of the `World` against a naive `BTreeMap<Entity, Row>`.
//!
//! Each case builds a world (512-byte, 2 KiB or default 16 KiB chunks, so that small cases still
//! cross many chunk boundaries), then runs a random sequence of spawns, batch spawns,
//! reservations, despawns, inserts, removes, reads, writes and clears on both the world and the
//! model. Every result (the `Ok`/`Err` variant, and every value handed back) must be what the
//! model predicts. After every step the world checks its own invariants and its whole
//! observable state is compared with the model, stale handles included.
//!
//! One component type, [`Tracked`], gives each value a unique id and reports creations and
//! drops to a thread-local ledger: a value dropped twice, or one never dropped once the world
//! is gone, fails the case.
//!
//! Under Miri the case count and sequence lengths shrink (`cfg!(miri)`); `PROPTEST_CASES`
//! still overrides the case count when set, because the `proptest!` macro passes the config
//! through `contextualize_config`.

use ecs_core::{ComponentError, Entity, EntityError, World};
use ecs_test_support::strategy::{self, kind_set};
use ecs_test_support::worlds;
use ecs_test_support::{
    run_case as run_steps, with_bundle_of, with_kind, Aligned, BundleFn, Kib, Kind, KindFn, Model,
    ModelBundle, Name, Num, Pick, Steps, Summary, Tracked, Zst, KIB,
};
use proptest::prelude::*;
use proptest::sample::select;

/// The kinds this model uses: all the shared ones but `Wide`.
const CORE_KINDS: [usize; 6] = [0, 1, 2, 3, 4, 5];

// ----- operations -----------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Spawn {
        kinds: Vec<usize>,
        seed: u32,
    },
    SpawnAll {
        seed: u32,
    },
    SpawnBatch {
        kinds: Vec<usize>,
        count: usize,
        seed: u32,
    },
    /// Reserve ids; flush now, or leave them for the next structural change to flush.
    Reserve {
        count: usize,
        flush: bool,
    },
    Despawn(Pick),
    Insert {
        target: Pick,
        kinds: Vec<usize>,
        seed: u32,
    },
    InsertOne {
        target: Pick,
        kind: usize,
        seed: u32,
    },
    Remove {
        target: Pick,
        kinds: Vec<usize>,
    },
    Get {
        target: Pick,
        kind: usize,
    },
    GetMut {
        target: Pick,
        kind: usize,
        seed: u32,
    },
    Has {
        target: Pick,
        kind: usize,
    },
    Contains(Pick),
    Clear,
    /// `World::compact`: frees spare chunks and moves chunk blocks; nothing observable changes.
    Compact,
}

/// The world a case runs on.
#[derive(Clone, Copy, Debug)]
enum WorldKind {
    /// 512-byte chunks: `Kib` does not fit, so it is left out.
    Tiny,
    /// 2 KiB chunks: one row per chunk once `Kib` joins the bigger types.
    Small,
    /// `World::new()`, 16 KiB chunks.
    Default,
    /// Chunk size per archetype: `MinRows(8)` (4 KiB for small rows, 16 KiB with `Kib`), 64 KiB
    /// for `(Num, Name)` by override, and the padding-minimising column order; rows move
    /// between archetypes of different chunk sizes and column placements.
    Mixed,
    /// 4 KiB chunks with `Aligned` and `Name` placed first (`ColumnOrder::First`).
    HotFirst,
}

impl WorldKind {
    fn build(self) -> World {
        match self {
            Self::Tiny => World::with_test_chunk_size(512),
            Self::Small => World::with_test_chunk_size(2048),
            Self::Default => World::new(),
            Self::Mixed => worlds::mixed::<(Num, Name)>(8, 64 * 1024),
            Self::HotFirst => worlds::hot_first::<Aligned, Name>(4096),
        }
    }

    fn kinds(self) -> Vec<usize> {
        match self {
            Self::Tiny => CORE_KINDS.into_iter().filter(|&k| k != KIB).collect(),
            Self::Small | Self::Default | Self::Mixed | Self::HotFirst => CORE_KINDS.to_vec(),
        }
    }
}

/// The world under test and the model it is compared with.
struct Harness {
    world: World,
    kind: WorldKind,
    /// Rows hold `Kind::encode`, so `Tracked` values are told apart by id.
    model: Model,
    /// Reserved ids not yet flushed: not live, and live empty entities after the next flush.
    pending: Vec<Entity>,
}

impl Harness {
    fn new(kind: WorldKind) -> Self {
        let never_issued = Entity::from_bits(3 << 32 | 0xffff_ff00).expect("non-zero generation");
        // Slot 0 at generation 7: stale-looking at first, live if slot 0 gets reused six times.
        let future = Entity::from_bits(7 << 32).expect("non-zero generation");
        Self {
            world: kind.build(),
            kind,
            model: Model::new(Summary::Encode, vec![never_issued, future]),
            pending: Vec::new(),
        }
    }

    /// Reserved ids become live, empty entities.
    fn flush_model(&mut self) {
        for e in std::mem::take(&mut self.pending) {
            self.model.live(e, Default::default());
        }
    }
}

impl Steps for Harness {
    type Op = Op;

    fn apply(&mut self, op: &Op) {
        let structural = !matches!(
            op,
            Op::Reserve { .. }
                | Op::Get { .. }
                | Op::GetMut { .. }
                | Op::Has { .. }
                | Op::Contains(_)
        );
        if structural {
            // Every structural change flushes pending reservations first, even one that fails.
            self.flush_model();
        }
        match op {
            Op::Spawn { kinds, seed } => with_bundle_of(kinds, SpawnOp(self, *seed)),
            Op::SpawnAll { seed } => match self.kind {
                WorldKind::Tiny => {
                    SpawnOp(self, *seed).call::<(Name, Aligned, Num, Tracked, Zst)>()
                }
                _ => SpawnOp(self, *seed).call::<(Name, Kib, Aligned, Num, Tracked, Zst)>(),
            },
            Op::SpawnBatch { kinds, count, seed } => {
                with_bundle_of(kinds, SpawnBatchOp(self, *count, *seed));
            }
            Op::Reserve { count, flush } => {
                for _ in 0..*count {
                    let e = self.world.reserve_entity();
                    assert!(!self.world.contains(e), "{e:?} live before a flush");
                    self.model.issue(e);
                    self.pending.push(e);
                }
                if *flush {
                    self.world.flush();
                    self.flush_model();
                }
            }
            Op::Despawn(target) => {
                let e = self.model.pick(*target);
                let expected = match self.model.rows.remove(&e) {
                    Some(_) => Ok(()),
                    None => Err(EntityError::NoSuchEntity(e)),
                };
                assert_eq!(self.world.despawn(e), expected, "despawn {e:?}");
            }
            Op::Insert {
                target,
                kinds,
                seed,
            } => {
                let e = self.model.pick(*target);
                with_bundle_of(kinds, InsertOp(self, e, *seed));
            }
            Op::InsertOne { target, kind, seed } => {
                let e = self.model.pick(*target);
                with_kind(*kind, InsertOneOp(self, e, *seed));
            }
            Op::Remove { target, kinds } => {
                let e = self.model.pick(*target);
                with_bundle_of(kinds, RemoveOp(self, e));
            }
            Op::Get { target, kind } | Op::Has { target, kind } => {
                let e = self.model.pick(*target);
                self.model.check_cell(&self.world, e, *kind);
            }
            Op::GetMut { target, kind, seed } => {
                let e = self.model.pick(*target);
                with_kind(*kind, GetMutOp(self, e, *seed));
            }
            Op::Contains(target) => {
                let e = self.model.pick(*target);
                assert_eq!(
                    self.world.contains(e),
                    self.model.rows.contains_key(&e),
                    "{e:?}"
                );
            }
            Op::Clear => {
                self.world.clear();
                self.model.rows.clear();
                assert!(self.world.is_empty());
            }
            Op::Compact => {
                let report = self.world.compact();
                assert_eq!(report.chunks_after, self.world.chunk_pool().stats().chunks);
                assert_eq!(report.blocks_after, self.world.chunk_pool().stats().blocks);
            }
        }
    }

    /// Compares the world's whole observable state with the model, stale handles included.
    fn check(&mut self) {
        self.model.check_world(&self.world, &CORE_KINDS);
    }
}

struct SpawnOp<'a>(&'a mut Harness, u32);
impl BundleFn for SpawnOp<'_> {
    type Out = ();
    fn call<B: ModelBundle>(self) {
        let Self(h, seed) = self;
        let bundle = B::make(seed);
        let values = bundle.encode();
        let e = h.world.spawn(bundle);
        h.model.born(e, Model::row_of(&B::kinds(), &values));
    }
}

struct SpawnBatchOp<'a>(&'a mut Harness, usize, u32);
impl BundleFn for SpawnBatchOp<'_> {
    type Out = ();
    fn call<B: ModelBundle>(self) {
        let Self(h, count, seed) = self;
        let mut values = Vec::with_capacity(count);
        let ids: Vec<Entity> = h
            .world
            .spawn_batch((0..count as u32).map(|i| {
                let bundle = B::make(seed.wrapping_add(i.wrapping_mul(7919)));
                values.push(bundle.encode());
                bundle
            }))
            .collect();
        assert_eq!(ids.len(), count, "spawn_batch id count");
        for (e, v) in ids.into_iter().zip(&values) {
            h.model.born(e, Model::row_of(&B::kinds(), v));
        }
    }
}

struct InsertOp<'a>(&'a mut Harness, Entity, u32);
impl BundleFn for InsertOp<'_> {
    type Out = ();
    fn call<B: ModelBundle>(self) {
        let Self(h, e, seed) = self;
        let bundle = B::make(seed);
        let values = bundle.encode();
        let result = h.world.insert(e, bundle);
        match h.model.rows.get_mut(&e) {
            Some(row) => {
                assert_eq!(result, Ok(()), "insert into {e:?}");
                for (k, v) in B::kinds().into_iter().zip(values) {
                    row[k] = Some(v);
                }
            }
            None => assert_eq!(result, Err(EntityError::NoSuchEntity(e))),
        }
    }
}

struct InsertOneOp<'a>(&'a mut Harness, Entity, u32);
impl KindFn for InsertOneOp<'_> {
    type Out = ();
    fn call<A: Kind>(self) {
        let Self(h, e, seed) = self;
        let value = A::make(seed);
        let encoded = value.encode();
        let result = h.world.insert_one(e, value);
        match h.model.rows.get_mut(&e) {
            Some(row) => {
                assert_eq!(result, Ok(()), "insert_one into {e:?}");
                row[A::INDEX] = Some(encoded);
            }
            None => assert_eq!(result, Err(EntityError::NoSuchEntity(e))),
        }
    }
}

struct RemoveOp<'a>(&'a mut Harness, Entity);
impl BundleFn for RemoveOp<'_> {
    type Out = ();
    fn call<B: ModelBundle>(self) {
        let Self(h, e) = self;
        let kinds = B::kinds();
        let expected = h.model.expect_remove(e, &kinds);
        let got = h.world.remove::<B>(e);
        // Encode, then drop the removed values here: the ledger sees them go.
        let got: Result<Vec<u64>, ComponentError> = got.map(|values| values.encode());
        assert_eq!(got, expected, "remove {:?} from {e:?}", B::names());
        if got.is_ok() {
            let row = h.model.rows.get_mut(&e).expect("live");
            for k in kinds {
                row[k] = None;
            }
        }
    }
}

struct GetMutOp<'a>(&'a mut Harness, Entity, u32);
impl KindFn for GetMutOp<'_> {
    type Out = ();
    fn call<A: Kind>(self) {
        let Self(h, e, seed) = self;
        let expected = h
            .model
            .expect_get(e, A::INDEX)
            .map(|old| A::mutated(old, seed));
        let got = h.world.get_mut::<A>(e).map(|value| {
            value.mutate(seed);
            value.encode()
        });
        assert_eq!(
            got,
            expected,
            "get_mut::<{}>({e:?})",
            std::any::type_name::<A>()
        );
        if let Ok(v) = got {
            h.model.rows.get_mut(&e).expect("live")[A::INDEX] = Some(v);
        }
    }
}

// ----- strategies -----------------------------------------------------------------------------

const MAX_OPS: usize = if cfg!(miri) { 24 } else { 120 };
const MAX_BATCH: usize = if cfg!(miri) { 10 } else { 40 };

fn pick() -> impl Strategy<Value = Pick> {
    strategy::pick(3, 1)
}

fn op(avail: Vec<usize>) -> impl Strategy<Value = Op> {
    let kind = select(avail.clone());
    prop_oneof![
        4 => (kind_set(&avail, 0..=3), any::<u32>()).prop_map(|(kinds, seed)| Op::Spawn { kinds, seed }),
        1 => any::<u32>().prop_map(|seed| Op::SpawnAll { seed }),
        2 => (kind_set(&avail, 0..=2), 0..=MAX_BATCH, any::<u32>())
            .prop_map(|(kinds, count, seed)| Op::SpawnBatch { kinds, count, seed }),
        1 => (1..=3usize, any::<bool>()).prop_map(|(count, flush)| Op::Reserve { count, flush }),
        3 => pick().prop_map(Op::Despawn),
        4 => (pick(), kind_set(&avail, 1..=2), any::<u32>())
            .prop_map(|(target, kinds, seed)| Op::Insert { target, kinds, seed }),
        2 => (pick(), kind.clone(), any::<u32>())
            .prop_map(|(target, kind, seed)| Op::InsertOne { target, kind, seed }),
        4 => (pick(), kind_set(&avail, 1..=2)).prop_map(|(target, kinds)| Op::Remove { target, kinds }),
        2 => (pick(), kind.clone()).prop_map(|(target, kind)| Op::Get { target, kind }),
        2 => (pick(), kind.clone(), any::<u32>())
            .prop_map(|(target, kind, seed)| Op::GetMut { target, kind, seed }),
        1 => (pick(), kind).prop_map(|(target, kind)| Op::Has { target, kind }),
        1 => pick().prop_map(Op::Contains),
        1 => Just(Op::Clear),
        1 => Just(Op::Compact),
    ]
}

fn case() -> impl Strategy<Value = (WorldKind, Vec<Op>)> {
    prop_oneof![
        Just(WorldKind::Tiny),
        Just(WorldKind::Small),
        Just(WorldKind::Default),
        Just(WorldKind::Mixed),
        Just(WorldKind::HotFirst)
    ]
    .prop_flat_map(|world| {
        (
            Just(world),
            proptest::collection::vec(op(world.kinds()), 1..MAX_OPS),
        )
    })
}

/// Runs one case: every op against the model, then the world's drop against the ledger.
fn run_case(world: WorldKind, ops: &[Op]) {
    run_steps(|| Harness::new(world), ops);
}

proptest! {
    #![proptest_config(strategy::config(256, 2))]

    #[test]
    fn world_matches_model((world, ops) in case()) {
        run_case(world, &ops);
    }
}

// ----- fixed sequences that once failed -------------------------------------------------------

/// `clear` on an archetype whose columns need no drop must not keep stale rows in the chunk it
/// keeps for reuse.
#[test]
fn clear_then_spawn_into_drop_free_archetype() {
    let seq = [
        Op::SpawnBatch {
            kinds: vec![4],
            count: 5,
            seed: 10,
        },
        Op::Clear,
        Op::Spawn {
            kinds: vec![4],
            seed: 99,
        },
        Op::Spawn {
            kinds: vec![4, 1],
            seed: 7,
        },
        Op::Insert {
            target: Pick::Live(0),
            kinds: vec![1],
            seed: 3,
        },
    ];
    for world in [WorldKind::Tiny, WorldKind::Default] {
        run_case(world, &seq);
    }
}
