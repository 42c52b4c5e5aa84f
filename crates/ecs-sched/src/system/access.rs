//! What a system touches: components (per query, with filters), resources, the whole world.
//!
//! A [`SystemAccess`] is built from a system's parameter types when the system is added, with
//! component ids from the schedule's own type registry, so it is known before any run. Two
//! systems may run at the same time iff [`SystemAccess::conflict`] finds nothing.
//!
//! Component ids mean something only within the registry that gave them, so an access set
//! remembers that registry ([`SystemAccess::registry`]) and the schedule refuses a system whose
//! set was built against another: two writers of one type could otherwise carry different ids
//! and be planned side by side.

use std::any::TypeId;
use std::fmt;

use ecs_core::{Components, RegistryId, World};
use ecs_query::{FilteredAccess, EVERY_COMPONENT};

/// An event queue's type and the schedule's end-of-run update for it.
pub(crate) type EventUpdate = (TypeId, fn(&mut World));

/// Why two systems (or two parameters of one system) cannot run together.
///
/// ```
/// # use ecs_sched::{Conflict, SystemAccess};
/// let (mut a, mut b) = (SystemAccess::default(), SystemAccess::default());
/// a.add_resource_write(std::any::TypeId::of::<u32>(), "u32").unwrap();
/// b.add_resource_read(std::any::TypeId::of::<u32>(), "u32").unwrap();
/// assert_eq!(a.conflict(&b), Some(Conflict::Resource("u32")));
/// assert_eq!(Conflict::Exclusive.to_string(), "&mut World");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// Both touch this component and at least one writes it.
    Component(&'static str),
    /// Both touch this resource and at least one writes it.
    Resource(&'static str),
    /// Both read the whole world (`&World`), so both may reserve entity ids through the
    /// world's one cursor, which must happen in a fixed order. (`Commands` reserve in lanes of
    /// their own and add no ordering.)
    Commands,
    /// One reads the whole world (`&World`) while the other writes something.
    World,
    /// One is exclusive (`&mut World`).
    Exclusive,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Component(name) | Self::Resource(name) => f.write_str(name),
            Self::Commands => f.write_str("&World (entity reservation order)"),
            Self::World => f.write_str("&World"),
            Self::Exclusive => f.write_str("&mut World"),
        }
    }
}

