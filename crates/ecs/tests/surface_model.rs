//! Model-based property test of the whole public surface, through the `ecs` facade.
//!
//! Each case builds a world (default 16 KiB chunks, or 512-byte test chunks so a few entities
//! already cross chunk boundaries) and runs a random sequence of operations on it and on a
//! naive model, a `BTreeMap<Entity, Row>` where a row holds one optional value per component
//! kind (the typed equivalent of `HashMap<Entity, HashMap<TypeId, Box<dyn Any>>>`):
//!
//! - `spawn`, `spawn_batch`, `despawn`, `insert`, `remove`, `get`, `get_mut`, `clear`;
//! - queries of a fixed family of shapes (filters `With`, `Without`, `Or`, `Changed`, optional
//!   and written elements), run one-shot or through a cached `QueryState`, by `iter`,
//!   `for_each`, `for_each_chunk`, `get` and `count`;
//! - command buffers: a single-threaded schedule whose one system records a random list of
//!   spawns, despawns, inserts, removes and clears through `Commands`; commands whose entity
//!   is gone when they apply must be skipped and reported by `skipped_commands`.
//!
//! Every handle ever issued stays in the pick pool (plus handles that were never issued), so
//! error paths are hit all the time: every `Ok` / `Err` and every value read back must be what
//! the model predicts. After each step the world checks its own invariants, every pooled
//! handle is compared with the model, and the drop ledger must count exactly the `Tracked`
//! values the model holds. At the end, every value created must have been dropped once.
//!
//! 256 cases (4 under Miri). `PROPTEST_CASES=N` overrides that: the `proptest!` macro passes
//! the config through proptest's `contextualize_config`, which reads the variable.

use std::sync::{Arc, Mutex};

use ecs::prelude::*;
use proptest::prelude::*;

use ecs_test_support::strategy;
use ecs_test_support::{
    code, elem_seed, run_case as run_steps, with_kind, BundleFn, Kind, KindFn, Model, ModelBundle,
    Name, Num, Pick, Row, Steps, Summary, Tracked, Wide, Zst, NAME, NUM, TRACKED, WIDE, ZST,
};

/// The kinds this model uses: `Num` is its small plain value, `Name` its heap-owning one.
const SURFACE_KINDS: [usize; 5] = [TRACKED, NUM, ZST, WIDE, NAME];
/// What a query reports for an `Option` element that is `None`.
const ABSENT: u64 = u64::MAX - 1;

/// Number of bundle types in the family.
const BUNDLES: usize = 12;

/// Runs `f` with bundle type number `b` of the family.
fn with_bundle<V: BundleFn>(b: usize, f: V) -> V::Out {
    match b % BUNDLES {
        0 => f.call::<()>(),
        1 => f.call::<(Tracked,)>(),
        2 => f.call::<(Num,)>(),
        3 => f.call::<(Zst,)>(),
        4 => f.call::<(Wide,)>(),
        5 => f.call::<(Name,)>(),
        6 => f.call::<(Tracked, Num)>(),
        7 => f.call::<(Num, Tracked)>(),
        8 => f.call::<(Zst, Name)>(),
        9 => f.call::<(Wide, Tracked, Name)>(),
        10 => f.call::<(Name, Wide, Zst, Num, Tracked)>(),
        _ => f.call::<(Num, Wide)>(),
    }
}

/// The kinds of bundle number `b`, in tuple order.
fn bundle_kinds(b: usize) -> Vec<usize> {
    struct KindsOf;
    impl BundleFn for KindsOf {
        type Out = Vec<usize>;
        fn call<B: ModelBundle>(self) -> Vec<usize> {
            B::kinds()
        }
    }
    with_bundle(b, KindsOf)
}

// ----- query shapes ---------------------------------------------------------------------------

#[path = "surface_model/shapes.rs"]
mod shapes;
use ecs_test_support::shapes::{Path, States};
use shapes::run_shape;

// ----- operations -----------------------------------------------------------------------------

/// An entity a recorded command targets.
#[derive(Clone, Copy, Debug)]
enum Target {
    Pick(Pick),
    /// The n-th (modulo) entity spawned earlier in the same command buffer.
    Spawned(usize),
}

#[derive(Clone, Debug)]
enum Cmd {
    Spawn {
        bundle: usize,
        seed: u32,
    },
    Despawn(Target),
    Insert {
        target: Target,
        bundle: usize,
        seed: u32,
    },
    Remove {
        target: Target,
        bundle: usize,
    },
    Clear,
}

