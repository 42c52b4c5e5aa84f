//! Turning systems, their access sets and explicit orders into a run plan.
//!
//! 1. Explicit orders (`after` / `before`, of systems or of named sets) form a graph whose
//!    nodes are the systems and, for each set, a start node (before every member) and an end
//!    node (after every member, and after the start even when the set is empty), so orders are
//!    transitive through empty sets and a set ordered against itself is a cycle. A depth-first
//!    topological sort in insertion order, pulling each node's explicit predecessors in just
//!    before it, gives one total order of the systems (a cycle is an error naming its systems
//!    and sets); the explicit system-to-system edges are the paths between systems that pass
//!    only through set nodes.
//! 2. Every pair of conflicting systems gets an edge in that total order, so conflicting
//!    systems never overlap and always run in the same order: the result never depends on
//!    thread timing.
//! 3. Exclusive systems (and sync points) conflict with everything, so they split the order
//!    into segments; the systems of one segment run on the pool as their edges allow.

use crate::error::ScheduleError;
use crate::system::access::{Conflict, SystemAccess};

/// What the planner needs to know about one system.
pub(crate) struct NodeInfo<'a> {
    pub name: &'a str,
    pub access: &'a SystemAccess,
    pub after: &'a [String],
    pub before: &'a [String],
    pub sets: &'a [String],
}

/// A named set's own orders.
pub(crate) struct SetInfo<'a> {
    pub name: &'a str,
    pub after: &'a [String],
    pub before: &'a [String],
}

/// Why one system waits for another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EdgeReason {
    Explicit,
    Conflict(Conflict),
    /// An explicit order between systems that also conflict.
    ExplicitAndConflict(Conflict),
}

impl std::fmt::Display for EdgeReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Explicit => f.write_str("explicit order"),
            Self::Conflict(c) => write!(f, "conflict on `{c}`"),
            Self::ExplicitAndConflict(c) => write!(f, "explicit order, and conflict on `{c}`"),
        }
    }
}

/// A run of consecutive systems (in total order) that can share the pool, or one exclusive.
pub(crate) struct Segment {
    /// Systems by schedule index, in total order.
    pub systems: Vec<usize>,
    /// Whether this is a single exclusive system (or sync point).
    pub exclusive: bool,
    /// Per position in `systems`: how many earlier systems of the segment it waits for.
    pub dep_counts: Vec<usize>,
    /// Per position: the positions that wait for it.
    pub dependents: Vec<Vec<usize>>,
    /// The systems that record commands, in total order: each takes an id lane before the
    /// segment runs (`commands/id_lanes.rs`).
    pub lane_systems: Vec<usize>,
    /// Whether a system reads the whole world (the segment opens a lane for the cursor).
    pub world_lane: bool,
}

/// The plan of a schedule.
///
/// # Invariants
/// 1. `order` is a permutation of the systems that respects every edge.
/// 2. Every edge goes forward in `order`; so does every segment-local dependency.
pub(crate) struct Plan {
    pub order: Vec<usize>,
    pub edges: Vec<(usize, usize, EdgeReason)>,
    pub segments: Vec<Segment>,
}

