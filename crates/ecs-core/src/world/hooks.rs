//! Lifecycle hooks: per component type, functions the world calls at every structural change
//! that adds, writes over or removes a value of that type.
//!
//! The order, on every path (spawn, `spawn_batch`, insert, remove, `take`, despawn, `clear`,
//! and everything commands do, since they call these):
//! - **gaining** (spawn, insert of a type the entity lacks): after the row is written, the
//!   components the new types require and the entity lacks are inserted (`world/required.rs`),
//!   then `on_add` for each new type, then `on_insert` for every type of the bundle (new and
//!   overwritten), both in bundle order;
//! - **overwriting** (insert of a type the entity has): `on_replace` before the old value is
//!   dropped, then `on_insert` after the new one is written;
//! - **losing** (remove, `take`, despawn, `clear`): before the row moves, `on_replace` then
//!   `on_remove` for each type lost, the value still readable (bundle order for remove,
//!   component-id order for despawn).
//!
//! Observers of a type follow its hook for the same change: `OnReplace` / `OnRemove` ones at
//! once, before the change, with the old value readable (what they hand to [`World::defer`],
//! as `ecs_sched` does with their commands, runs after the change); `OnAdd` / `OnInsert` ones
//! after the change, from the queue below. One thread holds `&mut World` throughout, so the
//! order is the same on any thread count.
//!
//! Restore and compaction run no hooks: compaction moves no component, and a restore puts
//! back a state in which hooks already ran (a snapshot holds both sides of every
//! relationship); state a hook keeps outside the world must be rolled back with it.
//!
//! A hook sees the world through [`DeferredWorld`]: reads only. Changes it records run after
//! the structural change completes and before the method that made it returns, in the order
//! they were recorded; commands recorded while those run queue behind them (a breadth-first
//! order, so a deep hierarchy's despawn does not recurse). If a hook panics, the world stays
//! consistent: a hook before the change stops it (nothing changes, an inserted bundle is
//! dropped), except a despawn that is a consequence of another (a subtree's cascade), which is
//! made anyway; a hook after it leaves it made. Where the change is made, its other hooks still
//! run (a relationship's upkeep may be among them: one panicking `on_add` must not leave a
//! child unlisted). Either way every queued command still runs, a panicking hook's own
//! recorded ones too (the relationship fix-ups of the changes made so far finish), then the
//! first panic goes on. `tests/panic_model.rs` checks this over random edits.
//!
//! Cost: a world where no registered type has hooks pays one flag test per structural change
//! (`Components::any_hooks`); with hooks (every world has `ChildOf`'s), a spawn, insert or
//! remove of a bundle with no hooked type looks up the bundle's ids once, and after that a
//! compare of its `TypeId` against the few bundles last found hook-free
//! (`Components::may_hook`). A despawn looks at the entity's types.

use std::any::type_name;
use std::ops::Deref;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::component::bundle::{bundle_ids, Bundle, BundleIds};
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::error::WorldError;
use crate::ids::ArchetypeId;
use crate::unwind::keep_first_panic;
use crate::world::{
    ComponentHook, ComponentHooks, DeferredWorld, HookCommand, HookContext, Lifecycle, ObserverKey,
    SourceUpkeep, World,
};

impl ComponentHooks {
    /// No hooks; add them with the `on_*` setters.
    pub const fn new() -> Self {
        Self {
            on_add: None,
            on_insert: None,
            on_replace: None,
            on_remove: None,
            check_despawn: None,
            check_invariants: None,
            relationship_target: false,
            relationship: false,
            immutable: false,
            upkeep: None,
        }
    }

    /// Makes the type *immutable* (bevy's `#[component(immutable)]`): its values change only
    /// through insert, which runs `on_replace` / `on_insert`, so hooks see every change.
    /// `World::get_mut` returns [`ComponentError::Immutable`](crate::ComponentError::Immutable),
    /// and a query with `RefRW<T>` / `&mut T`, or `EntityMut::get_mut::<T>()`, panics naming it.
    ///
    /// ```
    /// # use ecs_core::{ComponentError, ComponentHooks, World};
    /// struct Cell(u32);
    /// let mut world = World::new();
    /// world.set_component_hooks::<Cell>(ComponentHooks::new().immutable()).unwrap();
    /// let e = world.spawn((Cell(1),));
    /// assert!(matches!(world.get_mut::<Cell>(e), Err(ComponentError::Immutable { .. })));
    /// world.insert(e, (Cell(2),)).unwrap(); // the way to change it
    /// assert_eq!(world.get::<Cell>(e).unwrap().0, 2);
    /// ```
    #[must_use]
    pub const fn immutable(mut self) -> Self {
        self.immutable = true;
        self
    }

