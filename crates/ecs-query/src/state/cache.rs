//! The world-level cache behind one-shot queries: `world.query::<Q>()` keeps its
//! [`QueryState`] in the world's [`QueryCache`](ecs_core::QueryCache), keyed by the query and
//! filter types, so a later call only tests the archetypes created since (as a kept state
//! does) instead of matching every archetype again.
//!
//! Change detection is unchanged: a cached state never starts a run of its own
//! ([`RunTicks::one_shot`](crate::state::RunTicks) advances the world's tick without moving
//! the state's window), so every one-shot query sees every chunk as changed, exactly like the
//! fresh state each call used to build.

use ecs_core::World;

use crate::fetch::{ReadOnlyQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::state::QueryState;

/// The cached state of the one-shot query `Q` with filter `F`. Only this module names the
/// type, so no other code can put an entry under its `TypeId` into a world's cache.
///
/// # Invariants
/// 1. `0` was built by [`QueryState::new`] on the world whose cache holds it, so its ids are
///    that world's registry's (the cache's own invariant 2 ties it to that registry).
/// 2. No run was ever started on `0` (its change window is a fresh state's).
struct OneShot<Q: WorldQuery, F: QueryFilter>(QueryState<Q, F>);

/// The world's cached state for `Q` with `F`, brought up to date with the world's archetypes
/// (built and stored on first use), beside the world, now shared for `'w`.
///
/// # Panics
/// If the query aliases itself (when first built).
pub(crate) fn cached_state<'w, Q, F>(world: &'w mut World) -> (&'w World, &'w QueryState<Q, F>)
where
    Q: WorldQuery + 'static,
    F: QueryFilter + 'static,
{
    let id = world.id();
    let version = world.chunk_set_version();
    let (cache, archetypes) = world.query_cache_mut();
    let found = match cache.get_mut::<OneShot<Q, F>>() {
        Some(entry) => {
            entry.0.update_from(id, archetypes);
            entry.0.refresh_chunk_list(version, archetypes);
            true
        }
        None => false,
    };
    if !found {
        let state = QueryState::<Q, F>::new(world);
        world.query_cache_mut().0.insert(OneShot(state));
    }
    let world: &'w World = world;
    let entry = world.query_cache().get::<OneShot<Q, F>>();
    (world, &entry.expect("stored above").0)
}

/// The world's cached state for the read-only `Q` with `F`, if there is one and it is up to
/// date (a shared borrow cannot update it; `world.query::<Q>()` does).
pub(crate) fn current_state<Q, F>(world: &World) -> Option<&QueryState<Q, F>>
where
    Q: ReadOnlyQuery + 'static,
    F: QueryFilter + 'static,
{
    let cache = world.query_cache();
    if cache.registry_id() != world.components().registry_id() {
        return None;
    }
    let state = &cache.get::<OneShot<Q, F>>()?.0;
    state.is_current(world).then_some(state)
}
