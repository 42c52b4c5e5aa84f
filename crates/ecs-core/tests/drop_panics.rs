//! Panic safety: a component whose `Drop` panics (in `despawn`, an overwriting or moving
//! `insert`, `clear`, dropping the world, a restore that empties it), and a `spawn_batch`
//! iterator that panics.
//!
//! After each caught panic the world must pass `check_invariants`, stay usable, keep every
//! other entity's values intact, and never drop a value twice. Values of the entity being
//! changed may leak (the documented worst case), so those are only checked for "at most once".

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use ecs_core::{Entity, World};

mod common;
use common::panics::{capacity_of, Name, Num};

/// Records which `Counted` ids were dropped, in order.
#[derive(Debug, Default)]
struct Log(Mutex<Vec<u32>>);

impl Log {
    fn dropped(&self) -> Vec<u32> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn times(&self, id: u32) -> usize {
        self.dropped().iter().filter(|&&d| d == id).count()
    }

    /// Panics if any id was dropped twice.
    fn assert_no_double_drop(&self) {
        let dropped = self.dropped();
        let unique: BTreeSet<_> = dropped.iter().collect();
        assert_eq!(
            unique.len(),
            dropped.len(),
            "a value was dropped twice: {dropped:?}"
        );
    }
}

/// A value whose drop is logged by id.
#[derive(Debug)]
struct Counted {
    id: u32,
    log: Arc<Log>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.log
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.id);
    }
}

/// Panics when dropped while armed.
#[derive(Debug)]
struct Bomb {
    armed: bool,
}

impl Bomb {
    fn armed() -> Self {
        Self { armed: true }
    }

    fn disarmed() -> Self {
        Self { armed: false }
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed {
            panic!("bomb went off");
        }
    }
}

fn counted(log: &Arc<Log>, id: u32) -> Counted {
    Counted {
        id,
        log: log.clone(),
    }
}

/// Asserts that `e` is alive with `Counted(id)` and `Num(id)`.
fn assert_intact(world: &World, e: Entity, id: u32) {
    assert_eq!(world.get::<Num>(e), Ok(&Num(id)), "{e:?}");
    assert_eq!(world.get::<Counted>(e).map(|c| c.id), Ok(id), "{e:?}");
}

/// Spawns, reads, inserts into and despawns a few entities, checking invariants.
fn assert_usable(world: &mut World, log: &Arc<Log>) {
    let a = world.spawn((counted(log, 9000), Num(9000)));
    let b = world.spawn((Num(9001), Name("x".into())));
    world.insert_one(b, counted(log, 9001)).unwrap();
    world.check_invariants();
    assert_intact(world, a, 9000);
    assert_intact(world, b, 9001);
    world.despawn(a).unwrap();
    assert_eq!(log.times(9000), 1);
    let (c,) = world.remove::<(Counted,)>(b).unwrap();
    assert_eq!(c.id, 9001);
    drop(c);
    world.despawn(b).unwrap();
    world.check_invariants();
}

/// A world with tiny chunks (many boundaries) and one with bigger ones. Under Miri the bigger
/// one is 1 KiB rather than 16 KiB: cases fill a chunk or two, and Miri is slow per row and
/// slower still per caught panic.
fn worlds() -> [World; 2] {
    let big = if cfg!(miri) {
        World::with_test_chunk_size(1024)
    } else {
        World::new()
    };
    [World::with_test_chunk_size(512), big]
}

