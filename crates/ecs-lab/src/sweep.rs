//! The sweep itself: one world per (mix, policy), every measurement on that world, each beside
//! the same work on plain `Vec`s timed in the same repetition.
//!
//! Per repetition: `for_each` over the hot columns, the chunk-slice loop and add + remove of
//! [`Tag`] on the move subset; and the `Vec` loop and the `Vec` row moves, before the world's
//! measures in odd repetitions and after them in even ones. The first repetition is a warm-up
//! and not recorded. With `--best-of N` each repetition's sample is the fastest of `N` passes.
//! Interleaving puts each world figure and its baseline under the same
//! machine noise, so their ratio is the figure to quote.
//!
//! The sweep is single-threaded: it measures, and runs nothing in parallel.
//!
//! # Invariants
//! 1. Memory and the footprint are read before the first add/remove, so the tag archetype
//!    (and the spare chunk it keeps) is not in them.
//! 2. After each add/remove repetition every entity is back in the mix's archetype: the world
//!    measured by the next `for_each` holds the same rows (in a different order).

use std::hint::black_box;
use std::time::Instant;

use ecs_core::{ChunkPolicy, Entity, Footprint, World};
use ecs_query::{QueryState, RefRO, RefRW};

use crate::args::{policy_label, SweepArgs};
use crate::components::{Cold, Hot, Pad, Pad16, Tag};
use crate::error::LabError;
use crate::mix::Mix;
use crate::stats::Stats;

/// One kind of measurement of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Measure {
    /// `QueryState::for_each` over the two hot columns: `a += b`, lane by lane.
    ForEach,
    /// The same loop over each chunk's column slices (`for_each_chunk`).
    ChunkSlice,
    /// Inserting [`Tag`] on each entity of the move subset, then removing it; per entity.
    AddRemove,
    /// `a += b` over two plain `Vec`s: the baseline of `ForEach` and `ChunkSlice`.
    VecLoop,
    /// Swap-removing each row of the move subset from a `Vec<u8>` table of rows into a second
    /// one and back (the byte moves a hand-written two-table store makes): the baseline of
    /// `AddRemove`.
    VecMove,
}

impl Measure {
    /// Every measure, in record order.
    pub const ALL: [Self; 5] = [
        Self::ForEach,
        Self::ChunkSlice,
        Self::AddRemove,
        Self::VecLoop,
        Self::VecMove,
    ];

    /// The name in CSV and charts.
    ///
    /// ```
    /// # use ecs_lab::Measure;
    /// assert_eq!(Measure::ChunkSlice.name(), "chunk_slice");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::ForEach => "for_each",
            Self::ChunkSlice => "chunk_slice",
            Self::AddRemove => "add_remove",
            Self::VecLoop => "vec_loop",
            Self::VecMove => "vec_move",
        }
    }

    /// The `Vec` measure a world measure compares with; `None` for the baselines themselves.
    ///
    /// ```
    /// # use ecs_lab::Measure;
    /// assert_eq!(Measure::AddRemove.baseline(), Some(Measure::VecMove));
    /// assert_eq!(Measure::VecLoop.baseline(), None);
    /// ```
    pub fn baseline(self) -> Option<Self> {
        match self {
            Self::ForEach | Self::ChunkSlice => Some(Self::VecLoop),
            Self::AddRemove => Some(Self::VecMove),
            Self::VecLoop | Self::VecMove => None,
        }
    }
}

/// One measured figure of a sweep: a measure of one mix under one policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The mix's name.
    pub mix: String,
    /// Its bytes per row (entity id included).
    pub row_bytes: usize,
    /// The policy of the world (the baselines carry the policy they were timed beside).
    pub policy: ChunkPolicy,
    /// [`policy_label`] of `policy`.
    pub config: String,
    /// The chunk size the mix's archetype got.
    pub chunk_size: usize,
    /// Its rows per chunk.
    pub capacity: usize,
    /// Entities in the world.
    pub entities: usize,
    /// What was timed.
    pub measure: Measure,
    /// Nanoseconds per entity (per moved entity for the move measures).
    pub stats: Stats,
    /// Passes per repetition (each sample is the fastest of them).
    pub best_of: usize,
    /// The world's memory by its layout report; for the baselines, plain `Vec` columns of the
    /// same rows (`entities × row_bytes`).
    pub memory_bytes: usize,
    /// One pass over the two hot columns (for the baselines: two page-aligned `Vec`s).
    pub pass: Footprint,
}

