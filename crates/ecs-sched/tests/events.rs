//! Events: writers don't conflict, readers see each event once, buffers merge in plan order
//! (the same sequence on any thread count), and events live two runs.

use std::time::Duration;

use ecs_core::World;
use ecs_query::RefRW;
use ecs_sched::{every_n_runs, EventReader, EventWriter, Events, Local, Query, ResMut, Schedule};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Born {
    by: u32,
    n: u64,
}

#[derive(Default)]
struct Seen(Vec<Born>);

#[test]
fn writers_of_one_type_do_not_conflict() {
    fn a(mut w: EventWriter<Born>) {
        w.send(Born { by: 0, n: 0 });
    }
    fn b(mut w: EventWriter<Born>) {
        w.send(Born { by: 1, n: 0 });
    }
    fn read(mut r: EventReader<Born>, mut seen: ResMut<Seen>) {
        seen.0.extend(r.read().copied());
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(a);
    schedule.add_system(b);
    schedule.add_system(read);
    let explain = schedule.explain();
    assert!(
        explain.contains("none: every system may run at the same time"),
        "{explain}"
    );
    assert!(explain.contains("sends:  Born"), "{explain}");
}

/// Four writers doing uneven work on their own components, so they finish in an order that
/// depends on the threads; one reader records what it sees.
fn parallel_sequence(threads: usize) -> Vec<Born> {
    let mut world = World::new();
    world.insert_resource(Seen::default());
    for i in 0..2_000u32 {
        world.spawn((i, u64::from(i)));
        world.spawn((i as u8, i as u16));
    }
    let mut schedule = Schedule::with_threads(threads);
    schedule.set_inline_threshold(Duration::ZERO);
    macro_rules! writer {
        ($name:literal, $by:expr, $ty:ty, $spin:expr) => {
            schedule
                .add_system(
                    |mut q: Query<RefRW<$ty>>, mut w: EventWriter<Born>, mut run: Local<u64>| {
                        *run += 1;
                        for _ in 0..$spin {
                            q.for_each(|x| *x = x.wrapping_add(1));
                        }
                        for k in 0..3 {
                            w.send(Born {
                                by: $by,
                                n: *run * 10 + k,
                            });
                        }
                    },
                )
                .named($name);
        };
    }
    writer!("w0", 0, u32, 40);
    writer!("w1", 1, u64, 1);
    writer!("w2", 2, u8, 20);
    writer!("w3", 3, u16, 5);
    schedule.add_system(|mut r: EventReader<Born>, mut seen: ResMut<Seen>| {
        seen.0.extend(r.read().copied());
    });
    for _ in 0..10 {
        schedule.run(&mut world).unwrap();
    }
    std::mem::take(&mut world.resource_mut::<Seen>().0)
}

#[test]
#[cfg_attr(miri, ignore = "rayon pool threads are never joined")]
fn events_from_parallel_writers_read_the_same_on_1_and_4_threads() {
    let one = parallel_sequence(1);
    assert_eq!(
        one.len(),
        9 * 4 * 3,
        "nine runs' events were read by the tenth"
    );
    // Plan order: w0's buffer, then w1's, ...
    assert_eq!(one[0], Born { by: 0, n: 10 });
    assert_eq!(one[3], Born { by: 1, n: 10 });
    for _ in 0..3 {
        assert_eq!(parallel_sequence(4), one);
    }
}

#[test]
#[cfg_attr(miri, ignore = "rayon pool threads are never joined")]
fn each_reader_sees_each_event_once() {
    #[derive(Default)]
    struct Counts(Vec<usize>);
    fn send(mut w: EventWriter<u32>, mut run: Local<u32>) {
        *run += 1;
        w.send_batch(0..*run);
    }
    let mut world = World::new();
    world.insert_resource(Counts(vec![0, 0]));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(send);
    schedule
        .add_system(|mut r: EventReader<u32>, mut c: ResMut<Counts>| c.0[0] += r.read().count())
        .named("reader_a");
    schedule
        .add_system(|mut r: EventReader<u32>, mut c: ResMut<Counts>| c.0[1] += r.read().count())
        .named("reader_b");
    for _ in 0..5 {
        schedule.run(&mut world).unwrap();
    }
    // Runs 1..=4 sent 1+2+3+4 events, read in runs 2..=5; run 5's are still pending.
    assert_eq!(world.resource::<Counts>().0, [10, 10]);
}

#[test]
fn events_live_two_runs() {
    fn send_once(mut w: EventWriter<u8>, mut sent: Local<bool>) {
        if !*sent {
            w.send(1);
            *sent = true;
        }
    }
    // A reader that runs every third run sees an event written in run 0 (readable in runs 1
    // and 2) only if it runs in one of them.
    for (offset, expect) in [(1, 1), (2, 1), (3, 0)] {
        let mut world = World::new();
        world.insert_resource(0usize);
        let mut schedule = Schedule::single_threaded();
        schedule.add_system(send_once);
        schedule
            .add_system(
                move |mut r: EventReader<u8>, mut n: ResMut<usize>, mut run: Local<u32>| {
                    *run += 1;
                    if *run == offset + 1 {
                        *n += r.read().count();
                    }
                },
            )
            .named("late_reader");
        for _ in 0..6 {
            schedule.run(&mut world).unwrap();
        }
        assert_eq!(*world.resource::<usize>(), expect, "reader in run {offset}");
        assert!(world.resource::<Events<u8>>().is_empty());
    }
}

#[test]
fn sync_points_apply_events_for_later_systems_of_the_run() {
    let mut world = World::new();
    world.insert_resource(0usize);
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(|mut w: EventWriter<u8>| w.send(7))
        .named("send");
    schedule.add_sync_point();
    schedule
        .add_system(|mut r: EventReader<u8>, mut n: ResMut<usize>| *n += r.read().count())
        .named("read");
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<usize>(), 1);
}

