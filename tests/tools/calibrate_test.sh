#!/usr/bin/env bash
# iorr calibrate: on a disk-backed directory it writes a profile the model accepts (calibrate
# parses its own output) with plausible numbers and leaves no scratch file; a missing directory
# fails with one line and exit 2. Usage: calibrate_test.sh IORR_BIN
set -uo pipefail
iorr=$1
dir=$(mktemp -d /var/tmp/iorr-calibrate.XXXXXX)
trap 'rm -rf "$dir"' EXIT
passed=0 failed=0
if "$iorr" calibrate "$dir" -o "$dir/p.json" --seconds 2 --size-mb 32 > "$dir/out" 2> "$dir/err"; then
  if grep -q '"type": "ssd"' "$dir/p.json" && grep -q '"read_mb_per_s": [1-9]' "$dir/p.json" &&
     grep -q '"flush_ms": [0-9]' "$dir/p.json" && ! ls -A "$dir" | grep -q calibrate; then
    echo "ok: profile written: $(grep -o '"description": "[^"]*"' "$dir/p.json" | head -c 160)"
    passed=$((passed + 1))
  else
    echo "FAIL: profile lacks fields or the scratch file was left"; failed=$((failed + 1))
  fi
else
  echo "FAIL: calibrate on $dir: $(cat "$dir/err")"; failed=$((failed + 1))
fi
# A file system's waited write and flush: as root with tracefs, on a device with a write cache,
# calibrate times the write and flush requests of a buffered write + fdatasync and the
# fdatasync itself, which holds both requests one after the other; the profile's write latency
# and flush cost are each request's time plus half of the rest.
if [[ -f $dir/p.json ]]; then
  desc=$(grep -o '"description": "[^"]*"' "$dir/p.json")
  # Device-mapper and md devices pass flushes on without requests of their own to trace.
  stacked=$(python3 -c "import os, sys; d = os.stat(sys.argv[1]).st_dev; b = f'/sys/dev/block/{os.major(d)}:{os.minor(d)}'; print(int(os.path.exists(b + '/dm') or os.path.exists(b + '/md')))" "$dir")
  if [[ $EUID -ne 0 || $stacked == 1 ]] || [[ ! -d /sys/kernel/tracing/instances && ! -d /sys/kernel/debug/tracing/instances ]] ||
     [[ $desc != *"write_cache 'write back'"* ]]; then
    echo "skip: requests not traced here (needs root, tracefs and a plain device with a write cache): $desc"
  elif [[ $desc == *"no flush request"* ]]; then
    echo "skip: $dir's file system sends no flush (mounted without barriers): $desc"
  elif python3 - "$dir/p.json" << 'PY'; then
import json, re, sys
p = json.load(open(sys.argv[1]))
d = p["description"]
m = re.search(r"write ([0-9.]+) us, flush ([0-9.]+) us, fdatasync ([0-9.]+) us, so ([0-9.]+) us "
              r"more per I/O \(([0-9]+) writes, ([0-9]+) flushes, ([0-9]+) fdatasyncs\)", d)
assert m, d
w, fl, fds, each = map(float, m.groups()[:4])
writes, flushes, ops = map(int, m.groups()[4:])
# Each fdatasync sends a write and a flush: the pairing found (at least) one of each per call.
assert ops >= 50 and writes >= 0.9 * ops and flushes >= 0.9 * ops, (writes, flushes, ops)
assert w > 0 and fl > 0 and each >= 0, (w, fl, each)
assert w + fl <= fds * 1.05, (w, fl, fds)
assert abs(each - max(0.0, (fds - w - fl) / 2)) < 0.2, (each, fds, w, fl)
assert abs(p["write_latency_us"] - (w + each)) < 0.2, (p["write_latency_us"], w, each)
assert abs(p["flush_ms"] * 1e3 - (fl + each)) < 0.2, (p["flush_ms"], fl, each)
assert not p["power_loss_protection"] or fl < 20, (fl, p["power_loss_protection"])
PY
    echo "ok: write and flush timed at the request: $(echo "$desc" | grep -o 'write [0-9.]* us, flush [^;]*')"; passed=$((passed + 1))
  else
    echo "FAIL: traced write and flush: $desc"; failed=$((failed + 1))
  fi
fi
"$iorr" calibrate "$dir/no-such-dir" -o "$dir/p2.json" --seconds 1 > /dev/null 2> "$dir/err2"
st=$?
if [[ $st -eq 2 && $(wc -l < "$dir/err2") -eq 1 && ! -e $dir/p2.json ]]; then
  echo "ok: a missing directory is refused in one line"; passed=$((passed + 1))
else
  echo "FAIL: missing directory: exit $st: $(cat "$dir/err2")"; failed=$((failed + 1))
fi
# Per-call CPU (--calls): a table the model reads, named after DIR's file system, nothing left
# behind; the model uses it for rows of that file system and refuses a broken one.
if "$iorr" calibrate "$dir" --calls --files 200 -o "$dir/c.json" > /dev/null 2> "$dir/err3" &&
  fs=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['type']=='call-costs' and d['calls_us']['create']>0 and d['calls_us']['unlink']>0 and d['calls_us']['writeback_per_file']>=0; print(d['fs'])" "$dir/c.json") &&
  ! ls -A "$dir" | grep -q iorr-calls; then
  echo "ok: call costs of $fs written: $(tr -d '\n ' < "$dir/c.json" | grep -o '"calls_us":{[^}]*}' | head -c 200)"
  passed=$((passed + 1))
  # A model of that file system over a trace of creates costs at least 200 creates' CPU.
  { echo '{"iorr_header":{"version":1,"time_unit_ns":1000,"start_mono_ns":0,"start_wall_ns":0,"fields":[["cwd","/w"]]}}'
    for i in $(seq 200); do
      echo "{\"pid\":1,\"tid\":1,\"call\":\"openat\",\"start_ns\":$((i * 10000)),\"end_ns\":$((i * 10000 + 1000)),\"ret\":3,\"errno\":null,\"args\":{\"dirfd\":\"AT_FDCWD\",\"path\":\"/w/f$i\",\"flags\":\"O_WRONLY|O_CREAT\",\"mode\":420}}"
    done; } > "$dir/t.jsonl"
  if [[ $fs == ext4 || $fs == xfs ]] && "$iorr" import jsonl "$dir/t.jsonl" -o "$dir/t.iorr" 2> /dev/null; then
    with=$("$iorr" model "$dir/t.iorr" --fs "$fs" --disk nvme-plp --cache on --barrier on --timing afap --cpu "$dir/c.json" --json | grep -o '"elapsed_s":[0-9.]*' | cut -d: -f2)
    without=$("$iorr" model "$dir/t.iorr" --fs "$fs" --disk nvme-plp --cache on --barrier on --timing afap --json | grep -o '"elapsed_s":[0-9.]*' | cut -d: -f2)
    want=$(python3 -c "import json,sys; print(200 * json.load(open(sys.argv[1]))['calls_us']['create'] / 1e6)" "$dir/c.json")
    if python3 -c "import sys; w, wo, want = map(float, sys.argv[1:]); sys.exit(0 if w >= want * 0.99 and w > wo else 1)" "$with" "$without" "$want"; then
      echo "ok: the model charges the table's create cost: $with s (without: $without s, 200 creates: $want s)"; passed=$((passed + 1))
    else
      echo "FAIL: model with the table: $with s, without: $without s, want >= $want s"; failed=$((failed + 1))
    fi
  else
    echo "skip: $dir is on $fs, not a file system the model has a model of"
  fi
else
  echo "FAIL: calibrate --calls: $(cat "$dir/err3")"; failed=$((failed + 1))
fi
sed 's/"stat"/"statx"/' "$dir/c.json" > "$dir/bad.json"
if "$iorr" model "$dir/t.iorr" --cpu "$dir/bad.json" > /dev/null 2> "$dir/err4"; then
  echo "FAIL: a table with an unknown key was accepted"; failed=$((failed + 1))
elif [[ $(wc -l < "$dir/err4") -eq 1 ]] && grep -q statx "$dir/err4"; then
  echo "ok: bad table refused: $(cat "$dir/err4")"; passed=$((passed + 1))
else
  echo "FAIL: bad table: $(cat "$dir/err4")"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
