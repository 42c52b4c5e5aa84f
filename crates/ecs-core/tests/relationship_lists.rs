//! Hand-written target lists and half-failed registrations (issue 53, findings 3 and 4): an
//! inserted `Children` (or any target list) is normalised, never kept inconsistent, and
//! `register_relationship` that fails changes nothing, so a corrected retry succeeds.

use ecs_core::{
    ChildOf, Children, DespawnPolicy, Entity, Relationship, RelationshipTarget, World, WorldError,
};

fn children(world: &World, parent: Entity) -> Vec<Entity> {
    world.relationship_sources::<Children>(parent).to_vec()
}

#[test]
fn a_children_list_naming_a_child_twice_keeps_it_once() {
    let mut world = World::new();
    let parent = world.spawn(());
    let (a, b) = (world.spawn(()), world.spawn(()));
    world
        .insert(parent, (Children::from_sources(vec![a, b, a, a]),))
        .unwrap();
    world.check_invariants();
    assert_eq!(children(&world, parent), [a, b]);
    assert_eq!(world.get::<ChildOf>(a), Ok(&ChildOf(parent)));
}

#[test]
fn dead_and_self_entries_are_dropped_and_an_empty_list_removed() {
    let mut world = World::new();
    let parent = world.spawn(());
    let (a, dead) = (world.spawn(()), world.spawn(()));
    world.despawn(dead).unwrap();
    world
        .insert(parent, (Children::from_sources(vec![dead, parent, a]),))
        .unwrap();
    world.check_invariants();
    assert_eq!(children(&world, parent), [a]);
    assert!(
        !world.has::<ChildOf>(parent),
        "the parent is not its own child"
    );

    let lonely = world.spawn(());
    world
        .insert(lonely, (Children::from_sources(vec![lonely, dead]),))
        .unwrap();
    world.check_invariants();
    assert!(!world.has::<Children>(lonely), "nothing valid was listed");
}

#[test]
fn a_child_of_another_parent_listed_by_hand_moves_here() {
    let mut world = World::new();
    let (old, new) = (world.spawn(()), world.spawn(()));
    let child = world.spawn((ChildOf(old),));
    let sibling = world.spawn((ChildOf(old),));
    world
        .insert(new, (Children::from_sources(vec![child]),))
        .unwrap();
    world.check_invariants();
    assert_eq!(world.get::<ChildOf>(child), Ok(&ChildOf(new)));
    assert_eq!(children(&world, old), [sibling]);
    assert_eq!(children(&world, new), [child]);
}

struct Follows(Entity);
struct Followers(Vec<Entity>);

impl Relationship for Follows {
    type Target = Followers;
    fn targets(&self) -> &[Entity] {
        std::slice::from_ref(&self.0)
    }
    fn from_target(target: Entity) -> Self {
        Follows(target)
    }
}

impl RelationshipTarget for Followers {
    type Relationship = Follows;
    const ON_DESPAWN: DespawnPolicy = DespawnPolicy::RemoveRelationship;
    fn from_sources(sources: Vec<Entity>) -> Self {
        Followers(sources)
    }
    fn sources(&self) -> &[Entity] {
        &self.0
    }
    fn sources_mut(&mut self) -> &mut Vec<Entity> {
        &mut self.0
    }
}

#[test]
fn a_registration_that_fails_on_its_target_type_installs_nothing_and_a_retry_succeeds() {
    let mut world = World::new();
    // The target type is in use already: registration must fail, and change nothing.
    let holder = world.spawn((Followers(Vec::new()),));
    let err = world.register_relationship::<Follows>().unwrap_err();
    assert!(
        matches!(err, WorldError::HooksAfterUse { component } if component.contains("Followers")),
        "{err:?}"
    );
    assert!(
        world.component_hooks::<Follows>().is_none(),
        "the source's hooks were installed by a failed registration"
    );
    // The source type is still an ordinary, mutable component.
    let leader = world.spawn(());
    let fan = world.spawn((Follows(leader),));
    world.get_mut::<Follows>(fan).unwrap().0 = leader;
    world.despawn(fan).unwrap();

    // Corrected (the type no longer in use), the retry succeeds and the upkeep runs.
    world.despawn(holder).unwrap();
    world.register_relationship::<Follows>().unwrap();
    let fan = world.spawn((Follows(leader),));
    assert_eq!(world.get::<Followers>(leader).unwrap().0, [fan]);
    world.check_invariants();
}

#[test]
fn a_large_batch_of_children_joins_once_each_in_spawn_order() {
    let mut world = World::new();
    let root = world.spawn(());
    let kids: Vec<Entity> = world
        .spawn_batch((0..20_000u32).map(|i| (i, ChildOf(root))))
        .collect();
    assert_eq!(children(&world, root), kids);
    // Re-inserting the same parent, and a hand-written list naming existing children, keep
    // each child listed once.
    world.insert(kids[7], (ChildOf(root),)).unwrap();
    let other = world.spawn(());
    world
        .insert(
            other,
            (Children::from_sources(vec![kids[0], kids[1], kids[0]]),),
        )
        .unwrap();
    world.check_invariants();
    assert_eq!(children(&world, other), [kids[0], kids[1]]);
    assert_eq!(children(&world, root).len(), kids.len() - 2);
}
