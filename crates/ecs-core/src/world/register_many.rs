//! Registering many snapshot types in one call: [`World::register_pods`] and
//! [`World::register_clones`] take a tuple of types (`world.register_pods::<(Pos, Vel, Hp)>()`)
//! and register each as [`World::register_pod`] / [`World::register_clone`] would, in tuple
//! order, so a simulation with twenty component types needs one line, not twenty.
//!
//! The tuple is a list of types, not a component: nothing is spawned with it.

use bytemuck::Pod;

use crate::component::{Component, ComponentId};
use crate::world::World;

/// A tuple of pod component types, for [`World::register_pods`] (up to 16).
pub trait PodComponents {
    /// Registers each type as a pod component; their ids in tuple order.
    fn register(world: &mut World) -> Vec<ComponentId>;
}

/// A tuple of cloneable component types, for [`World::register_clones`] (up to 16).
pub trait CloneComponents {
    /// Registers each type as a cloned component; their ids in tuple order.
    fn register(world: &mut World) -> Vec<ComponentId>;
}

macro_rules! component_tuples {
    ($($T:ident),+) => {
        impl<$($T: Pod + Component),+> PodComponents for ($($T,)+) {
            fn register(world: &mut World) -> Vec<ComponentId> {
                vec![$(world.register_pod::<$T>()),+]
            }
        }

        impl<$($T: Clone + Component),+> CloneComponents for ($($T,)+) {
            fn register(world: &mut World) -> Vec<ComponentId> {
                vec![$(world.register_clone::<$T>()),+]
            }
        }
    };
}

component_tuples!(A);
component_tuples!(A, B);
component_tuples!(A, B, C);
component_tuples!(A, B, C, D);
component_tuples!(A, B, C, D, E);
component_tuples!(A, B, C, D, E, F);
component_tuples!(A, B, C, D, E, F, G);
component_tuples!(A, B, C, D, E, F, G, H);
component_tuples!(A, B, C, D, E, F, G, H, I);
component_tuples!(A, B, C, D, E, F, G, H, I, J);
component_tuples!(A, B, C, D, E, F, G, H, I, J, K);
component_tuples!(A, B, C, D, E, F, G, H, I, J, K, L);
component_tuples!(A, B, C, D, E, F, G, H, I, J, K, L, M);
component_tuples!(A, B, C, D, E, F, G, H, I, J, K, L, M, N);
component_tuples!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O);
component_tuples!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P);

impl World {
    /// Registers every type of the tuple `L` as a pod component ([`World::register_pod`]);
    /// returns their ids in tuple order. Tags (zero-sized types) are pod too.
    ///
    /// ```
    /// # use ecs_core::World;
    /// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    /// #[repr(C)]
    /// struct Pos([f32; 2]);
    /// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    /// #[repr(C)]
    /// struct Frozen;
    ///
    /// let mut world = World::new();
    /// let ids = world.register_pods::<(Pos, Frozen, u32)>();
    /// assert_eq!(ids.len(), 3);
    /// assert!(ids.iter().all(|&id| world.is_pod(id)));
    /// world.spawn((Pos([1.0, 2.0]), Frozen, 7u32));
    /// assert!(world.snapshot().is_ok());
    /// ```
    pub fn register_pods<L: PodComponents>(&mut self) -> Vec<ComponentId> {
        L::register(self)
    }

    /// Registers every type of the tuple `L` as a cloned component
    /// ([`World::register_clone`]); returns their ids in tuple order.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.register_clones::<(String, Vec<u8>)>();
    /// let e = world.spawn((String::from("kept"), vec![1u8, 2]));
    /// let snap = world.snapshot().unwrap();
    /// world.get_mut::<Vec<u8>>(e).unwrap().clear();
    /// world.restore(&snap).unwrap();
    /// assert_eq!(world.get::<Vec<u8>>(e), Ok(&vec![1, 2]));
    /// ```
    pub fn register_clones<L: CloneComponents>(&mut self) -> Vec<ComponentId> {
        L::register(self)
    }
}
