#!/usr/bin/env bash
# End-to-end check of `iorr dump` and `iorr import jsonl`: a hand-written JSON lines trace is
# imported, dumped (JSON and text), re-imported and dumped again; both dumps must be identical.
# Also: bad input exits 2 with one line on stderr and leaves no trace behind.
# Usage: dump_roundtrip_test.sh /path/to/iorr
set -u
IORR=${1:?usage: $0 /path/to/iorr}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/iorr_dump_rt.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 1

fails=0
fail() {
  echo "FAIL: $*" >&2
  fails=$((fails + 1))
}
# expect_exit CODE CMD...: runs CMD, checks its exit code and that stderr is exactly one line.
expect_exit() {
  local want=$1
  shift
  "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$want" ] || fail "$* exited $rc, want $want (stderr: $(cat err.txt))"
  if [ "$want" -ne 0 ]; then
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "$*: want one line on stderr, got: $(cat err.txt)"
  fi
}

# Several processes and threads, failures (named and unnamed errnos), NULL and odd paths,
# calls outside the table, strace spellings, and two events out of time order.
cat >in.jsonl <<'EOF'
{"pid":100,"tid":100,"call":"openat","start_ns":10000,"end_ns":130000,"ret":3,"args":{"dirfd":"AT_FDCWD","path":"a/b","flags":"O_WRONLY|O_CREAT|O_TRUNC","mode":"0644"}}
{"pid":100,"tid":101,"call":"write","start_ns":20000,"end_ns":50000,"ret":10,"args":{"fd":3,"count":10}}
{"pid":100,"tid":100,"call":"stat","start_ns":30000,"ret":-1,"errno":"ENOENT","args":{"path":"no\nsuch \"x\" \u00ff\u00e9 é\t\\"}}
{"pid":200,"call":"getpid","start_ns":40000,"end_ns":40000,"ret":200}
{"pid":200,"call":"syscall_1000","start_ns":45000,"ret":-1,"errno":"ENOSYS"}
{"pid":200,"call":"mmap","start_ns":50000,"end_ns":60000,"ret":"0x7f0000001000","args":{"addr":"NULL","length":4096,"prot":"PROT_READ","flags":"MAP_PRIVATE","fd":3,"offset":0}}
{"iorr_note":"a note with \"quotes\" and a byte \u00ff"}
{"pid":200,"tid":201,"call":"truncate","start_ns":60000,"ret":0,"args":{"path":null,"length":5}}
{"pid":200,"tid":201,"call":"umask","start_ns":70000,"ret":18,"args":{"mask":"077"}}
{"pid":100,"tid":101,"call":"close","start_ns":80000,"end_ns":81000,"ret":-1,"errno":4000,"args":{"fd":3}}
{"pid":100,"tid":100,"call":"renameat2","start_ns":90000,"ret":0,"args":{"olddirfd":3,"oldpath":"","newdirfd":"AT_FDCWD","newpath":"x y","flags":"RENAME_NOREPLACE"}}
{"pid":300,"tid":300,"call":"lseek","start_ns":25000,"ret":4096,"args":{"fd":4,"offset":4096,"whence":"SEEK_SET"}}
{"pid":300,"tid":300,"call":"pipe2","start_ns":95000,"ret":0,"args":{"fds":"[5, 6]","flags":"O_CLOEXEC"}}
{"pid":300,"tid":303,"call":"sync","start_ns":96000,"end_ns":2096000,"ret":0}
{"pid":300,"tid":302,"call":"read","start_ns":15000,"ret":0,"args":{"fd":0,"count":4096}}
{"pid":100,"tid":101,"call":"fstat","start_ns":21000,"ret":0,"args":{"fd":3}}
EOF

