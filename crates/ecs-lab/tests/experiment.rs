//! Experiments over worlds the caller builds: every configuration reaches its world, the
//! work's item count divides its time, replicas pool, and bad configurations are typed errors.

use ecs_core::{ChunkPolicy, World, WorldError};
use ecs_lab::{run_experiment, trials_to_csv, Experiment, LabError, Order, Passes, WorldConfig};
use ecs_query::{QueryState, RefRO};

#[derive(Clone, Copy)]
struct A(#[allow(dead_code)] u8);
#[derive(Clone, Copy)]
struct B(#[allow(dead_code)] [f32; 4]);

const HOT_FIRST: Order = Order::First("b first", |w| vec![w.register_component::<B>()]);

#[test]
#[cfg_attr(miri, ignore = "times passes")]
fn every_configuration_reaches_its_world_and_replicas_pool() {
    let configs = WorldConfig::grid(
        &[ChunkPolicy::Fixed(4096), ChunkPolicy::MinRows(300)],
        &[Order::Registration, Order::MinPadding, HOT_FIRST],
        &[1, 64],
    );
    let mut experiment = Experiment::new("two archetypes", configs.clone());
    experiment.reps = 2;
    experiment.replicas = 2;
    experiment.passes = Passes::Warm;
    let mut seen = Vec::new();
    let trials = run_experiment(
        &experiment,
        |world: &mut World| {
            // Two archetypes: the work visits both.
            world
                .spawn_batch((0..300).map(|i| (A(i as u8), B([i as f32; 4]))))
                .for_each(drop);
            world
                .spawn_batch((0..200).map(|i| (B([i as f32; 4]),)))
                .for_each(drop);
            let arch = world.archetypes().iter().find(|a| a.len() == 300).unwrap();
            let b = world.component_id::<B>().unwrap();
            seen.push((
                world.chunk_policy(),
                world.column_alignment(),
                format!("{:?}", world.column_order()),
                arch.layout().placement()[0] == arch.column(b).unwrap(),
            ));
            QueryState::<(RefRO<B>,)>::new(world)
        },
        |world, query| {
            let mut n = 0;
            query.for_each(world, |(b,)| n += b.0.len() / 4);
            n
        },
    )
    .unwrap();
    // Two replicas built every configuration.
    assert_eq!(seen.len(), 2 * configs.len());
    for config in &configs {
        let want_order = match config.order {
            Order::Registration => "Registration",
            Order::MinPadding => "MinPadding",
            Order::First(..) => "First",
        };
        let matching = seen
            .iter()
            .filter(|s| {
                s.0 == config.policy && s.1 == config.column_align && s.2.starts_with(want_order)
            })
            .count();
        assert_eq!(matching, 2, "{} once per replica", config.label());
    }
    // `First` put B's array first in the chunk.
    assert!(seen
        .iter()
        .filter(|s| s.2.starts_with("First"))
        .all(|s| s.3));
    assert_eq!(trials.len(), configs.len());
    for (t, c) in trials.iter().zip(&configs) {
        assert_eq!(t.config, c.label());
        assert_eq!(t.items, 500);
        assert_eq!(t.stats.reps, 4, "two reps of two replicas");
        assert_eq!((t.passes, t.replicas), (Passes::Warm, 2));
        assert!(t.chunks >= 2 && t.memory_bytes > 0);
        assert!(t.vs_best >= 1.0);
    }
    let csv = trials_to_csv(&trials);
    assert_eq!(csv.lines().count(), 1 + configs.len());
    assert!(
        csv.contains("\"min-rows 300 · b first · align 64\""),
        "{csv}"
    );
}

#[test]
fn bad_experiments_are_typed_errors() {
    let one = vec![WorldConfig::new(ChunkPolicy::Fixed(4096))];
    let run = |e: &Experiment| run_experiment(e, |_| (), |_, _| 1);
    let mut e = Experiment::new("x", one.clone());
    e.reps = 0;
    assert_eq!(run(&e), Err(LabError::Zero("reps")));
    assert_eq!(
        run(&Experiment::new("x", Vec::new())),
        Err(LabError::Empty("configurations"))
    );
    let mut bad = one[0];
    bad.column_align = 24;
    assert_eq!(
        run(&Experiment::new("x", vec![bad])),
        Err(LabError::Policy(WorldError::InvalidColumnAlignment(24)))
    );
}
