//! Model test: random worlds, and a fixed family of query shapes run through every iteration
//! path (`iter`, `for_each`, `for_each_chunk`, `par_for_each`, `get`), each checked against a
//! naive `HashMap<Entity, Row>` model of the world.
//!
//! Query types are static, so the family is fixed (required, excluded, optional, `Or`, nested
//! tuples, a separate filter parameter, bare non-tuple queries); proptest randomises the world
//! (spawns of random component subsets, batch spawns, inserts, removes, despawns) and which query
//! runs, how, and whether through a cached `QueryState` or a one-shot `world.query()`.
//!
//! Cases: 256, or a few small worlds under Miri; `PROPTEST_CASES` overrides both (under Miri,
//! forward it with `-Zmiri-env-forward=PROPTEST_CASES`).

use std::any::Any;
use std::collections::HashMap;
use std::sync::Mutex;

use ecs_core::{Entity, World};
use ecs_query::{
    ChunkView, Or, QueryError, QueryExt, QueryFilter, QueryState, RefRO, RefRW, With, Without,
    WorldQuery,
};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

mod support;

// ----- components ---------------------------------------------------------------------------

/// Number of component types.
const TYPES: usize = 9;

/// The model of one entity: per component type, its value (widened to `u64`) if present.
type Row = [Option<u64>; TYPES];

/// A component of the model test: index `IDX` in a [`Row`], built from and read as a `u64`.
trait Comp: Send + Sync + 'static + Sized {
    const IDX: usize;
    fn new(v: u64) -> Self;
    fn val(&self) -> u64;
}

#[derive(Debug)]
struct A(u32);
#[derive(Debug)]
struct B(u64);
#[derive(Debug)]
struct C(u16);
#[derive(Debug)]
struct D(u8);
#[derive(Debug)]
struct E(i32);
/// Zero-sized: its column takes no bytes.
#[derive(Debug)]
struct F;
/// Over-aligned: forces a 64-byte column alignment (and a 64-byte element).
#[derive(Debug)]
#[repr(align(64))]
struct G(u32);
#[derive(Debug)]
struct H(u64);
/// Owns heap memory, so moves, overwrites and despawns must drop it exactly once.
#[derive(Debug)]
struct I(Box<u64>);

impl Comp for A {
    const IDX: usize = 0;
    fn new(v: u64) -> Self {
        Self(v as u32)
    }
    fn val(&self) -> u64 {
        self.0.into()
    }
}
impl Comp for B {
    const IDX: usize = 1;
    fn new(v: u64) -> Self {
        Self(v)
    }
    fn val(&self) -> u64 {
        self.0
    }
}
impl Comp for C {
    const IDX: usize = 2;
    fn new(v: u64) -> Self {
        Self(v as u16)
    }
    fn val(&self) -> u64 {
        self.0.into()
    }
}
impl Comp for D {
    const IDX: usize = 3;
    fn new(v: u64) -> Self {
        Self(v as u8)
    }
    fn val(&self) -> u64 {
        self.0.into()
    }
}
impl Comp for E {
    const IDX: usize = 4;
    fn new(v: u64) -> Self {
        Self(v as u32 as i32)
    }
    fn val(&self) -> u64 {
        (self.0 as u32).into()
    }
}
impl Comp for F {
    const IDX: usize = 5;
    fn new(_: u64) -> Self {
        Self
    }
    fn val(&self) -> u64 {
        0
    }
}
impl Comp for G {
    const IDX: usize = 6;
    fn new(v: u64) -> Self {
        Self(v as u32)
    }
    fn val(&self) -> u64 {
        self.0.into()
    }
}
impl Comp for H {
    const IDX: usize = 7;
    fn new(v: u64) -> Self {
        Self(v)
    }
    fn val(&self) -> u64 {
        self.0
    }
}
impl Comp for I {
    const IDX: usize = 8;
    fn new(v: u64) -> Self {
        Self(Box::new(v))
    }
    fn val(&self) -> u64 {
        *self.0
    }
}

/// Something to do with the component type of a runtime index.
trait TypeVisitor {
    type Out;
    fn visit<T: Comp>(self) -> Self::Out;
}

/// Runs `v` with the component type of index `ty`.
fn with_type<V: TypeVisitor>(ty: usize, v: V) -> V::Out {
    match ty {
        0 => v.visit::<A>(),
        1 => v.visit::<B>(),
        2 => v.visit::<C>(),
        3 => v.visit::<D>(),
        4 => v.visit::<E>(),
        5 => v.visit::<F>(),
        6 => v.visit::<G>(),
        7 => v.visit::<H>(),
        8 => v.visit::<I>(),
        _ => unreachable!("no component type {ty}"),
    }
}

