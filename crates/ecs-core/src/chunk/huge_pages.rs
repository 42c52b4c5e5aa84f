//! How much of a set of address ranges (a chunk pool's 2 MiB blocks) the kernel backs with
//! transparent huge pages, read from `/proc/self/smaps` on Linux (`None` elsewhere, or when
//! the file cannot be read).
//!
//! `smaps` reports huge pages per *mapping* (`AnonHugePages`), not per address. A mapping's
//! huge pages are 2 MiB-aligned 2 MiB regions of it, and every pool block is exactly such a
//! region, so each mapping contributes the smaller of its huge-page bytes and the bytes of
//! the ranges it overlaps: exact when a mapping holds only blocks (glibc serves each 2 MiB
//! aligned block with a mapping of its own), an upper bound otherwise.

/// Bytes of `ranges` (half-open `(start, end)` addresses, any order) backed by transparent huge
/// pages, if the kernel says.
pub(crate) fn backed_bytes(ranges: &[(usize, usize)]) -> Option<usize> {
    if !cfg!(target_os = "linux") || cfg!(miri) {
        return None;
    }
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut ranges = ranges.to_vec();
    ranges.sort_unstable();
    Some(attribute(&smaps, &ranges))
}

/// [`backed_bytes`] over the text of an `smaps` file; `ranges` sorted by start.
fn attribute(smaps: &str, ranges: &[(usize, usize)]) -> usize {
    let mut total = 0;
    let mut overlap = 0;
    for line in smaps.lines() {
        if let Some((start, end)) = mapping(line) {
            overlap = overlapping(ranges, start, end);
        } else if let Some(kb) = line.strip_prefix("AnonHugePages:") {
            let kb: usize = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            total += (kb * 1024).min(overlap);
        }
    }
    total
}

/// The address range of a mapping's header line (`7f0000000000-7f0000400000 rw-p ...`).
fn mapping(line: &str) -> Option<(usize, usize)> {
    let range = line.split_whitespace().next()?;
    let (start, end) = range.split_once('-')?;
    Some((
        usize::from_str_radix(start, 16).ok()?,
        usize::from_str_radix(end, 16).ok()?,
    ))
}

/// Bytes of `ranges` inside `start..end`.
fn overlapping(ranges: &[(usize, usize)], start: usize, end: usize) -> usize {
    let first = ranges.partition_point(|&(_, e)| e <= start);
    ranges[first..]
        .iter()
        .take_while(|&&(s, _)| s < end)
        .map(|&(s, e)| e.min(end) - s.max(start))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB2: usize = 2 << 20;

    #[test]
    fn huge_pages_count_only_where_blocks_are() {
        let smaps = "\
00400000-00800000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      4096 kB
00800000-00c00000 rw-p 00000000 00:00 0 [heap]
AnonHugePages:      2048 kB
00c00000-01000000 rw-p 00000000 00:00 0
AnonHugePages:         0 kB
";
        // Two blocks in the first mapping, one in the second (which has one huge page, maybe
        // not the block's: counted as an upper bound), one in the third (no huge pages).
        let blocks = [
            (0x40_0000, 0x40_0000 + MB2),
            (0x60_0000, 0x60_0000 + MB2),
            (0x80_0000, 0x80_0000 + MB2),
            (0xc0_0000, 0xc0_0000 + MB2),
        ];
        assert_eq!(attribute(smaps, &blocks), 3 * MB2);
        assert_eq!(attribute(smaps, &blocks[..1]), MB2);
        assert_eq!(attribute(smaps, &blocks[3..]), 0);
        assert_eq!(attribute(smaps, &[]), 0);
        assert_eq!(attribute("garbage\nAnonHugePages: x kB\n", &blocks), 0);
    }

    #[test]
    fn this_process_reports_at_most_the_ranges() {
        let buf = vec![1u8; 8 * MB2];
        let at = buf.as_ptr() as usize;
        if let Some(bytes) = backed_bytes(&[(at, at + buf.len())]) {
            assert!(bytes <= buf.len());
        }
    }
}
