//! Entities that move, expire and are drawn, with a step that refuses a bad `dt`.
//!
//! Every entity has a `Position`; some also have a `Velocity`, a `Lifetime` or the `Visible`
//! tag (a zero-sized component: it costs no bytes per row, only an archetype). Each step runs
//! two systems in a fixed order:
//!
//! 1. `movement` moves everything that has a velocity;
//! 2. `expire` counts lifetimes down and despawns what reached zero, through `Commands`, and
//!    sends an `Expired` event for each; it runs only while something can still expire (a run
//!    condition), so once every mortal entity is gone it shows as skipped in the timings.
//!
//! The despawns and events are applied when the schedule run ends, after both systems, so an
//! entity that expires in a step still makes that step's move first (its last position is
//! printed), and `step` drains the step's events afterwards.
//!
//! ```text
//! cargo run --release --example lifetimes
//! ```

use std::fmt;

use ecs::prelude::*;

/// A short name, for the printout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Name(pub &'static str);

/// Where an entity is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    /// East.
    pub x: f32,
    /// North.
    pub y: f32,
}

/// How far an entity moves per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    /// East.
    pub x: f32,
    /// North.
    pub y: f32,
}

/// Seconds left to live; the entity is despawned in the step that takes this to zero or below.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lifetime(pub f32);

/// Tag: the entity is drawn. Zero-sized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Visible;

/// The current step's length in seconds.
struct Time(f32);

/// An event: `expire` despawned this entity, here.
struct Expired(String);

/// A step that was refused; nothing changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepError {
    /// `dt` was negative, NaN or infinite.
    InvalidDt(f32),
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidDt(dt) => write!(f, "dt must be finite and not negative, got {dt}"),
        }
    }
}

impl std::error::Error for StepError {}

/// How many entities have each component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Entities with a `Name`.
    pub name: usize,
    /// Entities with a `Position`.
    pub position: usize,
    /// Entities with a `Velocity`.
    pub velocity: usize,
    /// Entities with a `Lifetime`.
    pub lifetime: usize,
    /// Entities with the `Visible` tag.
    pub visible: usize,
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Name {}, Position {}, Velocity {}, Lifetime {}, Visible {}",
            self.name, self.position, self.velocity, self.lifetime, self.visible
        )
    }
}

fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>, time: Res<Time>) {
    q.for_each(|(p, v)| {
        p.x += v.x * time.0;
        p.y += v.y * time.0;
    });
}

/// What `expire` reads and writes, as a named query (four elements would trip clippy's
/// `type_complexity` as a tuple).
#[derive(Query)]
struct Expiring {
    entity: Entity,
    name: RefRO<Name>,
    life: RefRW<Lifetime>,
    position: RefRO<Position>,
}

fn expire(
    mut q: Query<Expiring>,
    time: Res<Time>,
    mut expired: EventWriter<Expired>,
    mut commands: Commands,
) {
    q.for_each(|item| {
        let ExpiringItem {
            entity,
            name,
            life,
            position: p,
        } = item;
        life.0 -= time.0;
        if life.0 <= 0.0 {
            expired.send(Expired(format!(
                "  {} expired at ({}, {})",
                name.0, p.x, p.y
            )));
            commands.despawn(entity);
        }
    });
}

/// The world, its schedule, and the entities in creation order.
pub struct Lifetimes {
    world: World,
    schedule: Schedule,
    created: Vec<Entity>,
}

impl Default for Lifetimes {
    fn default() -> Self {
        Self::new()
    }
}

