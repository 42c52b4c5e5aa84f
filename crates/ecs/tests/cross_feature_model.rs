//! The cross-feature model test (issue 26): features tested together, not one at a time.
//!
//! A proptest state machine mixes spawn / insert / remove / despawn, enable toggles, chunk
//! component writes (by systems), `compact()`, snapshot / restore, command buffers, and runs of
//! a schedule built from random systems over random query shapes (filters over an enableable
//! and a plain type, sequential and parallel loops). A reference model predicts every entity's
//! components and the result of every system; after each step the world must agree with it,
//! pass `check_invariants`, and keep the drop ledger of its non-`Pod` component balanced.
//!
//! Panic injection: `Flaky`'s `Clone` and `Drop` and the chunk component `Rows`'s `Default`
//! panic on the N-th call (site and N chosen by the strategy). After the panic the world must
//! still pass its checks: an operation whose panic the docs say leaves the world as it was
//! (spawn, moves, snapshot, restore) is checked against the unchanged model; for the others the
//! model adopts what the world says of the one entity being changed and checks every other.
//!
//! The schedule is built before the world exists (so it learns that `Shield` is enableable
//! only at its first run: issue 26 item 1) and runs on two threads.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

use bytemuck::{Pod, Zeroable};
use ecs::core::Entity;
use ecs::prelude::*;
use ecs::query::{ChunkRO, ChunkRW, EnabledRW};
use ecs::sched::CommandBuffer;
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Hp(u32);

/// Enableable: a disabled `Shield` counts as absent for `With` / `Without`.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Shield;

/// A non-`Pod` component (snapshotted by `Clone`) whose `Clone` and `Drop` may panic.
#[derive(Debug)]
struct Flaky(u32);

/// A chunk component whose `Default` may panic; systems write each chunk's row count into it.
#[derive(Debug)]
struct Rows(u32);

/// A panic site of the injection.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Site {
    FlakyClone,
    FlakyDrop,
    RowsDefault,
}

thread_local! {
    /// The armed site and how many of its calls pass before one panics.
    static FUSE: Cell<Option<(Site, u32)>> = const { Cell::new(None) };
    /// Whether the fuse fired since the last `take_fired`.
    static FIRED: Cell<bool> = const { Cell::new(false) };
    /// `Flaky` ids made and dropped (by value: a double drop shows as a repeat).
    static MADE: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    static DROPPED: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u32> = const { Cell::new(0) };
}

/// Panics if `site` is armed and its count ran out (once: the fuse is then spent).
fn maybe_fail(site: Site) {
    FUSE.with(|f| {
        if let Some((armed, n)) = f.get() {
            if armed == site {
                if n == 0 {
                    f.set(None);
                    FIRED.with(|x| x.set(true));
                    panic!("injected panic at {site:?}");
                }
                f.set(Some((armed, n - 1)));
            }
        }
    });
}

fn take_fired() -> bool {
    FIRED.with(|x| x.replace(false))
}

fn flaky() -> Flaky {
    let id = NEXT_ID.with(|n| n.replace(n.get() + 1));
    MADE.with(|m| m.borrow_mut().push(id));
    Flaky(id)
}

impl Clone for Flaky {
    fn clone(&self) -> Self {
        maybe_fail(Site::FlakyClone);
        let copy = flaky();
        // A clone keeps the value's meaning (the model compares `Flaky` by original id).
        let origin = self.origin();
        ORIGIN.with(|o| o.borrow_mut().insert(copy.0, origin));
        copy
    }
}

thread_local! {
    /// Clone id -> the id of the value it copies, so a restored value compares as the original.
    static ORIGIN: std::cell::RefCell<BTreeMap<u32, u32>> = const { std::cell::RefCell::new(BTreeMap::new()) };
}

impl Flaky {
    fn origin(&self) -> u32 {
        ORIGIN.with(|o| o.borrow().get(&self.0).copied().unwrap_or(self.0))
    }
}

