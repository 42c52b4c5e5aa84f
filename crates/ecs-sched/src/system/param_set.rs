//! [`ParamSet`]: several parameters that conflict with each other, used one at a time.
//!
//! Two queries that write the same component cannot both be parameters of one system unless a
//! filter proves them disjoint. When no filter can say it (both may match the same entity, but
//! the system uses them in turn), a `ParamSet<(A, B)>` declares the union of their accesses to
//! the schedule and hands out one member at a time through `&mut self` (`p0()`, `p1()`, ...):
//! the borrow checker keeps two members from being alive together, which is what makes the
//! overlap sound. Members are checked against the system's other parameters as usual.
//!
//! Cost: each `pN()` call builds the member's item again (a query re-validates its cache and
//! starts a new change window, so `Changed<T>` in a member sees changes since that member's
//! previous call).

use ecs_core::{Components, World};

use crate::error::CommandError;
use crate::system::access::{Conflict, SystemAccess};
use crate::system::param::SystemParam;

/// Conflicting parameters used one at a time (see the module doc).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_query::{RefRO, RefRW};
/// # use ecs_sched::{ParamSet, Query, Schedule};
/// struct Hp(i32);
/// struct Poisoned;
/// // Both queries write `Hp`, and a poisoned entity matches both.
/// fn tick(mut set: ParamSet<(Query<RefRW<Hp>>, Query<(RefRW<Hp>, RefRO<Poisoned>)>)>) {
///     set.p0().for_each(|hp| hp.0 += 1);
///     set.p1().for_each(|(hp, _)| hp.0 -= 3);
/// }
/// let mut world = World::new();
/// let (a, b) = (world.spawn((Hp(10),)), world.spawn((Hp(10), Poisoned)));
/// let mut schedule = Schedule::new();
/// schedule.add_system(tick);
/// schedule.run(&mut world).unwrap();
/// assert_eq!((world.get::<Hp>(a).unwrap().0, world.get::<Hp>(b).unwrap().0), (11, 8));
/// ```
///
/// Two members cannot be alive at once:
///
/// ```compile_fail,E0499
/// # use ecs_query::RefRW;
/// # use ecs_sched::{ParamSet, Query};
/// fn both(mut set: ParamSet<(Query<RefRW<u32>>, Query<RefRW<u32>>)>) {
///     let mut a = set.p0();
///     let mut b = set.p1(); // second `&mut` borrow of `set`
///     a.for_each(|n| *n += 1);
///     b.for_each(|n| *n += 1);
/// }
/// ```
pub struct ParamSet<'w, 's, T: SystemParam> {
    state: &'s mut T::State,
    world: &'w World,
    system: String,
}

macro_rules! param_set {
    ($(($P:ident, $p:ident, $i:tt)),*) => {
        impl<'w, 's, $($P: SystemParam),*> ParamSet<'w, 's, ($($P,)*)> {
            $(
                /// This member's item, borrowing the set: no other member is alive meanwhile.
                pub fn $p(&mut self) -> $P::Item<'_, '_> {
                    // SAFETY: the system declared this member's access (inside the union), so
                    // no system running meanwhile conflicts with it; the item borrows `self`
                    // mutably, so no other member's item is alive (module doc).
                    unsafe { $P::get(&mut self.state.$i, self.world, &self.system) }
                }
            )*
        }

        // SAFETY: `declare` records every member's access (the union); `get` hands out no
        // member item, and the `pN` methods hand out one at a time (module doc).
        unsafe impl<$($P: SystemParam),*> SystemParam for ParamSet<'_, '_, ($($P,)*)> {
            type State = ($($P::State,)*);
            type Item<'w, 's> = ParamSet<'w, 's, ($($P,)*)>;

            fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
                // Each member is checked against the parameters before the set, not against
                // the other members; parameters after the set are checked against the union.
                let mut members = SystemAccess::default();
                $(
                    let mut member = SystemAccess::default();
                    $P::declare(&mut member, registry)?;
                    if let Some(conflict) = access.conflict_within_system(&member) {
                        return Err(conflict);
                    }
                    members.merge(&member);
                )*
                access.merge(&members);
                Ok(())
            }

            fn init_state(world: &mut World) -> Self::State {
                ($($P::init_state(world),)*)
            }

            unsafe fn get<'w, 's>(
                state: &'s mut Self::State,
                world: &'w World,
                system: &str,
            ) -> Self::Item<'w, 's> {
                ParamSet { state, world, system: system.to_owned() }
            }

            fn plan_lanes(state: &mut Self::State, plan: &mut crate::commands::id_lanes::LanePlan) {
                $($P::plan_lanes(&mut state.$i, plan);)*
            }

            fn save_state(
                state: &Self::State,
                out: &mut crate::saved_state::StateWriter<'_>,
            ) -> Result<(), crate::saved_state::StateError> {
                $($P::save_state(&state.$i, out)?;)*
                Ok(())
            }

            fn load_state(state: &mut Self::State, input: &mut crate::saved_state::StateReader<'_>) {
                $($P::load_state(&mut state.$i, input);)*
            }

            fn apply(
                state: &mut Self::State,
                world: &mut World,
                system: &str,
                errors: &mut Vec<CommandError>,
                discard: bool,
            ) {
                $($P::apply(&mut state.$i, world, system, errors, discard);)*
            }
        }
    };
}

param_set!((P0, p0, 0), (P1, p1, 1));
param_set!((P0, p0, 0), (P1, p1, 1), (P2, p2, 2));
param_set!((P0, p0, 0), (P1, p1, 1), (P2, p2, 2), (P3, p3, 3));
