//! Running one segment of a plan on a rayon pool.
//!
//! Each system of a segment has a counter of unfinished predecessors. A system whose counter
//! reaches zero is ready; the worker that finishes a system runs its first newly ready
//! dependent itself (no hand-off for a chain of conflicting systems) and spawns the others.
//! The atomics behind this live in [`RunCounters`], which the loom tests drive directly.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use crate::schedule::clock::{self, Reading};

use ecs_core::World;

use crate::schedule::graph::Segment;
use crate::schedule::panics::{drop_payload, Payload};
use crate::schedule::sync::{AtomicBool, AtomicUsize, Mutex, Ordering};
use crate::schedule::timings::Sample;
use crate::system::condition::Condition;
use crate::system::System;

/// Dependency counters of one segment run.
///
/// # Invariants
/// 1. `remaining[i]` counts the predecessors of `i` that have not called `finish` yet.
/// 2. `finish(i)` is called once per system per run; so each dependent reaches zero (and is
///    reported ready) exactly once.
///
/// ```
/// # use ecs_sched::__private::RunCounters;
/// // System 2 waits for systems 0 and 1.
/// let counters = RunCounters::new(&[0, 0, 2]);
/// let mut ready = Vec::new();
/// counters.finish(&[2], |j| ready.push(j));
/// counters.finish(&[2], |j| ready.push(j));
/// assert_eq!(ready, [2]);
/// ```
pub struct RunCounters {
    remaining: Box<[AtomicUsize]>,
}

impl RunCounters {
    /// Counters starting at `dep_counts`.
    ///
    /// ```
    /// # use ecs_sched::__private::RunCounters;
    /// let counters = RunCounters::new(&[0, 1]);
    /// let mut ready = Vec::new();
    /// counters.finish(&[1], |j| ready.push(j));
    /// assert_eq!(ready, [1]);
    /// ```
    pub fn new(dep_counts: &[usize]) -> Self {
        Self {
            remaining: dep_counts.iter().map(|&c| AtomicUsize::new(c)).collect(),
        }
    }

    /// Systems ready at the start.
    ///
    /// ```
    /// # use ecs_sched::__private::RunCounters;
    /// assert_eq!(RunCounters::roots(&[0, 2, 0, 1]).collect::<Vec<_>>(), [0, 2]);
    /// ```
    pub fn roots(dep_counts: &[usize]) -> impl Iterator<Item = usize> + '_ {
        dep_counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c == 0)
            .map(|(i, _)| i)
    }

    /// Records that a system finished; calls `ready(j)` for each dependent that became ready.
    ///
    /// ```
    /// # use ecs_sched::__private::RunCounters;
    /// let counters = RunCounters::new(&[0, 1, 1]);
    /// let mut ready = Vec::new();
    /// counters.finish(&[1, 2], |j| ready.push(j));
    /// assert_eq!(ready, [1, 2]);
    /// ```
    pub fn finish(&self, dependents: &[usize], mut ready: impl FnMut(usize)) {
        for &j in dependents {
            // AcqRel: the last decrement acquires every predecessor's writes (each released
            // them with its own decrement), so the dependent sees them all.
            if self.remaining[j].fetch_sub(1, Ordering::AcqRel) == 1 {
                ready(j);
            }
        }
    }
}

/// Runs `first`, then, on this thread, the first dependent that each finish makes ready;
/// further ready dependents go to `spawn`. The pool executor and the loom model tests share it.
///
/// ```
/// # use ecs_sched::__private::{drive_chain, RunCounters};
/// // 0 -> 1 -> 2, run on this thread.
/// let deps = [0, 1, 1];
/// let dependents = vec![vec![1], vec![2], vec![]];
/// let counters = RunCounters::new(&deps);
/// let mut order = Vec::new();
/// drive_chain(&counters, &dependents, 0, |i| order.push(i), &|_| unreachable!());
/// assert_eq!(order, [0, 1, 2]);
/// ```
#[doc(hidden)]
pub fn drive_chain(
    counters: &RunCounters,
    dependents: &[Vec<usize>],
    first: usize,
    mut run: impl FnMut(usize),
    spawn: &impl Fn(usize),
) {
    let mut next = Some(first);
    while let Some(i) = next.take() {
        run(i);
        counters.finish(&dependents[i], |j| match next {
            None => next = Some(j),
            Some(_) => spawn(j),
        });
    }
}

/// A system, its run conditions and its timing.
pub(crate) struct Unit {
    pub system: Box<dyn System>,
    pub conditions: Vec<Condition>,
    /// Its time over runs: kept with the system, so the one worker holding the unit records
    /// it without a lock.
    pub sample: Sample,
}

