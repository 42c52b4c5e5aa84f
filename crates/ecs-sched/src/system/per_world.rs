//! Parameter state kept per world, so one schedule can run on several worlds in turn.
//!
//! A system's parameter state belongs to the world it was built for: query caches hold that
//! world's archetype ids, an `EventReader`'s cursor counts that world's events. A schedule
//! alternating between worlds A and B used to rebuild the state at each switch, so A's reader
//! started again at its first event and read it twice. [`PerWorld`] keeps one state per world
//! instead: switching back to A finds A's state as it was.
//!
//! # Invariants
//! 1. At most one entry per [`WorldId`].
//! 2. The entry used last is at the front (`current` looks only there).
//! 3. At most [`PerWorld::CAPACITY`] entries: beyond that the one used longest ago is dropped
//!    (a world that comes back after that many others starts from a fresh state, as a new
//!    system would; documented in docs/scheduling.md).

use ecs_core::WorldId;

/// One state per world, most recently used first (see the module doc).
pub(crate) struct PerWorld<S> {
    entries: Vec<(WorldId, S)>,
}

impl<S> Default for PerWorld<S> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<S> PerWorld<S> {
    /// Worlds whose states are kept at once.
    pub(crate) const CAPACITY: usize = 8;

    /// Makes `world`'s state the current one, building it with `init` if there is none.
    /// Returns whether it was built now.
    pub(crate) fn select(&mut self, world: WorldId, init: impl FnOnce() -> S) -> bool {
        if let Some(at) = self.entries.iter().position(|(id, _)| *id == world) {
            // Invariant 2: the selected world moves to the front, the others keep their order.
            self.entries[..=at].rotate_right(1);
            return false;
        }
        let state = init();
        if self.entries.len() == Self::CAPACITY {
            self.entries.pop();
        }
        self.entries.insert(0, (world, state));
        true
    }

    /// The current state, if it is `world`'s.
    pub(crate) fn current(&mut self, world: WorldId) -> Option<&mut S> {
        match self.entries.first_mut() {
            Some((id, state)) if *id == world => Some(state),
            _ => None,
        }
    }

    /// `world`'s state, wherever it is, for reading.
    pub(crate) fn get(&self, world: WorldId) -> Option<&S> {
        self.entries
            .iter()
            .find(|(id, _)| *id == world)
            .map(|(_, state)| state)
    }

    /// Drops `world`'s state (it is built afresh when next selected).
    pub(crate) fn remove(&mut self, world: WorldId) {
        self.entries.retain(|(id, _)| *id != world);
    }

    /// `world`'s state, wherever it is.
    pub(crate) fn get_mut(&mut self, world: WorldId) -> Option<&mut S> {
        self.entries
            .iter_mut()
            .find(|(id, _)| *id == world)
            .map(|(_, state)| state)
    }
}

#[cfg(test)]
mod tests {
    use ecs_core::World;

    use crate::system::per_world::PerWorld;

    #[test]
    fn each_world_keeps_its_own_state_and_the_oldest_goes_first() {
        let worlds: Vec<World> = (0..=PerWorld::<u32>::CAPACITY)
            .map(|_| World::new())
            .collect();
        let mut states = PerWorld::default();
        assert!(states.select(worlds[0].id(), || 10));
        assert!(states.select(worlds[1].id(), || 20));
        *states.current(worlds[1].id()).unwrap() += 1;
        assert!(states.current(worlds[0].id()).is_none(), "not current");
        assert!(!states.select(worlds[0].id(), || unreachable!()));
        assert_eq!(states.current(worlds[0].id()).copied(), Some(10));
        assert_eq!(states.get_mut(worlds[1].id()).copied(), Some(21));
        // Filling up drops the world used longest ago: world 1, not world 0.
        for w in &worlds[2..] {
            states.select(w.id(), || 0);
        }
        assert_eq!(states.entries.len(), PerWorld::<u32>::CAPACITY);
        assert!(states.get_mut(worlds[1].id()).is_none());
        assert_eq!(states.get_mut(worlds[0].id()).copied(), Some(10));
    }
}
