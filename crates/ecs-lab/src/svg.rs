//! Sweep records as an SVG chart, written by hand (no dependency).
//!
//! One panel per world measure present (`for_each`, `chunk_slice`, `add_remove`); in each, one
//! group of bars per policy, one bar per mix: the median in ns/entity, a whisker from the
//! first to the third quartile, and a black tick at the median of the `Vec` baseline timed
//! beside it. The first eight mixes take the Okabe–Ito colours (distinct for the common
//! colour-vision deficiencies), further ones hues spaced by the golden angle, so any number of
//! mixes stay distinct; every free-text label is XML-escaped. The run's metadata (entities,
//! repetitions, passes per sample, CPU model and load average where the machine reports them)
//! is printed under the title and kept in a `<desc>` element, so a chart carries how it was
//! measured.

use std::fmt::Write as _;

use ecs_core::CacheSizes;

use crate::csv::baseline_of;
use crate::record::{Measure, Record};
use crate::timer::{eviction_bytes, Passes};

const PANEL_H: f64 = 230.0;
const LEFT: f64 = 70.0;
const TOP: f64 = 50.0;
const BAR_W: f64 = 16.0;

/// What a chart's bars show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChartValue {
    /// Nanoseconds per entity, with a black tick at the `Vec` baseline's median.
    #[default]
    Nanoseconds,
    /// Each figure over the median of the `Vec` baseline timed beside it: 1.0 (a black
    /// line across each panel) is as fast as plain `Vec`s, so sizes of very different speed
    /// compare on one scale.
    VsVec,
}

/// The chart of `records` as an SVG document, in nanoseconds ([`to_svg_as`] for ratios).
///
/// ```
/// # use ecs_lab::{run_sweep, to_svg, SweepArgs};
/// let args = SweepArgs::parse(["--mix", "m=1:8", "--sizes", "4k,8k", "--min-rows", "",
///     "--entities", "100", "--reps", "1"]).unwrap();
/// let svg = to_svg(&run_sweep(&args, |_| {}).unwrap());
/// assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
/// assert_eq!(svg.matches("class=\"bar\"").count(), 3 * 2); // 3 measures × 2 sizes
/// ```
pub fn to_svg(records: &[Record]) -> String {
    to_svg_as(records, ChartValue::Nanoseconds)
}

