#!/usr/bin/env bash
# iorr model end to end: a recorded create-write-fsync loop, modelled on hdd-7200. Checks the
# shape the model must have (not figures, which belong to benchmarks): with barriers on every
# fsync sends a flush and a FUA commit; with barriers off none does and the run is faster;
# bytes go to data, journal and metadata; rows say "unvalidated"; bad profiles are refused.
# Usage: model_cli_test.sh IORR_BIN
set -uo pipefail
iorr=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(dirname "$iorr")/../lib/libiorr-preload.so
[[ -f $lib ]] || { echo "SKIP: $lib is missing"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: python3 is missing"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
"$iorr" record -q -o t.iorr -- python3 -c "
import os
for i in range(50):
    fd = os.open('f%d' % i, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b'x' * 4096); os.fsync(fd); os.close(fd)
os.sync()
" || fail "recording"
"$iorr" model t.iorr --disk hdd-7200 --json > m.json 2> m.err || fail "model: $(cat m.err)"
python3 - m.json << 'PY' && ok "barriers on: a flush and a FUA per fsync; off: none, and faster" || fail "model shape: $(head -c 600 m.json)"
import json, sys
rows = {(r["cache"], r["barrier"]): r for r in json.load(open(sys.argv[1]))["rows"]}
on, off = rows[("on", "on")], rows[("on", "off")]
assert on["flushes"] >= 50 and on["fua_writes"] >= 50, on
assert off["flushes"] == 0 and off["fua_writes"] == 0, off
assert on["elapsed_s"] > off["elapsed_s"], (on, off)
assert all(on["bytes_written"][k] > 0 for k in ("data", "journal", "metadata")), on
assert all(r["validated"] is False for r in rows.values())
PY
"$iorr" model t.iorr --disk hdd-7200 --fs ext4,ext3,ext2,xfs,xfs-legacy --cache on --json > all.json 2> all.err || fail "all models: $(cat all.err)"
python3 - all.json << 'PY' && ok "every model: a flush per fsync with barriers; ext2 sends no FUA, the journals do" || fail "models: $(head -c 900 all.json)"
import json, sys
rows = {(r["fs"], r["barrier"]): r for r in json.load(open(sys.argv[1]))["rows"]}
assert len(rows) == 10, rows.keys()
for fs in ("ext4", "ext3", "ext2", "xfs", "xfs-legacy"):
    on, off = rows[(fs, "on")], rows[(fs, "off")]
    assert on["flushes"] >= 50, (fs, on)
    assert off["flushes"] == 0 and off["fua_writes"] == 0, (fs, off)
    assert off["elapsed_s"] < on["elapsed_s"], (fs, on, off)
    if fs == "ext2":
        assert on["fua_writes"] == 0 and on["bytes_written"]["journal"] == 0, on
    else:
        assert on["fua_writes"] >= 50 and on["bytes_written"]["journal"] > 0, (fs, on)
PY
if "$iorr" model t.iorr --fs reiserfs > /dev/null 2> fs.err; then fail "an unknown model was accepted"
elif [[ $(wc -l < fs.err) -eq 1 ]] && grep -q "known: ext4" fs.err; then ok "unknown model refused: $(cat fs.err)"
else fail "unknown model: $(cat fs.err)"; fi
"$iorr" model t.iorr --disk hdd-7200 > m.txt 2>&1 && grep -q unvalidated m.txt && ok "text table" || fail "text table: $(cat m.txt)"
# A validation file beside a profile marks the matching rows, and only those, validated.
cp "$src/model/profiles/ssd-sata.json" mine.json
echo '{"profile": "x", "rows": [{"fs": "ext4", "cache": "on", "barrier": "off", "time_error": -0.12, "flush_error": 0.0}]}' > mine.validation.json
"$iorr" model t.iorr --disk "$PWD/mine.json" --cache on --json > v.json 2> v.err || fail "validation: $(cat v.err)"
python3 - v.json << 'PY' && ok "a validation file marks its rows validated with their errors" || fail "validation: $(head -c 600 v.json)"
import json, sys
rows = {r["barrier"]: r for r in json.load(open(sys.argv[1]))["rows"]}
assert rows["off"]["validated"] is True and abs(rows["off"]["time_error"] + 0.12) < 1e-9, rows["off"]
assert rows["on"]["validated"] is False, rows["on"]
PY
echo '{"rows": 3}' > mine.validation.json
if "$iorr" model t.iorr --disk "$PWD/mine.json" > /dev/null 2> v.err; then fail "a bad validation file was accepted"
else ok "bad validation file refused: $(cat v.err)"; fi
echo '{"type": "ssd", "name": "bad"}' > bad.json
if "$iorr" model t.iorr --disk bad.json > /dev/null 2> bad.err; then fail "a bad profile was accepted"
elif [[ $(wc -l < bad.err) -eq 1 ]]; then ok "bad profile refused: $(cat bad.err)"
else fail "bad profile: $(cat bad.err)"; fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
