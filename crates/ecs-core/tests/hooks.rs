//! Component hooks on every structural path: which hooks run, in which order, what they can
//! read, the commands they record, and a world that stays consistent when one panics.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use ecs_core::{
    ComponentHooks, DeferredWorld, Entity, HookContext, Lifecycle, ObserverKey, World, WorldError,
};

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Hp(u32);
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Armor(u32);
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Plain(u32);
#[derive(Debug, PartialEq, Eq)]
struct Marked;

/// One hook call: (hook, entity, type, the value readable at that moment).
type Seen = (&'static str, Entity, &'static str, Option<u32>);

/// What the hooks saw.
#[derive(Default)]
struct Log(Mutex<Vec<Seen>>);

impl Log {
    fn take(world: &World) -> Vec<Seen> {
        std::mem::take(&mut *world.resource::<Log>().0.lock().unwrap())
    }
}

fn value(world: &World, ctx: HookContext) -> (&'static str, Option<u32>) {
    let name = world.components().info(ctx.component).name();
    let value = if name.ends_with("Hp") {
        world.get::<Hp>(ctx.entity).ok().map(|v| v.0)
    } else {
        world.get::<Armor>(ctx.entity).ok().map(|v| v.0)
    };
    (name.rsplit("::").next().unwrap(), value)
}

macro_rules! logging_hook {
    ($name:ident, $label:literal) => {
        fn $name(world: DeferredWorld<'_>, ctx: HookContext) {
            let (name, v) = value(&world, ctx);
            let label = if ctx.despawning {
                concat!($label, "(despawn)")
            } else {
                $label
            };
            world
                .resource::<Log>()
                .0
                .lock()
                .unwrap()
                .push((label, ctx.entity, name, v));
        }
    };
}
logging_hook!(on_add, "add");
logging_hook!(on_insert, "insert");
logging_hook!(on_replace, "replace");
logging_hook!(on_remove, "remove");

fn all_hooks() -> ComponentHooks {
    ComponentHooks::new()
        .on_add(on_add)
        .on_insert(on_insert)
        .on_replace(on_replace)
        .on_remove(on_remove)
}

fn world() -> World {
    let mut world = World::new();
    world.insert_resource(Log::default());
    world.set_component_hooks::<Hp>(all_hooks()).unwrap();
    world.set_component_hooks::<Armor>(all_hooks()).unwrap();
    world
}

#[test]
fn spawn_runs_on_add_then_on_insert_in_bundle_order() {
    let mut world = world();
    let e = world.spawn((Armor(2), Plain(0), Hp(1)));
    assert_eq!(
        Log::take(&world),
        [
            ("add", e, "Armor", Some(2)),
            ("add", e, "Hp", Some(1)),
            ("insert", e, "Armor", Some(2)),
            ("insert", e, "Hp", Some(1)),
        ]
    );
    world.check_invariants();
}

#[test]
fn spawn_batch_runs_hooks_per_entity_in_spawn_order() {
    let mut world = world();
    let ids: Vec<Entity> = world.spawn_batch((0..3).map(|i| (Hp(i),))).collect();
    let expected: Vec<_> = ids
        .iter()
        .enumerate()
        .flat_map(|(i, &e)| {
            [
                ("add", e, "Hp", Some(i as u32)),
                ("insert", e, "Hp", Some(i as u32)),
            ]
        })
        .collect();
    assert_eq!(Log::take(&world), expected);
}

#[test]
fn insert_replaces_before_and_adds_after() {
    let mut world = world();
    let e = world.spawn((Hp(1),));
    Log::take(&world);
    world.insert(e, (Hp(5), Armor(3))).unwrap();
    assert_eq!(
        Log::take(&world),
        [
            ("replace", e, "Hp", Some(1)), // the old value, still there
            ("add", e, "Armor", Some(3)),
            ("insert", e, "Hp", Some(5)),
            ("insert", e, "Armor", Some(3)),
        ]
    );
    // Overwriting in place (same archetype) runs replace and insert, no add.
    world.insert(e, (Armor(4),)).unwrap();
    assert_eq!(
        Log::take(&world),
        [
            ("replace", e, "Armor", Some(3)),
            ("insert", e, "Armor", Some(4)),
        ]
    );
    world.check_invariants();
}

