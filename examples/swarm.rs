//! The main demo: a million entities under the parallel schedule.
//!
//! Every entity is a particle with a `Position`, a `Velocity` and a `Lifetime`; one in eight is
//! also a `Leader` (a zero-sized tag, so a second archetype at no cost per row). Six systems
//! run each frame:
//!
//! - `orbit` moves the attractor (a resource) around a circle;
//! - `steering` pulls every velocity towards the attractor (`par_for_each`, leaders harder);
//! - `movement` integrates positions a chunk at a time (`for_each_chunk`, plain slices);
//! - `lifetime` counts lifetimes down in parallel, and despawns and respawns the expired
//!   through `par_for_each_commands` (a command buffer per task, applied in row order, so the
//!   respawned particles and their ids are the same on any number of threads), keeping the
//!   population constant; it sends one `Expired` event per frame with the count;
//! - `tally` adds the `Expired` counts into `Respawns` (events are applied at the end of a run,
//!   so it counts a frame late, and `lifetime` conflicts with nothing over the count);
//! - `stats` sums positions and speeds for the summary, every tenth frame (a run condition).
//!
//! `lifetime` shares nothing with the first three, so the schedule runs it beside them; `stats`
//! reads what `movement` writes, so it runs after it. `explain()` prints that plan first.
//!
//! ```text
//! cargo run --release --example swarm
//! cargo run --release --example swarm -- --entities 100000 --frames 600 --threads 4
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ecs::prelude::*;
use indicatif::{ProgressBar, ProgressStyle};

/// Where a particle is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    /// Horizontal.
    pub x: f32,
    /// Vertical.
    pub y: f32,
}

/// Units per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    /// Horizontal.
    pub x: f32,
    /// Vertical.
    pub y: f32,
}

/// Seconds left; an expired particle is replaced by a fresh one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lifetime(pub f32);

/// Tag: steers harder. Zero-sized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Leader;

/// Seconds per frame.
pub struct Time(pub f32);

/// The point everything steers towards.
#[derive(Default)]
pub struct Attractor {
    /// Angle on its orbit, radians.
    pub angle: f32,
    /// Current position.
    pub at: Point,
}

/// A plain 2D point (the attractor is not an entity).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    /// Horizontal.
    pub x: f32,
    /// Vertical.
    pub y: f32,
}

/// Particles replaced so far (counted a frame late, from `Expired` events).
#[derive(Default)]
pub struct Respawns(pub u64);

/// An event: this many particles expired (and were replaced) in one frame.
pub struct Expired(pub u64);

/// What the `stats` system measured when it last ran (every tenth frame).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Particles seen.
    pub count: u64,
    /// Mean position.
    pub centroid: (f64, f64),
    /// Mean speed.
    pub mean_speed: f64,
}

/// A small deterministic generator (SplitMix64), so runs are reproducible.
#[derive(Clone)]
pub struct Rng(u64);

impl Default for Rng {
    fn default() -> Self {
        Self(0x5eed_cafe_f00d_d00d)
    }
}

impl Rng {
    /// A generator for one stream, mixed from `seed`.
    fn seeded(seed: u64) -> Self {
        let mut rng = Self(Self::default().0 ^ seed);
        rng.next_u64();
        rng
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + unit * (hi - lo)
    }

    /// A fresh particle: somewhere in a 200 × 200 square, drifting, with 1 to 10 s to live.
    fn particle(&mut self) -> (Position, Velocity, Lifetime) {
        (
            Position {
                x: self.range(-100.0, 100.0),
                y: self.range(-100.0, 100.0),
            },
            Velocity {
                x: self.range(-5.0, 5.0),
                y: self.range(-5.0, 5.0),
            },
            Lifetime(self.range(1.0, 10.0)),
        )
    }
}

// ----- systems -------------------------------------------------------------------------------

fn orbit(mut attractor: ResMut<Attractor>, time: Res<Time>) {
    attractor.angle += 0.5 * time.0;
    let (sin, cos) = attractor.angle.sin_cos();
    attractor.at = Point {
        x: 50.0 * cos,
        y: 50.0 * sin,
    };
}

const MAX_SPEED: f32 = 20.0;

/// What `steering` reads and writes.
#[derive(Query)]
struct Steer {
    position: RefRO<Position>,
    velocity: RefRW<Velocity>,
    leader: Option<RefRO<Leader>>,
}

fn steering(mut q: Query<Steer>, attractor: Res<Attractor>, time: Res<Time>) {
    let (target, dt) = (attractor.at, time.0);
    q.par_for_each(|item| {
        let SteerItem {
            position: p,
            velocity: v,
            leader,
        } = item;
        let strength = if leader.is_some() { 30.0 } else { 10.0 };
        let (dx, dy) = (target.x - p.x, target.y - p.y);
        let inv = strength / (dx * dx + dy * dy).sqrt().max(1.0);
        v.x += dx * inv * dt;
        v.y += dy * inv * dt;
        // Clamp the speed without a branch: most particles hover near the limit, where a
        // branch would be mispredicted about half the time.
        let speed = (v.x * v.x + v.y * v.y).sqrt();
        let scale = (MAX_SPEED / speed.max(f32::MIN_POSITIVE)).min(1.0);
        v.x *= scale;
        v.y *= scale;
    });
}

fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>, time: Res<Time>) {
    let dt = time.0;
    q.for_each_chunk(|mut chunk| {
        let (pos, vel) = chunk.columns();
        for (p, v) in pos.iter_mut().zip(vel) {
            p.x += v.x * dt;
            p.y += v.y * dt;
        }
    });
}

fn lifetime(
    mut q: Query<(Entity, RefRW<Lifetime>, Option<RefRO<Leader>>)>,
    time: Res<Time>,
    mut frame: Local<u64>,
    mut expired_events: EventWriter<Expired>,
    mut commands: Commands,
) {
    let dt = time.0;
    *frame += 1;
    let frame = *frame;
    let expired = AtomicU64::new(0);
    q.par_for_each_commands(&mut commands, |cmds, (entity, life, leader)| {
        life.0 -= dt;
        if life.0 <= 0.0 {
            cmds.despawn(entity);
            // Seeded by the particle and the frame rather than drawn from one shared
            // generator, so the newcomer does not depend on which thread got there first.
            let fresh = Rng::seeded(entity.to_bits() ^ frame.rotate_left(40)).particle();
            if leader.is_some() {
                cmds.spawn((fresh.0, fresh.1, fresh.2, Leader));
            } else {
                cmds.spawn(fresh);
            }
            expired.fetch_add(1, Ordering::Relaxed);
        }
    });
    expired_events.send(Expired(expired.into_inner()));
}

fn tally(mut expired: EventReader<Expired>, mut respawns: ResMut<Respawns>) {
    respawns.0 += expired.read().map(|e| e.0).sum::<u64>();
}

fn stats(mut q: Query<(RefRO<Position>, RefRO<Velocity>)>, mut out: ResMut<Stats>) {
    let (mut n, mut sx, mut sy, mut speed) = (0u64, 0f64, 0f64, 0f64);
    q.for_each_chunk(|mut chunk| {
        let (pos, vel) = chunk.columns();
        n += pos.len() as u64;
        for (p, v) in pos.iter().zip(vel) {
            sx += f64::from(p.x);
            sy += f64::from(p.y);
            speed += f64::from((v.x * v.x + v.y * v.y).sqrt());
        }
    });
    let div = n.max(1) as f64;
    *out = Stats {
        count: n,
        centroid: (sx / div, sy / div),
        mean_speed: speed / div,
    };
}

// ----- the run -------------------------------------------------------------------------------

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Particles.
    pub entities: usize,
    /// Frames of 1/60 s.
    pub frames: usize,
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    /// Whether to draw a progress bar (on stderr).
    pub progress: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            entities: 1_000_000,
            frames: 300,
            threads: None,
            progress: true,
        }
    }
}

impl Config {
    /// Parses `--entities N`, `--frames N`, `--threads N` and `--no-progress` (numbers may
    /// contain `_`).
    ///
    /// # Errors
    /// A message naming the argument that was not understood.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut config = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut number = |name: &str| -> Result<usize, String> {
                let value = args
                    .next()
                    .ok_or_else(|| format!("{name} needs a number"))?;
                value
                    .replace('_', "")
                    .parse()
                    .map_err(|_| format!("{name} needs a number, got `{value}`"))
            };
            match arg.as_str() {
                "--entities" => config.entities = number("--entities")?,
                "--frames" => config.frames = number("--frames")?,
                "--threads" => config.threads = Some(number("--threads")?),
                "--no-progress" => config.progress = false,
                other => {
                    return Err(format!(
                        "unknown argument `{other}`; expected --entities N, --frames N, \
                         --threads N or --no-progress"
                    ))
                }
            }
        }
        Ok(config)
    }
}

/// The schedule of the six systems, on `threads` workers (`None`: one per core).
pub fn schedule(threads: Option<usize>) -> Schedule {
    let mut schedule = match threads {
        Some(n) => Schedule::with_threads(n),
        None => Schedule::new(),
    };
    schedule.add_system(orbit);
    schedule.add_system(steering);
    schedule.add_system(movement);
    schedule.add_system(lifetime);
    schedule.add_system(tally);
    schedule.add_system(stats).run_if(every_n_runs(10));
    schedule
}

