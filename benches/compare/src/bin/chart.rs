//! Draws `results/results.csv` as an SVG bar chart: one group per workload, one bar per engine,
//! bar length = median time relative to the fastest ECS of the workload, on a log₂ axis.
//!
//! `cargo run --release --bin chart [results.csv] [out.svg]`; the defaults are this package's
//! `results/results.csv` and the repository's `docs/performance.svg`.

use std::fmt::Write as _;

// The one-shot rows (a query built per iteration) sit beside their engine's kept query, in a
// lighter shade of its colour.
const ENGINES: [(&str, &str); 8] = [
    ("ours", "#d62728"),
    ("ours_oneshot", "#f4a3a3"),
    ("hecs", "#1f77b4"),
    ("hecs_oneshot", "#9ecae9"),
    ("bevy_ecs", "#9467bd"),
    ("legion", "#2ca02c"),
    ("raw", "#7f7f7f"),
    ("raw_flat", "#bcbcbc"),
];

struct Row {
    workload: String,
    engine: String,
    median_ns: f64,
    vs_fastest: f64,
}

fn parse(csv: &str) -> Vec<Row> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header line").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no `{name}` column"))
    };
    let (w, e, m, f) = (
        col("workload"),
        col("engine"),
        col("median_ns"),
        col("vs_fastest_ecs"),
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            Row {
                workload: cells[w].to_owned(),
                engine: cells[e].to_owned(),
                median_ns: cells[m].parse().expect("median_ns is a number"),
                vs_fastest: cells[f].parse().expect("vs_fastest_ecs is a number"),
            }
        })
        .collect()
}

fn fmt_time(ns: f64) -> String {
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

fn svg(rows: &[Row], title: &str) -> String {
    let mut workloads: Vec<&str> = Vec::new();
    for r in rows {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let (left, right, top, bar, gap) = (150.0, 250.0, 80.0, 13.0, 16.0);
    let plot_w = 560.0;
    let width = left + plot_w + right;
    let group_h = |w: &str| rows.iter().filter(|r| r.workload == w).count() as f64 * bar + gap;
    let height = top + workloads.iter().map(|w| group_h(w)).sum::<f64>() + 40.0;
    // x axis: log2 of the ratio, from 1/8 to the largest ratio (at least 16).
    let max_ratio = rows.iter().map(|r| r.vs_fastest).fold(16.0, f64::max);
    let (lo, hi) = (-3.0f64, max_ratio.log2().ceil());
    let x = |ratio: f64| left + (ratio.max(2f64.powf(lo)).log2() - lo) / (hi - lo) * plot_w;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"##
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="white"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="{}" y="22" font-size="15" font-weight="bold">{}</text>"##,
        left,
        escape(title)
    );
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="40" fill="#444">median time per iteration relative to the fastest ECS of each workload (log scale; shorter is faster)</text>"##
    );
    // Legend.
    let mut lx = left;
    for (name, color) in ENGINES {
        if rows.iter().any(|r| r.engine == name) {
            let _ = writeln!(
                s,
                r##"<rect x="{lx}" y="50" width="12" height="12" fill="{color}"/><text x="{}" y="60">{name}</text>"##,
                lx + 16.0
            );
            lx += 90.0;
        }
    }
    // Grid.
    let bottom = height - 30.0;
    let mut e = lo as i32;
    while f64::from(e) <= hi {
        let ratio = 2f64.powi(e);
        let gx = x(ratio);
        let (stroke, dash) = if e == 0 {
            ("#000", "")
        } else {
            ("#ccc", r##" stroke-dasharray="3,3""##)
        };
        let _ = writeln!(
            s,
            r##"<line x1="{gx:.1}" y1="{}" x2="{gx:.1}" y2="{bottom}" stroke="{stroke}"{dash}/>"##,
            top - 6.0
        );
        let label = if ratio < 1.0 {
            format!("{ratio}×")
        } else {
            format!("{}×", ratio as u64)
        };
        let _ = writeln!(
            s,
            r##"<text x="{gx:.1}" y="{}" text-anchor="middle" fill="#444">{label}</text>"##,
            bottom + 14.0
        );
        e += 1;
    }
    // Bars.
    let mut y = top;
    for w in &workloads {
        let group: Vec<&Row> = ENGINES
            .iter()
            .filter_map(|(name, _)| rows.iter().find(|r| r.workload == *w && r.engine == *name))
            .collect();
        let mid = y + group.len() as f64 * bar / 2.0;
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{:.1}" text-anchor="end" font-weight="bold">{}</text>"##,
            left - 8.0,
            mid + 4.0,
            escape(w)
        );
        for r in group {
            let color = ENGINES
                .iter()
                .find(|(n, _)| *n == r.engine)
                .map_or("#000", |(_, c)| c);
            let x0 = x(2f64.powf(lo));
            let x1 = x(r.vs_fastest);
            let _ = writeln!(
                s,
                r##"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{color}"><title>{} {}: {} ({:.2}×)</title></rect>"##,
                (x1 - x0).max(1.0),
                bar - 2.0,
                escape(w),
                escape(&r.engine),
                fmt_time(r.median_ns),
                r.vs_fastest
            );
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" font-size="10">{} {} ({:.2}×)</text>"##,
                x1 + 4.0,
                y + bar - 3.5,
                escape(&r.engine),
                fmt_time(r.median_ns),
                r.vs_fastest
            );
            y += bar;
        }
        y += gap;
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let csv_path = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/results/results.csv").to_owned());
    let svg_path = args.next().unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/performance.svg").to_owned()
    });
    let csv = std::fs::read_to_string(&csv_path)
        .unwrap_or_else(|e| panic!("cannot read {csv_path}: {e}; run `cargo run --release` first"));
    let rows = parse(&csv);
    let json_path = std::path::Path::new(&csv_path).with_extension("json");
    let date = std::fs::read_to_string(json_path)
        .ok()
        .and_then(|j| {
            let i = j.find("\"date\": \"")? + 9;
            Some(j[i..i + j[i..].find('"')?].to_owned())
        })
        .unwrap_or_default();
    let title = format!("ecs vs hecs, bevy_ecs, legion and raw loops — {date}");
    std::fs::write(&svg_path, svg(&rows, &title))
        .unwrap_or_else(|e| panic!("cannot write {svg_path}: {e}"));
    eprintln!("wrote {svg_path}");
}
