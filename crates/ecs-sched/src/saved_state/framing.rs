//! Little-endian framing of simulation snapshot bytes (`sim/bytes.rs` has the format):
//! a writer, and a reader that checks every length against the bytes left. Saved state
//! pieces go through the world's state codecs.

use std::time::Duration;

use ecs_core::{SnapshotError, World};

use crate::saved_state::{Saved, StateError};

/// Longest type or system name accepted.
const MAX_NAME: usize = 4096;

/// Little-endian framing for `SimSnapshot::to_bytes`.
pub(crate) struct Writer(pub(crate) Vec<u8>);

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
    pub(crate) fn duration(&mut self, d: Duration) {
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
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
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

    pub(crate) fn duration(&mut self) -> Result<Duration, StateError> {
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
