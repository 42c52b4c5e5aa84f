//! A model test of unwinding (issue 53): random sequences of hierarchy and many-to-many
//! relationship edits, despawns, subtree despawns and hand-written target lists, in a world
//! whose hooks panic at random points. After every operation, panicking or not, the world
//! passes `check_invariants`: both sides of every relationship agree, and no entity is left
//! half made. Sized to run under Miri (two seeds of 30 steps there: about a minute).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ecs_core::{
    ChildOf, Children, ComponentHooks, DeferredWorld, Entity, HookContext, RelationshipTarget,
    World,
};

mod common;
use common::relations::Likes;

/// A component whose hooks panic when the countdown reaches zero.
struct Fragile;

thread_local! {
    static COUNTDOWN: Cell<u32> = const { Cell::new(u32::MAX) };
}

fn maybe_panic(_: DeferredWorld<'_>, _: HookContext) {
    COUNTDOWN.with(|c| {
        let left = c.get();
        c.set(left.saturating_sub(1));
        if left == 0 {
            c.set(u32::MAX);
            panic!("a hook of Fragile panics");
        }
    });
}

/// xorshift64*: a fixed sequence per seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn pick(rng: &mut Rng, live: &[Entity]) -> Option<Entity> {
    (!live.is_empty()).then(|| live[rng.below(live.len())])
}

fn run(seed: u64, steps: usize) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut world = World::new();
    world.register_relationship::<Likes>().unwrap();
    world
        .set_component_hooks::<Fragile>(
            ComponentHooks::new()
                .on_add(maybe_panic)
                .on_insert(maybe_panic)
                .on_replace(maybe_panic)
                .on_remove(maybe_panic),
        )
        .unwrap();
    let mut live: Vec<Entity> = Vec::new();
    let mut panics = 0;
    for step in 0..steps {
        // Arm a panic a few hook calls ahead about every third step.
        let armed = if rng.below(3) == 0 {
            rng.below(4) as u32
        } else {
            u32::MAX
        };
        COUNTDOWN.with(|c| c.set(armed));
        let a = pick(&mut rng, &live);
        let b = pick(&mut rng, &live);
        let op = rng.below(9);
        let fragile = rng.below(2) == 0;
        let outcome = catch_unwind(AssertUnwindSafe(|| match (op, a, b) {
            (0, ..) | (_, None, _) => {
                let e = world.spawn((step as u32,));
                if fragile {
                    let _ = world.insert(e, (Fragile,));
                }
            }
            (1, Some(parent), _) => {
                if fragile {
                    world.spawn((ChildOf(parent), Fragile));
                } else {
                    world.spawn((ChildOf(parent),));
                }
            }
            (2, Some(child), Some(parent)) => {
                let _ = world.set_parent(child, parent);
            }
            (3, Some(e), _) => {
                let _ = world.despawn(e);
            }
            (4, Some(source), Some(target)) => {
                let mut targets = world
                    .get::<Likes>(source)
                    .map(|l| l.0.clone())
                    .unwrap_or_default();
                targets.push(target);
                let _ = world.insert(source, (Likes(targets), Fragile));
            }
            (5, Some(target), Some(other)) => {
                // A hand-written list, with a repeat and the target itself.
                let list = Children::from_sources(vec![other, other, target]);
                let _ = world.insert(target, (list,));
            }
            (6, Some(e), _) => {
                let _ = world.remove::<(Fragile,)>(e);
            }
            (7, Some(e), _) => {
                let _ = world.remove_parent(e);
            }
            (_, Some(e), _) => {
                let _ = world.take::<(Likes,)>(e);
            }
        }));
        COUNTDOWN.with(|c| c.set(u32::MAX));
        if outcome.is_err() {
            panics += 1;
        }
        live = world
            .archetypes()
            .iter()
            .flat_map(|arch| arch.chunks().iter())
            .flat_map(|chunk| chunk.entities().iter().copied())
            .collect();
        world.check_invariants();
    }
    // The sequence did exercise the panicking paths (else the test proves nothing).
    assert!(panics > 0, "seed {seed}: no hook panicked in {steps} steps");
}

#[test]
fn random_edits_with_panicking_hooks_keep_every_relationship_consistent() {
    let (seeds, steps) = if cfg!(miri) { (2, 30) } else { (64, 300) };
    for seed in 0..seeds {
        run(seed, steps);
    }
}
