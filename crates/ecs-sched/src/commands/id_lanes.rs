//! Id lanes for a parallel segment: how `Commands` systems spawn side by side and still get
//! the same entity ids on any number of threads.
//!
//! Before a segment runs, the schedule (`schedule/run.rs`) walks the segment's `Commands`
//! systems in plan order; each `Commands` parameter takes the next lane ([`LanePlan::lane`]),
//! and the world opens that many ([`World::open_id_lanes`]). While the segment runs, a queue
//! reserves only in its own lane, whose `k`-th id is position `k·lanes + lane` of the free
//! list, then of the indices past the table (ecs-core's `entity/lanes.rs`): it depends on `k`
//! and the world's state alone, so a world restored from a snapshot gets the same ids again. A segment with a
//! `&World` system gets one more lane, last, for reservations through the world's cursor
//! (`&World` systems stay ordered against each other for that reason). The lanes close at the
//! next structural change, when the commands are applied.
//!
//! So `Commands` adds no ordering: two systems that both spawn run at the same time, and the
//! plan, the lanes and hence the ids are the same on 1 or 64 threads.

#[cfg(doc)]
use ecs_core::World;

/// The lanes of one segment, counted as they are taken.
///
/// ```
/// # use ecs_sched::LanePlan;
/// let mut plan = LanePlan::default();
/// assert_eq!((plan.lane(), plan.lane()), (0, 1));
/// assert_eq!(plan.lanes(), 2);
/// ```
#[derive(Default, Debug)]
pub struct LanePlan {
    lanes: u32,
}

impl LanePlan {
    /// Takes the next lane; returns its number.
    pub fn lane(&mut self) -> u32 {
        self.lanes += 1;
        self.lanes - 1
    }

    /// How many lanes were taken.
    pub fn lanes(&self) -> u32 {
        self.lanes
    }
}
