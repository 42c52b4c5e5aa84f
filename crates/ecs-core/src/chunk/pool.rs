//! Where chunk memory comes from: large blocks, carved into chunks and recycled per world.
//!
//! A million entities at 16 KiB per chunk are about 2,000 chunks. Allocated one by one with
//! `malloc`, what spawning, despawning and dropping a world cost depends on the allocator's
//! state (glibc serves 16 KiB from its heap, below the mmap threshold, and trims it back to
//! the system only past another threshold). A [`ChunkPool`] instead allocates *blocks* of
//! [`BLOCK_BYTES`] (2 MiB, aligned to 2 MiB so that one transparent huge page can back each;
//! on Linux the block is advised with `MADV_HUGEPAGE`), hands out chunk-sized *slots* from
//! them, takes freed slots back, and returns a block to the system once every slot of it is
//! free again (keeping one empty block per size class so that a world that shrinks and grows
//! at a block boundary does not map and unmap each frame).
//!
//! Empty 2 MiB blocks of a dropped world go to a small process-wide cache (up to 64 MiB)
//! that the next world's pool draws from first, so building a world after dropping one does
//! not fault and zero its pages again; `release_empty` empties that cache too.
//!
//! Each world owns one pool (its archetype graph holds it; every chunk holds a counted
//! reference, so the pool outlives the last chunk carved from it, whichever is dropped
//! first). Chunks of different sizes or alignments come from separate *classes* of blocks.
//! Slots are handed out lowest block first and, within a block, lowest address first, so a
//! batch of new chunks lies in consecutive memory and a half-empty block drains rather than
//! being refilled at random.
//!
//! # Colouring
//! Slots of chunks from 4 KiB to 64 KiB lie one alignment unit (64 bytes unless a column asks
//! for more) further apart than their size, so a 2 MiB block of 16 KiB chunks holds 127 slots,
//! not 128. Without that gap the same column of every chunk starts at the same offset modulo
//! 16 KiB, and every such address falls in the same few sets of a set-indexed cache: a 16 KiB
//! stride meets one set of a 12-way, 4 KiB-per-way L1 and four sets of a 16-way, 64 KiB-per-way
//! L2, so a loop over many small archetypes (one chunk each, a few rows of a column touched)
//! keeps at most 48 or 64 of those lines, misses the rest and goes to L3 every pass. With
//! the gap, slot `i`'s columns shift by `64 i` bytes, and the same column of 127 chunks
//! spreads over 127 L2 sets (docs/performance.md, "Design measurements"). Larger chunks are
//! streams, where the sets do not matter, and their blocks hold too few slots to give one up.
//!
//! Chunk sizes below 4 KiB (tests and fuzzing use 128–256 bytes) get blocks of 64 slots, so a
//! test world does not map 2 MiB; a chunk larger than a block gets a block of its own.
//!
//! # Invariants
//! 1. Every block of a class is a live allocation of that class's `block` layout, keyed in
//!    `blocks` by its address; slot `i` of it spans `addr + i * stride .. + chunk_size`, and
//!    `slots * stride <= block.size()`.
//! 2. Each slot of a block is either on that block's `free` list (once) or handed out by
//!    [`ChunkPool::alloc`] and not yet given back; `used == slots - free.len()`.
//! 3. A class's `partial` set holds exactly the addresses of its blocks with a free slot that
//!    are not `draining`.
//! 4. Outside a compaction, at most one block per class has `used == 0` (`empty` counts the
//!    empty blocks, draining or not).
//! 5. The process cache holds only blocks no pool holds (see `BlockCache`).
//! 6. `draining` is a subset of `blocks`, and empty outside a compaction
//!    ([`ChunkPool::begin_compaction`] .. [`ChunkPool::end_compaction`]).
//!
//! # Compaction
//! Despawning frees chunks from the end of each archetype, so after a world shrinks its
//! chunks can be spread thinly over many blocks (archetypes whose chunks were carved in
//! turns leave every block partly used). `World::compact` asks the pool which blocks to
//! empty: per class it keeps the fewest, fullest blocks that can hold every chunk in use
//! (`ceil(used / slots)` of them) and marks the others *draining*. Draining blocks hand out no
//! slot; each chunk in one moves its bytes to a slot of a kept block
//! ([`ChunkPool::relocation_target`]), and a draining block is returned to the system as soon
//! as its last slot is freed. The kept blocks have room by construction: `k` fullest blocks
//! of `slots` each have at least `k * slots - used_kept >= used - used_kept` free slots.

