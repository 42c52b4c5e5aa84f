//! [`Components`]: one world's registry of component types, and the [`RegistryId`] that tells
//! registries apart.

use std::any::TypeId;
use std::sync::atomic::{AtomicU64, Ordering};

use super::id::{Component, ComponentId};
use super::info::ComponentInfo;
use super::type_map::TypeIdMap;
use crate::ids::RowTicks;

/// Identifies one [`Components`] registry for the life of the process: no two registries
/// ever share one, so ids built against one registry can be told from another's.
///
/// ```
/// # use ecs_core::Components;
/// let (a, b) = (Components::default(), Components::default());
/// assert_ne!(a.registry_id(), b.registry_id());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RegistryId(u64);

impl RegistryId {
    fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// How many hook-free bundle types a registry remembers (see `Components::may_hook`): a few,
/// for code that alternates between bundles (insert one, remove another).
const UNHOOKED_BUNDLES: usize = 4;

/// The component registry of one world (or of one schedule, for access sets).
///
/// # Invariants
/// 1. `infos[i].id().index() == i`, and `by_type` maps each registered `TypeId` to its id.
/// 2. Registration only appends: an id, once handed out, names the same type for the life of
///    the registry.
/// 3. `id` is unique in the process, and a registry is never cloned (a [fork](Components::fork)
///    is a new registry with an id of its own): whoever holds an id built against this
///    registry can check that with [`Components::registry_id`].
///
/// A registry that data is stored against (a `World`'s) must never be *replaced* (by
/// `std::mem::swap`, `replace` or `take`): the stored columns would then be read through another
/// registry's ids. So `World` hands out `&mut Components` only through an `unsafe fn`, and the
/// traits that receive it (`Bundle`, `WorldQuery`, `SystemParam`) are `unsafe` to implement
/// with that promise in their contract.
///
/// ```
/// # use ecs_core::Components;
/// let mut components = Components::default();
/// let id = components.register::<u32>();
/// assert_eq!(components.info(id).name(), "u32");
/// ```
pub struct Components {
    id: RegistryId,
    infos: Vec<ComponentInfo>,
    by_type: TypeIdMap<ComponentId>,
    /// Per id, the row ticks its type keeps (switched on by `World::keep_row_ticks`).
    row_ticks: Vec<RowTicks>,
    /// Bumped whenever a type becomes enableable or a chunk component, so that a schedule
    /// can tell in O(1) whether a world's kinds moved since it last adopted them.
    kinds_version: u64,
    /// A planning registry (see [`Components::for_planning`]): kinds are learnt from worlds
    /// later, so element constructors leave kind checks to the world's registry.
    planning: bool,
    /// Whether any registered type has hooks: the one test a structural change without hooks
    /// pays (see `world/hooks.rs`).
    any_hooked: bool,
    /// Types given hooks before this registry saw them: each is marked hooked when registered.
    hooked_later: Vec<TypeId>,
    /// Bundle types (their `TypeId`s) last found to hold no hooked type, newest first: a
    /// structural change of one skips the hook path after a compare, where it would look up
    /// each of its types. Every type of a listed bundle is registered, so only `set_hooked` on
    /// a registered type can make an entry wrong; it empties the list.
    unhooked_bundles: [Option<TypeId>; UNHOOKED_BUNDLES],
    /// Types made immutable before this registry saw them, likewise.
    immutable_later: Vec<TypeId>,
}

impl Default for Components {
    fn default() -> Self {
        Self::new()
    }
}

impl Components {
    /// An empty registry with a fresh [`RegistryId`].
    ///
    /// ```
    /// # use ecs_core::Components;
    /// assert!(Components::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self {
            id: RegistryId::next(),
            infos: Vec::new(),
            by_type: TypeIdMap::default(),
            row_ticks: Vec::new(),
            kinds_version: 0,
            planning: false,
            any_hooked: false,
            hooked_later: Vec::new(),
            unhooked_bundles: [None; UNHOOKED_BUNDLES],
            immutable_later: Vec::new(),
        }
    }

    /// An empty registry for planning access before any world exists (a schedule's).
    ///
    /// It cannot know which types a world will make enableable or chunk components, so query
    /// elements built against it skip their kind checks (`ChunkRO<C>` does not insist that `C`
    /// is a chunk component; the world's registry checks that when the query state is built),
    /// and whoever plans with it must [adopt](Components::adopt_kinds) each world's kinds
    /// before trusting an access set built from it.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// assert!(Components::for_planning().is_planning());
    /// assert!(!Components::new().is_planning());
    /// ```
    pub fn for_planning() -> Self {
        Self {
            planning: true,
            ..Self::new()
        }
    }

    /// Whether this is a [planning](Components::for_planning) registry.
    pub fn is_planning(&self) -> bool {
        self.planning
    }

    /// A counter that grows whenever one of this registry's types becomes enableable or a
    /// chunk component: equal versions of one registry mean equal kinds.
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Shield;
    /// let mut world = World::new();
    /// let before = world.components().kinds_version();
    /// world.register_enableable::<Shield>();
    /// assert!(world.components().kinds_version() > before);
    /// ```
    #[inline]
    pub fn kinds_version(&self) -> u64 {
        self.kinds_version
    }

    /// Takes on the kinds `other` gives the types both registries know: a type enableable
    /// (or a chunk component) in `other` becomes so here. Kinds are only ever added, so a
    /// registry that adopted several worlds' kinds plans for the most cautious reading of each
    /// type (an enableable `T` makes `With<T>` / `Without<T>` prove no disjointness). Returns
    /// whether anything changed.
    ///
    /// ```
    /// # use ecs_core::{Components, World};
    /// struct Shield;
    /// let mut plan = Components::for_planning();
    /// let id = plan.register::<Shield>();
    /// let mut world = World::new();
    /// world.register_enableable::<Shield>();
    /// assert!(plan.adopt_kinds(world.components()));
    /// assert!(plan.info(id).is_enableable());
    /// assert!(!plan.adopt_kinds(world.components())); // nothing new the second time
    /// ```
    pub fn adopt_kinds(&mut self, other: &Components) -> bool {
        let mut changed = false;
        for info in &mut self.infos {
            let Some(theirs) = other.id_of(info.type_id) else {
                continue;
            };
            let theirs = other.info(theirs);
            if theirs.enableable && !info.enableable {
                info.enableable = true;
                changed = true;
            }
            if theirs.chunk_component && !info.chunk_component {
                info.chunk_component = true;
                changed = true;
            }
        }
        if changed {
            self.kinds_version += 1;
        }
        changed
    }

    /// A new registry, with a [`RegistryId`] of its own, that starts with every type of
    /// `self` under the same ids and then grows on its own: ids below `self.len()` name the
    /// same types in both, and ids the fork hands out later name types `self` had not seen
    /// when forked, so no archetype built against `self` holds them.
    ///
    /// For looking a query's types up through `&World` (a read-only query needs ids, and
    /// registering needs `&mut`). Ids taken from a fork stay meaningful for `self` only while
    /// `self` registers nothing more.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// let a = components.register::<u32>();
    /// let mut fork = components.fork();
    /// assert_ne!(fork.registry_id(), components.registry_id());
    /// assert_eq!(fork.register::<u32>(), a);
    /// let b = fork.register::<char>();
    /// assert_eq!(b.index(), 1);
    /// assert_eq!(components.id::<char>(), None);
    /// ```
    pub fn fork(&self) -> Self {
        Self {
            id: RegistryId::next(),
            infos: self.infos.clone(),
            by_type: self.by_type.clone(),
            row_ticks: self.row_ticks.clone(),
            kinds_version: self.kinds_version,
            planning: self.planning,
            any_hooked: self.any_hooked,
            hooked_later: self.hooked_later.clone(),
            unhooked_bundles: self.unhooked_bundles,
            immutable_later: self.immutable_later.clone(),
        }
    }

    /// This registry's identity (see [`RegistryId`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// assert_eq!(world.components().registry_id(), world.components().registry_id());
    /// ```
    #[inline]
    pub fn registry_id(&self) -> RegistryId {
        self.id
    }

    /// The id of `T`, registering it on first use.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// assert_eq!(components.register::<u32>(), id);
    /// ```
    #[inline]
    pub fn register<T: Component>(&mut self) -> ComponentId {
        match self.by_type.get(&TypeId::of::<T>()) {
            Some(&id) => id,
            None => self.register_new(ComponentInfo::of::<T>(ComponentId::from_index(
                self.infos.len(),
            ))),
        }
    }

    #[cold]
    fn register_new(&mut self, mut info: ComponentInfo) -> ComponentId {
        let id = info.id;
        if let Some(at) = self.hooked_later.iter().position(|&t| t == info.type_id) {
            self.hooked_later.swap_remove(at);
            info.hooked = true;
            self.any_hooked = true;
        }
        if let Some(at) = self.immutable_later.iter().position(|&t| t == info.type_id) {
            self.immutable_later.swap_remove(at);
            info.immutable = true;
        }
        self.by_type.insert(info.type_id, id);
        self.infos.push(info);
        id
    }

    /// Whether any registered type has hooks (see [`ComponentInfo::has_hooks`]). Types given
    /// hooks but not yet registered do not count: no row can hold them.
    #[inline]
    pub fn any_hooks(&self) -> bool {
        self.any_hooked
    }

    /// Whether a structural change of bundle `B` must take the hook path: some registered
    /// type has hooks, and `B` is not known to hold none of them
    /// ([`Components::note_unhooked`]).
    #[inline]
    pub(crate) fn may_hook<B: 'static>(&self) -> bool {
        self.any_hooked && !self.unhooked_bundles.contains(&Some(TypeId::of::<B>()))
    }

    /// Records that bundle `B`, whose types are all registered, holds no hooked type.
    pub(crate) fn note_unhooked<B: 'static>(&mut self) {
        let id = Some(TypeId::of::<B>());
        if !self.unhooked_bundles.contains(&id) {
            self.unhooked_bundles.rotate_right(1);
            self.unhooked_bundles[0] = id;
        }
    }

    /// Marks the type `type_id` hooked, now if it is registered, else when it is. Only the
    /// world calls this, for the types it keeps hooks for.
    /// Marks the type immutable (now, or when it is registered).
    pub(crate) fn set_immutable(&mut self, type_id: TypeId) {
        match self.id_of(type_id) {
            Some(id) => self.infos[id.index()].immutable = true,
            None if !self.immutable_later.contains(&type_id) => self.immutable_later.push(type_id),
            None => {}
        }
    }

    pub(crate) fn set_hooked(&mut self, type_id: TypeId) {
        match self.id_of(type_id) {
            Some(id) => {
                self.infos[id.index()].hooked = true;
                self.any_hooked = true;
                self.unhooked_bundles = [None; UNHOOKED_BUNDLES];
            }
            None if !self.hooked_later.contains(&type_id) => self.hooked_later.push(type_id),
            None => {}
        }
    }

    /// The per-row ticks component `id` keeps: none until a `Changed` or `Added` query state
    /// asks for them ([`World::keep_row_ticks`](crate::World::keep_row_ticks)).
    ///
    /// ```
    /// # use ecs_core::{Components, RowTicks};
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// assert_eq!(components.row_ticks(id), RowTicks::NONE);
    /// ```
    #[inline]
    pub fn row_ticks(&self, id: ComponentId) -> RowTicks {
        self.row_ticks.get(id.index()).copied().unwrap_or_default()
    }

    /// Adds `marks` to what component `id` keeps.
    pub(crate) fn add_row_ticks(&mut self, id: ComponentId, marks: RowTicks) {
        if self.row_ticks.len() <= id.index() {
            self.row_ticks.resize(id.index() + 1, RowTicks::NONE);
        }
        self.row_ticks[id.index()] = self.row_ticks[id.index()].union(marks);
    }

    /// Marks registered component `id` enableable. Only the world calls this, before any
    /// archetype holds the type (archetypes read the flag when they are built).
    pub(crate) fn set_enableable(&mut self, id: ComponentId) {
        self.infos[id.index()].enableable = true;
        self.kinds_version += 1;
    }

    /// Marks registered component `id` a chunk component. Only the world calls this.
    pub(crate) fn set_chunk_component(&mut self, id: ComponentId) {
        self.infos[id.index()].chunk_component = true;
        self.kinds_version += 1;
    }

    /// The id of `T`, if registered.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// assert_eq!(components.id::<u32>(), None);
    /// let id = components.register::<u32>();
    /// assert_eq!(components.id::<u32>(), Some(id));
    /// ```
    #[inline]
    pub fn id<T: Component>(&self) -> Option<ComponentId> {
        self.id_of(TypeId::of::<T>())
    }

    /// The id of the type with `type_id`, if registered.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// let id = components.register::<u32>();
    /// assert_eq!(components.id_of(std::any::TypeId::of::<u32>()), Some(id));
    /// ```
    #[inline]
    pub fn id_of(&self, type_id: TypeId) -> Option<ComponentId> {
        self.by_type.get(&type_id).copied()
    }

    /// The info of a registered id.
    ///
    /// # Panics
    /// If `id` was not registered in this registry.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// let id = components.register::<u64>();
    /// assert_eq!(components.info(id).size(), 8);
    /// ```
    #[inline]
    pub fn info(&self, id: ComponentId) -> &ComponentInfo {
        &self.infos[id.index()]
    }

    /// Every registered component, by id.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// components.register::<u8>();
    /// components.register::<u16>();
    /// let sizes: Vec<_> = components.iter().map(|i| i.size()).collect();
    /// assert_eq!(sizes, [1, 2]);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &ComponentInfo> {
        self.infos.iter()
    }

    /// How many types are registered.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// components.register::<u8>();
    /// assert_eq!(components.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Whether no type is registered.
    ///
    /// ```
    /// # use ecs_core::Components;
    /// assert!(Components::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_stable() {
        let mut c = Components::default();
        let a = c.register::<u32>();
        let b = c.register::<String>();
        assert_eq!((a.index(), b.index()), (0, 1));
        assert_eq!(c.register::<u32>(), a);
        assert_eq!(c.id::<String>(), Some(b));
        assert_eq!(c.id::<u8>(), None);
        assert!(c.info(a).drop_fn().is_none());
        assert!(c.info(b).drop_fn().is_some());
        assert_eq!(c.info(b).name(), "alloc::string::String");
    }
}
