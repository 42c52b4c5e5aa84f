//! The state hash of a live world: [`World::state_hash`] and [`World::try_state_hash`] (the
//! construction is the `hash` module's; a snapshot's own is `Snapshot::state_hash`).

use crate::component::ComponentId;
use crate::snapshot::error::SnapshotError;
use crate::snapshot::registry::{self, ResourceValue};
use crate::snapshot::{hash, pod_bytes};
use crate::world::World;

impl World {
    /// [`World::state_hash`] with no blind spots: an error, rather than a hash that counts a
    /// component by presence only, when a live entity holds a component whose value the hash
    /// cannot see: one registered neither as pod ([`World::register_pod`],
    /// [`World::register_checked`]) nor as hashed ([`World::register_hashed`]), or when a
    /// resource snapshotted by cloning is present without a hash
    /// ([`World::register_hashed_resource`]). Zero-sized components (tags) are all presence
    /// and always pass; resources not registered for snapshots are not world state here.
    ///
    /// # Errors
    /// [`SnapshotError::Unhashed`], naming the first such component and an entity holding it;
    /// [`SnapshotError::UnhashedResource`] naming such a resource.
    ///
    /// ```
    /// # use ecs_core::{SnapshotError, World};
    /// struct Tag;
    /// let mut world = World::new();
    /// world.register_pod::<u32>();
    /// world.spawn((1u32, Tag));
    /// assert_eq!(world.try_state_hash(), Ok(world.state_hash()));
    /// world.spawn((String::from("x"),));
    /// assert!(matches!(world.try_state_hash(), Err(SnapshotError::Unhashed { .. })));
    /// world.register_hashed::<String>();
    /// assert!(world.try_state_hash().is_ok());
    /// ```
    pub fn try_state_hash(&self) -> Result<u64, SnapshotError> {
        let components = self.components();
        for arch in self.archetypes().iter().filter(|a| !a.is_empty()) {
            for id in arch.component_ids() {
                let info = components.info(id);
                if info.size() > 0 && !self.is_pod(id) && self.snapshots.hasher(id).is_none() {
                    return Err(SnapshotError::Unhashed {
                        component: info.name().to_string(),
                        entity: arch.chunks()[0].entities()[0],
                    });
                }
            }
        }
        for hooks in self.snapshots.resources() {
            if !hooks.pod && hooks.hash.is_none() && (hooks.save)(self.resources()).is_some() {
                return Err(SnapshotError::UnhashedResource {
                    resource: hooks.name.to_string(),
                });
            }
        }
        Ok(self.state_hash())
    }

    /// A 64-bit hash of the live entities and their pod component values: equal for two worlds
    /// that hold the same entity ids with the same components, the same pod values and the
    /// same values of pod resources ([`World::register_pod_resource`]; an absent one counts
    /// as unregistered), whatever their chunk sizes, archetype creation orders, row orders or
    /// the number of threads that ran them. Components registered with
    /// [`World::register_hashed`] count by their `Hash`; other non-pod components count by
    /// presence only ([`World::try_state_hash`] refuses those); cloned resources count by value
    /// when registered with [`World::register_hashed_resource`] and not at all otherwise; the
    /// free list is not hashed. The way to check determinism across runs and machines (of the same byte order):
    /// compare hashes frame by frame. See the hash module's docs for the construction.
    ///
    /// Cost: about one 64-bit multiply per 8 bytes of pod data plus two per entity; one pass.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let build = |chunk| {
    ///     let mut world = World::with_chunk_size(chunk).unwrap();
    ///     world.register_pod::<f32>();
    ///     for i in 0..1000u32 {
    ///         world.spawn((i as f32,));
    ///     }
    ///     world
    /// };
    /// let (mut a, b) = (build(4096), build(65536));
    /// assert_eq!(a.state_hash(), b.state_hash());
    /// let e = a.snapshot().unwrap().entities().next().unwrap();
    /// *a.get_mut::<f32>(e).unwrap() += 1.0;
    /// assert_ne!(a.state_hash(), b.state_hash());
    /// ```
    pub fn state_hash(&self) -> u64 {
        let components = self.components();
        let mut keys: Vec<Option<u64>> = vec![None; components.len()];
        let mut key = |id: ComponentId| {
            *keys[id.index()].get_or_insert_with(|| hash::component_key(components.info(id).name()))
        };
        let mut h = hash::StateHasher::default();
        let mut hashes = Vec::new();
        for arch in self.archetypes().iter().filter(|a| !a.is_empty()) {
            let arch_key = hash::archetype_key(arch.component_ids().map(&mut key));
            let pods: Vec<(usize, u64)> = arch
                .component_ids()
                .enumerate()
                .filter(|&(_, id)| self.is_pod(id))
                .map(|(c, id)| (c, key(id)))
                .collect();
            let hashed: Vec<(usize, u64, registry::HashValues)> = arch
                .component_ids()
                .enumerate()
                // Pod columns are hashed as bytes above, even if also registered hashed.
                .filter(|&(_, id)| !self.is_pod(id))
                .filter_map(|(c, id)| Some((c, key(id), self.snapshots.hasher(id)?)))
                .collect();
            let toggled: Vec<(usize, u64)> = arch
                .enableable_columns()
                .iter()
                .enumerate()
                .map(|(slot, &c)| (slot, key(arch.component_ids().nth(c).expect("a column"))))
                .collect();
            for chunk in arch.chunks() {
                h.rows(chunk.entities(), arch_key);
                for &(c, k) in &pods {
                    h.column(k, arch.layout().size(c), pod_bytes(arch, chunk, c));
                }
                for &(c, k, hash) in &hashed {
                    // SAFETY: rows `0..len` of column `c` are initialised values of its type
                    // (`Chunk` invariant 2), the type `hash` was made for (the registry's
                    // invariant 3); `&self` keeps writers out.
                    unsafe {
                        hash(
                            arch.column_base(chunk, c).as_ptr(),
                            chunk.len(),
                            &mut hashes,
                        )
                    };
                    h.hashed(k, &hashes);
                }
                for &(slot, k) in &toggled {
                    let mask = chunk.enable_bits().get(slot);
                    if mask.count() < chunk.len() {
                        h.disabled(k, (0..chunk.len()).filter(|&r| !mask.get(r)));
                    }
                }
            }
        }
        for hooks in self.snapshots.resources() {
            if hooks.pod {
                let value = (hooks.save)(self.resources());
                h.resource(hooks.name, value.as_ref().and_then(ResourceValue::as_bytes));
            } else if let Some(hash) = hooks.hash.and_then(|hash| (hash.live)(self.resources())) {
                h.resource(hooks.name, Some(&hash.to_le_bytes()));
            }
        }
        h.finish()
    }
}
