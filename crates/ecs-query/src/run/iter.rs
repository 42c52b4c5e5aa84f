//! Walking a query's matched chunks: the external [`QueryIter`], and the `QueryState` methods
//! that make one.

use std::any::type_name;
use std::iter::FusedIterator;

use ecs_core::{Archetype, ChangeWindow, Chunk, Tick, World};

use crate::error::QueryError;
use crate::fetch::{ExactQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::rows::{ChunkRows, RowMask};
use crate::state::{QueryState, RunTicks};

/// The state an iterator walks: borrowed from a reusable [`QueryState`], or owned when the
/// iterator came from a `world.query_ref()` that built its own state.
pub(crate) enum StateRef<'s, Q: WorldQuery, F: QueryFilter> {
    Borrowed(&'s QueryState<Q, F>),
    Owned(Box<QueryState<Q, F>>),
}

impl<Q: WorldQuery, F: QueryFilter> std::ops::Deref for StateRef<'_, Q, F> {
    type Target = QueryState<Q, F>;

    fn deref(&self) -> &QueryState<Q, F> {
        match self {
            Self::Borrowed(s) => s,
            Self::Owned(s) => s,
        }
    }
}

/// Iterator over the items of a query: of `Q` itself, or (`D = Q::ReadOnly`, through a
/// read-only view) of its read-only form, which shares `Q`'s cached column positions.
///
/// # Invariants
/// 1. `fetch` is `Some` and was fetched from the chunk being walked whenever `row < len`.
/// 2. Every row of every passing chunk of every matched archetype whose enable bits pass is
///    yielded once. In a mixed chunk (`masked`), `row..len` is the current run of `mask` and
///    later runs start at or after `len`.
/// 3. `remaining` is the number of rows left that pass by enable bits (change filters may
///    still skip some).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{QueryExt, RefRO};
/// let mut world = World::new();
/// world.spawn_batch((0..5u32).map(|i| (i,))).for_each(drop);
/// let iter = world.query::<RefRO<u32>>().iter();
/// assert_eq!(iter.len(), 5);
/// assert_eq!(iter.max(), Some(&4));
/// ```
pub struct QueryIter<'w, 's, Q: WorldQuery, F: QueryFilter = (), D: WorldQuery = Q> {
    world: &'w World,
    archetypes: &'w [Archetype],
    state: StateRef<'s, Q, F>,
    next_archetype: usize,
    arch: Option<&'w Archetype>,
    chunks: std::slice::Iter<'w, Chunk>,
    fetch: Option<D::Fetch>,
    /// The chunk being walked, and whether a writer keeps row ticks in it: then each row
    /// handed out is marked (types no change filter reads are stamped once per chunk, by
    /// `fetch`).
    chunk: Option<&'w Chunk>,
    mark_each: bool,
    row: usize,
    len: usize,
    remaining: usize,
    tick: Tick,
    last_seen: Tick,
    mask: RowMask,
    masked: bool,
}

impl<'w, 's, Q: WorldQuery, F: QueryFilter, D> QueryIter<'w, 's, Q, F, D>
where
    D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
{
    /// # Safety
    /// The caller has the access `D` declares for as long as `'w` (see
    /// `QueryState::iter_unchecked`), `state` is `world`'s with its cache up to date, and
    /// `tick` was handed out by `world` (writers stamp it).
    pub(crate) unsafe fn new(
        world: &'w World,
        state: &'s QueryState<Q, F>,
        tick: Tick,
        last_seen: Tick,
    ) -> Self {
        // SAFETY: `new`'s contract (the state is `world`'s, with its cache current, and the
        // caller holds the query's access for `'w`) is `with_state`'s, for the borrowed state.
        unsafe { Self::with_state(world, StateRef::Borrowed(state), tick, last_seen) }
    }

    /// # Safety
    /// As [`QueryIter::new`].
    pub(crate) unsafe fn with_state(
        world: &'w World,
        state: StateRef<'s, Q, F>,
        tick: Tick,
        last_seen: Tick,
    ) -> Self {
        debug_assert!(
            state.matched_archetypes().len() <= world.archetypes().len(),
            "a query state that matched archetypes this world does not have"
        );
        debug_assert!(
            tick <= world.change_tick(),
            "a tick the world has not handed out"
        );
        let archetypes = world.archetypes();
        let remaining = state
            .matched_archetypes()
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let arch = &archetypes[id.index()];
                if arch.enableable_columns().is_empty() {
                    arch.len()
                } else {
                    arch.chunks()
                        .iter()
                        .map(|c| state.passing_count(k, c, None))
                        .sum()
                }
            })
            .sum();
        Self {
            world,
            archetypes,
            state,
            next_archetype: 0,
            arch: None,
            chunks: [].iter(),
            fetch: None,
            chunk: None,
            mark_each: false,
            row: 0,
            len: 0,
            remaining,
            tick,
            last_seen,
            mask: RowMask::default(),
            masked: false,
        }
    }
}

