//! Turning measurements into tables: the terminal report, CSV, JSON and Markdown.

use std::fmt::Write as _;

use crate::sysinfo::SysInfo;
use crate::workloads::{Engine, WORKLOADS};

/// One engine's result on one workload.
#[derive(Clone, Debug)]
pub struct Row {
    /// Workload name.
    pub workload: &'static str,
    /// Who ran it.
    pub engine: Engine,
    /// Median seconds per iteration.
    pub median: f64,
    /// 25th percentile.
    pub p25: f64,
    /// 75th percentile.
    pub p75: f64,
    /// Fastest repetition.
    pub min: f64,
    /// Iterations per timed batch.
    pub iters: u64,
    /// Repetitions.
    pub reps: usize,
}

/// All rows of one run, with where they were measured.
pub struct Report {
    /// The machine and build.
    pub info: SysInfo,
    /// Results, workload by workload, engines in [`Engine::ALL`] order.
    pub rows: Vec<Row>,
}

/// A check of one issue-5 target.
pub struct Target {
    /// Workload.
    pub workload: &'static str,
    /// What is compared, e.g. "ours / fastest peer".
    pub measure: String,
    /// Measured ratio.
    pub ratio: f64,
    /// The limit it must not exceed.
    pub limit: f64,
}

impl Target {
    /// Whether the target is met.
    pub fn met(&self) -> bool {
        self.ratio <= self.limit
    }
}

/// `1.5 µs`-style time with three significant digits.
pub fn fmt_time(secs: f64) -> String {
    let (value, unit) = if secs >= 1.0 {
        (secs, "s")
    } else if secs >= 1e-3 {
        (secs * 1e3, "ms")
    } else if secs >= 1e-6 {
        (secs * 1e6, "µs")
    } else {
        (secs * 1e9, "ns")
    };
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}")
}

