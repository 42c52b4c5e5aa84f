//! Command buffers decoded from bytes, applied through a schedule.
//!
//! A single-threaded schedule has two command-recording systems, optionally with a sync point
//! between them. Each round, every system records the commands decoded for it (spawn,
//! despawn, insert, remove, clear, aimed at live, stale or just-spawned entities); after the
//! run, the model replays them in the order the schedule applies them and predicts which are
//! skipped. `skipped_commands`, `check_invariants`, every handle's components and the live
//! `Counted` count must match.
//!
//! Input: a byte for the chunk size, a byte for the shape (sync point or not, initial
//! population), then rounds of commands.

#![no_main]

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ecs_core::{Entity, World};
use ecs_fuzz::{
    bundle_kinds, with_bundle, world, BundleFn, FuzzBundle, Input, Model, COUNTED_LIVE, KINDS,
};
use ecs_sched::{Commands, Schedule};
use libfuzzer_sys::fuzz_target;

const MAX_ROUNDS: usize = 8;
const MAX_COMMANDS: u8 = 24;

/// Where a command is aimed.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// Resolved against the model before the run: live, stale or never issued.
    Entity(Entity),
    /// The n-th (modulo) entity this system spawned earlier in the same buffer.
    Spawned(usize),
}

#[derive(Clone, Copy, Debug)]
enum Cmd {
    Spawn {
        bundle: usize,
        v: u32,
    },
    Despawn(Target),
    Insert {
        target: Target,
        bundle: usize,
        v: u32,
    },
    Remove {
        target: Target,
        bundle: usize,
    },
    Clear,
}

/// A system's commands for one run, and the entity each was recorded against.
#[derive(Default)]
struct Slot {
    cmds: Vec<Cmd>,
    log: Vec<Entity>,
}

struct SpawnCmd<'a, 'w, 's>(&'a mut Commands<'w, 's>, u32);
impl BundleFn for SpawnCmd<'_, '_, '_> {
    type Out = Entity;
    fn call<B: FuzzBundle>(self) -> Entity {
        self.0.spawn(B::make(self.1))
    }
}

struct InsertCmd<'a, 'w, 's>(&'a mut Commands<'w, 's>, Entity, u32);
impl BundleFn for InsertCmd<'_, '_, '_> {
    type Out = ();
    fn call<B: FuzzBundle>(self) {
        self.0.insert(self.1, B::make(self.2));
    }
}

struct RemoveCmd<'a, 'w, 's>(&'a mut Commands<'w, 's>, Entity);
impl BundleFn for RemoveCmd<'_, '_, '_> {
    type Out = ();
    fn call<B: FuzzBundle>(self) {
        self.0.remove::<B>(self.1);
    }
}

fn record(commands: &mut Commands<'_, '_>, slot: &mut Slot) {
    let never = Entity::from_bits(u64::MAX).expect("non-zero generation");
    let mut spawned: Vec<Entity> = Vec::new();
    let mut log = Vec::new();
    for cmd in &slot.cmds {
        let resolve = |t: Target| match t {
            Target::Entity(e) => e,
            Target::Spawned(n) if !spawned.is_empty() => spawned[n % spawned.len()],
            Target::Spawned(_) => never,
        };
        let e = match *cmd {
            Cmd::Spawn { bundle, v } => {
                let e = with_bundle(bundle, SpawnCmd(commands, v));
                spawned.push(e);
                e
            }
            Cmd::Despawn(t) => {
                let e = resolve(t);
                commands.despawn(e);
                e
            }
            Cmd::Insert { target, bundle, v } => {
                let e = resolve(target);
                with_bundle(bundle, InsertCmd(commands, e, v));
                e
            }
            Cmd::Remove { target, bundle } => {
                let e = resolve(target);
                with_bundle(bundle, RemoveCmd(commands, e));
                e
            }
            Cmd::Clear => {
                commands.add(World::clear);
                never
            }
        };
        log.push(e);
    }
    slot.log = log;
}

fn decode(input: &mut Input<'_>, model: &Model) -> Vec<Cmd> {
    let n = input.u8() % MAX_COMMANDS;
    (0..n)
        .map(|_| {
            let op = input.u8();
            let target = if op & 0x80 != 0 {
                Target::Spawned(usize::from(input.u8()))
            } else {
                Target::Entity(model.pick(input.u8()))
            };
            match op % 9 {
                0..=1 => Cmd::Spawn {
                    bundle: usize::from(input.u8()),
                    v: input.u32(),
                },
                2..=3 => Cmd::Despawn(target),
                4..=5 => Cmd::Insert {
                    target,
                    bundle: usize::from(input.u8()),
                    v: input.u32(),
                },
                6..=7 => Cmd::Remove {
                    target,
                    bundle: usize::from(input.u8()),
                },
                _ => Cmd::Clear,
            }
        })
        .collect()
}

