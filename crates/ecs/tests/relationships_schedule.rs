//! Hooks and relationships driven by a parallel schedule: systems insert and remove
//! `ChildOf`, despawn subtrees and spawn children through commands, while a hook keeps a
//! per-parent index resource, and an exclusive system propagates a value down the hierarchy
//! (`Propagate::par_run`, on the schedule's threads, its order rebuilt after every regrouping);
//! on 1, 2 and 4 threads over 100 frames the worlds (hierarchy, values, the index) and their
//! state hashes are identical, and both sides of every relationship agree after every frame.

use std::sync::Mutex;

use ecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Energy(u32);

#[derive(Clone, Copy, Debug, Default)]
struct Squad;

/// Propagated from each squad to its units: a hash of the energies on the path from the root.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Morale(u64);

/// Every `Energy` addition, in firing order: (entity, its parent then), written by a hook.
#[derive(Default)]
struct HookLog(Mutex<Vec<(u32, u32)>>);

fn on_child_added(world: DeferredWorld<'_>, ctx: HookContext) {
    let parent = world.parent(ctx.entity).map_or(u32::MAX, |p| p.index());
    world
        .resource::<HookLog>()
        .0
        .lock()
        .unwrap()
        .push((ctx.entity.index(), parent));
}

/// A unit's morale from its squad's (a squad's from 17).
fn morale(parent: Option<&Morale>, energy: &Energy, morale: &mut Morale) {
    let above = parent.map_or(17, |p| p.0);
    morale.0 = above
        .wrapping_mul(0x9e37_79b9)
        .wrapping_add(u64::from(energy.0));
}

/// One entity at the end: (index, energy, morale, parent index, children's indices).
type Row = (u32, u32, u64, u32, Vec<u32>);
/// Units that left their squad, not squads themselves.
type Deserters<'w, 's> = Query<'w, 's, (Entity, RefRO<Energy>), (Without<ChildOf>, Without<Squad>)>;

