//! The byte format of a snapshot: [`Snapshot::to_bytes`] and [`Snapshot::from_bytes`].
//!
//! Little-endian framing, component values as the bytes in memory, a checksum at the end. No
//! padding or alignment: reading copies every buffer out, so any `&[u8]` can be read.
//!
//! ```text
//! magic "ECSSNAP\0" | version u32 = 2 | byte-order mark u32 (native 0x01020304) | tick u64
//! components  n u32, then n × { name (u32 length + UTF-8), size u32, align u32 }
//! resources   n u32, then n × { name, size u32, align u32, present u8, size bytes if present }
//! slots       count u32            (every slot not listed below is live)
//! free list   n u32, then n × { index u32, next generation u32 }, in free-list order
//! retired     n u32, then n × index u32   (vacant at generation u32::MAX, never reused)
//! archetypes  n u32, then n × { k u32, k × component index u32 (ascending),
//!                               rows u32, rows × entity u64, k × (rows × size) bytes,
//!                               k × disabled rows (n u32, n × row u32, ascending) }
//! checksum    u64 over everything before it
//! ```
//!
//! [`Snapshot::from_bytes`] checks every length against the bytes left before allocating, the
//! checksum, and every rule a snapshot taken from a world obeys (each live slot in exactly one
//! row, the free and retired slots never in one; free generations non-zero; component
//! indices ascending; no two archetypes with one component set; names unique), so whatever it
//! accepts restores into a consistent world. It never interprets component bytes: they are
//! written only into types the restoring world registered as `Pod`.

use std::borrow::Cow;
use std::collections::HashSet;

use super::buf::PodBuf;
use super::hash::bytes_hash;
use super::registry::ResourceValue;
use super::{ArchetypeData, Column, ComponentEntry, ResourceEntry, Snapshot};
use crate::entity::Entity;
use crate::error::SnapshotError;

const MAGIC: [u8; 8] = *b"ECSSNAP\0";
/// The format version this build writes and reads.
pub(crate) const VERSION: u32 = 2;
const BYTE_ORDER: u32 = 0x0102_0304;
const CHECKSUM_SEED: u64 = 0x736e_6170;
/// Largest component or resource size accepted: the largest chunk.
const MAX_SIZE: usize = 1 << 20;
const MAX_NAME: usize = 4096;

impl Snapshot {
    /// Writes the snapshot in the versioned format of the `format` module (see
    /// `docs/architecture.md`, "Snapshots").
    ///
    /// # Errors
    /// [`SnapshotError::NotPod`] naming the first cloned component or resource: only pod
    /// data can be written.
    ///
    /// ```
    /// # use ecs_core::{Snapshot, World};
    /// let mut world = World::new();
    /// world.register_pod::<[f32; 2]>();
    /// let e = world.spawn(([1.0f32, 2.0],));
    /// let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    ///
    /// let mut copy = World::new();
    /// copy.register_pod::<[f32; 2]>();
    /// copy.restore(&Snapshot::from_bytes(&bytes).unwrap()).unwrap();
    /// assert_eq!(copy.get::<[f32; 2]>(e), Ok(&[1.0, 2.0]));
    /// assert_eq!(copy.state_hash(), world.state_hash());
    /// ```
    pub fn to_bytes(&self) -> Result<Vec<u8>, SnapshotError> {
        if let Some(c) = self.components.iter().find(|c| !c.pod) {
            return Err(SnapshotError::NotPod {
                name: c.name.to_string(),
            });
        }
        if let Some(r) = self.resources.iter().find(|r| !r.pod) {
            return Err(SnapshotError::NotPod {
                name: r.name.to_string(),
            });
        }
        let data: usize = self
            .archetypes
            .iter()
            .map(|a| {
                a.entities.len() * 8
                    + a.columns
                        .iter()
                        .map(|c| match c {
                            Column::Pod(b) => b.len(),
                            Column::Cloned(_) => 0,
                        })
                        .sum::<usize>()
            })
            .sum();
        let mut w = Writer(Vec::with_capacity(data + self.free.len() * 8 + 1024));
        w.0.extend_from_slice(&MAGIC);
        w.u32(VERSION);
        w.0.extend_from_slice(&BYTE_ORDER.to_ne_bytes());
        w.u64(self.change_tick);
        w.len(self.components.len());
        for c in &self.components {
            w.str(&c.name);
            w.len(c.size);
            w.len(c.align);
        }
        w.len(self.resources.len());
        for r in &self.resources {
            w.str(&r.name);
            w.len(r.size);
            w.len(r.align);
            match &r.value {
                Some(ResourceValue::Bytes(bytes)) => {
                    w.0.push(1);
                    w.0.extend_from_slice(bytes);
                }
                Some(ResourceValue::Cloned(_)) => unreachable!("checked: pod only"),
                None => w.0.push(0),
            }
        }
        w.u32(self.slot_count);
        w.len(self.free.len());
        for (&i, &g) in self.free.iter().zip(&self.free_generations) {
            w.u32(i);
            w.u32(g);
        }
        w.u32s(&self.retired);
        w.len(self.archetypes.len());
        for a in &self.archetypes {
            w.u32s(&a.components);
            w.len(a.entities.len());
            for e in &a.entities {
                w.u64(e.to_bits());
            }
            for col in &a.columns {
                match col {
                    Column::Pod(bytes) => w.0.extend_from_slice(bytes),
                    Column::Cloned(_) => unreachable!("checked: pod only"),
                }
            }
            for rows in &a.disabled {
                w.u32s(rows);
            }
        }
        let sum = bytes_hash(CHECKSUM_SEED, &w.0);
        w.u64(sum);
        Ok(w.0)
    }

