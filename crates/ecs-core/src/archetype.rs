//! Archetypes: all entities with exactly one set of component types, stored in dense chunks.
//!
//! An archetype owns a list of [`Chunk`]s sharing one [`ChunkLayout`]. Rows are numbered across
//! chunks (row `r` is row `r % capacity` of chunk `r / capacity`) and kept dense: every chunk but
//! the last is full. Removing a row moves the archetype's last row into the hole, so removal is
//! O(columns) and iteration never meets a gap. An emptied trailing chunk is kept as the one spare
//! (or freed if there already is one), so an entity bouncing across a chunk boundary does not
//! allocate each time.

use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::bundle::Bundle;
use crate::chunk::{Chunk, ChunkLayout, ColumnSpec};
use crate::chunk_component::{self, Cell, ChunkKind, ChunkKinds, ChunkValues};
use crate::chunk_policy::ChunkSizing;
use crate::chunk_pool::ChunkPool;
use crate::component::{ComponentId, ComponentInfo, Components};
use crate::enable::ChunkMasks;
use crate::entity::Entity;
use crate::error::RowTooLarge;
use crate::ids::ArchetypeId;
use crate::row_ticks::RowMarks;
use crate::signature::Signature;

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
/// 6. The archetype agrees with the component registry ([`Components`]) of the world that owns
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
pub struct Archetype {
    id: ArchetypeId,
    signature: Signature,
    columns: Box<[ColumnMeta]>,
    /// Inline up to 32 component ids: read on every query fetch, so kept in the dense
    /// archetype list rather than in a heap block of its own.
    column_of: SmallVec<[u16; 32]>,
    layout: ChunkLayout,
    chunks: Vec<Chunk>,
    spare: Option<Chunk>,
    len: usize,
    /// The world's chunk memory, where new chunks of this archetype are carved.
    pool: Arc<ChunkPool>,
    enable_cols: Box<[usize]>,
    enable_ids: Box<[ComponentId]>,
    /// The world's chunk component types (invariant 8).
    chunk_kinds: ChunkKinds,
    /// Chunk values made ahead for chunks that rows about to be added will open (invariant 8).
    ready: Vec<ChunkValues>,
    /// Per column, the row marks its type keeps (`row_ticks`), as its registry says.
    marks: Box<[RowMarks]>,
    /// Whether any column keeps row marks: row moves skip the tick bookkeeping otherwise.
    any_marks: bool,
}

