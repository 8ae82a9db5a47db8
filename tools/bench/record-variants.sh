#!/usr/bin/env bash
# Side-by-side comparison of recording variants on `tar xf` of the whole Linux tarball into
# tmpfs (or `rm -rf` of the tree): each round runs the workload plain and under
# `iorr record` once per variant, in an order that turns by one place each round, so that slow
# drifts of the machine hit every variant alike. Prints each variant's median wall time and its
# ratio to the plain median.
# A benchmark, not a test: run it alone on a quiet machine.
#
# Usage: record-variants.sh [--rm] [--subset N] VARIANT...
#   VARIANT: NAME or NAME:VAR=VALUE[,VAR=VALUE...], the environment the recording runs with;
#   e.g. `record-variants.sh default dispatch:IORR_PATCH=0 plt:IORR_DISPATCH=0`.
#   IORR_PRELOAD_LIB=PATH in a variant compares library builds; IORR=PATH runs that build's
#   launcher (with the library beside it, unless IORR_PRELOAD_LIB is given too). A NAME that starts with
#   `unrecorded` runs the workload without iorr, in that environment: e.g.
#   `unrecorded-idle:LD_PRELOAD=build/lib/libiorr-bench-idle-thread.so`, the program with a
#   sleeping thread started as the writer is (tools/bench/idle_thread.c), and nothing recorded.
#   --rm: time `rm -rf` of the extracted tree instead (each round extracts it first, untimed).
# Environment: RUNS (default 5), IORR (default $root/build/bin/iorr), TMPFS (default /dev/shm).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
source "$root/tools/shared-dir.sh"
runs=${RUNS:-5}
tmpfs=${TMPFS:-/dev/shm}
workload=tar
subset=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --rm) workload=rm; shift ;;
    --subset) subset=(--subset "$2"); shift 2 ;;
    -h | --help) sed -n '2,18p' "$0" | cut -c3-; exit 0 ;;
    -*) echo "record-variants: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -gt 0 ]] || { echo "record-variants: name at least one variant (try: default)" >&2; exit 2; }
[[ -x $iorr ]] || { echo "record-variants: $iorr is missing (tools/build.sh)" >&2; exit 2; }
tarball=$(bash "$shared/workloads/linux-tar.sh" "${subset[@]}")
work=$(mktemp -d "$tmpfs/iorr-variants.XXXXXX")
source "$root/tools/bench/quiet-host.sh"
trap 'rm -rf "$work"; quiet_host_end' EXIT
quiet_host_begin
mkdir "$work/x"
top=$(tar tf "$tarball" 2> /dev/null | head -n 1 | cut -d/ -f1 || true)  # tar dies of SIGPIPE
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

names=(plain)
envs=("")
for v in "$@"; do
  names+=("${v%%:*}")
  if [[ $v == *:* ]]; then envs+=("${v#*:}"); else envs+=(""); fi
done

# run INDEX: one timed run of variant INDEX (0: plain), appended to $work/t-INDEX.
run() {
  local i=$1 cmd
  case $workload in
    tar) cmd=(tar xf "$tarball") ;;
    rm) (cd "$work/x" && tar xf "$tarball"); cmd=(rm -rf "$work/x/$top") ;;
  esac
  if [[ $i != 0 ]]; then
    local -a env_args=() vars=()
    local launcher=$iorr e
    [[ -n ${envs[$i]} ]] && IFS=, read -r -a vars <<< "${envs[$i]}"
    for e in "${vars[@]}"; do  # IORR=PATH: that build's launcher, not an environment variable
      if [[ $e == IORR=* ]]; then launcher=${e#IORR=}; else env_args+=("$e"); fi
    done
    if [[ ${names[$i]} == unrecorded* ]]; then
      cmd=(env "${env_args[@]}" "${cmd[@]}")
    else
      cmd=(env "${env_args[@]}" "$launcher" record -q -o "$work/t.iorr" -- "${cmd[@]}")
    fi
  fi
  local t0=$EPOCHREALTIME
  (cd "$work/x" && "${cmd[@]}")
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}' >> "$work/t-$i"
  rm -rf "${work:?}/x/$top" "$work/t.iorr"
}

echo "workload: $workload of $tarball in $tmpfs; $runs rounds of: ${names[*]}"
cat "$tarball" > /dev/null
(cd "$work/x" && tar xf "$tarball") && rm -rf "${work:?}/x/$top"  # warm-up
# The order turns by one place each round (plain first, then second, ...), so that a host that
# drifts through the run favours no variant by its place (record-overhead.sh: a drift of 1.9 to
# 2.4 s over one run moved a ratio by several percent).
n=${#names[@]}
for r in $(seq "$runs"); do
  printf 'round %d of %d\n' "$r" "$runs" >&2
  for ((k = 0; k < n; k++)); do run $(((k + r - 1) % n)); done
done
plain=$(median < "$work/t-0")
# Besides the ratio of the medians, the median of the per-round ratios (each run against the
# same round's plain run), which a drift between rounds moves less.
for i in "${!names[@]}"; do
  m=$(median < "$work/t-$i")
  paired=$(paste "$work/t-$i" "$work/t-0" | awk '{print $1 / $2}' | median)
  printf '%-12s median %.3f s  %.3fx  paired %.3fx   runs: %s\n' "${names[$i]}" "$m" \
    "$(awk -v a="$m" -v b="$plain" 'BEGIN {print a / b}')" "$paired" \
    "$(xargs printf '%.3f ' < "$work/t-$i")"
done
