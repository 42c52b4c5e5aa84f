//! The reference model: live entities and, per entity, the summary of each component it has;
//! the pool of handles a test picks from; and the comparison of a `World` with the model.
//!
//! Invariants the model keeps (asserting them as it goes): a handle is issued at most once
//! (`issued`), every live entity was issued, and `pool` holds every handle issued plus the
//! never-issued handles it started with, so stale handles stay in play for the whole case.

use std::collections::{BTreeMap, BTreeSet};

use ecs_core::{ComponentError, Entity, World};

use crate::kinds::{with_kind, Kind, KindFn, NameOf, KINDS, TRACKED};
use crate::ledger::ledger;

/// One entity of the model: the summary of each kind it has, by kind index.
pub type Row = [Option<u64>; KINDS];

/// How a test chooses an entity handle.
#[derive(Clone, Copy, Debug)]
pub enum Pick {
    /// The `n`-th live entity (modulo); if none is live, as [`Pick::Any`].
    Live(usize),
    /// The `n`-th handle of the pool (modulo): often stale, sometimes never issued.
    Any(usize),
    /// A pooled handle with its generation bumped by 1 to 3 (three `n` in four), or an index
    /// the world has not reached: never issued, unless the world issues it later (which the
    /// model then knows).
    Forged(usize),
}

/// The `who`-th (modulo) of the `alive` entities, or `None` if there are none: how the
/// simpler model tests, which keep only live handles, pick an operation's entity.
pub fn nth_alive(alive: &[Entity], who: usize) -> Option<Entity> {
    (!alive.is_empty()).then(|| alive[who % alive.len()])
}

/// Which summary of a value the model stores (see [`Kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summary {
    /// [`Kind::encode`]: tells apart two `Tracked` values made from one seed.
    Encode,
    /// [`Kind::read`]: what the seed predicts, for models that never see the values made.
    Read,
}

impl Summary {
    /// The summary of `value`.
    pub fn of<K: Kind>(self, value: &K) -> u64 {
        match self {
            Self::Encode => value.encode(),
            Self::Read => value.read(),
        }
    }
}

/// The reference model of a `World`: entities to rows, and every handle seen.
#[derive(Debug)]
pub struct Model {
    /// The live entities and their rows.
    pub rows: BTreeMap<Entity, Row>,
    /// Every handle seen so far, live or stale, after the never-issued ones it started with.
    pub pool: Vec<Entity>,
    /// Every handle the world has handed out.
    pub issued: BTreeSet<Entity>,
    /// Which summary the rows hold.
    pub summary: Summary,
}

impl Model {
    /// An empty model whose pool starts with `never_issued`, handles the world has not issued.
    pub fn new(summary: Summary, never_issued: Vec<Entity>) -> Self {
        Self {
            rows: BTreeMap::new(),
            pool: never_issued,
            issued: BTreeSet::new(),
            summary,
        }
    }

    /// Records a handle the world just handed out (spawned or reserved).
    ///
    /// # Panics
    /// If the world handed it out before.
    pub fn issue(&mut self, entity: Entity) {
        assert!(
            self.issued.insert(entity),
            "{entity:?} handed out a second time"
        );
        self.pool.push(entity);
    }

    /// Records an entity the world just created with `row`.
    ///
    /// # Panics
    /// If the handle was issued before or the entity is already live.
    pub fn born(&mut self, entity: Entity, row: Row) {
        self.issue(entity);
        self.live(entity, row);
    }

    /// Records that an issued handle (a flushed reservation) is now live with `row`.
    ///
    /// # Panics
    /// If it is live already.
    pub fn live(&mut self, entity: Entity, row: Row) {
        assert!(
            self.rows.insert(entity, row).is_none(),
            "{entity:?} already live"
        );
    }

