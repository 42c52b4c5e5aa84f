//! The chunk-layout sweep from the command line: `sweep --help` lists the flags.
//!
//! Prints one line per world measure as each mix finishes (median, IQR, ratio to the `Vec`
//! baseline timed in the same rounds, ratio to the mix's best policy), then per mix and policy the chunk size, rows per chunk, memory and the
//! footprint of one pass over the hot columns; writes `--csv` and `--svg` if given.
//!
//! ```text
//! cargo run --release -p ecs-lab --bin sweep -- --entities 1000000 --reps 11 \
//!     --csv docs/sweep/sweep.csv --svg docs/sweep/sweep.svg
//! ```

use std::process::ExitCode;

use ecs_core::CacheSizes;
use ecs_lab::{
    eviction_bytes, run_sweep, to_csv, to_svg, to_svg_as, vs_best, ChartValue, Measure, Passes,
    Record, SweepArgs, USAGE,
};

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.iter().any(|a| a == "--help" || a == "-h") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let args = match SweepArgs::parse(&raw) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("sweep: {err}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    println!(
        "{} mixes × {} policies, {} entities, {} reps (+1 warm-up) of the best of {} {} \
         passes, {} replica(s), {} moves per add/remove rep",
        args.mixes.len(),
        args.policies.len(),
        args.entities,
        args.reps,
        args.best_of,
        args.passes.name(),
        args.replicas,
        args.moves
    );
    match args.passes {
        Passes::Cold => println!(
            "caches: {}; {} MiB read before each pass to evict them",
            CacheSizes::detect().describe(),
            eviction_bytes() >> 20
        ),
        Passes::Warm => println!("caches: {}", CacheSizes::detect().describe()),
    }
    println!(
        "{:<8} {:>14} {:<12} {:>9} {:>17} {:>8} {:>8} {:>9}",
        "mix", "policy", "measure", "median ns", "IQR ns", "vs Vec", "vs best", "spread"
    );
    // A mix's records arrive together once its rounds are done; print them when the next
    // mix's first one (or the end) shows the mix is complete, so `vs best` sees every policy.
    let mut pending: Vec<Record> = Vec::new();
    let records = run_sweep(&args, |r| {
        if pending.first().is_some_and(|p| p.mix != r.mix) {
            print_mix(&pending);
            pending.clear();
        }
        pending.push(r.clone());
    });
    print_mix(&pending);
    let records = match records {
        Ok(records) => records,
        Err(err) => {
            eprintln!("sweep: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("\nfootprint of one pass over the two hot columns, and memory:");
    println!(
        "{:<8} {:>14} {:>9} {:>6} {:>12} {:>10} {:>8} {:>12} {:>9}",
        "mix", "policy", "chunk B", "rows", "pass B", "lines", "pages", "memory B", "B/entity"
    );
    for r in records.iter().filter(|r| r.measure == Measure::ForEach) {
        println!(
            "{:<8} {:>14} {:>9} {:>6} {:>12} {:>10} {:>8} {:>12} {:>9.1}",
            r.mix,
            r.config,
            r.chunk_size,
            r.capacity,
            r.pass.bytes,
            r.pass.cache_lines,
            r.pass.pages,
            r.memory_bytes,
            r.memory_bytes as f64 / r.entities as f64
        );
    }
    for (path, text, what) in [
        (&args.csv, to_csv(&records), "CSV"),
        (&args.svg, to_svg(&records), "SVG"),
        (
            &args.svg_ratio,
            to_svg_as(&records, ChartValue::VsVec),
            "SVG of ratios",
        ),
    ] {
        if let Some(path) = path {
            if let Err(err) = std::fs::write(path, text) {
                eprintln!("sweep: cannot write {}: {err}", path.display());
                return ExitCode::FAILURE;
            }
            println!("{what} written to {}", path.display());
        }
    }
    ExitCode::SUCCESS
}

/// The lines of one mix's records, each world measure beside its baseline, the best
/// policy's median, and the spread of its replicas' medians (slowest over fastest).
fn print_mix(records: &[Record]) {
    for r in records {
        let Some(base) = r.measure.baseline() else {
            continue;
        };
        let vec = records
            .iter()
            .find(|b| b.measure == base && b.policy == r.policy)
            .map_or(f64::NAN, |b| r.stats.median / b.stats.median);
        println!(
            "{:<8} {:>14} {:<12} {:>9.3} {:>8.3}–{:<8.3} {:>7.2}× {:>7.2}× {:>8.2}×",
            r.mix,
            r.config,
            r.measure.name(),
            r.stats.median,
            r.stats.q1,
            r.stats.q3,
            vec,
            vs_best(records, r).unwrap_or(f64::NAN),
            r.placement_spread
        );
    }
}