/// Inserts (or overwrites) component `ty` built from `val`; returns the value as stored.
struct Put<'a> {
    world: &'a mut World,
    entity: Entity,
    val: u64,
}
impl TypeVisitor for Put<'_> {
    type Out = u64;
    fn visit<T: Comp>(self) -> u64 {
        self.world
            .insert_one(self.entity, T::new(self.val))
            .unwrap();
        T::new(self.val).val()
    }
}

/// Removes component `ty`, handing back its value if the entity had it.
struct Take<'a> {
    world: &'a mut World,
    entity: Entity,
}
impl TypeVisitor for Take<'_> {
    type Out = Option<u64>;
    fn visit<T: Comp>(self) -> Option<u64> {
        let had = self.world.has::<T>(self.entity);
        let got = self.world.remove::<(T,)>(self.entity).ok();
        assert_eq!(got.is_some(), had, "remove and has disagree");
        got.map(|(t,)| t.val())
    }
}

/// Reads component `ty` through `World::get`.
struct Look<'a> {
    world: &'a World,
    entity: Entity,
}
impl TypeVisitor for Look<'_> {
    type Out = Option<u64>;
    fn visit<T: Comp>(self) -> Option<u64> {
        let got = self.world.get::<T>(self.entity).ok().map(T::val);
        assert_eq!(got.is_some(), self.world.has::<T>(self.entity));
        got
    }
}

// ----- the model ----------------------------------------------------------------------------

#[derive(Default)]
struct Model {
    rows: HashMap<Entity, Row>,
    /// Live entities, for picking one by index.
    alive: Vec<Entity>,
    /// Despawned handles, which must never resolve again.
    dead: Vec<Entity>,
}

impl Model {
    fn add(&mut self, e: Entity, row: Row) {
        assert!(self.rows.insert(e, row).is_none(), "{e:?} handed out twice");
        self.alive.push(e);
    }

    fn pick(&self, who: usize) -> Option<Entity> {
        (!self.alive.is_empty()).then(|| self.alive[who % self.alive.len()])
    }
}

/// The whole world agrees with the model, through `World::get` / `has` / `contains`.
fn check_world(world: &World, model: &Model) {
    world.check_invariants();
    assert_eq!(world.len() as usize, model.rows.len());
    for &entity in model.rows.keys() {
        check_entity(world, model, entity);
    }
    for &e in &model.dead {
        assert!(!world.contains(e), "{e:?} was despawned");
    }
}

/// One live entity agrees with the model.
fn check_entity(world: &World, model: &Model, entity: Entity) {
    assert!(world.contains(entity));
    for (ty, want) in model.rows[&entity].iter().enumerate() {
        let got = with_type(ty, Look { world, entity });
        assert_eq!(got, *want, "{entity:?}, component {ty}");
    }
}

/// Value of component `ty` for the entity spawned with `seed`.
fn value(seed: u64, ty: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(7 * ty as u32 + 1)
}

/// Bumps a component by `by` (wrapping in its own width).
fn bump<T: Comp>(t: &mut T, by: u64) {
    *t = T::new(t.val().wrapping_add(by));
}

/// Bumps the model's `T`, if present, as [`bump`] bumps the component.
fn bump_model<T: Comp>(row: &mut Row, by: u64) {
    if let Some(x) = &mut row[T::IDX] {
        *x = T::new(x.wrapping_add(by)).val();
    }
}

/// How much a writing query adds for entity `e`.
fn by(e: Entity) -> u64 {
    u64::from(e.index()) + 1
}

fn has<T: Comp>(row: &Row) -> bool {
    row[T::IDX].is_some()
}

fn v<T: Comp>(t: &T) -> Option<u64> {
    Some(t.val())
}

// ----- the query family ---------------------------------------------------------------------

/// What a query reports per entity: its id (if the query yields one) and the values it read.
type Obs = (Option<Entity>, Vec<Option<u64>>);