#[derive(Clone, Debug)]
enum Op {
    Spawn {
        bundle: usize,
        seed: u32,
    },
    SpawnBatch {
        bundle: usize,
        count: u32,
        seed: u32,
    },
    Despawn(Pick),
    Insert {
        target: Pick,
        bundle: usize,
        seed: u32,
    },
    Remove {
        target: Pick,
        bundle: usize,
    },
    Get {
        target: Pick,
        kind: usize,
    },
    GetMut {
        target: Pick,
        kind: usize,
        seed: u32,
    },
    Query {
        shape: usize,
        path: Path,
        cached: bool,
        target: Pick,
        seed: u32,
    },
    Commands(Vec<Cmd>),
    Clear,
}

/// A command with its target resolved against the model, as the system receives it.
#[derive(Clone, Copy, Debug)]
enum Resolved {
    Entity(Entity),
    Spawned(usize),
}

/// What the harness and the command-recording system share.
#[derive(Default)]
struct Script {
    /// The buffer to record, with picks resolved.
    cmds: Vec<(Cmd, Option<Resolved>)>,
    /// Per command, the entity it was recorded against (for `spawn`, the reserved id).
    log: Vec<Entity>,
}

/// A handle no world of this test ever issues.
const NEVER: u64 = u64::MAX;

/// Records `script.cmds` through `commands`, logging each command's entity.
fn record(commands: &mut Commands<'_, '_>, script: &mut Script) {
    struct SpawnCmd<'a, 'w, 's>(&'a mut Commands<'w, 's>, u32);
    impl BundleFn for SpawnCmd<'_, '_, '_> {
        type Out = Entity;
        fn call<B: ModelBundle>(self) -> Entity {
            self.0.spawn(B::make(self.1))
        }
    }
    struct InsertCmd<'a, 'w, 's>(&'a mut Commands<'w, 's>, Entity, u32);
    impl BundleFn for InsertCmd<'_, '_, '_> {
        type Out = ();
        fn call<B: ModelBundle>(self) {
            self.0.insert(self.1, B::make(self.2));
        }
    }
    struct RemoveCmd<'a, 'w, 's>(&'a mut Commands<'w, 's>, Entity);
    impl BundleFn for RemoveCmd<'_, '_, '_> {
        type Out = ();
        fn call<B: ModelBundle>(self) {
            self.0.remove::<B>(self.1);
        }
    }

    let mut spawned: Vec<Entity> = Vec::new();
    let mut log = Vec::new();
    for (cmd, target) in &script.cmds {
        let entity = match target {
            Some(Resolved::Entity(e)) => *e,
            Some(Resolved::Spawned(n)) if !spawned.is_empty() => spawned[n % spawned.len()],
            _ => Entity::from_bits(NEVER).expect("non-zero generation"),
        };
        let entity = match *cmd {
            Cmd::Spawn { bundle, seed } => {
                let e = with_bundle(bundle, SpawnCmd(commands, seed));
                spawned.push(e);
                e
            }
            Cmd::Despawn(_) => {
                commands.despawn(entity);
                entity
            }
            Cmd::Insert { bundle, seed, .. } => {
                with_bundle(bundle, InsertCmd(commands, entity, seed));
                entity
            }
            Cmd::Remove { bundle, .. } => {
                with_bundle(bundle, RemoveCmd(commands, entity));
                entity
            }
            Cmd::Clear => {
                commands.add(World::clear);
                entity
            }
        };
        log.push(entity);
    }
    script.log = log;
}

// ----- the harness ----------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum WorldKind {
    /// 16 KiB chunks.
    Default,
    /// 512-byte chunks: two rows of the widest bundle per chunk.
    Tiny,
}

/// The name of the command-recording system, as skipped commands report it.
const RECORDER: &str = "recorder";

struct Harness {
    world: World,
    /// The live entities and the codes of their values; every handle the world issued.
    model: Model,
    /// Cached `QueryState`s, by query type.
    states: States,
    schedule: Schedule,
    script: Arc<Mutex<Script>>,
}

impl Harness {
    fn new(kind: WorldKind) -> Self {
        let world = match kind {
            WorldKind::Default => World::new(),
            WorldKind::Tiny => World::with_test_chunk_size(512),
        };
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = script.clone();
        let mut schedule = Schedule::single_threaded();
        schedule
            .add_system(move |mut commands: Commands| {
                let mut script = shared.lock().unwrap_or_else(|e| e.into_inner());
                record(&mut commands, &mut script);
            })
            .named(RECORDER);
        Self {
            world,
            model: Model::new(Summary::Read, Vec::new()),
            states: States::new(),
            schedule,
            script,
        }
    }

