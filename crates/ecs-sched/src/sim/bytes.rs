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

use ecs_core::{Snapshot, SnapshotError, World};

use crate::saved_state::framing::{Reader, Writer};
use crate::saved_state::StateError;
use crate::schedule::fixed::FixedTimestep;
use crate::schedule::saved::ScheduleState;
use crate::sim::SimSnapshot;

const MAGIC: [u8; 8] = *b"ECSSIM\0\0";
const VERSION: u32 = 1;

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
            schedules.push(ScheduleState::read(&mut r, world)?);
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
