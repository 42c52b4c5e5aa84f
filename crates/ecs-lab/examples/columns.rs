//! A question the sweep's mixes cannot ask: for a query touching 2 of 12 columns, how much
//! do column order and column alignment matter, at which chunk size?
//!
//! One archetype of two hot `[f32; 3]` columns (read and written: `a += b`) and ten cold
//! columns of 1 to 32 bytes and alignments 1 to 16 (139-byte rows with the entity id), in
//! worlds of every chunk size × column order (registration, min-padding, hot columns first)
//! × column alignment (each type's own, or 64 bytes as Unity aligns arrays). Cold passes by
//! default; `--warm` for back-to-back ones.
//!
//! ```text
//! cargo run --release -p ecs-lab --example columns -- --entities 1000000 --reps 11 --csv columns.csv
//! ```

use std::process::ExitCode;

use ecs_core::{ChunkPolicy, World};
use ecs_lab::{run_experiment, trials_to_csv, Experiment, Hot, Order, Passes, Trial, WorldConfig};
use ecs_query::{QueryState, RefRO, RefRW};

macro_rules! cold {
    ($($name:ident($ty:ty)),* $(,)?) => {
        $(
            #[derive(Clone, Copy)]
            struct $name(#[allow(dead_code, reason = "cold bytes: stored, never read")] $ty);
        )*
    };
}

#[derive(Clone, Copy)]
#[repr(align(16))]
struct Quad(#[allow(dead_code, reason = "cold bytes")] [u8; 16]);

cold!(
    C1(u8),
    C2(u16),
    C3([u8; 3]),
    C4(u32),
    C5(u64),
    C6([u8; 12]),
    C7(Quad),
    C8([u64; 4]),
    C9([u8; 5]),
    C10([u32; 6]),
);

type A = Hot<0, 3>;
type B = Hot<1, 3>;

const HOT_FIRST: Order = Order::First("hot first", |w| {
    vec![w.register_component::<A>(), w.register_component::<B>()]
});

fn spawn(world: &mut World, n: usize) {
    world
        .spawn_batch((0..n).map(|i| {
            let b = i as u8;
            (
                Hot::<0, 3>([i as f32; 3]),
                Hot::<1, 3>([1.0; 3]),
                C1(b),
                C2(b.into()),
                C3([b; 3]),
                C4(b.into()),
                C5(b.into()),
                C6([b; 12]),
                C7(Quad([b; 16])),
                C8([b.into(); 4]),
                C9([b; 5]),
                C10([b.into(); 6]),
            )
        }))
        .for_each(drop);
}

fn main() -> ExitCode {
    let mut entities = 1_000_000;
    let mut reps = 11;
    let mut passes = Passes::Cold;
    let mut csv = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match flag.as_str() {
            "--entities" => entities = value().replace('_', "").parse().unwrap_or(0),
            "--reps" => reps = value().parse().unwrap_or(0),
            "--csv" => csv = Some(value()),
            "--warm" => passes = Passes::Warm,
            other => {
                eprintln!(
                    "columns: unknown flag {other}; flags: --entities N --reps N --csv PATH --warm"
                );
                return ExitCode::from(2);
            }
        }
    }
    let sizes = [4096, 16 << 10, 64 << 10, 256 << 10].map(ChunkPolicy::Fixed);
    let configs = WorldConfig::grid(
        &sizes,
        &[Order::Registration, Order::MinPadding, HOT_FIRST],
        &[1, 64],
    );
    let mut experiment = Experiment::new("2 of 12 columns", configs);
    experiment.reps = reps;
    experiment.passes = passes;
    println!(
        "{} worlds of {entities} entities (139-byte rows, 12 columns), {reps} reps of one {} pass",
        experiment.configs.len(),
        passes.name()
    );
    let trials = run_experiment(
        &experiment,
        |world| {
            spawn(world, entities);
            QueryState::<(RefRW<A>, RefRO<B>)>::new(world)
        },
        |world, query| {
            let mut n = 0;
            query.for_each(world, |(a, b)| {
                for (x, y) in a.0.iter_mut().zip(b.0) {
                    *x += y;
                }
                n += 1;
            });
            n
        },
    );
    let trials = match trials {
        Ok(t) => t,
        Err(err) => {
            eprintln!("columns: {err}");
            return ExitCode::FAILURE;
        }
    };
    print_table(&trials);
    if let Some(path) = csv {
        if let Err(err) = std::fs::write(&path, trials_to_csv(&trials)) {
            eprintln!("columns: cannot write {path}: {err}");
            return ExitCode::FAILURE;
        }
        println!("CSV written to {path}");
    }
    ExitCode::SUCCESS
}

/// One line per configuration.
fn print_table(trials: &[Trial]) {
    println!(
        "{:<38} {:>9} {:>17} {:>8} {:>6} {:>10}",
        "config", "median ns", "IQR ns", "vs best", "rows", "memory MB"
    );
    for t in trials {
        println!(
            "{:<38} {:>9.3} {:>8.3}–{:<8.3} {:>7.2}× {:>6} {:>10.1}",
            t.config,
            t.stats.median,
            t.stats.q1,
            t.stats.q3,
            t.vs_best,
            t.capacity,
            t.memory_bytes as f64 / 1e6
        );
    }
}
