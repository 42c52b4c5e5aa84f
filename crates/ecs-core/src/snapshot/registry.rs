//! What a world may snapshot, and how: per component, `Pod` (copied as bytes) or `Clone`
//! (cloned value by value); per resource, the same choice.
//!
//! Pod-ness is proven once, by the `bytemuck::Pod` bound of [`World::register_pod`]; nothing
//! else (in particular, nothing read from a file) can mark a column as plain bytes. A column is
//! then copied chunk by chunk with `memcpy` and hashed as bytes. `Clone` columns are copied
//! through a type-erased [`ClonedColumn`] built by the monomorphic function recorded at
//! [`World::register_clone`].

use std::any::{type_name, Any, TypeId};
use std::hash::{Hash, Hasher};
use std::mem::{align_of, size_of};

use bytemuck::{CheckedBitPattern, Pod};

use super::hash::StableHasher;
use crate::component::{Component, ComponentId};
use crate::resource::Resources;

/// Encodes a snapshot's cloned column of the type the function was made for.
pub(crate) type EncodeColumn = fn(&dyn ClonedColumn) -> Result<Vec<u8>, String>;
/// Decodes bytes from [`EncodeColumn`] into a column of the same type.
pub(crate) type DecodeColumn = fn(&[u8]) -> Result<Box<dyn ClonedColumn>, String>;

/// The serde functions of one component type.
#[derive(Clone, Copy)]
pub(crate) struct ColumnCodec {
    pub(crate) encode: EncodeColumn,
    pub(crate) decode: DecodeColumn,
}

/// A resource value, type-erased.
pub(crate) type AnyValue = Box<dyn Any + Send + Sync>;

/// The serde functions of one resource type.
#[derive(Clone, Copy)]
pub(crate) struct ResourceCodec {
    pub(crate) encode: fn(&(dyn Any + Send + Sync)) -> Result<Vec<u8>, String>,
    pub(crate) decode: fn(&[u8]) -> Result<AnyValue, String>,
}

/// How one component type is snapshotted.
#[derive(Clone, Copy)]
pub(crate) enum ColumnKind {
    /// Plain bytes: proven by `T: bytemuck::Pod` at registration (`None`), or by
    /// `T: NoUninit + CheckedBitPattern` (`Some`: the check that bytes read from outside the
    /// process are valid values, returning the first invalid one's index).
    Pod(Option<CheckBytes>),
    /// Cloned: the function makes an empty column of the registered type.
    Clone(fn() -> Box<dyn ClonedColumn>),
}

/// Checks a column's bytes (a whole number of values): the index of the first value that is
/// not a valid bit pattern, if any.
pub(crate) type CheckBytes = fn(&[u8]) -> Option<usize>;

impl ColumnKind {
    pub(crate) fn is_pod(self) -> bool {
        matches!(self, Self::Pod(_))
    }
}

/// The [`CheckBytes`] of `T`.
pub(crate) fn check_bytes<T: CheckedBitPattern>(bytes: &[u8]) -> Option<usize> {
    let size = size_of::<T>();
    if size == 0 {
        return None;
    }
    bytes
        .chunks_exact(size)
        .position(|value| bytemuck::checked::try_pod_read_unaligned::<T>(value).is_err())
}

/// A type-erased `Vec<T>` of cloned component values, for the `Clone` columns of a snapshot.
///
/// # Safety
/// Implementors keep `len` initialised values of the type whose `TypeId` `item_type` returns,
/// and only ever read or write values of that type through the raw pointers they are given.
pub(crate) unsafe trait ClonedColumn: Send + Sync {
    /// The `TypeId` of the values.
    fn item_type(&self) -> TypeId;
    /// Number of values.
    fn len(&self) -> usize;
    /// Drops every value.
    fn clear(&mut self);
    /// A deep copy (clones every value; may run user code and panic).
    fn duplicate(&self) -> Box<dyn ClonedColumn>;
    /// Appends clones of the `count` values at `src`.
    ///
    /// # Safety
    /// `src` points to `count` initialised, aligned values of `item_type`, not written while
    /// this runs.
    unsafe fn extend_cloned(&mut self, src: *const u8, count: usize);
    /// Bitwise-moves values `start..start + count` to `dst`; they must not be dropped here
    /// afterwards (call [`ClonedColumn::forget_all`] once all are moved).
    ///
    /// # Safety
    /// `start + count <= len()`, `dst` is valid and aligned for writing `count` values of
    /// `item_type`, and no value is moved out twice.
    unsafe fn move_out(&self, start: usize, count: usize, dst: *mut u8);
    /// The address of the first value (aligned; dangling but aligned when empty).
    fn as_ptr(&self) -> *const u8;
    /// Forgets every value without dropping it.
    ///
    /// # Safety
    /// Every value has been moved out with `move_out`.
    unsafe fn forget_all(&mut self);
    /// The column as `Any`, for a typed view (a [`Values`] of its type).
    fn as_any(&self) -> &dyn Any;
}

