//! [`Entity`]: the handle, an index into the entity table plus the slot's generation.

use std::fmt;
use std::num::NonZeroU32;

/// A handle to an entity: a slot index plus that slot's generation.
///
/// Eight bytes, and `Option<Entity>` is eight bytes too (the generation is never zero).
/// `Debug` and `Display` print `index v generation`, as in `5v2`; `Display` honours width,
/// fill and alignment (`{e:>6}`).
///
/// `Ord` is index-major: entities sort by slot index, then by generation, so a sorted list
/// follows the entity table (and a newer entity in a reused slot sorts beside the old one).
/// bevy's `Entity` orders generation-major; code ported from there that relies on the order
/// of mixed generations should sort by `(generation(), index())` explicitly.
///
/// ```
/// # use ecs_core::Entity;
/// assert_eq!(std::mem::size_of::<Option<Entity>>(), 8);
/// let (a, b) = (Entity::from_bits(1 << 32 | 5).unwrap(), Entity::from_bits(2 << 32 | 3).unwrap());
/// assert!(b < a, "index 3 sorts before index 5, whatever the generations");
/// assert_eq!(format!("[{a:<6}]"), "[5v1   ]");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C, align(8))]
pub struct Entity {
    pub(super) index: u32,
    pub(super) generation: NonZeroU32,
}

impl Entity {
    /// A handle that no world ever issues (its index, `u32::MAX`, is past the last slot an
    /// entity table may hold), for fields filled in later, like `Entity::PLACEHOLDER` in
    /// bevy or `Entity::DANGLING` in hecs. Every lookup with it fails as for a stale handle.
    ///
    /// ```
    /// # use ecs_core::{Entity, EntityError, World};
    /// struct Target(Entity);
    /// let mut world = World::new();
    /// let hunter = world.spawn((Target(Entity::PLACEHOLDER),));
    /// assert!(!world.contains(Entity::PLACEHOLDER));
    /// assert_eq!(world.despawn(Entity::PLACEHOLDER), Err(EntityError::NoSuchEntity(Entity::PLACEHOLDER)));
    /// let prey = world.spawn(());
    /// world.get_mut::<Target>(hunter).unwrap().0 = prey;
    /// assert_ne!(prey, Entity::PLACEHOLDER);
    /// ```
    pub const PLACEHOLDER: Self = Self {
        index: u32::MAX,
        generation: NonZeroU32::MAX,
    };

    pub(crate) const fn new(index: u32, generation: NonZeroU32) -> Self {
        Self { index, generation }
    }

    /// The slot index; unique among live entities, reused after despawn.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let a = world.spawn(());
    /// world.despawn(a).unwrap();
    /// let b = world.spawn(());
    /// assert_eq!(a.index(), b.index()); // the slot is reused
    /// ```
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// How many times the slot had been used before this entity, plus one.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let a = world.spawn(());
    /// world.despawn(a).unwrap();
    /// let b = world.spawn(());
    /// assert_eq!((a.generation(), b.generation()), (1, 2));
    /// ```
    #[inline]
    pub const fn generation(self) -> u32 {
        self.generation.get()
    }

    /// Packs the handle into a `u64` (generation in the high half).
    ///
    /// ```
    /// # use ecs_core::{Entity, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u64 {
        (self.generation.get() as u64) << 32 | self.index as u64
    }

    /// Unpacks [`Entity::to_bits`]; `None` when the generation half is zero.
    ///
    /// ```
    /// # use ecs_core::Entity;
    /// let e = Entity::from_bits(1 << 32 | 5).unwrap();
    /// assert_eq!((e.index(), e.generation()), (5, 1));
    /// assert_eq!(Entity::from_bits(5), None);
    /// ```
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<Self> {
        match NonZeroU32::new((bits >> 32) as u32) {
            Some(generation) => Some(Self {
                index: bits as u32,
                generation,
            }),
            None => None,
        }
    }
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.width().is_none() && f.precision().is_none() {
            return fmt::Debug::fmt(self, f);
        }
        // `pad` applies width, fill and alignment to the whole `5v2`.
        f.pad(&format!("{self:?}"))
    }
}
