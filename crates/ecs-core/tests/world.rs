//! World API behaviour: spawn, insert, remove, despawn, drops, errors, resources, layout.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ecs_core::{ComponentError, Entity, EntityError, World, WorldError};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Velocity {
    x: f32,
    y: f32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Health(i32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Armor(u8);

#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Tag;

#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(align(64))]
struct Aligned(u64);

/// Counts drops through a shared counter.
#[derive(Debug)]
struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

#[test]
fn spawn_get_insert_remove_roundtrip() {
    let mut world = World::new();
    let e = world.spawn((Position { x: 0.0, y: 0.0 }, Velocity { x: 1.0, y: 0.0 }));
    world.insert(e, (Health(100), Armor(3))).unwrap();
    world.check_invariants();
    world.insert_one(e, Health(90)).unwrap();
    assert_eq!(world.get::<Health>(e), Ok(&Health(90)));
    let (vel,) = world.remove::<(Velocity,)>(e).unwrap();
    assert_eq!(vel, Velocity { x: 1.0, y: 0.0 });
    world.get_mut::<Health>(e).unwrap().0 -= 10;
    assert_eq!(world.get::<Health>(e), Ok(&Health(80)));
    assert!(world.has::<Health>(e) && !world.has::<Velocity>(e));
    assert_eq!(world.get::<Position>(e), Ok(&Position { x: 0.0, y: 0.0 }));
    assert_eq!(world.get::<Armor>(e), Ok(&Armor(3)));
    assert_eq!(world.len(), 1);
    world.check_invariants();
}

#[test]
fn errors_name_entity_and_component() {
    let mut world = World::new();
    let e = world.spawn((Health(1),));
    let err = world.get::<Velocity>(e).unwrap_err();
    assert!(
        matches!(err, ComponentError::MissingComponent { entity, component }
        if entity == e && component.ends_with("Velocity"))
    );
    assert!(err.to_string().contains("Velocity"), "{err}");
    let err = world.remove::<(Health, Velocity)>(e).unwrap_err();
    assert!(err.to_string().contains("Velocity"), "{err}");
    assert_eq!(
        world.get::<Health>(e),
        Ok(&Health(1)),
        "a failed remove changes nothing"
    );
    world.despawn(e).unwrap();
    assert_eq!(world.despawn(e), Err(EntityError::NoSuchEntity(e)));
    assert_eq!(world.get::<Health>(e), Err(ComponentError::NoSuchEntity(e)));
    assert_eq!(
        world.insert_one(e, Armor(1)),
        Err(EntityError::NoSuchEntity(e))
    );
    assert_eq!(
        world.remove::<(Health,)>(e),
        Err(ComponentError::NoSuchEntity(e))
    );
    assert!(!world.contains(e));
    assert_eq!(
        World::with_chunk_size(3000).unwrap_err(),
        WorldError::InvalidChunkSize(3000)
    );
    assert!(World::with_chunk_size(2048).is_err() && World::with_chunk_size(2 << 20).is_err());
    world.check_invariants();
}

#[test]
fn stale_handles_never_resolve_to_new_entities() {
    let mut world = World::new();
    let a = world.spawn((Health(1),));
    world.despawn(a).unwrap();
    let b = world.spawn((Health(2),));
    assert_eq!(a.index(), b.index(), "slot reused");
    assert_ne!(a, b);
    assert_eq!(world.get::<Health>(a), Err(ComponentError::NoSuchEntity(a)));
    assert_eq!(world.get::<Health>(b), Ok(&Health(2)));
    world.clear();
    assert!(!world.contains(b));
    assert_eq!(world.len(), 0);
    world.check_invariants();
}

#[test]
fn each_value_dropped_exactly_once() {
    let drops = counter();
    let t = || Tracked(drops.clone());
    {
        let mut world = World::new();
        let a = world.spawn((t(), Health(1)));
        let b = world.spawn((t(),));
        let c = world.spawn((t(), Tag));
        world.despawn(a).unwrap(); // 1
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        world.insert_one(b, t()).unwrap(); // overwrite drops old: 2
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        let (removed,) = world.remove::<(Tracked,)>(c).unwrap();
        assert_eq!(
            drops.load(Ordering::SeqCst),
            2,
            "a removed value is handed back"
        );
        drop(removed); // 3
        world.insert(c, (t(), Health(5))).unwrap();
        world.spawn_batch((0..100).map(|_| (t(),))).for_each(drop);
        world.clear(); // b, c and the batch: 3 + 102 = 105
        assert_eq!(drops.load(Ordering::SeqCst), 105);
        world.spawn((t(),));
        world.check_invariants();
    } // world drop: 106
    assert_eq!(drops.load(Ordering::SeqCst), 106);
}

#[test]
fn zero_sized_and_over_aligned_components() {
    // Natively 1000 rows of default 16 KiB chunks (227 rows each). Under Miri 80 rows of
    // 4 KiB chunks (56 rows each): still more than one chunk, in a quarter of the rows.
    let (n, mut world) = if cfg!(miri) {
        (80, World::with_chunk_size(4096).unwrap())
    } else {
        (1000, World::new())
    };
    let ids: Vec<Entity> = world
        .spawn_batch((0..n).map(|i| (Tag, Aligned(i))))
        .collect();
    for (i, &e) in ids.iter().enumerate() {
        let a = world.get::<Aligned>(e).unwrap();
        assert_eq!(a.0, i as u64);
        assert_eq!(a as *const Aligned as usize % 64, 0, "misaligned column");
        assert_eq!(world.get::<Tag>(e), Ok(&Tag));
    }
    assert!(
        world
            .memory_report()
            .archetypes
            .iter()
            .any(|a| a.chunks > 1),
        "the rows span more than one chunk"
    );
    for &e in ids.iter().step_by(3) {
        world.despawn(e).unwrap();
    }
    world.check_invariants();
    for (i, &e) in ids.iter().enumerate().filter(|(i, _)| i % 3 != 0) {
        assert_eq!(world.get::<Aligned>(e).unwrap().0, i as u64);
    }
}

#[test]
fn spawn_batch_fills_chunks_densely_and_returns_ids_in_order() {
    // Natively 10 000 rows of default 16 KiB chunks (1260 rows each). Under Miri 200 rows of
    // 2 KiB chunks (157 rows each): still more than one chunk, in a sixth of the rows.
    let (n, mut world) = if cfg!(miri) {
        (200, World::with_test_chunk_size(2048))
    } else {
        (10_000, World::new())
    };
    let ids: Vec<Entity> = world
        .spawn_batch((0..n).map(|i| (Health(i), Armor(i as u8))))
        .collect();
    assert_eq!(ids.len(), n as usize);
    for (i, &e) in ids.iter().enumerate() {
        assert_eq!(world.get::<Health>(e), Ok(&Health(i as i32)));
    }
    let layout = world.memory_report();
    let arch = layout
        .archetypes
        .iter()
        .find(|a| a.entities == n as usize)
        .unwrap();
    assert_eq!(arch.chunks, (n as usize).div_ceil(arch.capacity));
    assert!(arch.chunks > 1, "the batch crosses a chunk boundary");
    world.check_invariants();
}

#[test]
fn reserved_entities_become_live_on_next_structural_change() {
    let mut world = World::new();
    let r = world.reserve_entity();
    assert!(!world.contains(r), "not live before a flush");
    let e = world.spawn((Health(1),));
    assert_ne!(r, e);
    assert!(world.contains(r));
    world.insert_one(r, Armor(2)).unwrap();
    assert_eq!(world.get::<Armor>(r), Ok(&Armor(2)));
    world.check_invariants();
}

#[test]
fn oversized_row_is_refused_with_a_message_naming_types() {
    struct Huge([u8; 20_000]);
    let mut world = World::new();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.spawn((Huge([0; 20_000]), Health(1)));
    }))
    .unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains("Huge: 20000 B") && msg.contains("Health: 4 B"),
        "{msg}"
    );
    world.check_invariants();
    let mut big = World::with_chunk_size(64 * 1024).unwrap();
    let e = big.spawn((Huge([7; 20_000]),));
    assert_eq!(big.get::<Huge>(e).unwrap().0[19_999], 7);
}

