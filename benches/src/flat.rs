//! Columns of `f32`-only structs seen as flat `f32` slices: the "vectorised limit" loops.
//!
//! A column of `Position(Vec3)` is `3 × len` consecutive `f32`s; adding two such columns as flat
//! slices is one loop the compiler turns into packed SIMD adds, with no per-struct shuffles.

/// A type that is exactly `LANES` consecutive `f32`s.
///
/// # Safety
/// Implementors are `#[repr(C)]` or `#[repr(transparent)]` over `f32`s only, with no padding:
/// `size_of::<Self>() == 4 * LANES` and `align_of::<Self>() == 4`, and every bit pattern of
/// those `f32`s is a valid `Self`.
pub unsafe trait F32s: Sized {
    /// Number of `f32`s in one value.
    const LANES: usize;
}

/// `values` as one slice of `LANES × len` `f32`s.
#[inline(always)]
pub fn as_f32s<T: F32s>(values: &[T]) -> &[f32] {
    const { assert!(size_of::<T>() == 4 * T::LANES && align_of::<T>() == 4) };
    // SAFETY: `T` is `LANES` `f32`s without padding (trait contract, checked above), so the
    // slice's memory is `LANES × len` initialised `f32`s, borrowed for the same lifetime.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<f32>(), values.len() * T::LANES) }
}

/// `values` as one mutable slice of `LANES × len` `f32`s.
#[inline(always)]
pub fn as_f32s_mut<T: F32s>(values: &mut [T]) -> &mut [f32] {
    const { assert!(size_of::<T>() == 4 * T::LANES && align_of::<T>() == 4) };
    // SAFETY: as in `as_f32s`; any `f32` written is a valid `T` (trait contract), and the
    // exclusive borrow is handed on.
    unsafe {
        std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<f32>(), values.len() * T::LANES)
    }
}

/// `dst[i] += src[i]` over two flat columns of equal length.
#[inline(always)]
pub fn add_assign_flat(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}
