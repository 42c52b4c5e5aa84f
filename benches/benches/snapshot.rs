//! Snapshots (issue 17), each beside a plain `memcpy` of the same component bytes:
//!
//! - `snapshot_1m`: 1,000,000 `(Position, Velocity)` pod entities (24 B of components each,
//!   24 MB in all): `memcpy` of 24 MB into a reused buffer; `snapshot_into` a reused snapshot;
//!   `snapshot` into a fresh one; `restore` (into the world as saved); `restore_after_frame`
//!   (after a frame moved every position, only the restore timed); `state_hash` (with
//!   throughput).
//! - `rollback_1k`: 1,000 entities under a one-system schedule; a plain frame, a frame that also
//!   snapshots, and a rollback frame (restore 8 frames back, re-simulate those 8 with their
//!   snapshots, then the frame itself).
//!
//! Run with `cargo bench -p ecs-benches --bench snapshot`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ecs::prelude::*;
use ecs_benches::{Position, Vec3, Velocity};

const MILLION: usize = 1_000_000;

fn pod_world(n: usize) -> World {
    let mut world = World::new();
    world.register_pod::<Position>();
    world.register_pod::<Velocity>();
    world.spawn_batch((0..n).map(|i| {
        (
            Position(Vec3::new(i as f32, 0.0, 0.0)),
            Velocity(Vec3::UNIT_X),
        )
    }));
    world
}

fn snapshot_1m(c: &mut Criterion) {
    let bytes = MILLION * (size_of::<Position>() + size_of::<Velocity>());
    let mut group = c.benchmark_group("snapshot_1m");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(6));

    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    group.bench_function("memcpy_24mb", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)));
    });
    black_box(&dst);

    let mut world = pod_world(MILLION);
    let mut snap = Snapshot::default();
    world.snapshot_into(&mut snap, Unregistered::Fail).unwrap();
    group.bench_function("snapshot_into", |b| {
        b.iter(|| {
            world
                .snapshot_into(black_box(&mut snap), Unregistered::Fail)
                .unwrap();
        });
    });
    group.bench_function("snapshot_fresh", |b| {
        b.iter(|| black_box(world.snapshot().unwrap()));
    });
    group.bench_function("restore", |b| {
        b.iter(|| world.restore(black_box(&snap)).unwrap());
    });
    // The rollback case: a frame has moved every position since the snapshot, so no column
    // matches it any more (only the entity ids do). Only the restore is timed.
    let mut frame = Schedule::single_threaded();
    frame.add_system(movement);
    group.bench_function("restore_after_frame", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                frame.run(&mut world).unwrap();
                let start = Instant::now();
                world.restore(black_box(&snap)).unwrap();
                spent += start.elapsed();
            }
            spent
        });
    });
    // The same world with its schedule's state (the movement query's tick) in one value.
    let mut sim = SimSnapshot::default();
    sim.capture_into(&world, &[&frame], None).unwrap();
    group.bench_function("sim_capture_into", |b| {
        b.iter(|| {
            sim.capture_into(&world, &[&frame], None).unwrap();
            black_box(&sim);
        });
    });
    group.bench_function("sim_restore_after_frame", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                frame.run(&mut world).unwrap();
                let start = Instant::now();
                sim.restore(&mut world, &mut [&mut frame], None).unwrap();
                spent += start.elapsed();
            }
            spent
        });
    });
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("state_hash", |b| {
        b.iter(|| black_box(world.state_hash()));
    });
    group.finish();
}

fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>) {
    q.for_each(|(p, v)| p.0 += v.0);
}

fn rollback_1k(c: &mut Criterion) {
    const BACK: usize = 8;
    let mut group = c.benchmark_group("rollback_1k");
    let mut world = pod_world(1000);
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(movement);
    let mut ring: Vec<Snapshot> = (0..=BACK).map(|_| Snapshot::default()).collect();
    let mut frame = 0usize;
    // Warm: fill the ring.
    for _ in 0..=BACK {
        world
            .snapshot_into(&mut ring[frame % (BACK + 1)], Unregistered::Fail)
            .unwrap();
        schedule.run(&mut world).unwrap();
        frame += 1;
    }

    group.bench_function("frame", |b| {
        b.iter(|| schedule.run(&mut world).unwrap());
    });
    group.bench_function("frame_with_snapshot", |b| {
        b.iter(|| {
            world
                .snapshot_into(&mut ring[frame % (BACK + 1)], Unregistered::Fail)
                .unwrap();
            schedule.run(&mut world).unwrap();
            frame += 1;
        });
    });
    group.bench_function("frame_with_rollback_8", |b| {
        b.iter(|| {
            // Rewind to the start of frame `frame - BACK` and replay up to `frame`.
            let from = frame - BACK;
            world.restore(&ring[from % (BACK + 1)]).unwrap();
            for f in from..=frame {
                world
                    .snapshot_into(&mut ring[f % (BACK + 1)], Unregistered::Fail)
                    .unwrap();
                schedule.run(&mut world).unwrap();
            }
            frame += 1;
        });
    });
    let mut sims: Vec<SimSnapshot> = (0..=BACK)
        .map(|_| SimSnapshot::capture(&world, &[&schedule], None).unwrap())
        .collect();
    group.bench_function("frame_with_sim_rollback_8", |b| {
        b.iter(|| {
            // As above, with the schedule's state rewound too.
            let from = frame - BACK;
            sims[from % (BACK + 1)]
                .restore(&mut world, &mut [&mut schedule], None)
                .unwrap();
            for f in from..=frame {
                sims[f % (BACK + 1)]
                    .capture_into(&world, &[&schedule], None)
                    .unwrap();
                schedule.run(&mut world).unwrap();
            }
            frame += 1;
        });
    });
    group.finish();
}

criterion_group!(benches, snapshot_1m, rollback_1k);
criterion_main!(benches);
