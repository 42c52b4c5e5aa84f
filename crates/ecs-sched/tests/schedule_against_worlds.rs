//! Where two features meet: the schedule's plan against a world's component kinds (enable
//! bits, chunk components), and one schedule run on several worlds. Each test names the
//! behaviour it guards (issue 26 of the third outside review); small and single-threaded
//! where it can be, so Miri runs them all.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{Components, World};
use ecs_query::{ChunkRO, ChunkRW, EnabledRW, QueryExt, RefRO, RefRW, With, Without};
use ecs_sched::{
    EventReader, EventWriter, Events, IntoSystem, Query, ResMut, Schedule, ScheduleError,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);
struct Shield;

fn split(
    mut shielded: Query<RefRW<Hp>, With<Shield>>,
    mut bare: Query<RefRW<Hp>, Without<Shield>>,
) {
    shielded.for_each(|hp| hp.0 += 1);
    bare.for_each(|hp| hp.0 += 10);
}

fn shielded(mut q: Query<RefRW<Hp>, With<Shield>>) {
    q.for_each(|hp| hp.0 += 1);
}

fn bare(mut q: Query<RefRW<Hp>, Without<Shield>>) {
    q.for_each(|hp| hp.0 += 10);
}

fn toggle(mut q: Query<EnabledRW<Shield>>) {
    q.for_each(|mut on| {
        on.set(false);
    });
}

fn shielded_world() -> World {
    let mut world = World::new();
    world.register_enableable::<Shield>();
    world.spawn((Hp(0), Shield));
    world
}

#[test]
fn with_and_without_an_enableable_type_in_one_system_are_refused_at_run() {
    let mut schedule = Schedule::single_threaded();
    // The schedule cannot know yet that `Shield` will be enableable: it accepts the system.
    schedule.add_system(split);
    let mut world = shielded_world();
    let err = schedule.run(&mut world).unwrap_err();
    assert!(
        matches!(&err, ScheduleError::ConflictingParams { system, component }
            if system == "split" && component.contains("Hp")),
        "{err}"
    );
    assert_eq!(only_hp(&mut world), Hp(0), "nothing ran");
    // Refused again on the next run: the schedule never plans with the stale access sets.
    assert!(matches!(
        schedule.run(&mut world),
        Err(ScheduleError::ConflictingParams { .. })
    ));
    assert_eq!(only_hp(&mut world), Hp(0), "still nothing ran");
}

/// The `Hp` of the world's only entity.
fn only_hp(world: &mut World) -> Hp {
    let hps: Vec<Hp> = world.query::<RefRO<Hp>>().iter().copied().collect();
    assert_eq!(hps.len(), 1);
    hps[0]
}

#[test]
fn with_and_without_an_enableable_type_in_one_hand_driven_system_panic() {
    let mut system = split.into_system(&mut Components::default()).unwrap();
    let mut world = shielded_world();
    let panic = catch_unwind(AssertUnwindSafe(|| system.run_exclusive(&mut world)))
        .expect_err("two `&mut Hp` of one row");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("split") && message.contains("Hp"),
        "{message}"
    );
}

#[test]
fn with_and_without_an_enableable_type_in_two_systems_are_ordered() {
    let mut schedule = Schedule::new();
    schedule.add_system(shielded).named("shielded");
    schedule.add_system(bare).named("bare");
    schedule.add_system(toggle).named("toggle");
    // Before any world: `With` / `Without` of a plain `Shield` are disjoint.
    assert!(!schedule.explain().contains("shielded -> bare"));
    let mut world = shielded_world();
    schedule.build_for(&world).unwrap();
    let report = schedule.explain();
    assert!(report.contains("shielded -> bare"), "{report}");
    assert!(report.contains("shielded -> toggle"), "{report}");
    assert!(report.contains("bare -> toggle"), "{report}");
    schedule.run(&mut world).unwrap();
    // Both ran on the enabled row in order (1 + 0), then `toggle` disabled it.
    assert_eq!(only_hp(&mut world), Hp(1));
    schedule.run(&mut world).unwrap();
    assert_eq!(only_hp(&mut world), Hp(11), "now bare");
}

