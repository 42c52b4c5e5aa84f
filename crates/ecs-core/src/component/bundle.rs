//! Bundles: the tuples of components that `spawn`, `insert` and `remove` move as one unit.
//!
//! Every tuple of up to 16 distinct component types is a [`Bundle`]. A bundle writes each of its
//! values with a typed store into a column pointer, so batch spawning compiles to the same
//! stores a loop pushing into `Vec`s would make: no per-value `memcpy` calls, no type-erased
//! dispatch.

use std::any::type_name;
use std::ptr::NonNull;

use smallvec::SmallVec;

use crate::component::{Component, ComponentId, Components};

/// The component ids of a bundle, in tuple order.
///
/// ```
/// # use ecs_core::{Bundle, BundleIds, Components};
/// let mut components = Components::default();
/// let mut ids = BundleIds::new();
/// <(u8, u16)>::component_ids(&mut components, &mut ids);
/// assert_eq!(ids.len(), 2);
/// ```
pub type BundleIds = SmallVec<[ComponentId; 12]>;

/// A tuple of distinct components moved as one unit.
///
/// # Safety
/// Implementors promise, for a tuple `(T0, T1, ..)`:
/// - `component_ids` pushes exactly `COMPONENT_COUNT` ids: the id of `Ti` for each `i`, in
///   order, and nothing else (a derived bundle pushes its nested bundles' ids in place), taking
///   the ids from `components` (registering as needed) and never replacing `components` (it
///   is the world's registry: see [`Components`]' invariants);
/// - `write_row` writes element `i` as a `Ti` to `bases[i].cast::<Ti>().add(row)` and touches
///   no other memory; `replace` and `read` do the same with `cells[i]`.
///
/// ```
/// # use ecs_core::{Bundle, BundleIds, Components, World};
/// let mut world = World::new();
/// let e = world.spawn((1u8, 2u16)); // tuples of components are bundles
/// let mut ids = BundleIds::new();
/// // SAFETY: `component_ids` only registers types.
/// <(u16, u8)>::component_ids(unsafe { world.components_mut() }, &mut ids);
/// assert_eq!(ids.iter().map(|id| id.index()).collect::<Vec<_>>(), [1, 0]);
/// assert!(world.has::<u16>(e));
/// ```
pub unsafe trait Bundle: Send + Sync + Sized + 'static {
    /// The old values an overwriting `insert` hands back to be dropped.
    ///
    /// ```
    /// # use std::any::TypeId;
    /// # use ecs_core::Bundle;
    /// type Old = <(u32, char) as Bundle>::Replaced;
    /// assert_eq!(TypeId::of::<Old>(), TypeId::of::<(Option<u32>, Option<char>)>());
    /// ```
    type Replaced;

    /// How many ids [`component_ids`](Self::component_ids) pushes: the number of component
    /// types, after flattening nested bundles. A bundle nested in a derived bundle takes this
    /// many consecutive slots of `bases` / `cells`.
    ///
    /// ```
    /// # use ecs_core::Bundle;
    /// assert_eq!(<(u8, u16, char) as Bundle>::COMPONENT_COUNT, 3);
    /// ```
    const COMPONENT_COUNT: usize;

    /// Pushes the id of each element type, registering types on first use.
    ///
    /// ```
    /// # use ecs_core::{Bundle, BundleIds, Components};
    /// let mut components = Components::default();
    /// let mut ids = BundleIds::new();
    /// <(u8, u16)>::component_ids(&mut components, &mut ids);
    /// let expected = [components.id::<u8>().unwrap(), components.id::<u16>().unwrap()];
    /// assert_eq!(ids.as_slice(), expected);
    /// ```
    fn component_ids(components: &mut Components, ids: &mut BundleIds);

    /// Moves element `i` to row `row` of the column starting at `bases[i]`.
    ///
    /// # Safety
    /// Each `bases[i].cast::<Ti>().add(row)` is valid for a write of a `Ti`, and its old
    /// contents are uninitialised (or owned elsewhere).
    ///
    /// ```
    /// # use std::{mem::MaybeUninit, ptr::NonNull};
    /// # use ecs_core::Bundle;
    /// let mut a = [MaybeUninit::<u32>::uninit(); 2];
    /// let mut b = [MaybeUninit::<char>::uninit(); 2];
    /// let bases = [NonNull::from(&mut a).cast::<u8>(), NonNull::from(&mut b).cast::<u8>()];
    /// // SAFETY: each column has room for a value at row 1, not yet initialised.
    /// unsafe { (5u32, 'x').write_row(&bases, 1) };
    /// // SAFETY: row 1 (only) was just written; `u32` and `char` need no drop.
    /// assert_eq!(unsafe { (a[1].assume_init(), b[1].assume_init()) }, (5, 'x'));
    /// ```
    unsafe fn write_row(self, bases: &[NonNull<u8>], row: usize);

    /// Writes element `i` to `cells[i]`; where `overwrite[i]`, the old value is read out first
    /// and returned in `Replaced`, else the cell is assumed uninitialised.
    ///
    /// # Safety
    /// As `write_row` with `row = 0`; cells marked `overwrite` hold an initialised `Ti`.
    ///
    /// ```
    /// # use std::ptr::NonNull;
    /// # use ecs_core::Bundle;
    /// let (mut a, mut b) = (1u32, 'a');
    /// let cells = [NonNull::from(&mut a).cast::<u8>(), NonNull::from(&mut b).cast::<u8>()];
    /// // SAFETY: both cells hold initialised values of the element types.
    /// let old = unsafe { (2u32, 'b').replace(&cells, &[true, false]) };
    /// assert_eq!(old, (Some(1), None));
    /// assert_eq!((a, b), (2, 'b'));
    /// ```
    unsafe fn replace(self, cells: &[NonNull<u8>], overwrite: &[bool]) -> Self::Replaced;

    /// Reads element `i` from `cells[i]`, taking ownership.
    ///
    /// # Safety
    /// Each `cells[i]` holds an initialised `Ti` that the caller treats as moved-out afterwards.
    ///
    /// ```
    /// # use std::{mem::ManuallyDrop, ptr::NonNull};
    /// # use ecs_core::Bundle;
    /// let mut name = ManuallyDrop::new(String::from("moved"));
    /// let cells = [NonNull::from(&mut *name).cast::<u8>()];
    /// // SAFETY: the cell holds a `String` that is never used again (`ManuallyDrop`).
    /// let (taken,) = unsafe { <(String,)>::read(&cells) };
    /// assert_eq!(taken, "moved");
    /// ```
    unsafe fn read(cells: &[NonNull<u8>]) -> Self;
}

