//! [`Query::par_for_each_send`]: a parallel query loop that sends events, in row order on any
//! number of threads. It lives with the events rather than with [`Query`] (`system/query.rs`)
//! so that the system parameters do not import the events built on them.

use ecs_query::{QueryFilter, QueryKind, WorldQuery};

use super::{EventWriter, ParEvents};
use crate::system::query::Query;

impl<'w, 's, Q: WorldQuery, F: QueryFilter, K: QueryKind> Query<'w, 's, Q, F, K> {
    /// `par_for_each` that sends events: each task sends into a [`ParEvents`] of its own, and
    /// the buffers go to `writer` in row order after the loop, so the events, and the order a
    /// reader sees them in, are the same on any number of threads (as if one loop had sent
    /// them row by row).
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_query::RefRO;
    /// # use ecs_sched::{EventReader, EventWriter, Query, ResMut, Schedule};
    /// struct Hp(i32);
    /// struct Died(Entity);
    /// fn check(mut q: Query<(Entity, RefRO<Hp>)>, mut died: EventWriter<Died>) {
    ///     q.par_for_each_send(&mut died, |out, (e, hp)| {
    ///         if hp.0 <= 0 { out.send(Died(e)); }
    ///     });
    /// }
    /// fn count(mut died: EventReader<Died>, mut n: ResMut<usize>) { *n += died.read().count(); }
    /// let mut world = World::new();
    /// world.insert_resource(0usize);
    /// world.spawn_batch((-3..3).map(|h| (Hp(h),))).for_each(drop);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(check);
    /// schedule.add_system(count);
    /// schedule.run(&mut world).unwrap();
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(*world.resource::<usize>(), 4); // the first run's four, read in the second
    /// ```
    pub fn par_for_each_send<E: Send + Sync + 'static>(
        &mut self,
        writer: &mut EventWriter<'_, E>,
        f: impl Fn(&mut ParEvents<'_, E>, Q::Item<'_>) + Send + Sync,
    ) {
        let buffers = self
            .run
            .reborrow()
            .par_for_each_collect(Vec::new, |buffer, item| {
                f(&mut ParEvents::new(buffer), item)
            });
        for buffer in buffers {
            writer.send_batch(buffer);
        }
    }
}
