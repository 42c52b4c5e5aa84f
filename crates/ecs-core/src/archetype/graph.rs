//! The archetype graph: every archetype, found by signature, with cached add/remove edges.
//!
//! Moving an entity to another archetype needs the target archetype and, for each column, where
//! it goes. The first `insert::<B>` or `remove::<B>` from an archetype works that out (hashing the
//! target signature) and caches it as an edge keyed by the bundle's `TypeId`; every later one
//! from that archetype is one `TypeId` lookup, with no signature hashed.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

use super::Archetype;
use crate::chunk::policy::ChunkSizing;
use crate::chunk::pool::ChunkPool;
use crate::chunk::set::ChunkSetVersion;
use crate::chunk::values::{self, Cell, ChunkKind, ChunkKinds};
use crate::component::bundle::{bundle_ids, Bundle};
use crate::component::signature::Signature;
use crate::component::{ComponentId, Components, TypeIdMap};
use crate::ids::ArchetypeId;

/// Marks a source column that a remove edge drops from the entity.
pub(crate) const REMOVED: u32 = u32::MAX;

/// Where `insert::<B>` takes an entity of one archetype.
pub(crate) struct InsertEdge {
    pub target: ArchetypeId,
    /// For each bundle element (tuple order), its column in `target`.
    pub bundle_cols: Box<[u32]>,
    /// For each bundle element, whether the source has it already (so it is overwritten).
    pub overwrite: Box<[bool]>,
    /// For each source column, its column in `target` (every source column survives).
    pub src_to_dst: Box<[u32]>,
}

/// Where `remove::<B>` takes an entity of one archetype.
pub(crate) enum RemoveEdge {
    /// The archetype lacks this bundle type, so the removal fails.
    Missing(ComponentId),
    Move {
        target: ArchetypeId,
        /// For each bundle element, its column in the source.
        bundle_cols: Box<[u32]>,
        /// For each source column, its column in `target`, or `REMOVED`.
        src_to_dst: Box<[u32]>,
    },
}

/// One archetype's cached edges, per kind.
#[derive(Default)]
struct Edges {
    insert: EdgeList<InsertEdge>,
    remove: EdgeList<RemoveEdge>,
}

/// The edges of one kind out of one archetype. The map gives an index into the list, so a hit
/// costs one hash probe and the returned borrow does not pin the map while a miss builds a new
/// edge. In front of the map sits the last edge it gave: inserting or removing the same bundle
/// type on entity after entity of one archetype (the common batch case) then skips the probe,
/// whose two dependent loads sit on the critical path of a row move.
struct EdgeList<E> {
    at: TypeIdMap<u32>,
    list: Vec<E>,
    last: Option<(TypeId, u32)>,
}

impl<E> Default for EdgeList<E> {
    fn default() -> Self {
        Self {
            at: TypeIdMap::default(),
            list: Vec::new(),
            last: None,
        }
    }
}

impl<E> EdgeList<E> {
    /// The edge for bundle type `key` if it was the last one handed out.
    #[inline(always)]
    fn last(&self, key: TypeId) -> Option<u32> {
        match self.last {
            Some((last, at)) if last == key => Some(at),
            _ => None,
        }
    }

    /// The edge for `key` from the map, remembered as the last one.
    fn find(&mut self, key: TypeId) -> Option<u32> {
        let at = *self.at.get(&key)?;
        self.last = Some((key, at));
        Some(at)
    }

    /// Caches a newly built edge for `key`, remembered as the last one.
    fn add(&mut self, key: TypeId, edge: E) -> u32 {
        self.list.push(edge);
        let at = u32::try_from(self.list.len() - 1).expect("fewer than 2^32 edges");
        self.at.insert(key, at);
        self.last = Some((key, at));
        at
    }
}

