//! Chunk storage: the fixed-size struct-of-arrays blocks that hold an archetype's rows, and
//! everything kept per chunk.
//!
//! - `block.rs`: [`Chunk`], one block of rows with its columns, entity ids and column ticks;
//! - `layout.rs`: [`ChunkLayout`], where each column sits in a chunk of a given size;
//! - `policy.rs`: [`ChunkPolicy`] and [`ColumnOrder`], which size a world's chunks (16 KiB for
//!   every archetype unless a user picks otherwise) and order their columns;
//! - `pool.rs`: [`ChunkPool`], the large blocks chunks are carved from and returned to;
//!   `huge_pages.rs` and `cache_sizes.rs`, what the machine offers them;
//! - `set.rs`: the counter that tells two runs of one chunk list apart;
//! - `stamps.rs` and `row_ticks.rs`: per-column and per-row change ticks;
//! - `enable.rs`: [`EnableMask`] / [`ChunkMasks`], the enable bits of enableable columns;
//! - `values.rs`: [`ChunkValues`], one value per chunk component type.
//!
//! Invariant shared by the folder: a chunk never learns the types of its columns; whatever
//! owns typed values in it (rows, chunk values) drops them through the registry's drop glue
//! before the chunk's memory goes back to the pool.

#[expect(unsafe_code, reason = "owns the raw chunk allocations")]
pub(crate) mod block;
pub(crate) mod cache_sizes; // safe: reads /sys
#[expect(
    unsafe_code,
    reason = "toggles enable bits through shared chunks for writing queries"
)]
pub(crate) mod enable;
pub(crate) mod huge_pages; // safe: parses /proc/self/smaps
pub(crate) mod layout;
pub(crate) mod policy;
#[expect(unsafe_code, reason = "carves chunk memory out of large blocks")]
pub(crate) mod pool;
pub(crate) mod row_ticks; // safe: atomics and boxed slices
pub(crate) mod set; // safe: one counter
#[expect(
    unsafe_code,
    reason = "unchecked column tick lookup for the query loop"
)]
pub(crate) mod stamps;
#[expect(
    unsafe_code,
    reason = "chunk component values are written through shared chunks by writing queries"
)]
pub(crate) mod values;

pub(crate) use block::{retire_row, Chunk};
#[cfg(doc)]
use {
    enable::{ChunkMasks, EnableMask},
    layout::ChunkLayout,
    policy::{ChunkPolicy, ColumnOrder},
    pool::ChunkPool,
    values::ChunkValues,
};
