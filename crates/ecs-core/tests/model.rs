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

use std::any::type_name;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;

use ecs_core::{Bundle, Component, ComponentError, Entity, EntityError, World};
use proptest::prelude::*;
use proptest::sample::{select, subsequence};

// ----- the drop ledger ------------------------------------------------------------------------

/// Which `Tracked` values exist, per test thread.
#[derive(Default)]
struct Ledger {
    next_id: u64,
    created: u64,
    live: BTreeSet<u64>,
    dropped: BTreeSet<u64>,
    /// Double drops and drops of values never created; recorded rather than panicking in `Drop`.
    anomalies: Vec<String>,
}

thread_local! {
    static LEDGER: RefCell<Ledger> = RefCell::new(Ledger::default());
}

fn ledger<R>(f: impl FnOnce(&mut Ledger) -> R) -> R {
    LEDGER.with_borrow_mut(f)
}

// ----- component types ------------------------------------------------------------------------

/// A value with a unique id whose drop is recorded in the ledger.
#[derive(Debug)]
struct Tracked {
    id: u64,
    payload: u32,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let id = self.id;
        ledger(|l| {
            if !l.live.remove(&id) {
                l.anomalies
                    .push(format!("tracked value {id} dropped but not live"));
            }
            if !l.dropped.insert(id) {
                l.anomalies
                    .push(format!("tracked value {id} dropped twice"));
            }
        });
    }
}

/// Zero-sized.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Zst;

/// Over-aligned: its column must start on a 64-byte boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct Aligned(u64);

/// 1 KiB: a few rows per chunk at most.
#[derive(Clone)]
struct Kib([u8; 1024]);

/// A plain small value.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Num(u32);

/// Owns a heap allocation, so moves that lose bytes or provenance show up.
#[derive(Debug, Clone, PartialEq)]
struct Name(String);

/// Number of component kinds in the model.
const KINDS: usize = 6;
const TRACKED: usize = 0;
const KIB: usize = 3;

/// A component type the model knows. Values are summarised as a `u64` that is a function of
/// the seed they were made from (and, for `Tracked`, of their unique id).
trait Kind: Component + Sized {
    /// Index into a model row.
    const INDEX: usize;
    fn make(seed: u32) -> Self;
    fn encode(&self) -> u64;
    fn mutate(&mut self, seed: u32);
    /// What `encode` gives after `mutate(seed)` on a value that encoded to `old`.
    fn mutated(old: u64, seed: u32) -> u64;
}

impl Kind for Tracked {
    const INDEX: usize = TRACKED;
    fn make(seed: u32) -> Self {
        let id = ledger(|l| {
            let id = l.next_id;
            l.next_id += 1;
            l.created += 1;
            l.live.insert(id);
            id
        });
        Self { id, payload: seed }
    }
    fn encode(&self) -> u64 {
        self.id << 32 | u64::from(self.payload)
    }
    fn mutate(&mut self, seed: u32) {
        self.payload = seed;
    }
    fn mutated(old: u64, seed: u32) -> u64 {
        old & !0xffff_ffff | u64::from(seed)
    }
}

impl Kind for Zst {
    const INDEX: usize = 1;
    fn make(_: u32) -> Self {
        Zst
    }
    fn encode(&self) -> u64 {
        0
    }
    fn mutate(&mut self, _: u32) {}
    fn mutated(_: u64, _: u32) -> u64 {
        0
    }
}

impl Kind for Aligned {
    const INDEX: usize = 2;
    fn make(seed: u32) -> Self {
        Self(u64::from(seed))
    }
    fn encode(&self) -> u64 {
        assert_eq!(self as *const Self as usize % 64, 0, "misaligned `Aligned`");
        self.0
    }
    fn mutate(&mut self, seed: u32) {
        self.0 = u64::from(seed);
    }
    fn mutated(_: u64, seed: u32) -> u64 {
        u64::from(seed)
    }
}

impl Kib {
    fn pattern(seed: u32) -> [u8; 1024] {
        let mut bytes = [0u8; 1024];
        bytes[..4].copy_from_slice(&seed.to_le_bytes());
        for (i, b) in bytes.iter_mut().enumerate().skip(4) {
            *b = (seed as u8) ^ (i as u8) ^ (i >> 8) as u8;
        }
        bytes
    }
}

impl Kind for Kib {
    const INDEX: usize = KIB;
    fn make(seed: u32) -> Self {
        Self(Self::pattern(seed))
    }
    fn encode(&self) -> u64 {
        let seed = u32::from_le_bytes(self.0[..4].try_into().expect("four bytes"));
        // A torn or partly copied value fails the comparison with the model.
        if self.0 == Self::pattern(seed) {
            u64::from(seed)
        } else {
            u64::MAX
        }
    }
    fn mutate(&mut self, seed: u32) {
        self.0 = Self::pattern(seed);
    }
    fn mutated(_: u64, seed: u32) -> u64 {
        u64::from(seed)
    }
}

impl Kind for Num {
    const INDEX: usize = 4;
    fn make(seed: u32) -> Self {
        Self(seed)
    }
    fn encode(&self) -> u64 {
        u64::from(self.0)
    }
    fn mutate(&mut self, seed: u32) {
        self.0 = seed;
    }
    fn mutated(_: u64, seed: u32) -> u64 {
        u64::from(seed)
    }
}

