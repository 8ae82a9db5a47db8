#!/usr/bin/env bash
# The recorder's cost per call: build/bin/call_cost (lseek, fstat, pwrite, open+close and a raw
# syscall() lseek, each N times in a loop hot in the cache, best of ROUNDS) run plain, recorded
# with dispatch off (PLT wrappers only) and recorded in full, in turns, RUNS times (default 5).
# Prints each call's median ns per call and what recording adds. The whole tarball's tar xf
# makes 765,806 calls in about 1.4 s, so 10 ns per call there is about 0.5% of its time.
# COLD=KIB: each call comes after writes over KIB KiB of memory (one per cache line), which push
# the library out of the caches as a real program's kernel work does between its calls (try
# COLD=1024 with N=20000: this machine's L2 is 1 MiB); the writes cost plain and recorded alike.
# BASE_LIB=PATH: a fourth column, recorded with that build of libiorr-preload.so
# (IORR_PRELOAD_LIB), to compare two builds side by side, and the two builds' paired
# differences (each run's recorded minus the same round's base; use RUNS=25 or more on a noisy
# host). tools/bench/record-call-instructions.sh counts instructions instead, free of noise.
# A benchmark, not a test: run it alone on a quiet machine.
# Usage: record-call-cost.sh [N]   (default 200000 calls per kind and round)
# Environment: IORR (default $root/build/bin/iorr), IORR_PRELOAD_LIB (the library to test), RUNS,
# COLD, BASE_LIB, ROUNDS (per process, default 5; the best counts).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
prog=$(dirname "$iorr")/call_cost
runs=${RUNS:-5}
n=${1:-200000}
cold=${COLD:-0}
base=${BASE_LIB:-}
[[ -x $iorr && -x $prog ]] || { echo "record-call-cost: build first (tools/build.sh)" >&2; exit 2; }
[[ -z $base || -f $base ]] || { echo "record-call-cost: $base is missing" >&2; exit 2; }
work=$(mktemp -d /dev/shm/iorr-callcost.XXXXXX)
trap 'rm -rf "$work"' EXIT
args=("$work" "$n" "${ROUNDS:-5}" "$cold")
for ((i = 1; i <= runs; i++)); do
  "$prog" "${args[@]}" > "$work/plain.$i"
  IORR_DISPATCH=0 "$iorr" record -q -o "$work/t.iorr" -- "$prog" "${args[@]}" > "$work/plt.$i"
  "$iorr" record -q -o "$work/t.iorr" -- "$prog" "${args[@]}" > "$work/recorded.$i"
  if [[ -n $base ]]; then
    IORR_PRELOAD_LIB=$base "$iorr" record -q -o "$work/t.iorr" -- "$prog" "${args[@]}" \
      > "$work/base.$i"
  fi
done
python3 - "$work" "$runs" "$cold" "$base" "${ROUNDS:-5}" << 'PY'
import statistics, sys
work, runs, cold, base, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def runs_of(kind):  # each call's ns per run, in run order
    per = {}
    for i in range(1, runs + 1):
        for line in open(f"{work}/{kind}.{i}"):
            name, ns = line.rsplit(" ", 1)
            per.setdefault(name, []).append(float(ns))
    return per
def load(kind):
    return {k: statistics.median(v) for k, v in runs_of(kind).items()}
plain, plt, rec = load("plain"), load("plt"), load("recorded")
other = load("base") if base else None
how = f", {cold} KiB written before each call" if cold != "0" else ""
print(f"ns per call, medians of {runs} (each the best of {rounds} rounds){how}:")
head = f"{'call':<12} {'plain':>8} {'PLT only':>9} {'recorded':>9} {'+PLT':>7} {'+recorded':>10}"
print(head + (f" {'+base':>8}" if other else ""))
for k in plain:
    line = (f"{k:<12} {plain[k]:8.1f} {plt[k]:9.1f} {rec[k]:9.1f} {plt[k]-plain[k]:+7.1f} "
            f"{rec[k]-plain[k]:+10.1f}")
    print(line + (f" {other[k]-plain[k]:+8.1f}" if other else ""))
if other:
    # Paired: each run's recorded minus its base, both from the same round of the loop, so
    # that the host's slow phases (which move a whole run by tens of ns here) cancel out.
    r, b = runs_of("recorded"), runs_of("base")
    print(f"recorded - base, paired over {runs} runs (median, quartiles):")
    for k in r:
        d = [x - y for x, y in zip(r[k], b[k])]
        q = statistics.quantiles(d, n=4) if len(d) > 1 else [d[0], d[0], d[0]]
        print(f"{k:<12} {statistics.median(d):+8.1f}   {q[0]:+.1f} .. {q[2]:+.1f}")
    print(f"+base: recorded with {base}")
PY
