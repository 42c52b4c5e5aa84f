//! Resources declared outside the simulation (`World::register_resource_outside_snapshots`):
//! a `SimSnapshot` of systems that write them succeeds, a restore rewinds the simulation and
//! leaves them as they are, and an undeclared written resource is still refused.

use std::sync::Mutex;

use ecs_core::World;
use ecs_query::RefRW;
use ecs_sched::{Query, Res, ResMut, Schedule, SimSnapshot, StateError};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(u32);

/// A debug probe: every run appends what it saw (the hook example's `Mutex<Vec<_>>` pattern).
#[derive(Default)]
struct Probe(Mutex<Vec<u32>>);

/// A metrics sink written through `ResMut`.
#[derive(Default)]
struct Frames(u32);

fn schedule() -> Schedule {
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(|mut q: Query<RefRW<Pos>>, probe: Res<Probe>| {
            q.for_each(|p| {
                p.0 += 1;
                probe.0.lock().unwrap().push(p.0);
            });
        })
        .named("step");
    schedule
        .add_system(|mut frames: ResMut<Frames>| frames.0 += 1)
        .named("frames");
    schedule
}

#[test]
fn a_sim_snapshot_leaves_declared_outside_resources_as_they_are() {
    let mut world = World::new();
    world.register_clone::<Pos>();
    world.register_resource_outside_snapshots::<Probe>();
    world.register_resource_outside_snapshots::<Frames>();
    world.insert_resource(Probe::default());
    world.insert_resource(Frames::default());
    let e = world.spawn((Pos(0),));
    let mut schedule = schedule();
    schedule.run(&mut world).unwrap();

    let snap = SimSnapshot::capture(&world, &[&schedule], None).unwrap();
    schedule.run(&mut world).unwrap();
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Pos>(e), Ok(&Pos(3)));

    snap.restore(&mut world, &mut [&mut schedule], None)
        .unwrap();
    assert_eq!(
        world.get::<Pos>(e),
        Ok(&Pos(1)),
        "the simulation is rewound"
    );
    assert_eq!(world.resource::<Frames>().0, 3, "the sink keeps counting");
    assert_eq!(*world.resource::<Probe>().0.lock().unwrap(), [1, 2, 3]);
    world.check_invariants();
}

#[test]
fn an_undeclared_written_resource_is_still_refused() {
    let mut world = World::new();
    world.register_clone::<Pos>();
    world.register_resource_outside_snapshots::<Probe>();
    world.insert_resource(Probe::default());
    world.insert_resource(Frames::default());
    let mut schedule = schedule();
    schedule.run(&mut world).unwrap();
    let err = SimSnapshot::capture(&world, &[&schedule], None).unwrap_err();
    assert!(
        matches!(&err, StateError::ResourceNotSnapshotted { system, resource }
            if system == "frames" && resource.contains("Frames")),
        "{err}"
    );
    assert!(err
        .to_string()
        .contains("register_resource_outside_snapshots"));
}

#[test]
fn declaring_a_snapshot_resource_outside_takes_it_out_and_registering_puts_it_back() {
    let mut world = World::new();
    world.register_pod_resource::<u64>();
    world.register_resource_outside_snapshots::<u64>();
    assert!(!world.is_snapshot_resource::<u64>());
    world.insert_resource(1u64);
    let snap = world.snapshot().unwrap();
    *world.resource_mut::<u64>() = 2;
    world.restore(&snap).unwrap();
    assert_eq!(*world.resource::<u64>(), 2, "outside: left as it is");

    world.register_pod_resource::<u64>();
    assert!(world.is_snapshot_resource::<u64>() && !world.is_resource_outside_snapshots::<u64>());
    let snap = world.snapshot().unwrap();
    *world.resource_mut::<u64>() = 3;
    world.restore(&snap).unwrap();
    assert_eq!(*world.resource::<u64>(), 2, "back in: rolled back");
}
