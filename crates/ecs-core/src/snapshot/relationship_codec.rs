//! The byte form of relationship components, built in (no serde format needed): each value is
//! its entity count (`u32`) followed by each entity's bits (`u64`), little-endian, in the
//! value's own order. A source decodes through [`Relationship::from_target`] (and
//! `targets_mut` for a many-to-many one), a target list through
//! [`RelationshipTarget::from_sources`].
//!
//! Bytes that are not such a column (truncated, trailing, a zero generation, a one-to-many
//! source with two targets) are a decode error, never a panic. Decoding checks each value, not
//! that both sides agree: a restore copies the lists it is given, and
//! [`World::check_invariants`](crate::World::check_invariants) tells a doctored file.

use crate::entity::Entity;
use crate::relationship::{Relationship, RelationshipTarget};
use crate::snapshot::registry::{ClonedColumn, ColumnCodec, Values};

/// The codec of relationship source `R`.
pub(crate) fn source_codec<R: Relationship + Clone>() -> ColumnCodec {
    ColumnCodec {
        encode: |column| encode::<R>(column, R::targets),
        decode: decode_sources::<R>,
    }
}

/// The codec of target list `T`.
pub(crate) fn list_codec<T: RelationshipTarget + Clone>() -> ColumnCodec {
    ColumnCodec {
        encode: |column| encode::<T>(column, T::sources),
        decode: decode_lists::<T>,
    }
}

fn encode<T: Clone + Send + Sync + 'static>(
    column: &dyn ClonedColumn,
    entities: fn(&T) -> &[Entity],
) -> Result<Vec<u8>, String> {
    let values = column
        .as_any()
        .downcast_ref::<Values<T>>()
        .ok_or("the column holds another type")?;
    let mut out = Vec::with_capacity(values.0.len() * 12);
    for value in &values.0 {
        let list = entities(value);
        let count = u32::try_from(list.len()).map_err(|_| "a list of over 2^32 entities")?;
        out.extend_from_slice(&count.to_le_bytes());
        for entity in list {
            out.extend_from_slice(&entity.to_bits().to_le_bytes());
        }
    }
    Ok(out)
}

fn decode_sources<R: Relationship + Clone>(bytes: &[u8]) -> Result<Box<dyn ClonedColumn>, String> {
    let values = decode_each(bytes, |targets| {
        let (&first, rest) = targets
            .split_first()
            .ok_or("a relationship that names no target")?;
        let mut value = R::from_target(first);
        if !rest.is_empty() {
            value
                .targets_mut()
                .ok_or("a one-to-many relationship naming several targets")?
                .extend_from_slice(rest);
        }
        Ok(value)
    })?;
    Ok(Box::new(Values(values)))
}

fn decode_lists<T: RelationshipTarget + Clone>(
    bytes: &[u8],
) -> Result<Box<dyn ClonedColumn>, String> {
    let values = decode_each(bytes, |sources| Ok(T::from_sources(sources.to_vec())))?;
    Ok(Box::new(Values(values)))
}

/// Reads values until `bytes` ends, each made from its entities by `make`.
fn decode_each<T>(
    mut bytes: &[u8],
    make: impl Fn(&[Entity]) -> Result<T, &'static str>,
) -> Result<Vec<T>, String> {
    let mut values = Vec::new();
    let mut entities = Vec::new();
    while !bytes.is_empty() {
        let count = take(&mut bytes, 4)?;
        let count = u32::from_le_bytes(count.try_into().expect("four bytes")) as usize;
        if bytes.len() / 8 < count {
            return Err(format!(
                "a list of {count} entities in {} bytes",
                bytes.len()
            ));
        }
        entities.clear();
        for _ in 0..count {
            let bits = u64::from_le_bytes(take(&mut bytes, 8)?.try_into().expect("eight bytes"));
            entities
                .push(Entity::from_bits(bits).ok_or_else(|| format!("{bits:#x} is no entity"))?);
        }
        values.push(make(&entities).map_err(str::to_string)?);
    }
    Ok(values)
}

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if bytes.len() < n {
        return Err("the column's bytes end inside a value".to_string());
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChildOf, Children};

    fn bytes(lists: &[&[u64]]) -> Vec<u8> {
        let mut out = Vec::new();
        for list in lists {
            out.extend_from_slice(&(list.len() as u32).to_le_bytes());
            for bits in *list {
                out.extend_from_slice(&bits.to_le_bytes());
            }
        }
        out
    }

    const A: u64 = 1 << 32 | 7;
    const B: u64 = 2 << 32 | 9;

    #[test]
    fn lists_and_sources_round_trip() {
        let decode = list_codec::<Children>().decode;
        let column = decode(&bytes(&[&[A, B], &[B]])).unwrap();
        assert_eq!(column.len(), 2);
        let again = (list_codec::<Children>().encode)(&*column).unwrap();
        assert_eq!(again, bytes(&[&[A, B], &[B]]));
        let column = (source_codec::<ChildOf>().decode)(&bytes(&[&[A], &[B]])).unwrap();
        assert_eq!(column.len(), 2);
    }

    #[test]
    fn bytes_that_are_no_column_are_errors() {
        let sources = source_codec::<ChildOf>().decode;
        let lists = list_codec::<Children>().decode;
        let good = bytes(&[&[A, B]]);
        for len in 1..good.len() {
            assert!(lists(&good[..len]).is_err(), "{len} bytes");
        }
        assert!(lists(&bytes(&[&[A, 7]])).is_err(), "a zero generation");
        assert!(
            sources(&bytes(&[&[A, B]])).is_err(),
            "ChildOf with two parents"
        );
        assert!(sources(&bytes(&[&[]])).is_err(), "ChildOf with none");
        assert!(
            lists(&[0xff, 0xff, 0xff, 0xff]).is_err(),
            "a huge count, no entities"
        );
    }
}
