#!/usr/bin/env bash
# Exact-timing replay (issue 4): records tests/replayer/timed_calls (2,000 stat calls 1 ms apart)
# and replays it with --timing exact, RUNS times (default 3); prints the issue-time error
# (actual minus target) p50/p99/max and the replay's total time against the recording's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
prog=$root/build/bin/timed_calls
runs=${RUNS:-3}
work=$(mktemp -d /dev/shm/iorr-exact.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/w"
"$iorr" record -q -o "$work/t.iorr" -- "$prog" "$work/w" 2000 1000 > /dev/null
recorded=$("$iorr" stats --json "$work/t.iorr" | grep -o '"duration_ns":[0-9]*' | cut -d: -f2)
for i in $(seq "$runs"); do
  rm -rf "$work/root" && mkdir "$work/root"
  "$iorr" replay "$work/t.iorr" --root "$work/root" --only "$work/w" --timing exact --json > "$work/r.json"
  python3 - "$work/r.json" "$recorded" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rec = int(sys.argv[2]) / 1e9
e = d["issue_error_ns"]
print(f"issue error p50 {e['p50'] / 1e3:.1f} us, p99 {e['p99'] / 1e3:.1f} us, max {e['max'] / 1e3:.1f} us "
      f"(targets 20 / 200 us); total {d['replay_seconds']:.4f} s vs recorded {rec:.4f} s "
      f"({100 * (d['replay_seconds'] - rec) / rec:+.2f}%, target 1%); mismatches {d['mismatches']}")
PY
done
