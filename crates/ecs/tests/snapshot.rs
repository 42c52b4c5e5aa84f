//! Snapshots through the whole engine: rollback under the parallel schedule, thread-count
//! independence of the state hash, and snapshot → bytes → snapshot → restore against every
//! query shape.

use std::collections::BTreeMap;

use bytemuck::{Pod, Zeroable};
use ecs::prelude::*;
use proptest::prelude::*;

// ----- a swarm-like simulation whose whole state is snapshotable ----------------------------

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Position([f32; 2]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Velocity([f32; 2]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Lifetime(f32);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Leader;

/// The attractor's angle and position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Attractor([f32; 3]);

/// The respawn generator's state: a resource, so snapshots capture it (a `Local` would not).
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (self.next() >> 40) as f32 / (1u64 << 24) as f32 * (hi - lo)
    }

    fn particle(&mut self) -> (Position, Velocity, Lifetime) {
        (
            Position([self.range(-100.0, 100.0), self.range(-100.0, 100.0)]),
            Velocity([self.range(-5.0, 5.0), self.range(-5.0, 5.0)]),
            Lifetime(self.range(0.05, 0.6)),
        )
    }
}

/// What `stats` measured: count and sums, as bits (pod, compared exactly).
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Stats([u64; 3]);

const DT: f32 = 1.0 / 60.0;

fn orbit(mut a: ResMut<Attractor>) {
    a.0[0] += 0.5 * DT;
    let (s, c) = a.0[0].sin_cos();
    a.0[1] = 50.0 * c;
    a.0[2] = 50.0 * s;
}

#[expect(
    clippy::type_complexity,
    reason = "a system's parameter types are its access declaration"
)]
fn steering(
    mut q: Query<(RefRO<Position>, RefRW<Velocity>, Option<RefRO<Leader>>)>,
    a: Res<Attractor>,
) {
    let target = [a.0[1], a.0[2]];
    q.par_for_each(|(p, v, leader)| {
        let strength = if leader.is_some() { 30.0 } else { 10.0 };
        let (dx, dy) = (target[0] - p.0[0], target[1] - p.0[1]);
        let inv = strength / (dx * dx + dy * dy).sqrt().max(1.0);
        v.0[0] += dx * inv * DT;
        v.0[1] += dy * inv * DT;
    });
}

fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>) {
    q.for_each_chunk(|mut chunk| {
        // The pod views: both columns as flat `f32`s.
        let vel: Vec<f32> = chunk.column_as::<Velocity, f32>().to_vec();
        for (p, v) in chunk.column_as_mut::<Position, f32>().iter_mut().zip(&vel) {
            *p += v * DT;
        }
    });
}

fn lifetime(
    mut q: Query<(Entity, RefRW<Lifetime>, Option<RefRO<Leader>>)>,
    mut rng: ResMut<Rng>,
    mut commands: Commands,
) {
    q.for_each(|(e, life, leader)| {
        life.0 -= DT;
        if life.0 <= 0.0 {
            commands.despawn(e);
            let (p, v, l) = rng.particle();
            if leader.is_some() {
                commands.spawn((p, v, l, Leader));
            } else {
                commands.spawn((p, v, l));
            }
        }
    });
}

fn stats(mut q: Query<(RefRO<Position>, RefRO<Velocity>)>, mut out: ResMut<Stats>) {
    let (mut n, mut sx, mut sv) = (0u64, 0f64, 0f64);
    q.for_each_chunk(|mut chunk| {
        let (pos, vel) = chunk.columns();
        n += pos.len() as u64;
        for (p, v) in pos.iter().zip(vel) {
            sx += f64::from(p.0[0]);
            sv += f64::from(v.0[1]);
        }
    });
    *out = Stats([n, sx.to_bits(), sv.to_bits()]);
}

fn swarm_schedule(threads: usize) -> Schedule {
    let mut schedule = Schedule::with_threads(threads);
    schedule.add_system(orbit);
    schedule.add_system(steering);
    schedule.add_system(movement);
    schedule.add_system(lifetime);
    schedule.add_system(stats);
    schedule
}

fn swarm_world(entities: usize) -> World {
    let mut world = World::new();
    world.register_pod::<Position>();
    world.register_pod::<Velocity>();
    world.register_pod::<Lifetime>();
    world.register_pod::<Leader>();
    world.register_pod_resource::<Attractor>();
    world.register_pod_resource::<Rng>();
    world.register_pod_resource::<Stats>();
    world.insert_resource(Attractor::default());
    world.insert_resource(Stats::default());
    let mut rng = Rng(42);
    let leaders = entities / 8;
    world.spawn_batch((0..entities - leaders).map(|_| rng.particle()));
    world.spawn_batch((0..leaders).map(|_| {
        let (p, v, l) = rng.particle();
        (p, v, l, Leader)
    }));
    world.insert_resource(rng);
    world
}

