//! Runs every example in `examples/` as a module and checks what it prints.

#[expect(
    dead_code,
    reason = "`main` and some helpers are only used by the binary"
)]
#[path = "../../../examples/movement.rs"]
mod movement;

#[expect(
    dead_code,
    reason = "`main` and some helpers are only used by the binary"
)]
#[path = "../../../examples/lifetimes.rs"]
mod lifetimes;

#[expect(
    dead_code,
    reason = "`main` and some helpers are only used by the binary"
)]
#[path = "../../../examples/enemies.rs"]
mod enemies;

#[expect(
    dead_code,
    reason = "`main` and some helpers are only used by the binary"
)]
#[path = "../../../examples/swarm.rs"]
mod swarm;

#[expect(
    dead_code,
    reason = "`main` and some helpers are only used by the binary"
)]
#[path = "../../../examples/layout.rs"]
mod layout;

#[expect(
    dead_code,
    reason = "`main` and some helpers are only used by the binary"
)]
#[path = "../../../examples/rollback.rs"]
mod rollback;

#[expect(
    dead_code,
    reason = "`main` and some helpers are only used by the binary"
)]
#[path = "../../../examples/hierarchy.rs"]
mod hierarchy;

use ecs::prelude::*;

// ----- movement ------------------------------------------------------------------------------

#[test]
fn movement_moves_the_two_movers_and_not_the_still_one() {
    assert_eq!(
        movement::run(2, 1.0),
        ["(2, 0, 0)", "(5, 2, 0)", "(9, 0, 0)"]
    );
}

#[test]
fn movement_with_no_steps_prints_the_start() {
    assert_eq!(
        movement::run(0, 1.0),
        ["(0, 0, 0)", "(5, 0, 0)", "(9, 0, 0)"]
    );
}

// ----- lifetimes -----------------------------------------------------------------------------

#[test]
fn lifetimes_prints_counts_expiries_and_visible_positions() {
    let expected = [
        "start: Name 6, Position 6, Velocity 4, Lifetime 3, Visible 4",
        "step 1 (dt = 1): Name 5, Position 5, Velocity 3, Lifetime 2, Visible 3",
        // The spark moved from (-2, 0) before it expired: the final move happens.
        "  spark expired at (-3, 0)",
        "step 2 (dt = 1): Name 3, Position 3, Velocity 2, Lifetime 0, Visible 2",
        "  flare expired at (10, 0)",
        "  bullet expired at (0, 1)",
        "step 3 refused: dt must be finite and not negative, got -1",
        "step 4 refused: dt must be finite and not negative, got NaN",
        "step 5 (dt = 1): Name 3, Position 3, Velocity 2, Lifetime 0, Visible 2",
        "visible, in creation order:",
        "  walker at (3, 0)",
        "  tree at (3, 3)",
    ];
    assert_eq!(lifetimes::run(), expected);
}

#[test]
fn lifetimes_refuses_bad_dt_before_anything_changes() {
    let mut sim = lifetimes::Lifetimes::new();
    sim.step(0.5).unwrap();
    let counts = sim.counts();
    let visible = sim.visible_positions();
    let tick = sim.world().change_tick();
    for dt in [-1.0, -0.0001, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let err = sim.step(dt).unwrap_err();
        assert!(matches!(err, lifetimes::StepError::InvalidDt(_)), "{dt}");
        assert_eq!(sim.world().change_tick(), tick, "dt {dt} ran a system");
        assert_eq!(sim.visible_positions(), visible, "dt {dt} moved something");
    }
    assert_eq!(sim.counts(), counts);
    // Zero is a valid step: nothing moves or expires, but the schedule runs.
    assert_eq!(sim.step(0.0), Ok(vec![]));
    assert_eq!(sim.visible_positions(), visible);
    sim.world().check_invariants();
}

#[test]
fn lifetimes_visible_order_is_creation_order_not_storage_order() {
    let mut sim = lifetimes::Lifetimes::new();
    // Despawning the spark moves the last row of its archetype; creation order must not care.
    sim.step(1.0).unwrap();
    let names: Vec<&str> = sim.visible_positions().iter().map(|v| v.0).collect();
    assert_eq!(names, ["walker", "flare", "tree"]);
}

// ----- enemies -------------------------------------------------------------------------------

#[test]
fn enemies_story() {
    let lines = enemies::run(12);
    let has = |line: &str| lines.iter().any(|l| l == line);
    assert!(
        has("  eel-bat chases the hero, flying and swimming"),
        "{lines:#?}"
    );
    assert!(has("  goblin chases the hero"));
    assert!(has("  ogre guards its post"));
    assert!(has("  dog follows the hero"));
    assert!(has("  goblin falls"));
    assert!(has("  ogre falls and drops gold, key"));
    assert!(!has("  hero falls"));
    let survivors = lines.iter().position(|l| l == "survivors:").unwrap();
    assert_eq!(
        lines[survivors + 1..],
        [
            "  hero: 18 hp at (9, 0), carries sword, gold, key",
            "  dog: 15 hp at (7, 0), carries potion",
            "  eel-bat: 1 hp at (-9, 11), carries nothing",
        ]
    );
}

