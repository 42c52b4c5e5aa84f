//! `#[derive(Query)]`: the struct queries as the tuple of its field types, and its item is a
//! generated `<Name>Item<'w>` struct with the same field names.
//!
//! The struct itself is only a type-level description (it is never built at run time); its
//! read-only form is the tuple's read-only form, so a writing derived query's `iter()` inside a
//! system, or `as_readonly()`, yields tuples in field order.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::{DeriveInput, GenericArgument, PathArguments, Type};

use crate::attrs::{crate_path, named_fields};

/// The component a field reads or writes, when that is visible in its type: `RefRO<T>`,
/// `RefRW<T>`, `&T`, `&mut T`, or `Option` of those. `(component tokens, writes)`.
fn accessed(ty: &Type) -> Option<(String, bool)> {
    match ty {
        Type::Reference(r) => Some((r.elem.to_token_stream().to_string(), r.mutability.is_some())),
        Type::Paren(p) => accessed(&p.elem),
        Type::Group(g) => accessed(&g.elem),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            let Some(GenericArgument::Type(inner)) = args.args.first() else {
                return None;
            };
            match last.ident.to_string().as_str() {
                "RefRO" => Some((inner.to_token_stream().to_string(), false)),
                "RefRW" => Some((inner.to_token_stream().to_string(), true)),
                "Option" => accessed(inner),
                _ => None,
            }
        }
        _ => None,
    }
}

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let ecs = crate_path(&input)?;
    let fields = named_fields(&input, "Query")?;
    let name = &input.ident;
    let vis = &input.vis;
    let item = format_ident!("{}Item", name);
    let names: Vec<_> = fields.iter().map(|f| f.ident.as_ref().unwrap()).collect();
    let types: Vec<_> = fields.iter().map(|f| &f.ty).collect();
    let field_vis: Vec<_> = fields.iter().map(|f| &f.vis).collect();
    // Locals carry `__ecs_` names, so no field name (`f`, `fetch`, `row`, ...) can shadow
    // the generated code's own parameters.
    let locals: Vec<_> = (0..names.len())
        .map(|i| format_ident!("__ecs_field_{i}"))
        .collect();

    // Aliasing that is visible in the field types is refused here, at compile time; what
    // hides behind type aliases is still refused when the query is built (the tuple's
    // access check panics, naming the component).
    let mut errors: Option<syn::Error> = None;
    let seen: Vec<_> = fields.iter().map(|f| accessed(&f.ty)).collect();
    for (j, b) in seen.iter().enumerate() {
        for (i, a) in seen[..j].iter().enumerate() {
            if let (Some((ta, wa)), Some((tb, wb))) = (a, b) {
                if ta == tb && (*wa || *wb) {
                    let err = syn::Error::new_spanned(
                        fields[j],
                        format!(
                            "fields `{}` and `{}` both access `{ta}` and one of them writes it: \
                             a query may not alias a component",
                            names[i], names[j]
                        ),
                    );
                    match &mut errors {
                        Some(e) => e.combine(err),
                        None => errors = Some(err),
                    }
                }
            }
        }
    }
    if let Some(errors) = errors {
        return Err(errors);
    }

    let core = quote!(#ecs::core);
    let q = quote!(#ecs::query);
    let tuple = quote!((#(#types,)*));
    let wq = quote!(<#tuple as #q::WorldQuery>);
    // A field that is not a query element fails here, pointing at the field.
    let element_checks = fields.iter().map(|f| {
        let ty = &f.ty;
        let span = syn::spanned::Spanned::span(ty);
        quote::quote_spanned! {span=>
            const _: fn() = || {
                fn element<Q: #q::WorldQuery>() {}
                element::<#ty>();
            };
        }
    });
    let doc = format!(
        "The item of the derived query [`{name}`]: one field per query field, holding that \
         element's item."
    );
    let lt = syn::Lifetime::new("'__w", Span::call_site());
    // An empty query's item still uses its lifetime (E0392 otherwise).
    let (marker_field, marker_value) = if names.is_empty() {
        (
            quote!(#[doc(hidden)] pub __ecs_lifetime: ::core::marker::PhantomData<&#lt ()>,),
            quote!(__ecs_lifetime: ::core::marker::PhantomData,),
        )
    } else {
        (quote!(), quote!())
    };

    Ok(quote! {
        #(#element_checks)*

        #[doc = #doc]
        #vis struct #item<#lt> {
            #(#field_vis #names: <#types as #q::WorldQuery>::Item<#lt>,)*
            #marker_field
        }

        // The struct is a type-level description that is never built at run time; this
        // keeps `dead_code` quiet about it and its fields.
        const _: () = {
            #[allow(dead_code, reason = "generated by #[derive(Query)]")]
            fn uses(__ecs_value: #name) -> #name {
                let #name { #(#names: #locals),* } = __ecs_value;
                #name { #(#names: #locals),* }
            }
        };

        // SAFETY: every item forwards to the `WorldQuery` impl of the tuple of the field types
        // (same state, fetches, access, masks and kind, so the tuple upholds the contract);
        // items are the tuple's, moved field by field into the item struct.
        #[allow(unsafe_code, reason = "generated by #[derive(Query)]")]
        unsafe impl #q::WorldQuery for #name {
            type Item<#lt> = #item<#lt>;
            type Slice<#lt> = #wq::Slice<#lt>;
            type Fetch = #wq::Fetch;
            type ArchetypeFetch = #wq::ArchetypeFetch;
            type Kind = #wq::Kind;
            type ReadOnly = #wq::ReadOnly;
            type State = #wq::State;

            const CHUNK_FILTERED: bool = #wq::CHUNK_FILTERED;
            const ROW_FILTERED: bool = #wq::ROW_FILTERED;
            const ODD_WIDTH: bool = #wq::ODD_WIDTH;

            fn row_ticks(
                state: &Self::State,
                out: &mut ::std::vec::Vec<(#core::ComponentId, #core::RowTicks)>,
            ) {
                #wq::row_ticks(state, out)
            }

            #[inline(always)]
            fn rows_all_match(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                window: #core::ChangeWindow,
            ) -> bool {
                #wq::rows_all_match(cached, chunk, window)
            }

            #[inline(always)]
            fn row_matches(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                row: usize,
                window: #core::ChangeWindow,
            ) -> bool {
                #wq::row_matches(cached, chunk, row, window)
            }

            #[inline(always)]
            unsafe fn mark_rows(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                rows: ::core::ops::Range<usize>,
                tick: #core::Tick,
            ) {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::mark_rows(cached, chunk, rows, tick) }
            }

            #[inline(always)]
            fn keeps_row_ticks(cached: &Self::ArchetypeFetch, chunk: &#core::Chunk) -> bool {
                #wq::keeps_row_ticks(cached, chunk)
            }

            #[inline(always)]
            unsafe fn mark_row(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                row: usize,
                tick: #core::Tick,
            ) {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::mark_row(cached, chunk, row, tick) }
            }

            #[inline]
            fn and_row_marks(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                window: #core::ChangeWindow,
                words: &mut [u64],
            ) {
                #wq::and_row_marks(cached, chunk, window, words)
            }

            fn init_state(components: &mut #core::Components) -> Self::State {
                #wq::init_state(components)
            }

            fn update_access(
                state: &Self::State,
                access: &mut #q::Access,
                components: &#core::Components,
            ) -> ::core::result::Result<(), #q::AccessConflict> {
                #wq::update_access(state, access, components)
            }

            fn update_masks(
                state: &Self::State,
                required: &mut #core::Signature,
                excluded: &mut #core::Signature,
            ) {
                #wq::update_masks(state, required, excluded)
            }

            fn matches(state: &Self::State, signature: &#core::Signature) -> bool {
                #wq::matches(state, signature)
            }

            fn archetype_fetch(
                state: &Self::State,
                archetype: &#core::Archetype,
            ) -> Self::ArchetypeFetch {
                #wq::archetype_fetch(state, archetype)
            }

            #[inline(always)]
            fn chunk_matches(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                window: #core::ChangeWindow,
            ) -> bool {
                #wq::chunk_matches(cached, chunk, window)
            }

            #[inline(always)]
            fn enabled_rows(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
            ) -> #q::Rows {
                #wq::enabled_rows(cached, chunk)
            }

            #[inline]
            fn and_rows(cached: &Self::ArchetypeFetch, chunk: &#core::Chunk, words: &mut [u64]) {
                #wq::and_rows(cached, chunk, words)
            }

            #[inline(always)]
            fn row_enabled(cached: &Self::ArchetypeFetch, chunk: &#core::Chunk, row: usize) -> bool {
                #wq::row_enabled(cached, chunk, row)
            }

            #[inline(always)]
            unsafe fn fetch_ignoring_enabled(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                tick: #core::Tick,
            ) -> Self::Fetch {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::fetch_ignoring_enabled(cached, chunk, tick) }
            }

            #[inline(always)]
            unsafe fn fetch(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                tick: #core::Tick,
            ) -> Self::Fetch {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::fetch(cached, chunk, tick) }
            }

            #[inline(always)]
            unsafe fn fetch_in(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                tick: #core::Tick,
                world: &#core::World,
            ) -> Self::Fetch {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::fetch_in(cached, chunk, tick, world) }
            }

            #[inline(always)]
            unsafe fn fetch_ignoring_enabled_in(
                cached: &Self::ArchetypeFetch,
                chunk: &#core::Chunk,
                tick: #core::Tick,
                world: &#core::World,
            ) -> Self::Fetch {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::fetch_ignoring_enabled_in(cached, chunk, tick, world) }
            }

            #[inline(always)]
            unsafe fn item<#lt>(fetch: &mut Self::Fetch, row: usize) -> Self::Item<#lt> {
                // SAFETY: the caller's contract, forwarded to the tuple.
                let (#(#locals,)*) = unsafe { #wq::item(fetch, row) };
                #item { #(#names: #locals,)* #marker_value }
            }

            #[inline(always)]
            unsafe fn slice<#lt>(fetch: &Self::Fetch, len: usize) -> Self::Slice<#lt> {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::slice(fetch, len) }
            }

            #[inline(always)]
            unsafe fn unslice(slice: Self::Slice<'_>) -> Self::Fetch {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::unslice(slice) }
            }

            #[inline(always)]
            unsafe fn advance(fetch: &Self::Fetch, rows: usize) -> ::core::option::Option<Self::Fetch> {
                // SAFETY: the caller's contract, forwarded to the tuple.
                unsafe { #wq::advance(fetch, rows) }
            }

            #[inline(always)]
            unsafe fn for_each_row<#lt, Func: FnMut(Self::Item<#lt>)>(
                fetch: &mut Self::Fetch,
                len: usize,
                f: &mut Func,
            ) {
                // SAFETY: the caller's contract, forwarded to the tuple's loop, whose items
                // are moved into the item struct one by one.
                unsafe {
                    #wq::for_each_row(fetch, len, &mut |(#(#locals,)*)| {
                        f(#item { #(#names: #locals,)* #marker_value })
                    })
                }
            }
        }

        // SAFETY: the tuple of the field types is read-only (the bound), and the query is
        // that tuple; `for<'__r>` keeps the bound from being a trivial (always checked) one.
        #[allow(unsafe_code, reason = "generated by #[derive(Query)]")]
        unsafe impl #q::ReadOnlyQuery for #name where for<'__r> #tuple: #q::ReadOnlyQuery {}

        impl #q::ExactQuery for #name where for<'__r> #tuple: #q::ExactQuery {}
    })
}
