//! A report of how a world's archetypes use their chunks, and of the world's memory.
//!
//! [`World::memory_report`](crate::World::memory_report) gathers it as plain data: per archetype its chunk
//! size, column order and fill; per column its offset, alignment achieved, the padding before
//! it and what one full pass over it touches; and the world's heap bytes by kind. `Display`
//! prints tables; [`WorldLayout::to_csv`] and [`WorldLayout::to_json`] export the same data.
//! Building it is O(archetypes × columns + chunks); it allocates only the report.

use super::memory::WorldMemory;
use crate::archetype::Archetype;
use crate::chunk::layout::ColumnSpec;
use crate::chunk::policy::ChunkPolicy;
use crate::entity::Entity;
use crate::ids::ArchetypeId;
use crate::World;

/// Bytes of one memory page, for the footprint estimate.
const PAGE: usize = 4096;

/// What reading every row of something once touches: its bytes, and the *distinct* cache
/// lines and 4 KiB pages they lie in, counted from the chunks' real addresses (a line or page
/// two columns, or two small chunks, share counts once).
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::with_chunk_size(4096).unwrap();
/// world.spawn_batch((0..256u64).map(|i| (i,)));
/// let col = &world.memory_report().archetypes[0].columns[0];
/// assert_eq!(col.pass.bytes, 256 * 8);
/// assert!(col.pass.cache_lines >= 256 * 8 / 64);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes of row data read.
    pub bytes: usize,
    /// Distinct 64-byte cache lines those bytes lie in.
    pub cache_lines: usize,
    /// Distinct 4 KiB pages (estimate, see above).
    pub pages: usize,
}

impl Footprint {
    /// The footprint of the byte ranges `ranges` (`(start, end)` addresses, end excluded;
    /// empty ones ignored), lines and pages counted once however many ranges touch them: for
    /// comparing a layout with data kept elsewhere (two `Vec`s, say).
    ///
    /// ```
    /// # use ecs_core::Footprint;
    /// let f = Footprint::of_ranges(&[(0, 100), (64, 200), (8192, 8193)]);
    /// assert_eq!((f.bytes, f.cache_lines, f.pages), (237, 5, 2));
    /// ```
    pub fn of_ranges(ranges: &[(usize, usize)]) -> Self {
        let ranges: Vec<(usize, usize)> = ranges.iter().copied().filter(|r| r.0 < r.1).collect();
        Self {
            bytes: ranges.iter().map(|r| r.1 - r.0).sum(),
            cache_lines: distinct_units(&ranges, CACHE_LINE),
            pages: distinct_units(&ranges, PAGE),
        }
    }
}

/// How many distinct `unit`-sized, `unit`-aligned blocks the non-empty byte ranges touch.
fn distinct_units(ranges: &[(usize, usize)], unit: usize) -> usize {
    let mut spans: Vec<(usize, usize)> = ranges
        .iter()
        .map(|&(start, end)| (start / unit, (end - 1) / unit))
        .collect();
    spans.sort_unstable();
    let mut count = 0;
    let mut covered_to: Option<usize> = None; // last unit counted
    for (first, last) in spans {
        let from = match covered_to {
            Some(c) if c >= first => c + 1,
            _ => first,
        };
        if last >= from {
            count += last - from + 1;
            covered_to = Some(last);
        }
    }
    count
}

const CACHE_LINE: usize = 64;

/// One column of an archetype's chunks.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::with_chunk_size(4096).unwrap();
/// world.spawn((1u8, 2u64));
/// let cols = &world.memory_report().archetypes[0].columns;
/// assert_eq!((cols[0].name, cols[0].size), ("u8", 1));
/// assert_eq!(cols[1].offset % cols[1].align, 0);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnLayout {
    /// The component's type name.
    pub name: &'static str,
    /// Element size in bytes.
    pub size: usize,
    /// The type's alignment.
    pub align: usize,
    /// Byte offset of the column in every chunk.
    pub offset: usize,
    /// The largest power of two the offset is a multiple of (up to the chunk's alignment):
    /// what a vector loop over the column can count on.
    pub achieved_align: usize,
    /// Bytes between the end of the array placed before this one and this offset.
    pub padding_before: usize,
    /// What one full pass over this column of the archetype's rows touches.
    pub pass: Footprint,
}

