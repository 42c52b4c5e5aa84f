//! The upkeep of relationships (see the `relationship` module for the contract both sides
//! keep): [`World::register_relationship`], the queries of either side, and the hooks that
//! keep a source's targets and each target's list of sources in step.

use std::any::TypeId;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use smallvec::SmallVec;

use crate::component::{Component, ComponentId};
use crate::entity::{Entity, Location};
use crate::error::{EntityError, WorldError};
use crate::ids::ArchetypeId;
use crate::relationship::{DespawnPolicy, Relationship, RelationshipTarget};
use crate::unwind::{keep_first_panic, PanicPayload};
use crate::world::{ComponentHooks, DeferredWorld, HookContext, SourceUpkeep, UpkeepIds, World};

type Ids = SmallVec<[Entity; 4]>;

impl World {
    /// Installs the upkeep of relationship `R` and its target list `R::Target` (see the
    /// module docs of `relationship` for what is kept in step). `ChildOf` is installed in
    /// every world.
    ///
    /// # Errors
    /// As [`World::set_component_hooks`] for either type (hooks already set, or the type is in
    /// use); nothing changes then.
    pub fn register_relationship<R: Relationship>(&mut self) -> Result<(), WorldError> {
        // Both or neither: every check of both types before anything is installed, so a
        // failure (hooks already set, or a type in use) leaves nothing half done.
        self.check_hooks_settable::<R>()?;
        self.check_hooks_settable::<R::Target>()?;
        let mut source = ComponentHooks::new()
            .on_insert(source_inserted::<R>)
            .on_replace(source_replaced::<R>);
        source.check_invariants = Some(check_relationship::<R>);
        source.relationship = true;
        source.immutable = true;
        source.upkeep = Some(SourceUpkeep {
            link_spawned: link_spawned::<R>,
            despawn_source: despawn_source::<R>,
            list_type: std::any::TypeId::of::<R::Target>(),
        });
        self.set_component_hooks::<R>(source)
            .expect("checked above: no hooks, not in use");
        let mut target = ComponentHooks::new()
            .on_insert(target_inserted::<R::Target>)
            .on_replace(target_replaced::<R::Target>);
        target.check_despawn = Some(refuse_despawn::<R::Target>);
        target.relationship_target = true;
        target.immutable = true;
        self.set_component_hooks::<R::Target>(target)
            .expect("checked above: no hooks, not in use");
        Ok(())
    }

    /// The entities `entity` points at through `R` (empty if it has no `R` or is not alive).
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// let parent = world.spawn(());
    /// let child = world.spawn((ChildOf(parent),));
    /// assert_eq!(world.relationship_targets::<ChildOf>(child), [parent]);
    /// ```
    pub fn relationship_targets<R: Relationship>(&self, entity: Entity) -> &[Entity] {
        self.get::<R>(entity).map_or(&[], R::targets)
    }

    /// The entities pointing at `entity` through `T`'s relationship (empty if none).
    ///
    /// ```
    /// # use ecs_core::{ChildOf, Children, World};
    /// let mut world = World::new();
    /// let parent = world.spawn(());
    /// let child = world.spawn((ChildOf(parent),));
    /// assert_eq!(world.relationship_sources::<Children>(parent), [child]);
    /// ```
    pub fn relationship_sources<T: RelationshipTarget>(&self, entity: Entity) -> &[Entity] {
        self.get::<T>(entity).map_or(&[], T::sources)
    }
}

fn targets_of<R: Relationship>(world: &World, source: Entity) -> Ids {
    world
        .get::<R>(source)
        .map(|r| r.targets().iter().copied().collect())
        .unwrap_or_default()
}

fn points_at<R: Relationship>(world: &World, source: Entity, target: Entity) -> bool {
    world
        .get::<R>(source)
        .is_ok_and(|r| r.targets().contains(&target))
}

