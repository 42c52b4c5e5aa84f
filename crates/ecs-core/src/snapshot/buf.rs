//! `PodBuf`: the byte buffer a snapshot keeps one pod column in, aligned to 64 bytes.
//!
//! Why not a `Vec<u8>`: `malloc` hands large blocks out 16 bytes past a page boundary, and
//! copies of 2 KiB and more go through `rep movsb`, which runs several times slower when the
//! destination is not cache-line aligned (docs/performance.md, "Design measurements").
//! `snapshot_into` copies each chunk's column (5–8 KiB, a multiple of 64 bytes for the usual
//! row sizes) to the end of the buffer, so a buffer that starts on a cache line keeps every
//! piece aligned.
//!
//! Invariants: `len <= lines.len() * 64`; the bytes are `lines`' first `len` bytes. Lines are
//! never given back by `clear`, so a buffer reused frame after frame neither allocates nor
//! zeroes anything once it has grown.

use std::ops::Deref;

/// One cache line of bytes.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

// SAFETY: `Line` is `repr(C)` around 64 `u8`s with alignment 64: size 64, no padding, and every
// bit pattern (all zeros included) is a valid value; it is `Copy` and `'static`.
unsafe impl bytemuck::Zeroable for Line {}
// SAFETY: the same layout facts: `repr(C)` over `[u8; 64]`, no padding, every bit pattern
// valid, `Copy + 'static`, which is all `Pod` asks beyond `Zeroable`.
unsafe impl bytemuck::Pod for Line {}

const LINE: usize = size_of::<Line>();

/// A growable byte buffer whose first byte is 64-byte aligned; derefs to `[u8]`.
#[derive(Clone, Default)]
pub(crate) struct PodBuf {
    lines: Vec<Line>,
    len: usize,
}

impl PodBuf {
    /// A buffer holding a copy of `bytes`.
    pub(crate) fn from_slice(bytes: &[u8]) -> Self {
        let mut buf = Self::default();
        buf.extend_from_slice(bytes);
        buf
    }

    /// Forgets the bytes, keeping the room.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Makes room for `extra` more bytes (zeroing lines it adds).
    pub(crate) fn reserve(&mut self, extra: usize) {
        let lines = (self.len + extra).div_ceil(LINE);
        if lines > self.lines.len() {
            self.lines.resize(lines, Line([0; LINE]));
        }
    }

    /// Appends `bytes`.
    pub(crate) fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        let start = self.len;
        self.len += bytes.len();
        bytemuck::cast_slice_mut::<Line, u8>(&mut self.lines)[start..self.len]
            .copy_from_slice(bytes);
    }
}

impl Deref for PodBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &bytemuck::cast_slice::<Line, u8>(&self.lines)[..self.len]
    }
}

impl std::fmt::Debug for PodBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PodBuf({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_start_on_a_cache_line_and_survive_growth_and_reuse() {
        let mut buf = PodBuf::default();
        assert!(buf.is_empty());
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        buf.extend_from_slice(&data[..10]);
        buf.extend_from_slice(&data[10..]);
        assert_eq!(&*buf, &data[..]);
        assert_eq!(buf.as_ptr() as usize % 64, 0);
        let room = buf.lines.len();
        buf.clear();
        assert!(buf.is_empty());
        buf.extend_from_slice(&data[..500]);
        assert_eq!(&*buf, &data[..500]);
        assert_eq!(buf.lines.len(), room, "a reused buffer keeps its lines");
        assert_eq!(&*PodBuf::from_slice(&data[3..7]), &data[3..7]);
    }
}
