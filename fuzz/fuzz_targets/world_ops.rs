//! World operations decoded from bytes: spawn, spawn_batch, despawn, insert, remove, get,
//! get_mut, clear, reserve / flush and a few queries, each checked against a naive model,
//! with `check_invariants` and the live `Counted` count after every operation and a full
//! comparison at the end.
//!
//! Input: one byte choosing the chunk size, then operations of an opcode byte and its operands.

#![no_main]

use std::sync::atomic::Ordering;

use ecs_core::{ComponentError, Entity, EntityError, World};
use ecs_fuzz::{
    bundle_kinds, get, with_bundle, with_kind, world, BundleFn, Counted, FuzzBundle, Input, Kind,
    KindFn, Model, Num, Text, Unit, COUNTED_LIVE, KINDS,
};
use ecs_query::{QueryExt, RefRO, With, Without};
use libfuzzer_sys::fuzz_target;

const MAX_OPS: usize = 256;
const MAX_BATCH: u8 = 12;

struct Spawn<'a>(&'a mut World, u32);
impl BundleFn for Spawn<'_> {
    type Out = Entity;
    fn call<B: FuzzBundle>(self) -> Entity {
        self.0.spawn(B::make(self.1))
    }
}

struct Batch<'a>(&'a mut World, u32, u8);
impl BundleFn for Batch<'_> {
    type Out = Vec<Entity>;
    fn call<B: FuzzBundle>(self) -> Vec<Entity> {
        let v = self.1;
        let ids = self
            .0
            .spawn_batch((0..u32::from(self.2)).map(|i| B::make(v.wrapping_add(i))));
        assert_eq!(ids.len(), usize::from(self.2));
        ids.collect()
    }
}

struct Insert<'a>(&'a mut World, Entity, u32);
impl BundleFn for Insert<'_> {
    type Out = Result<(), EntityError>;
    fn call<B: FuzzBundle>(self) -> Self::Out {
        self.0.insert(self.1, B::make(self.2))
    }
}

struct Remove<'a>(&'a mut World, Entity);
impl BundleFn for Remove<'_> {
    type Out = Result<Vec<u32>, ComponentError>;
    fn call<B: FuzzBundle>(self) -> Self::Out {
        self.0.remove::<B>(self.1).map(|b| b.read())
    }
}

struct Overwrite<'a>(&'a mut World, Entity, u32);
impl KindFn for Overwrite<'_> {
    type Out = Result<u32, ComponentError>;
    fn call<K: Kind>(self) -> Self::Out {
        let v = self.2;
        self.0.get_mut::<K>(self.1).map(|slot| {
            let old = slot.read();
            *slot = K::make(v);
            old
        })
    }
}

struct Has<'a>(&'a World, Entity);
impl KindFn for Has<'_> {
    type Out = bool;
    fn call<K: Kind>(self) -> bool {
        self.0.has::<K>(self.1)
    }
}

/// Reserved ids become live, empty entities at the next structural change.
fn flush(model: &mut Model, pending: &mut Vec<Entity>) {
    for e in pending.drain(..) {
        model.born(e, [None; KINDS]);
    }
}

