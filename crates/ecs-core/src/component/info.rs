//! [`ComponentInfo`]: what a registry records of a component type (name, layout, drop glue,
//! and the flags a world sets), and the refusal of tuples and bundles as components.

use std::alloc::Layout;
use std::any::{type_name, TypeId};

use super::id::{Component, ComponentId};

/// What a world knows about a component type.
///
/// ```
/// # use ecs_core::{ComponentId, ComponentInfo};
/// let info = ComponentInfo::of::<u64>(ComponentId::from_index(0));
/// assert_eq!((info.size(), info.align(), info.name()), (8, 8, "u64"));
/// ```
#[derive(Clone, Debug)]
pub struct ComponentInfo {
    pub(super) id: ComponentId,
    pub(super) type_id: TypeId,
    pub(super) name: &'static str,
    pub(super) layout: Layout,
    pub(super) drop: Option<unsafe fn(*mut u8)>,
    /// Whether rows carry an enable bit for this type (see `World::register_enableable`).
    pub(super) enableable: bool,
    /// Whether every chunk carries one value of this type (see
    /// `World::register_chunk_component`).
    pub(super) chunk_component: bool,
    /// Whether the owning world runs lifecycle hooks for this type (see
    /// `World::set_component_hooks`).
    pub(super) hooked: bool,
    /// Whether values may only be replaced through structural changes (insert), never
    /// written in place (see `ComponentHooks::immutable`).
    pub(super) immutable: bool,
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
        if crate::component::derived_bundles::derived_bundle_name(TypeId::of::<T>()).is_some() {
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
