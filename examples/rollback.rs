//! Lockstep with rollback: two peers run the same simulation, each predicting the other's
//! input until it arrives, rewinding and re-simulating when a prediction was wrong.
//!
//! Each peer keeps a ring of simulation snapshots, one per frame (`SimSnapshot::capture_into`
//! reuses its buffers): the world *and* the schedule's state, here the `every_n_runs(30)`
//! counter of the system that drops a rock into the field, which a world snapshot alone
//! would not rewind (the rock would then fall on another frame in the re-simulated history).
//! The remote input for frame `f` arrives `DELAY` frames late; the peer has meanwhile assumed
//! "same as the last input I know". If the real input differs, the peer restores the snapshot
//! taken at the start of frame `f` and re-runs frames `f..now` with the corrected inputs. Both
//! peers must end where a reference run with no latency ends: same state hash, same entity
//! ids. The state hash is what peers would exchange to detect a desync.
//!
//! ```text
//! cargo run --release --example rollback
//! ```

use std::collections::VecDeque;

// `Pod` and `Zeroable` are bytemuck's derives, through the prelude: no bytemuck dependency.
use ecs::prelude::*;

/// Where a ship or a shot is.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Position(pub [f32; 2]);

/// Units per frame.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Velocity(pub [f32; 2]);

/// A player's ship; the number is the player.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Ship(pub u32);

/// Frames a shot has left.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Shot(pub u32);

/// One player's input for one frame: a steering direction and a trigger.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Input {
    /// -1, 0 or 1 on each axis.
    pub steer: [i32; 2],
    /// 1 fires a shot.
    pub fire: u32,
}

/// Both players' inputs for the frame being simulated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Inputs(pub [Input; 2]);

/// Frames simulated (a resource: part of the saved state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct FrameCount(pub u64);

/// Frames the remote input takes to arrive.
pub const DELAY: usize = 4;
/// Snapshots kept: enough to rewind `DELAY` frames.
const RING: usize = DELAY + 2;

/// The input player `player` gives at `frame`: a fixed script, the same on every machine.
pub fn scripted_input(player: usize, frame: usize) -> Input {
    let phase = (frame / (11 + 4 * player)) % 4;
    let steer = [[1, 0], [0, 1], [-1, 0], [0, -1]][phase];
    Input {
        steer,
        fire: u32::from((frame + 5 * player) % 23 == 0),
    }
}

// ----- the simulation -----------------------------------------------------------------------

fn steer(mut q: Query<(RefRO<Ship>, RefRW<Velocity>)>, inputs: Res<Inputs>) {
    q.for_each(|(ship, v)| {
        let input = inputs.0[ship.0 as usize];
        v.0[0] = 0.9 * v.0[0] + 0.25 * input.steer[0] as f32;
        v.0[1] = 0.9 * v.0[1] + 0.25 * input.steer[1] as f32;
    });
}

fn fire(
    q: Query<(RefRO<Ship>, RefRO<Position>, RefRO<Velocity>)>,
    inputs: Res<Inputs>,
    mut commands: Commands,
) {
    q.for_each(|(ship, p, v)| {
        if inputs.0[ship.0 as usize].fire == 1 {
            let aim = [v.0[0] * 4.0 + 0.5, v.0[1] * 4.0];
            commands.spawn((*p, Velocity(aim), Shot(20)));
        }
    });
}

fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>) {
    q.for_each_chunk(|mut chunk| {
        let vel: Vec<f32> = chunk.column_as::<Velocity, f32>().to_vec();
        for (p, v) in chunk.column_as_mut::<Position, f32>().iter_mut().zip(&vel) {
            *p += v;
        }
    });
}

fn expire(mut q: Query<(Entity, RefRW<Shot>)>, mut commands: Commands) {
    q.for_each(|(e, shot)| {
        shot.0 -= 1;
        if shot.0 == 0 {
            commands.despawn(e);
        }
    });
}

fn count(mut frames: ResMut<FrameCount>) {
    frames.0 += 1;
}