/// Spawns `n` rows of `(Hot<0, L>, Hot<1, L>, C)`: hot values `[i; L]` and `[1; L]`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_lab::{populate, Hot, Pad};
/// let mut world = World::new();
/// let ids = populate::<3, Pad<276>>(&mut world, 10);
/// assert_eq!(world.get::<Hot<0, 3>>(ids[4]), Ok(&Hot([4.0; 3])));
/// assert_eq!(world.layout().archetypes[0].components.len(), 3);
/// ```
pub fn populate<const L: usize, C: Cold>(world: &mut World, n: usize) -> Vec<Entity> {
    world
        .spawn_batch((0..n).map(|i| {
            (
                Hot::<0, L>([i as f32; L]),
                Hot::<1, L>([1.0; L]),
                C::filled(i),
            )
        }))
        .collect()
}

/// Runs the sweep `args` describes, calling `progress` with each record as it is made.
///
/// # Errors
/// [`LabError::Policy`] if a world refuses a policy (parsed arguments never do),
/// [`LabError::UnsupportedHotLanes`] / [`LabError::UnsupportedCold`] for a mix built by hand
/// outside the menu.
pub fn run_sweep(
    args: &SweepArgs,
    mut progress: impl FnMut(&Record),
) -> Result<Vec<Record>, LabError> {
    let mut out = Vec::new();
    for mix in &args.mixes {
        let mut sink = |r: Record| {
            progress(&r);
            out.push(r);
        };
        with_cold(mix, args, &mut sink)?;
    }
    Ok(out)
}

/// Picks the cold column type of `mix` (the menu in [`COLD_MENU`](crate::COLD_MENU)).
fn with_cold(mix: &Mix, args: &SweepArgs, sink: &mut dyn FnMut(Record)) -> Result<(), LabError> {
    match (mix.cold_bytes, mix.cold_align) {
        (0, 1) => with_lanes::<Pad<0>>(mix, args, sink),
        (8, 1) => with_lanes::<Pad<8>>(mix, args, sink),
        (16, 1) => with_lanes::<Pad<16>>(mix, args, sink),
        (32, 1) => with_lanes::<Pad<32>>(mix, args, sink),
        (64, 1) => with_lanes::<Pad<64>>(mix, args, sink),
        (92, 1) => with_lanes::<Pad<92>>(mix, args, sink),
        (128, 1) => with_lanes::<Pad<128>>(mix, args, sink),
        (256, 1) => with_lanes::<Pad<256>>(mix, args, sink),
        (276, 1) => with_lanes::<Pad<276>>(mix, args, sink),
        (512, 1) => with_lanes::<Pad<512>>(mix, args, sink),
        (16, 16) => with_lanes::<Pad16<1>>(mix, args, sink),
        (32, 16) => with_lanes::<Pad16<2>>(mix, args, sink),
        (64, 16) => with_lanes::<Pad16<4>>(mix, args, sink),
        (128, 16) => with_lanes::<Pad16<8>>(mix, args, sink),
        (256, 16) => with_lanes::<Pad16<16>>(mix, args, sink),
        (bytes, align) => Err(LabError::UnsupportedCold {
            mix: mix.name.clone(),
            bytes,
            align,
        }),
    }
}

/// Picks the hot column types of `mix`.
fn with_lanes<C: Cold>(
    mix: &Mix,
    args: &SweepArgs,
    sink: &mut dyn FnMut(Record),
) -> Result<(), LabError> {
    match mix.hot_lanes {
        1 => sweep_mix::<1, C>(mix, args, sink),
        2 => sweep_mix::<2, C>(mix, args, sink),
        3 => sweep_mix::<3, C>(mix, args, sink),
        4 => sweep_mix::<4, C>(mix, args, sink),
        lanes => Err(LabError::UnsupportedHotLanes {
            mix: mix.name.clone(),
            lanes,
        }),
    }
}

/// One world per policy; the `Vec` baseline is built once and reused by every policy.
fn sweep_mix<const L: usize, C: Cold>(
    mix: &Mix,
    args: &SweepArgs,
    sink: &mut dyn FnMut(Record),
) -> Result<(), LabError> {
    debug_assert_eq!(size_of::<C>(), mix.cold_bytes);
    let mut base = Baseline::<L>::new(args.entities, mix.row_bytes());
    for &policy in &args.policies {
        let mut world = World::with_chunk_policy(policy)?;
        let ids = populate::<L, C>(&mut world, args.entities);
        measure_world::<L>(&mut world, &ids, &mut base, mix, policy, args, sink);
    }
    Ok(())
}

