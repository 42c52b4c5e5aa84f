//! A simulation snapshot as bytes: [`SimSnapshot::to_bytes`] and [`SimSnapshot::from_bytes`],
//! so a whole simulation (world, schedules' state, fixed timestep) can be saved to disk and
//! resumed later, in another process, bit for bit.
//!
//! ```text
//! magic "ECSSIM\0\0" | version u32 = 1
//! world      u64 length, then the world snapshot's own bytes (`Snapshot::to_bytes`)
//! schedules  n u32, n × { units u32, units × { name, system: state, conditions u32 × state } }
//! state      present u8, if 1: pieces u32 × piece
//! piece      0 u8, tick u64  |  1 u8, type name, u64 length + the value in its type's format
//! timestep   present u8, if 1: dt (secs u64, nanos u32), max steps u32,
//!            accumulator (secs u64, nanos u32), steps u64
//! checksum   u64 over everything before it
//! name       u32 length + UTF-8
//! ```
//!
//! State values go through the codecs of `World::register_state_serde` (feature `serde`;
//! `register_serde_primitives` covers counters and other primitives), found again by type
//! name when read. Reading checks every length and the checksum, and decodes every value
//! before returning, so a snapshot it accepts holds values of registered types; whether they
//! are the types the schedules' systems keep is checked by [`SimSnapshot::restore`], against
//! the live schedules, before anything changes.

use std::time::Duration;

use ecs_core::{Snapshot, SnapshotError, World};

use crate::fixed::FixedTimestep;
use crate::saved_state::{Saved, StateError};
use crate::sim_snapshot::SimSnapshot;

const MAGIC: [u8; 8] = *b"ECSSIM\0\0";
const VERSION: u32 = 1;
/// Longest type or system name accepted.
const MAX_NAME: usize = 4096;

impl SimSnapshot {
    /// Writes the snapshot (see the module docs): the world's bytes, then each schedule's
    /// saved state, then the timestep. `world` is the world whose state codecs write the
    /// saved values (the one captured, or one registered alike).
    ///
    /// # Errors
    /// [`StateError::World`] with [`SnapshotError::NotSerdeInWorld`] naming a saved state
    /// type without a codec (`register_state_serde`), or anything
    /// [`Snapshot::to_bytes`] returns.
    pub fn to_bytes(&self, world: &World) -> Result<Vec<u8>, StateError> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(&MAGIC);
        w.u32(VERSION);
        w.blob(&self.world().to_bytes()?);
        w.len(self.schedules().len());
        for schedule in self.schedules() {
            schedule.write(&mut w, world)?;
        }
        match self.timestep() {
            None => w.0.push(0),
            Some(t) => {
                let (dt, max_steps, accumulator, steps) = t.parts();
                w.0.push(1);
                w.duration(dt);
                w.u32(max_steps);
                w.duration(accumulator);
                w.u64(steps);
            }
        }
        let sum = Snapshot::checksum_of(&w.0);
        w.u64(sum);
        Ok(w.0)
    }

    /// Reads bytes written by [`SimSnapshot::to_bytes`], decoding saved values with `world`'s
    /// state codecs. Any input is safe: bytes that are not a snapshot give an error.
    ///
    /// # Errors
    /// [`StateError::World`] with [`SnapshotError::BadMagic`],
    /// [`SnapshotError::UnsupportedVersion`], [`SnapshotError::Truncated`],
    /// [`SnapshotError::ChecksumMismatch`] or [`SnapshotError::Corrupt`] for the framing, or
    /// [`SnapshotError::NotSerdeInWorld`] / [`SnapshotError::Decode`] for a saved value;
    /// anything [`Snapshot::from_bytes`] returns for the world part.
    pub fn from_bytes(bytes: &[u8], world: &World) -> Result<Self, StateError> {
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            return Err(SnapshotError::BadMagic.into());
        }
        if bytes.len() < 8 + 4 + 8 {
            return Err(SnapshotError::Truncated {
                at: bytes.len(),
                needed: 20 - bytes.len(),
            }
            .into());
        }
        let body = bytes.len() - 8;
        let stored = u64::from_le_bytes(bytes[body..].try_into().expect("8 bytes"));
        let computed = Snapshot::checksum_of(&bytes[..body]);
        if stored != computed {
            return Err(SnapshotError::ChecksumMismatch { stored, computed }.into());
        }
        let mut r = Reader {
            bytes: &bytes[..body],
            at: 8,
        };
        let version = r.u32()?;
        if version != VERSION {
            return Err(SnapshotError::UnsupportedVersion(version).into());
        }
        let snapshot = Snapshot::from_bytes(r.blob()?)?;
        let n = r.count(4)?;
        let mut schedules = Vec::with_capacity(n);
        for _ in 0..n {
            schedules.push(crate::schedule::saved::ScheduleState::read(&mut r, world)?);
        }
        let at = r.at;
        let timestep = match r.u8()? {
            0 => None,
            1 => {
                let (dt, max_steps) = (r.duration()?, r.u32()?);
                let (accumulator, steps) = (r.duration()?, r.u64()?);
                Some(
                    FixedTimestep::from_parts(dt, max_steps, accumulator, steps)
                        .ok_or_else(|| r.corrupt(at, "an impossible fixed timestep"))?,
                )
            }
            other => return Err(r.corrupt(at, format!("timestep flag {other}"))),
        };
        if r.at != r.bytes.len() {
            return Err(r.corrupt(r.at, "bytes after the timestep"));
        }
        Ok(Self::from_parts(snapshot, schedules, timestep))
    }
}

