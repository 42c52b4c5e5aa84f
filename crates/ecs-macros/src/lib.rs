//! Derives for the `ecs` engine: `#[derive(Bundle)]` for a named struct of components,
//! `#[derive(Query)]` for a named struct of query elements, and `#[derive(SystemParam)]` for a
//! named struct of system parameters. Use them through the facade
//! (`use ecs::prelude::*;` brings them all), which this crate's generated code names as `::ecs`.
//!
//! `#[derive(Query)]` and `#[derive(SystemParam)]` delegate to the tuple of the struct's field
//! types, in declaration order: the tuple impls in `ecs-query` / `ecs-sched` do the unsafe work,
//! and the generated impls only convert between the struct and that tuple, so a derived query
//! behaves exactly as its tuple. `#[derive(Bundle)]` writes each field to its column slot
//! itself, so that `#[bundle]` fields can be flattened in place and no tuple arity limits the
//! field count (see `bundle.rs` for its invariants).
//!
//! `#[derive(Pod)]`, `#[derive(Zeroable)]`, `#[derive(NoUninit)]` and
//! `#[derive(CheckedBitPattern)]` are bytemuck's, reached through the facade (`pod.rs` says how
//! every check stays bytemuck's own).
//!
//! Crates that depend on `ecs-core` / `ecs-query` directly and not on `ecs` point the derives
//! at a module shaped like the facade (with `core` and `query` in it):
//!
//! ```ignore
//! mod shim { pub use ecs_core as core; pub use ecs_query as query; }
//! #[derive(ecs_macros::Bundle)]
//! #[ecs(crate = crate::shim)]
//! struct Body { position: Position, velocity: Velocity }
//! ```

mod attrs;
mod bundle;
mod pod;
mod query;
mod system_param;

use proc_macro::TokenStream;

/// Derives `Bundle` for a struct with named fields, each a component or, marked `#[bundle]`, a
/// bundle whose components are flattened into this one; see the `ecs` facade's documentation of
/// `Bundle` for examples.
#[proc_macro_derive(Bundle, attributes(ecs, bundle))]
pub fn derive_bundle(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    bundle::derive(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `WorldQuery` (and `ReadOnlyQuery` / `ExactQuery` where its fields are) for a struct
/// with named fields, each a query element, plus a `<Name>Item<'w>` struct with the same field
/// names holding the items; see the `ecs` facade's documentation of `Query`.
#[proc_macro_derive(Query, attributes(ecs))]
pub fn derive_query(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    query::derive(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives `SystemParam` for a struct of system parameters (lifetimes `'w` and `'s`, as in
/// bevy): its access is the union of its fields' (a conflict between two fields is refused as
/// between two parameters of one function), and each run builds it from its fields' items.
#[proc_macro_derive(SystemParam, attributes(ecs))]
pub fn derive_system_param(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    system_param::derive(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

macro_rules! bytemuck_derive {
    ($(#[$doc:meta])* $name:ident, $fn:ident) => {
        $(#[$doc])*
        #[proc_macro_derive($name, attributes(ecs, bytemuck))]
        pub fn $fn(input: TokenStream) -> TokenStream {
            let input = syn::parse_macro_input!(input as syn::DeriveInput);
            pod::derive(input, pod::Trait::$name)
                .unwrap_or_else(syn::Error::into_compile_error)
                .into()
        }
    };
}

bytemuck_derive!(
    /// bytemuck's `#[derive(Pod)]` through the facade: the same checks (`repr(C)` or
    /// `transparent`, every field `Pod`, no padding), no `bytemuck` dependency needed.
    Pod,
    derive_pod
);
bytemuck_derive!(
    /// bytemuck's `#[derive(Zeroable)]` through the facade: every field `Zeroable`.
    Zeroable,
    derive_zeroable
);
bytemuck_derive!(
    /// bytemuck's `#[derive(NoUninit)]` through the facade: no padding, every field
    /// `NoUninit` (also a fieldless enum with an integer `repr`).
    NoUninit,
    derive_no_uninit
);
bytemuck_derive!(
    /// bytemuck's `#[derive(CheckedBitPattern)]` through the facade: a fieldless enum with an
    /// integer `repr`, or a `repr(C)` struct of such fields, read back only from valid bits.
    CheckedBitPattern,
    derive_checked_bit_pattern
);

/// Declares `#[bytemuck(..)]` as an attribute and derives nothing: bytemuck's own
/// `CheckedBitPattern` derive reads `#[bytemuck(crate = ..)]` without declaring it, so the
/// shadow `pod.rs` emits carries this beside it.
#[doc(hidden)]
#[proc_macro_derive(BytemuckAttribute, attributes(bytemuck))]
pub fn derive_bytemuck_attribute(_: TokenStream) -> TokenStream {
    TokenStream::new()
}