    /// Reads a snapshot written by [`Snapshot::to_bytes`]. Any input is safe: a buffer that is
    /// not one gives an error, never a panic or undefined behaviour.
    ///
    /// # Errors
    /// [`SnapshotError::BadMagic`], [`SnapshotError::UnsupportedVersion`],
    /// [`SnapshotError::WrongEndianness`], [`SnapshotError::Truncated`],
    /// [`SnapshotError::ChecksumMismatch`], or [`SnapshotError::Corrupt`] with the offset and
    /// what is wrong.
    ///
    /// ```
    /// # use ecs_core::{Snapshot, SnapshotError, World};
    /// let mut world = World::new();
    /// world.register_pod::<u32>();
    /// world.spawn((5u32,));
    /// let mut bytes = world.snapshot().unwrap().to_bytes().unwrap();
    /// assert!(Snapshot::from_bytes(&bytes).is_ok());
    /// assert!(matches!(
    ///     Snapshot::from_bytes(&bytes[..bytes.len() - 1]),
    ///     Err(SnapshotError::Truncated { .. })
    /// ));
    /// let n = bytes.len();
    /// bytes[n - 16] ^= 1; // flip a bit of the value (before the disabled-rows count)
    /// assert!(matches!(
    ///     Snapshot::from_bytes(&bytes),
    ///     Err(SnapshotError::ChecksumMismatch { .. })
    /// ));
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SnapshotError> {
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            return Err(SnapshotError::BadMagic);
        }
        let mut r = Reader { bytes, at: 8 };
        let version = r.u32()?;
        if version != VERSION {
            return Err(SnapshotError::UnsupportedVersion(version));
        }
        let mark = r.take(4)?;
        if u32::from_ne_bytes(mark.try_into().expect("4 bytes")) != BYTE_ORDER {
            return Err(
                if u32::from_ne_bytes(mark.try_into().expect("4 bytes")).swap_bytes() == BYTE_ORDER
                {
                    SnapshotError::WrongEndianness
                } else {
                    r.corrupt(r.at - 4, "bad byte-order mark")
                },
            );
        }
        if bytes.len() < r.at + 8 {
            return Err(SnapshotError::Truncated {
                at: bytes.len(),
                needed: r.at + 8 - bytes.len(),
            });
        }
        let body = bytes.len() - 8;
        let stored = u64::from_le_bytes(bytes[body..].try_into().expect("8 bytes"));
        let computed = bytes_hash(CHECKSUM_SEED, &bytes[..body]);
        // Framing first, so a cut-off buffer reports `Truncated`, not a checksum mismatch.
        let mut r = Reader {
            bytes: &bytes[..body],
            at: r.at,
        };
        let snap = r.snapshot();
        if stored != computed {
            // A buffer cut short frames as truncated (its last 8 bytes are no checksum); any
            // other difference is corruption the checksum caught.
            return match snap {
                Err(e @ SnapshotError::Truncated { .. }) => Err(e),
                _ => Err(SnapshotError::ChecksumMismatch { stored, computed }),
            };
        }
        snap
    }

    /// The checksum [`Snapshot::to_bytes`] appends to `body`, for tools (the fuzz target)
    /// that edit buffers by hand.
    #[doc(hidden)]
    pub fn checksum_of(body: &[u8]) -> u64 {
        bytes_hash(CHECKSUM_SEED, body)
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).expect("snapshot counts and sizes fit in u32"));
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn u32s(&mut self, v: &[u32]) {
        self.len(v.len());
        for &x in v {
            self.u32(x);
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn corrupt(&self, at: usize, reason: impl Into<String>) -> SnapshotError {
        SnapshotError::Corrupt {
            at,
            reason: reason.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], SnapshotError> {
        let left = self.bytes.len() - self.at;
        if n > left {
            return Err(SnapshotError::Truncated {
                at: self.at,
                needed: n - left,
            });
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, SnapshotError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, SnapshotError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, SnapshotError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A count of items of `item` bytes each, checked against the bytes left.
    fn count(&mut self, item: usize) -> Result<usize, SnapshotError> {
        let at = self.at;
        let n = self.u32()? as usize;
        let left = self.bytes.len() - self.at;
        if n.saturating_mul(item) > left {
            return Err(SnapshotError::Truncated {
                at,
                needed: n.saturating_mul(item) - left,
            });
        }
        Ok(n)
    }

    fn u32s(&mut self) -> Result<Vec<u32>, SnapshotError> {
        let n = self.count(4)?;
        let raw = self.take(n * 4)?;
        Ok(raw
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")))
            .collect())
    }

    fn name(&mut self) -> Result<String, SnapshotError> {
        let at = self.at;
        let n = self.count(1)?;
        if n > MAX_NAME {
            return Err(self.corrupt(at, format!("type name of {n} bytes")));
        }
        let raw = self.take(n)?;
        String::from_utf8(raw.to_vec()).map_err(|_| self.corrupt(at, "type name is not UTF-8"))
    }

    /// A size and an alignment, checked as a Rust type's layout would be.
    fn layout(&mut self, name: &str) -> Result<(usize, usize), SnapshotError> {
        let at = self.at;
        let (size, align) = (self.u32()? as usize, self.u32()? as usize);
        if size > MAX_SIZE || !align.is_power_of_two() || align > MAX_SIZE || size % align != 0 {
            return Err(self.corrupt(
                at,
                format!("`{name}` has impossible size {size} and alignment {align}"),
            ));
        }
        Ok((size, align))
    }

    fn snapshot(&mut self) -> Result<Snapshot, SnapshotError> {
        let change_tick = self.u64()?;

        let n = self.count(12)?;
        let mut components = Vec::with_capacity(n);
        let mut names = HashSet::new();
        for _ in 0..n {
            let at = self.at;
            let name = self.name()?;
            let (size, align) = self.layout(&name)?;
            if !names.insert(name.clone()) {
                return Err(self.corrupt(at, format!("component `{name}` listed twice")));
            }
            components.push(ComponentEntry {
                name: Cow::Owned(name),
                size,
                align,
                type_id: None,
                pod: true,
                hash: None,
            });
        }

        let n = self.count(13)?;
        let mut resources = Vec::with_capacity(n);
        let mut names = HashSet::new();
        for _ in 0..n {
            let at = self.at;
            let name = self.name()?;
            let (size, align) = self.layout(&name)?;
            if !names.insert(name.clone()) {
                return Err(self.corrupt(at, format!("resource `{name}` listed twice")));
            }
            let flag_at = self.at;
            let value = match self.u8()? {
                0 => None,
                1 => Some(ResourceValue::Bytes(self.take(size)?.to_vec())),
                other => {
                    return Err(self.corrupt(flag_at, format!("presence flag {other}")));
                }
            };
            resources.push(ResourceEntry {
                name: Cow::Owned(name),
                size,
                align,
                type_id: None,
                pod: true,
                value,
            });
        }

        let slots_at = self.at;
        let slot_count = self.u32()?;
        let free_at = self.at;
        let n = self.count(8)?;
        let mut free = Vec::with_capacity(n);
        let mut free_generations = Vec::with_capacity(n);
        for _ in 0..n {
            free.push(self.u32()?);
            free_generations.push(self.u32()?);
        }
        let retired_at = self.at;
        let retired = self.u32s()?;
        // Every other slot is live and needs a row of at least 8 bytes: check before
        // allocating the per-slot table, so a huge count in a small buffer is refused.
        let live_slots = (slot_count as usize).saturating_sub(free.len() + retired.len());
        let left = self.bytes.len() - self.at;
        if live_slots.saturating_mul(8) > left {
            return Err(SnapshotError::Truncated {
                at: slots_at,
                needed: live_slots.saturating_mul(8) - left,
            });
        }
        // Per slot: 0 live (until a row claims it, then 3), 1 free, 2 retired.
        let mut state = vec![0u8; slot_count as usize];
        for (i, (&index, &generation)) in free.iter().zip(&free_generations).enumerate() {
            let at = free_at + 4 + 8 * i;
            match state.get(index as usize) {
                None => return Err(self.corrupt(at, format!("free slot {index} out of range"))),
                Some(0) => state[index as usize] = 1,
                Some(_) => {
                    return Err(self.corrupt(at, format!("slot {index} twice on the free list")))
                }
            }
            if generation == 0 {
                return Err(self.corrupt(at, format!("free slot {index} has generation 0")));
            }
        }
        for (i, &index) in retired.iter().enumerate() {
            let at = retired_at + 4 + 4 * i;
            match state.get(index as usize) {
                None => return Err(self.corrupt(at, format!("retired slot {index} out of range"))),
                Some(0) => state[index as usize] = 2,
                Some(_) => {
                    return Err(self.corrupt(at, format!("retired slot {index} listed twice")))
                }
            }
        }

        let n = self.count(8)?;
        let mut archetypes = Vec::with_capacity(n);
        let mut sets = HashSet::new();
        let mut live = 0usize;
        for _ in 0..n {
            let at = self.at;
            let cols = self.u32s()?;
            if cols.iter().any(|&c| c as usize >= components.len())
                || cols.windows(2).any(|w| w[0] >= w[1])
            {
                return Err(
                    self.corrupt(at, "archetype component indices not ascending and in range")
                );
            }
            if !sets.insert(cols.clone()) {
                return Err(self.corrupt(at, "two archetypes with one component set"));
            }
            let rows_at = self.at;
            let rows = self.count(8)?;
            let mut entities = Vec::with_capacity(rows);
            for i in 0..rows {
                let at = rows_at + 4 + 8 * i;
                let bits = self.u64()?;
                let Some(e) = Entity::from_bits(bits) else {
                    return Err(self.corrupt(at, format!("entity {bits:#x} has generation 0")));
                };
                match state.get(e.index() as usize) {
                    Some(0) => state[e.index() as usize] = 3,
                    Some(3) => return Err(self.corrupt(at, format!("entity {e:?} appears twice"))),
                    _ => return Err(self.corrupt(at, format!("entity {e:?} has no live slot"))),
                }
                entities.push(e);
            }
            live += rows;
            let mut columns = Vec::with_capacity(cols.len());
            for &c in &cols {
                let entry = &components[c as usize];
                let Some(len) = entry.size.checked_mul(rows) else {
                    return Err(self.corrupt(self.at, format!("`{}` column too long", entry.name)));
                };
                columns.push(Column::Pod(PodBuf::from_slice(self.take(len)?)));
            }
            let mut disabled = Vec::with_capacity(cols.len());
            for _ in &cols {
                let at = self.at;
                let off = self.u32s()?;
                if off.iter().any(|&r| r as usize >= rows) || off.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(self.corrupt(at, "disabled rows not ascending and in range"));
                }
                disabled.push(off);
            }
            archetypes.push(ArchetypeData {
                components: cols,
                entities,
                columns,
                disabled,
                // The byte format carries no change ticks: restoring marks rows changed.
                ticks: Default::default(),
            });
        }
        if let Some(missing) = state.iter().position(|&s| s == 0) {
            return Err(self.corrupt(
                slots_at,
                format!("live slot {missing} has no row ({live} rows for {live_slots} live slots)"),
            ));
        }
        if self.at != self.bytes.len() {
            return Err(self.corrupt(
                self.at,
                format!(
                    "{} bytes after the last archetype",
                    self.bytes.len() - self.at
                ),
            ));
        }
        Ok(Snapshot {
            change_tick,
            components,
            slot_count,
            free,
            free_generations,
            retired,
            archetypes,
            resources,
        })
    }
}