/// The chart of `records` showing `value`.
///
/// ```
/// # use ecs_lab::{run_sweep, to_svg_as, ChartValue, SweepArgs};
/// let args = SweepArgs::parse(["--mix", "m=1:8", "--sizes", "4k,8k", "--min-rows", "",
///     "--entities", "100", "--reps", "1"]).unwrap();
/// let svg = to_svg_as(&run_sweep(&args, |_| {}).unwrap(), ChartValue::VsVec);
/// assert!(svg.contains("× Vec"));
/// assert_eq!(svg.matches("class=\"bar\"").count(), 3 * 2);
/// assert_eq!(svg.matches("class=\"vec\"").count(), 3); // one 1.0 line per panel
/// ```
pub fn to_svg_as(records: &[Record], value: ChartValue) -> String {
    let ratio = value == ChartValue::VsVec;
    let measures: Vec<Measure> = [Measure::ForEach, Measure::ChunkSlice, Measure::AddRemove]
        .into_iter()
        .filter(|m| records.iter().any(|r| r.measure == *m))
        .collect();
    let mixes = distinct(records.iter().map(|r| (r.mix.as_str(), r.row_bytes)));
    let configs = distinct(records.iter().map(|r| (r.config.as_str(), 0)));
    let group_w = (mixes.len() as f64 * BAR_W + 24.0).max(90.0);
    let labels: Vec<String> = mixes
        .iter()
        .map(|(name, row)| format!("{} ({row} B rows)", escape(name)))
        .collect();
    // Legend entries are about 6.5 px per character at 11 px.
    let legend_w: f64 = labels.iter().map(|l| 24.0 + 6.5 * l.len() as f64).sum();
    let width = (LEFT + configs.len() as f64 * group_w + 20.0)
        .max(LEFT + legend_w + 20.0)
        .max(640.0);
    let height = TOP + 14.0 + measures.len() as f64 * (PANEL_H + 40.0) + 10.0;
    let metadata = escape(&run_metadata(records));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(
        out,
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{LEFT}\" y=\"16\" \
         font-size=\"13\">{}</text>\n<desc>{metadata}</desc>\n<text x=\"{LEFT}\" \
         y=\"{}\" fill=\"#444\">{metadata}</text>",
        if ratio {
            "time over the plain Vec loop's by chunk policy and mix: median, IQR whisker, \
             black line = as fast as Vec"
        } else {
            "ns per entity by chunk policy and mix: median, IQR whisker, black tick = plain Vec"
        },
        TOP + 4.0
    );
    // Legend.
    let mut x = LEFT;
    for (i, label) in labels.iter().enumerate() {
        let _ = writeln!(
            out,
            "<rect x=\"{x:.1}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{}\"/><text \
             x=\"{:.1}\" y=\"35\">{label}</text>",
            colour(i),
            x + 14.0
        );
        x += 24.0 + 6.5 * label.len() as f64;
    }
    for (p, &measure) in measures.iter().enumerate() {
        let top = TOP + 14.0 + p as f64 * (PANEL_H + 40.0) + 14.0;
        let bottom = top + PANEL_H - 20.0;
        let of_measure: Vec<&Record> = records.iter().filter(|r| r.measure == measure).collect();
        let base = |r: &Record| baseline_of(records, r).map(|b| b.stats.median);
        // A figure of `r` as the chart shows it; `None` for a ratio without a baseline.
        let shown = |r: &Record, x: f64| match value {
            ChartValue::Nanoseconds => Some(x),
            ChartValue::VsVec => base(r).filter(|&b| b > 0.0).map(|b| x / b),
        };
        let peak = of_measure
            .iter()
            .filter_map(|r| {
                let q3 = shown(r, r.stats.q3)?;
                Some(q3.max(if ratio { 1.0 } else { base(r).unwrap_or(0.0) }))
            })
            .fold(0.0, f64::max);
        let (step, ticks) = axis(peak);
        let scale = (bottom - top) / (step * ticks as f64);
        let y = |v: f64| bottom - v * scale;
        let _ = writeln!(
            out,
            "<g class=\"panel\">\n<text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"12\" \
             font-weight=\"bold\">{}</text>",
            top - 4.0,
            measure.name()
        );
        for t in 0..=ticks {
            let v = step * t as f64;
            let _ = writeln!(
                out,
                "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yv:.1}\" y2=\"{yv:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                width - 20.0,
                LEFT - 4.0,
                y(v) + 4.0,
                tick_label(v),
                yv = y(v),
            );
        }
        let _ = writeln!(
            out,
            "<text transform=\"translate(14 {:.1}) rotate(-90)\" \
             text-anchor=\"middle\">{}</text>",
            (top + bottom) / 2.0,
            if ratio { "× Vec" } else { "ns / entity" }
        );
        if ratio {
            let _ = writeln!(
                out,
                "<line class=\"vec\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y1:.1}\" y2=\"{y1:.1}\" \
                 stroke=\"black\" stroke-width=\"1.5\"/>",
                width - 20.0,
                y1 = y(1.0)
            );
        }
        for (g, (config, _)) in configs.iter().enumerate() {
            let gx = LEFT + g as f64 * group_w + (group_w - mixes.len() as f64 * BAR_W) / 2.0;
            for (m, (mix, _)) in mixes.iter().enumerate() {
                let Some(r) = of_measure
                    .iter()
                    .find(|r| r.config == *config && r.mix == *mix)
                else {
                    continue;
                };
                let (Some(median), Some(q1), Some(q3)) = (
                    shown(r, r.stats.median),
                    shown(r, r.stats.q1),
                    shown(r, r.stats.q3),
                ) else {
                    continue;
                };
                let bx = gx + m as f64 * BAR_W;
                let unit = if ratio { "× Vec" } else { "ns" };
                let _ = writeln!(
                    out,
                    "<rect class=\"bar\" x=\"{bx:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
                     height=\"{:.1}\" fill=\"{}\"><title>{} {}: {median:.3} {unit} (IQR \
                     {q1:.3}–{q3:.3})</title></rect>",
                    y(median),
                    BAR_W - 2.0,
                    (median * scale).max(0.0),
                    colour(m),
                    escape(mix),
                    escape(config),
                );
                let cx = bx + (BAR_W - 2.0) / 2.0;
                let _ = writeln!(
                    out,
                    "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" \
                     stroke=\"#333\"/>",
                    y(q1),
                    y(q3)
                );
                if let Some(b) = base(r).filter(|_| !ratio) {
                    let _ = writeln!(
                        out,
                        "<line class=\"vec\" x1=\"{bx:.1}\" x2=\"{:.1}\" y1=\"{yb:.1}\" \
                         y2=\"{yb:.1}\" stroke=\"black\" stroke-width=\"2\"/>",
                        bx + BAR_W - 2.0,
                        yb = y(b)
                    );
                }
            }
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                LEFT + (g as f64 + 0.5) * group_w,
                bottom + 14.0,
                escape(config)
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

/// The distinct values of `items`, in first-seen order.
fn distinct<'a>(items: impl Iterator<Item = (&'a str, usize)>) -> Vec<(&'a str, usize)> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for item in items {
        if !seen.iter().any(|s| s.0 == item.0) {
            seen.push(item);
        }
    }
    seen
}

