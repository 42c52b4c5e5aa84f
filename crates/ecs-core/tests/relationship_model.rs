//! Model-based property test of relationships: a random sequence of spawns, parent changes
//! (through `set_parent` and raw `ChildOf` inserts, cycles and dead parents included), parent
//! removals, many-to-many target changes and despawns runs on a world and on a naive model
//! (parent map, ordered child lists, target lists). After every step both sides of every
//! relationship must agree with the model, despawn policies applied: a despawn takes the whole
//! subtree (`DespawnSources`) and drops the dead from every target list
//! (`RemoveRelationship`).

use std::collections::{BTreeMap, BTreeSet};

use ecs_core::{ChildOf, DespawnPolicy, Entity, Relationship, RelationshipTarget, World};
use proptest::prelude::*;

#[derive(Clone, Debug, PartialEq)]
struct Targets(Vec<Entity>);
#[derive(Clone, Debug, PartialEq)]
struct TargetedBy(Vec<Entity>);

impl Relationship for Targets {
    type Target = TargetedBy;
    fn targets(&self) -> &[Entity] {
        &self.0
    }
    fn from_target(target: Entity) -> Self {
        Self(vec![target])
    }
    fn targets_mut(&mut self) -> Option<&mut Vec<Entity>> {
        Some(&mut self.0)
    }
}

impl RelationshipTarget for TargetedBy {
    type Relationship = Targets;
    const ON_DESPAWN: DespawnPolicy = DespawnPolicy::RemoveRelationship;
    fn from_sources(sources: Vec<Entity>) -> Self {
        Self(sources)
    }
    fn sources(&self) -> &[Entity] {
        &self.0
    }
    fn sources_mut(&mut self) -> &mut Vec<Entity> {
        &mut self.0
    }
}

#[derive(Clone, Debug)]
enum Op {
    Spawn,
    SpawnChild(usize),
    SetParent(usize, usize),
    InsertChildOf(usize, usize),
    RemoveParent(usize),
    SetTargets(usize, Vec<usize>),
    RemoveTargets(usize),
    Despawn(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let i = 0..64usize;
    prop_oneof![
        2 => Just(Op::Spawn),
        3 => i.clone().prop_map(Op::SpawnChild),
        2 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::SetParent(a, b)),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::InsertChildOf(a, b)),
        1 => i.clone().prop_map(Op::RemoveParent),
        2 => (i.clone(), prop::collection::btree_set(i.clone(), 1..4))
            .prop_map(|(a, ts)| Op::SetTargets(a, ts.into_iter().collect())),
        1 => i.clone().prop_map(Op::RemoveTargets),
        2 => i.prop_map(Op::Despawn),
    ]
}

#[derive(Default)]
struct Model {
    /// Every entity ever spawned, alive or not, in spawn order (ops pick by index).
    spawned: Vec<Entity>,
    alive: BTreeSet<Entity>,
    parent: BTreeMap<Entity, Entity>,
    children: BTreeMap<Entity, Vec<Entity>>,
    targets: BTreeMap<Entity, Vec<Entity>>,
}

impl Model {
    fn pick(&self, i: usize) -> Option<Entity> {
        (!self.spawned.is_empty()).then(|| self.spawned[i % self.spawned.len()])
    }

    fn set_parent(&mut self, child: Entity, parent: Entity) {
        self.remove_parent(child);
        if parent == child || !self.alive.contains(&parent) {
            return; // a relationship to itself or the dead is dropped
        }
        self.parent.insert(child, parent);
        self.children.entry(parent).or_default().push(child);
    }

    fn remove_parent(&mut self, child: Entity) {
        if let Some(old) = self.parent.remove(&child) {
            let list = self.children.get_mut(&old).unwrap();
            list.retain(|&c| c != child);
            if list.is_empty() {
                self.children.remove(&old);
            }
        }
    }

    fn is_ancestor(&self, a: Entity, mut of: Entity) -> bool {
        for _ in 0..=self.alive.len() {
            match self.parent.get(&of) {
                Some(&p) if p == a => return true,
                Some(&p) => of = p,
                None => return false,
            }
        }
        false
    }

    fn despawn(&mut self, root: Entity) {
        let mut doomed = vec![root];
        let mut seen = BTreeSet::from([root]);
        while let Some(e) = doomed.pop() {
            for &c in self.children.get(&e).into_iter().flatten() {
                if seen.insert(c) {
                    doomed.push(c);
                }
            }
        }
        for &e in &seen {
            self.alive.remove(&e);
            self.children.remove(&e);
            self.targets.remove(&e);
        }
        for &e in &seen {
            if let Some(p) = self.parent.remove(&e) {
                if let Some(list) = self.children.get_mut(&p) {
                    list.retain(|&c| c != e);
                    if list.is_empty() {
                        self.children.remove(&p);
                    }
                }
            }
        }
        self.targets.retain(|_, ts| {
            ts.retain(|t| !seen.contains(t));
            !ts.is_empty()
        });
    }