#[test]
fn duplicate_bundle_type_panics_naming_it() {
    let mut world = World::new();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.spawn((Health(1), Health(2)));
    }))
    .unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains("Health") && msg.contains("more than once"),
        "{msg}"
    );
}

#[test]
fn resources() {
    struct Time {
        dt: f32,
    }
    let mut world = World::new();
    assert!(world.get_resource::<Time>().is_none());
    world.insert_resource(Time { dt: 0.016 });
    world.resource_mut::<Time>().dt *= 2.0;
    assert_eq!(world.resource::<Time>().dt, 0.032);
    assert!(world.contains_resource::<Time>());
    assert_eq!(world.remove_resource::<Time>().map(|t| t.dt), Some(0.032));
    let err = std::panic::catch_unwind(|| World::new().resource::<Time>().dt).unwrap_err();
    assert!(err.downcast_ref::<String>().unwrap().contains("Time"));
}

#[test]
fn layout_report_prints_a_table() {
    let mut world = World::new();
    world.spawn_batch((0..600).map(|_| (Position { x: 0.0, y: 0.0 }, Velocity { x: 0.0, y: 0.0 })));
    let report = world.memory_report();
    let a = &report.archetypes[0];
    assert_eq!(a.entities, 600);
    assert_eq!(a.capacity, 16 * 1024 / (8 + 8 + 8));
    assert!(a.fill_percent > 0.0 && a.fill_percent <= 100.0);
    let text = report.to_string();
    assert!(
        text.contains("Position (8 B)") && text.contains("capacity"),
        "{text}"
    );
}