/// The state hash, the world's rows, and the hook's log after 100 frames.
fn run(threads: usize) -> (u64, Vec<Row>, Vec<(u32, u32)>) {
    let mut world = World::new();
    world.insert_resource(HookLog::default());
    world.register_pod::<Energy>();
    world.register_pod::<Morale>();
    world.register_required::<Energy, Morale>().unwrap();
    world.register_clone::<Squad>();
    world.register_clone::<ChildOf>();
    world.register_clone::<Children>();
    world
        .register_required_with::<Squad, Energy>(|| Energy(1_000))
        .unwrap();
    world
        .set_component_hooks::<Energy>(ComponentHooks::new().on_add(on_child_added))
        .unwrap();
    let squads: Vec<Entity> = world.spawn_batch((0..8).map(|_| (Squad,))).collect();
    for (i, &s) in squads.iter().enumerate() {
        for j in 0..6u32 {
            world.spawn((ChildOf(s), Energy(i as u32 * 10 + j)));
        }
    }

    let mut schedule = Schedule::with_threads(threads);
    // Read-only systems that may run side by side with each other.
    schedule
        .add_system(|mut q: Query<(RefRW<Energy>, RefRO<ChildOf>)>| {
            q.for_each(|(e, _)| e.0 = e.0.wrapping_mul(1_103_515_245).wrapping_add(12_345));
        })
        .named("drain");
    // Units whose energy hits a pattern change squads, through commands.
    schedule
        .add_system(
            |q: Query<(Entity, RefRO<Energy>, RefRO<ChildOf>)>,
             squads: Query<(Entity, RefRO<Squad>)>,
             mut commands: Commands| {
                let all: Vec<Entity> = squads.iter().map(|(e, _)| e).collect();
                q.for_each(|(e, energy, parent)| {
                    if energy.0 % 5 == 0 && !all.is_empty() {
                        let to = all[(energy.0 as usize / 5) % all.len()];
                        if to != parent.0 {
                            commands.insert(e, (ChildOf(to),));
                        }
                    }
                });
            },
        )
        .named("regroup");
    // A squad with few units is disbanded: despawning it despawns its units.
    schedule
        .add_system(
            |q: Query<(Entity, RefRO<Children>, RefRO<Squad>)>, mut commands: Commands| {
                q.for_each(|(e, kids, _)| {
                    if kids.len() == 1 {
                        commands.despawn(e);
                    }
                });
            },
        )
        .named("disband");
    // New squads with new units, ids handed out by commands.
    schedule
        .add_system(
            |q: Query<RefRO<Squad>>, units: Query<RefRO<ChildOf>>, mut commands: Commands| {
                if q.iter().count() < 8 {
                    let squad = commands.spawn((Squad,));
                    let n = units.iter().count() as u32;
                    for j in 0..3 {
                        commands.spawn((ChildOf(squad), Energy(n * 7 + j)));
                    }
                }
            },
        )
        .named("recruit");
    // Units with a pattern leave their squad (become roots, are then cleaned up).
    schedule
        .add_system(
            |q: Deserters,
             w: Query<(Entity, RefRO<Energy>, RefRO<ChildOf>)>,
             mut commands: Commands| {
                w.for_each(|(e, energy, _)| {
                    if energy.0 % 11 == 3 {
                        commands.remove::<(ChildOf,)>(e);
                    }
                });
                q.for_each(|(e, _)| commands.despawn(e));
            },
        )
        .named("desert");
    // Morale flows down from each squad, parents before children, subtrees in parallel.
    let mut pass: Option<Propagate<Energy, Morale>> = None;
    schedule
        .add_system(move |w: &mut World| {
            pass.get_or_insert_with(|| Propagate::new(w))
                .par_run(w, morale);
        })
        .named("morale");

    for _ in 0..100 {
        schedule.run(&mut world).unwrap();
        world.check_invariants();
    }
    // Commands applied after the frame's pass (new squads, regroupings) meet one more.
    Propagate::new(&mut world).run(&mut world, morale);

    let energies: Vec<(Entity, u32, u64)> = world
        .query::<(Entity, Option<RefRO<Energy>>, Option<RefRO<Morale>>)>()
        .iter()
        .map(|(e, energy, morale)| {
            (
                e,
                energy.map_or(u32::MAX, |v| v.0),
                morale.map_or(0, |m| m.0),
            )
        })
        .collect();
    let mut dump: Vec<Row> = energies
        .into_iter()
        .map(|(e, energy, morale)| {
            (
                e.index(),
                energy,
                morale,
                world.parent(e).map_or(u32::MAX, |p| p.index()),
                world.children(e).iter().map(|c| c.index()).collect(),
            )
        })
        .collect();
    dump.sort();
    let log = std::mem::take(&mut *world.resource::<HookLog>().0.lock().unwrap());
    (world.snapshot().unwrap().state_hash(), dump, log)
}

#[test]
fn hooks_and_relationships_under_a_parallel_schedule_are_thread_count_independent() {
    let one = run(1);
    assert!(
        one.1.len() > 20,
        "the simulation kept entities alive: {}",
        one.1.len()
    );
    assert!(
        one.1.iter().any(|(_, _, _, _, kids)| kids.len() > 1),
        "squads with several units remain"
    );
    assert!(!one.2.is_empty(), "the hook ran");
    // Morale reached the units: each one's is computed from its squad's.
    let morale_of = |index: u32| one.1.iter().find(|r| r.0 == index).map(|r| r.2);
    let units: Vec<&Row> = one.1.iter().filter(|r| r.3 != u32::MAX).collect();
    assert!(!units.is_empty());
    for unit in units {
        let above = morale_of(unit.3).expect("the squad is alive");
        let want = above
            .wrapping_mul(0x9e37_79b9)
            .wrapping_add(u64::from(unit.1));
        assert_eq!(unit.2, want, "unit {} propagated from its squad", unit.0);
    }
    for threads in [2, 4] {
        let other = run(threads);
        assert_eq!(other.1, one.1, "world differs on {threads} threads");
        assert_eq!(other.2, one.2, "hook order differs on {threads} threads");
        assert_eq!(other.0, one.0, "state hash differs on {threads} threads");
    }
}
