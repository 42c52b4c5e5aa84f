//! The model's component types, the drop ledger, and the dispatch from run-time kind indices
//! to static component and bundle types.
//!
//! Six kinds: [`Tracked`] (unique ids, drops recorded in a thread-local [`Ledger`]), [`Zst`],
//! [`Aligned`] (`align(64)`), [`Kib`] (1 KiB), [`Num`] (a `u32`) and [`Name`] (owns a `String`).
//! Each value is summarised as a `u64` that the model stores and compares.

use std::any::type_name;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::marker::PhantomData;

use ecs_core::{Bundle, Component};

// ----- the drop ledger ------------------------------------------------------------------------

/// Which `Tracked` values exist, per test thread.
#[derive(Default)]
pub(crate) struct Ledger {
    next_id: u64,
    pub(crate) created: u64,
    pub(crate) live: BTreeSet<u64>,
    pub(crate) dropped: BTreeSet<u64>,
    /// Double drops and drops of values never created; recorded rather than panicking in `Drop`.
    pub(crate) anomalies: Vec<String>,
}

thread_local! {
    static LEDGER: RefCell<Ledger> = RefCell::new(Ledger::default());
}

pub(crate) fn ledger<R>(f: impl FnOnce(&mut Ledger) -> R) -> R {
    LEDGER.with_borrow_mut(f)
}

// ----- component types ------------------------------------------------------------------------

/// A value with a unique id whose drop is recorded in the ledger.
#[derive(Debug)]
pub(crate) struct Tracked {
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
pub(crate) struct Zst;

/// Over-aligned: its column must start on a 64-byte boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
pub(crate) struct Aligned(u64);

/// 1 KiB: a few rows per chunk at most.
#[derive(Clone)]
pub(crate) struct Kib([u8; 1024]);

/// A plain small value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Num(u32);

/// Owns a heap allocation, so moves that lose bytes or provenance show up.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Name(String);

/// Number of component kinds in the model.
pub(crate) const KINDS: usize = 6;
pub(crate) const TRACKED: usize = 0;
pub(crate) const KIB: usize = 3;

/// A component type the model knows. Values are summarised as a `u64` that is a function of
/// the seed they were made from (and, for `Tracked`, of their unique id).
pub(crate) trait Kind: Component + Sized {
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
pub(crate) trait ModelBundle: Bundle {
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
pub(crate) trait KindOp {
    fn run<A: Kind>(self);
}

/// Something to run with a bundle type chosen at run time.
pub(crate) trait BundleOp {
    fn run<B: ModelBundle>(self);
}

pub(crate) fn with_kind<V: KindOp>(kind: usize, op: V) {
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
pub(crate) fn with_bundle2<V: BundleOp>(kinds: &[usize], op: V) {
    match *kinds {
        [] => op.run::<()>(),
        [a] => with_kind(a, One(op)),
        [a, b] => with_kind(a, Two(b, op)),
        _ => unreachable!("{kinds:?}"),
    }
}

/// Runs `op` with the bundle of `kinds` (at most three).
pub(crate) fn with_bundle3<V: BundleOp>(kinds: &[usize], op: V) {
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
