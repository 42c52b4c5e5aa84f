//! `#[derive(Bundle)]`: the struct moves as its fields, a `#[bundle]` field as the fields of
//! the bundle it holds (flattened in place, to any depth).
//!
//! Each field takes consecutive slots of the `bases` / `cells` the engine hands a bundle: one
//! for a component, `<F as Bundle>::COMPONENT_COUNT` for a nested bundle. The slot offsets are
//! sums of those constants, so the generated stores are as direct as a tuple's. The derive also
//! announces the type to `ecs_core::derived_bundles` before `main`, so that a registry refuses
//! it as a component (`world.spawn((body, Tag))` panics naming `Body` instead of storing one
//! `Body` column), and probes every unmarked field at compile time, so that a nested bundle
//! left without `#[bundle]` does not compile.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Field};

use crate::attrs::{crate_path, named_fields_any_count};

/// Whether `field` carries `#[bundle]` (nested bundle, flattened).
fn is_nested(field: &Field) -> syn::Result<bool> {
    let mut nested = false;
    for attr in &field.attrs {
        if attr.path().is_ident("bundle") {
            attr.meta.require_path_only()?;
            nested = true;
        }
    }
    Ok(nested)
}

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let ecs = crate_path(&input)?;
    let fields = named_fields_any_count(&input, "Bundle")?;
    let name = &input.ident;
    let core = quote!(#ecs::core);
    let names: Vec<_> = fields.iter().map(|f| f.ident.as_ref().unwrap()).collect();
    let nested: Vec<bool> = fields
        .iter()
        .map(|f| is_nested(f))
        .collect::<syn::Result<_>>()?;
    // Locals and parameters carry `__ecs_` names, so no field name (`row`, `cells`, `bases`,
    // `overwrite`, ...) can shadow them.
    let locals: Vec<_> = (0..names.len())
        .map(|i| format_ident!("__ecs_field_{i}"))
        .collect();

    // The slot count of each field, and the offset of each field's first slot.
    let counts: Vec<TokenStream> = fields
        .iter()
        .zip(&nested)
        .map(|(f, &n)| {
            let ty = &f.ty;
            if n {
                quote!(<#ty as #core::Bundle>::COMPONENT_COUNT)
            } else {
                quote!(1usize)
            }
        })
        .collect();
    let offsets: Vec<TokenStream> = (0..fields.len())
        .map(|i| {
            let before = &counts[..i];
            quote!((0usize #(+ #before)*))
        })
        .collect();

    let mut replaced = Vec::new();
    let mut ids = Vec::new();
    let mut writes = Vec::new();
    let mut replaces = Vec::new();
    let mut reads = Vec::new();
    let mut probes = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let ty = &field.ty;
        let (local, at) = (&locals[i], &offsets[i]);
        if nested[i] {
            replaced.push(quote!(<#ty as #core::Bundle>::Replaced));
            ids.push(quote!(<#ty as #core::Bundle>::component_ids(__ecs_components, __ecs_ids);));
            writes.push(quote! {
                <#ty as #core::Bundle>::write_row(#local, __ecs_bases.get_unchecked(#at..), __ecs_row);
            });
            replaces.push(quote! {
                <#ty as #core::Bundle>::replace(#local, &__ecs_cells[#at..], &__ecs_overwrite[#at..])
            });
            reads.push(quote!(<#ty as #core::Bundle>::read(&__ecs_cells[#at..])));
        } else {
            replaced.push(quote!(::core::option::Option<#ty>));
            ids.push(quote!(__ecs_ids.push(__ecs_components.register::<#ty>());));
            writes.push(quote! {
                __ecs_bases.get_unchecked(#at).cast::<#ty>().add(__ecs_row).write(#local);
            });
            replaces.push(quote! {
                if __ecs_overwrite[#at] {
                    ::core::option::Option::Some(__ecs_cells[#at].cast::<#ty>().replace(#local))
                } else {
                    __ecs_cells[#at].cast::<#ty>().write(#local);
                    ::core::option::Option::None
                }
            });
            reads.push(quote!(__ecs_cells[#at].cast::<#ty>().read()));
            // A nested bundle without `#[bundle]` would be refused at run time as a component;
            // say so at compile time, at the field's type.
            probes.push(quote_spanned! {ty.span()=>
                let _: #core::derived_bundles::IsAComponent =
                    (&&#core::derived_bundles::Probe::<#ty>::NEW).probe();
            });
        }
    }
    let total = quote!((0usize #(+ #counts)*));
    // The ELF targets whose `.init_array` runs constructors before `main` (Apple and Windows
    // have their own sections, below); elsewhere `component_ids` announces the type.
    let init_sections = quote! {
        target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd",
        target_os = "openbsd", target_os = "dragonfly", target_os = "illumos"
    };

    Ok(quote! {
        // SAFETY: field `i` occupies slots `offset_i .. offset_i + count_i` (count 1 for a
        // component, `COMPONENT_COUNT` for a `#[bundle]` field), in declaration order;
        // `component_ids` pushes one id per slot in that order (a nested bundle pushes its own,
        // `COMPONENT_COUNT` of them by its contract), and every other method touches a
        // component field's slot as that field's type and hands a nested bundle exactly its
        // slots, so the contract of `Bundle` holds slot by slot.
        #[allow(unsafe_code, reason = "generated by #[derive(Bundle)]")]
        unsafe impl #core::Bundle for #name {
            type Replaced = (#(#replaced,)*);
            const COMPONENT_COUNT: usize = #total;

            fn component_ids(
                __ecs_components: &mut #core::Components,
                __ecs_ids: &mut #core::BundleIds,
            ) {
                #[cfg(not(any(#init_sections, target_vendor = "apple", windows)))]
                #core::derived_bundles::announce(
                    ::core::any::TypeId::of::<Self>(),
                    ::core::any::type_name::<Self>(),
                );
                #(#ids)*
            }

            #[inline(always)]
            unsafe fn write_row(self, __ecs_bases: &[::core::ptr::NonNull<u8>], __ecs_row: usize) {
                debug_assert!(__ecs_bases.len() >= #total);
                let Self { #(#names: #locals),* } = self;
                // SAFETY: the caller's contract: slot `k` of `bases` is the column base of this
                // bundle's `k`-th component type with room for an uninitialised `row`.
                unsafe { #(#writes)* }
            }

            unsafe fn replace(
                self,
                __ecs_cells: &[::core::ptr::NonNull<u8>],
                __ecs_overwrite: &[bool],
            ) -> Self::Replaced {
                let Self { #(#names: #locals),* } = self;
                // SAFETY: the caller's contract: slot `k` of `cells` holds an initialised value of
                // the `k`-th component type where `overwrite[k]`, and is writable for one otherwise.
                unsafe { (#(#replaces,)*) }
            }

            unsafe fn read(__ecs_cells: &[::core::ptr::NonNull<u8>]) -> Self {
                // SAFETY: the caller's contract: slot `k` of `cells` holds an initialised value
                // of the `k`-th component type that the caller treats as moved out.
                unsafe { Self { #(#names: #reads),* } }
            }
        }

        // Announce the type before `main`, so a registry refuses it as a component from the
        // start (see `ecs_core::derived_bundles`).
        const _: () = {
            #[used]
            #[cfg_attr(any(#init_sections), unsafe(link_section = ".init_array"))]
            #[cfg_attr(target_vendor = "apple", unsafe(link_section = "__DATA,__mod_init_func"))]
            #[cfg_attr(windows, unsafe(link_section = ".CRT$XCU"))]
            #[allow(unsafe_code, reason = "generated by #[derive(Bundle)]: a constructor")]
            static __ECS_ANNOUNCE: extern "C" fn() = {
                extern "C" fn __ecs_announce() {
                    #core::derived_bundles::announce(
                        ::core::any::TypeId::of::<#name>(),
                        ::core::any::type_name::<#name>(),
                    );
                }
                __ecs_announce
            };
        };

        // Every unmarked field is a component, not a bundle (checked at compile time).
        const _: () = {
            #[allow(dead_code)]
            fn __ecs_probe_fields() {
                #[allow(unused_imports)]
                use #core::derived_bundles::{ProbeBundle as _, ProbeComponent as _};
                #(#probes)*
            }
        };
    })
}
