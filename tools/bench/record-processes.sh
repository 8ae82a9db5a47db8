#!/usr/bin/env bash
# The recorder's cost per process: a shell loop that runs N short programs (fork, exec, exit),
# the pattern of configure scripts, make recipes and shell pipelines. Runs the loop plain, with
# the library preloaded but inactive (what loading it costs), recorded with dispatch off
# (PLT wrappers only), recorded without the audit module that catches the loader's calls
# (IORR_AUDIT=0) and recorded (the default, with it), in turns, RUNS times (default 5), and prints each
# one's median wall time per iteration and what recording adds to it, with the recorded trace's
# size. One more kind records nothing: `thread` preloads build/lib/libiorr-bench-idle-thread.so,
# which starts one sleeping thread per process as the recorder starts its writer, so what a
# second thread alone costs each process (its creation, its end, the address space shared
# across CPUs) reads beside what recording adds. A benchmark, not a test: run it alone on a quiet machine (2 cores here).
# Usage: record-processes.sh [N]   (default 300 iterations)
# BASE_LIB=PATH: a sixth kind, recorded (the default) with that build of libiorr-preload.so
# (libiorr-audit.so beside it), in the same rounds: a change's effect side by side.
# Environment: IORR (default $root/build/bin/iorr), RUNS, PROG (default /bin/true), BASE_LIB.
set -euo pipefail
bench=record-processes
source "$(dirname "$0")/process-loop.sh" "$@"

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
# timed KIND: one run of the loop, appends microseconds per iteration to $work/KIND.
timed() {
  local kind=$1 cmd
  case $kind in
    plain) cmd=(sh -c "$loop") ;;
    inactive) cmd=(env LD_PRELOAD="$lib" sh -c "$loop") ;;
    thread) cmd=(env LD_PRELOAD="$idle" sh -c "$loop") ;;
    plt) cmd=(env IORR_DISPATCH=0 "$iorr" record -q -o "$work/t.iorr" -- sh -c "$loop") ;;
    noaudit) cmd=(env IORR_AUDIT=0 "$iorr" record -q -o "$work/t.iorr" -- sh -c "$loop") ;;
    recorded) cmd=("$iorr" record -q -o "$work/t.iorr" -- sh -c "$loop") ;;
    base) cmd=(env IORR_PRELOAD_LIB="$base" "$iorr" record -q -o "$work/b.iorr" -- sh -c "$loop") ;;
  esac
  local t0=$EPOCHREALTIME
  "${cmd[@]}" > /dev/null
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN {printf "%.1f\n", (b - a) / n * 1e6}' >> "$work/$kind"
}

idle=$(dirname "$lib")/libiorr-bench-idle-thread.so
kinds="plain inactive plt noaudit recorded"
# (The kind is left out where that library was not built.)
[[ -f $idle ]] && kinds="plain thread inactive plt noaudit recorded"
[[ -n $base ]] && kinds="$kinds base"
echo "loop: $n x $prog under sh, $runs rounds (plain, a sleeping thread preloaded (nothing" \
  "recorded), preloaded inactive, recorded PLT-only, recorded without the loader's calls" \
  "(IORR_AUDIT=0), recorded (the default, with them))"
for i in $(seq "$runs"); do
  for kind in $kinds; do timed "$kind"; done
done
plain=$(median < "$work/plain")
for kind in $kinds; do
  m=$(median < "$work/$kind")
  awk -v k="$kind" -v m="$m" -v p="$plain" -v runs="$(xargs < "$work/$kind")" 'BEGIN {
    printf "%-9s %7.0f us per process (median), +%4.0f us, %.2fx   runs: %s\n", k, m, m - p, m / p, runs }'
done
if [[ -n $base ]]; then
  # Paired by round (the rounds drift on a noisy host): what the recorded kind adds minus what
  # the base library adds, per round.
  paste "$work/recorded" "$work/base" | awk '{print $1 - $2}' | median > "$work/diff"
  echo "recorded - base, paired by round (median): $(cat "$work/diff") us per process" \
    "  rounds: $(paste "$work/recorded" "$work/base" | awk '{printf "%.0f ", $1 - $2}')"
fi
events=$("$iorr" stats --json "$work/t.iorr" | grep -o '"events":[0-9]*' | cut -d: -f2)
echo "trace of the last recorded run: $events events, $(stat -c %s "$work/t.iorr") bytes"