    /// `row` with the values of bundle `b` made from `seed` added or overwritten.
    fn merge(row: &mut Row, b: usize, seed: u32) {
        for k in bundle_kinds(b) {
            row[k] = Some(code(k, elem_seed(seed, k)));
        }
    }

    fn bundle_row(b: usize, seed: u32) -> Row {
        let mut row = Row::default();
        Self::merge(&mut row, b, seed);
        row
    }

    /// The error `remove::<B>` of bundle `b` must give for `entity`, or `None` if it succeeds.
    fn remove_error(&self, entity: Entity, b: usize) -> Option<ComponentError> {
        self.model.expect_remove(entity, &bundle_kinds(b)).err()
    }

    fn born(&mut self, entity: Entity, row: Row) {
        self.model.born(entity, row);
    }

    fn pick(&self, pick: Pick) -> Entity {
        self.model.pick(pick)
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Spawn { bundle, seed } => {
                struct Spawn<'a>(&'a mut World, u32);
                impl BundleFn for Spawn<'_> {
                    type Out = Entity;
                    fn call<B: ModelBundle>(self) -> Entity {
                        self.0.spawn(B::make(self.1))
                    }
                }
                let e = with_bundle(bundle, Spawn(&mut self.world, seed));
                self.born(e, Self::bundle_row(bundle, seed));
            }
            Op::SpawnBatch {
                bundle,
                count,
                seed,
            } => {
                struct Batch<'a>(&'a mut World, u32, u32);
                impl BundleFn for Batch<'_> {
                    type Out = Vec<Entity>;
                    fn call<B: ModelBundle>(self) -> Vec<Entity> {
                        let (count, seed) = (self.1, self.2);
                        let batch = self
                            .0
                            .spawn_batch((0..count).map(|i| B::make(seed.wrapping_add(i))));
                        assert_eq!(batch.len(), count as usize, "batch size hint");
                        batch.collect()
                    }
                }
                let ids = with_bundle(bundle, Batch(&mut self.world, count, seed));
                assert_eq!(ids.len(), count as usize);
                for (i, e) in (0..).zip(ids) {
                    self.born(e, Self::bundle_row(bundle, seed.wrapping_add(i)));
                }
            }
            Op::Despawn(pick) => {
                let e = self.pick(pick);
                let expected = match self.model.rows.remove(&e) {
                    Some(_) => Ok(()),
                    None => Err(EntityError::NoSuchEntity(e)),
                };
                assert_eq!(self.world.despawn(e), expected, "despawn {e:?}");
            }
            Op::Insert {
                target,
                bundle,
                seed,
            } => {
                struct Insert<'a>(&'a mut World, Entity, u32);
                impl BundleFn for Insert<'_> {
                    type Out = Result<(), EntityError>;
                    fn call<B: ModelBundle>(self) -> Result<(), EntityError> {
                        self.0.insert(self.1, B::make(self.2))
                    }
                }
                let e = self.pick(target);
                let got = with_bundle(bundle, Insert(&mut self.world, e, seed));
                match self.model.rows.get_mut(&e) {
                    Some(row) => {
                        Self::merge(row, bundle, seed);
                        assert_eq!(got, Ok(()), "insert into {e:?}");
                    }
                    None => assert_eq!(got, Err(EntityError::NoSuchEntity(e))),
                }
            }
            Op::Remove { target, bundle } => {
                struct Remove<'a>(&'a mut World, Entity);
                impl BundleFn for Remove<'_> {
                    type Out = Result<Vec<u64>, ComponentError>;
                    fn call<B: ModelBundle>(self) -> Result<Vec<u64>, ComponentError> {
                        // The removed values are read, then dropped here.
                        self.0.remove::<B>(self.1).map(|values| values.read())
                    }
                }
                let e = self.pick(target);
                let expected = match self.remove_error(e, bundle) {
                    Some(err) => Err(err),
                    None => {
                        let row = self.model.rows.get_mut(&e).expect("live");
                        Ok(bundle_kinds(bundle)
                            .into_iter()
                            .map(|k| row[k].take().expect("present"))
                            .collect())
                    }
                };
                let got = with_bundle(bundle, Remove(&mut self.world, e));
                assert_eq!(got, expected, "remove bundle {bundle} from {e:?}");
            }
            Op::Get { target, kind } => {
                struct Get<'a>(&'a World, Entity);
                impl KindFn for Get<'_> {
                    type Out = Result<u64, ComponentError>;
                    fn call<K: Kind>(self) -> Self::Out {
                        self.0.get::<K>(self.1).map(K::read)
                    }
                }
                let e = self.pick(target);
                let got = with_kind(kind, Get(&self.world, e));
                assert_eq!(
                    got,
                    self.model.expect_get(e, kind),
                    "get kind {kind} of {e:?}"
                );
            }
            Op::GetMut { target, kind, seed } => {
                struct GetMut<'a>(&'a mut World, Entity, u32);
                impl KindFn for GetMut<'_> {
                    type Out = Result<u64, ComponentError>;
                    fn call<K: Kind>(self) -> Self::Out {
                        self.0.get_mut::<K>(self.1).map(|v| {
                            let old = v.read();
                            v.mutate(self.2);
                            old
                        })
                    }
                }
                let e = self.pick(target);
                let expected = self.model.expect_get(e, kind);
                let got = with_kind(kind, GetMut(&mut self.world, e, seed));
                assert_eq!(got, expected, "get_mut kind {kind} of {e:?}");
                if got.is_ok() {
                    self.model.rows.get_mut(&e).expect("live")[kind] = Some(code(kind, seed));
                }
            }
            Op::Query {
                shape,
                path,
                cached,
                target,
                seed,
            } => {
                let target = self.pick(target);
                run_shape(self, shape, path, cached, target, seed);
            }
            Op::Commands(ref cmds) => self.run_commands(cmds),
            Op::Clear => {
                self.world.clear();
                self.model.rows.clear();
            }
        }
    }

    fn run_commands(&mut self, cmds: &[Cmd]) {
        let resolved: Vec<(Cmd, Option<Resolved>)> = cmds
            .iter()
            .map(|cmd| {
                let target = match cmd {
                    Cmd::Despawn(t)
                    | Cmd::Insert { target: t, .. }
                    | Cmd::Remove { target: t, .. } => Some(match *t {
                        Target::Pick(p) => Resolved::Entity(self.pick(p)),
                        Target::Spawned(n) => Resolved::Spawned(n),
                    }),
                    Cmd::Spawn { .. } | Cmd::Clear => None,
                };
                (cmd.clone(), target)
            })
            .collect();
        self.script.lock().expect("not poisoned").cmds = resolved;
        self.schedule
            .run(&mut self.world)
            .expect("a one-system schedule builds");
        let log = std::mem::take(&mut self.script.lock().expect("not poisoned").log);
        assert_eq!(log.len(), cmds.len(), "the system recorded every command");

        // Reserved ids become live, empty entities at the first command's flush.
        for (cmd, &e) in cmds.iter().zip(&log) {
            if let Cmd::Spawn { .. } = cmd {
                self.born(e, Row::default());
            }
        }
        let mut skipped: Vec<(&'static str, Entity, &'static str)> = Vec::new();
        for (cmd, &e) in cmds.iter().zip(&log) {
            let live = self.model.rows.contains_key(&e);
            match *cmd {
                Cmd::Spawn { bundle, seed } | Cmd::Insert { bundle, seed, .. } => {
                    let name = if matches!(cmd, Cmd::Spawn { .. }) {
                        "spawn"
                    } else {
                        "insert"
                    };
                    match self.model.rows.get_mut(&e) {
                        Some(row) => Self::merge(row, bundle, seed),
                        None => skipped.push((name, e, "no such entity")),
                    }
                }
                Cmd::Despawn(_) => {
                    if self.model.rows.remove(&e).is_none() {
                        skipped.push(("despawn", e, "no such entity"));
                    }
                }
                Cmd::Remove { bundle, .. } => match self.remove_error(e, bundle) {
                    None => {
                        let row = self.model.rows.get_mut(&e).expect("live");
                        for k in bundle_kinds(bundle) {
                            row[k] = None;
                        }
                    }
                    Some(_) if !live => skipped.push(("remove", e, "no such entity")),
                    Some(_) => skipped.push(("remove", e, "has no")),
                },
                Cmd::Clear => self.model.rows.clear(),
            }
        }
        let got = self.schedule.skipped_commands();
        let summary: Vec<(&str, Entity)> = got.iter().map(|c| (c.command, c.entity)).collect();
        let expected: Vec<(&str, Entity)> = skipped.iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(summary, expected, "skipped commands of {cmds:?}");
        for (c, s) in got.iter().zip(&skipped) {
            assert_eq!(c.system, RECORDER);
            assert!(c.reason.contains(s.2), "reason of {c}");
        }
    }
}

