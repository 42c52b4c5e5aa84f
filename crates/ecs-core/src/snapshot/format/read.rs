//! Reading a snapshot's bytes: [`Snapshot::from_bytes`] and the checking `Reader`.

use std::borrow::Cow;
use std::collections::HashSet;

use super::{
    BYTE_ORDER, CHECKSUM_SEED, KIND_POD, KIND_SERDE, MAGIC, MAX_NAME, MAX_SIZE, OLDEST, VERSION,
};
use crate::chunk::row_ticks::widen;
use crate::entity::Entity;
use crate::snapshot::buf::PodBuf;
use crate::snapshot::error::SnapshotError;
use crate::snapshot::hash::bytes_hash;
use crate::snapshot::registry::ResourceValue;
use crate::snapshot::ticks::SavedTicks;
use crate::snapshot::{ArchetypeData, Column, ComponentEntry, Encoded, ResourceEntry, Snapshot};

impl Snapshot {
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
    /// // Flip a bit of the value (the last `5u32` in the buffer).
    /// let at = bytes.windows(4).rposition(|w| w == 5u32.to_le_bytes()).unwrap();
    /// bytes[at] ^= 1;
    /// assert!(matches!(
    ///     Snapshot::from_bytes(&bytes),
    ///     Err(SnapshotError::ChecksumMismatch { .. })
    /// ));
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, SnapshotError> {
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            return Err(SnapshotError::BadMagic);
        }
        let mut r = Reader {
            bytes,
            at: 8,
            version: VERSION,
        };
        let version = r.u32()?;
        if !(OLDEST..=VERSION).contains(&version) {
            return Err(SnapshotError::UnsupportedVersion(version));
        }
        r.version = version;
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
            version: r.version,
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
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The format version being read.
    version: u32,
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

    /// A kind byte (pod or serde); version 2 has none: pod.
    fn kind(&mut self) -> Result<u8, SnapshotError> {
        if self.version < 3 {
            return Ok(KIND_POD);
        }
        let at = self.at;
        match self.u8()? {
            k @ (KIND_POD | KIND_SERDE) => Ok(k),
            other => Err(self.corrupt(at, format!("kind {other}"))),
        }
    }

    /// A blob: a `u64` length and that many bytes.
    fn blob(&mut self) -> Result<Vec<u8>, SnapshotError> {
        let at = self.at;
        let n = self.u64()?;
        let left = self.bytes.len() - self.at;
        if n > left as u64 {
            return Err(SnapshotError::Truncated {
                at,
                needed: usize::try_from(n - left as u64).unwrap_or(usize::MAX),
            });
        }
        Ok(self.take(n as usize)?.to_vec())
    }

    /// `n` little-endian `u64`s.
    fn u64s(&mut self, n: usize) -> Result<Vec<u64>, SnapshotError> {
        let at = self.at;
        let left = self.bytes.len() - self.at;
        if n.saturating_mul(8) > left {
            return Err(SnapshotError::Truncated {
                at,
                needed: n.saturating_mul(8) - left,
            });
        }
        let raw = self.take(n * 8)?;
        Ok(raw
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
            .collect())
    }

    /// A serde column of `rows` values: its blob and, if the writer hashed them, a hash per row.
    fn encoded(&mut self, rows: usize) -> Result<Encoded, SnapshotError> {
        let bytes = self.blob()?;
        let at = self.at;
        let hashes = match self.u8()? {
            0 => None,
            1 => Some(self.u64s(rows)?),
            other => return Err(self.corrupt(at, format!("hashed flag {other}"))),
        };
        Ok(Encoded { bytes, hashes })
    }

