//! What a sweep measures: a component mix, described in one short string.
//!
//! `NAME=LANES:COLD[@ALIGN]` is an archetype of two [`Hot`](crate::Hot) columns of `LANES`
//! `f32`s each (what the query touches) and one cold column of `COLD` bytes aligned to `ALIGN`
//! (1 by default, or 16), plus the 8-byte entity id every row carries:
//! `row = 8 + 2 × 4 × LANES + COLD` bytes. The issue's three mixes are
//! `small=2:8` (32 B), `medium=3:92` (124 B) and `wide=3:276` (308 B).
//!
//! # Invariants
//! 1. A parsed [`Mix`] has `hot_lanes` in [`HOT_LANES`] and `(cold_bytes, cold_align)` in
//!    [`COLD_MENU`], so the sweep's type dispatch always finds its component types.

use std::ops::RangeInclusive;

use crate::error::LabError;

/// The hot column widths that have a predefined type, in `f32` lanes.
pub const HOT_LANES: RangeInclusive<usize> = 1..=4;

/// The `(bytes, align)` cold columns that have a predefined type: [`Pad`](crate::Pad) for
/// align 1 (0 is a zero-sized column), [`Pad16`](crate::Pad16) for align 16.
pub const COLD_MENU: &[(usize, usize)] = &[
    (0, 1),
    (8, 1),
    (16, 1),
    (32, 1),
    (64, 1),
    (92, 1),
    (128, 1),
    (256, 1),
    (276, 1),
    (512, 1),
    (16, 16),
    (32, 16),
    (64, 16),
    (128, 16),
    (256, 16),
];

/// One component mix of a sweep. Build it with [`Mix::parse`] (checked) or [`Mix::issue`].
///
/// ```
/// # use ecs_lab::Mix;
/// let wide = Mix::parse("wide=3:276").unwrap();
/// assert_eq!((wide.hot_lanes, wide.cold_bytes, wide.cold_align), (3, 276, 1));
/// assert_eq!(wide.row_bytes(), 308);
/// assert_eq!(Mix::parse("v=1:64@16").unwrap().cold_align, 16);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    /// The name in reports.
    pub name: String,
    /// `f32` lanes of each of the two hot columns.
    pub hot_lanes: usize,
    /// Bytes of the cold column.
    pub cold_bytes: usize,
    /// Alignment of the cold column.
    pub cold_align: usize,
}

impl Mix {
    /// Parses `NAME=LANES:COLD[@ALIGN]` (see the module docs).
    ///
    /// # Errors
    /// [`LabError::BadMix`] if the string has not that shape (or an empty name, or a name with
    /// a comma), [`LabError::UnsupportedHotLanes`] and [`LabError::UnsupportedCold`] for
    /// widths without a predefined type.
    ///
    /// ```
    /// # use ecs_lab::{LabError, Mix};
    /// assert!(matches!(Mix::parse("wide"), Err(LabError::BadMix { .. })));
    /// assert!(matches!(Mix::parse("w=9:8"), Err(LabError::UnsupportedHotLanes { lanes: 9, .. })));
    /// assert!(matches!(Mix::parse("w=1:100"), Err(LabError::UnsupportedCold { bytes: 100, .. })));
    /// ```
    pub fn parse(spec: &str) -> Result<Self, LabError> {
        let bad = |reason| LabError::BadMix {
            spec: spec.to_owned(),
            reason,
        };
        let (name, shape) = spec
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=LANES:COLD[@ALIGN]"))?;
        if name.is_empty() || name.contains(',') {
            return Err(bad("the name must be non-empty and without commas"));
        }
        let (lanes, cold) = shape
            .split_once(':')
            .ok_or_else(|| bad("expected LANES:COLD after the name"))?;
        let (cold, align) = cold.split_once('@').unwrap_or((cold, "1"));
        let number = |s: &str| s.trim().parse::<usize>().map_err(|_| bad("not a number"));
        let mix = Self {
            name: name.to_owned(),
            hot_lanes: number(lanes)?,
            cold_bytes: number(cold)?,
            cold_align: number(align)?,
        };
        mix.check()?;
        Ok(mix)
    }

    /// The issue's three mixes: `small=2:8` (32-byte rows), `medium=3:92` (124 B) and
    /// `wide=3:276` (308 B).
    ///
    /// ```
    /// # use ecs_lab::Mix;
    /// let rows: Vec<usize> = Mix::issue().iter().map(Mix::row_bytes).collect();
    /// assert_eq!(rows, [32, 124, 308]);
    /// ```
    pub fn issue() -> Vec<Self> {
        [("small", 2, 8), ("medium", 3, 92), ("wide", 3, 276)]
            .into_iter()
            .map(|(name, hot_lanes, cold_bytes)| Self {
                name: name.to_owned(),
                hot_lanes,
                cold_bytes,
                cold_align: 1,
            })
            .collect()
    }

    /// Bytes per row, the entity id included: `8 + 2 × 4 × hot_lanes + cold_bytes`.
    pub fn row_bytes(&self) -> usize {
        8 + self.hot_bytes() + self.cold_bytes
    }

    /// Bytes of the two hot columns per row, what the query reads.
    pub fn hot_bytes(&self) -> usize {
        2 * 4 * self.hot_lanes
    }

    /// Invariant 1.
    fn check(&self) -> Result<(), LabError> {
        if !HOT_LANES.contains(&self.hot_lanes) {
            return Err(LabError::UnsupportedHotLanes {
                mix: self.name.clone(),
                lanes: self.hot_lanes,
            });
        }
        if !COLD_MENU.contains(&(self.cold_bytes, self.cold_align)) {
            return Err(LabError::UnsupportedCold {
                mix: self.name.clone(),
                bytes: self.cold_bytes,
                align: self.cold_align,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_that_do_not_parse_are_named() {
        for (spec, reason) in [
            ("small", "expected NAME=LANES:COLD[@ALIGN]"),
            ("=2:8", "the name must be non-empty and without commas"),
            ("a,b=2:8", "the name must be non-empty and without commas"),
            ("s=2", "expected LANES:COLD after the name"),
            ("s=x:8", "not a number"),
            ("s=2:8@", "not a number"),
        ] {
            assert_eq!(
                Mix::parse(spec),
                Err(LabError::BadMix {
                    spec: spec.to_owned(),
                    reason
                }),
                "{spec}"
            );
        }
    }

    #[test]
    fn every_menu_entry_parses() {
        for &(bytes, align) in COLD_MENU {
            for lanes in HOT_LANES {
                let mix = Mix::parse(&format!("m={lanes}:{bytes}@{align}")).unwrap();
                assert_eq!(mix.row_bytes(), 8 + 8 * lanes + bytes);
            }
        }
        assert_eq!(
            Mix::parse("m=2:8@16"),
            Err(LabError::UnsupportedCold {
                mix: "m".into(),
                bytes: 8,
                align: 16
            })
        );
    }
}