/// All archetypes of a world.
///
/// # Invariants
/// 1. `list[i].id() == ArchetypeId(i)`, `edges.len() == list.len()`, and `list[0]` is the
///    empty archetype.
/// 2. `by_signature` maps each archetype's signature to its id, and nothing else.
/// 3. Every cached edge is what building it afresh would give, and each archetype's last-used
///    edge entries agree with its maps.
/// 4. Edges move exactly the bundle's components. Call `B` the bundle's ids, in tuple order.
///    - Insert edge from `s` to `t`: `B[i]` is the id of `t`'s column `bundle_cols[i]`;
///      `t.signature == s.signature ∪ B`; `overwrite[i] == s` has `B[i]`; `src_to_dst[c]` is
///      `t`'s column of the id of `s`'s column `c`; `t == s` iff every `overwrite[i]`.
///    - Remove `Move` edge from `s` to `t`: `B[i]` is the id of `s`'s column `bundle_cols[i]`;
///      `t.signature == s.signature \ B`; `src_to_dst[c]` is `REMOVED` if that column's id is
///      in `B`, else `t`'s column of it; `t == s` iff `B` is empty.
///    - Remove `Missing(id)` edge: `id` is registered and `s` lacks it.
/// 5. Every archetype agrees with the world's component registry (`Archetype` invariant 6).
///
/// `World::insert` / `remove` copy each source column into `src_to_dst[c]` with the source's
/// size and write or read bundle values through `bundle_cols` as the bundle's types, checking
/// neither in release builds: 4 and 5 are what make those copies land in same-typed cells.
/// `World::check_invariants` checks all five.
pub struct Archetypes {
    list: Vec<Archetype>,
    edges: Vec<Edges>,
    by_signature: HashMap<Signature, ArchetypeId, ahash::RandomState>,
    pub(crate) sizing: ChunkSizing,
    /// Where every archetype's chunks get their memory.
    pool: Arc<ChunkPool>,
    /// Bumped by every archetype's chunk list changes (see `chunk_set`).
    chunk_set: Arc<ChunkSetVersion>,
    /// The chunk component types every archetype carries (`Archetype` invariant 8).
    chunk_kinds: ChunkKinds,
}

impl Archetypes {
    pub(crate) fn new(sizing: ChunkSizing) -> Self {
        let mut this = Self {
            list: Vec::new(),
            edges: Vec::new(),
            by_signature: HashMap::default(),
            sizing,
            pool: Arc::default(),
            chunk_set: Arc::default(),
            chunk_kinds: ChunkKinds::from([]),
        };
        let empty = this.get_or_create(Signature::new(), &Components::default());
        debug_assert_eq!(empty, ArchetypeId::EMPTY);
        this
    }

    /// Where every archetype's chunks get their memory.
    pub(crate) fn chunk_pool(&self) -> &ChunkPool {
        &self.pool
    }

    /// The chunk set version (see `chunk_set`).
    #[inline]
    pub(crate) fn chunk_set_version(&self) -> u64 {
        self.chunk_set.get()
    }

