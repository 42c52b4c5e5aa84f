//! The little linear algebra the ecs_bench_suite workloads need: a 3-vector, a 4×4 matrix, and a
//! general 4×4 inverse (cofactor expansion over 2×2 minors, ~100 flops) for `heavy_compute`.
//!
//! The peer comparison (`benches/compare`) includes this file too, so every engine runs the very
//! same arithmetic.

use std::ops::AddAssign;

/// Three `f32`s, laid out as `[f32; 3]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Vec3 {
    /// First coordinate.
    pub x: f32,
    /// Second coordinate.
    pub y: f32,
    /// Third coordinate.
    pub z: f32,
}

impl Vec3 {
    /// `(1, 0, 0)`, the value ecs_bench_suite spawns.
    pub const UNIT_X: Self = Self::new(1.0, 0.0, 0.0);

    /// A vector from its coordinates.
    pub const fn new(x: f32, y: f32, z: f32) -> Self {
        Self { x, y, z }
    }
}

impl AddAssign for Vec3 {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Self) {
        self.x += rhs.x;
        self.y += rhs.y;
        self.z += rhs.z;
    }
}

/// A row-major 4×4 matrix: `m[row][col]`.
pub type Mat4 = [[f32; 4]; 4];

/// The identity matrix.
pub const IDENTITY: Mat4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// Rotation by `angle` radians about the x axis.
pub fn rotation_x(angle: f32) -> Mat4 {
    let (s, c) = angle.sin_cos();
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, c, -s, 0.0],
        [0.0, s, c, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

/// `m · (v, 0)`: the direction `v` transformed by `m` (translation ignored).
#[inline]
pub fn transform_vector(m: &Mat4, v: Vec3) -> Vec3 {
    let row = |r: &[f32; 4]| r[0] * v.x + r[1] * v.y + r[2] * v.z;
    Vec3::new(row(&m[0]), row(&m[1]), row(&m[2]))
}

/// `a · b`.
pub fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut out = [[0.0; 4]; 4];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// The inverse of `m`, or `None` if `m` is singular.
///
/// Expands the determinant and the adjugate over the six 2×2 minors of the top two rows (`s`)
/// and the six of the bottom two rows (`c`): `det = Σ ±s_i·c_(5-i)`, and each cofactor is a
/// 3-term combination of one row's entries with those minors.
#[inline]
pub fn invert(m: &Mat4) -> Option<Mat4> {
    let [[a00, a01, a02, a03], [a10, a11, a12, a13], [a20, a21, a22, a23], [a30, a31, a32, a33]] =
        *m;
    let s0 = a00 * a11 - a10 * a01;
    let s1 = a00 * a12 - a10 * a02;
    let s2 = a00 * a13 - a10 * a03;
    let s3 = a01 * a12 - a11 * a02;
    let s4 = a01 * a13 - a11 * a03;
    let s5 = a02 * a13 - a12 * a03;
    let c5 = a22 * a33 - a32 * a23;
    let c4 = a21 * a33 - a31 * a23;
    let c3 = a21 * a32 - a31 * a22;
    let c2 = a20 * a33 - a30 * a23;
    let c1 = a20 * a32 - a30 * a22;
    let c0 = a20 * a31 - a30 * a21;
    let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let d = 1.0 / det;
    Some([
        [
            (a11 * c5 - a12 * c4 + a13 * c3) * d,
            (-a01 * c5 + a02 * c4 - a03 * c3) * d,
            (a31 * s5 - a32 * s4 + a33 * s3) * d,
            (-a21 * s5 + a22 * s4 - a23 * s3) * d,
        ],
        [
            (-a10 * c5 + a12 * c2 - a13 * c1) * d,
            (a00 * c5 - a02 * c2 + a03 * c1) * d,
            (-a30 * s5 + a32 * s2 - a33 * s1) * d,
            (a20 * s5 - a22 * s2 + a23 * s1) * d,
        ],
        [
            (a10 * c4 - a11 * c2 + a13 * c0) * d,
            (-a00 * c4 + a01 * c2 - a03 * c0) * d,
            (a30 * s4 - a31 * s2 + a33 * s0) * d,
            (-a20 * s4 + a21 * s2 - a23 * s0) * d,
        ],
        [
            (-a10 * c3 + a11 * c1 - a12 * c0) * d,
            (a00 * c3 - a01 * c1 + a02 * c0) * d,
            (-a30 * s3 + a31 * s1 - a32 * s0) * d,
            (a20 * s3 - a21 * s1 + a22 * s0) * d,
        ],
    ])
}

/// The `heavy_compute` kernel: invert `m` 100 times, then transform `v` by the result.
#[inline]
pub fn heavy_kernel(m: &mut Mat4, v: &mut Vec3) {
    for _ in 0..100 {
        *m = invert(m).expect("a rotation is invertible");
    }
    *v = transform_vector(m, *v);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &Mat4, b: &Mat4) -> bool {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let m: Mat4 = [
            [2.0, 0.5, -1.0, 3.0],
            [0.0, 1.5, 2.0, -0.5],
            [1.0, -2.0, 0.25, 1.0],
            [0.5, 0.0, 1.0, 2.0],
        ];
        let inv = invert(&m).expect("invertible");
        assert!(close(&mul(&m, &inv), &IDENTITY));
        assert!(close(&mul(&inv, &m), &IDENTITY));
    }

    #[test]
    fn singular_has_no_inverse() {
        let m: Mat4 = [[1.0, 2.0, 3.0, 4.0]; 4];
        assert_eq!(invert(&m), None);
    }

    #[test]
    fn rotation_inverse_rotates_back() {
        let r = rotation_x(1.2);
        let inv = invert(&r).expect("invertible");
        assert!(close(&inv, &rotation_x(-1.2)));
        let mut m = r;
        let mut v = Vec3::UNIT_X;
        heavy_kernel(&mut m, &mut v);
        assert!(close(&m, &r), "an even number of inversions gives `r` back");
        assert_eq!(v, Vec3::UNIT_X, "x is the rotation axis");
    }
}