/// Every 30th run: a rock falls in where the frame count says.
fn drop_rock(frames: Res<FrameCount>, mut commands: Commands) {
    let x = (frames.0 % 17) as f32 - 8.0;
    commands.spawn((Position([x, 12.0]), Velocity([0.0, -0.2])));
}

/// The frame's systems.
pub fn schedule() -> Schedule {
    let mut schedule = Schedule::new();
    schedule.add_system(steer);
    schedule.add_system(fire);
    schedule.add_system(movement);
    schedule.add_system(expire);
    schedule.add_system(count);
    schedule.add_system(drop_rock).run_if(every_n_runs(30));
    schedule
}

/// The starting world: two ships and a few drifting rocks.
pub fn world() -> World {
    let mut world = World::new();
    world.register_pods::<(Position, Velocity, Ship, Shot)>();
    world.register_pod_resource::<Inputs>();
    world.register_pod_resource::<FrameCount>();
    world.insert_resource(Inputs::default());
    world.insert_resource(FrameCount::default());
    world.spawn((Position([-10.0, 0.0]), Velocity([0.0; 2]), Ship(0)));
    world.spawn((Position([10.0, 0.0]), Velocity([0.0; 2]), Ship(1)));
    for i in 0..8 {
        let f = i as f32;
        world.spawn((Position([f * 3.0, -f]), Velocity([0.1 * f, 0.05])));
    }
    world
}

// ----- a peer -------------------------------------------------------------------------------

/// One machine: its world, its snapshots and what it knows of the remote player's inputs.
pub struct Peer {
    /// 0 or 1.
    pub player: usize,
    world: World,
    schedule: Schedule,
    /// `ring[f % RING]`: the world and the schedule's state at the start of frame `f`.
    ring: Vec<SimSnapshot>,
    /// Remote inputs received so far, by frame.
    remote: Vec<Input>,
    /// The remote input each simulated frame used (a prediction until it is confirmed).
    used: Vec<Input>,
    /// The state hash after each simulated frame.
    hashes: Vec<u64>,
    /// Rewinds done.
    pub rollbacks: usize,
    /// Frames simulated again.
    pub resimulated: usize,
}

impl Peer {
    /// A peer playing `player`.
    pub fn new(player: usize) -> Self {
        Self {
            player,
            world: world(),
            schedule: schedule(),
            ring: (0..RING).map(|_| SimSnapshot::default()).collect(),
            remote: Vec::new(),
            used: Vec::new(),
            hashes: Vec::new(),
            rollbacks: 0,
            resimulated: 0,
        }
    }

    /// Frames simulated so far.
    pub fn frame(&self) -> usize {
        self.used.len()
    }

    /// The world's state hash.
    pub fn hash(&self) -> u64 {
        self.world.state_hash()
    }

    /// The state hash after frame `frame` (as last simulated).
    pub fn hash_after(&self, frame: usize) -> u64 {
        self.hashes[frame]
    }

    /// Every live entity, sorted.
    pub fn entities(&mut self) -> Vec<Entity> {
        let mut ids: Vec<Entity> = self.world.query::<Entity>().iter().collect();
        ids.sort_unstable();
        ids
    }

    /// The remote input for the next frame it has not received, or the last one it has.
    fn predict(&self, frame: usize) -> Input {
        match self.remote.get(frame) {
            Some(&known) => known,
            None => self.remote.last().copied().unwrap_or_default(),
        }
    }

    /// Saves, then simulates frame `frame` with the local script and the remote input it has
    /// (or predicts).
    fn step(&mut self, frame: usize) {
        self.ring[frame % RING]
            .capture_into(&self.world, &[&self.schedule], None)
            .expect("every component and resource is registered for snapshots");
        let remote = self.predict(frame);
        let mut inputs = [Input::default(); 2];
        inputs[self.player] = scripted_input(self.player, frame);
        inputs[1 - self.player] = remote;
        *self.world.resource_mut::<Inputs>() = Inputs(inputs);
        self.schedule.run(&mut self.world).expect("no cycles");
        self.used.truncate(frame);
        self.used.push(remote);
        self.hashes.truncate(frame);
        self.hashes.push(self.world.state_hash());
    }

