//! The runs of a [`QueryState`]: the safe entry points (`for_each`, `get`, `single`, `count`,
//! ...) and the unchecked ones schedulers call (`run_for_each`, `run_for_each_chunk`, `run_get`,
//! ...). Every run asks [`QueryState::classify`] which rows of a chunk it visits.

use std::any::type_name;

use ecs_core::{ChangeWindow, Chunk, Entity, Tick, World};

use crate::error::QueryError;
use crate::fetch::{ReadOnlyQuery, WorldQuery};
use crate::filter::QueryFilter;
use crate::rows::{ChunkRows, RowMask};
use crate::run::chunk_view::ChunkView;
use crate::run::QueryRun;
use crate::state::chunk_list::{ChunkRecord, AHEAD};
use crate::state::{QueryState, RunTicks};

/// Rows per piece of a streaming `for_each` chunk loop: for two 12-byte columns, six cache
/// lines of the next chunk asked for per piece; larger bursts did worse (docs/performance.md,
/// "Design measurements").
const STREAM_ROWS: usize = 16;

impl<Q: WorldQuery, F: QueryFilter> QueryState<Q, F> {
    // ----- safe entry points ----------------------------------------------------------------

    /// Calls `f` on every matched entity; an internal loop over each chunk's columns.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// state.for_each(&mut world, |n| *n *= 5);
    /// assert_eq!(world.get::<u32>(e), Ok(&5));
    /// ```
    pub fn for_each(&mut self, world: &mut World, f: impl FnMut(Q::Item<'_>)) {
        self.run(world).for_each(f);
    }

    /// Calls `f` once per matched chunk with a view of its column slices.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// world.spawn_batch((0..10u32).map(|i| (i,))).for_each(drop);
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// let mut rows = 0;
    /// state.for_each_chunk(&mut world, |mut view| rows += view.columns().len());
    /// assert_eq!(rows, 10);
    /// ```
    pub fn for_each_chunk(&mut self, world: &mut World, f: impl FnMut(ChunkView<'_, Q>)) {
        self.run(world).for_each_chunk(f);
    }

    /// The item of one entity of a read-only query.
    ///
    /// Cost: the entity's location, a binary search of the matched archetypes, and per element
    /// an O(1) test of the row (its enable bit, its row ticks for a change filter).
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let other = world.spawn(('x',));
    /// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert_eq!(state.get(&world, e), Ok(&7));
    /// assert!(state.get(&world, other).is_err());
    /// ```
    pub fn get<'w>(&mut self, world: &'w World, entity: Entity) -> Result<Q::Item<'w>, QueryError>
    where
        Q: ReadOnlyQuery,
    {
        let ticks = self.peek(world);
        QueryRun::read_only(self, world, ticks).get(entity)
    }

    /// The item of one entity, with write access.
    ///
    /// # Errors
    /// As [`QueryState::get`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// *state.get_mut(&mut world, e).unwrap() = 8;
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// ```
    pub fn get_mut<'w>(
        &mut self,
        world: &'w mut World,
        entity: Entity,
    ) -> Result<Q::Item<'w>, QueryError> {
        let ticks = self.peek(world);
        // SAFETY: `&'w mut World` excludes every other access for `'w`; `ticks` are `world`'s.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.get(entity)
    }

    /// The item of the only matched entity of a read-only query.
    ///
    /// # Errors
    /// [`QueryError::NoEntities`] or [`QueryError::MultipleEntities`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryError, QueryState, RefRO};
    /// let mut world = World::new();
    /// let mut state = QueryState::<RefRO<u32>>::new(&mut world);
    /// assert!(matches!(state.single(&world), Err(QueryError::NoEntities { .. })));
    /// world.spawn((7u32,));
    /// assert_eq!(state.single(&world), Ok(&7));
    /// ```
    pub fn single<'w>(&mut self, world: &'w World) -> Result<Q::Item<'w>, QueryError>
    where
        Q: ReadOnlyQuery,
    {
        self.iter(world).single()
    }

    /// The item of the only matched entity, with write access.
    ///
    /// # Errors
    /// As [`QueryState::single`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryError, QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// *state.single_mut(&mut world).unwrap() += 1;
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// world.spawn((1u32,));
    /// assert!(matches!(state.single_mut(&mut world), Err(QueryError::MultipleEntities { .. })));
    /// ```
    pub fn single_mut<'w>(&mut self, world: &'w mut World) -> Result<Q::Item<'w>, QueryError> {
        self.iter_mut(world).single()
    }

    /// Number of matched entities: O(matched chunks), touching no column. Does not count as a
    /// run (the change tick stays).
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRO, With};
    /// let mut world = World::new();
    /// world.spawn((1u32, 'a'));
    /// world.spawn((2u32,));
    /// let mut state = QueryState::<RefRO<u32>, With<char>>::new(&mut world);
    /// assert_eq!(state.count(&world), 1);
    /// ```
    pub fn count(&mut self, world: &World) -> usize {
        let ticks = self.peek(world);
        self.count_in(world, ticks)
    }

    /// Brings the cache up to date for `world` and returns the window of a look that is not a
    /// run (`get`, `count`): the world's current tick, changes since this state's last run.
    fn peek(&mut self, world: &World) -> RunTicks {
        self.update_archetypes(world);
        RunTicks {
            tick: world.change_tick(),
            last_seen: self.last_seen,
        }
    }

    /// The number of matched entities in the window `ticks`, over the archetypes matched so
    /// far.
    pub(crate) fn count_in(&self, world: &World, ticks: RunTicks) -> usize {
        self.check_world(world);
        let archetypes = world.archetypes();
        let window = ticks.window();
        self.matched
            .iter()
            .enumerate()
            .map(|(k, id)| {
                archetypes[id.index()]
                    .chunks()
                    .iter()
                    .map(|c| self.passing_count(k, c, Some(window)))
                    .sum::<usize>()
            })
            .sum()
    }

    // ----- unchecked entry points ----------------------------------------------------------

    /// [`QueryState::for_each`] through a shared world.
    ///
    /// # Safety
    /// As [`QueryRun::new`], for the duration of the call.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world during the call.
    /// unsafe { state.for_each_unchecked(&world, |n| *n = 4) };
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn for_each_unchecked(&mut self, world: &World, f: impl FnMut(Q::Item<'_>)) {
        let ticks = self.start_run(world);
        // SAFETY: the access this call needs is its caller's contract (`QueryRun::new`'s, for
        // the duration of the call); `ticks` were just started on `world`.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.for_each(f);
    }

    // ----- the loops of a run (`QueryRun`) ---------------------------------------------------

    /// [`QueryRun::for_each`]: the loop over the run `ticks`, yielding the items of `D` (the
    /// query itself, or `Q::ReadOnly`), of the world's lifetime.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares, for as long as `'w`.
    ///
    /// # Panics
    /// If `world` is not this state's world.
    pub(crate) unsafe fn run_for_each<'w, D>(
        &self,
        world: &'w World,
        ticks: RunTicks,
        mut f: impl FnMut(D::Item<'w>),
    ) where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        self.check_world(world);
        let tick = ticks.tick;
        let window = ticks.window();
        let streaming = self.iteration().streams();
        let mut scratch = Vec::new();
        let records = self.chunk_records(world, &mut scratch);
        let mut mask = RowMask::default();
        for (i, record) in records.iter().enumerate() {
            if let Some(ahead) = records.get(i + AHEAD) {
                ahead.prefetch();
            }
            let every_row = !Self::CHUNK_FILTERED && !Self::ROW_FILTERED && record.no_enable_bits();
            if every_row && !record.next_in_archetype() {
                // The common case of a small archetype: one chunk (or its last one), every row.
                // SAFETY: `chunk_records` gave a list current for `world`, borrowed for `'w`.
                let chunk = unsafe { record.chunk(world) };
                // SAFETY: `cached(k)` was found in the archetype that owns `chunk` (invariant
                // 2, the list's invariant); `run_chunk` hands its rows out once each;
                // exclusivity is the caller's contract.
                unsafe {
                    let cached = self.cached_unchecked(record.k());
                    Self::run_chunk::<D>(world, cached, chunk, tick, record.marks(), &mut f);
                }
                continue;
            }
            // SAFETY: as above; `records` is that list and `i` one of its records.
            unsafe {
                self.run_record::<D>(
                    world, records, i, tick, window, streaming, &mut mask, &mut f,
                )
            };
        }
    }

    /// `run_for_each`'s work on record `i` of `records` where it is not a whole last chunk:
    /// chunks filtered by change ticks or enable bits, and chunks followed by their archetype's
    /// next one (prefetched, or streamed). Out of line, so that the loop over many small
    /// archetypes carries none of its state.
    ///
    /// # Safety
    /// `records` is this state's chunk list, current for `world` (`chunk_records`), and
    /// `i < records.len()`; as [`QueryState::run_for_each`] for the access `D` declares.
    #[inline(never)]
    #[allow(
        clippy::too_many_arguments,
        reason = "the loop's state, passed down once per chunk"
    )]
    unsafe fn run_record<'w, D>(
        &self,
        world: &'w World,
        records: &[ChunkRecord],
        i: usize,
        tick: Tick,
        window: ChangeWindow,
        streaming: bool,
        mask: &mut RowMask,
        f: &mut impl FnMut(D::Item<'w>),
    ) where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        let record = &records[i];
        // SAFETY: the list is current for `world`, borrowed for `'w` (caller).
        let chunk = unsafe { record.chunk(world) };
        let k = record.k();
        // SAFETY: the list's records name matched archetypes (its invariant).
        let cached = unsafe { self.cached_unchecked(k) };
        // Without row ticks, `fetch`'s chunk stamp records the writes (see
        // `Archetype::keeps_row_ticks`); the per-chunk `mark_rows` call is skipped.
        let marks = record.marks();
        let next = record.next_in_archetype().then(|| {
            // SAFETY: as `chunk` (the list is current for `world`, borrowed for `'w`); a record
            // with a next chunk is followed by that chunk's record (the list's invariant).
            unsafe { records[i + 1].chunk(world) }
        });
        let every_row = !Self::CHUNK_FILTERED && !Self::ROW_FILTERED && record.no_enable_bits();
        let rows = if every_row {
            ChunkRows::All
        } else {
            self.classify(k, chunk, Some(window), mask)
        };
        if matches!(rows, ChunkRows::Rejected | ChunkRows::Empty) {
            return;
        }
        if let Some(next) = next {
            if rows == ChunkRows::All && streaming && self.streams(k) {
                // SAFETY: `cached` was found in the archetype that owns `chunk` (invariant 2);
                // its rows are handed out once each, and exclusivity is the caller's contract.
                unsafe {
                    self.run_chunk_streamed::<D>(world, k, cached, chunk, next, tick, marks, f)
                };
                return;
            }
            if record.prefetch_next() {
                self.prefetch_chunk(k, next);
            }
        }
        if rows == ChunkRows::All {
            // SAFETY: `cached` was found in the archetype that owns `chunk` (invariant 2);
            // `run_chunk` hands its rows out once each; exclusivity is the caller's.
            unsafe { Self::run_chunk::<D>(world, cached, chunk, tick, marks, f) };
            return;
        }
        // SAFETY: `cached` was found in the archetype that owns `chunk` (invariant 2); only the
        // rows the mask passes are handed out, once each, below; exclusivity is the caller's.
        let mut fetch = unsafe { D::fetch_in(cached, chunk, tick, world) };
        let mut at = 0;
        while let Some((start, end)) = mask.next_run(at) {
            if marks {
                // SAFETY: `start..end` is within the chunk (the mask has no bits past `len`)
                // and its rows are handed out just below, once each.
                unsafe { D::mark_rows(cached, chunk, start..end, tick) };
            }
            for row in start..end {
                // SAFETY: `row < chunk.len()` (the mask has no bits past it); runs are
                // disjoint, so each row is handed out once.
                f(unsafe { D::item(&mut fetch, row) });
            }
            at = end;
        }
    }

    /// Whether `for_each` runs the streaming loop over matched archetype `arch` (the `k`-th):
    /// when the state's [`Iteration`](crate::Iteration) asks for it and the query touches
    /// some column of `arch` (a query of only entity ids or tags has nothing to prefetch).
    #[inline]
    fn streams(&self, k: usize) -> bool {
        self.iteration().streams() && self.prefetch_cols(k).iter().any(|&(_, size)| size > 0)
    }

    /// [`QueryState::run_chunk`] for an archetype that [`QueryState::streams`]: the chunk's
    /// rows go out `STREAM_ROWS` at a time and, before each piece, the same rows of `next`'s
    /// columns are asked for, so the next chunk arrives spread over this one's work (a burst
    /// of prefetches at each chunk start overflows the CPU's miss queue instead). Each piece
    /// runs through `D`'s vectorised row loop over a fetch shifted to it
    /// ([`WorldQuery::advance`]) where `D` shifts.
    ///
    /// # Safety
    /// As [`QueryState::run_chunk`]; `cached` is the `k`-th matched archetype's fetch.
    #[inline(always)]
    #[allow(
        clippy::too_many_arguments,
        reason = "the loop's state, passed down once per chunk"
    )]
    unsafe fn run_chunk_streamed<'w, D>(
        &self,
        world: &'w World,
        k: usize,
        cached: &D::ArchetypeFetch,
        chunk: &'w Chunk,
        next: &Chunk,
        tick: Tick,
        marks: bool,
        f: &mut impl FnMut(D::Item<'w>),
    ) where
        D: WorldQuery,
    {
        let cols = self.prefetch_cols(k);
        let len = chunk.len();
        // SAFETY: `cached` was found in the archetype owning `chunk` and the caller holds `D`'s
        // access (this fn's contract, `run_chunk`'s), so `fetch` may run and `0..len` may be
        // marked.
        let mut fetch = unsafe { D::fetch_in(cached, chunk, tick, world) };
        if marks {
            // SAFETY: as above; `0..len` is within the chunk.
            unsafe { D::mark_rows(cached, chunk, 0..len, tick) };
        }
        // SAFETY: `advance` by 0 rows stays within any chunk; a probe only, whether `D` shifts.
        let shifts = unsafe { D::advance(&fetch, 0) }.is_some();
        if shifts {
            // Piece by piece, each through the vectorised row loop over a fetch shifted to the
            // piece's first row: its slices cover that piece's rows only, so no row handed out
            // earlier is borrowed again.
            let mut row = 0;
            while row < len {
                let end = (row + STREAM_ROWS).min(len);
                for &(offset, size) in cols {
                    next.prefetch_rows(offset as usize, size as usize, row..end);
                }
                // SAFETY: `row < len`; the shifted fetch is used for rows `row..end` only,
                // each handed out once (`for_each_row`'s contract for `end - row` rows).
                unsafe {
                    let mut piece = D::advance(&fetch, row).expect("the probe shifted");
                    D::for_each_row(&mut piece, end - row, f);
                }
                row = end;
            }
        } else {
            // An element that cannot shift (an enable-bit view, a mixed `Option`): the whole
            // chunk goes to `for_each_row`, the prefetches riding along every `STREAM_ROWS`
            // rows.
            let mut row = 0;
            let mut each = |item: D::Item<'w>| {
                if row % STREAM_ROWS == 0 {
                    for &(offset, size) in cols {
                        next.prefetch_rows(offset as usize, size as usize, row..row + STREAM_ROWS);
                    }
                }
                row += 1;
                f(item);
            };
            // SAFETY: every row below `len` is handed out once, to `f` unchanged.
            unsafe { D::for_each_row(&mut fetch, len, &mut each) };
        }
    }

    /// Hands out every row of `chunk`, marked as written where the archetype keeps row ticks.
    ///
    /// # Safety
    /// `cached` was found in the archetype that owns `chunk`; the caller holds the access `D`
    /// declares to the chunk's rows, which are handed out once each.
    #[inline(always)]
    unsafe fn run_chunk<'w, D>(
        world: &'w World,
        cached: &D::ArchetypeFetch,
        chunk: &'w Chunk,
        tick: Tick,
        marks: bool,
        f: &mut impl FnMut(D::Item<'w>),
    ) where
        D: WorldQuery,
    {
        // SAFETY: `cached` was found in the archetype owning `chunk` and the caller holds `D`'s
        // access (this fn's contract), so `fetch` may run; `0..len` is within the chunk for
        // `mark_rows`, and `for_each_row` hands each of those rows out once (`WorldQuery`
        // contract).
        unsafe {
            let mut fetch = D::fetch_in(cached, chunk, tick, world);
            if marks {
                D::mark_rows(cached, chunk, 0..chunk.len(), tick);
            }
            D::for_each_row(&mut fetch, chunk.len(), f);
        }
    }

    /// [`QueryState::for_each_chunk`] through a shared world.
    ///
    /// # Safety
    /// As [`QueryRun::new`], for the duration of the call.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world during the call.
    /// unsafe { state.for_each_chunk_unchecked(&world, |mut v| v.column_mut::<u32>()[0] = 4) };
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn for_each_chunk_unchecked(
        &mut self,
        world: &World,
        f: impl FnMut(ChunkView<'_, Q>),
    ) {
        let ticks = self.start_run(world);
        // SAFETY: the access this call needs is its caller's contract (`QueryRun::new`'s, for
        // the duration of the call); `ticks` were just started on `world`.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.for_each_chunk(f);
    }

    /// [`QueryRun::for_each_chunk`] over the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    ///
    /// # Panics
    /// If `world` is not this state's world.
    pub(crate) unsafe fn run_for_each_chunk(
        &self,
        world: &World,
        ticks: RunTicks,
        mut f: impl FnMut(ChunkView<'_, Q>),
    ) {
        self.check_world(world);
        let tick = ticks.tick;
        let window = ticks.window();
        let archetypes = world.archetypes();
        let access = &self.access.access;
        let mut scratch = Vec::new();
        let records = self.chunk_records(world, &mut scratch);
        for (i, record) in records.iter().enumerate() {
            if let Some(ahead) = records.get(i + AHEAD) {
                ahead.prefetch();
            }
            // SAFETY: `chunk_records` gave a list current for `world`, borrowed for `'w`.
            let chunk = unsafe { record.chunk(world) };
            let k = record.k();
            let arch = &archetypes[self.matched[k].index()];
            let mut mask = RowMask::default();
            let all_pass = !Self::CHUNK_FILTERED && !Self::ROW_FILTERED && record.no_enable_bits();
            let mask = if all_pass {
                None
            } else {
                match self.classify(k, chunk, Some(window), &mut mask) {
                    ChunkRows::Rejected | ChunkRows::Empty => continue,
                    ChunkRows::All => None,
                    ChunkRows::Masked if mask.count() == 0 => continue,
                    ChunkRows::Masked => Some(mask),
                }
            };
            if record.prefetch_next() && record.next_in_archetype() {
                // SAFETY: as `chunk`.
                self.prefetch_chunk(k, unsafe { records[i + 1].chunk(world) });
            }
            // SAFETY: `cached(k)` was found in `arch` (invariant 2), which owns `chunk`; the
            // view is handed out once per chunk, and exclusivity is the caller's contract.
            let view = unsafe { ChunkView::new(world, self.cached(k), access, arch, chunk, tick) };
            f(view.with_mask(mask));
        }
    }

    /// [`QueryState::get`] through a shared world, for any query.
    ///
    /// # Safety
    /// As [`QueryRun::new`], while the item lives.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{QueryState, RefRW};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    /// // SAFETY: nothing else accesses the world while the item lives.
    /// *unsafe { state.get_unchecked(&world, e) }.unwrap() = 4;
    /// assert_eq!(world.get::<u32>(e), Ok(&4));
    /// ```
    pub unsafe fn get_unchecked<'w>(
        &mut self,
        world: &'w World,
        entity: Entity,
    ) -> Result<Q::Item<'w>, QueryError> {
        let ticks = self.peek(world);
        // SAFETY: the access while the item lives is this fn's caller's contract
        // (`QueryRun::new`'s); `ticks` are `world`'s.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.get(entity)
    }

    /// [`QueryRun::get`]: the item of `D` (the query itself, or `Q::ReadOnly`) for one entity,
    /// in the run `ticks`.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares, while the item lives.
    ///
    /// # Panics
    /// If `world` is not this state's world.
    pub(crate) unsafe fn run_get<'w, D>(
        &self,
        world: &'w World,
        ticks: RunTicks,
        entity: Entity,
    ) -> Result<D::Item<'w>, QueryError>
    where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        let (k, chunk, row) = self.run_find(world, ticks, entity)?;
        // SAFETY: `cached[k]` was found in the archetype that owns `chunk` (invariant 2);
        // `row < chunk.len()` (entity table invariant); exclusivity is the caller's contract.
        unsafe {
            D::mark_rows(self.cached(k), chunk, row..row + 1, ticks.tick);
            let mut fetch = D::fetch_in(self.cached(k), chunk, ticks.tick, world);
            Ok(D::item(&mut fetch, row))
        }
    }

    /// Where `entity`'s row is in the run `ticks`: (matched index, chunk, row in chunk), if it
    /// is alive and matched.
    pub(crate) fn run_find<'w>(
        &self,
        world: &'w World,
        ticks: RunTicks,
        entity: Entity,
    ) -> Result<(usize, &'w Chunk, usize), QueryError> {
        self.check_world(world);
        let loc = world
            .location(entity)
            .ok_or(QueryError::NoSuchEntity(entity))?;
        let arch = &world.archetypes()[loc.archetype.index()];
        let no_match = QueryError::NoMatch {
            entity,
            query: type_name::<Q>(),
        };
        let Ok(k) = self.matched.binary_search(&loc.archetype) else {
            return Err(no_match);
        };
        let (c, row) = arch.split_row(loc.row as usize);
        let chunk = &arch.chunks()[c];
        let window = ticks.window();
        if !self.chunk_passes(k, chunk, window) || !self.row_passes(k, chunk, row, window) {
            return Err(no_match);
        }
        // One row, tested by itself: no mask of the whole chunk (the `WorldQuery` contract
        // makes the per-row tests agree with the chunk classification).
        if !self.row_enabled(k, chunk, row) {
            return Err(no_match);
        }
        Ok((k, chunk, row))
    }
}