#[test]
fn remove_take_and_despawn_run_replace_then_remove_with_the_value_readable() {
    let mut world = world();
    let e = world.spawn((Hp(1), Armor(2), Plain(3)));
    Log::take(&world);
    assert_eq!(world.remove::<(Armor,)>(e), Ok((Armor(2),)));
    assert_eq!(
        Log::take(&world),
        [
            ("replace", e, "Armor", Some(2)),
            ("remove", e, "Armor", Some(2))
        ]
    );
    // Removing what the entity lacks fails before any hook runs.
    assert!(world.remove::<(Armor,)>(e).is_err());
    assert!(Log::take(&world).is_empty());

    let (hp,) = world.take::<(Hp,)>(e).unwrap();
    assert_eq!(hp, Hp(1));
    assert_eq!(
        Log::take(&world),
        [("replace", e, "Hp", Some(1)), ("remove", e, "Hp", Some(1))]
    );

    let d = world.spawn((Armor(7), Hp(8)));
    Log::take(&world);
    world.despawn(d).unwrap();
    // Despawn: component-id order (Hp was registered first), flagged as a despawn.
    assert_eq!(
        Log::take(&world),
        [
            ("replace(despawn)", d, "Hp", Some(8)),
            ("replace(despawn)", d, "Armor", Some(7)),
            ("remove(despawn)", d, "Hp", Some(8)),
            ("remove(despawn)", d, "Armor", Some(7)),
        ]
    );
    assert_eq!(
        world.despawn(d),
        Err(ecs_core::EntityError::NoSuchEntity(d))
    );
    assert!(Log::take(&world).is_empty());
    world.check_invariants();
}

#[test]
fn clear_runs_the_despawn_hooks_of_every_entity() {
    let mut world = world();
    let a = world.spawn((Hp(1),));
    let b = world.spawn((Plain(0),));
    let c = world.spawn((Armor(3),));
    Log::take(&world);
    world.clear();
    let log = Log::take(&world);
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(log.contains(&("remove(despawn)", a, "Hp", Some(1))));
    assert!(log.contains(&("remove(despawn)", c, "Armor", Some(3))));
    assert!(log.iter().all(|&(_, e, _, _)| e != b));
    assert!(world.is_empty());
}

#[test]
fn restore_and_compaction_run_no_hooks() {
    let mut world = world();
    world.register_clone::<Hp>();
    world.register_clone::<Armor>();
    let ids: Vec<Entity> = world
        .spawn_batch((0..if cfg!(miri) { 20 } else { 100 }).map(|i| (Hp(i), Armor(i))))
        .collect();
    let snap = world.snapshot().unwrap();
    for &e in &ids[..ids.len() / 2] {
        world.despawn(e).unwrap();
    }
    Log::take(&world);
    world.compact();
    assert!(
        Log::take(&world).is_empty(),
        "compaction moves no component"
    );
    world.restore(&snap).unwrap();
    assert!(Log::take(&world).is_empty(), "restore runs no hooks");
    assert_eq!(world.get::<Hp>(ids[3]), Ok(&Hp(3)));
    world.check_invariants();
}

/// A world holding values that need a drop takes another path to empty itself for the
/// refill; it too runs no hook or observer, and frees and refills every slot.
#[test]
fn restore_runs_no_hooks_when_values_need_dropping() {
    #[derive(Clone, Debug, PartialEq)]
    struct Name(String);
    let mut world = world();
    world.register_clone::<Hp>();
    world.register_clone::<Armor>();
    world.register_clone::<Name>();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    world.add_observer_fn(
        ObserverKey::Lifecycle(Lifecycle::Remove, std::any::TypeId::of::<Hp>()),
        None,
        move |_, _| {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        },
    );
    let named: Vec<Entity> = (0..40)
        .map(|i| world.spawn((Hp(i), Name(format!("n{i}")))))
        .collect();
    let plain: Vec<Entity> = (0..40).map(|i| world.spawn((Armor(i),))).collect();
    let snap = world.snapshot().unwrap();
    world.despawn(named[5]).unwrap();
    world.insert_one(plain[2], Hp(99)).unwrap();
    let late = world.spawn((Name("late".into()), Armor(7)));
    Log::take(&world);
    seen.store(0, std::sync::atomic::Ordering::Relaxed);

    world.restore(&snap).unwrap();
    assert!(Log::take(&world).is_empty(), "restore runs no hooks");
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "nor observers"
    );
    assert!(!world.contains(late));
    assert_eq!(world.get::<Name>(named[5]), Ok(&Name("n5".into())));
    assert!(!world.has::<Hp>(plain[2]));
    assert_eq!(world.len(), 80);
    world.check_invariants();
    // The restored world goes on working: new entities take fresh ids.
    let fresh = world.spawn((Name("fresh".into()),));
    assert!(!named.contains(&fresh) && !plain.contains(&fresh));
    world.check_invariants();
}

