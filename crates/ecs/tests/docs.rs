//! Keeps the docs honest: the `explain()` output pasted in `docs/scheduling.md` must be what
//! the code prints today, and the README must keep its two newcomer commands.

#[expect(dead_code, reason = "only the schedule builder is used here")]
#[path = "../../../examples/swarm.rs"]
mod swarm;

#[expect(dead_code, reason = "only the layout and move printouts are used here")]
#[path = "../../../examples/layout.rs"]
mod layout;

use ecs::prelude::*;

/// The schedule `docs/scheduling.md` walks through.
pub mod game {
    use ecs::prelude::*;

    /// Where.
    pub struct Position(pub f32);
    /// How fast.
    pub struct Velocity(pub f32);
    /// Hit points.
    pub struct Health(pub i32);
    /// Tag.
    pub struct Enemy;
    /// Tag.
    pub struct Player;
    /// Seconds per frame.
    pub struct Time(pub f32);
    /// Enemies defeated.
    #[derive(Default)]
    pub struct Score(pub u32);
    /// Lines for the frame log.
    #[derive(Default)]
    pub struct FrameLog(pub Vec<String>);

    fn steer(mut q: Query<(RefRO<Position>, RefRW<Velocity>)>) {
        q.for_each(|(p, v)| v.0 = -p.0.signum());
    }

    fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>, time: Res<Time>) {
        q.for_each(|(p, v)| p.0 += v.0 * time.0);
    }

    fn hurt_enemies(mut q: Query<(RefRW<Health>, With<Enemy>)>) {
        q.for_each(|(h, ())| h.0 -= 1);
    }

    fn heal_player(mut q: Query<(RefRW<Health>, With<Player>, Without<Enemy>)>) {
        q.for_each(|(h, (), ())| h.0 += 1);
    }

    fn reap(q: Query<(Entity, RefRO<Health>)>, mut score: ResMut<Score>, mut commands: Commands) {
        q.for_each(|(e, h)| {
            if h.0 <= 0 {
                score.0 += 1;
                commands.despawn(e);
            }
        });
    }

    fn spawn_wave(q: Query<With<Enemy>>, mut commands: Commands) {
        if q.count() == 0 {
            commands.spawn((Position(10.0), Velocity(0.0), Health(3), Enemy));
        }
    }

    fn log_frame(score: Res<Score>, mut log: ResMut<FrameLog>) {
        log.0.push(format!("score {}", score.0));
    }

    /// The schedule, on two worker threads.
    pub fn schedule() -> Schedule {
        let mut schedule = Schedule::with_threads(2);
        schedule.add_system(movement);
        schedule.add_system(hurt_enemies);
        schedule.add_system(heal_player);
        schedule.add_system(reap);
        schedule.add_sync_point();
        schedule.add_system(spawn_wave);
        schedule.add_system(log_frame).after("spawn_wave");
        schedule.add_system(steer).before("movement");
        schedule
    }

    /// A world for it.
    pub fn world() -> World {
        let mut world = World::new();
        world.insert_resource(Time(1.0));
        world.insert_resource(Score::default());
        world.insert_resource(FrameLog::default());
        world.spawn((Position(0.0), Velocity(0.0), Health(10), Player));
        world.spawn((Position(5.0), Velocity(0.0), Health(1), Enemy));
        world
    }
}

/// The schedule `docs/scheduling.md` uses to show run conditions, sets and events.
pub mod sim {
    use ecs::prelude::*;

    /// Where.
    pub struct Position(pub f32);
    /// How fast.
    pub struct Velocity(pub f32);
    /// Set by the pause menu.
    pub struct Paused(pub bool);
    /// An event: something collided.
    pub struct Collision;

    fn read_input(mut paused: ResMut<Paused>) {
        paused.0 = false;
    }

    fn integrate(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>) {
        q.for_each(|(p, v)| p.0 += v.0);
    }

    fn collide(q: Query<RefRO<Position>>, mut hits: EventWriter<Collision>) {
        q.for_each(|p| {
            if p.0 > 100.0 {
                hits.send(Collision);
            }
        });
    }

    fn log_hits(mut hits: EventReader<Collision>, mut count: ResMut<u64>) {
        *count += hits.read().count() as u64;
    }

    fn not_paused(paused: Res<Paused>) -> bool {
        !paused.0
    }

    /// The schedule.
    pub fn schedule() -> Schedule {
        let mut schedule = Schedule::with_threads(2);
        schedule.add_system(read_input).in_set("input");
        schedule
            .add_system(integrate)
            .in_set("physics")
            .run_if(not_paused);
        schedule
            .add_system(collide)
            .in_set("physics")
            .run_if(not_paused);
        schedule.add_system(log_hits).run_if(every_n_runs(10));
        schedule.configure_set("physics").after("input");
        schedule
    }
}