impl Unit {
    /// Evaluates every condition (no short-circuit: each one's state advances every run), then
    /// runs the system if all were true. Returns whether it ran.
    ///
    /// # Safety
    /// The system and its conditions were initialised for `world`, and nothing running at the
    /// same time conflicts with the union of their accesses.
    unsafe fn run_shared(&mut self, world: &World) -> bool {
        let mut go = true;
        for condition in &mut self.conditions {
            // SAFETY: the caller promises no conflict with the union of the system's and its
            // conditions' access, which includes this condition's.
            go &= unsafe { condition.0.evaluate(world) };
        }
        // SAFETY: the caller's contract (nothing conflicting with this system's declared
        // access runs meanwhile) is `validate`'s and `run_shared`'s.
        go = go && unsafe { self.system.validate(world) };
        if go {
            // SAFETY: as above.
            unsafe { self.system.run_shared(world) };
        }
        go
    }
}

/// A system that several workers may reach through a shared slice.
///
/// # Invariants
/// 1. At most one thread accesses the unit at a time: the counters hand each system to
///    exactly one worker per run (`RunCounters` invariant 2), and `running` checks it.
pub(crate) struct SystemCell {
    unit: UnsafeCell<Unit>,
    running: AtomicBool,
}

// SAFETY: the boxed system and conditions are `Send + Sync`; `&SystemCell` gives `&mut` access
// only through `claim`, whose exclusivity is invariant 1.
unsafe impl Sync for SystemCell {}

impl SystemCell {
    pub(crate) fn new(system: Box<dyn System>) -> Self {
        Self {
            unit: UnsafeCell::new(Unit {
                system,
                conditions: Vec::new(),
                sample: Sample::default(),
            }),
            running: AtomicBool::new(false),
        }
    }

    pub(crate) fn get_mut(&mut self) -> &mut Box<dyn System> {
        &mut self.unit.get_mut().system
    }

    pub(crate) fn unit_mut(&mut self) -> &mut Unit {
        self.unit.get_mut()
    }

    pub(crate) fn get(&self) -> &dyn System {
        &*self.unit().system
    }

    pub(crate) fn unit(&self) -> &Unit {
        // SAFETY: shared reads happen only while no system runs, so no `claim` holds the unit:
        // outside `run_segment` (the schedule holds `&mut self` or `&self` there), and inside
        // it only before its first system starts (`root_batches` reading last run times).
        unsafe { &*self.unit.get() }
    }

    /// Runs `f` with exclusive access to the unit.
    ///
    /// # Panics
    /// If the system is already running (a scheduler bug, caught instead of aliased).
    fn claim<R>(&self, f: impl FnOnce(&mut Unit) -> R) -> R {
        let was_running = self.running.swap(true, Ordering::Acquire);
        assert!(
            !was_running,
            "scheduler bug: a system was started twice at once"
        );
        // SAFETY: the flag above proves no other thread holds the unit (invariant 1).
        let result = f(unsafe { &mut *self.unit.get() });
        self.running.store(false, Ordering::Release);
        result
    }
}

/// The first panic of a run, with the system's name.
pub(crate) type SystemPanic = (String, Payload);

/// Shared state of one segment run.
struct Run<'a> {
    world: &'a World,
    cells: &'a [SystemCell],
    segment: &'a Segment,
    counters: RunCounters,
    abort: AtomicBool,
    panic: Mutex<Option<SystemPanic>>,
    /// The schedule run's span, parent of the system spans opened on workers.
    span: crate::trace::Parent,
}

impl Run<'_> {
    /// Runs system `first` and then, on this thread, the first dependent each finish makes
    /// ready; other ready dependents go to `spawn`. `clock` is this worker's last clock
    /// reading (see [`Run::run_one`]).
    fn run_chain(&self, first: usize, spawn: &impl Fn(usize), clock: &mut Reading) {
        let run = |local: usize| {
            if !self.abort.load(Ordering::Relaxed) {
                *clock = self.run_one(self.segment.systems[local], *clock);
            }
        };
        drive_chain(&self.counters, &self.segment.dependents, first, run, spawn);
    }

    /// Runs system `index`, timed from `start` (this worker's previous reading: the end of
    /// the system it ran before, or the start of its task), and returns the reading at its
    /// end. One clock reading per system: a worker's consecutive systems share the reading
    /// between them, so the executor's few steps between two systems count towards the
    /// second.
    fn run_one(&self, index: usize, start: Reading) -> Reading {
        let (result, end) = self.cells[index].claim(|unit| {
            let result = {
                let _span = crate::trace::system(&self.span, || unit.system.name());
                // SAFETY: the plan orders every pair of conflicting systems by the union of
                // each system's and its conditions' accesses, so nothing that runs meanwhile
                // conflicts with them; all were initialised for `world`.
                catch_unwind(AssertUnwindSafe(|| unsafe { unit.run_shared(self.world) }))
                    .map_err(|payload| (unit.system.name().to_owned(), payload))
            };
            let end = clock::now();
            unit.sample
                .record(end.since(start), *result.as_ref().unwrap_or(&true));
            (result, end)
        });
        if let Err(panic) = result {
            self.abort.store(true, Ordering::Relaxed);
            let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
            match *slot {
                None => *slot = Some(panic),
                Some(_) => drop_payload(panic.1),
            }
        }
        end
    }
}

