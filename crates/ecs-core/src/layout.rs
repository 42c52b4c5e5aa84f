//! A report of how a world's archetypes use their chunks.

use std::fmt;

use crate::archetype::{Archetype, ArchetypeId};
use crate::entity::Entity;

/// Chunk usage of one archetype.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.spawn((1u32,));
/// let arch = &world.layout().archetypes[0];
/// assert_eq!(arch.components, [("u32", 4)]);
/// assert_eq!((arch.chunks, arch.entities), (1, 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ArchetypeLayout {
    /// The archetype.
    pub id: ArchetypeId,
    /// `(type name, size in bytes)` per component column.
    pub components: Vec<(&'static str, usize)>,
    /// Rows per chunk.
    pub capacity: usize,
    /// Chunks in use.
    pub chunks: usize,
    /// Entities stored.
    pub entities: usize,
    /// `entities / (chunks * capacity)` as a percentage (100 when there are no chunks).
    pub fill_percent: f64,
    /// Bytes of the archetype's chunks that hold no row data: padding, the tail a full chunk
    /// cannot use, and the free rows of the last chunk.
    pub bytes_unused: usize,
}

/// Chunk usage of every archetype that holds entities, from
/// [`World::layout`](crate::World::layout).
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.spawn((1u32,));
/// let text = world.layout().to_string();
/// assert!(text.starts_with("chunk size: 16384 B"));
/// assert!(text.contains("u32 (4 B)"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WorldLayout {
    /// The chunk size in bytes.
    pub chunk_size: usize,
    /// One entry per non-empty archetype, in archetype order.
    pub archetypes: Vec<ArchetypeLayout>,
}

impl WorldLayout {
    pub(crate) fn of(archetypes: &[Archetype], chunk_size: usize) -> Self {
        let archetypes = archetypes
            .iter()
            .filter(|a| !a.is_empty())
            .map(|a| {
                let components: Vec<_> = a.component_names().collect();
                let row_bytes = size_of::<Entity>() + components.iter().map(|c| c.1).sum::<usize>();
                let capacity = a.layout().capacity();
                let chunks = a.chunks().len();
                let slots = chunks * capacity;
                ArchetypeLayout {
                    id: a.id(),
                    components,
                    capacity,
                    chunks,
                    entities: a.len(),
                    fill_percent: if slots == 0 {
                        100.0
                    } else {
                        100.0 * a.len() as f64 / slots as f64
                    },
                    bytes_unused: chunks * chunk_size - a.len() * row_bytes,
                }
            })
            .collect();
        Self {
            chunk_size,
            archetypes,
        }
    }

    /// Total bytes of all chunks.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn(('a',));
    /// assert_eq!(world.layout().chunk_bytes(), 2 * 16 * 1024);
    /// ```
    pub fn chunk_bytes(&self) -> usize {
        self.archetypes.iter().map(|a| a.chunks).sum::<usize>() * self.chunk_size
    }
}

impl fmt::Display for WorldLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "chunk size: {} B", self.chunk_size)?;
        writeln!(
            f,
            "{:>4}  {:>8}  {:>7}  {:>9}  {:>6}  {:>11}  components",
            "arch", "capacity", "chunks", "entities", "fill", "unused B"
        )?;
        for a in &self.archetypes {
            let names: Vec<String> = a
                .components
                .iter()
                .map(|(name, size)| format!("{} ({size} B)", short_name(name)))
                .collect();
            writeln!(
                f,
                "{:>4}  {:>8}  {:>7}  {:>9}  {:>5.1}%  {:>11}  {}",
                a.id.index(),
                a.capacity,
                a.chunks,
                a.entities,
                a.fill_percent,
                a.bytes_unused,
                if names.is_empty() {
                    "-".to_string()
                } else {
                    names.join(", ")
                }
            )?;
        }
        Ok(())
    }
}

/// `alloc::string::String` → `String`, keeping generic arguments readable.
///
/// ```
/// # use ecs_core::short_name;
/// assert_eq!(short_name("alloc::vec::Vec<alloc::string::String>"), "Vec<String>");
/// ```
pub fn short_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut segment = String::new();
    for ch in name.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == ':' {
            segment.push(ch);
        } else {
            out.push_str(segment.rsplit("::").next().unwrap_or(""));
            segment.clear();
            out.push(ch);
        }
    }
    out.push_str(segment.rsplit("::").next().unwrap_or(""));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names() {
        assert_eq!(short_name("alloc::string::String"), "String");
        assert_eq!(short_name("alloc::vec::Vec<u32>"), "Vec<u32>");
        assert_eq!(short_name("(a::B, c::D)"), "(B, D)");
    }
}
