//! Despawning with hooks: the checks before a despawn, and despawns whose hooks (`on_replace`,
//! `on_remove`) and observers run first: the user's own, a relationship's consequence, and
//! `clear`'s. Dispatch itself is `hooks.rs`'.

use std::panic::{catch_unwind, AssertUnwindSafe};

use smallvec::SmallVec;

use super::hooks::{ON_REMOVE, ON_REPLACE};
use crate::component::ComponentId;
use crate::entity::Entity;
use crate::error::EntityError;
use crate::ids::ArchetypeId;
use crate::world::{DespawnPlan, HookCommand, UpkeepIds, World};

impl World {
    /// `World::despawn` when some registered type has hooks, by the plan of the entity's
    /// archetype: plain, a relationship source's upkeep, or checks and hooks.
    #[inline(never)]
    pub(crate) fn despawn_planned(&mut self, entity: Entity) -> Result<(), EntityError> {
        let Some(loc) = self.location(entity) else {
            return Err(EntityError::NoSuchEntity(entity));
        };
        match self.despawn_plan(loc.archetype) {
            DespawnPlan::Plain => self.despawn_plain(entity),
            DespawnPlan::Upkeep(ids, upkeep) if self.upkeep_may_run_now() => {
                (upkeep.despawn_source)(self, entity, loc, ids);
                Ok(())
            }
            _ => self.despawn_checked(entity),
        }
    }

    /// The despawn plan of `archetype`, worked out on first use.
    #[inline]
    fn despawn_plan(&mut self, archetype: ArchetypeId) -> DespawnPlan {
        let i = archetype.index();
        match self.callbacks.despawn_plans.get(i) {
            Some(&Some(plan)) => plan,
            _ => self.work_out_despawn_plan(i),
        }
    }

    #[cold]
    fn work_out_despawn_plan(&mut self, i: usize) -> DespawnPlan {
        let hooked: SmallVec<[ComponentId; 4]> = self.archetypes.as_slice()[i]
            .signature()
            .iter()
            .filter(|&id| self.components.info(id).has_hooks())
            .collect();
        let plan = match hooked[..] {
            [] => DespawnPlan::Plain,
            [only] => {
                let unchecked = self
                    .hooks_of(only)
                    .is_none_or(|h| h.check_despawn.is_none());
                match self.upkeep_of(only, [ON_REPLACE, ON_REMOVE]) {
                    Some(upkeep) if unchecked => {
                        let drops = self.drops_values(&self.archetypes.as_slice()[i]);
                        let ids = UpkeepIds {
                            source: only,
                            list: self.components.id_of(upkeep.list_type),
                            drops,
                        };
                        DespawnPlan::Upkeep(ids, upkeep)
                    }
                    _ => DespawnPlan::Hooks,
                }
            }
            _ => DespawnPlan::Hooks,
        };
        if self.callbacks.despawn_plans.len() <= i {
            self.callbacks.despawn_plans.resize(i + 1, None);
        }
        self.callbacks.despawn_plans[i] = Some(plan);
        plan
    }

    /// Refuses the despawn of `entity` if a relationship's `Refuse` policy says so.
    pub(crate) fn check_despawn(&self, entity: Entity) -> Result<(), EntityError> {
        if !self.components.any_hooks() {
            return Ok(());
        }
        let Some(loc) = self.location(entity) else {
            return Ok(());
        };
        for id in self.archetypes.as_slice()[loc.archetype.index()]
            .signature()
            .iter()
        {
            if let Some(check) = self.hooks_of(id).and_then(|h| h.check_despawn) {
                check(self, entity)?;
            }
        }
        Ok(())
    }

    /// A despawn that a hook recorded: no `Refuse` check (see [`HookCommands::despawn`]).
    pub(crate) fn despawn_as_consequence(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.flush();
        if self.components.any_hooks() {
            self.despawn_consequence_with_hooks(entity)
        } else {
            self.despawn_plain(entity)
        }
    }

