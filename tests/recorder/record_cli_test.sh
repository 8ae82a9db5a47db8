#!/usr/bin/env bash
# The `iorr record` launcher seen from outside: exit status passthrough (128+N for a signal),
# 125/126/127 for its own failures and unrunnable commands (one line on stderr), the trace
# it leaves (readable by stats, header fields, the end record), --snapshot, --quiet, and
# that the program's arguments and output pass through unchanged.
# Usage: record_cli_test.sh /path/to/iorr [/path/to/libiorr-preload.so]
# The library defaults to <dir of iorr>/../lib/libiorr-preload.so; without it the test is skipped.
set -u
IORR=${1:?usage: $0 /path/to/iorr [preload library]}
IORR=$(realpath "$IORR")
LIB=${2:-$(dirname "$IORR")/../lib/libiorr-preload.so}
if [ ! -f "$LIB" ]; then
  echo "SKIP: $LIB does not exist (the recorder library is not built yet)"
  exit 77
fi
export IORR_PRELOAD_LIB
IORR_PRELOAD_LIB=$(realpath "$LIB")
DIR=$(mktemp -d "${TMPDIR:-/tmp}/iorr_record_cli.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 1

fails=0
fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}
# expect_exit CODE CMD...: runs CMD, checks its exit code; for the launcher's own failures
# (125, 126, 127) also that stderr is exactly one line starting with "iorr: ".
expect_exit() {
  local want=$1
  shift
  "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "$* exited $rc, want $want (stderr: $(cat err.txt))"
  if [ "$want" -ge 125 ] && [ "$want" -le 127 ]; then
    [ "$(wc -l <err.txt)" -eq 1 ] && grep -q '^iorr: ' err.txt ||
      fail "$*: want one 'iorr: ' line on stderr, got: $(cat err.txt)"
  fi
}

# The program's exit status, and 128+N when signal N kills it.
expect_exit 0 "$IORR" record -o t.iorr -- true
expect_exit 3 "$IORR" record -o t.iorr -- sh -c 'exit 3'
expect_exit 143 "$IORR" record -o t.iorr -- sh -c 'kill -TERM $$'
expect_exit 137 "$IORR" record -o t.iorr -- sh -c 'kill -KILL $$'
"$IORR" record -q -o t.iorr -- sh -c 'kill -TERM $$'
[ $? -eq 143 ] || fail "killed by SIGTERM: want 143"

# Commands that cannot be run.
expect_exit 127 "$IORR" record -o t.iorr -- no-such-command-iorr
grep -qx 'iorr: no-such-command-iorr: No such file or directory' err.txt ||
  fail "missing command message: $(cat err.txt)"
expect_exit 127 "$IORR" record -o t.iorr -- ""  # an empty name, as env "" (125 until stop 34)
printf '#!/bin/sh\nexit 0\n' >noexec.sh
chmod 0644 noexec.sh
expect_exit 126 "$IORR" record -o t.iorr -- ./noexec.sh
mkdir adir
expect_exit 126 "$IORR" record -o t.iorr -- ./adir

# The launcher's own failures: 125, and no trace left behind when the program never started.
expect_exit 125 "$IORR" record -o no-such-dir/t.iorr -- true
expect_exit 125 "$IORR" record -o "$DIR" -- true
expect_exit 125 "$IORR" record -o bad.iorr --time-unit 7 -- true
expect_exit 125 "$IORR" record -o bad.iorr --no-such-option -- true
expect_exit 125 "$IORR" record -o bad.iorr --
expect_exit 125 "$IORR" record -- true
expect_exit 125 "$IORR" record -o bad.iorr --snapshot no-such-dir -- true
IORR_PRELOAD_LIB=$DIR/no-such-lib.so expect_exit 125 "$IORR" record -o bad.iorr -- true
[ ! -e bad.iorr ] || fail "a failed launch left bad.iorr behind"

