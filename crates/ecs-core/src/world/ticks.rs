//! Change ticks: the world's tick counter, the clamp that keeps 32-bit row ticks from
//! wrapping, and switching per-row ticks on for a component (see `row_ticks`).

use crate::component::ComponentId;
use crate::ids::RowTicks;
use crate::sync::Ordering;
use crate::world::{Tick, World};

impl World {
    /// The world's current change tick: writes stamp it on the chunk columns they touch.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// let before = world.change_tick();
    /// world.advance_tick();
    /// assert_eq!(world.change_tick(), before + 1);
    /// ```
    #[inline]
    pub fn change_tick(&self) -> Tick {
        self.change_tick.load(Ordering::Relaxed)
    }

    /// Advances the change tick and returns the value it had. A query run stamps its writes
    /// with the returned tick and remembers `returned + 1` as the start of "later".
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// let old = world.advance_tick();
    /// assert_eq!(world.change_tick(), old + 1);
    /// ```
    #[inline]
    pub fn advance_tick(&self) -> Tick {
        self.change_tick.fetch_add(1, Ordering::Relaxed)
    }

    /// Keeps 32-bit row ticks from wrapping: once 2^30 ticks have passed since the last check,
    /// moves every row tick older than 2^31 ticks up to 2^31 ticks old (answers do not change:
    /// see `row_ticks`). O(1) otherwise; `Schedule::run` calls it every run. A world driven by
    /// hand should call it now and then (at least once every 2^30 ticks); without it, a row
    /// left unwritten for 2^32 ticks would read as changed once more (never the reverse: no
    /// change is lost).
    ///
    /// ```
    /// # use ecs_core::{RowTicks, World};
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.keep_row_ticks(world.component_id::<u32>().unwrap(), RowTicks::CHANGED);
    /// world.set_change_tick_for_tests(3 << 31);
    /// world.check_change_ticks(); // clamps: the row is 2^31 ticks old now
    /// world.check_invariants();
    /// ```
    pub fn check_change_ticks(&mut self) {
        let now = self.change_tick();
        if now.saturating_sub(self.ticks_checked) < 1 << 30 {
            return;
        }
        self.ticks_checked = now;
        for arch in self.archetypes.as_mut_slice() {
            arch.clamp_marks(now);
        }
    }

    /// Test hook: raises the change tick to `tick` (never lowers it), to test behaviour near
    /// the 32-bit row-tick wrap without running 2^32 queries.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.set_change_tick_for_tests(u64::from(u32::MAX) - 1);
    /// assert_eq!(world.change_tick(), u64::from(u32::MAX) - 1);
    /// ```
    #[doc(hidden)]
    pub fn set_change_tick_for_tests(&mut self, tick: Tick) {
        self.raise_change_tick(tick);
    }

    /// Switches on per-row ticks for component `id` (see `row_ticks` in the crate's modules):
    /// change ticks for `Changed<T>`, add ticks for `Added<T>`. Query states call this when
    /// they are built, so a type no such filter asks about keeps no row ticks at all. Existing
    /// rows read as written (added) at their chunk's last write (last structural change):
    /// never later than the truth, so a reader built before the switch misses nothing.
    ///
    /// Cost: O(chunks of archetypes with `id`) the first time, nothing afterwards.
    ///
    /// ```
    /// # use ecs_core::{RowTicks, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let id = world.component_id::<u32>().unwrap();
    /// world.keep_row_ticks(id, RowTicks::CHANGED);
    /// assert_eq!(world.components().row_ticks(id), RowTicks::CHANGED);
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.row_ticks(0), RowTicks::CHANGED);
    /// world.check_invariants();
    /// ```
    pub fn keep_row_ticks(&mut self, id: ComponentId, marks: RowTicks) {
        if self.components.row_ticks(id).contains(marks) {
            return;
        }
        self.components.add_row_ticks(id, marks);
        for arch in self.archetypes.as_mut_slice() {
            if let Some(col) = arch.column(id) {
                arch.keep_row_ticks(col, marks);
            }
        }
    }
}
