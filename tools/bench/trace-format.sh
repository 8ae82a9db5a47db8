#!/usr/bin/env bash
# The trace format's figures (README "Figures"): size per event at 1 us and 1 ns resolution,
# encode and decode speed, `iorr stats` speed, on the strace log of `tar xf` of the whole Linux
# tarball (765,808 calls); plus the per-name count check against the log and the JSON lines
# round trip. Needs a built tree (tools/build.sh). Run alone: it times things.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/bin
runs=${RUNS:-5}
log=$(bash "$root/tools/bench/strace-log.sh" "$@")
work=$(mktemp -d /var/tmp/iorr-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
seconds() {  # wall time of a command, in seconds with microseconds
  local t0=$EPOCHREALTIME
  "$@" > /dev/null
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.6f\n", b - a}'
}

echo "log: $log"
lines=$(zstd -dc "$log" | wc -l)
log_bytes=$(zstd -dc "$log" | wc -c)
echo "strace text: $log_bytes bytes, $lines lines, $(awk -v b="$log_bytes" -v n="$lines" 'BEGIN {printf "%.1f", b / n}') bytes/line"

for unit in 1000 1; do
  t=$work/tar-$unit.iorr
  "$bin/iorr" import strace -q --time-unit "$unit" "$log" -o "$t"
  ev=$("$bin/iorr" stats --json "$t" | grep -o '"events":[0-9]*' | cut -d: -f2)
  sz=$(stat -c %s "$t")
  echo "trace at $unit ns resolution: $sz bytes, $ev events, $(awk -v b="$sz" -v n="$ev" 'BEGIN {printf "%.2f", b / n}') bytes/event"
done
t=$work/tar-1000.iorr

bash "$root/tools/check-strace-counts.sh" "$bin/iorr" "$log" "$t"

"$bin/iorr" dump --json "$t" > "$work/a.jsonl"
"$bin/iorr" import jsonl "$work/a.jsonl" -o "$work/b.iorr"
"$bin/iorr" dump --json "$work/b.iorr" | cmp - "$work/a.jsonl" && echo "jsonl round trip: identical"

"$bin/trace_codec_bench" "$t" "$runs"
"$bin/trace_codec_bench" "$work/tar-1.iorr" "$runs" | grep -E 'size|decode'

for i in $(seq "$runs"); do
  seconds "$bin/iorr" stats "$t"
done | median | awk -v n="$ev" '{printf "iorr stats (whole command): %.3f s, %.1f M events/s (median of '"$runs"')\n", $1, n / $1 / 1e6}'
for i in $(seq "$runs"); do
  seconds "$bin/iorr" import strace -q "$log" -o "$work/imp.iorr"
done | median | awk -v n="$ev" '{printf "iorr import strace (zstd log): %.3f s, %.1f M lines/s (median of '"$runs"')\n", $1, n / $1 / 1e6}'