/// A step of 1, 2 or 5 × 10ᵏ and a tick count (at most 5) whose top reaches `peak`.
fn axis(peak: f64) -> (f64, usize) {
    if peak <= 0.0 || !peak.is_finite() {
        return (1.0, 1);
    }
    let raw = peak / 5.0;
    let pow = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * pow)
        .find(|s| s * 5.0 >= peak)
        .unwrap_or(10.0 * pow);
    (step, ((peak / step).ceil() as usize).max(1))
}

fn tick_label(v: f64) -> String {
    if v == v.trunc() {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_owned()
    }
}

/// Colour `i` of any number: hues spaced by the golden angle.
pub(crate) fn colour(i: usize) -> String {
    /// Okabe & Ito's palette without its black (bars have black whiskers).
    const OKABE_ITO: [&str; 7] = [
        "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
    ];
    match OKABE_ITO.get(i) {
        Some(c) => (*c).to_owned(),
        None => format!("hsl({:.0},60%,45%)", (i as f64 * 137.508) % 360.0),
    }
}

/// One line saying how `records` were measured: entities, repetitions, passes per sample,
/// cold or warm passes, replicas, the machine's caches, CPU model and load average (Linux;
/// left out elsewhere).
fn run_metadata(records: &[Record]) -> String {
    let mut parts = Vec::new();
    if let Some(r) = records.first() {
        parts.push(format!(
            "{} entities, {} reps, best of {} passes",
            r.entities, r.stats.reps, r.best_of
        ));
        parts.push(match r.passes {
            Passes::Cold => format!(
                "cold passes ({} MiB evicted before each)",
                eviction_bytes() >> 20
            ),
            Passes::Warm => "warm passes (back to back)".to_owned(),
        });
        if r.replicas > 1 {
            parts.push(format!("{} replicas", r.replicas));
        }
    }
    parts.push(CacheSizes::detect().describe());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|l| l.trim_start_matches([' ', '\t', ':']).trim().to_owned())
        });
    if let Some(cpu) = cpu {
        parts.push(cpu);
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        let load: Vec<&str> = load.split_whitespace().take(3).collect();
        parts.push(format!("load {}", load.join(" ")));
    }
    parts.join(" · ")
}

/// `s` with XML's special characters escaped.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::tests::record;

    #[test]
    fn axis_reaches_the_peak_in_few_round_ticks() {
        for peak in [0.07, 0.9, 1.0, 3.3, 17.0, 250.0, 999.0] {
            let (step, ticks) = axis(peak);
            assert!(step * ticks as f64 >= peak, "{peak}");
            assert!(ticks <= 5, "{peak}: {ticks}");
            let mantissa = step / 10f64.powf(step.log10().floor());
            assert!(
                [1.0, 2.0, 5.0].iter().any(|m| (m - mantissa).abs() < 1e-9),
                "{step}"
            );
        }
        assert_eq!(axis(0.0), (1.0, 1));
    }

    #[test]
    fn colours_differ_for_many_mixes() {
        let colours: Vec<String> = (0..20).map(colour).collect();
        for (i, c) in colours.iter().enumerate() {
            assert!(!colours[..i].contains(c), "{c} repeats");
        }
    }

    #[test]
    fn bars_whiskers_baselines_and_escaped_names() {
        let records = [
            record("<a&b>", 4, Measure::ForEach, 3.0),
            record("<a&b>", 4, Measure::VecLoop, 1.5),
            record("<a&b>", 16, Measure::ForEach, 2.0),
            record("c", 16, Measure::ForEach, 2.5),
            record("c", 16, Measure::AddRemove, 9.0),
        ];
        let svg = to_svg(&records);
        assert_eq!(svg.matches("class=\"bar\"").count(), 4);
        assert_eq!(svg.matches("class=\"vec\"").count(), 1);
        assert_eq!(svg.matches("class=\"panel\"").count(), 2);
        assert!(svg.contains("&lt;a&amp;b&gt; (32 B rows)"));
        assert!(!svg.contains("<a&b>"));
        assert_eq!(svg.matches("<g").count(), svg.matches("</g>").count());
        assert_eq!(
            svg.matches("<rect").count(),
            svg.matches("</rect>").count() + 1 + 2
        );
        // Medians (upper of two samples) are 6 and 5 in the for_each panel: the axis tops
        // at or above the 4-KiB whisker end (q3 = 6).
        assert!(svg.contains(">6</text>") || svg.contains(">8</text>"));
        // The run's metadata is in the file, shown and as a description.
        assert!(svg.contains("<desc>1000 entities, 2 reps, best of 1 passes"));
        assert_eq!(svg.matches("1000 entities, 2 reps").count(), 2);
        // The first mixes take the colour-blind-safe palette.
        assert!(svg.contains("fill=\"#E69F00\"") && svg.contains("fill=\"#56B4E9\""));
    }
}
