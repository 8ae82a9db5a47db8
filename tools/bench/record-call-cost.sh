#!/usr/bin/env bash
# The recorder's cost per call: build/bin/call_cost (lseek, fstat, pwrite, open+close and a raw
# syscall() lseek, each N times in a loop hot in the cache, best of 5 rounds) run plain, recorded
# with dispatch off (PLT wrappers only) and recorded in full, in turns, RUNS times (default 5).
# Prints each call's median ns per call and what recording adds. The whole tarball's tar xf
# makes 765,806 calls in about 1.4 s, so 10 ns per call there is about 0.5% of its time.
# A benchmark, not a test: run it alone on a quiet machine.
# Usage: record-call-cost.sh [N]   (default 200000 calls per kind and round)
# Environment: IORR (default $root/build/bin/iorr), IORR_PRELOAD_LIB (the library to test), RUNS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
prog=$(dirname "$iorr")/call_cost
runs=${RUNS:-5}
n=${1:-200000}
[[ -x $iorr && -x $prog ]] || { echo "record-call-cost: build first (tools/build.sh)" >&2; exit 2; }
work=$(mktemp -d /dev/shm/iorr-callcost.XXXXXX)
trap 'rm -rf "$work"' EXIT
for ((i = 1; i <= runs; i++)); do
  "$prog" "$work" "$n" > "$work/plain.$i"
  IORR_DISPATCH=0 "$iorr" record -q -o "$work/t.iorr" -- "$prog" "$work" "$n" > "$work/plt.$i"
  "$iorr" record -q -o "$work/t.iorr" -- "$prog" "$work" "$n" > "$work/recorded.$i"
done
python3 - "$work" "$runs" << 'PY'
import statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def load(kind):
    per = {}
    for i in range(1, runs + 1):
        for line in open(f"{work}/{kind}.{i}"):
            name, ns = line.rsplit(" ", 1)
            per.setdefault(name, []).append(float(ns))
    return {k: statistics.median(v) for k, v in per.items()}
plain, plt, rec = load("plain"), load("plt"), load("recorded")
print(f"ns per call, medians of {runs} (each the best of 5 rounds):")
print(f"{'call':<12} {'plain':>8} {'PLT only':>9} {'recorded':>9} {'+PLT':>7} {'+recorded':>10}")
for k in plain:
    print(f"{k:<12} {plain[k]:8.1f} {plt[k]:9.1f} {rec[k]:9.1f} {plt[k]-plain[k]:+7.1f} {rec[k]-plain[k]:+10.1f}")
PY
