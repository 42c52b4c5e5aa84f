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

mod kinds;

use std::any::type_name;
use std::collections::{BTreeMap, BTreeSet};

use ecs_core::{ChunkPolicy, ColumnOrder, ComponentError, Entity, EntityError, World};
use proptest::prelude::*;
use proptest::sample::{select, subsequence};

use kinds::{
    ledger, with_bundle2, with_bundle3, with_kind, Aligned, BundleOp, Kib, Kind, KindOp, Ledger,
    ModelBundle, Name, Num, Tracked, Zst, KIB, KINDS, TRACKED,
};

// ----- operations -----------------------------------------------------------------------------

/// How to choose an entity handle.
#[derive(Clone, Copy, Debug)]
enum Pick {
    /// The `n`-th live entity of the model (modulo), or a pool handle when none is live.
    Live(usize),
    /// The `n`-th handle ever seen (modulo): often stale, sometimes never issued.
    Any(usize),
}

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
            Self::Mixed => {
                let mut world = World::with_chunk_policy(ChunkPolicy::MinRows(8)).unwrap();
                world.set_chunk_size_for::<(Num, Name)>(64 * 1024).unwrap();
                world.set_column_order(ColumnOrder::MinPadding);
                world
            }
            Self::HotFirst => {
                let mut world = World::with_chunk_size(4096).unwrap();
                let hot = vec![
                    world.register_component::<Aligned>(),
                    world.register_component::<Name>(),
                ];
                world.set_column_order(ColumnOrder::First(hot));
                world
            }
        }
    }

    fn kinds(self) -> Vec<usize> {
        match self {
            Self::Tiny => (0..KINDS).filter(|&k| k != KIB).collect(),
            Self::Small | Self::Default | Self::Mixed | Self::HotFirst => (0..KINDS).collect(),
        }
    }
}

/// One row of the model: the encoded value of each kind the entity has.
type Row = [Option<u64>; KINDS];

/// The world under test and the model it is compared with.
struct Harness {
    world: World,
    kind: WorldKind,
    model: BTreeMap<Entity, Row>,
    /// Every handle seen so far, live or stale, plus two never issued.
    pool: Vec<Entity>,
    /// Every handle the world has handed out.
    issued: BTreeSet<Entity>,
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
            model: BTreeMap::new(),
            pool: vec![never_issued, future],
            issued: BTreeSet::new(),
            pending: Vec::new(),
        }
    }

    /// The model side of a flush: pending reservations become live, empty entities.
    fn flush_model(&mut self) {
        for e in std::mem::take(&mut self.pending) {
            assert!(
                self.model.insert(e, Row::default()).is_none(),
                "{e:?} reserved while live"
            );
        }
    }

    fn pick(&self, pick: Pick) -> Entity {
        match pick {
            Pick::Live(n) if !self.model.is_empty() => *self
                .model
                .keys()
                .nth(n % self.model.len())
                .expect("in range"),
            Pick::Live(n) | Pick::Any(n) => self.pool[n % self.pool.len()],
        }
    }

    /// Records a handle the world just handed out (spawned or reserved).
    fn issue(&mut self, entity: Entity) {
        assert!(
            self.issued.insert(entity),
            "{entity:?} handed out a second time"
        );
        self.pool.push(entity);
    }

    /// Records an entity the world just created with `kinds` set to `values`.
    fn born(&mut self, entity: Entity, kinds: &[usize], values: &[u64]) {
        self.issue(entity);
        let mut row = Row::default();
        for (&k, &v) in kinds.iter().zip(values) {
            row[k] = Some(v);
        }
        assert!(
            self.model.insert(entity, row).is_none(),
            "{entity:?} already live"
        );
    }

    /// What `get::<A>(entity)` should return, encoded.
    fn expect_get<A: Kind>(&self, entity: Entity) -> Result<u64, ComponentError> {
        match self.model.get(&entity) {
            None => Err(ComponentError::NoSuchEntity(entity)),
            Some(row) => row[A::INDEX].ok_or(ComponentError::MissingComponent {
                entity,
                component: type_name::<A>(),
            }),
        }
    }

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
            Op::Spawn { kinds, seed } => with_bundle3(kinds, SpawnOp(self, *seed)),
            Op::SpawnAll { seed } => match self.kind {
                WorldKind::Tiny => SpawnOp(self, *seed).run::<(Name, Aligned, Num, Tracked, Zst)>(),
                _ => SpawnOp(self, *seed).run::<(Name, Kib, Aligned, Num, Tracked, Zst)>(),
            },
            Op::SpawnBatch { kinds, count, seed } => {
                with_bundle2(kinds, SpawnBatchOp(self, *count, *seed));
            }
            Op::Reserve { count, flush } => {
                for _ in 0..*count {
                    let e = self.world.reserve_entity();
                    assert!(!self.world.contains(e), "{e:?} live before a flush");
                    self.issue(e);
                    self.pending.push(e);
                }
                if *flush {
                    self.world.flush();
                    self.flush_model();
                }
            }
            Op::Despawn(target) => {
                let e = self.pick(*target);
                let expected = match self.model.remove(&e) {
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
                let e = self.pick(*target);
                with_bundle2(kinds, InsertOp(self, e, *seed));
            }
            Op::InsertOne { target, kind, seed } => {
                let e = self.pick(*target);
                with_kind(*kind, InsertOneOp(self, e, *seed));
            }
            Op::Remove { target, kinds } => {
                let e = self.pick(*target);
                with_bundle2(kinds, RemoveOp(self, e));
            }
            Op::Get { target, kind } => {
                let e = self.pick(*target);
                with_kind(*kind, CheckCell(self, e));
            }
            Op::GetMut { target, kind, seed } => {
                let e = self.pick(*target);
                with_kind(*kind, GetMutOp(self, e, *seed));
            }
            Op::Has { target, kind } => {
                let e = self.pick(*target);
                with_kind(*kind, CheckCell(self, e));
            }
            Op::Contains(target) => {
                let e = self.pick(*target);
                assert_eq!(self.world.contains(e), self.model.contains_key(&e), "{e:?}");
            }
            Op::Clear => {
                self.world.clear();
                self.model.clear();
                assert!(self.world.is_empty());
            }
        }
    }

    /// Compares the world's whole observable state with the model.
    fn check(&mut self) {
        self.world.check_invariants();
        assert_eq!(self.world.len() as usize, self.model.len(), "entity count");
        let entities: Vec<Entity> = self.model.keys().copied().collect();
        for e in entities {
            assert!(self.world.contains(e), "{e:?} lost");
            for kind in 0..KINDS {
                with_kind(kind, CheckCell(self, e));
            }
        }
        for &e in &self.pool {
            if !self.model.contains_key(&e) {
                assert!(!self.world.contains(e), "stale {e:?} resolves");
                assert_eq!(
                    self.world.get::<Num>(e),
                    Err(ComponentError::NoSuchEntity(e))
                );
                assert!(!self.world.has::<Zst>(e));
            }
        }
        let tracked_in_model = self.model.values().filter(|r| r[TRACKED].is_some()).count();
        ledger(|l| {
            assert_eq!(l.anomalies, Vec::<String>::new());
            assert_eq!(
                l.live.len(),
                tracked_in_model,
                "live tracked values vs model"
            );
        });
    }
}

