//! Error type of the query crate.

use std::fmt;

use ecs_core::Entity;

/// A random-access query lookup failed.
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
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchEntity(e) => write!(f, "no such entity: {e:?}"),
            Self::NoMatch { entity, query } => {
                write!(f, "entity {entity:?} does not match query `{query}`")
            }
        }
    }
}

impl std::error::Error for QueryError {}
