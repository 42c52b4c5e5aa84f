//! The sweep itself: every (mix, policy) world, each measure beside the same work on plain
//! `Vec`s timed once per repetition for all of them (see `measure.rs` for what one repetition
//! does).
//!
//! All worlds of one mix are built first and then measured round-robin, repetition by
//! repetition, so a load that drifts while the sweep runs reaches every policy alike, and the
//! ratios between policies are not an artefact of which world ran when. That keeps
//! `policies × entities × row` bytes alive per mix (about 3 GB for ten policies of a million
//! 308-byte rows); the next mix's worlds are built after the last one's are dropped.
//!
//! The sweep is single-threaded: it measures, and runs nothing in parallel.

use ecs_core::{Entity, World};

use crate::args::SweepArgs;
use crate::components::{Cold, Hot, Pad, Pad16};
use crate::error::LabError;
use crate::measure::{Baseline, WorldBench};
use crate::mix::Mix;
use crate::record::Record;

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

/// Every policy's world of `mix`, measured round-robin; the `Vec` baseline is built once.
fn sweep_mix<const L: usize, C: Cold>(
    mix: &Mix,
    args: &SweepArgs,
    sink: &mut dyn FnMut(Record),
) -> Result<(), LabError> {
    debug_assert_eq!(size_of::<C>(), mix.cold_bytes);
    let mut base = Baseline::<L>::new(args.entities, mix.row_bytes());
    let mut worlds = Vec::with_capacity(args.policies.len());
    for &policy in &args.policies {
        let mut world = World::with_chunk_policy(policy)?;
        let ids = populate::<L, C>(&mut world, args.entities);
        worlds.push(WorldBench::<L>::new(world, &ids, policy, args.moves));
    }
    let moves = worlds.first().map_or(0, WorldBench::moves);
    for rep in 0..=args.reps {
        // The baseline once per round, before the worlds in odd rounds and after them in even.
        if rep % 2 == 1 {
            base.rep(rep, moves, args.best_of);
        }
        for bench in &mut worlds {
            bench.rep(rep, args.best_of);
        }
        if rep % 2 == 0 {
            base.rep(rep, moves, args.best_of);
        }
    }
    for bench in worlds {
        for record in bench.records(mix, &base, args.best_of) {
            sink(record);
        }
    }
    Ok(())
}