/// The ids of `B`, registering them.
///
/// # Panics
/// If a type occurs twice in the bundle, naming it: two columns of one type cannot exist, and
/// reading it out twice would duplicate ownership.
pub(crate) fn bundle_ids<B: Bundle>(components: &mut Components) -> BundleIds {
    let mut ids = BundleIds::new();
    B::component_ids(components, &mut ids);
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            panic!(
                "bundle `{}` contains `{}` more than once",
                type_name::<B>(),
                components.info(*id).name()
            );
        }
    }
    ids
}

/// `1`, whatever it is given: counts a macro repetition.
macro_rules! one {
    ($T:ident) => {
        1
    };
}

macro_rules! tuple_bundle {
    ($($T:ident $i:tt),*) => {
        // SAFETY: each method touches element `$i` through index `$i` only, as its own type,
        // and `component_ids` pushes the ids in the same order.
        unsafe impl<$($T: Component),*> Bundle for ($($T,)*) {
            type Replaced = ($(Option<$T>,)*);
            const COMPONENT_COUNT: usize = 0 $(+ one!($T))*;

            fn component_ids(components: &mut Components, ids: &mut BundleIds) {
                $(ids.push(components.register::<$T>());)*
            }

            #[inline(always)]
            unsafe fn write_row(self, bases: &[NonNull<u8>], row: usize) {
                debug_assert!($(bases.len() > $i &&)* true);
                // SAFETY: `write_row`'s contract: `bases[$i]` is the column base of element `$i`'s
                // type, and `row` an uninitialised row within the chunk's capacity.
                unsafe { $(bases.get_unchecked($i).cast::<$T>().add(row).write(self.$i);)* }
            }

            unsafe fn replace(self, cells: &[NonNull<u8>], overwrite: &[bool]) -> Self::Replaced {
                debug_assert!($(cells.len() > $i && overwrite.len() > $i &&)* true);
                // SAFETY: `replace`'s contract: `cells[$i]` holds an initialised `$T` where
                // `overwrite[$i]`, and is writable for one otherwise; `replace` reads the old value
                // out before writing the new one, so nothing is dropped here.
                unsafe {
                    ($(
                        if overwrite[$i] {
                            Some(cells[$i].cast::<$T>().replace(self.$i))
                        } else {
                            cells[$i].cast::<$T>().write(self.$i);
                            None
                        },
                    )*)
                }
            }

            unsafe fn read(cells: &[NonNull<u8>]) -> Self {
                debug_assert!($(cells.len() > $i &&)* true);
                // SAFETY: `read`'s contract: `cells[$i]` holds an initialised `$T`, which the
                // caller treats as moved out afterwards (so it is read once).
                unsafe { ($(cells[$i].cast::<$T>().read(),)*) }
            }
        }
    };
}

// SAFETY: the empty bundle touches no memory and pushes no id.
unsafe impl Bundle for () {
    type Replaced = ();
    const COMPONENT_COUNT: usize = 0;
    fn component_ids(_: &mut Components, _: &mut BundleIds) {}
    unsafe fn write_row(self, _: &[NonNull<u8>], _: usize) {}
    unsafe fn replace(self, _: &[NonNull<u8>], _: &[bool]) -> Self::Replaced {}
    unsafe fn read(_: &[NonNull<u8>]) -> Self {}
}

tuple_bundle!(A 0);
tuple_bundle!(A 0, B 1);
tuple_bundle!(A 0, B 1, C 2);
tuple_bundle!(A 0, B 1, C 2, D 3);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuple_bundle!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);
