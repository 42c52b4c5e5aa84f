//! Parallel runs of a query: where the work goes, how rows are split into tasks, and the
//! parallel methods built on that split.
//!
//! **Where.** `par_*` methods run their tasks on this thread's [`Parallelism`]: rayon's current
//! pool by default, a schedule's own pool, or (a single-threaded schedule) the calling thread,
//! one task after another. A schedule sets it around each run, so `par_for_each` inside a system
//! uses the schedule's threads and nothing else.
//!
//! **Split.** A task is a row range of one chunk; tasks are listed in matched-archetype, chunk
//! and row order. `par_for_each` and `par_for_each_init` cut chunks into pieces sized to the
//! pool, and an idle thread takes half of another's remaining rows (halves by row count, cut
//! inside a task on 64-row words where the chunk has enable bits; a mixed chunk's task is never
//! cut), so a run whose tasks are uneven, or whose rows cost unevenly, still ends on all threads
//! at once; `par_for_each_collect` hands back one value per task *in that order*, so whatever
//! concatenates them (per-task command buffers) sees rows in row order whatever the number of
//! threads and however the rows were cut. `par_fold` folds whole chunks (a split that does not
//! depend on the pool) and reduces the per-chunk results in chunk order, so even a
//! non-associative reduction (floating-point sums) gives bit-identical results on any number of
//! threads. The tasks and their halving are in `par_task.rs`.

use std::cell::RefCell;
use std::sync::Arc;

use ecs_core::World;
use rayon::prelude::*;
use rayon::ThreadPool;

use super::par_task::{row_starts, Pieces, Task};
use crate::fetch::WorldQuery;
use crate::filter::QueryFilter;
use crate::rows::{ChunkRows, RowMask};
use crate::run::chunk_view::ChunkView;
use crate::run::QueryRun;
use crate::state::{QueryState, RunTicks};

/// Where the `par_*` query methods called on this thread run their tasks.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{Parallelism, QueryState, RefRW};
/// let mut world = World::new();
/// world.spawn_batch((0..1000u32).map(|i| (i,))).for_each(drop);
/// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
/// let caller = std::thread::current().id();
/// Parallelism::Sequential.scope(|| {
///     state.par_for_each(&mut world, |n| {
///         assert_eq!(std::thread::current().id(), caller); // all on this thread
///         *n += 1;
///     })
/// });
/// ```
#[derive(Clone, Default)]
pub enum Parallelism {
    /// Rayon's current pool: the pool this thread works for, else rayon's global pool.
    #[default]
    Current,
    /// The calling thread, one task after another.
    Sequential,
    /// This pool, also when called from a thread outside it.
    Pool(Arc<ThreadPool>),
}

thread_local! {
    static TARGET: RefCell<Parallelism> = const { RefCell::new(Parallelism::Current) };
}