use std::alloc::{self, Layout};
use std::collections::{BTreeMap, BTreeSet};
use std::ptr::NonNull;
use std::sync::Mutex;

/// The size (and alignment) of a block of chunks: one x86-64 / AArch64 huge page.
pub const BLOCK_BYTES: usize = 2 * 1024 * 1024;

/// Blocks of at least this many slots space their slots one alignment unit apart (see
/// "Colouring"); blocks of fewer, larger chunks would lose too large a share to the gap.
const COLOURED_SLOTS: usize = 32;

/// Chunk sizes below this get small blocks of [`SMALL_BLOCK_SLOTS`] slots.
const SMALL_CHUNK: usize = 4096;
const SMALL_BLOCK_SLOTS: usize = 64;

/// A world's supply of chunk memory. See the module docs.
#[derive(Default)]
pub struct ChunkPool {
    /// Size classes by chunk layout (`chunk_size`, alignment). A lock, not `&mut`: chunks hand
    /// their memory back from `Drop`, and a chunk may be dropped wherever its archetype is.
    /// Every caller holds `&mut World` (or is dropping it), so the lock is never contended.
    classes: Mutex<Vec<Class>>,
}

/// What a pool holds, for reports and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Blocks allocated from the system.
    pub blocks: usize,
    /// Bytes of those blocks.
    pub block_bytes: usize,
    /// Slots handed out as chunks.
    pub chunks: usize,
    /// Slots free for the next chunks.
    pub free_slots: usize,
    /// Bytes of emptied blocks this pool has given back to the system, ever.
    pub bytes_returned: usize,
    /// Bytes of emptied blocks this pool has given to the process's block cache
    /// ([`ChunkPool::process_cache_bytes`]) instead, ever.
    pub bytes_cached: usize,
}

struct Class {
    chunk: Layout,
    stride: usize,
    slots: usize,
    block: Layout,
    blocks: BTreeMap<usize, Block>,
    partial: BTreeSet<usize>,
    empty: usize,
    /// Blocks being emptied by a compaction (invariant 6).
    draining: BTreeSet<usize>,
    /// Bytes of released blocks that went back to the system / into the process cache.
    returned: usize,
    cached: usize,
}

struct Block {
    /// The block's allocation; slot `i` starts `i * stride` bytes past it.
    base: NonNull<u8>,
    /// Free slot indices; popped from the end, so kept in descending order when fresh.
    free: Vec<u32>,
    used: usize,
}

// SAFETY: a block is memory its pool owns (invariant 1); the pool's lock orders every access
// to its bookkeeping, and the chunks carved from it are `Send` on their own terms.
unsafe impl Send for Block {}

impl ChunkPool {
    /// Memory for one chunk of layout `chunk`: `chunk.size()` bytes aligned to `chunk.align()`.
    ///
    /// The caller gives it back with [`ChunkPool::free`] and the same layout.
    pub(crate) fn alloc(&self, chunk: Layout) -> NonNull<u8> {
        let mut classes = self.lock();
        let class = match classes.iter().position(|c| c.chunk == chunk) {
            Some(at) => &mut classes[at],
            None => {
                classes.push(Class::new(chunk));
                classes.last_mut().expect("just pushed")
            }
        };
        class.alloc()
    }

    /// Takes back a chunk's memory.
    ///
    /// # Safety
    /// `ptr` came from [`ChunkPool::alloc`] on this pool with the same `chunk` layout, and is
    /// not used after this call (nor given back twice).
    pub(crate) unsafe fn free(&self, ptr: NonNull<u8>, chunk: Layout) {
        debug_assert_eq!(
            ptr.as_ptr().align_offset(chunk.align()),
            0,
            "not a chunk's address"
        );
        let mut classes = self.lock();
        let class = classes
            .iter_mut()
            .find(|c| c.chunk == chunk)
            .expect("a chunk returns to the class it came from");
        // SAFETY: the caller's contract, passed on.
        unsafe { class.free(ptr) };
    }

    /// Blocks, bytes and slots the pool holds now.
    pub fn stats(&self) -> PoolStats {
        let classes = self.lock();
        let mut stats = PoolStats::default();
        for class in classes.iter() {
            stats.blocks += class.blocks.len();
            stats.block_bytes += class.blocks.len() * class.block.size();
            stats.bytes_returned += class.returned;
            stats.bytes_cached += class.cached;
            for block in class.blocks.values() {
                stats.chunks += block.used;
                stats.free_slots += block.free.len();
            }
        }
        stats
    }

