//! The model's component kinds: seven types of different sizes, alignments and drop glue,
//! each made from a `u32` seed and summarised as a `u64` that a model row stores.
//!
//! Invariant: for every kind, `make(seed).read() == code(INDEX, seed)` and, after
//! `mutate(seed)`, `read() == code(INDEX, seed)` and `encode() == mutated(old, seed)`; a value
//! that was torn, partly moved or misaligned reads as something no seed gives (`u64::MAX`) or
//! fails an assertion. So a model that stores codes needs no copies of the values.

use std::any::type_name;

use ecs_core::Component;

use crate::ledger::ledger;

/// Number of component kinds; the length of a model [`Row`](crate::Row).
pub const KINDS: usize = 7;
/// Index of [`Tracked`].
pub const TRACKED: usize = 0;
/// Index of [`Zst`].
pub const ZST: usize = 1;
/// Index of [`Aligned`].
pub const ALIGNED: usize = 2;
/// Index of [`Kib`].
pub const KIB: usize = 3;
/// Index of [`Num`].
pub const NUM: usize = 4;
/// Index of [`Name`].
pub const NAME: usize = 5;
/// Index of [`Wide`].
pub const WIDE: usize = 6;

/// A component type the model knows.
pub trait Kind: Component + Sized {
    /// Index into a model row.
    const INDEX: usize;
    /// A value made from `seed`.
    fn make(seed: u32) -> Self;
    /// The full summary: [`read`](Kind::read), plus, for [`Tracked`], the value's unique id,
    /// so that two values made from the same seed still differ.
    fn encode(&self) -> u64;
    /// The summary a seed predicts: `code(Self::INDEX, seed)` for a value made from, or last
    /// mutated with, `seed`.
    fn read(&self) -> u64 {
        self.encode()
    }
    /// Overwrites the value with one made from `seed` (keeping a [`Tracked`] value's id).
    fn mutate(&mut self, seed: u32);
    /// What `encode` gives after `mutate(seed)` on a value that encoded to `old`.
    fn mutated(old: u64, seed: u32) -> u64 {
        let _ = old;
        code(Self::INDEX, seed)
    }
}

/// What a value of `kind` made from (or last mutated with) `seed` [`read`](Kind::read)s as.
pub fn code(kind: usize, seed: u32) -> u64 {
    if kind == ZST {
        0
    } else {
        u64::from(seed)
    }
}

/// A value with a unique id whose creation and drop go to the [`ledger`].
#[derive(Debug)]
pub struct Tracked {
    id: u64,
    payload: u32,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let id = self.id;
        ledger(|l| l.record_drop(id));
    }
}

impl Kind for Tracked {
    const INDEX: usize = TRACKED;
    fn make(seed: u32) -> Self {
        Self {
            id: ledger(|l| l.record_create()),
            payload: seed,
        }
    }
    fn encode(&self) -> u64 {
        self.id << 32 | u64::from(self.payload)
    }
    fn read(&self) -> u64 {
        u64::from(self.payload)
    }
    fn mutate(&mut self, seed: u32) {
        self.payload = seed;
    }
    fn mutated(old: u64, seed: u32) -> u64 {
        old & !0xffff_ffff | u64::from(seed)
    }
}

/// Zero-sized: its column takes no bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zst;

impl Kind for Zst {
    const INDEX: usize = ZST;
    fn make(_: u32) -> Self {
        Zst
    }
    fn encode(&self) -> u64 {
        0
    }
    fn mutate(&mut self, _: u32) {}
}

/// Over-aligned (`align(64)`, 64 bytes): its column must start on a 64-byte boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
pub struct Aligned(u64);

impl Kind for Aligned {
    const INDEX: usize = ALIGNED;
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
}

/// 1 KiB of a seed-derived pattern: a few rows per chunk at most.
#[derive(Clone)]
pub struct Kib([u8; 1024]);

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
}

/// A plain 4-byte value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num(u32);

impl Kind for Num {
    const INDEX: usize = NUM;
    fn make(seed: u32) -> Self {
        Self(seed)
    }
    fn encode(&self) -> u64 {
        u64::from(self.0)
    }
    fn mutate(&mut self, seed: u32) {
        self.0 = seed;
    }
}

/// Owns a heap allocation, so a lost or duplicated move shows up (and Miri sees leaks).
#[derive(Debug, Clone, PartialEq)]
pub struct Name(String);

impl Kind for Name {
    const INDEX: usize = NAME;
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
}

/// 128 bytes, 64-byte aligned: two rows at most in a 512-byte chunk.
#[derive(Debug)]
#[repr(align(64))]
pub struct Wide([u32; 32]);

impl Kind for Wide {
    const INDEX: usize = WIDE;
    fn make(seed: u32) -> Self {
        Self(std::array::from_fn(|i| seed ^ i as u32))
    }
    fn encode(&self) -> u64 {
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
    fn mutate(&mut self, seed: u32) {
        *self = Self::make(seed);
    }
}

/// Something to run with one component type chosen at run time (see [`with_kind`]).
pub trait KindFn {
    /// What the call returns.
    type Out;
    /// Runs with kind `K`.
    fn call<K: Kind>(self) -> Self::Out;
}

/// Runs `f` with the type of kind index `kind`.
///
/// # Panics
/// If `kind` is not below [`KINDS`].
pub fn with_kind<V: KindFn>(kind: usize, f: V) -> V::Out {
    match kind {
        TRACKED => f.call::<Tracked>(),
        ZST => f.call::<Zst>(),
        ALIGNED => f.call::<Aligned>(),
        KIB => f.call::<Kib>(),
        NUM => f.call::<Num>(),
        NAME => f.call::<Name>(),
        WIDE => f.call::<Wide>(),
        _ => unreachable!("no kind {kind}"),
    }
}

/// The type name of a kind, as `ComponentError::MissingComponent` names it.
pub struct NameOf;
impl KindFn for NameOf {
    type Out = &'static str;
    fn call<K: Kind>(self) -> &'static str {
        type_name::<K>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct RoundTrip(u32);
    impl KindFn for RoundTrip {
        type Out = ();
        fn call<K: Kind>(self) {
            let mut v = K::make(self.0);
            assert_eq!(v.read(), code(K::INDEX, self.0), "{}", type_name::<K>());
            let old = v.encode();
            v.mutate(self.0 ^ 0x55);
            assert_eq!(v.read(), code(K::INDEX, self.0 ^ 0x55));
            assert_eq!(v.encode(), K::mutated(old, self.0 ^ 0x55));
        }
    }

    #[test]
    fn every_kind_reads_back_its_seed() {
        for kind in 0..KINDS {
            for seed in [0, 1, 7919, u32::MAX] {
                with_kind(kind, RoundTrip(seed));
            }
        }
    }
}
