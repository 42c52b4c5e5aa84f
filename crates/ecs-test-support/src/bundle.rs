//! Tuples of model kinds as bundles, and the dispatch from a run-time list of kinds to a
//! static tuple type.
//!
//! Invariant: element `i` of a bundle made from `seed` is made from
//! [`elem_seed`]`(seed, kind_i)`, so a model can predict every element's
//! [`code`](crate::code) from the bundle's seed alone.

use std::any::type_name;
use std::marker::PhantomData;

use ecs_core::Bundle;

use crate::kinds::{with_kind, Kind, KindFn};

/// The seed of the element of kind `kind` in a bundle made from `seed`: each element gets its
/// own, so two kinds of one bundle do not hold the same value.
pub fn elem_seed(seed: u32, kind: usize) -> u32 {
    seed.wrapping_add(kind as u32 * 7919)
}

/// A tuple of [`Kind`]s.
pub trait ModelBundle: Bundle {
    /// The kind index of each element, in tuple order.
    fn kinds() -> Vec<usize>;
    /// The type name of each element, in tuple order.
    fn names() -> Vec<&'static str>;
    /// A bundle made from `seed` (see [`elem_seed`]).
    fn make(seed: u32) -> Self;
    /// [`Kind::encode`] of each element.
    fn encode(&self) -> Vec<u64>;
    /// [`Kind::read`] of each element.
    fn read(&self) -> Vec<u64>;
}

impl ModelBundle for () {
    fn kinds() -> Vec<usize> {
        Vec::new()
    }
    fn names() -> Vec<&'static str> {
        Vec::new()
    }
    fn make(_: u32) -> Self {}
    fn encode(&self) -> Vec<u64> {
        Vec::new()
    }
    fn read(&self) -> Vec<u64> {
        Vec::new()
    }
}

macro_rules! model_bundle {
    ($($T:ident $i:tt),*) => {
        impl<$($T: Kind),*> ModelBundle for ($($T,)*) {
            fn kinds() -> Vec<usize> {
                vec![$($T::INDEX),*]
            }
            fn names() -> Vec<&'static str> {
                vec![$(type_name::<$T>()),*]
            }
            fn make(seed: u32) -> Self {
                ($($T::make(elem_seed(seed, $T::INDEX)),)*)
            }
            fn encode(&self) -> Vec<u64> {
                vec![$(self.$i.encode()),*]
            }
            fn read(&self) -> Vec<u64> {
                vec![$(self.$i.read()),*]
            }
        }
    };
}

model_bundle!(A 0);
model_bundle!(A 0, B 1);
model_bundle!(A 0, B 1, C 2);
model_bundle!(A 0, B 1, C 2, D 3, E 4);
model_bundle!(A 0, B 1, C 2, D 3, E 4, F 5);

/// Something to run with a bundle type chosen at run time.
pub trait BundleFn {
    /// What the call returns.
    type Out;
    /// Runs with bundle `B`.
    fn call<B: ModelBundle>(self) -> Self::Out;
}

/// Runs `f` with the tuple of the (distinct) kinds in `kinds`, in that order.
///
/// # Panics
/// If `kinds` has more than three elements.
pub fn with_bundle_of<V: BundleFn>(kinds: &[usize], f: V) -> V::Out {
    match *kinds {
        [] => f.call::<()>(),
        [a] => with_kind(a, One(f)),
        [a, b] => with_kind(a, Two(b, f)),
        [a, b, c] => with_kind(a, Three(b, c, f)),
        _ => unreachable!("bundles of at most three kinds: {kinds:?}"),
    }
}

struct One<V>(V);
impl<V: BundleFn> KindFn for One<V> {
    type Out = V::Out;
    fn call<A: Kind>(self) -> V::Out {
        self.0.call::<(A,)>()
    }
}

struct Two<V>(usize, V);
impl<V: BundleFn> KindFn for Two<V> {
    type Out = V::Out;
    fn call<A: Kind>(self) -> V::Out {
        with_kind(self.0, TwoB::<A, V>(self.1, PhantomData))
    }
}

struct TwoB<A, V>(V, PhantomData<A>);
impl<A: Kind, V: BundleFn> KindFn for TwoB<A, V> {
    type Out = V::Out;
    fn call<B: Kind>(self) -> V::Out {
        self.0.call::<(A, B)>()
    }
}

struct Three<V>(usize, usize, V);
impl<V: BundleFn> KindFn for Three<V> {
    type Out = V::Out;
    fn call<A: Kind>(self) -> V::Out {
        with_kind(self.0, ThreeB::<A, V>(self.1, self.2, PhantomData))
    }
}

struct ThreeB<A, V>(usize, V, PhantomData<A>);
impl<A: Kind, V: BundleFn> KindFn for ThreeB<A, V> {
    type Out = V::Out;
    fn call<B: Kind>(self) -> V::Out {
        with_kind(self.0, ThreeC::<A, B, V>(self.1, PhantomData))
    }
}

struct ThreeC<A, B, V>(V, PhantomData<(A, B)>);
impl<A: Kind, B: Kind, V: BundleFn> KindFn for ThreeC<A, B, V> {
    type Out = V::Out;
    fn call<C: Kind>(self) -> V::Out {
        self.0.call::<(A, B, C)>()
    }
}
