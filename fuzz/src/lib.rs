//! What the fuzz targets share: a byte reader, the component kinds with a live-value counter,
//! a fixed family of bundles reached by number, and a naive model of a world's contents.
//!
//! Every decision a target makes comes from the input bytes through [`Input`]; running out of
//! bytes reads zeros and ends the op loop, so every input is a valid program.

use std::any::type_name;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicI64, Ordering};

use ecs_core::{Bundle, Component, ComponentError, Entity, World};

// ----- input ----------------------------------------------------------------------------------

/// Reads little-endian numbers off the fuzzer's bytes.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads `data` from the start.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte, or 0 past the end.
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next two bytes as a `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// The next four bytes as a `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
}

// ----- component kinds ------------------------------------------------------------------------

/// Number of component kinds.
pub const KINDS: usize = 5;

/// `Counted` values alive right now, across the process (fuzz targets run one input at a time).
pub static COUNTED_LIVE: AtomicI64 = AtomicI64::new(0);

/// A component kind: made from a `u32`, read back as that `u32`.
pub trait Kind: Component + Sized {
    /// Index into a model row.
    const INDEX: usize;
    /// A value holding `v`.
    fn make(v: u32) -> Self;
    /// The value it holds (`u32::MAX` if it was torn).
    fn read(&self) -> u32;
}

/// A plain 4-byte value.
pub struct Num(pub u32);
/// Owns heap memory.
pub struct Text(pub String);
/// Zero-sized.
pub struct Unit;
/// 96 bytes, 32-aligned.
#[repr(align(32))]
pub struct Big(pub [u32; 24]);
/// Counted in [`COUNTED_LIVE`] while alive.
pub struct Counted(pub u32);

