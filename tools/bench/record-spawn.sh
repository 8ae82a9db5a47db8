#!/usr/bin/env bash
# posix_spawn's cost, plain and recorded, by the size of the spawning process: build/bin/spawn_cost
# writes HEAP MiB, then spawns /bin/true N times, waiting for each and writing its memory again
# after each (as make or ninja do between their spawns). Runs plain and recorded in turns, RUNS
# times (default 5), for each heap size, and prints the medians: microseconds per spawn+wait,
# per rewrite of the memory after it, and the page faults of that rewrite. A child on a copy of
# the parent's memory (the recorder's posix_spawn until stop 25) costs a page-table copy per
# spawn and a fault per page written after; one on the parent's memory (glibc's, and the
# recorder's since) neither.
# A benchmark, not a test: run it alone on a quiet machine.
# Usage: record-spawn.sh [N]   (default 50 spawns per run)
# Environment: IORR (default $root/build/bin/iorr), RUNS, HEAPS (MiB, default "0 64 256").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
prog=$root/build/bin/spawn_cost
runs=${RUNS:-5}
n=${1:-50}
heaps=${HEAPS:-0 64 256}
[[ -x $iorr && -x $prog ]] || { echo "record-spawn: build first (tools/build.sh)" >&2; exit 2; }
work=$(mktemp -d /dev/shm/iorr-spawn.XXXXXX)
source "$root/tools/bench/quiet-host.sh"
trap 'rm -rf "$work"; quiet_host_end' EXIT
quiet_host_begin

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for r in $(seq 1 "$runs"); do
  echo "round $r of $runs" >&2
  for heap in $heaps; do
    "$prog" "$heap" "$n" >> "$work/plain.$heap"
    "$iorr" record -q -o "$work/t.iorr" -- "$prog" "$heap" "$n" >> "$work/recorded.$heap"
  done
done
printf '%-10s %-9s %14s %14s %16s\n' heap run "spawn+wait us" "rewrite us" "rewrite faults"
for heap in $heaps; do
  for kind in plain recorded; do
    f=$work/$kind.$heap
    printf '%-10s %-9s %14s %14s %16s\n' "$heap MiB" "$kind" "$(cut -d' ' -f1 "$f" | median)" \
      "$(cut -d' ' -f2 "$f" | median)" "$(cut -d' ' -f3 "$f" | median)"
  done
done
echo "(medians of $runs runs of $n spawns each, plain and recorded in turns)"
