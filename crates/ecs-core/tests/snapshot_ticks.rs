//! Change ticks survive a snapshot: after a restore, every row reads as changed (or added) in
//! exactly the windows it did when the snapshot was taken, moved by the restore's tick shift.

use ecs_core::{ChangeWindow, Entity, RowTicks, Snapshot, World};

/// `(changed, added)` per entity and column for the window `since..` read at the world's tick.
fn answers(world: &World, entities: &[Entity], since: u64) -> Vec<[bool; 4]> {
    let window = ChangeWindow::new(world.change_tick(), since);
    entities
        .iter()
        .map(|&e| {
            let loc = world.location(e).unwrap();
            let arch = &world.archetypes()[loc.archetype.index()];
            let (chunk, row) = arch.split_row(loc.row as usize);
            let chunk = &arch.chunks()[chunk];
            // Column 0 is u32 (row ticks kept), column 1 f32 (chunk ticks only).
            [
                chunk.row_changed_since(0, row, window),
                chunk.row_added_since(0, row, window),
                chunk.row_changed_since(1, row, window),
                chunk.added_since(1, window),
            ]
        })
        .collect()
}

/// A world of 5 chunks' worth of rows, written and grown at several ticks.
fn history(chunk_size: usize) -> (World, Vec<Entity>) {
    let mut world = World::with_chunk_size(chunk_size).unwrap();
    world.register_pod::<u32>();
    world.register_pod::<f32>();
    let u32_id = world.component_id::<u32>().unwrap();
    world.keep_row_ticks(u32_id, RowTicks::CHANGED.union(RowTicks::ADDED));
    let mut entities: Vec<Entity> = (0..1000u32).map(|i| world.spawn((i, i as f32))).collect();
    for step in 0..6u32 {
        world.advance_tick();
        for (i, &e) in entities.iter().enumerate() {
            if i as u32 % (step + 2) == 0 {
                *world.get_mut::<u32>(e).unwrap() += 1;
            }
        }
        if step == 3 {
            world.advance_tick();
            entities.extend((0..100u32).map(|i| world.spawn((i, 0.5f32))));
        }
    }
    world.advance_tick();
    (world, entities)
}

#[test]
fn restored_rows_keep_their_ages() {
    let (mut world, entities) = history(4096);
    let snap: Snapshot = world.snapshot().unwrap();
    let now = world.change_tick();
    let before: Vec<_> = (1..=now).map(|s| answers(&world, &entities, s)).collect();
    // Move on: more writes, then roll back.
    for _ in 0..5 {
        world.advance_tick();
        for &e in &entities[..500] {
            *world.get_mut::<u32>(e).unwrap() += 7;
        }
    }
    world.restore(&snap).unwrap();
    world.check_invariants();
    let shift = world.change_tick() - now;
    assert!(shift > 0, "the restore moved ticks forward");
    for (s, expected) in (1..=now).zip(&before) {
        assert_eq!(
            &answers(&world, &entities, s + shift),
            expected,
            "window from {s}"
        );
    }
    // Some windows see some rows and not others: the test distinguishes rows.
    let mid = &before[now as usize - 3];
    assert!(mid.iter().any(|a| a[0]) && mid.iter().any(|a| !a[0]));
}

#[test]
fn restoring_into_other_chunk_sizes_never_hides_a_change() {
    let (world, entities) = history(4096);
    let snap = world.snapshot().unwrap();
    let now = world.change_tick();
    for size in [16384, 65536] {
        let mut other = World::with_chunk_size(size).unwrap();
        other.register_pod::<u32>();
        other.register_pod::<f32>();
        let id = other.component_id::<u32>().unwrap();
        other.keep_row_ticks(id, RowTicks::CHANGED.union(RowTicks::ADDED));
        other.restore(&snap).unwrap();
        other.check_invariants();
        let shift = other.change_tick() - now;
        for s in 1..=now {
            let want = answers(&world, &entities, s);
            let got = answers(&other, &entities, s + shift);
            for (w, g) in want.iter().zip(&got) {
                // Row ticks are exact; chunk-level answers may only err on "changed".
                assert_eq!((w[0], w[1]), (g[0], g[1]), "row ticks, window from {s}");
                assert!(!w[2] || g[2], "chunk ticks may not hide a change");
            }
        }
    }
}

#[test]
fn restore_marking_changed_marks_every_row() {
    let (mut world, entities) = history(4096);
    let snap = world.snapshot().unwrap();
    world.advance_tick();
    let since = world.change_tick();
    world.restore_marking_changed(&snap).unwrap();
    assert!(answers(&world, &entities, since)
        .iter()
        .all(|a| a[0] && a[2]));
    world.advance_tick();
    let since = world.change_tick();
    world.restore(&snap).unwrap();
    assert!(answers(&world, &entities, since)
        .iter()
        .all(|a| !a[0] && !a[2]));
}
