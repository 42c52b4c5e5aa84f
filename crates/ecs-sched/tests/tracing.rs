//! The `tracing` feature: a span per schedule run, per system run (with the system's name and
//! thread) and per system's command application, seen by an ordinary subscriber.
#![cfg(feature = "tracing")]

use std::sync::{Arc, Mutex, OnceLock};

use ecs_core::World;
use ecs_query::RefRW;
use ecs_sched::{Commands, Query, RunSystemExt, Schedule};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::{LookupSpan, Registry};

/// A span as the subscriber saw it open: its name, its fields, and its parent's name.
#[derive(Clone, Debug)]
struct Seen {
    name: &'static str,
    fields: Vec<(String, String)>,
    parent: Option<&'static str>,
}

impl Seen {
    fn field(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

struct Fields(Vec<(String, String)>);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields(Vec::new());
        attrs.record(&mut fields);
        let parent = ctx.span(id).and_then(|s| s.parent()).map(|p| p.name());
        self.0.lock().unwrap().push(Seen {
            name: attrs.metadata().name(),
            fields: fields.0,
            parent,
        });
    }
}

#[derive(Debug)]
struct Hp(u32);

fn heal(mut q: Query<RefRW<Hp>>) {
    q.for_each(|hp| hp.0 += 1);
}

fn spawner(mut commands: Commands) {
    commands.spawn((Hp(1),));
}

/// The process-wide recorder: worker threads see only the global subscriber, so it is set
/// once, and tests take turns (`TURN`) and clear it before they start.
fn recorder() -> &'static Recorder {
    static RECORDER: OnceLock<Recorder> = OnceLock::new();
    RECORDER.get_or_init(|| {
        let recorder = Recorder::default();
        tracing::subscriber::set_global_default(Registry::default().with(recorder.clone()))
            .expect("no other global subscriber");
        recorder
    })
}

fn run_traced(threads: usize, f: impl FnOnce() + Send) -> Vec<Seen> {
    static TURN: Mutex<()> = Mutex::new(());
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let recorder = recorder();
    recorder.0.lock().unwrap().clear();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(f);
    let seen = recorder.0.lock().unwrap().clone();
    seen
}

#[test]
fn a_schedule_run_has_a_span_per_system_and_per_command_application() {
    let seen = run_traced(1, || {
        let mut world = World::new();
        world.spawn((Hp(0),));
        let mut schedule = Schedule::new();
        schedule.add_system(heal);
        schedule.add_system(spawner);
        schedule.run(&mut world).unwrap();
        schedule.run(&mut world).unwrap();
    });
    let runs: Vec<_> = seen.iter().filter(|s| s.name == "schedule_run").collect();
    assert_eq!(runs.len(), 2, "{seen:#?}");
    assert_eq!(runs[0].field("systems"), Some("2"));
    let systems: Vec<_> = seen.iter().filter(|s| s.name == "system").collect();
    assert_eq!(systems.len(), 4, "two systems, two runs: {seen:#?}");
    for s in &systems {
        let name = s.field("name").unwrap();
        assert!(name.contains("heal") || name.contains("spawner"), "{name}");
        assert_eq!(s.parent, Some("schedule_run"), "{s:?}");
    }
    let applied: Vec<_> = seen.iter().filter(|s| s.name == "apply_commands").collect();
    assert!(
        applied
            .iter()
            .any(|s| s.field("system").unwrap().contains("spawner")),
        "{seen:#?}"
    );
    assert!(applied.iter().all(|s| s.parent == Some("schedule_run")));
}

#[test]
fn system_spans_name_the_worker_thread_when_run_in_parallel() {
    struct Mana(u32);
    fn regen(mut q: Query<RefRW<Mana>>) {
        q.for_each(|m| m.0 += 1);
    }
    let seen = run_traced(2, || {
        let mut world = World::new();
        world.spawn((Hp(0), Mana(0)));
        let mut schedule = Schedule::new();
        schedule.add_system(heal);
        schedule.add_system(regen);
        schedule.set_inline_threshold(std::time::Duration::ZERO);
        for _ in 0..3 {
            schedule.run(&mut world).unwrap();
        }
    });
    let threads: Vec<_> = seen
        .iter()
        .filter(|s| s.name == "system")
        .map(|s| s.field("thread").unwrap().to_owned())
        .collect();
    assert_eq!(threads.len(), 6);
    let parents = seen.iter().filter(|s| s.name == "system").map(|s| s.parent);
    assert!(
        parents.clone().all(|p| p == Some("schedule_run")),
        "{seen:#?}"
    );
    // Every run names a worker of the two-thread pool.
    assert!(
        threads
            .iter()
            .all(|t| t.parse::<usize>().is_ok_and(|i| i < 2)),
        "{threads:?}"
    );
}

#[test]
fn one_shot_runs_have_spans_too() {
    let seen = run_traced(1, || {
        let mut world = World::new();
        world.run_system_once(spawner).unwrap();
    });
    assert!(seen.iter().any(|s| s.name == "system"), "{seen:#?}");
    assert!(seen.iter().any(|s| s.name == "apply_commands"), "{seen:#?}");
}