    /// Takes the remote input of frame `frame`. If the frame was simulated with another
    /// (predicted) input, rewinds to it and re-simulates up to the present. Returns the
    /// frames rewound.
    pub fn receive(&mut self, frame: usize, input: Input) -> usize {
        debug_assert_eq!(frame, self.remote.len(), "inputs arrive in order");
        self.remote.push(input);
        let now = self.frame();
        if frame >= now || self.used[frame] == input {
            return 0;
        }
        assert!(now - frame < RING, "a rewind past the ring");
        self.ring[frame % RING]
            .restore(&mut self.world, &mut [&mut self.schedule], None)
            .expect("same registry, same schedule");
        for f in frame..now {
            self.step(f);
        }
        self.rollbacks += 1;
        self.resimulated += now - frame;
        now - frame
    }

    /// Simulates the next frame.
    pub fn advance(&mut self) {
        self.step(self.frame());
    }
}

// ----- the run ------------------------------------------------------------------------------

/// Runs `frames` frames on a reference world (inputs known at once) and on two peers whose
/// remote inputs arrive `DELAY` frames late, then delivers the last inputs. Returns the lines
/// `main` prints: rewinds as they happen, the hashes every 20 frames, and a summary.
pub fn run(frames: usize) -> Vec<String> {
    let mut reference = world();
    let mut ref_schedule = schedule();
    let mut ref_hashes = Vec::new();
    for frame in 0..frames {
        let inputs = Inputs([scripted_input(0, frame), scripted_input(1, frame)]);
        *reference.resource_mut::<Inputs>() = inputs;
        ref_schedule.run(&mut reference).expect("no cycles");
        ref_hashes.push(reference.state_hash());
    }

    let mut peers = [Peer::new(0), Peer::new(1)];
    let mut lines = Vec::new();
    let mut wire: [VecDeque<(usize, usize, Input)>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut rewinds = [0usize; 2];
    for frame in 0..frames + DELAY {
        // Inputs sent DELAY frames ago arrive now.
        for (p, peer) in peers.iter_mut().enumerate() {
            while wire[p].front().is_some_and(|&(due, _, _)| due <= frame) {
                let (_, f, input) = wire[p].pop_front().expect("checked");
                if peer.receive(f, input) > 0 {
                    rewinds[p] += 1;
                }
            }
        }
        if frame >= frames {
            continue;
        }
        for (p, peer) in peers.iter_mut().enumerate() {
            peer.advance();
            // Send this frame's local input to the other peer.
            wire[1 - p].push_back((frame + DELAY, frame, scripted_input(p, frame)));
        }
        if (frame + 1) % 20 == 0 {
            // Frames up to `frame - DELAY` have every input by now: confirmed.
            let c = frame - DELAY;
            let h = |peer: &Peer| peer.hash_after(c);
            lines.push(format!(
                "frames {:>3}-{:>3}: rewinds {} / {}; frame {:>3} confirmed: {:016x} {:016x} \
                 (reference {:016x}); frame {:>3} predicted: {:016x} {:016x}",
                frame - 18,
                frame + 1,
                rewinds[0],
                rewinds[1],
                c + 1,
                h(&peers[0]),
                h(&peers[1]),
                ref_hashes[c],
                frame + 1,
                peers[0].hash(),
                peers[1].hash(),
            ));
            rewinds = [0; 2];
        }
    }
    let reference_ids = {
        let mut ids: Vec<Entity> = reference.query::<Entity>().iter().collect();
        ids.sort_unstable();
        ids
    };
    let final_hash = reference.state_hash();
    for (p, peer) in peers.iter_mut().enumerate() {
        let verdict = if peer.hash() == final_hash && peer.entities() == reference_ids {
            "matches the reference (same entity ids)"
        } else {
            "DESYNC"
        };
        lines.push(format!(
            "peer {p}: {} rewinds, {} frames re-simulated; final hash {:016x}, {verdict}",
            peer.rollbacks,
            peer.resimulated,
            peer.hash(),
        ));
    }
    lines.push(format!(
        "reference: {} frames, {} entities, hash {final_hash:016x}",
        frames,
        reference.len()
    ));
    lines
}

fn main() {
    for line in run(120) {
        println!("{line}");
    }
}
