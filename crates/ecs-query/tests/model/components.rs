//! The model test's component types: nine newtypes, one zero-sized, one 64-byte-aligned and
//! one owning heap memory, each built from and read back as a `u64`, plus dispatch on a runtime
//! type index.

use ecs_core::{Entity, World};

/// Number of component types.
pub(crate) const TYPES: usize = 9;

/// The model of one entity: per component type, its value (widened to `u64`) if present.
pub(crate) type Row = [Option<u64>; TYPES];

/// A component of the model test: index `IDX` in a [`Row`], built from and read as a `u64`.
pub(crate) trait Comp: Send + Sync + 'static + Sized {
    const IDX: usize;
    fn new(v: u64) -> Self;
    fn val(&self) -> u64;
}

#[derive(Debug)]
pub(crate) struct A(u32);
#[derive(Debug)]
pub(crate) struct B(u64);
#[derive(Debug)]
pub(crate) struct C(u16);
#[derive(Debug)]
pub(crate) struct D(u8);
#[derive(Debug)]
pub(crate) struct E(i32);
/// Zero-sized: its column takes no bytes.
#[derive(Debug)]
pub(crate) struct F;
/// Over-aligned: forces a 64-byte column alignment (and a 64-byte element).
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct G(u32);
#[derive(Debug)]
pub(crate) struct H(u64);
/// Owns heap memory, so moves, overwrites and despawns must drop it exactly once.
#[derive(Debug)]
pub(crate) struct I(Box<u64>);

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
pub(crate) trait TypeVisitor {
    type Out;
    fn visit<T: Comp>(self) -> Self::Out;
}

/// Runs `v` with the component type of index `ty`.
pub(crate) fn with_type<V: TypeVisitor>(ty: usize, v: V) -> V::Out {
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
pub(crate) struct Put<'a> {
    pub(crate) world: &'a mut World,
    pub(crate) entity: Entity,
    pub(crate) val: u64,
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
pub(crate) struct Take<'a> {
    pub(crate) world: &'a mut World,
    pub(crate) entity: Entity,
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
pub(crate) struct Look<'a> {
    pub(crate) world: &'a World,
    pub(crate) entity: Entity,
}
impl TypeVisitor for Look<'_> {
    type Out = Option<u64>;
    fn visit<T: Comp>(self) -> Option<u64> {
        let got = self.world.get::<T>(self.entity).ok().map(T::val);
        assert_eq!(got.is_some(), self.world.has::<T>(self.entity));
        got
    }
}

/// Value of component `ty` for the entity spawned with `seed`.
pub(crate) fn value(seed: u64, ty: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(7 * ty as u32 + 1)
}

/// Bumps a component by `by` (wrapping in its own width).
pub(crate) fn bump<T: Comp>(t: &mut T, by: u64) {
    *t = T::new(t.val().wrapping_add(by));
}

/// Bumps the model's `T`, if present, as [`bump`] bumps the component.
pub(crate) fn bump_model<T: Comp>(row: &mut Row, by: u64) {
    if let Some(x) = &mut row[T::IDX] {
        *x = T::new(x.wrapping_add(by)).val();
    }
}

/// How much a writing query adds for entity `e`.
pub(crate) fn by(e: Entity) -> u64 {
    u64::from(e.index()) + 1
}

pub(crate) fn has<T: Comp>(row: &Row) -> bool {
    row[T::IDX].is_some()
}

pub(crate) fn v<T: Comp>(t: &T) -> Option<u64> {
    Some(t.val())
}

/// A value as component `ty` stores it.
pub(crate) struct Norm(pub(crate) u64);
impl TypeVisitor for Norm {
    type Out = u64;
    fn visit<T: Comp>(self) -> u64 {
        T::new(self.0).val()
    }
}
