//! Timing one world and its `Vec` baseline: the work each measure does, and its samples.
//!
//! Per repetition a [`WorldBench`] times `for_each` over the hot columns, the chunk-slice loop
//! and add + remove of [`Tag`] on its move subset; and the [`Baseline`] times the `Vec` loop
//! and the `Vec` row moves once per repetition (round) for all worlds of the mix, before the
//! worlds in odd repetitions and after them in even ones (whichever runs second finds the
//! caches as the first left them; alternating cancels that). Every world's ratio then divides
//! by the same baseline samples, so policies compare without the baseline's own jitter.
//! Repetition 0 is a warm-up and not recorded. Each sample is the fastest of `best_of` passes,
//! each cold or warm as the sweep's [`Timer`] says. With replicas, a policy's worlds of every
//! replica add their samples to the first one's ([`WorldBench::absorb`]), `reps` per replica
//! in replica order, which is how [`placement_spread`] finds each replica's median.
//!
//! # Invariants
//! 1. The layout facts (memory, footprint, capacity) are read in [`WorldBench::new`], before
//!    the first add/remove, so the tag archetype and the spare chunk it keeps are not in them.
//! 2. After each add/remove pass every entity is back in the mix's archetype: the next
//!    `for_each` walks the same rows (in a different order).

use std::hint::black_box;

use ecs_core::{ChunkPolicy, Entity, Footprint, World};
use ecs_query::{QueryState, RefRO, RefRW};

use crate::args::policy_label;
use crate::components::{Hot, Tag};
use crate::mix::Mix;
use crate::record::{Measure, Record};
use crate::stats::Stats;
use crate::timer::{Passes, Timer};

/// Plain `Vec`s of the same data: the two hot columns, and every row as bytes.
pub(crate) struct Baseline<const L: usize> {
    hot0: Vec<Hot<0, L>>,
    hot1: Vec<Hot<1, L>>,
    /// `len / row` rows of `row` bytes.
    table: Vec<u8>,
    /// Rows moved out of `table`.
    tagged: Vec<u8>,
    row: usize,
    /// ns per item of each recorded repetition: the `Vec` loop, the `Vec` moves.
    samples: [Vec<f64>; 2],
}

impl<const L: usize> Baseline<L> {
    pub(crate) fn new(n: usize, row: usize) -> Self {
        Self {
            hot0: (0..n).map(|i| Hot([i as f32; L])).collect(),
            hot1: vec![Hot([1.0; L]); n],
            table: (0..n * row).map(|b| b as u8).collect(),
            tagged: Vec::with_capacity(n * row),
            row,
            samples: Default::default(),
        }
    }

    /// Repetition `rep` of both baseline measures, `k` row moves each way.
    pub(crate) fn rep(&mut self, rep: usize, k: usize, best_of: usize, timer: &mut Timer) {
        let n = self.hot0.len();
        let looped = timer.time(best_of, n, || self.run_loop());
        let moved = timer.time(best_of, k, || self.run_moves(k));
        if rep > 0 {
            self.samples[0].push(looped);
            self.samples[1].push(moved);
        }
    }

    fn run_loop(&mut self) {
        add_slices(black_box(&mut self.hot0), &self.hot1);
    }

    /// Moves `k` rows spread over the table out, then back (swap-removing each time).
    fn run_moves(&mut self, k: usize) {
        let rows = self.table.len() / self.row;
        for j in 0..k {
            let idx = (j * rows / k).min(self.table.len() / self.row - 1);
            move_row(&mut self.table, idx, &mut self.tagged, self.row);
        }
        for _ in 0..k {
            move_row(&mut self.tagged, 0, &mut self.table, self.row);
        }
        black_box(&mut self.table);
    }

    /// The two hot `Vec`s' distinct lines and pages, from their addresses (as the world's
    /// footprints are counted).
    fn pass(&self) -> Footprint {
        fn range<T>(v: &[T]) -> (usize, usize) {
            (v.as_ptr().addr(), v.as_ptr().addr() + size_of_val(v))
        }
        Footprint::of_ranges(&[range(&self.hot0), range(&self.hot1)])
    }
}

