//! Enable toggles as changes: a bit that flips marks its row's `T` changed, for `Changed<T>`;
//! handing out `EnabledRW` handles, reading them, or setting a bit to the value it has marks
//! nothing. The same rows are reported from a sequential and a parallel toggle, and from
//! `World::set_enabled`.

use std::sync::Arc;

use ecs_core::{Entity, World};
use ecs_query::{Changed, EnabledRW, IgnoreEnabled, Parallelism, QueryExt, QueryState, RefRO};

struct Infectious;

const N: u32 = if cfg!(miri) { 200 } else { 20_000 };

/// `N` people (several 16 KiB chunks), all infectious, and a reader of `Changed<Infectious>`
/// that has seen the spawns.
fn build() -> (World, Vec<Entity>, FlipReader) {
    let mut world = World::new();
    world.register_enableable::<Infectious>();
    let ids: Vec<Entity> = world.spawn_batch((0..N).map(|i| (i, Infectious))).collect();
    let mut reader = FlipReader::new(&mut world);
    assert_eq!(
        reader.read(&world).len(),
        N as usize,
        "a new reader sees the spawns"
    );
    assert!(reader.read(&world).is_empty());
    (world, ids, reader)
}

type FlipReader = QueryState<RefRO<u32>, IgnoreEnabled<Changed<Infectious>>>;

trait Read {
    fn read(&mut self, world: &World) -> Vec<u32>;
}

impl Read for FlipReader {
    fn read(&mut self, world: &World) -> Vec<u32> {
        let mut rows: Vec<u32> = self.iter(world).copied().collect();
        rows.sort_unstable();
        rows
    }
}

fn flips(i: u32) -> bool {
    i % 97 == 5 || i % 1000 == 0
}

fn expected() -> Vec<u32> {
    (0..N).filter(|&i| flips(i)).collect()
}

#[test]
fn a_toggle_reader_sees_exactly_the_flipped_rows_once() {
    let (mut world, _, mut reader) = build();
    world
        .query::<(RefRO<u32>, EnabledRW<Infectious>)>()
        .for_each(|(&i, mut on)| {
            // Every handle is set; only the rows that change value are changes.
            on.set(!flips(i));
        });
    assert_eq!(reader.read(&world), expected());
    assert!(reader.read(&world).is_empty(), "seen once");
}

#[test]
fn handing_out_reading_or_setting_to_the_same_value_marks_nothing() {
    let (mut world, _, mut reader) = build();
    world.query::<EnabledRW<Infectious>>().for_each(|mut on| {
        let now = on.get();
        on.set(now);
    });
    let handed_out = world
        .query::<(RefRO<u32>, EnabledRW<Infectious>)>()
        .iter()
        .count(); // handles out, none used
    assert_eq!(handed_out, N as usize);
    assert!(reader.read(&world).is_empty());
}

#[test]
fn world_set_enabled_marks_only_a_flip() {
    let (mut world, ids, mut reader) = build();
    world.set_enabled::<Infectious>(ids[7], true).unwrap(); // already on
    assert!(reader.read(&world).is_empty());
    world.set_enabled::<Infectious>(ids[7], false).unwrap();
    assert_eq!(reader.read(&world), [7]);
}

fn par_flips(pool: Option<Arc<rayon::ThreadPool>>) -> Vec<u32> {
    let (mut world, _, mut reader) = build();
    let mut toggles = QueryState::<(RefRO<u32>, EnabledRW<Infectious>)>::new(&mut world);
    let mut go = |world: &mut World| {
        toggles.par_for_each(world, |(&i, mut on)| {
            on.set(!flips(i));
        });
    };
    match pool {
        None => Parallelism::Sequential.scope(|| go(&mut world)),
        Some(pool) => Parallelism::Pool(pool).scope(|| go(&mut world)),
    }
    world.check_invariants();
    reader.read(&world)
}

#[test]
fn par_toggles_report_the_same_rows_on_any_thread_count() {
    let want = expected();
    assert_eq!(par_flips(None), want);
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        assert_eq!(par_flips(Some(Arc::new(pool))), want, "{threads} threads");
    }
}