    /// The row of `kinds` set to `values`, others absent.
    pub fn row_of(kinds: &[usize], values: &[u64]) -> Row {
        let mut row = Row::default();
        for (&k, &v) in kinds.iter().zip(values) {
            row[k] = Some(v);
        }
        row
    }

    /// The handle `pick` stands for now.
    pub fn pick(&self, pick: Pick) -> Entity {
        let forged = |n: usize| {
            let index = 1_000_000 + (n % 1000) as u64;
            Entity::from_bits(1 << 32 | index).expect("non-zero generation")
        };
        match pick {
            Pick::Live(n) if !self.rows.is_empty() => {
                *self.rows.keys().nth(n % self.rows.len()).expect("in range")
            }
            Pick::Live(n) | Pick::Any(n) if !self.pool.is_empty() => self.pool[n % self.pool.len()],
            Pick::Forged(n) if !self.pool.is_empty() && n % 4 != 0 => {
                let e = self.pool[n % self.pool.len()];
                let bump = 1 + (n % 3) as u64;
                Entity::from_bits(e.to_bits() + (bump << 32)).expect("non-zero generation")
            }
            Pick::Live(n) | Pick::Any(n) | Pick::Forged(n) => forged(n),
        }
    }

    /// What `get` of kind `kind` on `entity` must return, summarised.
    pub fn expect_get(&self, entity: Entity, kind: usize) -> Result<u64, ComponentError> {
        let row = self
            .rows
            .get(&entity)
            .ok_or(ComponentError::NoSuchEntity(entity))?;
        row[kind].ok_or(ComponentError::MissingComponent {
            entity,
            component: with_kind(kind, NameOf),
        })
    }

    /// What `remove` of the tuple of `kinds` from `entity` must return: the summaries, or the
    /// error naming the entity, or the first element of the tuple it lacks. Changes nothing.
    pub fn expect_remove(
        &self,
        entity: Entity,
        kinds: &[usize],
    ) -> Result<Vec<u64>, ComponentError> {
        let row = self
            .rows
            .get(&entity)
            .ok_or(ComponentError::NoSuchEntity(entity))?;
        kinds
            .iter()
            .map(|&k| self.expect_get(entity, k).map(|_| row[k].expect("present")))
            .collect()
    }

    /// Compares the world's whole observable state with the model: the world's own
    /// invariants, its entity count, and for every pooled handle `contains` and, for each of
    /// `kinds`, `get` and `has`; then the drop ledger must hold exactly the model's
    /// `Tracked` values.
    pub fn check_world(&self, world: &World, kinds: &[usize]) {
        world.check_invariants();
        assert_eq!(world.len() as usize, self.rows.len(), "entity count");
        assert_eq!(world.is_empty(), self.rows.is_empty());
        for &e in &self.pool {
            let live = self.rows.contains_key(&e);
            assert_eq!(
                world.contains(e),
                live,
                "{e:?} live in the world vs the model"
            );
            for &kind in kinds {
                self.check_cell(world, e, kind);
            }
        }
        let tracked = self.rows.values().filter(|r| r[TRACKED].is_some()).count();
        ledger(|l| l.assert_live(tracked));
    }

    /// Checks `get` and `has` of one kind of one entity against the model.
    pub fn check_cell(&self, world: &World, entity: Entity, kind: usize) {
        let (got, has) = with_kind(kind, Probe(world, entity, self.summary));
        let expected = self.expect_get(entity, kind);
        assert_eq!(got, expected, "get kind {kind} of {entity:?}");
        assert_eq!(has, expected.is_ok(), "has kind {kind} of {entity:?}");
    }
}

/// `get` (summarised) and `has` of one kind.
struct Probe<'a>(&'a World, Entity, Summary);
impl KindFn for Probe<'_> {
    type Out = (Result<u64, ComponentError>, bool);
    fn call<K: Kind>(self) -> Self::Out {
        let Self(world, e, summary) = self;
        (world.get::<K>(e).map(|v| summary.of(v)), world.has::<K>(e))
    }
}