/// Appends row `idx` of `src` to `dst` and fills its place with `src`'s last row.
fn move_row(src: &mut Vec<u8>, idx: usize, dst: &mut Vec<u8>, row: usize) {
    let start = idx * row;
    dst.extend_from_slice(&src[start..start + row]);
    let last = src.len() - row;
    src.copy_within(last.., start);
    src.truncate(last);
}

#[inline(always)]
fn add<const L: usize>(a: &mut Hot<0, L>, b: &Hot<1, L>) {
    for (x, y) in a.0.iter_mut().zip(&b.0) {
        *x += *y;
    }
}

/// `a[i] += b[i]` over two slices: the chunk-slice loop and the `Vec` loop share it, out of
/// line, so both compile to one vector loop whose arguments are known not to alias.
#[inline(never)]
fn add_slices<const L: usize>(a: &mut [Hot<0, L>], b: &[Hot<1, L>]) {
    for (a, b) in a.iter_mut().zip(b) {
        add(a, b);
    }
}

/// The largest over the smallest median of `samples` taken `reps` at a time (one group per
/// replica): 1.0 for a single replica.
///
/// # Panics
/// If `reps` is zero.
pub(crate) fn placement_spread(samples: &[f64], reps: usize) -> f64 {
    let medians: Vec<f64> = samples
        .chunks(reps)
        .map(|group| Stats::of(group.to_vec()).median)
        .collect();
    let max = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = medians.iter().copied().fold(f64::INFINITY, f64::min);
    if medians.len() < 2 || min <= 0.0 {
        1.0
    } else {
        max / min
    }
}

/// How a sweep's samples were taken, as its records tell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunShape {
    /// Recorded repetitions per replica.
    pub(crate) reps: usize,
    pub(crate) best_of: usize,
    pub(crate) passes: Passes,
    pub(crate) replicas: usize,
}

/// One world of a sweep, its query and its samples so far.
pub(crate) struct WorldBench<const L: usize> {
    world: World,
    query: QueryState<(RefRW<Hot<0, L>>, RefRO<Hot<1, L>>)>,
    policy: ChunkPolicy,
    /// The move subset: `moves` (at most all) distinct entities spread evenly over the spawn
    /// order.
    movers: Vec<Entity>,
    entities: usize,
    chunk_size: usize,
    capacity: usize,
    memory_bytes: usize,
    pass: Footprint,
    /// Per world measure of [`Measure::ALL`] (its first three), ns per item of each
    /// recorded repetition.
    samples: [Vec<f64>; 3],
}

impl<const L: usize> WorldBench<L> {
    /// Takes `world` (whose entities `ids` all have the mix's components) and reads its layout
    /// facts (invariant 1).
    ///
    /// # Panics
    /// If `ids` is empty or its entities lack the hot columns.
    pub(crate) fn new(mut world: World, ids: &[Entity], policy: ChunkPolicy, moves: usize) -> Self {
        let query = QueryState::new(&mut world);
        let report = world.memory_report();
        let archetype = world.location(ids[0]).expect("just spawned").archetype;
        let arch = &world.archetypes()[archetype.index()];
        let column = |id| arch.column(id).expect("a hot column of the mix");
        let hot = [
            column(world.component_id::<Hot<0, L>>().expect("registered")),
            column(world.component_id::<Hot<1, L>>().expect("registered")),
        ];
        let facts = report
            .archetypes
            .iter()
            .find(|a| a.id == archetype)
            .expect("the mix's archetype holds the entities");
        let n = ids.len();
        // Each mover once: `j * n / moves` is strictly increasing only while `moves <= n`.
        let moves = moves.min(n);
        Self {
            query,
            policy,
            movers: (0..moves).map(|j| ids[j * n / moves]).collect(),
            entities: n,
            chunk_size: facts.chunk_size,
            capacity: facts.capacity,
            memory_bytes: report.memory.total(),
            pass: facts.footprint(&hot, false),
            samples: Default::default(),
            world,
        }
    }