/// One query shape and what the model says it does.
trait Case: 'static {
    type Q: WorldQuery + 'static;
    type F: QueryFilter + 'static;
    /// Whether an entity with this row matches.
    fn matches(row: &Row) -> bool;
    /// What the query should observe for `e`, before its own writes.
    fn expect(e: Entity, row: &Row) -> Obs;
    /// The query's writes, applied to the model.
    fn write(_e: Entity, _row: &mut Row) {}
    /// Observes one item, then writes through it.
    fn item(item: <Self::Q as WorldQuery>::Item<'_>) -> Obs;
    /// Observes and writes one chunk through its slices, row by row, after checking that every
    /// slice has the view's length and lines up with `entities()`.
    fn chunk(view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>);
}

/// Checks a chunk view's entity column against its length and the query's own entity slice.
fn check_entities(view: &ChunkView<'_, impl WorldQuery>, es: Option<&[Entity]>) -> Vec<Entity> {
    let ents = view.entities();
    assert_eq!(ents.len(), view.len());
    assert!(!view.is_empty(), "a query handed out an empty chunk");
    if let Some(es) = es {
        assert_eq!(es, ents, "entity slice and entities() disagree");
    }
    ents.to_vec()
}

/// `(Entity, RefRO<A>)`: one required read.
struct Q0;
impl Case for Q0 {
    type Q = (Entity, RefRO<A>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<A>(r)
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[A::IDX]])
    }
    fn item((e, a): (Entity, &A)) -> Obs {
        (Some(e), vec![v(a)])
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, a) = view.columns();
        assert_eq!((es.len(), a.len()), (n, n));
        assert_eq!(es, &ents[..]);
        out.extend((0..n).map(|i| (Some(es[i]), vec![v(&a[i])])));
    }
}

/// `(Entity, RefRW<B>, RefRO<A>)`: a write and a read, both required.
struct Q1;
impl Case for Q1 {
    type Q = (Entity, RefRW<B>, RefRO<A>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<B>(r) && has::<A>(r)
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[B::IDX], r[A::IDX]])
    }
    fn write(e: Entity, r: &mut Row) {
        bump_model::<B>(r, by(e));
    }
    fn item((e, b, a): (Entity, &mut B, &A)) -> Obs {
        let obs = (Some(e), vec![v(b), v(a)]);
        bump(b, by(e));
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, b, a) = view.columns();
        assert_eq!((es.len(), b.len(), a.len()), (n, n, n));
        assert_eq!(es, &ents[..]);
        for i in 0..n {
            out.push((Some(es[i]), vec![v(&b[i]), v(&a[i])]));
            bump(&mut b[i], by(es[i]));
        }
    }
}

/// `(Entity, RefRO<C>, Option<RefRO<D>>, Without<E>)`: required, optional and excluded.
struct Q2;
impl Case for Q2 {
    type Q = (Entity, RefRO<C>, Option<RefRO<D>>, Without<E>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<C>(r) && !has::<E>(r)
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[C::IDX], r[D::IDX]])
    }
    fn item((e, c, d, ()): (Entity, &C, Option<&D>, ())) -> Obs {
        (Some(e), vec![v(c), d.map(D::val)])
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, c, d, ()) = view.columns();
        assert_eq!((es.len(), c.len()), (n, n));
        assert_eq!(es, &ents[..]);
        if let Some(d) = d {
            assert_eq!(d.len(), n);
        }
        out.extend((0..n).map(|i| (Some(es[i]), vec![v(&c[i]), d.map(|d| d[i].val())])));
    }
}

/// `(Entity, RefRW<G>, Or<(With<F>, With<H>)>)`: an over-aligned write under an `Or`; the
/// chunk path uses the single-column accessors.
struct Q3;
impl Case for Q3 {
    type Q = (Entity, RefRW<G>, Or<(With<F>, With<H>)>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<G>(r) && (has::<F>(r) || has::<H>(r))
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[G::IDX]])
    }
    fn write(e: Entity, r: &mut Row) {
        bump_model::<G>(r, by(e));
    }
    fn item((e, g, ()): (Entity, &mut G, ())) -> Obs {
        assert_eq!(std::ptr::from_mut(g) as usize % 64, 0, "misaligned G");
        let obs = (Some(e), vec![v(g)]);
        bump(g, by(e));
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let before: Vec<Option<u64>> = view.column::<G>().iter().map(v).collect();
        let g = view.column_mut::<G>();
        assert_eq!(g.len(), n);
        assert_eq!(g.as_ptr() as usize % 64, 0, "misaligned G column");
        for (i, g) in g.iter_mut().enumerate() {
            out.push((Some(ents[i]), vec![before[i]]));
            bump(g, by(ents[i]));
        }
    }
}

