//! `cargo run --release` (in `benches/compare`): every workload on every engine, interleaved,
//! medians; prints the table and writes `results/results.{csv,json,md}`.
//!
//! Options: `--reps N` (repetitions, default 21), `--batch-ms N` (length of one timed batch,
//! default 10), `--only w1,w2` (a subset of workloads), `--engines ours,raw` (a subset of
//! engines), `--out DIR` (default `results/`), `--no-write`, and `--profile N`: run each selected
//! engine exactly `N` iterations once, untimed by the harness, for `valgrind --tool=callgrind`
//! (instructions per iteration = the closure's cost / N).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ecs_compare::harness::{measure, Plan};
use ecs_compare::report::{Report, Row};
use ecs_compare::sysinfo::SysInfo;
use ecs_compare::workloads::{Engine, WORKLOADS};

struct Args {
    plan: Plan,
    only: Option<Vec<String>>,
    engines: Option<Vec<String>>,
    out: Option<PathBuf>,
    profile: Option<u64>,
}

fn parse_args() -> Args {
    let mut args = Args {
        plan: Plan {
            reps: 21,
            batch: Duration::from_millis(10),
        },
        only: None,
        engines: None,
        profile: None,
        out: Some(PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/results"
        ))),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--reps" => args.plan.reps = value().parse().expect("--reps takes a number"),
            "--batch-ms" => {
                args.plan.batch =
                    Duration::from_millis(value().parse().expect("--batch-ms takes a number"));
            }
            "--only" => args.only = Some(value().split(',').map(str::to_owned).collect()),
            "--engines" => args.engines = Some(value().split(',').map(str::to_owned).collect()),
            "--out" => args.out = Some(PathBuf::from(value())),
            "--no-write" => args.out = None,
            "--profile" => args.profile = Some(value().parse().expect("--profile takes a number")),
            "--bench" => {} // passed by `cargo bench`
            other => panic!("unknown argument `{other}`; see the doc comment of main.rs"),
        }
    }
    args
}

fn main() {
    let args = parse_args();
    let info = SysInfo::collect();
    let started = Instant::now();
    let mut rows = Vec::new();
    for workload in WORKLOADS {
        if let Some(only) = &args.only {
            if !only.iter().any(|w| w == workload.name) {
                continue;
            }
        }
        eprint!("{:<18} preparing", workload.name);
        let (engines, mut runs): (Vec<Engine>, Vec<_>) = Engine::ALL
            .into_iter()
            .filter(|e| {
                args.engines
                    .as_ref()
                    .is_none_or(|list| list.iter().any(|n| n == e.name()))
            })
            .filter_map(|e| e.prepare(workload.name).map(|run| (e, run)))
            .unzip();
        if let Some(iters) = args.profile {
            for (engine, run) in engines.iter().zip(&mut runs) {
                let t = run(iters);
                eprint!(", {} {:.3} ms", engine.name(), t.as_secs_f64() * 1e3);
            }
            eprintln!();
            continue;
        }
        eprint!(", measuring {} engines", engines.len());
        let t = Instant::now();
        let measured = measure(&mut runs, args.plan);
        drop(runs);
        eprintln!(" ({:.1} s)", t.elapsed().as_secs_f64());
        for (engine, m) in engines.into_iter().zip(measured) {
            rows.push(Row {
                workload: workload.name,
                engine,
                median: m.median(),
                p25: m.quantile(0.25),
                p75: m.quantile(0.75),
                min: m.quantile(0.0),
                iters: m.iters,
                reps: m.per_iter.len(),
            });
        }
    }
    let mut info = info;
    info.load_end = ecs_compare::sysinfo::load_average();
    if args.profile.is_some() {
        return;
    }
    let report = Report { info, rows };
    println!("{}", report.text());
    eprintln!("total {:.0} s", started.elapsed().as_secs_f64());
    if let Some(dir) = args.out {
        std::fs::create_dir_all(&dir).expect("results directory");
        for (name, text) in [
            ("results.csv", report.csv()),
            ("results.json", report.json()),
            ("results.md", report.markdown()),
        ] {
            std::fs::write(dir.join(name), text).expect("results file");
        }
        eprintln!("wrote {}/results.{{csv,json,md}}", dir.display());
    }
}
