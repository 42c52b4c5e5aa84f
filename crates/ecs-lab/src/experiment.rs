//! Sweeps over worlds the user builds: any components, any number of archetypes, any work,
//! timed under every [`WorldConfig`] (chunk policy × column [`Order`] × column alignment) the
//! way [`run_sweep`](crate::run_sweep) times its mixes.
//!
//! [`run_experiment`] makes one world per configuration, hands it to the `build` closure
//! (which spawns whatever the question needs and returns any state the work keeps, a
//! `QueryState` say), then times the `work` closure on every world round-robin, repetition
//! by repetition, each pass cold or warm ([`Passes`]), replicated in shuffled build orders as
//! the sweep is. A question the lab did not foresee is a few lines:
//!
//! ```
//! use ecs_core::World;
//! use ecs_lab::{run_experiment, ChunkPolicy, Experiment, Order, WorldConfig};
//! use ecs_query::{QueryState, RefRO, RefRW};
//!
//! let configs = WorldConfig::grid(
//!     &[ChunkPolicy::Fixed(4096), ChunkPolicy::Fixed(16384)],
//!     &[Order::Registration, Order::MinPadding],
//!     &[1, 64],
//! );
//! let mut experiment = Experiment::new("u8 beside f32", configs);
//! experiment.reps = 2;
//! let trials = run_experiment(
//!     &experiment,
//!     |world: &mut World| {
//!         world.spawn_batch((0..1000).map(|i| (i as u8, i as f32, 1.0f64))).for_each(drop);
//!         QueryState::<(RefRW<f32>, RefRO<f64>)>::new(world)
//!     },
//!     |world, query| {
//!         let mut n = 0;
//!         query.for_each(world, |(mut a, b)| {
//!             *a += *b as f32;
//!             n += 1;
//!         });
//!         n
//!     },
//! )
//! .unwrap();
//! assert_eq!(trials.len(), 8);
//! assert!(trials.iter().all(|t| t.items == 1000));
//! assert_eq!(trials[3].config, "4 KiB · min-padding · align 64");
//! assert!(trials.iter().any(|t| t.vs_best == 1.0));
//! ```
//!
//! Cost: every configuration's world is alive at once while a replica is measured.

use ecs_core::{ChunkPolicy, ComponentId, World};

use crate::args::policy_label;
use crate::error::LabError;
use crate::measure::placement_spread;
use crate::stats::Stats;
use crate::sweep::Shuffle;
use crate::timer::{Passes, Timer};

/// Where an archetype's column arrays sit in its chunks: [`ecs_core::ColumnOrder`], with the
/// columns to put first named by a function of the world (component ids exist only once a
/// world registered the types).
#[derive(Clone, Copy, Debug)]
pub enum Order {
    /// Registration order (the world's default).
    Registration,
    /// The order with the least padding ([`ecs_core::ColumnOrder::MinPadding`]).
    MinPadding,
    /// These columns first, the rest by descending alignment
    /// ([`ecs_core::ColumnOrder::First`]): a label for reports, and a function registering
    /// (or looking up) the components to put first.
    ///
    /// ```
    /// # use ecs_lab::Order;
    /// let hot_first = Order::First("hot first", |w| vec![w.register_component::<f32>()]);
    /// assert_eq!(hot_first.name(), "hot first");
    /// ```
    First(&'static str, fn(&mut World) -> Vec<ComponentId>),
}

impl Order {
    /// The name in labels and CSV.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Registration => "registration",
            Self::MinPadding => "min-padding",
            Self::First(label, _) => label,
        }
    }

    fn apply(&self, world: &mut World) {
        let order = match self {
            Self::Registration => ecs_core::ColumnOrder::Registration,
            Self::MinPadding => ecs_core::ColumnOrder::MinPadding,
            Self::First(_, ids) => ecs_core::ColumnOrder::First(ids(world)),
        };
        world.set_column_order(order);
    }
}

/// One world configuration of an experiment.
#[derive(Clone, Copy, Debug)]
pub struct WorldConfig {
    /// How chunks are sized.
    pub policy: ChunkPolicy,
    /// Where columns sit in a chunk.
    pub order: Order,
    /// Every column array starts at a multiple of this ([`World::set_column_alignment`];
    /// 1: each column aligned for its type).
    pub column_align: usize,
}

