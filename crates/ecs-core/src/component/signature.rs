//! Component-set bitsets.
//!
//! A [`Signature`] is the set of component ids an archetype stores, or that a query requires or
//! excludes. Matching a query against an archetype is a handful of word-wide `AND`s, so it stays
//! cheap however many archetypes a world grows. The first 256 ids live inline; past that the set
//! spills to the heap.

use smallvec::SmallVec;
use std::fmt;

use crate::component::ComponentId;

const WORD_BITS: usize = 64;

/// A set of [`ComponentId`]s, stored as a bitset.
///
/// # Invariants
/// 1. Canonical: `words` never ends with a zero word. Two equal sets therefore have equal
///    `words`, which lets `Eq` and `Hash` be derived and lets the subset test below take a
///    shortcut on length.
///
/// ```
/// # use ecs_core::{ComponentId, Signature};
/// let mut a = Signature::new();
/// a.insert(ComponentId::from_index(70));
/// a.remove(ComponentId::from_index(70));
/// assert_eq!(a, Signature::new()); // canonical: no trailing zero words
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Signature {
    words: SmallVec<[u64; 4]>,
}

impl Signature {
    /// The empty set.
    ///
    /// ```
    /// # use ecs_core::Signature;
    /// assert!(Signature::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self {
            words: SmallVec::new(),
        }
    }

    /// Builds a set from ids, in any order.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let sig = Signature::from_ids([ComponentId::from_index(3), ComponentId::from_index(1)]);
    /// assert_eq!(sig.iter().map(ComponentId::index).collect::<Vec<_>>(), [1, 3]);
    /// ```
    pub fn from_ids(ids: impl IntoIterator<Item = ComponentId>) -> Self {
        let mut sig = Self::new();
        for id in ids {
            sig.insert(id);
        }
        sig
    }

    /// Adds `id`; returns whether it was absent.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let mut sig = Signature::new();
    /// assert!(sig.insert(ComponentId::from_index(5)));
    /// assert!(!sig.insert(ComponentId::from_index(5)));
    /// ```
    pub fn insert(&mut self, id: ComponentId) -> bool {
        let (word, bit) = split(id);
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        let was_absent = self.words[word] & bit == 0;
        self.words[word] |= bit;
        was_absent
    }

    /// Removes `id`; returns whether it was present.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let mut sig = Signature::from_ids([ComponentId::from_index(5)]);
    /// assert!(sig.remove(ComponentId::from_index(5)));
    /// assert!(!sig.remove(ComponentId::from_index(5)));
    /// ```
    pub fn remove(&mut self, id: ComponentId) -> bool {
        let (word, bit) = split(id);
        let Some(w) = self.words.get_mut(word) else {
            return false;
        };
        let was_present = *w & bit != 0;
        *w &= !bit;
        self.trim();
        was_present
    }

    /// Whether `id` is in the set.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let sig = Signature::from_ids([ComponentId::from_index(2)]);
    /// assert!(sig.contains(ComponentId::from_index(2)));
    /// assert!(!sig.contains(ComponentId::from_index(200)));
    /// ```
    #[inline]
    pub fn contains(&self, id: ComponentId) -> bool {
        let (word, bit) = split(id);
        self.words.get(word).is_some_and(|w| w & bit != 0)
    }

    /// Whether `self` holds every id in `required` (the query match test).
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let id = ComponentId::from_index;
    /// let arch = Signature::from_ids([id(1), id(2), id(3)]);
    /// assert!(arch.is_superset(&Signature::from_ids([id(1), id(3)])));
    /// assert!(!arch.is_superset(&Signature::from_ids([id(100)])));
    /// ```
    #[inline]
    pub fn is_superset(&self, required: &Self) -> bool {
        // No trailing zero words (invariant 1), so a longer `required` has an id we lack.
        required.words.len() <= self.words.len()
            && required
                .words
                .iter()
                .zip(&self.words)
                .all(|(r, s)| r & !s == 0)
    }

    /// Whether every id of `self` is in `other`.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let id = ComponentId::from_index;
    /// let small = Signature::from_ids([id(1)]);
    /// assert!(small.is_subset(&Signature::from_ids([id(1), id(2)])));
    /// assert!(!small.is_subset(&Signature::new()));
    /// ```
    #[inline]
    pub fn is_subset(&self, other: &Self) -> bool {
        other.is_superset(self)
    }

    /// Whether the two sets share no id.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let id = ComponentId::from_index;
    /// let a = Signature::from_ids([id(1)]);
    /// assert!(a.is_disjoint(&Signature::from_ids([id(2)])));
    /// assert!(!a.is_disjoint(&Signature::from_ids([id(1), id(2)])));
    /// ```
    #[inline]
    pub fn is_disjoint(&self, other: &Self) -> bool {
        self.words.iter().zip(&other.words).all(|(a, b)| a & b == 0)
    }

    /// The union of both sets.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let id = ComponentId::from_index;
    /// let u = Signature::from_ids([id(1)]).union(&Signature::from_ids([id(90)]));
    /// assert_eq!(u, Signature::from_ids([id(1), id(90)]));
    /// ```
    pub fn union(&self, other: &Self) -> Self {
        let (long, short) = if self.words.len() >= other.words.len() {
            (self, other)
        } else {
            (other, self)
        };
        let mut words = long.words.clone();
        for (w, s) in words.iter_mut().zip(&short.words) {
            *w |= s;
        }
        Self { words }
    }

    /// The ids in both sets.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let id = ComponentId::from_index;
    /// let i = Signature::from_ids([id(1), id(90)]).intersection(&Signature::from_ids([id(1)]));
    /// assert_eq!(i, Signature::from_ids([id(1)]));
    /// ```
    pub fn intersection(&self, other: &Self) -> Self {
        let mut out = Self {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a & b)
                .collect(),
        };
        out.trim();
        out
    }

    /// Number of ids in the set.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let sig = Signature::from_ids([ComponentId::from_index(1), ComponentId::from_index(64)]);
    /// assert_eq!(sig.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// assert!(Signature::new().is_empty());
    /// assert!(!Signature::from_ids([ComponentId::from_index(0)]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        // Canonical form: the empty set has no words at all.
        self.words.is_empty()
    }

    /// The ids in ascending order.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, Signature};
    /// let sig: Signature = [7, 3, 65].map(ComponentId::from_index).into_iter().collect();
    /// assert_eq!(sig.iter().map(ComponentId::index).collect::<Vec<_>>(), [3, 7, 65]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = ComponentId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(ComponentId::from_index(i * WORD_BITS + bit))
            })
        })
    }

    /// Restores invariant 1 after a removal.
    fn trim(&mut self) {
        while self.words.last() == Some(&0) {
            self.words.pop();
        }
    }
}