impl Lifetimes {
    /// Six entities, each a different mix of components.
    pub fn new() -> Self {
        let mut world = World::new();
        world.insert_resource(Time(0.0));
        let pos = |x, y| Position { x, y };
        let vel = |x, y| Velocity { x, y };
        let created = vec![
            world.spawn((Name("walker"), pos(0.0, 0.0), vel(1.0, 0.0), Visible)),
            world.spawn((Name("flare"), pos(10.0, 0.0), Lifetime(1.5), Visible)),
            world.spawn((Name("bullet"), pos(0.0, 5.0), vel(0.0, -2.0), Lifetime(2.0))),
            world.spawn((Name("tree"), pos(3.0, 3.0), Visible)),
            world.spawn((
                Name("spark"),
                pos(-2.0, 0.0),
                vel(-1.0, 0.0),
                Lifetime(1.0),
                Visible,
            )),
            world.spawn((Name("ghost"), pos(7.0, 7.0), vel(0.0, 1.0))),
        ];
        let mut schedule = Schedule::new();
        schedule.add_system(movement);
        // `expire` reads `Position`, which `movement` writes, so the two conflict and already run
        // in insertion order; `after` states the intent so reordering the lines cannot break it.
        schedule
            .add_system(expire)
            .after("movement")
            .run_if(named_condition(
                "anything_mortal",
                |q: Query<With<Lifetime>>| !q.is_empty(),
            ));
        Self {
            world,
            schedule,
            created,
        }
    }

    /// Runs one step of `dt` seconds and returns what expired in it.
    ///
    /// # Errors
    /// [`StepError::InvalidDt`] if `dt` is negative, NaN or infinite; the world is untouched.
    pub fn step(&mut self, dt: f32) -> Result<Vec<String>, StepError> {
        if !dt.is_finite() || dt < 0.0 {
            return Err(StepError::InvalidDt(dt));
        }
        self.world.resource_mut::<Time>().0 = dt;
        self.schedule
            .run(&mut self.world)
            .expect("two systems with one order cannot form a cycle");
        let events = self.world.resource_mut::<Events<Expired>>();
        Ok(events.drain().map(|e| e.0).collect())
    }

    /// How many entities have each component.
    pub fn counts(&mut self) -> Counts {
        let world = &mut self.world;
        Counts {
            name: world.query::<RefRO<Name>>().count(),
            position: world.query::<RefRO<Position>>().count(),
            velocity: world.query::<RefRO<Velocity>>().count(),
            lifetime: world.query::<RefRO<Lifetime>>().count(),
            visible: world.query::<With<Visible>>().count(),
        }
    }

    /// `(name, position)` of every live visible entity, in creation order.
    ///
    /// Queries walk archetypes and chunks, whose row order changes as entities come and go, so
    /// creation order comes from the list of ids kept at spawn time.
    pub fn visible_positions(&self) -> Vec<(&'static str, Position)> {
        self.created
            .iter()
            .filter(|&&e| self.world.has::<Visible>(e))
            .map(|&e| {
                let name = self.world.get::<Name>(e).expect("every entity has a name");
                let pos = self
                    .world
                    .get::<Position>(e)
                    .expect("every entity has a position");
                (name.0, *pos)
            })
            .collect()
    }

    /// The world, for inspection.
    pub fn world(&self) -> &World {
        &self.world
    }
}

/// Runs the demo: steps of 1 s, 1 s, then two refused steps, then 1 s; returns the printout.
pub fn run() -> Vec<String> {
    let mut sim = Lifetimes::new();
    let mut out = vec![format!("start: {}", sim.counts())];
    for (n, dt) in [1.0, 1.0, -1.0, f32::NAN, 1.0].into_iter().enumerate() {
        match sim.step(dt) {
            Ok(expired) => {
                out.push(format!("step {} (dt = {dt}): {}", n + 1, sim.counts()));
                out.extend(expired);
            }
            Err(err) => out.push(format!("step {} refused: {err}", n + 1)),
        }
    }
    out.push("visible, in creation order:".to_owned());
    for (name, p) in sim.visible_positions() {
        out.push(format!("  {name} at ({}, {})", p.x, p.y));
    }
    out
}

fn main() {
    for line in run() {
        println!("{line}");
    }
}