/// Whether running `segment` on the pool is likely to pay for its thread hand-offs: judged from
/// the systems' times in the last run, parallelism can save at most the time of all systems
/// but the longest. A segment with a system that has not run yet is tried in parallel.
pub(crate) fn worth_parallel(segment: &Segment, cells: &[SystemCell], threshold: Duration) -> bool {
    if segment.exclusive || segment.systems.len() < 2 {
        return false;
    }
    let mut total = Duration::ZERO;
    let mut longest = Duration::ZERO;
    for &i in &segment.systems {
        let t = cells[i].unit().sample.last;
        if t.is_zero() {
            return true;
        }
        total += t;
        longest = longest.max(t);
    }
    total - longest > threshold
}

/// The least work, judged from the systems' last run times, worth one rayon job: a job costs
/// a hand-off of about a microsecond, so roots shorter than this are run back to back in one
/// job (see `root_batches`; docs/performance.md, "Design measurements").
const MIN_JOB: Duration = Duration::from_micros(4);

/// Splits the segment's ready-at-start systems (`roots`, positions in `segment.systems`) into
/// consecutive runs of at least [`MIN_JOB`] of last-run time each, so that many short systems
/// share a job instead of paying a hand-off apiece; a system that has not run yet (time zero)
/// or is long enough alone gets a job of its own. Which systems share a job changes only
/// which worker runs them: they are roots of one segment, so none conflicts with another.
fn root_batches(
    roots: &[usize],
    segment: &Segment,
    cells: &[SystemCell],
) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let (mut start, mut work) = (0, Duration::ZERO);
    for (at, &local) in roots.iter().enumerate() {
        let last = cells[segment.systems[local]].unit().sample.last;
        work += if last.is_zero() { MIN_JOB } else { last };
        if work >= MIN_JOB {
            batches.push(start..at + 1);
            (start, work) = (at + 1, Duration::ZERO);
        }
    }
    if start < roots.len() {
        batches.push(start..roots.len());
    }
    batches
}

/// Runs the non-exclusive `segment` and returns the first system panic, if any. Systems that
/// are running when a panic happens finish; systems not yet started are skipped.
pub(crate) fn run_segment(
    parallel: bool,
    world: &World,
    cells: &[SystemCell],
    segment: &Segment,
) -> Option<SystemPanic> {
    let run = Run {
        world,
        cells,
        segment,
        counters: RunCounters::new(&segment.dep_counts),
        abort: AtomicBool::new(false),
        panic: Mutex::new(None),
        span: crate::trace::current(),
    };
    let roots: Vec<usize> = RunCounters::roots(&segment.dep_counts).collect();
    match parallel {
        // The current thread takes the first batch of roots; the other batches go to the
        // current pool (the schedule's own pool when the run is installed in it, else rayon's
        // global pool).
        true if segment.systems.len() > 1 => {
            let batches = root_batches(&roots, segment, cells);
            rayon::in_place_scope(|scope| {
                fn spawn_in<'s>(scope: &rayon::Scope<'s>, run: &'s Run<'s>, j: usize) {
                    scope.spawn(move |scope| {
                        let mut clock = clock::now();
                        run.run_chain(j, &|k| spawn_in(scope, run, k), &mut clock);
                    });
                }
                let (run, roots) = (&run, &roots);
                for batch in batches[1..].iter().cloned() {
                    scope.spawn(move |scope| {
                        let mut clock = clock::now();
                        for &root in &roots[batch] {
                            run.run_chain(root, &|k| spawn_in(scope, run, k), &mut clock);
                        }
                    });
                }
                let mut clock = clock::now();
                for &root in &roots[batches[0].clone()] {
                    run.run_chain(root, &|k| spawn_in(scope, run, k), &mut clock);
                }
            });
        }
        _ => {
            // Single-threaded: a stack instead of a pool; the order stays a valid one.
            let mut ready: Vec<usize> = roots.into_iter().rev().collect();
            let mut clock = clock::now();
            while let Some(i) = ready.pop() {
                let spawned = std::cell::RefCell::new(Vec::new());
                run.run_chain(i, &|j| spawned.borrow_mut().push(j), &mut clock);
                ready.extend(spawned.into_inner().into_iter().rev());
            }
        }
    }
    run.panic.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Runs an exclusive system (with its panic caught and named), if its conditions allow.
pub(crate) fn run_exclusive(world: &mut World, cell: &mut SystemCell) -> Option<SystemPanic> {
    let start = Instant::now();
    let unit = cell.unit_mut();
    let _span = crate::trace::system(&crate::trace::current(), || unit.system.name());
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut go = true;
        for condition in &mut unit.conditions {
            // SAFETY: `&mut World` excludes every other access; initialised by the schedule.
            go &= unsafe { condition.0.evaluate(world) };
        }
        // SAFETY: `&mut World` excludes every other access.
        go = go && unsafe { unit.system.validate(world) };
        if go {
            unit.system.run_exclusive(world);
        }
        go
    }));
    unit.sample
        .record(start.elapsed(), *result.as_ref().unwrap_or(&true));
    result
        .err()
        .map(|payload| (unit.system.name().to_owned(), payload))
}
