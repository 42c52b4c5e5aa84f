//! Resources: world-global singletons, one per type, and the `World` methods that reach them.
//!
//! Each resource lives in its own heap cell so that a scheduler holding `&World` can hand out
//! `&mut R` to the one system whose access set owns `R` (through the unsafe
//! [`Resources::get_ptr`]), while safe code only ever gets `&R` from `&World`.

use std::any::{type_name, Any, TypeId};
use std::cell::UnsafeCell;
use std::ptr::NonNull;

use crate::component::TypeIdMap;

struct Slot {
    value: Box<UnsafeCell<dyn Any + Send + Sync>>,
    name: &'static str,
}

/// The resources of one world.
///
/// # Invariants
/// 1. The slot under key `TypeId::of::<R>()` holds an `R`.
/// 2. While a `&mut R` obtained through `get_ptr` is alive, no other reference to that `R`
///    exists (the caller's promise, kept by the scheduler's access sets).
///
/// ```
/// # use ecs_core::Resources;
/// let mut res = Resources::default();
/// res.insert(5u32);
/// assert_eq!(res.get::<u32>(), Some(&5));
/// ```
#[derive(Default)]
pub struct Resources {
    map: TypeIdMap<Slot>,
}

// SAFETY: every value is `Send + Sync`. Shared access hands out `&R` only; `&mut R` through a
// shared reference needs the unsafe `get_ptr`, whose callers guarantee exclusivity (invariant 2).
unsafe impl Sync for Resources {}

impl Resources {
    /// Inserts `value`, returning the previous one.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// assert_eq!(res.insert(1u32), None);
    /// assert_eq!(res.insert(2u32), Some(1));
    /// ```
    pub fn insert<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        let slot = Slot {
            value: Box::new(UnsafeCell::new(value)),
            name: type_name::<R>(),
        };
        let old = self.map.insert(TypeId::of::<R>(), slot)?;
        let raw = Box::into_raw(old.value);
        // SAFETY: invariant 1: the old slot under this key held an `R`; `Box::into_raw` gave up
        // ownership, and `UnsafeCell<R>` has the layout of `R`.
        Some(*unsafe { Box::from_raw(raw.cast::<R>()) })
    }

    /// Removes and returns the `R`.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// res.insert(1u32);
    /// assert_eq!(res.remove::<u32>(), Some(1));
    /// assert_eq!(res.remove::<u32>(), None);
    /// ```
    pub fn remove<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        let old = self.map.remove(&TypeId::of::<R>())?;
        let raw = Box::into_raw(old.value);
        // SAFETY: as in `insert`.
        Some(*unsafe { Box::from_raw(raw.cast::<R>()) })
    }

    /// Shared access.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// res.insert('x');
    /// assert_eq!(res.get::<char>(), Some(&'x'));
    /// assert_eq!(res.get::<u8>(), None);
    /// ```
    pub fn get<R: Send + Sync + 'static>(&self) -> Option<&R> {
        let slot = self.map.get(&TypeId::of::<R>())?;
        // SAFETY: invariant 1 gives the type; `&self` excludes `&mut` from safe code and
        // invariant 2 from the unsafe path.
        Some(unsafe { &*slot.value.get().cast::<R>() })
    }

    /// Exclusive access.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// res.insert(1u32);
    /// *res.get_mut::<u32>().unwrap() += 1;
    /// assert_eq!(res.get::<u32>(), Some(&2));
    /// ```
    pub fn get_mut<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        let slot = self.map.get_mut(&TypeId::of::<R>())?;
        slot.value.get_mut().downcast_mut::<R>()
    }

    /// A pointer to the `R`, for schedulers that prove exclusivity by other means.
    ///
    /// Dereferencing it mutably is sound only while no other reference to the value exists
    /// (invariant 2).
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// res.insert(1u32);
    /// let mut ptr = res.get_ptr::<u32>().unwrap();
    /// // SAFETY: no other reference to the `u32` exists while this one lives.
    /// unsafe { *ptr.as_mut() = 9 };
    /// assert_eq!(res.get::<u32>(), Some(&9));
    /// ```
    pub fn get_ptr<R: Send + Sync + 'static>(&self) -> Option<NonNull<R>> {
        let slot = self.map.get(&TypeId::of::<R>())?;
        NonNull::new(slot.value.get().cast::<R>())
    }

    /// Whether an `R` is present.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// res.insert(1u32);
    /// assert!(res.contains::<u32>() && !res.contains::<u64>());
    /// ```
    pub fn contains<R: Send + Sync + 'static>(&self) -> bool {
        self.map.contains_key(&TypeId::of::<R>())
    }

    /// Names of the stored resource types.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// res.insert(1u32);
    /// assert_eq!(res.names().collect::<Vec<_>>(), ["u32"]);
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.map.values().map(|s| s.name)
    }

    /// Number of resources.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// let mut res = Resources::default();
    /// res.insert(1u32);
    /// res.insert(1u64);
    /// assert_eq!(res.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are none.
    ///
    /// ```
    /// # use ecs_core::Resources;
    /// assert!(Resources::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cold]
#[track_caller]
pub(crate) fn missing_resource<R>() -> ! {
    panic!("no resource of type `{}` in the world", type_name::<R>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_replace_remove() {
        let mut r = Resources::default();
        assert_eq!(r.insert(String::from("a")), None);
        assert_eq!(r.insert(String::from("b")).as_deref(), Some("a"));
        r.get_mut::<String>().unwrap().push('c');
        assert_eq!(r.get::<String>().map(String::as_str), Some("bc"));
        assert_eq!(r.remove::<String>().as_deref(), Some("bc"));
        assert!(!r.contains::<String>());
    }
}
