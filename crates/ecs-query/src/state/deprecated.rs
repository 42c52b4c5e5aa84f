//! The unchecked `_at` entry points of earlier releases, kept one release as deprecated
//! forwarders to [`QueryRun`]: `state.for_each_at::<D>(world, ticks, f)` is
//! `QueryRun::<Q, F, D>::new(state, world, ticks).for_each(f)`. Each safety contract is
//! [`QueryRun::new`]'s.

use ecs_core::{Entity, World};

use super::{QueryState, RunTicks};
use crate::chunk_view::ChunkView;
use crate::error::QueryError;
use crate::fetch::WorldQuery;
use crate::filter::QueryFilter;
use crate::iter::QueryIter;
use crate::run::QueryRun;

impl<Q: WorldQuery, F: QueryFilter> QueryState<Q, F> {
    /// [`QueryRun::iter`] of the run `ticks`, yielding the items of `D`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares, for as long as `'w`.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).iter()`")]
    pub unsafe fn iter_at<'w, 's, D>(
        &'s self,
        world: &'w World,
        ticks: RunTicks,
    ) -> QueryIter<'w, 's, Q, F, D>
    where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F, D>::new(self, world, ticks) }.iter()
    }

    /// [`QueryRun::for_each`] of the run `ticks`, yielding the items of `D`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares, for as long as `'w`.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).for_each(f)`")]
    pub unsafe fn for_each_at<'w, D>(
        &self,
        world: &'w World,
        ticks: RunTicks,
        f: impl FnMut(D::Item<'w>),
    ) where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F, D>::new(self, world, ticks) }.for_each(f);
    }

    /// [`QueryRun::for_each_chunk`] of the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).for_each_chunk(f)`")]
    pub unsafe fn for_each_chunk_at(
        &self,
        world: &World,
        ticks: RunTicks,
        f: impl FnMut(ChunkView<'_, Q>),
    ) {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.for_each_chunk(f);
    }

    /// [`QueryRun::get`] of the run `ticks`, the item of `D`.
    ///
    /// # Errors
    /// [`QueryError::NoSuchEntity`] or [`QueryError::NoMatch`].
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares, while the item lives.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).get(entity)`")]
    pub unsafe fn get_at<'w, D>(
        &self,
        world: &'w World,
        ticks: RunTicks,
        entity: Entity,
    ) -> Result<D::Item<'w>, QueryError>
    where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F, D>::new(self, world, ticks) }.get(entity)
    }

    /// Whether `entity` is alive and matched in the run `ticks`.
    #[deprecated(note = "use `QueryRun::contains`")]
    pub fn contains_at(&self, world: &World, ticks: RunTicks, entity: Entity) -> bool {
        self.run_find(world, ticks, entity).is_ok()
    }

    /// [`QueryRun::par_for_each`] of the run `ticks`, yielding the items of `D`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the access `D` declares, for the duration of the call.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).par_for_each(f)`")]
    pub unsafe fn par_for_each_at<D>(
        &self,
        world: &World,
        ticks: RunTicks,
        f: impl Fn(D::Item<'_>) + Send + Sync,
    ) where
        D: WorldQuery<ArchetypeFetch = Q::ArchetypeFetch>,
    {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F, D>::new(self, world, ticks) }.par_for_each(f);
    }

    /// [`QueryRun::par_for_each_init`] of the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).par_for_each_init(init, f)`")]
    pub unsafe fn par_for_each_init_at<S>(
        &self,
        world: &World,
        ticks: RunTicks,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.par_for_each_init(init, f);
    }

    /// [`QueryRun::par_for_each_collect`] of the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).par_for_each_collect(init, f)`")]
    pub unsafe fn par_for_each_collect_at<S: Send>(
        &self,
        world: &World,
        ticks: RunTicks,
        init: impl Fn() -> S + Send + Sync,
        f: impl Fn(&mut S, Q::Item<'_>) + Send + Sync,
    ) -> Vec<S> {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.par_for_each_collect(init, f)
    }

    /// [`QueryRun::par_for_each_chunk`] of the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    #[deprecated(note = "use `QueryRun::new(state, world, ticks).par_for_each_chunk(f)`")]
    pub unsafe fn par_for_each_chunk_at(
        &self,
        world: &World,
        ticks: RunTicks,
        f: impl Fn(ChunkView<'_, Q>) + Send + Sync,
    ) {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.par_for_each_chunk(f);
    }

    /// [`QueryRun::par_fold`] of the run `ticks`.
    ///
    /// # Safety
    /// [`QueryRun::new`]'s contract, for the duration of the call.
    #[deprecated(
        note = "use `QueryRun::new(state, world, ticks).par_fold(identity, fold, reduce)`"
    )]
    pub unsafe fn par_fold_at<T: Send>(
        &self,
        world: &World,
        ticks: RunTicks,
        identity: impl Fn() -> T + Send + Sync,
        fold: impl Fn(T, Q::Item<'_>) -> T + Send + Sync,
        reduce: impl Fn(T, T) -> T,
    ) -> T {
        // SAFETY: this fn's contract is `QueryRun::new`'s.
        unsafe { QueryRun::<Q, F>::new(self, world, ticks) }.par_fold(identity, fold, reduce)
    }
}
