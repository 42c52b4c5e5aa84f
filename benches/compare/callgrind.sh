#!/usr/bin/env bash
# Instructions per iteration of each single-threaded workload on each engine, counted by
# valgrind's callgrind: a figure that, unlike wall time, does not move when other processes
# share the machine (it says nothing of cache misses or memory bandwidth, though).
#
# Usage (from benches/compare, after `cargo build --release`): ./callgrind.sh [workload...]
# Writes results/instructions.md. Needs valgrind (callgrind_annotate comes with it).
set -euo pipefail
cd "$(dirname "$0")"
bin=target/release/compare
out=results/instructions.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# workload:iterations (enough to dwarf the per-call harness cost, few enough for valgrind)
all="simple_insert:20 simple_iter:200 simple_iter_chunk:200 frag_iter:1000 frag_iter_many:100
add_remove:5 add_remove_wide:5 iter_1m:3 iter_1m_chunk:3 spawn_batch_1m:2"
engines="ours hecs bevy_ecs legion raw raw_flat"
wanted="${*:-}"

{
  echo "| workload | iterations | $(echo $engines | sed 's/ / | /g') |"
  echo "|---|---:|$(for _ in $engines; do printf -- '---:|'; done)"
} > "$out"
for item in $all; do
  w=${item%%:*}; n=${item##*:}
  if [[ -n "$wanted" && " $wanted " != *" $w "* ]]; then continue; fi
  row="| $w | $n |"
  for e in $engines; do
    f="$tmp/$w.$e"
    valgrind --tool=callgrind --callgrind-out-file="$f" "$bin" --only "$w" --engines "$e" \
      --profile "$n" >/dev/null 2>"$tmp/log" || { echo "valgrind failed: $w $e" >&2; exit 1; }
    # Inclusive cost of the harness closure = the timed iterations only (setup excluded).
    ir=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null \
      | grep -E 'harness\.rs:ecs_compare::harness::(repeat|build_each)' | head -1 \
      | awk '{gsub(",", "", $1); print $1}' || true)
    if [[ -z "$ir" ]]; then
      row="$row — |"
    else
      row="$row $(( ir / n )) |"
    fi
    echo "$w $e ${ir:-none}" >&2
  done
  echo "$row" >> "$out"
done
echo "wrote $out" >&2
