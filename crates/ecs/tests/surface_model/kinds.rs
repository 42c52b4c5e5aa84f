//! The surface model's component kinds, their drop ledger, and the bundle family.
//!
//! Each kind is made from a `u32` seed and reads back as [`code`] of its kind and seed, so the
//! model stores one `u64` per component. `Tracked` reports creations and drops to a
//! thread-local ledger; bundles are a fixed family of tuples, reached by number through
//! [`with_bundle`].

use std::any::type_name;
use std::cell::RefCell;
use std::collections::BTreeSet;

use ecs::prelude::*;

// ----- the drop ledger ------------------------------------------------------------------------

/// Which `Tracked` values exist on this test thread (the schedule is single-threaded, so every
/// value is made and dropped here).
#[derive(Default)]
pub(crate) struct Ledger {
    pub(crate) next_id: u64,
    pub(crate) created: u64,
    pub(crate) live: BTreeSet<u64>,
    pub(crate) dropped: u64,
    /// Drops of values that were not live (double drops); recorded, not panicked on in `Drop`.
    pub(crate) anomalies: Vec<u64>,
}

thread_local! {
    static LEDGER: RefCell<Ledger> = RefCell::new(Ledger::default());
}

pub(crate) fn ledger<R>(f: impl FnOnce(&mut Ledger) -> R) -> R {
    LEDGER.with_borrow_mut(f)
}

// ----- component kinds ------------------------------------------------------------------------

pub(crate) const KINDS: usize = 5;
pub(crate) const TRACKED: usize = 0;
pub(crate) const SMALL: usize = 1;
pub(crate) const ZST: usize = 2;
pub(crate) const WIDE: usize = 3;
pub(crate) const LABEL: usize = 4;
/// What a query reports for an `Option` element that is `None`.
pub(crate) const ABSENT: u64 = u64::MAX - 1;

/// One entity in the model: the value code of each kind it has.
pub(crate) type Row = [Option<u64>; KINDS];

/// A component kind of the model. Every value is made from a `u32` seed and reads back as
/// [`code`] of its kind and seed, so the model only stores codes.
pub(crate) trait Kind: Component + Sized {
    const INDEX: usize;
    fn make(seed: u32) -> Self;
    fn read(&self) -> u64;
    fn write(&mut self, seed: u32);
}

/// What a value of `kind` made from (or last written with) `seed` reads back as.
pub(crate) fn code(kind: usize, seed: u32) -> u64 {
    if kind == ZST {
        0
    } else {
        u64::from(seed)
    }
}

/// A value with a unique id whose creation and drop go to the ledger.
#[derive(Debug)]
pub(crate) struct Tracked {
    id: u64,
    seed: u32,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let id = self.id;
        ledger(|l| {
            if l.live.remove(&id) {
                l.dropped += 1;
            } else {
                l.anomalies.push(id);
            }
        });
    }
}

impl Kind for Tracked {
    const INDEX: usize = TRACKED;
    fn make(seed: u32) -> Self {
        let id = ledger(|l| {
            l.next_id += 1;
            l.created += 1;
            l.live.insert(l.next_id);
            l.next_id
        });
        Self { id, seed }
    }
    fn read(&self) -> u64 {
        u64::from(self.seed)
    }
    fn write(&mut self, seed: u32) {
        self.seed = seed;
    }
}

/// A plain 4-byte value.
#[derive(Debug)]
pub(crate) struct Small(u32);

impl Kind for Small {
    const INDEX: usize = SMALL;
    fn make(seed: u32) -> Self {
        Self(seed)
    }
    fn read(&self) -> u64 {
        u64::from(self.0)
    }
    fn write(&mut self, seed: u32) {
        self.0 = seed;
    }
}

/// Zero-sized: its column takes no bytes.
#[derive(Debug)]
pub(crate) struct Zst;

impl Kind for Zst {
    const INDEX: usize = ZST;
    fn make(_: u32) -> Self {
        Self
    }
    fn read(&self) -> u64 {
        0
    }
    fn write(&mut self, _: u32) {}
}

/// 128 bytes, 64-byte aligned: two rows at most in a 512-byte chunk.
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct Wide([u32; 32]);

