//! The process-wide list of `#[derive(Bundle)]` types, so that no bundle is ever stored as one
//! component by accident.
//!
//! Every `Send + Sync + 'static` type is a [`Component`](crate::Component), a derived bundle
//! included, so `world.spawn((body, Frozen))` with `body` a derived bundle would type-check and
//! store one `Body` column instead of its fields. Stable Rust cannot tell the tuple impl of
//! [`Bundle`](crate::Bundle) "this element is itself a bundle", so the check happens where a type
//! first becomes a component of a registry ([`ComponentInfo::of`](crate::ComponentInfo::of)):
//! it asks this list and refuses a derived bundle with a panic that names it, as it refuses a
//! tuple.
//!
//! The derive announces its type before `main` runs (a constructor in the platform's init
//! section, as the `ctor` crate does: `.init_array` on ELF, `__mod_init_func` on Apple
//! targets, `.CRT$XCU` on Windows), so the list is complete before any world exists. On a
//! target without one the derive announces the type the first time the bundle itself is used,
//! and a misuse before that is not caught. Miri runs the constructors like the real targets.
//!
//! Invariant: the list only grows, and holds each type at most once (a second announcement of
//! a type is ignored), so a type refused once is refused for the rest of the process.

use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock};

/// Kept apart from the registry's `TypeIdMap` (its hasher lives in `component`, which asks
/// this module, so sharing it would make the two files import each other).
type Known = BTreeMap<TypeId, &'static str>;

/// The announced types and their names (a `BTreeMap` has a `const` constructor; lookups happen
/// once per type a registry first sees, so a tree's log-time search costs nothing that matters).
static KNOWN: RwLock<Known> = RwLock::new(BTreeMap::new());

/// Records `type_id` (named `name`) as a derived bundle. Called by the code
/// `#[derive(Bundle)]` generates, before `main`; not meant to be called by hand.
#[doc(hidden)]
pub fn announce(type_id: TypeId, name: &'static str) {
    let mut known = KNOWN.write().unwrap_or_else(PoisonError::into_inner);
    known.entry(type_id).or_insert(name);
}

/// The name of the derived bundle type `type_id`, if it is one.
///
/// ```
/// # use std::any::TypeId;
/// # use ecs_core::derived_bundle_name;
/// assert_eq!(derived_bundle_name(TypeId::of::<u32>()), None);
/// ```
pub fn derived_bundle_name(type_id: TypeId) -> Option<&'static str> {
    let known = KNOWN.read().unwrap_or_else(PoisonError::into_inner);
    known.get(&type_id).copied()
}

/// What the derive's compile-time probe yields for a field that is a component.
#[doc(hidden)]
pub struct IsAComponent;

/// What the derive's compile-time probe yields for a field whose type is itself a bundle and
/// is not marked `#[bundle]`: the generated code expects [`IsAComponent`], so the mismatch is a
/// compile error that names this type.
#[doc(hidden)]
pub struct NestedBundleNeedsTheBundleAttribute;

/// The derive's probe of one field type (autoref dispatch: `(&&Probe::<T>::NEW).probe()` picks
/// [`ProbeBundle`] when `T: Bundle` and [`ProbeComponent`] otherwise; it only works for
/// concrete `T`, which is all a non-generic derive sees).
#[doc(hidden)]
pub struct Probe<T>(std::marker::PhantomData<T>);

impl<T> Probe<T> {
    #[doc(hidden)]
    pub const NEW: Self = Probe(std::marker::PhantomData);
}

#[doc(hidden)]
pub trait ProbeBundle {
    fn probe(&self) -> NestedBundleNeedsTheBundleAttribute;
}

impl<T: crate::Bundle> ProbeBundle for &Probe<T> {
    fn probe(&self) -> NestedBundleNeedsTheBundleAttribute {
        NestedBundleNeedsTheBundleAttribute
    }
}

#[doc(hidden)]
pub trait ProbeComponent {
    fn probe(&self) -> IsAComponent;
}

impl<T> ProbeComponent for Probe<T> {
    fn probe(&self) -> IsAComponent {
        IsAComponent
    }
}