#[test]
fn entity_bits_and_debug() {
    let mut world = World::new();
    let e = world.spawn(());
    assert_eq!(format!("{e:?}"), "0v1");
    assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
    assert_eq!(size_of::<Option<Entity>>(), 8);
}

#[test]
fn invariants_hold_with_pending_reservations() {
    let mut world = World::new();
    let a = world.spawn((Health(1),));
    world.despawn(a).unwrap();
    let r1 = world.reserve_entity();
    let r2 = world.reserve_entity();
    world.check_invariants();
    world.flush();
    assert!(world.contains(r1) && world.contains(r2));
    world.check_invariants();
}

#[test]
fn reservations_from_many_threads_are_distinct_and_all_become_live() {
    let mut world = World::new();
    let freed: Vec<Entity> = (0..4).map(|i| world.spawn((Health(i),))).collect();
    for &e in &freed[..3] {
        world.despawn(e).unwrap();
    }
    let per_thread = if cfg!(miri) { 3 } else { 200 };
    let mut reserved: Vec<Entity> = std::thread::scope(|s| {
        let world = &world;
        let handles: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(move || {
                    (0..per_thread)
                        .map(|_| world.reserve_entity())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    world.flush();
    world.check_invariants();
    reserved.sort();
    reserved.dedup();
    assert_eq!(reserved.len(), 3 * per_thread, "reserved ids are distinct");
    assert!(reserved
        .iter()
        .all(|&e| world.contains(e) && !freed[..3].contains(&e)));
    assert_eq!(world.len() as usize, 1 + 3 * per_thread);
}

#[test]
fn alternating_bundle_types_take_the_right_edges() {
    // Each archetype remembers its last-used insert and remove edge; alternating bundle types
    // must miss that entry and still land every entity in the right archetype.
    let mut world = World::new();
    let ids: Vec<Entity> = (0..6u32).map(|i| world.spawn((i,))).collect();
    for (k, &e) in ids.iter().enumerate() {
        if k % 2 == 0 {
            world.insert_one(e, 'a').unwrap();
        } else {
            world.insert_one(e, 1.5f32).unwrap();
        }
        world.check_invariants();
    }
    for (k, &e) in ids.iter().enumerate() {
        if k % 2 == 0 {
            assert!(world.get::<f32>(e).is_err());
            assert_eq!(world.remove::<(char,)>(e), Ok(('a',)));
        } else {
            assert!(world.get::<char>(e).is_err());
            assert_eq!(world.remove::<(f32,)>(e), Ok((1.5,)));
        }
        assert_eq!(world.get::<u32>(e), Ok(&(k as u32)));
        world.check_invariants();
    }
}

#[test]
fn invariants_hold_after_many_random_moves() {
    // Seeded random inserts and removes of one- and two-type bundles over six types (a
    // zero-sized one, an over-aligned one, a `String` with drop glue), on small chunks so
    // moves cross chunk boundaries. Every move builds or reuses an edge; `check_invariants`
    // re-derives each cached edge (target = source plus or minus exactly the bundle) and each
    // archetype's columns from the registry after every step, and a bitmask model says what
    // each entity has.
    let mut world = World::with_test_chunk_size(512);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut model: Vec<(Entity, u8)> = (0..40).map(|_| (world.spawn(()), 0)).collect();
    // Miri interprets every check: 30 moves keep it to seconds and still cross chunks.
    let moves = if cfg!(miri) { 30 } else { 1500 };
    for _ in 0..moves {
        let k = next() as usize % model.len();
        let (e, has) = model[k];
        let bits = match next() % 9 {
            // One type, then two-type bundles (each pair is its own edge key).
            n @ 0..=5 => 1 << n,
            6 => 0b000011,
            7 => 0b010100,
            _ => 0b101000,
        };
        if next() % 2 == 0 {
            match bits {
                0b000001 => world.insert_one(e, Position { x: 1.0, y: 2.0 }),
                0b000010 => world.insert_one(e, Velocity { x: 3.0, y: 4.0 }),
                0b000100 => world.insert_one(e, Health(k as i32)),
                0b001000 => world.insert_one(e, k.to_string()),
                0b010000 => world.insert_one(e, Tag),
                0b100000 => world.insert_one(e, Aligned(k as u64)),
                0b000011 => world.insert(
                    e,
                    (Velocity { x: 3.0, y: 4.0 }, Position { x: 1.0, y: 2.0 }),
                ),
                0b010100 => world.insert(e, (Tag, Health(k as i32))),
                _ => world.insert(e, (Aligned(k as u64), k.to_string())),
            }
            .unwrap();
            model[k].1 = has | bits;
        } else {
            let ok = match bits {
                0b000001 => world.remove::<(Position,)>(e).is_ok(),
                0b000010 => world.remove::<(Velocity,)>(e).is_ok(),
                0b000100 => world.remove::<(Health,)>(e).is_ok(),
                0b001000 => world.remove::<(String,)>(e).is_ok(),
                0b010000 => world.remove::<(Tag,)>(e).is_ok(),
                0b100000 => world.remove::<(Aligned,)>(e).is_ok(),
                0b000011 => world.remove::<(Velocity, Position)>(e).is_ok(),
                0b010100 => world.remove::<(Tag, Health)>(e).is_ok(),
                _ => world.remove::<(Aligned, String)>(e).is_ok(),
            };
            assert_eq!(
                ok,
                has & bits == bits,
                "remove succeeds iff every type is present"
            );
            if ok {
                model[k].1 = has & !bits;
            }
        }
        world.check_invariants();
    }
    for &(e, has) in &model {
        let present = [
            world.has::<Position>(e),
            world.has::<Velocity>(e),
            world.has::<Health>(e),
            world.has::<String>(e),
            world.has::<Tag>(e),
            world.has::<Aligned>(e),
        ];
        for (bit, present) in present.into_iter().enumerate() {
            assert_eq!(present, has & (1 << bit) != 0, "{e:?} type {bit}");
        }
    }
    assert!(
        world.archetypes().len() > if cfg!(miri) { 4 } else { 20 },
        "the moves reached many archetypes"
    );
}

#[test]
fn entity_display_honours_width_fill_and_alignment() {
    let mut world = World::new();
    let e = world.spawn((1u8,));
    assert_eq!(format!("{e}"), "0v1");
    assert_eq!(format!("[{e:<6}]"), "[0v1   ]");
    assert_eq!(format!("[{e:>6}]"), "[   0v1]");
    assert_eq!(format!("[{e:*^7}]"), "[**0v1**]");
}
