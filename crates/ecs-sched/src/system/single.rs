//! [`Single`] and [`Populated`]: query parameters that skip their system when the query does
//! not match what the system needs (exactly one entity; at least one), as bevy's do. A skipped
//! run counts as skipped in [`Timings`](crate::Timings), like a false run condition.
//! `Option<Single<Q, F>>` never skips: it is `None` unless exactly one entity matches.
//!
//! Both declare exactly what [`Query<Q, F>`] declares, so they conflict, and are ordered, as a
//! query would be. The match is counted ([`SystemParam::validate`]) just before the system runs,
//! in the change window its run will have, so a `Single<Q, Changed<T>>` sees what its run sees.
//! A skipped run is not a run: the query's change window stays open until the system runs, so
//! changes made while it was skipped are still seen then. Counting is O(matched chunks) and
//! reads no column.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use ecs_core::{Components, World};
use ecs_query::{QueryFilter, QueryRun, QueryState, WorldQuery};

use crate::saved_state::{StateError, StateReader, StateWriter};
use crate::system::access::{Conflict, SystemAccess};
use crate::system::param::SystemParam;
use crate::system::query::Query;

/// The item of the only entity `Q` matches; the system is skipped unless exactly one does.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{RefRO, RefRW, With};
/// # use ecs_sched::{Schedule, Single};
/// struct Player;
/// struct Hp(u32);
/// fn heal(mut hp: Single<RefRW<Hp>, With<Player>>) { hp.0 += 1; }
/// let mut world = World::new();
/// let mut schedule = Schedule::new();
/// schedule.add_system(heal);
/// schedule.run(&mut world).unwrap(); // no player yet: skipped
/// assert_eq!(schedule.timings().system("heal").unwrap().skipped, 1);
/// let p = world.spawn((Player, Hp(1)));
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.get::<Hp>(p).unwrap().0, 2);
/// ```
pub struct Single<'w, Q: WorldQuery, F: QueryFilter = ()> {
    item: Q::Item<'w>,
    _filter: PhantomData<fn() -> F>,
}

impl<'w, Q: WorldQuery, F: QueryFilter> Single<'w, Q, F> {
    /// The item itself.
    pub fn into_inner(self) -> Q::Item<'w> {
        self.item
    }
}

impl<'w, Q: WorldQuery, F: QueryFilter> Deref for Single<'w, Q, F> {
    type Target = Q::Item<'w>;

    fn deref(&self) -> &Q::Item<'w> {
        &self.item
    }
}

impl<'w, Q: WorldQuery, F: QueryFilter> DerefMut for Single<'w, Q, F> {
    fn deref_mut(&mut self) -> &mut Q::Item<'w> {
        &mut self.item
    }
}

/// A [`Query`] that matches at least one entity; the system is skipped while it matches none.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::RefRW;
/// # use ecs_sched::{Populated, Schedule};
/// struct Enemy(u32);
/// fn tick(mut enemies: Populated<RefRW<Enemy>>) { enemies.for_each(|e| e.0 += 1); }
/// let mut world = World::new();
/// let mut schedule = Schedule::new();
/// schedule.add_system(tick);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(schedule.timings().system("tick").unwrap().skipped, 1);
/// let e = world.spawn((Enemy(0),));
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.get::<Enemy>(e).unwrap().0, 1);
/// ```
pub struct Populated<'w, 's, Q: WorldQuery, F: QueryFilter = ()>(Query<'w, 's, Q, F>);

impl<'w, 's, Q: WorldQuery, F: QueryFilter> Populated<'w, 's, Q, F> {
    /// The query itself.
    pub fn into_inner(self) -> Query<'w, 's, Q, F> {
        self.0
    }
}

impl<'w, 's, Q: WorldQuery, F: QueryFilter> Deref for Populated<'w, 's, Q, F> {
    type Target = Query<'w, 's, Q, F>;

    fn deref(&self) -> &Query<'w, 's, Q, F> {
        &self.0
    }
}

impl<Q: WorldQuery, F: QueryFilter> DerefMut for Populated<'_, '_, Q, F> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// How many entities `state` matches in the window the next run will have (the cache brought
/// up to date, nothing stamped).
fn matches<Q: WorldQuery, F: QueryFilter>(state: &mut QueryState<Q, F>, world: &World) -> usize {
    state.count(world)
}

