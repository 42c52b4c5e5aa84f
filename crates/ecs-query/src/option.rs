//! `Option<Q>` as a query element: `Some` where `Q` matches the archetype and keeps the row
//! by enable bits, `None` elsewhere.

use std::ptr::NonNull;

use ecs_core::{Archetype, Chunk, Components, Signature, Tick, World};

use crate::access::{Access, AccessConflict};
use crate::fetch::{ExactQuery, ReadOnlyQuery, WorldQuery};
use crate::rows::Rows;

/// Per-chunk fetch of `Option<Q>`: whether `Q` is there, and whether its rows must be tested
/// one by one against enable bits.
pub enum OptionFetch<Q: WorldQuery> {
    /// The archetype lacks `Q`, or `Q` keeps no row of the chunk: every item is `None`.
    Absent,
    /// `Q` keeps every row of the chunk: every item is `Some`.
    All(Q::Fetch),
    /// `Q` keeps some rows (an enableable `T` is off in some): each item asks
    /// [`WorldQuery::row_enabled`], with the chunk the fetch was made for.
    Mixed(Q::Fetch, Q::ArchetypeFetch, NonNull<Chunk>),
}

impl<Q: WorldQuery> OptionFetch<Q> {
    /// The fetch of a chunk whose archetype has `Q` (fetched as `fetch`), by how many of its
    /// rows `Q` keeps.
    #[inline(always)]
    fn of_chunk(fetch: Q::Fetch, cached: &Q::ArchetypeFetch, chunk: &Chunk) -> Self {
        match Q::enabled_rows(cached, chunk) {
            Rows::All => OptionFetch::All(fetch),
            Rows::None => OptionFetch::Absent,
            Rows::Some => OptionFetch::Mixed(fetch, *cached, NonNull::from(chunk)),
        }
    }
}

impl<Q: WorldQuery> Clone for OptionFetch<Q> {
    fn clone(&self) -> Self {
        match self {
            Self::Absent => Self::Absent,
            Self::All(f) => Self::All(f.clone()),
            Self::Mixed(f, c, chunk) => Self::Mixed(f.clone(), *c, *chunk),
        }
    }
}

// Forwarding, the invariant the `unsafe` calls below rely on: `Some(c)` as the cached fetch
// means `Q` matched the archetype and `c` is `Q`'s own cached fetch there, and
// `OptionFetch::All` / `Mixed` hold `Q`'s own fetch for the chunk; `Option<Q>` declares `Q`'s
// access in full. So the caller's contract for `Option<Q>` is `Q`'s contract for `c` / the
// inner fetch, and each call below passes exactly those.
//
// SAFETY: forwards to `Q` where `Q` matches, and yields `None` elsewhere (and, by enable
// bits, where `Q` does not keep the row); `Q`'s access is declared in full, so
// `Option<&mut A>` with `&A` is refused like `&mut A` with `&A`. `Mixed` keeps a pointer to
// the chunk the fetch was made for, which outlives the fetch (the `fetch` contract).
unsafe impl<Q: WorldQuery> WorldQuery for Option<Q> {
    type Item<'w> = Option<Q::Item<'w>>;
    type Slice<'w> = Option<Q::Slice<'w>>;
    type Fetch = OptionFetch<Q>;
    type ArchetypeFetch = Option<Q::ArchetypeFetch>;
    type Kind = Q::Kind;
    type ReadOnly = Option<Q::ReadOnly>;
    type State = Q::State;

    const ODD_WIDTH: bool = Q::ODD_WIDTH;

    fn init_state(components: &mut Components) -> Q::State {
        Q::init_state(components)
    }

    fn update_access(
        state: &Q::State,
        access: &mut Access,
        c: &Components,
    ) -> Result<(), AccessConflict> {
        Q::update_access(state, access, c)
    }

    fn matches(_: &Q::State, _: &Signature) -> bool {
        true
    }

    fn archetype_fetch(state: &Q::State, arch: &Archetype) -> Self::ArchetypeFetch {
        Q::matches(state, arch.signature()).then(|| Q::archetype_fetch(state, arch))
    }

    /// `Option` keeps every row, but a chunk where `Q` keeps only some is `Some`: that sends
    /// the chunk down the per-row paths, where the item tests each row, instead of the slice
    /// loop (whose `Option<&[T]>` cannot say "some rows").
    #[inline(always)]
    fn enabled_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> Rows {
        match cached.as_ref().map(|c| Q::enabled_rows(c, chunk)) {
            Some(Rows::Some) => Rows::Some,
            _ => Rows::All,
        }
    }