impl WorldConfig {
    /// `policy` with registration order and types' own alignment.
    pub fn new(policy: ChunkPolicy) -> Self {
        Self {
            policy,
            order: Order::Registration,
            column_align: 1,
        }
    }

    /// Every combination, policies outermost, then orders, then alignments.
    pub fn grid(policies: &[ChunkPolicy], orders: &[Order], aligns: &[usize]) -> Vec<Self> {
        let mut out = Vec::with_capacity(policies.len() * orders.len() * aligns.len());
        for &policy in policies {
            for &order in orders {
                for &column_align in aligns {
                    out.push(Self {
                        policy,
                        order,
                        column_align,
                    });
                }
            }
        }
        out
    }

    /// `"16 KiB"`, with `" · ORDER"` unless registration order and `" · align N"` unless 1.
    ///
    /// ```
    /// # use ecs_lab::{ChunkPolicy, Order, WorldConfig};
    /// let mut c = WorldConfig::new(ChunkPolicy::Fixed(4096));
    /// assert_eq!(c.label(), "4 KiB");
    /// c.order = Order::MinPadding;
    /// c.column_align = 64;
    /// assert_eq!(c.label(), "4 KiB · min-padding · align 64");
    /// ```
    pub fn label(&self) -> String {
        let mut label = policy_label(self.policy);
        if !matches!(self.order, Order::Registration) {
            label.push_str(" · ");
            label.push_str(self.order.name());
        }
        if self.column_align > 1 {
            label.push_str(&format!(" · align {}", self.column_align));
        }
        label
    }

    /// An empty world so configured.
    ///
    /// # Errors
    /// [`LabError::Policy`] if the world refuses the policy or the alignment.
    pub fn world(&self) -> Result<World, LabError> {
        let mut world = World::with_chunk_policy(self.policy)?;
        world.set_column_alignment(self.column_align)?;
        self.order.apply(&mut world);
        Ok(world)
    }
}

/// What an experiment runs: its configurations and how it times them.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The name in reports.
    pub name: String,
    /// One world per configuration (per replica).
    pub configs: Vec<WorldConfig>,
    /// Timed repetitions per replica (after one warm-up).
    pub reps: usize,
    /// Passes per repetition; the fastest is its sample.
    pub best_of: usize,
    /// Cold (the default) or warm passes.
    pub passes: Passes,
    /// Times every world is built and measured, in shuffled orders; samples are pooled.
    pub replicas: usize,
    /// Seed of the build orders.
    pub seed: u64,
}

impl Experiment {
    /// `configs` timed as the sweep's defaults: 11 reps of 1 cold pass, one replica.
    pub fn new(name: impl Into<String>, configs: Vec<WorldConfig>) -> Self {
        Self {
            name: name.into(),
            configs,
            reps: 11,
            best_of: 1,
            passes: Passes::Cold,
            replicas: 1,
            seed: 1,
        }
    }
}

/// The result of one configuration of an experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The experiment's name.
    pub experiment: String,
    /// [`WorldConfig::label`] of the configuration.
    pub config: String,
    /// Its chunk policy.
    pub policy: ChunkPolicy,
    /// Its [`Order::name`].
    pub order: &'static str,
    /// Its column alignment.
    pub column_align: usize,
    /// Items the work reported per pass (the last pass's count).
    pub items: usize,
    /// Nanoseconds per item, every replica's samples pooled.
    pub stats: Stats,
    /// Passes per repetition.
    pub best_of: usize,
    /// Cold or warm passes.
    pub passes: Passes,
    /// Replicas pooled.
    pub replicas: usize,
    /// The slowest replica's median over the fastest's (1.0 for one replica).
    pub placement_spread: f64,
    /// The world's memory by its layout report after `build` (first replica).
    pub memory_bytes: usize,
    /// Its chunks, all archetypes together.
    pub chunks: usize,
    /// Rows per chunk of its most populous archetype.
    pub capacity: usize,
    /// The median over the lowest median of the experiment (1.0 for the fastest).
    pub vs_best: f64,
}