/// `R` written on a source: join each target's list once the change is complete.
///
/// Which targets were alive at the insert is noted here: a target that dies before the link
/// runs (a hook or observer of the same change despawned it) was despawned while this source
/// already pointed at it, so its despawn policy applies to the source as if it had been listed.
fn source_inserted<R: Relationship>(mut world: DeferredWorld<'_>, ctx: HookContext) {
    let source = ctx.entity;
    let targets: SmallVec<[(Entity, bool); 4]> = targets_of::<R>(&world, source)
        .into_iter()
        .map(|t| (t, world.contains(t)))
        .collect();
    world.commands().add(move |world| {
        world.note_relationship_write();
        for (i, &(target, was_alive)) in targets.iter().enumerate() {
            // A target named twice by one source is linked once (lists are short).
            if targets[..i].iter().all(|&(t, _)| t != target) {
                link::<R>(world, source, target, was_alive);
            }
        }
    });
}

/// [`SourceUpkeep::link_spawned`]: what [`source_inserted`]'s commands do for every row of a
/// batch just spawned, without a command per row. Runs of rows naming the same target (a
/// parent's children spawned together) join its list in one step.
fn link_spawned<R: Relationship>(world: &mut World, archetype: ArchetypeId, rows: Range<usize>) {
    world.note_relationship_write();
    let pairs = spawned_pairs::<R>(world, archetype, rows);
    let mut rest = &pairs[..];
    while let Some(&(_, target)) = rest.first() {
        let run = rest.iter().take_while(|&&(_, t)| t == target).count();
        let (same, after) = rest.split_at(run);
        rest = after;
        if world.contains(target) && same.iter().all(|&(source, _)| source != target) {
            join::<R::Target>(world, target, same);
        } else {
            // A dead or self target: the hooks' own path drops the relationship.
            for &(source, target) in same {
                let alive = world.contains(target);
                link::<R>(world, source, target, alive);
            }
        }
    }
}

/// `(source, target)` for each row of `rows` (spawn order) and each distinct target it names.
fn spawned_pairs<R: Relationship>(
    world: &World,
    archetype: ArchetypeId,
    rows: Range<usize>,
) -> Vec<(Entity, Entity)> {
    let mut pairs = Vec::with_capacity(rows.len());
    if rows.is_empty() {
        return pairs;
    }
    let arch = &world.archetypes()[archetype.index()];
    let (mut chunk, mut row) = arch.split_row(rows.start);
    let mut left = rows.len();
    while left > 0 {
        let entities = &arch.chunks()[chunk].entities()[row..];
        let values = &world
            .column::<R>(archetype, chunk)
            .expect("the batch's archetype holds the relationship")[row..];
        let n = left.min(entities.len());
        for (&source, value) in entities[..n].iter().zip(&values[..n]) {
            let targets = value.targets();
            for (i, &target) in targets.iter().enumerate() {
                if !targets[..i].contains(&target) {
                    pairs.push((source, target));
                }
            }
        }
        left -= n;
        chunk += 1;
        row = 0;
    }
    pairs
}

/// Adds the sources of `pairs` (new, all naming live `target`) to `target`'s list, in order.
fn join<T: RelationshipTarget>(world: &mut World, target: Entity, pairs: &[(Entity, Entity)]) {
    let sources = pairs.iter().map(|&(source, _)| source);
    if let Ok(list) = world.get_mut_in_place::<T>(target) {
        let first = list.sources().len();
        list.sources_mut().extend(sources.clone());
        world
            .relations
            .positions
            .joined(TypeId::of::<T>(), target, first, sources);
        return;
    }
    // A new list starts with one source, as a link makes it (its insert checks each source
    // it names, so the rest join it afterwards, unchecked).
    let list = T::from_sources(vec![pairs[0].0]);
    let _ = world.insert(target, (list,));
    if let Ok(list) = world.get_mut_in_place::<T>(target) {
        list.sources_mut().extend(sources.skip(1));
    }
}

/// [`SourceUpkeep::despawn_source`]: what [`source_replaced`]'s command does for a despawned
/// source, run directly. The lists are left even if a `Drop` of the source panics.
fn despawn_source<R: Relationship>(
    world: &mut World,
    source: Entity,
    at: Location,
    ids: UpkeepIds,
) {
    let targets: Ids = world
        .get_located::<R>(at, ids.source)
        .map(|r| r.targets().iter().copied().collect())
        .unwrap_or_default();
    // Only a `Drop` can panic here; without one there is nothing to guard.
    let despawned = if ids.drops {
        catch_unwind(AssertUnwindSafe(|| world.despawn_located(source, at)))
    } else {
        world.despawn_located(source, at);
        Ok(())
    };
    for (i, &target) in targets.iter().enumerate() {
        if !targets[..i].contains(&target) {
            unlink_from::<R::Target>(world, source, target, ids.list);
        }
    }
    if let Err(panic) = despawned {
        resume_unwind(panic);
    }
}