# Arguments, stdout and stdin pass through unchanged; -q keeps stderr quiet; the summary is
# one line otherwise.
out=$(echo input |
  "$IORR" record -q -o t.iorr -- sh -c 'printf "%s|" "$@"; cat' sh 'a b' '' "c'd" 2>err.txt)
[ "$out" = "a b||c'd|input" ] || fail "program output: $out"
[ ! -s err.txt ] || fail "-q printed: $(cat err.txt)"
"$IORR" record -o t.iorr -- true 2>err.txt
[ "$(wc -l <err.txt)" -eq 1 ] &&
  grep -q '^iorr: recorded [0-9,]* events\? in .* into t.iorr, ' err.txt ||
  fail "summary line: $(cat err.txt)"
# --json: the summary as one JSON object, its figures the trace's own and the program's status.
"$IORR" record --json -o j.iorr -- sh -c 'echo x > jf; exit 3' 2>err.txt
rc=$?
"$IORR" stats --json j.iorr >stats.json 2>/dev/null
python3 - "$rc" "$(stat -c %s j.iorr)" err.txt stats.json <<'PY' || fail "--json summary: $(cat err.txt)"
import json, sys
rc, size = int(sys.argv[1]), int(sys.argv[2])
lines = open(sys.argv[3]).read().splitlines()
assert len(lines) == 1, lines
j = json.loads(lines[0])
s = json.load(open(sys.argv[4]))
assert j["exit_status"] == rc == 3, (j, rc)
assert j["trace"] == "j.iorr" and j["trace_bytes"] == size, j
assert j["events"] == s["events"] > 0, (j, s)
assert j["processes"] == 1 and j["complete"] is True and j["lost_events"] == 0, j
assert j["program_seconds"] > 0, j
PY

# The trace: stats reads it without warnings, the header describes the run.
"$IORR" record -q -o t.iorr --time-unit 100 -- sh -c 'echo x >f; cat f >/dev/null; rm f' ||
  fail "recording a small script failed"
"$IORR" stats t.iorr >stats.txt 2>err.txt || fail "iorr stats failed: $(cat err.txt)"
[ ! -s err.txt ] || fail "iorr stats warned: $(cat err.txt)"
grep -q '^trace .*100 ns resolution, source record' stats.txt || fail "stats: $(head -1 stats.txt)"
"$IORR" dump t.iorr >dump.txt 2>err.txt || fail "iorr dump failed: $(cat err.txt)"
[ ! -s err.txt ] || fail "iorr dump warned: $(cat err.txt)"
grep -q '^# iorr trace format 5, time unit 100 ns' dump.txt || fail "dump: $(head -1 dump.txt)"
grep -qx "# cwd: $DIR" dump.txt || fail "header lacks cwd $DIR"
# --version names the format the recording has (it said "trace format 1" up to stop 35).
written=$(sed -n 's/^# iorr trace format \([0-9]*\),.*/\1/p' dump.txt)
"$IORR" --version | grep -q "writes trace format $written, reads 1 to $written)" ||
  fail "iorr --version: '$("$IORR" --version)', the trace is format $written"
grep -qxF "# cmdline: sh -c 'echo x >f; cat f >/dev/null; rm f'" dump.txt ||
  fail "header cmdline: $(grep '^# cmdline' dump.txt)"
grep -qx '# source: record' dump.txt || fail "header lacks source: record"
grep -q '^# tool: iorr .* record$' dump.txt || fail "header lacks the tool"
want_umask=$(umask | sed 's/^0*//')
grep -qx "# umask: 0*$want_umask" dump.txt || fail "header umask: $(grep umask dump.txt)"
grep -q '^# recorder_pid: [0-9][0-9]*$' dump.txt || fail "header lacks recorder_pid"
grep -q '^# kernel: Linux ' dump.txt || fail "header lacks the kernel"
grep -q '^# mount:/: [^ ]* [^ ]* ' dump.txt || fail "header lacks the root mount"
grep -q '^# mount:/proc: ' dump.txt && fail "header lists /proc"

