//! A schedule's part of a simulation snapshot: every system's and run condition's parameter
//! state for one world (see `saved_state` for what each parameter saves).

use ecs_core::World;

use super::Schedule;
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

impl Schedule {
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
