//! Shared pieces of the `ecs` benchmarks: component types with ecs_bench_suite's sizes, the
//! matrix inverse of `heavy_compute`, flat `f32` views for the vectorised-limit loops, and a
//! counting allocator for the memory measurement.
//!
//! The benchmarks themselves are in `benches/` (criterion); the side-by-side comparison with
//! hecs, bevy_ecs and legion is the separate package in `compare/`.

#[expect(
    unsafe_code,
    reason = "forwards to the system allocator while counting"
)]
mod alloc;
mod components;
mod flat;
mod math;

pub use alloc::CountingAlloc;
pub use components::*;
pub use flat::{add_assign_flat, as_f32s, as_f32s_mut};
pub use math::{heavy_kernel, invert, mul, rotation_x, transform_vector, Mat4, Vec3, IDENTITY};

/// Calls `$f::<N>()` for each `N` in `0..26`: one call per `frag_iter` letter type.
#[macro_export]
macro_rules! for_each_letter {
    ($f:ident ( $($arg:expr),* )) => {
        $f::<0>($($arg),*); $f::<1>($($arg),*); $f::<2>($($arg),*); $f::<3>($($arg),*);
        $f::<4>($($arg),*); $f::<5>($($arg),*); $f::<6>($($arg),*); $f::<7>($($arg),*);
        $f::<8>($($arg),*); $f::<9>($($arg),*); $f::<10>($($arg),*); $f::<11>($($arg),*);
        $f::<12>($($arg),*); $f::<13>($($arg),*); $f::<14>($($arg),*); $f::<15>($($arg),*);
        $f::<16>($($arg),*); $f::<17>($($arg),*); $f::<18>($($arg),*); $f::<19>($($arg),*);
        $f::<20>($($arg),*); $f::<21>($($arg),*); $f::<22>($($arg),*); $f::<23>($($arg),*);
        $f::<24>($($arg),*); $f::<25>($($arg),*);
    };
}