impl Steps for Harness {
    type Op = Op;

    fn apply(&mut self, op: &Op) {
        Harness::apply(self, op);
    }

    /// Compares everything observable with the model: every pooled handle, every kind, and
    /// the drop ledger against the `Tracked` values the model holds.
    fn check(&mut self) {
        self.model.check_world(&self.world, &SURFACE_KINDS);
    }
}

// ----- strategies -----------------------------------------------------------------------------

#[path = "surface_model/strategies.rs"]
mod strategies;
use strategies::case;

/// Runs one case: every op on the world and the model, then the drop ledger must balance.
fn run_case(kind: WorldKind, ops: &[Op]) {
    run_steps(|| Harness::new(kind), ops);
}

proptest! {
    #![proptest_config(strategy::config(256, 4))]

    #[test]
    fn surface_matches_model((kind, ops) in case()) {
        run_case(kind, &ops);
    }
}

// ----- fixed sequences ------------------------------------------------------------------------

/// A clear recorded in a command buffer runs after the buffer's reservations were flushed, so
/// a spawn recorded before it is applied first and a spawn or insert after it is skipped.
#[test]
fn commands_around_a_recorded_clear() {
    let cmds = vec![
        Cmd::Spawn { bundle: 6, seed: 1 },
        Cmd::Clear,
        Cmd::Spawn { bundle: 9, seed: 2 },
        Cmd::Insert {
            target: Target::Spawned(0),
            bundle: 1,
            seed: 3,
        },
        Cmd::Remove {
            target: Target::Spawned(1),
            bundle: 0,
        },
        Cmd::Despawn(Target::Pick(Pick::Any(0))),
    ];
    for kind in [WorldKind::Default, WorldKind::Tiny] {
        run_case(
            kind,
            &[
                Op::SpawnBatch {
                    bundle: 10,
                    count: 5,
                    seed: 7,
                },
                Op::Commands(cmds.clone()),
                Op::Commands(cmds.clone()),
            ],
        );
    }
}

