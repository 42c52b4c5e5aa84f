//! `CommandBuffer` outside a schedule applies like a system's `Commands`.

use ecs_core::{Entity, World};
use ecs_query::{QueryExt, RefRO};
use ecs_sched::{CommandBuffer, Commands, Schedule};

struct Hp(i32);
struct Dead;

#[test]
fn buffer_records_while_queries_are_alive_and_reports_skips() {
    let mut world = World::new();
    let a = world.spawn((Hp(0),));
    let b = world.spawn((Hp(5),));
    let mut buffer = CommandBuffer::new();
    for (e, hp) in world.query_ref::<(Entity, RefRO<Hp>)>().iter() {
        if hp.0 <= 0 {
            buffer.insert_one(e, Dead);
            buffer.despawn(e);
            buffer.despawn(e); // skipped: gone by then
        }
    }
    let c = buffer.spawn_in(&world, (Hp(9),));
    buffer.remove::<(Dead,)>(b); // skipped: `b` has no `Dead`
    buffer.spawn((Hp(1),));
    assert_eq!(buffer.len(), 6);
    let errors = buffer.apply(&mut world);
    assert!(buffer.is_empty());
    assert_eq!(errors.len(), 2);
    assert_eq!((errors[0].command, errors[0].entity), ("despawn", a));
    assert_eq!((errors[1].command, errors[1].entity), ("remove", b));
    assert!(errors[1].reason.contains("Dead"));
    assert!(!world.contains(a));
    assert_eq!(world.get::<Hp>(c).map(|h| h.0), Ok(9));
    assert_eq!(world.query_ref::<RefRO<Hp>>().count(), 3);
    world.check_invariants();
}

#[test]
fn buffer_and_commands_report_the_same_skips() {
    fn record(e: Entity, despawn: &mut impl FnMut(Entity), insert: &mut impl FnMut(Entity)) {
        despawn(e);
        insert(e);
        despawn(e);
    }
    // Through a schedule's `Commands`.
    let mut world = World::new();
    let e = world.spawn((Hp(1),));
    world.insert_resource(e);
    let mut schedule = Schedule::single_threaded();
    schedule.add_system(
        move |mut commands: Commands, target: ecs_sched::Res<Entity>| {
            let target = *target;
            let cmds = std::cell::RefCell::new(&mut commands);
            record(target, &mut |e| cmds.borrow_mut().despawn(e), &mut |e| {
                cmds.borrow_mut().insert(e, (Dead,))
            });
        },
    );
    schedule.run(&mut world).unwrap();
    let from_schedule: Vec<_> = schedule
        .skipped_commands()
        .iter()
        .map(|e| (e.command, e.reason.clone()))
        .collect();
    // Through a buffer.
    let mut world2 = World::new();
    let e2 = world2.spawn((Hp(1),));
    let buffer = std::cell::RefCell::new(CommandBuffer::new());
    record(e2, &mut |e| buffer.borrow_mut().despawn(e), &mut |e| {
        buffer.borrow_mut().insert(e, (Dead,))
    });
    let errors = buffer.borrow_mut().apply(&mut world2);
    let from_buffer: Vec<_> = errors
        .iter()
        .map(|e| (e.command, e.reason.clone()))
        .collect();
    assert_eq!(from_buffer.len(), 2);
    assert_eq!(from_buffer, from_schedule);
    assert_eq!((world.len(), world2.len()), (0, 0));
}