/// `(RefRW<H>, Entity, Without<A>, Without<B>)`: two exclusions, entity not first.
struct Q4;
impl Case for Q4 {
    type Q = (RefRW<H>, Entity, Without<A>, Without<B>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<H>(r) && !has::<A>(r) && !has::<B>(r)
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[H::IDX]])
    }
    fn write(e: Entity, r: &mut Row) {
        bump_model::<H>(r, by(e));
    }
    fn item((h, e, (), ()): (&mut H, Entity, (), ())) -> Obs {
        let obs = (Some(e), vec![v(h)]);
        bump(h, by(e));
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (h, es, (), ()) = view.columns();
        assert_eq!((h.len(), es.len()), (n, n));
        assert_eq!(es, &ents[..]);
        for (h, &e) in h.iter_mut().zip(es) {
            out.push((Some(e), vec![v(h)]));
            bump(h, by(e));
        }
    }
}

/// `(Entity, Option<RefRW<A>>, Option<RefRO<B>>)`: only optional elements, so it matches every
/// entity, the component-less ones included.
struct Q5;
impl Case for Q5 {
    type Q = (Entity, Option<RefRW<A>>, Option<RefRO<B>>);
    type F = ();
    fn matches(_: &Row) -> bool {
        true
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[A::IDX], r[B::IDX]])
    }
    fn write(e: Entity, r: &mut Row) {
        bump_model::<A>(r, by(e));
    }
    fn item((e, a, b): (Entity, Option<&mut A>, Option<&B>)) -> Obs {
        let obs = (Some(e), vec![a.as_deref().map(A::val), b.map(B::val)]);
        if let Some(a) = a {
            bump(a, by(e));
        }
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, mut a, b) = view.columns();
        assert_eq!(es, &ents[..]);
        assert!(a.as_ref().is_none_or(|a| a.len() == n));
        assert!(b.is_none_or(|b| b.len() == n));
        for (i, &e) in es.iter().enumerate() {
            let a = a.as_mut().map(|a| &mut a[i]);
            out.push((
                Some(e),
                vec![a.as_deref().map(A::val), b.map(|b| b[i].val())],
            ));
            if let Some(a) = a {
                bump(a, by(e));
            }
        }
    }
}

/// `(Entity, RefRO<F>, With<D>, Or<(Without<C>, With<I>)>)`: a zero-sized read, a `With`, and
/// an `Or` over an exclusion.
struct Q6;
impl Case for Q6 {
    type Q = (Entity, RefRO<F>, With<D>, Or<(Without<C>, With<I>)>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<F>(r) && has::<D>(r) && (!has::<C>(r) || has::<I>(r))
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[F::IDX]])
    }
    fn item((e, f, (), ()): (Entity, &F, (), ())) -> Obs {
        (Some(e), vec![v(f)])
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, f, (), ()) = view.columns();
        assert_eq!((es.len(), f.len()), (n, n));
        assert_eq!(es, &ents[..]);
        out.extend(es.iter().zip(f).map(|(&e, f)| (Some(e), vec![v(f)])));
    }
}

/// `(RefRO<E>, RefRO<D>)`: no entity, so only the multiset of values is checked.
struct Q7;
impl Case for Q7 {
    type Q = (RefRO<E>, RefRO<D>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<E>(r) && has::<D>(r)
    }
    fn expect(_: Entity, r: &Row) -> Obs {
        (None, vec![r[E::IDX], r[D::IDX]])
    }
    fn item((e, d): (&E, &D)) -> Obs {
        (None, vec![v(e), v(d)])
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        check_entities(&view, None);
        let (e, d) = view.columns();
        assert_eq!((e.len(), d.len()), (n, n));
        out.extend(e.iter().zip(d).map(|(e, d)| (None, vec![v(e), v(d)])));
    }
}

/// `(Entity, &mut I, Option<&C>)` filtered by `Or<(With<A>, Without<G>)>` as the separate
/// filter parameter: plain-reference elements and a heap-owning write.
struct Q8;
impl Case for Q8 {
    type Q = (Entity, &'static mut I, Option<&'static C>);
    type F = Or<(With<A>, Without<G>)>;
    fn matches(r: &Row) -> bool {
        has::<I>(r) && (has::<A>(r) || !has::<G>(r))
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[I::IDX], r[C::IDX]])
    }
    fn write(e: Entity, r: &mut Row) {
        bump_model::<I>(r, by(e));
    }
    fn item((e, i, c): (Entity, &mut I, Option<&C>)) -> Obs {
        let obs = (Some(e), vec![v(i), c.map(C::val)]);
        bump(i, by(e));
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, i, c) = view.columns();
        assert_eq!((es.len(), i.len()), (n, n));
        assert!(c.is_none_or(|c| c.len() == n));
        assert_eq!(es, &ents[..]);
        for (k, (&e, i)) in es.iter().zip(i).enumerate() {
            out.push((Some(e), vec![v(i), c.map(|c| c[k].val())]));
            bump(i, by(e));
        }
    }
}

