#!/usr/bin/env bash
# How long a parent waits to learn that a recorded child has ended: the time from the child's
# exit_group system call to the return of the parent's wait4 that reaps it, for N runs of a short
# program under sh (the shell-loop pattern of record-processes.sh), plain and recorded, in turns,
# RUNS times (default 5). Read from the kernel's own tracepoints (perf record -a of
# syscalls:sys_enter_exit_group and syscalls:sys_exit_wait4), so the figure holds only the
# process's end, not its start or what it did: on a noisy VM whose whole-loop times spread by
# 2x, this part can still be compared. Under recording the exit_group seen is the library's own,
# after its last flush (the program's is caught first). Prints each kind's median over all its
# processes, with the 25th and 75th percentiles, and the medians of the rounds.
# A benchmark, not a test: run it alone on a quiet machine. Needs perf and root (tracepoints).
# Usage: record-exit-latency.sh [N]   (default 300 processes per run)
# BASE_LIB=PATH: a third kind, recorded with that build of libiorr-preload.so (the audit
# module beside it), in the same rounds: a change's effect side by side.
# Environment: IORR (default $root/build/bin/iorr), RUNS, PROG (default /bin/true), BASE_LIB.
set -euo pipefail
command -v perf > /dev/null || { echo "record-exit-latency: needs perf (apt-get install linux-perf)" >&2; exit 2; }
bench=record-exit-latency
source "$(dirname "$0")/process-loop.sh" "$@"

# latencies KIND: one run of the loop under perf; appends each child's exit-to-reap time (us)
# to $work/KIND.all and the run's median to $work/KIND.
latencies() {
  local kind=$1 cmd
  case $kind in
    plain) cmd=(sh -c "$loop") ;;
    recorded) cmd=("$iorr" record -q -o "$work/t.iorr" -- sh -c "$loop") ;;
    base) cmd=(env IORR_PRELOAD_LIB="$base" "$iorr" record -q -o "$work/b.iorr" -- sh -c "$loop") ;;
  esac
  perf record -q -o "$work/perf.data" -a -e syscalls:sys_enter_exit_group \
    -e syscalls:sys_exit_wait4 -- "${cmd[@]}" > /dev/null 2> "$work/perf.err" || {
    echo "record-exit-latency: perf record failed: $(head -c 300 "$work/perf.err")" >&2
    exit 2
  }
  perf script -i "$work/perf.data" -F pid,time,event,trace 2> /dev/null | awk '
    # "PID TIME: EVENT: ARGS": a child'"'"'s exit_group by its pid, then the wait4 returning it.
    function hex(s,   i, v) {
      v = 0
      for (i = 3; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v
    }
    {
      pid = $1; t = $2; sub(":", "", t)
      if ($3 ~ /sys_enter_exit_group/) { start[pid] = t; next }
      if ($3 ~ /sys_exit_wait4/ && match($0, /0x[0-9a-f]+/)) {
        c = hex(substr($0, RSTART, RLENGTH))
        if (c in start) { printf "%.1f\n", (t - start[c]) * 1e6; delete start[c] }
      }
    }' > "$work/run"
  [[ -s $work/run ]] || { echo "record-exit-latency: no exits seen (perf script)" >&2; exit 2; }
  cat "$work/run" >> "$work/$kind.all"
  sort -n "$work/run" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}' >> "$work/$kind"
}

kinds="plain recorded"
[[ -n $base ]] && kinds="$kinds base"
echo "exit_group to the parent's wait4: $n x $prog under sh, $runs rounds ($kinds)"
for i in $(seq "$runs"); do
  for kind in $kinds; do latencies "$kind"; done
done
for kind in $kinds; do
  sort -n "$work/$kind.all" | awk -v k="$kind" -v rounds="$(xargs < "$work/$kind")" '
    {a[NR] = $1}
    END {
      printf "%-9s median %6.1f us (25%%: %.1f, 75%%: %.1f) over %d processes   round medians: %s\n",
        k, a[int((NR + 1) / 2)], a[int((NR + 3) / 4)], a[int((3 * NR + 3) / 4)], NR, rounds
    }'
done