#[test]
fn a_hook_records_commands_that_run_before_the_change_returns() {
    fn mark(mut world: DeferredWorld<'_>, ctx: HookContext) {
        // No structural change while the row moves: record one for afterwards.
        world.commands().insert(ctx.entity, (Marked,));
    }
    fn unmark(mut world: DeferredWorld<'_>, ctx: HookContext) {
        world.commands().remove::<(Marked,)>(ctx.entity);
    }
    let mut world = World::new();
    world
        .set_component_hooks::<Hp>(ComponentHooks::new().on_add(mark).on_remove(unmark))
        .unwrap();
    let e = world.spawn((Hp(1),));
    assert!(world.has::<Marked>(e));
    world.remove::<(Hp,)>(e).unwrap();
    assert!(!world.has::<Marked>(e));
    // A batch's hooks may move the new rows; the ids handed back are still right.
    let n = if cfg!(miri) { 24 } else { 200 };
    let ids: Vec<Entity> = world.spawn_batch((0..n).map(|i| (Hp(i),))).collect();
    for (i, &e) in ids.iter().enumerate() {
        assert_eq!(world.get::<Hp>(e), Ok(&Hp(i as u32)));
        assert!(world.has::<Marked>(e));
    }
    world.check_invariants();
}

#[test]
fn a_panicking_hook_leaves_the_world_consistent() {
    fn boom(world: DeferredWorld<'_>, ctx: HookContext) {
        if world.get::<Hp>(ctx.entity).is_ok_and(|hp| hp.0 == 13) {
            panic!("unlucky");
        }
    }
    fn record_then_boom(mut world: DeferredWorld<'_>, ctx: HookContext) {
        world.commands().insert(ctx.entity, (Marked,));
        boom(world, ctx);
    }
    let mut world = World::new();
    world
        .set_component_hooks::<Hp>(
            ComponentHooks::new()
                .on_add(record_then_boom)
                .on_remove(boom),
        )
        .unwrap();
    // After the change: the spawn stands, and what the hook recorded before panicking runs
    // (every queued command does) before the panic goes on.
    let r = catch_unwind(AssertUnwindSafe(|| world.spawn((Hp(13), Plain(1)))));
    assert!(r.is_err());
    world.check_invariants();
    assert_eq!(world.len(), 1);
    let e = world
        .archetypes()
        .iter()
        .find(|a| a.len() == 1)
        .unwrap()
        .chunks()[0]
        .entities()[0];
    assert!(world.has::<Marked>(e));
    // Before the change: the despawn does not happen.
    let r = catch_unwind(AssertUnwindSafe(|| world.despawn(e)));
    assert!(r.is_err());
    assert!(world.contains(e));
    world.check_invariants();
    // The next change starts with an empty queue and runs its commands.
    let f = world.spawn((Hp(1),));
    assert!(world.has::<Marked>(f));
    world.check_invariants();
}

/// A value whose `Drop` panics when it holds 13.
struct Touchy(u32);
impl Drop for Touchy {
    fn drop(&mut self) {
        if self.0 == 13 && !std::thread::panicking() {
            panic!("dropped an unlucky value");
        }
    }
}