# --snapshot: initial_state events before the program's, notes around them, and its time
# reported on its own.
mkdir -p tree/sub && echo hello >tree/sub/file && ln -s file tree/sub/link
"$IORR" record -o s.iorr --snapshot tree -- true 2>err.txt || fail "--snapshot run failed"
grep -q '^iorr: snapshot of tree: 4 entries in ' err.txt || fail "snapshot report: $(cat err.txt)"
"$IORR" dump s.iorr >s.txt 2>err.txt || fail "dump of s.iorr failed: $(cat err.txt)"
grep -qx '# note: snapshot-begin tree' s.txt || fail "no snapshot-begin note"
grep -q '^# note: snapshot-end tree [0-9.]*$' s.txt || fail "no snapshot-end note"
for want in 'initial_state("tree", S_IFDIR|0755, [0-9]*, NULL)' \
            'initial_state("tree/sub/file", S_IFREG|0644, 6, NULL)' \
            'initial_state("tree/sub/link", S_IFLNK|0777, 4, "file")'; do
  grep -q "^\[0 0\] [0-9.]* $want = 0" s.txt ||
    fail "snapshot lacks '$want': $(grep initial_state s.txt)"
done
first=$(grep -v '^#' s.txt | head -n 1)
[[ $first == *initial_state* ]] || fail "the snapshot does not come first: $first"

# Processes left running: the launcher waits for them (they are recorded to the end).
start=$(date +%s%N)
"$IORR" record -q -o o.iorr -- sh -c 'sleep 1 & exit 0' || fail "orphan run failed"
elapsed=$((($(date +%s%N) - start) / 1000000))
[ "$elapsed" -ge 900 ] || fail "did not wait for the orphaned sleep (${elapsed} ms)"

# --linger SECONDS: a daemon the command leaves behind (setsid) is recorded for SECONDS more,
# then the trace is closed without it (a daemon such as gpg-agent never exits): iorr returns
# the command's status, the trace holds what the daemon did before (f1) and not after (f2),
# reads without warnings, names the daemon in an escape note, and stays as it is when the
# daemon works on (its writer appends nothing). Until stop 37 iorr waited for it.
daemon='(setsid sh -c "sleep 0.2; echo a > f1; sleep 2.5; echo b > f2" &); exit 4'
rm -f f1 f2
start=$(date +%s%N)
"$IORR" record --linger 0.8 -o l.iorr -- sh -c "$daemon" 2>err.txt
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 4 ] || fail "--linger: exit $rc, want the command's 4"
[ "$elapsed" -ge 700 ] && [ "$elapsed" -lt 2000 ] ||
  fail "--linger 0.8: iorr returned after ${elapsed} ms"
grep -q 'still running when iorr closed the trace (--linger, 0.8 s' err.txt ||
  fail "--linger: no warning naming what was left: $(cat err.txt)"
