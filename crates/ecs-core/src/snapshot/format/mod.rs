//! The byte format of a snapshot: [`Snapshot::to_bytes`] and [`Snapshot::from_bytes`].
//!
//! Little-endian framing, component values as the bytes in memory, a checksum at the end. No
//! padding or alignment: reading copies every buffer out, so any `&[u8]` can be read.
//!
//! ```text
//! magic "ECSSNAP\0" | version u32 = 3 | byte-order mark u32 (native 0x01020304) | tick u64
//! components  n u32, then n × { name (u32 length + UTF-8), size u32, align u32, kind u8 }
//! resources   n u32, then n × { name, size u32, align u32, kind u8, present u8,
//!                               if present: size bytes (pod) |
//!                                           blob, hashed u8, hash u64 if hashed (serde) }
//! slots       count u32            (every slot not listed below is live)
//! free list   n u32, then n × { index u32, next generation u32 }, in free-list order
//! retired     n u32, then n × index u32   (vacant at generation u32::MAX, never reused)
//! archetypes  n u32, then n × { k u32, k × component index u32 (ascending),
//!                               rows u32, rows × entity u64,
//!                               k × column: rows × size bytes (pod) |
//!                                           blob, hashed u8, rows × hash u64 if hashed (serde),
//!                               k × disabled rows (n u32, n × row u32, ascending),
//!                               ticks u8, if 1: { chunks n u32, n × { rows u32, tick u64 },
//!                                                 k × n × column tick u64,
//!                                                 k × changed (u32s: none or one per row),
//!                                                 k × added (likewise) } }
//! checksum    u64 over everything before it
//!
//! kind: 0 pod (the bytes in memory), 1 serde (through the type's `register_serde` format)
//! blob: length u64, then that many bytes
//! ```
//!
//! Version 2 (no kinds, no ticks, every type pod) is still read.
//!
//! [`Snapshot::from_bytes`] checks every length against the bytes left before allocating, the
//! checksum, and every rule a snapshot taken from a world obeys (each live slot in exactly one
//! row, the free and retired slots never in one; free generations non-zero; component
//! indices ascending; no two archetypes with one component set; names unique; saved ticks
//! one per chunk and row, none later than the snapshot and no row's later than its chunk's),
//! so whatever it accepts restores into a consistent world. It never interprets component
//! bytes: pod bytes are written only into types the restoring world registered as `Pod`, and
//! serde blobs are decoded by the restoring world's codec, which checks them.

mod read;
mod write;

const MAGIC: [u8; 8] = *b"ECSSNAP\0";
/// The format version this build writes and reads.
pub(crate) const VERSION: u32 = 3;
/// The oldest version this build reads.
const OLDEST: u32 = 2;
const KIND_POD: u8 = 0;
const KIND_SERDE: u8 = 1;
const BYTE_ORDER: u32 = 0x0102_0304;
const CHECKSUM_SEED: u64 = 0x736e_6170;
/// Largest component or resource size accepted: the largest chunk.
const MAX_SIZE: usize = 1 << 20;
const MAX_NAME: usize = 4096;