#[test]
fn kinds_learnt_from_a_second_world_reorder_the_schedule() {
    let mut schedule = Schedule::new();
    schedule.add_system(shielded).named("shielded");
    schedule.add_system(bare).named("bare");
    // World 1 keeps `Shield` plain: the two may run together.
    let mut plain = World::new();
    plain.spawn((Hp(0), Shield));
    schedule.run(&mut plain).unwrap();
    assert!(!schedule.explain().contains("shielded -> bare"));
    // World 2, made between runs, makes it enableable.
    let mut world = shielded_world();
    schedule.run(&mut world).unwrap();
    assert!(schedule.explain().contains("shielded -> bare"));
    // Kinds only add up: back on world 1 the schedule stays cautious.
    schedule.run(&mut plain).unwrap();
    assert!(schedule.explain().contains("shielded -> bare"));
    assert_eq!(only_hp(&mut plain), Hp(2));
}

#[test]
fn register_enableable_after_systems_were_added_is_seen_by_the_next_run() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(shielded).named("shielded");
    schedule.add_system(toggle).named("toggle");
    let mut world = World::new();
    schedule.build_for(&world).unwrap();
    assert!(!schedule.explain().contains("shielded -> toggle"));
    world.register_enableable::<Shield>();
    world.spawn((Hp(0), Shield));
    schedule.run(&mut world).unwrap();
    assert!(schedule.explain().contains("shielded -> toggle"));
}

#[derive(Default, Debug, Clone, Copy, PartialEq)]
struct Bounds {
    max: u32,
}

fn measure(mut q: Query<(ChunkRW<Bounds>, RefRO<Hp>)>) {
    q.for_each_chunk(|mut view| {
        let (mut bounds, hps) = view.columns();
        bounds.max = hps.iter().map(|h| h.0).max().unwrap_or(0);
    });
}

fn cull(mut q: Query<(ChunkRO<Bounds>, RefRO<Hp>)>, mut seen: ResMut<u32>) {
    let total = std::sync::atomic::AtomicU32::new(0);
    q.par_for_each(|(bounds, hp)| {
        assert!(hp.0 <= bounds.max);
        total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    *seen = total.into_inner();
}

#[test]
fn chunk_components_work_as_system_parameters_and_in_parallel_loops() {
    let mut world = World::with_chunk_size(4096).unwrap();
    world.register_chunk_component::<Bounds>();
    world.insert_resource(0u32);
    let n = if cfg!(miri) { 300 } else { 3000 };
    world.spawn_batch((0..n).map(|i| (Hp(i),))).for_each(drop);
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(measure).named("measure");
    schedule.add_system(cull).named("cull");
    schedule.run(&mut world).unwrap();
    assert!(schedule.explain().contains("measure -> cull"));
    assert_eq!(*world.resource::<u32>(), n);
}

#[test]
fn a_chunk_query_over_a_plain_type_panics_naming_it() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(|_: Query<ChunkRO<Hp>>| {});
    let mut world = World::new();
    let panic = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world)))
        .expect_err("`Hp` is not a chunk component in this world");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("is not a chunk component"), "{message}");
}

#[derive(Debug, Clone, PartialEq)]
struct Ping(u32);

fn log_pings(mut reader: EventReader<Ping>, mut log: ResMut<Vec<u32>>) {
    log.extend(reader.read().map(|p| p.0));
}

#[test]
fn an_event_reader_reads_each_event_once_when_one_schedule_alternates_worlds() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(log_pings);
    let mut a = World::new();
    let mut b = World::new();
    for (world, first) in [(&mut a, 1), (&mut b, 100)] {
        world.insert_resource(Events::<Ping>::default());
        world.insert_resource(Vec::<u32>::new());
        world.resource_mut::<Events<Ping>>().send(Ping(first));
    }
    schedule.run(&mut a).unwrap();
    schedule.run(&mut b).unwrap();
    schedule.run(&mut a).unwrap();
    a.resource_mut::<Events<Ping>>().send(Ping(2));
    schedule.run(&mut b).unwrap();
    schedule.run(&mut a).unwrap();
    assert_eq!(*a.resource::<Vec<u32>>(), [1, 2]);
    assert_eq!(*b.resource::<Vec<u32>>(), [100]);
}

fn send_ping(mut writer: EventWriter<Ping>) {
    writer.send(Ping(7));
}

