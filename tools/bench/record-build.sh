#!/usr/bin/env bash
# The recorder on a build, the workload where the cost per process shows (issue 3: "a build"):
# `make -jJOBS` of a generated project in tmpfs, plain and under `iorr record` in turns, RUNS
# rounds (default 5; the tree cleaned, untimed, before each run), then the medians, their ratio
# and the median of the per-round ratios, the processes and events recorded, the trace's bytes
# per event, and what the rest of iorr makes of the last trace: `iorr model` (ext4, hdd-7200,
# the four cache x barrier rows) and `iorr replay` onto an empty directory, with their times.
# Kinds:
#   cc    N C files of a few functions each, `gcc -O2 -c` then one link: three processes per
#         file (gcc, cc1, as) of some tens of ms, as a small C project's build;
#   tiny  N one-line recipes (`echo $@ > $@.tmp && mv $@.tmp $@`): two processes of about a
#         millisecond per recipe, as configure scripts and make's own bookkeeping run them.
# A benchmark, not a test: run it alone on a quiet machine (2 cores here).
# Usage: record-build.sh [cc|tiny] [N]   (defaults: cc 200; tiny 2000)
# Environment: RUNS (5), JOBS (2), IORR (default $root/build/bin/iorr).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
kind=${1:-cc}
case $kind in
  cc) n=${2:-200} ;;
  tiny) n=${2:-2000} ;;
  *) echo "usage: record-build.sh [cc|tiny] [N]" >&2; exit 2 ;;
esac
runs=${RUNS:-5}
jobs=${JOBS:-2}
[[ -x $iorr ]] || { echo "record-build: build first (tools/build.sh)" >&2; exit 2; }
command -v make > /dev/null || { echo "record-build: make is missing" >&2; exit 2; }
[[ $kind != cc ]] || command -v gcc > /dev/null || { echo "record-build: gcc is missing" >&2; exit 2; }
work=$(mktemp -d /dev/shm/iorr-record-build.XXXXXX)
source "$root/tools/bench/quiet-host.sh"
trap 'rm -rf "$work"; quiet_host_end' EXIT
quiet_host_begin

# The project.
src=$work/src
mkdir -p "$src"
if [[ $kind == cc ]]; then
  for i in $(seq "$n"); do
    cat > "$src/f$i.c" << C
#include <stdio.h>
#include <string.h>
static int table$i[64];
int step$i(int x) { for (int k = 0; k < 64; ++k) table$i[k] = (x * k) ^ $i; return table$i[x & 63]; }
int name$i(char* out, size_t n) { return snprintf(out, n, "f$i %d", step$i((int)strlen(out))); }
C
  done
  {
    echo "prog: main.o $(seq -f 'f%g.o' -s ' ' "$n")"
    echo "	gcc -o prog \$^"
    echo "main.c:"
    echo "	echo 'int main(void) { return 0; }' > main.c"
    echo "%.o: %.c"
    echo "	gcc -O2 -c -o \$@ \$<"
    echo "clean:"
    echo "	rm -f *.o prog main.c"
  } > "$src/Makefile"
else
  {
    echo "all: $(seq -f 'o/f%g.o' -s ' ' "$n")"
    echo "	cat o/*.o > all.out"
    echo "o/%.o: | o"
    echo "	echo \$@ > \$@.tmp && mv \$@.tmp \$@"
    echo "o:"
    echo "	mkdir -p o"
    echo "clean:"
    echo "	rm -rf o all.out"
  } > "$src/Makefile"
fi

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
timed() {  # plain|recorded: one clean build, seconds appended to $work/KIND
  make -s -C "$src" clean > /dev/null
  local t0=$EPOCHREALTIME
  if [[ $1 == plain ]]; then
    make -s -C "$src" -j"$jobs" > /dev/null
  else
    "$iorr" record -q -o "$work/t.iorr" -- make -s -C "$src" -j"$jobs" > /dev/null
  fi
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}' >> "$work/$1"
}
echo "build: $kind, $n files, make -j$jobs in tmpfs, $runs rounds (plain and recorded in turns)"
for i in $(seq "$runs"); do
  if ((i % 2)); then timed plain; timed recorded; else timed recorded; timed plain; fi
done
p=$(median < "$work/plain")
r=$(median < "$work/recorded")
paired=$(paste "$work/recorded" "$work/plain" | awk '{printf "%.4f\n", $1 / $2}' | median)
json=$("$iorr" stats --json "$work/t.iorr")
events=$(grep -o '"events":[0-9]*' <<< "$json" | head -n 1 | cut -d: -f2)
procs=$(grep -o '"processes":[0-9]*' <<< "$json" | head -n 1 | cut -d: -f2)
bytes=$(stat -c %s "$work/t.iorr")
awk -v p="$p" -v r="$r" -v q="$paired" -v pr="$(xargs < "$work/plain")" -v rr="$(xargs < "$work/recorded")" \
  -v procs="$procs" 'BEGIN {
  printf "plain     %.3f s (median)   runs: %s\n", p, pr
  printf "recorded  %.3f s (median)   runs: %s\n", r, rr
  printf "recorded / plain: %.3fx (medians), %.3fx (median of the rounds'"'"' ratios); +%.0f us per process\n",
    r / p, q, (r - p) / procs * 1e6 }'
awk -v e="$events" -v b="$bytes" -v procs="$procs" 'BEGIN {
  printf "last trace: %d processes, %d events, %d bytes, %.2f bytes/event\n", procs, e, b, b / e }'
t0=$EPOCHREALTIME
"$iorr" model "$work/t.iorr" --fs ext4 --disk hdd-7200 > "$work/model.txt" 2> /dev/null
t1=$EPOCHREALTIME
awk -v a="$t0" -v b="$t1" 'BEGIN {printf "iorr model (ext4, hdd-7200, 4 rows): %.2f s\n", b - a}'
cat "$work/model.txt"
mkdir "$work/root"
t0=$EPOCHREALTIME
st=0
"$iorr" replay "$work/t.iorr" --root "$work/root" --json > "$work/replay.json" 2> /dev/null || st=$?
t1=$EPOCHREALTIME
awk -v a="$t0" -v b="$t1" -v st="$st" -v m="$(grep -o '"mismatches":[0-9]*' "$work/replay.json" | head -n 1 | cut -d: -f2)" \
  'BEGIN {printf "iorr replay onto an empty directory: %.2f s, exit %d, %s mismatches\n", b - a, st, m}'