impl<'w, Q: WorldQuery, F: QueryFilter, D> Iterator for QueryIter<'w, '_, Q, F, D>
where
    D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
{
    type Item = D::Item<'w>;

    #[inline]
    fn next(&mut self) -> Option<D::Item<'w>> {
        let window = ChangeWindow::new(self.tick, self.last_seen);
        loop {
            if self.row < self.len {
                let row = self.row;
                self.row += 1;
                self.remaining = self.remaining.saturating_sub(1);
                if self.mark_each {
                    let chunk = self.chunk.expect("set with `fetch`");
                    let k = self.next_archetype - 1;
                    // SAFETY: `row < len` of the chunk `fetch` was made for (and stamped),
                    // handed out just below; access and `tick` are the creator's contract.
                    unsafe { D::mark_row(self.state.cached(k), chunk, row, self.tick) };
                }
                // SAFETY: invariant 1 makes `fetch` present for this chunk, `row < len`, and
                // each row is yielded once (invariant 2); access and `tick` are the creator's
                // contract.
                return Some(unsafe { D::item(self.fetch.as_mut().unwrap_unchecked(), row) });
            }
            if self.masked {
                if let Some((start, end)) = self.mask.next_run(self.len) {
                    (self.row, self.len) = (start, end);
                    continue;
                }
                self.masked = false;
            }
            if let Some(chunk) = self.chunks.next() {
                let arch = self.arch.expect("chunks come from an archetype");
                let state = &*self.state;
                let k = self.next_archetype - 1;
                let rows = state.classify(k, chunk, Some(window), &mut self.mask);
                match rows {
                    ChunkRows::Rejected => {
                        let skipped = state.passing_count(k, chunk, None);
                        self.remaining = self.remaining.saturating_sub(skipped);
                        continue;
                    }
                    ChunkRows::Empty => continue,
                    ChunkRows::All | ChunkRows::Masked => {}
                }
                let i = arch.chunks().len() - self.chunks.len() - 1;
                state.prefetch_next(k, arch, i);
                // SAFETY: the state's `cached(k)` was found in `arch` (its invariant 2),
                // which owns `chunk`, one of `self.world`'s; access and `tick` are the
                // creator's contract.
                let fetch = unsafe { D::fetch_in(state.cached(k), chunk, self.tick, self.world) };
                self.fetch = Some(fetch);
                self.chunk = Some(chunk);
                self.mark_each = D::keeps_row_ticks(state.cached(k), chunk);
                if rows == ChunkRows::All {
                    self.row = 0;
                    self.len = chunk.len();
                } else {
                    let (start, end) = self.mask.next_run(0).unwrap_or((0, 0));
                    (self.row, self.len) = (start, end);
                    self.masked = true;
                }
                continue;
            }
            let id = *self.state.matched_archetypes().get(self.next_archetype)?;
            self.next_archetype += 1;
            let arch = &self.archetypes[id.index()];
            self.arch = Some(arch);
            self.chunks = arch.chunks().iter();
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Without change filters nothing is skipped and `remaining` is exact.
        let exact = !Q::CHUNK_FILTERED && !F::CHUNK_FILTERED && !QueryState::<Q, F>::ROW_FILTERED;
        (if exact { self.remaining } else { 0 }, Some(self.remaining))
    }
}

impl<'w, Q: WorldQuery, F: QueryFilter, D> QueryIter<'w, '_, Q, F, D>
where
    D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
{
    /// The only item, for a query expected to match exactly one entity (a player, a camera).
    /// Stops after the second item.
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`], naming the query.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryError, QueryExt, RefRO};
    /// let mut world = World::new();
    /// assert!(matches!(world.query::<RefRO<u32>>().iter().single(), Err(QueryError::NoEntities { .. })));
    /// world.spawn((1u32,));
    /// assert_eq!(world.query::<RefRO<u32>>().iter().single(), Ok(&1));
    /// world.spawn((2u32,));
    /// let err = world.query::<RefRO<u32>>().iter().single().unwrap_err();
    /// assert!(err.to_string().starts_with("more than one entity matches query"));
    /// ```
    pub fn single(mut self) -> Result<D::Item<'w>, QueryError> {
        let query = type_name::<Q>();
        let first = self.next().ok_or(QueryError::NoEntities { query })?;
        match self.next() {
            None => Ok(first),
            Some(_) => Err(QueryError::MultipleEntities { query }),
        }
    }
}

impl<Q: ExactQuery, F: QueryFilter + ExactQuery, D> ExactSizeIterator for QueryIter<'_, '_, Q, F, D> where
    D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>
{
}

impl<Q: WorldQuery, F: QueryFilter, D> FusedIterator for QueryIter<'_, '_, Q, F, D> where
    D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>
{
}

impl<Q: WorldQuery, F: QueryFilter> QueryState<Q, F> {
    /// [`QueryRun::iter`]: iterates the run `ticks` (from [`QueryState::start_run`] on this
    /// world), yielding the items of `D`: the query itself, or its read-only form `Q::ReadOnly`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares.
    ///
    /// # Panics
    /// If `world` is not this state's world.
    pub(crate) unsafe fn run_iter<'w, 's, D>(
        &'s self,
        world: &'w World,
        ticks: RunTicks,
    ) -> QueryIter<'w, 's, Q, F, D>
    where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        self.check_world(world);
        // SAFETY: `check_world` just confirmed the state is this world's; `ticks` and the access
        // for `'w` are this fn's caller's contract (`run_iter`'s `# Safety`).
        unsafe { QueryIter::new(world, self, ticks.tick(), ticks.last_seen()) }
    }
}
