//! `Events<T>` in snapshots beyond cloning: a `Hash` impl (so
//! `world.register_hashed_resource::<Events<T>>()` puts the queue in the state hash) and,
//! with the `serde` feature, `Serialize` / `Deserialize` (so
//! `world.register_serde_resource::<Events<T>, F>()` writes it into snapshot bytes).
//!
//! Both see the queue as `(first id, older window, newer window)`: the id where the newer
//! window starts follows from the other three (`Events` invariant 1), so a deserialized queue
//! cannot break it, and readers' saved cursors (the ids they reached) keep their meaning.

use std::hash::{Hash, Hasher};

use super::Events;

impl<T: Hash> Hash for Events<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.older_start.hash(state);
        self.older.hash(state);
        self.newer.hash(state);
    }
}

#[cfg(feature = "serde")]
mod with_serde {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde::ser::{Serialize, Serializer};

    use super::Events;

    impl<T: Serialize> Serialize for Events<T> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            (self.older_start, &self.older, &self.newer).serialize(serializer)
        }
    }

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Events<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let (older_start, older, newer) = <(u64, Vec<T>, Vec<T>)>::deserialize(deserializer)?;
            let newer_start = older_start
                .checked_add(older.len() as u64)
                .and_then(|start| start.checked_add(newer.len() as u64).map(|_| start))
                .ok_or_else(|| D::Error::custom("event ids past u64::MAX"))?;
            Ok(Events {
                older,
                older_start,
                newer,
                newer_start,
            })
        }
    }
}
