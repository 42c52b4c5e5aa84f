//! Typed, safe access to one archetype's column: [`World::column`], [`World::column_mut`] and
//! [`World::column_chunks`] give `&[T]` / `&mut [T]` per chunk, with no raw pointer in sight.
//!
//! The type check is what makes these safe: the column is looked up by `T`'s id in the world's
//! own registry, so the slice's element type is the type the column stores (`World` invariant
//! 4). Cost: one registry lookup and one column lookup per call, then plain slices.

use crate::archetype::Archetype;
use crate::component::Component;
use crate::ids::ArchetypeId;
use crate::world::World;

impl World {
    /// The archetype and `T`'s column in it, if both exist.
    fn typed_column<T: Component>(&self, archetype: ArchetypeId) -> Option<(&Archetype, usize)> {
        let arch = self.archetypes().get(archetype.index())?;
        let col = arch.column(self.component_id::<T>()?)?;
        Some((arch, col))
    }

    /// The `T` values of chunk `chunk` of `archetype`, in row order (the same order as that
    /// chunk's [`entities`](crate::Chunk::entities)).
    ///
    /// Returns `None` if the archetype or chunk does not exist or the archetype has no `T`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((7u32, 'a'));
    /// world.spawn((8u32, 'b'));
    /// let arch = world.location(e).unwrap().archetype;
    /// assert_eq!(world.column::<u32>(arch, 0), Some(&[7, 8][..]));
    /// assert_eq!(world.column::<f32>(arch, 0), None); // no such column
    /// assert_eq!(world.column::<u32>(arch, 1), None); // no such chunk
    /// ```
    pub fn column<T: Component>(&self, archetype: ArchetypeId, chunk: usize) -> Option<&[T]> {
        let (arch, col) = self.typed_column::<T>(archetype)?;
        let chunk = arch.chunks().get(chunk)?;
        let base = arch.column_base(chunk, col).cast::<T>();
        // SAFETY: `col` is the column of `T`'s id in this world's registry, so it stores `T`s
        // (`World` invariant 4), aligned by the chunk layout; rows `0..len` are initialised
        // (`Chunk` invariant); `&self` keeps writers out for the borrow's life.
        Some(unsafe { std::slice::from_raw_parts(base.as_ptr(), chunk.len()) })
    }

    /// [`World::column`] with write access; stamps the chunk column as changed.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let arch = world.location(e).unwrap().archetype;
    /// world.column_mut::<u32>(arch, 0).unwrap()[0] += 1;
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// ```
    pub fn column_mut<T: Component>(
        &mut self,
        archetype: ArchetypeId,
        chunk: usize,
    ) -> Option<&mut [T]> {
        let tick = self.change_tick();
        let (arch, col) = self.typed_column::<T>(archetype)?;
        let chunk = arch.chunks().get(chunk)?;
        // SAFETY: `&mut self` is write access to every column, `tick` is the current tick, and
        // the slice covers every row of the chunk (a bulk stamp where rows keep marks).
        unsafe { chunk.mark_rows_unchecked(col, 0..chunk.len(), tick) };
        let base = arch.column_base(chunk, col).cast::<T>();
        // SAFETY: as in `column`, and `&mut self` makes this the only reference to the column
        // for the borrow's life.
        Some(unsafe { std::slice::from_raw_parts_mut(base.as_ptr(), chunk.len()) })
    }

    /// The `T` column of `archetype`, one slice per chunk; empty if the archetype does not
    /// exist or has no `T`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::with_test_chunk_size(256);
    /// let first = world.spawn((0u64,));
    /// for i in 1..100u64 {
    ///     world.spawn((i,));
    /// }
    /// let arch = world.location(first).unwrap().archetype;
    /// let chunks: Vec<&[u64]> = world.column_chunks::<u64>(arch).collect();
    /// assert!(chunks.len() > 1);
    /// assert_eq!(chunks.iter().map(|c| c.iter().sum::<u64>()).sum::<u64>(), (0..100).sum());
    /// ```
    pub fn column_chunks<T: Component>(
        &self,
        archetype: ArchetypeId,
    ) -> impl ExactSizeIterator<Item = &[T]> + '_ {
        let chunks = self
            .typed_column::<T>(archetype)
            .map_or(0, |(a, _)| a.chunks().len());
        (0..chunks).map(move |i| {
            self.column::<T>(archetype, i)
                .expect("the chunk and column were just found")
        })
    }
}
