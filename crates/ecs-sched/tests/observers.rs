//! Observers: systems triggered by lifecycle changes and by events triggered on entities —
//! which run, in which order, with what they see, and the same results on any thread count.

use std::sync::Mutex;

use ecs_core::{ChildOf, ComponentHooks, DeferredWorld, Entity, HookContext, World};
use ecs_query::{QueryExt, RefRO, RefRW};
use ecs_sched::{
    Commands, EntityEvent, Local, ObserveExt, OnAdd, OnInsert, OnRemove, OnReplace, Query, Res,
    ResMut, Schedule, Trigger,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Dead;

#[derive(Default)]
struct Log(Vec<String>);

fn log(world: &World) -> Vec<String> {
    world.resource::<Log>().0.clone()
}

#[test]
fn lifecycle_observers_run_in_registration_order_replace_and_remove_before_the_change() {
    let mut world = World::new();
    world.insert_resource(Log::default());
    fn hook(world: DeferredWorld<'_>, ctx: HookContext) {
        // Hooks run during the change; the log is written by observers afterwards.
        assert!(world.get::<Hp>(ctx.entity).is_ok());
    }
    world
        .set_component_hooks::<Hp>(ComponentHooks::new().on_add(hook))
        .unwrap();
    world.add_observer(
        |t: Trigger<OnAdd<Hp>>, q: Query<RefRO<Hp>>, mut l: ResMut<Log>| {
            let hp = q.get(t.entity()).unwrap().0;
            l.0.push(format!("add#1 {hp}"));
        },
    );
    world.add_observer(|_: Trigger<OnAdd<Hp>>, mut l: ResMut<Log>| l.0.push("add#2".into()));
    world.add_observer(|_: Trigger<OnInsert<Hp>>, mut l: ResMut<Log>| l.0.push("insert".into()));
    world.add_observer(
        |t: Trigger<OnReplace<Hp>>, q: Query<RefRO<Hp>>, mut l: ResMut<Log>| {
            // Before the change: an overwrite and a removal both show the old value.
            let now = q.get(t.entity()).ok().map(|h| h.0);
            l.0.push(format!("replace {now:?}"));
        },
    );
    world.add_observer(|t: Trigger<OnRemove<Hp>>, mut l: ResMut<Log>| {
        l.0.push(format!("remove {}", t.entity().index()));
    });

    let e = world.spawn((Hp(3),));
    assert_eq!(log(&world), ["add#1 3", "add#2", "insert"]);
    world.resource_mut::<Log>().0.clear();
    world.insert(e, (Hp(4),)).unwrap();
    assert_eq!(log(&world), ["replace Some(3)", "insert"]);
    world.resource_mut::<Log>().0.clear();
    world.despawn(e).unwrap();
    assert_eq!(
        log(&world),
        [
            "replace Some(4)".to_string(),
            format!("remove {}", e.index())
        ]
    );
    world.check_invariants();
}

#[test]
fn observers_take_ordinary_parameters_and_keep_their_state() {
    let mut world = World::new();
    world.insert_resource(0u32);
    world.add_observer(
        |t: Trigger<OnInsert<Hp>>,
         mut q: Query<RefRW<Hp>>,
         mut seen: Local<u32>,
         mut total: ResMut<u32>,
         mut commands: Commands| {
            *seen += 1;
            *total = *seen;
            if let Ok(hp) = q.get_mut(t.entity()) {
                if hp.0 == 0 {
                    commands.insert(t.entity(), (Dead,));
                }
                hp.0 += 100; // a write through a query, no structural change
            }
        },
    );
    let a = world.spawn((Hp(0),));
    let b = world.spawn((Hp(5),));
    assert_eq!(
        *world.resource::<u32>(),
        2,
        "the Local was kept between runs"
    );
    assert!(world.has::<Dead>(a) && !world.has::<Dead>(b));
    assert_eq!(world.get::<Hp>(b), Ok(&Hp(105)));
}

struct Damage(u32);
impl EntityEvent for Damage {}
struct Shout(&'static str);
impl EntityEvent for Shout {}

#[test]
fn custom_events_watch_lists_nesting_and_self_triggering() {
    let mut world = World::new();
    world.insert_resource(Log::default());
    let (a, b) = (world.spawn((Hp(10),)), world.spawn((Hp(10),)));
    world.add_observer(
        |t: Trigger<Damage>, mut q: Query<RefRW<Hp>>, mut commands: Commands| {
            let hp = q.get_mut(t.entity()).unwrap();
            hp.0 = hp.0.saturating_sub(t.event().0);
            if hp.0 == 0 {
                commands.trigger_on(t.entity(), Shout("down"));
            }
        },
    );
    world.add_observer_for([a], |t: Trigger<Shout>, mut l: ResMut<Log>| {
        l.0.push(format!("a heard {}", t.event().0));
    });
    let id = world.add_observer(
        |t: Trigger<Shout>, mut l: ResMut<Log>, mut commands: Commands| {
            l.0.push(format!("{} {}", t.entity().index(), t.event().0));
            // Triggering the same event from inside: nested, with its own event value, and this
            // observer skipped for it (a system does not run inside itself).
            commands.trigger_on(t.entity(), Shout("echo"));
        },
    );
    world.trigger_on(a, Damage(4));
    world.trigger_on(b, Damage(10));
    assert_eq!(world.get::<Hp>(a), Ok(&Hp(6)));
    assert_eq!(log(&world), [format!("{} down", b.index())]);
    world.resource_mut::<Log>().0.clear();
    world.trigger_on(a, Shout("hello"));
    assert_eq!(
        log(&world),
        [
            "a heard hello",
            &format!("{} hello", a.index()),
            "a heard echo"
        ]
    );
    assert!(world.remove_observer_system(id));
    assert!(!world.remove_observer_system(id));
    world.resource_mut::<Log>().0.clear();
    world.trigger_on(b, Shout("quiet"));
    assert!(
        log(&world).is_empty(),
        "b is not watched by the first, the second is gone"
    );
}

#[test]
fn an_observer_outside_an_event_is_skipped() {
    // A Trigger parameter validates: run by hand, the system is skipped, not panicking.
    use ecs_sched::{RunSystemError, RunSystemExt};
    let mut world = World::new();
    let r = world.run_system_once(|_: Trigger<Damage>| panic!("ran without an event"));
    assert!(matches!(r, Err(RunSystemError::Skipped { .. })), "{r:?}");
}

/// A schedule whose systems insert and remove relationships and trigger observers through
/// commands: the world, the observers' log and the hash agree on 1, 2 and 4 threads.
#[test]
fn observers_under_a_parallel_schedule_are_thread_count_independent() {
    #[derive(Default)]
    struct Seen(Mutex<Vec<(u32, u32)>>);
    struct Alert(u32);
    impl EntityEvent for Alert {}

    /// (index, hp, parent index, has no children) per entity.
    type Row = (u32, u32, Option<u32>, bool);

    /// The rows, the `OnAdd<ChildOf>` observer's log and the `Alert` count after 100 frames.
    fn run(threads: usize) -> (Vec<Row>, Vec<(u32, u32)>, usize) {
        let mut world = World::new();
        world.insert_resource(Seen::default());
        world.insert_resource(0usize);
        let leader = world.spawn((Hp(1_000),));
        world.insert_resource(leader);
        world
            .spawn_batch((0..40u32).map(|i| (Hp(i * 37 % 101),)))
            .for_each(drop);
        world.add_observer(
            |t: Trigger<OnAdd<ChildOf>>, q: Query<RefRO<Hp>>, seen: Res<Seen>| {
                let hp = q.get(t.entity()).map_or(0, |h| h.0);
                seen.0.lock().unwrap().push((t.entity().index(), hp));
            },
        );
        world.add_observer(
            |t: Trigger<Alert>, mut q: Query<RefRW<Hp>>, mut n: ResMut<usize>| {
                *n += 1;
                if let Ok(hp) = q.get_mut(t.entity()) {
                    hp.0 = hp.0.wrapping_add(t.event().0);
                }
            },
        );
        world.add_observer(|t: Trigger<OnRemove<Hp>>, mut commands: Commands| {
            // A despawned unit's replacement, spawned by the observer.
            commands.spawn((Hp(t.entity().index() % 50),));
        });

        let mut schedule = Schedule::with_threads(threads);
        schedule
            .add_system(|mut q: Query<RefRW<Hp>>| {
                q.for_each(|h| h.0 = h.0.wrapping_mul(7).wrapping_add(3) % 1_009);
            })
            .named("churn");
        schedule
            .add_system(
                |q: Query<(Entity, RefRO<Hp>)>, leader: Res<Entity>, mut commands: Commands| {
                    q.for_each(|(e, hp)| {
                        if e != *leader {
                            match hp.0 % 9 {
                                0 => commands.insert(e, (ChildOf(*leader),)),
                                1 => commands.remove::<(ChildOf,)>(e),
                                2 => commands.trigger_on(e, Alert(hp.0)),
                                3 if hp.0 > 500 => commands.despawn(e),
                                _ => {}
                            }
                        }
                    });
                },
            )
            .named("decide");
        schedule
            .add_system(|q: Query<(Entity, RefRO<Hp>)>, mut commands: Commands| {
                q.for_each(|(e, hp)| {
                    if hp.0 % 13 == 5 {
                        commands.trigger_on(e, Alert(1));
                    }
                });
            })
            .named("alert");
        // 100 frames natively; under Miri (CI's observer lane) a few, enough for every
        // observer to run, with commands from systems that ran on two threads.
        for _ in 0..if cfg!(miri) { 6 } else { 100 } {
            schedule.run(&mut world).unwrap();
            world.check_invariants();
        }
        let rows: Vec<(Entity, u32)> = world
            .query::<(Entity, RefRO<Hp>)>()
            .iter()
            .map(|(e, h)| (e, h.0))
            .collect();
        let mut out: Vec<Row> = rows
            .into_iter()
            .map(|(e, hp)| {
                (
                    e.index(),
                    hp,
                    world.parent(e).map(|p| p.index()),
                    world.children(e).is_empty(),
                )
            })
            .collect();
        out.sort();
        let seen = std::mem::take(&mut *world.resource::<Seen>().0.lock().unwrap());
        (out, seen, *world.resource::<usize>())
    }

    let one = run(1);
    assert!(one.0.len() >= 30, "units remain: {}", one.0.len());
    let threads: &[usize] = if cfg!(miri) { &[2] } else { &[2, 4] };
    assert!(
        !one.1.is_empty() && one.2 > 0,
        "observers ran: {} {}",
        one.1.len(),
        one.2
    );
    for &threads in threads {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}
