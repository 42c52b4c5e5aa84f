//! Systems: functions whose parameters are [`SystemParam`](param::SystemParam)s, and exclusive `&mut World`
//! functions, behind one object-safe [`System`] trait.
//!
//! This folder owns what a system is and what it may touch: the trait and its boxing
//! (`boxed.rs`), function systems (`function.rs`), the access set each one declares
//! (`access.rs`, the [`SystemAccess`](access::SystemAccess) the schedule orders systems by), the parameters
//! (`param.rs` with `Res` / `ResMut` / `Local` / `&World`, `query.rs`, `single.rs`,
//! `param_set.rs`), their state per world (`per_world.rs`), run conditions (`condition.rs`) and
//! one-shot systems run by hand (`one_shot.rs`). It knows nothing of the schedule that runs
//! systems (`schedule/`, above it); commands and saved state are below it.

pub(crate) mod access;
#[expect(
    unsafe_code,
    reason = "runs systems through the unsafe shared-world entry point"
)]
mod boxed;
#[expect(
    unsafe_code,
    reason = "evaluates run conditions through the unsafe shared-world entry point"
)]
pub(crate) mod condition;
#[expect(
    unsafe_code,
    reason = "runs systems through the unsafe shared-world entry point"
)]
mod function;
pub(crate) mod one_shot;
#[expect(
    unsafe_code,
    reason = "hands out component and resource access through &World"
)]
pub(crate) mod param;
#[expect(
    unsafe_code,
    reason = "hands out one member's item at a time through &World"
)]
pub(crate) mod param_set;
mod per_world;
#[expect(
    unsafe_code,
    reason = "hands out query items through &World under the schedule's access guarantee"
)]
pub(crate) mod query;
#[expect(
    unsafe_code,
    reason = "implements the unsafe SystemParam trait for Single and Populated"
)]
pub(crate) mod single;

pub(crate) use boxed::{default_name, validate_exclusive, SyncPoint};
pub use boxed::{Exclusive, IntoSystem, System};
pub use function::SystemParamFunction;
pub(crate) use function::{declare_params, init_params_for, load_param_state, save_param_state};
