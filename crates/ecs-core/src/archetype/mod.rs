//! Archetypes: all entities with exactly one set of component types, stored in dense chunks.
//!
//! An archetype owns a list of [`Chunk`]s sharing one [`ChunkLayout`]. Rows are numbered across
//! chunks (row `r` is row `r % capacity` of chunk `r / capacity`) and kept dense: every chunk but
//! the last is full. Removing a row moves the archetype's last row into the hole, so removal is
//! O(columns) and iteration never meets a gap. An emptied trailing chunk is kept as the one spare
//! (or freed if there already is one), so an entity bouncing across a chunk boundary does not
//! allocate each time.

//! The folder reads top-down: this file defines [`Archetype`] and its plain accessors; each
//! sibling adds one area on top of it and none is imported back here:
//! - `rows`: row addresses, cell pointers and appending rows;
//! - `ticks`: which columns keep row ticks, and stamping them;
//! - `chunk_values`: chunk component values per chunk;
//! - `row_move`: the one row move and the one hole fill;
//! - `restore`, `check`: snapshot support and invariant checks;
//! - `graph`: [`Archetypes`](graph::Archetypes), the archetype graph (every archetype with its cached edges), and
//!   `structural`: spawn, insert, remove and despawn through those edges.

mod check;
mod chunk_values;
pub(crate) mod graph;
pub(crate) mod query_cache;
pub(crate) mod restore;
pub(crate) mod row_move;
pub(crate) mod rows;
mod structural;
mod ticks;

use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::chunk::layout::ChunkLayout;
use crate::chunk::policy::ChunkSizing;
use crate::chunk::pool::ChunkPool;
use crate::chunk::set::ChunkSetVersion;
use crate::chunk::values::{ChunkKinds, ChunkValues};
use crate::chunk::Chunk;
use crate::component::signature::Signature;
use crate::component::{ComponentId, ComponentInfo};
use crate::error::{ComponentError, RowTooLarge};
use crate::ids::ArchetypeId;
use crate::ids::RowTicks;

/// What an archetype keeps per component column.
#[derive(Clone, Copy)]
struct ColumnMeta {
    id: ComponentId,
    name: &'static str,
    size: usize,
    /// `layout.offset(c)` again, beside `size`: row moves read both for every column, and a
    /// plain slice read is cheaper there than the layout's inline-or-heap lookup.
    offset: usize,
    drop: Option<unsafe fn(*mut u8)>,
}

const ABSENT: u16 = u16::MAX;