    fn check(&self, world: &World) {
        world.check_invariants();
        assert_eq!(world.len() as usize, self.alive.len());
        for &e in &self.spawned {
            assert_eq!(world.contains(e), self.alive.contains(&e), "{e:?} alive?");
            if !self.alive.contains(&e) {
                continue;
            }
            assert_eq!(
                world.parent(e),
                self.parent.get(&e).copied(),
                "parent of {e:?}"
            );
            let kids = self.children.get(&e).map_or(&[][..], Vec::as_slice);
            assert_eq!(world.children(e), kids, "children of {e:?}");
            // An emptied list is removed, not left behind.
            assert_eq!(world.has::<ecs_core::Children>(e), !kids.is_empty());
            let ts = self.targets.get(&e).map_or(&[][..], Vec::as_slice);
            assert_eq!(
                world.relationship_targets::<Targets>(e),
                ts,
                "targets of {e:?}"
            );
            let by: BTreeSet<Entity> = self
                .targets
                .iter()
                .filter(|(_, ts)| ts.contains(&e))
                .map(|(&s, _)| s)
                .collect();
            let seen: BTreeSet<Entity> = world
                .relationship_sources::<TargetedBy>(e)
                .iter()
                .copied()
                .collect();
            assert_eq!(seen, by, "sources targeting {e:?}");
            assert_eq!(world.has::<TargetedBy>(e), !by.is_empty());
            assert_eq!(world.has::<Targets>(e), !ts.is_empty());
        }
    }
}

fn run(ops: &[Op]) {
    let mut world = World::with_test_chunk_size(256);
    world.register_relationship::<Targets>().unwrap();
    let mut model = Model::default();
    for op in ops {
        match *op {
            Op::Spawn => {
                let e = world.spawn((0u16,));
                model.spawned.push(e);
                model.alive.insert(e);
            }
            Op::SpawnChild(p) => {
                let Some(p) = model.pick(p) else { continue };
                let e = world.spawn((ChildOf(p), 1u16));
                model.spawned.push(e);
                model.alive.insert(e);
                model.set_parent(e, p);
            }
            Op::SetParent(c, p) => {
                let (Some(c), Some(p)) = (model.pick(c), model.pick(p)) else {
                    continue;
                };
                let result = world.set_parent(c, p);
                let ok = model.alive.contains(&c)
                    && model.alive.contains(&p)
                    && c != p
                    && !model.is_ancestor(c, p);
                assert_eq!(result.is_ok(), ok, "set_parent({c:?}, {p:?}): {result:?}");
                if ok {
                    model.set_parent(c, p);
                }
            }
            Op::InsertChildOf(c, p) => {
                let (Some(c), Some(p)) = (model.pick(c), model.pick(p)) else {
                    continue;
                };
                let ok = world.insert(c, (ChildOf(p),)).is_ok();
                assert_eq!(ok, model.alive.contains(&c));
                if ok {
                    model.set_parent(c, p);
                }
            }
            Op::RemoveParent(c) => {
                let Some(c) = model.pick(c) else { continue };
                assert_eq!(world.remove_parent(c).is_ok(), model.alive.contains(&c));
                model.remove_parent(c);
            }
            Op::SetTargets(s, ref ts) => {
                let Some(s) = model.pick(s) else { continue };
                let ts: Vec<Entity> = ts.iter().filter_map(|&t| model.pick(t)).collect();
                let mut distinct = Vec::new();
                for t in ts {
                    if !distinct.contains(&t) {
                        distinct.push(t);
                    }
                }
                let ok = world.insert(s, (Targets(distinct.clone()),)).is_ok();
                assert_eq!(ok, model.alive.contains(&s));
                if ok {
                    let kept: Vec<Entity> = distinct
                        .into_iter()
                        .filter(|t| *t != s && model.alive.contains(t))
                        .collect();
                    if kept.is_empty() {
                        model.targets.remove(&s);
                    } else {
                        model.targets.insert(s, kept);
                    }
                }
            }
            Op::RemoveTargets(s) => {
                let Some(s) = model.pick(s) else { continue };
                let had = model.targets.remove(&s).is_some();
                assert_eq!(world.remove::<(Targets,)>(s).is_ok(), had);
            }
            Op::Despawn(e) => {
                let Some(e) = model.pick(e) else { continue };
                assert_eq!(world.despawn(e).is_ok(), model.alive.contains(&e));
                if model.alive.contains(&e) {
                    model.despawn(e);
                }
            }
        }
        model.check(&world);
    }
}

proptest! {
    #![proptest_config(ecs_test_support::strategy::config(128, 2))]

    #[test]
    fn relationships_agree_with_the_model(
        ops in prop::collection::vec(op(), 1..if cfg!(miri) { 24 } else { 120 })
    ) {
        run(&ops);
    }
}
