//! Typed access to components, the only `unsafe` of `world/`: [`World::get`] /
//! [`World::get_mut`] for one entity's component, and [`World::column`],
//! [`World::column_mut`] and [`World::column_chunks`] for `&[T]` / `&mut [T]` per chunk; plus
//! [`World::components_mut`], the unsafe door to the registry.
//!
//! The type check is what makes these safe: the column is looked up by `T`'s id in the world's
//! own registry, so the reference's type is the type the column stores (`World` invariant 4).
//! Cost: one registry lookup and one column lookup per call, then plain references. Row moves
//! and batch writes, the other row-level work, live in `archetype/`.

use std::any::type_name;
use std::ptr::NonNull;

use crate::archetype::Archetype;
use crate::chunk::Chunk;
use crate::component::{Component, ComponentId, Components};
use crate::entity::{Entity, Location};
use crate::error::ComponentError;
use crate::ids::ArchetypeId;
use crate::world::World;

impl World {
    /// Shared access to one component.
    ///
    /// Cost: the entity's location (one generation check), the component's id (a `TypeId`
    /// lookup) and its column in the archetype (an array read): no search.
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] or [`ComponentError::MissingComponent`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((5u32,));
    /// assert_eq!(world.get::<u32>(e), Ok(&5));
    /// assert!(world.get::<char>(e).is_err());
    /// ```
    #[inline]
    pub fn get<T: Component>(&self, entity: Entity) -> Result<&T, ComponentError> {
        let (ptr, ..) = self.component_cell::<T>(entity)?;
        // SAFETY: the pointer is to an initialised `T` in a live row; `&self` keeps every
        // writer out (mutation needs `&mut World`, or a scheduler-checked disjoint access).
        Ok(unsafe { ptr.cast::<T>().as_ref() })
    }

    /// Exclusive access to one component; stamps its chunk column as changed.
    ///
    /// # Errors
    /// As [`World::get`]; and [`ComponentError::Immutable`] for an immutable type
    /// ([`ComponentInfo::is_immutable`](crate::ComponentInfo::is_immutable): `ChildOf`,
    /// `Children`, other relationships): `insert` a new value instead.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((5u32,));
    /// *world.get_mut::<u32>(e).unwrap() += 1;
    /// assert_eq!(world.get::<u32>(e), Ok(&6));
    /// ```
    #[inline]
    pub fn get_mut<T: Component>(&mut self, entity: Entity) -> Result<&mut T, ComponentError> {
        self.write_cell::<T>(entity, true)
    }

    /// [`World::get_mut`] without the immutability check: for the engine's own upkeep of
    /// immutable types (a relationship's target list).
    #[inline]
    pub(crate) fn get_mut_in_place<T: Component>(
        &mut self,
        entity: Entity,
    ) -> Result<&mut T, ComponentError> {
        self.write_cell::<T>(entity, false)
    }

    #[inline]
    fn write_cell<T: Component>(
        &mut self,
        entity: Entity,
        refuse_immutable: bool,
    ) -> Result<&mut T, ComponentError> {
        let tick = self.change_tick();
        let (ptr, chunk, col, r, immutable) = self.component_cell::<T>(entity)?;
        if immutable && refuse_immutable {
            return Err(ComponentError::Immutable {
                entity,
                component: type_name::<T>(),
            });
        }
        // SAFETY: `&mut self` is write access to every column; `tick` is the current tick;
        // `r` is the entity's row in `chunk`.
        unsafe { chunk.mark_rows_unchecked(col, r..r + 1, tick) };
        // SAFETY: as in `get`, and `&mut self` makes this the only reference.
        Ok(unsafe { ptr.cast::<T>().as_mut() })
    }

    /// Writes `value` into `entity`'s `T` only if it differs from the current value, and marks
    /// the row changed only then (bevy's `set_if_neq`); returns whether it wrote. Costs one
    /// comparison more than [`World::get_mut`], and saves every `Changed<T>` reader the row
    /// when nothing changed.
    ///
    /// # Errors
    /// As [`World::get`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((5u32,));
    /// let before = world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0]
    ///     .changed_tick(0);
    /// world.advance_tick();
    /// assert_eq!(world.set_if_neq(e, 5u32), Ok(false)); // same value: no mark
    /// let chunk = &world.archetypes()[world.location(e).unwrap().archetype.index()].chunks()[0];
    /// assert_eq!(chunk.changed_tick(0), before);
    /// assert_eq!(world.set_if_neq(e, 6u32), Ok(true));
    /// assert_eq!(world.get::<u32>(e), Ok(&6));
    /// ```
    pub fn set_if_neq<T: Component + PartialEq>(
        &mut self,
        entity: Entity,
        value: T,
    ) -> Result<bool, ComponentError> {
        if *self.get::<T>(entity)? == value {
            return Ok(false);
        }
        *self.get_mut::<T>(entity)? = value;
        Ok(true)
    }

    /// [`World::get`] of an entity located already (`loc` from [`World::location`]), with
    /// `T`'s component id resolved by the caller: for engine loops that read one type from
    /// many entities (a subtree's lists), no `TypeId` lookup and no second location lookup.
    /// `None` if `loc` names no live row, the row lacks the component, or `id` is not `T`'s.
    #[inline]
    pub(crate) fn get_located<T: Component>(&self, loc: Location, id: ComponentId) -> Option<&T> {
        if self.components.info(id).type_id() != std::any::TypeId::of::<T>() {
            return None;
        }
        let arch = self.archetypes.as_slice().get(loc.archetype.index())?;
        let col = arch.column(id)?;
        if loc.row as usize >= arch.len() {
            return None;
        }
        // SAFETY: `loc.row < arch.len()` (checked above) and `col` is a column of `arch`, which
        // holds `T`s: `id` is `T`'s id in this world's registry (checked above).
        let ptr = unsafe { arch.cell(loc.row as usize, col) };
        // SAFETY: as in `get`: an initialised `T` in a live row, read under `&self`.
        Some(unsafe { ptr.cast::<T>().as_ref() })
    }

    /// [`World::get_mut_in_place`] with `T`'s id resolved by the caller (as
    /// [`World::get_located`]); stamps the row changed.
    #[inline]
    pub(crate) fn get_mut_by_id<T: Component>(
        &mut self,
        entity: Entity,
        id: ComponentId,
    ) -> Option<&mut T> {
        if self.components.info(id).type_id() != std::any::TypeId::of::<T>() {
            return None;
        }
        let tick = self.change_tick();
        let (loc, addr) = self.locate_row(entity)?;
        let arch = &self.archetypes.as_slice()[loc.archetype.index()];
        let col = arch.column(id)?;
        let chunk = &arch.chunks()[addr.chunk()];
        // SAFETY: `&mut self` is write access to every column; `tick` is the current tick;
        // `addr` is the entity's row in `chunk`.
        unsafe { chunk.mark_rows_unchecked(col, addr.r()..addr.r() + 1, tick) };
        // SAFETY: `addr` was just computed by `locate_row` (no chunk released since) and `col`
        // is a column of `arch`, holding `T`s (`id` is `T`'s, checked above); `&mut self`
        // makes this the only reference.
        Some(unsafe { arch.cell_at(addr, col).cast::<T>().as_mut() })
    }

    /// The cell of `entity`'s `T`, with its chunk and column (for stamping a write).
    fn component_cell<T: Component>(
        &self,
        entity: Entity,
    ) -> Result<(NonNull<u8>, &Chunk, usize, usize, bool), ComponentError> {
        let loc = self
            .location(entity)
            .ok_or(ComponentError::NoSuchEntity(entity))?;
        let missing = || ComponentError::MissingComponent {
            entity,
            component: type_name::<T>(),
        };
        let id = self.components.id::<T>().ok_or_else(missing)?;
        let arch = &self.archetypes.as_slice()[loc.archetype.index()];
        let col = arch.column(id).ok_or_else(missing)?;
        let (chunk, r) = arch.split_row(loc.row as usize);
        // SAFETY: `loc.row < arch.len()` (invariant 2) and `col` is a column of `arch`.
        let ptr = unsafe { arch.cell(loc.row as usize, col) };
        let immutable = self.components.info(id).is_immutable();
        Ok((ptr, &arch.chunks()[chunk], col, r, immutable))
    }

    /// The component registry itself, for engine code that registers the types of a query or
    /// bundle through a trait (`WorldQuery::init_state`). To register one type, use the safe
    /// [`World::register_component`].
    ///
    /// # Safety
    /// The caller must not replace the registry (`std::mem::swap`, `replace`, `take`, or
    /// assignment) nor hand the reference to code that might: the world's columns are read
    /// through this registry's ids, so another registry would make a `u32` column readable as
    /// whatever type another registry gave that id. Registering types is fine.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// // SAFETY: only registers a type.
    /// let id = unsafe { world.components_mut() }.register::<u32>();
    /// assert_eq!(world.component_id::<u32>(), Some(id));
    /// ```
    ///
    /// Replacing a world's registry from safe code does not compile:
    ///
    /// ```compile_fail,E0133
    /// # use ecs_core::{Components, World};
    /// let mut world = World::new();
    /// world.spawn((7u32,));
    /// std::mem::swap(world.components_mut(), &mut Components::default());
    /// ```
    pub unsafe fn components_mut(&mut self) -> &mut Components {
        &mut self.components
    }

    /// The archetype and `T`'s column in it, if both exist.
    fn typed_column<T: Component>(&self, archetype: ArchetypeId) -> Option<(&Archetype, usize)> {
        let arch = self.archetypes().get(archetype.index())?;
        let col = arch.column(self.component_id::<T>()?)?;
        Some((arch, col))
    }

    /// The `T` values of chunk `chunk` of `archetype`, in row order (the same order as that
    /// chunk's [`entities`](crate::Chunk::entities)).
    ///
    /// Returns `None` if the archetype or chunk does not exist or the archetype has no `T`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((7u32, 'a'));
    /// world.spawn((8u32, 'b'));
    /// let arch = world.location(e).unwrap().archetype;
    /// assert_eq!(world.column::<u32>(arch, 0), Some(&[7, 8][..]));
    /// assert_eq!(world.column::<f32>(arch, 0), None); // no such column
    /// assert_eq!(world.column::<u32>(arch, 1), None); // no such chunk
    /// ```
    pub fn column<T: Component>(&self, archetype: ArchetypeId, chunk: usize) -> Option<&[T]> {
        let (arch, col) = self.typed_column::<T>(archetype)?;
        let chunk = arch.chunks().get(chunk)?;
        let base = arch.column_base(chunk, col).cast::<T>();
        // SAFETY: `col` is the column of `T`'s id in this world's registry, so it stores `T`s
        // (`World` invariant 4), aligned by the chunk layout; rows `0..len` are initialised
        // (`Chunk` invariant); `&self` keeps writers out for the borrow's life.
        Some(unsafe { std::slice::from_raw_parts(base.as_ptr(), chunk.len()) })
    }

    /// [`World::column`] with write access; stamps the chunk column as changed.
    ///
    /// # Panics
    /// If `T` is immutable (as [`World::get_mut`] refuses it).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let arch = world.location(e).unwrap().archetype;
    /// world.column_mut::<u32>(arch, 0).unwrap()[0] += 1;
    /// assert_eq!(world.get::<u32>(e), Ok(&8));
    /// ```
    pub fn column_mut<T: Component>(
        &mut self,
        archetype: ArchetypeId,
        chunk: usize,
    ) -> Option<&mut [T]> {
        let tick = self.change_tick();
        if let Some(id) = self.components.id::<T>() {
            assert!(
                !self.components.info(id).is_immutable(),
                "`{}` is immutable: change its values with `insert`, which runs its hooks",
                type_name::<T>()
            );
        }
        let (arch, col) = self.typed_column::<T>(archetype)?;
        let chunk = arch.chunks().get(chunk)?;
        // SAFETY: `&mut self` is write access to every column, `tick` is the current tick, and
        // the slice covers every row of the chunk (a bulk stamp where rows keep marks).
        unsafe { chunk.mark_rows_unchecked(col, 0..chunk.len(), tick) };
        let base = arch.column_base(chunk, col).cast::<T>();
        // SAFETY: as in `column`, and `&mut self` makes this the only reference to the column
        // for the borrow's life.
        Some(unsafe { std::slice::from_raw_parts_mut(base.as_ptr(), chunk.len()) })
    }

    /// The `T` column of `archetype`, one slice per chunk; empty if the archetype does not
    /// exist or has no `T`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::with_test_chunk_size(256);
    /// let first = world.spawn((0u64,));
    /// for i in 1..100u64 {
    ///     world.spawn((i,));
    /// }
    /// let arch = world.location(first).unwrap().archetype;
    /// let chunks: Vec<&[u64]> = world.column_chunks::<u64>(arch).collect();
    /// assert!(chunks.len() > 1);
    /// assert_eq!(chunks.iter().map(|c| c.iter().sum::<u64>()).sum::<u64>(), (0..100).sum());
    /// ```
    pub fn column_chunks<T: Component>(
        &self,
        archetype: ArchetypeId,
    ) -> impl ExactSizeIterator<Item = &[T]> + '_ {
        let chunks = self
            .typed_column::<T>(archetype)
            .map_or(0, |(a, _)| a.chunks().len());
        (0..chunks).map(move |i| {
            self.column::<T>(archetype, i)
                .expect("the chunk and column were just found")
        })
    }
}