/// `R` about to be overwritten or removed: leave the old targets' lists.
fn source_replaced<R: Relationship>(mut world: DeferredWorld<'_>, ctx: HookContext) {
    let source = ctx.entity;
    // A source despawned by its target's cascade finds every target gone already (ids never
    // come back to life): no list to leave, so no command, the common case of a subtree
    // despawn.
    let live_target = world
        .get::<R>(source)
        .is_ok_and(|r| r.targets().iter().any(|&t| world.contains(t)));
    if !live_target {
        return;
    }
    let targets = targets_of::<R>(&world, source);
    world.commands().add(move |world| {
        for target in targets {
            unlink::<R::Target>(world, source, target);
        }
    });
}

/// A target list written: normalise it, then make each listed source point at the target.
fn target_inserted<T: RelationshipTarget>(mut world: DeferredWorld<'_>, ctx: HookContext) {
    let target = ctx.entity;
    world.commands().add(move |world| {
        let Some(sources) = normalise::<T>(world, target) else {
            return;
        };
        for source in sources {
            adopt::<T>(world, target, source);
        }
    });
}

/// Drops from `target`'s hand-written list every entry that cannot be a source of it: a
/// repeat (the first stays), a dead entity, and `target` itself; removes a list left empty.
/// Returns the sources that stay, in order (`None` if the list is gone). A source whose
/// relationship points elsewhere stays: [`adopt`] moves it here, as inserting the list asks.
fn normalise<T: RelationshipTarget>(world: &mut World, target: Entity) -> Option<Vec<Entity>> {
    let listed: Vec<Entity> = world.get::<T>(target).ok()?.sources().to_vec();
    let mut seen = std::collections::HashSet::with_capacity_and_hasher(
        listed.len(),
        ahash::RandomState::with_seeds(0, 0, 0, 0),
    );
    let kept: Vec<Entity> = listed
        .iter()
        .copied()
        .filter(|&s| s != target && world.contains(s) && seen.insert(s))
        .collect();
    if kept.len() != listed.len() {
        if kept.is_empty() {
            drop(world.remove::<(T,)>(target));
            return None;
        }
        let list = world.get_mut_in_place::<T>(target).ok()?;
        list.sources_mut().clone_from(&kept);
        world.note_relationship_write();
    }
    Some(kept)
}

/// A target list about to be overwritten or removed: its sources lose the relationship, or
/// on a despawn, meet the relationship's policy.
fn target_replaced<T: RelationshipTarget>(mut world: DeferredWorld<'_>, ctx: HookContext) {
    let target = ctx.entity;
    let sources: Ids = world
        .get::<T>(target)
        .map(|t| t.sources().iter().copied().collect())
        .unwrap_or_default();
    let cascade = ctx.despawning && T::ON_DESPAWN == DespawnPolicy::DespawnSources;
    world.commands().add(move |world| {
        // Every source is dealt with even if one's hooks panic: stopping half way would leave
        // sources naming a target that is gone. The first panic goes on afterwards.
        let mut first = None;
        if cascade {
            despawn_sources::<T>(world, target, sources, &mut first);
        } else {
            for source in sources {
                if points_at::<T::Relationship>(world, source, target) {
                    let done = catch_unwind(AssertUnwindSafe(|| {
                        detach::<T::Relationship>(world, source, target);
                    }));
                    keep_first_panic(&mut first, done);
                }
            }
        }
        if let Some(panic) = first {
            resume_unwind(panic);
        }
    });
}

