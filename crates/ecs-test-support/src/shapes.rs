//! Running one query shape against a `World`, one-shot or through a cached `QueryState`, by
//! each iteration path, and comparing what it saw with the model's prediction.
//!
//! A model test names its shapes (a query type `Q`, a filter `F`, which rows match, what each
//! item reads); this module runs them. Every path of one shape must agree with the model, so a
//! path that skips, repeats or misreads a row fails on its own.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Mutex;

use ecs_core::{Entity, World};
use ecs_query::{ChunkView, QueryError, QueryExt, QueryFilter, QueryState, WorldQuery};

use crate::pool::in_pool;

/// How a query is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// `iter` / `iter_mut`, every item held at once.
    Iter,
    /// `for_each`.
    ForEach,
    /// `for_each_chunk`.
    Chunks,
    /// `par_for_each`, in [`in_pool`].
    ParForEach,
    /// `get` / `get_mut` of one entity.
    Get,
    /// `count`.
    Count,
}

/// Cached query states, one per query type, kept across the operations of one case so that
/// their incremental archetype matching is exercised too.
#[derive(Default)]
pub struct States(HashMap<TypeId, Box<dyn Any + Send>>);

impl States {
    /// No cached state yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached state of `Q, F`, built on first use.
    pub fn get<Q, F>(&mut self, world: &mut World) -> &mut QueryState<Q, F>
    where
        Q: WorldQuery + 'static,
        F: QueryFilter + 'static,
        QueryState<Q, F>: Send,
    {
        self.0
            .entry(TypeId::of::<QueryState<Q, F>>())
            .or_insert_with(|| Box::new(QueryState::<Q, F>::new(world)))
            .downcast_mut()
            .expect("one state type per key")
    }
}

/// What [`observe`] saw.
pub struct Observed<O> {
    /// One observation per item, in the order the path handed them out.
    pub items: Vec<O>,
    /// For [`Path::Iter`], the iterator's size hint before the first item.
    pub size_hint: Option<(usize, Option<usize>)>,
}

/// Runs `Q, F` by `path` ([`Path::Iter`], [`Path::ForEach`] or [`Path::ParForEach`]), through
/// `state` if given or else one-shot off the world, and observes every item with `f` (which
/// may write through it).
///
/// By [`Path::Iter`] every item is held at once before any is observed: the `&mut` items of
/// distinct rows must not alias (Miri checks).
///
/// # Panics
/// On any other path.
pub fn observe<Q, F, O>(
    world: &mut World,
    state: Option<&mut QueryState<Q, F>>,
    path: Path,
    f: impl Fn(Q::Item<'_>) -> O + Send + Sync,
) -> Observed<O>
where
    Q: WorldQuery + 'static,
    F: QueryFilter + 'static,
    O: Send,
{
    let mut items = Vec::new();
    let mut size_hint = None;
    match (path, state) {
        (Path::Iter, Some(state)) => {
            let iter = state.iter_mut(world);
            size_hint = Some(iter.size_hint());
            let held: Vec<_> = iter.collect();
            items.extend(held.into_iter().map(f));
        }
        (Path::Iter, None) => {
            let iter = world.query_filtered::<Q, F>().iter();
            size_hint = Some(iter.size_hint());
            let held: Vec<_> = iter.collect();
            items.extend(held.into_iter().map(f));
        }
        (Path::ForEach, Some(state)) => state.for_each(world, |item| items.push(f(item))),
        (Path::ForEach, None) => world
            .query_filtered::<Q, F>()
            .for_each(|item| items.push(f(item))),
        (Path::ParForEach, state) => {
            let out = Mutex::new(Vec::new());
            let push = |item: Q::Item<'_>| {
                let obs = f(item);
                out.lock().unwrap_or_else(|e| e.into_inner()).push(obs);
            };
            in_pool(|| match state {
                Some(state) => state.par_for_each(world, push),
                None => world.query_filtered::<Q, F>().par_for_each(push),
            });
            items = out.into_inner().unwrap_or_else(|e| e.into_inner());
        }
        (path, _) => panic!("`observe` runs item paths, not {path:?}"),
    }
    Observed { items, size_hint }
}

/// Hands every chunk view of `Q, F` to `f`, through `state` or one-shot; checks that no view
/// is empty and that each has as many entities as rows.
pub fn chunks<Q, F>(
    world: &mut World,
    state: Option<&mut QueryState<Q, F>>,
    mut f: impl FnMut(ChunkView<'_, Q>),
) where
    Q: WorldQuery + 'static,
    F: QueryFilter + 'static,
{
    let mut visit = |view: ChunkView<'_, Q>| {
        assert!(!view.is_empty(), "a query handed out an empty chunk");
        assert_eq!(view.len(), view.entities().len());
        f(view);
    };
    match state {
        Some(state) => state.for_each_chunk(world, &mut visit),
        None => world.query_filtered::<Q, F>().for_each_chunk(&mut visit),
    }
}

/// `get` of `entity`, through `state` (`get_mut`) or one-shot.
pub fn get<'w, Q, F>(
    world: &'w mut World,
    state: Option<&mut QueryState<Q, F>>,
    entity: Entity,
) -> Result<Q::Item<'w>, QueryError>
where
    Q: WorldQuery + 'static,
    F: QueryFilter + 'static,
{
    match state {
        Some(state) => state.get_mut(world, entity),
        None => world.query_filtered::<Q, F>().get(entity),
    }
}

/// `count`, through `state` or one-shot.
pub fn count<Q, F>(world: &mut World, state: Option<&mut QueryState<Q, F>>) -> usize
where
    Q: WorldQuery + 'static,
    F: QueryFilter + 'static,
{
    match state {
        Some(state) => state.count(world),
        None => world.query_filtered::<Q, F>().count(),
    }
}

/// Asserts that `got` and `want` hold the same observations, each as many times, in any
/// order; `what` names the query in the message. Where observations carry the entity, an
/// entity yielded twice or skipped fails this.
pub fn assert_same<O: Ord + Debug>(mut got: Vec<O>, mut want: Vec<O>, what: &str) {
    got.sort();
    want.sort();
    assert_eq!(got, want, "{what}");
}
