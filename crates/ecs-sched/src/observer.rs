//! Observers as systems: a system whose parameters include a [`Trigger<E>`] runs whenever `E`
//! happens to an entity, with every other parameter a system can take (queries, resources,
//! `Commands`, `Local`s kept between runs).
//!
//! `E` is a lifecycle change of a component type ([`OnAdd<T>`], [`OnInsert<T>`],
//! [`OnReplace<T>`], [`OnRemove<T>`]) or an event of your own ([`EntityEvent`]) triggered on an
//! entity with [`ObserveExt::trigger_on`] or [`Commands::trigger_on`].
//!
//! Order (see `ecs_core`'s `world/observers.rs`): the observers of one event run in
//! registration order, each after its component's hook for the change; [`OnReplace`] and
//! [`OnRemove`] observers run *before* the change and read the old value, their commands
//! applied once the change completes; [`OnAdd`] and [`OnInsert`] observers run once it has
//! completed. Changes happen in the order of the commands that make them, so observers raised
//! while a sync point applies commands follow the commands' order, whatever the thread count.
//! An observer's commands are otherwise applied when it returns. An observer that triggers its own event (directly or through
//! others) is skipped for that nested event (a registered system does not run inside itself).

use std::any::TypeId;
use std::marker::PhantomData;

use ecs_core::{Component, Components, Entity, Lifecycle, ObserverId, ObserverKey, World};

use crate::commands::Commands;
use crate::system::access::{Conflict, SystemAccess};
use crate::system::one_shot::RunSystemExt;
use crate::system::param::{Res, SystemParam};
use crate::system::IntoSystem;

/// An event that can be triggered on an entity and observed.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{EntityEvent, ObserveExt, ResMut, Trigger};
/// struct Hit(u32);
/// impl EntityEvent for Hit {}
/// let mut world = World::new();
/// world.insert_resource(0u32);
/// world.add_observer(|hit: Trigger<Hit>, mut total: ResMut<u32>| *total += hit.event().0);
/// let e = world.spawn(());
/// world.trigger_on(e, Hit(5));
/// world.trigger_on(e, Hit(2));
/// assert_eq!(*world.resource::<u32>(), 7);
/// ```
pub trait EntityEvent: Send + Sync + 'static {
    /// For the lifecycle events only: the change, the component's type and the event value.
    #[doc(hidden)]
    fn lifecycle() -> Option<(Lifecycle, TypeId, Self)>
    where
        Self: Sized,
    {
        None
    }
}

macro_rules! lifecycle_event {
    ($(#[$doc:meta])* $name:ident, $kind:ident) => {
        $(#[$doc])*
        pub struct $name<T>(PhantomData<fn() -> T>);

        impl<T: Component> EntityEvent for $name<T> {
            fn lifecycle() -> Option<(Lifecycle, TypeId, Self)> {
                Some((Lifecycle::$kind, TypeId::of::<T>(), $name(PhantomData)))
            }
        }
    };
}

lifecycle_event!(
    /// The entity gained a `T` (spawn, or insert of a `T` it lacked).
    OnAdd,
    Add
);
lifecycle_event!(
    /// A `T` was written on the entity by spawn or insert, also over an old one.
    OnInsert,
    Insert
);
lifecycle_event!(
    /// A `T` of the entity is about to be overwritten or removed; observed before the change,
    /// so the old value can be read. The observer's commands run once the change completes.
    OnReplace,
    Replace
);
lifecycle_event!(
    /// The entity is about to lose its `T` (remove, take, despawn, `clear`); observed before the
    /// change, so the value (and on a despawn the whole entity) can be read. The observer's
    /// commands run once the change completes.
    OnRemove,
    Remove
);

/// The event being observed and the entity it happened to; also a resource while the
/// observers of one event run.
pub struct TriggerState<E> {
    entity: Entity,
    event: E,
}

/// The parameter that makes a system an observer of `E`: the event and its entity.
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{Commands, ObserveExt, OnAdd, Trigger};
/// struct Enemy;
/// struct Health(u32);
/// let mut world = World::new();
/// world.add_observer(|added: Trigger<OnAdd<Enemy>>, mut commands: Commands| {
///     commands.insert(added.entity(), (Health(10),));
/// });
/// let e = world.spawn((Enemy,));
/// assert_eq!(world.get::<Health>(e).unwrap().0, 10);
/// ```
pub struct Trigger<'w, E> {
    state: &'w TriggerState<E>,
}

impl<'w, E> Trigger<'w, E> {
    /// The entity the event happened to.
    pub fn entity(&self) -> Entity {
        self.state.entity
    }

    /// The event.
    pub fn event(&self) -> &'w E {
        &self.state.event
    }
}

