//! Handles that must never reach a row: forged ids, reserved ids before and after a flush, and a
//! despawned handle whose slot the hidden test hook tries to age backwards.
//!
//! From the second outside review's attacks on the public API from safe code only (no
//! `unsafe` block, no `unsafe impl`), after issue 12 closed the registry and `System` routes.
//! Each test is named after the behaviour a user relies on and asserts it.
//! The stale-handle test reproduced an attack that succeeded when it was written (a revived
//! stale handle); it failed then and passes since its fix (see docs/reliability.md, issue 12).
//!
//! Small and so Miri runs it:
//! `MIRIFLAGS="-Zmiri-tree-borrows" cargo +nightly miri test -p ecs --test stale_and_forged_handles`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs::prelude::*;

mod common;
use common::{message, Pos};

#[test]
fn forged_and_reserved_handles_never_reach_a_row() {
    let mut world = World::with_test_chunk_size(256);
    let live: Vec<Entity> = world.spawn_batch((0..30).map(|i| (Pos(i),))).collect();
    world.despawn(live[3]).unwrap();
    let reserved = world.reserve_entity(); // reuses slot 3 with the next generation
    let mut state = QueryState::<RefRO<Pos>>::new(&mut world);
    for index in 0..40u32 {
        for generation in 1..4u32 {
            let forged = Entity::from_bits(u64::from(generation) << 32 | u64::from(index))
                .expect("non-zero generation");
            let real = live.iter().position(|&e| e == forged && e != live[3]);
            match real {
                Some(i) => {
                    assert_eq!(world.get::<Pos>(forged), Ok(&Pos(i as u32)));
                    assert_eq!(state.get(&world, forged).map(|p| p.0), Ok(i as u32));
                }
                None => {
                    assert!(world.get::<Pos>(forged).is_err(), "{forged}");
                    assert!(state.get(&world, forged).is_err(), "{forged}");
                    assert!(!world.contains(forged), "{forged}");
                }
            }
        }
    }
    assert_eq!(Entity::from_bits(5), None, "generation 0 is never a handle");
    assert!(!world.contains(reserved) && world.get::<Pos>(reserved).is_err());
    world.flush();
    assert!(world.contains(reserved) && world.get::<Pos>(reserved).is_err());
    world.check_invariants();
}

/// `World::set_slot_generation_for_tests` is `#[doc(hidden)]` but public and safe: it may set
/// a free slot's generation *back*, so a despawned entity's handle resolves to the next entity
/// spawned in that slot, which the stale-handle guarantee (docs/reliability.md) rules out.
#[test]
fn a_stale_handle_never_resolves_to_a_later_entity() {
    let mut world = World::new();
    let old = world.spawn((Pos(1),));
    world.despawn(old).unwrap();
    let back = catch_unwind(AssertUnwindSafe(|| {
        world.set_slot_generation_for_tests(
            old.index(),
            std::num::NonZeroU32::new(old.generation()).unwrap(),
        );
    }));
    let refusal = message(&*back.expect_err("the hook refuses to age a slot backwards"));
    assert!(refusal.contains("aged forward"), "{refusal}");
    let new = world.spawn((Pos(2),));
    assert!(
        !world.contains(old),
        "the despawned handle {old} resolves to {new}, a different entity"
    );
}