    /// The archetypes, indexed by [`ArchetypeId::index`].
    #[inline]
    pub fn as_slice(&self) -> &[Archetype] {
        &self.list
    }

    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Archetype] {
        &mut self.list
    }

    /// The archetype with exactly `signature`, creating it if needed.
    ///
    /// # Panics
    /// If one row of it does not fit in a chunk; the message names each type and its size.
    pub(crate) fn get_or_create(
        &mut self,
        signature: Signature,
        components: &Components,
    ) -> ArchetypeId {
        if let Some(&id) = self.by_signature.get(&signature) {
            return id;
        }
        let id = ArchetypeId::new(self.list.len());
        let archetype = self.make(id, &signature, components);
        self.list.push(archetype);
        self.edges.push(Edges::default());
        self.by_signature.insert(signature, id);
        id
    }

    /// A new, empty archetype `id` for `signature`, sized by the current `sizing`.
    ///
    /// # Panics
    /// As [`Archetypes::get_or_create`].
    fn make(&self, id: ArchetypeId, signature: &Signature, components: &Components) -> Archetype {
        let infos: Vec<_> = signature.iter().map(|c| components.info(c)).collect();
        let marks: Vec<_> = signature.iter().map(|c| components.row_ticks(c)).collect();
        let mut archetype = match Archetype::new(
            id,
            &infos,
            &self.sizing,
            &self.pool,
            &self.chunk_set,
            &marks,
        ) {
            Ok(archetype) => archetype,
            Err(too_large) => panic!("cannot store this archetype: {too_large}"),
        };
        if !self.chunk_kinds.is_empty() {
            archetype.take_chunk_kinds(Arc::clone(&self.chunk_kinds));
        }
        archetype
    }

    /// [`ChunkPolicy::FitBatch`](crate::ChunkPolicy::FitBatch): archetype `id`, created empty
    /// by the batch about to fill it with `rows` rows, is made again with the chunk size the
    /// policy picks for the batch. Nothing has seen its layout yet (no row, no query run since its creation); its
    /// edges name columns by index, which the chunk size does not change.
    #[cold]
    pub(crate) fn size_for_batch(&mut self, id: ArchetypeId, rows: usize, components: &Components) {
        let arch = &self.list[id.index()];
        debug_assert!(arch.is_empty() && arch.chunks().is_empty());
        let layout = arch.layout();
        let row_bytes = layout.chunk_size() / layout.capacity().max(1);
        let signature = arch.signature().clone();
        if let Some(bytes) = self.sizing.for_batch(&signature, row_bytes, rows) {
            self.sizing.set_override(signature.clone(), bytes);
            self.list[id.index()] = self.make(id, &signature, components);
        }
    }

    /// Heap bytes of the graph's own tables (archetype list, edge lists, signature map), by
    /// capacity; edge hash maps are estimated from their lengths. For the layout report.
    pub(crate) fn table_bytes(&self) -> usize {
        let edges: usize = self
            .edges
            .iter()
            .map(|e| {
                e.insert.list.capacity() * size_of::<InsertEdge>()
                    + e.remove.list.capacity() * size_of::<RemoveEdge>()
                    + (e.insert.list.len() + e.remove.list.len()) * 2 * size_of::<(TypeId, u32)>()
            })
            .sum();
        self.list.capacity() * size_of::<Archetype>()
            + self.edges.capacity() * size_of::<Edges>()
            + self.by_signature.capacity() * (size_of::<(Signature, ArchetypeId)>() + 1)
            + edges
    }

    /// How many chunk value sets the archetypes hold (chunks, spares and values made ahead):
    /// a new chunk component kind needs one value for each.
    pub(crate) fn chunk_value_holders(&self) -> usize {
        self.list.iter().map(Archetype::chunk_value_holders).sum()
    }

    /// Makes every archetype, present and future, carry chunk component `kind` too, taking
    /// each holder's value from `made` (made beforehand: no user code runs here).
    pub(crate) fn add_chunk_kind(&mut self, kind: ChunkKind, made: &mut dyn Iterator<Item = Cell>) {
        let kinds = values::with_kind(&self.chunk_kinds, kind);
        for arch in &mut self.list {
            arch.add_chunk_kind(Arc::clone(&kinds), &kind, made);
        }
        self.chunk_kinds = kinds;
    }

    /// Drops the cached edges out of archetype `id` (compaction of an empty archetype);
    /// returns whether it had any. Edges are a cache: the next `insert` / `remove` from `id`
    /// builds them again, to the same targets (invariant 3 holds with fewer entries).
    pub(crate) fn forget_edges(&mut self, id: ArchetypeId) -> bool {
        let edges = std::mem::take(&mut self.edges[id.index()]);
        !(edges.insert.list.is_empty() && edges.remove.list.is_empty())
    }

    /// The archetype with exactly `signature`, if it exists.
    pub fn find(&self, signature: &Signature) -> Option<ArchetypeId> {
        self.by_signature.get(signature).copied()
    }

    /// The cached edge for `insert::<B>` from `src`, building it on first use.
    #[inline(always)]
    pub(crate) fn insert_edge<B: Bundle>(
        &mut self,
        src: ArchetypeId,
        components: &mut Components,
    ) -> (&InsertEdge, &mut [Archetype]) {
        let key = TypeId::of::<B>();
        let at = match self.edges[src.index()].insert.last(key) {
            Some(at) => at,
            None => match self.edges[src.index()].insert.find(key) {
                Some(at) => at,
                None => {
                    let edge = self.build_insert_edge::<B>(src, components);
                    self.edges[src.index()].insert.add(key, edge)
                }
            },
        };
        (
            &self.edges[src.index()].insert.list[at as usize],
            &mut self.list,
        )
    }

    #[cold]
    fn build_insert_edge<B: Bundle>(
        &mut self,
        src: ArchetypeId,
        components: &mut Components,
    ) -> InsertEdge {
        let ids = bundle_ids::<B>(components);
        let source = &self.list[src.index()];
        let overwrite = ids
            .iter()
            .map(|&id| source.signature().contains(id))
            .collect();
        let mut signature = source.signature().clone();
        for &id in &ids {
            signature.insert(id);
        }
        let target = self.get_or_create(signature, components);
        let (source, dest) = (&self.list[src.index()], &self.list[target.index()]);
        let column = |id| dest.column(id).expect("target has every source column") as u32;
        InsertEdge {
            target,
            bundle_cols: ids.iter().map(|&id| column(id)).collect(),
            overwrite,
            src_to_dst: source.component_ids().map(column).collect(),
        }
    }

    /// The cached edge for `remove::<B>` from `src`, building it on first use.
    #[inline(always)]
    pub(crate) fn remove_edge<B: Bundle>(
        &mut self,
        src: ArchetypeId,
        components: &mut Components,
    ) -> (&RemoveEdge, &mut [Archetype]) {
        let key = TypeId::of::<B>();
        let at = match self.edges[src.index()].remove.last(key) {
            Some(at) => at,
            None => match self.edges[src.index()].remove.find(key) {
                Some(at) => at,
                None => {
                    let edge = self.build_remove_edge::<B>(src, components);
                    self.edges[src.index()].remove.add(key, edge)
                }
            },
        };
        (
            &self.edges[src.index()].remove.list[at as usize],
            &mut self.list,
        )
    }

    #[cold]
    fn build_remove_edge<B: Bundle>(
        &mut self,
        src: ArchetypeId,
        components: &mut Components,
    ) -> RemoveEdge {
        let ids = bundle_ids::<B>(components);
        let source = &self.list[src.index()];
        if let Some(&missing) = ids.iter().find(|&&id| !source.signature().contains(id)) {
            return RemoveEdge::Missing(missing);
        }
        let mut signature = source.signature().clone();
        for &id in &ids {
            signature.remove(id);
        }
        let target = self.get_or_create(signature, components);
        let (source, dest) = (&self.list[src.index()], &self.list[target.index()]);
        RemoveEdge::Move {
            target,
            bundle_cols: ids
                .iter()
                .map(|&id| source.column(id).expect("checked above") as u32)
                .collect(),
            src_to_dst: source
                .component_ids()
                .map(|id| dest.column(id).map_or(REMOVED, |c| c as u32))
                .collect(),
        }
    }

    /// Asserts invariants 1–5 against `components`, the registry of the world that owns this
    /// graph.
    pub(crate) fn check(&self, components: &Components) {
        assert_eq!(self.list.len(), self.edges.len());
        assert!(
            self.list[0].signature().is_empty(),
            "archetype 0 is not empty"
        );
        assert_eq!(
            self.by_signature.len(),
            self.list.len(),
            "signature map size"
        );
        for (i, (arch, edges)) in self.list.iter().zip(&self.edges).enumerate() {
            assert_eq!(arch.id().index(), i, "archetype id");
            assert_eq!(
                self.find(arch.signature()),
                Some(arch.id()),
                "signature map"
            );
            if let Some((key, at)) = edges.insert.last {
                assert_eq!(edges.insert.at.get(&key), Some(&at), "last insert edge");
            }
            if let Some((key, at)) = edges.remove.last {
                assert_eq!(edges.remove.at.get(&key), Some(&at), "last remove edge");
            }
            arch.check_registry(components);
            for edge in &edges.insert.list {
                self.check_insert_edge(arch, edge);
            }
            for edge in &edges.remove.list {
                self.check_remove_edge(arch, edge, components);
            }
        }
    }

    /// Asserts invariant 4 for one insert edge out of `src`.
    fn check_insert_edge(&self, src: &Archetype, edge: &InsertEdge) {
        let at = src.id();
        let target = self
            .list
            .get(edge.target.index())
            .unwrap_or_else(|| panic!("{at:?}: insert edge to missing {:?}", edge.target));
        let dst_ids: Vec<ComponentId> = target.component_ids().collect();
        assert_eq!(
            edge.bundle_cols.len(),
            edge.overwrite.len(),
            "{at:?}: insert edge lengths"
        );
        let mut expected = src.signature().clone();
        for (i, (&col, &overwrite)) in edge.bundle_cols.iter().zip(&edge.overwrite).enumerate() {
            let id = *dst_ids
                .get(col as usize)
                .unwrap_or_else(|| panic!("{at:?}: insert edge element {i} has no column"));
            assert_eq!(
                overwrite,
                src.signature().contains(id),
                "{at:?}: insert edge overwrite flag {i}"
            );
            expected.insert(id);
        }
        assert_eq!(
            target.signature(),
            &expected,
            "{at:?}: insert edge target is not the source plus the bundle"
        );
        assert_eq!(
            edge.target == at,
            edge.overwrite.iter().all(|&o| o),
            "{at:?}: insert edge loops unless it only overwrites"
        );
        assert_eq!(edge.src_to_dst.len(), src.component_ids().len());
        for (c, id) in src.component_ids().enumerate() {
            assert_eq!(
                target.column(id),
                Some(edge.src_to_dst[c] as usize),
                "{at:?}: insert edge column map"
            );
        }
    }

    /// Asserts invariant 4 for one remove edge out of `src`.
    fn check_remove_edge(&self, src: &Archetype, edge: &RemoveEdge, components: &Components) {
        let at = src.id();
        let (target, bundle_cols, src_to_dst) = match edge {
            RemoveEdge::Missing(id) => {
                assert!(
                    id.index() < components.len(),
                    "{at:?}: remove edge names unregistered {id:?}"
                );
                assert!(
                    !src.signature().contains(*id),
                    "{at:?}: remove edge calls present {id:?} missing"
                );
                return;
            }
            RemoveEdge::Move {
                target,
                bundle_cols,
                src_to_dst,
            } => (*target, bundle_cols, src_to_dst),
        };
        let dst = self
            .list
            .get(target.index())
            .unwrap_or_else(|| panic!("{at:?}: remove edge to missing {target:?}"));
        let src_ids: Vec<ComponentId> = src.component_ids().collect();
        let mut expected = src.signature().clone();
        let mut removed = Signature::new();
        for (i, &col) in bundle_cols.iter().enumerate() {
            let id = *src_ids
                .get(col as usize)
                .unwrap_or_else(|| panic!("{at:?}: remove edge element {i} has no column"));
            expected.remove(id);
            removed.insert(id);
        }
        assert_eq!(
            dst.signature(),
            &expected,
            "{at:?}: remove edge target is not the source minus the bundle"
        );
        assert_eq!(
            target == at,
            bundle_cols.is_empty(),
            "{at:?}: remove edge loops unless the bundle is empty"
        );
        assert_eq!(src_to_dst.len(), src_ids.len());
        for (c, &id) in src_ids.iter().enumerate() {
            let want = if removed.contains(id) {
                REMOVED
            } else {
                dst.column(id).expect("kept ids are in the target") as u32
            };
            assert_eq!(src_to_dst[c], want, "{at:?}: remove edge column map");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph with edges `{} -> {u32} -> {u32, u8}` and back, built against `components`.
    fn graph(components: &mut Components) -> Archetypes {
        let mut graph = Archetypes::new(ChunkSizing::fixed(256));
        let one = graph
            .insert_edge::<(u32,)>(ArchetypeId::EMPTY, components)
            .0
            .target;
        let two = graph.insert_edge::<(u8,)>(one, components).0.target;
        graph.insert_edge::<(u32,)>(two, components); // overwrites: loops
        graph.remove_edge::<(u8,)>(two, components);
        graph.remove_edge::<(char,)>(two, components); // missing
        graph.remove_edge::<()>(two, components); // empty: loops
        graph
    }

    /// A component type per `I`, so each insert below reaches a new archetype.
    struct N<const I: usize>(usize);

    /// Adds an `N<I>` to each entity. The first insert builds an edge to a new archetype, which
    /// may reallocate the archetype list while `World::insert` holds the row's chunk address.
    fn add<const I: usize>(world: &mut crate::World, entities: &[crate::Entity]) {
        for (k, &e) in entities.iter().enumerate() {
            world.insert_one(e, N::<I>(k)).unwrap();
        }
        world.check_invariants();
    }

    #[test]
    fn row_addresses_survive_the_archetype_list_growing() {
        // `Chunk` invariant 4: moving `Archetype` values does not move their chunks' blocks.
        // Under Miri a stale address would be a use-after-free; natively `holds_addr` asserts.
        let mut world = crate::World::with_test_chunk_size(256);
        let entities: Vec<_> = (0..5)
            .map(|k| world.spawn((k.to_string(), k as u8)))
            .collect();
        let before = world.archetypes().len();
        add::<0>(&mut world, &entities);
        add::<1>(&mut world, &entities);
        add::<2>(&mut world, &entities);
        add::<3>(&mut world, &entities);
        add::<4>(&mut world, &entities);
        add::<5>(&mut world, &entities);
        add::<6>(&mut world, &entities);
        add::<7>(&mut world, &entities);
        add::<8>(&mut world, &entities);
        assert_eq!(world.archetypes().len(), before + 9);
        for (k, &e) in entities.iter().enumerate() {
            assert_eq!(world.get::<String>(e), Ok(&k.to_string()));
            assert_eq!(world.get::<N<0>>(e).map(|n| n.0), Ok(k));
            assert_eq!(world.get::<N<8>>(e).map(|n| n.0), Ok(k));
            assert_eq!(
                world.remove::<(N<4>, String)>(e).map(|(n, s)| (n.0, s)),
                Ok((k, k.to_string()))
            );
        }
        world.check_invariants();
    }

    #[test]
    fn check_accepts_the_graph_it_builds() {
        let mut components = Components::default();
        graph(&mut components).check(&components);
    }

    #[test]
    #[should_panic(expected = "insert edge target is not the source plus the bundle")]
    fn check_catches_an_edge_to_the_wrong_archetype() {
        let mut components = Components::default();
        let mut graph = graph(&mut components);
        // `{} + (u32,)` pointed at `{u32, u8}`, whose column 0 is still `u32`.
        graph.edges[0].insert.list[0].target = ArchetypeId::new(2);
        graph.check(&components);
    }

    #[test]
    #[should_panic(expected = "remove edge column map")]
    fn check_catches_a_remove_edge_that_keeps_a_removed_column() {
        let mut components = Components::default();
        let mut graph = graph(&mut components);
        let RemoveEdge::Move { src_to_dst, .. } = &mut graph.edges[2].remove.list[0] else {
            panic!("`{{u32, u8}} - (u8,)` is a move");
        };
        let u8_col = graph.list[2]
            .column(components.id::<u8>().unwrap())
            .unwrap();
        src_to_dst[u8_col] = 0;
        graph.check(&components);
    }

    #[test]
    #[should_panic(expected = "type of column 0")]
    fn check_catches_columns_that_disagree_with_the_registry() {
        let mut components = Components::default();
        let graph = graph(&mut components);
        // Another world's registry, where id 0 is a `u64` rather than a `u32`.
        let mut other = Components::default();
        other.register::<u64>();
        other.register::<u8>();
        graph.check(&other);
    }

    #[test]
    #[should_panic(expected = "has unregistered component")]
    fn check_catches_columns_missing_from_the_registry() {
        let mut components = Components::default();
        let graph = graph(&mut components);
        graph.check(&Components::default());
    }
}