/// Replays one system's applied commands on the model; returns the skipped ones.
fn replay(model: &mut Model, cmds: &[Cmd], log: &[Entity], out: &mut Vec<(&'static str, Entity)>) {
    for (cmd, &e) in cmds.iter().zip(log) {
        match *cmd {
            Cmd::Spawn { bundle, v } | Cmd::Insert { bundle, v, .. } => {
                match model.live.get_mut(&e) {
                    Some(row) => Model::merge(row, bundle, v),
                    None if matches!(cmd, Cmd::Spawn { .. }) => out.push(("spawn", e)),
                    None => out.push(("insert", e)),
                }
            }
            Cmd::Despawn(_) => {
                if model.live.remove(&e).is_none() {
                    out.push(("despawn", e));
                }
            }
            Cmd::Remove { bundle, .. } => match model.remove_error(e, bundle) {
                None => {
                    let row = model.live.get_mut(&e).expect("live");
                    for k in bundle_kinds(bundle) {
                        row[k] = None;
                    }
                }
                Some(_) => out.push(("remove", e)),
            },
            Cmd::Clear => model.live.clear(),
        }
    }
}

/// Reserved ids become live, empty entities when the commands are applied.
fn reserve(model: &mut Model, cmds: &[Cmd], log: &[Entity]) {
    for (cmd, &e) in cmds.iter().zip(log) {
        if let Cmd::Spawn { .. } = cmd {
            model.born(e, [None; KINDS]);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut world = world(input.u8());
    let shape = input.u8();
    let sync_point = shape & 1 != 0;
    let mut model = Model::default();
    for i in 0..u32::from(shape >> 1) % 32 {
        let b = usize::from(input.u8());
        let e = with_bundle(b, Spawn(&mut world, i));
        model.born(e, Model::row(b, i));
    }
    let slots = [
        Arc::new(Mutex::new(Slot::default())),
        Arc::new(Mutex::new(Slot::default())),
    ];
    let mut schedule = Schedule::single_threaded();
    for (i, slot) in slots.iter().enumerate() {
        let slot = slot.clone();
        schedule
            .add_system(move |mut commands: Commands| {
                record(&mut commands, &mut slot.lock().expect("not poisoned"));
            })
            .named(format!("system{i}"));
        if i == 0 && sync_point {
            schedule.add_sync_point();
        }
    }
    for _ in 0..MAX_ROUNDS {
        if input.is_empty() {
            break;
        }
        let cmds = [decode(&mut input, &model), decode(&mut input, &model)];
        for (slot, cmds) in slots.iter().zip(&cmds) {
            slot.lock().expect("not poisoned").cmds = cmds.clone();
        }
        schedule.run(&mut world).expect("the schedule builds");
        let logs: Vec<Vec<Entity>> = slots
            .iter()
            .map(|s| std::mem::take(&mut s.lock().expect("not poisoned").log))
            .collect();
        let mut skipped = Vec::new();
        if sync_point {
            // System 0's commands apply at the sync point, before system 1 runs.
            reserve(&mut model, &cmds[0], &logs[0]);
            replay(&mut model, &cmds[0], &logs[0], &mut skipped);
            reserve(&mut model, &cmds[1], &logs[1]);
            replay(&mut model, &cmds[1], &logs[1], &mut skipped);
        } else {
            // The first applied command flushes every reservation of the run.
            reserve(&mut model, &cmds[0], &logs[0]);
            reserve(&mut model, &cmds[1], &logs[1]);
            replay(&mut model, &cmds[0], &logs[0], &mut skipped);
            replay(&mut model, &cmds[1], &logs[1], &mut skipped);
        }
        let got: Vec<(&str, Entity)> = schedule
            .skipped_commands()
            .iter()
            .map(|c| (c.command, c.entity))
            .collect();
        assert_eq!(got, skipped, "skipped commands");
        model.check(&world);
    }
    drop(schedule);
    drop(world);
    assert_eq!(
        COUNTED_LIVE.load(Ordering::Relaxed),
        0,
        "`Counted` values leaked"
    );
});

struct Spawn<'a>(&'a mut World, u32);
impl BundleFn for Spawn<'_> {
    type Out = Entity;
    fn call<B: FuzzBundle>(self) -> Entity {
        self.0.spawn(B::make(self.1))
    }
}
