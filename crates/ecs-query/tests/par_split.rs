//! Parallel runs hand idle threads parts of other threads' row ranges (down to parts of one
//! chunk's task). Whatever the cut, every matched row is visited exactly once, on any thread
//! count: in archetypes with and without enable bits (parts there start on 64-row words), in
//! chunks a filter leaves mixed (their tasks are never cut), with `par_for_each` and
//! `par_for_each_init`, and with rows whose cost varies so that threads steal from each other.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use ecs_core::{Entity, World};
use ecs_query::{Changed, EnabledRW, Parallelism, QueryState, RefRO, RefRW};

/// How many times each row was visited, by the row's own value.
struct Visits(Vec<AtomicU32>);

impl Visits {
    fn new(n: usize) -> Self {
        Self((0..n).map(|_| AtomicU32::new(0)).collect())
    }

    fn counts(&self) -> Vec<u32> {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).collect()
    }
}

struct Toggle;

/// Rows without enable bits. Under Miri, tasks of 64 rows that parts of 32 may halve.
const PLAIN: u32 = if cfg!(miri) { 150 } else { 3_000 };
/// Rows with enable bits: enough that the init test's tasks span several 64-row words
/// (tasks are an eighth of a thread's share, and only parts of 64 rows or more are cut off).
/// Under Miri, single-word tasks, which are never cut.
const WITH_BITS: u32 = if cfg!(miri) { 150 } else { 12_000 };

/// Busy work whose cost grows with `i % 97`, so the first threads to finish must steal.
fn work(i: u32) -> u32 {
    let spins = if cfg!(miri) { 1 } else { (i % 97) * 40 };
    (0..spins).fold(i, |acc, k| acc.rotate_left(3) ^ k)
}

/// Two archetypes: `(u32,)` rows with no enable bits, `(u32, Toggle)` rows with them; each
/// row's `u32` is its index in the returned ids.
fn world_and_ids() -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.register_enableable::<Toggle>();
    let mut ids: Vec<Entity> = world.spawn_batch((0..PLAIN).map(|i| (i,))).collect();
    ids.extend(world.spawn_batch((PLAIN..PLAIN + WITH_BITS).map(|i| (i, Toggle))));
    (world, ids)
}

fn world() -> World {
    world_and_ids().0
}

fn pools() -> Vec<Option<Arc<rayon::ThreadPool>>> {
    let pool = |n| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build();
        Some(Arc::new(pool.expect("a pool")))
    };
    if cfg!(miri) {
        vec![None, pool(3)]
    } else {
        vec![None, pool(1), pool(2), pool(4)]
    }
}

fn on(pool: &Option<Arc<rayon::ThreadPool>>, f: impl FnOnce()) {
    match pool {
        None => Parallelism::Sequential.scope(f),
        Some(pool) => Parallelism::Pool(pool.clone()).scope(f),
    }
}

#[test]
fn par_for_each_visits_every_row_once_however_it_is_cut() {
    let total = (PLAIN + WITH_BITS) as usize;
    for pool in pools() {
        let mut world = world();
        let mut state = QueryState::<RefRW<u32>>::new(&mut world);
        let visits = Visits::new(total);
        on(&pool, || {
            state.par_for_each(&mut world, |v| {
                visits.0[*v as usize].fetch_add(1, Ordering::Relaxed);
                std::hint::black_box(work(*v));
                *v += total as u32;
            });
        });
        assert_eq!(visits.counts(), vec![1; total], "pool {pool:?}");
        let mut read = QueryState::<RefRO<u32>>::new(&mut world);
        let mut values: Vec<u32> = read.iter(&world).copied().collect();
        values.sort_unstable();
        let want: Vec<u32> = (total as u32..2 * total as u32).collect();
        assert_eq!(values, want, "every row written once");
    }
}

#[test]
fn par_for_each_init_visits_every_row_once_and_toggles_stay_exact() {
    let total = (PLAIN + WITH_BITS) as usize;
    for pool in pools() {
        let (mut world, ids) = world_and_ids();
        let mut state = QueryState::<(EnabledRW<Toggle>, RefRO<u32>)>::new(&mut world);
        let visits = Visits::new(total);
        let states = AtomicU32::new(0);
        on(&pool, || {
            state.par_for_each_init(
                &mut world,
                || states.fetch_add(1, Ordering::Relaxed),
                |_, (mut toggle, &v)| {
                    visits.0[v as usize].fetch_add(1, Ordering::Relaxed);
                    std::hint::black_box(work(v));
                    toggle.set(v % 3 != 0);
                },
            );
        });
        let counts = visits.counts();
        assert!(counts[..PLAIN as usize].iter().all(|&c| c == 0));
        assert!(counts[PLAIN as usize..].iter().all(|&c| c == 1), "{pool:?}");
        assert!(states.load(Ordering::Relaxed) >= 1);
        // Every toggle landed: parts of one chunk never shared an enable-mask word.
        let wrong: Vec<u32> = (PLAIN..PLAIN + WITH_BITS)
            .filter(|&v| world.is_enabled::<Toggle>(ids[v as usize]) != Ok(v % 3 != 0))
            .collect();
        assert!(
            wrong.is_empty(),
            "pool {pool:?}: rows {wrong:?} lost their toggle"
        );
        world.check_invariants();
    }
}

#[test]
fn par_mixed_chunks_are_visited_by_their_passing_rows_only() {
    let total = (PLAIN + WITH_BITS) as usize;
    for pool in pools() {
        let (mut world, ids) = world_and_ids();
        let mut changed = QueryState::<RefRO<u32>, Changed<u32>>::new(&mut world);
        changed.for_each(&mut world, |_| {});
        // Write every fifth row, so each chunk is left mixed for `Changed<u32>`.
        for &e in ids.iter().step_by(5) {
            *world.get_mut::<u32>(e).unwrap() += 0;
        }
        let visits = Visits::new(total);
        on(&pool, || {
            changed.par_for_each(&mut world, |&v| {
                visits.0[v as usize].fetch_add(1, Ordering::Relaxed);
                std::hint::black_box(work(v));
            });
        });
        let want: Vec<u32> = (0..total as u32).map(|v| u32::from(v % 5 == 0)).collect();
        assert_eq!(visits.counts(), want, "pool {pool:?}");
    }
}