impl Report {
    /// The row of `engine` on `workload`.
    pub fn get(&self, workload: &str, engine: Engine) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.workload == workload && r.engine == engine)
    }

    fn min_of(&self, workload: &str, pick: impl Fn(Engine) -> bool) -> Option<f64> {
        self.rows
            .iter()
            .filter(|r| r.workload == workload && pick(r.engine))
            .map(|r| r.median)
            .min_by(f64::total_cmp)
    }

    /// Median of the fastest ECS (ours included) on `workload`.
    pub fn fastest_ecs(&self, workload: &str) -> Option<f64> {
        self.min_of(workload, Engine::is_ecs)
    }

    /// Median of the fastest peer (hecs, bevy_ecs, legion) on `workload`, and who it is.
    pub fn fastest_peer(&self, workload: &str) -> Option<(Engine, f64)> {
        self.rows
            .iter()
            .filter(|r| r.workload == workload && r.engine.is_peer())
            .min_by(|a, b| a.median.total_cmp(&b.median))
            .map(|r| (r.engine, r.median))
    }

    /// `row.median / fastest ECS`.
    pub fn vs_fastest(&self, row: &Row) -> Option<f64> {
        self.fastest_ecs(row.workload).map(|f| row.median / f)
    }

    /// `row.median / raw` (the natural hand-written loop).
    pub fn vs_raw(&self, row: &Row) -> Option<f64> {
        self.get(row.workload, Engine::Raw)
            .map(|raw| row.median / raw.median)
    }

    fn workloads(&self) -> impl Iterator<Item = &'static str> + '_ {
        WORKLOADS
            .iter()
            .map(|w| w.name)
            .filter(|w| self.rows.iter().any(|r| r.workload == *w))
    }

    /// The issue-5 targets that this run's workloads allow checking.
    pub fn targets(&self) -> Vec<Target> {
        let mut out = Vec::new();
        let ours = |w: &str| self.get(w, Engine::Ours).map(|r| r.median);
        for w in self.workloads() {
            let (Some(o), Some((peer, p))) = (ours(w), self.fastest_peer(w)) else {
                continue;
            };
            let limit = match w {
                "simple_iter" | "iter_1m" | "add_remove" | "add_remove_wide" => 0.8,
                "spawn_batch_1m" => 0.6,
                _ => 1.0,
            };
            out.push(Target {
                workload: w,
                measure: format!("ours / fastest peer ({})", peer.name()),
                ratio: o / p,
                limit,
            });
            if w.ends_with("_chunk") {
                if let Some(flat) = self.get(w, Engine::RawFlat) {
                    out.push(Target {
                        workload: w,
                        measure: "ours for_each_chunk / raw_flat".to_owned(),
                        ratio: o / flat.median,
                        limit: 1.15,
                    });
                }
            }
            if w == "schedule" {
                if let Some(legion) = self.get(w, Engine::Legion) {
                    out.push(Target {
                        workload: w,
                        measure: "ours / legion".to_owned(),
                        ratio: o / legion.median,
                        limit: 1.0,
                    });
                }
                if let Some(raw) = self.get(w, Engine::Raw) {
                    out.push(Target {
                        workload: w,
                        measure: "ours / raw sequential".to_owned(),
                        ratio: o / raw.median,
                        limit: 1.5,
                    });
                }
            }
        }
        out
    }

    /// The terminal report: one line per workload and engine, then the targets.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let i = &self.info;
        let _ = writeln!(
            s,
            "{} | {} x {} | {} | load {} -> {}",
            i.date, i.cpus, i.cpu, i.rustc, i.load_start, i.load_end
        );
        let _ = writeln!(
            s,
            "{:<18} {:<12} {:>11} {:>11} {:>13} {:>9} {:>8}",
            "workload", "engine", "median", "p25-p75 ±%", "vs fastest ECS", "vs raw", "iters"
        );
        for w in self.workloads() {
            for row in self.rows.iter().filter(|r| r.workload == w) {
                let spread = 100.0 * (row.p75 - row.p25) / row.median / 2.0;
                let _ = writeln!(
                    s,
                    "{:<18} {:<12} {:>11} {:>10.1}% {:>13} {:>9} {:>8}",
                    w,
                    row.engine.name(),
                    fmt_time(row.median),
                    spread,
                    self.vs_fastest(row)
                        .map_or("-".to_owned(), |r| format!("{r:.2}x")),
                    self.vs_raw(row)
                        .map_or("-".to_owned(), |r| format!("{r:.2}x")),
                    row.iters
                );
            }
        }
        let _ = writeln!(s, "\ntargets (issue 5):");
        for t in self.targets() {
            let _ = writeln!(
                s,
                "{:<18} {:<36} {:>6.2}x  limit {:>4.2}x  {}",
                t.workload,
                t.measure,
                t.ratio,
                t.limit,
                if t.met() { "met" } else { "MISSED" }
            );
        }
        s
    }

    /// CSV, one line per workload and engine.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "workload,engine,median_ns,p25_ns,p75_ns,min_ns,iters,reps,vs_fastest_ecs,vs_raw\n",
        );
        for row in &self.rows {
            let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
            let _ = writeln!(
                s,
                "{},{},{:.1},{:.1},{:.1},{:.1},{},{},{},{}",
                row.workload,
                row.engine.name(),
                row.median * 1e9,
                row.p25 * 1e9,
                row.p75 * 1e9,
                row.min * 1e9,
                row.iters,
                row.reps,
                opt(self.vs_fastest(row)),
                opt(self.vs_raw(row))
            );
        }
        s
    }

    /// JSON with the machine facts, the rows and the targets.
    pub fn json(&self) -> String {
        let i = &self.info;
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let num = |v: Option<f64>| v.map_or("null".to_owned(), |v| format!("{v:.4}"));
        let mut s = String::from("{\n");
        let _ = writeln!(s, "  \"date\": {},", q(&i.date));
        let _ = writeln!(s, "  \"cpu\": {},", q(&i.cpu));
        let _ = writeln!(s, "  \"cpus\": {},", i.cpus);
        let _ = writeln!(s, "  \"rustc\": {},", q(&i.rustc));
        let _ = writeln!(s, "  \"commit\": {},", q(&i.commit));
        let _ = writeln!(s, "  \"load_start\": {},", q(&i.load_start));
        let _ = writeln!(s, "  \"load_end\": {},", q(&i.load_end));
        let versions: Vec<String> = i
            .versions
            .iter()
            .map(|(n, v)| format!("{}: {}", q(n), q(v)))
            .collect();
        let _ = writeln!(s, "  \"versions\": {{{}}},", versions.join(", "));
        s.push_str("  \"results\": [\n");
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                format!(
                    "    {{\"workload\": {}, \"engine\": {}, \"median_ns\": {:.1}, \"p25_ns\": {:.1}, \"p75_ns\": {:.1}, \"min_ns\": {:.1}, \"iters\": {}, \"reps\": {}, \"vs_fastest_ecs\": {}, \"vs_raw\": {}}}",
                    q(r.workload),
                    q(r.engine.name()),
                    r.median * 1e9,
                    r.p25 * 1e9,
                    r.p75 * 1e9,
                    r.min * 1e9,
                    r.iters,
                    r.reps,
                    num(self.vs_fastest(r)),
                    num(self.vs_raw(r))
                )
            })
            .collect();
        s.push_str(&rows.join(",\n"));
        s.push_str("\n  ],\n  \"targets\": [\n");
        let targets: Vec<String> = self
            .targets()
            .iter()
            .map(|t| {
                format!(
                    "    {{\"workload\": {}, \"measure\": {}, \"ratio\": {:.4}, \"limit\": {:.2}, \"met\": {}}}",
                    q(t.workload),
                    q(&t.measure),
                    t.ratio,
                    t.limit,
                    t.met()
                )
            })
            .collect();
        s.push_str(&targets.join(",\n"));
        s.push_str("\n  ]\n}\n");
        s
    }

    /// Markdown tables: medians with ratios, and the targets.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let i = &self.info;
        let versions: Vec<String> = i.versions.iter().map(|(n, v)| format!("{n} {v}")).collect();
        let _ = writeln!(
            s,
            "Measured {} on {} logical CPUs ({}), {}, ecs at `{}`, {}; 1-minute load average {} at the start, {} at the end.\n",
            i.date,
            i.cpus,
            i.cpu,
            i.rustc,
            i.commit,
            versions.join(", "),
            i.load_start,
            i.load_end
        );
        s.push_str("Each cell: median time per iteration, then (ratio to the fastest ECS of the row; ratio to `raw`).\n\n");
        let engines: Vec<Engine> = Engine::ALL
            .into_iter()
            .filter(|e| self.rows.iter().any(|r| r.engine == *e))
            .collect();
        s.push_str("| workload |");
        for e in &engines {
            let _ = write!(s, " {} |", e.name());
        }
        s.push_str("\n|---|");
        for _ in &engines {
            s.push_str("---:|");
        }
        s.push('\n');
        for w in self.workloads() {
            let _ = write!(s, "| {w} |");
            for &e in &engines {
                match self.get(w, e) {
                    None => s.push_str(" — |"),
                    Some(row) => {
                        let fastest = self
                            .vs_fastest(row)
                            .map_or("-".to_owned(), |r| format!("{r:.2}×"));
                        let raw = self
                            .vs_raw(row)
                            .map_or("-".to_owned(), |r| format!("{r:.2}×"));
                        let bold = self.fastest_ecs(w) == Some(row.median) && e.is_ecs();
                        let time = fmt_time(row.median);
                        if bold {
                            let _ = write!(s, " **{time}** ({fastest}; {raw}) |");
                        } else {
                            let _ = write!(s, " {time} ({fastest}; {raw}) |");
                        }
                    }
                }
            }
            s.push('\n');
        }
        s.push_str("\n| workload | measure | ratio | target | |\n|---|---|---:|---:|---|\n");
        for t in self.targets() {
            let _ = writeln!(
                s,
                "| {} | {} | {:.2}× | ≤ {:.2}× | {} |",
                t.workload,
                t.measure,
                t.ratio,
                t.limit,
                if t.met() { "met" } else { "**missed**" }
            );
        }
        s
    }
}
