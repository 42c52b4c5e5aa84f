//! A kept `QueryState` walks a flat list of chunks that it rebuilds only when the world's chunk
//! set version moves. These tests change the chunk set in every way the world can (chunks
//! added and released, archetypes created, `clear`, compaction, snapshot restore, row ticks
//! switched on) between runs of kept states, and check after each step that `for_each` and
//! `for_each_chunk` visit exactly the entities a model says, each once. In debug builds every
//! run that uses a kept list also rebuilds it and asserts the two agree, so a change that
//! forgot to bump the version fails here.

use std::collections::BTreeMap;

use ecs_core::{Entity, World};
use ecs_query::{Changed, QueryExt, QueryRun, QueryState, RefRO, RefRW, With, Without};

#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct B(u32);

/// Steps of the random walk; few under Miri.
const STEPS: usize = if cfg!(miri) { 60 } else { 1500 };

/// A small deterministic generator (no dependency, same sequence everywhere).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// What the world should hold: each entity's `A`, and whether it has `B`.
type Model = BTreeMap<Entity, (u32, bool)>;

/// Runs the kept states over `world` and compares what they visit with `model`. The writer
/// adds 1 to every `A` (and so does the model); the `B` readers see the right subsets.
fn check(
    world: &mut World,
    model: &mut Model,
    writer: &mut QueryState<(Entity, RefRW<A>)>,
    with_b: &mut QueryState<(Entity, RefRO<A>), With<B>>,
    without_b: &mut QueryState<Entity, (With<A>, Without<B>)>,
) {
    let mut seen = Vec::new();
    writer.for_each(world, |(e, a)| {
        a.0 += 1;
        seen.push(e);
    });
    for (a, _) in model.values_mut() {
        *a += 1;
    }
    seen.sort();
    assert_eq!(seen, model.keys().copied().collect::<Vec<_>>());

    let mut with: Vec<(Entity, u32)> = Vec::new();
    with_b.for_each(world, |(e, a)| with.push((e, a.0)));
    with.sort();
    let want: Vec<_> = model
        .iter()
        .filter(|(_, v)| v.1)
        .map(|(&e, v)| (e, v.0))
        .collect();
    assert_eq!(with, want);

    let mut without = Vec::new();
    without_b.for_each_chunk(world, |view| without.extend_from_slice(view.entities()));
    without.sort();
    let want: Vec<_> = model
        .iter()
        .filter(|(_, v)| !v.1)
        .map(|(&e, _)| e)
        .collect();
    assert_eq!(without, want);
}

#[test]
fn kept_states_follow_every_change_to_the_chunk_set() {
    let mut world = World::with_test_chunk_size(256);
    world.register_pod::<A>();
    world.register_pod::<B>();
    world.register_pod::<u64>();
    let mut writer = QueryState::<(Entity, RefRW<A>)>::new(&mut world);
    let mut with_b = QueryState::<(Entity, RefRO<A>), With<B>>::new(&mut world);
    let mut without_b = QueryState::<Entity, (With<A>, Without<B>)>::new(&mut world);
    let mut model = Model::new();
    let mut saved = None;
    let mut late_reader = None;
    let mut rng = Lcg(7);
    for step in 0..STEPS {
        let pick = |rng: &mut Lcg, model: &Model| {
            (!model.is_empty()).then(|| *model.keys().nth(rng.below(model.len())).unwrap())
        };
        match rng.below(20) {
            0..=5 => {
                let e = world.spawn((A(step as u32),));
                model.insert(e, (step as u32, false));
            }
            6 => {
                let n = rng.below(40);
                let spawned: Vec<_> = world
                    .spawn_batch((0..n).map(|i| (A(i as u32), B(0))))
                    .collect();
                for (i, e) in spawned.into_iter().enumerate() {
                    model.insert(e, (i as u32, true));
                }
            }
            7..=10 => {
                if let Some(e) = pick(&mut rng, &model) {
                    world.despawn(e).unwrap();
                    model.remove(&e);
                }
            }
            11..=13 => {
                if let Some(e) = pick(&mut rng, &model) {
                    world.insert(e, (B(1),)).unwrap();
                    model.get_mut(&e).unwrap().1 = true;
                }
            }
            14..=15 => {
                if let Some(e) = pick(&mut rng, &model) {
                    if world.remove::<(B,)>(e).is_ok() {
                        model.get_mut(&e).unwrap().1 = false;
                    }
                }
            }
            16 => drop(world.compact()),
            17 => match saved.take() {
                None => saved = Some((world.snapshot().unwrap(), model.clone())),
                Some((snap, at)) => {
                    world.restore(&snap).unwrap();
                    model = at;
                }
            },
            18 if late_reader.is_none() && step > STEPS / 3 => {
                // A `Changed` reader switches row ticks on in every archetype holding `A`
                // (late, so that there are many).
                late_reader = Some(QueryState::<RefRO<A>, Changed<A>>::new(&mut world));
            }
            18 => {
                if let Some(reader) = &mut late_reader {
                    // The writer wrote every row since this reader's last run.
                    assert_eq!(reader.iter(&world).count(), model.len());
                }
            }
            _ => {
                if rng.below(10) == 0 {
                    world.clear();
                    model.clear();
                } else {
                    // A new archetype, holding `A` or not.
                    world.spawn((B(2), step as u64));
                    let e = world.spawn((A(0), step as u64));
                    model.insert(e, (0, false));
                }
            }
        }
        check(
            &mut world,
            &mut model,
            &mut writer,
            &mut with_b,
            &mut without_b,
        );
        // The one-shot cache keeps a chunk list too.
        assert_eq!(world.query::<RefRO<A>>().iter().count(), model.len());
        let mut n = 0;
        world.query::<RefRO<A>>().for_each(|_| n += 1);
        assert_eq!(n, model.len());
    }
    world.check_invariants();
}