/// Every error path once: stale, forged and never-issued handles, missing components.
#[test]
fn error_paths_on_stale_and_forged_handles() {
    let mut ops = vec![
        Op::Spawn {
            bundle: 10,
            seed: 1,
        },
        Op::Despawn(Pick::Live(0)),
    ];
    for target in [Pick::Any(0), Pick::Forged(1), Pick::Forged(4)] {
        ops.extend([
            Op::Despawn(target),
            Op::Insert {
                target,
                bundle: 6,
                seed: 2,
            },
            Op::Remove { target, bundle: 9 },
            Op::Get { target, kind: WIDE },
            Op::GetMut {
                target,
                kind: TRACKED,
                seed: 3,
            },
        ]);
        for shape in 0..shapes::SHAPES {
            ops.push(Op::Query {
                shape,
                path: Path::Get,
                cached: shape % 2 == 0,
                target,
                seed: 4,
            });
        }
    }
    ops.extend([
        Op::Spawn { bundle: 2, seed: 5 },
        Op::Remove {
            target: Pick::Live(0),
            bundle: 7,
        },
        Op::Get {
            target: Pick::Live(0),
            kind: NAME,
        },
    ]);
    run_case(WorldKind::Tiny, &ops);
}

/// A row refused only because of alignment padding must say so: the message's byte count has
/// to exceed the chunk size it is compared with.
#[test]
fn oversized_row_message_counts_alignment_padding() {
    #[repr(align(256))]
    struct Aligned(#[expect(dead_code, reason = "only its size and alignment matter")] [u8; 256]);
    let mut world = World::with_test_chunk_size(512);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // 8 + 256 + 1 = 265 bytes, but the `u8` column starts after 256 bytes of padding.
        world.spawn((Aligned([0; 256]), 1u8));
    }))
    .expect_err("one row does not fit in 512 bytes");
    let message = panic.downcast_ref::<String>().expect("a formatted message");
    let needs: usize = message
        .split("needs ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no byte count in: {message}"));
    assert!(
        needs > 512,
        "the message claims {needs} bytes do not fit in 512: {message}"
    );
    world.check_invariants();
}
