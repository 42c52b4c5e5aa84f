//! Columns of `f32`-only structs seen as flat `f32` slices: the "vectorised limit" loops.
//!
//! A column of `Position(Vec3)` is `3 × len` consecutive `f32`s; adding two such columns as flat
//! slices is one loop the compiler turns into packed SIMD adds, with no per-struct shuffles.
//! The casts are `bytemuck`'s: the component types derive `Pod`, which proves them plain `f32`s
//! without padding, so nothing here is `unsafe` (inside the engine, `PodColumns` gives the same
//! views of a chunk's columns).

use bytemuck::Pod;

/// `values` as one slice of `f32`s (`size_of::<T>() / 4 × len` of them).
///
/// # Panics
/// If `T` is not a whole number of `f32`s or less aligned than `f32` (`bytemuck`'s checks).
#[inline(always)]
pub fn as_f32s<T: Pod>(values: &[T]) -> &[f32] {
    bytemuck::cast_slice(values)
}

/// `values` as one mutable slice of `f32`s.
///
/// # Panics
/// As [`as_f32s`].
#[inline(always)]
pub fn as_f32s_mut<T: Pod>(values: &mut [T]) -> &mut [f32] {
    bytemuck::cast_slice_mut(values)
}

/// `dst[i] += src[i]` over two flat columns of equal length.
#[inline(always)]
pub fn add_assign_flat(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}
