#!/usr/bin/env bash
# The recorder's cost (issue "Numbers to reach"): `tar xf` of the whole Linux tarball into tmpfs
# and `rm -rf` of the extracted tree, each run plain and under `iorr record` in turns
# (plain then recorded, recorded then plain, ...), RUNS times (default 5). Prints per workload the
# median wall times and their ratio, the trace's bytes per event at 1 us (and, from one extra
# run, at 1 ns), the peak RSS with and without the recorder (/usr/bin/time %M: the largest
# process of the tree), the median of the per-round ratios with a bootstrap interval, and one
# `strace -f -o /dev/null` run for comparison (STRACE=0 skips it).
# A benchmark, not a test: it takes minutes; run it alone on a quiet machine.
# Usage: record-overhead.sh [--subset N]   (N: a tarball of the first N entries, for a quick try)
# Environment: IORR_SHARED (default: see tools/shared-dir.sh), IORR (default $root/build/bin/iorr), RUNS,
# TMPFS (default /dev/shm), STRACE.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
source "$root/tools/shared-dir.sh"
runs=${RUNS:-5}
tmpfs=${TMPFS:-/dev/shm}
[[ -x $iorr ]] || { echo "record-overhead: $iorr is missing (tools/build.sh)" >&2; exit 2; }
if [[ ! -x /usr/bin/time ]]; then
  echo "record-overhead: /usr/bin/time is missing (apt-get install time)" >&2
  exit 2
fi
[[ $(stat -f -c %T "$tmpfs") == tmpfs ]] ||
  echo "record-overhead: warning: $tmpfs is not a tmpfs" >&2
tarball=$(bash "$shared/workloads/linux-tar.sh" "$@")
work=$(mktemp -d "$tmpfs/iorr-overhead.XXXXXX")
source "$root/tools/bench/quiet-host.sh"
trap 'rm -rf "$work"; quiet_host_end' EXIT
quiet_host_begin
mkdir "$work/x"

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
seconds() { printf '%.3f' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
events_of() { "$iorr" stats --json "$1" | grep -o '"events":[0-9]*' | cut -d: -f2; }

# timed KIND WORKLOAD [RECORD_ARGS...]: runs the workload in $work/x once and appends
# "seconds tree_peak_rss_kb program_peak_rss_kb" to $work/KIND-WORKLOAD (KIND: plain, recorded
# or strace). The tree's peak is the largest process under /usr/bin/time (iorr itself, maybe);
# the program's is the workload's own, measured by a /usr/bin/time inside the recording.
timed() {
  local kind=$1 workload=$2
  shift 2
  local cmd
  case $workload in
    tar) cmd=(tar xf "$tarball") ;;
    rm) cmd=(rm -rf "$work/x/$top") ;;
  esac
  cmd=(/usr/bin/time -f %M -o "$work/rss-program" "${cmd[@]}")
  case $kind in
    recorded) cmd=("$iorr" record -q -o "$work/$workload.iorr" "$@" -- "${cmd[@]}") ;;
    strace) cmd=(strace -f -o /dev/null "${cmd[@]}") ;;
  esac
  local t0=$EPOCHREALTIME
  (cd "$work/x" && /usr/bin/time -f %M -o "$work/rss-tree" "${cmd[@]}")
  local t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", b - a}')" \
    "$(tail -n 1 "$work/rss-tree") $(tail -n 1 "$work/rss-program")" >> "$work/$kind-$workload"
}

top=$(tar tf "$tarball" 2> /dev/null | head -n 1 | cut -d/ -f1 || true)  # tar dies of SIGPIPE
echo "workload: $tarball ($(du -h "$tarball" | cut -f1)), extracted into $tmpfs ($top/)"
# The recorder reads the TSC where it is the kernel's clocksource or where `iorr record` finds it
# in step on every CPU, else clock_gettime twice per call (29.5 ns a read against 12 to 20 ns on
# stop 20's kvm-clock host): say which, from a recording's header.
"$iorr" record -q -o "$work/clock.iorr" -- true
echo "recorder clock: $("$iorr" dump "$work/clock.iorr" 2> /dev/null |
  sed -n 's/^# recorder_clock: //p' | head -n 1)"
rm -f "$work/clock.iorr"
echo "warming the page cache"
cat "$tarball" > /dev/null
(cd "$work/x" && tar xf "$tarball") && rm -rf "${work:?}/x/$top"

