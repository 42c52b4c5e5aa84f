//! `Commands` systems that spawn side by side (no ordering between them) still give the same
//! entity ids on any number of threads and in any thread timing: each reserves in an id lane
//! of its own, opened in plan order before the segment.
//!
//! Timing is shaken on purpose: every system spins a pseudo-random while before it spawns, with
//! a different seed per run, so on a pool the systems reach their reservations in a different
//! order each frame and each run. With reservations through one shared cursor this test fails.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ecs_core::{Entity, World};
use ecs_query::{QueryExt, RefRO};
use ecs_sched::{Commands, ParCommands, Query, Schedule};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Born {
    system: u32,
    frame: u32,
    k: u32,
}

/// The seed of the current run's spin delays (a different one per run).
static SEED: AtomicU64 = AtomicU64::new(0);

fn spin(system: u32, frame: u32) {
    let mut x = SEED.load(Ordering::Relaxed) ^ ((system as u64) << 32 | frame as u64);
    x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    // Under Miri, which switches threads at random points anyway, a short spin is enough.
    let most = if cfg!(miri) { 50 } else { 20_000 };
    for _ in 0..(x % most) {
        std::hint::spin_loop();
    }
}

const SPAWNERS: u32 = 6;

fn schedule(threads: usize) -> Schedule {
    let mut schedule = Schedule::with_threads(threads);
    schedule.set_inline_threshold(Duration::ZERO);
    for system in 0..SPAWNERS {
        let mut frame = 0u32;
        // Spawns a varying number each frame (more than last time on some frames, so lanes
        // overflow past their forecast), and despawns its own entities three frames old (so
        // the free list is reused through the pools).
        schedule
            .add_system(
                move |q: Query<(Entity, RefRO<Born>)>, mut commands: Commands| {
                    frame += 1;
                    spin(system, frame);
                    for (e, born) in q.iter() {
                        if born.system == system && born.frame + 3 == frame {
                            commands.despawn(e);
                        }
                    }
                    for k in 0..(frame * (system + 1)) % 7 {
                        commands.spawn((Born { system, frame, k },));
                    }
                },
            )
            .named(format!("spawner_{system}"));
    }
    // A `&World` system reserving through the world's cursor, beside the lanes.
    let mut frame = 0u32;
    schedule
        .add_system(move |world: &World, mut commands: Commands| {
            frame += 1;
            spin(SPAWNERS, frame);
            let e = world.reserve_entity();
            let born = Born {
                system: SPAWNERS,
                frame,
                k: 0,
            };
            commands.insert(e, (born,));
        })
        .named("world_reserver");
    // A parallel loop recording spawns (ids chosen when applied, in row order).
    let mut frame = 0u32;
    schedule
        .add_system(move |mut q: Query<RefRO<Born>>, mut commands: Commands| {
            frame += 1;
            let now = frame;
            q.par_for_each_commands(&mut commands, |cmds: &mut ParCommands, born| {
                if born.k == 1 && born.frame + 1 == now {
                    let system = SPAWNERS + 1;
                    cmds.spawn((Born {
                        system,
                        frame: now,
                        k: born.system,
                    },));
                }
            });
        })
        .named("hatchery");
    schedule
}

fn run(threads: usize, seed: u64) -> Vec<(u64, Born)> {
    SEED.store(seed, Ordering::Relaxed);
    let mut world = World::new();
    let mut schedule = schedule(threads);
    // Under Miri: fewer frames (the free list is still reused from frame 4 on).
    for _ in 0..if cfg!(miri) { 6 } else { 40 } {
        schedule.run(&mut world).unwrap();
        world.check_invariants();
    }
    let mut rows: Vec<(u64, Born)> = world
        .query::<(Entity, RefRO<Born>)>()
        .iter()
        .map(|(e, b)| (e.to_bits(), *b))
        .collect();
    rows.sort();
    rows
}

#[test]
fn spawning_systems_are_not_ordered_against_each_other() {
    let mut schedule = schedule(2);
    let dot = schedule.to_dot();
    let edges: Vec<&str> = dot.lines().filter(|l| l.contains("->")).collect();
    // The spawners only read `Born` and record commands: nothing orders them.
    assert!(
        edges.iter().all(|l| !l.contains("Commands")),
        "edges: {edges:#?}"
    );
    assert!(edges.is_empty(), "edges: {edges:#?}");
}

#[test]
fn spawned_ids_are_the_same_on_any_thread_count_and_timing() {
    let reference = run(1, 1);
    assert!(reference.len() > 10, "the run spawns: {}", reference.len());
    assert!(reference.iter().any(|(_, b)| b.system == SPAWNERS));
    assert!(reference.iter().any(|(_, b)| b.system == SPAWNERS + 1));
    let (thread_counts, seeds): (&[usize], _) = if cfg!(miri) {
        (&[2], 2..3)
    } else {
        (&[2, 4], 2..5)
    };
    for &threads in thread_counts {
        for seed in seeds.clone() {
            assert!(
                run(threads, seed) == reference,
                "ids differ on {threads} threads, timing seed {seed}"
            );
        }
    }
}