impl Drop for Flaky {
    fn drop(&mut self) {
        DROPPED.with(|d| d.borrow_mut().push(self.0));
        maybe_fail(Site::FlakyDrop);
    }
}

impl Default for Rows {
    fn default() -> Self {
        maybe_fail(Site::RowsDefault);
        Rows(0)
    }
}

/// What the model knows of one entity.
#[derive(Clone, Debug, PartialEq)]
struct ModelRow {
    /// `None` for an entity without one (spawned empty from a reserved id).
    hp: Option<u32>,
    /// `Some(enabled)` if it has a `Shield`.
    shield: Option<bool>,
    /// The original id of its `Flaky`, if any.
    flaky: Option<u32>,
}

/// A query filter of a random system.
#[derive(Clone, Copy, Debug)]
enum Filter {
    All,
    WithShield,
    WithoutShield,
    WithFlaky,
    WithoutFlaky,
}

impl Filter {
    fn passes(self, row: &ModelRow) -> bool {
        match self {
            Self::All => true,
            Self::WithShield => row.shield == Some(true),
            Self::WithoutShield => row.shield != Some(true),
            Self::WithFlaky => row.flaky.is_some(),
            Self::WithoutFlaky => row.flaky.is_none(),
        }
    }
}

/// A system of the case's schedule: `hp = hp * mul + add` over the rows its filter passes,
/// or the toggler (`Shield` enabled iff `hp` is even).
#[derive(Clone, Debug)]
enum SystemSpec {
    Update {
        filter: Filter,
        mul: u32,
        add: u32,
        parallel: bool,
    },
    Toggle,
}

#[derive(Clone, Debug)]
enum Op {
    Spawn { hp: u32, shield: bool, flaky: bool },
    Despawn(usize),
    InsertShield(usize),
    RemoveShield(usize),
    Toggle(usize, bool),
    InsertFlaky(usize),
    RemoveFlaky(usize),
    Compact,
    Snapshot,
    Restore,
    Commands(Vec<(u8, usize, u32)>),
    Run,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u32>(), any::<bool>(), any::<bool>())
            .prop_map(|(hp, shield, flaky)| Op::Spawn { hp, shield, flaky }),
        2 => any::<usize>().prop_map(Op::Despawn),
        1 => any::<usize>().prop_map(Op::InsertShield),
        1 => any::<usize>().prop_map(Op::RemoveShield),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(p, on)| Op::Toggle(p, on)),
        1 => any::<usize>().prop_map(Op::InsertFlaky),
        1 => any::<usize>().prop_map(Op::RemoveFlaky),
        1 => Just(Op::Compact),
        1 => Just(Op::Snapshot),
        1 => Just(Op::Restore),
        1 => prop::collection::vec((0u8..3, any::<usize>(), any::<u32>()), 1..5).prop_map(Op::Commands),
        3 => Just(Op::Run),
    ]
}

fn system_spec() -> impl Strategy<Value = SystemSpec> {
    let filter = prop_oneof![
        Just(Filter::All),
        Just(Filter::WithShield),
        Just(Filter::WithoutShield),
        Just(Filter::WithFlaky),
        Just(Filter::WithoutFlaky),
    ];
    prop_oneof![
        5 => (filter, 1u32..5, any::<u32>(), any::<bool>()).prop_map(|(filter, mul, add, parallel)| {
            SystemSpec::Update { filter, mul, add, parallel }
        }),
        1 => Just(SystemSpec::Toggle),
    ]
}

fn site() -> impl Strategy<Value = Option<(Site, u32)>> {
    prop_oneof![
        2 => Just(None),
        1 => (0u32..20).prop_map(|n| Some((Site::FlakyClone, n))),
        1 => (0u32..20).prop_map(|n| Some((Site::FlakyDrop, n))),
        1 => (0u32..6).prop_map(|n| Some((Site::RowsDefault, n))),
    ]
}

