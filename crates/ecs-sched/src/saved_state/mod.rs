//! Saving and restoring what systems keep between runs, for simulation snapshots.
//!
//! Each [`SystemParam`](crate::SystemParam) with state that changes what later runs do writes
//! it into a [`StateWriter`] (`save_state`) and reads it back, in the same order, from a
//! [`StateReader`] (`load_state`):
//!
//! | parameter | saved |
//! |---|---|
//! | `Local<T>` | a clone of the value (`T` known to the world: primitives, snapshot types, or [`World::register_state`]) |
//! | `Query`, `Single`, `Populated` | the last-run tick of their change filters |
//! | `EventReader<T>` | its cursor; `Events<T>` must be a snapshot resource |
//! | `EventWriter<T>` | nothing (empty between runs); `Events<T>` must be a snapshot resource |
//! | `ResMut<R>`, `Option<ResMut<R>>` | nothing; `R` must be a snapshot resource (its value is in the world snapshot) |
//! | `Res<R>`, `Commands`, `&World`, `Trigger` | nothing |
//! | tuples, `ParamSet`, `#[derive(SystemParam)]` | their members, in order |
//!
//! Ticks are saved as they are and moved, on restore, by the world restore's tick shift (see
//! `ecs_core`'s snapshot docs), so a restored reader's window over restored rows is the one it
//! had: `Changed<T>` and `Added<T>` pass the same rows as in the original run. Tick 0 ("never
//! ran") stays 0.
//!
//! `framing.rs` beside this file writes and reads saved state, and whole simulation snapshots,
//! as bytes.

pub(crate) mod framing;

use std::any::{type_name, Any};
use std::fmt;

use ecs_core::{SnapshotError, StateValue, Tick, World};

/// A simulation snapshot could not be taken or restored.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{Local, Schedule, SimSnapshot, StateError};
/// struct Cache(Vec<u32>);
/// impl Default for Cache { fn default() -> Self { Cache(Vec::new()) } }
/// fn remember(_: Local<Cache>) {}
/// let mut world = World::new();
/// let mut schedule = Schedule::single_threaded();
/// schedule.add_system(remember);
/// schedule.run(&mut world).unwrap();
/// let err = SimSnapshot::capture(&world, &[&schedule], None).unwrap_err();
/// assert!(matches!(err, StateError::UnregisteredState { .. }));
/// assert!(err.to_string().contains("Cache"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateError {
    /// The world snapshot failed.
    World(SnapshotError),
    /// A system keeps state of a type the world cannot clone.
    UnregisteredState {
        /// The system.
        system: String,
        /// The state's type.
        type_name: &'static str,
    },
    /// A system writes a resource (or events) that world snapshots leave out, so a restore
    /// could not rewind it.
    ResourceNotSnapshotted {
        /// The system.
        system: String,
        /// The resource.
        resource: &'static str,
    },
    /// The schedules given to `restore` are not the ones the snapshot was taken from.
    ScheduleMismatch {
        /// What differs.
        detail: String,
    },
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::World(err) => write!(f, "world snapshot: {err}"),
            Self::UnregisteredState { system, type_name } => write!(
                f,
                "system `{system}` keeps a `{type_name}` that a simulation snapshot cannot \
                 clone; call `world.register_state::<{type_name}>()`"
            ),
            Self::ResourceNotSnapshotted { system, resource } => write!(
                f,
                "system `{system}` writes `{resource}`, which world snapshots leave out; call \
                 `world.register_snapshot_resource::<{resource}>()` (or `register_pod_resource`) \
                 to roll it back, or `world.register_resource_outside_snapshots::<{resource}>()` \
                 if it is not part of the simulation"
            ),
            Self::ScheduleMismatch { detail } => {
                write!(f, "the schedules differ from the snapshot's: {detail}")
            }
        }
    }
}

impl std::error::Error for StateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::World(err) => Some(err),
            _ => None,
        }
    }
}

impl From<SnapshotError> for StateError {
    fn from(err: SnapshotError) -> Self {
        Self::World(err)
    }
}

/// One saved piece of parameter state.
pub(crate) enum Saved {
    /// A clone of a value, and its type's name (what snapshot bytes carry).
    Value(StateValue, &'static str),
    Tick(Tick),
}

/// Where parameters save their state (see the module docs).
pub struct StateWriter<'a> {
    world: &'a World,
    system: &'a str,
    out: &'a mut Vec<Saved>,
}

impl<'a> StateWriter<'a> {
    pub(crate) fn new(world: &'a World, system: &'a str, out: &'a mut Vec<Saved>) -> Self {
        Self { world, system, out }
    }

    /// The world the state belongs to.
    pub fn world(&self) -> &World {
        self.world
    }

    /// Saves a clone of `value`.
    ///
    /// # Errors
    /// [`StateError::UnregisteredState`] if the world does not know how to clone `T`.
    pub fn save_value<T: Send + Sync + 'static>(&mut self, value: &T) -> Result<(), StateError> {
        let copy = self
            .world
            .clone_state(value as &(dyn Any + Send + Sync))
            .ok_or_else(|| StateError::UnregisteredState {
                system: self.system.to_owned(),
                type_name: type_name::<T>(),
            })?;
        self.out.push(Saved::Value(copy, type_name::<T>()));
        Ok(())
    }

    /// Saves a change tick (moved by the restore's shift when read back).
    pub fn save_tick(&mut self, tick: Tick) {
        self.out.push(Saved::Tick(tick));
    }

    /// Checks that resource `R` is in world snapshots, or declared outside the simulation
    /// ([`World::register_resource_outside_snapshots`]), for a parameter that writes it.
    ///
    /// # Errors
    /// [`StateError::ResourceNotSnapshotted`] naming the system and `R`.
    pub fn require_snapshot_resource<R: 'static>(&self) -> Result<(), StateError> {
        if self.world.is_snapshot_resource::<R>() || self.world.is_resource_outside_snapshots::<R>()
        {
            Ok(())
        } else {
            Err(StateError::ResourceNotSnapshotted {
                system: self.system.to_owned(),
                resource: type_name::<R>(),
            })
        }
    }
}

/// Where parameters read their saved state back (see the module docs).
pub struct StateReader<'a> {
    world: &'a World,
    saved: std::slice::Iter<'a, Saved>,
    shift: u64,
}

impl<'a> StateReader<'a> {
    pub(crate) fn new(world: &'a World, saved: &'a [Saved], shift: u64) -> Self {
        Self {
            world,
            saved: saved.iter(),
            shift,
        }
    }

    /// A clone of the next saved value.
    ///
    /// # Panics
    /// If the next saved piece is not a `T` (parameters read what they wrote, in order).
    pub fn load_value<T: Send + Sync + 'static>(&mut self) -> T {
        match self.saved.next() {
            Some(Saved::Value(value, _)) => {
                let copy = self
                    .world
                    .clone_state(&**value)
                    .expect("cloned once when saved, so the world knows the type");
                *copy
                    .downcast::<T>()
                    .unwrap_or_else(|_| panic!("saved state is not a `{}`", type_name::<T>()))
            }
            _ => panic!(
                "saved state out of order: expected a `{}`",
                type_name::<T>()
            ),
        }
    }

    /// The next saved tick, moved by the restore's shift (0 stays 0).
    ///
    /// # Panics
    /// If the next saved piece is not a tick.
    pub fn load_tick(&mut self) -> Tick {
        match self.saved.next() {
            Some(Saved::Tick(0)) => 0,
            Some(Saved::Tick(tick)) => tick + self.shift,
            _ => panic!("saved state out of order: expected a tick"),
        }
    }
}
