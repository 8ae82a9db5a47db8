#!/usr/bin/env bash
# End to end: a SIGALRM handler (SA_RESTART) opens, writes and closes a file while main is
# blocked opening a FIFO that a child opens for writing later (nested_fifo.c): the handler's fd
# and the FIFO's are the same number. Recorded, the handler's calls are nested in the open;
# replayed (per thread and on one thread, as fast as possible and at the recorded times), the
# FIFO keeps its fd: 0 mismatches, and main's read of the FIFO is replayed. (In start order the
# handler's open took the fd: the FIFO's read side closed, the child's open for writing failed
# with ENXIO, main's read was skipped.)
# Usage: nested_fifo_test.sh IORR_BIN NESTED_FIFO_BIN. Prints "N passed, M failed".
set -uo pipefail
iorr=$1 prog=$2
lib=$(dirname "$iorr")/../lib/libiorr-preload.so
[[ -f $lib ]] || { echo "SKIP: $lib is missing"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-nested.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

mkdir w
if "$iorr" record -q -o T.iorr -- "$prog" "$work/w" > prog.out 2>&1; then
  ok "recorded: $(cat prog.out)"
else
  fail "recording: $(cat prog.out)"
fi
# The trace holds the nesting: the FIFO's open, whose interval holds the handler's open of the
# same fd number.
"$iorr" dump --json T.iorr > T.jsonl
if python3 - T.jsonl << 'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ev = [e for e in ev if "call" in e]
fifo = [e for e in ev if e["call"] == "openat" and e["args"].get("path") == "fifo" and
        e["ret"] >= 0 and e["args"].get("flags", 0) & 3 == 0]  # O_RDONLY: main's
hand = [e for e in ev if e["call"] == "openat" and e["args"].get("path") == "handler.dat"]
sys.exit(0 if any(f["tid"] == h["tid"] and f["ret"] == h["ret"] and
                  f["start_ns"] <= h["start_ns"] and h["end_ns"] <= f["end_ns"]
                  for f in fifo for h in hand) else 1)
PY
then
  ok "the handler's open of the FIFO's fd number is nested in the FIFO's open"
else
  fail "no nested open in the trace: $(grep -c . T.jsonl) lines"
fi
reads=$(grep -c '"call":"read"' T.jsonl)

for mode in "--threads per-thread" "--threads one" "--threads per-thread --timing exact" \
            "--threads one --timing think"; do
  rm -rf root && mkdir root
  # shellcheck disable=SC2086
  "$iorr" replay T.iorr --root root $mode --report r.json > r.out 2>&1
  if python3 - r.json "$reads" << 'PY'
import json, sys
r = json.load(open(sys.argv[1]))
read = r["calls"].get("read", {}).get("count", 0)
sys.exit(0 if r["mismatches"] == 0 and read == int(sys.argv[2]) else 1)
PY
  then
    ok "replay $mode: 0 mismatches, $reads of $reads reads replayed"
  else
    fail "replay $mode: $(grep -E 'mismatch' r.out | head -n 3 | tr '\n' ' ')"
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
