//! The data caches of the machine the process runs on, as the operating system reports them.
//!
//! On Linux they come from `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}`
//! (what `lscpu` prints); elsewhere, or where that directory is unreadable, every level is
//! `None` and callers fall back to a default they name. Read once per process: the first
//! [`CacheSizes::detect`] parses the files and later calls return the same value, so a world
//! created on a machine keeps seeing the caches it was created with.
//!
//! Who reads it: the layout lab sizes the buffer it evicts the caches with between timed
//! passes from [`CacheSizes::largest`], and the layout report names the caches beside the
//! loop a query runs, so a figure measured on one machine says which machine.

use std::sync::OnceLock;

/// Bytes of each data (or unified) cache level of one core's view, `None` where unknown.
///
/// The last level is usually shared by several cores; the sizes are what one core can use
/// at most, not its fair share.
///
/// ```
/// # use ecs_core::CacheSizes;
/// let caches = CacheSizes::detect();
/// // Whatever the machine: a level the OS did not report is `None`, never zero.
/// assert!(caches.l1d != Some(0) && caches.l2 != Some(0) && caches.l3 != Some(0));
/// // Detection runs once: a second call sees the same caches.
/// assert_eq!(CacheSizes::detect(), caches);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CacheSizes {
    /// Level-1 data cache.
    pub l1d: Option<usize>,
    /// Level-2 cache.
    pub l2: Option<usize>,
    /// Level-3 cache (the last level on most x86-64 and server aarch64 parts).
    pub l3: Option<usize>,
}

impl CacheSizes {
    /// The caches of this machine, read on first use (see the module docs).
    pub fn detect() -> Self {
        static DETECTED: OnceLock<CacheSizes> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            if cfg!(miri) {
                // Miri runs no file system calls by default; and a model has no caches.
                return Self::default();
            }
            Self::read_sysfs(std::path::Path::new("/sys/devices/system/cpu/cpu0/cache"))
        })
    }

    /// The caches described under `dir` (one `index*` directory per cache, as Linux lays
    /// them out); instruction caches and unparsable entries are skipped.
    fn read_sysfs(dir: &std::path::Path) -> Self {
        let mut sizes = Self::default();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return sizes;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let read = |name: &str| std::fs::read_to_string(path.join(name)).ok();
            let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
            else {
                continue;
            };
            if kind.trim() == "Instruction" {
                continue;
            }
            let Some(bytes) = parse_size(size.trim()) else {
                continue;
            };
            match level.trim() {
                "1" => sizes.l1d = Some(bytes),
                "2" => sizes.l2 = Some(bytes),
                "3" => sizes.l3 = Some(bytes),
                _ => {}
            }
        }
        sizes
    }

    /// The largest level the OS reported (the last-level cache), if any.
    ///
    /// ```
    /// # use ecs_core::CacheSizes;
    /// let c = CacheSizes { l1d: Some(32 << 10), l2: Some(1 << 20), l3: None };
    /// assert_eq!(c.largest(), Some(1 << 20));
    /// assert_eq!(CacheSizes::default().largest(), None);
    /// ```
    pub fn largest(&self) -> Option<usize> {
        [self.l1d, self.l2, self.l3].into_iter().flatten().max()
    }

    /// [`CacheSizes::largest`], or `default` where no level is known.
    pub fn largest_or(&self, default: usize) -> usize {
        self.largest().unwrap_or(default)
    }

    /// A one-line description for reports: `"L1d 32 KiB, L2 1 MiB, L3 32 MiB"`, with
    /// `"unknown"` for levels not reported.
    ///
    /// ```
    /// # use ecs_core::CacheSizes;
    /// let c = CacheSizes { l1d: Some(32 << 10), l2: Some(1 << 20), l3: None };
    /// assert_eq!(c.describe(), "L1d 32 KiB, L2 1 MiB, L3 unknown");
    /// ```
    pub fn describe(&self) -> String {
        let one = |size: Option<usize>| match size {
            None => "unknown".to_string(),
            Some(b) if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
            Some(b) if b % 1024 == 0 => format!("{} KiB", b >> 10),
            Some(b) => format!("{b} B"),
        };
        format!(
            "L1d {}, L2 {}, L3 {}",
            one(self.l1d),
            one(self.l2),
            one(self.l3)
        )
    }
}

/// `"32K"`, `"1024K"`, `"32M"`, `"512"` (bytes) as sysfs writes sizes; `None` for anything
/// else, or a size of zero.
fn parse_size(text: &str) -> Option<usize> {
    let (digits, unit) = match text.as_bytes().last()? {
        b'K' | b'k' => (&text[..text.len() - 1], 1 << 10),
        b'M' | b'm' => (&text[..text.len() - 1], 1 << 20),
        b'G' | b'g' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    let n: usize = digits.parse().ok()?;
    n.checked_mul(unit).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("32K"), Some(32 << 10));
        assert_eq!(parse_size("1024K"), Some(1 << 20));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("0K"), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    #[cfg_attr(miri, ignore = "writes files")]
    fn a_sysfs_tree_is_read_level_by_level() {
        let dir = std::env::temp_dir().join(format!("ecs-cache-sizes-{}", std::process::id()));
        let caches = [
            ("index0", "1", "Data", "48K"),
            ("index1", "1", "Instruction", "32K"),
            ("index2", "2", "Unified", "2048K"),
            ("index3", "3", "Unified", "300M"),
            ("index4", "9", "Unified", "bogus"),
        ];
        for (name, level, kind, size) in caches {
            let d = dir.join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
        }
        let read = CacheSizes::read_sysfs(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            read,
            CacheSizes {
                l1d: Some(48 << 10),
                l2: Some(2 << 20),
                l3: Some(300 << 20)
            }
        );
        assert_eq!(read.largest(), Some(300 << 20));
        assert_eq!(
            CacheSizes::read_sysfs(&dir.join("missing")),
            CacheSizes::default()
        );
    }
}
