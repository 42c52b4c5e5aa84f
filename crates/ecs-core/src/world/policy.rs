//! Chunk policies: the `World` methods that build a world, or size an archetype, by a
//! `ChunkPolicy` / `ColumnOrder`. The policy types and their checks are `crate::chunk::policy`'s.

use crate::chunk::policy::{check_size, ChunkPolicy, ChunkSizing, ColumnOrder};
use crate::component::bundle::{bundle_ids, Bundle};
use crate::component::signature::Signature;
use crate::error::WorldError;
use crate::world::World;

impl World {
    /// An empty world whose archetypes size their chunks by `policy`.
    ///
    /// # Errors
    /// As [`ChunkPolicy::validate`].
    ///
    /// ```
    /// # use ecs_core::{ChunkPolicy, World, WorldError};
    /// assert!(World::with_chunk_policy(ChunkPolicy::MinRows(64)).is_ok());
    /// assert_eq!(
    ///     World::with_chunk_policy(ChunkPolicy::Fixed(3000)).unwrap_err(),
    ///     WorldError::InvalidChunkSize(3000)
    /// );
    /// ```
    pub fn with_chunk_policy(policy: ChunkPolicy) -> Result<Self, WorldError> {
        Ok(Self::build(ChunkSizing {
            policy: policy.validate()?,
            ..ChunkSizing::default()
        }))
    }

    /// Sizes the chunks of archetypes created from now on by `policy`; existing archetypes
    /// keep theirs. Sizes set with [`World::set_chunk_size_for`] still win.
    ///
    /// # Errors
    /// As [`ChunkPolicy::validate`]; the policy is then unchanged.
    ///
    /// ```
    /// # use ecs_core::{ChunkPolicy, World};
    /// let mut world = World::new();
    /// world.set_chunk_policy(ChunkPolicy::Fixed(4096)).unwrap();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.layout().chunk_size(), 4096);
    /// assert_eq!(world.chunk_policy(), ChunkPolicy::Fixed(4096));
    /// ```
    pub fn set_chunk_policy(&mut self, policy: ChunkPolicy) -> Result<(), WorldError> {
        let sizing = &mut self.parts_mut().2.sizing;
        sizing.policy = policy.validate()?;
        Ok(())
    }

    /// The chunk size policy for new archetypes.
    ///
    /// ```
    /// # use ecs_core::{ChunkPolicy, World};
    /// assert_eq!(World::new().chunk_policy(), ChunkPolicy::Fixed(16 * 1024));
    /// ```
    pub fn chunk_policy(&self) -> ChunkPolicy {
        self.graph().sizing.policy
    }

    /// Gives the archetype of exactly `B`'s components chunks of `bytes` bytes, whatever the
    /// policy. Registers `B`'s components.
    ///
    /// # Errors
    /// [`WorldError::InvalidChunkSize`] unless `bytes` is a power of two from 4 KiB to 1 MiB;
    /// [`WorldError::ArchetypeExists`] if that archetype was already created.
    ///
    /// ```
    /// # use ecs_core::{World, WorldError};
    /// let mut world = World::new();
    /// world.set_chunk_size_for::<(u32, char)>(64 * 1024).unwrap();
    /// let e = world.spawn((1u32, 'a'));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.layout().chunk_size(), 64 * 1024);
    /// let err = world.set_chunk_size_for::<(char, u32)>(4096).unwrap_err();
    /// assert!(matches!(err, WorldError::ArchetypeExists(_)));
    /// ```
    pub fn set_chunk_size_for<B: Bundle>(&mut self, bytes: usize) -> Result<(), WorldError> {
        check_size(bytes)?;
        let (_, components, archetypes) = self.parts_mut();
        let signature: Signature = bundle_ids::<B>(components).into_iter().collect();
        if let Some(id) = archetypes.find(&signature) {
            return Err(WorldError::ArchetypeExists(id));
        }
        archetypes.sizing.set_override(signature, bytes);
        Ok(())
    }

    /// Places the columns of archetypes created from now on in `order`; existing archetypes
    /// keep their layout. [`World::memory_report`] names the order each archetype got.
    ///
    /// ```
    /// # use ecs_core::{ColumnOrder, World};
    /// let mut world = World::new();
    /// let big = world.register_component::<u64>();
    /// world.set_column_order(ColumnOrder::First(vec![big]));
    /// let e = world.spawn((1u8, 2u64));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let col = arch.column(big).unwrap();
    /// assert_eq!(arch.layout().placement()[0], col);
    /// ```
    pub fn set_column_order(&mut self, order: ColumnOrder) {
        self.parts_mut().2.sizing.order = order;
    }

    /// Starts every column array of archetypes created from now on at a multiple of
    /// `bytes` (a power of two up to 4096), whatever its type's alignment, as Unity's
    /// chunks start each array on a cache line; 1 (the default) aligns each column for its
    /// type only (spare bytes of a full chunk still go to cache-line starts, but never at the
    /// cost of a row). A larger alignment may cost rows per chunk: the layout lab's question.
    ///
    /// # Errors
    /// [`WorldError::InvalidColumnAlignment`] for zero, a non-power of two or more than 4096;
    /// the setting is then unchanged.
    ///
    /// ```
    /// # use ecs_core::{World, WorldError};
    /// let mut world = World::new();
    /// world.set_column_alignment(64).unwrap();
    /// let e = world.spawn((1u8, 2u32));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let layout = arch.layout();
    /// assert!((0..2).all(|c| layout.offset(c) % 64 == 0));
    /// assert_eq!(world.column_alignment(), 64);
    /// assert_eq!(world.set_column_alignment(48), Err(WorldError::InvalidColumnAlignment(48)));
    /// ```
    pub fn set_column_alignment(&mut self, bytes: usize) -> Result<(), WorldError> {
        if !bytes.is_power_of_two() || bytes > crate::MIN_CHUNK_SIZE {
            return Err(WorldError::InvalidColumnAlignment(bytes));
        }
        self.parts_mut().2.sizing.column_align = bytes;
        Ok(())
    }

    /// The alignment every column array of new archetypes starts at (1: its type's own).
    ///
    /// ```
    /// # use ecs_core::World;
    /// assert_eq!(World::new().column_alignment(), 1);
    /// ```
    pub fn column_alignment(&self) -> usize {
        self.graph().sizing.column_align.max(1)
    }

    /// The column order for new archetypes.
    ///
    /// ```
    /// # use ecs_core::{ColumnOrder, World};
    /// assert_eq!(World::new().column_order(), &ColumnOrder::Registration);
    /// ```
    pub fn column_order(&self) -> &ColumnOrder {
        &self.graph().sizing.order
    }
}
