//! `World::compact` invalidates nothing a user holds: a `QueryState` built before compaction,
//! the world-level query cache, change detection and enable filters all see the same rows
//! afterwards, and keep following archetypes created later.

use ecs_core::{Entity, World};
use ecs_query::{Changed, EnabledRW, QueryExt, QueryState, RefRO, RefRW, With, Without};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Off;

/// Entities per archetype: small under Miri.
const N: u32 = if cfg!(miri) { 30 } else { 2000 };

fn sorted(mut v: Vec<(Entity, u32)>) -> Vec<(Entity, u32)> {
    v.sort_by_key(|p| p.0);
    v
}

#[test]
fn query_states_and_the_query_cache_survive_compaction() {
    let mut world = World::with_test_chunk_size(256);
    world.register_enableable::<Off>();
    let mut state = QueryState::<(Entity, RefRO<A>), Without<B>>::new(&mut world);
    let mut writer = QueryState::<RefRW<A>>::new(&mut world);
    let mut changed = QueryState::<(Entity, RefRO<A>), Changed<A>>::new(&mut world);
    let mut toggles = QueryState::<EnabledRW<Off>>::new(&mut world);
    let mut doomed = Vec::new();
    // Three archetypes carving chunks in turns; most of two of them then go.
    for i in 0..N {
        world.spawn((A(i),));
        doomed.push(world.spawn((A(i), B(i))));
        let e = world.spawn((A(i), Off));
        if i % 3 == 0 {
            world.set_enabled::<Off>(e, false).unwrap();
        } else {
            doomed.push(e);
        }
    }
    for e in doomed {
        world.despawn(e).unwrap();
    }
    // Built and cached before compaction.
    let before = sorted(state.iter(&world).map(|(e, a)| (e, a.0)).collect());
    let cached_before = world.query_filtered::<RefRO<A>, With<Off>>().iter().count();
    let _ = changed.iter(&world).count(); // sees everything once

    let report = world.compact();
    assert!(report.bytes_freed > 0 || cfg!(miri), "{report:?}");
    world.check_invariants();

    let after = sorted(state.iter(&world).map(|(e, a)| (e, a.0)).collect());
    assert_eq!(before, after);
    assert_eq!(after.len(), (N + N.div_ceil(3)) as usize);
    assert_eq!(
        world.query_filtered::<RefRO<A>, With<Off>>().iter().count(),
        cached_before
    );
    // Compaction is not a change.
    assert_eq!(changed.iter(&world).count(), 0);
    // Disabled rows stay disabled: `With<Off>` sees none of them, `Without<Off>` all.
    assert_eq!(cached_before, 0);
    assert_eq!(
        world
            .query_filtered::<RefRO<A>, Without<Off>>()
            .iter()
            .count(),
        N as usize + N.div_ceil(3) as usize
    );

    // Writers through the old states reach the moved chunks.
    writer.for_each(&mut world, |a| a.0 += 1);
    toggles.for_each(&mut world, |mut on| {
        on.set(true);
    });
    assert_eq!(
        world.query_filtered::<RefRO<A>, With<Off>>().iter().count(),
        N.div_ceil(3) as usize
    );
    let bumped = sorted(state.iter(&world).map(|(e, a)| (e, a.0)).collect());
    let expect: Vec<_> = before.iter().map(|&(e, v)| (e, v + 1)).collect();
    assert_eq!(bumped, expect);
    assert_eq!(
        changed.iter(&world).count(),
        N as usize + N.div_ceil(3) as usize
    );

    // Archetypes created after compaction are still picked up by the old state.
    let late = world.spawn((A(99), 5u8));
    assert!(state.iter(&world).any(|(e, a)| e == late && a.0 == 99));
    world.check_invariants();
}