/// The entities that have exactly the components of one [`Signature`].
///
/// # Invariants
/// 1. `columns` lists the ids of `signature` in ascending order; column `c` of every chunk
///    holds values of `columns[c]`'s type, laid out by `layout` (`columns[c].offset ==
///    layout.offset(c)`, `columns[c].size == layout.size(c)`).
/// 2. `column_of[id] == c` iff `columns[c].id == id`; other entries are `ABSENT`.
/// 3. Dense: every chunk but the last has `capacity` rows, the last has at least one, and
///    `len` is the sum of chunk lengths. No chunk is empty.
/// 4. Every chunk was allocated for `layout`.
/// 5. The `spare` chunk, if any, is empty (`len == 0`): `chunk_with_room` appends to it.
/// 6. The archetype agrees with the component registry ([`Components`](crate::component::Components)) of the world that owns
///    it: every `columns[c].id` is registered there, and `columns[c]`'s name, size and drop
///    glue are that [`ComponentInfo`]'s; `layout` is what [`ChunkLayout::new_ordered`] gives
///    for the infos' sizes and alignments and the layout's own placement (so each column is aligned for its type, and
///    [`Archetype::split_row`] divides by the capacity those types give).
///
/// 7. `enable_cols` lists, ascending, the columns whose component is enableable
///    ([`ComponentInfo::is_enableable`]), and `enable_ids` their ids; when it is non-empty,
///    every chunk in `chunks` (and the spare) has one enable mask per entry
///    (`ChunkMasks` invariant 1), with the bits of rows `0..len` only.
/// 8. Every chunk in `chunks` (and the spare), and every entry of `ready`, carries one value
///    per entry of `chunk_kinds` (`ChunkValues` invariant 1); a chunk entering `chunks` has
///    fresh defaults (`ChunkValues::is_fresh`): the values of `ready`, or the spare's once
///    made anew. Making them is user code (`Default`, and the stale values' `Drop`), so it
///    happens before anything else of a row push changes (`prepare_chunks`): a panic there
///    leaves the archetype as it was.
/// 9. `rows_epoch` grows by at least one whenever a row is added, removed or filled by
///    another row, or the rows are emptied or refilled (restore): a reader that recorded it
///    knows every entity is still in the row it saw while the value is unchanged
///    ([`Archetype::rows_epoch`]).
///
/// Cell addressing (`cell_at`), [`Archetype::split_row`] and the row moves trust 1, 4 and 6,
/// checking bounds only in debug builds; [`World::check_invariants`](crate::World::check_invariants)
/// checks every invariant here.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let e = world.spawn((1u32, 2u64));
/// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
/// assert_eq!((arch.len(), arch.signature().len()), (1, 2));
/// ```
#[repr(C, align(64))]
pub struct Archetype {
    // What a query run reads of every archetype it visits, first and together: one cache line
    // (`repr(C)` keeps this order; the alignment starts every archetype of the list on a line).
    // A fragmented world's run visits hundreds of archetypes per pass, each a line or more
    // apart, so each field here on a line of its own would be one more miss per archetype.
    chunks: Vec<Chunk>,
    enable_cols: Box<[usize]>,
    /// Whether any column keeps row ticks: row moves skip the tick bookkeeping otherwise.
    any_marks: bool,
    len: usize,
    /// Invariant 9: bumped by every change to which entity sits in which row.
    rows_epoch: u64,
    id: ArchetypeId,
    signature: Signature,
    columns: Box<[ColumnMeta]>,
    /// Inline up to 32 component ids: read on every query fetch, so kept in the dense
    /// archetype list rather than in a heap block of its own.
    column_of: SmallVec<[u16; 32]>,
    layout: ChunkLayout,
    spare: Option<Chunk>,
    /// The world's chunk memory, where new chunks of this archetype are carved.
    pool: Arc<ChunkPool>,
    /// The world's chunk set version, bumped by every change to `chunks` (see `chunk_set`).
    chunk_set: Arc<ChunkSetVersion>,
    enable_ids: Box<[ComponentId]>,
    /// The world's chunk component types (invariant 8).
    chunk_kinds: ChunkKinds,
    /// Chunk values made ahead for chunks that rows about to be added will open (invariant 8).
    ready: Vec<ChunkValues>,
    /// Per column, the row ticks its type keeps (`row_ticks`), as its registry says.
    marks: Box<[RowTicks]>,
}

impl Archetype {
    /// An empty archetype for the components in `infos` (ascending ids).
    pub(crate) fn new(
        id: ArchetypeId,
        infos: &[&ComponentInfo],
        sizing: &ChunkSizing,
        pool: &Arc<ChunkPool>,
        chunk_set: &Arc<ChunkSetVersion>,
        marks: &[RowTicks],
    ) -> Result<Self, RowTooLarge> {
        debug_assert_eq!(infos.len(), marks.len());
        debug_assert!(
            infos.windows(2).all(|w| w[0].id() < w[1].id()),
            "ids not ascending"
        );
        let layout = sizing.layout(infos)?;
        assert!(
            infos.len() < ABSENT as usize,
            "an archetype holds at most 65534 components"
        );
        let max_id = infos.last().map_or(0, |i| i.id().index() + 1);
        let mut column_of: SmallVec<[u16; 32]> = smallvec::smallvec![ABSENT; max_id];
        for (c, info) in infos.iter().enumerate() {
            column_of[info.id().index()] = c as u16;
        }
        Ok(Self {
            id,
            signature: infos.iter().map(|i| i.id()).collect(),
            columns: infos
                .iter()
                .enumerate()
                .map(|(c, i)| ColumnMeta {
                    id: i.id(),
                    name: i.name(),
                    size: i.size(),
                    offset: layout.offset(c),
                    drop: i.drop_fn(),
                })
                .collect(),
            column_of,
            layout,
            chunks: Vec::new(),
            spare: None,
            len: 0,
            rows_epoch: 0,
            pool: Arc::clone(pool),
            chunk_set: Arc::clone(chunk_set),
            enable_cols: (0..infos.len())
                .filter(|&c| infos[c].is_enableable())
                .collect(),
            enable_ids: infos
                .iter()
                .filter(|i| i.is_enableable())
                .map(|i| i.id())
                .collect(),
            chunk_kinds: ChunkKinds::from([]),
            ready: Vec::new(),
            marks: marks.into(),
            any_marks: marks.iter().any(|m| *m != RowTicks::NONE),
        })
    }

