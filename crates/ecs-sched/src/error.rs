//! Error types of the scheduler.

use std::fmt;

use ecs_core::Entity;

/// A schedule could not be built or a system could not be added.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{Schedule, ScheduleError};
/// let mut schedule = Schedule::new();
/// schedule.add_system(|_: &mut World| {}).named("a").after("b");
/// schedule.add_system(|_: &mut World| {}).named("b").after("a");
/// assert!(matches!(schedule.build(), Err(ScheduleError::Cycle { .. })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScheduleError {
    /// A system's own parameters conflict (e.g. two queries writing `component` without a
    /// filter that makes them disjoint, or `Res<R>` with `ResMut<R>`).
    ConflictingParams {
        /// The system's name.
        system: String,
        /// The type both parameters access; for two queries, followed by the filter that
        /// would make them disjoint when one exists: ``Hp (add `Without<Enemy>` to the second
        /// query)``.
        component: String,
    },
    /// An explicit order names a system or set that is not in the schedule.
    UnknownSystem {
        /// The system (or set) that has the order.
        system: String,
        /// The name it refers to.
        referenced: String,
    },
    /// Explicit orders form a cycle through these systems.
    Cycle {
        /// The systems on the cycle, in order.
        systems: Vec<String>,
    },
    /// Two systems have the same name, so an order naming it would be ambiguous. Refused by
    /// `SystemConfig::named` at once, and for a default name (two closures of one function)
    /// when `add_system`'s config is dropped without a `.named(...)`.
    DuplicateName(String),
    /// A system's access set was built against another component registry than the
    /// schedule's, or building it replaced the schedule's registry: its component ids cannot
    /// be compared with the other systems', so it is refused.
    ForeignRegistry {
        /// The system's name.
        system: String,
    },
    /// A name is used both for a system and for a set, so an order naming it is ambiguous.
    SetNameClash(String),
    /// A run condition writes something (or records commands or events, or is exclusive):
    /// conditions must be read-only.
    ConditionNotReadOnly {
        /// The gated system.
        system: String,
        /// The condition.
        condition: String,
        /// What it writes.
        writes: String,
    },
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ConflictingParams { system, component } => match component.split_once(" (add ") {
                Some((ty, fix)) => write!(
                    f,
                    "system `{system}` has conflicting parameters: they access `{ty}` and \
                         at least one writes it; if no entity can match both, add {}, or take \
                         them in a `ParamSet` and use one at a time",
                    fix.trim_end_matches(')')
                ),
                None => write!(
                    f,
                    "system `{system}` has conflicting parameters: they access `{component}` \
                         and at least one writes it; if no entity can match both, say so with \
                         filters (`With<X>` on one, `Without<X>` on the other), or take them in \
                         a `ParamSet` and use one at a time"
                ),
            },
            Self::UnknownSystem { system, referenced } => {
                write!(
                    f,
                    "system `{system}` is ordered against `{referenced}`, which is not a system or \
                     set in the schedule"
                )
            }
            Self::Cycle { systems } => {
                write!(
                    f,
                    "explicit system order has a cycle: {}",
                    systems.join(" -> ")
                )
            }
            Self::DuplicateName(name) => write!(
                f,
                "two systems are named `{name}`; give one a name of its own with \
                 `.named(\"...\")` (closures are named after the function they are written in)"
            ),
            Self::ForeignRegistry { system } => write!(
                f,
                "system `{system}` was built against another component registry than the \
                 schedule's (an `IntoSystem` must build with the registry it is given, and keep it)"
            ),
            Self::SetNameClash(name) => {
                write!(f, "`{name}` names both a system and a set")
            }
            Self::ConditionNotReadOnly {
                system,
                condition,
                writes,
            } => write!(
                f,
                "run condition `{condition}` of system `{system}` writes {writes}; run \
                 conditions must be read-only (use `Res` instead of `ResMut`, `RefRO` instead of \
                 `RefRW`)"
            ),
        }
    }
}

impl std::error::Error for ScheduleError {}

/// A deferred command that could not be applied and was skipped.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::CommandError;
/// # let mut world = World::new();
/// # let entity = world.spawn(());
/// let err = CommandError {
///     system: "reaper".into(),
///     command: "despawn",
///     entity,
///     reason: "gone".into(),
/// };
/// assert!(err.to_string().starts_with("skipped `despawn`"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError {
    /// The system whose `Commands` recorded it.
    pub system: String,
    /// What the command was (`"despawn"`, `"insert"`, `"remove"`, ...).
    pub command: &'static str,
    /// The entity it targeted.
    pub entity: Entity,
    /// Why it failed.
    pub reason: String,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skipped `{}` on {:?} from system `{}`: {}",
            self.command, self.entity, self.system, self.reason
        )
    }
}

impl std::error::Error for CommandError {}

/// A one-shot or registered system could not run ([`RunSystemExt`](crate::RunSystemExt)).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{RunSystemError, RunSystemExt};
/// let mut world = World::new();
/// let id = world.register_system(|| {});
/// let mut other = World::new();
/// assert_eq!(other.run_system(id), Err(RunSystemError::NoSuchSystem(id)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunSystemError {
    /// The system's own parameters conflict ([`ScheduleError::ConflictingParams`]).
    Conflict(ScheduleError),
    /// No system is registered under this id on this world: it was unregistered, or the id
    /// is another world's.
    NoSuchSystem(crate::SystemId),
    /// The system is running: it (or a system it runs) asked to run it again.
    AlreadyRunning(crate::SystemId),
    /// A parameter said the system cannot run now (a `Single` matching no entity or several,
    /// a `Populated` matching none), so it did not run.
    Skipped {
        /// The system's name.
        system: String,
    },
}

impl fmt::Display for RunSystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Conflict(e) => write!(f, "{e}"),
            Self::NoSuchSystem(id) => write!(f, "no system registered as {id:?} on this world"),
            Self::AlreadyRunning(id) => write!(
                f,
                "system {id:?} is already running (a system cannot run itself)"
            ),
            Self::Skipped { system } => write!(
                f,
                "system `{system}` was skipped: a `Single` or `Populated` parameter found no \
                 entity to run on (or, for `Single`, several)"
            ),
        }
    }
}

impl std::error::Error for RunSystemError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Conflict(e) => Some(e),
            _ => None,
        }
    }
}
