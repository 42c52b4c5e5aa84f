//! Turning systems, their access sets and explicit orders into a run plan.
//!
//! 1. Explicit orders (`after` / `before`, of systems or of named sets, where a set's order
//!    applies to each of its members) form a graph; a depth-first topological sort in
//!    insertion order, pulling each system's explicit predecessors in just before it, gives one
//!    total order (a cycle is an error naming its systems).
//! 2. Every pair of conflicting systems gets an edge in that total order, so conflicting
//!    systems never overlap and always run in the same order: the result never depends on
//!    thread timing.
//! 3. Exclusive systems (and sync points) conflict with everything, so they split the order
//!    into segments; the systems of one segment run on the pool as their edges allow.

use crate::access_set::{Conflict, SystemAccess};
use crate::error::ScheduleError;

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
    let is_set = |name: &str| {
        sets.iter().any(|s| s.name == name)
            || nodes.iter().any(|n| n.sets.iter().any(|s| s == name))
    };
    for name in sets
        .iter()
        .map(|s| s.name)
        .chain(nodes.iter().flat_map(|n| n.sets.iter().map(String::as_str)))
    {
        if index_of(name).is_some() {
            return Err(ScheduleError::SetNameClash(name.to_owned()));
        }
    }
    // A name is one system, or every member of a set (possibly none).
    let resolve = |from: &str, name: &String| -> Result<Vec<usize>, ScheduleError> {
        if let Some(i) = index_of(name) {
            Ok(vec![i])
        } else if is_set(name) {
            Ok((0..n).filter(|&i| nodes[i].sets.contains(name)).collect())
        } else {
            Err(ScheduleError::UnknownSystem {
                system: from.to_owned(),
                referenced: name.clone(),
            })
        }
    };
    let mut explicit: Vec<(usize, usize)> = Vec::new();
    // Self-pairs (a member of a set ordered against its own set) order nothing.
    let mut push = |a: usize, b: usize| {
        if a != b {
            explicit.push((a, b));
        }
    };
    for (i, node) in nodes.iter().enumerate() {
        for name in node.after {
            for a in resolve(node.name, name)? {
                push(a, i);
            }
        }
        for name in node.before {
            for b in resolve(node.name, name)? {
                push(i, b);
            }
        }
    }
    for set in sets {
        let members = resolve(set.name, &set.name.to_owned())?;
        for name in set.after {
            let others = resolve(set.name, name)?;
            for &m in &members {
                others.iter().for_each(|&a| push(a, m));
            }
        }
        for name in set.before {
            let others = resolve(set.name, name)?;
            for &m in &members {
                others.iter().for_each(|&b| push(m, b));
            }
        }
    }
    let order = topological_order(n, &explicit).map_err(|cycle| ScheduleError::Cycle {
        systems: cycle.iter().map(|&i| nodes[i].name.to_owned()).collect(),
    })?;
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
    let segments = segments(&order, &position, &edges, |i| {
        nodes[i].access.is_exclusive()
    });
    Ok(Plan {
        order,
        edges,
        segments,
    })
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
