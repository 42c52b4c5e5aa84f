//! The baselines: plain `Vec`s per component.
//!
//! - `raw` is what one would write by hand: one `Vec` per component, the natural per-element
//!   loop (`p.0 += v.0` over zipped slices), per-row `push` when filling, and for add/remove two
//!   tables between which rows move with `swap_remove` + `push` (plus the entity→row map any
//!   such design needs).
//! - `raw_flat` treats the same columns as flat `f32` slices (the vectorised limit), fills with
//!   `vec![x; n]`, and swaps whole columns with `swap_with_slice`. It has no add/remove or
//!   `heavy_compute` variant: there is nothing flatter to do there.

use std::hint::black_box;

use rayon::prelude::*;

use crate::components::*;
use crate::flat::{add_assign_flat, as_f32s, as_f32s_mut};
use crate::harness::{build, build_each, repeat, Run};
use crate::math::{heavy_kernel, Vec3, IDENTITY};
use crate::{FRAG_MANY_ARCHS, FRAG_PER_ARCH, HEAVY_N, MILLION, SCHEDULE_N, SUITE_N};

/// The timed iteration of `workload` (`flat` picks `raw_flat`), or `None` if there is none.
pub fn prepare(workload: &str, flat: bool) -> Option<Run> {
    Some(match workload {
        "simple_insert" if flat => build_each(|| {
            (
                vec![Transform(IDENTITY); SUITE_N],
                vec![Position(Vec3::UNIT_X); SUITE_N],
                vec![Rotation(Vec3::UNIT_X); SUITE_N],
                vec![Velocity(Vec3::UNIT_X); SUITE_N],
            )
        }),
        "simple_insert" => build_each(|| {
            let mut cols = (
                Vec::with_capacity(SUITE_N),
                Vec::with_capacity(SUITE_N),
                Vec::with_capacity(SUITE_N),
                Vec::with_capacity(SUITE_N),
            );
            for (t, p, r, v) in (0..SUITE_N).map(|_| suite_bundle()) {
                cols.0.push(t);
                cols.1.push(p);
                cols.2.push(r);
                cols.3.push(v);
            }
            cols
        }),
        "simple_iter" | "simple_iter_chunk" => {
            let (t, p, r, v) = suite_columns(SUITE_N);
            black_box((&t, &r));
            pos_vel_iter(p, v, flat)
        }
        "frag_iter" => data_iter(vec![vec![Data(1.0); FRAG_PER_ARCH]; 26], flat),
        "frag_iter_many" => data_iter(vec![vec![Data(1.0); FRAG_PER_ARCH]; FRAG_MANY_ARCHS], flat),
        "heavy_compute" if flat => return None,
        "heavy_compute" => {
            let mut pos = vec![Position(Vec3::UNIT_X); HEAVY_N];
            let mut transform = vec![heavy_bundle().0; HEAVY_N];
            repeat(move || {
                pos.par_iter_mut()
                    .zip(transform.par_iter_mut())
                    .for_each(|(p, t)| heavy_kernel(&mut t.0, &mut p.0));
            })
        }
        "schedule" => schedule(flat),
        "add_remove" | "add_remove_wide" if flat => return None,
        "add_remove" => add_remove::<0>(),
        "add_remove_wide" => add_remove::<10>(),
        "iter_1m" | "iter_1m_chunk" => {
            let (p, v) = (0..MILLION).map(pos_vel).unzip();
            pos_vel_iter(p, v, flat)
        }
        "spawn_batch_1m" | "spawn_batch_1m_drop" if flat => build(workload, || {
            (
                vec![Position(Vec3::UNIT_X); MILLION],
                vec![Velocity(Vec3::UNIT_X); MILLION],
                vec![Rotation(Vec3::UNIT_X); MILLION],
            )
        }),
        "spawn_batch_1m" | "spawn_batch_1m_drop" => build(workload, || {
            let mut cols = (
                Vec::with_capacity(MILLION),
                Vec::with_capacity(MILLION),
                Vec::with_capacity(MILLION),
            );
            for (p, v, r) in (0..MILLION).map(spawn_row) {
                cols.0.push(p);
                cols.1.push(v);
                cols.2.push(r);
            }
            cols
        }),
        _ => return None,
    })
}

type SuiteColumns = (Vec<Transform>, Vec<Position>, Vec<Rotation>, Vec<Velocity>);

fn suite_columns(n: usize) -> SuiteColumns {
    let mut cols: SuiteColumns = Default::default();
    for (t, p, r, v) in (0..n).map(|_| suite_bundle()) {
        cols.0.push(t);
        cols.1.push(p);
        cols.2.push(r);
        cols.3.push(v);
    }
    cols
}

fn pos_vel_iter(mut pos: Vec<Position>, vel: Vec<Velocity>, flat: bool) -> Run {
    if flat {
        repeat(move || add_assign_flat(as_f32s_mut(black_box(&mut pos)), as_f32s(&vel)))
    } else {
        repeat(move || {
            for (p, v) in black_box(&mut pos).iter_mut().zip(&vel) {
                p.0 += v.0;
            }
        })
    }
}

