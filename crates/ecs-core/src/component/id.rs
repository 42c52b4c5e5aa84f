//! The [`Component`] marker trait and the dense [`ComponentId`] a registry gives each type.

/// Marker for the types a world can store: every `Send + Sync + 'static` type except tuples.
///
/// A tuple is never a component: `world.spawn(((a, b), c))` would otherwise store one
/// component of type `(A, B)` and no `A` or `B`, and every query for `A` would silently skip
/// the entity. A registry therefore refuses a tuple type the first time it sees one, with a
/// panic that names it (see [`ComponentInfo::of`](crate::ComponentInfo::of)). Spawn the elements as separate components,
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
