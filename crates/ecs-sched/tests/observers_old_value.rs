//! `OnReplace` / `OnRemove` observers run before their change and read the value that is
//! going, on every path (insert over a value, remove, take, despawn, a subtree's despawn,
//! clear, and each of these through commands); their commands run once the change completes;
//! hooks and observers interleave in one documented order, the same on any thread count.

use ecs_core::{ChildOf, ComponentHooks, DeferredWorld, Entity, HookContext, World};
use ecs_query::{QueryExt, RefRO};
use ecs_sched::{
    Commands, ObserveExt, OnAdd, OnInsert, OnRemove, OnReplace, Query, ResMut, Schedule, Trigger,
};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Unit(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Marker;

#[derive(Default)]
struct Log(Vec<String>);

fn taken(world: &mut World) -> Vec<String> {
    std::mem::take(&mut world.resource_mut::<Log>().0)
}

/// A world whose `Unit` observers log the value they can read when they run.
fn observed_world() -> World {
    let mut world = World::new();
    world.insert_resource(Log::default());
    world.add_observer(
        |t: Trigger<OnReplace<Unit>>, q: Query<RefRO<Unit>>, mut log: ResMut<Log>| {
            let old = q.get(t.entity()).map(|u| u.0).ok();
            log.0.push(format!("replace {old:?}"));
        },
    );
    world.add_observer(
        |t: Trigger<OnRemove<Unit>>, q: Query<RefRO<Unit>>, mut log: ResMut<Log>| {
            let old = q.get(t.entity()).map(|u| u.0).ok();
            log.0.push(format!("remove {old:?}"));
        },
    );
    world.add_observer(
        |t: Trigger<OnInsert<Unit>>, q: Query<RefRO<Unit>>, mut log: ResMut<Log>| {
            let new = q.get(t.entity()).map(|u| u.0).ok();
            log.0.push(format!("insert {new:?}"));
        },
    );
    world
}

#[test]
fn on_replace_reads_the_old_value_on_an_overwrite_direct_and_through_commands() {
    let mut world = observed_world();
    let e = world.spawn((Unit(1),));
    assert_eq!(taken(&mut world), ["insert Some(1)"]);

    world.insert(e, (Unit(2),)).unwrap();
    assert_eq!(taken(&mut world), ["replace Some(1)", "insert Some(2)"]);

    let mut schedule = Schedule::with_threads(1);
    schedule.add_system(move |mut commands: Commands| commands.insert(e, (Unit(3),)));
    schedule.run(&mut world).unwrap();
    assert_eq!(taken(&mut world), ["replace Some(2)", "insert Some(3)"]);
    assert_eq!(world.get::<Unit>(e), Ok(&Unit(3)));
}

#[test]
fn on_remove_reads_the_value_on_every_path_that_loses_it() {
    let mut world = observed_world();
    let both = ["replace Some(7)", "remove Some(7)"];

    let e = world.spawn((Unit(7), Marker));
    taken(&mut world);
    assert_eq!(world.remove::<(Unit,)>(e), Ok((Unit(7),)));
    assert_eq!(taken(&mut world), both, "remove");

    let e = world.spawn((Unit(7), Marker));
    taken(&mut world);
    assert_eq!(world.take::<(Unit,)>(e), Ok((Unit(7),)));
    assert_eq!(taken(&mut world), both, "take");
    assert!(!world.contains(e));

    let e = world.spawn((Unit(7),));
    taken(&mut world);
    world.despawn(e).unwrap();
    assert_eq!(taken(&mut world), both, "despawn");

    let e = world.spawn((Unit(7),));
    taken(&mut world);
    world.clear();
    assert_eq!(taken(&mut world), both, "clear");
    assert!(!world.contains(e));

    // A subtree's despawn: the child's value is read before the child goes.
    let parent = world.spawn((Marker,));
    let child = world.spawn((Unit(7), ChildOf(parent)));
    taken(&mut world);
    world.despawn(parent).unwrap();
    assert_eq!(taken(&mut world), both, "subtree despawn");
    assert!(!world.contains(child));

    // Through commands.
    let e = world.spawn((Unit(7), Marker));
    taken(&mut world);
    let mut schedule = Schedule::with_threads(1);
    schedule.add_system(move |mut commands: Commands| commands.remove::<(Unit,)>(e));
    schedule.run(&mut world).unwrap();
    assert_eq!(taken(&mut world), both, "remove through commands");
    assert!(world.contains(e) && !world.has::<Unit>(e));
    world.check_invariants();
}

#[test]
fn an_on_remove_observers_commands_run_after_the_removal_completes() {
    let mut world = World::new();
    world.insert_resource(Log::default());
    world.add_observer(
        |t: Trigger<OnRemove<Unit>>, q: Query<RefRO<Unit>>, mut commands: Commands| {
            let last = q.get(t.entity()).unwrap().0;
            // Despawns the entity whose removal it watches, and leaves a grave: both wait for
            // the removal to finish.
            commands.despawn(t.entity());
            commands.spawn((Marker, Unit(last + 100)));
        },
    );
    let e = world.spawn((Unit(5), Marker));
    assert_eq!(world.remove::<(Unit,)>(e), Ok((Unit(5),)));
    assert!(
        !world.contains(e),
        "the observer's despawn ran after the remove"
    );
    let graves: Vec<u32> = world
        .query::<(RefRO<Unit>,)>()
        .iter()
        .map(|(u,)| u.0)
        .collect();
    assert_eq!(graves, [105]);
    world.check_invariants();
}

/// A hook that records a command logging the value the hook could read.
macro_rules! logging_hook {
    ($name:ident, $label:literal) => {
        fn $name(mut world: DeferredWorld<'_>, ctx: HookContext) {
            let value = world.get::<Unit>(ctx.entity).map(|u| u.0).ok();
            world.commands().add(move |world| {
                let line = format!("{} hook's command {value:?}", $label);
                world.resource_mut::<Log>().0.push(line);
            });
        }
    };
}
logging_hook!(add_hook, "add");
logging_hook!(replace_hook, "replace");
logging_hook!(remove_hook, "remove");

#[test]
fn hooks_observers_and_their_commands_follow_one_order() {
    let mut world = World::new();
    world.insert_resource(Log::default());
    world
        .set_component_hooks::<Unit>(
            ComponentHooks::new()
                .on_add(add_hook)
                .on_replace(replace_hook)
                .on_remove(remove_hook),
        )
        .unwrap();
    world.add_observer(
        |t: Trigger<OnReplace<Unit>>,
         q: Query<RefRO<Unit>>,
         mut log: ResMut<Log>,
         mut commands: Commands| {
            let old = q.get(t.entity()).map(|u| u.0).ok();
            log.0.push(format!("replace observer {old:?}"));
            commands.add(|w: &mut World| {
                w.resource_mut::<Log>()
                    .0
                    .push("replace observer's command".into())
            });
        },
    );
    world.add_observer(
        |t: Trigger<OnRemove<Unit>>, q: Query<RefRO<Unit>>, mut log: ResMut<Log>| {
            let old = q.get(t.entity()).map(|u| u.0).ok();
            log.0.push(format!("remove observer {old:?}"));
        },
    );
    world.add_observer(
        |t: Trigger<OnAdd<Unit>>, q: Query<RefRO<Unit>>, mut log: ResMut<Log>| {
            let new = q.get(t.entity()).map(|u| u.0).ok();
            log.0.push(format!("add observer {new:?}"));
        },
    );
    let e = world.spawn((Unit(1),));
    assert_eq!(
        taken(&mut world),
        ["add hook's command Some(1)", "add observer Some(1)"]
    );
    world.despawn(e).unwrap();
    assert_eq!(
        taken(&mut world),
        [
            // Before the change: observers at once, in hook order.
            "replace observer Some(1)",
            "remove observer Some(1)",
            // After it: the recorded commands, in the order they were recorded.
            "replace hook's command Some(1)",
            "replace observer's command",
            "remove hook's command Some(1)",
        ]
    );
    world.check_invariants();
}

/// A churn of overwrites, removals and despawns through commands, with observers that read the
/// old values and record commands of their own: the log and the world are the same on 1 and
/// 4 threads.
fn churn(threads: usize) -> (Vec<String>, Vec<(u32, u32)>) {
    let mut world = observed_world();
    world.add_observer(
        |t: Trigger<OnRemove<Unit>>, q: Query<RefRO<Unit>>, mut commands: Commands| {
            let old = q.get(t.entity()).unwrap().0;
            if old % 3 == 0 {
                commands.spawn((Unit(old / 3),));
            }
        },
    );
    for i in 0..200 {
        world.spawn((Unit(i),));
    }
    let mut schedule = Schedule::with_threads(threads);
    schedule.add_system(|q: Query<(Entity, RefRO<Unit>)>, mut commands: Commands| {
        q.for_each(|(e, u)| match u.0 % 5 {
            0 => commands.despawn(e),
            1 => commands.insert(e, (Unit(u.0 * 7 + 1),)),
            2 => commands.remove::<(Unit,)>(e),
            _ => {}
        });
    });
    for _ in 0..4 {
        schedule.run(&mut world).unwrap();
    }
    world.check_invariants();
    let state = world
        .query::<(Entity, RefRO<Unit>)>()
        .iter()
        .map(|(e, u)| (e.index(), u.0))
        .collect();
    (taken(&mut world), state)
}

#[test]
fn observers_before_the_change_give_the_same_log_on_1_and_4_threads() {
    let one = churn(1);
    assert!(one.0.iter().any(|l| l.starts_with("remove Some(")));
    assert!(
        !one.0.iter().any(|l| l.ends_with("None")),
        "every observer read a value"
    );
    assert_eq!(one, churn(4));
}