/// `(Entity, RefRW<F>, Option<RefRW<G>>, RefRO<H>)`: a zero-sized write and an optional
/// over-aligned write.
struct Q9;
impl Case for Q9 {
    type Q = (Entity, RefRW<F>, Option<RefRW<G>>, RefRO<H>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<F>(r) && has::<H>(r)
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[F::IDX], r[G::IDX], r[H::IDX]])
    }
    fn write(e: Entity, r: &mut Row) {
        bump_model::<G>(r, by(e));
    }
    fn item((e, f, g, h): (Entity, &mut F, Option<&mut G>, &H)) -> Obs {
        let obs = (Some(e), vec![v(f), g.as_deref().map(G::val), v(h)]);
        bump(f, by(e));
        if let Some(g) = g {
            bump(g, by(e));
        }
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, f, mut g, h) = view.columns();
        assert_eq!((es.len(), f.len(), h.len()), (n, n, n));
        assert!(g.as_ref().is_none_or(|g| g.len() == n));
        assert_eq!(es, &ents[..]);
        for (i, &e) in es.iter().enumerate() {
            let g = g.as_mut().map(|g| &mut g[i]);
            out.push((Some(e), vec![v(&f[i]), g.as_deref().map(G::val), v(&h[i])]));
            bump(&mut f[i], by(e));
            if let Some(g) = g {
                bump(g, by(e));
            }
        }
    }
}

/// `(Entity, (RefRO<A>, Option<RefRW<C>>), Without<I>)`: a nested tuple.
struct Q10;
impl Case for Q10 {
    type Q = (Entity, (RefRO<A>, Option<RefRW<C>>), Without<I>);
    type F = ();
    fn matches(r: &Row) -> bool {
        has::<A>(r) && !has::<I>(r)
    }
    fn expect(e: Entity, r: &Row) -> Obs {
        (Some(e), vec![r[A::IDX], r[C::IDX]])
    }
    fn write(e: Entity, r: &mut Row) {
        bump_model::<C>(r, by(e));
    }
    fn item((e, (a, c), ()): (Entity, (&A, Option<&mut C>), ())) -> Obs {
        let obs = (Some(e), vec![v(a), c.as_deref().map(C::val)]);
        if let Some(c) = c {
            bump(c, by(e));
        }
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        let ents = check_entities(&view, None);
        let (es, (a, mut c), ()) = view.columns();
        assert_eq!((es.len(), a.len()), (n, n));
        assert!(c.as_ref().is_none_or(|c| c.len() == n));
        assert_eq!(es, &ents[..]);
        for (i, &e) in es.iter().enumerate() {
            let c = c.as_mut().map(|c| &mut c[i]);
            out.push((Some(e), vec![v(&a[i]), c.as_deref().map(C::val)]));
            if let Some(c) = c {
                bump(c, by(e));
            }
        }
    }
}

/// `Entity` alone, filtered by `(With<B>, Without<H>)`: a bare, non-tuple query.
struct Q11;
impl Case for Q11 {
    type Q = Entity;
    type F = (With<B>, Without<H>);
    fn matches(r: &Row) -> bool {
        has::<B>(r) && !has::<H>(r)
    }
    fn expect(e: Entity, _: &Row) -> Obs {
        (Some(e), vec![])
    }
    fn item(e: Entity) -> Obs {
        (Some(e), vec![])
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let ents = check_entities(&view, None);
        let es = view.columns();
        assert_eq!(es, &ents[..]);
        out.extend(es.iter().map(|&e| (Some(e), vec![])));
    }
}

