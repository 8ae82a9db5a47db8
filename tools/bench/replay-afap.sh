#!/usr/bin/env bash
# Replay speed (issue 4): `tar xf` of the whole Linux tarball into tmpfs against `iorr replay
# --timing afap` of its recording into an empty tmpfs root (prepare not counted: the replay's
# own "replay" time is used), in turns, RUNS times (default 5); prints medians, the ratio,
# calls/s and the replayer's peak RSS. Usage: replay-afap.sh [--subset N]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
source "$root/tools/shared-dir.sh"
runs=${RUNS:-5}
tarball=$(bash "$shared/workloads/linux-tar.sh" "$@")
work=$(mktemp -d /dev/shm/iorr-replay-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
mkdir "$work/x"
(cd "$work/x" && "$iorr" record -q -o "$work/t.iorr" -- tar xf "$tarball")
events=$("$iorr" stats --json "$work/t.iorr" | grep -o '"events":[0-9]*' | cut -d: -f2)
rm -rf "$work/x"
cat "$tarball" > /dev/null  # warm the page cache
for i in $(seq "$runs"); do
  mkdir "$work/x"
  s=$EPOCHREALTIME
  (cd "$work/x" && tar xf "$tarball")
  e=$EPOCHREALTIME
  awk -v a="$s" -v b="$e" 'BEGIN {printf "%.6f\n", b - a}' >> "$work/plain"
  rm -rf "$work/x"
  mkdir "$work/root"
  /usr/bin/time -f "%M" -o "$work/rss.$i" "$iorr" replay "$work/t.iorr" --root "$work/root" \
    --cache warm --json > "$work/rep.$i.json"
  grep -o '"replay_seconds":[0-9.]*' "$work/rep.$i.json" | cut -d: -f2 >> "$work/replay"
  grep -q '"mismatches":0' "$work/rep.$i.json" || echo "warning: run $i had mismatches"
  rm -rf "$work/root"
done
p=$(median < "$work/plain")
r=$(median < "$work/replay")
rss=$(cat "$work"/rss.* | median)
echo "tar xf: $p s; replay afap: $r s (medians of $runs): $(awk -v a="$r" -v b="$p" 'BEGIN {printf "%.3f", a / b}')x (target 1.1x)"
echo "  runs (s): plain $(tr '\n' ' ' < "$work/plain")| replay $(tr '\n' ' ' < "$work/replay")"
echo "  $events events, $(awk -v n="$events" -v r="$r" 'BEGIN {printf "%.0f", n / r}') calls/s; replayer peak RSS $((rss / 1024)) MB (target 100 MB)"
