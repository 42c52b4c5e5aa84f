//! Events: values one system sends and others read, without ordering the senders.
//!
//! An [`EventWriter<T>`] writes into a buffer of its own system while it runs, touching nothing
//! shared, so writers of one event type never conflict with each other or with readers. The
//! buffers are moved into the [`Events<T>`] resource when the schedule applies commands (at a
//! sync point, or the end of the run), system by system in plan order: the sequence readers see
//! is fixed by the plan, the same on one thread or many.
//!
//! An [`EventReader<T>`] reads `Events<T>` (a resource read, ordered against `ResMut<Events<T>>`
//! writers only) and keeps its own cursor, so each reader sees each event once.
//!
//! Lifetime: at the end of each run, before that run's events are applied, every schedule that
//! uses `T` (through a writer or reader) drops the events applied before the *previous* end of
//! run. So an event applied at the end of run `N` can be read during runs `N + 1` and `N + 2`,
//! then is gone; an event applied at a sync point of run `N` can be read from there until the end
//! of run `N + 1`. A reader that skips two runs in a row (a run condition) misses events.
//!
//! Cost: sending is a `Vec::push`; applying moves each system's buffer once; reading walks a
//! slice. Nothing is locked.
//!
//! Beside this file: `saved.rs` puts an `Events<T>` queue in world snapshots (its hash and
//! serde form), and `par_send.rs` adds
//! [`Query::par_for_each_send`](crate::Query::par_for_each_send), a parallel query loop that
//! sends events.

use std::any::{type_name, TypeId};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock};

use ecs_core::{Components, World};

use crate::error::CommandError;
use crate::saved_state::{StateError, StateReader, StateWriter};
use crate::system::access::{Conflict, SystemAccess};
use crate::system::param::SystemParam;

mod par_send;
mod saved;

/// The buffered events of type `T`: a resource, inserted by the first `EventWriter<T>` or
/// `EventReader<T>` initialised for the world.
///
/// ```text
/// id:   older_start            newer_start              next
///       | older (last window)  | newer (this window)    |
/// ```
///
/// # Invariants
/// 1. `newer_start == older_start + older.len()`.
/// 2. The event at `older[k]` has id `older_start + k`; at `newer[k]`, `newer_start + k`.
///
/// ```
/// # use ecs_sched::Events;
/// let mut events = Events::<u32>::default();
/// events.send(1);
/// events.update();
/// events.send(2);
/// assert_eq!(events.iter().copied().collect::<Vec<_>>(), [1, 2]);
/// events.update(); // drops 1
/// assert_eq!(events.iter().copied().collect::<Vec<_>>(), [2]);
/// ```
pub struct Events<T> {
    older: Vec<T>,
    older_start: u64,
    newer: Vec<T>,
    newer_start: u64,
}

/// Events of a `Clone` type clone, so `world.register_snapshot_resource::<Events<T>>()` puts
/// the queue into world snapshots (with the ids its readers' cursors count); see the `saved`
/// module for `Hash` (the state hash) and, with the `serde` feature, snapshot bytes.
impl<T: Clone> Clone for Events<T> {
    fn clone(&self) -> Self {
        Self {
            older: self.older.clone(),
            older_start: self.older_start,
            newer: self.newer.clone(),
            newer_start: self.newer_start,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Events<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("first_id", &self.older_start)
            .field("older", &self.older)
            .field("newer", &self.newer)
            .finish()
    }
}

impl<T> Default for Events<T> {
    fn default() -> Self {
        Self {
            older: Vec::new(),
            older_start: 0,
            newer: Vec::new(),
            newer_start: 0,
        }
    }
}

impl<T: Send + Sync + 'static> Events<T> {
    /// Appends an event (outside systems; inside them, use [`EventWriter`]).
    ///
    /// ```
    /// # use ecs_sched::Events;
    /// let mut events = Events::default();
    /// events.send("hello");
    /// assert_eq!(events.len(), 1);
    /// ```
    pub fn send(&mut self, event: T) {
        self.newer.push(event);
    }

    /// Drops the older window's events; this window's become the older.
    ///
    /// ```
    /// # use ecs_sched::Events;
    /// let mut events = Events::default();
    /// events.send(1u8);
    /// events.update();
    /// events.update();
    /// assert!(events.is_empty());
    /// ```
    pub fn update(&mut self) {
        let newer = std::mem::take(&mut self.newer);
        let older = std::mem::replace(&mut self.older, newer);
        self.older_start = self.newer_start;
        self.newer_start = self.older_start + self.older.len() as u64;
        drop(older);
    }