"$IORR" import jsonl in.jsonl -o t1.iorr || fail "import of in.jsonl failed"
"$IORR" dump --json t1.iorr >a.jsonl 2>err.txt || fail "dump --json t1 failed"
[ ! -s err.txt ] || fail "dump of t1 printed: $(cat err.txt)"
"$IORR" import jsonl a.jsonl -o t2.iorr || fail "import of a.jsonl failed"
"$IORR" dump --json t2.iorr >b.jsonl || fail "dump --json t2 failed"
cmp a.jsonl b.jsonl || fail "JSON dumps differ"
"$IORR" dump t1.iorr >a.txt || fail "dump t1 failed"
"$IORR" dump t2.iorr >b.txt || fail "dump t2 failed"
cmp a.txt b.txt || fail "text dumps differ"

# The dump is in time order, with the header first and the note last.
[ "$(wc -l <a.jsonl)" -eq 17 ] || fail "a.jsonl: want 17 lines, got $(wc -l <a.jsonl)"
head -1 a.jsonl | grep -q '^{"iorr_header":{"version":5,"time_unit_ns":1000,' ||
  fail "first line is not the header: $(head -1 a.jsonl)"
tail -1 a.jsonl | grep -qF '{"iorr_note":"a note with \"quotes\" and a byte \u00ff"}' ||
  fail "last line is not the note: $(tail -1 a.jsonl)"
starts=$(sed -n '2,16p' a.jsonl | sed 's/.*"start_ns":\([-0-9]*\).*/\1/' | tr '\n' ' ')
[ "$starts" = "10000 15000 20000 21000 25000 30000 40000 45000 50000 60000 70000 80000 90000 95000 96000 " ] ||
  fail "events not in time order: $starts"

# Text lines in strace's shape.
want_lines=(
  '[100 100] 0.000010 openat(AT_FDCWD, "a/b", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3 <0.000120>'
  '[100 101] 0.000020 write(3, ..., 10) = 10 <0.000030>'
  '[100 100] 0.000030 stat("no\nsuch \"x\" \xff\xe9 \xc3\xa9\t\\", ...) = -1 ENOENT (No such file or directory) <0.000000>'
  '[200 200] 0.000040 getpid(...) = 200 <0.000000>'
  '[200 200] 0.000045 syscall_1000(...) = -1 ENOSYS (Function not implemented) <0.000000>'
  '[200 200] 0.000050 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3, 0) = 0x7f0000001000 <0.000010>'
  '[200 201] 0.000060 truncate(NULL, 5) = 0 <0.000000>'
  '[100 101] 0.000080 close(3) = -1 ERRNO_4000 (Unknown error 4000) <0.000001>'
  '[300 303] 0.000096 sync() = 0 <0.002000>'
  '[100 101] 0.000021 fstat(3, ...) = 0 <0.000000>'
)
for l in "${want_lines[@]}"; do
  grep -qxF -- "$l" a.txt || fail "text dump lacks: $l"
done
grep -q '^\[200 201\] 0.000070 umask(077) = 0*22 <0.000000>$' a.txt || fail "umask line: $(grep umask a.txt)"
grep -qx '# iorr trace format 5, time unit 1000 ns, start_mono_ns 0, start_wall_ns 0' a.txt ||
  fail "text header: $(head -1 a.txt)"
grep -qx '# source: jsonl' a.txt || fail "text header lacks the source field"

