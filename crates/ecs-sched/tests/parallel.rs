//! Parallel work inside a system: shared read-only queries, several rows of a writing query at
//! once, per-task state, deterministic reductions and command recording, and where the
//! parallel tasks run. Sizes shrink under Miri (`cfg(miri)`) so it can run them.

use std::collections::HashSet;
use std::sync::Mutex;
use std::thread::ThreadId;

use ecs_core::{Entity, World};
use ecs_query::{QueryError, QueryExt, RefRO, RefRW, With, Without};
use ecs_sched::{Commands, Query, Res, ResMut, Schedule};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pos(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Chases(Entity);
#[derive(Debug, Clone, Copy, PartialEq)]
struct SeenAt(f32, f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Prey;
#[derive(Debug, Clone, Copy, PartialEq)]
struct Age(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Energy(f32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tagged;

const PREY: usize = if cfg!(miri) { 40 } else { 4000 };
const PREDATORS: usize = if cfg!(miri) { 12 } else { 600 };

/// The schedules every determinism test compares: one thread, then pools of 2, 3 and 4.
fn schedules() -> Vec<Schedule> {
    let mut all = vec![Schedule::single_threaded()];
    all.extend((2..=4).map(Schedule::with_threads));
    all
}

#[test]
fn predators_read_their_targets_through_a_read_only_query_inside_par_for_each() {
    fn look(
        mut predators: Query<(RefRO<Chases>, RefRW<SeenAt>)>,
        prey: Query<RefRO<Pos>, With<Prey>>,
    ) {
        predators.par_for_each(|(chases, seen)| {
            let p = prey.get(chases.0).expect("every target is prey");
            *seen = SeenAt(p.0, p.1);
        });
    }
    let mut world = World::new();
    let prey: Vec<Entity> = (0..PREY)
        .map(|i| world.spawn((Pos(i as f32, -(i as f32)), Prey)))
        .collect();
    let predators: Vec<Entity> = (0..PREDATORS)
        .map(|i| world.spawn((Chases(prey[(i * 7) % PREY]), SeenAt(0.0, 0.0))))
        .collect();
    let mut schedule = Schedule::with_threads(2);
    schedule.add_system(look);
    schedule.run(&mut world).unwrap();
    for (i, p) in predators.iter().enumerate() {
        let target = (i * 7) % PREY;
        assert_eq!(
            world.get::<SeenAt>(*p),
            Ok(&SeenAt(target as f32, -(target as f32)))
        );
    }
}

#[test]
fn read_only_query_methods_work_through_shared_references_on_several_threads() {
    fn census(prey: Query<(Entity, RefRO<Pos>), With<Prey>>, mut out: ResMut<Vec<usize>>) {
        let first = prey.iter().next().map(|(e, _)| e).expect("prey exist");
        let prey = &prey; // everything below goes through `&Query`
        let counts: Vec<usize> = std::thread::scope(|s| {
            let a = s.spawn(|| prey.count());
            let b = s.spawn(|| prey.iter().count());
            let c = s.spawn(|| {
                let mut n = 0;
                prey.for_each(|_| n += 1);
                n
            });
            let d = s.spawn(|| usize::from(prey.contains(first) && prey.get(first).is_ok()));
            let e = s.spawn(|| usize::from(!prey.is_empty()));
            [a, b, c, d, e].map(|h| h.join().unwrap()).to_vec()
        });
        *out = counts;
    }
    let mut world = World::new();
    for i in 0..PREY {
        world.spawn((Pos(i as f32, 0.0), Prey));
    }
    world.spawn((Pos(0.0, 0.0),)); // not prey
    world.insert_resource(Vec::<usize>::new());
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(census);
    schedule.run(&mut world).unwrap();
    assert_eq!(*world.resource::<Vec<usize>>(), [PREY, PREY, PREY, 1, 1]);
}

#[test]
fn a_writing_query_reads_other_rows_through_its_read_only_view() {
    fn flock(mut q: Query<(Entity, RefRW<Pos>, RefRO<Chases>)>) {
        let steps: Vec<(Entity, Pos)> = {
            let view = q.as_readonly();
            view.iter()
                .map(|(e, p, c)| {
                    let t = view.get(c.0).map_or(*p, |(_, tp, _)| *tp);
                    (e, Pos((p.0 + t.0) / 2.0, (p.1 + t.1) / 2.0))
                })
                .collect()
        };
        for (e, p) in steps {
            *q.get_mut(e).unwrap().1 = p;
        }
    }
    let mut world = World::new();
    let a = world.spawn((Pos(0.0, 0.0),));
    let b = world.spawn((Pos(4.0, 8.0), Chases(a)));
    world.insert(a, (Chases(b),)).unwrap();
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(flock);
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Pos>(a), Ok(&Pos(2.0, 4.0)));
    assert_eq!(world.get::<Pos>(b), Ok(&Pos(2.0, 4.0)));
}

#[test]
fn get_many_mut_hands_out_distinct_rows_and_refuses_a_repeated_entity() {
    struct Pair(Entity, Entity, Entity);
    fn attack(mut q: Query<RefRW<Energy>>, pair: Res<Pair>, mut errors: ResMut<Vec<QueryError>>) {
        let [attacker, victim] = q.get_many_mut([pair.0, pair.1]).unwrap();
        victim.0 -= 3.0;
        attacker.0 += 3.0;
        errors.push(q.get_many_mut([pair.0, pair.0]).err().unwrap());
        errors.push(q.get_many_mut([pair.0, pair.2]).err().unwrap());
    }
    let mut world = World::new();
    let a = world.spawn((Energy(10.0),));
    let b = world.spawn((Energy(10.0),));
    let gone = world.spawn((Energy(1.0),));
    world.despawn(gone).unwrap();
    world.insert_resource(Pair(a, b, gone));
    world.insert_resource(Vec::<QueryError>::new());
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(attack);
    schedule.run(&mut world).unwrap();
    assert_eq!(world.get::<Energy>(a), Ok(&Energy(13.0)));
    assert_eq!(world.get::<Energy>(b), Ok(&Energy(7.0)));
    let errors = world.resource::<Vec<QueryError>>();
    assert_eq!(errors[0], QueryError::AliasedEntities(a));
    assert_eq!(errors[1], QueryError::NoSuchEntity(gone));
    assert!(errors[0].to_string().contains("named twice"));
}

/// One frame of a small ecology: everything ages and loses energy in parallel; the old die,
/// the well-fed breed, some get tagged (an archetype move), all through `ParCommands`.
type Creature = (Entity, RefRW<Age>, RefRW<Energy>, RefRO<Pos>);

fn ecology(mut q: Query<Creature>, mut commands: Commands) {
    q.par_for_each_commands(&mut commands, |cmds, (e, age, energy, pos)| {
        age.0 += 1;
        energy.0 = energy.0 * 0.97 + (pos.0 * 0.01).sin();
        if age.0 > 40 || energy.0 < 0.05 {
            cmds.despawn(e);
        } else if age.0 % 9 == 0 && energy.0 > 0.5 {
            energy.0 *= 0.5;
            cmds.spawn((Age(0), Energy(energy.0), Pos(pos.0 + 1.0, pos.1)));
        }
        if age.0 % 13 == 5 {
            cmds.insert(e, (Tagged,));
        }
    });
}

/// Every entity, value and archetype in iteration order (archetypes, then chunks, then rows).
fn fingerprint(world: &mut World) -> Vec<(u64, u32, u32, bool)> {
    let mut out: Vec<(u64, u32, u32, bool)> = world
        .query::<(Entity, RefRO<Age>, RefRO<Energy>, Without<Tagged>)>()
        .iter()
        .map(|(e, a, en, ())| (e.to_bits(), a.0, en.0.to_bits(), false))
        .collect();
    out.extend(
        world
            .query::<(Entity, RefRO<Age>, RefRO<Energy>, With<Tagged>)>()
            .iter()
            .map(|(e, a, en, ())| (e.to_bits(), a.0, en.0.to_bits(), true)),
    );
    out
}

#[test]
fn par_commands_give_bit_identical_worlds_on_1_2_3_and_4_threads() {
    let frames = if cfg!(miri) { 6 } else { 100 };
    let start = if cfg!(miri) { 60 } else { 1200 };
    let mut runs = Vec::new();
    for mut schedule in schedules() {
        let mut world = World::new();
        world
            .spawn_batch((0..start).map(|i| {
                (
                    Age(i % 37),
                    Energy(1.0 + (i % 11) as f32 * 0.1),
                    Pos(i as f32, 0.0),
                )
            }))
            .for_each(drop);
        schedule.add_system(ecology);
        let mut frames_seen = Vec::new();
        for _ in 0..frames {
            schedule.run(&mut world).unwrap();
            frames_seen.push(fingerprint(&mut world));
        }
        world.check_invariants();
        runs.push(frames_seen);
    }
    let last = runs[0].last().unwrap();
    assert!(
        !last.is_empty() && last.iter().any(|r| r.3),
        "the ecology keeps living entities, some tagged"
    );
    assert!(
        runs[0].iter().any(|f| f.len() != start as usize),
        "entities were spawned and despawned"
    );
    for (threads, run) in runs.iter().enumerate().skip(1) {
        assert!(
            run == &runs[0],
            "{} threads differ from one thread",
            threads + 1
        );
    }
}

#[test]
fn par_fold_sums_floats_to_the_same_bits_on_any_number_of_threads() {
    fn total(mut q: Query<RefRO<Energy>>, mut out: ResMut<f32>) {
        *out = q.par_fold(|| 0.0f32, |acc, e| acc + e.0, |a, b| a + b);
    }
    let n = if cfg!(miri) { 300 } else { 200_000 };
    let mut sums = Vec::new();
    for mut schedule in schedules() {
        let mut world = World::new();
        world
            .spawn_batch((0..n).map(|i| (Energy((i as f32).sqrt() * 0.001),)))
            .for_each(drop);
        world.insert_resource(0.0f32);
        schedule.add_system(total);
        schedule.run(&mut world).unwrap();
        sums.push(world.resource::<f32>().to_bits());
    }
    assert!(sums.iter().all(|s| *s == sums[0]), "{sums:?}");
}

#[test]
fn par_for_each_init_and_par_for_each_chunk_visit_every_row_once() {
    fn double(mut q: Query<RefRW<Age>>) {
        q.par_for_each_init(Vec::<u32>::new, |scratch, a| {
            scratch.push(a.0);
            a.0 *= 2;
        });
    }
    fn bump(mut q: Query<RefRW<Age>>) {
        q.par_for_each_chunk(|mut view| view.columns().iter_mut().for_each(|a| a.0 += 1));
    }
    let n = if cfg!(miri) { 100 } else { 20_000 };
    let mut world = World::new();
    world.spawn_batch((0..n).map(|i| (Age(i),))).for_each(drop);
    let mut schedule = Schedule::with_threads(3);
    schedule.add_system(double);
    schedule.add_system(bump);
    schedule.run(&mut world).unwrap();
    let mut ages: Vec<u32> = world.query::<RefRO<Age>>().iter().map(|a| a.0).collect();
    ages.sort_unstable();
    assert_eq!(ages, (0..n).map(|i| i * 2 + 1).collect::<Vec<_>>());
}

/// The threads a `par_for_each` ran its tasks on, and the thread that called `run`.
fn par_threads(mut schedule: Schedule) -> (HashSet<ThreadId>, HashSet<String>, ThreadId) {
    struct Seen(Mutex<HashSet<(ThreadId, String)>>);
    fn record(mut q: Query<RefRW<Age>>, seen: Res<Seen>) {
        q.par_for_each(|a| {
            a.0 += 1;
            let t = std::thread::current();
            let name = t.name().unwrap_or("").to_owned();
            seen.0.lock().unwrap().insert((t.id(), name));
        });
    }
    let mut world = World::new();
    let n = if cfg!(miri) { 200 } else { 50_000 };
    world.spawn_batch((0..n).map(|i| (Age(i),))).for_each(drop);
    world.insert_resource(Seen(Mutex::new(HashSet::new())));
    schedule.add_system(record);
    for _ in 0..3 {
        schedule.run(&mut world).unwrap();
    }
    let seen = world
        .remove_resource::<Seen>()
        .unwrap()
        .0
        .into_inner()
        .unwrap();
    let ids = seen.iter().map(|(id, _)| *id).collect();
    let names = seen.into_iter().map(|(_, name)| name).collect();
    (ids, names, std::thread::current().id())
}

#[test]
fn a_single_threaded_schedule_runs_par_for_each_on_the_calling_thread() {
    let (ids, _, caller) = par_threads(Schedule::single_threaded());
    assert_eq!(ids, HashSet::from([caller]));
}

#[test]
fn with_threads_runs_par_for_each_on_its_own_pool_only() {
    let (ids, names, caller) = par_threads(Schedule::with_threads(3));
    assert!(!ids.contains(&caller), "not on the calling thread");
    assert!(ids.len() <= 3, "at most the pool's three threads: {ids:?}");
    assert!(
        names.iter().all(|n| n.starts_with("ecs-sched-")),
        "only the schedule's workers: {names:?}"
    );
}
