//! One run of a built schedule: the segments between sync points, each run inline or on the
//! pool, then the commands the systems recorded, applied in system order.

use std::fmt::Write as _;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ecs_core::World;
use ecs_query::Parallelism;

use crate::commands::id_lanes::LanePlan;
use crate::error::{CommandError, ScheduleError};
use crate::schedule::executor::{
    run_exclusive, run_segment, worth_parallel, SystemCell, SystemPanic,
};
use crate::schedule::graph::{Plan, Segment};
use crate::schedule::panics::{drop_payload, keep_first, panic_message, Payload};
use crate::system::access::EventUpdate;

use super::{Order, Schedule, Threads};

impl Schedule {
    /// Builds (or selects) every system's and condition's parameter state for `world`.
    pub(crate) fn initialize_systems(&mut self, world: &mut World) {
        for cell in &mut self.systems {
            let unit = cell.unit_mut();
            unit.system.initialize(world);
            for condition in &mut unit.conditions {
                condition.0.initialize(world);
            }
        }
    }

    /// Runs every system once, then applies recorded commands in system order.
    ///
    /// Cost, besides the systems' own work: a build the first time (see [`Schedule::build`]);
    /// per run, one check that the world's component kinds have not moved, then per segment
    /// between sync points either an inline pass (when what parallelism could save, the last
    /// run's time of all its systems but the longest, is below the inline threshold) or one
    /// hand-off to the thread pool, with one atomic dependency counter per system; then the
    /// recorded commands, applied in system order.
    ///
    /// # Errors
    /// As [`Schedule::build`]; nothing runs then.
    ///
    /// # Panics
    /// If a system panics: systems already running finish, later ones are skipped, the
    /// run's commands are dropped, and the panic continues with the system's name in its
    /// message (``system `NAME` panicked: …``). If dropping those commands panics too (a
    /// recorded value's `Drop`), the rest are still dropped and that panic is named after the
    /// system's, never instead of it. If an applied command panics, the commands after it are
    /// dropped and the command's panic continues. Either way no command of this run is left
    /// for the next, and the world stays consistent and usable.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn grow(mut q: Query<RefRW<u32>>) { q.for_each(|n| *n += 1); }
    /// let mut world = World::new();
    /// let e = world.spawn((0u32,));
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(grow);
    /// schedule.run(&mut world).unwrap();
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&2));
    /// ```
    pub fn run(&mut self, world: &mut World) -> Result<(), ScheduleError> {
        let _span = crate::trace::schedule_run(self.systems.len());
        self.build_for(world)?;
        // O(1) unless 2^30 ticks passed: keeps 32-bit row ticks from wrapping.
        world.check_change_ticks();
        let frame_start = Instant::now();
        self.skipped.clear();
        self.initialize_systems(world);
        let plan = self.plan.as_ref().expect("built above");
        let inline_below = self.inline_below;
        let any_parallel = plan
            .segments
            .iter()
            .any(|s| worth_parallel(s, &self.systems, inline_below));
        let mut commands_time = Duration::ZERO;
        let run = Run {
            plan,
            inline_below,
            systems: &mut self.systems,
            orders: &self.orders,
            skipped: &mut self.skipped,
            commands_time: &mut commands_time,
            event_updates: &self.event_updates,
            span: crate::trace::current(),
        };
        let (panic, commands) = match &self.threads {
            Threads::Single => Parallelism::Sequential.scope(|| run.execute(world, false)),
            Threads::Global => run.execute(world, true),
            Threads::Pool(pool) if !any_parallel => {
                Parallelism::Pool(Arc::clone(pool)).scope(|| run.execute(world, false))
            }
            Threads::Pool(pool) => pool.install(|| run.execute(world, true)),
        };
        self.command_timing.record(commands_time, true);
        self.frame_timing.record(frame_start.elapsed(), true);
        let CommandPanics {
            apply,
            apply_system,
            cleanup,
        } = commands;
        let mut report = panic.map(|(name, payload)| {
            let message = format!("system `{name}` panicked: {}", panic_message(&*payload));
            drop_payload(payload);
            message
        });
        if let (Some(message), Some(first)) = (&mut report, cleanup.first()) {
            let _ = write!(
                message,
                " (then dropping the run's unapplied commands panicked too, in {} system(s); \
                 the first: {})",
                cleanup.len(),
                panic_message(&**first)
            );
        }
        // Every payload not passed on is dropped here, before unwinding starts: one whose
        // `Drop` panics would otherwise abort the process.
        cleanup.into_iter().for_each(drop_payload);
        if let Some(message) = report {
            if let Some(payload) = apply {
                drop_payload(payload);
            }
            resume_unwind(Box::new(message));
        }
        if let Some(payload) = apply {
            // Which system's command it was: the rest of the run's commands were dropped, and
            // the ids their spawns reserved freed (`CommandQueue::discard`).
            if let Some(system) = apply_system {
                let message = format!(
                    "a command recorded by system `{system}` panicked: {}",
                    panic_message(&*payload)
                );
                drop_payload(payload);
                resume_unwind(Box::new(message));
            }
            resume_unwind(payload);
        }
        Ok(())
    }
}

