#!/usr/bin/env bash
# The recorder's cost per call in instructions, counted by callgrind: a figure host noise does
# not move, to compare builds of the library where record-call-cost.sh's nanoseconds vary by
# tens of percent from run to run (a busy VM). For each kind of call of build/bin/call_cost
# (lseek, fstat, pwrite, open+close, a raw syscall(SYS_lseek)), call_cost runs it N and 2N
# times (times ROUNDS) plain and recorded under callgrind; the figure is the instructions of
# its main, callees included, per call, the difference of the two runs (so that what happens
# once, the thread's first recorded call among it, cancels out). main leaves out the process's
# start and exit and the writer thread's work (encoding, compression), which the program's
# thread does not wait for. N * ROUNDS stays well below a ring's worth of events, so the
# thread never waits for the writer (which Valgrind's one-thread-at-a-time scheduling may hold
# back). open+close counts the two calls as one.
# Needs valgrind. Usage: record-call-instructions.sh [N]   (default 1000; ROUNDS 3)
# Environment: IORR (default $root/build/bin/iorr), IORR_PRELOAD_LIB (the library to count),
# BASE_LIB=PATH: a column for that build of libiorr-preload.so too (libiorr-audit.so beside it),
# IORR_DISPATCH and the other IORR_* settings pass on to the recording.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
prog=$(dirname "$iorr")/call_cost
n=${1:-1000}
rounds=${ROUNDS:-3}
base=${BASE_LIB:-}
command -v valgrind > /dev/null || { echo "record-call-instructions: needs valgrind" >&2; exit 2; }
[[ -x $iorr && -x $prog ]] || {
  echo "record-call-instructions: build first (tools/build.sh)" >&2
  exit 2
}
[[ -z $base || -f $base ]] || { echo "record-call-instructions: $base is missing" >&2; exit 2; }
work=$(mktemp -d /dev/shm/iorr-callins.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Instructions of call_cost's main, callees included, in the program's thread: run [ENV...]
# KIND CALLS.
main_instructions() {
  local kind=$1 calls=$2
  shift 2
  rm -f "$work"/cg.*
  "$@" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/cg.%p" \
    "$prog" "$work" "$calls" "$rounds" 0 "$kind" > /dev/null 2> "$work/valgrind.log" ||
    { echo "record-call-instructions: the run failed:" >&2; tail -n 5 "$work/valgrind.log" >&2; exit 1; }
  local out
  out=$(ls "$work"/cg.*-01 2> /dev/null || ls "$work"/cg.* | head -n 1)
  callgrind_annotate --inclusive=yes --threshold=100 "$out" 2> /dev/null |
    awk '/ \?\?\?:main / || /:main \[/ {gsub(",", "", $1); print $1; exit}'
}
per_call() {  # KIND, then the command prefix: instructions per call
  local kind=$1
  shift
  local a b
  a=$(main_instructions "$kind" "$n" "$@")
  b=$(main_instructions "$kind" $((2 * n)) "$@")
  [[ -n $a && -n $b ]] || { echo "record-call-instructions: no figure for main" >&2; exit 1; }
  local calls=$((n * rounds))
  python3 -c "print(f'{($b - $a) / $calls:.1f}')"
}

printf '%-12s %8s %9s %10s' call plain recorded +recorded
[[ -n $base ]] && printf ' %10s' +base
echo
for kind in lseek fstat pwrite open+close "raw lseek"; do
  plain=$(per_call "$kind" env)
  rec=$(per_call "$kind" "$iorr" record -q -o "$work/t.iorr" --)
  line=$(printf '%-12s %8s %9s %+10.1f' "$kind" "$plain" "$rec" "$(python3 -c "print($rec - $plain)")")
  if [[ -n $base ]]; then
    other=$(per_call "$kind" env IORR_PRELOAD_LIB="$base" "$iorr" record -q -o "$work/t.iorr" --)
    line+=$(printf ' %+10.1f' "$(python3 -c "print($other - $plain)")")
  fi
  echo "$line"
done
echo "instructions per call on the program's thread (callgrind, main's inclusive cost," \
  "$n and $((2 * n)) calls x $rounds rounds)${base:+; +base: recorded with $base}"
