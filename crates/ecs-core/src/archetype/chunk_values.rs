//! Chunk values of an archetype: the world's chunk component types and the values every chunk
//! (and the spare, and the values made ahead in `ready`) holds for them (invariant 8).

use super::Archetype;
use crate::chunk::values::{self, Cell, ChunkKind, ChunkKinds, ChunkValues};
use crate::chunk::Chunk;
use crate::component::ComponentId;

impl Archetype {
    /// Takes on the world's chunk component types when the archetype is new (it holds no
    /// chunk yet, so nothing needs a value).
    pub(crate) fn take_chunk_kinds(&mut self, kinds: ChunkKinds) {
        assert_eq!(
            self.chunk_value_holders(),
            0,
            "a new archetype holds no chunk"
        );
        self.chunk_kinds = kinds;
    }

    /// How many chunk value sets the archetype holds: chunks, the spare, and `ready`.
    pub(crate) fn chunk_value_holders(&self) -> usize {
        self.chunks.len() + usize::from(self.spare.is_some()) + self.ready.len()
    }

    /// Takes on `kinds`, the world's chunk component types after `kind` was registered: every
    /// holder gets its value of `kind` from `made` (invariant 8; no user code runs here).
    pub(crate) fn add_chunk_kind(
        &mut self,
        kinds: ChunkKinds,
        kind: &ChunkKind,
        made: &mut dyn Iterator<Item = Cell>,
    ) {
        let values = self
            .chunks
            .iter_mut()
            .chain(&mut self.spare)
            .map(Chunk::chunk_values_mut);
        for values in values.chain(&mut self.ready) {
            values::add_kind(values, kind, made);
        }
        self.chunk_kinds = kinds;
    }

    /// Runs now the user code that adding `rows` rows would run (chunk component `Default`s,
    /// and the `Drop`s of a reused spare's old values), so that the pushes themselves cannot
    /// panic: `World::spawn` calls it before an entity slot goes live. If it panics, the
    /// archetype is as consistent as before (invariant 8).
    pub(crate) fn prepare_rows(&mut self, rows: usize) {
        if self.chunk_kinds.is_empty() {
            return;
        }
        let cap = self.layout.capacity();
        let room = self.chunks.last().map_or(0, |c| cap - c.len());
        if rows > room {
            self.prepare_chunks((rows - room).div_ceil(cap));
        }
    }

    /// Runs now the user code a restore of `rows` rows into this archetype would run: fresh
    /// values made ahead for every chunk the rows fill (reused chunks and a stale spare swap
    /// theirs for these in [`Archetype::fill_empty`]). A panic here leaves the archetype
    /// consistent, before the restore changed anything.
    pub(crate) fn prepare_restore(&mut self, rows: usize) {
        if self.chunk_kinds.is_empty() {
            return;
        }
        let chunks = rows.div_ceil(self.layout.capacity());
        while self.ready.len() < chunks {
            self.ready.push(ChunkValues::make(&self.chunk_kinds));
        }
    }

    /// Makes sure the next `count` chunks to be pushed have fresh values: the spare's made
    /// anew (it is used first), then `ready` filled up.
    #[cold]
    pub(super) fn prepare_chunks(&mut self, mut count: usize) {
        if count == 0 || self.chunk_kinds.is_empty() {
            return;
        }
        if let Some(spare) = &mut self.spare {
            if !spare.chunk_values().is_fresh() {
                // A panicking `Default` leaves the old values; a panicking `Drop` of an old
                // value comes after the spare already holds the fresh ones.
                let fresh = ChunkValues::make(&self.chunk_kinds);
                drop(std::mem::replace(spare.chunk_values_mut(), fresh));
            }
            count -= 1;
        }
        while self.ready.len() < count {
            self.ready.push(ChunkValues::make(&self.chunk_kinds));
        }
    }

    /// The slot of chunk component `id` in every chunk's
    /// [`Chunk::chunk_values`], if `id` is a chunk component.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default)]
    /// struct Bounds(f32);
    /// let mut world = World::new();
    /// let id = world.register_chunk_component::<Bounds>();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunk_value_slot(id), Some(0));
    /// ```
    #[inline]
    pub fn chunk_value_slot(&self, id: ComponentId) -> Option<usize> {
        values::slot_in(&self.chunk_kinds, id)
    }
}
