//! Change ticks: a write through `RefRW` marks the rows it reaches whichever path it takes
//! (`for_each`, `iter_mut`, one-shot `iter`, `for_each_chunk` slices or single columns,
//! `par_for_each`, `get_mut`), so a `Changed<T>` state sees exactly those rows in its next run and
//! not in the one after, whichever path that state runs through (`for_each_chunk` hands out
//! whole chunks: every chunk with a passing row).
//!
//! The tests that run on rayon's pool have `par_` in their names: see `support` for how Miri runs
//! them.

use std::sync::Mutex;

use ecs_core::{Entity, World};
use ecs_query::{Changed, QueryExt, QueryState, RefRO, RefRW, Without};

mod support;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Frozen;

/// Entities per group: several 512-byte chunks each (42 rows of `Hp`). Under Miri 50: two
/// chunks per group (42 + 8), the fewest that keep a swap-remove and a `par_for_each` split
/// crossing a chunk boundary.
const N: u32 = if cfg!(miri) { 50 } else { 400 };

/// Everything in this module's worlds that is not frozen is written by [`write`].
type Writer = (RefRW<Hp>, Without<Frozen>);
/// The observer of changes.
type Seen = (Entity, Changed<Hp>);

/// A world of `N` writable and `N` frozen entities, and the ids of each group, sorted.
fn world() -> (World, Vec<Entity>, Vec<Entity>) {
    let mut world = World::with_test_chunk_size(512);
    let mut live: Vec<Entity> = world.spawn_batch((0..N).map(|i| (Hp(i),))).collect();
    let mut frozen: Vec<Entity> = world.spawn_batch((0..N).map(|i| (Hp(i), Frozen))).collect();
    live.sort();
    frozen.sort();
    (world, live, frozen)
}

#[derive(Clone, Copy, Debug)]
enum WritePath {
    ForEach,
    OneShotForEach,
    IterMut,
    OneShotIter,
    ChunkColumns,
    ChunkColumnMut,
    OneShotChunk,
    ParForEach,
    OneShotParForEach,
    /// `QueryState::get_mut` on the first writable entity only.
    GetMut,
    /// `world.query().get` on the first writable entity only.
    OneShotGet,
}

#[derive(Clone, Copy, Debug)]
enum ReadPath {
    Iter,
    ForEach,
    ForEachChunk,
    ParForEach,
}

/// Adds one to every writable `Hp` (or to the first only, for the `get` paths).
fn write(world: &mut World, path: WritePath, first: Entity) {
    let mut state = QueryState::<Writer>::new(world);
    match path {
        WritePath::ForEach => state.for_each(world, |(h, ())| h.0 += 1),
        WritePath::OneShotForEach => world.query::<Writer>().for_each(|(h, ())| h.0 += 1),
        WritePath::IterMut => state.iter_mut(world).for_each(|(h, ())| h.0 += 1),
        WritePath::OneShotIter => world.query::<Writer>().iter().for_each(|(h, ())| h.0 += 1),
        WritePath::ChunkColumns => state.for_each_chunk(world, |mut chunk| {
            let (hs, ()) = chunk.columns();
            hs.iter_mut().for_each(|h| h.0 += 1);
        }),
        WritePath::ChunkColumnMut => state.for_each_chunk(world, |mut chunk| {
            chunk.column_mut::<Hp>().iter_mut().for_each(|h| h.0 += 1);
        }),
        WritePath::OneShotChunk => world.query::<Writer>().for_each_chunk(|mut chunk| {
            let (hs, ()) = chunk.columns();
            hs.iter_mut().for_each(|h| h.0 += 1);
        }),
        WritePath::ParForEach => {
            support::in_pool(|| state.par_for_each(world, |(h, ())| h.0 += 1));
        }
        WritePath::OneShotParForEach => {
            support::in_pool(|| world.query::<Writer>().par_for_each(|(h, ())| h.0 += 1));
        }
        WritePath::GetMut => state.get_mut(world, first).unwrap().0 .0 += 1,
        WritePath::OneShotGet => world.query::<Writer>().get(first).unwrap().0 .0 += 1,
    }
}