#[test]
fn event_writers_of_one_schedule_on_two_worlds_send_to_each_world() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(send_ping).named("send");
    schedule.add_system(log_pings).named("log").after("send");
    let mut a = World::new();
    let mut b = World::new();
    for world in [&mut a, &mut b] {
        world.insert_resource(Events::<Ping>::default());
        world.insert_resource(Vec::<u32>::new());
    }
    // Sending is deferred to the end of the run: each run reads the run before's event.
    for _ in 0..3 {
        schedule.run(&mut a).unwrap();
        schedule.run(&mut b).unwrap();
    }
    assert_eq!(*a.resource::<Vec<u32>>(), [7, 7]);
    assert_eq!(*b.resource::<Vec<u32>>(), [7, 7]);
}

/// Counts its drops in `counter` and panics when dropped.
struct Bomb(&'static std::sync::atomic::AtomicUsize);

impl Drop for Bomb {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        panic!("Bomb dropped");
    }
}

#[test]
fn dropping_a_command_buffer_with_two_panicking_values_does_not_abort() {
    static DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mut world = World::new();
    let e = world.spawn(());
    let mut buffer = ecs_sched::CommandBuffer::new();
    buffer.insert(e, (Bomb(&DROPS),));
    buffer.spawn((Hp(1),));
    buffer.insert(e, (Bomb(&DROPS),));
    let caught = catch_unwind(AssertUnwindSafe(move || drop(buffer)));
    let message = caught.expect_err("the first drop's panic goes on");
    assert_eq!(message.downcast_ref::<&str>(), Some(&"Bomb dropped"));
    assert_eq!(
        DROPS.load(std::sync::atomic::Ordering::Relaxed),
        2,
        "both dropped"
    );
}

#[test]
fn a_panicking_par_for_each_commands_body_beside_queued_panicking_values_does_not_abort() {
    static DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mut world = World::new();
    let n = if cfg!(miri) { 200 } else { 20_000 };
    world.spawn_batch((0..n).map(|i| (Hp(i),))).for_each(drop);
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(
        move |mut q: Query<(ecs_core::Entity, RefRO<Hp>)>, mut commands: ecs_sched::Commands| {
            q.par_for_each_commands(&mut commands, |commands, (e, hp)| {
                if hp.0 % 50 == 0 {
                    commands.insert(e, (Bomb(&DROPS),));
                }
                if hp.0 == n - 1 {
                    panic!("body failed");
                }
            });
        },
    );
    let caught = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world)));
    let message = caught.expect_err("the body's panic goes on");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("body failed"), "{text}");
    let recorded = DROPS.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        recorded > 0 && recorded <= (n as usize).div_ceil(50),
        "{recorded}"
    );
    world.check_invariants();
    assert_eq!(
        world.query::<RefRO<Bomb>>().iter().count(),
        0,
        "no command applied"
    );
}

fn tick(mut n: ResMut<u32>) {
    *n += 1;
}

#[test]
fn a_system_refused_for_a_duplicate_name_is_not_kept() {
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(tick);
    let refused = catch_unwind(AssertUnwindSafe(|| {
        schedule.add_system(tick);
    }));
    let message = refused.expect_err("two systems named `tick`");
    assert!(
        message
            .downcast_ref::<String>()
            .is_some_and(|m| m.contains("tick")),
        "the panic names the system"
    );
    assert_eq!(schedule.order().unwrap(), ["tick"]);
    let mut world = World::new();
    world.insert_resource(0u32);
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<u32>(), 1, "the refused copy does not run");
}

struct Enemy;

#[test]
fn conflicting_queries_name_the_filter_that_would_make_them_disjoint() {
    fn both(_: Query<RefRW<Hp>, With<Enemy>>, _: Query<RefRW<Hp>>) {}
    fn reversed(_: Query<RefRO<Hp>>, _: Query<RefRW<Hp>, With<Enemy>>) {}
    fn hopeless(_: Query<RefRW<Hp>>, _: Query<RefRO<Hp>>) {}
    let mut schedule = Schedule::new();
    let err = schedule.try_add_system(both).err().unwrap().to_string();
    assert!(
        err.contains("add `Without<Enemy>` to the second query"),
        "{err}"
    );
    let err = schedule.try_add_system(reversed).err().unwrap().to_string();
    assert!(
        err.contains("add `Without<Enemy>` to the first query"),
        "{err}"
    );
    let err = schedule.try_add_system(hopeless).err().unwrap().to_string();
    assert!(
        err.contains("`With<X>` on one, `Without<X>` on the other"),
        "{err}"
    );
}