#[test]
fn despawn_with_panicking_drop() {
    // Where the armed entity sits: first row, a middle row, alone in the last chunk.
    for place in ["first", "middle", "alone in last chunk"] {
        for mut world in worlds() {
            let log = Arc::new(Log::default());
            let probe = world.spawn((counted(&log, 0), Bomb::disarmed(), Num(0)));
            let cap = capacity_of(&world, probe);
            let n = match place {
                "alone in last chunk" => cap + 1,
                _ => 40.min(cap * 3),
            } as u32;
            let bomb_at = match place {
                "first" => 0,
                "middle" => n / 2,
                _ => n - 1,
            };
            world.despawn(probe).unwrap();
            let ids: Vec<Entity> = (0..n)
                .map(|i| {
                    let bomb = if i == bomb_at {
                        Bomb::armed()
                    } else {
                        Bomb::disarmed()
                    };
                    world.spawn((counted(&log, i + 1), bomb, Num(i + 1)))
                })
                .collect();
            let victim = ids[bomb_at as usize];
            let before = log.dropped().len();

            let result = catch_unwind(AssertUnwindSafe(|| world.despawn(victim)));
            assert!(result.is_err(), "the bomb should have gone off ({place})");

            world.check_invariants();
            assert!(!world.contains(victim));
            assert_eq!(world.len(), n - 1);
            log.assert_no_double_drop();
            assert!(log.times(bomb_at + 1) <= 1);
            assert!(
                log.dropped().len() - before <= 1,
                "only the victim's values may drop"
            );
            for (i, &e) in ids.iter().enumerate() {
                if e != victim {
                    assert_intact(&world, e, i as u32 + 1);
                }
            }
            assert!(world.despawn(victim).is_err(), "stale after the panic");
            assert_usable(&mut world, &log);
            drop(world);
            log.assert_no_double_drop();
            for i in 0..=n {
                if i != bomb_at + 1 {
                    assert_eq!(log.times(i), 1, "value {i} ({place})");
                }
            }
        }
    }
}

#[test]
fn overwriting_insert_with_panicking_drop_in_place() {
    for mut world in worlds() {
        let log = Arc::new(Log::default());
        let others: Vec<Entity> = (0..10)
            .map(|i| world.spawn((counted(&log, i), Bomb::disarmed(), Num(i))))
            .collect();
        let e = world.spawn((counted(&log, 100), Bomb::armed(), Num(100)));
        let result = catch_unwind(AssertUnwindSafe(|| world.insert_one(e, Bomb::disarmed())));
        assert!(result.is_err());
        world.check_invariants();
        assert_intact(&world, e, 100);
        assert!(
            !world.get::<Bomb>(e).unwrap().armed,
            "the new value is in place"
        );
        assert!(log.dropped().is_empty(), "nothing else dropped");
        for (i, &o) in others.iter().enumerate() {
            assert_intact(&world, o, i as u32);
        }
        assert_usable(&mut world, &log);
        drop(world);
        log.assert_no_double_drop();
        assert_eq!(log.times(100), 1);
    }
}

#[test]
fn moving_insert_with_panicking_drop() {
    for mut world in worlds() {
        let log = Arc::new(Log::default());
        let e = world.spawn((counted(&log, 100), Bomb::armed()));
        // Rows after `e` in its archetype, so moving `e` out fills its hole.
        let others: Vec<Entity> = (0..30)
            .map(|i| world.spawn((counted(&log, i), Bomb::disarmed())))
            .collect();
        let result = catch_unwind(AssertUnwindSafe(|| {
            world.insert(e, (Bomb::disarmed(), Num(100)))
        }));
        assert!(result.is_err());
        world.check_invariants();
        assert_intact(&world, e, 100);
        assert!(!world.get::<Bomb>(e).unwrap().armed);
        for (i, &o) in others.iter().enumerate() {
            assert_eq!(world.get::<Counted>(o).map(|c| c.id), Ok(i as u32));
            assert!(!world.has::<Num>(o));
        }
        assert!(log.dropped().is_empty());
        assert_usable(&mut world, &log);
        drop(world);
        log.assert_no_double_drop();
        for i in (0..30).chain([100]) {
            assert_eq!(log.times(i), 1, "value {i}");
        }
    }
}

