//! Reports on a built schedule: [`Schedule::explain`] (text), [`Schedule::ambiguities`] (pairs
//! ordered only by insertion order) and [`Schedule::to_dot`] (Graphviz).

use std::fmt::Write as _;

use ecs_core::short_name;

use crate::schedule::graph::EdgeReason;
use crate::system::access::Conflict;

use super::Schedule;

/// A pair of systems that touch the same data and are ordered only because one was added
/// first: what [`Schedule::ambiguities`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ambiguity {
    /// The system that runs first (added first).
    pub first: String,
    /// The system that runs after it.
    pub second: String,
    /// What they conflict on (a short type name, `Commands`, `&World`, ...).
    pub conflict: String,
}

impl Schedule {
    /// A text report, with short type names (`Position`, not `game::Position`; see
    /// [`Schedule::explain_full_paths`]): each system's reads, writes, filters (`with` /
    /// `without`), event sends, run conditions and sets; every ordering constraint and why
    /// (the type two systems conflict on, or an explicit order); and, per system, the later
    /// systems it may run at the same time as.
    ///
    /// ```
    /// # use ecs_query::{RefRO, RefRW};
    /// # use ecs_sched::{Query, Schedule};
    /// struct Pos(f32);
    /// struct Hp(u32);
    /// fn first(_q: Query<RefRW<Pos>>) {}
    /// fn second(_q: Query<RefRW<Pos>>) {}
    /// fn other(_q: Query<RefRO<Hp>>) {}
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(first).named("first");
    /// schedule.add_system(second).named("second");
    /// schedule.add_system(other).named("other");
    /// let report = schedule.explain();
    /// assert!(report.contains("first -> second: conflict on `Pos`"));
    /// assert!(report.contains("first: other"));
    /// ```
    pub fn explain(&mut self) -> String {
        self.explain_with(short_name)
    }

    /// [`Schedule::explain`] with full type paths (`game::Position`).
    pub fn explain_full_paths(&mut self) -> String {
        self.explain_with(str::to_owned)
    }

    fn explain_with(&mut self, ty: impl Fn(&str) -> String) -> String {
        let mut out = String::new();
        if let Err(err) = self.build() {
            let _ = writeln!(out, "schedule cannot be built: {err}");
            return out;
        }
        let plan = self.plan.as_ref().expect("built");
        let name = |i: usize| self.systems[i].get().name().to_owned();
        let list = |v: Vec<&str>| {
            if v.is_empty() {
                "-".to_owned()
            } else {
                v.iter().map(|n| ty(n)).collect::<Vec<_>>().join(", ")
            }
        };
        let _ = writeln!(out, "systems, in order:");
        for (n, &i) in plan.order.iter().enumerate() {
            let access = &self.accesses[i];
            let _ = writeln!(
                out,
                "  {}. {}\n       reads:  {}\n       writes: {}",
                n + 1,
                name(i),
                list(access.read_names()),
                list(access.write_names())
            );
            let (with, without) = access.filter_names();
            if !with.is_empty() || !without.is_empty() {
                let mut parts = Vec::new();
                if !with.is_empty() {
                    parts.push(format!("with {}", list(with)));
                }
                if !without.is_empty() {
                    parts.push(format!("without {}", list(without)));
                }
                let _ = writeln!(out, "       filters: {}", parts.join("; "));
            }
            let sends = access.event_write_names();
            if !sends.is_empty() {
                let _ = writeln!(out, "       sends:  {}", list(sends));
            }
            let conditions = &self.systems[i].unit().conditions;
            if !conditions.is_empty() {
                let names: Vec<&str> = conditions.iter().map(|c| c.name()).collect();
                let _ = writeln!(out, "       run if: {}", names.join(" && "));
            }
            if !self.orders[i].sets.is_empty() {
                let _ = writeln!(out, "       in sets: {}", self.orders[i].sets.join(", "));
            }
        }
        let _ = writeln!(out, "ordering constraints:");
        if plan.edges.is_empty() {
            let _ = writeln!(out, "  none: every system may run at the same time");
        }
        for (a, b, reason) in &plan.edges {
            let why = match reason {
                EdgeReason::Explicit => reason.to_string(),
                EdgeReason::Conflict(c) => format!("conflict on `{}`", ty(&c.to_string())),
                EdgeReason::ExplicitAndConflict(c) => {
                    format!("explicit order, and conflict on `{}`", ty(&c.to_string()))
                }
            };
            let _ = writeln!(out, "  {} -> {}: {why}", name(*a), name(*b));
        }
        let together = self.concurrent_pairs();
        let _ = writeln!(
            out,
            "may run at the same time (each with the later systems listed):"
        );
        if together.iter().all(Vec::is_empty) {
            let _ = writeln!(out, "  none: the plan is one chain");
        }
        for (pos, partners) in together.iter().enumerate() {
            if partners.is_empty() {
                continue;
            }
            let names: Vec<String> = partners.iter().map(|&q| name(plan.order[q])).collect();
            let _ = writeln!(out, "  {}: {}", name(plan.order[pos]), names.join(", "));
        }
        out
    }

