//! What a result was measured on: date, machine, toolchain, crate versions.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// Facts to print beside a result.
#[derive(Clone, Debug)]
pub struct SysInfo {
    /// UTC date and time, `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// CPU model from `/proc/cpuinfo`.
    pub cpu: String,
    /// Logical CPUs available to the process.
    pub cpus: usize,
    /// `rustc --version`.
    pub rustc: String,
    /// `git rev-parse --short HEAD` of the repository, if any, flagged when `crates/` had
    /// uncommitted changes (they were compiled in).
    pub commit: String,
    /// `(crate, version)` of the compared engines, from this package's `Cargo.lock`.
    pub versions: Vec<(String, String)>,
    /// `/proc/loadavg`'s 1-minute load when the run started: other processes on a 2-core
    /// machine show up as noise, and this says how much there was.
    pub load_start: String,
    /// The same when the run ended (set by the caller).
    pub load_end: String,
    /// The allocator settings: `GLIBC_TUNABLES` if set (e.g. pinned mmap / trim thresholds),
    /// else "glibc defaults" (dynamic thresholds, which make large allocations depend on what
    /// was freed before).
    pub malloc: String,
}

/// The 1-minute load average, or "unknown".
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

impl SysInfo {
    /// Collects the facts of this machine and build.
    pub fn collect() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split(':').nth(1))
                    .map(|m| m.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".to_owned());
        let run = |cmd: &str, args: &[&str]| {
            Command::new(cmd)
                .args(args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or_else(|| "unknown".to_owned())
        };
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
            .unwrap_or_default();
        let versions = ["hecs", "bevy_ecs", "legion", "rayon"]
            .iter()
            .map(|name| {
                let needle = format!("name = \"{name}\"\nversion = \"");
                let version = lock
                    .find(&needle)
                    .map(|i| {
                        let rest = &lock[i + needle.len()..];
                        rest[..rest.find('"').unwrap_or(0)].to_owned()
                    })
                    .unwrap_or_else(|| "unknown".to_owned());
                ((*name).to_owned(), version)
            })
            .collect();
        Self {
            date: utc_now(),
            cpu,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            rustc: run("rustc", &["--version"]),
            commit: {
                let head = run("git", &["rev-parse", "--short", "HEAD"]);
                // Uncommitted engine changes were compiled in too: say so.
                let dirty = Command::new("git")
                    .args(["diff", "--quiet", "HEAD", "--", "../../crates"])
                    .current_dir(env!("CARGO_MANIFEST_DIR"))
                    .status()
                    .is_ok_and(|s| s.code() == Some(1));
                if dirty {
                    format!("{head}+uncommitted changes in crates/")
                } else {
                    head
                }
            },
            versions,
            load_start: load_average(),
            load_end: String::new(),
            malloc: std::env::var("GLIBC_TUNABLES")
                .map(|t| format!("GLIBC_TUNABLES={t}"))
                .unwrap_or_else(|_| "glibc defaults".to_owned()),
        }
    }
}

/// The current UTC time as `YYYY-MM-DD HH:MM UTC`.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), by 400-year eras.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3_600,
        rem % 3_600 / 60
    )
}
