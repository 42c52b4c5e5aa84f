//! A fixed-timestep driver: runs a schedule zero or more times per frame at a fixed `dt`.
//!
//! Frame times vary; a simulation step should not. [`FixedTimestep`] adds each frame's time to
//! an accumulator and takes as many whole steps of `dt` out of it as fit, at most `max_steps`
//! per frame (a slow frame then drops the excess instead of spiralling into ever longer
//! frames). The arithmetic is on whole nanoseconds (`Duration`), never floating point, so the
//! same sequence of frame times always gives the same number of steps, on any machine.
//!
//! To step only part of a frame's work, put that part in a schedule of its own and drive it
//! with the timestep, next to the per-frame schedule.

use std::time::Duration;

use ecs_core::World;

use crate::error::ScheduleError;
use crate::schedule::Schedule;

/// The fixed step, as a resource for the stepped systems (inserted by [`FixedTimestep::run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedTime {
    /// The step length.
    pub dt: Duration,
    /// Steps taken before this one, since the timestep was made.
    pub step: u64,
}

impl FixedTime {
    /// `dt` in seconds, for physics code.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use ecs_sched::FixedTime;
    /// let t = FixedTime { dt: Duration::from_millis(20), step: 0 };
    /// assert_eq!(t.dt_secs(), 0.02);
    /// ```
    pub fn dt_secs(&self) -> f32 {
        self.dt.as_secs_f32()
    }
}

/// What one frame of a [`FixedTimestep`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedSteps {
    /// Steps taken this frame (`0..=max_steps`).
    pub steps: u32,
    /// Time dropped because the cap was reached (zero unless the frame was too slow).
    pub dropped: Duration,
}

/// Runs a schedule at a fixed `dt` from variable frame times.
///
/// # Invariants
/// 1. `dt > 0`, `max_steps >= 1`.
/// 2. After each [`FixedTimestep::advance`], `accumulator < dt`.
///
/// ```
/// # use std::time::Duration;
/// # use ecs_core::World;
/// # use ecs_sched::{FixedTime, FixedTimestep, Res, ResMut, Schedule};
/// fn step(t: Res<FixedTime>, mut clock: ResMut<Duration>) { *clock += t.dt; }
/// let mut world = World::new();
/// world.insert_resource(Duration::ZERO);
/// let mut physics = Schedule::single_threaded();
/// physics.add_system(step);
/// let mut fixed = FixedTimestep::new(Duration::from_millis(10));
/// for frame_ms in [16, 16, 3, 40] {
///     fixed.run(&mut physics, &mut world, Duration::from_millis(frame_ms)).unwrap();
/// }
/// // 75 ms of frames: 7 steps of 10 ms, 5 ms left in the accumulator.
/// assert_eq!(*world.resource::<Duration>(), Duration::from_millis(70));
/// assert_eq!(fixed.accumulated(), Duration::from_millis(5));
/// ```
#[derive(Clone, Debug)]
pub struct FixedTimestep {
    dt: Duration,
    max_steps: u32,
    accumulator: Duration,
    steps: u64,
}

impl FixedTimestep {
    /// A timestep of `dt`, at most 8 steps per frame.
    ///
    /// # Panics
    /// If `dt` is zero.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use ecs_sched::FixedTimestep;
    /// let fixed = FixedTimestep::new(Duration::from_secs(1) / 60);
    /// assert_eq!(fixed.dt(), Duration::from_nanos(16_666_666));
    /// ```
    pub fn new(dt: Duration) -> Self {
        assert!(!dt.is_zero(), "a fixed timestep needs a dt above zero");
        Self {
            dt,
            max_steps: 8,
            accumulator: Duration::ZERO,
            steps: 0,
        }
    }

    /// The four numbers that make up the timestep: `(dt, max_steps, accumulator, steps)`,
    /// for simulation snapshot bytes.
    pub(crate) fn parts(&self) -> (Duration, u32, Duration, u64) {
        (self.dt, self.max_steps, self.accumulator, self.steps)
    }

    /// A timestep from [`FixedTimestep::parts`]; `None` if they break its rules (`dt` zero,
    /// `max_steps` zero, an accumulator of a whole step or more).
    pub(crate) fn from_parts(
        dt: Duration,
        max_steps: u32,
        accumulator: Duration,
        steps: u64,
    ) -> Option<Self> {
        (!dt.is_zero() && max_steps > 0 && accumulator < dt).then_some(Self {
            dt,
            max_steps,
            accumulator,
            steps,
        })
    }

    /// Caps the steps per frame (at least 1).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use ecs_sched::FixedTimestep;
    /// let mut fixed = FixedTimestep::new(Duration::from_millis(10)).with_max_steps(2);
    /// let frame = fixed.advance(Duration::from_millis(55));
    /// assert_eq!((frame.steps, frame.dropped), (2, Duration::from_millis(30)));
    /// ```
    pub fn with_max_steps(mut self, max_steps: u32) -> Self {
        self.max_steps = max_steps.max(1);
        self
    }

    /// The step length.
    pub fn dt(&self) -> Duration {
        self.dt
    }

    /// Time carried to the next frame (less than `dt`).
    pub fn accumulated(&self) -> Duration {
        self.accumulator
    }

    /// How far the accumulated time is into the next step, in `0.0..1.0`: the blend factor
    /// for drawing between the last two simulated states.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use ecs_sched::FixedTimestep;
    /// let mut fixed = FixedTimestep::new(Duration::from_millis(10));
    /// fixed.advance(Duration::from_millis(25));
    /// assert_eq!(fixed.overstep_fraction(), 0.5);
    /// ```
    pub fn overstep_fraction(&self) -> f64 {
        self.accumulator.as_nanos() as f64 / self.dt.as_nanos() as f64
    }

