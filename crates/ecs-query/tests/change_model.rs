//! Model test for change detection: random writes, spawns, moves and despawns, and two
//! `Changed<Hp>` readers and one `Added<Hp>` reader that run at random through `iter`,
//! `for_each` and `count`. The model records, per reader, which entities were written (or
//! gained `Hp`) since that reader's last run; the engine must agree on every step, row for row.
//!
//! Cases: 128, or a few small worlds under Miri; `PROPTEST_CASES` overrides both.

use std::collections::{BTreeSet, HashMap};

use ecs_core::{Entity, World};
use ecs_query::{Added, Changed, QueryState, RefRW};
use ecs_test_support::{nth_alive, strategy};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Hp(u32);

#[derive(Debug, Clone, Copy, PartialEq)]
struct Tag;

#[derive(Clone, Debug)]
enum Op {
    Spawn {
        tag: bool,
    },
    SpawnBatch {
        n: usize,
    },
    /// An entity without `Hp` that then gains it.
    SpawnThenInsert,
    Despawn {
        who: usize,
    },
    GetMut {
        who: usize,
    },
    SetIfNeq {
        who: usize,
        val: u32,
    },
    /// `insert_one` of an `Hp` the entity has: a write.
    Overwrite {
        who: usize,
    },
    /// Adds or removes `Tag`: a move to another archetype, not a write of `Hp`.
    ToggleTag {
        who: usize,
    },
    /// An `iter_mut` over `Hp` that stops after `k` rows: those rows are written.
    IterMut {
        k: usize,
    },
    ForEachAll,
    Run {
        reader: usize,
        how: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<bool>().prop_map(|tag| Op::Spawn { tag }),
        1 => (1..12usize).prop_map(|n| Op::SpawnBatch { n }),
        1 => Just(Op::SpawnThenInsert),
        2 => any::<usize>().prop_map(|who| Op::Despawn { who }),
        3 => any::<usize>().prop_map(|who| Op::GetMut { who }),
        2 => (any::<usize>(), 0..3u32).prop_map(|(who, val)| Op::SetIfNeq { who, val }),
        1 => any::<usize>().prop_map(|who| Op::Overwrite { who }),
        2 => any::<usize>().prop_map(|who| Op::ToggleTag { who }),
        1 => (0..20usize).prop_map(|k| Op::IterMut { k }),
        1 => Just(Op::ForEachAll),
        4 => (0..3usize, 0..3u8).prop_map(|(reader, how)| Op::Run { reader, how }),
    ]
}

/// Per reader: `None` until its first run (which passes every row), then the entities it
/// must pass next.
struct Model {
    hp: HashMap<Entity, u32>,
    alive: Vec<Entity>,
    pending: [Option<BTreeSet<Entity>>; 3],
}

impl Model {
    fn pick(&self, who: usize) -> Option<Entity> {
        nth_alive(&self.alive, who)
    }

    /// `e` was written: every `Changed` reader (0 and 1) must see it.
    fn written(&mut self, e: Entity) {
        for p in self.pending[..2].iter_mut().flatten() {
            p.insert(e);
        }
    }

    /// `e` gained `Hp`: a change and an add.
    fn added(&mut self, e: Entity, v: u32) {
        self.hp.insert(e, v);
        self.written(e);
        if let Some(p) = &mut self.pending[2] {
            p.insert(e);
        }
    }
}

struct Readers {
    changed: [QueryState<Entity, Changed<Hp>>; 2],
    added: QueryState<Entity, Added<Hp>>,
}