/// `Option<RefRW<I>>` alone: a bare optional write that matches every entity.
struct Q12;
impl Case for Q12 {
    type Q = Option<RefRW<I>>;
    type F = ();
    fn matches(_: &Row) -> bool {
        true
    }
    fn expect(_: Entity, r: &Row) -> Obs {
        (None, vec![r[I::IDX]])
    }
    fn write(_: Entity, r: &mut Row) {
        bump_model::<I>(r, 1);
    }
    fn item(i: Option<&mut I>) -> Obs {
        let obs = (None, vec![i.as_deref().map(I::val)]);
        if let Some(i) = i {
            bump(i, 1);
        }
        obs
    }
    fn chunk(mut view: ChunkView<'_, Self::Q>, out: &mut Vec<Obs>) {
        let n = view.len();
        check_entities(&view, None);
        match view.columns() {
            Some(i) => {
                assert_eq!(i.len(), n);
                for i in i {
                    out.push((None, vec![v(i)]));
                    bump(i, 1);
                }
            }
            None => out.extend((0..n).map(|_| (None, vec![None]))),
        }
    }
}

/// Number of query shapes.
const CASES: usize = 13;

// ----- running one query --------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Mode {
    Iter,
    ForEach,
    ForEachChunk,
    ParForEach,
    Get,
}

/// The modes that run on the calling thread.
const SEQ_MODES: [Mode; 4] = [Mode::Iter, Mode::ForEach, Mode::ForEachChunk, Mode::Get];

/// Cached query states, one per shape, kept across the operations of one test case so that
/// their incremental archetype matching is exercised too.
type States = HashMap<usize, Box<dyn Any + Send>>;

fn state<'s, K: Case>(
    states: &'s mut States,
    world: &mut World,
    key: usize,
) -> &'s mut QueryState<K::Q, K::F> {
    states
        .entry(key)
        .or_insert_with(|| Box::new(QueryState::<K::Q, K::F>::new(world)))
        .downcast_mut()
        .expect("one state type per key")
}

/// Runs query `K` in `mode` and checks what it saw and wrote against the model, which it then
/// updates with the query's writes.
fn run<K: Case>(
    world: &mut World,
    model: &mut Model,
    states: &mut States,
    key: usize,
    mode: Mode,
    cached: bool,
) {
    let matching: Vec<Entity> = model
        .rows
        .iter()
        .filter(|(_, r)| K::matches(r))
        .map(|(&e, _)| e)
        .collect();
    let mut want: Vec<Obs> = matching
        .iter()
        .map(|e| K::expect(*e, &model.rows[e]))
        .collect();
    want.sort();
    let mut got: Vec<Obs> = Vec::new();
    match mode {
        Mode::Iter => {
            let iter = if cached {
                state::<K>(states, world, key).iter_mut(world)
            } else {
                world.query_filtered::<K::Q, K::F>().iter()
            };
            assert_eq!(iter.size_hint(), (want.len(), Some(want.len())));
            // Hold every item at once: the `&mut` items of distinct rows must not alias.
            let items: Vec<_> = iter.collect();
            got.extend(items.into_iter().map(K::item));
            let count = world.query_filtered::<K::Q, K::F>().count();
            assert_eq!(count, want.len());
        }
        Mode::ForEach => {
            if cached {
                state::<K>(states, world, key).for_each(world, |item| got.push(K::item(item)));
            } else {
                world
                    .query_filtered::<K::Q, K::F>()
                    .for_each(|item| got.push(K::item(item)));
            }
        }
        Mode::ForEachChunk => {
            if cached {
                state::<K>(states, world, key)
                    .for_each_chunk(world, |view| K::chunk(view, &mut got));
            } else {
                world
                    .query_filtered::<K::Q, K::F>()
                    .for_each_chunk(|view| K::chunk(view, &mut got));
            }
        }
        Mode::ParForEach => {
            let out = Mutex::new(Vec::new());
            let push = |obs: Obs| out.lock().unwrap().push(obs);
            support::in_pool(|| {
                if cached {
                    state::<K>(states, world, key).par_for_each(world, |item| push(K::item(item)));
                } else {
                    world
                        .query_filtered::<K::Q, K::F>()
                        .par_for_each(|item| push(K::item(item)));
                }
            });
            got = out.into_inner().unwrap();
        }
        Mode::Get => {
            let mut all: Vec<Entity> = model.alive.clone();
            all.sort();
            for e in all {
                let res = if cached {
                    state::<K>(states, world, key)
                        .get_mut(world, e)
                        .map(K::item)
                } else {
                    world.query_filtered::<K::Q, K::F>().get(e).map(K::item)
                };
                match res {
                    Ok(obs) => got.push(obs),
                    Err(QueryError::NoMatch { entity, .. }) => {
                        assert_eq!(entity, e);
                        assert!(!K::matches(&model.rows[&e]), "{e:?} should match");
                    }
                    Err(err) => panic!("get({e:?}) of a live entity: {err}"),
                }
            }
            for &e in model.dead.iter().rev().take(4) {
                let err = state::<K>(states, world, key).get_mut(world, e).err();
                assert_eq!(err, Some(QueryError::NoSuchEntity(e)));
            }
        }
    }
    got.sort();
    assert_eq!(
        got,
        want,
        "query {} ({mode:?}, cached: {cached})",
        std::any::type_name::<K::Q>()
    );
    for e in matching {
        K::write(e, model.rows.get_mut(&e).expect("live"));
    }
    check_world(world, model);
}

