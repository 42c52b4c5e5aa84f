//! The `serde` feature: `Clone` components and resources that are not `Pod` written into
//! snapshot bytes through a user-chosen format, read back and restored; change ticks in the
//! bytes; the typed errors of every way it can go wrong.
//!
//! Run with `cargo test -p ecs-core --features serde --test serde` (CI does).

use std::collections::BTreeMap;

use ecs_core::{ChangeWindow, Entity, RowTicks, SerdeFormat, Snapshot, SnapshotError, World};
use serde::{Deserialize, Serialize};

/// The format the tests pick: JSON.
struct Json;

impl SerdeFormat for Json {
    type Error = serde_json::Error;
    fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Self::Error> {
        serde_json::to_vec(value)
    }
    fn from_slice<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Self::Error> {
        serde_json::from_slice(bytes)
    }
}

/// A format that cannot write anything.
struct Broken;

impl SerdeFormat for Broken {
    type Error = &'static str;
    fn to_vec<T: Serialize + ?Sized>(_: &T) -> Result<Vec<u8>, Self::Error> {
        Err("the disk is full")
    }
    fn from_slice<T: serde::de::DeserializeOwned>(_: &[u8]) -> Result<T, Self::Error> {
        Err("nothing to read")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Pos([f32; 2]);

#[derive(Clone, Debug, PartialEq, Hash, Serialize, Deserialize)]
struct Name(String);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Order {
    Idle,
    MoveTo(f32, f32),
    Attack { target: u64, shots: Vec<u8> },
}

#[derive(Clone, Debug, Default, PartialEq, Hash, Serialize, Deserialize)]
struct Log(Vec<String>);

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Scores(BTreeMap<String, u32>);

fn register(world: &mut World) {
    world.register_pod::<Pos>();
    world.register_serde::<Name, Json>();
    world.register_hashed::<Name>();
    world.register_serde::<Order, Json>();
    world.register_serde_resource::<Log, Json>();
    world.register_hashed_resource::<Log>();
    world.register_serde_resource::<Scores, Json>();
}

/// Rows of the test worlds: fewer under Miri, still several chunks of 512 bytes.
const ROWS: u32 = if cfg!(miri) { 60 } else { 300 };

fn registered() -> World {
    let mut world = World::with_test_chunk_size(512);
    register(&mut world);
    world
}

fn order(i: u32) -> Order {
    match i % 3 {
        0 => Order::Idle,
        1 => Order::MoveTo(i as f32, -(i as f32)),
        _ => Order::Attack {
            target: u64::from(i) * 7,
            shots: vec![i as u8; (i % 5) as usize],
        },
    }
}

/// A world of several archetypes (with and without each serde type), despawned holes and
/// both resources, one absent.
fn populated() -> (World, Vec<Entity>) {
    let mut world = registered();
    let mut ids = Vec::new();
    for i in 0..ROWS {
        let pos = Pos([i as f32, 1.0]);
        let e = match i % 4 {
            0 => world.spawn((pos, Name(format!("unit {i}")))),
            1 => world.spawn((pos, Name(format!("u{i}")), order(i))),
            2 => world.spawn((order(i),)),
            _ => world.spawn((pos,)),
        };
        ids.push(e);
    }
    for &e in ids.iter().step_by(7) {
        world.despawn(e).unwrap();
    }
    world.insert_resource(Log(vec!["start".into(), "wave 1".into()]));
    (world, ids)
}

fn values(world: &World, ids: &[Entity]) -> Vec<(Option<Pos>, Option<Name>, Option<Order>)> {
    ids.iter()
        .map(|&e| {
            (
                world.get::<Pos>(e).ok().copied(),
                world.get::<Name>(e).ok().cloned(),
                world.get::<Order>(e).ok().cloned(),
            )
        })
        .collect()
}

#[test]
fn serde_components_and_resources_survive_bytes_into_a_fresh_world() {
    let (mut world, ids) = populated();
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let read = Snapshot::from_bytes(&bytes).unwrap();
    // `Name` is hashed, so the bytes carry its value hashes; the snapshot's own hash agrees.
    assert_eq!(read.state_hash(), world.state_hash());

    let mut fresh = registered();
    fresh.restore(&read).unwrap();
    fresh.check_invariants();
    // Written again, the restored world gives the same bytes (values, ids, ticks).
    assert_eq!(fresh.snapshot().unwrap().to_bytes().unwrap(), bytes);
    assert_eq!(values(&fresh, &ids), values(&world, &ids));
    for &e in ids.iter().step_by(7) {
        assert!(!fresh.contains(e));
    }
    assert_eq!(fresh.resource::<Log>().0, ["start", "wave 1"]);
    assert!(fresh.get_resource::<Scores>().is_none());
    assert_eq!(fresh.state_hash(), world.state_hash());
    // The free list came back: both worlds hand out the same ids.
    for _ in 0..10 {
        assert_eq!(fresh.spawn((Pos([0.0; 2]),)), world.spawn((Pos([0.0; 2]),)));
    }
}

#[test]
fn a_snapshot_read_from_bytes_can_be_written_again_unchanged() {
    let (world, _) = populated();
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let read = Snapshot::from_bytes(&bytes).unwrap();
    assert_eq!(read.to_bytes().unwrap(), bytes);
}

#[test]
fn a_changed_value_changes_the_bytes_and_the_hash() {
    let (mut world, ids) = populated();
    let before = world.snapshot().unwrap().to_bytes().unwrap();
    let hash = world.state_hash();
    let e = ids[1];
    world.get_mut::<Name>(e).unwrap().0.push('!');
    let after = world.snapshot().unwrap().to_bytes().unwrap();
    assert_ne!(before, after);
    assert_ne!(Snapshot::from_bytes(&after).unwrap().state_hash(), hash);
    assert_eq!(
        Snapshot::from_bytes(&after).unwrap().state_hash(),
        world.state_hash()
    );
}

#[test]
fn restoring_bytes_restores_change_ticks_like_an_in_memory_snapshot() {
    let build = || {
        let mut world = registered();
        let name = world.component_id::<Name>().unwrap();
        let pos = world.component_id::<Pos>().unwrap();
        world.keep_row_ticks(name, RowTicks::CHANGED.union(RowTicks::ADDED));
        world.keep_row_ticks(pos, RowTicks::CHANGED);
        world
    };
    let mut world = build();
    let mut ids = Vec::new();
    for i in 0..ROWS * 2 / 3 {
        world.advance_tick();
        ids.push(world.spawn((Pos([i as f32, 0.0]), Name(format!("n{i}")))));
    }
    let mid = world.change_tick();
    for &e in ids.iter().step_by(3) {
        world.advance_tick();
        world.get_mut::<Name>(e).unwrap().0.push('+');
    }
    let snap = world.snapshot().unwrap();
    let bytes = snap.to_bytes().unwrap();

    // Two identical worlds, one restored from memory, one from bytes: the same ticks, so the
    // same snapshot bytes (ticks included) and the same changed rows.
    let mut from_memory = build();
    from_memory.restore(&snap).unwrap();
    let mut from_bytes = build();
    from_bytes
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    from_bytes.check_invariants();
    let retaken = |w: &World| w.snapshot().unwrap().to_bytes().unwrap();
    assert_eq!(retaken(&from_bytes), retaken(&from_memory));

    // The rows written after `mid` read as changed since then, as in the original world
    // (which also counts the last row spawned at `mid`); most rows do not.
    let changed_since = |w: &World, since: u64| {
        let window = ChangeWindow::new(w.change_tick(), since);
        let name = w.component_id::<Name>().unwrap();
        let mut rows = Vec::new();
        for arch in w.archetypes() {
            let Some(col) = arch.column(name) else {
                continue;
            };
            for chunk in arch.chunks() {
                for (r, &e) in chunk.entities().iter().enumerate() {
                    if chunk.row_changed_since(col, r, window) {
                        rows.push(e);
                    }
                }
            }
        }
        rows.sort();
        rows
    };
    let shift = from_bytes.change_tick() - snap.change_tick();
    let mut expected: Vec<Entity> = ids.iter().step_by(3).copied().collect();
    expected.sort();
    let original = changed_since(&world, mid);
    assert!(expected.iter().all(|e| original.contains(e)));
    assert!(original.len() < ids.len() / 2, "{} rows", original.len());
    assert_eq!(changed_since(&from_bytes, mid + shift), original);

    // Marking everything changed is a different restore, and the bytes show it.
    let mut marked = build();
    marked
        .restore_marking_changed(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    assert_ne!(retaken(&marked), retaken(&from_bytes));
    assert_eq!(changed_since(&marked, mid + shift).len(), ids.len());
}

#[test]
fn a_world_without_the_serde_registration_is_refused_by_name() {
    let (world, _) = populated();
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let read = Snapshot::from_bytes(&bytes).unwrap();

    // `Order` registered only for cloning: its encoded values cannot be read.
    let mut cloned_only = World::new();
    cloned_only.register_pod::<Pos>();
    cloned_only.register_serde::<Name, Json>();
    cloned_only.register_clone::<Order>();
    cloned_only.register_serde_resource::<Log, Json>();
    cloned_only.register_serde_resource::<Scores, Json>();
    let kept = cloned_only.spawn((Pos([5.0; 2]),));
    let err = cloned_only.restore(&read).unwrap_err();
    assert!(
        matches!(&err, SnapshotError::NotSerdeInWorld { name } if name.ends_with("Order")),
        "{err:?}"
    );
    assert!(err.to_string().contains("register_serde"));
    assert_eq!(cloned_only.get::<Pos>(kept), Ok(&Pos([5.0; 2])));

    // A resource likewise.
    let mut no_log = World::new();
    no_log.register_pod::<Pos>();
    no_log.register_serde::<Name, Json>();
    no_log.register_serde::<Order, Json>();
    no_log.register_snapshot_resource::<Log>();
    no_log.register_serde_resource::<Scores, Json>();
    let err = no_log.restore(&read).unwrap_err();
    assert!(
        matches!(&err, SnapshotError::NotSerdeInWorld { name } if name.ends_with("Log")),
        "{err:?}"
    );
}

#[test]
fn undecodable_values_are_a_typed_error_and_change_nothing() {
    let mut world = registered();
    world.spawn((Name("abc".into()),));
    let mut bytes = world.snapshot().unwrap().to_bytes().unwrap();
    // Break the JSON: `["abc"]` becomes `["abc"}`, and fix the checksum.
    let at = bytes
        .windows(7)
        .position(|w| w == b"[\"abc\"]")
        .expect("the encoded column");
    bytes[at + 6] = b'}';
    let body = bytes.len() - 8;
    let sum = Snapshot::checksum_of(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
    let read = Snapshot::from_bytes(&bytes).unwrap();

    let mut target = registered();
    let e = target.spawn((Name("kept".into()),));
    let err = target.restore(&read).unwrap_err();
    assert!(
        matches!(&err, SnapshotError::Decode { name, .. } if name.ends_with("Name")),
        "{err:?}"
    );
    assert_eq!(target.get::<Name>(e).unwrap().0, "kept");
    target.check_invariants();
}

#[test]
fn a_column_with_the_wrong_number_of_values_is_refused() {
    let mut world = registered();
    world.spawn((Name("a".into()),));
    world.spawn((Name("b".into()),));
    let mut bytes = world.snapshot().unwrap().to_bytes().unwrap();
    // `["a","b"]` becomes `["a"]   ` (same length, one value for two rows).
    let at = bytes
        .windows(9)
        .position(|w| w == b"[\"a\",\"b\"]")
        .expect("the encoded column");
    bytes[at..at + 9].copy_from_slice(b"[\"a\"]    ");
    let body = bytes.len() - 8;
    let sum = Snapshot::checksum_of(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
    let err = registered()
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap_err();
    assert!(
        matches!(&err, SnapshotError::Decode { reason, .. } if reason.contains("1 values for 2 rows")),
        "{err:?}"
    );
}

#[test]
fn a_format_that_fails_to_write_is_a_typed_error() {
    let mut world = World::new();
    world.register_serde::<Name, Broken>();
    world.spawn((Name("x".into()),));
    let err = world.snapshot().unwrap().to_bytes().unwrap_err();
    assert!(
        matches!(&err, SnapshotError::Encode { name, reason } if name.ends_with("Name") && reason == "the disk is full"),
        "{err:?}"
    );

    let mut res = World::new();
    res.register_serde_resource::<Log, Broken>();
    res.insert_resource(Log::default());
    assert!(matches!(
        res.snapshot().unwrap().to_bytes(),
        Err(SnapshotError::Encode { .. })
    ));
}

#[test]
fn cloned_types_without_a_codec_are_still_refused() {
    let mut world = World::new();
    world.register_clone::<Name>();
    world.spawn((Name("x".into()),));
    let err = world.snapshot().unwrap().to_bytes().unwrap_err();
    assert!(matches!(&err, SnapshotError::NotPod { name } if name.ends_with("Name")));
    assert!(err.to_string().contains("register_serde"));
}

#[test]
fn a_later_plain_clone_registration_keeps_the_codec() {
    let mut world = World::new();
    world.register_serde_resource::<Log, Json>();
    world.register_snapshot_resource::<Log>();
    world.insert_resource(Log(vec!["kept".into()]));
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let mut fresh = World::new();
    fresh.register_serde_resource::<Log, Json>();
    fresh
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    assert_eq!(fresh.resource::<Log>().0, ["kept"]);
}

#[test]
fn a_hashed_serde_resource_keeps_its_hash_in_the_bytes_and_a_forged_one_is_refused() {
    let (world, _) = populated();
    let mut bytes = world.snapshot().unwrap().to_bytes().unwrap();
    let read = Snapshot::from_bytes(&bytes).unwrap();
    // (`Order` is not hashed anywhere: it counts by presence on both sides.)
    assert!(read.has_unhashed_encoded_values());
    assert_eq!(read.state_hash(), world.state_hash());

    // The `Log` blob, then its hashed flag and hash: change the hash, fix the checksum.
    let json = br#"["start","wave 1"]"#;
    let at = bytes
        .windows(json.len())
        .position(|w| w == json)
        .expect("the encoded resource")
        + json.len();
    assert_eq!(bytes[at], 1, "hashed");
    bytes[at + 1] ^= 1;
    let body = bytes.len() - 8;
    let sum = Snapshot::checksum_of(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
    let forged = Snapshot::from_bytes(&bytes).unwrap();
    assert_ne!(forged.state_hash(), world.state_hash());
    let mut target = registered();
    let err = target.restore(&forged).unwrap_err();
    assert!(
        matches!(&err, SnapshotError::Decode { name, reason } if name.ends_with("Log") && reason.contains("hash")),
        "{err:?}"
    );
}