/// Every live entity id, sorted.
fn ids(world: &mut World) -> Vec<Entity> {
    let mut ids: Vec<Entity> = world.query::<Entity>().iter().collect();
    ids.sort_unstable();
    ids
}

struct Run {
    /// The state hash after every frame.
    hashes: Vec<u64>,
    ids_at_end: Vec<Entity>,
    stats_at_end: Stats,
    /// After rewinding to frame 50 and running to 100 again.
    replay_hashes: Vec<u64>,
    replay_ids: Vec<Entity>,
    replay_stats: Stats,
}

/// Runs 100 frames, snapshotting at frame 50; then restores frame 50 (through bytes) and runs
/// to 100 again with the same schedule (whose query states were built before the restore).
fn rollback_run(threads: usize) -> Run {
    let mut world = swarm_world(3000);
    let mut schedule = swarm_schedule(threads);
    let mut hashes = Vec::new();
    let mut at_50 = None;
    for frame in 0..100 {
        if frame == 50 {
            at_50 = Some(world.snapshot().unwrap().to_bytes().unwrap());
        }
        schedule.run(&mut world).unwrap();
        hashes.push(world.state_hash());
    }
    let ids_at_end = ids(&mut world);
    let stats_at_end = *world.resource::<Stats>();

    let snap = Snapshot::from_bytes(&at_50.unwrap()).unwrap();
    world.restore(&snap).unwrap();
    world.check_invariants();
    assert_eq!(world.state_hash(), snap.state_hash());
    let mut replay_hashes = hashes[..50].to_vec();
    for _ in 50..100 {
        schedule.run(&mut world).unwrap();
        replay_hashes.push(world.state_hash());
    }
    Run {
        hashes,
        ids_at_end,
        stats_at_end,
        replay_ids: ids(&mut world),
        replay_stats: *world.resource::<Stats>(),
        replay_hashes,
    }
}

#[test]
fn rollback_to_frame_50_replays_identically_on_1_and_4_threads() {
    let one = rollback_run(1);
    let four = rollback_run(4);
    for run in [&one, &four] {
        assert_eq!(run.replay_hashes, run.hashes, "replay diverged");
        assert_eq!(run.replay_ids, run.ids_at_end, "replay spawned other ids");
        assert_eq!(run.replay_stats, run.stats_at_end);
        // The run did respawn (so ids came off the free list during the replay).
        assert!(run.ids_at_end.iter().any(|e| e.generation() > 1));
    }
    // The state hash does not depend on the thread count.
    assert_eq!(one.hashes, four.hashes);
    assert_eq!(one.ids_at_end, four.ids_at_end);
}

#[test]
fn query_states_built_before_a_restore_stay_valid() {
    let mut world = swarm_world(500);
    let mut state = QueryState::<(Entity, RefRO<Position>), Without<Leader>>::new(&mut world);
    let before: Vec<(Entity, Position)> = state.iter(&world).map(|(e, p)| (e, *p)).collect();
    let snap = world.snapshot().unwrap();
    // New archetypes appear after the snapshot; the restore keeps them (empty).
    #[derive(Clone, Copy, Pod, Zeroable)]
    #[repr(C)]
    struct Extra(u32);
    world.register_pod::<Extra>();
    let first = before[0].0;
    world.insert_one(first, Extra(1)).unwrap();
    world.despawn(before[1].0).unwrap();
    let archetypes = world.archetypes().len();
    world.restore(&snap).unwrap();
    assert_eq!(world.archetypes().len(), archetypes, "no archetype removed");
    let after: Vec<(Entity, Position)> = state.iter(&world).map(|(e, p)| (e, *p)).collect();
    assert_eq!(after, before);
}

// ----- property: bytes round trip against every query shape --------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct A(u32);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct B([f64; 2]);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct C(u8);

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct T;

#[derive(Clone, Debug)]
enum Op {
    Spawn(u8, u32),
    Despawn(usize),
    Insert(usize, u8, u32),
    Remove(usize, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..16, any::<u32>()).prop_map(|(k, v)| Op::Spawn(k, v)),
        1 => any::<usize>().prop_map(Op::Despawn),
        2 => (any::<usize>(), 0u8..4, any::<u32>()).prop_map(|(i, k, v)| Op::Insert(i, k, v)),
        1 => (any::<usize>(), 0u8..4).prop_map(|(i, k)| Op::Remove(i, k)),
    ]
}