/// A world with `entities` particles, one in eight a leader.
pub fn world(entities: usize) -> World {
    let mut world = World::new();
    world.insert_resource(Time(1.0 / 60.0));
    world.insert_resource(Attractor::default());
    world.insert_resource(Respawns::default());
    world.insert_resource(Stats::default());
    let mut rng = Rng(42);
    // Start as if the swarm had been running: lifetimes spread over 0 to 10 s.
    let mut particle = move || {
        let (p, v, _) = rng.particle();
        (p, v, Lifetime(rng.range(0.0, 10.0)))
    };
    let leaders = entities / 8;
    world.spawn_batch((0..entities - leaders).map(|_| particle()));
    world.spawn_batch((0..leaders).map(|_| {
        let (p, v, l) = particle();
        (p, v, l, Leader)
    }));
    world
}

/// The numbers a run produced.
pub struct Report {
    /// The configuration it ran with.
    pub config: Config,
    /// Worker threads used.
    pub threads: usize,
    /// Time to spawn the particles.
    pub spawn_time: Duration,
    /// Time for all frames.
    pub elapsed: Duration,
    /// Each system's total time over all frames, in plan order.
    pub systems: Vec<(String, Duration)>,
    /// Particles replaced.
    pub respawns: u64,
    /// Live entities at the end.
    pub alive: u32,
    /// The measurements of the last frame `stats` ran in.
    pub stats: Stats,
    /// Chunk usage at the end.
    pub layout: WorldLayout,
}

impl Report {
    /// Frames per second.
    pub fn fps(&self) -> f64 {
        self.config.frames as f64 / self.elapsed.as_secs_f64()
    }

    /// Entity updates (entities × frames) per second.
    pub fn entities_per_second(&self) -> f64 {
        (self.config.entities * self.config.frames) as f64 / self.elapsed.as_secs_f64()
    }
}

/// Milliseconds, for printing.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let frames = self.config.frames.max(1) as u32;
        let plural = if self.threads == 1 { "" } else { "s" };
        writeln!(
            f,
            "{} entities, {} frames on {} thread{plural}",
            self.config.entities, self.config.frames, self.threads
        )?;
        writeln!(f, "spawned in {:.1} ms", ms(self.spawn_time))?;
        writeln!(
            f,
            "ran in {:.2} s: {:.1} frames/s, {:.1} ms/frame, {:.1} M entity-updates/s",
            self.elapsed.as_secs_f64(),
            self.fps(),
            ms(self.elapsed / frames),
            self.entities_per_second() / 1e6
        )?;
        if self.threads > 1 {
            writeln!(
                f,
                "per system (mean per frame; `lifetime` runs beside the others):"
            )?;
        } else {
            writeln!(f, "per system (mean per frame, one after another):")?;
        }
        for (name, total) in &self.systems {
            writeln!(f, "  {name:<10} {:>8.3} ms", ms(*total / frames))?;
        }
        writeln!(
            f,
            "respawned {} particles; {} alive; centroid ({:.2}, {:.2}); mean speed {:.2}",
            self.respawns,
            self.alive,
            self.stats.centroid.0,
            self.stats.centroid.1,
            self.stats.mean_speed
        )?;
        write!(f, "{}", self.layout)
    }
}

/// Builds the world and the schedule, runs the frames, and reports.
pub fn run(config: &Config) -> Report {
    let start = Instant::now();
    let mut world = world(config.entities);
    let spawn_time = start.elapsed();
    let mut schedule = schedule(config.threads);
    let bar = if config.progress {
        let bar = ProgressBar::new(config.frames as u64);
        let style =
            ProgressStyle::with_template("{bar:40.cyan/blue} {pos}/{len} frames  {msg}  eta {eta}")
                .expect("the template is valid");
        bar.set_style(style);
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut systems: Vec<(String, Duration)> = Vec::new();
    let start = Instant::now();
    for _ in 0..config.frames {
        schedule
            .run(&mut world)
            .expect("no explicit orders, so no cycle");
        let timings = schedule.timings().last_run();
        if systems.is_empty() {
            systems = timings
                .iter()
                .map(|(n, _)| (n.clone(), Duration::ZERO))
                .collect();
        }
        for ((_, total), (_, t)) in systems.iter_mut().zip(&timings) {
            *total += *t;
        }
        bar.inc(1);
        if bar.position() % 10 == 0 {
            let fps = bar.position() as f64 / start.elapsed().as_secs_f64();
            bar.set_message(format!("{fps:.1} frames/s"));
        }
    }
    let elapsed = start.elapsed();
    bar.finish_and_clear();
    Report {
        config: config.clone(),
        threads: schedule.threads(),
        spawn_time,
        elapsed,
        systems,
        respawns: world.resource::<Respawns>().0,
        alive: world.len(),
        stats: *world.resource::<Stats>(),
        layout: world.memory_report(),
    }
}

fn main() {
    let config = match Config::from_args(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("swarm: {message}");
            std::process::exit(2);
        }
    };
    print!("{}", schedule(config.threads).explain());
    println!();
    println!("{}", run(&config));
}