/// The entities a `Changed<Hp>` state's run reports, sorted; first checks that `count`, which
/// is not a run, predicts them.
fn seen(state: &mut QueryState<Seen>, world: &mut World, path: ReadPath) -> Vec<Entity> {
    let count = state.count(world);
    let rows_of_chunks = matches!(path, ReadPath::ForEachChunk);
    let mut v = match path {
        ReadPath::Iter => state.iter(world).map(|(e, ())| e).collect(),
        ReadPath::ForEach => {
            let mut v = Vec::new();
            state.for_each(world, |(e, ())| v.push(e));
            v
        }
        ReadPath::ForEachChunk => {
            let mut v = Vec::new();
            state.for_each_chunk(world, |chunk| v.extend_from_slice(chunk.entities()));
            v
        }
        ReadPath::ParForEach => {
            let v = Mutex::new(Vec::new());
            support::in_pool(|| state.par_for_each(world, |(e, ())| v.lock().unwrap().push(e)));
            v.into_inner().unwrap()
        }
    };
    v.sort();
    if rows_of_chunks {
        assert!(
            count <= v.len(),
            "count exceeds the chunks' rows ({path:?})"
        );
    } else {
        assert_eq!(count, v.len(), "count disagrees with the run ({path:?})");
    }
    v
}

/// The entities sharing `e`'s chunk, sorted: the rows of the chunk view a `for_each_chunk`
/// reader gets after a write to `e` alone.
fn chunk_mates(world: &World, e: Entity) -> Vec<Entity> {
    let loc = world.location(e).unwrap();
    let arch = &world.archetypes()[loc.archetype.index()];
    let (c, _) = arch.split_row(loc.row as usize);
    let mut v = arch.chunks()[c].entities().to_vec();
    v.sort();
    v
}

fn check(write_path: WritePath, read_path: ReadPath) {
    let (mut world, live, frozen) = world();
    let mut changed = QueryState::<Seen>::new(&mut world);
    let mut all: Vec<Entity> = live.iter().chain(&frozen).copied().collect();
    all.sort();
    let ctx = format!("write {write_path:?}, read {read_path:?}");
    // A new state sees every chunk as changed; its next run sees nothing.
    assert_eq!(seen(&mut changed, &mut world, read_path), all, "{ctx}");
    assert_eq!(seen(&mut changed, &mut world, read_path), [], "{ctx}");

    let before: Vec<(Entity, u32)> = all
        .iter()
        .map(|&e| (e, world.get::<Hp>(e).unwrap().0))
        .collect();
    write(&mut world, write_path, live[0]);
    // Reads in between never stamp.
    let mut reader = QueryState::<RefRO<Hp>>::new(&mut world);
    reader.iter(&world).for_each(drop);
    world
        .query::<RefRO<Hp>>()
        .for_each_chunk(|c| assert!(!c.is_empty()));

    let want = match (write_path, read_path) {
        (WritePath::GetMut | WritePath::OneShotGet, ReadPath::ForEachChunk) => {
            chunk_mates(&world, live[0])
        }
        (WritePath::GetMut | WritePath::OneShotGet, _) => vec![live[0]],
        _ => live.clone(),
    };
    assert_eq!(seen(&mut changed, &mut world, read_path), want, "{ctx}");
    assert_eq!(seen(&mut changed, &mut world, read_path), [], "{ctx}");

    // The writes landed, once each, on the writable entities only (just the first for `get`).
    let get = matches!(write_path, WritePath::GetMut | WritePath::OneShotGet);
    for (e, old) in before {
        let wrote = !frozen.contains(&e) && (!get || e == live[0]);
        let hp = world.get::<Hp>(e).unwrap().0;
        assert_eq!(hp, old + u32::from(wrote), "{e:?}, {ctx}");
    }
}

const SEQ_WRITES: [WritePath; 9] = [
    WritePath::ForEach,
    WritePath::OneShotForEach,
    WritePath::IterMut,
    WritePath::OneShotIter,
    WritePath::ChunkColumns,
    WritePath::ChunkColumnMut,
    WritePath::OneShotChunk,
    WritePath::GetMut,
    WritePath::OneShotGet,
];
const SEQ_READS: [ReadPath; 3] = [ReadPath::Iter, ReadPath::ForEach, ReadPath::ForEachChunk];

#[test]
fn writes_through_every_path_stamp_changed() {
    for (i, w) in SEQ_WRITES.into_iter().enumerate() {
        if cfg!(miri) {
            // One reader per writer keeps Miri's run short; every pairing runs natively.
            check(w, SEQ_READS[i % SEQ_READS.len()]);
        } else {
            SEQ_READS.into_iter().for_each(|r| check(w, r));
        }
    }
}