    /// Runs `hook` after an entity gains the type (spawn, or insert of a type it lacked).
    #[must_use]
    pub const fn on_add(mut self, hook: ComponentHook) -> Self {
        self.on_add = Some(hook);
        self
    }

    /// Runs `hook` after a value of the type is written by spawn or insert, also over an old
    /// value.
    #[must_use]
    pub const fn on_insert(mut self, hook: ComponentHook) -> Self {
        self.on_insert = Some(hook);
        self
    }

    /// Runs `hook` before a value of the type is overwritten or removed (despawn included),
    /// while the old value is still readable.
    #[must_use]
    pub const fn on_replace(mut self, hook: ComponentHook) -> Self {
        self.on_replace = Some(hook);
        self
    }

    /// Runs `hook` before an entity loses the type (remove, take, despawn), while the value is
    /// still readable; after `on_replace`.
    #[must_use]
    pub const fn on_remove(mut self, hook: ComponentHook) -> Self {
        self.on_remove = Some(hook);
        self
    }

    /// Whether no hook is set.
    ///
    /// ```
    /// # use ecs_core::{ComponentHooks, DeferredWorld, HookContext};
    /// fn noop(_: DeferredWorld<'_>, _: HookContext) {}
    /// assert!(ComponentHooks::new().is_empty());
    /// assert!(!ComponentHooks::new().on_remove(noop).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.on_add.is_none()
            && self.on_insert.is_none()
            && self.on_replace.is_none()
            && self.on_remove.is_none()
            && self.check_despawn.is_none()
    }
}

impl std::fmt::Debug for ComponentHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentHooks")
            .field("on_add", &self.on_add.is_some())
            .field("on_insert", &self.on_insert.is_some())
            .field("on_replace", &self.on_replace.is_some())
            .field("on_remove", &self.on_remove.is_some())
            .finish()
    }
}

impl<'w> DeferredWorld<'w> {
    /// The world, for reads that outlive this view.
    pub fn world(&self) -> &'w World {
        self.world
    }

    /// Records changes to make once the structural change that runs this hook is complete.
    pub fn commands(&mut self) -> HookCommands<'_> {
        HookCommands {
            queue: self.commands,
        }
    }
}

impl Deref for DeferredWorld<'_> {
    type Target = World;

    fn deref(&self) -> &World {
        self.world
    }
}

/// Changes a hook records (see [`DeferredWorld::commands`]). Each runs on the world after the
/// structural change completes; one about an entity that no longer exists by then (or lacks
/// the components it removes) does nothing, as its effect would have left with the entity.
pub struct HookCommands<'a> {
    queue: &'a mut Vec<HookCommand>,
}

impl HookCommands<'_> {
    /// Records `f`, to run with the whole world.
    pub fn add(&mut self, f: impl FnOnce(&mut World) + Send + Sync + 'static) {
        self.queue.push(Box::new(f));
    }

    /// Records `world.insert(entity, bundle)`.
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) {
        self.add(move |world| {
            let _ = world.insert(entity, bundle);
        });
    }

    /// Records `world.remove::<B>(entity)`, the values dropped.
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.add(move |world| drop(world.remove::<B>(entity)));
    }

    /// Records a despawn of `entity`. It is a consequence of a change already made, so a
    /// relationship's `Refuse` policy does not stop it (see `DespawnPolicy`).
    pub fn despawn(&mut self, entity: Entity) {
        self.add(move |world| {
            let _ = world.despawn_as_consequence(entity);
        });
    }

    /// Records a spawn of `bundle`.
    pub fn spawn<B: Bundle>(&mut self, bundle: B) {
        self.add(move |world| {
            world.spawn(bundle);
        });
    }
}