    /// Per position in the plan's order, the later positions no chain of constraints orders
    /// it against (they may overlap on the pool).
    fn concurrent_pairs(&self) -> Vec<Vec<usize>> {
        let plan = self.plan.as_ref().expect("built");
        let n = plan.order.len();
        let mut at = vec![0; self.systems.len()];
        for (pos, &i) in plan.order.iter().enumerate() {
            at[i] = pos;
        }
        // reach[p][q]: q is ordered after p through some chain of edges.
        let mut reach = vec![vec![false; n]; n];
        for &(a, b, _) in &plan.edges {
            reach[at[a]][at[b]] = true;
        }
        for p in (0..n).rev() {
            for q in p + 1..n {
                if reach[p][q] {
                    let (head, tail) = reach.split_at_mut(q);
                    for (r, &later) in tail[0].iter().enumerate() {
                        if later {
                            head[p][r] = true;
                        }
                    }
                }
            }
        }
        (0..n)
            .map(|p| (p + 1..n).filter(|&q| !reach[p][q]).collect())
            .collect()
    }

    /// Pairs of systems that touch the same data and are ordered only by the order they were
    /// added in (no explicit `.before` / `.after` / set order joins them, directly or through
    /// other explicit orders), as bevy's ambiguity detection reports: each is deterministic
    /// (insertion order decides, on any thread count), but it may be an accident. Pairs with an
    /// exclusive system or sync point are left out: running alone where it was added is what
    /// such a system is for. Empty if the schedule cannot be built.
    ///
    /// ```
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Ambiguity, Query, Schedule};
    /// struct Pos(f32);
    /// fn a(_q: Query<RefRW<Pos>>) {}
    /// fn b(_q: Query<RefRW<Pos>>) {}
    /// fn c(_q: Query<RefRW<Pos>>) {}
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(a).named("a");
    /// schedule.add_system(b).named("b");
    /// schedule.add_system(c).named("c").after("a").after("b"); // ordered on purpose
    /// let found = schedule.ambiguities();
    /// assert_eq!(found, [Ambiguity { first: "a".into(), second: "b".into(), conflict: "Pos".into() }]);
    /// ```
    pub fn ambiguities(&mut self) -> Vec<Ambiguity> {
        if self.build().is_err() {
            return Vec::new();
        }
        let plan = self.plan.as_ref().expect("built");
        let n = self.systems.len();
        // Explicit reachability, by schedule index.
        let mut explicit = vec![Vec::new(); n];
        for &(a, b, ref reason) in &plan.edges {
            if !matches!(reason, EdgeReason::Conflict(_)) {
                explicit[a].push(b);
            }
        }
        let ordered_explicitly = |from: usize, to: usize| {
            let mut stack = vec![from];
            let mut seen = vec![false; n];
            while let Some(s) = stack.pop() {
                if s == to {
                    return true;
                }
                for &t in &explicit[s] {
                    if !seen[t] {
                        seen[t] = true;
                        stack.push(t);
                    }
                }
            }
            false
        };
        plan.edges
            .iter()
            .filter_map(|(a, b, reason)| match reason {
                // An exclusive system (or sync point) runs alone, where it was added: that is
                // its meaning, not an accident.
                EdgeReason::Conflict(Conflict::Exclusive) => None,
                EdgeReason::Conflict(c) if !ordered_explicitly(*a, *b) => Some(Ambiguity {
                    first: self.systems[*a].get().name().to_owned(),
                    second: self.systems[*b].get().name().to_owned(),
                    conflict: short_name(&c.to_string()),
                }),
                _ => None,
            })
            .collect()
    }

    /// The same graph as [`Schedule::explain`], in Graphviz `dot` syntax.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use ecs_sched::Schedule;
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(|_: &mut World| {}).named("only");
    /// let dot = schedule.to_dot();
    /// assert!(dot.starts_with("digraph schedule {"));
    /// assert!(dot.contains("only"));
    /// ```
    pub fn to_dot(&mut self) -> String {
        let mut out = String::from("digraph schedule {\n  rankdir=LR;\n");
        if self.build().is_err() {
            out.push_str("}\n");
            return out;
        }
        let plan = self.plan.as_ref().expect("built");
        let quote = |s: &str| s.replace('"', "\\\"");
        let names = |v: Vec<&str>| {
            v.iter()
                .map(|n| short_name(n))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for &i in &plan.order {
            let sys = self.systems[i].get();
            let access = &self.accesses[i];
            let _ = writeln!(
                out,
                "  \"{}\" [shape=box, label=\"{}\\nreads: {}\\nwrites: {}\"];",
                quote(sys.name()),
                quote(sys.name()),
                quote(&names(access.read_names())),
                quote(&names(access.write_names()))
            );
        }
        for (a, b, reason) in &plan.edges {
            let label = match reason {
                EdgeReason::Explicit => "order".to_owned(),
                EdgeReason::Conflict(c) | EdgeReason::ExplicitAndConflict(c) => {
                    short_name(&c.to_string())
                }
            };
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [label=\"{}\"];",
                quote(self.systems[*a].get().name()),
                quote(self.systems[*b].get().name()),
                quote(&label)
            );
        }
        out.push_str("}\n");
        out
    }
}