/// Plain `Vec`s of the same data: the two hot columns, and every row as bytes.
struct Baseline<const L: usize> {
    hot0: Vec<Hot<0, L>>,
    hot1: Vec<Hot<1, L>>,
    /// `len / row` rows of `row` bytes.
    table: Vec<u8>,
    /// Rows moved out of `table`.
    tagged: Vec<u8>,
    row: usize,
}

impl<const L: usize> Baseline<L> {
    fn new(n: usize, row: usize) -> Self {
        Self {
            hot0: (0..n).map(|i| Hot([i as f32; L])).collect(),
            hot1: vec![Hot([1.0; L]); n],
            table: (0..n * row).map(|b| b as u8).collect(),
            tagged: Vec::with_capacity(n * row),
            row,
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

    fn pass(&self) -> Footprint {
        let column = self.hot0.len() * size_of::<Hot<0, L>>();
        Footprint {
            bytes: 2 * column,
            cache_lines: 2 * column.div_ceil(64),
            pages: 2 * column.div_ceil(4096),
        }
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

/// Nanoseconds per item of the fastest of `passes` runs of `f` over `items` items.
fn time(passes: usize, items: usize, mut f: impl FnMut()) -> f64 {
    (0..passes.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as f64 / items.max(1) as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Every measure of one world and its baselines; emits `Measure::ALL.len()` records.
fn measure_world<const L: usize>(
    world: &mut World,
    ids: &[Entity],
    base: &mut Baseline<L>,
    mix: &Mix,
    policy: ChunkPolicy,
    args: &SweepArgs,
    sink: &mut dyn FnMut(Record),
) {
    let n = ids.len();
    let mut query = QueryState::<(RefRW<Hot<0, L>>, RefRO<Hot<1, L>>)>::new(world);
    // Invariant 1: the layout facts come first.
    let report = world.layout();
    let archetype = world.location(ids[0]).expect("just spawned").archetype;
    let arch = &world.archetypes()[archetype.index()];
    let column = |id| arch.column(id).expect("a hot column of the mix");
    let hot = [
        column(world.component_id::<Hot<0, L>>().expect("registered")),
        column(world.component_id::<Hot<1, L>>().expect("registered")),
    ];
    let arch_report = report
        .archetypes
        .iter()
        .find(|a| a.id == archetype)
        .expect("the mix's archetype holds the entities");
    let pass = arch_report.footprint(&hot, false);
    let (chunk_size, capacity) = (arch_report.chunk_size, arch_report.capacity);
    let movers: Vec<Entity> = (0..args.moves).map(|j| ids[j * n / args.moves]).collect();
    let (k, p) = (movers.len(), args.best_of);

    let mut samples: [Vec<f64>; 5] = Default::default();
    for rep in 0..=args.reps {
        let mut timed = [0.0; 5];
        // Odd reps time each baseline first, even reps the world first: whichever runs
        // second finds the caches as the first left them, and alternating cancels that.
        for half in [rep % 2, 1 - rep % 2] {
            if half == 0 {
                timed[0] = time(p, n, || query.for_each(world, |(a, b)| add(a, b)));
                timed[1] = time(p, n, || {
                    query.for_each_chunk(world, |mut view| {
                        let (a, b) = view.columns();
                        add_slices(a, b);
                    });
                });
                timed[2] = time(p, k, || {
                    for &e in &movers {
                        world.insert_one(e, Tag).expect("alive");
                    }
                    for &e in &movers {
                        world.remove::<(Tag,)>(e).expect("tagged above");
                    }
                });
            } else {
                timed[3] = time(p, n, || base.run_loop());
                timed[4] = time(p, k, || base.run_moves(k));
            }
        }
        if rep > 0 {
            for (s, t) in samples.iter_mut().zip(timed) {
                s.push(t);
            }
        }
    }
    for (measure, samples) in Measure::ALL.into_iter().zip(samples) {
        let world_side = measure.baseline().is_some();
        sink(Record {
            mix: mix.name.clone(),
            row_bytes: mix.row_bytes(),
            policy,
            config: policy_label(policy),
            chunk_size: if world_side { chunk_size } else { 0 },
            capacity: if world_side { capacity } else { 0 },
            entities: n,
            measure,
            stats: Stats::of(samples),
            best_of: p,
            memory_bytes: if world_side {
                report.memory.total()
            } else {
                n * mix.row_bytes()
            },
            pass: if world_side { pass } else { base.pass() },
        });
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
