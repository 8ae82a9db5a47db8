#!/usr/bin/env bash
# The main job on a real workload: set-up, build, then `tar xf` of the Linux source tarball
# (a 5,000-entry subset; IORR_DEMO_FULL=1 for all 83,731 entries) traced with strace, imported
# into an iorr trace, summarised and checked. Recording, replay and the model come with their
# issues; this script grows with them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tools/setup.sh
bash tools/build.sh >/dev/null
iorr=$root/build/bin/iorr
if [[ ${IORR_DEMO_FULL:-0} == 1 ]]; then
  log=$(bash tools/bench/strace-log.sh)
else
  log=$(bash tools/bench/strace-log.sh --subset 5000)
fi
trace=${IORR_DEMO_TRACE:-/var/tmp/iorr-demo.iorr}

echo "== strace log of tar xf: $log ($(zstd -dc "$log" | wc -l) lines)"
echo "== iorr import strace"
"$iorr" import strace "$log" -o "$trace"
echo
echo "== iorr stats $trace"
"$iorr" stats "$trace"
echo
echo "== iorr dump $trace (first 12 file-system calls after tar's start-up)"
"$iorr" dump "$trace" | grep -v '^#' | grep -E 'openat\(AT_FDCWD, "linux' -A 11 -m 1 || true
echo
echo "== every call of the log is in the trace"
bash tools/check-strace-counts.sh "$iorr" "$log" "$trace"
