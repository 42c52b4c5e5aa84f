//! What the schedule's planner takes as a conflict: a `Changed<T>` reader is ordered against
//! a writer of `T` and sees every write; `Or` and `Option` filters never prove two queries
//! disjoint; a `&World` reader is ordered against resource writers and refused beside one in a
//! system; `Commands` shared by `par_for_each` threads spawn once per row.
//!
//! From the second outside review's attacks on the public API from safe code only (no
//! `unsafe` block, no `unsafe impl`), after issue 12 closed the registry and `System` routes.
//! Each test is named after the behaviour a user relies on and asserts it.
//! The `Changed<T>` test reproduced an attack that succeeded when it was written (a change
//! detection that depended on timing); it failed then and passes since its fix (see
//! docs/reliability.md, issue 12).
//!
//! Small and so Miri runs it:
//! `MIRIFLAGS="-Zmiri-tree-borrows" cargo +nightly miri test -p ecs --test system_access_ordering`.

use ecs::prelude::*;

mod common;
use common::{Marker, Pos, Tag};

/// `Changed<T>` used to declare no access to `T` (it "reads only chunk ticks"), so a system
/// filtering on `Changed<T>` ran in parallel with a writer of `T`. The writer takes its tick
/// when its query begins but stamps each chunk only when it reaches it; a watcher whose query
/// began in between checked a chunk the writer had not stamped yet, and on its next run passed
/// only chunks stamped at or after its own previous tick: the writer's stamp was older, so that
/// change was never seen (19 of 40 writes lost, reproduced with two threads and a handshake).
/// `Changed<T>` now declares a read of `T`, so the two are ordered and every write is seen.
#[test]
fn changed_filter_sees_every_write_of_a_parallel_writer() {
    use std::collections::BTreeSet;
    use std::time::Duration;

    struct Val(u32);
    #[derive(Default)]
    struct Seen(BTreeSet<Entity>);

    fn writer(mut q: Query<RefRW<Val>>) {
        q.for_each(|v| v.0 += 1);
    }

    fn watcher(q: Query<Entity, Changed<Val>>, mut seen: ResMut<Seen>) {
        q.for_each(|e| {
            seen.0.insert(e);
        });
    }

    // 256-byte chunks hold 21 `(Entity, Val)` rows: 40 entities fill two chunks.
    let mut world = World::with_test_chunk_size(256);
    let all: Vec<Entity> = world.spawn_batch((0..40).map(|i| (Val(i),))).collect();
    world.insert_resource(Seen::default());
    let mut schedule = Schedule::with_threads(2);
    schedule.set_inline_threshold(Duration::ZERO); // never run a segment inline
    schedule.add_system(writer);
    schedule.add_system(watcher);
    let report = schedule.explain();
    assert!(report.contains("writer -> watcher"), "{report}");

    for run in 0..3 {
        world.resource_mut::<Seen>().0.clear();
        schedule.run(&mut world).unwrap();
        let seen = &world.resource::<Seen>().0;
        let missed: Vec<Entity> = all.iter().copied().filter(|e| !seen.contains(e)).collect();
        assert!(
            missed.is_empty(),
            "run {run}: {} writes never passed `Changed<Val>`",
            missed.len()
        );
    }
}

#[test]
fn or_and_option_filters_are_never_taken_as_proof_of_disjointness() {
    fn with_tag(mut q: Query<RefRW<Pos>, With<Tag>>) {
        q.for_each(|p| p.0 += 1);
    }
    fn without_tag(mut q: Query<RefRW<Pos>, Without<Tag>>) {
        q.for_each(|p| p.0 += 1);
    }
    fn or_tag(mut q: Query<RefRW<Pos>, Or<(With<Tag>,)>>) {
        q.for_each(|p| p.0 += 1);
    }
    fn option_tag(mut q: Query<(RefRW<Pos>, Option<With<Tag>>)>) {
        q.for_each(|(p, _)| p.0 += 1);
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(with_tag);
    schedule.add_system(without_tag);
    schedule.add_system(or_tag);
    schedule.add_system(option_tag);
    let report = schedule.explain();
    assert!(!report.contains("with_tag -> without_tag"), "{report}");
    for edge in [
        "without_tag -> or_tag",
        "without_tag -> option_tag",
        "with_tag -> or_tag",
        "or_tag -> option_tag",
    ] {
        assert!(report.contains(edge), "missing `{edge}`:\n{report}");
    }
    let mut world = World::new();
    let tagged = world.spawn((Pos(0), Tag));
    let plain = world.spawn((Pos(0),));
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Pos>(tagged), Ok(&Pos(3)));
    assert_eq!(world.get::<Pos>(plain), Ok(&Pos(2)));
}

#[test]
fn a_world_read_is_ordered_against_resource_writers_and_refused_beside_one() {
    struct Score(u32);
    fn read_world(world: &World) {
        assert_eq!(world.resource::<Score>().0 % 2, 0, "never mid-update");
    }
    fn bump(mut score: ResMut<Score>) {
        score.0 += 1;
        score.0 += 1;
    }
    fn both(_: &World, _: ResMut<Score>) {}
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(read_world);
    schedule.add_system(bump);
    assert!(
        schedule
            .explain()
            .contains("read_world -> bump: conflict on `&World`"),
        "{}",
        schedule.explain()
    );
    let refused = schedule.try_add_system(both).err();
    assert!(
        matches!(&refused, Some(ScheduleError::ConflictingParams { system, .. }) if system == "both"),
        "{refused:?}"
    );
    let mut world = World::new();
    world.insert_resource(Score(0));
    for _ in 0..10 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.resource::<Score>().0, 20);
}

#[test]
fn commands_shared_by_par_for_each_threads_spawn_once_per_row() {
    use std::sync::Mutex;
    fn fan_out(mut q: Query<RefRO<Pos>>, commands: Commands) {
        let commands = Mutex::new(commands);
        q.par_for_each(|p| {
            commands.lock().unwrap().spawn((Marker, Pos(p.0 + 1000)));
        });
    }
    let mut world = World::with_test_chunk_size(256);
    world
        .spawn_batch((0..100).map(|i| (Pos(i),)))
        .for_each(drop);
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(fan_out);
    schedule.run(&mut world).unwrap();
    let mut spawned: Vec<u32> = world
        .query_filtered::<RefRO<Pos>, With<Marker>>()
        .iter()
        .map(|p| p.0)
        .collect();
    spawned.sort_unstable();
    assert_eq!(spawned, (1000..1100).collect::<Vec<_>>());
    world.check_invariants();
}