/// Little-endian framing for [`SimSnapshot::to_bytes`].
pub(crate) struct Writer(Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).expect("counts fit in u32"));
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    pub(crate) fn blob(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }
    fn duration(&mut self, d: Duration) {
        self.u64(d.as_secs());
        self.u32(d.subsec_nanos());
    }

    /// One saved state piece: a tick, or a value through `world`'s codec.
    pub(crate) fn piece(&mut self, piece: &Saved, world: &World) -> Result<(), StateError> {
        match piece {
            Saved::Tick(tick) => {
                self.u8(0);
                self.u64(*tick);
            }
            Saved::Value(value, type_name) => {
                let (name, bytes) = world.encode_state(&**value, type_name)?;
                self.u8(1);
                self.str(name);
                self.blob(&bytes);
            }
        }
        Ok(())
    }
}

/// The reading side of [`Writer`]: every length checked against the bytes left.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// The offset read next.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    pub(crate) fn corrupt(&self, at: usize, reason: impl Into<String>) -> StateError {
        SnapshotError::Corrupt {
            at,
            reason: reason.into(),
        }
        .into()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StateError> {
        let left = self.bytes.len() - self.at;
        if n > left {
            return Err(SnapshotError::Truncated {
                at: self.at,
                needed: n - left,
            }
            .into());
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, StateError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32, StateError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, StateError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// A count of items of at least `item` bytes each, checked against the bytes left.
    pub(crate) fn count(&mut self, item: usize) -> Result<usize, StateError> {
        let at = self.at;
        let n = self.u32()? as usize;
        let left = self.bytes.len() - self.at;
        if n.saturating_mul(item) > left {
            return Err(SnapshotError::Truncated {
                at,
                needed: n.saturating_mul(item) - left,
            }
            .into());
        }
        Ok(n)
    }

    pub(crate) fn str(&mut self) -> Result<&'a str, StateError> {
        let at = self.at;
        let n = self.count(1)?;
        if n > MAX_NAME {
            return Err(self.corrupt(at, format!("a name of {n} bytes")));
        }
        let raw = self.take(n)?;
        std::str::from_utf8(raw).map_err(|_| self.corrupt(at, "a name that is not UTF-8"))
    }

    pub(crate) fn blob(&mut self) -> Result<&'a [u8], StateError> {
        let at = self.at;
        let n = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(SnapshotError::Truncated {
                at,
                needed: usize::try_from(n - left).unwrap_or(usize::MAX),
            }
            .into());
        }
        self.take(n as usize)
    }

    fn duration(&mut self) -> Result<Duration, StateError> {
        let at = self.at;
        let (secs, nanos) = (self.u64()?, self.u32()?);
        if nanos >= 1_000_000_000 {
            return Err(self.corrupt(at, format!("{nanos} nanoseconds")));
        }
        Ok(Duration::new(secs, nanos))
    }

    /// One saved state piece, a value decoded through `world`'s codec.
    pub(crate) fn piece(&mut self, world: &World) -> Result<Saved, StateError> {
        let at = self.at;
        match self.u8()? {
            0 => Ok(Saved::Tick(self.u64()?)),
            1 => {
                let name = self.str()?;
                let bytes = self.blob()?;
                let (value, name) = world.decode_state(name, bytes)?;
                Ok(Saved::Value(value, name))
            }
            other => Err(self.corrupt(at, format!("piece tag {other}"))),
        }
    }
}
