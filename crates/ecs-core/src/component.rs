//! Component types and their per-world registry.
//!
//! Any `T: Send + Sync + 'static` is a component. The first time a world sees `T` it gives it the
//! next dense [`ComponentId`] and records a [`ComponentInfo`]: name, memory layout and the
//! type-erased drop function that chunks use to drop values they only know as bytes.

use std::alloc::Layout;
use std::any::{type_name, TypeId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Marker for the types a world can store: every `Send + Sync + 'static` type.
pub trait Component: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> Component for T {}

/// Dense per-world id of a component type, assigned on first use.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ComponentId(u32);

impl ComponentId {
    /// The id with the given dense index.
    #[inline]
    pub const fn from_index(index: usize) -> Self {
        Self(index as u32)
    }

    /// The dense index (0 for the first type a world registered).
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a world knows about a component type.
#[derive(Clone, Debug)]
pub struct ComponentInfo {
    id: ComponentId,
    type_id: TypeId,
    name: &'static str,
    layout: Layout,
    drop: Option<unsafe fn(*mut u8)>,
}

impl ComponentInfo {
    /// Describes `T`.
    pub fn of<T: Component>(id: ComponentId) -> Self {
        /// # Safety
        /// `ptr` points to a valid, aligned `T` that is never used again.
        unsafe fn drop_ptr<T>(ptr: *mut u8) {
            // SAFETY: forwarded from the caller contract above.
            unsafe { ptr.cast::<T>().drop_in_place() }
        }
        Self {
            id,
            type_id: TypeId::of::<T>(),
            name: type_name::<T>(),
            layout: Layout::new::<T>(),
            drop: std::mem::needs_drop::<T>().then_some(drop_ptr::<T> as unsafe fn(*mut u8)),
        }
    }

    /// The component's id in its world.
    pub fn id(&self) -> ComponentId {
        self.id
    }

    /// The Rust type's id.
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The type's name, as `std::any::type_name` gives it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Size and alignment.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        self.layout.size()
    }

    /// Alignment in bytes.
    pub fn align(&self) -> usize {
        self.layout.align()
    }

    /// The type-erased drop glue, `None` when the type needs no drop.
    ///
    /// Calling it requires a pointer to a valid, aligned value of this type that is never used
    /// again.
    pub fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.drop
    }
}

/// Hasher for `TypeId` keys: a `TypeId` already is a well-mixed hash, so this just keeps the
/// 64 bits it is fed instead of hashing them again.
#[derive(Default, Clone, Copy)]
pub struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // `TypeId`'s `Hash` writes a `u64`; fold anything else in case that ever changes.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_ne_bytes(word);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` keyed by `TypeId` that does not rehash the key.
pub type TypeIdMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

/// The component registry of one world.
#[derive(Default)]
pub struct Components {
    infos: Vec<ComponentInfo>,
    by_type: TypeIdMap<ComponentId>,
}

impl Components {
    /// The id of `T`, registering it on first use.
    #[inline]
    pub fn register<T: Component>(&mut self) -> ComponentId {
        let next = ComponentId(self.infos.len() as u32);
        let infos = &mut self.infos;
        *self.by_type.entry(TypeId::of::<T>()).or_insert_with(|| {
            infos.push(ComponentInfo::of::<T>(next));
            next
        })
    }

    /// The id of `T`, if registered.
    #[inline]
    pub fn id<T: Component>(&self) -> Option<ComponentId> {
        self.id_of(TypeId::of::<T>())
    }

    /// The id of the type with `type_id`, if registered.
    #[inline]
    pub fn id_of(&self, type_id: TypeId) -> Option<ComponentId> {
        self.by_type.get(&type_id).copied()
    }

    /// The info of a registered id.
    ///
    /// # Panics
    /// If `id` was not registered in this registry.
    #[inline]
    pub fn info(&self, id: ComponentId) -> &ComponentInfo {
        &self.infos[id.index()]
    }

    /// Every registered component, by id.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &ComponentInfo> {
        self.infos.iter()
    }

    /// How many types are registered.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Whether no type is registered.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_stable() {
        let mut c = Components::default();
        let a = c.register::<u32>();
        let b = c.register::<String>();
        assert_eq!((a.index(), b.index()), (0, 1));
        assert_eq!(c.register::<u32>(), a);
        assert_eq!(c.id::<String>(), Some(b));
        assert_eq!(c.id::<u8>(), None);
        assert!(c.info(a).drop_fn().is_none());
        assert!(c.info(b).drop_fn().is_some());
        assert_eq!(c.info(b).name(), "alloc::string::String");
    }
}