/// The `DespawnSources` cascade of `target`'s despawn: despawns every source of `target`, and
/// theirs, and so on down.
///
/// A source whose only hooked types are this relationship's two sides, pointing at one target
/// (the one being despawned), with no observer of either side, is *plain*: its hooks would
/// only edit lists that are being despawned too. The plain part of the subtree is gathered
/// first (breadth first, reading each node's list), then despawned archetype by archetype,
/// from each archetype's last row down, so no remaining row of it moves: a subtree despawn at
/// about the cost of plain despawns, with one command for the whole subtree. Every other
/// source (another relationship's list, a user hook, a many-to-many source) then takes the
/// full despawn with hooks, in breadth-first order, and its own cascade follows.
fn despawn_sources<T: RelationshipTarget>(
    world: &mut World,
    target: Entity,
    sources: Ids,
    first: &mut Option<PanicPayload>,
) {
    use crate::world::Lifecycle;
    let (Some(source_id), target_id) = (
        world.component_id::<T::Relationship>(),
        world.component_id::<T>(),
    ) else {
        return; // no entity ever held the relationship: `sources` point at nothing
    };
    let observed = [TypeId::of::<T::Relationship>(), TypeId::of::<T>()]
        .iter()
        .any(|&t| world.observes(Lifecycle::Replace, t) || world.observes(Lifecycle::Remove, t));
    let mut cascade = Cascade {
        source_id,
        target_id,
        observed,
        upkeep_only: Vec::new(),
        doomed: Vec::new(),
        full: Vec::new(),
        next_full: 0,
    };
    cascade.gather::<T>(world, sources.into_iter().map(|s| (s, target)).collect());
    // One unwind guard for the whole pass, not one per node: a panic (a `Drop`, or a hook of
    // a full despawn, each made after its despawn) is kept and the pass resumes where it was.
    loop {
        match catch_unwind(AssertUnwindSafe(|| cascade.despawn(world))) {
            Ok(()) => return,
            Err(panic) => keep_first_panic(first, Err(panic)),
        }
    }
}

/// One [`despawn_sources`] pass: the nodes gathered, and per archetype whether its rows'
/// despawn needs only this relationship's upkeep.
struct Cascade {
    source_id: ComponentId,
    target_id: Option<ComponentId>,
    /// Whether an observer watches either side's removal (then every node takes the full
    /// despawn).
    observed: bool,
    upkeep_only: Vec<Option<bool>>,
    /// Per archetype (by index), the rows of plain nodes left to despawn, one bit each.
    doomed: Vec<Vec<u64>>,
    /// The other nodes, breadth first; `full[next_full..]` are left.
    full: Vec<Entity>,
    next_full: usize,
}

impl Cascade {
    /// Reads the subtree below `queue` (`(source, the target whose despawn takes it)`)
    /// breadth first, marking plain nodes' rows and listing the others; changes nothing.
    fn gather<T: RelationshipTarget>(&mut self, world: &World, mut queue: Vec<(Entity, Entity)>) {
        let mut next = 0;
        while let Some(&(source, parent)) = queue.get(next) {
            next += 1;
            let Some(at) = world.location(source) else {
                continue;
            };
            let Some(relationship) = world.get_located::<T::Relationship>(at, self.source_id)
            else {
                continue;
            };
            let targets = relationship.targets();
            let sole = targets == [parent];
            if !sole && !targets.contains(&parent) {
                continue;
            }
            let i = at.archetype.index();
            if !(sole && !self.observed && self.upkeep_only(world, i)) {
                self.full.push(source);
                continue;
            }
            if let Some(list) = self.target_id.and_then(|id| world.get_located::<T>(at, id)) {
                queue.extend(list.sources().iter().map(|&s| (s, source)));
            }
            if self.doomed.len() <= i {
                self.doomed.resize_with(i + 1, Vec::new);
            }
            let bits = &mut self.doomed[i];
            let row = at.row as usize;
            if bits.is_empty() {
                bits.resize(world.archetypes()[i].len().div_ceil(64), 0);
            }
            bits[row / 64] |= 1 << (row % 64);
        }
    }

