//! The workloads' component types, as in `benches/src/components.rs`, plus bevy's derive (the
//! other engines take any `Send + Sync + 'static` type).

use bevy_ecs::component::Component;

use crate::math::{Mat4, Vec3};

/// A 4×4 `f32` matrix (64 B).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
pub struct Transform(pub Mat4);

/// A position (12 B).
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(transparent)]
pub struct Position(pub Vec3);

/// A rotation (12 B).
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(transparent)]
pub struct Rotation(pub Vec3);

/// A velocity (12 B).
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(transparent)]
pub struct Velocity(pub Vec3);

macro_rules! scalar {
    ($($name:ident),*) => {$(
        /// A one-`f32` component.
        #[derive(
            Component, Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable,
        )]
        #[repr(transparent)]
        pub struct $name(pub f32);
    )*};
}
scalar!(A, B, C, D, E, Data);

/// `frag_iter`'s letters: `Letter<0>` is "A" … `Letter<25>` is "Z".
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Letter<const N: usize>(pub f32);

/// `frag_iter_many`'s nine markers; archetype `k` carries the tags of the bits of `k`.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Tag<const N: usize>(pub f32);

/// `add_remove_wide`'s ten "other" components, 16 B each.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Wide<const N: usize>(pub [f32; 4]);

/// The ecs_bench_suite entity.
pub type SuiteBundle = (Transform, Position, Rotation, Velocity);

/// `simple_insert` / `simple_iter` entity: identity matrix, unit-x vectors.
pub fn suite_bundle() -> SuiteBundle {
    (
        Transform(crate::math::IDENTITY),
        Position(Vec3::UNIT_X),
        Rotation(Vec3::UNIT_X),
        Velocity(Vec3::UNIT_X),
    )
}

/// `heavy_compute` entity: a 1.2 rad rotation about x.
pub fn heavy_bundle() -> SuiteBundle {
    (
        Transform(crate::math::rotation_x(1.2)),
        Position(Vec3::UNIT_X),
        Rotation(Vec3::UNIT_X),
        Velocity(Vec3::UNIT_X),
    )
}

/// `iter_1m` entity.
pub fn pos_vel(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
    )
}

/// `spawn_batch_1m` entity: three components.
pub fn spawn_row(i: usize) -> (Position, Velocity, Rotation) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
        Rotation(Vec3::UNIT_X),
    )
}

/// `add_remove_wide` entity: `A` plus ten 16 B components.
pub type WideBundle = (
    A,
    Wide<0>,
    Wide<1>,
    Wide<2>,
    Wide<3>,
    Wide<4>,
    Wide<5>,
    Wide<6>,
    Wide<7>,
    Wide<8>,
    Wide<9>,
);

/// The `add_remove_wide` entity.
pub fn wide_bundle() -> WideBundle {
    let w = [1.0; 4];
    (
        A(0.0),
        Wide(w),
        Wide(w),
        Wide(w),
        Wide(w),
        Wide(w),
        Wide(w),
        Wide(w),
        Wide(w),
        Wide(w),
        Wide(w),
    )
}

/// Calls `$f::<N>($args)` for each `N` in `0..26`.
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

/// Calls `$f::<N>($args)` for each `N` in `0..9`: one call per `frag_iter_many` tag.
#[macro_export]
macro_rules! for_each_tag {
    ($f:ident ( $($arg:expr),* )) => {
        $f::<0>($($arg),*); $f::<1>($($arg),*); $f::<2>($($arg),*); $f::<3>($($arg),*);
        $f::<4>($($arg),*); $f::<5>($($arg),*); $f::<6>($($arg),*); $f::<7>($($arg),*);
        $f::<8>($($arg),*);
    };
}
