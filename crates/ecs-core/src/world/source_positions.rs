//! Where a source stands in its target's list: the search that makes taking one source out of
//! a list O(1) whatever the list's length and whatever order sources leave in.
//!
//! Two tiers. The last removal's position (`hint`) and the list's end find siblings leaving
//! in list order or in reverse a step or two away, at no upkeep cost. A removal that misses near the hint in a long
//! list builds an index of that one list (source → position) and keeps it up to date from then
//! on: joins ([`SourcePositions::joined`]) and removals ([`SourcePositions::take_out`]) edit it
//! in O(1).
//!
//! # Invariants
//! The index is a cache, never trusted: a position is used only after the list is seen to hold
//! the source there, and a miss rebuilds that list's index from the list itself. So a list
//! changed behind the index's back (a hand-written list, a restore) costs one rebuild, never a
//! wrong removal; and an index of a list or target that is gone costs memory only, until the next
//! sweep (the indexed lists are swept of dead targets each time their number doubles).

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::entity::Entity;

/// Entries searched on each side of the hint before a long list's index is used.
const NEAR: usize = 8;

/// Lists up to this long are searched outward from the hint without an index: a scan of a
/// few cache lines costs less than upkeep of a map.
const INDEXED_ABOVE: usize = 256;

/// Lists longer than this behind the removed entry lose it by `swap_remove`: O(1) at any
/// fan-out, where an ordered removal would move every entry after it. Shorter tails keep
/// their order.
const ORDERED_TAIL: usize = 64;

type Fast = BuildHasherDefault<ahash::AHasher>;

/// One list's index: each source's position.
type ListIndex = HashMap<Entity, u32, Fast>;

/// The position search of target lists (see the module docs).
pub(crate) struct SourcePositions {
    /// The last source taken out of a list: `(target, position)`.
    hint: (Entity, usize),
    /// Indexes of long lists that were searched far from the hint, by list type and target;
    /// `None` until the first (so a world that never needs one pays a pointer test).
    indexed: Option<Box<Indexed>>,
}

#[derive(Default)]
struct Indexed {
    lists: HashMap<(TypeId, Entity), ListIndex, Fast>,
    /// The number of indexed lists at which the next sweep of dead targets runs.
    sweep_at: usize,
    /// Indexes built or rebuilt from their list (for tests that removals stay O(1)).
    #[cfg(test)]
    rebuilds: usize,
}

impl Default for SourcePositions {
    fn default() -> Self {
        SourcePositions {
            hint: (Entity::PLACEHOLDER, 0),
            indexed: None,
        }
    }
}

impl SourcePositions {
    /// Where `source` is in `sources`, the list of type `list` of `target` (a list names a
    /// source at most once).
    pub(crate) fn find(
        &mut self,
        list: TypeId,
        target: Entity,
        sources: &[Entity],
        source: Entity,
    ) -> Option<usize> {
        let hint = match self.hint {
            (t, at) if t == target => at,
            _ => 0,
        };
        if sources.len() <= INDEXED_ABOVE {
            return search_outward(sources, source, hint, usize::MAX);
        }
        // Near the last removal, then at the end (the newest sources, which leave first when
        // a list empties from the back).
        if let Some(at) = search_outward(sources, source, hint, NEAR)
            .or_else(|| search_outward(sources, source, sources.len(), NEAR))
        {
            return Some(at);
        }
        let indexed = self.indexed.get_or_insert_with(Box::default);
        let key = (list, target);
        if let Some(&at) = indexed.lists.get(&key).and_then(|index| index.get(&source)) {
            if sources.get(at as usize) == Some(&source) {
                return Some(at as usize);
            }
        }
        // First use, or the list changed behind the index: rebuild it from the list.
        #[cfg(test)]
        {
            indexed.rebuilds += 1;
        }
        let index = indexed.lists.entry(key).or_default();
        index.clear();
        index.extend(sources.iter().enumerate().map(|(i, &s)| (s, i as u32)));
        index.get(&source).map(|&at| at as usize)
    }

    /// Takes entry `at` out of `sources` (`target`'s list of type `list`): in order when at
    /// most [`ORDERED_TAIL`] entries follow it, else the last entry takes its place; the hint
    /// and the list's index follow.
    pub(crate) fn take_out(
        &mut self,
        list: TypeId,
        target: Entity,
        sources: &mut Vec<Entity>,
        at: usize,
    ) {
        let ordered = sources.len() - at <= ORDERED_TAIL;
        let removed = if ordered {
            sources.remove(at)
        } else {
            sources.swap_remove(at)
        };
        self.hint = (target, at);
        if sources.is_empty() {
            // The emptied list is removed: its index goes with it.
            if let Some(indexed) = self.indexed.as_mut() {
                indexed.lists.remove(&(list, target));
            }
            return;
        }
        let Some(index) = self.index_of(list, target) else {
            return;
        };
        index.remove(&removed);
        if ordered {
            for (i, &s) in sources.iter().enumerate().skip(at) {
                index.insert(s, i as u32);
            }
        } else if let Some(&moved) = sources.get(at) {
            index.insert(moved, at as u32);
        }
    }

    /// Drops the indexes of dead targets' lists, once the number of indexed lists has doubled
    /// since the last sweep (amortised O(1) per index built); `alive` tells a live entity.
    pub(crate) fn sweep(&mut self, alive: impl Fn(Entity) -> bool) {
        if let Some(indexed) = self.indexed.as_mut() {
            if indexed.lists.len() > indexed.sweep_at {
                indexed.lists.retain(|&(_, t), _| alive(t));
                indexed.sweep_at = (2 * indexed.lists.len()).max(8);
            }
        }
    }

