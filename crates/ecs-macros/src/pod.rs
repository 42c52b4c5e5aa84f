//! `#[derive(Pod)]`, `#[derive(Zeroable)]`, `#[derive(NoUninit)]` and
//! `#[derive(CheckedBitPattern)]` through the facade, so an app needs no `bytemuck` dependency
//! of its own.
//!
//! bytemuck's derives name their crate `::bytemuck`, which an app without that dependency
//! cannot resolve. These derives leave every check to bytemuck's own: each emits a *shadow*
//! of the type (the same fields, variants and `repr`, nothing else) with bytemuck's derive on
//! it, pointed at the facade's copy of bytemuck, and implements the trait for the type itself
//! only on the strength of the shadow's. The invariant that makes that sound: a shadow has
//! the type's field types in the type's order under the type's `repr`, so wherever bytemuck
//! accepts the shadow (it requires `repr(C)`, `transparent`, `packed` or an integer `repr`
//! for all but `Zeroable`), the two have one layout; a `const` assertion compares their size
//! and alignment. `Zeroable` needs no layout: every field being `Zeroable` is what it rests
//! on, whatever the order. Generic types are refused: a shadow would need the type's
//! bounds; use bytemuck's derive with `#[bytemuck(crate = "ecs::bytemuck")]` for them.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::{Data, DeriveInput, Fields};

use crate::attrs::crate_path;

/// The bytemuck trait a derive implements.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Trait {
    Pod,
    Zeroable,
    NoUninit,
    CheckedBitPattern,
}

impl Trait {
    fn name(self) -> &'static str {
        match self {
            Trait::Pod => "Pod",
            Trait::Zeroable => "Zeroable",
            Trait::NoUninit => "NoUninit",
            Trait::CheckedBitPattern => "CheckedBitPattern",
        }
    }
}

pub fn derive(input: DeriveInput, which: Trait) -> syn::Result<TokenStream> {
    let ecs = crate_path(&input)?;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            format!(
                "`#[derive(ecs::{0})]` takes no generic types; for one, use \
                 `#[derive(ecs::bytemuck::{0})]` with `#[bytemuck(crate = \"ecs::bytemuck\")]`",
                which.name()
            ),
        ));
    }
    let ident = &input.ident;
    let shadow = shadow_of(&input, which);
    let shadow_ident = &shadow.ident;
    let bytemuck = quote!(#ecs::__private::bytemuck);
    let crate_attr = bytemuck.to_string().replace(' ', "");
    let derives = match which {
        Trait::Pod => {
            quote!(::core::clone::Clone, ::core::marker::Copy, #bytemuck::Zeroable, #bytemuck::Pod)
        }
        Trait::Zeroable => quote!(#bytemuck::Zeroable),
        Trait::NoUninit => quote!(::core::clone::Clone, ::core::marker::Copy, #bytemuck::NoUninit),
        Trait::CheckedBitPattern => quote!(
            ::core::clone::Clone,
            ::core::marker::Copy,
            #ecs::__private::BytemuckAttribute,
            #bytemuck::CheckedBitPattern
        ),
    };
    let same_layout = (which != Trait::Zeroable).then(|| {
        quote! {
            const _: () = ::core::assert!(
                ::core::mem::size_of::<#shadow_ident>() == ::core::mem::size_of::<#ident>()
                    && ::core::mem::align_of::<#shadow_ident>() == ::core::mem::align_of::<#ident>(),
                "a bytemuck shadow differs in layout from its type",
            );
        }
    });
    let implementation = match which {
        Trait::Pod => quote! {
            // SAFETY: bytemuck's derive accepted the shadow, which has this type's fields in
            // its order under its `repr`, hence its layout (asserted above).
            unsafe impl #bytemuck::Pod for #ident {}
        },
        Trait::Zeroable => quote! {
            // SAFETY: bytemuck's derive accepted the shadow, so every field type is
            // `Zeroable`, and so is a value of this type with every field zero.
            unsafe impl #bytemuck::Zeroable for #ident {}
        },
        Trait::NoUninit => quote! {
            // SAFETY: as for `Pod`: the shadow has this type's layout and bytemuck found no
            // padding or uninitialised byte in it.
            unsafe impl #bytemuck::NoUninit for #ident {}
        },
        Trait::CheckedBitPattern => quote! {
            // SAFETY: the shadow has this type's layout, so a bit pattern valid for it (its
            // checked `Bits`) is valid for this type.
            unsafe impl #bytemuck::CheckedBitPattern for #ident {
                type Bits = <#shadow_ident as #bytemuck::CheckedBitPattern>::Bits;

                #[inline]
                fn is_valid_bit_pattern(bits: &Self::Bits) -> bool {
                    <#shadow_ident as #bytemuck::CheckedBitPattern>::is_valid_bit_pattern(bits)
                }
            }
        },
    };
    Ok(quote! {
        const _: () = {
            #[derive(#derives)]
            #[bytemuck(crate = #crate_attr)]
            #[allow(dead_code, non_camel_case_types)]
            #shadow
            #same_layout
            #implementation
        };
    })
}

/// The shadow of `input`: its fields, variants, discriminants and `repr`, no other attribute,
/// private, under a name of its own.
fn shadow_of(input: &DeriveInput, which: Trait) -> DeriveInput {
    // Re-read rather than cloned: the syn build here has no `clone-impls`.
    let mut shadow: DeriveInput =
        syn::parse2(input.to_token_stream()).expect("a derive input reads back as itself");
    shadow.ident = format_ident!("__{}Shadow{}", which.name(), input.ident);
    shadow.vis = syn::Visibility::Inherited;
    shadow.attrs.retain(|attr| attr.path().is_ident("repr"));
    let strip = |fields: &mut Fields| {
        for field in fields.iter_mut() {
            field.attrs.clear();
            field.vis = syn::Visibility::Inherited;
        }
    };
    match &mut shadow.data {
        Data::Struct(data) => strip(&mut data.fields),
        Data::Enum(data) => {
            for variant in &mut data.variants {
                variant.attrs.clear();
                strip(&mut variant.fields);
            }
        }
        Data::Union(data) => {
            for field in &mut data.fields.named {
                field.attrs.clear();
                field.vis = syn::Visibility::Inherited;
            }
        }
    }
    shadow
}