/// The [`ClonedColumn`] of one type.
pub(crate) struct Values<T>(pub(crate) Vec<T>);

// SAFETY: every raw read and write below is of `T`, which is what `item_type` reports; the
// `Vec` keeps its `len` values initialised.
unsafe impl<T: Component + Clone> ClonedColumn for Values<T> {
    fn item_type(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    fn duplicate(&self) -> Box<dyn ClonedColumn> {
        Box::new(Values(self.0.clone()))
    }

    unsafe fn extend_cloned(&mut self, src: *const u8, count: usize) {
        debug_assert!(src.cast::<T>().is_aligned());
        // SAFETY: caller contract: `count` initialised, aligned `T`s that nobody writes while
        // the shared slice lives (zero-sized `T`s need only alignment, which a column base has).
        let values = unsafe { std::slice::from_raw_parts(src.cast::<T>(), count) };
        self.0.extend_from_slice(values);
    }

    unsafe fn move_out(&self, start: usize, count: usize, dst: *mut u8) {
        debug_assert!(start + count <= self.0.len());
        // SAFETY: caller contract: the source range is in bounds and initialised, `dst` is
        // valid for `count` writes; the `Vec` and the chunk are distinct allocations.
        unsafe {
            std::ptr::copy_nonoverlapping(self.0.as_ptr().add(start), dst.cast::<T>(), count);
        }
    }

    fn as_ptr(&self) -> *const u8 {
        self.0.as_ptr().cast()
    }

    unsafe fn forget_all(&mut self) {
        // SAFETY: 0 is within capacity, and every value was moved out (caller contract), so
        // forgetting them drops nothing twice.
        unsafe { self.0.set_len(0) };
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Hashes `count` values of one type at a raw address into `out` (one `u64` each, in order).
///
/// # Safety
/// The address holds `count` initialised, aligned values of the type the function was made
/// for, not written while it runs.
pub(crate) type HashValues = unsafe fn(*const u8, usize, &mut Vec<u64>);

/// The [`HashValues`] of `T`: each value through its `Hash` impl and a fixed-seed hasher.
///
/// # Safety
/// As [`HashValues`], for `T`.
pub(crate) unsafe fn hash_values<T: Hash>(values: *const u8, count: usize, out: &mut Vec<u64>) {
    // SAFETY: the caller's contract; a zero-sized `T` needs only alignment, which it has.
    let values = unsafe { std::slice::from_raw_parts(values.cast::<T>(), count) };
    out.clear();
    out.extend(values.iter().map(stable_hash));
}

/// The per-value hashes of a cloned column, through `hash` (the [`HashValues`] of the type
/// `type_id` names).
///
/// # Panics
/// If `values` holds another type than `type_id`.
pub(crate) fn hash_cloned(
    hash: HashValues,
    type_id: Option<TypeId>,
    values: &dyn ClonedColumn,
    out: &mut Vec<u64>,
) {
    assert!(
        Some(values.item_type()) == type_id,
        "a hasher is applied to values of its own type"
    );
    // SAFETY: `values` holds `len` initialised values of its item type (`ClonedColumn`'s
    // contract), checked above to be the type `hash` was made for (the caller passes the
    // hasher and `TypeId` of one registry entry: the registry's invariant 3); `&values` keeps
    // writers out.
    unsafe { hash(values.as_ptr(), values.len(), out) };
}

pub(crate) fn new_values<T: Component + Clone>() -> Box<dyn ClonedColumn> {
    Box::new(Values::<T>(Vec::new()))
}

/// A resource value held by a snapshot.
pub(crate) enum ResourceValue {
    /// A `Pod` resource's bytes.
    Bytes(Vec<u8>),
    /// A clone of a `Clone` resource.
    Cloned(Box<dyn Any + Send + Sync>),
    /// A serde resource as read from bytes, decoded at restore.
    Encoded(Vec<u8>),
}

impl ResourceValue {
    /// A pod resource's bytes; `None` for a cloned one.
    pub(crate) fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bytes(bytes) => Some(bytes),
            Self::Cloned(_) | Self::Encoded(_) => None,
        }
    }
}

/// How one resource type is snapshotted and restored; every function is monomorphic in it.
#[derive(Clone, Copy)]
pub(crate) struct ResourceHooks {
    pub type_id: TypeId,
    pub name: &'static str,
    pub size: usize,
    pub align: usize,
    pub pod: bool,
    /// Its current value, `None` if absent.
    pub save: fn(&Resources) -> Option<ResourceValue>,
    /// A fresh value from a saved one (clones: may panic); `None` if the saved value is not
    /// of this type or of the wrong length.
    pub prepare: fn(&ResourceValue) -> Option<Box<dyn Any + Send + Sync>>,
    /// Puts a prepared value in place, or removes the resource for `None`.
    pub install: fn(&mut Resources, Option<Box<dyn Any + Send + Sync>>),
    /// How `to_bytes` writes and restore reads it, for a `register_serde_resource` type.
    pub codec: Option<ResourceCodec>,
    /// How the state hash reads a cloned value, for a `register_hashed_resource` type.
    pub hash: Option<ResourceHash>,
}

/// The state-hash term of a cloned resource: its value through `Hash` and a fixed-seed hasher.
#[derive(Clone, Copy)]
pub(crate) struct ResourceHash {
    /// The world's current value's hash, `None` if absent.
    pub live: fn(&Resources) -> Option<u64>,
    /// A prepared (cloned or decoded) value's hash, `None` if of another type.
    pub value: fn(&(dyn Any + Send + Sync)) -> Option<u64>,
}

fn stable_hash<R: Hash>(value: &R) -> u64 {
    let mut h = StableHasher::default();
    value.hash(&mut h);
    h.finish()
}

/// The [`ResourceHash`] of `R`.
pub(crate) fn resource_hash<R: Hash + Send + Sync + 'static>() -> ResourceHash {
    ResourceHash {
        live: |res| res.get::<R>().map(stable_hash),
        value: |value| value.downcast_ref::<R>().map(stable_hash),
    }
}

