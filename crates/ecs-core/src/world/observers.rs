//! Observers: code that runs, with the whole world, when a lifecycle change happens to a
//! component type ([`ObserverKey::Lifecycle`]) or an event is triggered on an entity
//! ([`ObserverKey::Event`]). This is the world's half; `ecs_sched` builds observers that are
//! ordinary systems on it (`Trigger<E>` parameters, `Commands`, queries).
//!
//! Order and timing, the rules determinism rests on:
//! - the observers of one event run in registration order;
//! - a `Replace` / `Remove` observer runs *before* its change, right after that component's
//!   `on_replace` / `on_remove` hook, and reads the old value (as in bevy); what it hands to
//!   [`World::defer`] (an `ecs_sched` observer's `Commands`) runs once the change completes,
//!   in order with the commands the hooks recorded;
//! - an `Add` / `Insert` observer runs after the change completes, from the world's queue of
//!   hook commands (see `world/hooks.rs`), right after the commands the change's own hooks
//!   recorded for that component;
//! - an event triggered with [`World::run_observers`] runs its observers at once, in order;
//!   changes they make run their own hooks and observers before the next observer starts.
//!
//! Everything happens on the thread that holds `&mut World`, in the order of the structural
//! changes, so a schedule with observers gives the same results on any thread count.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::entity::Entity;
use crate::world::{HookCommand, Lifecycle, ObserverId, ObserverKey, ObserverSlot, World};

impl World {
    /// Registers `run` to be called, with the world and the entity concerned, for each event
    /// with `key`: for every entity, or with `entities`, only for those. The low-level form
    /// of `ecs_sched`'s `add_observer`, for code that needs no system parameters.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_core::{Lifecycle, ObserverKey, World};
    /// struct Hp(u32);
    /// struct Wounded;
    /// let mut world = World::new();
    /// world.add_observer_fn(
    ///     ObserverKey::Lifecycle(Lifecycle::Insert, TypeId::of::<Hp>()),
    ///     None,
    ///     |world, entity| {
    ///         if world.get::<Hp>(entity).is_ok_and(|hp| hp.0 < 10) {
    ///             world.insert(entity, (Wounded,)).unwrap(); // the whole world is at hand
    ///         }
    ///     },
    /// );
    /// let e = world.spawn((Hp(5),));
    /// assert!(world.has::<Wounded>(e));
    /// ```
    pub fn add_observer_fn(
        &mut self,
        key: ObserverKey,
        entities: Option<Vec<Entity>>,
        run: impl Fn(&mut World, Entity) + Send + Sync + 'static,
    ) -> ObserverId {
        if let ObserverKey::Lifecycle(_, type_id) = key {
            // Changes of the type now take the path that runs hooks (and observers).
            self.components.set_hooked(type_id);
        }
        let id = self.callbacks.observers.slots.len() as u32;
        self.callbacks.observers.slots.push(Some(ObserverSlot {
            key,
            entities,
            run: Arc::new(run),
        }));
        self.callbacks
            .observers
            .by_key
            .entry(key)
            .or_default()
            .push(id);
        self.hooks_changed();
        ObserverId(id)
    }

    /// Removes observer `id`; returns whether it was registered. An observer may remove
    /// itself while it runs.
    ///
    /// ```
    /// # use ecs_core::{ObserverKey, World};
    /// struct Ping;
    /// let mut world = World::new();
    /// let id = world.add_observer_fn(ObserverKey::Event(std::any::TypeId::of::<Ping>()), None, |_, _| {});
    /// assert!(world.remove_observer(id));
    /// assert!(!world.remove_observer(id));
    /// ```
    pub fn remove_observer(&mut self, id: ObserverId) -> bool {
        let Some(slot) = self
            .callbacks
            .observers
            .slots
            .get_mut(id.0 as usize)
            .and_then(Option::take)
        else {
            return false;
        };
        if let Some(list) = self.callbacks.observers.by_key.get_mut(&slot.key) {
            list.retain(|&s| s != id.0);
        }
        self.hooks_changed();
        true
    }

