//! Snapshot and restore of worlds with relationships (issue 50): what a rollback costs once
//! `ChildOf`, a custom one-to-many and a many-to-many relationship are in the world.
//!
//! Five worlds of 300,000 people, each an epidemic model's agent (`Position`, `Velocity`, a
//! `Tag`): `pods` alone; `child_of` adds 120,000 households, each a `ChildOf` one of 1,000
//! districts; `member_of` instead has every person a `MemberOf` one of the 120,000 households
//! (`Members` lists kept by the engine); `both` has both; `attends` has every person
//! `Attends` one or two of 10,000 workplaces (many-to-many, `AttendedBy` lists). For each:
//! `snapshot` (`snapshot_into` a kept snapshot) and `restore` (nothing changed between), and
//! for `pods` a `memcpy` of the bytes its pod columns hold.
//!
//! Run with `cargo bench -p ecs-benches --bench relationships`.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented public function"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use ecs::prelude::*;
use ecs_benches::{Position, Vec3, Velocity};

const PEOPLE: usize = 300_000;
const HOUSEHOLDS: usize = 120_000;
const DISTRICTS: usize = 1_000;
const WORKPLACES: usize = 10_000;

#[derive(Clone, Copy)]
struct Tag;

/// A person's household (one-to-many).
#[derive(Clone)]
struct MemberOf(Entity);
/// A household's members, kept by the engine.
#[derive(Clone)]
struct Members(Vec<Entity>);

impl Relationship for MemberOf {
    type Target = Members;
    fn targets(&self) -> &[Entity] {
        std::slice::from_ref(&self.0)
    }
    fn from_target(target: Entity) -> Self {
        MemberOf(target)
    }
}
impl RelationshipTarget for Members {
    type Relationship = MemberOf;
    const ON_DESPAWN: DespawnPolicy = DespawnPolicy::RemoveRelationship;
    fn from_sources(sources: Vec<Entity>) -> Self {
        Members(sources)
    }
    fn sources(&self) -> &[Entity] {
        &self.0
    }
    fn sources_mut(&mut self) -> &mut Vec<Entity> {
        &mut self.0
    }
}

/// The workplaces a person attends (many-to-many).
#[derive(Clone)]
struct Attends(Vec<Entity>);
/// A workplace's attendees, kept by the engine.
#[derive(Clone)]
struct AttendedBy(Vec<Entity>);

impl Relationship for Attends {
    type Target = AttendedBy;
    fn targets(&self) -> &[Entity] {
        &self.0
    }
    fn from_target(target: Entity) -> Self {
        Attends(vec![target])
    }
    fn targets_mut(&mut self) -> Option<&mut Vec<Entity>> {
        Some(&mut self.0)
    }
}
impl RelationshipTarget for AttendedBy {
    type Relationship = Attends;
    const ON_DESPAWN: DespawnPolicy = DespawnPolicy::RemoveRelationship;
    fn from_sources(sources: Vec<Entity>) -> Self {
        AttendedBy(sources)
    }
    fn sources(&self) -> &[Entity] {
        &self.0
    }
    fn sources_mut(&mut self) -> &mut Vec<Entity> {
        &mut self.0
    }
}

fn person(i: usize) -> (Position, Velocity, Tag) {
    (
        Position(Vec3::new(i as f32, 0.0, 0.0)),
        Velocity(Vec3::UNIT_X),
        Tag,
    )
}

/// One of the five worlds, every type registered for snapshots.
fn world(child_of: bool, member_of: bool, attends: bool) -> World {
    let mut world = World::new();
    world.register_pod::<Position>();
    world.register_pod::<Velocity>();
    world.register_clone::<Tag>();
    world.register_clone::<ChildOf>();
    world.register_clone::<Children>();
    world.register_relationship::<MemberOf>().unwrap();
    world.register_clone::<MemberOf>();
    world.register_clone::<Members>();
    world.register_relationship::<Attends>().unwrap();
    world.register_clone::<Attends>();
    world.register_clone::<AttendedBy>();
    let people: Vec<Entity> = world.spawn_batch((0..PEOPLE).map(person)).collect();
    if child_of || member_of {
        let districts: Vec<Entity> = (0..DISTRICTS).map(|_| world.spawn(())).collect();
        let households: Vec<Entity> = if child_of {
            world
                .spawn_batch((0..HOUSEHOLDS).map(|i| (ChildOf(districts[i % DISTRICTS]),)))
                .collect()
        } else {
            world.spawn_batch((0..HOUSEHOLDS).map(|_| ())).collect()
        };
        if member_of {
            for (i, &p) in people.iter().enumerate() {
                world
                    .insert_one(p, MemberOf(households[i % HOUSEHOLDS]))
                    .unwrap();
            }
        }
    }
    if attends {
        let workplaces: Vec<Entity> = world.spawn_batch((0..WORKPLACES).map(|_| ())).collect();
        for (i, &p) in people.iter().enumerate() {
            let mut places = vec![workplaces[i % WORKPLACES]];
            if i % 3 == 0 {
                places.push(workplaces[(i * 7 + 1) % WORKPLACES]);
            }
            world.insert_one(p, Attends(places)).unwrap();
        }
    }
    world.check_invariants();
    world
}

fn restore_300k(c: &mut Criterion) {
    let mut group = c.benchmark_group("relationships_restore_300k");
    group
        .sample_size(15)
        .measurement_time(Duration::from_secs(5));

    let pod_bytes = PEOPLE * (size_of::<Position>() + size_of::<Velocity>());
    let src = vec![1u8; pod_bytes];
    let mut dst = vec![0u8; pod_bytes];
    group.bench_function("pods/memcpy", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)));
    });
    black_box(&dst);

    let worlds = [
        ("pods", false, false, false),
        ("child_of", true, false, false),
        ("member_of", false, true, false),
        ("both", true, true, false),
        ("attends", false, false, true),
    ];
    for (name, child_of, member_of, attends) in worlds {
        let mut world = world(child_of, member_of, attends);
        let mut snap = Snapshot::default();
        world.snapshot_into(&mut snap, Unregistered::Fail).unwrap();
        group.bench_function(format!("{name}/snapshot"), |b| {
            b.iter(|| {
                world
                    .snapshot_into(black_box(&mut snap), Unregistered::Fail)
                    .unwrap()
            });
        });
        group.bench_function(format!("{name}/restore"), |b| {
            b.iter(|| world.restore(black_box(&snap)).unwrap());
        });
        world.check_invariants();
    }
    group.finish();
}

criterion_group!(benches, restore_300k);
criterion_main!(benches);