fn data_iter(mut columns: Vec<Vec<Data>>, flat: bool) -> Run {
    if flat {
        repeat(move || {
            for col in black_box(&mut columns).iter_mut() {
                for d in as_f32s_mut(col) {
                    *d *= 2.0;
                }
            }
        })
    } else {
        repeat(move || {
            for col in black_box(&mut columns).iter_mut() {
                for d in col {
                    d.0 *= 2.0;
                }
            }
        })
    }
}

/// One `schedule` group's columns; absent components have empty columns.
#[derive(Default)]
struct Group {
    a: Vec<A>,
    b: Vec<B>,
    c: Vec<C>,
    d: Vec<D>,
    e: Vec<E>,
}

fn schedule(flat: bool) -> Run {
    let n = SCHEDULE_N;
    let group = |c: bool, d: bool, e: bool| Group {
        a: vec![A(0.0); n],
        b: vec![B(1.0); n],
        c: if c { vec![C(2.0); n] } else { Vec::new() },
        d: if d { vec![D(3.0); n] } else { Vec::new() },
        e: if e { vec![E(4.0); n] } else { Vec::new() },
    };
    let mut groups = vec![
        group(false, false, false),
        group(true, false, false),
        group(true, true, false),
        group(true, false, true),
    ];
    if flat {
        repeat(move || {
            for g in black_box(&mut groups).iter_mut() {
                as_f32s_mut(&mut g.a).swap_with_slice(as_f32s_mut(&mut g.b));
            }
            for g in groups.iter_mut().filter(|g| !g.d.is_empty()) {
                as_f32s_mut(&mut g.c).swap_with_slice(as_f32s_mut(&mut g.d));
            }
            for g in groups.iter_mut().filter(|g| !g.e.is_empty()) {
                as_f32s_mut(&mut g.c).swap_with_slice(as_f32s_mut(&mut g.e));
            }
        })
    } else {
        repeat(move || {
            for g in black_box(&mut groups).iter_mut() {
                for (a, b) in g.a.iter_mut().zip(&mut g.b) {
                    std::mem::swap(&mut a.0, &mut b.0);
                }
            }
            for g in groups.iter_mut() {
                for (c, d) in g.c.iter_mut().zip(&mut g.d) {
                    std::mem::swap(&mut c.0, &mut d.0);
                }
            }
            for g in groups.iter_mut() {
                for (c, e) in g.c.iter_mut().zip(&mut g.e) {
                    std::mem::swap(&mut c.0, &mut e.0);
                }
            }
        })
    }
}

/// A hand-written table: entity ids, `A`, `K` wide columns, and `B` when `with_b`.
struct Table<const K: usize> {
    ids: Vec<u32>,
    a: Vec<A>,
    wide: [Vec<[f32; 4]>; K],
    b: Vec<B>,
}

impl<const K: usize> Table<K> {
    fn new() -> Self {
        Self {
            ids: Vec::new(),
            a: Vec::new(),
            wide: std::array::from_fn(|_| Vec::new()),
            b: Vec::new(),
        }
    }
}

/// Two tables, (A, wide..) and (A, wide.., B), and each entity's row in the table it is in.
struct Moves<const K: usize> {
    without_b: Table<K>,
    with_b: Table<K>,
    row: Vec<u32>,
}

impl<const K: usize> Moves<K> {
    fn add_b(&mut self, e: u32, b: B) {
        let (src, dst) = (&mut self.without_b, &mut self.with_b);
        let row = self.row[e as usize] as usize;
        debug_assert_eq!(src.ids[row], e);
        src.ids.swap_remove(row);
        dst.a.push(src.a.swap_remove(row));
        for (s, d) in src.wide.iter_mut().zip(&mut dst.wide) {
            d.push(s.swap_remove(row));
        }
        dst.b.push(b);
        if let Some(&moved) = src.ids.get(row) {
            self.row[moved as usize] = row as u32;
        }
        self.row[e as usize] = dst.ids.len() as u32;
        dst.ids.push(e);
    }

    fn remove_b(&mut self, e: u32) -> B {
        let (src, dst) = (&mut self.with_b, &mut self.without_b);
        let row = self.row[e as usize] as usize;
        debug_assert_eq!(src.ids[row], e);
        src.ids.swap_remove(row);
        dst.a.push(src.a.swap_remove(row));
        for (s, d) in src.wide.iter_mut().zip(&mut dst.wide) {
            d.push(s.swap_remove(row));
        }
        let b = src.b.swap_remove(row);
        if let Some(&moved) = src.ids.get(row) {
            self.row[moved as usize] = row as u32;
        }
        self.row[e as usize] = dst.ids.len() as u32;
        dst.ids.push(e);
        b
    }
}

fn add_remove<const K: usize>() -> Run {
    let n = SUITE_N;
    let mut moves = Moves::<K> {
        without_b: Table::new(),
        with_b: Table::new(),
        row: (0..n as u32).collect(),
    };
    moves.without_b.ids = (0..n as u32).collect();
    moves.without_b.a = vec![A(0.0); n];
    for col in &mut moves.without_b.wide {
        *col = vec![[1.0; 4]; n];
    }
    repeat(move || {
        for e in 0..n as u32 {
            moves.add_b(e, B(0.0));
        }
        for e in 0..n as u32 {
            black_box(moves.remove_b(e));
        }
    })
}