/// Everything one system reads and writes.
///
/// # Invariants
/// 1. No two entries of `queries` conflict (checked by `add_query`), except entries joined by
///    `SystemAccess::merge` (a run condition's, or the members of a `ParamSet`), whose
///    items are never alive at the same time.
/// 2. A resource is in at most one of `res_reads` / `res_writes`.
/// 3. Every component id in `queries` comes from the registry `registry` names (set by the
///    first `add_query`, which refuses later queries from another registry).
///
/// ```
/// # use ecs_sched::SystemAccess;
/// let (mut reader, mut writer) = (SystemAccess::default(), SystemAccess::default());
/// reader.add_resource_read(std::any::TypeId::of::<f32>(), "f32").unwrap();
/// writer.add_resource_write(std::any::TypeId::of::<u64>(), "u64").unwrap();
/// assert_eq!(reader.conflict(&writer), None); // different resources: may run together
/// ```
#[derive(Clone, Debug, Default)]
pub struct SystemAccess {
    registry: Option<RegistryId>,
    queries: Vec<FilteredAccess>,
    res_reads: Vec<(TypeId, &'static str)>,
    res_writes: Vec<(TypeId, &'static str)>,
    commands: bool,
    reads_world: bool,
    exclusive: bool,
    names: Vec<&'static str>,
    /// Event types written through per-system buffers (deferred: no conflict).
    event_writes: Vec<(TypeId, &'static str)>,
    /// Event queues the schedule maintains at the end of each run (`Events::update`).
    event_queues: Vec<EventUpdate>,
    /// After `add_query` refused a query: the filter that would have made it disjoint from
    /// the earlier one, for the error message.
    fix: Option<String>,
}

/// A `Without<X>` that would make `a` and `b` disjoint: `X` is required by one and not by the
/// other (nor enableable: `Without` of an enableable type proves nothing).
fn disjoining_filter(
    a: &FilteredAccess,
    b: &FilteredAccess,
    registry: &Components,
) -> Option<String> {
    let pick = |have: &FilteredAccess, lack: &FilteredAccess| {
        have.required
            .iter()
            .find(|&id| !lack.required.contains(id) && !registry.info(id).is_enableable())
    };
    let short = |id| ecs_core::short_name(registry.info(id).name());
    if let Some(id) = pick(a, b) {
        return Some(format!("add `Without<{}>` to the second query", short(id)));
    }
    pick(b, a).map(|id| format!("add `Without<{}>` to the first query", short(id)))
}

impl SystemAccess {
    /// Adds one query's access.
    ///
    /// `query`'s ids must come from `registry`; the set remembers that registry.
    ///
    /// # Errors
    /// The conflicting component, if the query conflicts with an earlier query of the system.
    ///
    /// # Panics
    /// If an earlier query was added with another registry: their ids could not be compared.
    ///
    /// ```
    /// # use ecs_core::{Components, RegistryId, World};
    /// # use ecs_query::{Access, FilteredAccess};
    /// # use ecs_sched::{Conflict, SystemAccess};
    /// let mut registry = Components::default();
    /// let id = registry.register::<u32>();
    /// let mut write = FilteredAccess::default();
    /// write.access.add_write(id, &registry).unwrap();
    /// let mut sys = SystemAccess::default();
    /// sys.add_query(write.clone(), &registry).unwrap();
    /// assert_eq!(sys.add_query(write, &registry), Err(Conflict::Component("u32")));
    /// ```
    pub fn add_query(
        &mut self,
        query: FilteredAccess,
        registry: &Components,
    ) -> Result<(), Conflict> {
        let own = *self.registry.get_or_insert(registry.registry_id());
        assert!(
            own == registry.registry_id(),
            "a query access built against another component registry was added to a system's \
             access set"
        );
        for earlier in &self.queries {
            if !earlier.is_compatible(&query) {
                let name = earlier
                    .access
                    .conflicts(&query.access)
                    .iter()
                    .next()
                    .map_or(EVERY_COMPONENT, |id| registry.info(id).name());
                self.fix = disjoining_filter(earlier, &query, registry);
                return Err(Conflict::Component(name));
            }
        }
        if self.reads_world && !query.access.is_read_only() {
            return Err(Conflict::World);
        }
        self.queries.push(query);
        self.names = registry.iter().map(|info| info.name()).collect();
        Ok(())
    }

    /// Adds a shared resource read.
    ///
    /// # Errors
    /// If the system also writes the resource.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::SystemAccess;
    /// let mut sys = SystemAccess::default();
    /// sys.add_resource_read(TypeId::of::<u32>(), "u32").unwrap();
    /// assert_eq!(sys.read_names(), ["u32"]);
    /// ```
    pub fn add_resource_read(&mut self, id: TypeId, name: &'static str) -> Result<(), Conflict> {
        if self.res_writes.iter().any(|r| r.0 == id) {
            return Err(Conflict::Resource(name));
        }
        if !self.res_reads.iter().any(|r| r.0 == id) {
            self.res_reads.push((id, name));
        }
        Ok(())
    }

    /// Adds an exclusive resource write.
    ///
    /// # Errors
    /// If the system already reads or writes the resource, or reads the whole world.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::SystemAccess;
    /// let mut sys = SystemAccess::default();
    /// sys.add_resource_read(TypeId::of::<u32>(), "u32").unwrap();
    /// assert!(sys.add_resource_write(TypeId::of::<u32>(), "u32").is_err());
    /// assert!(sys.add_resource_write(TypeId::of::<u8>(), "u8").is_ok());
    /// ```
    pub fn add_resource_write(&mut self, id: TypeId, name: &'static str) -> Result<(), Conflict> {
        if self
            .res_writes
            .iter()
            .chain(&self.res_reads)
            .any(|r| r.0 == id)
        {
            return Err(Conflict::Resource(name));
        }
        if self.reads_world {
            return Err(Conflict::World);
        }
        self.res_writes.push((id, name));
        Ok(())
    }

    /// After [`SystemAccess::add_query`] refused a query: a filter that would have made the two
    /// queries disjoint, if one exists (``add `Without<Enemy>` to the second query``).
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::{RefRW, With};
    /// # use ecs_sched::{Query, SystemAccess, SystemParam};
    /// struct Hp(u32);
    /// struct Enemy;
    /// let mut access = SystemAccess::default();
    /// let mut registry = Components::default();
    /// <Query<RefRW<Hp>, With<Enemy>>>::declare(&mut access, &mut registry).unwrap();
    /// assert!(<Query<RefRW<Hp>>>::declare(&mut access, &mut registry).is_err());
    /// assert_eq!(access.take_fix().as_deref(), Some("add `Without<Enemy>` to the second query"));
    /// ```
    pub fn take_fix(&mut self) -> Option<String> {
        self.fix.take()
    }

    /// The registry whose ids the set's queries use (`None` while it has no query).
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_query::FilteredAccess;
    /// # use ecs_sched::SystemAccess;
    /// let registry = Components::default();
    /// let mut sys = SystemAccess::default();
    /// assert_eq!(sys.registry(), None);
    /// sys.add_query(FilteredAccess::default(), &registry).unwrap();
    /// assert_eq!(sys.registry(), Some(registry.registry_id()));
    /// ```
    pub fn registry(&self) -> Option<RegistryId> {
        self.registry
    }

    /// Joins `other` into `self` for planning, without refusing conflicts between the two:
    /// the union is what the schedule must keep other systems away from when `self`'s system
    /// and `other`'s owner (a run condition) run one after the other on one worker. A resource
    /// both read and written stays only a write (invariant 2).
    ///
    /// # Panics
    /// If both sets have queries from different registries.
    pub(crate) fn merge(&mut self, other: &SystemAccess) {
        if let Some(theirs) = other.registry {
            let own = *self.registry.get_or_insert(theirs);
            assert!(
                own == theirs,
                "merged access sets from two component registries"
            );
        }
        self.queries.extend(other.queries.iter().cloned());
        for &(id, name) in &other.res_writes {
            self.res_reads.retain(|r| r.0 != id);
            if !self.res_writes.iter().any(|r| r.0 == id) {
                self.res_writes.push((id, name));
            }
        }
        for &(id, name) in &other.res_reads {
            if !self
                .res_writes
                .iter()
                .chain(&self.res_reads)
                .any(|r| r.0 == id)
            {
                self.res_reads.push((id, name));
            }
        }
        for &(id, name) in &other.event_writes {
            if !self.event_writes.iter().any(|e| e.0 == id) {
                self.event_writes.push((id, name));
            }
        }
        for &(id, update) in &other.event_queues {
            self.add_event_queue(id, update);
        }
        self.commands |= other.commands;
        self.reads_world |= other.reads_world;
        self.exclusive |= other.exclusive;
        if other.names.len() > self.names.len() {
            self.names.clone_from(&other.names);
        }
    }

    /// Records a deferred event write (an `EventWriter`): no conflict with anything, but
    /// listed by `write_names` and makes a run condition not read-only.
    pub(crate) fn add_event_write(
        &mut self,
        id: TypeId,
        name: &'static str,
        update: fn(&mut World),
    ) {
        if !self.event_writes.iter().any(|e| e.0 == id) {
            self.event_writes.push((id, name));
        }
        self.add_event_queue(id, update);
    }

    /// Records that the system uses an event queue the schedule must maintain.
    pub(crate) fn add_event_queue(&mut self, id: TypeId, update: fn(&mut World)) {
        if !self.event_queues.iter().any(|e| e.0 == id) {
            self.event_queues.push((id, update));
        }
    }

    /// Names of the event types the system sends (`EventWriter<T>`), for `explain`. Sending is
    /// deferred, so it conflicts with nothing.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// # use ecs_sched::{EventWriter, SystemAccess, SystemParam};
    /// let mut access = SystemAccess::default();
    /// <EventWriter<u8>>::declare(&mut access, &mut Components::default()).unwrap();
    /// assert_eq!(access.event_write_names(), ["u8"]);
    /// assert!(access.write_names().is_empty());
    /// ```
    pub fn event_write_names(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = self.event_writes.iter().map(|e| e.1).collect();
        out.sort_unstable();
        out
    }

    /// The event queues the system uses, with their end-of-run update.
    pub(crate) fn event_queues(&self) -> &[EventUpdate] {
        &self.event_queues
    }

    /// Marks the system as recording commands.
    ///
    /// ```
    /// # use ecs_sched::SystemAccess;
    /// let (mut a, mut b) = (SystemAccess::default(), SystemAccess::default());
    /// a.add_commands();
    /// b.add_commands();
    /// assert_eq!(a.conflict(&b), None); // each spawns in an id lane of its own
    /// ```
    pub fn add_commands(&mut self) {
        self.commands = true;
    }

    /// Marks the system as reading the whole world.
    ///
    /// # Errors
    /// If it also writes a component or resource.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::{Conflict, SystemAccess};
    /// let (mut reader, mut writer) = (SystemAccess::default(), SystemAccess::default());
    /// reader.add_world_read().unwrap();
    /// writer.add_resource_write(TypeId::of::<u32>(), "u32").unwrap();
    /// assert_eq!(reader.conflict(&writer), Some(Conflict::World));
    /// ```
    pub fn add_world_read(&mut self) -> Result<(), Conflict> {
        if self.writes_anything() {
            return Err(Conflict::World);
        }
        self.reads_world = true;
        Ok(())
    }

    /// Marks the system as exclusive (`&mut World`).
    ///
    /// ```
    /// # use ecs_sched::{Conflict, SystemAccess};
    /// let mut sys = SystemAccess::default();
    /// sys.set_exclusive();
    /// assert_eq!(sys.conflict(&SystemAccess::default()), Some(Conflict::Exclusive));
    /// ```
    pub fn set_exclusive(&mut self) {
        self.exclusive = true;
    }

    /// Whether the system takes `&mut World`.
    ///
    /// ```
    /// # use ecs_sched::SystemAccess;
    /// let mut sys = SystemAccess::default();
    /// assert!(!sys.is_exclusive());
    /// sys.set_exclusive();
    /// assert!(sys.is_exclusive());
    /// ```
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Whether the system records commands (it takes an id lane before a parallel segment).
    pub(crate) fn records_commands(&self) -> bool {
        self.commands
    }

    /// Whether the system reads the whole world (its segment opens a lane for the cursor).
    pub(crate) fn reads_whole_world(&self) -> bool {
        self.reads_world
    }

    fn writes_anything(&self) -> bool {
        !self.res_writes.is_empty() || self.queries.iter().any(|q| !q.access.is_read_only())
    }

    /// Why `self` and `other` cannot run at the same time, or `None` if they can.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::SystemAccess;
    /// let (mut a, mut b) = (SystemAccess::default(), SystemAccess::default());
    /// a.add_resource_read(TypeId::of::<u32>(), "u32").unwrap();
    /// b.add_resource_read(TypeId::of::<u32>(), "u32").unwrap();
    /// assert_eq!(a.conflict(&b), None); // two readers
    /// ```
    pub fn conflict(&self, other: &Self) -> Option<Conflict> {
        if self.exclusive || other.exclusive {
            return Some(Conflict::Exclusive);
        }
        if (self.reads_world && other.writes_anything())
            || (other.reads_world && self.writes_anything())
        {
            return Some(Conflict::World);
        }
        // Two `&World` systems may both reserve ids through the world's one cursor: ordered so
        // that ids do not depend on thread timing. (`Commands` reserve in id lanes instead.)
        if self.reads_world && other.reads_world {
            return Some(Conflict::Commands);
        }
        self.data_conflict(other)
    }

    /// Why two parameter groups of one system (a `ParamSet` member and the other parameters)
    /// cannot both be held: like [`SystemAccess::conflict`], without the entity-reservation
    /// rule (one system reserves in its own order).
    pub(crate) fn conflict_within_system(&self, other: &Self) -> Option<Conflict> {
        if (self.reads_world && other.writes_anything())
            || (other.reads_world && self.writes_anything())
        {
            return Some(Conflict::World);
        }
        self.data_conflict(other)
    }

    /// The first component or resource both touch with at least one writing.
    fn data_conflict(&self, other: &Self) -> Option<Conflict> {
        for a in &self.queries {
            for b in &other.queries {
                if !a.is_compatible(b) {
                    let name = a
                        .access
                        .conflicts(&b.access)
                        .iter()
                        .next()
                        .map_or(EVERY_COMPONENT, |id| self.component_name(id.index()));
                    return Some(Conflict::Component(name));
                }
            }
        }
        let clash = |w: &[(TypeId, &'static str)], r: &[(TypeId, &'static str)]| {
            w.iter()
                .find(|x| r.iter().any(|y| y.0 == x.0))
                .map(|x| Conflict::Resource(x.1))
        };
        clash(&self.res_writes, &other.res_writes)
            .or_else(|| clash(&self.res_writes, &other.res_reads))
            .or_else(|| clash(&other.res_writes, &self.res_reads))
    }

    fn component_name(&self, index: usize) -> &'static str {
        self.names.get(index).copied().unwrap_or("<component>")
    }

    /// Names of the components and resources read (not written), for `explain`.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::SystemAccess;
    /// let mut sys = SystemAccess::default();
    /// sys.add_resource_read(TypeId::of::<u32>(), "u32").unwrap();
    /// assert_eq!(sys.read_names(), ["u32"]);
    /// assert!(sys.write_names().is_empty());
    /// ```
    pub fn read_names(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for q in &self.queries {
            out.extend(
                q.access
                    .reads()
                    .iter()
                    .map(|id| self.component_name(id.index())),
            );
        }
        out.extend(self.res_reads.iter().map(|r| r.1));
        if self.reads_world {
            out.push("&World");
        }
        if self.queries.iter().any(|q| q.access.reads_all()) {
            out.push("every component (EntityRef)");
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Names of the components the queries' filters require without reading them (`With<T>`)
    /// and exclude (`Without<T>`), for `explain`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_query::{RefRO, With, Without};
    /// # use ecs_sched::{IntoSystem, Query};
    /// struct Player;
    /// struct Dead;
    /// fn live(_: Query<RefRO<u32>, (With<Player>, Without<Dead>)>) {}
    /// let system = live.into_system(&mut ecs_core::Components::default()).unwrap();
    /// let (with, without) = system.access().filter_names();
    /// assert!(with[0].ends_with("Player") && without[0].ends_with("Dead"));
    /// ```
    pub fn filter_names(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for q in &self.queries {
            let touched = |id: &ecs_core::ComponentId| {
                q.access.reads().contains(*id) || q.access.writes().contains(*id)
            };
            with.extend(
                q.required
                    .iter()
                    .filter(|id| !touched(id))
                    .map(|id| self.component_name(id.index())),
            );
            without.extend(q.excluded.iter().map(|id| self.component_name(id.index())));
        }
        for v in [&mut with, &mut without] {
            v.sort_unstable();
            v.dedup();
        }
        (with, without)
    }

    /// Names of the components and resources written, for `explain`.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_sched::SystemAccess;
    /// let mut sys = SystemAccess::default();
    /// sys.add_resource_write(TypeId::of::<u32>(), "u32").unwrap();
    /// assert_eq!(sys.write_names(), ["u32"]);
    /// ```
    pub fn write_names(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for q in &self.queries {
            out.extend(
                q.access
                    .writes()
                    .iter()
                    .map(|id| self.component_name(id.index())),
            );
        }
        out.extend(self.res_writes.iter().map(|r| r.1));
        if self.queries.iter().any(|q| q.access.writes_all()) {
            out.push("every component (EntityMut)");
        }
        if self.exclusive {
            out.push("&mut World");
        }
        if self.commands {
            out.push("Commands");
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}
