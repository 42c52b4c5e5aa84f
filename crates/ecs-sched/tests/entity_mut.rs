//! `EntityMut` as a query element: every component of each row, readable and writable, declared
//! as a write of every component, so it conflicts with anything that touches a component
//! (unless filters prove the two disjoint); writes mark only the component and row written.

use std::time::Duration;

use ecs_core::{Entity, EntityRef, World};
use ecs_query::{
    Added, Changed, EntityMut, QueryExt, QueryState, RefRO, RefRW, With, Without, EVERY_COMPONENT,
};
use ecs_sched::{Query, ResMut, Schedule, ScheduleError, Single};

#[derive(Clone, Debug, PartialEq)]
struct Hp(u32);
#[derive(Clone, Debug, PartialEq)]
struct Name(&'static str);
struct Unit;
struct Player;

fn world() -> World {
    let mut world = World::new();
    world.spawn((Unit, Hp(10), Name("a")));
    world.spawn((Unit, Hp(20)));
    world.spawn((Name("tree"),));
    world.spawn((Player, Hp(99), Name("me")));
    world
}

fn hps(world: &mut World) -> Vec<u32> {
    let mut v: Vec<u32> = world.query::<RefRO<Hp>>().iter().map(|h| h.0).collect();
    v.sort_unstable();
    v
}

#[test]
fn items_read_and_write_every_component_of_their_row() {
    let mut world = world();
    world.query::<EntityMut>().for_each(|mut e| {
        let bonus = if e.has::<Unit>() { 1 } else { 100 };
        if let Some(hp) = e.get_mut::<Hp>() {
            hp.0 += bonus;
        }
        if e.get::<Name>() == Some(&Name("tree")) {
            e.get_mut::<Name>().unwrap().0 = "stump";
        }
    });
    assert_eq!(hps(&mut world), [11, 21, 199]);
    let names: Vec<&str> = world.query::<RefRO<Name>>().iter().map(|n| n.0).collect();
    assert!(names.contains(&"stump") && !names.contains(&"tree"));
    // Filters narrow it; views of many rows live at once; chunk slices reach every row.
    let mut values: Vec<&mut Hp> = world
        .query_filtered::<EntityMut, With<Unit>>()
        .iter()
        .filter_map(|e| e.into_mut::<Hp>())
        .collect();
    assert_eq!(values.len(), 2);
    values.iter_mut().for_each(|h| h.0 = 0);
    let mut rows = 0;
    world.query::<EntityMut>().for_each_chunk(|mut view| {
        let mut col = view.columns();
        rows += col.len();
        for mut e in col.iter_mut() {
            assert_eq!(e.id(), e.as_readonly().id());
            if let Some(h) = e.get_mut::<Hp>() {
                h.0 += 1;
            }
        }
    });
    assert_eq!(rows, 4);
    assert_eq!(hps(&mut world), [1, 1, 200]);
}

#[test]
fn a_write_marks_only_that_component_of_that_row() {
    let mut world = world();
    let mut hp_changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    let mut name_changed = QueryState::<Entity, Changed<Name>>::new(&mut world);
    let mut hp_added = QueryState::<Entity, Added<Hp>>::new(&mut world);
    assert_eq!(
        hp_changed.iter(&world).count(),
        3,
        "everything is new at first"
    );
    assert_eq!(name_changed.iter(&world).count(), 3);
    assert_eq!(hp_added.iter(&world).count(), 3);
    world.advance_tick();
    let me = world
        .query_filtered::<Entity, With<Player>>()
        .iter()
        .next()
        .unwrap();
    // Look at everything, write one component of one row.
    world.query::<EntityMut>().for_each(|mut e| {
        let _ = e.get::<Hp>();
        let _ = e.get::<Name>();
        if e.has::<Player>() {
            e.get_mut::<Hp>().unwrap().0 += 1;
        }
    });
    assert_eq!(hp_changed.iter(&world).collect::<Vec<_>>(), [me]);
    assert_eq!(name_changed.iter(&world).count(), 0, "Name was only read");
    assert_eq!(hp_added.iter(&world).count(), 0, "a write adds nothing");
}

#[test]
#[should_panic(expected = "Hp")]
fn an_entity_mut_beside_a_reader_in_one_query_panics_naming_the_component() {
    let mut world = world();
    let _ = QueryState::<(EntityMut, RefRO<Hp>)>::new(&mut world);
}

#[test]
fn an_entity_mut_beside_an_entity_ref_in_one_query_panics_naming_every_component() {
    let mut world = world();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = QueryState::<(EntityRef, EntityMut)>::new(&mut world);
    }));
    let message = *caught.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains(EVERY_COMPONENT), "{message}");
    // Entities and change filters touch no value: they may ride along.
    let mut ok = QueryState::<(Entity, EntityMut), Changed<Hp>>::new(&mut world);
    assert_eq!(ok.iter_mut(&mut world).count(), 3);
}

