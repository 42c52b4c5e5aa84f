//! The input checks and the `#[ecs(crate = path)]` attribute both derives share.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Field, Fields};

/// Most fields `#[derive(Query)]` and `#[derive(SystemParam)]` accept: they delegate to tuples,
/// and the engine implements their traits for tuples of up to 12.
pub const MAX_FIELDS: usize = 12;

/// The path the generated code names the facade by: `::ecs` unless `#[ecs(crate = ..)]`.
pub fn crate_path(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut path = quote!(::ecs);
    for attr in &input.attrs {
        if !attr.path().is_ident("ecs") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let p: syn::Path = meta.value()?.parse()?;
                path = quote!(#p);
                Ok(())
            } else {
                Err(meta.error("unknown `ecs` attribute: expected `crate = path`"))
            }
        })?;
    }
    Ok(path)
}

/// The named fields of a plain (non-generic) struct, at most [`MAX_FIELDS`] of them, or an
/// error saying what is refused.
pub fn named_fields<'a>(input: &'a DeriveInput, what: &str) -> syn::Result<Vec<&'a Field>> {
    let fields = named_fields_any_count(input, what)?;
    if fields.len() > MAX_FIELDS {
        return Err(syn::Error::new_spanned(
            &input.ident,
            format!(
                "#[derive({what})] supports at most {MAX_FIELDS} fields (found {}): group some \
                 into a component struct",
                fields.len()
            ),
        ));
    }
    Ok(fields)
}

/// The named fields of a plain (non-generic) struct, as many as it has, or an error saying
/// what is refused.
pub fn named_fields_any_count<'a>(
    input: &'a DeriveInput,
    what: &str,
) -> syn::Result<Vec<&'a Field>> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            format!("#[derive({what})] does not support generic parameters"),
        ));
    }
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            format!("#[derive({what})] needs a struct with named fields"),
        ));
    };
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            format!("#[derive({what})] needs a struct with named fields"),
        ));
    };
    Ok(fields.named.iter().collect())
}