/// Builds a world per configuration with `build`, times `work` (which returns how many
/// items it handled, the divisor of its time) on each, and returns one [`Trial`] per
/// configuration in `experiment.configs`' order. See the module docs for an example.
///
/// # Errors
/// [`LabError::Zero`] for zero reps, passes or replicas; [`LabError::Empty`] for no
/// configurations; [`LabError::Policy`] if a world refuses its configuration.
pub fn run_experiment<S>(
    experiment: &Experiment,
    mut build: impl FnMut(&mut World) -> S,
    mut work: impl FnMut(&mut World, &mut S) -> usize,
) -> Result<Vec<Trial>, LabError> {
    let e = experiment;
    for (what, n) in [
        ("reps", e.reps),
        ("best_of", e.best_of),
        ("replicas", e.replicas),
    ] {
        if n == 0 {
            return Err(LabError::Zero(what));
        }
    }
    if e.configs.is_empty() {
        return Err(LabError::Empty("configurations"));
    }
    let n = e.configs.len();
    let mut timer = Timer::new(e.passes);
    let mut order = Shuffle::new(e.seed);
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut items = vec![0; n];
    let mut facts: Vec<Option<(usize, usize, usize)>> = vec![None; n];
    for _ in 0..e.replicas {
        let mut built: Vec<Option<(World, S)>> = (0..n).map(|_| None).collect();
        for c in order.permutation(n) {
            let mut world = e.configs[c].world()?;
            let state = build(&mut world);
            built[c] = Some((world, state));
        }
        let mut worlds: Vec<(World, S)> = built.into_iter().flatten().collect();
        for (c, (world, _)) in worlds.iter().enumerate() {
            facts[c].get_or_insert_with(|| {
                let report = world.memory_report();
                let chunks = report.archetypes.iter().map(|a| a.chunks).sum();
                let capacity = report
                    .archetypes
                    .iter()
                    .max_by_key(|a| a.entities)
                    .map_or(0, |a| a.capacity);
                (report.memory.total(), chunks, capacity)
            });
        }
        for rep in 0..=e.reps {
            for (c, (world, state)) in worlds.iter_mut().enumerate() {
                let (ns, count) = timer.time_counted(e.best_of, || work(world, state));
                items[c] = count;
                if rep > 0 {
                    samples[c].push(ns);
                }
            }
        }
    }
    let medians: Vec<f64> = samples
        .iter()
        .map(|s| Stats::of(s.clone()).median)
        .collect();
    let best = medians.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(e.configs
        .iter()
        .zip(samples)
        .enumerate()
        .map(|(c, (config, samples))| {
            let (memory_bytes, chunks, capacity) = facts[c].unwrap_or_default();
            Trial {
                experiment: e.name.clone(),
                config: config.label(),
                policy: config.policy,
                order: config.order.name(),
                column_align: config.column_align,
                items: items[c],
                placement_spread: placement_spread(&samples, e.reps),
                stats: Stats::of(samples),
                best_of: e.best_of,
                passes: e.passes,
                replicas: e.replicas,
                memory_bytes,
                chunks,
                capacity,
                vs_best: if best > 0.0 { medians[c] / best } else { 1.0 },
            }
        })
        .collect())
}

/// The CSV of `trials`, after a header line (names quoted: they are free text).
///
/// ```
/// # use ecs_lab::{run_experiment, trials_to_csv, ChunkPolicy, Experiment, WorldConfig};
/// let mut e = Experiment::new("x", vec![WorldConfig::new(ChunkPolicy::Fixed(4096))]);
/// e.reps = 1;
/// let trials = run_experiment(&e, |w| { w.spawn((1u32,)); }, |_, _| 1).unwrap();
/// let csv = trials_to_csv(&trials);
/// assert!(csv.starts_with("experiment,config,chunk_policy,order,column_align,items,"));
/// assert!(csv.lines().nth(1).unwrap().starts_with("\"x\",\"4 KiB\",4 KiB,\"registration\",1,1,"));
/// ```
pub fn trials_to_csv(trials: &[Trial]) -> String {
    use std::fmt::Write as _;
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut out = String::from(
        "experiment,config,chunk_policy,order,column_align,items,median_ns,q1_ns,q3_ns,min_ns,\
         max_ns,reps,best_of,passes,replicas,placement_spread,memory_bytes,chunks,capacity,vs_best\n",
    );
    for t in trials {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{:.3},{},{},{},{:.3}",
            quote(&t.experiment),
            quote(&t.config),
            policy_label(t.policy),
            quote(t.order),
            t.column_align,
            t.items,
            t.stats.csv_cells(),
            t.best_of,
            t.passes.name(),
            t.replicas,
            t.placement_spread,
            t.memory_bytes,
            t.chunks,
            t.capacity,
            t.vs_best,
        );
    }
    out
}