fn writes_everything(mut q: Query<EntityMut>) {
    q.for_each(|mut e| {
        if let Some(h) = e.get_mut::<Hp>() {
            h.0 += 1;
        }
    });
}
fn writes_units(mut q: Query<EntityMut, With<Unit>>) {
    q.for_each(|mut e| {
        if let Some(h) = e.get_mut::<Hp>() {
            h.0 *= 2;
        }
    });
}
fn reads_non_units(q: Query<RefRO<Hp>, Without<Unit>>) {
    assert!(q.iter().count() > 0);
}
fn reads_everything(q: Query<EntityRef>) {
    assert!(q.iter().count() > 0);
}
fn counts_entities(q: Query<Entity>) {
    assert_eq!(q.iter().count(), 4);
}
fn heals(mut q: Query<RefRW<Hp>>) {
    q.for_each(|h| h.0 += 3);
}

#[test]
fn systems_conflict_with_anything_touching_a_component_unless_filters_separate_them() {
    let mut schedule = Schedule::new();
    schedule.add_system(writes_everything);
    schedule.add_system(reads_everything);
    schedule.add_system(counts_entities);
    schedule.add_system(writes_units);
    schedule.add_system(reads_non_units);
    schedule.add_system(heals);
    let dot = schedule.to_dot();
    let has_edge = |a: &str, b: &str| {
        dot.lines().any(|l| {
            l.contains("->") && l.contains(&format!("\"{a}\"")) && l.contains(&format!("\"{b}\""))
        })
    };
    // Writing everything meets a whole-entity reader, a later writer and a later reader...
    assert!(has_edge("writes_everything", "reads_everything"), "{dot}");
    assert!(has_edge("writes_everything", "writes_units"), "{dot}");
    assert!(has_edge("writes_everything", "heals"), "{dot}");
    // ...but not a query of ids only, which touches no component.
    assert!(!has_edge("writes_everything", "counts_entities"), "{dot}");
    // `With<Unit>` against `Without<Unit>`: disjoint, no edge.
    assert!(!has_edge("writes_units", "reads_non_units"), "{dot}");
    assert!(has_edge("writes_units", "heals"), "{dot}");
    let explain = schedule.explain();
    assert!(explain.contains("every component (EntityMut)"), "{explain}");
    let mut world = world();
    schedule.run(&mut world).unwrap();
    // In insertion order: +1 for all, ×2 for units, +3 for all.
    assert_eq!(hps(&mut world), [25, 45, 103]);
}

#[test]
fn one_system_cannot_hold_an_entity_mut_and_anything_that_may_meet_it() {
    fn with_reader(_all: Query<EntityMut>, _r: Query<RefRO<Hp>>) {}
    fn with_view(_all: Query<EntityMut>, _r: Query<EntityRef>) {}
    fn separated(_units: Query<EntityMut, With<Unit>>, _r: Query<RefRW<Hp>, Without<Unit>>) {}
    fn with_ids(_all: Query<EntityMut>, _ids: Query<Entity>) {}
    let mut schedule = Schedule::single_threaded();
    for result in [
        schedule.try_add_system(with_reader).err(),
        schedule.try_add_system(with_view).err(),
    ] {
        match result {
            Some(ScheduleError::ConflictingParams { .. }) => {}
            other => panic!("expected ConflictingParams, got {other:?}"),
        }
    }
    assert!(schedule.try_add_system(separated).is_ok());
    assert!(schedule.try_add_system(with_ids).is_ok());
}

