//! A tiny sweep end to end: every predefined mix dispatches to types of the size it
//! describes, policies reach the worlds, and the writers take what the sweep makes.
//! Timings are not checked (they are noise at this size); shapes and layout facts are.

use ecs_lab::{
    run_sweep, to_csv, to_svg, ChunkPolicy, LabError, Measure, Mix, Passes, SweepArgs, COLD_MENU,
};

fn tiny(extra: &[&str]) -> SweepArgs {
    let mut args = vec!["--entities", "500", "--reps", "2", "--moves", "50"];
    args.extend_from_slice(extra);
    SweepArgs::parse(args).unwrap()
}

#[test]
#[cfg_attr(miri, ignore = "times thousands of row moves")]
fn every_menu_mix_gets_rows_of_its_described_size() {
    for &(bytes, align) in COLD_MENU {
        for lanes in [1, 4] {
            let spec = format!("m={lanes}:{bytes}@{align}");
            let args = tiny(&["--mix", &spec, "--sizes", "4k", "--min-rows", ""]);
            let records = run_sweep(&args, |_| {}).unwrap();
            assert_eq!(records.len(), Measure::ALL.len(), "{spec}");
            let r = &records[0];
            let row = Mix::parse(&spec).unwrap().row_bytes();
            assert_eq!(r.row_bytes, row);
            // At most one row lost to alignment padding (the 16-byte pads after 4-byte hot
            // columns), never more rows than the bytes allow.
            assert!(
                r.capacity <= 4096 / row && r.capacity + 1 >= 4096 / row,
                "{spec}: {r:?}"
            );
            // The footprint counts exactly the two hot columns of every entity.
            assert_eq!(r.pass.bytes, 500 * 8 * lanes, "{spec}");
            assert!(r.pass.cache_lines >= r.pass.bytes / 64);
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "times thousands of row moves")]
fn policies_reach_the_worlds_and_the_writers_take_the_records() {
    let args = tiny(&["--sizes", "4k,64k", "--min-rows", "256"]);
    let mut seen = 0;
    let records = run_sweep(&args, |_| seen += 1).unwrap();
    assert_eq!(seen, records.len());
    assert_eq!(records.len(), 3 * 3 * Measure::ALL.len());
    for r in records.iter().filter(|r| r.measure == Measure::ForEach) {
        match r.policy {
            ChunkPolicy::Fixed(bytes) => assert_eq!(r.chunk_size, bytes),
            ChunkPolicy::MinRows(rows) => {
                assert!(r.capacity >= rows);
                // The smallest power of two that holds them: half of it does not.
                assert!(r.chunk_size == 4096 || (r.chunk_size / 2) / r.row_bytes < rows);
            }
            other => panic!("unexpected policy {other:?}"),
        }
        assert!(r.memory_bytes >= 500 * r.row_bytes, "{r:?}");
        assert_eq!(r.stats.reps, 2);
        assert!(r.stats.min <= r.stats.median && r.stats.median <= r.stats.max);
    }
    let wide_4k = records
        .iter()
        .find(|r| r.mix == "wide" && r.config == "4 KiB" && r.measure == Measure::ForEach)
        .unwrap();
    assert_eq!((wide_4k.row_bytes, wide_4k.capacity), (308, 13));
    let csv = to_csv(&records);
    assert_eq!(csv.lines().count(), 1 + records.len());
    let svg = to_svg(&records);
    assert_eq!(svg.matches("class=\"bar\"").count(), 3 * 3 * 3);
    assert_eq!(svg.matches("class=\"vec\"").count(), 3 * 3 * 3);
}

#[test]
#[cfg_attr(miri, ignore = "times row moves")]
fn a_hand_built_move_count_above_the_entities_moves_each_entity_once() {
    // `parse` caps `--moves`; the fields are public, so the sweep caps again.
    let mut args = tiny(&["--mix", "m=1:8", "--sizes", "4k", "--min-rows", ""]);
    args.entities = 40;
    args.moves = 1000;
    let records = run_sweep(&args, |_| {}).unwrap();
    assert_eq!(records.len(), Measure::ALL.len());
    assert!(records.iter().all(|r| r.stats.median.is_finite()));
}

#[test]
fn replicas_pool_their_samples_and_every_record_says_how_it_was_timed() {
    let args = tiny(&["--sizes", "4k,8k", "--replicas", "3", "--seed", "9"]);
    assert_eq!(
        (args.passes, args.replicas, args.seed),
        (Passes::Cold, 3, 9)
    );
    let records = run_sweep(&args, |_| {}).unwrap();
    for r in &records {
        // Every replica's recorded reps (not its warm-up) in one pool.
        assert_eq!(r.stats.reps, 3 * args.reps, "{:?}", r.measure);
        assert_eq!((r.passes, r.replicas), (Passes::Cold, 3));
        assert!(r.placement_spread >= 1.0, "{}", r.placement_spread);
    }
    let csv = to_csv(&records);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let passes = header.iter().position(|h| *h == "passes").unwrap();
    let replicas = header.iter().position(|h| *h == "replicas").unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((row[passes], row[replicas]), ("cold", "3"));

    let warm = tiny(&["--warm"]);
    assert_eq!(warm.passes, Passes::Warm);
    let records = run_sweep(&warm, |_| {}).unwrap();
    assert!(records
        .iter()
        .all(|r| r.passes == Passes::Warm && r.replicas == 1));
    assert!(to_svg(&records).contains("warm passes"));
    assert_eq!(
        SweepArgs::parse(["--replicas", "0"]),
        Err(LabError::Zero("--replicas"))
    );
}