    /// Despawns the plain nodes, each archetype's from its last row down (the row that fills
    /// a hole is past every marked row left, so the marks stay true), then the others.
    fn despawn(&mut self, world: &mut World) {
        for (i, bits) in self.doomed.iter_mut().enumerate() {
            let archetype = ArchetypeId::new(i);
            let marked: usize = bits.iter().map(|w| w.count_ones() as usize).sum();
            let arch = &world.archetypes()[i];
            if marked > 0 && marked == arch.len() && !world.drops_values(arch) {
                // The subtree takes the whole archetype, whose values need no drop (so no
                // panic can leave some undropped): its rows go at once.
                bits.clear();
                world.despawn_whole_archetype(archetype);
                continue;
            }
            for word in (0..bits.len()).rev() {
                while bits[word] != 0 {
                    let bit = 63 - bits[word].leading_zeros() as usize;
                    bits[word] &= !(1 << bit);
                    let row = word * 64 + bit;
                    let arch = &world.archetypes()[i];
                    let (chunk, r) = arch.split_row(row);
                    let entity = arch.chunks()[chunk].entities()[r];
                    let at = Location {
                        archetype,
                        row: row as u32,
                    };
                    world.despawn_located(entity, at);
                }
            }
        }
        while let Some(&source) = self.full.get(self.next_full) {
            self.next_full += 1;
            let _ = world.despawn_as_consequence(source);
        }
    }

    /// Whether archetype `i`'s only hooked types are this relationship's two sides.
    fn upkeep_only(&mut self, world: &World, i: usize) -> bool {
        if self.upkeep_only.len() <= i {
            self.upkeep_only.resize(i + 1, None);
        }
        let (source_id, target_id) = (self.source_id, self.target_id);
        *self.upkeep_only[i].get_or_insert_with(|| {
            world.archetypes()[i].signature().iter().all(|id| {
                !world.components().info(id).has_hooks() || id == source_id || Some(id) == target_id
            })
        })
    }
}

/// Adds `source` to `target`'s list, if `source` still points at a live `target`; a
/// relationship naming a dead entity or its own source is dropped instead, except that a
/// target alive when the relationship was written (`was_alive`) and despawned since, under
/// [`DespawnPolicy::DespawnSources`], takes the source with it, as it takes its listed ones.
fn link<R: Relationship>(world: &mut World, source: Entity, target: Entity, was_alive: bool) {
    // Consumed first, whatever happens below: one adoption, one link.
    let listed =
        !world.relations.adopting.is_empty() && world.relations.adopting.remove(&(target, source));
    if !points_at::<R>(world, source, target) {
        return;
    }
    if target == source || !world.contains(target) {
        if was_alive
            && target != source
            && <R::Target as RelationshipTarget>::ON_DESPAWN == DespawnPolicy::DespawnSources
        {
            let _ = world.despawn_as_consequence(source);
        } else {
            detach::<R>(world, source, target);
        }
        return;
    }
    // O(1) per source, whatever the list's length: a source joins a list only here, once per
    // insert of its relationship (an overwrite unlinked it first), except when a hand-written
    // list named it already (`adopt`, which says so).
    if listed {
        return;
    }
    match world.get_mut_in_place::<R::Target>(target) {
        Ok(list) => {
            let sources = list.sources_mut();
            sources.push(source);
            let at = sources.len() - 1;
            let list_type = TypeId::of::<R::Target>();
            world
                .relations
                .positions
                .joined(list_type, target, at, [source]);
        }
        Err(_) => {
            let list = R::Target::from_sources(vec![source]);
            let _ = world.insert(target, (list,));
        }
    }
}

/// Takes `source` out of `target`'s list; an emptied list is removed. Not a source a
/// hand-written list of `target` is adopting (its old link, undone by that list's insert,
/// unlinks after the adoption): the new list names it, and its link counts on that.
fn unlink<T: RelationshipTarget>(world: &mut World, source: Entity, target: Entity) {
    unlink_from::<T>(world, source, target, None);
}