#[test]
fn commands_of_an_insert_that_panics_after_its_replace_hooks_never_run_later() {
    // `on_replace` records a command before the insert moves the row; the old value's `Drop`
    // then panics inside the insert, so the command is never applied: not by this insert, and
    // not by any later change (the hooks' pending work is parked in the world meanwhile).
    fn mark(mut world: DeferredWorld<'_>, ctx: HookContext) {
        world.commands().insert(ctx.entity, (Marked,));
    }
    let mut world = World::new();
    world
        .set_component_hooks::<Touchy>(ComponentHooks::new().on_replace(mark))
        .unwrap();
    let e = world.spawn((Touchy(13),));
    let r = catch_unwind(AssertUnwindSafe(|| world.insert(e, (Touchy(1),))));
    assert!(r.is_err(), "the old value's drop panicked");
    world.check_invariants();
    assert!(!world.has::<Marked>(e));
    // Later changes, hooked and not, on this entity and others, run only their own hooks.
    let f = world.spawn((Plain(1),));
    world.insert(f, (Touchy(2),)).unwrap();
    world.remove::<(Plain,)>(f).unwrap();
    assert!(!world.has::<Marked>(e) && !world.has::<Marked>(f));
    world.insert(f, (Touchy(3),)).unwrap(); // an overwrite: its own `on_replace` marks `f`
    assert!(world.has::<Marked>(f) && !world.has::<Marked>(e));
    world.check_invariants();
}

#[test]
fn installing_hooks_is_checked() {
    fn noop(_: DeferredWorld<'_>, _: HookContext) {}
    let mut world = World::new();
    assert!(!world.components().any_hooks());
    world.spawn((Plain(1),));
    assert!(
        !world.components().any_hooks(),
        "a world using no hooked type takes the plain paths"
    );
    assert_eq!(
        world.set_component_hooks::<Plain>(ComponentHooks::new().on_add(noop)),
        Err(WorldError::HooksAfterUse {
            component: std::any::type_name::<Plain>()
        })
    );
    world
        .set_component_hooks::<Hp>(ComponentHooks::new().on_add(noop))
        .unwrap();
    let err = world
        .set_component_hooks::<Hp>(ComponentHooks::new())
        .unwrap_err();
    assert!(err.to_string().contains("already has component hooks"));
    assert!(matches!(
        world.set_component_hooks::<ecs_core::ChildOf>(ComponentHooks::new()),
        Err(WorldError::HooksAlreadySet { .. })
    ));
}

#[test]
fn hooks_on_a_type_registered_only_later_still_run() {
    // Hooks installed before the world ever saw the type: it becomes hooked when registered
    // by the insert that first adds it, and that insert runs its hooks.
    let mut world = world();
    let e = world.spawn((Plain(1),));
    Log::take(&world);
    world.insert(e, (Armor(9),)).unwrap();
    assert_eq!(
        Log::take(&world),
        [
            ("add", e, "Armor", Some(9)),
            ("insert", e, "Armor", Some(9))
        ]
    );
}

#[test]
fn a_bundle_found_hook_free_runs_hooks_once_its_type_gains_an_observer_or_requirement() {
    use std::any::TypeId;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use ecs_core::{ChildOf, Lifecycle, ObserverKey};

    // A world where some type has hooks (`ChildOf`), and `Plain` has none: each path below
    // first finds `(Plain,)` hook-free, and remembers that.
    let mut world = World::new();
    let parent = world.spawn((Armor(0),));
    world.spawn((ChildOf(parent),));
    assert!(world.components().any_hooks());
    let e = world.spawn((Plain(1),));
    world.remove::<(Plain,)>(e).unwrap();
    world.insert(e, (Plain(2),)).unwrap();
    world.spawn_batch([(Plain(3),)]).for_each(drop);
    world.despawn(e).unwrap();

    // `Plain` gains an observer of its adds and a required component after all that.
    let adds = Arc::new(AtomicU32::new(0));
    let seen = adds.clone();
    world.add_observer_fn(
        ObserverKey::Lifecycle(Lifecycle::Add, TypeId::of::<Plain>()),
        None,
        move |_, _| {
            seen.fetch_add(1, Ordering::Relaxed);
        },
    );
    world
        .register_required_with::<Plain, Marked>(|| Marked)
        .unwrap();

    let a = world.spawn((Plain(4),));
    assert!(world.has::<Marked>(a), "spawn");
    let b = world.spawn((Armor(1),));
    world.insert(b, (Plain(5),)).unwrap();
    assert!(world.has::<Marked>(b), "insert");
    let batch: Vec<Entity> = world.spawn_batch([(Plain(6),), (Plain(7),)]).collect();
    assert!(batch.iter().all(|&c| world.has::<Marked>(c)), "spawn_batch");
    assert_eq!(
        adds.load(Ordering::Relaxed),
        4,
        "one add per entity that gained `Plain`"
    );
    world.check_invariants();
}