    /// Heap bytes of the pool's own bookkeeping (block records and free-slot lists), for the
    /// layout report.
    pub fn bookkeeping_bytes(&self) -> usize {
        let classes = self.lock();
        let node = size_of::<(usize, Block)>() + 2 * size_of::<usize>();
        classes.capacity() * size_of::<Class>()
            + classes
                .iter()
                .flat_map(|c| c.blocks.values())
                .map(|b| node + b.free.capacity() * size_of::<u32>())
                .sum::<usize>()
    }

    /// Returns every block with no chunk in use to the system (the one per class kept for
    /// reuse included), and empties the process's cache of blocks kept between worlds;
    /// returns the bytes freed.
    pub fn release_empty(&self) -> usize {
        let mut classes = self.lock();
        let own: usize = classes.iter_mut().map(Class::release_empty).sum();
        own + BlockCache::clear()
    }

    /// Bytes of empty 2 MiB blocks the process keeps between worlds (at most
    /// 32 of them): memory the allocator sees as in use that no world's report
    /// counts, since no world holds it. Process-wide.
    ///
    /// ```
    /// # use ecs_core::{ChunkPool, World};
    /// let mut world = World::new();
    /// world.spawn_batch((0..100_000u64).map(|i| (i,))).for_each(drop);
    /// drop(world); // its blocks go to the process cache
    /// assert!(ChunkPool::process_cache_bytes() > 0 || cfg!(miri));
    /// ChunkPool::drain_process_cache();
    /// assert_eq!(ChunkPool::process_cache_bytes(), 0);
    /// ```
    pub fn process_cache_bytes() -> usize {
        BlockCache::lock().len() * BLOCK_BYTES
    }

    /// Bytes of this pool's blocks the kernel backs with transparent huge pages (Linux, from
    /// `/proc/self/smaps`; `None` elsewhere or if it cannot be read). Blocks are 2 MiB and
    /// 2 MiB-aligned and the pool asks for huge pages (`madvise`), but whether it gets them is
    /// the kernel's choice (`/sys/kernel/mm/transparent_hugepage/enabled`).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn_batch((0..100_000u64).map(|i| (i,))).for_each(drop);
    /// let stats = world.chunk_pool().stats();
    /// if let Some(huge) = world.chunk_pool().huge_page_bytes() {
    ///     assert!(huge <= stats.block_bytes);
    /// }
    /// ```
    pub fn huge_page_bytes(&self) -> Option<usize> {
        let ranges: Vec<(usize, usize)> = self
            .lock()
            .iter()
            .flat_map(|class| {
                let size = class.block.size();
                class.blocks.keys().map(move |&addr| (addr, addr + size))
            })
            .collect();
        crate::chunk::huge_pages::backed_bytes(&ranges)
    }

    /// Gives every block of the process cache back to the system; returns the bytes freed.
    pub fn drain_process_cache() -> usize {
        BlockCache::clear()
    }

    /// Bytes of blocks a compaction would give back if `spare(chunk layout)` chunks of each
    /// class were freed first: per class, every block beyond `ceil(used / slots)`.
    pub(crate) fn compactable_bytes(&self, spare: impl Fn(Layout) -> usize) -> usize {
        self.lock()
            .iter()
            .map(|class| {
                let used: usize = class.blocks.values().map(|b| b.used).sum();
                let keep = used
                    .saturating_sub(spare(class.chunk))
                    .div_ceil(class.slots);
                class.blocks.len().saturating_sub(keep) * class.block.size()
            })
            .sum()
    }

    /// Starts a compaction: marks, per class, the blocks to empty (see the module docs), so
    /// that no new chunk is carved from them. Returns how many chunks sit in them, which
    /// [`ChunkPool::relocation_target`] will move out.
    pub(crate) fn begin_compaction(&self) -> usize {
        self.lock().iter_mut().map(Class::begin_draining).sum()
    }

    /// During a compaction, a new slot for the chunk at `ptr` (of layout `chunk`) if its block
    /// is being emptied, else `None`. The caller copies the chunk there and frees `ptr`.
    ///
    /// # Panics
    /// If `ptr` was not handed out by this pool for `chunk`.
    pub(crate) fn relocation_target(&self, ptr: NonNull<u8>, chunk: Layout) -> Option<NonNull<u8>> {
        let mut classes = self.lock();
        let class = classes
            .iter_mut()
            .find(|c| c.chunk == chunk)
            .expect("a chunk belongs to the class it came from");
        let addr = class.block_of(ptr);
        class.draining.contains(&addr).then(|| class.alloc())
    }

