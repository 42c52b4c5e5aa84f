//! A schedule's part of a simulation snapshot: every system's and run condition's parameter
//! state for one world (see `saved_state` for what each parameter saves).

use ecs_core::World;

use super::Schedule;
use crate::saved_state::framing::{Reader, Writer};
use crate::saved_state::{Saved, StateError, StateReader, StateWriter};

/// The saved parameter state of one schedule's systems and conditions, for one world.
///
/// # Invariants
/// `units[i]` belongs to the schedule's `i`-th system (by insertion order), named `name`, with
/// one entry per condition; `None` where the system (condition) kept no state for the world.
#[derive(Default)]
pub(crate) struct ScheduleState {
    units: Vec<SavedUnit>,
}

struct SavedUnit {
    name: String,
    system: Option<Vec<Saved>>,
    conditions: Vec<Option<Vec<Saved>>>,
}

impl ScheduleState {
    /// Writes the units (see `sim/bytes.rs` for the format), values through
    /// `world`'s state codecs.
    pub(crate) fn write(&self, w: &mut Writer, world: &World) -> Result<(), StateError> {
        let state = |w: &mut Writer, state: &Option<Vec<Saved>>| {
            match state {
                None => w.u8(0),
                Some(pieces) => {
                    w.u8(1);
                    w.len(pieces.len());
                    for piece in pieces {
                        w.piece(piece, world)?;
                    }
                }
            }
            Ok::<_, StateError>(())
        };
        w.len(self.units.len());
        for unit in &self.units {
            w.str(&unit.name);
            state(w, &unit.system)?;
            w.len(unit.conditions.len());
            for condition in &unit.conditions {
                state(w, condition)?;
            }
        }
        Ok(())
    }

    /// Reads what [`ScheduleState::write`] wrote, values through `world`'s state codecs.
    pub(crate) fn read(r: &mut Reader<'_>, world: &World) -> Result<Self, StateError> {
        let state = |r: &mut Reader<'_>| {
            let at = r.at();
            match r.u8()? {
                0 => Ok(None),
                1 => {
                    let n = r.count(9)?;
                    (0..n)
                        .map(|_| r.piece(world))
                        .collect::<Result<_, _>>()
                        .map(Some)
                }
                other => Err(r.corrupt(at, format!("state flag {other}"))),
            }
        };
        let n = r.count(10)?;
        let mut units = Vec::with_capacity(n);
        for _ in 0..n {
            let name = r.str()?.to_owned();
            let system = state(r)?;
            let conditions = r.count(1)?;
            let conditions = (0..conditions)
                .map(|_| state(r))
                .collect::<Result<_, _>>()?;
            units.push(SavedUnit {
                name,
                system,
                conditions,
            });
        }
        Ok(Self { units })
    }
}

/// The shape of one saved state, for comparing a snapshot read from bytes with the live
/// schedule: per piece, a tick or a value's type name.
fn shape(state: &Option<Vec<Saved>>) -> Option<Vec<Option<&'static str>>> {
    state.as_ref().map(|pieces| {
        pieces
            .iter()
            .map(|p| match p {
                Saved::Tick(_) => None,
                Saved::Value(_, name) => Some(*name),
            })
            .collect()
    })
}

impl Schedule {
    /// Checks that the values `saved` holds (read from bytes) are of the types this
    /// schedule's systems keep for `world`, piece by piece, by saving the live state (the
    /// systems are initialized for `world` first, as a restore would).
    pub(crate) fn check_state_types(
        &mut self,
        world: &mut World,
        saved: &ScheduleState,
    ) -> Result<(), StateError> {
        self.initialize_systems(world);
        let live = self.save_state(world)?;
        for (now, then) in live.units.iter().zip(&saved.units) {
            let pairs = std::iter::once((&now.system, &then.system))
                .chain(now.conditions.iter().zip(&then.conditions));
            for (now_state, then_state) in pairs {
                let (a, b) = (shape(now_state), shape(then_state));
                if b.is_some() && a != b {
                    return Err(StateError::ScheduleMismatch {
                        detail: format!(
                            "`{}` keeps state {:?}, the snapshot holds {:?}",
                            now.name,
                            a.unwrap_or_default(),
                            b.unwrap_or_default()
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Saves every system's and condition's state for `world`.
    pub(crate) fn save_state(&self, world: &World) -> Result<ScheduleState, StateError> {
        let mut units = Vec::with_capacity(self.systems.len());
        for cell in &self.systems {
            let unit = cell.unit();
            let name = unit.system.name();
            let save = |f: &mut dyn FnMut(&mut StateWriter<'_>) -> Result<bool, StateError>| {
                let mut out = Vec::new();
                let kept = f(&mut StateWriter::new(world, name, &mut out))?;
                Ok::<_, StateError>(kept.then_some(out))
            };
            let system = save(&mut |w| unit.system.save_state(w))?;
            let conditions = unit
                .conditions
                .iter()
                .map(|c| save(&mut |w| c.0.save_state(w)))
                .collect::<Result<_, _>>()?;
            units.push(SavedUnit {
                name: name.to_owned(),
                system,
                conditions,
            });
        }
        Ok(ScheduleState { units })
    }

    /// Checks that `saved` came from a schedule with the same systems and conditions.
    pub(crate) fn check_state(&self, saved: &ScheduleState) -> Result<(), StateError> {
        let mismatch = |detail: String| Err(StateError::ScheduleMismatch { detail });
        if saved.units.len() != self.systems.len() {
            return mismatch(format!(
                "{} systems saved, {} in the schedule",
                saved.units.len(),
                self.systems.len()
            ));
        }
        for (cell, unit) in self.systems.iter().zip(&saved.units) {
            let live = cell.unit();
            if live.system.name() != unit.name || live.conditions.len() != unit.conditions.len() {
                return mismatch(format!(
                    "saved `{}` with {} conditions where the schedule has `{}` with {}",
                    unit.name,
                    unit.conditions.len(),
                    live.system.name(),
                    live.conditions.len()
                ));
            }
        }
        Ok(())
    }

    /// Puts back the state `saved` holds for `world` (checked by `check_state`), moving saved
    /// ticks by `shift`.
    pub(crate) fn load_state(&mut self, world: &mut World, saved: &ScheduleState, shift: u64) {
        self.initialize_systems(world);
        for (cell, unit) in self.systems.iter_mut().zip(&saved.units) {
            let live = cell.unit_mut();
            let mut reader = unit
                .system
                .as_ref()
                .map(|s| StateReader::new(world, s, shift));
            live.system.load_state(world, reader.as_mut());
            for (condition, state) in live.conditions.iter_mut().zip(&unit.conditions) {
                let mut reader = state.as_ref().map(|s| StateReader::new(world, s, shift));
                condition.0.load_state(world, reader.as_mut());
            }
        }
    }
}