/// Runs query shape number `case`.
fn run_case(
    world: &mut World,
    model: &mut Model,
    states: &mut States,
    case: usize,
    mode: Mode,
    cached: bool,
) {
    let f = match case {
        0 => run::<Q0>,
        1 => run::<Q1>,
        2 => run::<Q2>,
        3 => run::<Q3>,
        4 => run::<Q4>,
        5 => run::<Q5>,
        6 => run::<Q6>,
        7 => run::<Q7>,
        8 => run::<Q8>,
        9 => run::<Q9>,
        10 => run::<Q10>,
        11 => run::<Q11>,
        12 => run::<Q12>,
        _ => unreachable!("no query case {case}"),
    };
    f(world, model, states, case, mode, cached);
}

// ----- operations ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    /// `spawn(())`, then `insert_one` per type in `mask` (ascending, or descending if `rev`).
    Spawn {
        mask: u16,
        rev: bool,
        seed: u64,
    },
    /// `spawn_batch` of one of two fixed bundles.
    SpawnBatch {
        kind: bool,
        n: usize,
        seed: u64,
    },
    Despawn {
        who: usize,
    },
    /// Adds or overwrites one component.
    Insert {
        who: usize,
        ty: usize,
        val: u64,
    },
    /// Removes one component (a no-op error if absent).
    Remove {
        who: usize,
        ty: usize,
    },
    Query {
        case: usize,
        mode: Mode,
        cached: bool,
    },
}

/// Subsets that come up often, so that some archetypes fill several chunks.
const POPULAR: [u16; 6] = [
    0b0_0000_0011,
    0b0_0110_0100,
    0b1_1111_1111,
    0,
    0b1_1010_0000,
    0b0_0001_1100,
];

fn op(max_batch: usize, modes: &'static [Mode]) -> impl Strategy<Value = Op> {
    let mask = prop_oneof![
        3 => prop::sample::select(&POPULAR[..]),
        2 => 0u16..(1 << TYPES),
    ];
    prop_oneof![
        6 => (mask, any::<bool>(), any::<u64>())
            .prop_map(|(mask, rev, seed)| Op::Spawn { mask, rev, seed }),
        1 => (any::<bool>(), 0..=max_batch, any::<u64>())
            .prop_map(|(kind, n, seed)| Op::SpawnBatch { kind, n, seed }),
        2 => any::<usize>().prop_map(|who| Op::Despawn { who }),
        2 => (any::<usize>(), 0..TYPES, any::<u64>())
            .prop_map(|(who, ty, val)| Op::Insert { who, ty, val }),
        1 => (any::<usize>(), 0..TYPES).prop_map(|(who, ty)| Op::Remove { who, ty }),
        3 => (0..CASES, prop::sample::select(modes), any::<bool>())
            .prop_map(|(case, mode, cached)| Op::Query { case, mode, cached }),
    ]
}