fn split(id: ComponentId) -> (usize, u64) {
    let i = id.index();
    (i / WORD_BITS, 1u64 << (i % WORD_BITS))
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(|id| id.index()))
            .finish()
    }
}

impl FromIterator<ComponentId> for Signature {
    fn from_iter<I: IntoIterator<Item = ComponentId>>(iter: I) -> Self {
        Self::from_ids(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(ids: &[usize]) -> Signature {
        ids.iter().map(|&i| ComponentId::from_index(i)).collect()
    }

    #[test]
    fn canonical_after_remove() {
        let mut a = sig(&[1, 300]);
        assert!(a.remove(ComponentId::from_index(300)));
        assert_eq!(a, sig(&[1]));
        assert!(a.remove(ComponentId::from_index(1)));
        assert!(a.is_empty());
        assert_eq!(a, Signature::new());
    }

    #[test]
    fn subset_and_disjoint() {
        let big = sig(&[0, 5, 64, 255, 256, 700]);
        assert!(big.is_superset(&sig(&[5, 700])));
        assert!(!big.is_superset(&sig(&[5, 701])));
        assert!(!sig(&[5]).is_superset(&sig(&[5, 700])));
        assert!(big.is_disjoint(&sig(&[1, 2, 999])));
        assert!(!big.is_disjoint(&sig(&[256])));
        assert!(Signature::new().is_subset(&big));
    }

    #[test]
    fn iter_union_intersection() {
        let a = sig(&[3, 70, 400]);
        let b = sig(&[3, 71]);
        let ids = |s: &Signature| s.iter().map(|c| c.index()).collect::<Vec<_>>();
        assert_eq!(ids(&a.union(&b)), [3, 70, 71, 400]);
        assert_eq!(ids(&a.intersection(&b)), [3]);
        assert_eq!(a.union(&b).len(), 4);
        assert_eq!(a.intersection(&sig(&[400])), sig(&[400]));
    }
}
