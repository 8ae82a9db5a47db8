#!/usr/bin/env bash
# Compares the calls per name that `iorr stats --json TRACE` counts with the call lines of the
# strace LOG it was imported from (a line that starts a call: `NAME(`, resumed halves not
# counted). Prints one line per name that differs and exits 1 if any does.
# Usage: check-strace-counts.sh IORR LOG TRACE
set -euo pipefail
iorr=$1 log=$2 trace=$3
cat_log() { case $log in *.zst) zstd -dc "$log" ;; *.gz) gzip -dc "$log" ;; *.xz) xz -dc "$log" ;; *) cat "$log" ;; esac; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# strace lines: [TID ][TIME ]NAME(... ; skip "<... NAME resumed>", "+++", "---".
cat_log | awk '{
    i = 1
    if ($i ~ /^[0-9]+$/) i++                               # pid column
    if ($i == "[pid") i += 2                               # [pid N] prefix
    if ($i ~ /^[0-9]+\.[0-9]+$/ || $i ~ /^[0-9]+:[0-9]+:[0-9]+/) i++   # timestamp
    w = $i
    p = index(w, "(")
    if (p > 1 && substr(w, 1, 1) != "<") print substr(w, 1, p - 1)
  }' | sort | uniq -c | awk '{print $2, $1}' | sort > "$tmp/log"
"$iorr" stats --json "$trace" | grep -o '"calls":{[^}]*}' | sed 's/^"calls":{//; s/}$//' |
  tr ',' '\n' | sed 's/"//g; s/:/ /' | sort > "$tmp/trace"
total=$(awk '{s += $2} END {print s}' "$tmp/log")
if diff "$tmp/log" "$tmp/trace" > "$tmp/diff"; then
  echo "strace counts: all $(wc -l < "$tmp/log") call names match ($total calls)"
else
  echo "strace counts differ (< log, > trace):"
  cat "$tmp/diff"
  exit 1
fi
