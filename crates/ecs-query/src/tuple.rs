//! Tuples of query elements: each method forwards to the elements, access is their union.

use ecs_core::{
    Archetype, ChangeWindow, Chunk, ComponentId, Components, RowTicks, Signature, Tick, World,
};

use crate::access::{Access, AccessConflict};
use crate::fetch::{join_kinds, ExactQuery, QueryKind, ReadKind, ReadOnlyQuery, WorldQuery};
use crate::rows::Rows;

// Forwarding, the invariant every `unsafe` call below relies on: a tuple's `ArchetypeFetch`,
// `Fetch` and `Slice` are its elements', element `i` at `.i`, each made by that element for the
// same archetype, chunk and tick; and its access is the union of the elements' (`Access`
// refuses aliasing between them). So whatever the caller promises the tuple for a method, it
// promises element `i` for `.i`: the element's contract is the tuple's, restricted to it.
macro_rules! tuple_query {
    ($($Q:ident $q:ident $i:tt),*) => {
        // SAFETY: each method forwards to the elements; access is the union of the elements'
        // (aliasing between elements is refused by `Access`).
        unsafe impl<$($Q: WorldQuery),*> WorldQuery for ($($Q,)*) {
            type Item<'w> = ($($Q::Item<'w>,)*);
            type Slice<'w> = ($($Q::Slice<'w>,)*);
            type Fetch = ($($Q::Fetch,)*);
            type ArchetypeFetch = ($($Q::ArchetypeFetch,)*);
            type Kind = join_kinds!($($Q),*);
            type ReadOnly = ($($Q::ReadOnly,)*);
            type State = ($($Q::State,)*);

            const CHUNK_FILTERED: bool = false $(|| $Q::CHUNK_FILTERED)*;
            const ROW_FILTERED: bool = false $(|| $Q::ROW_FILTERED)*;
            const ODD_WIDTH: bool = false $(|| $Q::ODD_WIDTH)*;

            #[allow(unused_variables, reason = "the empty tuple")]
            fn row_ticks(state: &Self::State, out: &mut Vec<(ComponentId, RowTicks)>) {
                $($Q::row_ticks(&state.$i, out);)*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn rows_all_match(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
                true $(&& $Q::rows_all_match(&cached.$i, chunk, window))*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn row_matches(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize, window: ChangeWindow) -> bool {
                true $(&& $Q::row_matches(&cached.$i, chunk, row, window))*
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, reason = "the empty tuple")]
            unsafe fn mark_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk, rows: std::ops::Range<usize>, tick: Tick) {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { $($Q::mark_rows(&cached.$i, chunk, rows.clone(), tick);)* }
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn keeps_row_ticks(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> bool {
                false $(|| $Q::keeps_row_ticks(&cached.$i, chunk))*
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, reason = "the empty tuple")]
            unsafe fn mark_row(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize, tick: Tick) {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { $($Q::mark_row(&cached.$i, chunk, row, tick);)* }
            }

            #[inline]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn and_row_marks(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow, words: &mut [u64]) {
                $(if $Q::ROW_FILTERED && !$Q::rows_all_match(&cached.$i, chunk, window) {
                    $Q::and_row_marks(&cached.$i, chunk, window, words);
                })*
            }

            #[allow(unused_variables, clippy::unused_unit, reason = "the empty tuple")]
            fn init_state(components: &mut Components) -> Self::State {
                ($($Q::init_state(components),)*)
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn update_access(state: &Self::State, access: &mut Access, c: &Components) -> Result<(), AccessConflict> {
                $($Q::update_access(&state.$i, access, c)?;)*
                Ok(())
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn update_masks(state: &Self::State, required: &mut Signature, excluded: &mut Signature) {
                $($Q::update_masks(&state.$i, required, excluded);)*
            }

            #[allow(unused_variables, reason = "the empty tuple")]
            fn matches(state: &Self::State, signature: &Signature) -> bool {
                true $(&& $Q::matches(&state.$i, signature))*
            }

            #[allow(unused_variables, clippy::unused_unit, reason = "the empty tuple")]
            fn archetype_fetch(state: &Self::State, arch: &Archetype) -> Self::ArchetypeFetch {
                ($($Q::archetype_fetch(&state.$i, arch),)*)
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn chunk_matches(cached: &Self::ArchetypeFetch, chunk: &Chunk, window: ChangeWindow) -> bool {
                true $(&& $Q::chunk_matches(&cached.$i, chunk, window))*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn enabled_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk) -> Rows {
                Rows::All $(.and($Q::enabled_rows(&cached.$i, chunk)))*
            }

            #[inline]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn and_rows(cached: &Self::ArchetypeFetch, chunk: &Chunk, words: &mut [u64]) {
                $($Q::and_rows(&cached.$i, chunk, words);)*
            }

            #[inline(always)]
            #[allow(unused_variables, reason = "the empty tuple")]
            fn row_enabled(cached: &Self::ArchetypeFetch, chunk: &Chunk, row: usize) -> bool {
                true $(&& $Q::row_enabled(&cached.$i, chunk, row))*
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn fetch_ignoring_enabled(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Self::Fetch {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { ($($Q::fetch_ignoring_enabled(&cached.$i, chunk, tick),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn fetch(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick) -> Self::Fetch {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { ($($Q::fetch(&cached.$i, chunk, tick),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn fetch_in(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick, world: &World) -> Self::Fetch {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { ($($Q::fetch_in(&cached.$i, chunk, tick, world),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn fetch_ignoring_enabled_in(cached: &Self::ArchetypeFetch, chunk: &Chunk, tick: Tick, world: &World) -> Self::Fetch {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { ($($Q::fetch_ignoring_enabled_in(&cached.$i, chunk, tick, world),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn item<'w>(fetch: &mut Self::Fetch, row: usize) -> Self::Item<'w> {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { ($($Q::item(&mut fetch.$i, row),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn slice<'w>(fetch: &Self::Fetch, len: usize) -> Self::Slice<'w> {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { ($($Q::slice(&fetch.$i, len),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, clippy::unused_unit, reason = "the empty tuple")]
            unsafe fn unslice(slice: Self::Slice<'_>) -> Self::Fetch {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                unsafe { ($($Q::unslice(slice.$i),)*) }
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, reason = "the empty tuple")]
            unsafe fn advance(fetch: &Self::Fetch, rows: usize) -> Option<Self::Fetch> {
                // SAFETY: the tuple's contract is each element's, for its own `.i` (see the note
                // on `tuple_query!`).
                Some(($(unsafe { $Q::advance(&fetch.$i, rows) }?,)*))
            }

            #[inline(always)]
            #[allow(unused_variables, unused_unsafe, reason = "the empty tuple")]
            unsafe fn for_each_row<'w, Func: FnMut(Self::Item<'w>)>(
                fetch: &mut Self::Fetch,
                len: usize,
                f: &mut Func,
            ) {
                /// The loop over one chunk. Each column arrives as its own argument, so the
                /// compiler may assume that a `&mut` column overlaps no other; `#[inline]`
                /// rather than `#[inline(always)]` keeps the function until LLVM inlines it,
                /// which carries that no-alias fact into the caller.
                ///
                /// # Safety
                /// The slices hold rows `0..len` of one chunk, from `slice`; each row is
                /// handed out once.
                #[inline]
                #[allow(unused_variables, unused_mut, unused_unsafe, reason = "the empty tuple")]
                #[allow(clippy::extra_unused_lifetimes, reason = "the empty tuple")]
                #[allow(clippy::too_many_arguments, reason = "one argument per column is the point")]
                unsafe fn chunk_rows<'w, $($Q: WorldQuery,)* Func: FnMut(($($Q::Item<'w>,)*))>(
                    len: usize,
                    f: &mut Func,
                    $($q: $Q::Slice<'w>,)*
                ) {
                    // SAFETY: each slice came from `slice` (caller contract); the fetches
                    // stand in for them, and every row below `len` is yielded once.
                    unsafe {
                        let mut fetch = ($($Q::unslice($q),)*);
                        // Four rows per step: four 12-byte values fill three registers.
                        // Counted as `len / 4` steps (not `row + 4 <= len`), so that the
                        // compiler needs no overflow-proof trip count before each chunk.
                        let quads = if $($Q::ODD_WIDTH ||)* false { len / 4 } else { 0 };
                        for quad in 0..quads {
                            let row = quad * 4;
                            f(($($Q::item(&mut fetch.$i, row),)*));
                            f(($($Q::item(&mut fetch.$i, row + 1),)*));
                            f(($($Q::item(&mut fetch.$i, row + 2),)*));
                            f(($($Q::item(&mut fetch.$i, row + 3),)*));
                        }
                        for row in quads * 4..len {
                            f(($($Q::item(&mut fetch.$i, row),)*));
                        }
                    }
                }
                // SAFETY: rows `0..len` are the caller's to hand out once (forwarded contract).
                unsafe { chunk_rows::<$($Q,)* Func>(len, f, $($Q::slice(&fetch.$i, len),)*) }
            }
        }

        // SAFETY: no element declares a write.
        unsafe impl<$($Q: ReadOnlyQuery),*> ReadOnlyQuery for ($($Q,)*) {}
        impl<$($Q: ExactQuery),*> ExactQuery for ($($Q,)*) {}
    };
}

tuple_query!();
tuple_query!(A a 0);
tuple_query!(A a 0, B b 1);
tuple_query!(A a 0, B b 1, C c 2);
tuple_query!(A a 0, B b 1, C c 2, D d 3);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
tuple_query!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);