pub(crate) fn build(nodes: &[NodeInfo<'_>], sets: &[SetInfo<'_>]) -> Result<Plan, ScheduleError> {
    let n = nodes.len();
    let index_of = |name: &str| nodes.iter().position(|node| node.name == name);
    for (i, node) in nodes.iter().enumerate() {
        if nodes[..i].iter().any(|other| other.name == node.name) {
            return Err(ScheduleError::DuplicateName(node.name.to_owned()));
        }
    }
    // Sets are nodes of the ordering graph too, two each: `start` before every member and
    // `end` after, with `start -> end` even when the set is empty, so orders are transitive
    // through empty sets and a cycle is found whatever the membership.
    let mut set_names: Vec<&str> = Vec::new();
    for name in sets
        .iter()
        .map(|s| s.name)
        .chain(nodes.iter().flat_map(|n| n.sets.iter().map(String::as_str)))
    {
        if index_of(name).is_some() {
            return Err(ScheduleError::SetNameClash(name.to_owned()));
        }
        if !set_names.contains(&name) {
            set_names.push(name);
        }
    }
    let set_of = |name: &str| set_names.iter().position(|s| *s == name);
    let start = |s: usize| n + 2 * s;
    let end = |s: usize| n + 2 * s + 1;
    let total = n + 2 * set_names.len();
    let members = |s: usize| -> Vec<usize> {
        (0..n)
            .filter(|&i| nodes[i].sets.iter().any(|x| x == set_names[s]))
            .collect()
    };
    let unknown = |from: &str, name: &str| ScheduleError::UnknownSystem {
        system: from.to_owned(),
        referenced: name.to_owned(),
    };
    let mut graph: Vec<(usize, usize)> = Vec::new();
    for s in 0..set_names.len() {
        graph.push((start(s), end(s)));
        for m in members(s) {
            graph.push((start(s), m));
            graph.push((m, end(s)));
        }
    }
    // `x` ordered against a set it belongs to orders against the set's other members.
    let others = |s: usize, x: usize| members(s).into_iter().filter(move |&m| m != x);
    for (i, node) in nodes.iter().enumerate() {
        for name in node.after {
            match (index_of(name), set_of(name)) {
                (Some(a), _) => graph.push((a, i)),
                (None, Some(s)) if node.sets.contains(name) => {
                    graph.extend(others(s, i).map(|m| (m, i)));
                }
                (None, Some(s)) => graph.push((end(s), i)),
                (None, None) => return Err(unknown(node.name, name)),
            }
        }
        for name in node.before {
            match (index_of(name), set_of(name)) {
                (Some(b), _) => graph.push((i, b)),
                (None, Some(s)) if node.sets.contains(name) => {
                    graph.extend(others(s, i).map(|m| (i, m)));
                }
                (None, Some(s)) => graph.push((i, start(s))),
                (None, None) => return Err(unknown(node.name, name)),
            }
        }
    }
    for set in sets {
        let own = set_of(set.name).expect("every set is named");
        for name in set.after {
            match (index_of(name), set_of(name)) {
                (Some(a), _) if nodes[a].sets.iter().any(|x| x == set.name) => {
                    graph.extend(others(own, a).map(|m| (a, m)));
                }
                (Some(a), _) => graph.push((a, start(own))),
                (None, Some(t)) => graph.push((end(t), start(own))),
                (None, None) => return Err(unknown(set.name, name)),
            }
        }
        for name in set.before {
            match (index_of(name), set_of(name)) {
                (Some(b), _) if nodes[b].sets.iter().any(|x| x == set.name) => {
                    graph.extend(others(own, b).map(|m| (m, b)));
                }
                (Some(b), _) => graph.push((end(own), b)),
                (None, Some(t)) => graph.push((end(own), start(t))),
                (None, None) => return Err(unknown(set.name, name)),
            }
        }
    }
    let name_of = |v: usize| {
        if v < n {
            nodes[v].name.to_owned()
        } else {
            format!("set `{}`", set_names[(v - n) / 2])
        }
    };
    let order: Vec<usize> = topological_order(total, &graph)
        .map_err(|cycle| {
            let mut systems: Vec<String> = Vec::new();
            for v in cycle {
                let name = name_of(v);
                if !systems.contains(&name) {
                    systems.push(name);
                }
            }
            ScheduleError::Cycle { systems }
        })?
        .into_iter()
        .filter(|&v| v < n)
        .collect();
    let explicit = system_edges(n, total, &graph);
    let mut position = vec![0; n];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }
    let mut unique = explicit.clone();
    unique.sort_unstable();
    unique.dedup();
    let mut edges: Vec<(usize, usize, EdgeReason)> = unique
        .iter()
        .map(|&(a, b)| (a, b, EdgeReason::Explicit))
        .collect();
    for a in 0..n {
        for b in a + 1..n {
            if let Some(conflict) = nodes[a].access.conflict(nodes[b].access) {
                let (first, second) = if position[a] < position[b] {
                    (a, b)
                } else {
                    (b, a)
                };
                match edges.iter_mut().find(|e| (e.0, e.1) == (first, second)) {
                    Some(edge) => edge.2 = EdgeReason::ExplicitAndConflict(conflict),
                    None => edges.push((first, second, EdgeReason::Conflict(conflict))),
                }
            }
        }
    }
    edges.sort_by_key(|&(a, b, _)| (position[a], position[b]));
    let mut segments = segments(&order, &position, &edges, |i| {
        nodes[i].access.is_exclusive()
    });
    for seg in segments.iter_mut().filter(|seg| !seg.exclusive) {
        let access = |i: usize| nodes[i].access;
        seg.lane_systems = (seg.systems.iter().copied())
            .filter(|&i| access(i).records_commands())
            .collect();
        seg.world_lane = seg.systems.iter().any(|&i| access(i).reads_whole_world());
    }
    Ok(Plan {
        order,
        edges,
        segments,
    })
}