struct SpawnOp<'a>(&'a mut Harness, u32);
impl BundleOp for SpawnOp<'_> {
    fn run<B: ModelBundle>(self) {
        let Self(h, seed) = self;
        let bundle = B::make(seed);
        let values = bundle.encode();
        let e = h.world.spawn(bundle);
        h.born(e, &B::kinds(), &values);
    }
}

struct SpawnBatchOp<'a>(&'a mut Harness, usize, u32);
impl BundleOp for SpawnBatchOp<'_> {
    fn run<B: ModelBundle>(self) {
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
            h.born(e, &B::kinds(), v);
        }
    }
}

struct InsertOp<'a>(&'a mut Harness, Entity, u32);
impl BundleOp for InsertOp<'_> {
    fn run<B: ModelBundle>(self) {
        let Self(h, e, seed) = self;
        let bundle = B::make(seed);
        let values = bundle.encode();
        let result = h.world.insert(e, bundle);
        match h.model.get_mut(&e) {
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
impl KindOp for InsertOneOp<'_> {
    fn run<A: Kind>(self) {
        let Self(h, e, seed) = self;
        let value = A::make(seed);
        let encoded = value.encode();
        let result = h.world.insert_one(e, value);
        match h.model.get_mut(&e) {
            Some(row) => {
                assert_eq!(result, Ok(()), "insert_one into {e:?}");
                row[A::INDEX] = Some(encoded);
            }
            None => assert_eq!(result, Err(EntityError::NoSuchEntity(e))),
        }
    }
}

struct RemoveOp<'a>(&'a mut Harness, Entity);
impl BundleOp for RemoveOp<'_> {
    fn run<B: ModelBundle>(self) {
        let Self(h, e) = self;
        let kinds = B::kinds();
        let expected = match h.model.get(&e) {
            None => Err(ComponentError::NoSuchEntity(e)),
            Some(row) => match kinds.iter().position(|&k| row[k].is_none()) {
                Some(i) => Err(ComponentError::MissingComponent {
                    entity: e,
                    component: B::names()[i],
                }),
                None => Ok(kinds.iter().map(|&k| row[k].expect("present")).collect()),
            },
        };
        let got = h.world.remove::<B>(e);
        // Encode, then drop the removed values here: the ledger sees them go.
        let got = got.map(|values| values.encode());
        assert_eq!(got, expected, "remove {:?} from {e:?}", B::names());
        if got.is_ok() {
            let row = h.model.get_mut(&e).expect("live");
            for k in kinds {
                row[k] = None;
            }
        }
    }
}