# Odd rounds run plain first, even rounds recorded first: a host that slows down (or speeds up)
# through the run then favours neither side. (Stop 21, plain first in every round: the plain
# runs drifted from about 1.9 to 2.4 s over 21 rounds, and the paired ratio read 1.081x where
# the ratio of the medians read 1.042x.)
plain_pair() {
  timed plain tar
  timed plain rm
}
recorded_pair() {
  timed recorded tar
  trace_tar_bytes=$(stat -c %s "$work/tar.iorr")
  trace_tar_events=$(events_of "$work/tar.iorr")
  timed recorded rm
  trace_rm_bytes=$(stat -c %s "$work/rm.iorr")
  trace_rm_events=$(events_of "$work/rm.iorr")
  rm -f "$work/tar.iorr" "$work/rm.iorr"
}
for i in $(seq "$runs"); do
  echo "round $i of $runs"
  if ((i % 2)); then
    plain_pair
    recorded_pair
  else
    recorded_pair
    plain_pair
  fi
done

# One more recorded pair at 1 ns resolution, for the trace size only.
timed recorded tar --time-unit 1
tar_ns_bytes=$(stat -c %s "$work/tar.iorr")
tar_ns_events=$(events_of "$work/tar.iorr")
timed recorded rm --time-unit 1
rm_ns_bytes=$(stat -c %s "$work/rm.iorr")
rm_ns_events=$(events_of "$work/rm.iorr")
rm -f "$work/tar.iorr" "$work/rm.iorr"

if [[ ${STRACE:-1} != 0 ]] && command -v strace >/dev/null; then
  echo "strace runs (one each)"
  timed strace tar
  timed strace rm
fi

echo
for w in tar rm; do
  case $w in tar) label="tar xf" ;; rm) label="rm -rf" ;; esac
  plain=$(cut -d' ' -f1 "$work/plain-$w" | median)
  recorded=$(cut -d' ' -f1 "$work/recorded-$w" | head -n "$runs" | median)
  line="$label: plain $(seconds "$plain") s, recorded $(seconds "$recorded") s (medians of $runs):"
  line+=" $(ratio "$recorded" "$plain")x (target 1.05x)"
  if [[ -s $work/strace-$w ]]; then
    s=$(cut -d' ' -f1 "$work/strace-$w")
    line+="; strace -f: $(seconds "$s") s ($(ratio "$s" "$plain")x)"
  fi
  echo "$line"
  echo "  runs in order (s): plain $(cut -d' ' -f1 "$work/plain-$w" | xargs printf '%.3f ')|" \
    "recorded $(cut -d' ' -f1 "$work/recorded-$w" | head -n "$runs" | xargs printf '%.3f ')"
  # Each round's plain and recorded runs follow each other: the ratio within a round cancels
  # the host's slow spells (a run-to-run spread of about 10% on this project's VMs). The
  # median of those ratios, with a 90% interval from 2,000 bootstrap resamples of the rounds,
  # says what the rounds can tell apart from the 5% target.
  paste -d' ' <(cut -d' ' -f1 "$work/plain-$w") <(cut -d' ' -f1 "$work/recorded-$w" | head -n "$runs") |
    python3 -c '
import random, statistics, sys
r = [float(b) / float(a) for a, b in (l.split() for l in sys.stdin)]
rng = random.Random(1)
m = sorted(statistics.median(rng.choices(r, k=len(r))) for _ in range(2000))
print("  paired: median of the %d round ratios %.3fx, 90%% interval %.3f to %.3f" %
      (len(r), statistics.median(r), m[100], m[1899]))'
  rss_plain=$(cut -d' ' -f3 "$work/plain-$w" | median)
  rss_rec=$(cut -d' ' -f3 "$work/recorded-$w" | head -n "$runs" | median)
  rss_tree=$(cut -d' ' -f2 "$work/recorded-$w" | head -n "$runs" | median)
  awk -v p="$rss_plain" -v r="$rss_rec" -v t="$rss_tree" 'BEGIN {
    printf "  peak RSS of %s (median): plain %.1f MB, recorded %.1f MB: recorder +%.1f MB",
      "the program", p / 1024, r / 1024, (r - p) / 1024
    printf " (target 16 MB); largest process of the recorded tree %.1f MB\n", t / 1024 }'
done
for w in tar rm; do
  case $w in
    tar) b=$trace_tar_bytes e=$trace_tar_events nb=$tar_ns_bytes ne=$tar_ns_events label="tar xf" ;;
    rm) b=$trace_rm_bytes e=$trace_rm_events nb=$rm_ns_bytes ne=$rm_ns_events label="rm -rf" ;;
  esac
  awk -v b="$b" -v e="$e" -v nb="$nb" -v ne="$ne" -v l="$label" 'BEGIN {
    printf "%s trace: %d events, %d bytes: %.2f bytes/event at 1 us (target 4); at 1 ns %.2f\n",
      l, e, b, b / e, nb / ne }'
done