/// The parts of a schedule one run needs, borrowed apart from its thread pool.
struct Run<'a> {
    plan: &'a Plan,
    inline_below: Duration,
    systems: &'a mut [SystemCell],
    orders: &'a [Order],
    skipped: &'a mut Vec<CommandError>,
    commands_time: &'a mut Duration,
    event_updates: &'a [EventUpdate],
    /// The `schedule_run` span, entered again on the thread that executes the run.
    span: crate::trace::Parent,
}

impl Run<'_> {
    /// Runs the plan's segments in order, then applies (or, after a panic, drops) the commands
    /// not yet applied at a sync point. Returns the first system panic and what panicked while
    /// commands were applied or dropped; every system's commands are gone either way.
    fn execute(self, world: &mut World, parallel: bool) -> (Option<SystemPanic>, CommandPanics) {
        let Run {
            plan,
            inline_below,
            systems,
            orders,
            skipped,
            commands_time,
            event_updates,
            span,
        } = self;
        let _span = crate::trace::reenter(&span);
        let mut panic: Option<SystemPanic> = None;
        let mut commands = CommandPanics::default();
        let mut applied = 0;
        for segment in &plan.segments {
            if segment.exclusive {
                let index = segment.systems[0];
                if orders[index].sync_point {
                    let upto = plan
                        .order
                        .iter()
                        .position(|&i| i == index)
                        .expect("in order");
                    let order = &plan.order[applied..upto];
                    let start = Instant::now();
                    apply_commands(systems, order, world, skipped, false, &mut commands);
                    let elapsed = start.elapsed();
                    *commands_time += elapsed;
                    // The sync point's own row: the commands it applied (also in the
                    // "(apply commands)" row, which sums every application of the run).
                    systems[index].unit_mut().sample.record(elapsed, true);
                    applied = upto;
                    if commands.apply.is_some() {
                        break;
                    }
                    continue;
                }
                panic = run_exclusive(world, &mut systems[index]);
            } else {
                open_id_lanes(world, systems, segment);
                let parallel = parallel && worth_parallel(segment, systems, inline_below);
                // `run_segment` catches each system's panic; this catches anything else, so
                // commands are still dropped and the world flushed below.
                panic = catch_unwind(AssertUnwindSafe(|| {
                    run_segment(parallel, world, systems, segment)
                }))
                .unwrap_or_else(|payload| Some(("<executor>".to_owned(), payload)));
            }
            if panic.is_some() {
                break;
            }
        }
        let discard = panic.is_some() || commands.apply.is_some();
        let order = &plan.order[applied..];
        let start = Instant::now();
        // Events applied before the previous end of run are dropped now, before this run's are
        // applied: each event stays readable for two runs (events/mod.rs).
        for (_, update) in event_updates {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| update(world))) {
                keep_first(&mut commands.apply, payload);
            }
        }
        apply_commands(systems, order, world, skipped, discard, &mut commands);
        *commands_time += start.elapsed();
        // Dropped commands freed the ids their spawns reserved (`CommandQueue::discard`); any
        // other reservation (`World::reserve_entity` from a system) becomes an entity now, so the
        // world has no pending reservations between runs.
        world.flush();
        (panic, commands)
    }
}

/// Panics raised while a run's commands were applied or dropped.
#[derive(Default)]
struct CommandPanics {
    /// The first command that panicked while applied; every command after it is dropped.
    apply: Option<Payload>,
    /// The system that recorded it (none for an event update's panic).
    apply_system: Option<String>,
    /// Panics of `Drop`s while unapplied commands were dropped: reported beside the panic
    /// that made the run drop them, never instead of it.
    cleanup: Vec<Payload>,
}

/// Applies (or with `discard`, drops) the commands of `order`'s systems, in order; once a
/// command has panicked (now or earlier in the run), drops them instead. Each system's
/// application and each drop is caught on its own, so every queue in `order` is empty when
/// this returns, whatever panicked: nothing leaks into the next run.
fn apply_commands(
    systems: &mut [SystemCell],
    order: &[usize],
    world: &mut World,
    skipped: &mut Vec<CommandError>,
    discard: bool,
    panics: &mut CommandPanics,
) {
    for &i in order {
        let system = systems[i].get_mut();
        let _span = crate::trace::apply_commands(system.name(), discard || panics.apply.is_some());
        if !discard && panics.apply.is_none() {
            let applied = catch_unwind(AssertUnwindSafe(|| {
                system.apply_deferred(world, skipped, false);
            }));
            match applied {
                Ok(()) => continue,
                Err(payload) => {
                    panics.apply_system = Some(system.name().to_owned());
                    keep_first(&mut panics.apply, payload);
                }
            }
        }
        let dropped = catch_unwind(AssertUnwindSafe(|| {
            system.apply_deferred(world, skipped, true);
        }));
        if let Err(payload) = dropped {
            panics.cleanup.push(payload);
        }
    }
}

/// Opens the lanes for `segment`'s `Commands` systems (and its `&World` systems' cursor).
fn open_id_lanes(world: &mut World, systems: &mut [SystemCell], segment: &Segment) {
    if segment.lane_systems.is_empty() {
        return;
    }
    let mut plan = LanePlan::default();
    for &i in &segment.lane_systems {
        systems[i].get_mut().plan_lanes(world, &mut plan);
    }
    if segment.world_lane {
        plan.lane();
    }
    world.open_id_lanes(plan.lanes());
}