    /// This archetype's id.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let id = world.location(e).unwrap().archetype;
    /// assert_eq!(world.archetypes()[id.index()].id(), id);
    /// ```
    #[inline]
    pub fn id(&self) -> ArchetypeId {
        self.id
    }

    /// The component set.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert!(arch.signature().contains(world.component_id::<u32>().unwrap()));
    /// ```
    #[inline]
    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// Number of entities.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.spawn((2u32,));
    /// assert_eq!(world.archetypes()[world.location(e).unwrap().archetype.index()].len(), 2);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// A counter that changes whenever rows are added, removed or moved (spawn, despawn, a row
    /// moving in or out, a hole filled by the last row, clear, snapshot restore): while it is
    /// unchanged, every entity of this archetype is still in the row it was in. Value writes
    /// and enable toggles leave it alone; chunks may move in memory
    /// ([`World::compact`](crate::World::compact)) but keep their rows. (Clearing or restoring
    /// an archetype changes it even when the rows come back the same.)
    ///
    /// For caches built from row positions, such as a hierarchy's order.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = world.location(e).unwrap().archetype.index();
    /// let before = world.archetypes()[arch].rows_epoch();
    /// *world.get_mut::<u32>(e).unwrap() = 2; // a value: rows stay
    /// assert_eq!(world.archetypes()[arch].rows_epoch(), before);
    /// world.spawn((3u32,));
    /// assert_ne!(world.archetypes()[arch].rows_epoch(), before);
    /// ```
    #[inline]
    pub fn rows_epoch(&self) -> u64 {
        self.rows_epoch
    }

    /// The address of this archetype's first [`Chunk`] record, with the provenance of the
    /// chunk list itself ([`Vec::as_ptr`]: no reference to the list is made). The list holds
    /// [`Archetype::chunks`]`().len()` records from there.
    ///
    /// For caches of chunk positions, such as a query's flat chunk list: while the world's
    /// [`chunk_set_version`](crate::World::chunk_set_version) is unchanged the list neither
    /// moves nor changes, so `chunks_ptr().add(i)` for `i < chunks().len()` may be read as a
    /// `&Chunk` whenever the world is borrowed, even after `&mut World` calls in between that
    /// left the chunk lists alone (they may borrow chunks mutably, which does not take the
    /// list's own provenance away).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = world.location(e).unwrap().archetype.index();
    /// let first = world.archetypes()[arch].chunks_ptr();
    /// let version = world.chunk_set_version();
    /// *world.get_mut::<u32>(e).unwrap() = 2; // borrows the chunk mutably
    /// assert_eq!(world.chunk_set_version(), version);
    /// // SAFETY: the version is unchanged, so the list is where it was, with its one chunk;
    /// // `world` is borrowed shared while the reference lives.
    /// let chunk = unsafe { &*first };
    /// assert_eq!(chunk.entities(), [e]);
    /// ```
    #[inline]
    pub fn chunks_ptr(&self) -> *const Chunk {
        self.chunks.as_ptr()
    }

    /// Records that `chunks` changed (a chunk joined or left, the list moved, a block moved):
    /// every change to the list calls this, so that the world's chunk set version moves with it.
    #[inline]
    pub(crate) fn chunks_changed(&self) {
        self.chunk_set.bump();
    }

    /// Whether no entity lives here.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let id = world.location(e).unwrap().archetype;
    /// world.despawn(e).unwrap();
    /// assert!(world.archetypes()[id.index()].is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk layout shared by all chunks.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.layout().chunk_size(), world.chunk_size());
    /// assert!(arch.layout().capacity() > 1000);
    /// ```
    #[inline]
    pub fn layout(&self) -> &ChunkLayout {
        &self.layout
    }