    /// Steps taken since the timestep was made.
    pub fn total_steps(&self) -> u64 {
        self.steps
    }

    /// Adds a frame's time and returns how many steps to take now (without running anything).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use ecs_sched::FixedTimestep;
    /// let mut fixed = FixedTimestep::new(Duration::from_millis(10));
    /// assert_eq!(fixed.advance(Duration::from_millis(9)).steps, 0);
    /// assert_eq!(fixed.advance(Duration::from_millis(12)).steps, 2);
    /// ```
    pub fn advance(&mut self, frame: Duration) -> FixedSteps {
        self.accumulator = self.accumulator.saturating_add(frame);
        let due = self.accumulator.as_nanos() / self.dt.as_nanos();
        let steps = u32::try_from(due).unwrap_or(u32::MAX).min(self.max_steps);
        self.accumulator -= self.dt * steps;
        let dropped = if self.accumulator >= self.dt {
            let kept = Duration::from_nanos(
                u64::try_from(self.accumulator.as_nanos() % self.dt.as_nanos()).expect("below dt"),
            );
            let dropped = self.accumulator - kept;
            self.accumulator = kept;
            dropped
        } else {
            Duration::ZERO
        };
        self.steps += u64::from(steps);
        FixedSteps { steps, dropped }
    }

    /// Adds a frame's time and runs `schedule` once per due step, with [`FixedTime`] set in
    /// the world before each step.
    ///
    /// # Errors
    /// As [`Schedule::run`]; the steps after a failed one are not taken (the accumulator has
    /// already been advanced).
    ///
    /// # Panics
    /// As [`Schedule::run`].
    pub fn run(
        &mut self,
        schedule: &mut Schedule,
        world: &mut World,
        frame: Duration,
    ) -> Result<FixedSteps, ScheduleError> {
        self.run_with(schedule, world, frame, |_, _| {})
    }

    /// [`FixedTimestep::run`], calling `before_step` before each step's schedule run, with the
    /// world (its [`FixedTime`] already set) and that step's [`FixedTime`]: where a lockstep or
    /// rollback app feeds the inputs of step `t.step` into the world.
    ///
    /// # Errors
    /// As [`FixedTimestep::run`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use ecs_core::World;
    /// # use ecs_sched::{FixedTime, FixedTimestep, Res, ResMut, Schedule};
    /// fn apply(input: Res<i32>, mut pos: ResMut<i64>) { *pos += i64::from(*input); }
    /// let inputs = [3, -1, 4, 1, -5];
    /// let mut world = World::new();
    /// world.insert_resource(0i32);
    /// world.insert_resource(0i64);
    /// let mut physics = Schedule::single_threaded();
    /// physics.add_system(apply);
    /// let mut fixed = FixedTimestep::new(Duration::from_millis(10)).with_max_steps(3);
    /// let mut fed = Vec::new();
    /// fixed
    ///     .run_with(&mut physics, &mut world, Duration::from_millis(50), |world, t| {
    ///         assert_eq!(world.resource::<FixedTime>().step, t.step);
    ///         *world.resource_mut::<i32>() = inputs[t.step as usize];
    ///         fed.push(t.step);
    ///     })
    ///     .unwrap();
    /// assert_eq!(fed, [0, 1, 2]); // at most 3 steps per frame
    /// assert_eq!(*world.resource::<i64>(), 3 - 1 + 4);
    /// ```
    pub fn run_with(
        &mut self,
        schedule: &mut Schedule,
        world: &mut World,
        frame: Duration,
        mut before_step: impl FnMut(&mut World, FixedTime),
    ) -> Result<FixedSteps, ScheduleError> {
        let first = self.steps;
        let frame = self.advance(frame);
        for k in 0..u64::from(frame.steps) {
            let time = FixedTime {
                dt: self.dt,
                step: first + k,
            };
            world.insert_resource(time);
            before_step(world, time);
            schedule.run(world)?;
        }
        Ok(frame)
    }

    /// Takes exactly one step now, whatever the accumulator holds (which it leaves alone):
    /// sets [`FixedTime`], runs `schedule`, counts the step. For a rollback app that re-runs a
    /// known number of steps after a restore, rather than replaying frame times.
    ///
    /// # Errors
    /// As [`Schedule::run`]; the failed step still counts.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use ecs_core::World;
    /// # use ecs_sched::{FixedTime, FixedTimestep, Res, ResMut, Schedule};
    /// fn tick(t: Res<FixedTime>, mut last: ResMut<u64>) { *last = t.step; }
    /// let mut world = World::new();
    /// world.insert_resource(0u64);
    /// let mut physics = Schedule::single_threaded();
    /// physics.add_system(tick);
    /// let mut fixed = FixedTimestep::new(Duration::from_millis(10));
    /// fixed.run(&mut physics, &mut world, Duration::from_millis(25)).unwrap(); // steps 0, 1
    /// assert_eq!(fixed.step(&mut physics, &mut world).unwrap(), FixedTime { dt: fixed.dt(), step: 2 });
    /// assert_eq!((*world.resource::<u64>(), fixed.total_steps()), (2, 3));
    /// assert_eq!(fixed.accumulated(), Duration::from_millis(5));
    /// ```
    pub fn step(
        &mut self,
        schedule: &mut Schedule,
        world: &mut World,
    ) -> Result<FixedTime, ScheduleError> {
        let time = FixedTime {
            dt: self.dt,
            step: self.steps,
        };
        self.steps += 1;
        world.insert_resource(time);
        schedule.run(world)?;
        Ok(time)
    }
}