/// The only item, from a run started now; `None` unless exactly one entity matches.
///
/// # Safety
/// As [`SystemParam::get`] for `Query<Q, F>`.
unsafe fn single_item<'w, Q: WorldQuery, F: QueryFilter>(
    state: &mut QueryState<Q, F>,
    world: &'w World,
) -> Option<Q::Item<'w>> {
    let ticks = state.start_run(world);
    // SAFETY: this fn's contract: the schedule runs nothing that conflicts with the access
    // `Query<Q, F>` declares, which is what `declare` recorded.
    unsafe { QueryRun::<Q, F>::new(state, world, ticks) }
        .single()
        .ok()
}

// SAFETY: declares exactly `Query<Q, F>`'s access and hands out one of its items.
unsafe impl<Q: WorldQuery + 'static, F: QueryFilter + 'static> SystemParam for Single<'_, Q, F> {
    type State = QueryState<Q, F>;
    type Item<'w, 's> = Single<'w, Q, F>;

    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
        <Query<Q, F>>::declare(access, registry)
    }

    fn init_state(world: &mut World) -> Self::State {
        QueryState::new(world)
    }

    fn save_state(state: &Self::State, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.save_tick(state.last_seen());
        Ok(())
    }

    fn load_state(state: &mut Self::State, input: &mut StateReader<'_>) {
        state.set_last_seen(input.load_tick());
    }

    unsafe fn validate(state: &mut Self::State, world: &World) -> bool {
        matches(state, world) == 1
    }

    unsafe fn get<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        system: &str,
    ) -> Self::Item<'w, 's> {
        // SAFETY: this fn's contract is `single_item`'s.
        let item = unsafe { single_item(state, world) }.unwrap_or_else(|| {
            panic!(
                "system `{system}`: `Single<{}>` matched no entity or several after `validate` \
                 said one (the schedule validates just before it runs the system)",
                std::any::type_name::<Q>()
            )
        });
        Single {
            item,
            _filter: PhantomData,
        }
    }
}

// SAFETY: as for `Single`: `Query<Q, F>`'s access, at most one item.
unsafe impl<Q: WorldQuery + 'static, F: QueryFilter + 'static> SystemParam
    for Option<Single<'_, Q, F>>
{
    type State = QueryState<Q, F>;
    type Item<'w, 's> = Option<Single<'w, Q, F>>;

    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
        <Query<Q, F>>::declare(access, registry)
    }

    fn init_state(world: &mut World) -> Self::State {
        QueryState::new(world)
    }

    fn save_state(state: &Self::State, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.save_tick(state.last_seen());
        Ok(())
    }

    fn load_state(state: &mut Self::State, input: &mut StateReader<'_>) {
        state.set_last_seen(input.load_tick());
    }

    unsafe fn get<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        _: &str,
    ) -> Self::Item<'w, 's> {
        // SAFETY: this fn's contract is `single_item`'s.
        unsafe { single_item(state, world) }.map(|item| Single {
            item,
            _filter: PhantomData,
        })
    }
}

// SAFETY: exactly `Query<Q, F>`'s declaration and item.
unsafe impl<Q: WorldQuery + 'static, F: QueryFilter + 'static> SystemParam
    for Populated<'_, '_, Q, F>
{
    type State = QueryState<Q, F>;
    type Item<'w, 's> = Populated<'w, 's, Q, F>;

    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
        <Query<Q, F>>::declare(access, registry)
    }

    fn init_state(world: &mut World) -> Self::State {
        QueryState::new(world)
    }

    fn save_state(state: &Self::State, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.save_tick(state.last_seen());
        Ok(())
    }

    fn load_state(state: &mut Self::State, input: &mut StateReader<'_>) {
        state.set_last_seen(input.load_tick());
    }

    unsafe fn validate(state: &mut Self::State, world: &World) -> bool {
        matches(state, world) > 0
    }

    unsafe fn get<'w, 's>(
        state: &'s mut Self::State,
        world: &'w World,
        system: &str,
    ) -> Self::Item<'w, 's> {
        // SAFETY: this fn's contract is `Query::get`'s.
        Populated(unsafe { <Query<Q, F>>::get(state, world, system) })
    }
}
