//! The component types of the benchmarks, with ecs_bench_suite's sizes: `Transform` is a 4×4
//! `f32` matrix (64 B), `Position` / `Rotation` / `Velocity` are three `f32`s (12 B).

use crate::math::{Mat4, Vec3};

/// A 4×4 `f32` matrix (64 B).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
pub struct Transform(pub Mat4);

/// A position (12 B).
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Position(pub Vec3);

/// A rotation (12 B).
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Rotation(pub Vec3);

/// A velocity (12 B).
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Velocity(pub Vec3);

/// `schedule` / `add_remove` component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct A(pub f32);
/// `schedule` / `add_remove` component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct B(pub f32);
/// `schedule` component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct C(pub f32);
/// `schedule` component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct D(pub f32);
/// `schedule` component.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct E(pub f32);

/// The value `frag_iter` doubles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Data(pub f32);

/// `frag_iter`'s 26 letter components (`Letter<0>` is "A" … `Letter<25>` is "Z").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Letter<const N: usize>(pub f32);

/// `frag_iter_many`'s nine marker components: their 2⁹ subsets make the archetypes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tag<const N: usize>(pub f32);

/// `add_remove_wide`'s ten "other" components, 16 B each.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Wide<const N: usize>(pub [f32; 4]);

/// `chunk_layout`'s value column: `L` `f32`s (`4 × L` bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Value<const L: usize>(pub [f32; L]);

/// `chunk_layout`'s delta column, added to [`Value`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delta<const L: usize>(pub [f32; L]);

impl<const L: usize> Default for Value<L> {
    fn default() -> Self {
        Self([0.0; L])
    }
}

impl<const L: usize> Default for Delta<L> {
    fn default() -> Self {
        Self([1.0; L])
    }
}

/// The ecs_bench_suite entity: (Transform, Position, Rotation, Velocity).
pub type SuiteBundle = (Transform, Position, Rotation, Velocity);

/// The entity `simple_insert` / `simple_iter` spawn: identity matrix, unit-x vectors.
pub fn suite_bundle() -> SuiteBundle {
    (
        Transform(crate::math::IDENTITY),
        Position(Vec3::UNIT_X),
        Rotation(Vec3::UNIT_X),
        Velocity(Vec3::UNIT_X),
    )
}

/// The entity `heavy_compute` spawns: a 1.2 rad rotation about x, unit-x vectors.
pub fn heavy_bundle() -> SuiteBundle {
    (
        Transform(crate::math::rotation_x(1.2)),
        Position(Vec3::UNIT_X),
        Rotation(Vec3::UNIT_X),
        Velocity(Vec3::UNIT_X),
    )
}

/// One `add_remove_wide` entity: `A` plus ten 16 B components (eleven columns).
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
