//! [`Entity`] as plain bytes, for components that hold entity ids and are snapshotted, hashed
//! and written to disk as bytes ([`World::register_checked`](crate::World::register_checked)).
//!
//! An `Entity` has no padding (`repr(C)`: a `u32` index and a `NonZeroU32` generation), so it
//! is `bytemuck::NoUninit`: its bytes can be read. It is not `Pod`, since a zero generation is
//! not a valid value; it is `bytemuck::CheckedBitPattern` instead, with [`EntityBits`] as the
//! unchecked form, so bytes from outside (a file, the network) are checked before they become
//! entities. A component holding entities derives both traits the same way:
//!
//! ```
//! use bytemuck::{CheckedBitPattern, NoUninit};
//! use ecs_core::Entity;
//!
//! #[derive(Clone, Copy, NoUninit, CheckedBitPattern)]
//! #[repr(C)]
//! struct Target {
//!     who: Entity,
//!     range: f32,
//!     _pad: u32, // no padding allowed: fill it
//! }
//! let bytes = [5u32, 1, 0, 0];
//! let t: Target = bytemuck::checked::pod_read_unaligned(bytemuck::cast_slice(&bytes));
//! assert_eq!(t.who.index(), 5);
//! let zero_generation = [5u32, 0, 0, 0];
//! assert!(bytemuck::checked::try_pod_read_unaligned::<Target>(bytemuck::cast_slice(&zero_generation)).is_err());
//! ```

use bytemuck::{CheckedBitPattern, NoUninit, Pod, Zeroable};

use super::Entity;

/// The bits of an [`Entity`] before they are checked: its layout, with the generation as a
/// plain `u32` (zero is the invalid pattern).
///
/// ```
/// # use ecs_core::{Entity, EntityBits};
/// # use bytemuck::CheckedBitPattern;
/// assert!(Entity::is_valid_bit_pattern(&EntityBits { index: 3, generation: 1 }));
/// assert!(!Entity::is_valid_bit_pattern(&EntityBits { index: 3, generation: 0 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct EntityBits {
    /// The slot index.
    pub index: u32,
    /// The generation; zero in no valid entity.
    pub generation: u32,
}

const _: () = {
    assert!(size_of::<Entity>() == 8 && align_of::<Entity>() == 8);
    assert!(size_of::<EntityBits>() == 8 && align_of::<EntityBits>() == 8);
    assert!(
        std::mem::offset_of!(Entity, generation) == std::mem::offset_of!(EntityBits, generation)
    );
};

// SAFETY: two `u32`s in `repr(C, align(8))`: 8 bytes, no padding (checked above); any bytes,
// zeros included, are a valid value.
unsafe impl Zeroable for EntityBits {}
// SAFETY: as for `Zeroable`; and it is `Copy + 'static`.
unsafe impl Pod for EntityBits {}

// SAFETY: `Entity` is `repr(C, align(8))` with a `u32` at offset 0 and a `NonZeroU32` at
// offset 4: 8 bytes, no padding (checked above), so every byte of a value is initialised.
unsafe impl NoUninit for Entity {}

// SAFETY: `EntityBits` has `Entity`'s layout field for field (same size, alignment and
// offsets, checked above); `NonZeroU32` is a `u32` whose only invalid value is 0, which is
// exactly what `is_valid_bit_pattern` refuses.
unsafe impl CheckedBitPattern for Entity {
    type Bits = EntityBits;

    #[inline]
    fn is_valid_bit_pattern(bits: &EntityBits) -> bool {
        bits.generation != 0
    }
}
