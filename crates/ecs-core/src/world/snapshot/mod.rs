//! The `World` side of snapshots: registering types for them, taking one, restoring one, and
//! the live world's state hash. What a snapshot holds, its byte form and its registry are
//! `crate::snapshot`'s, which knows nothing of `World`.

#[expect(
    unsafe_code,
    reason = "clones column values out of chunks into a snapshot's columns"
)]
mod capture;
mod registry;
#[expect(
    unsafe_code,
    reason = "compares and copies entity ids and column values between a snapshot and chunks"
)]
mod restore;
#[expect(unsafe_code, reason = "hashes cloned column values read in place")]
mod state_hash;
