#!/usr/bin/env bash
# The model's speed (README "Model speed", issue 5): events per second of user CPU for one
# configuration (ext4, hdd-7200, write cache on, barriers on), and the user CPU and wall time
# of the 4-way what-if sweep (ext4 x cache on,off x barriers on,off), medians of RUNS runs.
# User CPU, not wall time, so a busy machine moves the figures less; where the hardware counts
# them, instructions too (perf stat), and with CALLGRIND=1 valgrind's instruction count of one
# configuration, which does not move at all.
# Usage: [RUNS=N] [CALLGRIND=1] [IORR=BIN] model-speed.sh [TRACE]
# TRACE defaults to the whole tarball's tar xf trace of model-vs-real, else the demo's (a trace
# of IORR_DEMO_FULL=1 bash tools/demo.sh is the same workload).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}  # IORR=BINARY to time another build
runs=${RUNS:-7}
trace=${1:-}
if [[ -z $trace ]]; then
  for t in /var/tmp/mvr-full/tar.iorr /var/tmp/iorr-demo.iorr; do
    [[ -f $t ]] && { trace=$t; break; }
  done
fi
[[ -n $trace && -f $trace ]] || { echo "usage: model-speed.sh TRACE" >&2; exit 2; }
[[ -x $iorr ]] || { echo "model-speed: $iorr is missing: build first (tools/build.sh)" >&2; exit 2; }

one=(model "$trace" --fs ext4 --disk hdd-7200 --cache on --barrier on)
sweep=(model "$trace" --fs ext4 --disk hdd-7200 --cache on,off --barrier on,off)
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
user_s() {  # user CPU seconds of one run
  local TIMEFORMAT=%U
  { time "$iorr" "$@" > /dev/null 2>&1; } 2>&1
}
wall_s() {
  local t0=$EPOCHREALTIME
  "$iorr" "$@" > /dev/null 2>&1
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f\n", b - a}'
}

events=$("$iorr" model "$trace" --fs ext4 --disk hdd-7200 --cache on --barrier on --json 2> /dev/null |
  grep -o '"events":[0-9]*' | head -1 | cut -d: -f2)
echo "trace: $trace ($events events counted by the model)"
"$iorr" "${one[@]}" > /dev/null 2>&1  # warm the page cache

u=$(for _ in $(seq "$runs"); do user_s "${one[@]}"; done | median)
echo "one configuration: user $u s, $(awk -v n="$events" -v s="$u" 'BEGIN {printf "%.2f", n / s / 1e6}') M events/s (median of $runs)"
if perf stat -x, -e instructions:u true 2>&1 | grep -q '^[0-9]'; then
  ins=$(for _ in $(seq "$runs"); do
    perf stat -x, -e instructions:u "$iorr" "${one[@]}" 2>&1 > /dev/null | grep instructions | cut -d, -f1
  done | median)
  echo "one configuration: $ins instructions:u (perf, median)"
fi
if [[ ${CALLGRIND:-0} == 1 ]]; then
  ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$iorr" "${one[@]}" 2>&1 > /dev/null |
    grep -o 'refs: *[0-9,]*' | tr -d ', ' | cut -d: -f2)
  echo "one configuration: $ir instructions (callgrind)"
fi

su=$(for _ in $(seq "$runs"); do user_s "${sweep[@]}"; done | median)
sw=$(for _ in $(seq "$runs"); do wall_s "${sweep[@]}"; done | median)
echo "4-way sweep: user $su s, wall $sw s (median of $runs; target under 2 s)"
