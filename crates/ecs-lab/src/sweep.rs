//! The sweep itself: every (mix, policy) world, each measure beside the same work on plain
//! `Vec`s timed once per repetition for all of them (see `measure.rs` for what one repetition
//! does).
//!
//! All worlds of one mix are built first (in a shuffled order, so placement is not tied to a
//! policy) and then measured round-robin, repetition by repetition, so a load that drifts
//! while the sweep runs reaches every policy alike, and the ratios between policies are not an
//! artefact of which world ran when. With `--replicas R` that happens R times, each replica's
//! worlds built anew in another order; the records pool every replica's samples and say how
//! far the replicas' medians lay apart. That keeps
//! `policies × entities × row` bytes alive per mix (about 3 GB for ten policies of a million
//! 308-byte rows); the next mix's worlds are built after the last one's are dropped.
//!
//! The sweep is single-threaded: it measures, and runs nothing in parallel.

use ecs_core::{Entity, World};

use crate::args::SweepArgs;
use crate::components::{Cold, Hot, Pad, Pad16};
use crate::error::LabError;
use crate::measure::{Baseline, RunShape, WorldBench};
use crate::mix::Mix;
use crate::record::Record;
use crate::timer::Timer;

/// Spawns `n` rows of `(Hot<0, L>, Hot<1, L>, C)`: hot values `[i; L]` and `[1; L]`.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_lab::{populate, Hot, Pad};
/// let mut world = World::new();
/// let ids = populate::<3, Pad<276>>(&mut world, 10);
/// assert_eq!(world.get::<Hot<0, 3>>(ids[4]), Ok(&Hot([4.0; 3])));
/// assert_eq!(world.memory_report().archetypes[0].components.len(), 3);
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

/// Every policy's world of `mix`, measured round-robin, replica after replica; the `Vec`
/// baseline is built once.
fn sweep_mix<const L: usize, C: Cold>(
    mix: &Mix,
    args: &SweepArgs,
    sink: &mut dyn FnMut(Record),
) -> Result<(), LabError> {
    debug_assert_eq!(size_of::<C>(), mix.cold_bytes);
    let mut timer = Timer::new(args.passes);
    let mut base = Baseline::<L>::new(args.entities, mix.row_bytes());
    let mut pooled: Vec<Option<WorldBench<L>>> = (0..args.policies.len()).map(|_| None).collect();
    let mut order = Shuffle::new(args.seed);
    for _ in 0..args.replicas {
        // Built in a shuffled order, so no policy always gets the first (or last) blocks.
        let mut built: Vec<Option<WorldBench<L>>> =
            (0..args.policies.len()).map(|_| None).collect();
        for p in order.permutation(args.policies.len()) {
            let policy = args.policies[p];
            let mut world = World::with_chunk_policy(policy)?;
            let ids = populate::<L, C>(&mut world, args.entities);
            built[p] = Some(WorldBench::<L>::new(world, &ids, policy, args.moves));
        }
        let mut worlds: Vec<WorldBench<L>> = built.into_iter().flatten().collect();
        let moves = worlds.first().map_or(0, WorldBench::moves);
        for rep in 0..=args.reps {
            // The baseline once per round, before the worlds in odd rounds and after them in
            // even ones.
            if rep % 2 == 1 {
                base.rep(rep, moves, args.best_of, &mut timer);
            }
            for bench in &mut worlds {
                bench.rep(rep, args.best_of, &mut timer);
            }
            if rep % 2 == 0 {
                base.rep(rep, moves, args.best_of, &mut timer);
            }
        }
        for (slot, bench) in pooled.iter_mut().zip(worlds) {
            match slot {
                Some(first) => first.absorb(bench),
                None => *slot = Some(bench),
            }
        }
    }
    let run = RunShape {
        reps: args.reps,
        best_of: args.best_of,
        passes: args.passes,
        replicas: args.replicas,
    };
    for bench in pooled.into_iter().flatten() {
        for record in bench.records(mix, &base, &run) {
            sink(record);
        }
    }
    Ok(())
}

/// Permutations from a seeded xorshift: the same seed gives the same build orders, so a
/// sweep can be repeated exactly, and a different seed moves every world's placement.
pub(crate) struct Shuffle(u64);

impl Shuffle {
    pub(crate) fn new(seed: u64) -> Self {
        // xorshift has one fixed point, zero; any other seed is as good as the next.
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A permutation of `0..n` (Fisher-Yates).
    pub(crate) fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::Shuffle;

    #[test]
    fn shuffles_are_permutations_repeatable_by_seed() {
        let mut a = Shuffle::new(7);
        let mut b = Shuffle::new(7);
        let orders: Vec<Vec<usize>> = (0..20).map(|_| a.permutation(10)).collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..10).collect::<Vec<_>>());
            assert_eq!(order, &b.permutation(10));
        }
        // Not one order every time.
        assert!(orders.iter().any(|o| o != &orders[0]));
    }
}