#[test]
fn enemies_are_compositions_not_types() {
    let (mut world, _) = enemies::setup();
    let mut names = |flying: bool| -> Vec<&'static str> {
        let mut v: Vec<&'static str> = if flying {
            world
                .query::<(
                    RefRO<enemies::Name>,
                    With<enemies::Flying>,
                    With<enemies::Swimming>,
                )>()
                .iter()
                .map(|(n, (), ())| n.0)
                .collect()
        } else {
            world
                .query::<(RefRO<enemies::Name>, With<enemies::Hostile>)>()
                .iter()
                .map(|(n, ())| n.0)
                .collect()
        };
        v.sort_unstable();
        v
    };
    assert_eq!(names(true), ["eel-bat"]);
    assert_eq!(names(false), ["eel-bat", "goblin", "ogre"]);
}

#[test]
fn enemies_run_the_same_on_one_thread() {
    let (mut parallel_world, mut parallel) = enemies::setup();
    let (mut single_world, _) = enemies::setup();
    let mut single = Schedule::single_threaded();
    enemies::add_systems(&mut single);
    assert_eq!(
        parallel.order().unwrap(),
        ["steer_player", "ai", "movement", "combat"]
    );
    for _ in 0..12 {
        parallel.run(&mut parallel_world).unwrap();
        single.run(&mut single_world).unwrap();
    }
    let health = |w: &mut World| -> Vec<(Entity, i32)> {
        let mut v: Vec<_> = w
            .query::<(Entity, RefRO<enemies::Health>)>()
            .iter()
            .map(|(e, h)| (e, h.0))
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(health(&mut parallel_world), health(&mut single_world));
}

// ----- swarm ---------------------------------------------------------------------------------

fn small(threads: usize) -> swarm::Config {
    swarm::Config {
        entities: 10_000,
        frames: 30,
        threads: Some(threads),
        progress: false,
    }
}

#[test]
fn swarm_keeps_its_population_and_reports() {
    let report = swarm::run(&small(2));
    assert_eq!(report.alive, 10_000);
    assert_eq!(report.stats.count, 10_000);
    // Lifetimes are 1 to 10 s and 30 frames are half a second: a few percent expire.
    assert!(
        report.respawns > 100 && report.respawns < 2_000,
        "{}",
        report.respawns
    );
    let mut names: Vec<&str> = report.systems.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["lifetime", "movement", "orbit", "stats", "steering", "tally"]
    );
    let stored: usize = report.layout.archetypes.iter().map(|a| a.entities).sum();
    assert_eq!(stored, 10_000);
    assert!(report.fps() > 0.0 && report.entities_per_second() > 0.0);
    let text = report.to_string();
    assert!(
        text.contains("10000 entities, 30 frames on 2 threads"),
        "{text}"
    );
    assert!(text.contains("frames/s") && text.contains("entity-updates/s"));
    assert!(text.contains("Leader (0 B)"));
}

#[test]
fn swarm_is_deterministic_across_thread_counts() {
    let one = swarm::run(&small(1));
    let two = swarm::run(&small(2));
    assert_eq!(one.respawns, two.respawns);
    assert_eq!(one.stats, two.stats);
}

#[test]
fn swarm_parses_its_arguments() {
    let args = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let config = swarm::Config::from_args(args("--entities 1_000 --frames 5 --threads 3")).unwrap();
    assert_eq!(
        config,
        swarm::Config {
            entities: 1000,
            frames: 5,
            threads: Some(3),
            progress: true
        }
    );
    assert_eq!(
        swarm::Config::from_args(args("")).unwrap(),
        swarm::Config::default()
    );
    assert!(swarm::Config::from_args(args("--frames")).is_err());
    assert!(swarm::Config::from_args(args("--frames ten")).is_err());
    assert!(swarm::Config::from_args(args("--bogus")).is_err());
}

// ----- layout --------------------------------------------------------------------------------