    #[inline(always)]
    unsafe fn fetch(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Self::Fetch {
        let Some(c) = cached else {
            return OptionFetch::Absent;
        };
        // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
        // above).
        let fetch = unsafe { Q::fetch(c, chunk, tick) };
        OptionFetch::of_chunk(fetch, c, chunk)
    }

    #[inline(always)]
    unsafe fn fetch_in(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
        world: &World,
    ) -> Self::Fetch {
        let Some(c) = cached else {
            return OptionFetch::Absent;
        };
        // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
        // above).
        let fetch = unsafe { Q::fetch_in(c, chunk, tick, world) };
        OptionFetch::of_chunk(fetch, c, chunk)
    }

    #[inline(always)]
    unsafe fn fetch_ignoring_enabled(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
    ) -> Self::Fetch {
        match cached {
            // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
            // above).
            Some(c) => OptionFetch::All(unsafe { Q::fetch_ignoring_enabled(c, chunk, tick) }),
            None => OptionFetch::Absent,
        }
    }

    #[inline(always)]
    unsafe fn fetch_ignoring_enabled_in(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        tick: Tick,
        world: &World,
    ) -> Self::Fetch {
        let Some(c) = cached else {
            return OptionFetch::Absent;
        };
        // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note above).
        OptionFetch::All(unsafe { Q::fetch_ignoring_enabled_in(c, chunk, tick, world) })
    }

    #[inline(always)]
    unsafe fn mark_rows(
        cached: &Self::ArchetypeFetch,
        chunk: &Chunk,
        rows: std::ops::Range<usize>,
        tick: Tick,
    ) {
        let Some(c) = cached else { return };
        // Only the rows handed out as `Some` are written: a row `Q` does not keep stays
        // unmarked.
        match Q::enabled_rows(c, chunk) {
            // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
            // above).
            Rows::All => unsafe { Q::mark_rows(c, chunk, rows, tick) },
            Rows::None => {}
            Rows::Some => {
                for row in rows.filter(|&row| Q::row_enabled(c, chunk, row)) {
                    // SAFETY: `Q`'s contract for `c` (see the forwarding note above), for one row of
                    // `rows`.
                    unsafe { Q::mark_rows(c, chunk, row..row + 1, tick) }
                }
            }
        }
    }

    #[inline(always)]
    fn keeps_row_ticks(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> bool {
        cached
            .as_ref()
            .is_some_and(|c| Q::keeps_row_ticks(c, chunk))
    }

    #[inline(always)]
    unsafe fn mark_row(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize, tick: Tick) {
        if let Some(c) = cached.as_ref().filter(|c| Q::row_enabled(c, chunk, row)) {
            // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
            // above).
            unsafe { Q::mark_row(c, chunk, row, tick) }
        }
    }

    #[inline(always)]
    unsafe fn item<'w>(fetch: &mut Self::Fetch, row: usize) -> Self::Item<'w> {
        match fetch {
            OptionFetch::Absent => None,
            // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
            // above).
            OptionFetch::All(f) => Some(unsafe { Q::item(f, row) }),
            OptionFetch::Mixed(f, c, chunk) => {
                // SAFETY: the chunk outlives the fetch (the `fetch` contract).
                let chunk = unsafe { chunk.as_ref() };
                // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
                // above).
                Q::row_enabled(c, chunk, row).then(|| unsafe { Q::item(f, row) })
            }
        }
    }

    /// A mixed chunk's column comes whole (`Some`); [`ChunkView::is_enabled`] tells its rows
    /// apart.
    ///
    /// [`ChunkView::is_enabled`]: crate::ChunkView::is_enabled
    #[inline(always)]
    unsafe fn slice<'w>(fetch: &Self::Fetch, len: usize) -> Self::Slice<'w> {
        match fetch {
            OptionFetch::Absent => None,
            // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
            // above).
            OptionFetch::All(f) | OptionFetch::Mixed(f, ..) => Some(unsafe { Q::slice(f, len) }),
        }
    }

    /// Only chunks where `Q` keeps all rows or none reach the slice loops (`enabled_rows`
    /// answers `Some` for the others), so `Some` slices are `All`.
    #[inline(always)]
    unsafe fn unslice(slice: Self::Slice<'_>) -> Self::Fetch {
        match slice {
            // SAFETY: `Q`'s contract for its own cached fetch / fetch (the forwarding note
            // above).
            Some(s) => OptionFetch::All(unsafe { Q::unslice(s) }),
            None => OptionFetch::Absent,
        }
    }

    /// A mixed chunk's fetch asks the chunk about each row by its index, so it does not shift.
    #[inline(always)]
    unsafe fn advance(fetch: &Self::Fetch, rows: usize) -> Option<Self::Fetch> {
        match fetch {
            OptionFetch::Absent => Some(OptionFetch::Absent),
            // SAFETY: `Q`'s contract for its own fetch (the forwarding note above).
            OptionFetch::All(f) => unsafe { Q::advance(f, rows) }.map(OptionFetch::All),
            OptionFetch::Mixed(..) => None,
        }
    }
}

// SAFETY: `Q` declares no write.
unsafe impl<Q: ReadOnlyQuery> ReadOnlyQuery for Option<Q> {}
impl<Q: ExactQuery> ExactQuery for Option<Q> {}
