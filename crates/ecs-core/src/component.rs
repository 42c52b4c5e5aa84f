//! Component types and their per-world registry.
//!
//! Any `T: Send + Sync + 'static` is a component. The first time a world sees `T` it gives it the
//! next dense [`ComponentId`] and records a [`ComponentInfo`]: name, memory layout and the
//! type-erased drop function that chunks use to drop values they only know as bytes.
//!
//! A registry is the meaning of every [`ComponentId`] handed out against it: id 3 means "the
//! fourth type this registry saw" and nothing else. Each registry therefore carries a
//! [`RegistryId`] of its own, so that ids (and access sets built from them) can be checked
//! against the registry they are used with, and the owners of a registry (a `World`, a
//! schedule) never hand it out as `&mut Components` to safe code, so it cannot be replaced.

use crate::ids::RowTicks;
use std::alloc::Layout;
use std::any::{type_name, TypeId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// Marker for the types a world can store: every `Send + Sync + 'static` type except tuples.
///
/// A tuple is never a component: `world.spawn(((a, b), c))` would otherwise store one
/// component of type `(A, B)` and no `A` or `B`, and every query for `A` would silently skip
/// the entity. A registry therefore refuses a tuple type the first time it sees one, with a
/// panic that names it (see [`ComponentInfo::of`]). Spawn the elements as separate components,
/// or give the pair a name: a newtype around a tuple is an ordinary component.
///
/// ```
/// # use ecs_core::World;
/// struct Pair((u8, u16)); // a named wrapper is fine
/// let mut world = World::new();
/// let e = world.spawn((Pair((1, 2)), 'x'));
/// assert_eq!(world.get::<Pair>(e).unwrap().0, (1, 2));
/// ```
///
/// ```should_panic
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.spawn(((1u8, 2u16), 'x')); // panics, naming `(u8, u16)`
/// ```
///
/// A `#[derive(Bundle)]` type is refused the same way (see the `ecs` facade's `Bundle` docs):
/// inside a tuple it would be one component and none of its fields.
///
/// ```
/// # use ecs_core::{Component, World};
/// fn store<T: Component>(world: &mut World, value: T) -> bool {
///     let e = world.spawn((value,));
///     world.has::<T>(e)
/// }
/// assert!(store(&mut World::new(), String::from("any Send + Sync + 'static type")));
/// ```
pub trait Component: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> Component for T {}

/// Dense per-world id of a component type, assigned on first use.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let a = world.register_component::<u32>();
/// let b = world.register_component::<char>();
/// assert_eq!((a.index(), b.index()), (0, 1));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ComponentId(u32);

impl ComponentId {
    /// The id with the given dense index.
    ///
    /// ```
    /// # use ecs_core::ComponentId;
    /// assert_eq!(ComponentId::from_index(4).index(), 4);
    /// ```
    #[inline]
    pub const fn from_index(index: usize) -> Self {
        Self(index as u32)
    }

    /// The dense index (0 for the first type a world registered).
    ///
    /// ```
    /// # use ecs_core::Components;
    /// let mut components = Components::default();
    /// assert_eq!(components.register::<u8>().index(), 0);
    /// assert_eq!(components.register::<u16>().index(), 1);
    /// ```
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a world knows about a component type.
///
/// ```
/// # use ecs_core::{ComponentId, ComponentInfo};
/// let info = ComponentInfo::of::<u64>(ComponentId::from_index(0));
/// assert_eq!((info.size(), info.align(), info.name()), (8, 8, "u64"));
/// ```
#[derive(Clone, Debug)]
pub struct ComponentInfo {
    id: ComponentId,
    type_id: TypeId,
    name: &'static str,
    layout: Layout,
    drop: Option<unsafe fn(*mut u8)>,
    /// Whether rows carry an enable bit for this type (see `World::register_enableable`).
    enableable: bool,
    /// Whether every chunk carries one value of this type (see
    /// `World::register_chunk_component`).
    chunk_component: bool,
    /// Whether the owning world runs lifecycle hooks for this type (see
    /// `World::set_component_hooks`).
    hooked: bool,
    /// Whether values may only be replaced through structural changes (insert), never
    /// written in place (see `ComponentHooks::immutable`).
    immutable: bool,
}

impl ComponentInfo {
    /// Describes `T`.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// let info = ComponentInfo::of::<String>(ComponentId::from_index(3));
    /// assert_eq!(info.id(), ComponentId::from_index(3));
    /// assert!(info.drop_fn().is_some());
    /// ```
    ///
    /// # Panics
    /// If `T` is a tuple (its name starts with `(`, the unit type included) or a
    /// `#[derive(Bundle)]` type: neither is ever a component (see [`Component`]). The message
    /// names the type and says how to fix it.
    ///
    /// ```should_panic
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// ComponentInfo::of::<(u32, f32)>(ComponentId::from_index(0));
    /// ```
    pub fn of<T: Component>(id: ComponentId) -> Self {
        let name = type_name::<T>();
        if name.starts_with('(') {
            refuse_tuple(name);
        }
        if crate::derived_bundles::derived_bundle_name(TypeId::of::<T>()).is_some() {
            refuse_bundle(name);
        }
        /// # Safety
        /// `ptr` points to a valid, aligned `T` that is never used again.
        unsafe fn drop_ptr<T>(ptr: *mut u8) {
            debug_assert!(!ptr.is_null() && ptr.align_offset(align_of::<T>()) == 0);
            // SAFETY: `ptr` points to a valid, aligned `T` never used again (this fn's contract).
            unsafe { ptr.cast::<T>().drop_in_place() }
        }
        Self {
            id,
            type_id: TypeId::of::<T>(),
            name,
            layout: Layout::new::<T>(),
            drop: std::mem::needs_drop::<T>().then_some(drop_ptr::<T> as unsafe fn(*mut u8)),
            enableable: false,
            chunk_component: false,
            hooked: false,
            immutable: false,
        }
    }

    /// Whether the type is *immutable*: its values change only by `insert` (which runs its
    /// hooks), never in place: `World::get_mut`, `RefRW<T>` / `&mut T` query elements and
    /// `EntityMut::get_mut` refuse it. Relationships (`ChildOf`) and their target lists
    /// (`Children`) are, so their two sides cannot be made to disagree by a write.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// let id = world.register_component::<ChildOf>(); // immutable from its first use
    /// assert!(world.components().info(id).is_immutable());
    /// let n = world.register_component::<u32>();
    /// assert!(!world.components().info(n).is_immutable());
    /// ```
    #[inline]
    pub fn is_immutable(&self) -> bool {
        self.immutable
    }

    /// Whether the owning world runs lifecycle hooks for this type (see
    /// `World::set_component_hooks`; `ChildOf` and `Children` have them in every world).
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// let plain = world.register_component::<u8>();
    /// let child_of = world.register_component::<ChildOf>();
    /// assert!(!world.components().info(plain).has_hooks());
    /// assert!(world.components().info(child_of).has_hooks());
    /// ```
    #[inline]
    pub fn has_hooks(&self) -> bool {
        self.hooked
    }

    /// Whether the type was registered as a chunk component: every chunk carries one value
    /// of it (see `World::register_chunk_component`).
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// assert!(!ComponentInfo::of::<u8>(ComponentId::from_index(0)).is_chunk_component());
    /// ```
    #[inline]
    pub fn is_chunk_component(&self) -> bool {
        self.chunk_component
    }

    /// Whether the type was registered as enableable: each row of an archetype holding it
    /// carries an enable bit (see `World::register_enableable`).
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// assert!(!ComponentInfo::of::<u8>(ComponentId::from_index(0)).is_enableable());
    /// ```
    #[inline]
    pub fn is_enableable(&self) -> bool {
        self.enableable
    }

    /// The component's id in its world.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// let info = ComponentInfo::of::<u8>(ComponentId::from_index(9));
    /// assert_eq!(info.id().index(), 9);
    /// ```
    pub fn id(&self) -> ComponentId {
        self.id
    }

    /// The Rust type's id.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// let info = ComponentInfo::of::<u8>(ComponentId::from_index(0));
    /// assert_eq!(info.type_id(), std::any::TypeId::of::<u8>());
    /// ```
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The type's name, as `std::any::type_name` gives it.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// let info = ComponentInfo::of::<String>(ComponentId::from_index(0));
    /// assert_eq!(info.name(), "alloc::string::String");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Size and alignment.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// let info = ComponentInfo::of::<[u16; 3]>(ComponentId::from_index(0));
    /// assert_eq!(info.layout(), std::alloc::Layout::new::<[u16; 3]>());
    /// ```
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Size in bytes.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// assert_eq!(ComponentInfo::of::<[u16; 3]>(ComponentId::from_index(0)).size(), 6);
    /// ```
    pub fn size(&self) -> usize {
        self.layout.size()
    }

    /// Alignment in bytes.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// assert_eq!(ComponentInfo::of::<[u16; 3]>(ComponentId::from_index(0)).align(), 2);
    /// ```
    pub fn align(&self) -> usize {
        self.layout.align()
    }

    /// The type-erased drop glue, `None` when the type needs no drop.
    ///
    /// Calling it requires a pointer to a valid, aligned value of this type that is never used
    /// again.
    ///
    /// ```
    /// # use ecs_core::{ComponentId, ComponentInfo};
    /// assert!(ComponentInfo::of::<u32>(ComponentId::from_index(0)).drop_fn().is_none());
    /// assert!(ComponentInfo::of::<Vec<u32>>(ComponentId::from_index(0)).drop_fn().is_some());
    /// ```
    pub fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.drop
    }
}

/// The panic of [`ComponentInfo::of`] for a tuple type, out of line (it is cold).
#[cold]
#[track_caller]
fn refuse_tuple(name: &str) -> ! {
    panic!(
        "`{name}` is a tuple, which is never a component: spawn its elements as separate \
         components, or wrap it in a named struct (a nested tuple in a bundle is not flattened)"
    )
}

/// The panic of [`ComponentInfo::of`] for a `#[derive(Bundle)]` type, out of line (it is cold).
#[cold]
#[track_caller]
fn refuse_bundle(name: &str) -> ! {
    panic!(
        "`{name}` is a bundle (#[derive(Bundle)]), which is never one component: spawn or insert \
         it on its own, add the other components as fields of a bundle that holds it as a \
         `#[bundle]` field, or insert them in a second call"
    )
}

/// Hasher for `TypeId` keys: a `TypeId` already is a well-mixed hash, so this just keeps the
/// 64 bits it is fed instead of hashing them again.
///
/// ```
/// # use std::any::TypeId;
/// # use ecs_core::TypeIdMap;
/// let mut map = TypeIdMap::default();
/// map.insert(TypeId::of::<u32>(), "u32");
/// assert_eq!(map.get(&TypeId::of::<u32>()), Some(&"u32"));
/// ```
#[derive(Default, Clone, Copy)]
pub struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // `TypeId`'s `Hash` writes a `u64`; fold anything else in case that ever changes.
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = self.0.rotate_left(5) ^ u64::from_ne_bytes(word);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` keyed by `TypeId` that does not rehash the key.
///
/// ```
/// # use std::any::TypeId;
/// # use ecs_core::TypeIdMap;
/// let mut map: TypeIdMap<usize> = TypeIdMap::default();
/// map.insert(TypeId::of::<char>(), 1);
/// assert!(map.contains_key(&TypeId::of::<char>()));
/// ```
pub type TypeIdMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

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
    /// The registered types that have hooks, in the order they gained them (`any_hooked` is
    /// whether this is non-empty): few, so a signature is checked against them one by one.
    hooked_ids: Vec<ComponentId>,
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
            hooked_ids: Vec::new(),
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
            hooked_ids: self.hooked_ids.clone(),
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
            None => self.register_new(ComponentInfo::of::<T>(ComponentId(self.infos.len() as u32))),
        }
    }

    #[cold]
    fn register_new(&mut self, mut info: ComponentInfo) -> ComponentId {
        let id = info.id;
        if let Some(at) = self.hooked_later.iter().position(|&t| t == info.type_id) {
            self.hooked_later.swap_remove(at);
            info.hooked = true;
            self.any_hooked = true;
            self.hooked_ids.push(id);
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

    /// The registered types that have hooks: an archetype that holds none of these runs no
    /// hook when its rows come or go.
    #[inline]
    pub(crate) fn hooked_ids(&self) -> &[ComponentId] {
        &self.hooked_ids
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
                self.hooked_ids.push(id);
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