impl Parallelism {
    /// Runs `f` with `self` as this thread's target for `par_*` query methods, and restores
    /// the previous target afterwards (also when `f` panics).
    pub fn scope<R>(self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Parallelism>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take().unwrap_or_default();
                TARGET.with(|t| *t.borrow_mut() = previous);
            }
        }
        let previous = TARGET.with(|t| std::mem::replace(&mut *t.borrow_mut(), self));
        let _restore = Restore(Some(previous));
        f()
    }

    /// This thread's target.
    ///
    /// ```
    /// # use ecs_query::Parallelism;
    /// assert!(matches!(Parallelism::current(), Parallelism::Current));
    /// Parallelism::Sequential.scope(|| {
    ///     assert!(matches!(Parallelism::current(), Parallelism::Sequential));
    /// });
    /// ```
    pub fn current() -> Self {
        TARGET.with(|t| t.borrow().clone())
    }

    /// How many threads the target runs tasks on.
    ///
    /// ```
    /// # use ecs_query::Parallelism;
    /// assert_eq!(Parallelism::Sequential.threads(), 1);
    /// ```
    pub fn threads(&self) -> usize {
        match self {
            Self::Current => rayon::current_num_threads(),
            Self::Sequential => 1,
            Self::Pool(pool) => pool.current_num_threads(),
        }
    }

    /// Runs `f` on every task, on this target.
    pub(crate) fn for_each<T: Send>(&self, tasks: Vec<T>, f: impl Fn(T) + Send + Sync) {
        match self {
            _ if tasks.len() <= 1 => tasks.into_iter().for_each(f),
            Self::Sequential => tasks.into_iter().for_each(f),
            Self::Current => tasks.into_par_iter().for_each(f),
            Self::Pool(pool) => pool.install(|| tasks.into_par_iter().for_each(f)),
        }
    }

    /// Runs `f` on every row of `tasks`, on this target. Unlike [`Parallelism::for_each`], a
    /// thread that runs out of work takes half of another's remaining rows, by row count and
    /// down to a part of one task (see [`Pieces`]): tasks of uneven length (a chunk's short
    /// tail) or rows whose cost varies still finish together.
    fn for_each_row<A: Copy + Sync>(
        &self,
        tasks: &[Task<'_, A>],
        f: impl Fn(&Task<'_, A>) + Send + Sync,
    ) {
        let starts = row_starts(tasks);
        let run = |pieces: Pieces<'_, '_, A>| pieces.run(&f);
        match self {
            _ if tasks.len() <= 1 && tasks.first().is_none_or(|t| t.split_unit().is_none()) => {
                tasks.iter().for_each(&f)
            }
            Self::Sequential => tasks.iter().for_each(&f),
            Self::Current => {
                rayon::iter::split(Pieces::whole(tasks, &starts), Pieces::halve).for_each(run)
            }
            Self::Pool(pool) => pool.install(|| {
                rayon::iter::split(Pieces::whole(tasks, &starts), Pieces::halve).for_each(run)
            }),
        }
    }

    /// [`Parallelism::for_each_row`] with a state made by `init`, one per rayon job (one in
    /// all when sequential), like rayon's `for_each_init`.
    fn for_each_row_init<A: Copy + Sync, S>(
        &self,
        tasks: &[Task<'_, A>],
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, &Task<'_, A>) + Send + Sync,
    ) {
        let starts = row_starts(tasks);
        let run = |state: &mut S, pieces: Pieces<'_, '_, A>| pieces.run(|t| f(state, t));
        match self {
            Self::Sequential => {
                let mut state = init();
                tasks.iter().for_each(|t| f(&mut state, t));
            }
            Self::Current => rayon::iter::split(Pieces::whole(tasks, &starts), Pieces::halve)
                .for_each_init(&init, run),
            Self::Pool(pool) => pool.install(|| {
                rayon::iter::split(Pieces::whole(tasks, &starts), Pieces::halve)
                    .for_each_init(&init, run)
            }),
        }
    }

    /// `f` of every task, in task order.
    fn map<T: Send, R: Send>(&self, tasks: Vec<T>, f: impl Fn(T) -> R + Send + Sync) -> Vec<R> {
        match self {
            _ if tasks.len() <= 1 => tasks.into_iter().map(f).collect(),
            Self::Sequential => tasks.into_iter().map(f).collect(),
            Self::Current => tasks.into_par_iter().map(f).collect(),
            Self::Pool(pool) => pool.install(|| tasks.into_par_iter().map(f).collect()),
        }
    }
}

/// How tasks cut chunks.
#[derive(Clone, Copy)]
enum Split {
    /// Pieces of at most this many rows.
    Rows(usize),
    /// Whole chunks: the same tasks on any pool.
    Chunks,
}

impl<Q: WorldQuery, F: QueryFilter> QueryState<Q, F> {
    /// Rows that `target` splits well: enough pieces to balance its threads, never smaller than
    /// a few dozen rows.
    fn split_for(&self, world: &World, target: &Parallelism) -> Split {
        let archetypes = world.archetypes();
        let total: usize = self
            .matched_archetypes()
            .iter()
            .map(|id| archetypes[id.index()].len())
            .sum();
        Split::Rows((total / (target.threads() * 8)).max(32))
    }

    /// The passing chunks' rows as tasks, in matched-archetype, chunk and row order.
    fn tasks<'w>(
        &'w self,
        world: &'w World,
        ticks: RunTicks,
        split: Split,
    ) -> Vec<Task<'w, Q::ArchetypeFetch>> {
        self.check_world(world);
        let archetypes = world.archetypes();
        let mut tasks = Vec::new();
        let mut mask = RowMask::default();
        for (k, id) in self.matched_archetypes().iter().enumerate() {
            let arch = &archetypes[id.index()];
            for chunk in arch.chunks() {
                let window = ticks.window();
                let rows = self.classify(k, chunk, Some(window), &mut mask);
                if matches!(rows, ChunkRows::Rejected | ChunkRows::Empty) {
                    continue;
                }
                let cached = self.cached(k);
                // Tasks of one chunk meet on 64-row boundaries, so no two tasks write one
                // enable-mask word (`EnableMask` invariant 3: toggles are plain stores).
                let step = match split {
                    Split::Rows(rows) => rows.next_multiple_of(64),
                    Split::Chunks => chunk.len().max(1),
                };
                let mut start = 0;
                while start < chunk.len() {
                    let end = (start + step).min(chunk.len());
                    // A mixed chunk's task carries the mask words of its rows (`start` is a
                    // multiple of 64, or 0); a window with no passing row is no task.
                    let words = (rows == ChunkRows::Masked)
                        .then(|| Box::<[u64]>::from(&mask.words()[start / 64..end.div_ceil(64)]));
                    if words.as_ref().is_none_or(|w| w.iter().any(|&w| w != 0)) {
                        tasks.push(Task {
                            world,
                            k,
                            cached,
                            arch,
                            chunk,
                            rows: start..end,
                            mask: words,
                        });
                    }
                    start = end;
                }
            }
        }
        tasks
    }

    /// [`QueryState::par_for_each`] through a shared world.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world during the call.
    /// unsafe { state.par_for_each_unchecked(&world, |n| *n = 4) };
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn par_for_each_unchecked(
        &mut self,
        world: &World,
        f: impl Fn(Q::Item<'_>) + Send + Sync,
    ) {
        let ticks = self.start_run(world);
        // SAFETY: the access while the tasks run is this fn's caller's contract, which is
        // `QueryRun::new`'s; `ticks` were just started on `world`.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.par_for_each(f);
    }

    /// `par_for_each` over the run `ticks`, yielding the items of `D` (the query itself, or
    /// `Q::ReadOnly`).
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares, for the duration of the
    /// call.
    pub(crate) unsafe fn run_par_for_each<D>(
        &self,
        world: &World,
        ticks: RunTicks,
        f: impl Fn(D::Item<'_>) + Send + Sync,
    ) where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        let target = Parallelism::current();
        let tasks = self.tasks(world, ticks, self.split_for(world, &target));
        target.for_each_row(&tasks, |task| {
            // SAFETY: `tasks` cut each chunk into disjoint row ranges, and `Pieces` those into
            // disjoint parts (on 64-row boundaries where the chunk has enable bits), whose
            // `cached` was found in the chunk's archetype; the query's access is this fn's
            // caller's contract, so each row is handed out once, by one task.
            unsafe { run_rows::<D>(task, ticks, &f) }
        });
    }

    /// [`QueryState::par_for_each_init`] through a shared world, over the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    pub(crate) unsafe fn run_par_for_each_init<S>(
        &self,
        world: &World,
        ticks: RunTicks,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) {
        let target = Parallelism::current();
        let tasks = self.tasks(world, ticks, self.split_for(world, &target));
        target.for_each_row_init(&tasks, init, |state, task| {
            // SAFETY: as in `run_par_for_each`.
            unsafe { run_rows::<Q>(task, ticks, |item| f(state, item)) }
        });
    }

    /// Runs `f` on every row with a state that `init` makes per task, and returns the states
    /// in row order (tasks are row ranges, listed in row order), whatever the pool.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    pub(crate) unsafe fn run_par_for_each_collect<S: Send>(
        &self,
        world: &World,
        ticks: RunTicks,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) -> Vec<S> {
        let target = Parallelism::current();
        let tasks = self.tasks(world, ticks, self.split_for(world, &target));
        target.map(tasks, |task| {
            let mut state = init();
            // SAFETY: as in `run_par_for_each`.
            unsafe { run_rows::<Q>(&task, ticks, |item| f(&mut state, item)) };
            state
        })
    }

    /// [`QueryState::par_for_each_chunk`] through a shared world, over the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    pub(crate) unsafe fn run_par_for_each_chunk(
        &self,
        world: &World,
        ticks: RunTicks,
        f: impl Fn(ChunkView<'_, Q>) + Send + Sync,
    ) {
        let tasks = self.tasks(world, ticks, Split::Chunks);
        let access = &self.access().access;
        Parallelism::current().for_each(tasks, |task| {
            // SAFETY: `task.cached` was found in `task.arch`, which owns `task.chunk`; each
            // chunk is one task, so its view is handed out once; exclusivity is the caller's.
            let view = unsafe {
                ChunkView::new(
                    world,
                    task.cached,
                    access,
                    task.arch,
                    task.chunk,
                    ticks.tick(),
                )
            };
            let mut mask = RowMask::default();
            let rows = self.classify(task.k, task.chunk, Some(ticks.window()), &mut mask);
            let mask = (rows == ChunkRows::Masked).then_some(mask);
            f(view.with_mask(mask));
        });
    }

    /// [`QueryState::par_fold`] through a shared world, over the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    pub(crate) unsafe fn run_par_fold<T: Send>(
        &self,
        world: &World,
        ticks: RunTicks,
        identity: impl Fn() -> T + Send + Sync,
        fold: impl Fn(T, Q::Item<'_>) -> T + Send + Sync,
        reduce: impl Fn(T, T) -> T,
    ) -> T {
        let tasks = self.tasks(world, ticks, Split::Chunks);
        let partials = Parallelism::current().map(tasks, |task| {
            let mut acc = Some(identity());
            // SAFETY: as in `run_par_for_each`.
            unsafe {
                run_rows::<Q>(&task, ticks, |item| {
                    let so_far = acc.take().expect("put back after each row");
                    acc = Some(fold(so_far, item));
                });
            }
            acc.expect("put back after each row")
        });
        partials.into_iter().reduce(reduce).unwrap_or_else(identity)
    }

    // ----- safe entry points ----------------------------------------------------------------

    /// Calls `f` on every matched entity from the current [`Parallelism`] (rayon's pool unless
    /// a schedule says otherwise), split into row ranges of chunks.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, RefRW};
    /// let mut world = World::new();
    /// world.spawn_batch((0..100u32).map(|i| (i,))).for_each(drop);
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.par_for_each(&mut world, |n| *n += 1);
    /// let mut read = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(read.iter(&world).sum::<u32>(), (1..=100).sum());
    /// ```
    pub fn par_for_each(&mut self, world: &mut World, f: impl Fn(Q::Item<'_>) + Send + Sync) {
        self.run(world).par_for_each(f);
    }

    /// `par_for_each` with a state per rayon job, made by `init` (a scratch buffer, a random
    /// number generator, a local counter): like rayon's `for_each_init`, `init` runs once per
    /// job, not once per entity. How many states are made depends on the pool.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// world.spawn_batch((0..1000u32).map(|i| (i,))).for_each(drop);
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.par_for_each_init(&mut world, Vec::new, |scratch: &mut Vec<u32>, n| {
    ///     scratch.clear();
    ///     scratch.extend([*n, 1]);
    ///     *n = scratch.iter().sum();
    /// });
    /// assert_eq!(state.iter_mut(&mut world).map(|n| *n).sum::<u32>(), (1..=1000).sum());
    /// ```
    pub fn par_for_each_init<S>(
        &mut self,
        world: &mut World,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) {
        self.run(world).par_for_each_init(init, f);
    }

    /// Calls `f` once per matched chunk, chunks in parallel.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// world.spawn_batch((0..5000u32).map(|i| (i,))).for_each(drop);
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.par_for_each_chunk(&mut world, |mut view| view.columns().fill(7));
    /// assert!(state.iter_mut(&mut world).all(|n| *n == 7));
    /// ```
    pub fn par_for_each_chunk(
        &mut self,
        world: &mut World,
        f: impl Fn(ChunkView<'_, Q>) + Send + Sync,
    ) {
        self.run(world).par_for_each_chunk(f);
    }

    /// Folds every matched item in parallel: each chunk from `identity()` with `fold`, then the
    /// chunks' results with `reduce` in chunk order. The split and the order do not depend on
    /// the pool, so the result is bit-identical on any number of threads, even for a
    /// non-associative `reduce` such as a floating-point sum.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// world.spawn_batch((0..10_000u32).map(|i| (i as f32 * 0.1,))).for_each(drop);
    /// let mut state = QueryState::<RefRO<f32>>::new(&mut world);
    /// let sum = |world: &mut World, state: &mut QueryState<RefRO<f32>>| {
    ///     state.par_fold(world, || 0.0f32, |acc, x| acc + x, |a, b| a + b)
    /// };
    /// let on_pool = sum(&mut world, &mut state);
    /// let alone = ecs_query::Parallelism::Sequential.scope(|| sum(&mut world, &mut state));
    /// assert_eq!(on_pool.to_bits(), alone.to_bits());
    /// ```
    pub fn par_fold<T: Send>(
        &mut self,
        world: &mut World,
        identity: impl Fn() -> T + Send + Sync,
        fold: impl Fn(T, Q::Item<'_>) -> T + Send + Sync,
        reduce: impl Fn(T, T) -> T,
    ) -> T {
        self.run(world).par_fold(identity, fold, reduce)
    }
}

/// Calls `f` on the items of `D` in `task`'s rows.
///
/// # Safety
/// `task.cached` was found in the archetype that owns `task.chunk`; no other task or access
/// touches these rows' columns that `D` writes, and nothing writes what `D` reads, meanwhile.
#[inline]
unsafe fn run_rows<'w, D: WorldQuery>(
    task: &Task<'w, D::ArchetypeFetch>,
    ticks: RunTicks,
    mut f: impl FnMut(D::Item<'w>),
) {
    debug_assert!(
        task.rows.end <= task.chunk.len(),
        "task rows past the chunk"
    );
    debug_assert!(
        task.rows.start % 64 == 0 || task.arch.enableable_columns().is_empty(),
        "a task of a chunk with enable bits starts inside a mask word"
    );
    debug_assert!(task
        .arch
        .chunks()
        .iter()
        .any(|c| std::ptr::eq(c, task.chunk)));
    // SAFETY: `task.cached` was found in the archetype owning `task.chunk` and the caller holds
    // `D`'s access to the task's rows (`run_rows`' contract); the column tick `fetch` stamps is
    // an atomic store, so two tasks of one chunk stamping it is idempotent.
    let mut fetch = unsafe { D::fetch_in(task.cached, task.chunk, ticks.tick(), task.world) };
    let Some(words) = &task.mask else {
        // SAFETY: the task's rows are this task's only (a bulk stamp when they are the whole
        // chunk, which then is one task); the chunk tick store is idempotent across tasks.
        unsafe { D::mark_rows(task.cached, task.chunk, task.rows.clone(), ticks.tick()) };
        for row in task.rows.clone() {
            // SAFETY: `row < chunk.len()`, and the row is in this task only.
            f(unsafe { D::item(&mut fetch, row) });
        }
        return;
    };
    // Each run of set bits in a word is marked with one `mark_rows` call (which also stores
    // the chunk's column tick), not one per row.
    for (i, &word) in words.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            let low = bits.trailing_zeros();
            // The run's length: the trailing ones from `low` (64 for a full word).
            let len = (!(bits >> low)).trailing_zeros();
            let start = task.rows.start + i * 64 + low as usize;
            let end = start + len as usize;
            bits = if low + len >= 64 {
                0
            } else {
                bits & (u64::MAX << (low + len))
            };
            // SAFETY: set bits are passing rows below `rows.end <= chunk.len()` (the mask
            // holds no bit past the chunk's rows), and they are in this task only, so only
            // this task marks them.
            unsafe { D::mark_rows(task.cached, task.chunk, start..end, ticks.tick()) };
            for row in start..end {
                // SAFETY: `row` is a passing row of this task (below `chunk.len()`, as for
                // `mark_rows` just above), handed out once.
                f(unsafe { D::item(&mut fetch, row) });
            }
        }
    }
}
