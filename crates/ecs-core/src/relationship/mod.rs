//! Relationships: a component on a *source* entity that names one or more *target* entities
//! ([`Relationship`]), and the list of sources the engine keeps on each target
//! ([`RelationshipTarget`]). [`ChildOf`](crate::ChildOf) / [`Children`](crate::Children) is
//! the built-in pair; [`World::register_relationship`] installs the same upkeep for your own.
//!
//! Both sides are ordinary components whose values hold entity ids, so a relationship does not
//! fragment archetypes: every child of every parent shares one archetype.
//!
//! The upkeep is done by component hooks, installed and run by the world (its `relationships`
//! and `hooks` files), and after every structural change both sides agree:
//! - inserting the relationship on a source adds the source to each target's list (creating
//!   the list component when needed); overwriting it moves the source from the old targets'
//!   lists to the new ones; removing it, or despawning the source, takes the source out of
//!   them (a list left empty is removed);
//! - a target's list cannot name a source that does not point at it: inserting a list makes
//!   each listed source point at the target (moving a source that pointed elsewhere), removing
//!   the list removes the relationship from its sources; an inserted list is normalised first:
//!   repeats (the first stays), dead entities and the target itself are dropped, and a list
//!   left empty is removed;
//! - despawning a target applies the relationship's [`DespawnPolicy`] to its sources.
//!
//! A relationship naming a dead entity or its own source is dropped from the source when the
//! hooks run (its target list could not exist).
//!
//! The hooks see changes made through `insert`, `remove` and despawn (commands included), the
//! only ways to change either side: both are immutable components
//! ([`ComponentInfo::is_immutable`](crate::ComponentInfo::is_immutable)), so `get_mut`, a
//! query's `&mut ChildOf` and `EntityMut::get_mut` refuse them. Re-insert to re-parent.

pub(crate) mod hierarchy;

use crate::component::Component;
use crate::entity::Entity;
#[cfg(doc)]
use crate::{error::EntityError, World};

/// What despawning a target does to the entities that point at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DespawnPolicy {
    /// Despawn every source too, and so on down (`ChildOf`: despawning a parent despawns its
    /// subtree). Each source's own relationships then apply their policies.
    DespawnSources,
    /// Remove the relationship from each source (a many-to-many source keeps its other
    /// targets); the sources stay alive.
    RemoveRelationship,
    /// Refuse: `World::despawn` (and `take`) of a target that still has sources fails with
    /// [`EntityError::DespawnRefused`] and changes nothing. A despawn that is itself the
    /// consequence of another (a `DespawnSources` cascade, a hook's command) is not refused:
    /// the relationship is removed from the sources instead, as that despawn was asked for.
    Refuse,
}

/// The source side of a relationship: a component naming the entities it points at.
///
/// One-to-many (each source has one target, like [`ChildOf`](crate::ChildOf)): implement
/// `targets` as a one-element slice and keep the default `targets_mut`. Many-to-many (a turret
/// targets several units): store a `Vec<Entity>` and return it from `targets_mut`.
///
/// ```
/// use ecs_core::{DespawnPolicy, Entity, Relationship, RelationshipTarget, World};
///
/// /// A turret's targets (many-to-many).
/// struct Targets(Vec<Entity>);
/// /// The turrets targeting a unit, kept by the engine.
/// struct TargetedBy(Vec<Entity>);
///
/// impl Relationship for Targets {
///     type Target = TargetedBy;
///     fn targets(&self) -> &[Entity] { &self.0 }
///     fn from_target(target: Entity) -> Self { Targets(vec![target]) }
///     fn targets_mut(&mut self) -> Option<&mut Vec<Entity>> { Some(&mut self.0) }
/// }
/// impl RelationshipTarget for TargetedBy {
///     type Relationship = Targets;
///     const ON_DESPAWN: DespawnPolicy = DespawnPolicy::RemoveRelationship;
///     fn from_sources(sources: Vec<Entity>) -> Self { TargetedBy(sources) }
///     fn sources(&self) -> &[Entity] { &self.0 }
///     fn sources_mut(&mut self) -> &mut Vec<Entity> { &mut self.0 }
/// }
///
/// let mut world = World::new();
/// world.register_relationship::<Targets>().unwrap();
/// let (a, b) = (world.spawn(()), world.spawn(()));
/// let turret = world.spawn((Targets(vec![a, b]),));
/// assert_eq!(world.get::<TargetedBy>(a).unwrap().0, [turret]);
/// world.despawn(a).unwrap(); // the turret keeps its other target
/// assert_eq!(world.get::<Targets>(turret).unwrap().0, [b]);
/// world.check_invariants();
/// ```
pub trait Relationship: Component + Sized {
    /// The list the engine keeps on each target.
    type Target: RelationshipTarget<Relationship = Self>;

    /// The entities this source points at.
    fn targets(&self) -> &[Entity];

    /// A value pointing at `target` only.
    fn from_target(target: Entity) -> Self;

    /// The target list of a many-to-many relationship, for the engine to add and drop targets
    /// in place; `None` (the default) for one target per source.
    fn targets_mut(&mut self) -> Option<&mut Vec<Entity>> {
        None
    }
}

/// The target side of a relationship: the sources pointing at an entity, kept by the engine
/// (see [`Relationship`] for an example).
pub trait RelationshipTarget: Component + Sized {
    /// The component on the sources.
    type Relationship: Relationship<Target = Self>;

    /// What despawning an entity holding this list does to its sources.
    const ON_DESPAWN: DespawnPolicy;

    /// A list of `sources`.
    fn from_sources(sources: Vec<Entity>) -> Self;

    /// The sources, in the order they joined (a source leaving a list with more than 64
    /// entries after it is replaced by the last one: see [`Children`](crate::Children)).
    fn sources(&self) -> &[Entity];

    /// The sources, for the engine to add and drop them.
    fn sources_mut(&mut self) -> &mut Vec<Entity>;
}
