//! Pod columns as bytes or as flat slices of another pod type, through `bytemuck`.
//!
//! A column of `Position([f32; 3])` is `3 × len` consecutive `f32`s; seeing it as one `&[f32]`
//! lets a loop run over the flat numbers (which the compiler vectorises without per-struct
//! shuffles), and seeing it as `&[u8]` lets it be hashed or sent as is. The `bytemuck::Pod`
//! bounds prove both views sound, so neither needs `unsafe` from the caller, and the view
//! borrows the chunk view exactly as [`ChunkView::column`] does (with the same access checks).

use bytemuck::Pod;
use ecs_core::Component;

use crate::fetch::WorldQuery;
use crate::run::chunk_view::ChunkView;

/// Pod views of a [`ChunkView`]'s columns.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{PodColumns, QueryExt, RefRO, RefRW};
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Position([f32; 3]);
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Velocity([f32; 3]);
///
/// let mut world = World::new();
/// let e = world.spawn((Position([1.0, 2.0, 3.0]), Velocity([0.5; 3])));
/// world
///     .query::<(RefRW<Position>, RefRO<Velocity>)>()
///     .for_each_chunk(|mut view| {
///         let vel: Vec<f32> = view.column_as::<Velocity, f32>().to_vec();
///         for (p, v) in view.column_as_mut::<Position, f32>().iter_mut().zip(&vel) {
///             *p += v;
///         }
///         assert_eq!(view.column_bytes::<Velocity>().len(), 12);
///     });
/// assert_eq!(world.get::<Position>(e).unwrap().0, [1.5, 2.5, 3.5]);
/// ```
pub trait PodColumns {
    /// The column of `T` as bytes.
    ///
    /// # Panics
    /// As [`ChunkView::column`]: if the query does not access `T`, or this chunk lacks it.
    fn column_bytes<T: Pod + Component>(&self) -> &[u8];

    /// The column of `T` as a slice of `U`s (`size_of::<T>() × len / size_of::<U>()` of
    /// them), e.g. `&[f32]` for a column of `Position([f32; 3])`.
    ///
    /// # Panics
    /// As [`ChunkView::column`], and if the column's bytes are not a whole number of `U`s or
    /// not aligned for `U` (`bytemuck::cast_slice`'s checks).
    fn column_as<T: Pod + Component, U: Pod>(&self) -> &[U];

    /// The column of `T`, which the query writes, as a mutable slice of `U`s.
    ///
    /// # Panics
    /// As [`ChunkView::column_mut`], and as [`PodColumns::column_as`].
    fn column_as_mut<T: Pod + Component, U: Pod>(&mut self) -> &mut [U];
}

impl<Q: WorldQuery> PodColumns for ChunkView<'_, Q> {
    fn column_bytes<T: Pod + Component>(&self) -> &[u8] {
        bytemuck::cast_slice(self.column::<T>())
    }

    fn column_as<T: Pod + Component, U: Pod>(&self) -> &[U] {
        bytemuck::cast_slice(self.column::<T>())
    }

    fn column_as_mut<T: Pod + Component, U: Pod>(&mut self) -> &mut [U] {
        bytemuck::cast_slice_mut(self.column_mut::<T>())
    }
}

#[cfg(test)]
mod tests {
    use ecs_core::World;

    use super::*;
    use crate::{QueryExt, RefRO};

    #[test]
    fn bytes_follow_the_column_and_bad_casts_panic() {
        let mut world = World::new();
        world.spawn(([1u8, 2, 3],));
        world.spawn(([4u8, 5, 6],));
        world.query::<RefRO<[u8; 3]>>().for_each_chunk(|view| {
            assert_eq!(view.column_bytes::<[u8; 3]>(), [1, 2, 3, 4, 5, 6]);
            assert_eq!(
                view.column_as::<[u8; 3], [u8; 2]>(),
                [[1, 2], [3, 4], [5, 6]]
            );
            // Six bytes are not a whole number of `u32`s: bytemuck refuses, loudly.
            let bad = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                view.column_as::<[u8; 3], [u8; 4]>().len()
            }));
            assert!(bad.is_err());
        });
    }
}