# The calls of format 5 (getcwd, inotify, bind to a path) from strace's log to the dump, and
# through JSON lines back: bind's address is kept as the path of an AF_UNIX pathname address
# only (abstract, unnamed, AF_INET and unread addresses: NULL, `{...}`).
cat >s5.log <<'LOG'
100 1.000000 getcwd("/tmp", 4096) = 5 <0.000010>
100 1.000100 getcwd(0x7ffc00000000, 2) = -1 ERANGE (Numerical result out of range) <0.000001>
100 1.000200 inotify_init1(IN_NONBLOCK|IN_CLOEXEC) = 3 <0.000002>
100 1.000300 inotify_add_watch(3, "/tmp", IN_MODIFY|IN_CREATE) = 1 <0.000003>
100 1.000400 inotify_add_watch(3, "gone", IN_ATTRIB|IN_DONT_FOLLOW|IN_ONESHOT) = -1 ENOENT (No such file or directory) <0.000003>
100 1.000500 socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0) = 4 <0.000004>
100 1.000600 bind(4, {sa_family=AF_UNIX, sun_path="/tmp/s \"q\""}, 110) = 0 <0.000005>
100 1.000700 bind(4, {sa_family=AF_UNIX, sun_path=@"abstract"}, 11) = 0 <0.000005>
100 1.000800 bind(4, {sa_family=AF_UNIX}, 2) = 0 <0.000005>
100 1.000900 bind(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("0.0.0.0")}, 16) = -1 EACCES (Permission denied) <0.000005>
100 1.001000 bind(4, 0x10, 110) = -1 EFAULT (Bad address) <0.000005>
100 1.001100 inotify_init() = 6 <0.000002>
100 1.001200 +++ exited with 0 +++
LOG
"$IORR" import strace --strict -q s5.log -o s5.iorr 2>err.txt || fail "import of the format 5 calls: $(cat err.txt)"
"$IORR" dump s5.iorr >s5.txt 2>err.txt || fail "dump of s5.iorr: $(cat err.txt)"
want_lines=(
  '[100 100] 0.000000 getcwd(..., 4096) = 5 <0.000010>'
  '[100 100] 0.000100 getcwd(..., 2) = -1 ERANGE (Numerical result out of range) <0.000001>'
  '[100 100] 0.000200 inotify_init1(526336) = 3 <0.000002>'
  '[100 100] 0.000300 inotify_add_watch(3, "/tmp", IN_MODIFY|IN_CREATE) = 1 <0.000003>'
  '[100 100] 0.000400 inotify_add_watch(3, "gone", IN_ATTRIB|IN_DONT_FOLLOW|IN_ONESHOT) = -1 ENOENT (No such file or directory) <0.000003>'
  '[100 100] 0.000600 bind(4, {sa_family=AF_UNIX, sun_path="/tmp/s \"q\""}, 110) = 0 <0.000005>'
  '[100 100] 0.000700 bind(4, {...}, 11) = 0 <0.000005>'
  '[100 100] 0.000800 bind(4, {...}, 2) = 0 <0.000005>'
  '[100 100] 0.000900 bind(5, {...}, 16) = -1 EACCES (Permission denied) <0.000005>'
  '[100 100] 0.001000 bind(4, {...}, 110) = -1 EFAULT (Bad address) <0.000005>'
  '[100 100] 0.001100 inotify_init() = 6 <0.000002>'
)
for l in "${want_lines[@]}"; do
  grep -qxF -- "$l" s5.txt || fail "text dump of the format 5 calls lacks: $l"
done
"$IORR" dump --json s5.iorr >s5.a.jsonl || fail "dump --json s5.iorr failed"
grep -qF '"call":"bind","start_ns":600000,"end_ns":605000,"ret":0,"errno":null,"args":{"sockfd":4,"addr":"/tmp/s \"q\"","addrlen":110}}' s5.a.jsonl ||
  fail "bind's JSON: $(grep -m1 bind s5.a.jsonl)"
grep -qF '"args":{"sockfd":4,"addr":null,"addrlen":11}' s5.a.jsonl || fail "abstract bind's JSON: $(grep bind s5.a.jsonl)"
grep -qF '"args":{"fd":3,"pathname":"/tmp","mask":258}' s5.a.jsonl || fail "inotify's JSON: $(grep inotify_add s5.a.jsonl)"
"$IORR" import jsonl s5.a.jsonl -o s5.2.iorr || fail "import of s5.a.jsonl failed"
"$IORR" dump --json s5.2.iorr >s5.b.jsonl || fail "dump --json s5.2.iorr failed"
cmp s5.a.jsonl s5.b.jsonl || fail "JSON dumps of the format 5 calls differ"
"$IORR" dump s5.2.iorr >s5.2.txt || fail "dump s5.2.iorr failed"
cmp s5.txt s5.2.txt || fail "text dumps of the format 5 calls differ"

# stdin and stdout work as files.
"$IORR" import jsonl - -o - <a.jsonl >t3.iorr || fail "import from stdin to stdout failed"
"$IORR" dump --json - <t3.iorr >c.jsonl || fail "dump of stdin failed"
cmp a.jsonl c.jsonl || fail "stdin/stdout round trip differs"

