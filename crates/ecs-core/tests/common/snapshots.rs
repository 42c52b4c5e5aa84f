//! The worlds, component types and random churn the snapshot tests (`snapshot_restore.rs`,
//! `snapshot_bytes.rs`, `state_hash.rs`) share.
//!
//! Small chunks so few entities cross many chunk boundaries, and fewer rounds under
//! `cfg(miri)`.

use std::collections::BTreeMap;

use bytemuck::{Pod, Zeroable};
use ecs_core::{Entity, World};

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Pos(pub [f32; 3]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Vel(pub [f32; 3]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Hp(pub u16);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Tag;

#[derive(Clone, Debug, PartialEq)]
pub struct Name(pub String);

#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Frame(pub u64);

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log(pub Vec<String>);

/// Rounds of the tests' random loops: fewer under Miri, which interprets every instruction.
pub const ROUNDS: usize = if cfg!(miri) { 3 } else { 40 };

pub fn registered(chunk: usize) -> World {
    let mut world = World::with_test_chunk_size(chunk);
    register(&mut world);
    world
}

pub fn register(world: &mut World) {
    register_pods(world);
    world.register_clone::<Name>();
    world.register_snapshot_resource::<Log>();
}

/// Only pod types: snapshots of such a world can be written as bytes.
pub fn register_pods(world: &mut World) {
    world.register_pod::<Pos>();
    world.register_pod::<Vel>();
    world.register_pod::<Hp>();
    world.register_pod::<Tag>();
    world.register_pod_resource::<Frame>();
}

pub fn pod_world(chunk: usize) -> World {
    let mut world = World::with_test_chunk_size(chunk);
    register_pods(&mut world);
    world
}

/// A small deterministic generator.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn f(&mut self) -> f32 {
        (self.next() >> 40) as f32 / 1024.0
    }
}

/// One random structural or value change.
pub fn churn(world: &mut World, rng: &mut Rng, live: &mut Vec<Entity>) {
    let pos = |rng: &mut Rng| Pos([rng.f(), rng.f(), rng.f()]);
    match rng.below(9) {
        0 | 1 => live.push(world.spawn((pos(rng), Vel([1.0, 0.0, rng.f()])))),
        2 => live.push(world.spawn((pos(rng), Hp(rng.below(100) as u16), Tag))),
        3 => live.push(world.spawn((Name(format!("n{}", rng.next() % 1000)), Hp(7)))),
        4 if !live.is_empty() => {
            let e = live.swap_remove(rng.below(live.len()));
            world.despawn(e).unwrap();
        }
        5 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            world.insert_one(e, Hp(rng.below(50) as u16)).unwrap();
        }
        6 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            let _ = world.remove::<(Tag,)>(e);
        }
        7 if !live.is_empty() => {
            let e = live[rng.below(live.len())];
            if let Ok(p) = world.get_mut::<Pos>(e) {
                p.0[1] += 1.0;
            }
        }
        _ => live.push(world.spawn(())),
    }
}

/// Everything observable about a world's entities, keyed by id.
pub type Dump = BTreeMap<Entity, (Option<Pos>, Option<Vel>, Option<Hp>, bool, Option<Name>)>;

pub fn dump(world: &World, snap_entities: impl Iterator<Item = Entity>) -> Dump {
    snap_entities
        .map(|e| {
            (
                e,
                (
                    world.get::<Pos>(e).ok().copied(),
                    world.get::<Vel>(e).ok().copied(),
                    world.get::<Hp>(e).ok().copied(),
                    world.has::<Tag>(e),
                    world.get::<Name>(e).ok().cloned(),
                ),
            )
        })
        .collect()
}

pub fn all_entities(world: &World) -> Vec<Entity> {
    world
        .archetypes()
        .iter()
        .flat_map(|a| a.chunks().iter().flat_map(|c| c.entities().iter().copied()))
        .collect()
}

pub fn world_dump(world: &World) -> Dump {
    dump(world, all_entities(world).into_iter())
}

/// A world where `Hp` is enableable (and pod), with some rows switched off.
pub fn toggled_world(chunk: usize) -> (World, Vec<Entity>) {
    let mut world = World::with_test_chunk_size(chunk);
    world.register_enableable::<Hp>();
    world.register_pod::<Hp>();
    world.register_pod::<Pos>();
    let ids: Vec<Entity> = (0..40u16)
        .map(|i| world.spawn((Hp(i), Pos([f32::from(i); 3]))))
        .collect();
    for (i, &e) in ids.iter().enumerate() {
        if i % 3 == 1 {
            world.set_enabled::<Hp>(e, false).unwrap();
        }
    }
    (world, ids)
}