/// What a structural change's hooks leave for after the change: the archetype the entity
/// left (an insert tells new types from overwritten ones by it) and the recorded commands.
#[derive(Default)]
pub(crate) struct PendingHooks {
    from: Option<ArchetypeId>,
    queue: Vec<HookCommand>,
}

impl ComponentHooks {
    /// The hook for lifecycle change `kind`.
    fn get(&self, kind: Lifecycle) -> Option<ComponentHook> {
        match kind {
            Lifecycle::Add => self.on_add,
            Lifecycle::Insert => self.on_insert,
            Lifecycle::Replace => self.on_replace,
            Lifecycle::Remove => self.on_remove,
        }
    }
}

const ON_ADD: Lifecycle = Lifecycle::Add;
const ON_INSERT: Lifecycle = Lifecycle::Insert;
pub(super) const ON_REPLACE: Lifecycle = Lifecycle::Replace;
pub(super) const ON_REMOVE: Lifecycle = Lifecycle::Remove;

impl World {
    /// Installs lifecycle hooks for `T` (see `world/hooks.rs` in the crate's source, and the
    /// "Relationships and hooks" chapter of the docs, for the order on each path). Hooks are
    /// plain functions: state they keep lives in resources or components.
    ///
    /// # Errors
    /// [`WorldError::HooksAlreadySet`] if `T` has hooks (relationships install theirs; two
    /// sets for one type would be run in an order nobody chose), and
    /// [`WorldError::HooksAfterUse`] if an entity already holds a `T` (its `on_add` would never
    /// have run). Nothing changes then.
    ///
    /// ```
    /// # use std::sync::atomic::{AtomicU32, Ordering};
    /// # use ecs_core::{ComponentHooks, DeferredWorld, HookContext, World, WorldError};
    /// struct Health(u32);
    /// struct Removed(AtomicU32);
    /// fn count(world: DeferredWorld<'_>, ctx: HookContext) {
    ///     assert_eq!(world.get::<Health>(ctx.entity).unwrap().0, 7); // still readable
    ///     world.resource::<Removed>().0.fetch_add(1, Ordering::Relaxed);
    /// }
    /// let mut world = World::new();
    /// world.insert_resource(Removed(AtomicU32::new(0)));
    /// world.set_component_hooks::<Health>(ComponentHooks::new().on_remove(count)).unwrap();
    /// let e = world.spawn((Health(7),));
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.resource::<Removed>().0.load(Ordering::Relaxed), 1);
    /// assert!(matches!(
    ///     world.set_component_hooks::<Health>(ComponentHooks::new()),
    ///     Err(WorldError::HooksAlreadySet { .. })
    /// ));
    /// ```
    pub fn set_component_hooks<T: Component>(
        &mut self,
        hooks: ComponentHooks,
    ) -> Result<(), WorldError> {
        self.check_hooks_settable::<T>()?;
        let type_id = std::any::TypeId::of::<T>();
        self.callbacks.hooks.insert(type_id, hooks);
        self.components.set_hooked(type_id);
        self.hooks_changed();
        if hooks.immutable {
            self.components.set_immutable(type_id);
        }
        Ok(())
    }

    /// Whether [`World::set_component_hooks`] would accept hooks for `T` now: the checks it
    /// makes before installing anything, for callers that install several sets at once and
    /// must check them all first.
    pub(crate) fn check_hooks_settable<T: Component>(&self) -> Result<(), WorldError> {
        let component = type_name::<T>();
        if self
            .callbacks
            .hooks
            .contains_key(&std::any::TypeId::of::<T>())
        {
            return Err(WorldError::HooksAlreadySet { component });
        }
        if let Some(id) = self.components.id::<T>() {
            let in_use = self
                .archetypes
                .as_slice()
                .iter()
                .any(|arch| !arch.is_empty() && arch.signature().contains(id));
            if in_use {
                return Err(WorldError::HooksAfterUse { component });
            }
        }
        Ok(())
    }

    /// The hooks installed for `T`, if any.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let world = World::new();
    /// assert!(world.component_hooks::<u32>().is_none());
    /// assert!(world.component_hooks::<ChildOf>().is_some()); // every world keeps its hierarchy
    /// ```
    pub fn component_hooks<T: Component>(&self) -> Option<ComponentHooks> {
        self.callbacks
            .hooks
            .get(&std::any::TypeId::of::<T>())
            .copied()
    }

    /// The hooks of registered component `id`, if it has any.
    #[inline]
    pub(super) fn hooks_of(&self, id: ComponentId) -> Option<&ComponentHooks> {
        let info = self.components.info(id);
        if info.has_hooks() {
            self.callbacks.hooks.get(&info.type_id())
        } else {
            None
        }
    }

    fn any_hooked(&self, ids: &[ComponentId]) -> bool {
        ids.iter().any(|&id| self.components.info(id).has_hooks())
    }

    /// Runs the `kind` hook of each of `ids` that has one, in order, each followed by the
    /// observers of that change: at once for `Replace` / `Remove` (the value is still there to
    /// read; what they [`defer`](World::defer) joins `queue`), queued for `Add` / `Insert` (they
    /// run once the change is complete).
    ///
    /// `made`: the change is made whatever the hooks do (it is made already, or it is a
    /// consequence's despawn). A panicking hook then does not stop the others — a
    /// relationship's upkeep may be among them — and is held for `finish_hooks` to pass on
    /// once the queue has run. Otherwise a panic stops the change and drops the queue.
    pub(super) fn run_hooks(
        &mut self,
        kind: Lifecycle,
        entity: Entity,
        ids: &[ComponentId],
        despawning: bool,
        made: bool,
        queue: &mut Vec<HookCommand>,
    ) {
        for &component in ids {
            let info = self.components.info(component);
            if !info.has_hooks() {
                continue;
            }
            let type_id = info.type_id();
            if let Some(hook) = self.callbacks.hooks.get(&type_id).and_then(|h| h.get(kind)) {
                let world = DeferredWorld {
                    world: self,
                    commands: &mut *queue,
                };
                let ctx = HookContext {
                    entity,
                    component,
                    despawning,
                };
                if made {
                    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| hook(world, ctx))) {
                        self.callbacks.queue.hold_panic(panic);
                    }
                } else {
                    hook(world, ctx);
                }
            }
            if self.observes(kind, type_id) {
                let key = ObserverKey::Lifecycle(kind, type_id);
                if matches!(kind, Lifecycle::Replace | Lifecycle::Remove) {
                    self.run_observers_before_change(key, entity, queue);
                } else {
                    queue.push(Box::new(move |world: &mut World| {
                        world.run_observers(key, entity);
                    }));
                }
            }
        }
    }

    /// Queues the commands hooks recorded and, unless an outer change is already draining the
    /// queue, runs them (and those they cause) in order. A panicking command does not stop the
    /// others: they are relationship fix-ups and cascades the world needs to stay consistent,
    /// so every queued command runs, and then the first panic goes on (the queue is empty, so
    /// the next change starts clean).
    pub(crate) fn finish_hooks(&mut self, queue: Vec<HookCommand>) {
        self.callbacks.queue.pending.extend(queue);
        if self.callbacks.queue.draining {
            return;
        }
        self.callbacks.queue.draining = true;
        let mut first = None;
        while let Some(command) = self.callbacks.queue.pending.pop_front() {
            keep_first_panic(&mut first, catch_unwind(AssertUnwindSafe(|| command(self))));
        }
        self.callbacks.queue.draining = false;
        // A hook's panic came first (its change's commands were queued behind it).
        let mut panic = self.callbacks.queue.take_held_panic();
        keep_first_panic(&mut panic, first.map_or(Ok(()), Err));
        if let Some(panic) = panic {
            resume_unwind(panic);
        }
    }

    /// After a spawn of `B` when hooks exist: what `B` requires, `on_add` then `on_insert`
    /// for its hooked types.
    #[cold]
    #[inline(never)]
    pub(crate) fn spawned_with_hooks<B: Bundle>(&mut self, entity: Entity) {
        let ids = bundle_ids::<B>(&mut self.components);
        if !self.any_hooked(&ids) {
            self.components.note_unhooked::<B>();
            return;
        }
        let at = self.location(entity).expect("just spawned");
        let row = at.row as usize;
        self.spawned_rows_with_hooks(&[entity], at.archetype, row..row + 1, &ids);
    }

    /// After `entities` were spawned with a bundle of `ids` into rows `rows` of `archetype`
    /// (in row order, nothing run since): the relationship upkeep directly when the bundle's
    /// one hooked type is a relationship source whose upkeep may run now
    /// ([`World::direct_upkeep`]), else [`World::added_with_hooks`].
    pub(crate) fn spawned_rows_with_hooks(
        &mut self,
        entities: &[Entity],
        archetype: ArchetypeId,
        rows: std::ops::Range<usize>,
        ids: &[ComponentId],
    ) {
        let mut hooked = ids
            .iter()
            .filter(|&&id| self.components.info(id).has_hooks());
        let upkeep = match (hooked.next(), hooked.next()) {
            (Some(&only), None) => self.direct_upkeep(only, [ON_ADD, ON_INSERT]),
            _ => None,
        };
        match upkeep {
            Some(upkeep) => (upkeep.link_spawned)(self, archetype, rows),
            None => self.added_with_hooks(entities, ids, ids),
        }
    }

    /// `on_add` for `added`, then `on_insert` for `written`, for each entity; then the
    /// commands the hooks recorded.
    pub(crate) fn added_with_hooks(
        &mut self,
        entities: &[Entity],
        added: &[ComponentId],
        written: &[ComponentId],
    ) {
        if !self.any_hooked(written) {
            return;
        }
        let mut queue = Vec::new();
        for &entity in entities {
            self.insert_required(entity, added);
            self.run_hooks(ON_ADD, entity, added, false, true, &mut queue);
            self.run_hooks(ON_INSERT, entity, written, false, true, &mut queue);
        }
        self.finish_hooks(queue);
    }

    /// Before an insert of `B` when some registered type has hooks: the `on_replace` hooks of
    /// the types `entity` has, if any type of `B` is hooked; what they leave is parked in the
    /// world for [`World::after_insert`], and the answer is whether anything was. The insert
    /// itself is made by the caller (one call site keeps the plain insert's code inlined as it
    /// was).
    #[cold]
    #[inline(never)]
    pub(crate) fn before_insert<B: Bundle>(&mut self, entity: Entity) -> bool {
        let Some(loc) = self.location(entity) else {
            return false;
        };
        let ids = bundle_ids::<B>(&mut self.components);
        if !self.any_hooked(&ids) {
            // `after_insert` is skipped too: the insert registers no type `B` lacks.
            self.components.note_unhooked::<B>();
            return false;
        }
        let signature = self.archetypes.as_slice()[loc.archetype.index()].signature();
        let had: BundleIds = ids
            .iter()
            .copied()
            .filter(|&id| signature.contains(id))
            .collect();
        let mut queue = Vec::new();
        self.run_hooks(ON_REPLACE, entity, &had, false, false, &mut queue);
        // Looked up again: an `OnReplace` observer may have changed the entity directly.
        self.callbacks.queue.parked = Some(PendingHooks {
            from: self.location(entity).map(|loc| loc.archetype),
            queue,
        });
        true
    }

    /// After an insert of `B` (see [`World::before_insert`], which `parked` what its hooks
    /// left): what the new types require, `on_add` for the new types, `on_insert` for all of
    /// `B`, then the recorded commands. Without a parked change, an insert that registered the
    /// first hooked type: those types are new to the entity, and no other type of `B` is
    /// hooked.
    #[cold]
    #[inline(never)]
    pub(crate) fn after_insert<B: Bundle>(&mut self, entity: Entity, parked: bool) {
        let ids = bundle_ids::<B>(&mut self.components);
        let pending = if parked {
            self.callbacks.queue.parked.take()
        } else {
            None
        };
        let PendingHooks { from, mut queue } = pending.unwrap_or_default();
        if self.any_hooked(&ids) {
            let added: BundleIds = match from {
                Some(from) => {
                    let before = self.archetypes.as_slice()[from.index()].signature();
                    ids.iter()
                        .copied()
                        .filter(|&id| !before.contains(id))
                        .collect()
                }
                None => ids.clone(),
            };
            self.insert_required(entity, &added);
            self.run_hooks(ON_ADD, entity, &added, false, true, &mut queue);
            self.run_hooks(ON_INSERT, entity, &ids, false, true, &mut queue);
        }
        self.finish_hooks(queue);
    }

    /// Before a remove of `B` when some registered type has hooks: `on_replace` then
    /// `on_remove` for the hooked types of `B`, if `entity` has all of them (otherwise the
    /// remove fails and changes nothing). What they leave is parked in the world, and the
    /// answer is whether anything was; the caller removes, then calls
    /// [`World::after_change`].
    #[cold]
    #[inline(never)]
    pub(crate) fn before_remove<B: Bundle>(&mut self, entity: Entity) -> bool {
        let Some(loc) = self.location(entity) else {
            return false;
        };
        let ids = bundle_ids::<B>(&mut self.components);
        if !self.any_hooked(&ids) {
            self.components.note_unhooked::<B>();
            return false;
        }
        let signature = self.archetypes.as_slice()[loc.archetype.index()].signature();
        if !ids.iter().all(|&id| signature.contains(id)) {
            return false;
        }
        let mut queue = Vec::new();
        self.run_hooks(ON_REPLACE, entity, &ids, false, false, &mut queue);
        self.run_hooks(ON_REMOVE, entity, &ids, false, false, &mut queue);
        self.callbacks.queue.parked = Some(PendingHooks { from: None, queue });
        true
    }

    /// After a change whose hooks ran before it and parked what they left: the commands they
    /// recorded.
    #[cold]
    #[inline(never)]
    pub(crate) fn after_change(&mut self) {
        let queue = self.callbacks.queue.parked.take().unwrap_or_default().queue;
        self.finish_hooks(queue);
    }

    /// The upkeep to run in place of the hooks of a change whose only hooked type is `id`
    /// (see [`SourceUpkeep`]): `Some` when [`World::upkeep_of`] has one and
    /// [`World::upkeep_may_run_now`].
    pub(super) fn direct_upkeep(
        &self,
        id: ComponentId,
        kinds: [Lifecycle; 2],
    ) -> Option<SourceUpkeep> {
        self.upkeep_may_run_now()
            .then(|| self.upkeep_of(id, kinds))
            .flatten()
    }

    /// `id`'s [`SourceUpkeep`], if it is a relationship source without requirements whose
    /// `kinds` changes nothing observes. Changes only with hooks, observers and requirements.
    pub(super) fn upkeep_of(&self, id: ComponentId, kinds: [Lifecycle; 2]) -> Option<SourceUpkeep> {
        let type_id = self.components.info(id).type_id();
        let upkeep = self.callbacks.hooks.get(&type_id)?.upkeep?;
        let watched = kinds.iter().any(|&kind| self.observes(kind, type_id))
            || self.callbacks.required.contains_key(&type_id);
        (!watched).then_some(upkeep)
    }

    /// Whether an upkeep may run directly now: no hook command is queued or draining (it
    /// then runs just where its hooks' commands would have) and no list is being adopted.
    #[inline]
    pub(super) fn upkeep_may_run_now(&self) -> bool {
        let queue = &self.callbacks.queue;
        !queue.draining && queue.pending.is_empty() && self.relations.adopting.is_empty()
    }

    /// Forgets what was worked out from the hooks, observers and requirements in place
    /// (the despawn plans): one of them changed.
    pub(super) fn hooks_changed(&mut self) {
        self.callbacks.despawn_plans.clear();
    }

    /// Every installed relationship's agreement check ([`World::check_invariants`]).
    pub(crate) fn check_hook_invariants(&self) {
        type Check = (&'static str, fn(&World));
        let mut checks: Vec<Check> = self
            .components
            .iter()
            .filter(|info| info.has_hooks())
            .filter_map(|info| {
                let check = self
                    .callbacks
                    .hooks
                    .get(&info.type_id())?
                    .check_invariants?;
                Some((info.name(), check))
            })
            .collect();
        checks.sort_by_key(|&(name, _)| name);
        for (_, check) in checks {
            check(self);
        }
    }
}
