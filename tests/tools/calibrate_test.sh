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
"$iorr" calibrate "$dir/no-such-dir" -o "$dir/p2.json" --seconds 1 > /dev/null 2> "$dir/err2"
st=$?
if [[ $st -eq 2 && $(wc -l < "$dir/err2") -eq 1 && ! -e $dir/p2.json ]]; then
  echo "ok: a missing directory is refused in one line"; passed=$((passed + 1))
else
  echo "FAIL: missing directory: exit $st: $(cat "$dir/err2")"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