/// Adds one update system with filter `F`.
fn add_update<F: ecs::query::QueryFilter + 'static>(
    schedule: &mut Schedule,
    name: String,
    mul: u32,
    add: u32,
    parallel: bool,
) {
    let step = move |hp: &mut Hp| hp.0 = hp.0.wrapping_mul(mul).wrapping_add(add);
    schedule
        .add_system(move |mut q: Query<RefRW<Hp>, F>| {
            if parallel {
                q.par_for_each(step);
            } else {
                q.for_each(step);
            }
        })
        .named(name);
}

/// The case's schedule, built before any world exists; the chunk-value writer and checker
/// come first (the checker counts chunks whose value is not their row count).
fn build_schedule(specs: &[SystemSpec]) -> Schedule {
    let mut schedule = Schedule::with_threads(2);
    schedule
        .add_system(|mut q: Query<(ChunkRW<Rows>, RefRO<Hp>)>| {
            q.for_each_chunk(|mut view| {
                let len = view.len() as u32;
                view.chunk_value_mut::<Rows>().0 = len;
            });
        })
        .named("count_rows");
    schedule
        .add_system(
            |mut q: Query<(ChunkRO<Rows>, RefRO<Hp>)>, mut bad: ResMut<BadChunks>| {
                let wrong = std::sync::atomic::AtomicU32::new(0);
                q.par_for_each_chunk(|view| {
                    if view.chunk_value::<Rows>().0 != view.len() as u32 {
                        wrong.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                });
                bad.0 += wrong.into_inner();
            },
        )
        .named("check_rows");
    for (i, spec) in specs.iter().enumerate() {
        let name = format!("s{i}");
        match *spec {
            SystemSpec::Update {
                filter,
                mul,
                add,
                parallel,
            } => match filter {
                Filter::All => add_update::<()>(&mut schedule, name, mul, add, parallel),
                Filter::WithShield => {
                    add_update::<With<Shield>>(&mut schedule, name, mul, add, parallel)
                }
                Filter::WithoutShield => {
                    add_update::<Without<Shield>>(&mut schedule, name, mul, add, parallel)
                }
                Filter::WithFlaky => {
                    add_update::<With<Flaky>>(&mut schedule, name, mul, add, parallel)
                }
                Filter::WithoutFlaky => {
                    add_update::<Without<Flaky>>(&mut schedule, name, mul, add, parallel)
                }
            },
            SystemSpec::Toggle => {
                schedule
                    .add_system(|mut q: Query<(RefRO<Hp>, EnabledRW<Shield>)>| {
                        q.for_each(|(hp, mut on)| {
                            on.set(hp.0 % 2 == 0);
                        });
                    })
                    .named(name);
            }
        }
    }
    schedule
}

/// Chunks whose `Rows` value was not their row count when `check_rows` ran.
#[derive(Default)]
struct BadChunks(u32);

struct Case {
    world: World,
    model: BTreeMap<Entity, ModelRow>,
    saved: Option<(Snapshot, BTreeMap<Entity, ModelRow>)>,
    schedule: Schedule,
    specs: Vec<SystemSpec>,
}

impl Case {
    fn pick(&self, p: usize) -> Option<Entity> {
        (!self.model.is_empty()).then(|| *self.model.keys().nth(p % self.model.len()).unwrap())
    }

    /// The model's view of `e` as the world has it (`None` if dead).
    fn observe(&self, e: Entity) -> Option<ModelRow> {
        let world = &self.world;
        world.contains(e).then(|| ModelRow {
            hp: world.get::<Hp>(e).ok().map(|h| h.0),
            shield: world
                .has::<Shield>(e)
                .then(|| world.is_enabled::<Shield>(e).unwrap()),
            flaky: world.get::<Flaky>(e).ok().map(Flaky::origin),
        })
    }

    /// After a panic in an operation on `e`: the model takes what the world says of `e`.
    fn adopt(&mut self, e: Entity) {
        match self.observe(e) {
            Some(row) => self.model.insert(e, row),
            None => self.model.remove(&e),
        };
    }

    fn check(&mut self) {
        self.world.check_invariants();
        assert_eq!(self.world.len() as usize, self.model.len(), "entity count");
        let keys: Vec<Entity> = self.model.keys().copied().collect();
        for e in keys {
            assert_eq!(self.observe(e).as_ref(), self.model.get(&e), "{e:?}");
        }
        let shielded = self
            .model
            .values()
            .filter(|r| r.shield == Some(true))
            .count();
        let seen = self
            .world
            .query_filtered::<Entity, With<Shield>>()
            .iter()
            .count();
        assert_eq!(seen, shielded, "With<Shield> sees the enabled shields");
    }

    fn run_model(&mut self) {
        for spec in &self.specs {
            for row in self.model.values_mut() {
                match *spec {
                    SystemSpec::Update {
                        filter, mul, add, ..
                    } => {
                        if let (true, Some(hp)) = (filter.passes(row), row.hp) {
                            row.hp = Some(hp.wrapping_mul(mul).wrapping_add(add));
                        }
                    }
                    SystemSpec::Toggle => {
                        if let (Some(_), Some(hp)) = (row.shield, row.hp) {
                            row.shield = Some(hp % 2 == 0);
                        }
                    }
                }
            }
        }
    }

    /// Runs `f`, catching an injected panic (any other panic is a test failure). Returns
    /// whether it panicked.
    fn attempt(&mut self, f: impl FnOnce(&mut Self)) -> bool {
        let result = catch_unwind(AssertUnwindSafe(|| f(self)));
        let fired = take_fired();
        match result {
            Ok(()) => false,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                assert!(fired && message.contains("injected panic"), "{message}");
                true
            }
        }
    }

    fn step(&mut self, op: &Op) {
        match op {
            &Op::Spawn {
                hp,
                shield,
                flaky: with_flaky,
            } => {
                let mut made = None;
                let panicked = self.attempt(|c| {
                    let e = match (shield, with_flaky) {
                        (false, false) => c.world.spawn((Hp(hp),)),
                        (true, false) => c.world.spawn((Hp(hp), Shield)),
                        (false, true) => c.world.spawn((Hp(hp), flaky())),
                        (true, true) => c.world.spawn((Hp(hp), Shield, flaky())),
                    };
                    made = Some(e);
                });
                // A spawn that panicked (a new chunk's `Rows::default`) spawned nothing.
                if let (false, Some(e)) = (panicked, made) {
                    let flaky = self.world.get::<Flaky>(e).ok().map(|f| f.0);
                    self.model.insert(
                        e,
                        ModelRow {
                            hp: Some(hp),
                            shield: shield.then_some(true),
                            flaky,
                        },
                    );
                }
            }
            &Op::Despawn(p) => {
                let Some(e) = self.pick(p) else { return };
                if self.attempt(|c| c.world.despawn(e).unwrap()) {
                    self.adopt(e);
                } else {
                    self.model.remove(&e);
                }
            }
            &Op::InsertShield(p) => {
                let Some(e) = self.pick(p) else { return };
                // A move to a new chunk may panic in `Rows::default`: then nothing moved.
                if !self.attempt(|c| c.world.insert_one(e, Shield).unwrap()) {
                    let row = self.model.get_mut(&e).unwrap();
                    row.shield = Some(row.shield.unwrap_or(true));
                }
            }
            &Op::RemoveShield(p) => {
                let Some(e) = self.pick(p) else { return };
                if self.model[&e].shield.is_none() {
                    return;
                }
                if !self.attempt(|c| {
                    c.world.remove::<(Shield,)>(e).unwrap();
                }) {
                    self.model.get_mut(&e).unwrap().shield = None;
                }
            }
            &Op::Toggle(p, on) => {
                let Some(e) = self.pick(p) else { return };
                if self.model[&e].shield.is_some() {
                    self.world.set_enabled::<Shield>(e, on).unwrap();
                    self.model.get_mut(&e).unwrap().shield = Some(on);
                }
            }
            &Op::InsertFlaky(p) => {
                let Some(e) = self.pick(p) else { return };
                let value = flaky();
                let id = value.0;
                // Overwriting drops the old value (may panic); moving may panic in `Rows`.
                if self.attempt(|c| c.world.insert_one(e, value).unwrap()) {
                    self.adopt(e);
                } else {
                    self.model.get_mut(&e).unwrap().flaky = Some(id);
                }
            }
            &Op::RemoveFlaky(p) => {
                let Some(e) = self.pick(p) else { return };
                if self.model[&e].flaky.is_none() {
                    return;
                }
                if self.attempt(|c| drop(c.world.remove::<(Flaky,)>(e).unwrap())) {
                    self.adopt(e);
                } else {
                    self.model.get_mut(&e).unwrap().flaky = None;
                }
            }
            Op::Compact => {
                self.world.compact();
            }
            Op::Snapshot => {
                // A panicking `Clone` leaves the world as it was and no snapshot.
                let mut snap = None;
                if !self.attempt(|c| snap = Some(c.world.snapshot().unwrap())) {
                    let saved = Some((snap.unwrap(), self.model.clone()));
                    // The old snapshot's values are dropped here (a `Drop` that may panic).
                    let old = std::mem::replace(&mut self.saved, saved);
                    self.attempt(move |_| drop(old));
                }
            }
            Op::Restore => {
                let Some((snap, model)) = self.saved.take() else {
                    return;
                };
                let panicked = self.attempt(|c| c.world.restore(&snap).unwrap());
                if !panicked {
                    self.model = model.clone();
                } else if self.world.is_empty() {
                    // Restore drops the world's non-`Pod` values first; a panicking `Drop`
                    // there leaves it empty (the documented "empty or as it was").
                    self.model.clear();
                }
                self.saved = Some((snap, model));
            }
            Op::Commands(list) => {
                // Recorded against the model as it is, applied to a copy in order: the world
                // must end the same, with one error per command whose entity was gone.
                let mut buffer = CommandBuffer::new();
                let mut touched = BTreeSet::new();
                let mut model = self.model.clone();
                let mut expected_errors = 0;
                for &(kind, p, v) in list {
                    if kind == 0 {
                        let e = buffer.spawn_in(&self.world, (Hp(v),));
                        model.insert(
                            e,
                            ModelRow {
                                hp: Some(v),
                                shield: None,
                                flaky: None,
                            },
                        );
                        touched.insert(e);
                        continue;
                    }
                    let Some(e) = self.pick(p) else { continue };
                    touched.insert(e);
                    if kind == 1 {
                        buffer.despawn(e);
                        expected_errors += usize::from(model.remove(&e).is_none());
                    } else {
                        buffer.insert_one(e, Hp(v));
                        match model.get_mut(&e) {
                            Some(row) => row.hp = Some(v),
                            None => expected_errors += 1,
                        }
                    }
                }
                let mut errors = Vec::new();
                let panicked = self.attempt(|c| errors = buffer.apply(&mut c.world));
                drop(buffer);
                if panicked {
                    // The commands after the panicking one were dropped; ids reserved for
                    // their spawns become empty entities at the next structural change.
                    self.world.flush();
                    for e in touched {
                        self.adopt(e);
                    }
                } else {
                    assert_eq!(errors.len(), expected_errors, "{errors:?}");
                    self.model = model;
                }
            }
            Op::Run => {
                self.schedule.run(&mut self.world).unwrap();
                self.run_model();
                assert_eq!(self.world.resource::<BadChunks>().0, 0, "chunk values");
            }
        }
    }
}