    /// A consequence's despawn with hooks: made even if a hook or observer of it panics (the
    /// cascade that asked for it has unlinked the entity's parent already, so stopping here
    /// would leave a live entity naming a dead one); the panic goes on afterwards.
    #[cold]
    #[inline(never)]
    fn despawn_consequence_with_hooks(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        let hooked = self.hooked_ids_of(entity);
        let mut queue = Vec::new();
        let ran = catch_unwind(AssertUnwindSafe(|| {
            self.run_hooks(ON_REPLACE, entity, &hooked, true, true, &mut queue);
            self.run_hooks(ON_REMOVE, entity, &hooked, true, true, &mut queue);
        }));
        if self.contains(entity) {
            self.despawn_plain(entity)?;
        }
        // An observer's panic (a hook's is held already) goes on after the queue has run.
        if let Err(panic) = ran {
            self.callbacks.queue.hold_panic(panic);
        }
        self.finish_hooks(queue);
        Ok(())
    }

    /// The hooked component types `entity` (alive) holds, in id order.
    fn hooked_ids_of(&self, entity: Entity) -> SmallVec<[ComponentId; 4]> {
        let loc = self
            .location(entity)
            .expect("the caller checked it is alive");
        self.archetypes.as_slice()[loc.archetype.index()]
            .signature()
            .iter()
            .filter(|&id| self.components.info(id).has_hooks())
            .collect()
    }

    /// `World::despawn` when some registered type has hooks: the `Refuse` check, then
    /// [`World::despawn_with_hooks`].
    #[cold]
    #[inline(never)]
    pub(crate) fn despawn_checked(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.check_despawn(entity)?;
        self.despawn_with_hooks(entity)
    }

    /// A despawn when some registered type has hooks, with no `Refuse` check:
    /// `on_replace` then `on_remove` for each hooked type of the entity, in id order.
    #[cold]
    #[inline(never)]
    pub(crate) fn despawn_with_hooks(&mut self, entity: Entity) -> Result<(), EntityError> {
        if !self.contains(entity) {
            return Err(EntityError::NoSuchEntity(entity));
        }
        let hooked = self.hooked_ids_of(entity);
        if hooked.is_empty() {
            return self.despawn_plain(entity);
        }
        let mut queue = Vec::new();
        self.run_hooks(ON_REPLACE, entity, &hooked, true, false, &mut queue);
        self.run_hooks(ON_REMOVE, entity, &hooked, true, false, &mut queue);
        // An observer that despawned the entity itself (with `&mut World`, not `defer`) has
        // done what was asked; the queue still runs, even if a `Drop` of the entity panics
        // (it holds the relationship fix-ups: the entity is gone either way).
        let despawned = catch_unwind(AssertUnwindSafe(|| {
            if self.contains(entity) {
                self.despawn_plain(entity)
            } else {
                Ok(())
            }
        }));
        let result = despawned.unwrap_or_else(|panic| {
            // Passed on by `finish_hooks`, after the queue.
            self.callbacks.queue.hold_panic(panic);
            Ok(())
        });
        self.finish_hooks(queue);
        result
    }

    /// The `on_replace` and `on_remove` hooks of every entity `World::clear` is about to drop,
    /// archetype by archetype; their commands run after the clear.
    #[cold]
    #[inline(never)]
    pub(crate) fn hooks_before_clear(&mut self) -> Vec<HookCommand> {
        let mut doomed: Vec<(Entity, SmallVec<[ComponentId; 4]>)> = Vec::new();
        for arch in self.archetypes.as_slice() {
            let hooked: SmallVec<[ComponentId; 4]> = arch
                .signature()
                .iter()
                .filter(|&id| self.components.info(id).has_hooks())
                .collect();
            if hooked.is_empty() {
                continue;
            }
            for chunk in arch.chunks() {
                doomed.extend(chunk.entities().iter().map(|&e| (e, hooked.clone())));
            }
        }
        let mut queue = Vec::new();
        for (entity, hooked) in doomed {
            self.run_hooks(ON_REPLACE, entity, &hooked, true, false, &mut queue);
            self.run_hooks(ON_REMOVE, entity, &hooked, true, false, &mut queue);
        }
        queue
    }
}