/// Chunk usage of one archetype.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.spawn((1u32,));
/// let arch = &world.memory_report().archetypes[0];
/// assert_eq!(arch.components, [("u32", 4)]);
/// assert_eq!((arch.chunks, arch.entities), (1, 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ArchetypeLayout {
    /// The archetype.
    pub id: ArchetypeId,
    /// `(type name, size in bytes)` per component column.
    pub components: Vec<(&'static str, usize)>,
    /// Bytes per chunk of this archetype.
    pub chunk_size: usize,
    /// Which column order its layout used: `registration`, `min-padding` or `chosen-first`.
    pub column_order: &'static str,
    /// Per component column, in column (ascending id) order.
    pub columns: Vec<ColumnLayout>,
    /// Rows per chunk.
    pub capacity: usize,
    /// Chunks in use.
    pub chunks: usize,
    /// Empty chunks kept for reuse.
    pub spare_chunks: usize,
    /// Entities stored.
    pub entities: usize,
    /// `entities / (chunks * capacity)` as a percentage (100 when there are no chunks).
    pub fill_percent: f64,
    /// Bytes of the archetype's chunks that hold no row data: padding, the tail a full chunk
    /// cannot use, and the free rows of the last chunk.
    pub bytes_unused: usize,
    /// Padding bytes between columns in one chunk.
    pub padding_bytes: usize,
    /// Bytes after the last column in one chunk.
    pub tail_bytes: usize,
    /// Rows a chunk would hold with no padding at all, minus the rows it holds.
    pub rows_lost_to_padding: usize,
    /// What one full pass over every column (entity ids included) touches.
    pub pass: Footprint,
    /// What one full pass over the entity ids touches.
    pub entity_pass: Footprint,
    /// Rows whose enableable components are switched off, summed over those components (a
    /// row with two disabled components counts twice).
    pub disabled_rows: usize,
    /// Per chunk in use, its base address and rows: what [`ArchetypeLayout::footprint`]
    /// counts lines and pages from.
    chunk_rows: ChunkAddresses,
}

/// Where an archetype's chunks are: `(base address, rows)` per chunk. Not part of a layout's
/// identity: two worlds built alike have equal layouts wherever their chunks landed.
#[derive(Clone, Debug, Default)]
struct ChunkAddresses(Vec<(usize, usize)>);

impl PartialEq for ChunkAddresses {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Chunk usage of every archetype that holds entities, and the world's memory, from
/// [`World::memory_report`](crate::World::memory_report).
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// world.spawn((1u32,));
/// let text = world.memory_report().to_string();
/// assert!(text.starts_with("chunk size: 16384 B"));
/// assert!(text.contains("u32 (4 B)"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WorldLayout {
    /// The world's [`World::chunk_size`](crate::World::chunk_size).
    pub chunk_size: usize,
    /// The chunk policy for new archetypes.
    pub policy: ChunkPolicy,
    /// One entry per non-empty archetype, in archetype order.
    pub archetypes: Vec<ArchetypeLayout>,
    /// Heap bytes by kind.
    pub memory: WorldMemory,
}

impl ArchetypeLayout {
    /// What one full pass of a query reading `columns` (column numbers, as in
    /// [`Archetype::column`](crate::Archetype::column)) over this archetype touches, entity
    /// ids included if `with_entities`.
    ///
    /// # Panics
    /// If a column number is out of range.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn_batch((0..1000u32).map(|i| (i, 0u64)));
    /// let arch = &world.memory_report().archetypes[0];
    /// let one = arch.footprint(&[0], false);
    /// assert_eq!(one.bytes, 4000);
    /// assert_eq!(arch.footprint(&[0, 1], true), arch.pass);
    /// ```
    pub fn footprint(&self, columns: &[usize], with_entities: bool) -> Footprint {
        let arrays: Vec<(usize, usize)> = with_entities
            .then_some((0, size_of::<Entity>()))
            .into_iter()
            .chain(
                columns
                    .iter()
                    .map(|&c| (self.columns[c].offset, self.columns[c].size)),
            )
            .collect();
        footprint_of(&self.chunk_rows.0, &arrays)
    }

