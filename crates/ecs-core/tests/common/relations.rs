//! Relationships shared by test files: `Likes`, a many-to-many one whose targets' despawn only
//! removes it from their sources.

use ecs_core::{DespawnPolicy, Entity, Relationship, RelationshipTarget};

/// A many-to-many relationship whose targets' despawn only removes it from the sources.
#[derive(Clone, Debug)]
pub struct Likes(pub Vec<Entity>);
#[derive(Clone, Debug)]
pub struct LikedBy(pub Vec<Entity>);

impl Relationship for Likes {
    type Target = LikedBy;
    fn targets(&self) -> &[Entity] {
        &self.0
    }
    fn from_target(target: Entity) -> Self {
        Likes(vec![target])
    }
    fn targets_mut(&mut self) -> Option<&mut Vec<Entity>> {
        Some(&mut self.0)
    }
}

impl RelationshipTarget for LikedBy {
    type Relationship = Likes;
    const ON_DESPAWN: DespawnPolicy = DespawnPolicy::RemoveRelationship;
    fn from_sources(sources: Vec<Entity>) -> Self {
        LikedBy(sources)
    }
    fn sources(&self) -> &[Entity] {
        &self.0
    }
    fn sources_mut(&mut self) -> &mut Vec<Entity> {
        &mut self.0
    }
}
