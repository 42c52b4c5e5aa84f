//! Chunk components: the `World` methods that register a chunk component type and read or
//! write the value of an entity's chunk. The values themselves, and why registration is all
//! or nothing, are `crate::chunk::values`'s.

use std::any::type_name;

use crate::chunk::values::{make, ChunkKind, Made};
use crate::chunk::Chunk;
use crate::component::{Component, ComponentId};
use crate::entity::Entity;
use crate::error::ComponentError;
use crate::world::World;

impl World {
    /// Makes `C` a chunk component: every chunk of every archetype carries one `C`, shared by
    /// its rows, starting as `C::default()` whenever a chunk joins an archetype (see the
    /// module docs). Returns `C`'s id; calling it again is a no-op.
    ///
    /// Cost: one boxed `C` per chunk (existing chunks get theirs now).
    ///
    /// # Panics
    /// If `C` was already registered as a plain component: register it before its first use.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Bounds { min: f32, max: f32 }
    /// let mut world = World::new();
    /// let id = world.register_chunk_component::<Bounds>();
    /// assert!(world.components().info(id).is_chunk_component());
    /// let e = world.spawn((3.0f32,));
    /// world.chunk_component_mut::<Bounds>(e).unwrap().max = 3.0;
    /// let f = world.spawn((5.0f32,)); // same chunk: same value
    /// assert_eq!(world.chunk_component::<Bounds>(f), Ok(&Bounds { min: 0.0, max: 3.0 }));
    /// ```
    pub fn register_chunk_component<C: Component + Default>(&mut self) -> ComponentId {
        if let Some(id) = self.component_id::<C>() {
            assert!(
                self.components().info(id).is_chunk_component(),
                "`{}` is already registered as a plain component: register it as a chunk \
                 component before its first use",
                type_name::<C>()
            );
            return id;
        }
        // All or nothing: every value the chunks will carry is made first (user code), so a
        // panicking `Default` leaves the world as it was and `C` unregistered, free to be
        // registered again. From here on no user code runs.
        let holders = self.graph().chunk_value_holders();
        let mut made = Made(Vec::with_capacity(holders));
        for _ in 0..holders {
            made.0.push(make::<C>());
        }
        let (_, components, graph) = self.parts_mut();
        let id = components.register::<C>();
        components.set_chunk_component(id);
        graph.add_chunk_kind(
            ChunkKind::of::<C>(id),
            &mut std::mem::take(&mut made.0).into_iter(),
        );
        id
    }

    /// The value of chunk component `C` in the chunk that holds `entity`. O(1) plus a scan of
    /// the (few) chunk component types.
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] for a stale handle, and
    /// [`ComponentError::NotChunkComponent`] if `C` was not registered with
    /// [`World::register_chunk_component`].
    ///
    /// ```
    /// # use ecs_core::{ComponentError, World};
    /// #[derive(Default, Debug, PartialEq)]
    /// struct Visible(bool);
    /// let mut world = World::new();
    /// world.register_chunk_component::<Visible>();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(world.chunk_component::<Visible>(e), Ok(&Visible(false)));
    /// assert!(matches!(world.chunk_component::<u8>(e), Err(ComponentError::NotChunkComponent { .. })));
    /// ```
    pub fn chunk_component<C: Component>(&self, entity: Entity) -> Result<&C, ComponentError> {
        let (chunk, id) = self.chunk_of::<C>(entity)?;
        Ok(chunk
            .chunk_values()
            .get::<C>(id)
            .expect("every chunk carries every chunk component (ChunkValues invariant 1)"))
    }

    /// The value of chunk component `C` in the chunk that holds `entity`, mutably: every row
    /// of that chunk sees the change.
    ///
    /// # Errors
    /// As [`World::chunk_component`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default)]
    /// struct Visible(bool);
    /// let mut world = World::new();
    /// world.register_chunk_component::<Visible>();
    /// let (a, b) = (world.spawn((1u8,)), world.spawn((2u8,)));
    /// world.chunk_component_mut::<Visible>(a).unwrap().0 = true;
    /// assert!(world.chunk_component::<Visible>(b).unwrap().0);
    /// ```
    pub fn chunk_component_mut<C: Component>(
        &mut self,
        entity: Entity,
    ) -> Result<&mut C, ComponentError> {
        self.flush();
        let (loc, id) = self.chunk_component_id::<C>(entity)?;
        let (_, _, graph) = self.parts_mut();
        let arch = &mut graph.as_mut_slice()[loc.archetype.index()];
        Ok(arch
            .chunk_of_row(loc.row as usize)
            .chunk_values_mut()
            .get_mut::<C>(id)
            .expect("every chunk carries every chunk component (ChunkValues invariant 1)"))
    }

    fn chunk_of<C: Component>(
        &self,
        entity: Entity,
    ) -> Result<(&Chunk, ComponentId), ComponentError> {
        let (loc, id) = self.chunk_component_id::<C>(entity)?;
        let arch = &self.archetypes()[loc.archetype.index()];
        let (c, _) = arch.split_row(loc.row as usize);
        Ok((&arch.chunks()[c], id))
    }

    fn chunk_component_id<C: Component>(
        &self,
        entity: Entity,
    ) -> Result<(crate::Location, ComponentId), ComponentError> {
        let loc = self
            .location(entity)
            .ok_or(ComponentError::NoSuchEntity(entity))?;
        let not = ComponentError::NotChunkComponent {
            component: type_name::<C>(),
        };
        let id = self.component_id::<C>().ok_or(not)?;
        if !self.components().info(id).is_chunk_component() {
            return Err(not);
        }
        Ok((loc, id))
    }
}