/// The explicit orders between systems that `graph` (systems `0..n`, set nodes `n..total`)
/// implies: `(a, b)` for every path from system `a` to system `b` whose inner nodes are all
/// set nodes. Self-pairs order nothing and are left out.
fn system_edges(n: usize, total: usize, graph: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); total];
    for &(a, b) in graph {
        succs[a].push(b);
    }
    let mut out = Vec::new();
    let mut seen = vec![false; total];
    for a in 0..n {
        seen.iter_mut().for_each(|s| *s = false);
        let mut stack: Vec<usize> = succs[a].clone();
        while let Some(v) = stack.pop() {
            if std::mem::replace(&mut seen[v], true) {
                continue;
            }
            if v < n {
                if v != a {
                    out.push((a, v));
                }
            } else {
                stack.extend(&succs[v]);
            }
        }
    }
    out
}

/// Insertion order, except that a system's explicit predecessors are pulled in just before
/// it (depth-first, earliest first), so `x.before("y")` puts `x` right before `y`. On a cycle,
/// returns the systems on it.
fn topological_order(n: usize, edges: &[(usize, usize)]) -> Result<Vec<usize>, Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnStack,
        Done,
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        preds[b].push(a);
    }
    for p in &mut preds {
        p.sort_unstable();
        p.dedup();
    }
    let mut mark = vec![Mark::New; n];
    let mut order = Vec::with_capacity(n);
    // Explicit stack of (node, next predecessor to visit), so deep chains cannot overflow.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if mark[root] != Mark::New {
            continue;
        }
        mark[root] = Mark::OnStack;
        stack.push((root, 0));
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&pred) = preds[node].get(*next) {
                *next += 1;
                match mark[pred] {
                    Mark::New => {
                        mark[pred] = Mark::OnStack;
                        stack.push((pred, 0));
                    }
                    Mark::OnStack => {
                        let from = stack
                            .iter()
                            .position(|&(x, _)| x == pred)
                            .expect("on stack");
                        let mut cycle: Vec<usize> = stack[from..].iter().map(|&(x, _)| x).collect();
                        cycle.reverse();
                        return Err(cycle);
                    }
                    Mark::Done => {}
                }
            } else {
                mark[node] = Mark::Done;
                order.push(node);
                stack.pop();
            }
        }
    }
    Ok(order)
}

fn segments(
    order: &[usize],
    position: &[usize],
    edges: &[(usize, usize, EdgeReason)],
    exclusive: impl Fn(usize) -> bool,
) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for &i in order {
        let ex = exclusive(i);
        match out.last_mut() {
            Some(seg) if !ex && !seg.exclusive => seg.systems.push(i),
            _ => out.push(Segment {
                systems: vec![i],
                exclusive: ex,
                dep_counts: Vec::new(),
                dependents: Vec::new(),
                lane_systems: Vec::new(),
                world_lane: false,
            }),
        }
    }
    for seg in &mut out {
        let local = |i: usize| seg.systems.iter().position(|&s| s == i);
        let mut dep_counts = vec![0; seg.systems.len()];
        let mut dependents = vec![Vec::new(); seg.systems.len()];
        let mut pairs: Vec<(usize, usize)> = edges
            .iter()
            .filter_map(|&(a, b, _)| Some((local(a)?, local(b)?)))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        for (a, b) in pairs {
            debug_assert!(position[seg.systems[a]] < position[seg.systems[b]]);
            dep_counts[b] += 1;
            dependents[a].push(b);
        }
        seg.dep_counts = dep_counts;
        seg.dependents = dependents;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_keeps_insertion_where_free() {
        assert_eq!(topological_order(4, &[(3, 0)]).unwrap(), [3, 0, 1, 2]);
        assert_eq!(
            topological_order(4, &[(2, 1), (3, 1)]).unwrap(),
            [0, 2, 3, 1]
        );
        assert_eq!(topological_order(3, &[]).unwrap(), [0, 1, 2]);
    }

    #[test]
    fn cycle_is_named() {
        let cycle = topological_order(4, &[(0, 1), (1, 2), (2, 0), (3, 0)]).unwrap_err();
        let mut sorted = cycle.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2]);
    }
}