impl Archetype {
    /// An empty archetype for the components in `infos` (ascending ids).
    pub(crate) fn new(
        id: ArchetypeId,
        infos: &[&ComponentInfo],
        sizing: &ChunkSizing,
        pool: &Arc<ChunkPool>,
        marks: &[RowMarks],
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
            pool: Arc::clone(pool),
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
            any_marks: marks.iter().any(|m| *m != RowMarks::NONE),
        })
    }

    /// Switches on the row marks `marks` for column `col` in every chunk (and the spare).
    pub(crate) fn enable_marks(&mut self, col: usize, marks: RowMarks) {
        let want = self.marks[col].union(marks);
        if want == self.marks[col] {
            return;
        }
        self.marks[col] = want;
        self.any_marks = true;
        let (columns, cap) = (self.columns.len(), self.layout.capacity());
        for chunk in self.chunks.iter_mut().chain(self.spare.as_mut()) {
            chunk.enable_marks(columns, cap, col, want);
        }
    }

    /// Clamps old row ticks in every chunk (and the spare); see `World::check_change_ticks`.
    pub(crate) fn clamp_marks(&mut self, now: u64) {
        if self.any_marks {
            for chunk in self.chunks.iter_mut().chain(self.spare.as_mut()) {
                chunk.clamp_marks(now);
            }
        }
    }

    /// Whether some column of this archetype keeps row marks (a `Changed` or `Added` reader
    /// asked for its type). When none does, the chunk column tick a writer stores when it
    /// fetches a chunk is the whole record of its writes, so a query can skip per-row marking.
    /// Only `&mut World` switches marks on, so the answer holds for a whole query run.
    ///
    /// ```
    /// # use ecs_core::{RowMarks, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = world.location(e).unwrap().archetype.index();
    /// assert!(!world.archetypes()[arch].keeps_row_marks());
    /// let id = world.component_id::<u32>().unwrap();
    /// world.enable_row_marks(id, RowMarks::CHANGED);
    /// assert!(world.archetypes()[arch].keeps_row_marks());
    /// ```
    #[inline]
    pub fn keeps_row_marks(&self) -> bool {
        self.any_marks
    }

    /// The row marks column `col` keeps.
    ///
    /// ```
    /// # use ecs_core::{RowMarks, World};
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.row_marks(0), RowMarks::NONE);
    /// ```
    pub fn row_marks(&self, col: usize) -> RowMarks {
        self.marks[col]
    }

    /// Carries the row marks of row `from` of `src` to row `to` of `dst`, column by column
    /// along `src_to_dst` (`REMOVED`-free entries only), for a row moved between archetypes.
    #[inline]
    pub(crate) fn carry_marks(
        src: &Archetype,
        from: RowAddr,
        dst: &mut Archetype,
        to: RowAddr,
        src_to_dst: impl Iterator<Item = (usize, usize)>,
        now: u64,
    ) {
        if !dst.any_marks {
            return;
        }
        for (c, d) in src_to_dst {
            if dst.marks[d] != RowMarks::NONE {
                let ticks = src.chunks[from.chunk].row_marks(c, from.r, now);
                dst.chunks[to.chunk].set_row_marks(d, to.r, ticks, now);
            }
        }
    }

    /// Records that column `col` of rows `rows` (rows within chunk `chunk`) was written at
    /// `tick`: [`Archetype::stamp_row`] for one column and many rows of one chunk, stamping
    /// the chunk's column tick once.
    pub(crate) fn stamp_rows_changed(&mut self, chunk: usize, col: usize, rows: &[u32], tick: u64) {
        let chunk = &mut self.chunks[chunk];
        chunk.mark_changed(col, tick);
        if self.marks[col] != RowMarks::NONE {
            for &r in rows {
                let (_, added) = chunk.row_marks(col, r as usize, tick);
                chunk.set_row_marks(col, r as usize, (tick as u32, added), tick);
            }
        }
    }

    /// Records that the values of `cols` at `addr` were written at `tick` (and, if `added`,
    /// that the row gained them then).
    #[inline(always)]
    pub(crate) fn stamp_row(&mut self, addr: RowAddr, cols: &[u32], added: bool, tick: u64) {
        if self.any_marks {
            self.stamp_row_marks(addr, cols, added, tick);
            return;
        }
        // The common case, on every insert and remove: one chunk tick store per column.
        let chunk = &mut self.chunks[addr.chunk];
        for &c in cols {
            chunk.mark_changed(c as usize, tick);
        }
    }

    /// [`Archetype::stamp_row`] where some column keeps row marks.
    #[inline(never)]
    fn stamp_row_marks(&mut self, addr: RowAddr, cols: &[u32], added: bool, tick: u64) {
        let chunk = &mut self.chunks[addr.chunk];
        for &c in cols {
            let c = c as usize;
            chunk.mark_changed(c, tick);
            if self.marks[c] != RowMarks::NONE {
                let (_, old_added) = chunk.row_marks(c, addr.r, tick);
                let add = if added { tick as u32 } else { old_added };
                chunk.set_row_marks(c, addr.r, (tick as u32, add), tick);
            }
        }
    }

    /// Copies the row marks of the row at `from` to `to`, both of this archetype.
    #[inline(always)]
    fn move_marks(&mut self, from: RowAddr, to: RowAddr, now: u64) {
        if self.any_marks {
            self.move_row_marks(from, to, now);
        }
    }

    /// [`Archetype::move_marks`] where some column keeps row marks.
    #[inline(never)]
    fn move_row_marks(&mut self, from: RowAddr, to: RowAddr, now: u64) {
        for c in 0..self.columns.len() {
            if self.marks[c] != RowMarks::NONE {
                let ticks = self.chunks[from.chunk].row_marks(c, from.r, now);
                self.chunks[to.chunk].set_row_marks(c, to.r, ticks, now);
            }
        }
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

    /// Takes on the world's chunk component types when the archetype is new (it holds no
    /// chunk yet, so nothing needs a value).
    pub(crate) fn take_chunk_kinds(&mut self, kinds: ChunkKinds) {
        assert_eq!(
            self.chunk_value_holders(),
            0,
            "a new archetype holds no chunk"
        );
        self.chunk_kinds = kinds;
    }

    /// How many chunk value sets the archetype holds: chunks, the spare, and `ready`.
    pub(crate) fn chunk_value_holders(&self) -> usize {
        self.chunks.len() + usize::from(self.spare.is_some()) + self.ready.len()
    }

    /// Takes on `kinds`, the world's chunk component types after `kind` was registered: every
    /// holder gets its value of `kind` from `made` (invariant 8; no user code runs here).
    pub(crate) fn add_chunk_kind(
        &mut self,
        kinds: ChunkKinds,
        kind: &ChunkKind,
        made: &mut dyn Iterator<Item = Cell>,
    ) {
        let values = self
            .chunks
            .iter_mut()
            .chain(&mut self.spare)
            .map(Chunk::chunk_values_mut);
        for values in values.chain(&mut self.ready) {
            chunk_component::add_kind(values, kind, made);
        }
        self.chunk_kinds = kinds;
    }

    /// Runs now the user code that adding `rows` rows would run (chunk component `Default`s,
    /// and the `Drop`s of a reused spare's old values), so that the pushes themselves cannot
    /// panic: `World::spawn` calls it before an entity slot goes live. If it panics, the
    /// archetype is as consistent as before (invariant 8).
    pub(crate) fn prepare_rows(&mut self, rows: usize) {
        if self.chunk_kinds.is_empty() {
            return;
        }
        let cap = self.layout.capacity();
        let room = self.chunks.last().map_or(0, |c| cap - c.len());
        if rows > room {
            self.prepare_chunks((rows - room).div_ceil(cap));
        }
    }

    /// Runs now the user code a restore of `rows` rows into this archetype would run: fresh
    /// values made ahead for every chunk the rows fill (reused chunks and a stale spare swap
    /// theirs for these in [`Archetype::fill_empty`]). A panic here leaves the archetype
    /// consistent, before the restore changed anything.
    pub(crate) fn prepare_restore(&mut self, rows: usize) {
        if self.chunk_kinds.is_empty() {
            return;
        }
        let chunks = rows.div_ceil(self.layout.capacity());
        while self.ready.len() < chunks {
            self.ready.push(ChunkValues::make(&self.chunk_kinds));
        }
    }

    /// Makes sure the next `count` chunks to be pushed have fresh values: the spare's made
    /// anew (it is used first), then `ready` filled up.
    #[cold]
    fn prepare_chunks(&mut self, mut count: usize) {
        if count == 0 || self.chunk_kinds.is_empty() {
            return;
        }
        if let Some(spare) = &mut self.spare {
            if !spare.chunk_values().is_fresh() {
                // A panicking `Default` leaves the old values; a panicking `Drop` of an old
                // value comes after the spare already holds the fresh ones.
                let fresh = ChunkValues::make(&self.chunk_kinds);
                drop(std::mem::replace(spare.chunk_values_mut(), fresh));
            }
            count -= 1;
        }
        while self.ready.len() < count {
            self.ready.push(ChunkValues::make(&self.chunk_kinds));
        }
    }

    /// The slot of chunk component `id` in every chunk's
    /// [`Chunk::chunk_values`], if `id` is a chunk component.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Default)]
    /// struct Bounds(f32);
    /// let mut world = World::new();
    /// let id = world.register_chunk_component::<Bounds>();
    /// let e = world.spawn((1u32,));
    /// let arch = &world.archetypes()[world.location(e).unwrap().archetype.index()];
    /// assert_eq!(arch.chunk_value_slot(id), Some(0));
    /// ```
    #[inline]
    pub fn chunk_value_slot(&self, id: ComponentId) -> Option<usize> {
        chunk_component::slot_in(&self.chunk_kinds, id)
    }

    /// Frees the spare chunk (compaction); returns whether there was one.
    pub(crate) fn release_spare(&mut self) -> bool {
        self.spare.take().is_some()
    }

    /// Moves every chunk whose block the pool is emptying to a kept block (compaction, see
    /// `Chunk::relocate`) and trims the chunk list to its length; returns the chunks moved.
    /// Only block addresses change: rows, masks and ticks stay, and invariants 1–7 with them.
    pub(crate) fn relocate_chunks(&mut self) -> usize {
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
    /// [`Chunk::enable_masks`] belongs to column `enableable_columns()[s]`.
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

    /// The enableable component ids, ascending (for carrying bits across archetypes).
    #[inline]
    pub(crate) fn enable_ids(&self) -> &[ComponentId] {
        &self.enable_ids
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

    /// Where archetype row `row` lives: its chunk's base address and its row in that chunk.
    /// Computing this once per row saves a division per column in row moves.
    ///
    /// # Panics
    /// If `row` is past the last chunk.
    #[inline]
    pub(crate) fn addr(&self, row: usize) -> RowAddr {
        let (chunk, r) = self.split_row(row);
        RowAddr {
            row,
            chunk,
            data: self.chunks[chunk].data(),
            r,
        }
    }

    /// Whether `addr` (from [`Archetype::addr`] of this archetype) still names one of its
    /// chunks at the base address it recorded, and a row within capacity: what `Chunk`
    /// invariant 4 promises until that chunk is released. For debug assertions.
    #[inline]
    pub(crate) fn holds_addr(&self, addr: RowAddr) -> bool {
        addr.r < self.layout.capacity()
            && self
                .chunks
                .get(addr.chunk)
                .is_some_and(|chunk| chunk.data() == addr.data)
    }

    /// The entity id stored at `addr` (from [`Archetype::addr`] of this archetype).
    ///
    /// # Panics
    /// If `addr` is past the rows of its chunk.
    #[inline]
    pub(crate) fn entity_at(&self, addr: RowAddr) -> Entity {
        self.chunks[addr.chunk].entities()[addr.r]
    }

    /// [`Archetype::addr`] of the last row, without a division.
    ///
    /// # Panics
    /// If the archetype is empty.
    #[inline]
    pub(crate) fn last_addr(&self) -> RowAddr {
        let chunk = self.chunks.len() - 1;
        RowAddr {
            row: self.len - 1,
            chunk,
            data: self.chunks[chunk].data(),
            r: self.chunks[chunk].len() - 1,
        }
    }

    /// Pointer to the value of column `col` at `addr`.
    ///
    /// # Safety
    /// `addr` came from [`Archetype::addr`] of this archetype with no chunk released since,
    /// and `col` is in range.
    #[inline(always)]
    pub(crate) unsafe fn cell_at(&self, addr: RowAddr, col: usize) -> NonNull<u8> {
        debug_assert!(col < self.columns.len(), "column {col} out of range");
        debug_assert!(self.holds_addr(addr), "stale row address");
        // SAFETY: `col < columns.len()` (caller contract, checked in debug builds).
        let meta = unsafe { self.columns.get_unchecked(col) };
        let offset = meta.offset + addr.r * meta.size;
        // SAFETY: `addr.r < capacity` (from `split_row`), so the offset stays inside column
        // `col` of that chunk (`ChunkLayout` invariant 1); the chunk is still allocated (no
        // chunk released since: caller contract) at the address `addr` recorded (`Chunk`
        // invariant 4), both checked by `holds_addr` in debug builds.
        unsafe { addr.data.add(offset) }
    }

    /// Pointers to the cells of `cols` (at most [`MAX_BUNDLE`]) in the row at `addr`, in
    /// order: a bundle's cells, without a heap or `SmallVec` in the way.
    ///
    /// # Safety
    /// As [`Archetype::cell_at`], for every column in `cols`.
    #[inline(always)]
    pub(crate) unsafe fn cells(&self, addr: RowAddr, cols: &[u32]) -> RowCells {
        assert!(
            cols.len() <= MAX_BUNDLE,
            "a bundle has at most {MAX_BUNDLE} components"
        );
        let mut ptrs = [NonNull::dangling(); MAX_BUNDLE];
        for (p, &c) in ptrs.iter_mut().zip(cols) {
            // SAFETY: forwarded caller contract.
            *p = unsafe { self.cell_at(addr, c as usize) };
        }
        RowCells {
            ptrs,
            len: cols.len(),
        }
    }

    /// Pointer to the value of column `col` at archetype row `row`.
    ///
    /// # Safety
    /// `row < self.len` (or the row being built by [`Archetype::push_row`]), `col` in range.
    #[inline]
    pub(crate) unsafe fn cell(&self, row: usize, col: usize) -> NonNull<u8> {
        // SAFETY: forwarded caller contract; `addr` panics rather than leave the chunks.
        unsafe { self.cell_at(self.addr(row), col) }
    }

    /// Element size of column `col`.
    #[inline(always)]
    pub(crate) fn column_size(&self, col: usize) -> usize {
        self.columns[col].size
    }

    /// Chunk of archetype row `row`, for its enable bits.
    #[inline]
    pub(crate) fn chunk_of_row(&mut self, row: usize) -> &mut Chunk {
        let (chunk, _) = self.split_row(row);
        &mut self.chunks[chunk]
    }

    /// Appends a row for `entity` and returns its address (`.row()` is its index). The component
    /// cells of the new row are uninitialised: the caller must write every column before the
    /// row is read or removed.
    #[inline]
    pub(crate) fn push_row(&mut self, entity: Entity, tick: u64) -> RowAddr {
        let row = self.len;
        let masked = !self.enable_cols.is_empty();
        let chunk = self.chunk_with_room(tick);
        let r = chunk.len();
        // SAFETY: `chunk_with_room` returned a chunk with `len < capacity`, so row `r` of the
        // entity column is inside the allocation.
        unsafe { chunk.entity_ptr().add(r).write(entity) };
        chunk.set_len(r + 1);
        if masked {
            // A new row starts enabled; a moving row's bits are then copied by `carry_bits`.
            chunk.enable_masks_mut().enable_rows(r, r + 1);
        }
        chunk.mark_structural(tick);
        let data = chunk.data();
        self.len += 1;
        RowAddr {
            row,
            // `chunk_with_room` returns the last chunk: no division needed.
            chunk: self.chunks.len() - 1,
            data,
            r,
        }
    }

    /// The last chunk if it has room, else a new (or the spare) chunk pushed at the end.
    #[inline]
    pub(crate) fn chunk_with_room(&mut self, tick: u64) -> &mut Chunk {
        let cap = self.layout.capacity();
        if self.chunks.last().is_none_or(|c| c.len() == cap) {
            self.push_chunk(tick);
        }
        self.chunks.last_mut().expect("a chunk was just ensured")
    }

    /// Appends the spare chunk, or a new one; once per `capacity` rows, so kept out of line.
    #[cold]
    #[inline(never)]
    fn push_chunk(&mut self, tick: u64) {
        // Invariant 8: the user code first, while nothing has changed.
        self.prepare_chunks(1);
        let chunk = match self.spare.take() {
            Some(mut spare) => {
                spare.mark_structural(tick);
                spare.reset_marks(tick);
                for col in 0..self.columns.len() {
                    spare.mark_changed(col, tick);
                }
                spare
            }
            None => Chunk::new(&self.layout, tick, &self.pool, &self.marks),
        };
        let mut chunk = chunk;
        if chunk.enable_masks().len() != self.enable_cols.len() {
            *chunk.enable_masks_mut() =
                ChunkMasks::new(self.enable_cols.len(), self.layout.capacity());
        }
        if !self.chunk_kinds.is_empty() {
            // A reused spare was made fresh above; a new chunk takes values made ahead.
            if !chunk.chunk_values().is_fresh() {
                *chunk.chunk_values_mut() = self.ready.pop().expect("prepared above");
            }
            chunk.chunk_values_mut().mark_used();
        }
        self.chunks.push(chunk);
    }

    /// Appends rows a chunk at a time: for each new archetype row, `next` returns the row's
    /// entity and bundle (or `None` to stop), and the bundle is written with typed stores into
    /// column pointers computed once per chunk.
    ///
    /// If `next` panics, the rows written so far stay (lengths are committed by a guard).
    ///
    /// # Safety
    /// `cols[i]` is the column of bundle element `i`'s type in this archetype, and `cols`
    /// covers every column exactly once.
    pub(crate) unsafe fn extend_rows<B: Bundle>(
        &mut self,
        tick: u64,
        cols: &[u32],
        mut next: impl FnMut(usize) -> Option<(Entity, B)>,
    ) {
        debug_assert_eq!(cols.len(), self.columns.len());
        let cap = self.layout.capacity();
        loop {
            let start = self.chunk_with_room(tick).len();
            let chunk = self.chunks.last().expect("just ensured");
            let bases: SmallVec<[NonNull<u8>; 12]> = cols
                .iter()
                .map(|&c| self.column_base(chunk, c as usize))
                .collect();
            let ids = chunk.entity_ptr();
            let mut commit = CommitRows {
                arch: self,
                written: 0,
                tick,
            };
            for r in start..cap {
                let Some((entity, bundle)) = next(commit.arch.len + commit.written) else {
                    return;
                };
                // SAFETY: `r < cap` keeps both stores inside the last chunk's columns, whose
                // rows `start..` are uninitialised; `cols` maps element `i` to its column
                // (caller contract). The guard then counts the row as initialised.
                unsafe {
                    ids.add(r).write(entity);
                    bundle.write_row(&bases, r);
                }
                commit.written += 1;
            }
        }
    }

    /// Fills the hole at `hole` (an [`Archetype::addr`] of this archetype), whose values the
    /// caller has already moved out, with the last row. Returns the entity that moved into the
    /// hole, if any.
    ///
    /// # Safety
    /// `hole` is the address of a row below `self.len`, and every component value of that row
    /// has been moved out or dropped.
    #[inline(always)]
    pub(crate) unsafe fn fill_hole(&mut self, hole: RowAddr, tick: u64) -> Option<Entity> {
        let last = self.len - 1;
        debug_assert!(hole.row <= last);
        if !self.enable_cols.is_empty() {
            let from = self.last_addr();
            crate::chunk::retire_row(&mut self.chunks, (from.chunk, from.r), (hole.chunk, hole.r));
        }
        let moved = if hole.row != last {
            let (from, to) = (self.last_addr(), hole);
            for col in 0..self.columns.len() {
                // SAFETY: both rows are below `len` (caller contract); they differ, so the cells
                // do not overlap; the last row is initialised and about to be forgotten.
                unsafe {
                    let src = self.cell_at(from, col);
                    let dst = self.cell_at(to, col);
                    copy_value(src.as_ptr(), dst.as_ptr(), self.column_size(col));
                }
            }
            self.move_marks(from, to, tick);
            Some(self.move_entity_id(from, to, tick))
        } else {
            None
        };
        self.pop_last_row();
        moved
    }

    /// Swaps `row` with the last row and detaches it: afterwards `len` is one smaller, the
    /// entity that moved into `row` is returned, and the removed values sit just past the end,
    /// still initialised, until [`Archetype::drop_detached`] drops them.
    ///
    /// Splitting removal in two lets the world fix entity locations *before* user `Drop` code
    /// runs, so a panicking `Drop` leaves a consistent world.
    ///
    /// # Safety
    /// `row < self.len`. The next call on this archetype must be `drop_detached`.
    pub(crate) unsafe fn detach_row(&mut self, row: usize, tick: u64) -> Option<Entity> {
        debug_assert!(row < self.len);
        let last = self.len - 1;
        if !self.enable_cols.is_empty() {
            // The detached row ends up past `len`: its bits go, the last row's move.
            let (from, to) = (self.split_row(last), self.split_row(row));
            crate::chunk::retire_row(&mut self.chunks, from, to);
        }
        let moved = if row != last {
            let (from, to) = (self.addr(last), self.addr(row));
            for col in 0..self.columns.len() {
                // SAFETY: both rows are initialised, below `len`, and distinct.
                unsafe {
                    let a = self.cell_at(from, col);
                    let b = self.cell_at(to, col);
                    std::ptr::swap_nonoverlapping(a.as_ptr(), b.as_ptr(), self.columns[col].size);
                }
            }
            self.move_marks(from, to, tick);
            Some(self.move_entity_id(from, to, tick))
        } else {
            None
        };
        self.len -= 1;
        let (chunk, r) = self.split_row(last);
        self.chunks[chunk].set_len(r);
        moved
    }

    /// Drops the values left by [`Archetype::detach_row`] and releases an emptied last chunk.
    ///
    /// If a `Drop` panics, the remaining values of that row leak; the archetype stays
    /// consistent either way.
    ///
    /// # Safety
    /// Called once, right after `detach_row`.
    pub(crate) unsafe fn drop_detached(&mut self) {
        let row = self.len;
        let guard = ReleaseEmptyTail(self);
        for col in 0..guard.0.columns.len() {
            if let Some(drop) = guard.0.columns[col].drop {
                // SAFETY: `detach_row` left row `len` initialised (caller contract), in the
                // still-allocated last chunk; each value is dropped once.
                unsafe { drop(guard.0.cell(row, col).as_ptr()) }
            }
        }
    }

    /// Copies the entity id of row `from` to row `to`, returning it.
    fn move_entity_id(&mut self, from: RowAddr, to: RowAddr, tick: u64) -> Entity {
        // SAFETY: both addresses come from `addr` / `last_addr` of rows below `len` with no chunk
        // released since, so each points into an initialised row of its chunk's entity column
        // (at offset 0), and `to` is writable through `&mut self`.
        let entity = unsafe {
            let entity = from.data.cast::<Entity>().add(from.r).read();
            to.data.cast::<Entity>().add(to.r).write(entity);
            entity
        };
        self.chunks[to.chunk].mark_structural(tick);
        entity
    }

    /// Forgets the last row (its values were moved elsewhere) and releases an emptied chunk.
    #[inline]
    fn pop_last_row(&mut self) {
        self.len -= 1;
        let chunk = self.chunks.last_mut().expect("a row implies a chunk");
        chunk.set_len(chunk.len() - 1);
        if chunk.is_empty() {
            self.release_empty_tail();
        }
    }

    /// Restores invariant 3 when the last chunk became empty.
    #[cold]
    fn release_empty_tail(&mut self) {
        if self.chunks.last().is_some_and(Chunk::is_empty) {
            let chunk = self.chunks.pop();
            if self.spare.is_none() {
                self.spare = chunk;
            }
        }
    }

    /// Drops every row. If a `Drop` panics, the remaining values leak and the archetype is left
    /// empty and consistent.
    pub(crate) fn clear(&mut self) {
        let chunks = std::mem::take(&mut self.chunks);
        self.len = 0;
        if self.columns.iter().all(|c| c.drop.is_none()) {
            // Nothing to drop; keep one chunk as the spare, emptied: `chunk_with_room` appends
            // to a spare at its `len`, so stale rows left in it would come back to life.
            let first = chunks.into_iter().next().map(|mut c| {
                c.set_len(0);
                c.enable_masks_mut().clear();
                c
            });
            self.spare = self.spare.take().or(first);
            return;
        }
        for chunk in &chunks {
            for (col, meta) in self.columns.iter().enumerate() {
                let Some(drop) = meta.drop else { continue };
                let base = self.column_base(chunk, col);
                for r in 0..chunk.len() {
                    // SAFETY: rows `0..len` of the chunk are initialised (`Chunk` invariant
                    // 2); the chunk was detached above, so each value is dropped exactly once
                    // even if a later `drop` unwinds (the rest then leak).
                    unsafe { drop(base.as_ptr().add(r * meta.size)) }
                }
            }
        }
    }

    /// Asserts invariant 6 against `components`, the registry of the world that owns this
    /// archetype, and the layout half of invariant 1.
    pub(crate) fn check_registry(&self, components: &Components) {
        let id = self.id;
        let mut specs = Vec::with_capacity(self.columns.len());
        for (c, meta) in self.columns.iter().enumerate() {
            assert!(
                meta.id.index() < components.len(),
                "{id:?}: column {c} has unregistered component {:?}",
                meta.id
            );
            let info = components.info(meta.id);
            assert_eq!(info.id(), meta.id, "{id:?}: registry entry of column {c}");
            assert_eq!(meta.name, info.name(), "{id:?}: type of column {c}");
            assert_eq!(meta.size, info.size(), "{id:?}: size of column {c}");
            assert_eq!(
                self.marks[c],
                components.row_marks(meta.id),
                "{id:?}: row marks of column {c}"
            );
            let same_drop = match (meta.drop, info.drop_fn()) {
                (None, None) => true,
                (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
                _ => false,
            };
            assert!(same_drop, "{id:?}: drop glue of column {c}");
            assert_eq!(
                info.is_enableable(),
                self.enable_slot(c).is_some(),
                "{id:?}: enableable flag of column {c}"
            );
            assert_eq!(
                (meta.offset, meta.size),
                (self.layout.offset(c), self.layout.size(c)),
                "{id:?}: column {c} disagrees with the layout"
            );
            specs.push(ColumnSpec {
                size: info.size(),
                align: info.align(),
            });
        }
        let fresh =
            ChunkLayout::new_ordered(self.layout.chunk_size(), &specs, self.layout.placement())
                .expect("an archetype's row fits its chunk");
        assert_eq!(
            fresh.capacity(),
            self.layout.capacity(),
            "{id:?}: capacity disagrees with the registry's types"
        );
        assert_eq!(
            fresh.align(),
            self.layout.align(),
            "{id:?}: chunk alignment disagrees with the registry's types"
        );
        for c in 0..specs.len() {
            assert_eq!(
                fresh.offset(c),
                self.layout.offset(c),
                "{id:?}: offset of column {c} disagrees with the registry's types"
            );
        }
    }

    /// Empties the archetype without dropping anything, moving its chunks (emptied) to `into`
    /// for [`Archetype::fill_empty`] to reuse: a restore then neither frees nor allocates.
    /// Values of columns that need a drop would leak, so it is for drop-free archetypes.
    ///
    /// The chunks go to `into` last one first, so that popping them hands them back in their
    /// old order, each with the number of rows it held: their entity ids stay in place (only
    /// the length is reset), which lets a restore into the same shape skip rows that keep
    /// their entity.
    pub(crate) fn take_chunks(&mut self, into: &mut Vec<EmptiedChunk>) {
        debug_assert!(self.columns.iter().all(|c| c.drop.is_none()));
        self.len = 0;
        into.extend(self.chunks.drain(..).rev().map(|mut chunk| {
            let held = chunk.len();
            chunk.set_len(0);
            // No row: the bulk stamp no longer stands for anything (`push_chunk` resets the
            // row ticks when the chunk comes back into use).
            chunk.enable_masks_mut().clear();
            EmptiedChunk { chunk, held }
        }));
    }

    /// Fills this empty archetype with `rows` rows, a chunk at a time (for restoring a
    /// snapshot): `fill(ids, held, bases, first, count)` gets the chunk's entity-id column,
    /// how many of its leading entity ids are still those the chunk held before it was emptied
    /// (initialised `Entity` values, readable until overwritten; 0 for a fresh chunk), the base
    /// of each of its component columns (in column order) and the archetype rows
    /// `first..first + count` the chunk takes, and writes rows `0..count` of each. Chunks are
    /// popped from `reuse` (chunks [`Archetype::take_chunks`] took from this archetype, so in
    /// their old order) before the spare or a new one is used.
    ///
    /// # Safety
    /// - The archetype is empty.
    /// - Every chunk in `reuse` was taken from this archetype by `take_chunks`.
    /// - `fill` initialises rows `0..count` of the entity column (rows below `held` may be
    ///   left as they are) and of every column it is handed, with values of each column's
    ///   type, and does not unwind.
    ///
    /// No user code runs if [`Archetype::prepare_restore`] was called for `rows` since the
    /// last chunk push: a reused chunk's old chunk values are swapped for fresh ones made
    /// there and pushed onto `stale`, for the caller to drop once the restore is complete.
    pub(crate) unsafe fn fill_empty(
        &mut self,
        tick: u64,
        rows: usize,
        reuse: &mut Vec<EmptiedChunk>,
        stale: &mut Vec<ChunkValues>,
        mut fill: impl FnMut(NonNull<Entity>, usize, &[NonNull<u8>], usize, usize),
    ) {
        debug_assert!(self.is_empty());
        let cap = self.layout.capacity();
        let mut first = 0;
        while first < rows {
            let count = (rows - first).min(cap);
            // Each chunk pushed here takes fresh values made by `prepare_restore` (one per
            // chunk at most), so `push_chunk` runs no user code; the old ones go to `stale`.
            let mut freshen = |chunk: &mut Chunk, ready: &mut Vec<ChunkValues>| {
                if !chunk.chunk_values().is_fresh() && !self.chunk_kinds.is_empty() {
                    let fresh = ready.pop().expect("made by prepare_restore");
                    stale.push(std::mem::replace(chunk.chunk_values_mut(), fresh));
                }
            };
            let held = match reuse.pop() {
                // An emptied chunk of this archetype: a valid spare (invariants 4 and 5), put
                // in ahead of the current spare so chunk `k` comes back as chunk `k`.
                Some(EmptiedChunk { mut chunk, held }) => {
                    freshen(&mut chunk, &mut self.ready);
                    let spare = self.spare.replace(chunk);
                    self.push_chunk(tick);
                    self.spare = spare;
                    held
                }
                None => {
                    if let Some(spare) = &mut self.spare {
                        freshen(spare, &mut self.ready);
                    }
                    self.push_chunk(tick);
                    0
                }
            };
            let chunk = self.chunks.last().expect("just pushed");
            debug_assert!(chunk.is_empty(), "a pushed chunk is new or the empty spare");
            let bases: SmallVec<[NonNull<u8>; 12]> = (0..self.columns.len())
                .map(|c| self.column_base(chunk, c))
                .collect();
            fill(chunk.entity_ptr(), held, &bases, first, count);
            let chunk = self.chunks.last_mut().expect("just pushed");
            chunk.set_len(count);
            chunk.enable_masks_mut().enable_rows(0, count);
            chunk.mark_structural(tick);
            self.len += count;
            first += count;
        }
    }

    /// Asserts invariants 1–3 and 5; `entity_at` checks that the entity table points back here.
    pub(crate) fn check(&self, mut entity_at: impl FnMut(Entity, usize)) {
        let ids: Vec<_> = self.columns.iter().map(|c| c.id).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "{:?}: columns not ascending",
            self.id
        );
        assert_eq!(
            self.signature,
            ids.iter().copied().collect(),
            "{:?}: signature",
            self.id
        );
        for (c, id) in ids.iter().enumerate() {
            assert_eq!(self.column(*id), Some(c), "{:?}: column map", self.id);
        }
        let absent = self.column_of.iter().filter(|&&c| c == ABSENT).count();
        assert_eq!(
            absent + ids.len(),
            self.column_of.len(),
            "{:?}: stray column map",
            self.id
        );
        let cap = self.layout.capacity();
        let mut total = 0;
        for (i, chunk) in self.chunks.iter().enumerate() {
            let last = i + 1 == self.chunks.len();
            assert!(chunk.len() <= cap, "{:?}: chunk {i} over capacity", self.id);
            assert!(
                last || chunk.len() == cap,
                "{:?}: chunk {i} not full",
                self.id
            );
            assert!(!chunk.is_empty(), "{:?}: empty chunk {i} kept", self.id);
            chunk.check_marks(self.columns.len(), cap, &self.marks);
            let masks = chunk.enable_masks();
            assert_eq!(
                masks.len(),
                self.enable_cols.len(),
                "{:?}: chunk {i} enable masks",
                self.id
            );
            masks.check(chunk.len(), &|s| {
                format!("{:?}: chunk {i} enable slot {s}", self.id)
            });
            chunk
                .chunk_values()
                .check(&self.chunk_kinds, &|| format!("{:?}: chunk {i}", self.id));
            for (r, &e) in chunk.entities().iter().enumerate() {
                entity_at(e, i * cap + r);
            }
            total += chunk.len();
        }
        assert_eq!(total, self.len, "{:?}: len", self.id);
        assert!(
            self.spare.as_ref().is_none_or(Chunk::is_empty),
            "{:?}: spare chunk holds rows",
            self.id
        );
        if let Some(spare) = &self.spare {
            spare
                .enable_masks()
                .check(0, &|s| format!("{:?}: spare enable slot {s}", self.id));
            spare
                .chunk_values()
                .check(&self.chunk_kinds, &|| format!("{:?}: spare", self.id));
        }
        for (i, values) in self.ready.iter().enumerate() {
            values.check(&self.chunk_kinds, &|| {
                format!("{:?}: ready values {i}", self.id)
            });
            assert!(
                values.is_fresh(),
                "{:?}: ready values {i} are not fresh",
                self.id
            );
        }
        let expect: Vec<usize> = (0..self.columns.len())
            .filter(|&c| self.enable_ids.contains(&self.columns[c].id))
            .collect();
        assert_eq!(*self.enable_cols, *expect, "{:?}: enable columns", self.id);
    }
}

/// The most components one bundle (a tuple) can hold.
pub(crate) const MAX_BUNDLE: usize = 12;

/// A chunk [`Archetype::take_chunks`] emptied for a snapshot restore.
///
/// # Invariants
/// `chunk` has length 0 and `held <= capacity`; rows `0..held` of its entity column still
/// hold the ids (initialised `Entity` values) of the rows it held when it was taken.
pub(crate) struct EmptiedChunk {
    chunk: Chunk,
    held: usize,
}

/// The cell pointers [`Archetype::cells`] returns; derefs to a slice.
pub(crate) struct RowCells {
    ptrs: [NonNull<u8>; MAX_BUNDLE],
    len: usize,
}

impl std::ops::Deref for RowCells {
    type Target = [NonNull<u8>];

    #[inline(always)]
    fn deref(&self) -> &[NonNull<u8>] {
        &self.ptrs[..self.len]
    }
}

/// Where an archetype row lives: its row index, its chunk's index and base address, and its row
/// within that chunk; see [`Archetype::addr`].
#[derive(Clone, Copy)]
pub(crate) struct RowAddr {
    row: usize,
    chunk: usize,
    data: NonNull<u8>,
    r: usize,
}

impl RowAddr {
    /// The archetype row this addresses.
    #[inline]
    pub(crate) fn row(self) -> usize {
        self.row
    }

    /// The index of the row's chunk in its archetype.
    #[inline]
    pub(crate) fn chunk(self) -> usize {
        self.chunk
    }

    /// The row within its chunk.
    #[inline]
    pub(crate) fn r(self) -> usize {
        self.r
    }
}

/// Copies one `size`-byte value. Common component sizes get a fixed-size copy, which compiles to
/// a few moves instead of a `memcpy` call: row moves copy one value per column.
///
/// # Safety
/// `src` is valid for reads and `dst` for writes of `size` bytes, and they do not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_value(src: *const u8, dst: *mut u8, size: usize) {
    use std::ptr::copy_nonoverlapping as copy;
    // SAFETY: every arm copies exactly `size` bytes (caller contract).
    unsafe {
        match size {
            0 => {}
            4 => copy(src, dst, 4),
            8 => copy(src, dst, 8),
            12 => copy(src, dst, 12),
            16 => copy(src, dst, 16),
            24 => copy(src, dst, 24),
            32 => copy(src, dst, 32),
            64 => copy(src, dst, 64),
            _ => copy(src, dst, size),
        }
    }
}

/// Adds `written` rows to the last chunk and to the archetype when dropped, also while
/// unwinding, so a panicking bundle iterator leaves every written row counted; and stamps the
/// chunk's columns and structure with `tick`, so change filters see the new rows also when
/// they went into a chunk that already held rows.
struct CommitRows<'a> {
    arch: &'a mut Archetype,
    written: usize,
    tick: u64,
}