    /// The chunks, dense (invariant 3).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::with_chunk_size(4096).unwrap();
    /// let e = world.spawn_batch((0..1000u64).map(|i| (i,))).next().unwrap();
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert!(arch.chunks().len() > 1);
    /// assert_eq!(arch.chunks().iter().map(|c| c.len()).sum::<usize>(), 1000);
    /// ```
    #[inline]
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// The chunks, for changing their tick state (a snapshot restore writes saved ticks
    /// back). Rows, lengths and columns are the archetype's invariants: callers leave them be.
    pub(crate) fn chunks_mut(&mut self) -> &mut [Chunk] {
        &mut self.chunks
    }

    /// Empty chunks kept for reuse (0 or 1, invariant 5).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::with_chunk_size(4096).unwrap();
    /// let e = world.spawn((1u64,));
    /// let id = world.location(e).unwrap().archetype;
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.archetypes()[id.index()].spare_chunks(), 1);
    /// ```
    pub fn spare_chunks(&self) -> usize {
        usize::from(self.spare.is_some())
    }

    /// Frees the spare chunk (compaction); returns whether there was one.
    pub(crate) fn release_spare(&mut self) -> bool {
        self.spare.take().is_some()
    }

    /// Moves every chunk whose block the pool is emptying to a kept block (compaction, see
    /// `Chunk::relocate`) and trims the chunk list to its length; returns the chunks moved.
    /// Only block addresses change: rows, masks and ticks stay, and invariants 1–7 with them.
    pub(crate) fn relocate_chunks(&mut self) -> usize {
        self.chunks_changed();
        let moved = self
            .chunks
            .iter_mut()
            .map(|c| usize::from(c.relocate()))
            .sum();
        self.chunks.shrink_to_fit();
        moved
    }

    /// Heap bytes of the archetype's bookkeeping besides its chunk blocks: the chunk records
    /// (the `Vec<Chunk>` and any spilled per-chunk tick lists) and the column tables. For the
    /// layout report; the signature and graph edges are counted there.
    pub(crate) fn record_bytes(&self) -> usize {
        let records = self.chunks.capacity() * size_of::<Chunk>()
            + self
                .chunks
                .iter()
                .chain(&self.spare)
                .map(Chunk::heap_bytes)
                .sum::<usize>();
        let column_of = if self.column_of.spilled() {
            self.column_of.capacity() * size_of::<u16>()
        } else {
            0
        };
        // `columns`, plus the layout's offsets, sizes and placement.
        records
            + column_of
            + self.columns.len() * (size_of::<ColumnMeta>() + 3 * size_of::<usize>())
    }

    /// Component ids, one per column, ascending.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 'a'));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let ids: Vec<_> = arch.component_ids().collect();
    /// assert_eq!(ids.len(), 2);
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// ```
    pub fn component_ids(&self) -> impl ExactSizeIterator<Item = ComponentId> + '_ {
        self.columns.iter().map(|c| c.id)
    }

    /// `(type name, size)` per column.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.component_names().collect::<Vec<_>>(), [("u32", 4)]);
    /// ```
    pub fn component_names(&self) -> impl ExactSizeIterator<Item = (&'static str, usize)> + '_ {
        self.columns.iter().map(|c| (c.name, c.size))
    }

    /// The column holding component `id`, if this archetype has it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let char_id = world.register_component::<char>();
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.column(world.component_id::<u32>().unwrap()), Some(0));
    /// assert_eq!(arch.column(char_id), None);
    /// ```
    #[inline]
    pub fn column(&self, id: ComponentId) -> Option<usize> {
        match self.column_of.get(id.index()) {
            Some(&c) if c != ABSENT => Some(c as usize),
            _ => None,
        }
    }

    /// Base address of column `col` in `chunk` (a chunk of this archetype).
    ///
    /// Computing the pointer is safe; reading or writing through it is the caller's business:
    /// rows `0..chunk.len()` are initialised values of the column's type.
    ///
    /// # Panics
    /// If `col` is out of range.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((7u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let base = arch.column_base(&arch.chunks()[0], 0).cast::<u32>();
    /// // SAFETY: row 0 of this chunk is an initialised `u32`, and nothing writes meanwhile.
    /// assert_eq!(unsafe { *base.as_ptr() }, 7);
    /// ```
    #[inline]
    pub fn column_base(&self, chunk: &Chunk, col: usize) -> NonNull<u8> {
        let ptr = chunk.column_at(self.columns[col].offset);
        // SAFETY: the chunk's base is non-null and a layout offset is below `chunk_size`, far
        // from wrapping to null.
        unsafe { NonNull::new_unchecked(ptr) }
    }

    /// The columns of enableable components, ascending; slot `s` of every chunk's
    /// [`Chunk::enable_bits`] belongs to column `enableable_columns()[s]`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Hidden;
    /// let mut world = World::new();
    /// world.register_enableable::<Hidden>();
    /// let e = world.spawn((1u32, Hidden));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// // Columns follow component ids: `Hidden` was registered first.
    /// assert_eq!(arch.enableable_columns(), [0]);
    /// ```
    #[inline]
    pub fn enableable_columns(&self) -> &[usize] {
        &self.enable_cols
    }

    /// The enable slot of column `col` (its index in [`Archetype::enableable_columns`]), if
    /// its component is enableable.
    ///
    /// ```
    /// # use ecs_core::World;
    /// struct Hidden;
    /// let mut world = World::new();
    /// world.register_enableable::<Hidden>();
    /// let e = world.spawn((1u32, Hidden));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!((arch.enable_slot(0), arch.enable_slot(1)), (Some(0), None));
    /// ```
    #[inline]
    pub fn enable_slot(&self, col: usize) -> Option<usize> {
        self.enable_cols.iter().position(|&c| c == col)
    }

    /// The column and enable slot of component `id` (`None`: not registered), named
    /// `component`, for a toggle of `entity`, a live entity of this archetype: the one place
    /// a toggle's errors are decided (`World::set_enabled`, `is_enabled`, `set_enabled_many`).
    ///
    /// # Errors
    /// [`ComponentError::MissingComponent`] if the archetype has no such column,
    /// [`ComponentError::NotEnableable`] if its component is not enableable.
    pub(crate) fn enable_column(
        &self,
        id: Option<ComponentId>,
        entity: crate::entity::Entity,
        component: &'static str,
    ) -> Result<(usize, usize), ComponentError> {
        let missing = ComponentError::MissingComponent { entity, component };
        let col = self.column(id.ok_or(missing)?).ok_or(missing)?;
        // Only enableable columns have a slot (invariant 7).
        let slot = self
            .enable_slot(col)
            .ok_or(ComponentError::NotEnableable { component })?;
        Ok((col, slot))
    }

    /// `chunks[c]` mutably, for the enable bookkeeping of row moves.
    #[inline]
    pub(crate) fn chunk_mut(&mut self, c: usize) -> &mut Chunk {
        &mut self.chunks[c]
    }

    /// Asks the CPU to start loading the first cache lines of every column of chunk `index`
    /// (if it exists), and to touch each page its rows occupy (see [`Chunk::prefetch_column`]),
    /// so a query finishing the previous chunk does not stall on the next one's first rows and
    /// page walks.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// arch.prefetch_chunk(0);
    /// arch.prefetch_chunk(99); // out of range: does nothing
    /// assert_eq!(arch.len(), 1);
    /// ```
    #[inline]
    pub fn prefetch_chunk(&self, index: usize) {
        if let Some(chunk) = self.chunks.get(index) {
            for meta in self.columns.iter() {
                chunk.prefetch_column(meta.offset, meta.size);
            }
        }
    }

    /// Splits an archetype row into (chunk index, row in chunk).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// let cap = arch.layout().capacity();
    /// assert_eq!(arch.split_row(cap + 3), (1, 3));
    /// ```
    #[inline]
    pub fn split_row(&self, row: usize) -> (usize, usize) {
        self.layout.split_row(row)
    }

    /// Chunk of archetype row `row`, for its enable bits.
    #[inline]
    pub(crate) fn chunk_of_row(&mut self, row: usize) -> &mut Chunk {
        let (chunk, _) = self.split_row(row);
        &mut self.chunks[chunk]
    }
}

/// The most components of one bundle whose cell pointers stay on the stack (the largest tuple
/// bundle); a derived bundle may hold more, which then take a heap path.
pub(crate) const MAX_BUNDLE: usize = 16;

impl Drop for Archetype {
    fn drop(&mut self) {
        self.clear();
    }
}

impl fmt::Debug for Archetype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Archetype")
            .field("id", &self.id)
            .field(
                "components",
                &self.columns.iter().map(|c| c.name).collect::<Vec<_>>(),
            )
            .field("len", &self.len)
            .field("chunks", &self.chunks.len())
            .finish()
    }
}
