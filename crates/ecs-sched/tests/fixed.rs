//! The fixed-timestep driver: step counts from recorded frame times, the cap, determinism.

use std::time::Duration;

use ecs_core::World;
use ecs_query::{QueryExt, RefRO, RefRW};
use ecs_sched::{FixedTime, FixedTimestep, Query, Res, ResMut, Schedule};

/// Frame times of an uneven game loop, in microseconds: hitches, tiny frames, one huge stall.
const FRAMES_US: [u64; 16] = [
    16_667, 16_667, 33_000, 8_000, 1, 16_700, 250_000, 16_000, 17_333, 0, 16_667, 50_000, 16_667,
    16_666, 16_668, 100,
];

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(f64);
#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(f64);

fn integrate(mut q: Query<(RefRW<Pos>, RefRO<Vel>)>, t: Res<FixedTime>) {
    let dt = t.dt.as_secs_f64();
    q.for_each(|(p, v)| p.0 += v.0 * dt);
}

fn drag(mut q: Query<RefRW<Vel>>) {
    q.for_each(|v| v.0 *= 0.99);
}

fn count(mut steps: ResMut<u64>, t: Res<FixedTime>) {
    assert_eq!(*steps, t.step, "steps are numbered in order");
    *steps += 1;
}

fn simulate(threads: usize) -> (Vec<u32>, Vec<u64>, u64) {
    let mut world = World::new();
    world.insert_resource(0u64);
    for i in 0..1_000 {
        world.spawn((Pos(0.0), Vel(f64::from(i))));
    }
    let mut physics = Schedule::with_threads(threads);
    physics.add_system(drag);
    physics.add_system(integrate);
    physics.add_system(count);
    let mut fixed = FixedTimestep::new(Duration::from_secs(1) / 60).with_max_steps(4);
    let steps: Vec<u32> = FRAMES_US
        .iter()
        .map(|&us| {
            fixed
                .run(&mut physics, &mut world, Duration::from_micros(us))
                .unwrap()
                .steps
        })
        .collect();
    let bits: Vec<u64> = world
        .query::<RefRO<Pos>>()
        .iter()
        .map(|p| p.0.to_bits())
        .collect();
    (steps, bits, *world.resource::<u64>())
}

#[test]
#[cfg_attr(miri, ignore = "rayon pool threads are never joined")]
fn recorded_frame_times_give_the_same_steps_and_world_on_any_thread_count() {
    let one = simulate(1);
    assert_eq!(one.0.iter().map(|&s| u64::from(s)).sum::<u64>(), one.2);
    for threads in [1, 4] {
        assert_eq!(simulate(threads), one);
    }
}

#[test]
fn step_counts_follow_the_accumulator_and_the_cap() {
    let mut fixed = FixedTimestep::new(Duration::from_millis(10)).with_max_steps(3);
    let steps: Vec<(u32, Duration)> = [5, 5, 25, 0, 100, 9, 1]
        .into_iter()
        .map(|ms| {
            let f = fixed.advance(Duration::from_millis(ms));
            (f.steps, f.dropped)
        })
        .collect();
    let ms = Duration::from_millis;
    assert_eq!(
        steps,
        [
            (0, ms(0)),
            (1, ms(0)),
            (2, ms(0)),
            (0, ms(0)),
            (3, ms(70)), // 105 ms due: 3 taken, 70 dropped, 5 kept
            (1, ms(0)),
            (0, ms(0)),
        ]
    );
    assert_eq!(fixed.accumulated(), ms(5));
    assert_eq!(fixed.total_steps(), 7);
}

#[test]
#[should_panic(expected = "dt above zero")]
fn a_zero_dt_is_refused() {
    let _ = FixedTimestep::new(Duration::ZERO);
}