    /// Runs the observers of `key` that watch `entity`, in registration order. Observers
    /// registered while these run wait for the next event.
    pub fn run_observers(&mut self, key: ObserverKey, entity: Entity) {
        let Some(ids) = self.callbacks.observers.by_key.get(&key) else {
            return;
        };
        let runs: Vec<_> = ids
            .iter()
            .filter_map(|&id| {
                let slot = self.callbacks.observers.slots[id as usize].as_ref()?;
                let watches = slot
                    .entities
                    .as_ref()
                    .is_none_or(|list| list.contains(&entity));
                watches.then(|| Arc::clone(&slot.run))
            })
            .collect();
        for run in runs {
            run(self, entity);
        }
    }

    /// Runs the observers of `key` on `entity` before the change that raised it, collecting
    /// what they [`defer`](World::defer) into `queue` (behind the commands recorded so far).
    /// Deferral scopes nest: a change an observer makes directly runs its own observers with
    /// their own scope. If an observer panics, what was deferred so far is dropped with the
    /// change's queue and the outer scope is put back.
    pub(crate) fn run_observers_before_change(
        &mut self,
        key: ObserverKey,
        entity: Entity,
        queue: &mut Vec<HookCommand>,
    ) {
        let outer = self.callbacks.queue.deferred.replace(Vec::new());
        let ran = catch_unwind(AssertUnwindSafe(|| self.run_observers(key, entity)));
        let deferred = std::mem::replace(&mut self.callbacks.queue.deferred, outer);
        // Ids the observers reserved (a deferred spawn's) go live now, empty until their
        // command runs: the change about to happen frees rows, which needs no reservation
        // pending.
        self.flush();
        match ran {
            Ok(()) => queue.extend(deferred.unwrap_or_default()),
            Err(panic) => {
                drop(deferred);
                resume_unwind(panic);
            }
        }
    }

    /// Runs `f` on the world once the structural change in progress completes, when called
    /// from an `OnReplace` / `OnRemove` observer (those run *before* their change, while the
    /// old value can be read); at once otherwise. `ecs_sched` applies an observer's `Commands`
    /// through it, so an observer that despawns the entity whose removal it watches lets that
    /// removal finish first, as in bevy.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_core::{Lifecycle, ObserverKey, World};
    /// struct Hp(u32);
    /// struct Graves(Vec<u32>);
    /// let mut world = World::new();
    /// world.insert_resource(Graves(Vec::new()));
    /// world.add_observer_fn(
    ///     ObserverKey::Lifecycle(Lifecycle::Remove, TypeId::of::<Hp>()),
    ///     None,
    ///     |world, entity| {
    ///         let last = world.get::<Hp>(entity).unwrap().0; // still there: the removal waits
    ///         world.defer(move |world| world.resource_mut::<Graves>().0.push(last));
    ///         assert!(world.resource::<Graves>().0.is_empty()); // not yet
    ///     },
    /// );
    /// let e = world.spawn((Hp(7),));
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.resource::<Graves>().0, [7]);
    /// ```
    pub fn defer(&mut self, f: impl FnOnce(&mut World) + Send + Sync + 'static) {
        match &mut self.callbacks.queue.deferred {
            Some(deferred) => deferred.push(Box::new(f)),
            None => f(self),
        }
    }

    /// Whether [`World::defer`] would queue (an `OnReplace` / `OnRemove` observer is running
    /// before its change) rather than run at once.
    pub fn is_deferring(&self) -> bool {
        self.callbacks.queue.deferred.is_some()
    }

    /// Whether some observer watches lifecycle change `kind` of the type `type_id`.
    pub(crate) fn observes(&self, kind: Lifecycle, type_id: std::any::TypeId) -> bool {
        !self.callbacks.observers.by_key.is_empty()
            && self
                .callbacks
                .observers
                .by_key
                .get(&ObserverKey::Lifecycle(kind, type_id))
                .is_some_and(|list| !list.is_empty())
    }
}
