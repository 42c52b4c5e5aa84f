//! The smallest useful program: three entities, one system, two steps.
//!
//! Two entities have a `Velocity` and move; the third has only a `Position` and stays put,
//! because the `movement` system's query asks for both components and so never sees it.
//!
//! ```text
//! cargo run --release --example movement
//! ```

use ecs::prelude::*;

/// Where an entity is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    /// East.
    pub x: f32,
    /// North.
    pub y: f32,
    /// Up.
    pub z: f32,
}

/// How fast an entity moves, per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    /// East.
    pub x: f32,
    /// North.
    pub y: f32,
    /// Up.
    pub z: f32,
}

/// The length of one step, in seconds: a resource every system can read.
pub struct Time {
    /// Seconds per step.
    pub dt: f32,
}

/// Moves every entity that has both a `Position` and a `Velocity`.
fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>, time: Res<Time>) {
    q.for_each(|(p, v)| {
        p.x += v.x * time.dt;
        p.y += v.y * time.dt;
        p.z += v.z * time.dt;
    });
}

/// Spawns the three entities, runs `steps` steps of `dt` seconds, and returns each entity's
/// final position as `(x, y, z)`, in creation order.
pub fn run(steps: usize, dt: f32) -> Vec<String> {
    let mut world = World::new();
    world.insert_resource(Time { dt });
    let movers = [
        (
            Position {
                x: 0.0,
                y: 0.0,
                z: 0.0,
            },
            Velocity {
                x: 1.0,
                y: 0.0,
                z: 0.0,
            },
        ),
        (
            Position {
                x: 5.0,
                y: 0.0,
                z: 0.0,
            },
            Velocity {
                x: 0.0,
                y: 1.0,
                z: 0.0,
            },
        ),
    ];
    let mut entities: Vec<Entity> = movers.into_iter().map(|m| world.spawn(m)).collect();
    entities.push(world.spawn((Position {
        x: 9.0,
        y: 0.0,
        z: 0.0,
    },)));

    let mut schedule = Schedule::new();
    schedule.add_system(movement);
    for _ in 0..steps {
        schedule
            .run(&mut world)
            .expect("one system cannot form an order cycle");
    }

    entities
        .iter()
        .map(|&e| {
            let p = world.get::<Position>(e).expect("nothing was despawned");
            format!("({}, {}, {})", p.x, p.y, p.z)
        })
        .collect()
}

fn main() {
    for line in run(2, 1.0) {
        println!("{line}");
    }
}