check_linger_trace() {  # TRACE WHY: f1 in, f2 not, a clean read, the note, no file left over
  "$IORR" dump "$1" >d.txt 2>err.txt || fail "$2: dump failed: $(cat err.txt)"
  [ ! -s err.txt ] || fail "$2: the trace does not read clean: $(cat err.txt)"
  grep -q '"f1"' d.txt || fail "$2: the daemon's write of f1 (before the close) is missing"
  ! grep -q '"f2"' d.txt || fail "$2: the daemon's write of f2 (after the close) is in the trace"
  "$IORR" stats "$1" >s.txt 2>&1
  grep -q "^note: escape: 1 process ([0-9]* sh) and what they start were still running.*($2" s.txt ||
    fail "$2: no escape note: $(grep escape s.txt)"
  ! ls "$1".closing.* >/dev/null 2>&1 || fail "$2: a temporary file is left: $(ls "$1".*)"
}
check_linger_trace l.iorr --linger
size=$(stat -c %s l.iorr)
for _ in $(seq 60); do [ -e f2 ] && break; sleep 0.1; done
sleep 0.3
[ -e f2 ] || fail "--linger: the daemon did not run on after the close"
[ "$(stat -c %s l.iorr)" -eq "$size" ] || fail "--linger: the trace grew after its close"
check_linger_trace l.iorr --linger
# A trace path that is a symlink stays one, its target the closed trace (a review of stop 37:
# the close renamed its copy over the link, and left the target without an end record).
mkdir -p real
rm -f real/t.iorr link.iorr
ln -s real/t.iorr link.iorr
"$IORR" record -q --linger 0.3 -o link.iorr -- sh -c '(setsid sleep 1.5 &)' 2>err.txt
[ -L link.iorr ] || fail "--linger: the symlinked trace path is no longer a symlink"
"$IORR" stats real/t.iorr >s.txt 2>err.txt
[ ! -s err.txt ] || fail "--linger: the symlink's target does not read clean: $(cat err.txt)"
grep -q "^note: escape: 1 process" s.txt || fail "--linger: no escape note in the symlink's target"
ls real/t.iorr.closing.* link.iorr.closing.* >/dev/null 2>&1 && fail "--linger: a temporary file is left"
# Ctrl-C once the command has exited does the same (after a grace of 0.3 s); before stop 37
# the launcher ignored it and waited on.
rm -f f1 f2
"$IORR" record -o c.iorr -- sh -c "$daemon" 2>err.txt &
pid=$!
for _ in $(seq 50); do grep -q 'waiting for the 1 process' err.txt && break; sleep 0.1; done
start=$(date +%s%N)
kill -INT "$pid"
wait "$pid"
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 4 ] || fail "Ctrl-C after the command: exit $rc, want 4"
[ "$elapsed" -lt 1000 ] || fail "Ctrl-C after the command: iorr returned after ${elapsed} ms"
check_linger_trace c.iorr Ctrl-C
for _ in $(seq 60); do [ -e f2 ] && break; sleep 0.1; done

# A file size limit (ulimit -f) is the program's: the trace's writes stop below it instead of
# crossing it (SIGXFSZ then ended the program, or the launcher: status 153, stop 36's sweep);
# the program runs to its end with its own limit, and the trace says events were lost.
loop='for i in $(seq 3000); do echo $i > y; done; echo done; ulimit -f'
bash -c 'ulimit -S -f 16; exec "$0" record -o f.iorr -- sh -c "$1"' "$IORR" "$loop" >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "ulimit -S -f 16: exit $rc, want 0 ($(cat err.txt))"
[ "$(tr '\n' ' ' <out.txt)" = "done 32 " ] || fail "ulimit -S -f 16: output $(cat out.txt)"
grep -q 'events lost' err.txt || fail "ulimit -S -f 16: the summary does not say events were lost"
[ "$(stat -c %s f.iorr)" -le $((16 * 1024 + 4096)) ] ||
  fail "ulimit -S -f 16: the trace ($(stat -c %s f.iorr) bytes) went past the program's limit"
"$IORR" stats f.iorr >/dev/null 2>err.txt
grep -q 'incomplete' err.txt || fail "ulimit -S -f 16: the trace is not marked incomplete"
# A hard limit below the launcher's shared state: its own error, one line, no crash.
expect_exit 125 bash -c 'ulimit -f 100; exec "$0" record -o g.iorr -- true' "$IORR"
grep -q 'ulimit -f' err.txt || fail "ulimit -f 100: the error does not name the limit"

# SIGTERM sent to the launcher reaches the program.
"$IORR" record -q -o k.iorr -- sleep 30 &
pid=$!
for _ in $(seq 50); do  # until the program runs (up to 5 s)
  ps -o comm= --ppid "$pid" 2>/dev/null | grep -qx sleep && break
  sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 143 ] || fail "forwarded SIGTERM: exit $rc, want 143"
"$IORR" stats k.iorr >/dev/null 2>err.txt || fail "stats of k.iorr failed: $(cat err.txt)"
[ ! -s err.txt ] || fail "k.iorr is not a clean trace: $(cat err.txt)"

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "record CLI: all checks passed"
