//! Invariant checks of an archetype, for `World::check_invariants`.

use super::{Archetype, ABSENT};
use crate::chunk::layout::{ChunkLayout, ColumnSpec};
use crate::chunk::Chunk;
use crate::component::Components;
use crate::entity::Entity;

impl Archetype {
    /// Asserts invariant 6 against `components`, the registry of the world that owns this
    /// archetype, and the layout half of invariant 1.
    pub(crate) fn check_registry(&self, components: &Components) {
        let id = self.id;
        let mut specs = Vec::with_capacity(self.columns.len());
        for (c, meta) in self.columns.iter().enumerate() {
            assert!(
                meta.id.index() < components.len(),
                "{id:?}: column {c} has unregistered component {:?}",
                meta.id
            );
            let info = components.info(meta.id);
            assert_eq!(info.id(), meta.id, "{id:?}: registry entry of column {c}");
            assert_eq!(meta.name, info.name(), "{id:?}: type of column {c}");
            assert_eq!(meta.size, info.size(), "{id:?}: size of column {c}");
            assert_eq!(
                self.marks[c],
                components.row_ticks(meta.id),
                "{id:?}: row ticks of column {c}"
            );
            let same_drop = match (meta.drop, info.drop_fn()) {
                (None, None) => true,
                (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
                _ => false,
            };
            assert!(same_drop, "{id:?}: drop glue of column {c}");
            assert_eq!(
                info.is_enableable(),
                self.enable_slot(c).is_some(),
                "{id:?}: enableable flag of column {c}"
            );
            assert_eq!(
                (meta.offset, meta.size),
                (self.layout.offset(c), self.layout.size(c)),
                "{id:?}: column {c} disagrees with the layout"
            );
            specs.push(ColumnSpec {
                size: info.size(),
                align: info.align().max(self.layout.column_align()),
            });
        }
        let fresh =
            ChunkLayout::new_ordered(self.layout.chunk_size(), &specs, self.layout.placement())
                .expect("an archetype's row fits its chunk");
        assert_eq!(
            fresh.capacity(),
            self.layout.capacity(),
            "{id:?}: capacity disagrees with the registry's types"
        );
        assert_eq!(
            fresh.align(),
            self.layout.align(),
            "{id:?}: chunk alignment disagrees with the registry's types"
        );
        for c in 0..specs.len() {
            assert_eq!(
                fresh.offset(c),
                self.layout.offset(c),
                "{id:?}: offset of column {c} disagrees with the registry's types"
            );
        }
    }

    /// Asserts invariants 1–3 and 5; `entity_at` checks that the entity table points back here.
    pub(crate) fn check(&self, mut entity_at: impl FnMut(Entity, usize)) {
        let ids: Vec<_> = self.columns.iter().map(|c| c.id).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "{:?}: columns not ascending",
            self.id
        );
        assert_eq!(
            self.signature,
            ids.iter().copied().collect(),
            "{:?}: signature",
            self.id
        );
        for (c, id) in ids.iter().enumerate() {
            assert_eq!(self.column(*id), Some(c), "{:?}: column map", self.id);
        }
        let absent = self.column_of.iter().filter(|&&c| c == ABSENT).count();
        assert_eq!(
            absent + ids.len(),
            self.column_of.len(),
            "{:?}: stray column map",
            self.id
        );
        let cap = self.layout.capacity();
        let mut total = 0;
        for (i, chunk) in self.chunks.iter().enumerate() {
            let last = i + 1 == self.chunks.len();
            assert!(chunk.len() <= cap, "{:?}: chunk {i} over capacity", self.id);
            assert!(
                last || chunk.len() == cap,
                "{:?}: chunk {i} not full",
                self.id
            );
            assert!(!chunk.is_empty(), "{:?}: empty chunk {i} kept", self.id);
            chunk.check_row_ticks(self.columns.len(), cap, &self.marks);
            let masks = chunk.enable_bits();
            assert_eq!(
                masks.len(),
                self.enable_cols.len(),
                "{:?}: chunk {i} enable masks",
                self.id
            );
            masks.check(chunk.len(), &|s| {
                format!("{:?}: chunk {i} enable slot {s}", self.id)
            });
            chunk
                .chunk_values()
                .check(&self.chunk_kinds, &|| format!("{:?}: chunk {i}", self.id));
            for (r, &e) in chunk.entities().iter().enumerate() {
                entity_at(e, i * cap + r);
            }
            total += chunk.len();
        }
        assert_eq!(total, self.len, "{:?}: len", self.id);
        assert!(
            self.spare.as_ref().is_none_or(Chunk::is_empty),
            "{:?}: spare chunk holds rows",
            self.id
        );
        if let Some(spare) = &self.spare {
            spare
                .enable_bits()
                .check(0, &|s| format!("{:?}: spare enable slot {s}", self.id));
            spare
                .chunk_values()
                .check(&self.chunk_kinds, &|| format!("{:?}: spare", self.id));
        }
        for (i, values) in self.ready.iter().enumerate() {
            values.check(&self.chunk_kinds, &|| {
                format!("{:?}: ready values {i}", self.id)
            });
            assert!(
                values.is_fresh(),
                "{:?}: ready values {i} are not fresh",
                self.id
            );
        }
        let expect: Vec<usize> = (0..self.columns.len())
            .filter(|&c| self.enable_ids.contains(&self.columns[c].id))
            .collect();
        assert_eq!(*self.enable_cols, *expect, "{:?}: enable columns", self.id);
    }
}