#[test]
fn overwriting_insert_drops_every_old_value_even_if_one_panics() {
    for mut world in worlds() {
        let log = Arc::new(Log::default());
        let e = world.spawn((counted(&log, 1), Bomb::armed(), Num(1)));
        // The old bomb (first in the tuple) panics; the old `Counted` must still be dropped.
        let result = catch_unwind(AssertUnwindSafe(|| {
            world.insert(e, (Bomb::disarmed(), counted(&log, 2)))
        }));
        assert!(result.is_err());
        world.check_invariants();
        log.assert_no_double_drop();
        assert_eq!(log.dropped(), [1], "old value dropped during unwinding");
        assert_eq!(world.get::<Counted>(e).map(|c| c.id), Ok(2));
        assert_eq!(world.get::<Num>(e), Ok(&Num(1)));
        drop(world);
        log.assert_no_double_drop();
        assert_eq!(log.times(2), 1);
    }
}

/// Archetypes made in this order: the panicking one first, so the others come after it.
fn populated_world(mut world: World, log: &Arc<Log>) -> (World, Vec<Entity>) {
    let mut all = Vec::new();
    for i in 0..20 {
        let bomb = if i == 7 {
            Bomb::armed()
        } else {
            Bomb::disarmed()
        };
        all.push(world.spawn((counted(log, i), bomb)));
    }
    for i in 100..130 {
        all.push(world.spawn((counted(log, i), Num(i))));
    }
    for i in 200..230 {
        all.push(world.spawn((counted(log, i), Name(format!("n{i}")))));
    }
    world.check_invariants();
    (world, all)
}

#[test]
fn clear_with_panicking_drop() {
    for world in worlds() {
        let log = Arc::new(Log::default());
        let (mut world, all) = populated_world(world, &log);
        let result = catch_unwind(AssertUnwindSafe(|| world.clear()));
        assert!(result.is_err());

        world.check_invariants();
        assert_eq!(world.len(), 0);
        for &e in &all {
            assert!(!world.contains(e), "{e:?} survived clear");
        }
        log.assert_no_double_drop();
        // Values of the other archetypes are dropped, not leaked.
        for i in (100..130).chain(200..230) {
            assert_eq!(log.times(i), 1, "value {i}");
        }
        // The world is usable, including every archetype it had.
        let (mut world, again) = populated_world_disarmed(world, &log);
        assert_usable(&mut world, &log);
        for &e in &again {
            world.despawn(e).unwrap();
        }
        world.check_invariants();
        drop(world);
        log.assert_no_double_drop();
    }
}

/// Spawns into the archetypes of [`populated_world`] again, with no armed bomb.
fn populated_world_disarmed(mut world: World, log: &Arc<Log>) -> (World, Vec<Entity>) {
    let mut all = Vec::new();
    for i in 1000..1020 {
        all.push(world.spawn((counted(log, i), Bomb::disarmed())));
    }
    for i in 1100..1130 {
        all.push(world.spawn((counted(log, i), Num(i))));
    }
    for i in 1200..1230 {
        all.push(world.spawn((counted(log, i), Name(format!("n{i}")))));
    }
    world.check_invariants();
    for (k, &e) in all.iter().enumerate() {
        let id = [1000..1020, 1100..1130, 1200..1230]
            .into_iter()
            .flatten()
            .nth(k)
            .expect("in range");
        assert_eq!(world.get::<Counted>(e).map(|c| c.id), Ok(id));
    }
    (world, all)
}

#[test]
fn world_drop_with_panicking_drop() {
    for world in worlds() {
        let log = Arc::new(Log::default());
        let (mut world, _) = populated_world(world, &log);
        world.insert_resource(counted(&log, 5000));
        let result = catch_unwind(AssertUnwindSafe(move || drop(world)));
        assert!(result.is_err());
        log.assert_no_double_drop();
        for i in (100..130).chain(200..230).chain([5000]) {
            assert_eq!(log.times(i), 1, "value {i}");
        }
        for i in 0..20 {
            assert!(log.times(i) <= 1);
        }
    }
}

