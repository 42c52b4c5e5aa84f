//! Reports on a built schedule: [`Schedule::explain`] (text) and [`Schedule::to_dot`] (Graphviz).

use std::fmt::Write as _;

use crate::graph::EdgeReason;

use super::Schedule;

impl Schedule {
    /// A text report: each system's reads and writes, and for each pair that cannot run
    /// together, why (the type they conflict on, or an explicit order).
    ///
    /// ```
    /// # use ecs_query::RefRW;
    /// # use ecs_sched::{Query, Schedule};
    /// fn first(_q: Query<RefRW<u32>>) {}
    /// fn second(_q: Query<RefRW<u32>>) {}
    /// let mut schedule = Schedule::new();
    /// schedule.add_system(first).named("first");
    /// schedule.add_system(second).named("second");
    /// let report = schedule.explain();
    /// assert!(report.contains("first -> second"));
    /// ```
    pub fn explain(&mut self) -> String {
        let mut out = String::new();
        if let Err(err) = self.build() {
            let _ = writeln!(out, "schedule cannot be built: {err}");
            return out;
        }
        let plan = self.plan.as_ref().expect("built");
        let name = |i: usize| self.systems[i].get().name().to_owned();
        let _ = writeln!(out, "systems, in order:");
        for (n, &i) in plan.order.iter().enumerate() {
            let access = &self.accesses[i];
            let list = |v: Vec<&str>| {
                if v.is_empty() {
                    "-".to_owned()
                } else {
                    v.join(", ")
                }
            };
            let _ = writeln!(
                out,
                "  {}. {}\n       reads:  {}\n       writes: {}",
                n + 1,
                name(i),
                list(access.read_names()),
                list(access.write_names())
            );
            let sends = access.event_write_names();
            if !sends.is_empty() {
                let _ = writeln!(out, "       sends:  {}", sends.join(", "));
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
            let why = reason.to_string();
            let _ = writeln!(out, "  {} -> {}: {why}", name(*a), name(*b));
        }
        out
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
        for &i in &plan.order {
            let sys = self.systems[i].get();
            let access = &self.accesses[i];
            let _ = writeln!(
                out,
                "  \"{}\" [shape=box, label=\"{}\\nreads: {}\\nwrites: {}\"];",
                quote(sys.name()),
                quote(sys.name()),
                quote(&access.read_names().join(", ")),
                quote(&access.write_names().join(", "))
            );
        }
        for (a, b, reason) in &plan.edges {
            let label = match reason {
                EdgeReason::Explicit => "order".to_owned(),
                EdgeReason::Conflict(c) | EdgeReason::ExplicitAndConflict(c) => c.to_string(),
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
