#!/usr/bin/env bash
# What a recording costs whatever the program does: `iorr record -- /bin/true` against
# `/bin/true`, in turns, RUNS times (default 31). That is the launcher's start (its own loading,
# the trace's header, the clock), the program's start under the library (the audit module, the
# library's set-up, its writer thread) and the end (the last chunk, the trace's end record).
# `rm -rf` of the Linux tree runs in about 0.7 s, so each 7 ms here is 1% of it.
# Rows: plain; recorded with the clock kept for the boot (every recording but the boot's first);
# recorded with IORR_CLOCK=check (the boot's first: the TSC check and calibration again);
# recorded with IORR_PATCH=0 (no decoding of libc's system call sites by the launcher).
# With perf, the page faults of one recorded run (the launcher's and the program's): on stop 24's
# host a fault cost 11 us.
# A benchmark, not a test: run it alone on a quiet machine.
# Usage: record-start.sh   Environment: IORR (default $root/build/bin/iorr), RUNS,
# IORR_PRELOAD_LIB (the library to test).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
runs=${RUNS:-31}
[[ -x $iorr ]] || { echo "record-start: $iorr is missing (tools/build.sh)" >&2; exit 2; }
work=$(mktemp -d /dev/shm/iorr-start.XXXXXX)
source "$root/tools/bench/quiet-host.sh"
trap 'rm -rf "$work"; quiet_host_end' EXIT
quiet_host_begin
true_bin=$(type -P true)  # the program, not the shell's builtin

# once KIND: one run, its wall time in ms appended to $work/KIND.
once() {
  local kind=$1 cmd
  case $kind in
    plain) cmd=("$true_bin") ;;
    kept) cmd=("$iorr" record -q -o "$work/t.iorr" -- "$true_bin") ;;
    check) cmd=(env IORR_CLOCK=check "$iorr" record -q -o "$work/t.iorr" -- "$true_bin") ;;
    nopatch) cmd=(env IORR_PATCH=0 "$iorr" record -q -o "$work/t.iorr" -- "$true_bin") ;;
  esac
  local t0=$EPOCHREALTIME
  "${cmd[@]}"
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) * 1000}' >> "$work/$kind"
}
median() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

kinds=(plain kept check nopatch)
"$iorr" record -q -o "$work/t.iorr" -- "$true_bin"  # the clock kept, the page cache warm
for ((i = 0; i < runs; i++)); do
  for ((k = 0; k < ${#kinds[@]}; k++)); do once "${kinds[(i + k) % ${#kinds[@]}]}"; done
done
plain=$(median "$work/plain")
printf '%-34s %8s %10s\n' "" "median" "over plain"
for kind in "${kinds[@]}"; do
  m=$(median "$work/$kind")
  case $kind in
    plain) label="true" ;;
    kept) label="iorr record (clock kept)" ;;
    check) label="iorr record, IORR_CLOCK=check" ;;
    nopatch) label="iorr record, IORR_PATCH=0" ;;
  esac
  printf '%-34s %6.2f ms %+8.2f ms\n' "$label" "$m" "$(awk -v a="$m" -v b="$plain" 'BEGIN {print a - b}')"
done
echo "(medians of $runs runs each, in turns)"
if command -v perf > /dev/null; then
  faults() {
    perf stat -x, -e page-faults "$@" 2>&1 > /dev/null | awk -F, '/page-faults/ {print $1}'
  }
  echo "page faults: true $(faults "$true_bin"), recorded $(faults "$iorr" record -q -o "$work/t.iorr" -- "$true_bin")"
fi