fn run_case(specs: Vec<SystemSpec>, ops: Vec<Op>, fuse: Option<(Site, u32)>) {
    MADE.with(|m| m.borrow_mut().clear());
    DROPPED.with(|d| d.borrow_mut().clear());
    ORIGIN.with(|o| o.borrow_mut().clear());
    take_fired();
    let schedule = build_schedule(&specs);
    let mut world = World::with_test_chunk_size(if cfg!(miri) { 128 } else { 512 });
    world.register_enableable::<Shield>();
    world.register_chunk_component::<Rows>();
    world.register_pod::<Hp>();
    world.register_pod::<Shield>();
    world.register_clone::<Flaky>();
    world.insert_resource(BadChunks::default());
    let mut case = Case {
        world,
        model: BTreeMap::new(),
        saved: None,
        schedule,
        specs,
    };
    FUSE.with(|f| f.set(fuse));
    let mut drop_panicked = false;
    for op in &ops {
        if std::env::var("SEAMS_TRACE").is_ok() {
            eprintln!(
                "op {op:?} fuse {:?} model {:?}",
                FUSE.with(Cell::get),
                case.model
            );
        }
        case.step(op);
        if FUSE.with(Cell::get).is_none() && fuse.is_some_and(|(s, _)| s == Site::FlakyDrop) {
            drop_panicked = true;
        }
        case.check();
    }
    FUSE.with(|f| f.set(None));
    drop(case);
    let made = MADE.with(|m| m.borrow().clone());
    let dropped = DROPPED.with(|d| d.borrow().clone());
    let unique: BTreeSet<u32> = dropped.iter().copied().collect();
    assert_eq!(unique.len(), dropped.len(), "a Flaky was dropped twice");
    if !drop_panicked {
        assert_eq!(made.len(), dropped.len(), "Flaky values leaked");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 2 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn features_together_agree_with_the_model_under_panics(
        specs in prop::collection::vec(system_spec(), 1..6),
        ops in prop::collection::vec(op(), 1..if cfg!(miri) { 8 } else { 80 }),
        fuse in site(),
    ) {
        run_case(specs, ops, fuse);
    }
}

/// One fixed case crossing every seam, also run under Miri in CI.
#[test]
fn a_fixed_case_crosses_every_seam() {
    let specs = vec![
        SystemSpec::Update {
            filter: Filter::WithShield,
            mul: 3,
            add: 1,
            parallel: true,
        },
        SystemSpec::Update {
            filter: Filter::WithoutShield,
            mul: 2,
            add: 5,
            parallel: false,
        },
        SystemSpec::Toggle,
        SystemSpec::Update {
            filter: Filter::WithFlaky,
            mul: 1,
            add: 7,
            parallel: true,
        },
    ];
    // Under Miri: fewer rows (still two chunks of some archetypes) and two of the four runs.
    let rows = if cfg!(miri) { 12u32 } else { 40 };
    let mut ops: Vec<Op> = (0..rows)
        .map(|i| Op::Spawn {
            hp: i,
            shield: i % 2 == 0,
            flaky: i % 3 == 0,
        })
        .collect();
    ops.extend([
        Op::Run,
        Op::Toggle(3, false),
        Op::Snapshot,
        Op::Despawn(5),
        Op::InsertFlaky(7),
        Op::Run,
        Op::Compact,
        Op::Commands(vec![(0, 0, 9), (1, 2, 0), (2, 2, 4)]),
        Op::Restore,
        Op::Run,
        Op::RemoveShield(0),
        Op::Run,
    ]);
    run_case(specs.clone(), ops.clone(), Some((Site::RowsDefault, 1)));
    run_case(specs.clone(), ops.clone(), Some((Site::FlakyDrop, 2)));
    if !cfg!(miri) {
        run_case(specs.clone(), ops.clone(), None);
        run_case(specs, ops, Some((Site::FlakyClone, 5)));
    }
}
