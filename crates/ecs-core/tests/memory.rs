//! The layout report's world memory against a counting global allocator: within 1% for
//! several component mixes, chunk sizes and policies, after building, adding and removing a
//! component, despawning half the entities and compacting (the report's world memory plus
//! the process block cache, which holds the blocks a world empties).
//!
//! One test function only: the allocator count is process-wide, so a second test running on
//! another thread would disturb it. Not run under Miri: it checks byte accounting, not
//! memory safety, over 60,000-entity worlds that would take Miri many minutes.
#![cfg(not(miri))]
#![expect(
    unsafe_code,
    reason = "a counting global allocator is an unsafe trait impl"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use ecs_core::{ChunkPolicy, ColumnOrder, World};

/// The system allocator plus a count of live bytes.
struct Counting(AtomicUsize);

// SAFETY: every call forwards to `System` with the caller's arguments unchanged, so `System`'s
// guarantees hold; the counter is a side effect only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.0.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.0.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.0.fetch_add(new_size, Ordering::Relaxed);
        self.0.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as in `dealloc`, and `new_size` is the caller's valid size.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting(AtomicUsize::new(0));

fn live() -> usize {
    ALLOC.0.load(Ordering::Relaxed)
}

type Pos = [f32; 3];
type Vel = [i32; 3];
/// 16-byte aligned, for padding.
#[derive(Clone, Copy)]
#[repr(align(16))]
struct Simd(#[expect(dead_code, reason = "stored only for its bytes")] [f32; 4]);

/// One stage's figures: the bytes the allocator says the world's code holds since the start,
/// and what the report accounts for (the world's own memory plus the process block cache,
/// where blocks the world emptied wait).
struct Stage {
    name: &'static str,
    counted: usize,
    reported: usize,
    text: String,
}

/// Builds a world of `n` entities in several mixes, then adds and removes a component,
/// despawns half the entities (leaving spare chunks, free slots and emptied blocks) and
/// compacts, measuring after each step.
fn measure(build: fn() -> World, n: u32) -> Vec<Stage> {
    // Empty the process's cache of chunk blocks that earlier worlds left, so this world's
    // blocks are allocated (and counted) here.
    World::new().chunk_pool().release_empty();
    assert_eq!(ecs_core::ChunkPool::process_cache_bytes(), 0);
    let before = live();
    let mut stages = Vec::new();
    let mut stage = |name, world: &World, before: usize| {
        let counted = live() - before;
        let report = world.memory_report();
        let text = report.to_string();
        let reported = report.memory.total() + report.memory.process_cache_bytes;
        drop(report);
        stages.push(Stage {
            name,
            counted,
            reported,
            text,
        });
    };
    let mut world = build();
    let ids: Vec<_> = world
        .spawn_batch((0..n).map(|i| ([i as f32; 3], [0i32; 3])))
        .collect();
    world.spawn_batch((0..n / 2).map(|i| ([i as f32; 3], 1u8, 2.0f64)));
    world.spawn_batch((0..n / 3).map(|_| (Simd([0.0; 4]), 2u8)));
    world.spawn_batch((0..n / 4).map(|_| ([0u8; 100], [0.0f32; 3], Simd([1.0; 4]))));
    // `ids` is the test's, not the world's: keep it out of the count.
    let ids_bytes = ids.capacity() * size_of::<ecs_core::Entity>();
    stage("build", &world, before + ids_bytes);
    for &e in ids.iter().step_by(5) {
        world.insert(e, (3u8,)).unwrap();
    }
    for &e in ids.iter().step_by(10) {
        world.remove::<(u8,)>(e).unwrap();
    }
    stage("add/remove", &world, before + ids_bytes);
    for &e in ids.iter().take(ids.len() / 2) {
        world.despawn(e).unwrap();
    }
    stage("despawn half", &world, before + ids_bytes);
    world.compact();
    stage("compact", &world, before + ids_bytes);
    drop(world);
    drop(ids);
    stages
}

/// Makes an empty world of one configuration.
type Build = fn() -> World;

#[test]
fn reported_memory_is_within_one_percent_of_the_allocator() {
    let builds: [(&str, Build); 5] = [
        ("default", World::new),
        ("4 KiB", || World::with_chunk_size(4096).unwrap()),
        ("256 KiB", || World::with_chunk_size(256 * 1024).unwrap()),
        ("min rows", || {
            World::with_chunk_policy(ChunkPolicy::MinRows(3000)).unwrap()
        }),
        ("min padding, overrides", || {
            let mut w = World::with_chunk_size(8192).unwrap();
            w.set_column_order(ColumnOrder::MinPadding);
            w.set_chunk_size_for::<(Pos, Vel)>(64 * 1024).unwrap();
            w
        }),
    ];
    for (name, build) in builds {
        for n in [20_000, 60_000] {
            for stage in measure(build, n) {
                let Stage {
                    name: step,
                    counted,
                    reported,
                    text,
                } = stage;
                let diff = counted.abs_diff(reported) as f64 / counted as f64;
                eprintln!("{name}, {n}, {step}: allocator {counted} B, report {reported} B");
                assert!(
                    diff <= 0.01,
                    "{name}, {n} entities, after {step}: allocator {counted} B, report \
                     {reported} B ({:.2}% off)\n{text}",
                    diff * 100.0
                );
            }
        }
    }
}