#[test]
fn skipped_and_panicking_writers_send_nothing() {
    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(|mut w: EventWriter<u8>| w.send(1))
        .named("gated")
        .run_if(every_n_runs(2));
    for _ in 0..4 {
        schedule.run(&mut world).unwrap();
    }
    // Runs 0 and 2 sent; run 0's event was dropped at the end of run 2.
    assert_eq!(world.resource::<Events<u8>>().len(), 1);

    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    schedule
        .add_system(|mut w: EventWriter<u8>| {
            w.send(1);
            panic!("boom");
        })
        .named("fails");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        schedule.run(&mut world).unwrap();
    }));
    assert!(caught.is_err());
    assert!(world.resource::<Events<u8>>().is_empty());
}

#[test]
fn event_writers_make_conditions_not_read_only() {
    let mut schedule = Schedule::single_threaded();
    let err = schedule
        .add_system(|_: &World| {})
        .named("s")
        .try_run_if(|mut w: EventWriter<u8>| {
            w.send(0);
            true
        })
        .err()
        .unwrap();
    assert!(err.to_string().contains("writes u8"), "{err}");
}

/// Events sent from parallel loops (`par_for_each_send`) reach readers in row order, beside a
/// sequential writer of the same type and the loop's commands, identically on 1, 2 and 4
/// threads, and in the order one sequential loop would have sent them.
#[test]
fn events_from_parallel_loops_are_deterministic_and_in_row_order() {
    use ecs_core::Entity;
    use ecs_query::RefRO;
    use ecs_sched::Commands;
    #[derive(Debug, PartialEq, Clone, Copy)]
    struct Hit(u32, u32);
    struct Hp(u32);
    fn run(threads: usize, parallel: bool) -> Vec<Hit> {
        let mut world = World::with_test_chunk_size(512);
        world.insert_resource(Vec::<Hit>::new());
        world
            .spawn_batch((0..2000u32).map(|i| (Hp(i),)))
            .for_each(drop);
        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(
                move |mut q: Query<(Entity, RefRO<Hp>)>,
                      mut hits: EventWriter<Hit>,
                      mut commands: Commands| {
                    hits.send(Hit(u32::MAX, 0)); // a sequential send before the loop
                    if parallel {
                        q.par_for_each_send(&mut hits, |out, (e, hp)| {
                            if hp.0 % 3 == 0 {
                                out.send(Hit(e.index(), hp.0));
                            }
                        });
                    } else {
                        q.for_each(|(e, hp)| {
                            if hp.0 % 3 == 0 {
                                hits.send(Hit(e.index(), hp.0));
                            }
                        });
                    }
                    commands.spawn((Hp(7),));
                },
            )
            .named("send");
        schedule
            .add_system(|mut hits: EventReader<Hit>, mut seen: ResMut<Vec<Hit>>| {
                seen.extend(hits.read().copied());
            })
            .named("read");
        for _ in 0..3 {
            schedule.run(&mut world).unwrap();
        }
        world.resource::<Vec<Hit>>().clone()
    }
    let sequential = run(1, false);
    assert!(sequential.len() > 1000, "{}", sequential.len());
    for threads in [1, 2, 4] {
        assert_eq!(run(threads, true), sequential, "{threads} threads");
    }
}