    /// The saved ticks of an archetype of `rows` rows and `columns` columns, checked against
    /// `SavedTicks`' invariants (ticks no later than the snapshot's `now`).
    fn ticks(
        &mut self,
        rows: usize,
        columns: usize,
        now: u64,
    ) -> Result<SavedTicks, SnapshotError> {
        let mut ticks = SavedTicks::default();
        if self.version < 3 {
            return Ok(ticks);
        }
        let at = self.at;
        match self.u8()? {
            0 => return Ok(ticks),
            1 => {}
            other => return Err(self.corrupt(at, format!("ticks flag {other}"))),
        }
        let at = self.at;
        let n = self.count(12)?;
        let mut total = 0u64;
        for _ in 0..n {
            let (chunk_rows, tick) = (self.u32()?, self.u64()?);
            total += u64::from(chunk_rows);
            ticks.chunks.push((chunk_rows, tick));
        }
        if total != rows as u64 || ticks.chunks.iter().any(|&(_, t)| t > now) {
            return Err(self.corrupt(
                at,
                "saved chunks do not cover the rows, or are later than the snapshot",
            ));
        }
        for _ in 0..columns {
            let at = self.at;
            let column = self.u64s(n)?;
            if column.iter().any(|&t| t > now) {
                return Err(self.corrupt(at, "a column tick later than the snapshot"));
            }
            ticks.column.push(column);
        }
        // Row ticks: none, or one per row, none later than its chunk's column (changed) or
        // structural (added) tick, so chunk-level skips never hide a row.
        for list in 0..2 * columns {
            let at = self.at;
            let saved = self.u32s()?;
            if !saved.is_empty() {
                let newest_of = |k: usize| {
                    if list < columns {
                        ticks.column[list][k]
                    } else {
                        ticks.chunks[k].1
                    }
                };
                let mut row = 0;
                let mut fits = saved.len() == rows;
                for (k, &(chunk_rows, _)) in ticks.chunks.iter().enumerate() {
                    let end = row + chunk_rows as usize;
                    fits &= end <= saved.len()
                        && saved[row..end]
                            .iter()
                            .all(|&t| widen(t, now) <= newest_of(k));
                    row = end;
                }
                if !fits {
                    return Err(
                        self.corrupt(at, "row ticks not one per row, or later than their chunk's")
                    );
                }
            }
            if list < columns {
                ticks.changed.push(saved);
            } else {
                ticks.added.push(saved);
            }
        }
        ticks.saved = true;
        Ok(ticks)
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

        let n = self.count(if self.version < 3 { 12 } else { 13 })?;
        let mut components = Vec::with_capacity(n);
        let mut names = HashSet::new();
        for _ in 0..n {
            let at = self.at;
            let name = self.name()?;
            let (size, align) = self.layout(&name)?;
            let kind = self.kind()?;
            if !names.insert(name.clone()) {
                return Err(self.corrupt(at, format!("component `{name}` listed twice")));
            }
            components.push(ComponentEntry {
                name: Cow::Owned(name),
                size,
                align,
                type_id: None,
                pod: kind == KIND_POD,
                hash: None,
                codec: None,
            });
        }

        let n = self.count(if self.version < 3 { 13 } else { 14 })?;
        let mut resources = Vec::with_capacity(n);
        let mut names = HashSet::new();
        for _ in 0..n {
            let at = self.at;
            let name = self.name()?;
            let (size, align) = self.layout(&name)?;
            let kind = self.kind()?;
            if !names.insert(name.clone()) {
                return Err(self.corrupt(at, format!("resource `{name}` listed twice")));
            }
            let flag_at = self.at;
            let mut hash = None;
            let value = match (self.u8()?, kind) {
                (0, _) => None,
                (1, KIND_POD) => Some(ResourceValue::Bytes(self.take(size)?.to_vec())),
                (1, _) => {
                    let blob = self.blob()?;
                    let at = self.at;
                    hash = match self.u8()? {
                        0 => None,
                        1 => Some(self.u64()?),
                        other => return Err(self.corrupt(at, format!("hashed flag {other}"))),
                    };
                    Some(ResourceValue::Encoded(blob))
                }
                (other, _) => {
                    return Err(self.corrupt(flag_at, format!("presence flag {other}")));
                }
            };
            resources.push(ResourceEntry {
                name: Cow::Owned(name),
                size,
                align,
                type_id: None,
                pod: kind == KIND_POD,
                value,
                codec: None,
                hash,
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
                if !entry.pod {
                    columns.push(Column::Encoded(self.encoded(rows)?));
                    continue;
                }
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
            let ticks = self.ticks(rows, cols.len(), change_tick)?;
            archetypes.push(ArchetypeData {
                components: cols,
                entities,
                columns,
                disabled,
                ticks,
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