    fn of(a: &Archetype, world: &World) -> Self {
        let layout = a.layout();
        let (cap, chunk_size) = (layout.capacity(), layout.chunk_size());
        let infos: Vec<_> = a
            .component_ids()
            .map(|id| world.components().info(id))
            .collect();
        let specs: Vec<ColumnSpec> = infos.iter().map(|i| ColumnSpec::of(i)).collect();
        // Each chunk's base address and rows (all full but the last).
        let chunk_rows: Vec<(usize, usize)> = a
            .chunks()
            .iter()
            .map(|c| (c.column_at(0).addr(), c.len()))
            .collect();
        let pass_of = |offset: usize, size: usize| footprint_of(&chunk_rows, &[(offset, size)]);
        let mut columns: Vec<ColumnLayout> = infos
            .iter()
            .enumerate()
            .map(|(c, info)| {
                let offset = layout.offset(c);
                ColumnLayout {
                    name: info.name(),
                    size: info.size(),
                    align: info.align(),
                    offset,
                    achieved_align: if info.size() == 0 || offset == 0 {
                        layout.align()
                    } else {
                        (1 << offset.trailing_zeros()).min(layout.align())
                    },
                    padding_before: 0,
                    pass: pass_of(offset, info.size()),
                }
            })
            .collect();
        let mut end = cap * size_of::<Entity>();
        let mut padding_bytes = 0;
        for &c in layout.placement() {
            if specs[c].size == 0 {
                continue;
            }
            columns[c].padding_before = columns[c].offset - end;
            padding_bytes += columns[c].padding_before;
            end = columns[c].offset + cap * specs[c].size;
        }
        let row_bytes = size_of::<Entity>() + specs.iter().map(|s| s.size).sum::<usize>();
        let entity_pass = pass_of(0, size_of::<Entity>());
        let every_array: Vec<(usize, usize)> = std::iter::once((0, size_of::<Entity>()))
            .chain(columns.iter().map(|c| (c.offset, c.size)))
            .collect();
        let pass = footprint_of(&chunk_rows, &every_array);
        let chunks = a.chunks().len();
        let slots = chunks * cap;
        let disabled_rows = a
            .chunks()
            .iter()
            .map(|c| {
                let masks = c.enable_bits();
                (0..masks.len())
                    .map(|s| c.len() - masks.get(s).count())
                    .sum::<usize>()
            })
            .sum();
        Self {
            disabled_rows,
            id: a.id(),
            components: a.component_names().collect(),
            chunk_size,
            column_order: layout.column_order(),
            columns,
            capacity: cap,
            chunks,
            spare_chunks: a.spare_chunks(),
            entities: a.len(),
            fill_percent: if slots == 0 {
                100.0
            } else {
                100.0 * a.len() as f64 / slots as f64
            },
            bytes_unused: chunks * chunk_size - a.len() * row_bytes,
            padding_bytes,
            tail_bytes: chunk_size - end,
            rows_lost_to_padding: chunk_size / row_bytes - cap,
            pass,
            entity_pass,
            chunk_rows: ChunkAddresses(chunk_rows),
        }
    }
}

/// The footprint of reading the arrays `(offset, element size)` over the rows of each chunk
/// `(base address, rows)`.
fn footprint_of(chunks: &[(usize, usize)], arrays: &[(usize, usize)]) -> Footprint {
    let ranges: Vec<(usize, usize)> = chunks
        .iter()
        .flat_map(|&(base, rows)| {
            arrays
                .iter()
                .map(move |&(offset, size)| (base + offset, base + offset + rows * size))
        })
        .collect();
    Footprint::of_ranges(&ranges)
}

impl WorldLayout {
    pub(crate) fn of(world: &World) -> Self {
        let mut memory = WorldMemory {
            entity_table_bytes: world.entities_for_snapshot().heap_bytes(),
            graph_bytes: world.graph().table_bytes(),
            ..WorldMemory::default()
        };
        for a in world.archetypes() {
            let size = a.layout().chunk_size();
            memory.chunk_bytes += a.chunks().len() * size;
            memory.spare_chunk_bytes += a.spare_chunks() * size;
            memory.record_bytes += a.record_bytes();
            memory.empty_archetypes += usize::from(a.is_empty());
        }
        let pool = world.chunk_pool();
        memory.compaction_frees_bytes = pool.compactable_bytes(|class| {
            world
                .archetypes()
                .iter()
                .filter(|a| a.layout().alloc_layout() == class)
                .map(|a| a.spare_chunks())
                .sum()
        });
        memory.pool_free_bytes = (pool.stats().block_bytes + pool.bookkeeping_bytes())
            .saturating_sub(memory.chunk_bytes + memory.spare_chunk_bytes);
        memory.process_cache_bytes = crate::ChunkPool::process_cache_bytes();
        memory.huge_page_bytes = pool.huge_page_bytes();
        Self {
            chunk_size: world.chunk_size(),
            policy: world.chunk_policy(),
            archetypes: world
                .archetypes()
                .iter()
                .filter(|a| !a.is_empty())
                .map(|a| ArchetypeLayout::of(a, world))
                .collect(),
            memory,
        }
    }

    /// Total bytes of all chunks in use.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn(('a',));
    /// assert_eq!(world.memory_report().chunk_bytes(), 2 * 16 * 1024);
    /// ```
    pub fn chunk_bytes(&self) -> usize {
        self.archetypes
            .iter()
            .map(|a| a.chunks * a.chunk_size)
            .sum()
    }
}