fn read(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    std::fs::read_to_string(format!("{root}{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `explain()` with this test crate's module prefix removed, as the examples print it.
fn explain(mut schedule: Schedule) -> String {
    schedule.explain().replace("docs::", "")
}

#[test]
fn scheduling_doc_shows_the_real_explain_output() {
    let doc = read("docs/scheduling.md");
    let game = explain(game::schedule());
    println!("{game}");
    assert!(
        doc.contains(&game),
        "docs/scheduling.md lacks today's output:\n{game}"
    );
    let sim = explain(sim::schedule());
    println!("{sim}");
    assert!(
        doc.contains(&sim),
        "docs/scheduling.md lacks today's output:\n{sim}"
    );
    let swarm = explain(swarm::schedule(Some(2)));
    println!("{swarm}");
    assert!(
        doc.contains(&swarm),
        "docs/scheduling.md lacks today's output:\n{swarm}"
    );
}

#[test]
fn scheduling_doc_names_the_game_schedules_ambiguities() {
    let found: Vec<(String, String, String)> = game::schedule()
        .ambiguities()
        .into_iter()
        .map(|a| (a.first, a.second, a.conflict))
        .collect();
    println!("{found:?}");
    let has = |a: &str, b: &str| found.iter().any(|f| f.0 == a && f.1 == b);
    assert!(
        has("hurt_enemies", "reap") && has("reap", "log_frame"),
        "{found:?}"
    );
    // Ordered explicitly (directly, or `steer -> movement` with the conflict): not listed; nor
    // is the sync point, which runs alone where it was added.
    assert!(
        !has("steer", "movement") && !has("spawn_wave", "log_frame"),
        "{found:?}"
    );
    // Two systems that record commands do not conflict (each spawns in an id lane).
    assert!(!has("reap", "spawn_wave"), "{found:?}");
    assert!(
        found
            .iter()
            .all(|f| f.0 != "sync_point_1" && f.1 != "sync_point_1"),
        "{found:?}"
    );
}

#[test]
fn architecture_doc_shows_the_real_layouts() {
    let doc = read("docs/architecture.md");
    let report = layout::build_world().memory_report().to_string();
    // The memory line counts allocator bytes of every kind; the doc shows the tables only.
    let table = report
        .split("memory:")
        .next()
        .expect("split yields one part");
    assert!(
        doc.contains(table),
        "docs/architecture.md lacks today's table:\n{table}"
    );
    for line in layout::move_demo() {
        if line.contains(" at archetype ") {
            assert!(doc.contains(&line), "docs/architecture.md lacks `{line}`");
        }
    }
    // The byte ranges the two chunk diagrams are drawn from: archetypes 1 and 2.
    let described = layout::describe(&layout::build_world());
    let third = described
        .iter()
        .position(|l| l.starts_with("archetype 3"))
        .unwrap();
    for line in &described[..third] {
        let range = line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        if let Some((start, end)) = range.split_once("..") {
            for edge in [start, end] {
                if edge != "0" {
                    assert!(
                        doc.contains(edge),
                        "docs/architecture.md lacks offset {edge}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_doc_schedule_runs_as_described() {
    let mut world = game::world();
    let mut schedule = game::schedule();
    schedule.run(&mut world).unwrap();
    // The enemy (1 hp) was hurt to 0 and reaped at the sync point, so `spawn_wave` saw no
    // enemy and queued a new one; `log_frame` ran before that spawn was applied.
    assert_eq!(world.resource::<game::Score>().0, 1);
    assert_eq!(world.query::<With<game::Enemy>>().count(), 1);
    assert_eq!(world.resource::<game::FrameLog>().0, ["score 1"]);
    assert_eq!(
        schedule.order().unwrap(),
        [
            "steer",
            "movement",
            "hurt_enemies",
            "heal_player",
            "reap",
            "sync_point_1",
            "spawn_wave",
            "log_frame"
        ]
    );
}

#[test]
fn readme_keeps_the_two_commands_and_links() {
    let readme = read("README.md");
    assert!(readme.contains("cargo run --release --example swarm"));
    assert!(readme.contains("cargo test --workspace"));
    for doc in [
        "docs/architecture.md",
        "docs/queries.md",
        "docs/scheduling.md",
        "docs/relationships.md",
        "docs/coming-from.md",
    ] {
        assert!(readme.contains(doc), "README does not link {doc}");
        read(doc);
    }
}

// ----- docs/queries.md -----------------------------------------------------------------------

#[test]
fn queries_doc_query_run_example() {
    let mut world = World::new();
    let e = world.spawn((1u32,));
    let mut state = QueryState::<RefRW<u32>>::new(&mut world);
    let mut run = state.run(&mut world);
    run.reborrow().for_each(|n| *n += 1);
    assert_eq!(run.as_readonly().count(), 1);
    *run.get(e).unwrap() *= 10;
    assert_eq!(world.get::<u32>(e), Ok(&20));
}

#[test]
fn queries_doc_derive_example() {
    struct Position(f32);
    struct Velocity(f32);
    struct Health(u32);
    struct Frozen;

    #[derive(Bundle)]
    struct Body {
        position: Position,
        velocity: Velocity,
        health: Health,
    }

    #[derive(Query)]
    struct Mover {
        entity: Entity,
        position: RefRW<Position>,
        velocity: RefRO<Velocity>,
        health: Option<RefRO<Health>>,
        _awake: Without<Frozen>,
    }

    fn movement(mut q: Query<Mover>) {
        q.for_each(|m: MoverItem| {
            assert!(m.health.is_some() && m.entity != Entity::PLACEHOLDER);
            m.position.0 += m.velocity.0
        });
    }

    let body = |x: f32| Body {
        position: Position(x),
        velocity: Velocity(1.0),
        health: Health(3),
    };
    let mut world = World::new();
    world.spawn_batch((0..100).map(|i| body(i as f32)));
    let e = world.spawn(body(0.0));
    let frozen = world.spawn(body(0.0));
    world.insert_one(frozen, Frozen).unwrap();
    let mut schedule = Schedule::new();
    schedule.add_system(movement);
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Position>(e).unwrap().0, 1.0);
    assert_eq!(world.get::<Position>(frozen).unwrap().0, 0.0);
    let body: Body = world.take(e).unwrap();
    assert_eq!(body.health.0, 3);
}

#[test]
fn queries_doc_example() {
    struct Position(f32);
    struct Velocity(f32);
    struct Frozen;

    let mut world = World::new();
    world.spawn_batch((0..1000).map(|i| (Position(i as f32), Velocity(1.0))));
    world.spawn((Position(0.0), Velocity(1.0), Frozen));
    world
        .query::<(RefRW<Position>, RefRO<Velocity>, Without<Frozen>)>()
        .for_each(|(p, v, ())| p.0 += v.0);
    assert_eq!(
        world
            .query::<(Entity, RefRO<Position>, With<Frozen>)>()
            .count(),
        1
    );
    let frozen: Vec<f32> = world
        .query::<(RefRO<Position>, With<Frozen>)>()
        .iter()
        .map(|(p, ())| p.0)
        .collect();
    assert_eq!(frozen, [0.0]);
}

/// Every rule of the "Change detection" section, checked on three chunks of 682 rows.
#[test]
fn change_detection_is_row_precise_as_documented() {
    // Two `f32`s each, as in the docs: 682 rows per 16 KiB chunk.
    #[derive(Clone, Copy)]
    struct Position([f32; 2]);
    #[derive(Clone, Copy)]
    struct Velocity([f32; 2]);

    let mut world = World::new();
    let ids: Vec<Entity> = world
        .spawn_batch((0..2000).map(|i| (Position([i as f32, 0.0]), Velocity([1.0, 0.0]))))
        .collect();
    let mut changed = QueryState::<(Entity, Changed<Position>)>::new(&mut world);
    let mut seen = |world: &World| changed.iter(world).count();

    assert_eq!(world.get::<Velocity>(ids[0]).unwrap().0, [1.0, 0.0]);
    assert_eq!(world.archetypes()[1].layout().capacity(), 682);

    // A new state sees every row; then nothing until something writes.
    assert_eq!(seen(&world), 2000);
    assert_eq!(seen(&world), 0);

    // One write marks its row only.
    world.get_mut::<Position>(ids[700]).unwrap().0[0] = 0.0;
    assert_eq!(seen(&world), 1);

    // `count` is not a run: it sees the same window and leaves it open.
    world.get_mut::<Position>(ids[0]).unwrap().0[0] = 0.0;
    let mut counter = QueryState::<(Entity, Changed<Position>)>::new(&mut world);
    counter.iter(&world).count();
    world.get_mut::<Position>(ids[1]).unwrap().0[0] = 0.0;
    assert_eq!(counter.count(&world), 1);
    assert_eq!(counter.count(&world), 1);
    assert_eq!(seen(&world), 2);

    // A `RefRW` loop marks every row it hands out, even if it writes nothing.
    QueryState::<RefRW<Position>>::new(&mut world).for_each(&mut world, |_| {});
    assert_eq!(seen(&world), 2000);

    // A state does not see its own writes.
    let mut own = QueryState::<(RefRW<Position>, Changed<Position>)>::new(&mut world);
    assert_eq!(own.iter_mut(&mut world).count(), 2000);
    assert_eq!(own.iter_mut(&mut world).count(), 0);
    assert_eq!(seen(&world), 2000);

    // An overwriting insert marks the entity's row only.
    world.insert(ids[1500], (Position([1.0, 1.0]),)).unwrap();
    assert_eq!(seen(&world), 1);

    // Removals are not changes, and a row moved to fill a hole keeps its own tick.
    let last = *ids.last().unwrap();
    world.despawn(last).unwrap();
    assert_eq!(seen(&world), 0);
    world.despawn(ids[10]).unwrap();
    assert_eq!(seen(&world), 0);

    // A one-shot query is a new state every time, so it sees every chunk.
    assert_eq!(
        world.query::<(Entity, Changed<Position>)>().iter().count(),
        1998
    );
}