    /// Rows moved each way by an add/remove repetition.
    pub(crate) fn moves(&self) -> usize {
        self.movers.len()
    }

    /// Repetition `rep` of the world's measures (see the module docs).
    pub(crate) fn rep(&mut self, rep: usize, best_of: usize, timer: &mut Timer) {
        let (n, k, p) = (self.entities, self.movers.len(), best_of);
        let (world, query, movers) = (&mut self.world, &mut self.query, &self.movers);
        let mut timed = [0.0; 3];
        timed[0] = timer.time(p, n, || query.for_each(world, |(a, b)| add(a, b)));
        timed[1] = timer.time(p, n, || {
            query.for_each_chunk(world, |mut view| {
                let (a, b) = view.columns();
                add_slices(a, b);
            });
        });
        timed[2] = timer.time(p, k, || {
            for &e in movers {
                world.insert_one(e, Tag).expect("alive");
            }
            for &e in movers {
                world.remove::<(Tag,)>(e).expect("tagged above");
            }
        });
        if rep > 0 {
            for (s, t) in self.samples.iter_mut().zip(timed) {
                s.push(t);
            }
        }
    }

    /// Adds the samples of `other`, the same policy's world of a later replica, after this
    /// one's (its world, and its layout facts, are dropped: the first replica's stand).
    pub(crate) fn absorb(&mut self, other: Self) {
        for (mine, theirs) in self.samples.iter_mut().zip(other.samples) {
            mine.extend(theirs);
        }
    }

    /// One record per [`Measure::ALL`] entry: the world's three, and the round's baselines
    /// (the same samples for every world of the mix).
    ///
    /// # Panics
    /// If no repetition was recorded.
    pub(crate) fn records(self, mix: &Mix, base: &Baseline<L>, run: &RunShape) -> Vec<Record> {
        let [for_each, chunks, moves] = self.samples;
        let samples = [
            for_each,
            chunks,
            moves,
            base.samples[0].clone(),
            base.samples[1].clone(),
        ];
        Measure::ALL
            .into_iter()
            .zip(samples)
            .map(|(measure, samples)| {
                let world_side = measure.baseline().is_some();
                Record {
                    mix: mix.name.clone(),
                    row_bytes: mix.row_bytes(),
                    policy: self.policy,
                    config: policy_label(self.policy),
                    chunk_size: if world_side { self.chunk_size } else { 0 },
                    capacity: if world_side { self.capacity } else { 0 },
                    entities: self.entities,
                    measure,
                    placement_spread: placement_spread(&samples, run.reps),
                    stats: Stats::of(samples),
                    best_of: run.best_of,
                    passes: run.passes,
                    replicas: run.replicas,
                    memory_bytes: if world_side {
                        self.memory_bytes
                    } else {
                        self.entities * mix.row_bytes()
                    },
                    pass: if world_side { self.pass } else { base.pass() },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_row_swap_removes() {
        let mut src: Vec<u8> = (0..8).collect();
        let mut dst = Vec::new();
        move_row(&mut src, 1, &mut dst, 2);
        assert_eq!(
            (src.as_slice(), dst.as_slice()),
            (&[0, 1, 6, 7, 4, 5][..], &[2, 3][..])
        );
        move_row(&mut src, 2, &mut dst, 2);
        assert_eq!(
            (src.as_slice(), dst.as_slice()),
            (&[0, 1, 6, 7][..], &[2, 3, 4, 5][..])
        );
    }

    #[test]
    fn baseline_moves_come_back() {
        let mut base = Baseline::<1>::new(10, 12);
        let before = base.table.clone();
        base.run_moves(4);
        assert!(base.tagged.is_empty());
        let mut after = base
            .table
            .chunks(12)
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>();
        let mut want = before.chunks(12).map(<[u8]>::to_vec).collect::<Vec<_>>();
        after.sort();
        want.sort();
        assert_eq!(after, want);
    }
}