# --limit, and --time-unit sets the resolution the text dump shows.
"$IORR" dump --json --limit 2 t1.iorr >l.jsonl || fail "dump --limit failed"
[ "$(wc -l <l.jsonl)" -eq 4 ] || fail "--limit 2: want header + 2 events + note, got $(wc -l <l.jsonl) lines"
grep -v '^{"iorr_header"' in.jsonl >noheader.jsonl
"$IORR" import jsonl --time-unit 1 noheader.jsonl -o ns.iorr || fail "import --time-unit 1 failed"
"$IORR" dump ns.iorr >ns.txt || fail "dump ns.iorr failed"
grep -qF '[100 101] 0.000020000 write(3, ..., 10) = 10 <0.000030000>' ns.txt ||
  fail "9 decimals at 1 ns resolution: $(grep write ns.txt)"

# Bad input: exit 2, one line on stderr.
head -c 3000 /dev/urandom >random.bin
printf 'hello\n' >text.txt
expect_exit 2 "$IORR" dump random.bin
expect_exit 2 "$IORR" dump text.txt
expect_exit 2 "$IORR" dump --json text.txt
expect_exit 2 "$IORR" dump no-such-file.iorr
: >empty.iorr
expect_exit 2 "$IORR" dump empty.iorr

# A damaged chunk: exit 2 with one line (stdout may hold what came before it).
size=$(stat -c %s t1.iorr)
cp t1.iorr damaged.iorr
printf '\xff\xff\xff\xff' | dd of=damaged.iorr bs=1 seek=$((size / 2)) conv=notrunc status=none
expect_exit 2 "$IORR" dump damaged.iorr
grep -q '^iorr: damaged.iorr: ' err.txt || fail "damaged: $(cat err.txt)"

# A truncated trace: the events that are there, and a warning.
head -c $((size - 3)) t1.iorr >truncated.iorr
"$IORR" dump truncated.iorr >/dev/null 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || fail "truncated trace: exit $rc"
grep -q '^iorr: ' err.txt || fail "truncated trace: no warning or error"

# A bad line stops the import: exit 2, `iorr: FILE:LINE: reason`, no trace left behind.
{ head -5 a.jsonl; echo '{"pid":1,"call":"openat","start_ns":1,"ret":3,"args":{"dirfd":"AT_FDCWD","path":"x","flags":"O_BOGUS","mode":0}}'; } >bad.jsonl
expect_exit 2 "$IORR" import jsonl bad.jsonl -o bad.iorr
grep -qxF 'iorr: bad.jsonl:6: "args.flags": not a number or O_* flags' err.txt ||
  fail "bad line message: $(cat err.txt)"
[ ! -e bad.iorr ] && [ ! -e bad.iorr.tmp ] || fail "a failed import left a file behind"
printf '{"pid":1,"call":"sync","start_ns":1,"ret":0}\n{"pid":1,"call":"sync","start_ns":2,"ret":0' >trunc.jsonl
expect_exit 2 "$IORR" import jsonl trunc.jsonl -o bad.iorr
grep -q '^iorr: trunc.jsonl:2: column ' err.txt || fail "truncated line message: $(cat err.txt)"
printf '{"pid":1,"call":"sync","start_ns":1,"ret":0}\n%s\n' "$(head -1 a.jsonl)" >late.jsonl
expect_exit 2 "$IORR" import jsonl late.jsonl -o bad.iorr
grep -qF 'late.jsonl:2: the header line must come first' err.txt || fail "late header: $(cat err.txt)"
expect_exit 2 "$IORR" import jsonl in.jsonl -o bad.iorr --time-unit 7
[ ! -e bad.iorr ] && [ ! -e bad.iorr.tmp ] || fail "a failed import left a file behind"
# A failed import does not clobber an existing trace.
cp t1.iorr keep.iorr
expect_exit 2 "$IORR" import jsonl bad.jsonl -o keep.iorr
cmp t1.iorr keep.iorr || fail "a failed import changed the existing trace"

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed" >&2
  exit 1
fi
echo "dump round trip: all checks passed"