    /// Sources appended to `target`'s list of type `list`, the first at position `first`.
    #[inline]
    pub(crate) fn joined(
        &mut self,
        list: TypeId,
        target: Entity,
        first: usize,
        sources: impl IntoIterator<Item = Entity>,
    ) {
        if self.indexed.is_none() {
            return;
        }
        if let Some(index) = self.index_of(list, target) {
            for (i, s) in sources.into_iter().enumerate() {
                index.insert(s, (first + i) as u32);
            }
        }
    }

    /// How many lists have an index (for tests of the sweep).
    #[cfg(test)]
    fn indexed_lists(&self) -> usize {
        self.indexed.as_ref().map_or(0, |i| i.lists.len())
    }

    fn index_of(&mut self, list: TypeId, target: Entity) -> Option<&mut ListIndex> {
        self.indexed.as_mut()?.lists.get_mut(&(list, target))
    }
}

/// Where `source` is in `sources`, searching outward from `hint` at most `reach` entries on
/// each side.
fn search_outward(sources: &[Entity], source: Entity, hint: usize, reach: usize) -> Option<usize> {
    let hint = hint.min(sources.len());
    let (before, after) = sources.split_at(hint);
    let mut back = before.iter().rev();
    let mut ahead = after.iter();
    for step in 0..reach {
        match (ahead.next(), back.next()) {
            (None, None) => return None,
            (a, b) => {
                if a == Some(&source) {
                    return Some(hint + step);
                }
                if b == Some(&source) {
                    return Some(hint - 1 - step);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(index: u64) -> Entity {
        Entity::from_bits(1 << 32 | index).unwrap()
    }

    fn ids(n: u32) -> Vec<Entity> {
        (0..n).map(|i| id(u64::from(i))).collect()
    }

    /// Takes every entry out in a scrambled order, checking each position found against a scan.
    fn drain_scrambled(positions: &mut SourcePositions, list: &mut Vec<Entity>, target: Entity) {
        let mut order = list.clone();
        // A fixed shuffle: stride through the list by a step prime to its length.
        let n = order.len();
        order = (0..n).map(|i| order[(i * 7919) % n]).collect();
        for source in order {
            let at = positions
                .find(TypeId::of::<u8>(), target, list, source)
                .expect("listed");
            assert_eq!(list[at], source);
            positions.take_out(TypeId::of::<u8>(), target, list, at);
            assert!(!list.contains(&source));
        }
        assert!(list.is_empty());
    }

    #[test]
    fn scrambled_removals_from_a_long_list_find_every_source() {
        let target = id(1_000_000);
        let mut positions = SourcePositions::default();
        let mut list = ids(2_000);
        drain_scrambled(&mut positions, &mut list, target);
        // One index built, then kept up to date: no removal scanned the list again.
        assert_eq!(positions.indexed.as_ref().unwrap().rebuilds, 1);
        // The emptied list's index went with it.
        assert_eq!(positions.indexed_lists(), 0);
    }

    #[test]
    fn a_list_changed_behind_the_index_is_rebuilt_not_misread() {
        let target = id(1_000_000);
        let mut positions = SourcePositions::default();
        let mut list = ids(1_000);
        let far = list[700];
        let at = positions
            .find(TypeId::of::<u8>(), target, &list, far)
            .unwrap();
        positions.take_out(TypeId::of::<u8>(), target, &mut list, at);
        // Rewritten without the index hearing of it (as a hand-written list is).
        list.reverse();
        list.push(far);
        for &source in &[list[10], far, list[500]] {
            let at = positions
                .find(TypeId::of::<u8>(), target, &list, source)
                .unwrap();
            assert_eq!(list[at], source);
        }
        let gone = id(5_000);
        assert_eq!(
            positions.find(TypeId::of::<u8>(), target, &list, gone),
            None
        );
    }

    #[test]
    fn joined_sources_are_found_without_a_rebuild_and_dead_targets_are_swept() {
        let mut positions = SourcePositions::default();
        let mut list = ids(600);
        let target = id(1_000_000);
        let first = list[300];
        let at = positions
            .find(TypeId::of::<u8>(), target, &list, first)
            .unwrap();
        positions.take_out(TypeId::of::<u8>(), target, &mut list, at);
        let from = list.len();
        list.extend((0..100).map(|i| id(10_000 + i)));
        positions.joined(
            TypeId::of::<u8>(),
            target,
            from,
            list[from..].iter().copied(),
        );
        let index = positions.index_of(TypeId::of::<u8>(), target).unwrap();
        assert_eq!(index.len(), list.len());
        for (i, &s) in list.iter().enumerate() {
            assert_eq!(
                positions.find(TypeId::of::<u8>(), target, &list, s),
                Some(i)
            );
        }
        assert_eq!(positions.indexed.as_ref().unwrap().rebuilds, 1);
        // Lists of targets that died are swept once the indexed lists double.
        for t in 0..20 {
            let dead = id(2_000_000 + t);
            let l = ids(300);
            let _ = positions.find(TypeId::of::<u8>(), dead, &l, l[150]);
            positions.sweep(|e| e == target);
        }
        assert!(positions.indexed_lists() < 20);
    }
}