impl Kind for Name {
    const INDEX: usize = 5;
    fn make(seed: u32) -> Self {
        Self(format!("name-{seed}"))
    }
    fn encode(&self) -> u64 {
        self.0
            .strip_prefix("name-")
            .and_then(|s| s.parse().ok())
            .unwrap_or(u64::MAX)
    }
    fn mutate(&mut self, seed: u32) {
        // Replacing the string frees the old allocation and makes a new one.
        self.0 = format!("name-{seed}");
    }
    fn mutated(_: u64, seed: u32) -> u64 {
        u64::from(seed)
    }
}

// ----- bundles of model kinds -----------------------------------------------------------------

/// A tuple of [`Kind`]s.
trait ModelBundle: Bundle {
    fn kinds() -> Vec<usize>;
    fn names() -> Vec<&'static str>;
    fn make(seed: u32) -> Self;
    fn encode(&self) -> Vec<u64>;
}

impl ModelBundle for () {
    fn kinds() -> Vec<usize> {
        Vec::new()
    }
    fn names() -> Vec<&'static str> {
        Vec::new()
    }
    fn make(_: u32) -> Self {}
    fn encode(&self) -> Vec<u64> {
        Vec::new()
    }
}

macro_rules! model_bundle {
    ($($T:ident $i:tt),*) => {
        impl<$($T: Kind),*> ModelBundle for ($($T,)*) {
            fn kinds() -> Vec<usize> {
                vec![$($T::INDEX),*]
            }
            fn names() -> Vec<&'static str> {
                vec![$(type_name::<$T>()),*]
            }
            fn make(seed: u32) -> Self {
                ($($T::make(seed.wrapping_add($i * 1000)),)*)
            }
            fn encode(&self) -> Vec<u64> {
                vec![$(self.$i.encode()),*]
            }
        }
    };
}

model_bundle!(A 0);
model_bundle!(A 0, B 1);
model_bundle!(A 0, B 1, C 2);
model_bundle!(A 0, B 1, C 2, D 3, E 4);
model_bundle!(A 0, B 1, C 2, D 3, E 4, F 5);

// ----- from runtime kind indices to static types ----------------------------------------------

/// Something to run with one component type chosen at run time.
trait KindOp {
    fn run<A: Kind>(self);
}

/// Something to run with a bundle type chosen at run time.
trait BundleOp {
    fn run<B: ModelBundle>(self);
}

fn with_kind<V: KindOp>(kind: usize, op: V) {
    match kind {
        0 => op.run::<Tracked>(),
        1 => op.run::<Zst>(),
        2 => op.run::<Aligned>(),
        3 => op.run::<Kib>(),
        4 => op.run::<Num>(),
        5 => op.run::<Name>(),
        _ => unreachable!("kind {kind}"),
    }
}

/// Runs `op` with the bundle of `kinds` (at most two).
fn with_bundle2<V: BundleOp>(kinds: &[usize], op: V) {
    match *kinds {
        [] => op.run::<()>(),
        [a] => with_kind(a, One(op)),
        [a, b] => with_kind(a, Two(b, op)),
        _ => unreachable!("{kinds:?}"),
    }
}

/// Runs `op` with the bundle of `kinds` (at most three).
fn with_bundle3<V: BundleOp>(kinds: &[usize], op: V) {
    match *kinds {
        [a, b, c] => with_kind(a, Three(b, c, op)),
        _ => with_bundle2(kinds, op),
    }
}

struct One<V>(V);
impl<V: BundleOp> KindOp for One<V> {
    fn run<A: Kind>(self) {
        self.0.run::<(A,)>();
    }
}

struct Two<V>(usize, V);
impl<V: BundleOp> KindOp for Two<V> {
    fn run<A: Kind>(self) {
        with_kind(self.0, TwoB::<A, V>(self.1, PhantomData));
    }
}

struct TwoB<A, V>(V, PhantomData<A>);
impl<A: Kind, V: BundleOp> KindOp for TwoB<A, V> {
    fn run<B: Kind>(self) {
        self.0.run::<(A, B)>();
    }
}

struct Three<V>(usize, usize, V);
impl<V: BundleOp> KindOp for Three<V> {
    fn run<A: Kind>(self) {
        with_kind(self.0, ThreeB::<A, V>(self.1, self.2, PhantomData));
    }
}

struct ThreeB<A, V>(usize, V, PhantomData<A>);
impl<A: Kind, V: BundleOp> KindOp for ThreeB<A, V> {
    fn run<B: Kind>(self) {
        with_kind(self.0, ThreeC::<A, B, V>(self.1, PhantomData));
    }
}

struct ThreeC<A, B, V>(V, PhantomData<(A, B)>);
impl<A: Kind, B: Kind, V: BundleOp> KindOp for ThreeC<A, B, V> {
    fn run<C: Kind>(self) {
        self.0.run::<(A, B, C)>();
    }
}

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
}

impl WorldKind {
    fn build(self) -> World {
        match self {
            Self::Tiny => World::with_test_chunk_size(512),
            Self::Small => World::with_test_chunk_size(2048),
            Self::Default => World::new(),
        }
    }

    fn kinds(self) -> Vec<usize> {
        match self {
            Self::Tiny => (0..KINDS).filter(|&k| k != KIB).collect(),
            Self::Small | Self::Default => (0..KINDS).collect(),
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
        Just(WorldKind::Default)
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
