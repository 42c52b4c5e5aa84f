//! The lab's error type: what is wrong with a sweep's arguments or mix descriptions.

use std::fmt;

use ecs_core::WorldError;

/// Bad sweep input, named by the flag or mix it came from.
///
/// ```
/// # use ecs_lab::{LabError, SweepArgs};
/// let err = SweepArgs::parse(["--reps"]).unwrap_err();
/// assert_eq!(err, LabError::MissingValue("--reps"));
/// assert_eq!(err.to_string(), "flag `--reps` needs a value");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LabError {
    /// A flag the sweep does not know.
    UnknownFlag(String),
    /// A flag given without its value.
    MissingValue(&'static str),
    /// A value that is not a number of the expected form.
    BadNumber {
        /// The flag.
        flag: &'static str,
        /// What was given.
        value: String,
    },
    /// A mix description that does not parse (`NAME=LANES:COLD[@ALIGN]`).
    BadMix {
        /// The description given.
        spec: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Hot columns of a lane count outside [`HOT_LANES`](crate::HOT_LANES).
    UnsupportedHotLanes {
        /// The mix.
        mix: String,
        /// Lanes asked for.
        lanes: usize,
    },
    /// Cold bytes and alignment that no predefined pad type has (see
    /// [`COLD_MENU`](crate::COLD_MENU)).
    UnsupportedCold {
        /// The mix.
        mix: String,
        /// Cold bytes asked for.
        bytes: usize,
        /// Their alignment.
        align: usize,
    },
    /// Two mixes with one name.
    DuplicateMix(String),
    /// A chunk size or policy the world refuses.
    Policy(WorldError),
    /// A count that must be positive was zero.
    Zero(&'static str),
    /// Nothing to sweep: no mixes, or no sizes and no policies.
    Empty(&'static str),
}

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownFlag(flag) => write!(f, "unknown flag `{flag}`"),
            Self::MissingValue(flag) => write!(f, "flag `{flag}` needs a value"),
            Self::BadNumber { flag, value } => {
                write!(f, "flag `{flag}`: `{value}` is not a valid number")
            }
            Self::BadMix { spec, reason } => write!(f, "mix `{spec}`: {reason}"),
            Self::UnsupportedHotLanes { mix, lanes } => write!(
                f,
                "mix `{mix}`: hot columns of {lanes} f32 lanes are not predefined (1 to 4)"
            ),
            Self::UnsupportedCold { mix, bytes, align } => write!(
                f,
                "mix `{mix}`: no predefined pad of {bytes} cold bytes aligned to {align} \
                 (see COLD_MENU)"
            ),
            Self::DuplicateMix(name) => write!(f, "mix `{name}` given twice"),
            Self::Policy(err) => write!(f, "chunk policy: {err}"),
            Self::Zero(what) => write!(f, "{what} must be at least 1"),
            Self::Empty(what) => write!(f, "nothing to sweep: no {what}"),
        }
    }
}

impl std::error::Error for LabError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Policy(err) => Some(err),
            _ => None,
        }
    }
}

impl From<WorldError> for LabError {
    fn from(err: WorldError) -> Self {
        Self::Policy(err)
    }
}
