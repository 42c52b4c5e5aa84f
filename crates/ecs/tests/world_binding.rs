//! Systems and query states stay bound to the registry and world they were built for: a system
//! smuggled out of one schedule is refused by another (and ordered when put back into its
//! own), a query state follows its world through `mem::swap` and sees archetypes made after the
//! registry grew, a world swapped by an exclusive system stops later systems with a named
//! panic, and a schedule alternating between worlds keeps each world's commands and values.
//!
//! From the second outside review's attacks on the public API from safe code only (no
//! `unsafe` block, no `unsafe impl`), after issue 12 closed the registry and `System` routes.
//! Each test is named after the behaviour a user relies on and asserts it.
//!
//! Attacks refused at compile time (implementing `Bundle`, `WorldQuery`, `ReadOnlyQuery`,
//! `SystemParam` or `System` without `unsafe`; `ExactQuery` / `QueryFilter` for a foreign
//! query type; calling `World::components_mut`) are listed in the review report, not here.
//!
//! Small and mostly single-threaded, so Miri runs it:
//! `MIRIFLAGS="-Zmiri-tree-borrows" cargo +nightly miri test -p ecs --test world_binding`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs::core::Components;
use ecs::prelude::*;
use ecs::sched::{IntoSystem, System, SystemConfig};

mod common;
use common::{markers, message, Marker, Pos};

fn is_err_named(result: Result<SystemConfig<'_>, ScheduleError>, name: &str) -> bool {
    matches!(result.err(), Some(ScheduleError::ForeignRegistry { system }) if system == name)
}

/// Builds the wrapped system with the registry it is given, and hands a second system built
/// from the same function against the same registry to `stash`: a system smuggled out of one
/// schedule's `add_system`.
struct Smuggle<S, T> {
    system: S,
    twin: Option<T>,
    stash: std::sync::Arc<std::sync::Mutex<Option<Box<dyn System>>>>,
}

impl<M, S: IntoSystem<M>, T: IntoSystem<M>> IntoSystem<Smuggle<M, M>> for Smuggle<S, T> {
    fn into_system(self, registry: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        let twin = self.twin.expect("a twin").into_system(registry)?;
        *self.stash.lock().unwrap() = Some(twin);
        self.system.into_system(registry)
    }
}

/// Passes a system that was already built on.
struct Prebuilt(Box<dyn System>);

impl IntoSystem<Prebuilt> for Prebuilt {
    fn into_system(self, _: &mut Components) -> Result<Box<dyn System>, ScheduleError> {
        Ok(self.0)
    }
}

fn grow(mut q: Query<RefRW<Pos>>) {
    q.for_each(|p| p.0 += 1);
}

fn shrink(mut q: Query<RefRW<Pos>>) {
    q.for_each(|p| p.0 -= 1);
}

#[test]
fn a_system_smuggled_out_of_one_schedule_is_refused_by_another() {
    let stash = std::sync::Arc::new(std::sync::Mutex::new(None));
    let mut first = Schedule::single_threaded();
    first.add_system(Smuggle {
        system: grow,
        twin: Some(shrink),
        stash: stash.clone(),
    });
    let smuggled = stash.lock().unwrap().take().expect("stashed");
    let mut second = Schedule::single_threaded();
    second.add_system(grow);
    assert!(is_err_named(
        second.try_add_system(Prebuilt(smuggled)),
        "shrink"
    ));
}

/// Put back into the schedule whose registry built it, the twin is accepted and ordered
/// against the other writer of `Pos`, so both writes land.
#[test]
fn a_system_smuggled_back_into_its_own_schedule_is_ordered_against_other_writers() {
    let stash = std::sync::Arc::new(std::sync::Mutex::new(None));
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(Smuggle {
        system: grow,
        twin: Some(shrink),
        stash: stash.clone(),
    });
    let smuggled = stash.lock().unwrap().take().expect("stashed");
    schedule.add_system(Prebuilt(smuggled));
    assert!(
        schedule.explain().contains("grow -> shrink: conflict on"),
        "{}",
        schedule.explain()
    );
    let mut world = World::new();
    let e = world.spawn((Pos(10),));
    for _ in 0..20 {
        schedule.run(&mut world).unwrap();
    }
    assert_eq!(world.get::<Pos>(e), Ok(&Pos(10)));
}