#[test]
fn layout_prints_the_table_and_draws_one_bar_per_chunk() {
    let world = layout::build_world();
    let table = world.memory_report();
    let dir = std::env::temp_dir().join(format!("ecs-layout-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chunks.svg");
    let lines = layout::run(Some(&path)).unwrap();
    let printed = table.to_string();
    assert_eq!(lines[..printed.lines().count()].join("\n") + "\n", printed);
    assert_eq!(lines.last().unwrap(), &format!("wrote {}", path.display()));

    let svg = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let chunks: usize = table.archetypes.iter().map(|a| a.chunks).sum();
    assert_eq!(table.archetypes.len(), 4);
    assert_eq!(svg.matches(r#"class="chunk""#).count(), chunks);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for name in [
        "Entity", "Position", "Velocity", "Team", "Mass", "String", "Frozen",
    ] {
        assert!(
            svg.contains(&format!(">{name}</text>")),
            "legend lacks {name}"
        );
    }
}

#[test]
fn layout_columns_are_disjoint_and_inside_the_chunk() {
    let world = layout::build_world();
    for arch in world.archetypes().iter().filter(|a| !a.is_empty()) {
        let l = arch.layout();
        let cap = l.capacity();
        let mut ranges = vec![(0, cap * 8)];
        ranges.extend(
            (0..l.columns())
                .filter(|&c| l.size(c) > 0)
                .map(|c| (l.offset(c), l.offset(c) + cap * l.size(c))),
        );
        ranges.sort_unstable();
        assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0), "{ranges:?}");
        assert!(ranges.last().unwrap().1 <= l.chunk_size());
    }
    // The moved entity lands in a new archetype; the last row fills its hole.
    let moves = layout::move_demo();
    assert_eq!(moves[2], "insert Health into 700v1");
    assert!(
        moves[3].contains("(Position, Velocity, Health) row 0 "),
        "{moves:?}"
    );
    assert!(
        moves[4].starts_with("        1499v1 at archetype 1 (Position, Velocity) row 700 "),
        "{moves:?}"
    );
    // The printed byte ranges come from the same layout.
    let described = layout::describe(&world);
    assert!(described.iter().any(|l| l.contains("Mass (8 B each)")));
}

// ----- rollback ------------------------------------------------------------------------------

#[test]
fn rollback_peers_rewind_and_end_on_the_reference_state() {
    let lines = rollback::run(120);
    assert_eq!(lines.len(), 6 + 3, "{lines:#?}");
    let mut rewinds = 0;
    for block in &lines[..6] {
        // "frames   1- 20: rewinds 2 / 3; frame  16 confirmed: A B (reference R); ..."
        let words: Vec<&str> = block.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "confirmed:").unwrap();
        let (a, b) = (words[at + 1], words[at + 2]);
        let reference = words[at + 4].trim_end_matches(");");
        assert!(
            a == b && b == reference,
            "confirmed frames disagree: {block}"
        );
        let r = words.iter().position(|w| *w == "rewinds").unwrap();
        rewinds += words[r + 1].parse::<usize>().unwrap()
            + words[r + 3].trim_end_matches(';').parse::<usize>().unwrap();
    }
    assert!(rewinds > 10, "the script should force rewinds: {lines:#?}");
    for peer in &lines[6..8] {
        assert!(
            peer.ends_with("matches the reference (same entity ids)"),
            "{peer}"
        );
    }
    let hash = lines[8].rsplit(' ').next().unwrap();
    assert!(lines[6].contains(hash) && lines[7].contains(hash));
}

#[test]
fn rollback_is_deterministic_and_a_wrong_rewind_would_show() {
    assert_eq!(rollback::run(40), rollback::run(40));
    // A peer that is never told the truth does diverge: the check has teeth.
    let mut honest = rollback::Peer::new(0);
    let mut blind = rollback::Peer::new(0);
    for frame in 0..30 {
        honest.advance();
        blind.advance();
        if frame >= rollback::DELAY {
            let f = frame - rollback::DELAY;
            honest.receive(f, rollback::scripted_input(1, f));
            blind.receive(f, rollback::Input::default());
        }
    }
    assert!(honest.rollbacks > 0);
    assert_ne!(honest.hash(), blind.hash());
}

// ----- hierarchy -----------------------------------------------------------------------------

#[test]
fn hierarchy_propagates_the_same_on_any_thread_count_and_keeps_the_grid() {
    let one = hierarchy::run(3_000, 6, 1);
    assert_eq!(one[0], "3000 nodes in 60 trees, up to 8 levels deep");
    for threads in [2, 4] {
        assert_eq!(hierarchy::run(3_000, 6, threads), one, "{threads} threads");
    }
    // The grid holds every node, before and after the subtree's despawn.
    assert!(one[1].contains("3000 nodes indexed"), "{}", one[1]);
    let left: usize = one[2]
        .split(": ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(left < 3_000);
    assert!(one[2].ends_with(&format!("{left} indexed")), "{}", one[2]);
}

#[test]
fn hierarchy_globals_match_a_direct_computation() {
    let (mut world, _roots) = hierarchy::build(500, 8);
    hierarchy::animate(&mut world, 3);
    let mut pass = Propagate::new(&mut world);
    hierarchy::propagate(&mut world, &mut pass, 2);
    // Each global is the parent's global composed with the local, checked node by node.
    let nodes: Vec<Entity> = world
        .query::<(Entity, RefRO<hierarchy::Local>)>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    for e in nodes {
        let local = *world.get::<hierarchy::Local>(e).unwrap();
        let global = *world.get::<hierarchy::Global>(e).unwrap();
        let expected = match world.parent(e) {
            None => (local.x, local.y, local.scale),
            Some(p) => {
                let pg = *world.get::<hierarchy::Global>(p).unwrap();
                (
                    pg.x + pg.scale * local.x,
                    pg.y + pg.scale * local.y,
                    pg.scale * local.scale,
                )
            }
        };
        assert_eq!((global.x, global.y, global.scale), expected, "{e:?}");
    }
    assert_eq!(hierarchy::grid_len(&world), world.len() as usize);
}
