//! The predefined component types a [`Mix`](crate::Mix) is built from.
//!
//! Rust needs component types at compile time, so a mix picks from a fixed menu: [`Hot`]
//! columns of 1 to 4 `f32` lanes (the query's two columns), and one cold column, [`Pad`]
//! (byte-aligned) or [`Pad16`] (16-byte aligned), of a size from
//! [`COLD_MENU`](crate::COLD_MENU). [`Tag`] is the zero-sized component the add/remove
//! measurement moves rows with.

use ecs_core::Component;

/// A hot column: `L` `f32` lanes (`4 × L` bytes, align 4). `I` tells the two hot columns apart.
///
/// ```
/// # use ecs_lab::Hot;
/// assert_eq!(size_of::<Hot<0, 3>>(), 12);
/// assert_eq!(align_of::<Hot<1, 3>>(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hot<const I: usize, const L: usize>(pub [f32; L]);

/// A cold column of `N` bytes, align 1.
///
/// ```
/// # use ecs_lab::Pad;
/// assert_eq!((size_of::<Pad<276>>(), align_of::<Pad<276>>()), (276, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pad<const N: usize>(pub [u8; N]);

/// 16 bytes aligned to 16: the element of [`Pad16`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Block16(pub [u8; 16]);

/// A cold column of `N` 16-byte blocks (`16 × N` bytes), align 16.
///
/// ```
/// # use ecs_lab::Pad16;
/// assert_eq!((size_of::<Pad16<4>>(), align_of::<Pad16<4>>()), (64, 16));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pad16<const N: usize>(pub [Block16; N]);

/// The zero-sized tag added and removed by the add/remove measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tag;

/// A cold column type: filled with a byte derived from the row number, so rows differ.
pub trait Cold: Component + Copy {
    /// The value of row `row`.
    fn filled(row: usize) -> Self;
}

impl<const N: usize> Cold for Pad<N> {
    fn filled(row: usize) -> Self {
        Self([row as u8; N])
    }
}

impl<const N: usize> Cold for Pad16<N> {
    fn filled(row: usize) -> Self {
        Self([Block16([row as u8; 16]); N])
    }
}
