//! Simulation snapshots: the world *and* the schedules' state in one value, so that restoring
//! one and running N steps repeats the original N steps exactly.
//!
//! A world snapshot alone rewinds entities, components, opted-in resources (event queues
//! among them, as `Events<T>` resources) and the rows' change ticks. What the schedules keep
//! is outside the world: `Local`s, run-condition counters (`every_n_runs`), event-reader
//! cursors, each query's last-run tick, and the fixed timestep's accumulator and step count.
//! [`SimSnapshot`] holds both; its restore moves every saved tick by the world restore's shift
//! so change detection answers as it did (the `saved_state` module lists what each parameter
//! saves).
//!
//! [`SimSnapshot::to_bytes`] / [`SimSnapshot::from_bytes`] (`sim/bytes.rs`) write and
//! read one, so a simulation can be saved to disk and resumed in another process.
//!
//! Not captured: state inside exclusive systems' closures and other hand-written
//! [`System`](crate::System)s that do not implement `save_state`, observers and registered
//! one-shot systems (they live in the world, outside its snapshot), and timings. Capturing
//! refuses (a typed [`StateError`]) state it cannot clone and resources written by a system
//! but left out of world snapshots, instead of skipping them.

mod bytes;

use ecs_core::{Snapshot, Unregistered, World};

use crate::saved_state::StateError;
use crate::schedule::fixed::FixedTimestep;
use crate::schedule::saved::ScheduleState;
use crate::schedule::Schedule;

/// A world snapshot plus the state of the schedules that run it (see the module docs).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{every_n_runs, ResMut, Schedule, SimSnapshot};
/// fn tick(mut n: ResMut<u32>) { *n += 1; }
/// let mut world = World::new();
/// world.register_pod_resource::<u32>();
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(tick).run_if(every_n_runs(3));
/// schedule.run(&mut world).unwrap(); // run 0: fires
/// let snap = SimSnapshot::capture(&world, &[&schedule], None).unwrap();
/// for _ in 0..3 { schedule.run(&mut world).unwrap(); } // runs 1, 2, 3: fires on 3
/// assert_eq!(*world.resource::<u32>(), 2);
/// snap.restore(&mut world, &mut [&mut schedule], None).unwrap();
/// for _ in 0..3 { schedule.run(&mut world).unwrap(); } // the counter came back too
/// assert_eq!(*world.resource::<u32>(), 2);
/// ```
#[derive(Default)]
pub struct SimSnapshot {
    world: Snapshot,
    schedules: Vec<ScheduleState>,
    timestep: Option<FixedTimestep>,
    /// Read from bytes: its saved values' types are checked against the live schedules at
    /// restore (a snapshot captured in this process has them by construction).
    from_bytes: bool,
}

impl std::fmt::Debug for SimSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimSnapshot")
            .field("world", &self.world)
            .field("schedules", &self.schedules.len())
            .field("timestep", &self.timestep)
            .finish()
    }
}

impl SimSnapshot {
    /// Saves `world`, each schedule's state for it, and the timestep.
    ///
    /// # Errors
    /// [`StateError::World`] as [`World::snapshot`]; [`StateError::UnregisteredState`] for a
    /// `Local` (or other saved state) of a type the world cannot clone;
    /// [`StateError::ResourceNotSnapshotted`] for a resource or event queue a system writes
    /// that world snapshots leave out.
    pub fn capture(
        world: &World,
        schedules: &[&Schedule],
        timestep: Option<&FixedTimestep>,
    ) -> Result<Self, StateError> {
        let mut snap = Self::default();
        snap.capture_into(world, schedules, timestep)?;
        Ok(snap)
    }

    /// [`SimSnapshot::capture`] into `self`, reusing the world snapshot's buffers (a
    /// rollback ring allocates nothing for pod columns once warm).
    ///
    /// # Errors
    /// As [`SimSnapshot::capture`].
    pub fn capture_into(
        &mut self,
        world: &World,
        schedules: &[&Schedule],
        timestep: Option<&FixedTimestep>,
    ) -> Result<(), StateError> {
        self.schedules = schedules
            .iter()
            .map(|s| s.save_state(world))
            .collect::<Result<_, _>>()?;
        world.snapshot_into(&mut self.world, Unregistered::Fail)?;
        self.timestep = timestep.cloned();
        self.from_bytes = false;
        Ok(())
    }

    /// Puts the world, the schedules' state and the timestep back as they were saved. The
    /// schedules must be the ones given to `capture` (same systems and conditions, in the same
    /// order); the world's change tick does not go back, every saved tick moves forward with it.
    ///
    /// # Errors
    /// Checked before anything changes: [`StateError::ScheduleMismatch`] if the schedules or
    /// the presence of a timestep differ from the capture's; [`StateError::World`] as
    /// [`World::restore`].
    pub fn restore(
        &self,
        world: &mut World,
        schedules: &mut [&mut Schedule],
        timestep: Option<&mut FixedTimestep>,
    ) -> Result<(), StateError> {
        if schedules.len() != self.schedules.len() {
            return Err(StateError::ScheduleMismatch {
                detail: format!(
                    "{} schedules saved, {} given",
                    self.schedules.len(),
                    schedules.len()
                ),
            });
        }
        if timestep.is_some() != self.timestep.is_some() {
            return Err(StateError::ScheduleMismatch {
                detail: "a fixed timestep was saved but not given, or the reverse".to_owned(),
            });
        }
        for (schedule, saved) in schedules.iter_mut().zip(&self.schedules) {
            schedule.check_state(saved)?;
            if self.from_bytes {
                // Values from a file: the types must be the ones the systems keep.
                schedule.check_state_types(world, saved)?;
            }
        }
        world.restore(&self.world)?;
        let shift = world.change_tick() - self.world.change_tick();
        for (schedule, saved) in schedules.iter_mut().zip(&self.schedules) {
            schedule.load_state(world, saved, shift);
        }
        if let (Some(live), Some(saved)) = (timestep, &self.timestep) {
            live.clone_from(saved);
        }
        Ok(())
    }

    /// The world part.
    pub fn world(&self) -> &Snapshot {
        &self.world
    }

    pub(crate) fn schedules(&self) -> &[ScheduleState] {
        &self.schedules
    }

    pub(crate) fn timestep(&self) -> Option<&FixedTimestep> {
        self.timestep.as_ref()
    }

    /// A snapshot read from bytes.
    pub(crate) fn from_parts(
        world: Snapshot,
        schedules: Vec<ScheduleState>,
        timestep: Option<FixedTimestep>,
    ) -> Self {
        Self {
            world,
            schedules,
            timestep,
            from_bytes: true,
        }
    }
}
