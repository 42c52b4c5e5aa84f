//! Error type of the query crate.

use std::fmt;

use ecs_core::Entity;

/// A random-access query lookup failed.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryError, QueryState, RefRO};
/// let mut world = World::new();
/// let e = world.spawn(('a',));
/// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
/// assert!(matches!(state.get(&world, e), Err(QueryError::NoMatch { .. })));
/// world.despawn(e).unwrap();
/// assert_eq!(state.get(&world, e), Err(QueryError::NoSuchEntity(e)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// The handle is stale or was never issued.
    NoSuchEntity(Entity),
    /// The entity is alive but does not match the query (missing a component, or filtered out).
    NoMatch {
        /// The entity.
        entity: Entity,
        /// The query's type name.
        query: &'static str,
    },
    /// `get_many_mut` was given this entity more than once: two `&mut` to one row would alias.
    AliasedEntities(Entity),
    /// `single` found no matching entity.
    NoEntities {
        /// The query's type name.
        query: &'static str,
    },
    /// `single` found more than one matching entity.
    MultipleEntities {
        /// The query's type name.
        query: &'static str,
    },
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::NoMatch { entity, query } => {
                write!(f, "entity {entity:?} does not match query `{query}`")
            }
            Self::AliasedEntities(e) => {
                write!(f, "entity {e:?} is named twice: its items would alias")
            }
            Self::NoEntities { query } => write!(f, "no entity matches query `{query}`"),
            Self::MultipleEntities { query } => {
                write!(f, "more than one entity matches query `{query}`")
            }
        }
    }
}

impl std::error::Error for QueryError {}