/// [`unlink`], with the list type's id if the caller resolved it.
fn unlink_from<T: RelationshipTarget>(
    world: &mut World,
    source: Entity,
    target: Entity,
    list_id: Option<ComponentId>,
) {
    if !world.relations.adopting.is_empty() && world.relations.adopting.contains(&(target, source))
    {
        return;
    }
    // Out of the world while the list is borrowed from it (a move of three words).
    let mut positions = std::mem::take(&mut world.relations.positions);
    let list = match list_id {
        Some(id) => world.get_mut_by_id::<T>(target, id),
        None => world.get_mut_in_place::<T>(target).ok(),
    };
    let mut emptied = false;
    if let Some(list) = list {
        let sources = list.sources_mut();
        let list_type = TypeId::of::<T>();
        if let Some(at) = positions.find(list_type, target, sources, source) {
            positions.take_out(list_type, target, sources, at);
            emptied = sources.is_empty();
        }
    }
    positions.sweep(|e| world.contains(e));
    world.relations.positions = positions;
    if emptied {
        drop(world.remove::<(T,)>(target));
    }
}

/// Makes `source` point at `target` (the target's list already names it).
fn adopt<T: RelationshipTarget>(world: &mut World, target: Entity, source: Entity) {
    if source == target || !world.contains(source) {
        if let Ok(list) = world.get_mut_in_place::<T>(target) {
            list.sources_mut().retain(|&s| s != source);
        }
        return;
    }
    if points_at::<T::Relationship>(world, source, target) {
        return;
    }
    if let Ok(relationship) = world.get_mut_in_place::<T::Relationship>(source) {
        if let Some(targets) = relationship.targets_mut() {
            targets.push(target);
            world.note_relationship_write();
            return;
        }
    }
    // One target per source (or none yet): the insert moves the source from its old target.
    world.relations.adopting.insert((target, source));
    if world
        .insert(source, (T::Relationship::from_target(target),))
        .is_err()
    {
        world.relations.adopting.remove(&(target, source));
    }
}

/// Drops `target` from `source`'s relationship: from the list of a many-to-many one (removing
/// the component once no target is left), or the whole component otherwise.
fn detach<R: Relationship>(world: &mut World, source: Entity, target: Entity) {
    let Ok(relationship) = world.get_mut_in_place::<R>(source) else {
        return;
    };
    if let Some(targets) = relationship.targets_mut() {
        targets.retain(|&t| t != target);
        if !targets.is_empty() {
            world.note_relationship_write();
            return;
        }
    }
    drop(world.remove::<(R,)>(source));
}

/// The `Refuse` policy: a target with sources may not be despawned.
fn refuse_despawn<T: RelationshipTarget>(world: &World, entity: Entity) -> Result<(), EntityError> {
    if T::ON_DESPAWN != DespawnPolicy::Refuse {
        return Ok(());
    }
    match world.get::<T>(entity) {
        Ok(list) if !list.sources().is_empty() => Err(EntityError::DespawnRefused {
            entity,
            relationship: std::any::type_name::<T::Relationship>(),
            sources: list.sources().len(),
        }),
        _ => Ok(()),
    }
}

/// Panics unless both sides of `R` agree: every target of every source is alive, is not the
/// source, and lists the source once; every listed source is alive and points back.
fn check_relationship<R: Relationship>(world: &World) {
    let name = std::any::type_name::<R>();
    for source in entities_with::<R>(world) {
        for &target in world.relationship_targets::<R>(source) {
            assert!(
                target != source && world.contains(target),
                "`{name}` of {source:?} names {target:?}, which is itself or not alive"
            );
            let listed = world
                .relationship_sources::<R::Target>(target)
                .iter()
                .filter(|&&s| s == source)
                .count();
            assert_eq!(
                listed, 1,
                "{target:?} lists {source:?} {listed} times, but its `{name}` points at it"
            );
        }
    }
    for target in entities_with::<R::Target>(world) {
        for &source in world.relationship_sources::<R::Target>(target) {
            assert!(
                points_at::<R>(world, source, target),
                "{target:?} lists {source:?} as a source of `{name}`, which does not point back"
            );
        }
    }
}

/// Every live entity holding a `T`.
fn entities_with<T: Component>(world: &World) -> Vec<Entity> {
    let Some(id) = world.component_id::<T>() else {
        return Vec::new();
    };
    world
        .archetypes()
        .iter()
        .filter(|arch| arch.signature().contains(id))
        .flat_map(|arch| {
            arch.chunks()
                .iter()
                .flat_map(|c| c.entities().iter().copied())
        })
        .collect()
}
