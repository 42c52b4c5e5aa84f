//! The state hash: one 64-bit number for "these entities with these values".
//!
//! The hash is a wrapping *sum* of one term per (entity, archetype), one per (entity, hashed
//! component value), one per disabled component and one per hashed resource:
//!
//! ```text
//! state_hash = finish( Σ rows      mix(seed(entity), key(archetype))
//!                    + Σ cells     mix(seed(entity) ^ key(component), value bytes)
//!                    + Σ disabled  mix(seed(entity) ^ key(component) ^ P3)
//!                    + Σ resources mix(key(resource), value bytes) , rows )
//! ```
//!
//! A sum does not care about order, so chunk size, archetype creation order, row order and the
//! number of threads that produced the world cannot change it; every term mixes the entity id
//! with a key derived from the component's *type name* (not its per-world id), so two worlds
//! that registered types in another order agree. Pod values are hashed as the bytes in memory
//! (machines of the same byte order agree); `register_hashed` components and
//! `register_hashed_resource` resources as the 8 bytes of their `Hash` through
//! [`StableHasher`]; other components count by presence only. The mixer
//! is a 64×64→128-bit multiply folded to 64 bits (as in wyhash), about one multiply per 8 bytes.
//!
//! It is a check for determinism (two runs or two machines that should agree), not a
//! cryptographic hash: someone *choosing* two worlds can make them collide.

use crate::entity::Entity;

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
const P3: u64 = 0x5899_65cc_7537_4cc3;

/// 64×64→128-bit multiply, high and low halves folded.
#[inline(always)]
fn mum(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Up to 8 bytes as a little-endian word, zero-padded.
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(w)
}

/// A byte string's hash (type names, checksums).
pub(crate) fn bytes_hash(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = mum(seed ^ P0, bytes.len() as u64 ^ P1);
    let mut words = bytes.chunks_exact(8);
    for w in words.by_ref() {
        h = mum(h ^ word(w), P2);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        h = mum(h ^ word(tail), P3);
    }
    mum(h ^ P1, P2)
}

/// The key of a component, from its type name.
pub(crate) fn component_key(name: &str) -> u64 {
    bytes_hash(0x636f_6d70, name.as_bytes())
}

/// The key of an archetype: from its components' keys, in any order.
pub(crate) fn archetype_key(keys: impl Iterator<Item = u64>) -> u64 {
    let (sum, n) = keys.fold((0u64, 0u64), |(s, n), k| (s.wrapping_add(k), n + 1));
    mum(sum ^ P2, n ^ P3)
}

#[inline(always)]
fn entity_seed(e: Entity) -> u64 {
    mum(e.to_bits() ^ P0, P1)
}

/// A `std::hash::Hasher` with a fixed seed, for hashing cloned component values through their
/// `Hash` impls: the same value gives the same `u64` in every run and process (unlike
/// `std`'s randomly seeded `DefaultHasher`). Bytes are folded 8 at a time with `mum`. Note that
/// `usize` and pointer-sized writes differ between 32- and 64-bit targets.
pub(crate) struct StableHasher {
    state: u64,
    len: u64,
}

impl Default for StableHasher {
    fn default() -> Self {
        Self { state: P0, len: 0 }
    }
}

impl std::hash::Hasher for StableHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in words.by_ref() {
            self.state = mum(self.state ^ word(w), P2);
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            self.state = mum(self.state ^ word(tail), P3);
        }
        self.len = self.len.wrapping_add(bytes.len() as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.state = mum(self.state ^ n, P2);
        self.len = self.len.wrapping_add(8);
    }

    #[inline]
    fn finish(&self) -> u64 {
        mum(self.state ^ P1, self.len ^ P3)
    }
}

/// Accumulates the terms of one state hash.
#[derive(Default)]
pub(crate) struct StateHasher {
    sum: u64,
    rows: u64,
    seeds: Vec<u64>,
}

impl StateHasher {
    /// Adds the rows of one run of entities (a chunk, or a snapshot archetype) of an archetype
    /// with key `archetype`; the following `column` calls hash their values.
    pub(crate) fn rows(&mut self, entities: &[Entity], archetype: u64) {
        self.seeds.clear();
        self.seeds.extend(entities.iter().map(|&e| entity_seed(e)));
        let mut sum = 0u64;
        for &s in &self.seeds {
            sum = sum.wrapping_add(mum(s ^ archetype, P2));
        }
        self.sum = self.sum.wrapping_add(sum);
        self.rows += entities.len() as u64;
    }

