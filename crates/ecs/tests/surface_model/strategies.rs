//! The surface model's proptest strategies: random handles (live, stale, forged), kinds,
//! bundles, command lists and operations, and a case (a world kind and an op sequence).

use ecs_test_support::shapes::Path;
use ecs_test_support::{strategy, Pick};
use proptest::prelude::*;

use super::{shapes, Cmd, Op, Target, WorldKind, BUNDLES, SURFACE_KINDS};

const MAX_OPS: usize = if cfg!(miri) { 16 } else { 80 };
const MAX_BATCH: u32 = if cfg!(miri) { 6 } else { 24 };
const MAX_CMDS: usize = if cfg!(miri) { 4 } else { 10 };

fn pick() -> impl Strategy<Value = Pick> {
    strategy::pick_or_forge(6, 3, 1)
}

fn kind() -> impl Strategy<Value = usize> {
    proptest::sample::select(&SURFACE_KINDS[..])
}

fn bundle() -> impl Strategy<Value = usize> {
    0..BUNDLES
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        3 => pick().prop_map(Target::Pick),
        1 => any::<usize>().prop_map(Target::Spawned),
    ]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        3 => (bundle(), any::<u32>()).prop_map(|(bundle, seed)| Cmd::Spawn { bundle, seed }),
        3 => target().prop_map(Cmd::Despawn),
        3 => (target(), bundle(), any::<u32>())
            .prop_map(|(target, bundle, seed)| Cmd::Insert { target, bundle, seed }),
        3 => (target(), bundle()).prop_map(|(target, bundle)| Cmd::Remove { target, bundle }),
        1 => Just(Cmd::Clear),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let path = prop_oneof![
        Just(Path::Iter),
        Just(Path::ForEach),
        Just(Path::Chunks),
        Just(Path::Get),
        Just(Path::Count),
    ];
    prop_oneof![
        5 => (bundle(), any::<u32>()).prop_map(|(bundle, seed)| Op::Spawn { bundle, seed }),
        2 => (bundle(), 0..=MAX_BATCH, any::<u32>())
            .prop_map(|(bundle, count, seed)| Op::SpawnBatch { bundle, count, seed }),
        3 => pick().prop_map(Op::Despawn),
        4 => (pick(), bundle(), any::<u32>())
            .prop_map(|(target, bundle, seed)| Op::Insert { target, bundle, seed }),
        4 => (pick(), bundle()).prop_map(|(target, bundle)| Op::Remove { target, bundle }),
        2 => (pick(), kind()).prop_map(|(target, kind)| Op::Get { target, kind }),
        2 => (pick(), kind(), any::<u32>())
            .prop_map(|(target, kind, seed)| Op::GetMut { target, kind, seed }),
        4 => (0..shapes::SHAPES, path, any::<bool>(), pick(), any::<u32>()).prop_map(
            |(shape, path, cached, target, seed)| Op::Query { shape, path, cached, target, seed }
        ),
        3 => proptest::collection::vec(cmd(), 0..=MAX_CMDS).prop_map(Op::Commands),
        1 => Just(Op::Clear),
    ]
}

pub(super) fn case() -> impl Strategy<Value = (WorldKind, Vec<Op>)> {
    (
        prop_oneof![Just(WorldKind::Default), Just(WorldKind::Tiny)],
        proptest::collection::vec(op(), 1..MAX_OPS),
    )
}