#[test]
fn a_query_state_follows_the_world_it_was_built_for_through_mem_swap() {
    let mut a = World::new();
    let mut b = World::new();
    a.spawn((Pos(1),));
    b.spawn((Pos(2),));
    b.spawn((Pos(3),));
    let mut state = QueryState::<RefRO<Pos>>::new(&mut a);
    std::mem::swap(&mut a, &mut b);
    // `b` now holds the world the state was built for: it works there...
    let seen: Vec<u32> = state.iter(&b).map(|p| p.0).collect();
    assert_eq!(seen, [1]);
    // ...and is refused with the world now in `a`, whose archetypes it never cached.
    let refused = catch_unwind(AssertUnwindSafe(|| state.iter(&a).count())).unwrap_err();
    assert!(
        message(&*refused).contains("used with a world it was not built for"),
        "{}",
        message(&*refused)
    );
}

#[test]
fn a_query_state_sees_archetypes_made_after_the_registry_grew() {
    struct T0;
    struct T1(#[allow(dead_code)] u64);
    struct T2(#[allow(dead_code)] [u8; 3]);
    let mut world = World::with_test_chunk_size(256);
    let mut state = QueryState::<(Entity, RefRW<Pos>)>::new(&mut world);
    let e0 = world.spawn((Pos(0), T0));
    world.register_component::<u16>();
    let e1 = world.spawn((T1(9), Pos(1)));
    let more: Vec<Entity> = world
        .spawn_batch((2..60).map(|i| (T2([1, 2, 3]), Pos(i), T0)))
        .collect();
    state.for_each(&mut world, |(_, p)| p.0 *= 10);
    assert_eq!(world.get::<Pos>(e0), Ok(&Pos(0)));
    assert_eq!(world.get::<Pos>(e1), Ok(&Pos(10)));
    for (i, e) in more.iter().enumerate() {
        assert_eq!(world.get::<Pos>(*e), Ok(&Pos((i as u32 + 2) * 10)));
    }
    world.check_invariants();
}

#[test]
fn a_world_swapped_by_an_exclusive_system_stops_later_systems_with_a_named_panic() {
    struct Spare(World);
    fn swap_worlds(world: &mut World) {
        let Spare(mut spare) = world.remove_resource::<Spare>().expect("a spare world");
        std::mem::swap(world, &mut spare);
        world.insert_resource(Spare(spare));
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(swap_worlds);
    schedule.add_system(grow).after("swap_worlds");
    let mut world = World::new();
    let e = world.spawn((Pos(1),));
    let mut spare = World::new();
    let s = spare.spawn((Pos(100),));
    world.insert_resource(Spare(spare));
    let payload = catch_unwind(AssertUnwindSafe(|| schedule.run(&mut world))).unwrap_err();
    assert!(
        message(&*payload).contains("system `grow` run on a world it was not initialised for"),
        "{}",
        message(&*payload)
    );
    // `world` is now the spare; nothing was written in either world.
    assert_eq!(world.get::<Pos>(s), Ok(&Pos(100)));
    let Spare(original) = world.remove_resource::<Spare>().unwrap();
    assert_eq!(original.get::<Pos>(e), Ok(&Pos(1)));
    world.check_invariants();
    original.check_invariants();
}

#[test]
fn a_schedule_alternating_between_worlds_keeps_each_worlds_commands_and_values() {
    fn mark_one(mut commands: Commands) {
        commands.spawn((Marker,));
    }
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(grow);
    schedule.add_system(mark_one);
    let mut a = World::new();
    let mut b = World::new();
    let ea = a.spawn((Pos(0),));
    let eb = b.spawn((Pos(100),));
    for round in 0..6 {
        schedule.run(&mut a).unwrap();
        if round % 2 == 0 {
            schedule.run(&mut b).unwrap();
        }
    }
    assert_eq!(
        (a.get::<Pos>(ea), b.get::<Pos>(eb)),
        (Ok(&Pos(6)), Ok(&Pos(103)))
    );
    assert_eq!((markers(&mut a), markers(&mut b)), (6, 3));
    a.check_invariants();
    b.check_invariants();
}
