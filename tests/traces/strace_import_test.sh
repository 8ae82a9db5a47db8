#!/usr/bin/env bash
# End to end: strace real programs (tar, cp, rm, find, a shell pipeline with children), import
# the logs (plain, -y, compressed), and check that every call line of each log is in the trace
# with the same count per name, and that dump --json | import jsonl | dump --json is stable.
# Usage: strace_import_test.sh IORR_BINARY SOURCE_DIR
set -euo pipefail
iorr=$1 src=$2
command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
strace -f -o /dev/null true 2>/dev/null || { echo "SKIP: strace cannot trace here (ptrace denied)"; exit 77; }
check=$src/tools/check-strace-counts.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir -p tree/a/b tree/c
for i in $(seq 1 40); do echo "file $i" > "tree/a/f$i"; done
ln -s ../a/f1 tree/c/link
printf 'x%.0s' $(seq 1 5000) > tree/a/b/big

run() {  # name, strace flags, command...
  local name=$1 flags=$2
  shift 2
  # shellcheck disable=SC2086
  strace $flags -o "$name.log" "$@"
  "$iorr" import strace --strict -q "$name.log" -o "$name.iorr"
  bash "$check" "$iorr" "$name.log" "$name.iorr"
  "$iorr" dump --json "$name.iorr" > "$name.a.jsonl"
  "$iorr" import jsonl "$name.a.jsonl" -o "$name.2.iorr"
  "$iorr" dump --json "$name.2.iorr" > "$name.b.jsonl"
  cmp "$name.a.jsonl" "$name.b.jsonl"
  "$iorr" dump "$name.iorr" > "$name.txt"
  [[ $(grep -vc '^#' "$name.txt") -eq $(($(wc -l < "$name.a.jsonl") - 2)) ]] || {
    echo "FAIL: $name: text and JSON dumps have different event counts"; exit 1; }
  echo "ok: $name ($(wc -l < "$name.log") log lines)"
}

run tar-cf "-f -ttt -T" tar cf t.tar tree
mkdir x1 x2
run tar-xf "-f -ttt -T -y" tar xf t.tar -C x1
run cp-a "-f -ttt -T" cp -a tree x2/tree
run find-delete "-f -ttt -T" find x2 -delete
run rm-rf "-f -ttt" rm -rf x1
run sh-children "-f -ttt -T" sh -c 'ls -la tree > ls.out; cat tree/a/f* | wc -c > wc.out; (sleep 0.01 &) ; wait'

# Compressed logs read the same.
for z in gzip xz bzip2 zstd; do
  command -v $z >/dev/null || continue
  $z -c tar-cf.log > "tar-cf.log.$z"
  "$iorr" import strace -q "tar-cf.log.$z" -o "tar-cf.$z.iorr"
  cmp <("$iorr" dump --json tar-cf.iorr) <("$iorr" dump --json "tar-cf.$z.iorr")
done
echo "ok: compressed logs"

# A garbage line is counted and reported, and --strict refuses it.
{ head -n 3 tar-cf.log; echo "this is not strace output"; tail -n +4 tar-cf.log; } > bad.log
"$iorr" import strace bad.log -o bad.iorr 2> bad.err
grep -q "1 unparsed lines" bad.err || { echo "FAIL: garbage line not reported"; cat bad.err; exit 1; }
"$iorr" stats bad.iorr | grep -q "unparsed" || { echo "FAIL: trace has no note of the garbage line"; exit 1; }
if "$iorr" import strace --strict -q bad.log -o bad2.iorr 2>/dev/null; then
  echo "FAIL: --strict accepted a garbage line"; exit 1
fi
[[ ! -e bad2.iorr ]] || { echo "FAIL: --strict left a trace behind"; exit 1; }
echo "ok: garbage lines"

# readlink's target (format 3): the string strace printed; none when the call failed or strace
# cut the string short (-s).
cat > rl.log << 'LOG'
100 readlink("/usr/bin/gcc", "gcc-12", 4096) = 6
100 readlinkat(AT_FDCWD, "/usr/bin/x", 0x7ffd1234, 4096) = -1 EINVAL (Invalid argument)
100 readlink("/long", "abcdefghijklmnopqrstuvwxyz012345"..., 4096) = 40
LOG
"$iorr" import strace --strict -q rl.log -o rl.iorr
got=$("$iorr" dump rl.iorr | grep -v '^#' | cut -d' ' -f4-)
want='readlink("/usr/bin/gcc", "gcc-12", 4096) = 6 <0.000000>
readlinkat(AT_FDCWD, "/usr/bin/x", NULL, 4096) = -1 EINVAL (Invalid argument) <0.000000>
readlink("/long", NULL, 4096) = 40 <0.000000>'
[[ $got == "$want" ]] || { echo "FAIL: readlink targets: $got"; exit 1; }
echo "ok: readlink targets"
# setxattr's value: the string strace printed when the call succeeded and the string is whole.
cat > xa.log << 'LOG'
100 fsetxattr(4, "system.posix_acl_access", "\x02\x00\x00\x00\x01\x00\x06\x00", 8, 0) = 0
100 setxattr("/f", "user.a", "abc"..., 40, 0) = 0
100 lsetxattr("/g", "user.a", "abc", 3, 0) = -1 EPERM (Operation not permitted)
LOG
"$iorr" import strace --strict -q xa.log -o xa.iorr
got=$("$iorr" dump xa.iorr | grep -v '^#' | cut -d' ' -f4-)
want='fsetxattr(4, "system.posix_acl_access", "\x02\x00\x00\x00\x01\x00\x06\x00", 8, 0) = 0 <0.000000>
setxattr("/f", "user.a", NULL, 40, 0) = 0 <0.000000>
lsetxattr("/g", "user.a", NULL, 3, 0) = -1 EPERM (Operation not permitted) <0.000000>'
[[ $got == "$want" ]] || { echo "FAIL: setxattr values: $got"; exit 1; }
echo "ok: setxattr values"
# A duration that would take the end time past int64 (both near 9e18 ns): the end saturates,
# never wraps negative (it did before stop 32, a signed overflow found by review).
cat > big.log << 'LOG'
1 0.000001 close(3) = 0 <0.000001>
1 8999999999.000000 close(4) = 0 <8999999999.000000>
LOG
"$iorr" import strace --strict -q big.log -o big.iorr
if "$iorr" dump --json big.iorr | grep -q '"end_ns":-'; then
  echo "FAIL: a huge duration wrapped the end time: $("$iorr" dump --json big.iorr | grep close | tail -n 1)"
  exit 1
fi
echo "ok: huge durations"
echo "1 passed, 0 failed"