fn query(world: &mut World, model: &Model, shape: u8) {
    let matching =
        |f: &dyn Fn(&ecs_fuzz::Row) -> bool| model.live.values().filter(|r| f(r)).count();
    match shape % 4 {
        0 => {
            let mut got: Vec<(Entity, u32)> = world
                .query::<(Entity, RefRO<Num>)>()
                .iter()
                .map(|(e, n)| (e, n.read()))
                .collect();
            got.sort_unstable();
            let expected: Vec<(Entity, u32)> = model
                .live
                .iter()
                .filter_map(|(&e, r)| r[Num::INDEX].map(|v| (e, v)))
                .collect();
            assert_eq!(got, expected, "(Entity, RefRO<Num>)");
        }
        1 => {
            let n = world
                .query_filtered::<Entity, (With<Text>, Without<Unit>)>()
                .count();
            assert_eq!(
                n,
                matching(&|r| r[Text::INDEX].is_some() && r[Unit::INDEX].is_none())
            );
        }
        2 => {
            let mut n = 0;
            world.query::<Option<RefRO<Counted>>>().for_each(|c| {
                n += usize::from(c.is_some());
            });
            assert_eq!(n, matching(&|r| r[Counted::INDEX].is_some()));
        }
        _ => {
            let mut rows = 0;
            world
                .query::<(Entity, Option<RefRO<Unit>>)>()
                .for_each_chunk(|view| {
                    assert!(!view.is_empty());
                    rows += view.entities().len();
                });
            assert_eq!(rows, model.live.len());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut world = world(input.u8());
    let mut model = Model::default();
    let mut pending: Vec<Entity> = Vec::new();
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        match input.u8() % 12 {
            0 => {
                let (b, v) = (usize::from(input.u8()), input.u32());
                let e = with_bundle(b, Spawn(&mut world, v));
                flush(&mut model, &mut pending);
                model.born(e, Model::row(b, v));
            }
            1 => {
                let (b, v, n) = (usize::from(input.u8()), input.u32(), input.u8() % MAX_BATCH);
                let ids = with_bundle(b, Batch(&mut world, v, n));
                flush(&mut model, &mut pending);
                for (i, e) in (0..).zip(ids) {
                    model.born(e, Model::row(b, v.wrapping_add(i)));
                }
            }
            2 => {
                let e = model.pick(input.u8());
                let got = world.despawn(e);
                flush(&mut model, &mut pending);
                let expected = match model.live.remove(&e) {
                    Some(_) => Ok(()),
                    None => Err(EntityError::NoSuchEntity(e)),
                };
                assert_eq!(got, expected, "despawn {e:?}");
            }
            3 => {
                let (e, b, v) = (model.pick(input.u8()), usize::from(input.u8()), input.u32());
                let got = with_bundle(b, Insert(&mut world, e, v));
                flush(&mut model, &mut pending);
                match model.live.get_mut(&e) {
                    Some(row) => {
                        assert_eq!(got, Ok(()));
                        Model::merge(row, b, v);
                    }
                    None => assert_eq!(got, Err(EntityError::NoSuchEntity(e))),
                }
            }
            4 => {
                let (e, b) = (model.pick(input.u8()), usize::from(input.u8()));
                let got = with_bundle(b, Remove(&mut world, e));
                flush(&mut model, &mut pending);
                let expected = match model.remove_error(e, b) {
                    Some(err) => Err(err),
                    None => {
                        let row = model.live.get_mut(&e).expect("live");
                        Ok(bundle_kinds(b)
                            .into_iter()
                            .map(|k| row[k].take().expect("present"))
                            .collect())
                    }
                };
                assert_eq!(got, expected, "remove bundle {b} from {e:?}");
            }
            5 => {
                let (e, kind) = (model.pick(input.u8()), usize::from(input.u8()) % KINDS);
                assert_eq!(get(&world, e, kind), model.get(e, kind));
            }
            6 => {
                let (e, kind, v) = (
                    model.pick(input.u8()),
                    usize::from(input.u8()) % KINDS,
                    input.u32(),
                );
                let expected = model.get(e, kind);
                assert_eq!(with_kind(kind, Overwrite(&mut world, e, v)), expected);
                if expected.is_ok() {
                    model.live.get_mut(&e).expect("live")[kind] = Some(ecs_fuzz::code(kind, v));
                }
            }
            7 => {
                world.clear();
                flush(&mut model, &mut pending);
                model.live.clear();
            }
            8 => {
                let e = world.reserve_entity();
                assert!(
                    !world.contains(e),
                    "reserved ids are not live before a flush"
                );
                pending.push(e);
            }
            9 => {
                world.flush();
                flush(&mut model, &mut pending);
            }
            10 => query(&mut world, &model, input.u8()),
            _ => {
                let (e, kind) = (model.pick(input.u8()), usize::from(input.u8()) % KINDS);
                let live = model.live.get(&e);
                assert_eq!(world.contains(e), live.is_some());
                let has = live.is_some_and(|r| r[kind].is_some());
                assert_eq!(with_kind(kind, Has(&world, e)), has);
            }
        }
        world.check_invariants();
        assert_eq!(world.len() as usize, model.live.len());
        model.check_counted();
    }
    model.check(&world);
    drop(world);
    assert_eq!(
        COUNTED_LIVE.load(Ordering::Relaxed),
        0,
        "`Counted` values leaked"
    );
});
