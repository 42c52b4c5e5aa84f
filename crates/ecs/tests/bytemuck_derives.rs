//! bytemuck's derives through the facade: `#[derive(Pod, Zeroable)]`, `NoUninit` and
//! `CheckedBitPattern` with `ecs` alone in scope (no `bytemuck::` path anywhere below), and the
//! derived types working as pod / checked components in a snapshot written to bytes.

use ecs::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Position {
    x: f32,
    y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(transparent)]
struct Age(u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, NoUninit, CheckedBitPattern)]
#[repr(u8)]
enum State {
    Susceptible,
    Infectious = 5,
    Recovered,
}

#[derive(Clone, Copy, Debug, PartialEq, NoUninit, CheckedBitPattern)]
#[repr(C)]
struct Health {
    state: State,
    ward: u8,
}

#[test]
fn derived_types_behave_as_bytemuck_says() {
    let p = Position { x: 1.5, y: -2.0 };
    let bytes = ecs::bytemuck::bytes_of(&p);
    assert_eq!(bytes.len(), 8);
    assert_eq!(ecs::bytemuck::pod_read_unaligned::<Position>(bytes), p);
    assert_eq!(<Age as ecs::bytemuck::Zeroable>::zeroed(), Age(0));
    use ecs::bytemuck::checked::try_cast;
    assert_eq!(try_cast::<u8, State>(5), Ok(State::Infectious));
    assert_eq!(try_cast::<u8, State>(6), Ok(State::Recovered));
    assert_eq!(try_cast::<u8, State>(0), Ok(State::Susceptible));
    assert!(
        try_cast::<u8, State>(1).is_err(),
        "no variant has discriminant 1"
    );
    assert!(try_cast::<[u8; 2], Health>([5, 9]).is_ok());
    assert!(try_cast::<[u8; 2], Health>([7, 9]).is_err());
}

#[test]
fn derived_pod_and_checked_components_round_trip_through_snapshot_bytes() {
    let mut world = World::new();
    world.register_pod::<Position>();
    world.register_pod::<Age>();
    world.register_checked::<Health>();
    let e = world.spawn((
        Position { x: 3.0, y: 4.0 },
        Age(41),
        Health {
            state: State::Recovered,
            ward: 2,
        },
    ));
    let bytes = world.snapshot().unwrap().to_bytes().unwrap();
    world.clear();
    world
        .restore(&Snapshot::from_bytes(&bytes).unwrap())
        .unwrap();
    assert_eq!(world.get::<Position>(e), Ok(&Position { x: 3.0, y: 4.0 }));
    assert_eq!(world.get::<Age>(e), Ok(&Age(41)));
    assert_eq!(world.get::<Health>(e).unwrap().state, State::Recovered);
}