// SAFETY: declares a read of the `TriggerState<E>` resource and reads nothing else, through
// `Res`'s own implementation.
unsafe impl<E: EntityEvent> SystemParam for Trigger<'_, E> {
    type State = ();
    type Item<'w, 's> = Trigger<'w, E>;

    fn declare(access: &mut SystemAccess, registry: &mut Components) -> Result<(), Conflict> {
        <Res<TriggerState<E>>>::declare(access, registry)
    }

    fn init_state(_: &mut World) {}

    unsafe fn validate(_: &mut (), world: &World) -> bool {
        // Outside an event (a schedule, `run_system`) there is nothing to observe: skipped.
        world.contains_resource::<TriggerState<E>>()
    }

    unsafe fn get<'w>(state: &mut (), world: &'w World, system: &str) -> Trigger<'w, E> {
        // SAFETY: the caller's contract is `Res`'s, for the access `declare` recorded.
        let res = unsafe { <Res<TriggerState<E>>>::get(state, world, system) };
        Trigger {
            state: res.into_inner(),
        }
    }
}

/// A function that can be an observer of `E`: a system whose first parameter is
/// [`Trigger<E>`]. The marker `M` is the function's signature, as for [`IntoSystem`].
pub trait IntoObserver<E, M>: IntoSystem<M> {}