fn pod_world(chunk: usize, reverse: bool) -> World {
    let mut world = World::with_chunk_size(chunk).unwrap();
    if reverse {
        world.register_pod::<T>();
        world.register_pod::<C>();
        world.register_pod::<B>();
        world.register_pod::<A>();
    } else {
        world.register_pod::<A>();
        world.register_pod::<B>();
        world.register_pod::<C>();
        world.register_pod::<T>();
    }
    world
}

fn apply(world: &mut World, live: &mut Vec<Entity>, op: &Op) {
    let insert = |world: &mut World, e: Entity, kind: u8, v: u32| match kind {
        0 => world.insert_one(e, A(v)).unwrap(),
        1 => world.insert_one(e, B([f64::from(v), -1.5])).unwrap(),
        2 => world.insert_one(e, C(v as u8)).unwrap(),
        _ => world.insert_one(e, T).unwrap(),
    };
    match *op {
        Op::Spawn(kinds, v) => {
            let e = world.spawn(());
            for k in 0..4 {
                if kinds & (1 << k) != 0 {
                    insert(world, e, k, v.wrapping_add(u32::from(k)));
                }
            }
            live.push(e);
        }
        Op::Despawn(i) if !live.is_empty() => {
            let e = live.swap_remove(i % live.len());
            world.despawn(e).unwrap();
        }
        Op::Insert(i, k, v) if !live.is_empty() => insert(world, live[i % live.len()], k, v),
        Op::Remove(i, k) if !live.is_empty() => {
            let e = live[i % live.len()];
            let _ = match k {
                0 => world.remove::<(A,)>(e).map(drop),
                1 => world.remove::<(B,)>(e).map(drop),
                2 => world.remove::<(C,)>(e).map(drop),
                _ => world.remove::<(T,)>(e).map(drop),
            };
        }
        _ => {}
    }
}

/// The results of a family of query shapes, each sorted by entity.
fn observe(world: &mut World) -> BTreeMap<&'static str, Vec<String>> {
    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }
    let mut out = BTreeMap::new();
    out.insert(
        "entity",
        sorted(
            world
                .query::<Entity>()
                .iter()
                .map(|e| format!("{e:?}"))
                .collect(),
        ),
    );
    out.insert(
        "a",
        sorted(
            world
                .query::<(Entity, RefRO<A>)>()
                .iter()
                .map(|(e, a)| format!("{e:?} {a:?}"))
                .collect(),
        ),
    );
    out.insert(
        "a b",
        sorted(
            world
                .query::<(Entity, RefRO<A>, RefRO<B>)>()
                .iter()
                .map(|(e, a, b)| format!("{e:?} {a:?} {b:?}"))
                .collect(),
        ),
    );
    out.insert(
        "opt c",
        sorted(
            world
                .query::<(Entity, Option<RefRO<C>>)>()
                .iter()
                .map(|(e, c)| format!("{e:?} {c:?}"))
                .collect(),
        ),
    );
    out.insert(
        "with t without b",
        sorted(
            world
                .query_filtered::<(Entity, Option<RefRO<A>>), (With<T>, Without<B>)>()
                .iter()
                .map(|(e, a)| format!("{e:?} {a:?}"))
                .collect(),
        ),
    );
    out.insert(
        "or",
        sorted(
            world
                .query_filtered::<(Entity, Option<RefRO<B>>), Or<(With<A>, With<C>)>>()
                .iter()
                .map(|(e, b)| format!("{e:?} {b:?}"))
                .collect(),
        ),
    );
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn snapshot_bytes_snapshot_restore_equals_the_original(
        ops in prop::collection::vec(op(), 1..120),
        later in prop::collection::vec(op(), 0..60),
        chunk_exp in 12u32..17,
    ) {
        let mut world = pod_world(4096, false);
        let mut live = Vec::new();
        for op in &ops {
            apply(&mut world, &mut live, op);
        }
        let seen = observe(&mut world);
        let hash = world.state_hash();
        let bytes = world.snapshot().unwrap().to_bytes().unwrap();
        let snap = Snapshot::from_bytes(&bytes).unwrap();
        prop_assert_eq!(snap.state_hash(), hash);

        // The same world, changed, then restored.
        for op in &later {
            apply(&mut world, &mut live, op);
        }
        world.restore(&snap).unwrap();
        world.check_invariants();
        prop_assert_eq!(&observe(&mut world), &seen);
        prop_assert_eq!(world.state_hash(), hash);

        // A fresh world with another chunk size and registration order.
        let mut other = pod_world(1 << chunk_exp, true);
        other.restore(&snap).unwrap();
        other.check_invariants();
        prop_assert_eq!(&observe(&mut other), &seen);
        prop_assert_eq!(other.state_hash(), hash);
        // Both hand out the same ids next.
        prop_assert_eq!(world.spawn((A(0),)), other.spawn((A(0),)));
    }
}
