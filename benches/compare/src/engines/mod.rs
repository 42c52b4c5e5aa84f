//! One module per engine; each `prepare(workload)` builds the engine's world for the workload
//! (untimed) and returns the timed iteration, written the way that engine's docs recommend.

pub mod bevy;
pub mod hecs;
pub mod legion;
pub mod ours;
pub mod raw;
