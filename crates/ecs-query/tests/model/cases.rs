//! The family of query shapes the model test runs, each with what the model predicts it sees and
//! writes, and how it observes items and chunk views.

use ecs_core::Entity;
use ecs_query::{ChunkView, Or, QueryFilter, RefRO, RefRW, With, Without, WorldQuery};

use super::components::{bump, bump_model, by, has, v, Comp, Row, A, B, C, D, E, F, G, H, I};

/// What a query reports per entity: its id (if the query yields one) and the values it read.
pub(crate) type Obs = (Option<Entity>, Vec<Option<u64>>);

/// One query shape and what the model says it does.
pub(crate) trait Case: 'static {
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

/// Checks that a chunk view is non-empty and its entity column has its length; returns the ids.
pub(crate) fn check_entities(view: &ChunkView<'_, impl WorldQuery>) -> Vec<Entity> {
    let ents = view.entities();
    assert_eq!(ents.len(), view.len());
    assert!(!view.is_empty(), "a query handed out an empty chunk");
    ents.to_vec()
}

/// `(Entity, RefRO<A>)`: one required read.
pub(crate) struct Q0;
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
        let ents = check_entities(&view);
        let (es, a) = view.columns();
        assert_eq!((es.len(), a.len()), (n, n));
        assert_eq!(es, &ents[..]);
        out.extend((0..n).map(|i| (Some(es[i]), vec![v(&a[i])])));
    }
}

/// `(Entity, RefRW<B>, RefRO<A>)`: a write and a read, both required.
pub(crate) struct Q1;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q2;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q3;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q4;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q5;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q6;
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
        let ents = check_entities(&view);
        let (es, f, (), ()) = view.columns();
        assert_eq!((es.len(), f.len()), (n, n));
        assert_eq!(es, &ents[..]);
        out.extend(es.iter().zip(f).map(|(&e, f)| (Some(e), vec![v(f)])));
    }
}

/// `(RefRO<E>, RefRO<D>)`: no entity, so only the multiset of values is checked.
pub(crate) struct Q7;
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
        check_entities(&view);
        let (e, d) = view.columns();
        assert_eq!((e.len(), d.len()), (n, n));
        out.extend(e.iter().zip(d).map(|(e, d)| (None, vec![v(e), v(d)])));
    }
}

/// `(Entity, &mut I, Option<&C>)` filtered by `Or<(With<A>, Without<G>)>` as the separate
/// filter parameter: plain-reference elements and a heap-owning write.
pub(crate) struct Q8;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q9;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q10;
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
        let ents = check_entities(&view);
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
pub(crate) struct Q11;
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
        let ents = check_entities(&view);
        let es = view.columns();
        assert_eq!(es, &ents[..]);
        out.extend(es.iter().map(|&e| (Some(e), vec![])));
    }
}

/// `Option<RefRW<I>>` alone: a bare optional write that matches every entity.
pub(crate) struct Q12;
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
        check_entities(&view);
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
pub(crate) const CASES: usize = 13;