#[test]
#[expect(unsafe_code, reason = "builds a run by hand, as a scheduler does")]
fn a_run_started_before_the_chunk_set_changed_still_visits_every_row() {
    let mut world = World::with_test_chunk_size(256);
    let mut state = QueryState::<RefRW<A>>::new(&mut world);
    world.spawn_batch((0..10).map(|i| (A(i),))).for_each(drop);
    state.for_each(&mut world, |a| a.0 += 100); // asks for the list
    let ticks = state.start_run(&world); // builds it
                                         // New chunks and a new archetype after the list was built, before the run.
    world
        .spawn_batch((0..50).map(|i| (A(i), B(i))))
        .for_each(drop);
    world.spawn_batch((10..60).map(|i| (A(i),))).for_each(drop);
    state.update_archetypes(&world);
    let mut sum = 0;
    // SAFETY: `world` is only read by this run, and the run ends before it is borrowed again.
    unsafe { QueryRun::<RefRW<A>>::new(&state, &world, ticks) }.for_each(|a| sum += a.0);
    let want: u32 =
        (0..10).map(|i| i + 100).sum::<u32>() + (0..50).sum::<u32>() + (10..60).sum::<u32>();
    assert_eq!(sum, want);
}

/// 64-byte rows, so that an archetype's touched bytes cross the L2 cache at a row count a test
/// can reach.
#[derive(Clone, Copy)]
struct Wide([u8; 64]);

#[test]
fn rows_crossing_the_prefetch_size_inside_a_chunk_keep_the_list_current() {
    if cfg!(miri) {
        return; // a megabyte of rows; the logic is the same at any size
    }
    // Loops prefetch the next chunk of an archetype larger than the L2 cache. A kept list
    // records that per chunk; it must not depend on the row count, which changes without a
    // chunk set version change (a debug build compares each kept list with a fresh one).
    let l2 = ecs_core::CacheSizes::detect().l2.unwrap_or(1 << 20);
    let threshold = l2 / size_of::<Wide>();
    let mut world = World::with_chunk_size(1 << 20).unwrap();
    let per_chunk = {
        let e = world.spawn((Wide([0; 64]),));
        let arch = world.location(e).unwrap().archetype.index();
        let capacity = world.archetypes()[arch].layout().capacity();
        world.despawn(e).unwrap();
        capacity
    };
    let (before, after) = (threshold - 100, threshold + 100);
    assert_eq!(
        before / per_chunk,
        after / per_chunk,
        "both counts in one chunk"
    );
    world
        .spawn_batch((0..before).map(|_| (Wide([1; 64]),)))
        .for_each(drop);
    let mut state = QueryState::<RefRW<Wide>>::new(&mut world);
    state.for_each(&mut world, |w| w.0[0] += 1); // asks for the list
    state.for_each(&mut world, |w| w.0[0] += 1); // builds and uses it
    let version = world.chunk_set_version();
    world
        .spawn_batch((before..after).map(|_| (Wide([1; 64]),)))
        .for_each(drop);
    assert_eq!(world.chunk_set_version(), version, "no chunk added");
    let mut n = 0;
    state.for_each(&mut world, |w| {
        w.0[0] += 1;
        n += 1;
    });
    assert_eq!(n, after);
}