impl Drop for Counted {
    fn drop(&mut self) {
        COUNTED_LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Kind for Num {
    const INDEX: usize = 0;
    fn make(v: u32) -> Self {
        Self(v)
    }
    fn read(&self) -> u32 {
        self.0
    }
}

impl Kind for Text {
    const INDEX: usize = 1;
    fn make(v: u32) -> Self {
        Self(v.to_string())
    }
    fn read(&self) -> u32 {
        self.0.parse().unwrap_or(u32::MAX)
    }
}

impl Kind for Unit {
    const INDEX: usize = 2;
    fn make(_: u32) -> Self {
        Self
    }
    fn read(&self) -> u32 {
        0
    }
}

impl Kind for Big {
    const INDEX: usize = 3;
    fn make(v: u32) -> Self {
        Self(std::array::from_fn(|i| v.rotate_left(i as u32)))
    }
    fn read(&self) -> u32 {
        assert_eq!(self as *const Self as usize % 32, 0, "misaligned `Big`");
        let v = self.0[0];
        if *self == Self::make(v) {
            v
        } else {
            u32::MAX
        }
    }
}

impl PartialEq for Big {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Kind for Counted {
    const INDEX: usize = 4;
    fn make(v: u32) -> Self {
        COUNTED_LIVE.fetch_add(1, Ordering::Relaxed);
        Self(v)
    }
    fn read(&self) -> u32 {
        self.0
    }
}

/// What a value of `kind` made from `v` reads back as.
pub fn code(kind: usize, v: u32) -> u32 {
    if kind == Unit::INDEX {
        0
    } else {
        v
    }
}

/// Calls `call` with the type of a kind.
pub trait KindFn {
    /// The result.
    type Out;
    /// Runs with kind `K`.
    fn call<K: Kind>(self) -> Self::Out;
}

/// Runs `f` with kind number `kind % KINDS`.
pub fn with_kind<F: KindFn>(kind: usize, f: F) -> F::Out {
    match kind % KINDS {
        0 => f.call::<Num>(),
        1 => f.call::<Text>(),
        2 => f.call::<Unit>(),
        3 => f.call::<Big>(),
        _ => f.call::<Counted>(),
    }
}

struct NameOf;
impl KindFn for NameOf {
    type Out = &'static str;
    fn call<K: Kind>(self) -> &'static str {
        type_name::<K>()
    }
}

// ----- bundles --------------------------------------------------------------------------------

/// A bundle of kinds, made from one `u32` (element `k` gets `v + k`).
pub trait FuzzBundle: Bundle {
    /// The kinds, in tuple order.
    fn kinds() -> Vec<usize>;
    /// A bundle holding `v`.
    fn make(v: u32) -> Self;
    /// What each element holds, in tuple order.
    fn read(&self) -> Vec<u32>;
}

/// What element `kind` of a bundle made from `v` holds.
pub fn elem(v: u32, kind: usize) -> u32 {
    v.wrapping_add(kind as u32)
}

impl FuzzBundle for () {
    fn kinds() -> Vec<usize> {
        Vec::new()
    }
    fn make(_: u32) -> Self {}
    fn read(&self) -> Vec<u32> {
        Vec::new()
    }
}

macro_rules! fuzz_bundle {
    ($($T:ident $i:tt),*) => {
        impl<$($T: Kind),*> FuzzBundle for ($($T,)*) {
            fn kinds() -> Vec<usize> {
                vec![$($T::INDEX),*]
            }
            fn make(v: u32) -> Self {
                ($($T::make(elem(v, $T::INDEX)),)*)
            }
            fn read(&self) -> Vec<u32> {
                vec![$(self.$i.read()),*]
            }
        }
    };
}

fuzz_bundle!(A 0);
fuzz_bundle!(A 0, B 1);
fuzz_bundle!(A 0, B 1, C 2);
fuzz_bundle!(A 0, B 1, C 2, D 3, E 4);

/// Number of bundle types.
pub const BUNDLES: usize = 10;

/// Calls `call` with the type of a bundle.
pub trait BundleFn {
    /// The result.
    type Out;
    /// Runs with bundle `B`.
    fn call<B: FuzzBundle>(self) -> Self::Out;
}

/// Runs `f` with bundle number `b % BUNDLES`.
pub fn with_bundle<F: BundleFn>(b: usize, f: F) -> F::Out {
    match b % BUNDLES {
        0 => f.call::<()>(),
        1 => f.call::<(Num,)>(),
        2 => f.call::<(Text,)>(),
        3 => f.call::<(Unit,)>(),
        4 => f.call::<(Big,)>(),
        5 => f.call::<(Counted,)>(),
        6 => f.call::<(Num, Text)>(),
        7 => f.call::<(Big, Counted, Unit)>(),
        8 => f.call::<(Text, Num)>(),
        _ => f.call::<(Counted, Num, Text, Big, Unit)>(),
    }
}

struct KindsOf;
impl BundleFn for KindsOf {
    type Out = Vec<usize>;
    fn call<B: FuzzBundle>(self) -> Vec<usize> {
        B::kinds()
    }
}

/// The kinds of bundle `b`, in tuple order.
pub fn bundle_kinds(b: usize) -> Vec<usize> {
    with_bundle(b, KindsOf)
}

// ----- the model ------------------------------------------------------------------------------

/// The value each kind holds, per live entity.
pub type Row = [Option<u32>; KINDS];

/// A naive model of a world: live entities and their values, plus every handle ever issued.
#[derive(Default)]
pub struct Model {
    /// Live entities.
    pub live: BTreeMap<Entity, Row>,
    /// Every handle ever issued, in order.
    pub pool: Vec<Entity>,
    issued: BTreeSet<Entity>,
}

impl Model {
    /// Records a new entity; a handle must never be issued twice.
    pub fn born(&mut self, e: Entity, row: Row) {
        assert!(self.issued.insert(e), "handle {e:?} issued twice");
        self.pool.push(e);
        self.live.insert(e, row);
    }

    /// `row` with bundle `b` made from `v` added (overwriting).
    pub fn merge(row: &mut Row, b: usize, v: u32) {
        for k in bundle_kinds(b) {
            row[k] = Some(code(k, elem(v, k)));
        }
    }

    /// A fresh row holding bundle `b` made from `v`.
    pub fn row(b: usize, v: u32) -> Row {
        let mut row = [None; KINDS];
        Self::merge(&mut row, b, v);
        row
    }

    /// An entity chosen by `byte`: a live one (high bit clear) or any issued one, or a handle
    /// never issued when there is none.
    pub fn pick(&self, byte: u8) -> Entity {
        let n = usize::from(byte & 0x7f);
        if byte & 0x80 == 0 && !self.live.is_empty() {
            *self.live.keys().nth(n % self.live.len()).expect("in range")
        } else if !self.pool.is_empty() {
            self.pool[n % self.pool.len()]
        } else {
            Entity::from_bits(u64::MAX).expect("non-zero generation")
        }
    }

    /// The error `remove` of bundle `b` must give for `e`, if any.
    pub fn remove_error(&self, e: Entity, b: usize) -> Option<ComponentError> {
        let Some(row) = self.live.get(&e) else {
            return Some(ComponentError::NoSuchEntity(e));
        };
        let missing = bundle_kinds(b).into_iter().find(|&k| row[k].is_none())?;
        Some(ComponentError::MissingComponent {
            entity: e,
            component: with_kind(missing, NameOf),
        })
    }

    /// What `get` of `kind` must give for `e`.
    pub fn get(&self, e: Entity, kind: usize) -> Result<u32, ComponentError> {
        let row = self.live.get(&e).ok_or(ComponentError::NoSuchEntity(e))?;
        row[kind].ok_or(ComponentError::MissingComponent {
            entity: e,
            component: with_kind(kind, NameOf),
        })
    }

    /// Compares every issued handle and every kind with `world`, and the live `Counted`
    /// values with the model.
    pub fn check(&self, world: &World) {
        world.check_invariants();
        assert_eq!(world.len() as usize, self.live.len(), "live count");
        for &e in &self.pool {
            assert_eq!(world.contains(e), self.live.contains_key(&e), "{e:?}");
            for kind in 0..KINDS {
                assert_eq!(
                    get(world, e, kind),
                    self.get(e, kind),
                    "kind {kind} of {e:?}"
                );
            }
        }
        self.check_counted();
    }

    /// The live `Counted` values are exactly the model's.
    pub fn check_counted(&self) {
        let counted = self
            .live
            .values()
            .filter(|r| r[Counted::INDEX].is_some())
            .count();
        assert_eq!(
            COUNTED_LIVE.load(Ordering::Relaxed),
            counted as i64,
            "live `Counted` values vs the model"
        );
    }
}

/// `world.get` of kind `kind`, read back.
pub fn get(world: &World, e: Entity, kind: usize) -> Result<u32, ComponentError> {
    struct Get<'a>(&'a World, Entity);
    impl KindFn for Get<'_> {
        type Out = Result<u32, ComponentError>;
        fn call<K: Kind>(self) -> Self::Out {
            self.0.get::<K>(self.1).map(K::read)
        }
    }
    with_kind(kind, Get(world, e))
}

/// A world with a chunk size chosen by `byte`: 512 B or 2 KiB test chunks, or 4 or 16 KiB.
pub fn world(byte: u8) -> World {
    match byte % 4 {
        0 => World::with_test_chunk_size(512),
        1 => World::with_test_chunk_size(2048),
        2 => World::with_chunk_size(4096).expect("a valid size"),
        _ => World::new(),
    }
}
