//! The fixed family of query shapes the surface model runs, and how each is checked.
//!
//! A shape names a query type `Q` and a filter `F`, the model's matching rule, what each item
//! must read back, and which kinds it writes. [`run_shape`] runs a shape through one of the
//! public paths (`iter`, `for_each`, `for_each_chunk`, `get`, `count`), either one-shot off
//! the world or through a `QueryState` cached across the whole case.

use std::any::type_name;
use std::collections::BTreeMap;

use ecs::prelude::*;
use ecs::query::{QueryFilter, WorldQuery};
use ecs_test_support::shapes::{self, Path};

use super::{code, Harness, Kind, Name, Num, Row, Tracked, Wide, Zst, ABSENT};
use super::{NAME, NUM, TRACKED, WIDE, ZST};

/// One query type of the family.
trait Shape: 'static {
    type Q: WorldQuery + 'static;
    type F: QueryFilter + 'static;
    /// Whether a cached state may run it (a `Changed` filter depends on the state's history,
    /// which the model does not track; a fresh state sees every chunk as changed).
    const CACHEABLE: bool = true;
    /// Kinds the query writes (where the entity has them).
    const WRITES: &'static [usize] = &[];
    /// Whether an entity with `row` matches.
    fn matches(row: &Row) -> bool;
    /// What [`Shape::observe`] must report for a matching `row`.
    fn expect(row: &Row) -> Vec<u64>;
    /// Reads the item, then writes `seed` into the kinds in `WRITES`.
    fn observe(item: <Self::Q as WorldQuery>::Item<'_>, seed: u32) -> (Entity, Vec<u64>);
}

fn has(row: &Row, kind: usize) -> bool {
    row[kind].is_some()
}

fn value(row: &Row, kind: usize) -> u64 {
    row[kind].expect("matched rows have it")
}

fn optional(row: &Row, kind: usize) -> u64 {
    row[kind].unwrap_or(ABSENT)
}

fn read_opt<K: Kind>(v: Option<&K>) -> u64 {
    v.map_or(ABSENT, K::read)
}

/// `(Entity, RefRO<Tracked>)`.
struct ReadTracked;
impl Shape for ReadTracked {
    type Q = (Entity, RefRO<Tracked>);
    type F = ();
    fn matches(row: &Row) -> bool {
        has(row, TRACKED)
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![value(row, TRACKED)]
    }
    fn observe((e, t): (Entity, &Tracked), _: u32) -> (Entity, Vec<u64>) {
        (e, vec![t.read()])
    }
}

/// `(Entity, RefRW<Num>, Option<RefRO<Name>>)` with `With<Zst>`.
struct WriteNumWithZst;
impl Shape for WriteNumWithZst {
    type Q = (Entity, RefRW<Num>, Option<RefRO<Name>>);
    type F = With<Zst>;
    const WRITES: &'static [usize] = &[NUM];
    fn matches(row: &Row) -> bool {
        has(row, NUM) && has(row, ZST)
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![value(row, NUM), optional(row, NAME)]
    }
    fn observe((e, s, l): (Entity, &mut Num, Option<&Name>), seed: u32) -> (Entity, Vec<u64>) {
        let seen = vec![s.read(), read_opt(l)];
        s.mutate(seed);
        (e, seen)
    }
}

/// `(Entity, RefRO<Wide>)` with `Without<Tracked>`.
struct WideWithoutTracked;
impl Shape for WideWithoutTracked {
    type Q = (Entity, RefRO<Wide>);
    type F = Without<Tracked>;
    fn matches(row: &Row) -> bool {
        has(row, WIDE) && !has(row, TRACKED)
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![value(row, WIDE)]
    }
    fn observe((e, w): (Entity, &Wide), _: u32) -> (Entity, Vec<u64>) {
        (e, vec![w.read()])
    }
}

/// `(Entity, Option<RefRO<Num>>)` with `Or<(With<Tracked>, With<Name>)>`.
struct OptNumOr;
impl Shape for OptNumOr {
    type Q = (Entity, Option<RefRO<Num>>);
    type F = Or<(With<Tracked>, With<Name>)>;
    fn matches(row: &Row) -> bool {
        has(row, TRACKED) || has(row, NAME)
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![optional(row, NUM)]
    }
    fn observe((e, s): (Entity, Option<&Num>), _: u32) -> (Entity, Vec<u64>) {
        (e, vec![read_opt(s)])
    }
}

/// `Entity` with `(With<Tracked>, Without<Num>)`.
struct EntitiesTrackedNotNum;
impl Shape for EntitiesTrackedNotNum {
    type Q = Entity;
    type F = (With<Tracked>, Without<Num>);
    fn matches(row: &Row) -> bool {
        has(row, TRACKED) && !has(row, NUM)
    }
    fn expect(_: &Row) -> Vec<u64> {
        Vec::new()
    }
    fn observe(e: Entity, _: u32) -> (Entity, Vec<u64>) {
        (e, Vec::new())
    }
}

/// `(Entity, RefRW<Tracked>, RefRO<Name>)`.
struct WriteTrackedReadName;
impl Shape for WriteTrackedReadName {
    type Q = (Entity, RefRW<Tracked>, RefRO<Name>);
    type F = ();
    const WRITES: &'static [usize] = &[TRACKED];
    fn matches(row: &Row) -> bool {
        has(row, TRACKED) && has(row, NAME)
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![value(row, TRACKED), value(row, NAME)]
    }
    fn observe((e, t, l): (Entity, &mut Tracked, &Name), seed: u32) -> (Entity, Vec<u64>) {
        let seen = vec![t.read(), l.read()];
        t.mutate(seed);
        (e, seen)
    }
}