/// Checks `get::<A>` and `has::<A>` of one entity against the model.
struct CheckCell<'a>(&'a mut Harness, Entity);
impl KindOp for CheckCell<'_> {
    fn run<A: Kind>(self) {
        let Self(h, e) = self;
        let expected = h.expect_get::<A>(e);
        assert_eq!(
            h.world.get::<A>(e).map(A::encode),
            expected,
            "get::<{}>({e:?})",
            type_name::<A>()
        );
        assert_eq!(h.world.has::<A>(e), expected.is_ok(), "has {e:?}");
    }
}

struct GetMutOp<'a>(&'a mut Harness, Entity, u32);
impl KindOp for GetMutOp<'_> {
    fn run<A: Kind>(self) {
        let Self(h, e, seed) = self;
        let expected = h.expect_get::<A>(e).map(|old| A::mutated(old, seed));
        let got = h.world.get_mut::<A>(e).map(|value| {
            value.mutate(seed);
            value.encode()
        });
        assert_eq!(got, expected, "get_mut::<{}>({e:?})", type_name::<A>());
        if let Ok(v) = got {
            h.model.get_mut(&e).expect("live")[A::INDEX] = Some(v);
        }
    }
}

// ----- strategies -----------------------------------------------------------------------------

const MAX_OPS: usize = if cfg!(miri) { 24 } else { 120 };
const MAX_BATCH: usize = if cfg!(miri) { 10 } else { 40 };

fn pick() -> impl Strategy<Value = Pick> {
    prop_oneof![
        3 => any::<usize>().prop_map(Pick::Live),
        1 => any::<usize>().prop_map(Pick::Any),
    ]
}

/// Distinct kinds from `avail`, in random order.
fn kinds(
    avail: &[usize],
    len: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = Vec<usize>> {
    subsequence(avail.to_vec(), len).prop_shuffle()
}

fn op(avail: Vec<usize>) -> impl Strategy<Value = Op> {
    let kind = select(avail.clone());
    prop_oneof![
        4 => (kinds(&avail, 0..=3), any::<u32>()).prop_map(|(kinds, seed)| Op::Spawn { kinds, seed }),
        1 => any::<u32>().prop_map(|seed| Op::SpawnAll { seed }),
        2 => (kinds(&avail, 0..=2), 0..=MAX_BATCH, any::<u32>())
            .prop_map(|(kinds, count, seed)| Op::SpawnBatch { kinds, count, seed }),
        1 => (1..=3usize, any::<bool>()).prop_map(|(count, flush)| Op::Reserve { count, flush }),
        3 => pick().prop_map(Op::Despawn),
        4 => (pick(), kinds(&avail, 1..=2), any::<u32>())
            .prop_map(|(target, kinds, seed)| Op::Insert { target, kinds, seed }),
        2 => (pick(), kind.clone(), any::<u32>())
            .prop_map(|(target, kind, seed)| Op::InsertOne { target, kind, seed }),
        4 => (pick(), kinds(&avail, 1..=2)).prop_map(|(target, kinds)| Op::Remove { target, kinds }),
        2 => (pick(), kind.clone()).prop_map(|(target, kind)| Op::Get { target, kind }),
        2 => (pick(), kind.clone(), any::<u32>())
            .prop_map(|(target, kind, seed)| Op::GetMut { target, kind, seed }),
        1 => (pick(), kind).prop_map(|(target, kind)| Op::Has { target, kind }),
        1 => pick().prop_map(Op::Contains),
        1 => Just(Op::Clear),
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

fn config() -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: if cfg!(miri) { 4 } else { 256 },
        // Miri's isolation forbids the regression file (and forking is off by default).
        failure_persistence: if cfg!(miri) {
            None
        } else {
            default.failure_persistence.clone()
        },
        ..default
    }
}

/// Runs one case: every op against the model, then the world's drop against the ledger.
fn run_case(world: WorldKind, ops: &[Op]) {
    ledger(|l| *l = Ledger::default());
    let mut h = Harness::new(world);
    h.check();
    for op in ops {
        h.apply(op);
        h.check();
    }
    drop(h);
    ledger(|l| {
        assert_eq!(l.anomalies, Vec::<String>::new());
        assert!(l.live.is_empty(), "leaked tracked values: {:?}", l.live);
        assert_eq!(l.created, l.dropped.len() as u64, "created vs dropped");
    });
}

proptest! {
    #![proptest_config(config())]

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