    /// Ends a compaction: blocks still marked draining (none, if every chunk moved) take
    /// slots again, and every empty block goes back to the system (the process cache is left
    /// alone). Returns the bytes freed by this call.
    pub(crate) fn end_compaction(&self) -> usize {
        let mut classes = self.lock();
        for class in classes.iter_mut() {
            for addr in std::mem::take(&mut class.draining) {
                if class.blocks.get(&addr).is_some_and(|b| !b.free.is_empty()) {
                    class.partial.insert(addr);
                }
            }
        }
        classes.iter_mut().map(Class::release_empty).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Class>> {
        // A panic while the lock was held cannot leave a class half-updated in a way that
        // matters here: every update is a few pushes and pops that do not unwind.
        self.classes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for ChunkPool {
    fn drop(&mut self) {
        let classes = self
            .classes
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for class in classes.iter_mut() {
            debug_assert!(
                class.blocks.values().all(|b| b.used == 0),
                "every chunk holds the pool alive"
            );
            let blocks: Vec<usize> = class.blocks.keys().copied().collect();
            for addr in blocks {
                class.release(addr, false);
            }
        }
    }
}

impl Class {
    fn new(chunk: Layout) -> Self {
        let mut stride = chunk.size().next_multiple_of(chunk.align());
        if stride >= SMALL_CHUNK && BLOCK_BYTES / stride >= COLOURED_SLOTS && chunk.align() <= 256 {
            // One alignment unit (a cache line, usually) between slots: see "Colouring".
            stride += chunk.align();
        }
        let (slots, bytes, align) = if stride < SMALL_CHUNK {
            (SMALL_BLOCK_SLOTS, stride * SMALL_BLOCK_SLOTS, chunk.align())
        } else if stride <= BLOCK_BYTES {
            (BLOCK_BYTES / stride, BLOCK_BYTES, BLOCK_BYTES)
        } else {
            (1, stride, chunk.align().max(BLOCK_BYTES))
        };
        Self {
            chunk,
            stride,
            slots,
            block: Layout::from_size_align(bytes, align).expect("block layout is valid"),
            blocks: BTreeMap::new(),
            partial: BTreeSet::new(),
            empty: 0,
            draining: BTreeSet::new(),
            returned: 0,
            cached: 0,
        }
    }

    /// The address of the block holding slot `ptr`.
    fn block_of(&self, ptr: NonNull<u8>) -> usize {
        let at = ptr.as_ptr() as usize;
        let (&addr, _) = self
            .blocks
            .range(..=at)
            .next_back()
            .expect("a slot lies in one of its class's blocks");
        debug_assert!(at < addr + self.slots * self.stride);
        addr
    }

    /// Marks every block but the `ceil(used / slots)` fullest as draining (ties: lower
    /// address kept, as slots are handed out lowest first); returns the chunks in them.
    fn begin_draining(&mut self) -> usize {
        let used: usize = self.blocks.values().map(|b| b.used).sum();
        let keep = used.div_ceil(self.slots);
        let mut order: Vec<(usize, usize)> = self
            .blocks
            .iter()
            .map(|(&addr, b)| (b.used, addr))
            .collect();
        order.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        let mut moving = 0;
        for &(used, addr) in &order[keep..] {
            self.draining.insert(addr);
            self.partial.remove(&addr);
            moving += used;
        }
        moving
    }

    fn alloc(&mut self) -> NonNull<u8> {
        let addr = match self.partial.first() {
            Some(&addr) => addr,
            None => self.new_block(),
        };
        let block = self.blocks.get_mut(&addr).expect("invariant 3");
        let slot = block
            .free
            .pop()
            .expect("invariant 3: a partial block has a free slot");
        if block.used == 0 {
            self.empty -= 1;
        }
        block.used += 1;
        if block.free.is_empty() {
            self.partial.remove(&addr);
        }
        // SAFETY: the slot lies inside the block's allocation (invariant 1).
        unsafe { block.base.add(slot as usize * self.stride) }
    }

    /// # Safety
    /// As [`ChunkPool::free`].
    unsafe fn free(&mut self, ptr: NonNull<u8>) {
        let at = ptr.as_ptr() as usize;
        let addr = self.block_of(ptr);
        let block = self.blocks.get_mut(&addr).expect("`block_of` found it");
        let slot = ((at - addr) / self.stride) as u32;
        debug_assert!(!block.free.contains(&slot), "slot {slot} freed twice");
        block.free.push(slot);
        block.used -= 1;
        let emptied = block.used == 0;
        if self.draining.contains(&addr) {
            if emptied {
                // The compaction emptied it: straight back to the system.
                self.empty += 1;
                self.draining.remove(&addr);
                self.release(addr, true);
            }
            return;
        }
        self.partial.insert(addr);
        if emptied {
            self.empty += 1;
            if self.empty > 1 {
                self.release(addr, false);
            }
        }
    }

    fn new_block(&mut self) -> usize {
        let base = match BlockCache::take(self.block) {
            Some(base) => base,
            None => {
                // SAFETY: the block layout has a non-zero size (a chunk is at least 128 bytes).
                let raw = unsafe { alloc::alloc(self.block) };
                let Some(base) = NonNull::new(raw) else {
                    alloc::handle_alloc_error(self.block)
                };
                advise_huge_pages(base, self.block);
                base
            }
        };
        let addr = base.as_ptr() as usize;
        self.blocks.insert(
            addr,
            Block {
                base,
                free: (0..self.slots as u32).rev().collect(),
                used: 0,
            },
        );
        self.partial.insert(addr);
        self.empty += 1;
        addr
    }

    /// Gives the empty block at `addr` to the process's block cache or, if `to_system` or the
    /// cache is full, back to the system. Returns the bytes given back to the system.
    fn release(&mut self, addr: usize, to_system: bool) -> usize {
        let block = self.blocks.remove(&addr).expect("a block of this class");
        debug_assert_eq!(block.used, 0);
        self.partial.remove(&addr);
        self.draining.remove(&addr);
        self.empty -= 1;
        // Invariant 1: `base` is a live allocation of `self.block`; no slot of it is handed
        // out (`used == 0`, invariant 2), and it has just left `blocks`.
        if !to_system && BlockCache::keep(block.base, self.block) {
            self.cached += self.block.size();
            return 0;
        }
        // SAFETY: invariant 1 (see the comment above: a live allocation of `self.block`, no
        // slot handed out, out of `blocks`), and the cache did not take it, so it is freed once.
        unsafe { alloc::dealloc(block.base.as_ptr(), self.block) };
        self.returned += self.block.size();
        self.block.size()
    }

    fn release_empty(&mut self) -> usize {
        let empty: Vec<usize> = self
            .blocks
            .iter()
            .filter(|(_, b)| b.used == 0)
            .map(|(&addr, _)| addr)
            .collect();
        empty.iter().map(|&addr| self.release(addr, true)).sum()
    }
}

/// Empty standard blocks (2 MiB, 2 MiB-aligned) kept between worlds: a program that drops a
/// world and builds another (a test suite, a rollback into a fresh world, a benchmark loop)
/// reuses pages the system has already backed instead of faulting and zeroing them again. At
/// most [`CACHED_BLOCKS`] blocks (64 MiB); beyond that, and on
/// [`ChunkPool::release_empty`], blocks go back to the system.
///
/// # Invariant
/// 5. Every pointer in the cache is a live allocation of [`BlockCache::LAYOUT`] that no pool
///    holds and nothing else refers to.
struct BlockCache;

/// How many empty 2 MiB blocks the process keeps between worlds.
pub const CACHED_BLOCKS: usize = 32;

struct CachedBlock(NonNull<u8>);

// SAFETY: a cached block is plain memory owned by the cache alone (invariant 5); which thread
// frees or reuses it does not matter.
unsafe impl Send for CachedBlock {}

static CACHE: Mutex<Vec<CachedBlock>> = Mutex::new(Vec::new());

impl BlockCache {
    const LAYOUT: Layout = match Layout::from_size_align(BLOCK_BYTES, BLOCK_BYTES) {
        Ok(layout) => layout,
        Err(_) => panic!("2 MiB is a valid size and alignment"),
    };

    fn lock() -> std::sync::MutexGuard<'static, Vec<CachedBlock>> {
        CACHE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A cached block for `layout`, if it is the standard one and the cache has one.
    fn take(layout: Layout) -> Option<NonNull<u8>> {
        if layout != Self::LAYOUT {
            return None;
        }
        Self::lock().pop().map(|b| b.0)
    }

    /// Keeps `block`, an empty block of `layout` that its pool gives up, if it is a standard
    /// block and there is room; `false` leaves it with the caller.
    fn keep(block: NonNull<u8>, layout: Layout) -> bool {
        if layout != Self::LAYOUT {
            return false;
        }
        let mut cache = Self::lock();
        if cache.len() >= CACHED_BLOCKS {
            return false;
        }
        cache.push(CachedBlock(block));
        true
    }

    /// Frees every cached block; returns the bytes freed.
    fn clear() -> usize {
        let blocks = std::mem::take(&mut *Self::lock());
        for block in &blocks {
            // SAFETY: invariant 5: a live allocation of `LAYOUT` that only the cache held, and
            // it has just left the cache.
            unsafe { alloc::dealloc(block.0.as_ptr(), Self::LAYOUT) };
        }
        blocks.len() * BLOCK_BYTES
    }
}

/// Asks Linux to back a 2 MiB-aligned block with transparent huge pages, where the system's
/// THP mode is `madvise` (the common default). A hint: failure changes nothing.
#[cfg(all(target_os = "linux", not(miri)))]
fn advise_huge_pages(ptr: NonNull<u8>, block: Layout) {
    if block.size() >= BLOCK_BYTES && block.align() >= BLOCK_BYTES {
        // SAFETY: `ptr .. ptr + size` is one live allocation of ours; MADV_HUGEPAGE changes
        // only how the kernel backs those pages, never their contents or validity.
        unsafe {
            libc::madvise(ptr.as_ptr().cast(), block.size(), libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(all(target_os = "linux", not(miri))))]
fn advise_huge_pages(_: NonNull<u8>, _: Layout) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(size: usize) -> Layout {
        Layout::from_size_align(size, 64).unwrap()
    }

    #[test]
    fn slots_are_distinct_aligned_and_consecutive() {
        let pool = ChunkPool::default();
        let layout = chunk(256);
        let ptrs: Vec<_> = (0..100).map(|_| pool.alloc(layout)).collect();
        for w in ptrs[..SMALL_BLOCK_SLOTS].windows(2) {
            assert_eq!(w[1].as_ptr() as usize - w[0].as_ptr() as usize, 256);
        }
        assert!(ptrs.iter().all(|p| p.as_ptr() as usize % 64 == 0));
        let stats = pool.stats();
        assert_eq!((stats.blocks, stats.chunks), (2, 100));
        for p in ptrs {
            // SAFETY: each came from this pool with this layout, freed once.
            unsafe { pool.free(p, layout) };
        }
        // One empty block stays for reuse.
        assert_eq!(pool.stats().blocks, 1);
        // (Plus whatever 2 MiB blocks other tests' dropped worlds left in the process cache.)
        assert!(pool.release_empty() >= 256 * SMALL_BLOCK_SLOTS);
        let stats = pool.stats();
        assert_eq!(
            (
                stats.blocks,
                stats.block_bytes,
                stats.chunks,
                stats.free_slots
            ),
            (0, 0, 0, 0)
        );
        // Both small blocks went back to the system (small blocks are never cached).
        assert_eq!(
            (stats.bytes_returned, stats.bytes_cached),
            (2 * 256 * SMALL_BLOCK_SLOTS, 0)
        );
    }

    #[test]
    fn freed_slots_are_reused_lowest_block_first() {
        let pool = ChunkPool::default();
        let layout = chunk(128);
        let ptrs: Vec<_> = (0..SMALL_BLOCK_SLOTS * 2)
            .map(|_| pool.alloc(layout))
            .collect();
        let victim = ptrs[3];
        // SAFETY: from this pool, freed once.
        unsafe { pool.free(victim, layout) };
        assert_eq!(pool.alloc(layout), victim);
        for p in ptrs {
            // SAFETY: from this pool, freed once.
            unsafe { pool.free(p, layout) };
        }
    }

    #[test]
    fn classes_are_kept_apart_and_large_chunks_get_their_own_block() {
        let pool = ChunkPool::default();
        let (small, big) = (chunk(512), chunk(BLOCK_BYTES + 4096));
        let a = pool.alloc(small);
        let b = pool.alloc(big);
        assert_eq!(pool.stats().blocks, 2);
        // The memory is usable to its last byte.
        // SAFETY: `b` is `big.size()` writable bytes handed out by the pool.
        unsafe { b.as_ptr().add(big.size() - 1).write(7) };
        // SAFETY: from this pool with these layouts, freed once.
        unsafe {
            pool.free(a, small);
            pool.free(b, big);
        }
    }
}