    /// Removes and returns every buffered event, oldest first (for code outside systems that
    /// consumes events itself; readers' cursors stay valid, since ids are never reused).
    ///
    /// ```
    /// # use ecs_sched::Events;
    /// let mut events = Events::default();
    /// events.send(1);
    /// events.update();
    /// events.send(2);
    /// assert_eq!(events.drain().collect::<Vec<_>>(), [1, 2]);
    /// assert!(events.is_empty());
    /// ```
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        let next = self.next_id();
        self.older_start = next;
        self.newer_start = next;
        let older = std::mem::take(&mut self.older);
        older.into_iter().chain(self.newer.drain(..))
    }

    /// Events buffered now, oldest first.
    ///
    /// ```
    /// # use ecs_sched::Events;
    /// let mut events = Events::default();
    /// events.send('a');
    /// assert_eq!(events.iter().next(), Some(&'a'));
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.older.iter().chain(&self.newer)
    }

    /// Number of buffered events.
    ///
    /// ```
    /// # use ecs_sched::Events;
    /// assert_eq!(Events::<u8>::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.older.len() + self.newer.len()
    }

    /// Whether no event is buffered.
    ///
    /// ```
    /// # use ecs_sched::Events;
    /// assert!(Events::<u8>::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id the next event will get.
    fn next_id(&self) -> u64 {
        self.newer_start + self.newer.len() as u64
    }

    /// Events with id `>= cursor`, oldest first.
    fn since(&self, cursor: u64) -> (&[T], &[T]) {
        let skip_old = cursor
            .saturating_sub(self.older_start)
            .min(self.older.len() as u64);
        let skip_new = cursor
            .saturating_sub(self.newer_start)
            .min(self.newer.len() as u64);
        (
            &self.older[usize::try_from(skip_old).unwrap_or(usize::MAX)..],
            &self.newer[usize::try_from(skip_new).unwrap_or(usize::MAX)..],
        )
    }

    /// The schedule's end-of-run maintenance for `T`.
    pub(crate) fn update_in(world: &mut World) {
        if let Some(events) = world.get_resource_mut::<Self>() {
            events.update();
        }
    }
}

/// `Events<T>` with `T`'s full path but not this crate's (`Events<game::Kill>`), for
/// `explain()`. Interned: one leaked string per event type, for the life of the process.
fn events_name<T: 'static>() -> &'static str {
    static NAMES: OnceLock<Mutex<HashMap<TypeId, &'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    names
        .entry(TypeId::of::<T>())
        .or_insert_with(|| Box::leak(format!("Events<{}>", type_name::<T>()).into_boxed_str()))
}

fn ensure_events<T: Send + Sync + 'static>(world: &mut World) {
    if !world.contains_resource::<Events<T>>() {
        world.insert_resource(Events::<T>::default());
    }
}

/// Sends events of type `T`. Writers never conflict with each other: each writes a buffer of
/// its own system, applied in plan order with the commands (module doc).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{EventReader, EventWriter, ResMut, Schedule};
/// struct Kill(u32);
/// fn hunter(mut kills: EventWriter<Kill>) { kills.send(Kill(7)); }
/// fn tally(mut kills: EventReader<Kill>, mut total: ResMut<u32>) {
///     *total += kills.read().map(|k| k.0).sum::<u32>();
/// }
/// let mut world = World::new();
/// world.insert_resource(0u32);
/// let mut schedule = Schedule::new();
/// schedule.add_system(hunter);
/// schedule.add_system(tally);
/// schedule.run(&mut world).unwrap(); // applied at the end of the run
/// schedule.run(&mut world).unwrap(); // read here
/// assert_eq!(*world.resource::<u32>(), 7);
/// ```
pub struct EventWriter<'s, T: Send + Sync + 'static> {
    buffer: &'s mut Vec<T>,
}

impl<T: Send + Sync + 'static> EventWriter<'_, T> {
    /// Sends one event.
    pub fn send(&mut self, event: T) {
        self.buffer.push(event);
    }

    /// Sends several events, in order.
    pub fn send_batch(&mut self, events: impl IntoIterator<Item = T>) {
        self.buffer.extend(events);
    }
}

/// One parallel task's events, from [`Query::par_for_each_send`](crate::Query::par_for_each_send):
/// each task sends into a buffer of its own, and the buffers reach the system's
/// [`EventWriter`] in row order after the loop, so readers see the same events in the same
/// order on any number of threads.
pub struct ParEvents<'a, T> {
    buffer: &'a mut Vec<T>,
}

impl<T> ParEvents<'_, T> {
    pub(crate) fn new(buffer: &mut Vec<T>) -> ParEvents<'_, T> {
        ParEvents { buffer }
    }

    /// Sends one event.
    pub fn send(&mut self, event: T) {
        self.buffer.push(event);
    }

    /// Sends several events, in order.
    pub fn send_batch(&mut self, events: impl IntoIterator<Item = T>) {
        self.buffer.extend(events);
    }
}

// SAFETY: touches only its own state while the system runs; `apply` takes `&mut World`.
unsafe impl<T: Send + Sync + 'static> SystemParam for EventWriter<'_, T> {
    type State = Vec<T>;
    type Item<'w, 's> = EventWriter<'s, T>;