#[test]
fn par_for_each_writes_stamp_changed() {
    for (i, w) in [WritePath::ParForEach, WritePath::OneShotParForEach]
        .into_iter()
        .enumerate()
    {
        for (j, r) in SEQ_READS.into_iter().enumerate() {
            // Under Miri every reader still follows a parallel write, and each parallel
            // writer runs, but not every pairing (reads are sequential code).
            if !cfg!(miri) || (i + j) % 2 == 0 {
                check(w, r);
            }
        }
    }
}

/// Under Miri, one writer for each way a write marks rows (a bulk `for_each` stamp, rows
/// marked as an iterator hands them out, a chunk view's stamp, one row through `get_mut`, a
/// parallel run); every writer still runs under Miri in the test above and its sequential
/// twin.
const PAR_READ_WRITES_UNDER_MIRI: [WritePath; 5] = [
    WritePath::ForEach,
    WritePath::IterMut,
    WritePath::ChunkColumnMut,
    WritePath::GetMut,
    WritePath::ParForEach,
];

#[test]
fn par_for_each_sees_changes() {
    let writes: Vec<WritePath> = if cfg!(miri) {
        PAR_READ_WRITES_UNDER_MIRI.to_vec()
    } else {
        SEQ_WRITES
            .into_iter()
            .chain([WritePath::ParForEach])
            .collect()
    };
    for w in writes {
        check(w, ReadPath::ParForEach);
    }
}

/// A writer that is built but never advanced touches no chunk, so it stamps nothing.
#[test]
fn an_unadvanced_iterator_stamps_nothing() {
    let (mut world, live, _) = world();
    let mut changed = QueryState::<Seen>::new(&mut world);
    changed.iter(&world).for_each(drop);
    let mut writer = QueryState::<Writer>::new(&mut world);
    drop(writer.iter_mut(&mut world));
    assert_eq!(seen(&mut changed, &mut world, ReadPath::Iter), []);
    // Advancing once marks the one row handed out.
    let mut it = writer.iter_mut(&mut world);
    it.next().unwrap().0 .0 += 1;
    drop(it);
    let first = seen(&mut changed, &mut world, ReadPath::Iter);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(live.contains(&first[0]));
}

/// Issue #13, defect 1: `spawn_batch` into a partly filled chunk must stamp that chunk, or a
/// `Changed<T>` reader never sees the new rows.
#[test]
fn spawn_batch_into_a_partly_filled_chunk_is_seen_by_changed() {
    let mut world = World::new();
    let old: Vec<Entity> = world.spawn_batch((0..3u32).map(|i| (Hp(i),))).collect();
    let mut changed = QueryState::<Seen>::new(&mut world);
    assert_eq!(changed.iter(&world).count(), old.len()); // first run: everything
    assert_eq!(changed.iter(&world).count(), 0);
    let mut new: Vec<Entity> = world.spawn_batch((0..5u32).map(|i| (Hp(i),))).collect();
    new.sort();
    let mut got: Vec<Entity> = changed.iter(&world).map(|(e, ())| e).collect();
    got.sort();
    assert_eq!(got, new, "exactly the batch-spawned rows");
    assert_eq!(changed.iter(&world).count(), 0);
}

/// Issue #13, the grass case: 30 % of the patches written through `get_mut`, spread over every
/// chunk; `Changed` passes exactly those rows, not whole chunks.
#[test]
fn changed_passes_exactly_the_rows_written_through_get() {
    // Under Miri 100 patches: three 42-row chunks, so the writes still span several.
    const PATCHES: u32 = if cfg!(miri) { 100 } else { 100_000 };
    // Under Miri, small chunks keep the writes spread over several of them.
    let mut world = if cfg!(miri) {
        World::with_test_chunk_size(512)
    } else {
        World::new()
    };
    let patches: Vec<Entity> = world.spawn_batch((0..PATCHES).map(|i| (Hp(i),))).collect();
    let mut census = QueryState::<Seen>::new(&mut world);
    assert_eq!(census.iter(&world).count(), patches.len());
    let mut grazing = QueryState::<RefRW<Hp>>::new(&mut world);
    let mut want: Vec<Entity> = patches.iter().copied().step_by(10).collect();
    want.extend(patches.iter().copied().skip(3).step_by(10));
    want.extend(patches.iter().copied().skip(7).step_by(10));
    for &e in &want {
        grazing.get_mut(&mut world, e).unwrap().0 += 1;
    }
    want.sort();
    assert_eq!(want.len(), PATCHES as usize * 3 / 10);
    let arch = &world.archetypes()[world.location(patches[0]).unwrap().archetype.index()];
    assert!(arch.chunks().len() > 1, "the writes span several chunks");
    assert_eq!(census.count(&world), want.len());
    let mut got: Vec<Entity> = census.iter(&world).map(|(e, ())| e).collect();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(census.iter(&world).count(), 0);
}

