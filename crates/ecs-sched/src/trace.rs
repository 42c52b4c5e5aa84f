//! Spans for profilers, behind the `tracing` feature: one per schedule run (`schedule_run`),
//! per system run (`system`, also exclusive systems and one-shot runs) and per system's
//! command application (`apply_commands`). Each records the system's name and the rayon
//! worker it ran on (`thread`, absent off the pool), so a subscriber such as `tracing-chrome`
//! (Perfetto) or `tracing-tracy` shows a frame as a timeline, one lane per thread.
//!
//! Without the feature every function here returns a zero-sized `NoSpan` and is inlined
//! away: the executor's code is the same as if it had no spans. With it, a span that no subscriber enables costs
//! one relaxed load of tracing's global interest cache.

/// What keeps a span entered; dropping it exits the span.
#[cfg(feature = "tracing")]
pub(crate) type Entered = tracing::span::EnteredSpan;
/// Nothing: spans are compiled out.
#[cfg(not(feature = "tracing"))]
pub(crate) type Entered = NoSpan;

/// What stands for a span without the `tracing` feature: zero-sized, no drop glue.
#[cfg(not(feature = "tracing"))]
#[derive(Clone, Copy)]
pub(crate) struct NoSpan;

/// The span a system span is opened under: worker threads have no current span of their own,
/// so the executor captures the schedule's on the thread that starts the segment.
#[cfg(feature = "tracing")]
pub(crate) type Parent = tracing::Span;
/// Nothing: spans are compiled out.
#[cfg(not(feature = "tracing"))]
pub(crate) type Parent = NoSpan;

/// The current span, as the parent of the spans opened on other threads.
#[inline(always)]
pub(crate) fn current() -> Parent {
    #[cfg(feature = "tracing")]
    {
        tracing::Span::current()
    }
    #[cfg(not(feature = "tracing"))]
    {
        NoSpan
    }
}

/// Enters `span` on this thread (the schedule's run moves to its pool's thread).
#[inline(always)]
pub(crate) fn reenter(span: &Parent) -> Entered {
    #[cfg(feature = "tracing")]
    {
        span.clone().entered()
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = span;
        NoSpan
    }
}

/// The span of one run of the system `name()` names, under `parent`. The name is asked for
/// only with the feature on: a system's `name` is a virtual call, once per system per run.
#[inline(always)]
pub(crate) fn system<'a>(parent: &Parent, name: impl FnOnce() -> &'a str) -> Entered {
    #[cfg(feature = "tracing")]
    {
        let name = name();
        tracing::info_span!(parent: parent, "system", name, thread = rayon::current_thread_index())
            .entered()
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (parent, name);
        NoSpan
    }
}

/// The span of applying (or dropping) the commands the system `name` recorded.
#[inline(always)]
pub(crate) fn apply_commands(name: &str, discard: bool) -> Entered {
    #[cfg(feature = "tracing")]
    {
        tracing::info_span!("apply_commands", system = name, discard).entered()
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = (name, discard);
        NoSpan
    }
}

/// The span of one `Schedule::run` over `systems` systems.
#[inline(always)]
pub(crate) fn schedule_run(systems: usize) -> Entered {
    #[cfg(feature = "tracing")]
    {
        tracing::info_span!("schedule_run", systems).entered()
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = systems;
        NoSpan
    }
}