impl Drop for CommitRows<'_> {
    fn drop(&mut self) {
        let chunk = self
            .arch
            .chunks
            .last_mut()
            .expect("rows are written into a chunk");
        let start = chunk.len();
        chunk.set_len(start + self.written);
        chunk
            .enable_masks_mut()
            .enable_rows(start, start + self.written);
        if self.written > 0 {
            let tick = self.tick;
            chunk.mark_structural(tick);
            for col in 0..self.arch.columns.len() {
                chunk.mark_changed(col, tick);
                if self.arch.marks[col] != RowMarks::NONE {
                    for r in start..start + self.written {
                        chunk.set_row_marks(col, r, (tick as u32, tick as u32), tick);
                    }
                }
            }
        }
        self.arch.len += self.written;
        self.arch.release_empty_tail();
    }
}

/// Releases an emptied trailing chunk when dropped, also while unwinding.
struct ReleaseEmptyTail<'a>(&'a mut Archetype);

impl Drop for ReleaseEmptyTail<'_> {
    fn drop(&mut self) {
        self.0.release_empty_tail();
    }
}

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

// ----- enable bits of rows that move between archetypes, and snapshot support ---------------

/// Copies the enable bit of every enableable column that row `from` of `src` and row `to`
/// of `dst` share: a row moving to another archetype keeps its bits (`to` was just pushed,
/// enabled).
#[inline(always)]
pub(crate) fn carry_row_bits(src: &Archetype, from: usize, dst: &mut Archetype, to: usize) {
    // Checked here, inlined into every move, so archetypes without enableable types (most)
    // pay two loads and no call.
    if dst.enable_ids().is_empty() || src.enable_ids().is_empty() {
        return;
    }
    carry_enable_bits(src, from, dst, to);
}