/// Rows moved by swap-remove, by an archetype move (insert / remove) or into a chunk a
/// `for_each` bulk-stamped carry their own ticks: a move is not a write.
#[test]
fn moved_rows_carry_their_ticks() {
    let (mut world, live, frozen) = world();
    let mut changed = QueryState::<Seen>::new(&mut world);
    changed.iter(&world).for_each(drop);
    // Write the last live row, then despawn the first: the last row fills the hole.
    let last = *live
        .iter()
        .max_by_key(|e| world.location(**e).unwrap().row)
        .unwrap();
    *world.get_mut::<Hp>(last).unwrap() = Hp(7);
    let first = *live
        .iter()
        .min_by_key(|e| world.location(**e).unwrap().row)
        .unwrap();
    world.despawn(first).unwrap();
    world.check_invariants();
    assert_eq!(seen(&mut changed, &mut world, ReadPath::Iter), [last]);
    // Inserting another component moves the row without writing `Hp`.
    let other = live[live.len() / 2];
    world.insert_one(other, 1u8).unwrap();
    world.check_invariants();
    assert_eq!(seen(&mut changed, &mut world, ReadPath::ForEach), []);
    // A full `for_each` bulk-stamps every writable chunk; a row then moved into one of those
    // chunks (a frozen entity thawed) keeps its older tick.
    let mut writer = QueryState::<Writer>::new(&mut world);
    writer.for_each(&mut world, |(h, ())| h.0 += 1);
    world.remove::<(u8,)>(other).unwrap();
    world.remove::<(Frozen,)>(frozen[0]).unwrap();
    world.check_invariants();
    let mut want: Vec<Entity> = live.iter().copied().filter(|&e| e != first).collect();
    want.sort();
    assert_eq!(seen(&mut changed, &mut world, ReadPath::ForEach), want);
    // Overwriting `insert` writes the row.
    world.insert_one(other, Hp(1)).unwrap();
    assert_eq!(seen(&mut changed, &mut world, ReadPath::Iter), [other]);
}

/// Parallel paths with a row filter: a `par_fold` over `Changed<Hp>` rows, and the marks a
/// parallel writer leaves for a later reader, are the same on the pool and on one thread.
#[test]
fn par_changed_rows_are_the_same_on_any_thread_count() {
    let run = |sequential: bool| {
        let (mut world, live, _) = world();
        let mut changed = QueryState::<(RefRO<Hp>, Changed<Hp>)>::new(&mut world);
        changed.iter(&world).for_each(drop);
        for &e in live.iter().step_by(3) {
            world.get_mut::<Hp>(e).unwrap().0 += 1000;
        }
        let go = || {
            let sum = changed.par_fold(
                &mut world,
                || 0u64,
                |a, (h, ())| a + u64::from(h.0),
                |a, b| a + b,
            );
            let mut writer = QueryState::<Writer>::new(&mut world);
            writer.par_for_each(&mut world, |(h, ())| h.0 += 1);
            let mut after = QueryState::<Seen>::new(&mut world);
            after.iter(&world).for_each(drop);
            writer.par_for_each(&mut world, |(h, ())| h.0 += 1);
            (sum, seen(&mut after, &mut world, ReadPath::Iter))
        };
        if sequential {
            ecs_query::Parallelism::Sequential.scope(go)
        } else {
            support::in_pool(go)
        }
    };
    let (on_pool, alone) = (run(false), run(true));
    assert_eq!(on_pool, alone);
    assert!(on_pool.0 > 0);
    assert_eq!(on_pool.1.len(), N as usize, "every writable row, each once");
}
