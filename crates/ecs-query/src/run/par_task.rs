//! How a parallel run's rows are cut into work: a [`Task`] is a row range of one chunk, and
//! [`Pieces`] the share of a run's tasks one rayon job holds, halved by rows whenever rayon
//! sees an idle thread (the **Split** of `par.rs`'s module docs).

use std::ops::Range;

use ecs_core::{Archetype, Chunk, World};

/// A row range of one chunk for one parallel task; `cached` is the query's `ArchetypeFetch`
/// for the chunk's archetype.
pub(super) struct Task<'w, A> {
    /// The world that owns the chunk (elements that read through it: `EntityRef`).
    pub(super) world: &'w World,
    /// The chunk's archetype's position among the state's matched archetypes.
    pub(super) k: usize,
    pub(super) cached: &'w A,
    pub(super) arch: &'w Archetype,
    pub(super) chunk: &'w Chunk,
    pub(super) rows: Range<usize>,
    /// For a chunk where only some rows pass: the passing rows of `rows`, one bit per row
    /// from `rows.start` (a multiple of 64); `None` when every row of `rows` passes.
    pub(super) mask: Option<Box<[u64]>>,
}

impl<A> Task<'_, A> {
    /// The rows a part of this task must start on, if it may be cut further: none for a task
    /// with a mask (its words start at `rows.start`); 64 where the chunk keeps enable bits, so
    /// that no two parts write one mask word (`EnableMask` invariant 3); else any row.
    pub(super) fn split_unit(&self) -> Option<usize> {
        match () {
            _ if self.mask.is_some() => None,
            _ if self.arch.enableable_columns().is_empty() => Some(1),
            _ => Some(64),
        }
    }
}

/// Rows of a parallel run that one rayon job holds: a range of the run's rows, counted across
/// its tasks in order (task `i` holds rows `starts[i]..starts[i + 1]`). Halved, by rows, whenever
/// rayon sees an idle thread (`rayon::iter::split`), so the split adapts to the rows' cost as
/// rayon's own slices do; a cut inside a task follows [`Task::split_unit`].
pub(super) struct Pieces<'t, 'w, A> {
    tasks: &'t [Task<'w, A>],
    /// `starts[i]`: the rows of the tasks before task `i`; one more entry, the run's total.
    starts: &'t [usize],
    rows: Range<usize>,
}

impl<A> Clone for Pieces<'_, '_, A> {
    fn clone(&self) -> Self {
        Self {
            rows: self.rows.clone(),
            ..*self
        }
    }
}

/// The run's row count before each task, and the total: [`Pieces::starts`].
pub(super) fn row_starts<A>(tasks: &[Task<'_, A>]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(tasks.len() + 1);
    let mut total = 0;
    starts.push(0);
    for task in tasks {
        total += task.rows.len();
        starts.push(total);
    }
    starts
}

impl<'t, 'w, A: Copy> Pieces<'t, 'w, A> {
    /// A part is never cut below this many rows: a row range's start-up (its fetch, its
    /// stamps) stays small beside the rows.
    const MIN_ROWS: usize = 16;

    pub(super) fn whole(tasks: &'t [Task<'w, A>], starts: &'t [usize]) -> Self {
        let total = starts.last().copied().unwrap_or(0);
        Self {
            tasks,
            starts,
            rows: 0..total,
        }
    }

    /// The task holding run row `row` (`row` below the total).
    fn task_of(&self, row: usize) -> usize {
        self.starts.partition_point(|&s| s <= row) - 1
    }

    /// Two halves of about equal rows, or `self` alone when too small to cut.
    pub(super) fn halve(self) -> (Self, Option<Self>) {
        let rows = self.rows.clone();
        if rows.len() < 2 * Self::MIN_ROWS {
            return (self, None);
        }
        let mid = rows.start + rows.len() / 2;
        let i = self.task_of(mid);
        let task = &self.tasks[i];
        let (first, last) = (self.starts[i], self.starts[i + 1]);
        let cut = match task.split_unit() {
            // Inside the task, on a row its unit allows (counted in the chunk's rows).
            Some(unit) => {
                let row = task.rows.start + (mid - first);
                let row = (row - row % unit).max(task.rows.start);
                first + (row - task.rows.start)
            }
            // At the nearer end of a task that may not be cut.
            None if mid - first <= last - mid => first,
            None => last,
        };
        if cut <= rows.start || cut >= rows.end {
            return (self, None);
        }
        let low = Self {
            rows: rows.start..cut,
            ..self.clone()
        };
        let high = Self {
            rows: cut..rows.end,
            ..self
        };
        (low, Some(high))
    }

    /// Calls `f` on each task of the range, cut to the range's rows where it ends inside one.
    pub(super) fn run(self, mut f: impl FnMut(&Task<'w, A>)) {
        if self.rows.is_empty() {
            return;
        }
        for i in self.task_of(self.rows.start)..self.tasks.len() {
            let (first, last) = (self.starts[i], self.starts[i + 1]);
            if first >= self.rows.end {
                break;
            }
            let task = &self.tasks[i];
            let (from, to) = (first.max(self.rows.start), last.min(self.rows.end));
            if (from, to) == (first, last) {
                f(task);
            } else {
                debug_assert!(task.mask.is_none(), "a task with a mask was cut");
                let start = task.rows.start + (from - first);
                f(&Task {
                    rows: start..start + (to - from),
                    mask: None,
                    ..*task
                });
            }
        }
    }
}