/// `(Entity, RefRO<Num>)` with `Changed<Num>`, one-shot only.
struct ChangedNum;
impl Shape for ChangedNum {
    type Q = (Entity, RefRO<Num>);
    type F = Changed<Num>;
    const CACHEABLE: bool = false;
    fn matches(row: &Row) -> bool {
        has(row, NUM)
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![value(row, NUM)]
    }
    fn observe((e, s): (Entity, &Num), _: u32) -> (Entity, Vec<u64>) {
        (e, vec![s.read()])
    }
}

/// `(Entity, RefRW<Wide>, Option<RefRW<Name>>)` with `Without<Zst>`.
struct WriteWideAndName;
impl Shape for WriteWideAndName {
    type Q = (Entity, RefRW<Wide>, Option<RefRW<Name>>);
    type F = Without<Zst>;
    const WRITES: &'static [usize] = &[WIDE, NAME];
    fn matches(row: &Row) -> bool {
        has(row, WIDE) && !has(row, ZST)
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![value(row, WIDE), optional(row, NAME)]
    }
    fn observe((e, w, l): (Entity, &mut Wide, Option<&mut Name>), seed: u32) -> (Entity, Vec<u64>) {
        let seen = vec![w.read(), l.as_deref().map_or(ABSENT, Name::read)];
        w.mutate(seed);
        if let Some(l) = l {
            l.mutate(seed);
        }
        (e, seen)
    }
}

/// `(Entity, Option<RefRO<Tracked>>, Option<RefRO<Zst>>)`: every entity, empty ones too.
struct Everything;
impl Shape for Everything {
    type Q = (Entity, Option<RefRO<Tracked>>, Option<RefRO<Zst>>);
    type F = ();
    fn matches(_: &Row) -> bool {
        true
    }
    fn expect(row: &Row) -> Vec<u64> {
        vec![optional(row, TRACKED), optional(row, ZST)]
    }
    fn observe((e, t, z): (Entity, Option<&Tracked>, Option<&Zst>), _: u32) -> (Entity, Vec<u64>) {
        (e, vec![read_opt(t), read_opt(z)])
    }
}

/// Number of shapes.
pub const SHAPES: usize = 9;

/// Runs shape number `shape` by `path` and checks it against the model.
pub fn run_shape(
    h: &mut Harness,
    shape: usize,
    path: Path,
    cached: bool,
    target: Entity,
    seed: u32,
) {
    match shape % SHAPES {
        0 => run::<ReadTracked>(h, path, cached, target, seed),
        1 => run::<WriteNumWithZst>(h, path, cached, target, seed),
        2 => run::<WideWithoutTracked>(h, path, cached, target, seed),
        3 => run::<OptNumOr>(h, path, cached, target, seed),
        4 => run::<EntitiesTrackedNotNum>(h, path, cached, target, seed),
        5 => run::<WriteTrackedReadName>(h, path, cached, target, seed),
        6 => run::<ChangedNum>(h, path, cached, target, seed),
        7 => run::<WriteWideAndName>(h, path, cached, target, seed),
        _ => run::<Everything>(h, path, cached, target, seed),
    }
}

/// Applies a shape's writes of `seed` to the model row of `entity`.
fn write_model<S: Shape>(h: &mut Harness, entity: Entity, seed: u32) {
    let row = h
        .model
        .rows
        .get_mut(&entity)
        .expect("matched entities are live");
    for &k in S::WRITES {
        if row[k].is_some() {
            row[k] = Some(code(k, seed));
        }
    }
}

fn run<S: Shape>(h: &mut Harness, path: Path, cached: bool, target: Entity, seed: u32) {
    let cached = cached && S::CACHEABLE;
    let expected: BTreeMap<Entity, Vec<u64>> = h
        .model
        .rows
        .iter()
        .filter(|(_, row)| S::matches(row))
        .map(|(&e, row)| (e, S::expect(row)))
        .collect();
    let Harness { world, states, .. } = h;
    let state = cached.then(|| states.get::<S::Q, S::F>(world));
    match path {
        Path::Iter | Path::ForEach | Path::ParForEach => {
            let seen = shapes::observe(world, state, path, |item| S::observe(item, seed));
            if let Some((_, upper)) = seen.size_hint {
                assert_eq!(upper, Some(expected.len()), "size hint");
            }
            let want = expected.iter().map(|(&e, v)| (e, v.clone())).collect();
            shapes::assert_same(
                seen.items,
                want,
                &format!("{} by {path:?}", type_name::<S>()),
            );
            for e in expected.into_keys() {
                write_model::<S>(h, e, seed);
            }
        }
        Path::Chunks => {
            let mut got: Vec<Entity> = Vec::new();
            shapes::chunks(world, state, |view| got.extend_from_slice(view.entities()));
            let want = expected.into_keys().collect();
            shapes::assert_same(got, want, &format!("{} by chunks", type_name::<S>()));
        }
        Path::Get => {
            let got = shapes::get(world, state, target).map(|item| S::observe(item, seed));
            let want = match (h.model.rows.get(&target), expected.get(&target)) {
                (None, _) => Err(QueryError::NoSuchEntity(target)),
                (Some(_), None) => Err(QueryError::NoMatch {
                    entity: target,
                    query: type_name::<S::Q>(),
                }),
                (Some(_), Some(values)) => Ok((target, values.clone())),
            };
            assert_eq!(got, want, "{} get {target:?}", type_name::<S>());
            if got.is_ok() {
                write_model::<S>(h, target, seed);
            }
        }
        Path::Count => {
            let got = shapes::count(world, state);
            assert_eq!(got, expected.len(), "{} count", type_name::<S>());
        }
    }
}