impl Kind for Wide {
    const INDEX: usize = WIDE;
    fn make(seed: u32) -> Self {
        Self(std::array::from_fn(|i| seed ^ i as u32))
    }
    fn read(&self) -> u64 {
        assert_eq!(self as *const Self as usize % 64, 0, "misaligned `Wide`");
        let seed = self.0[0];
        // A torn or partly moved value reads as garbage.
        if self
            .0
            .iter()
            .enumerate()
            .all(|(i, &v)| v == seed ^ i as u32)
        {
            u64::from(seed)
        } else {
            u64::MAX
        }
    }
    fn write(&mut self, seed: u32) {
        *self = Self::make(seed);
    }
}

/// Owns a heap allocation, so a lost or duplicated move shows up (and Miri sees leaks).
#[derive(Debug)]
pub(crate) struct Label(String);

impl Kind for Label {
    const INDEX: usize = LABEL;
    fn make(seed: u32) -> Self {
        Self(format!("label-{seed}"))
    }
    fn read(&self) -> u64 {
        self.0
            .strip_prefix("label-")
            .and_then(|s| s.parse().ok())
            .unwrap_or(u64::MAX)
    }
    fn write(&mut self, seed: u32) {
        self.0 = format!("label-{seed}");
    }
}

/// Calls `f` with the type of kind `kind`.
pub(crate) trait KindFn {
    type Out;
    fn call<K: Kind>(self) -> Self::Out;
}

pub(crate) fn with_kind<V: KindFn>(kind: usize, v: V) -> V::Out {
    match kind {
        TRACKED => v.call::<Tracked>(),
        SMALL => v.call::<Small>(),
        ZST => v.call::<Zst>(),
        WIDE => v.call::<Wide>(),
        _ => v.call::<Label>(),
    }
}

pub(crate) struct NameOf;
impl KindFn for NameOf {
    type Out = &'static str;
    fn call<K: Kind>(self) -> &'static str {
        type_name::<K>()
    }
}

// ----- bundles --------------------------------------------------------------------------------

/// A bundle of model kinds.
pub(crate) trait ModelBundle: Bundle {
    fn kinds() -> Vec<usize>;
    fn make(seed: u32) -> Self;
    fn read(&self) -> Vec<u64>;
}

/// Each element of a bundle gets its own seed.
pub(crate) fn elem_seed(seed: u32, kind: usize) -> u32 {
    seed.wrapping_add(kind as u32 * 7919)
}

impl ModelBundle for () {
    fn kinds() -> Vec<usize> {
        Vec::new()
    }
    fn make(_: u32) -> Self {}
    fn read(&self) -> Vec<u64> {
        Vec::new()
    }
}

macro_rules! model_bundle {
    ($($T:ident $i:tt),*) => {
        impl<$($T: Kind),*> ModelBundle for ($($T,)*) {
            fn kinds() -> Vec<usize> {
                vec![$($T::INDEX),*]
            }
            fn make(seed: u32) -> Self {
                ($($T::make(elem_seed(seed, $T::INDEX)),)*)
            }
            fn read(&self) -> Vec<u64> {
                vec![$(self.$i.read()),*]
            }
        }
    };
}

model_bundle!(A 0);
model_bundle!(A 0, B 1);
model_bundle!(A 0, B 1, C 2);
model_bundle!(A 0, B 1, C 2, D 3, E 4);

/// Number of bundle types in the family.
pub(crate) const BUNDLES: usize = 12;

/// Calls `f` with bundle type number `b`.
pub(crate) trait BundleFn {
    type Out;
    fn call<B: ModelBundle>(self) -> Self::Out;
}

pub(crate) fn with_bundle<V: BundleFn>(b: usize, v: V) -> V::Out {
    match b % BUNDLES {
        0 => v.call::<()>(),
        1 => v.call::<(Tracked,)>(),
        2 => v.call::<(Small,)>(),
        3 => v.call::<(Zst,)>(),
        4 => v.call::<(Wide,)>(),
        5 => v.call::<(Label,)>(),
        6 => v.call::<(Tracked, Small)>(),
        7 => v.call::<(Small, Tracked)>(),
        8 => v.call::<(Zst, Label)>(),
        9 => v.call::<(Wide, Tracked, Label)>(),
        10 => v.call::<(Label, Wide, Zst, Small, Tracked)>(),
        _ => v.call::<(Small, Wide)>(),
    }
}

pub(crate) struct KindsOf;
impl BundleFn for KindsOf {
    type Out = Vec<usize>;
    fn call<B: ModelBundle>(self) -> Vec<usize> {
        B::kinds()
    }
}

pub(crate) fn bundle_kinds(b: usize) -> Vec<usize> {
    with_bundle(b, KindsOf)
}