    /// Adds the values of a pod column of the entities of the last `rows` call: `bytes` holds
    /// `size`-byte values, one per entity.
    pub(crate) fn column(&mut self, key: u64, size: usize, bytes: &[u8]) {
        debug_assert_eq!(bytes.len(), size * self.seeds.len());
        let seeds = &self.seeds;
        let sum = match size {
            0 => 0,
            4 => fixed::<4>(seeds, key, bytes),
            8 => fixed::<8>(seeds, key, bytes),
            12 => fixed::<12>(seeds, key, bytes),
            16 => fixed::<16>(seeds, key, bytes),
            24 => fixed::<24>(seeds, key, bytes),
            32 => fixed::<32>(seeds, key, bytes),
            _ => seeds
                .iter()
                .zip(bytes.chunks_exact(size))
                .fold(0u64, |s, (&seed, v)| s.wrapping_add(value(seed ^ key, v))),
        };
        self.sum = self.sum.wrapping_add(sum);
    }

    /// Adds the values of a hashed cloned column of the entities of the last `rows` call, one
    /// `u64` per entity (from [`StableHasher`]): as `column` does for 8-byte pod values.
    pub(crate) fn hashed(&mut self, key: u64, hashes: &[u64]) {
        debug_assert_eq!(hashes.len(), self.seeds.len());
        let key = key ^ P2;
        let sum = self.seeds.iter().zip(hashes).fold(0u64, |s, (&seed, &h)| {
            s.wrapping_add(value(seed ^ key, &h.to_le_bytes()))
        });
        self.sum = self.sum.wrapping_add(sum);
    }

    /// Adds one term per row (of the last `rows` call) whose component with key `key` is
    /// disabled, so that switching a component off changes the hash.
    pub(crate) fn disabled(&mut self, key: u64, rows: impl Iterator<Item = usize>) {
        let key = key ^ P3;
        for r in rows {
            self.sum = self.sum.wrapping_add(mum(self.seeds[r] ^ key, P0));
        }
    }

    /// Adds a pod resource: its type name's key and its bytes. An absent one (`None`) adds
    /// nothing, so "registered but absent" hashes as "not registered": a snapshot taken by a
    /// world that never registered the type agrees with a world that registered it and holds
    /// none (restore leaves such a resource alone).
    pub(crate) fn resource(&mut self, name: &str, bytes: Option<&[u8]>) {
        if let Some(bytes) = bytes {
            let key = component_key(name) ^ P1;
            self.sum = self.sum.wrapping_add(value(key, bytes));
        }
    }

    /// The hash.
    pub(crate) fn finish(&self) -> u64 {
        mum(mum(self.sum ^ P0, P1) ^ self.rows, P3)
    }
}

/// One value's term: the seed, then one multiply per 8 bytes.
#[inline(always)]
fn value(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed;
    let mut words = bytes.chunks_exact(8);
    for w in words.by_ref() {
        h = mum(h ^ word(w), P2);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        h = mum(h ^ word(tail), P3);
    }
    h
}

/// [`value`] over a column of `N`-byte values, with `N` known to the compiler.
#[inline(always)]
fn fixed<const N: usize>(seeds: &[u64], key: u64, bytes: &[u8]) -> u64 {
    seeds
        .iter()
        .zip(bytes.chunks_exact(N))
        .fold(0u64, |s, (&seed, v)| {
            let v: &[u8; N] = v.try_into().expect("chunks_exact gives N bytes");
            s.wrapping_add(value(seed ^ key, v))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_commute_and_see_every_bit() {
        let e = |i| Entity::from_bits(1 << 32 | i).unwrap();
        let key = component_key("pos");
        let run = |order: &[u64], values: &[[u8; 12]]| {
            let mut h = StateHasher::default();
            let ents: Vec<_> = order.iter().map(|&i| e(i)).collect();
            h.rows(&ents, 7);
            h.column(key, 12, values.as_flattened());
            h.finish()
        };
        let a = run(&[1, 2], &[[1; 12], [2; 12]]);
        assert_eq!(a, run(&[2, 1], &[[2; 12], [1; 12]]));
        for bit in 0..96 {
            let mut v = [[1u8; 12], [2; 12]];
            v[0][bit / 8] ^= 1 << (bit % 8);
            assert_ne!(a, run(&[1, 2], &v), "bit {bit}");
        }
        // Swapping values between entities changes it.
        assert_ne!(a, run(&[1, 2], &[[2; 12], [1; 12]]));
    }

    #[test]
    fn generic_and_fixed_paths_agree() {
        let seeds = [3u64, 9, 27];
        let bytes: Vec<u8> = (0..36).collect();
        let generic: u64 = seeds
            .iter()
            .zip(bytes.chunks_exact(12))
            .fold(0, |s, (&seed, v)| s.wrapping_add(value(seed ^ 5, v)));
        assert_eq!(fixed::<12>(&seeds, 5, &bytes), generic);
    }
}
