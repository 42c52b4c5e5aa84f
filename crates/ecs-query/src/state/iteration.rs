//! Which chunk loop `for_each` runs: [`Iteration`], a per-[`QueryState`](crate::QueryState)
//! setting.
//!
//! Two loops exist. The **plain** loop hands out each chunk's rows in one tight loop and, at
//! each chunk's start, asks for the next chunk's columns (their first lines and a touch per
//! page) when the archetype's touched bytes exceed the L2 cache the machine reports: a
//! smaller archetype is in cache after its first pass, and the prefetches would only take
//! load slots from the loop. The **streaming** loop spreads those prefetches over the
//! chunk's rows, 16 rows at a time, so a stream from memory never bursts the CPU's miss queue.
//!
//! Until issue 31 the streaming loop ran for every archetype whose touched bytes reached a
//! constant 6 MiB, tuned on one CPU. Measured against the plain loop, it was **slower at
//! every scale it was chosen for**, from inside L3 to far beyond every cache, on more than one
//! machine. No cache size separates a scale where it wins from one where it loses, so
//! [`Iteration::Auto`] runs the plain loop everywhere, and the streaming loop is kept for a
//! machine where a user measures otherwise: [`Iteration::Streaming`] forces it.
//!
//! That streaming loop then handed the whole chunk to one row loop whose closure issued the
//! prefetches, which kept it from vectorising. It now runs each 16-row piece through the
//! query's vectorised row loop over a fetch shifted to the piece ([`WorldQuery::advance`],
//! so no row handed out before is borrowed again), falling back to the closure for elements
//! that cannot shift. That made it no longer far behind from memory, but it is still behind
//! in cache, so `Auto` stays plain. The figures are in docs/performance.md, "Design
//! measurements".
//!
//! [`WorldQuery::advance`]: crate::WorldQuery::advance
//!
//! Whichever loop runs, every row is handed out once, in the same order, with the same change
//! marks: the loop choice never changes a result (`tests/iteration.rs` checks every path at
//! several scales, with masked and unmasked chunks).

/// The chunk loop of a query state's `for_each` (see the module docs).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{Iteration, QueryState, RefRW};
/// let mut world = World::new();
/// world.spawn_batch((0..10_000u32).map(|i| (i,))).for_each(drop);
/// let mut state = QueryState::<RefRW<u32>>::new(&mut world);
/// assert_eq!(state.iteration(), Iteration::Auto);
/// let mut plain = 0u64;
/// state.for_each(&mut world, |mut x| { *x += 1; plain += u64::from(*x) });
/// state.set_iteration(Iteration::Streaming);
/// let mut streamed = 0u64;
/// state.for_each(&mut world, |mut x| { *x -= 1; streamed += u64::from(*x) + 1 });
/// assert_eq!(plain, streamed);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Iteration {
    /// The engine's choice: today the plain loop on every machine and scale (see the module
    /// docs for why).
    #[default]
    Auto,
    /// The plain loop, whatever the scale.
    Plain,
    /// The streaming loop for every archetype of more than one chunk.
    Streaming,
}

impl Iteration {
    /// The name in reports: `"plain"` or `"streaming"` for the loop this setting runs.
    ///
    /// ```
    /// # use ecs_query::Iteration;
    /// assert_eq!(Iteration::Auto.loop_name(), "plain");
    /// assert_eq!(Iteration::Streaming.loop_name(), "streaming");
    /// ```
    pub fn loop_name(self) -> &'static str {
        if self.streams() {
            "streaming"
        } else {
            "plain"
        }
    }

    /// Whether archetypes of several chunks take the streaming loop.
    #[inline(always)]
    pub(crate) fn streams(self) -> bool {
        matches!(self, Self::Streaming)
    }
}