#[test]
fn spawn_batch_iterator_panicking_midway() {
    for mut world in worlds() {
        let log = Arc::new(Log::default());
        let probe = world.spawn((counted(&log, u32::MAX), Num(0)));
        let cap = capacity_of(&world, probe) as u32;
        world.despawn(probe).unwrap();
        // Some rows already in the archetype, so the batch starts mid-chunk.
        let before: Vec<Entity> = (0..3)
            .map(|i| world.spawn((counted(&log, 10_000 + i), Num(10_000 + i))))
            .collect();
        let mut live = 3;
        let mut next_id = 0;
        // Panic at the first item, mid-chunk, right when a fresh chunk would start, and later.
        for stop in [0, 5, cap - 3, cap, 2 * cap + 1] {
            let first = next_id;
            let result = catch_unwind(AssertUnwindSafe(|| {
                world
                    .spawn_batch((0..stop + 50).map(|k| {
                        assert!(k != stop, "iterator gave up");
                        (counted(&log, first + k), Num(first + k))
                    }))
                    .count()
            }));
            assert!(result.is_err());
            next_id += stop;
            live += stop;
            world.check_invariants();
            assert_eq!(world.len(), live, "rows written before the panic stay");
            let mut seen: Vec<u32> = Vec::new();
            for arch in world.archetypes() {
                for chunk in arch.chunks() {
                    for &e in chunk.entities() {
                        let Ok(&Num(n)) = world.get::<Num>(e) else {
                            continue;
                        };
                        assert_eq!(world.get::<Counted>(e).map(|c| c.id), Ok(n));
                        seen.push(n);
                    }
                }
            }
            seen.sort_unstable();
            let expected: Vec<u32> = (0..next_id).chain(10_000..10_003).collect();
            assert_eq!(seen, expected);
            log.assert_no_double_drop();
            assert!(
                log.dropped().iter().all(|&d| d == u32::MAX),
                "nothing dropped"
            );
        }
        for (i, &e) in before.iter().enumerate() {
            assert_intact(&world, e, 10_000 + i as u32);
        }
        let ids: Vec<Entity> = world
            .spawn_batch((0..cap + 2).map(|k| (counted(&log, 20_000 + k), Num(20_000 + k))))
            .collect();
        for (k, &e) in ids.iter().enumerate() {
            assert_intact(&world, e, 20_000 + k as u32);
        }
        assert_usable(&mut world, &log);
        world.clear();
        world.check_invariants();
        drop(world);
        log.assert_no_double_drop();
        assert_eq!(log.dropped().len() as u32, 1 + 3 + next_id + cap + 2 + 2);
    }
}

#[test]
fn a_panicking_drop_while_a_restore_empties_the_world_leaves_it_empty_and_consistent() {
    let mut world = World::with_test_chunk_size(256);
    world.register_pod::<u32>();
    world.register_clone::<Name>();
    let plain: Vec<Entity> = (0..100u32).map(|i| world.spawn((i,))).collect();
    let named: Vec<Entity> = (0..50u32)
        .map(|i| world.spawn((Name(format!("n{i}")), i)))
        .collect();
    let snap = world.snapshot().unwrap();
    // Not in the snapshot: the restore drops it, and its drop panics.
    let bomb = world.spawn((Bomb::armed(), 5u32));
    let caught = catch_unwind(AssertUnwindSafe(|| world.restore(&snap)));
    assert!(caught.is_err());
    world.check_invariants();
    assert!(world.is_empty(), "emptied, as a panicking clear leaves it");
    assert!(!world.contains(plain[0]) && !world.contains(named[0]) && !world.contains(bomb));

    world.restore(&snap).unwrap();
    world.check_invariants();
    for (i, &e) in plain.iter().enumerate() {
        assert_eq!(world.get::<u32>(e), Ok(&(i as u32)));
    }
    for (i, &e) in named.iter().enumerate() {
        assert_eq!(world.get::<Name>(e), Ok(&Name(format!("n{i}"))));
    }
    assert!(!world.contains(bomb));
    let fresh = world.spawn((7u32,));
    assert!(world.contains(fresh));
    world.check_invariants();
}