fn apply(world: &mut World, model: &mut Model, readers: &mut Readers, op: &Op) {
    match *op {
        Op::Spawn { tag } => {
            let e = if tag {
                world.spawn((Hp(0), Tag))
            } else {
                world.spawn((Hp(0),))
            };
            model.alive.push(e);
            model.added(e, 0);
        }
        Op::SpawnBatch { n } => {
            let ids: Vec<Entity> = world.spawn_batch((0..n).map(|_| (Hp(0),))).collect();
            for e in ids {
                model.alive.push(e);
                model.added(e, 0);
            }
        }
        Op::SpawnThenInsert => {
            let e = world.spawn((Tag,));
            world.insert_one(e, Hp(1)).unwrap();
            model.alive.push(e);
            model.added(e, 1);
        }
        Op::Despawn { who } => {
            let Some(e) = model.pick(who) else { return };
            world.despawn(e).unwrap();
            model.alive.retain(|&x| x != e);
            model.hp.remove(&e);
            for p in model.pending.iter_mut().flatten() {
                p.remove(&e);
            }
        }
        Op::GetMut { who } => {
            let Some(e) = model.pick(who) else { return };
            world.get_mut::<Hp>(e).unwrap().0 += 0;
            model.written(e);
        }
        Op::SetIfNeq { who, val } => {
            let Some(e) = model.pick(who) else { return };
            let wrote = world.set_if_neq(e, Hp(val)).unwrap();
            assert_eq!(wrote, model.hp[&e] != val);
            if wrote {
                model.hp.insert(e, val);
                model.written(e);
            }
        }
        Op::Overwrite { who } => {
            let Some(e) = model.pick(who) else { return };
            let v = model.hp[&e];
            world.insert_one(e, Hp(v)).unwrap();
            model.written(e);
        }
        Op::ToggleTag { who } => {
            let Some(e) = model.pick(who) else { return };
            if world.has::<Tag>(e) {
                world.remove_one::<Tag>(e).unwrap();
            } else {
                world.insert_one(e, Tag).unwrap();
            }
        }
        Op::IterMut { k } => {
            let mut state = QueryState::<(Entity, RefRW<Hp>)>::new(world);
            let got: Vec<Entity> = state.iter_mut(world).take(k).map(|(e, _)| e).collect();
            for e in got {
                model.written(e);
            }
        }
        Op::ForEachAll => {
            QueryState::<RefRW<Hp>>::new(world).for_each(world, |_| {});
            for e in model.alive.clone() {
                model.written(e);
            }
        }
        Op::Run { reader, how } => {
            let got: BTreeSet<Entity> = match (reader, how) {
                (_, 2) => {
                    // `count` is not a run: it must agree without closing the window.
                    let n = match reader {
                        2 => readers.added.count(world),
                        r => readers.changed[r].count(world),
                    };
                    let want = model.pending[reader]
                        .as_ref()
                        .map_or(model.alive.len(), BTreeSet::len);
                    assert_eq!(n, want, "count of reader {reader}");
                    return;
                }
                (2, 0) => readers.added.iter(world).collect(),
                (2, _) => {
                    let mut v = BTreeSet::new();
                    readers.added.for_each(world, |e| {
                        v.insert(e);
                    });
                    v
                }
                (r, 0) => readers.changed[r].iter(world).collect(),
                (r, _) => {
                    let mut v = BTreeSet::new();
                    readers.changed[r].for_each(world, |e| {
                        v.insert(e);
                    });
                    v
                }
            };
            let want = model.pending[reader]
                .replace(BTreeSet::new())
                .unwrap_or_else(|| model.alive.iter().copied().collect());
            assert_eq!(got, want, "reader {reader}");
        }
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..strategy::config(128, 2)
    }
}

const MAX_OPS: usize = if cfg!(miri) { 20 } else { 200 };

proptest! {
    #![proptest_config(config())]

    #[test]
    fn change_filters_agree_with_the_model(ops in prop::collection::vec(op(), 0..MAX_OPS)) {
        let mut world = World::with_test_chunk_size(512);
        let mut readers = Readers {
            changed: [QueryState::new(&mut world), QueryState::new(&mut world)],
            added: QueryState::new(&mut world),
        };
        let mut model = Model { hp: HashMap::new(), alive: Vec::new(), pending: [None, None, None] };
        for op in &ops {
            apply(&mut world, &mut model, &mut readers, op);
        }
        for reader in 0..3 {
            apply(&mut world, &mut model, &mut readers, &Op::Run { reader, how: 0 });
        }
        world.check_invariants();
    }
}