fn install<R: Send + Sync + 'static>(
    res: &mut Resources,
    value: Option<Box<dyn Any + Send + Sync>>,
) {
    match value.map(|v| v.downcast::<R>()) {
        Some(Ok(v)) => {
            res.insert(*v);
        }
        Some(Err(_)) => unreachable!("a prepared value has the hooks' type"),
        None => {
            res.remove::<R>();
        }
    }
}

pub(crate) fn pod_hooks<R: Pod + Send + Sync>() -> ResourceHooks {
    ResourceHooks {
        type_id: TypeId::of::<R>(),
        name: type_name::<R>(),
        size: size_of::<R>(),
        align: align_of::<R>(),
        pod: true,
        save: |res| {
            res.get::<R>()
                .map(|r| ResourceValue::Bytes(bytemuck::bytes_of(r).to_vec()))
        },
        prepare: |value| match value {
            ResourceValue::Bytes(bytes) if bytes.len() == size_of::<R>() => {
                Some(Box::new(bytemuck::pod_read_unaligned::<R>(bytes)))
            }
            _ => None,
        },
        install: install::<R>,
        codec: None,
        hash: None,
    }
}

pub(crate) fn clone_hooks<R: Clone + Send + Sync + 'static>() -> ResourceHooks {
    ResourceHooks {
        type_id: TypeId::of::<R>(),
        name: type_name::<R>(),
        size: size_of::<R>(),
        align: align_of::<R>(),
        pod: false,
        save: |res| {
            res.get::<R>()
                .map(|r| ResourceValue::Cloned(Box::new(r.clone())))
        },
        prepare: |value| match value {
            ResourceValue::Cloned(any) => any
                .downcast_ref::<R>()
                .map(|r| Box::new(r.clone()) as Box<dyn Any + Send + Sync>),
            ResourceValue::Bytes(_) | ResourceValue::Encoded(_) => None,
        },
        install: install::<R>,
        codec: None,
        hash: None,
    }
}