    fn declare(access: &mut SystemAccess, _: &mut Components) -> Result<(), Conflict> {
        access.add_event_write(
            TypeId::of::<Events<T>>(),
            type_name::<T>(),
            Events::<T>::update_in,
        );
        Ok(())
    }

    fn init_state(world: &mut World) -> Vec<T> {
        ensure_events::<T>(world);
        Vec::new()
    }

    fn save_state(_: &Vec<T>, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.require_snapshot_resource::<Events<T>>()
    }

    unsafe fn get<'w, 's>(state: &'s mut Vec<T>, _: &'w World, _: &str) -> Self::Item<'w, 's> {
        EventWriter { buffer: state }
    }

    fn apply(
        state: &mut Vec<T>,
        world: &mut World,
        _: &str,
        _: &mut Vec<CommandError>,
        discard: bool,
    ) {
        if discard {
            state.clear();
        } else if !state.is_empty() {
            ensure_events::<T>(world);
            world.resource_mut::<Events<T>>().newer.append(state);
        }
    }
}

/// Reads events of type `T`; each reader sees each event once (its cursor is its own state).
///
/// ```
/// # use ecs_core::World;
/// # use ecs_sched::{EventReader, Events, ResMut, Schedule};
/// fn count(mut r: EventReader<u8>, mut n: ResMut<usize>) { *n += r.read().count(); }
/// let mut world = World::new();
/// world.insert_resource(0usize);
/// let mut events = Events::<u8>::default();
/// events.send(1);
/// events.send(2);
/// world.insert_resource(events);
/// let mut schedule = Schedule::new();
/// schedule.add_system(count);
/// schedule.run(&mut world).unwrap();
/// schedule.run(&mut world).unwrap(); // nothing new
/// assert_eq!(*world.resource::<usize>(), 2);
/// ```
pub struct EventReader<'w, 's, T: Send + Sync + 'static> {
    events: Option<&'w Events<T>>,
    cursor: &'s mut u64,
}

impl<'w, T: Send + Sync + 'static> EventReader<'w, '_, T> {
    /// The events this reader has not seen yet, oldest first; marks them seen.
    pub fn read(&mut self) -> impl Iterator<Item = &'w T> + '_ {
        let (older, newer): (&'w [T], &'w [T]) = match self.events {
            Some(events) => {
                let slices = events.since(*self.cursor);
                *self.cursor = events.next_id();
                slices
            }
            None => (&[], &[]),
        };
        older.iter().chain(newer)
    }

    /// How many unseen events there are (without marking them seen).
    pub fn len(&self) -> usize {
        self.events.map_or(0, |e| {
            let (a, b) = e.since(*self.cursor);
            a.len() + b.len()
        })
    }

    /// Whether there is no unseen event.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Marks every event seen without reading it.
    pub fn clear(&mut self) {
        if let Some(events) = self.events {
            *self.cursor = events.next_id();
        }
    }
}

/// The cursor of one [`EventReader`]: the id of the first event it has not seen.
pub struct ReaderCursor<T> {
    next: u64,
    _marker: PhantomData<fn() -> T>,
}

// SAFETY: declares a read of `Events<T>` and only reads it; the cursor is its own state.
unsafe impl<T: Send + Sync + 'static> SystemParam for EventReader<'_, '_, T> {
    type State = ReaderCursor<T>;
    type Item<'w, 's> = EventReader<'w, 's, T>;

    fn declare(access: &mut SystemAccess, _: &mut Components) -> Result<(), Conflict> {
        access.add_resource_read(TypeId::of::<Events<T>>(), events_name::<T>())?;
        access.add_event_queue(TypeId::of::<Events<T>>(), Events::<T>::update_in);
        Ok(())
    }

    fn init_state(world: &mut World) -> ReaderCursor<T> {
        ensure_events::<T>(world);
        ReaderCursor {
            next: 0,
            _marker: PhantomData,
        }
    }

    fn save_state(state: &ReaderCursor<T>, out: &mut StateWriter<'_>) -> Result<(), StateError> {
        out.require_snapshot_resource::<Events<T>>()?;
        out.save_value(&state.next)
    }

    fn load_state(state: &mut ReaderCursor<T>, input: &mut StateReader<'_>) {
        state.next = input.load_value();
    }

    unsafe fn get<'w, 's>(
        state: &'s mut ReaderCursor<T>,
        world: &'w World,
        _: &str,
    ) -> Self::Item<'w, 's> {
        let events = world.resources().get_ptr::<Events<T>>().map(|ptr| {
            // SAFETY: declared read of `Events<T>`: no system running meanwhile writes it
            // (caller contract); writers' buffers reach it only with `&mut World`.
            unsafe { ptr.as_ref() }
        });
        EventReader {
            events,
            cursor: &mut state.next,
        }
    }
}