macro_rules! observer_function {
    ($($P:ident),*) => {
        impl<E: EntityEvent, F, $($P: SystemParam),*>
            IntoObserver<E, (fn(Trigger<'static, E>, $($P,)*),)> for F
        where
            F: IntoSystem<(fn(Trigger<'static, E>, $($P,)*),)>,
        {
        }
    };
}

observer_function!();
observer_function!(P1);
observer_function!(P1, P2);
observer_function!(P1, P2, P3);
observer_function!(P1, P2, P3, P4);
observer_function!(P1, P2, P3, P4, P5);
observer_function!(P1, P2, P3, P4, P5, P6);
observer_function!(P1, P2, P3, P4, P5, P6, P7);
observer_function!(P1, P2, P3, P4, P5, P6, P7, P8);
observer_function!(P1, P2, P3, P4, P5, P6, P7, P8, P9);
observer_function!(P1, P2, P3, P4, P5, P6, P7, P8, P9, P10);
observer_function!(P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11);

/// Observers on a [`World`].
pub trait ObserveExt {
    /// Registers `system` as an observer of `E` for every entity; it keeps its state between
    /// runs. Returns its id (for [`ObserveExt::remove_observer_system`]).
    ///
    /// # Panics
    /// If the system's parameters conflict (as `register_system`).
    fn add_observer<E: EntityEvent, M>(&mut self, system: impl IntoObserver<E, M>) -> ObserverId;

    /// [`ObserveExt::add_observer`] for the listed entities only.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::{EntityEvent, ObserveExt, ResMut, Trigger};
    /// struct Ping;
    /// impl EntityEvent for Ping {}
    /// let mut world = World::new();
    /// world.insert_resource(0u32);
    /// let (a, b) = (world.spawn(()), world.spawn(()));
    /// world.add_observer_for([a], |_: Trigger<Ping>, mut n: ResMut<u32>| *n += 1);
    /// world.trigger_on(a, Ping);
    /// world.trigger_on(b, Ping); // not watched
    /// assert_eq!(*world.resource::<u32>(), 1);
    /// ```
    fn add_observer_for<E: EntityEvent, M>(
        &mut self,
        entities: impl IntoIterator<Item = Entity>,
        system: impl IntoObserver<E, M>,
    ) -> ObserverId;

    /// Removes an observer added with [`ObserveExt::add_observer`] (and its system's state);
    /// returns whether it was registered.
    fn remove_observer_system(&mut self, id: ObserverId) -> bool;

    /// Triggers `event` on `entity`: its observers run now, in registration order.
    fn trigger_on<E: EntityEvent>(&mut self, entity: Entity, event: E);
}

fn add<E: EntityEvent, M>(
    world: &mut World,
    entities: Option<Vec<Entity>>,
    system: impl IntoObserver<E, M>,
) -> ObserverId {
    let id = world.register_system(system);
    let key = match E::lifecycle() {
        Some((kind, type_id, _)) => ObserverKey::Lifecycle(kind, type_id),
        None => ObserverKey::Event(TypeId::of::<E>()),
    };
    let observer = world.add_observer_fn(key, entities, move |world, entity| {
        match E::lifecycle() {
            // A lifecycle event has no value to hand over: the observer makes it.
            Some((_, _, event)) => with_trigger(world, entity, event, |world| {
                let _ = world.run_system(id);
            }),
            None => {
                let _ = world.run_system(id);
            }
        }
    });
    if !world.contains_resource::<ObserverSystems>() {
        world.insert_resource(ObserverSystems::default());
    }
    world
        .get_resource_mut::<ObserverSystems>()
        .expect("inserted above")
        .0
        .push((observer, id));
    observer
}

/// The system behind each observer, to unregister it with the observer.
#[derive(Default)]
struct ObserverSystems(Vec<(ObserverId, crate::SystemId)>);

/// Runs `f` with `TriggerState<E>` in the world, and puts back the one an outer event of the
/// same type had.
fn with_trigger<E: EntityEvent>(
    world: &mut World,
    entity: Entity,
    event: E,
    f: impl FnOnce(&mut World),
) {
    let outer = world.remove_resource::<TriggerState<E>>();
    world.insert_resource(TriggerState { entity, event });
    f(world);
    world.remove_resource::<TriggerState<E>>();
    if let Some(outer) = outer {
        world.insert_resource(outer);
    }
}

impl Commands<'_, '_> {
    /// Triggers `event` on `entity` when applied: its observers run then, in registration
    /// order (see [`ObserveExt::trigger_on`]). Applied in the
    /// commands' order, so observers see the same world on any thread count.
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// # use ecs_sched::{Commands, EntityEvent, ObserveExt, Res, ResMut, Schedule, Trigger};
    /// struct Alarm;
    /// impl EntityEvent for Alarm {}
    /// struct Raised(Vec<Entity>);
    /// let mut world = World::new();
    /// world.insert_resource(Raised(Vec::new()));
    /// world.add_observer(|alarm: Trigger<Alarm>, mut raised: ResMut<Raised>| {
    ///     raised.0.push(alarm.entity());
    /// });
    /// let tower = world.spawn(());
    /// world.insert_resource(tower);
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|tower: Res<Entity>, mut commands: Commands| {
    ///     commands.trigger_on(*tower, Alarm);
    /// });
    /// schedule.run(&mut world).unwrap();
    /// assert_eq!(world.resource::<Raised>().0, [tower]);
    /// ```
    pub fn trigger_on<E: EntityEvent>(&mut self, entity: Entity, event: E) {
        self.add(move |world| world.trigger_on(entity, event));
    }
}

impl ObserveExt for World {
    fn add_observer<E: EntityEvent, M>(&mut self, system: impl IntoObserver<E, M>) -> ObserverId {
        add::<E, M>(self, None, system)
    }

    fn add_observer_for<E: EntityEvent, M>(
        &mut self,
        entities: impl IntoIterator<Item = Entity>,
        system: impl IntoObserver<E, M>,
    ) -> ObserverId {
        add::<E, M>(self, Some(entities.into_iter().collect()), system)
    }

    fn remove_observer_system(&mut self, id: ObserverId) -> bool {
        if !self.remove_observer(id) {
            return false;
        }
        if let Some(systems) = self.get_resource_mut::<ObserverSystems>() {
            if let Some(at) = systems.0.iter().position(|&(o, _)| o == id) {
                let (_, system) = systems.0.swap_remove(at);
                let _ = self.unregister_system(system);
            }
        }
        true
    }

    fn trigger_on<E: EntityEvent>(&mut self, entity: Entity, event: E) {
        with_trigger(self, entity, event, |world| {
            world.run_observers(ObserverKey::Event(TypeId::of::<E>()), entity);
        });
    }
}