/// The snapshot registrations of one world.
///
/// # Invariants
/// 1. `kinds[id]` is `Some(Pod)` only if the type with that id in the world's registry was
///    registered through `register_pod::<T: Pod>`; `Some(Clone(f))` only if `f` is
///    `new_values::<T>` for that type.
/// 2. `resources` holds at most one entry per `TypeId`, each built for its type.
/// 3. `hashers[id]` is `Some(f)` only if `f` is `hash_values::<T>` for the type with that id.
/// 4. `codecs[id]` is `Some(c)` only if `c` is `column_codec::<T, _>` for the type with that
///    id, which is then registered `Clone` (or pod).
/// 5. A `TypeId` is in `resources` or in `outside`, never both: the later call wins.
#[derive(Default)]
pub(crate) struct SnapshotRegistry {
    kinds: Vec<Option<ColumnKind>>,
    hashers: Vec<Option<HashValues>>,
    codecs: Vec<Option<ColumnCodec>>,
    resources: Vec<ResourceHooks>,
    /// Resources declared outside snapshots: never in `resources` (invariant 5).
    outside: Vec<std::any::TypeId>,
    /// Clone functions for state values (simulation snapshots).
    pub(crate) states: super::state_types::StateTypes,
}

impl SnapshotRegistry {
    /// How component `id` is snapshotted, `None` if it was not registered for it.
    #[inline]
    pub(crate) fn kind(&self, id: ComponentId) -> Option<ColumnKind> {
        self.kinds.get(id.index()).copied().flatten()
    }

    /// How component `id`'s values are hashed, if it was registered with `register_hashed`.
    #[inline]
    pub(crate) fn hasher(&self, id: ComponentId) -> Option<HashValues> {
        self.hashers.get(id.index()).copied().flatten()
    }

    pub(crate) fn set_hasher(&mut self, id: ComponentId, hasher: HashValues) {
        if self.hashers.len() <= id.index() {
            self.hashers.resize(id.index() + 1, None);
        }
        self.hashers[id.index()] = Some(hasher);
    }

    /// How component `id` is written to bytes, if it was registered with `register_serde`.
    #[inline]
    pub(crate) fn codec(&self, id: ComponentId) -> Option<ColumnCodec> {
        self.codecs.get(id.index()).copied().flatten()
    }

    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn set_codec(&mut self, id: ComponentId, codec: ColumnCodec) {
        if self.codecs.len() <= id.index() {
            self.codecs.resize(id.index() + 1, None);
        }
        self.codecs[id.index()] = Some(codec);
    }

    pub(crate) fn set(&mut self, id: ComponentId, kind: ColumnKind) {
        if self.kinds.len() <= id.index() {
            self.kinds.resize(id.index() + 1, None);
        }
        let slot = &mut self.kinds[id.index()];
        // Pod is the stronger proof; a later `register_clone` does not weaken it.
        if !slot.is_some_and(ColumnKind::is_pod) {
            *slot = Some(kind);
        }
    }

    pub(crate) fn add_resource(&mut self, hooks: ResourceHooks) {
        self.outside.retain(|&t| t != hooks.type_id);
        match self
            .resources
            .iter_mut()
            .find(|h| h.type_id == hooks.type_id)
        {
            // Pod is the stronger proof. Clone registrations add up: a serde codec or a hash is
            // not lost to a later registration without one (a new codec replaces the old).
            Some(old) if old.pod => {}
            Some(old) if hooks.pod => *old = hooks,
            Some(old) => {
                let (codec, hash) = (hooks.codec.or(old.codec), hooks.hash.or(old.hash));
                *old = hooks;
                old.codec = codec;
                old.hash = hash;
            }
            None => self.resources.push(hooks),
        }
    }

    /// The registered resources.
    pub(crate) fn resources(&self) -> &[ResourceHooks] {
        &self.resources
    }

    /// Declares resource `type_id` outside snapshots, dropping a snapshot registration of it.
    pub(crate) fn put_outside(&mut self, type_id: std::any::TypeId) {
        self.resources.retain(|h| h.type_id != type_id);
        if !self.outside.contains(&type_id) {
            self.outside.push(type_id);
        }
    }

    /// Whether resource `type_id` was declared outside snapshots.
    pub(crate) fn is_outside(&self, type_id: std::any::TypeId) -> bool {
        self.outside.contains(&type_id)
    }
}
