//! Loom model of atomic entity reservation: threads reserving ids through `&Entities` at the same
//! time always get distinct ids, and a flush makes each of them live exactly once. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p ecs-core --release --test loom`.
#![cfg(loom)]

use loom::sync::Arc;

use ecs_core::{ArchetypeId, Entities, Entity, Location};

fn somewhere() -> Location {
    Location {
        archetype: ArchetypeId::EMPTY,
        row: 0,
    }
}

fn reserve_concurrently(freed: usize, per_thread: usize) {
    loom::model(move || {
        let mut entities = Entities::default();
        let spawned: Vec<Entity> = (0..freed + 1)
            .map(|_| entities.alloc(somewhere()))
            .collect();
        for &e in &spawned[..freed] {
            entities.free(e);
        }
        let entities = Arc::new(entities);
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let entities = entities.clone();
                loom::thread::spawn(move || {
                    (0..per_thread)
                        .map(|_| entities.reserve())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut reserved: Vec<Entity> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let mut entities = Arc::try_unwrap(entities).ok().expect("threads joined");
        let mut placed = Vec::new();
        entities.flush(|e| {
            placed.push(e);
            somewhere()
        });
        reserved.sort();
        placed.sort();
        assert_eq!(
            reserved, placed,
            "every reserved id is made live exactly once"
        );
        reserved.dedup();
        assert_eq!(reserved.len(), 2 * per_thread, "reserved ids are distinct");
        for e in &reserved {
            assert!(entities.locate(e.index()).is_some());
            assert!(
                !spawned[..freed].contains(e),
                "a stale handle was handed out again"
            );
        }
        assert_eq!(entities.len() as usize, 1 + 2 * per_thread);
    });
}

#[test]
fn reservations_from_the_free_list() {
    reserve_concurrently(2, 1);
}

#[test]
fn reservations_past_the_table() {
    reserve_concurrently(0, 2);
}

#[test]
fn reservations_straddling_free_list_and_table() {
    reserve_concurrently(1, 1);
}

/// Two threads reserving in two lanes while a third reserves through the cursor: each lane's
/// ids are the same in every interleaving (the ids a lane hands out depend on its own count
/// alone), and the flush makes every id live exactly once.
#[test]
fn lanes_hand_out_the_same_ids_in_every_interleaving() {
    let expected = std::sync::Mutex::new(None::<[Vec<Entity>; 2]>);
    loom::model(move || {
        let mut entities = Entities::default();
        let spawned: Vec<Entity> = (0..3).map(|_| entities.alloc(somewhere())).collect();
        entities.free(spawned[0]);
        entities.free(spawned[1]);
        // Two free slots, then indices past the table; the cursor reserves from lane 1.
        entities.open_lanes(2);
        let entities = Arc::new(entities);
        let lanes: Vec<_> = (0..2u32)
            .map(|lane| {
                let entities = entities.clone();
                loom::thread::spawn(move || {
                    (0..2)
                        .map(|_| entities.reserve_in_lane(lane))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let by_cursor = entities.reserve();
        let ids: Vec<Vec<Entity>> = lanes.into_iter().map(|t| t.join().unwrap()).collect();
        let mut entities = Arc::try_unwrap(entities).ok().expect("threads joined");
        let mut placed = Vec::new();
        entities.flush(|e| {
            placed.push(e);
            somewhere()
        });
        let mut all: Vec<Entity> = ids.iter().flatten().copied().collect();
        all.push(by_cursor);
        all.sort();
        placed.sort();
        assert_eq!(all, placed, "every reserved id is made live exactly once");
        all.dedup();
        assert_eq!(all.len(), 5, "reserved ids are distinct");
        // Lane 0's ids never depend on the interleaving (lane 1 shares its counter with the
        // cursor, so only lane 0 is checked against other runs).
        let mut seen = expected.lock().unwrap();
        match &*seen {
            Some(first) => assert_eq!(first[0], ids[0], "lane 0 got other ids"),
            None => *seen = Some([ids[0].clone(), ids[1].clone()]),
        }
    });
}
