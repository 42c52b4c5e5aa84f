//! Resources: the `World` methods that insert, read and remove resources. The storage, and
//! how schedulers borrow it through `&World`, is `crate::resource`'s.

use crate::resource::{missing_resource, Resources};
use crate::world::World;

impl World {
    /// Inserts a resource, returning the one it replaces.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert_eq!(world.insert_resource(1u32), None);
    /// assert_eq!(world.insert_resource(2u32), Some(1));
    /// ```
    pub fn insert_resource<R: Send + Sync + 'static>(&mut self, value: R) -> Option<R> {
        self.resources.insert(value)
    }

    /// Removes a resource.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.insert_resource(1u32);
    /// assert_eq!(world.remove_resource::<u32>(), Some(1));
    /// assert!(!world.contains_resource::<u32>());
    /// ```
    pub fn remove_resource<R: Send + Sync + 'static>(&mut self) -> Option<R> {
        self.resources.remove()
    }

    /// Shared access to a resource.
    ///
    /// # Panics
    /// If there is no `R`; the message names the type.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.insert_resource(3u32);
    /// assert_eq!(*world.resource::<u32>(), 3);
    /// ```
    #[track_caller]
    pub fn resource<R: Send + Sync + 'static>(&self) -> &R {
        self.resources
            .get()
            .unwrap_or_else(|| missing_resource::<R>())
    }

    /// Exclusive access to a resource.
    ///
    /// # Panics
    /// If there is no `R`; the message names the type.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.insert_resource(3u32);
    /// *world.resource_mut::<u32>() += 1;
    /// assert_eq!(*world.resource::<u32>(), 4);
    /// ```
    #[track_caller]
    pub fn resource_mut<R: Send + Sync + 'static>(&mut self) -> &mut R {
        self.resources
            .get_mut()
            .unwrap_or_else(|| missing_resource::<R>())
    }

    /// Shared access to a resource, `None` if absent.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert_eq!(world.get_resource::<u32>(), None);
    /// world.insert_resource(3u32);
    /// assert_eq!(world.get_resource::<u32>(), Some(&3));
    /// ```
    pub fn get_resource<R: Send + Sync + 'static>(&self) -> Option<&R> {
        self.resources.get()
    }

    /// Exclusive access to a resource, `None` if absent.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.insert_resource(3u32);
    /// *world.get_resource_mut::<u32>().unwrap() = 9;
    /// assert_eq!(world.get_resource::<u32>(), Some(&9));
    /// ```
    pub fn get_resource_mut<R: Send + Sync + 'static>(&mut self) -> Option<&mut R> {
        self.resources.get_mut()
    }

    /// Whether an `R` is present.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert!(!world.contains_resource::<u32>());
    /// world.insert_resource(3u32);
    /// assert!(world.contains_resource::<u32>());
    /// ```
    pub fn contains_resource<R: Send + Sync + 'static>(&self) -> bool {
        self.resources.contains::<R>()
    }

    /// The resource table, for schedulers (see [`Resources::get_ptr`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.insert_resource(3u32);
    /// assert_eq!(world.resources().len(), 1);
    /// assert_eq!(world.resources().get::<u32>(), Some(&3));
    /// ```
    pub fn resources(&self) -> &Resources {
        &self.resources
    }
}
