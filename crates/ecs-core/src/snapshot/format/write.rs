//! Writing a snapshot's bytes: [`Snapshot::to_bytes`] and the little-endian `Writer`.

use super::{BYTE_ORDER, CHECKSUM_SEED, KIND_POD, KIND_SERDE, MAGIC, VERSION};
use crate::snapshot::error::SnapshotError;
use crate::snapshot::hash::bytes_hash;
use crate::snapshot::registry::{self, ResourceValue};
use crate::snapshot::ticks::SavedTicks;
use crate::snapshot::{Column, Snapshot};

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
        let not_pod = |name: &str| SnapshotError::NotPod {
            name: name.to_string(),
        };
        // Refuse before writing anything: a cloned column or resource without a codec.
        for a in &self.archetypes {
            for (&c, col) in a.components.iter().zip(&a.columns) {
                let entry = &self.components[c as usize];
                if matches!(col, Column::Cloned(_)) && entry.codec.is_none() {
                    return Err(not_pod(&entry.name));
                }
            }
        }
        // (Entries read from bytes, `type_id` unknown, are serde or pod by construction.)
        if let Some(r) = self
            .resources
            .iter()
            .find(|r| !r.pod && r.codec.is_none() && r.type_id.is_some())
        {
            return Err(not_pod(&r.name));
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
                            Column::Encoded(enc) => enc.bytes.len(),
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
            w.0.push(if c.pod { KIND_POD } else { KIND_SERDE });
        }
        w.len(self.resources.len());
        for r in &self.resources {
            w.str(&r.name);
            w.len(r.size);
            w.len(r.align);
            let encode = |value: &(dyn std::any::Any + Send + Sync)| {
                let codec = r.codec.ok_or_else(|| not_pod(&r.name))?;
                (codec.encode)(value).map_err(|reason| SnapshotError::Encode {
                    name: r.name.to_string(),
                    reason,
                })
            };
            w.0.push(if r.pod { KIND_POD } else { KIND_SERDE });
            match &r.value {
                Some(ResourceValue::Bytes(bytes)) => {
                    w.0.push(1);
                    w.0.extend_from_slice(bytes);
                }
                Some(ResourceValue::Cloned(value)) => {
                    let blob = encode(&**value)?;
                    w.0.push(1);
                    w.blob(&blob);
                    w.hash(r.hash);
                }
                Some(ResourceValue::Encoded(blob)) => {
                    w.0.push(1);
                    w.blob(blob);
                    w.hash(r.hash);
                }
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
        let mut hashes = Vec::new();
        for a in &self.archetypes {
            w.u32s(&a.components);
            w.len(a.entities.len());
            for e in &a.entities {
                w.u64(e.to_bits());
            }
            for (&c, col) in a.components.iter().zip(&a.columns) {
                let entry = &self.components[c as usize];
                match col {
                    Column::Pod(bytes) => w.0.extend_from_slice(bytes),
                    Column::Cloned(values) => {
                        let codec = entry.codec.ok_or_else(|| not_pod(&entry.name))?;
                        let blob =
                            (codec.encode)(&**values).map_err(|reason| SnapshotError::Encode {
                                name: entry.name.to_string(),
                                reason,
                            })?;
                        w.blob(&blob);
                        match entry.hash {
                            Some(hash) => {
                                registry::hash_cloned(hash, entry.type_id, &**values, &mut hashes);
                                w.0.push(1);
                                w.u64s(&hashes);
                            }
                            None => w.0.push(0),
                        }
                    }
                    Column::Encoded(enc) => {
                        w.blob(&enc.bytes);
                        match &enc.hashes {
                            Some(hashes) => {
                                w.0.push(1);
                                w.u64s(hashes);
                            }
                            None => w.0.push(0),
                        }
                    }
                }
            }
            for rows in &a.disabled {
                w.u32s(rows);
            }
            w.ticks(&a.ticks);
        }
        let sum = bytes_hash(CHECKSUM_SEED, &w.0);
        w.u64(sum);
        Ok(w.0)
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
    /// `v.len()` values, no count (the reader knows it).
    fn u64s(&mut self, v: &[u64]) {
        for &x in v {
            self.u64(x);
        }
    }
    /// A hashed flag, and the hash if there is one.
    fn hash(&mut self, hash: Option<u64>) {
        match hash {
            Some(hash) => {
                self.0.push(1);
                self.u64(hash);
            }
            None => self.0.push(0),
        }
    }
    fn blob(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }
    fn ticks(&mut self, ticks: &SavedTicks) {
        if !ticks.saved {
            self.0.push(0);
            return;
        }
        self.0.push(1);
        self.len(ticks.chunks.len());
        for &(rows, tick) in &ticks.chunks {
            self.u32(rows);
            self.u64(tick);
        }
        for column in &ticks.column {
            self.u64s(column);
        }
        for rows in ticks.changed.iter().chain(&ticks.added) {
            self.u32s(rows);
        }
    }
}