fn apply(world: &mut World, model: &mut Model, states: &mut States, op: &Op) {
    match *op {
        Op::Spawn { mask, rev, seed } => {
            let e = world.spawn(());
            let mut row = Row::default();
            let mut types: Vec<usize> = (0..TYPES).filter(|t| mask & (1 << t) != 0).collect();
            if rev {
                types.reverse();
            }
            for ty in types {
                let val = value(seed, ty);
                row[ty] = Some(with_type(
                    ty,
                    Put {
                        world,
                        entity: e,
                        val,
                    },
                ));
            }
            model.add(e, row);
            check_entity(world, model, e);
        }
        Op::SpawnBatch { kind, n, seed } => {
            let vals = |i: usize, ty: usize| value(seed.wrapping_add(i as u64), ty);
            let ids: Vec<Entity> = if kind {
                world
                    .spawn_batch(
                        (0..n)
                            .map(|i| (A::new(vals(i, 0)), B::new(vals(i, 1)), G::new(vals(i, 6)))),
                    )
                    .collect()
            } else {
                world
                    .spawn_batch((0..n).map(|i| {
                        let c = C::new(vals(i, 2));
                        (
                            c,
                            D::new(vals(i, 3)),
                            F,
                            H::new(vals(i, 7)),
                            I::new(vals(i, 8)),
                        )
                    }))
                    .collect()
            };
            assert_eq!(ids.len(), n);
            let types: &[usize] = if kind { &[0, 1, 6] } else { &[2, 3, 5, 7, 8] };
            for (i, e) in ids.into_iter().enumerate() {
                let mut row = Row::default();
                for &ty in types {
                    row[ty] = Some(with_type(ty, Norm(vals(i, ty))));
                }
                model.add(e, row);
                check_entity(world, model, e);
            }
        }
        Op::Despawn { who } => {
            if let Some(e) = model.pick(who) {
                world.despawn(e).unwrap();
                model.rows.remove(&e);
                model.alive.retain(|&x| x != e);
                model.dead.push(e);
                assert!(world.despawn(e).is_err(), "despawned twice");
            }
        }
        Op::Insert { who, ty, val } => {
            if let Some(entity) = model.pick(who) {
                let stored = with_type(ty, Put { world, entity, val });
                model.rows.get_mut(&entity).unwrap()[ty] = Some(stored);
                check_entity(world, model, entity);
            }
        }
        Op::Remove { who, ty } => {
            if let Some(entity) = model.pick(who) {
                let got = with_type(ty, Take { world, entity });
                let want = model.rows.get_mut(&entity).unwrap()[ty].take();
                assert_eq!(got, want, "removed component {ty} of {entity:?}");
                check_entity(world, model, entity);
            }
        }
        // `run` checks the whole world afterwards.
        Op::Query { case, mode, cached } => run_case(world, model, states, case, mode, cached),
    }
    // Structural changes move other entities' rows too: the walker checks every row's
    // bookkeeping, and the next query checks every value.
    world.check_invariants();
    assert_eq!(world.len() as usize, model.rows.len());
}

/// A value as component `ty` stores it.
struct Norm(u64);
impl TypeVisitor for Norm {
    type Out = u64;
    fn visit<T: Comp>(self) -> u64 {
        T::new(self.0).val()
    }
}

// ----- the property -------------------------------------------------------------------------

/// Operations per case and entities per batch: small under Miri, which interprets every step.
const MAX_OPS: usize = if cfg!(miri) { 24 } else { 300 };
const MAX_BATCH: usize = if cfg!(miri) { 6 } else { 40 };

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if cfg!(miri) { 3 } else { 256 });
    ProptestConfig {
        cases,
        failure_persistence: if cfg!(miri) {
            None
        } else {
            Some(Box::new(FileFailurePersistence::WithSource("regressions")))
        },
        ..ProptestConfig::default()
    }
}

/// Applies `ops`, then runs every query shape once in one of `modes` picked by `sweep`.
fn check_ops(ops: &[Op], sweep: u64, modes: &[Mode]) {
    let mut world = World::with_test_chunk_size(512);
    let mut model = Model::default();
    let mut states = States::new();
    for op in ops {
        apply(&mut world, &mut model, &mut states, op);
    }
    for case in 0..CASES {
        let k = (sweep as usize).wrapping_add(case);
        let mode = modes[k % modes.len()];
        run_case(&mut world, &mut model, &mut states, case, mode, k % 2 == 0);
    }
}

proptest! {
    #![proptest_config(config())]

    /// Every query shape, through `iter`, `for_each`, `for_each_chunk` and `get`, visits exactly
    /// the entities and values the model predicts, and its writes land where the model says.
    #[test]
    fn queries_agree_with_the_model(
        ops in prop::collection::vec(op(MAX_BATCH, &SEQ_MODES), 0..MAX_OPS),
        sweep in any::<u64>(),
    ) {
        check_ops(&ops, sweep, &SEQ_MODES);
    }

    /// The same through `par_for_each` (its own test, so that a Stacked Borrows Miri run, which
    /// rayon's crossbeam-epoch fails, can skip everything named `par_`).
    #[test]
    fn par_for_each_agrees_with_the_model(
        ops in prop::collection::vec(op(MAX_BATCH, &[Mode::ParForEach]), 0..MAX_OPS),
        sweep in any::<u64>(),
    ) {
        check_ops(&ops, sweep, &[Mode::ParForEach]);
    }
}
