//! Maps keyed by `TypeId`, with a hasher that keeps the id's own bits.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hasher for `TypeId` keys: a `TypeId` already is a well-mixed hash, so this just keeps the
/// 64 bits it is fed instead of hashing them again.
///
/// ```
/// # use std::any::TypeId;
/// # use ecs_core::TypeIdMap;
/// let mut map = TypeIdMap::default();
/// map.insert(TypeId::of::<u32>(), "u32");
/// assert_eq!(map.get(&TypeId::of::<u32>()), Some(&"u32"));
/// ```
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
///
/// ```
/// # use std::any::TypeId;
/// # use ecs_core::TypeIdMap;
/// let mut map: TypeIdMap<usize> = TypeIdMap::default();
/// map.insert(TypeId::of::<char>(), 1);
/// assert!(map.contains_key(&TypeId::of::<char>()));
/// ```
pub type TypeIdMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;
