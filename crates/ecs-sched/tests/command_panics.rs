//! The policy for the rest of a flush when a command, hook or observer panics: the panicking
//! command stops the run's commands, every later one is dropped, and the ids their spawns
//! reserved are freed: no live entity is ever left without the components its spawn promised.
//! The panic that reaches the caller names the system whose command it was.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::World;
use ecs_query::{QueryExt, RefRO};
use ecs_sched::{Commands, ObserveExt, OnAdd, ResMut, Schedule, Trigger};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Hp(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mark;

/// How many `Hp` observers have seen; the observer panics on the 4th.
#[derive(Default)]
struct Seen(u32);

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn six_spawns(mut commands: Commands) {
    for i in 0..6 {
        commands.spawn((Hp(i), Mark));
    }
}

fn whole_and_live(world: &mut World) -> (usize, usize) {
    let whole = world.query::<(RefRO<Hp>, RefRO<Mark>)>().iter().count();
    (whole, world.len() as usize)
}

#[test]
fn an_observer_panicking_during_spawns_leaves_no_empty_entity_and_names_the_system() {
    for threads in [1, 2] {
        let mut world = World::new();
        world.insert_resource(Seen::default());
        world.add_observer(|_: Trigger<OnAdd<Hp>>, mut seen: ResMut<Seen>| {
            seen.0 += 1;
            if seen.0 == 4 {
                panic!("observer refused");
            }
        });
        let mut schedule = Schedule::with_threads(threads);
        schedule.add_system(six_spawns);
        let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
        let message = message(&*payload);
        assert!(
            message.contains("six_spawns") && message.ends_with("panicked: observer refused"),
            "{message}"
        );
        // The four spawns made before the panic are whole; the two after it were dropped
        // and their ids freed, not left alive and empty.
        assert_eq!(whole_and_live(&mut world), (4, 4), "{threads} thread(s)");
        world.check_invariants();

        // The next run starts clean.
        world.resource_mut::<Seen>().0 = 100;
        schedule.run(&mut world).unwrap();
        assert_eq!(whole_and_live(&mut world), (10, 10));
    }
}

#[test]
fn commands_of_later_systems_dropped_by_a_panic_free_their_reserved_ids() {
    fn bomb(mut commands: Commands) {
        commands.add(|_| panic!("command failed"));
    }
    let mut world = World::new();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(bomb).named("bomb");
    schedule.add_system(six_spawns).after("bomb");
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    assert!(message(&*payload).contains("bomb"));
    assert_eq!(whole_and_live(&mut world), (0, 0));
    world.check_invariants();
}
