//! Loom models of the executor's dependency counters: every interleaving of workers finishing
//! systems and handing on the ready ones. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p ecs-sched --release --test loom`.
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread::JoinHandle;

use ecs_sched::__private::{drive_chain, RunCounters};

/// A segment under test: its graph, per-system run counts and an in-flight gauge per
/// conflicting pair.
struct Model {
    counters: RunCounters,
    dependents: Vec<Vec<usize>>,
    runs: Vec<AtomicUsize>,
    finished: Vec<AtomicUsize>,
    predecessors: Vec<Vec<usize>>,
    handles: Mutex<Vec<JoinHandle<()>>>,
}

impl Model {
    fn new(dependents: Vec<Vec<usize>>) -> Arc<Self> {
        let n = dependents.len();
        let mut dep_counts = vec![0; n];
        let mut predecessors = vec![Vec::new(); n];
        for (a, next) in dependents.iter().enumerate() {
            for &b in next {
                dep_counts[b] += 1;
                predecessors[b].push(a);
            }
        }
        Arc::new(Self {
            counters: RunCounters::new(&dep_counts),
            dependents,
            runs: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            finished: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            predecessors,
            handles: Mutex::new(Vec::new()),
        })
    }

    fn roots(&self) -> Vec<usize> {
        (0..self.runs.len())
            .filter(|&i| self.predecessors[i].is_empty())
            .collect()
    }

    /// The "system": checks its predecessors finished, counts its run.
    fn run(&self, i: usize) {
        for &p in &self.predecessors[i] {
            assert_eq!(
                self.finished[p].load(Ordering::Acquire),
                1,
                "{i} started before {p} finished"
            );
        }
        self.runs[i].fetch_add(1, Ordering::Relaxed);
        self.finished[i].store(1, Ordering::Release);
    }
}

fn chain(model: &Arc<Model>, first: usize) {
    let spawn = |j: usize| spawn_chain(model, j);
    drive_chain(
        &model.counters,
        &model.dependents,
        first,
        |i| model.run(i),
        &spawn,
    );
}

fn spawn_chain(model: &Arc<Model>, j: usize) {
    let m = model.clone();
    let handle = loom::thread::spawn(move || chain(&m, j));
    model.handles.lock().unwrap().push(handle);
}

/// Runs the segment like the pool does: the caller takes the first root, the rest are spawned.
fn execute(dependents: Vec<Vec<usize>>) {
    let model = Model::new(dependents);
    let roots = model.roots();
    for &r in &roots[1..] {
        spawn_chain(&model, r);
    }
    chain(&model, roots[0]);
    loop {
        let next = model.handles.lock().unwrap().pop();
        match next {
            Some(h) => h.join().unwrap(),
            None => break,
        }
    }
    for (i, runs) in model.runs.iter().enumerate() {
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "system {i} must run exactly once"
        );
    }
}

#[test]
fn two_independent_systems() {
    loom::model(|| execute(vec![vec![], vec![]]));
}

#[test]
fn two_conflicting_systems_run_in_order() {
    loom::model(|| execute(vec![vec![1], vec![]]));
}

#[test]
fn diamond_of_four() {
    // a -> b, a -> c, b -> d, c -> d
    loom::model(|| execute(vec![vec![1, 2], vec![3], vec![3], vec![]]));
}

#[test]
fn two_roots_joining() {
    // a -> c, b -> c: c must wait for both, whichever thread finishes last runs it.
    loom::model(|| execute(vec![vec![2], vec![2], vec![]]));
}