/// The body of [`carry_row_bits`] for archetypes that both keep enable bits.
#[inline(never)]
fn carry_enable_bits(src: &Archetype, from: usize, dst: &mut Archetype, to: usize) {
    let (sc, sr) = src.split_row(from);
    let (dc, dr) = dst.split_row(to);
    let src_chunk = &src.chunks()[sc];
    for d in 0..dst.enable_ids().len() {
        if let Ok(s) = src.enable_ids().binary_search(&dst.enable_ids()[d]) {
            let bit = src_chunk.enable_masks().get(s).get(sr);
            dst.chunk_mut(dc).enable_masks_mut().get_mut(d).set(dr, bit);
        }
    }
}

/// Snapshot support: appends to `out` the rows of `arch` (numbered from `first_row`, in chunk
/// order) whose enable slot `slot` is off.
pub(crate) fn disabled_rows(arch: &Archetype, slot: usize, first_row: usize, out: &mut Vec<u32>) {
    let mut base = first_row;
    for chunk in arch.chunks() {
        let mask = chunk.enable_masks().get(slot);
        if mask.count() < chunk.len() {
            out.extend(
                (0..chunk.len())
                    .filter(|&r| !mask.get(r))
                    .map(|r| (base + r) as u32),
            );
        }
        base += chunk.len();
    }
}

/// Snapshot support: switches off column `col` (enableable) in the given rows of `arch`.
///
/// # Panics
/// If `col` is not enableable or a row is out of range (a snapshot's rows are checked first).
pub(crate) fn disable_rows(arch: &mut Archetype, col: usize, rows: &[u32]) {
    let slot = arch
        .enable_slot(col)
        .expect("checked while planning: the column is enableable");
    for &row in rows {
        let (_, r) = arch.split_row(row as usize);
        arch.chunk_of_row(row as usize)
            .enable_masks_mut()
            .get_mut(slot)
            .set(r, false);
    }
}