/// A schedule where `EntityMut` systems write in parallel loops and a `Changed<Hp>` reader
/// counts what they wrote, 30 frames on 1, 2 and 4 threads: identical worlds and counts.
#[test]
fn parallel_writers_and_change_readers_agree_on_any_thread_count() {
    fn damage(mut q: Query<EntityMut, With<Unit>>) {
        q.par_for_each(|mut e| {
            let id = e.id().index();
            if id % 3 == 0 {
                e.get_mut::<Hp>().unwrap().0 += id;
            }
        });
    }
    fn rename(mut q: Query<EntityMut, Without<Unit>>) {
        q.par_for_each(|mut e| {
            if let Some(n) = e.get_mut::<Name>() {
                n.0 = if n.0 == "me" { "you" } else { "me" };
            }
        });
    }
    fn count_changed(q: Query<Entity, Changed<Hp>>, mut seen: ResMut<Vec<u32>>) {
        let mut ids: Vec<u32> = q.iter().map(|e| e.index()).collect();
        ids.sort_unstable();
        seen.extend(ids);
    }
    fn player(mut me: Single<EntityMut, With<Player>>) {
        me.get_mut::<Hp>().unwrap().0 -= 1;
    }
    let n = if cfg!(miri) { 24 } else { 3000 };
    let frames = if cfg!(miri) { 3 } else { 30 };
    let run = |threads: usize| {
        let mut world = world();
        world
            .spawn_batch((0..n).map(|i| (Unit, Hp(i))))
            .for_each(drop);
        world.insert_resource(Vec::<u32>::new());
        let mut schedule = Schedule::with_threads(threads);
        schedule.set_inline_threshold(Duration::ZERO);
        schedule.add_system(damage);
        schedule.add_system(rename);
        schedule.add_system(player);
        schedule.add_system(count_changed);
        for _ in 0..frames {
            schedule.run(&mut world).unwrap();
            world.advance_tick();
        }
        let mut state: Vec<(u32, Option<u32>, Option<&'static str>)> = world
            .query::<EntityRef>()
            .iter()
            .map(|e| {
                (
                    e.id().index(),
                    e.get::<Hp>().map(|h| h.0),
                    e.get::<Name>().map(|n| n.0),
                )
            })
            .collect();
        state.sort_unstable();
        (state, world.resource::<Vec<u32>>().clone())
    };
    let one = run(1);
    // Frame 1 sees every Hp row (new); later frames the units written plus the player.
    let written = (0..n + 4).filter(|i| i % 3 == 0).count();
    assert!(one.1.len() > frames * written / 2, "{}", one.1.len());
    assert_eq!(run(2), one);
    assert_eq!(run(4), one);
}

/// Filtered views declare only their listed types: a `FilteredEntityMut<(Hp,)>` system runs
/// beside a reader of `Name`, is ordered against a reader of `Hp`, and touches nothing else.
#[test]
fn filtered_views_declare_and_touch_only_their_listed_types() {
    use ecs_query::{FilteredEntityMut, FilteredEntityRef};
    fn hp_only(mut q: Query<FilteredEntityMut<(Hp,)>>) {
        q.for_each(|mut e| {
            assert!(e.get_mut::<Name>().is_none(), "Name is not listed");
            if let Some(h) = e.get_mut::<Hp>() {
                h.0 += 5;
            }
        });
    }
    fn names(q: Query<RefRO<Name>>) {
        assert_eq!(q.iter().count(), 3);
    }
    fn hp_view(q: Query<FilteredEntityRef<(Hp, Unit)>>, mut total: ResMut<u32>) {
        *total = q.iter().filter_map(|e| e.get::<Hp>()).map(|h| h.0).sum();
        assert!(q.iter().all(|e| e.get::<Name>().is_none()));
    }
    let mut schedule = Schedule::new();
    schedule.add_system(hp_only);
    schedule.add_system(names);
    schedule.add_system(hp_view);
    let dot = schedule.to_dot();
    let has_edge = |a: &str, b: &str| {
        dot.lines().any(|l| {
            l.contains("->") && l.contains(&format!("\"{a}\"")) && l.contains(&format!("\"{b}\""))
        })
    };
    assert!(!has_edge("hp_only", "names"), "{dot}");
    assert!(!has_edge("names", "hp_view"), "{dot}");
    assert!(has_edge("hp_only", "hp_view"), "{dot}");
    let mut world = world();
    world.insert_resource(0u32);
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<u32>(), 15 + 25 + 104);

    // In one query: a listed write beside a reader of another type is fine, beside a reader
    // of the same type it panics naming it.
    let mut ok = QueryState::<(FilteredEntityMut<(Hp,)>, RefRO<Name>)>::new(&mut world);
    assert_eq!(ok.iter_mut(&mut world).count(), 3);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = QueryState::<(FilteredEntityMut<(Hp,)>, RefRO<Hp>)>::new(&mut world);
    }));
    let message = *caught.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("Hp"), "{message}");
    // A one-shot write marks only the listed component written.
    world.advance_tick();
    let mut name_changed = QueryState::<Entity, Changed<Name>>::new(&mut world);
    let mut hp_changed = QueryState::<Entity, Changed<Hp>>::new(&mut world);
    let _ = (
        name_changed.iter(&world).count(),
        hp_changed.iter(&world).count(),
    );
    world.advance_tick();
    world
        .query::<FilteredEntityMut<(Hp, Name)>>()
        .for_each(|mut e| {
            let _ = e.get::<Name>();
            if let Some(h) = e.get_mut::<Hp>() {
                h.0 += 1;
            }
        });
    assert_eq!(name_changed.iter(&world).count(), 0);
    assert_eq!(hp_changed.iter(&world).count(), 3);
}

