#!/usr/bin/env bash
# What recording costs a program that uses stdio a character at a time (getc and putc, as
# scanners and filters do): build/bin/stdio_loop reads a file (MiB MiB of random bytes in base64,
# about 1.35 times as many) with getc and writes as many characters to /dev/null with putc,
# plain and recorded in turns, RUNS times (default 7).
# Prints the medians of each part's seconds and their ratios. Until stop 27 the writer thread's
# pthread_create turned stdio's locks on for good, and each getc and putc took its stream's lock.
# BASE_LIB=PATH: a third column recorded with that build of libiorr-preload.so.
# A benchmark, not a test: run it alone on a quiet machine.
# Usage: record-stdio.sh [MiB]   (default 50)
# Environment: IORR (default $root/build/bin/iorr), RUNS (odd: the median is a run's), BASE_LIB,
# TMPFS (default /dev/shm). Needs python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
prog=$(dirname "$iorr")/stdio_loop
mib=${1:-50}
runs=${RUNS:-7}
base=${BASE_LIB:-}
[[ -x $iorr && -x $prog ]] || { echo "record-stdio: build first (tools/build.sh)" >&2; exit 2; }
[[ -z $base || -f $base ]] || { echo "record-stdio: $base is missing" >&2; exit 2; }
work=$(mktemp -d "${TMPFS:-/dev/shm}/iorr-stdio.XXXXXX")
trap 'rm -rf "$work"' EXIT
head -c $((mib << 20)) /dev/urandom | base64 > "$work/in"
n=$(stat -c %s "$work/in")

run() {  # KIND, then the command prefix
  local kind=$1
  shift
  "$@" "$prog" "$work/in" "$n" >> "$work/$kind"
}
for i in $(seq "$runs"); do
  run plain env
  run recorded "$iorr" record -q -o "$work/t.iorr" --
  [[ -n $base ]] && run base env IORR_PRELOAD_LIB="$base" "$iorr" record -q -o "$work/t.iorr" --
done
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "stdio_loop: getc over $((n >> 20)) MiB, then as many putc; medians of $runs runs (s)"
printf '%-10s %8s %8s\n' run getc putc
for kind in plain recorded ${base:+base}; do
  g=$(cut -d' ' -f1 "$work/$kind" | median)
  p=$(cut -d' ' -f2 "$work/$kind" | median)
  if [[ $kind == plain ]]; then
    pg=$g pp=$p
    printf '%-10s %8.3f %8.3f\n' "$kind" "$g" "$p"
  else
    printf '%-10s %8.3f %8.3f   %.2fx %.2fx\n' "$kind" "$g" "$p" \
      "$(python3 -c "print($g / $pg)")" "$(python3 -c "print($p / $pp)")"
  fi
done
[[ -n $base ]] && echo "base: recorded with $base"
exit 0