/// Immutable components (relationships, and types marked with `ComponentHooks::immutable`)
/// are refused by every in-place writer: `RefRW<T>` queries and `EntityMut::get_mut`, in a
/// system too, with a message that says to insert instead; reading them is fine.
#[test]
fn immutable_components_are_refused_by_in_place_writers() {
    use ecs_core::{ChildOf, Children, ComponentHooks};
    use ecs_query::FilteredEntityMut;
    struct Sealed(#[allow(dead_code, reason = "a value only insert changes")] u32);
    let mut world = world();
    world
        .set_component_hooks::<Sealed>(ComponentHooks::new().immutable())
        .unwrap();
    let parent = world.spawn(());
    let child = world.spawn((ChildOf(parent), Sealed(1), Hp(5)));
    let mut message = |f: &mut dyn FnMut(&mut World)| -> String {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut world)));
        *caught.unwrap_err().downcast::<String>().unwrap()
    };
    for msg in [
        message(&mut |w| drop(QueryState::<RefRW<ChildOf>>::new(w))),
        message(&mut |w| drop(QueryState::<&mut Children>::new(w))),
        message(&mut |w| drop(QueryState::<RefRW<Sealed>>::new(w))),
        message(&mut |w| drop(QueryState::<FilteredEntityMut<(Hp, Sealed)>>::new(w))),
        message(&mut |w| {
            w.query::<EntityMut>().for_each(|mut e| {
                let _ = e.get_mut::<ChildOf>();
            })
        }),
    ] {
        assert!(msg.contains("immutable") && msg.contains("insert"), "{msg}");
    }
    // Reads and other writes are untouched.
    let mut n = 0;
    world.query::<EntityMut>().for_each(|mut e| {
        if e.get::<ChildOf>().is_some() {
            e.get_mut::<Hp>().unwrap().0 += 1;
            n += 1;
        }
    });
    assert_eq!(n, 1);
    assert_eq!(world.get::<Hp>(child).unwrap().0, 6);
    // A system writing `ChildOf` in place fails when it first runs, naming the type.
    fn reparent(mut q: Query<RefRW<ChildOf>>) {
        q.for_each(|_| {});
    }
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(reparent);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = schedule.run(&mut world);
    }));
    assert!(caught.is_err());
}
