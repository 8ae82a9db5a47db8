#!/usr/bin/env bash
# End to end: records real programs under strace in the same run
#   strace -f -ttt -T -o LOG iorr record -q -o TRACE -- CMD
# and checks, per program, that trace_coverage finds 100% of the file-system calls strace saw
# in the program's own threads (same order, same results), and that the program's output, exit
# status and files equal an unrecorded run's. Programs: tar xf, tar cf, rm -rf, cp -a,
# find -delete, sqlite3 with transactions, make -j2, a Python script writing from 4 threads,
# fs_torture, sock_calls.
# Prints each program's coverage line, then "N passed, M failed". Exit 0 when all passed, 1
# otherwise, 77 (skip) without strace or the recorder library. IORR_KEEP=1 keeps the work dir.
# Usage: record_strace_test.sh IORR_BIN BUILD_DIR SRC_DIR
set -uo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: record_strace_test.sh IORR_BIN BUILD_DIR SRC_DIR" >&2
  exit 2
fi
iorr=$1 build=$2 src=$3
lib=$build/lib/libiorr-preload.so
coverage=$build/bin/trace_coverage
torture=$build/bin/fs_torture
sock_calls=$build/bin/sock_calls

command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
if ! strace -f -o /dev/null true 2> /dev/null; then
  echo "SKIP: strace cannot trace here (ptrace denied)"
  exit 77
fi
[[ -f $lib ]] || { echo "SKIP: $lib is missing (the recorder library is not built)"; exit 77; }
for b in "$iorr" "$coverage" "$torture" "$sock_calls"; do
  [[ -x $b ]] || { echo "FAIL: $b is missing (build the tree first)"; exit 1; }
done
[[ -d $src/tests/recorder ]] || { echo "FAIL: $src is not the source tree"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-record-test.XXXXXX")
if [[ ${IORR_KEEP:-} == 1 ]]; then
  echo "work dir: $work (kept)"
else
  trap 'rm -rf "$work"' EXIT
fi
passed=0 failed=0 skipped=0

# ---- Inputs shared by the cases (read-only) ----
in=$work/in
mkdir -p "$in/tree"
make_tree() {  # about 300 files in nested directories, with links, an empty dir and odd modes
  local t=$1 d f i size
  for d in a a/b a/b/c d e/f/g h; do mkdir -p "$t/$d"; done
  i=0
  for d in a a/b a/b/c d e/f/g h; do
    for f in $(seq 1 42); do
      size=$(( (i * 7919) % 20000 ))
      (( i % 11 == 0 )) && size=0
      (( i % 53 == 0 )) && size=200000
      printf "%${size}s" "file $i" > "$t/$d/f$f.txt"
      i=$((i + 1))
    done
  done
  mkdir -p "$t/empty"
  chmod 600 "$t/a/f1.txt"
  chmod 755 "$t/d/f2.txt"
  ln -s ../a/f3.txt "$t/d/link"
  ln -s nowhere "$t/h/dangling"
  ln "$t/a/f4.txt" "$t/h/hardlink"
  touch -d '2001-02-03 04:05:06' "$t/a/f5.txt"
}
make_tree "$in/tree"
tar cf "$in/t.tar" -C "$in" tree

# Name, type, mode, size, link target and (unless the second argument is "no-times") the mtime
# of every entry under a directory.
listing() {
  local format='%p %y %m %s %l %T@\n'
  [[ ${2:-} == no-times ]] && format='%p %y %m %s %l\n'
  (cd "$1" && find . -printf "$format" | LC_ALL=C sort)
}

# ---- The runner ----
# run_case NAME -- CMD ARGS...   with, when set: setup DIR (prepares the run's dir), check DIR
# (compares the plain run's dir $DIR/p with the recorded one's $DIR/r), stdin_file.
setup=true check=true stdin_file=/dev/null
run_case() {
  local name=$1
  shift 2
  local d=$work/$name su=$setup ck=$check sin=$stdin_file
  setup=true check=true stdin_file=/dev/null
  mkdir -p "$d/p" "$d/r"
  if ! { "$su" "$d/p" && "$su" "$d/r"; }; then
    echo "FAIL: $name: setup failed"
    failed=$((failed + 1))
    return
  fi
  local ps rs cs problems=()
  # A hung recording fails this case after 2 minutes (timeout: 124), not the whole test.
  (cd "$d/p" && timeout -k 5 120 "$@" < "$sin" > "$d/p.out" 2> "$d/p.err")
  ps=$?
  (cd "$d/r" && timeout -k 5 120 strace -f -ttt -T -o "$d/strace.log" \
    "$iorr" record -q -o "$d/rec.iorr" -- "$@" < "$sin" > "$d/r.out" 2> "$d/r.err")
  rs=$?
  [[ $ps == "$rs" ]] || problems+=("exit status $rs recorded, $ps without the recorder")
  cmp -s "$d/p.out" "$d/r.out" ||
    problems+=("stdout differs: $(diff "$d/p.out" "$d/r.out" | head -n 5)")
  grep -v '^strace: ' "$d/r.err" > "$d/r.err.program"
  cmp -s "$d/p.err" "$d/r.err.program" ||
    problems+=("stderr differs: $(diff "$d/p.err" "$d/r.err.program" | head -n 5)")
  local why
  why=$("$ck" "$d" 2>&1) || problems+=("files differ: $(head -n 5 <<< "$why")")
  if [[ -s $d/rec.iorr ]] &&
    "$iorr" import strace -q "$d/strace.log" -o "$d/strace.iorr" 2> "$d/import.err"; then
    # With the audit module (the default, recorder/audit.h) every call, the dynamic loader's
    # before the library starts included; without it (IORR_AUDIT=0) those are counted and shown,
    # not required.
    local scope=()
    [[ ${IORR_AUDIT:-1} == 0 ]] && scope=(--after-main)
    "$coverage" "$d/strace.iorr" "$d/rec.iorr" --verbose "${scope[@]}" > "$d/coverage.txt" 2>&1
    cs=$?
    echo "$name: $(grep -m1 '^coverage:' "$d/coverage.txt" || echo "no coverage figure")"
    if [[ $cs != 0 ]]; then
      problems+=("not every file-system call was recorded (trace_coverage exit $cs)")
      grep -v '^coverage:' "$d/coverage.txt" | head -n 60 | sed 's/^/    /'
    fi
  else
    echo "$name: no coverage figure"
    problems+=("no trace to compare: $(head -n 3 "$d/import.err" 2> /dev/null)")
  fi
  if [[ ${#problems[@]} -eq 0 ]]; then
    passed=$((passed + 1))
    echo "ok: $name"
  else
    failed=$((failed + 1))
    local p
    for p in "${problems[@]}"; do echo "FAIL: $name: $p"; done
  fi
}

# ---- The programs ----
# DIR NAME [no-times]: the trees p/NAME and r/NAME have the same contents and metadata.
both_trees_equal() {
  diff -r --no-dereference "$1/p/$2" "$1/r/$2" &&
    diff <(listing "$1/p/$2" "${3:-}") <(listing "$1/r/$2" "${3:-}")
}

check_tar_xf() { both_trees_equal "$1" tree; }
check=check_tar_xf
run_case tar-xf -- tar xf "$in/t.tar"

setup_copy() { cp -a "$in/tree" "$1/tree"; }
check_tar_cf() {
  local w
  for w in p r; do mkdir -p "$1/$w.x" && tar xf "$1/$w/out.tar" -C "$1/$w.x" || return 1; done
  diff <(tar tvf "$1/p/out.tar" | LC_ALL=C sort) <(tar tvf "$1/r/out.tar" | LC_ALL=C sort) &&
    diff -r --no-dereference "$1/p.x" "$1/r.x"
}
setup=setup_copy check=check_tar_cf
run_case tar-cf -- tar cf out.tar tree

check_gone() { [[ ! -e $1/p/tree && ! -e $1/r/tree ]] || { echo "tree left behind"; return 1; }; }
setup=setup_copy check=check_gone
run_case rm-rf -- rm -rf tree

check_cp() { both_trees_equal "$1" copy; }
check=check_cp
run_case cp-a -- cp -a "$in/tree" copy

setup=setup_copy check=check_gone
run_case find-delete -- find tree -delete

# sqlite3 with transactions: committed, rolled back, in WAL mode.
if ! command -v sqlite3 >/dev/null && [[ $(id -u) == 0 && ${CI:-} == true ]]; then
  echo "installing sqlite3 (CI, root)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlite3 > /dev/null 2>&1 || true
fi
if command -v sqlite3 >/dev/null; then
  cat > "$in/script.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INTEGER);
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 500)
  INSERT INTO t(name, n) SELECT 'row ' || i, i * 3 FROM c;
COMMIT;
BEGIN;
UPDATE t SET n = 0;
ROLLBACK;
BEGIN IMMEDIATE;
DELETE FROM t WHERE id % 7 = 0;
CREATE INDEX t_n ON t(n);
COMMIT;
PRAGMA journal_mode = WAL;
BEGIN;
INSERT INTO t(name, n) VALUES ('late', 1);
COMMIT;
SELECT count(*), sum(n) FROM t;
SELECT name FROM t ORDER BY n DESC LIMIT 3;
EOF
  check_sqlite() { diff <(sqlite3 "$1/p/db" .dump) <(sqlite3 "$1/r/db" .dump); }
  check=check_sqlite stdin_file=$in/script.sql
  run_case sqlite3 -- sqlite3 db
else
  echo "SKIP: sqlite3: not installed"
  skipped=$((skipped + 1))
fi

# make -j2: GNU make (4.3) starts its recipes with posix_spawn, two at a time; each recipe
# copies a file (cp: no shell), so every child is a posix_spawn child on make's memory
# (since stop 25), recorded as a vfork child until its exec.
if command -v make > /dev/null; then
  setup_make() {
    {
      printf 'all: %s\n' "$(seq -f 'o%g' 1 40 | tr '\n' ' ')"
      printf 'o%%:\n\tcp Makefile $@\n'
    } > "$1/Makefile"
  }
  check_make() { both_trees_equal "$1" . no-times; }
  setup=setup_make check=check_make
  run_case make-j2 -- make -s -j2
else
  echo "SKIP: make: not installed"
  skipped=$((skipped + 1))
fi

# Python: four threads write, sync, rename and stat files; the main thread sums them up.
python=$(command -v /usr/bin/python3 python3 | head -n 1)
if [[ -n $python ]]; then
  cat > "$in/threads.py" <<'EOF'
import hashlib, os, sys, threading

out = sys.argv[1]
os.mkdir(out)

def work(k):
    for i in range(25):
        tmp = os.path.join(out, "t%d-%02d.tmp" % (k, i))
        with open(tmp, "w") as f:
            f.write(("thread %d file %d\n" % (k, i)) * (i + 1))
            f.flush()
            os.fsync(f.fileno())
        dst = tmp[:-4] + ".txt"
        os.rename(tmp, dst)
        os.stat(dst)
        if i % 5 == 4:
            os.unlink(dst)

threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
h = hashlib.sha256()
names = sorted(os.listdir(out))
for n in names:
    with open(os.path.join(out, n), "rb") as f:
        h.update(n.encode() + f.read())
print(len(names), "files", h.hexdigest())
EOF
  check_python() { both_trees_equal "$1" out no-times; }
  check=check_python
  run_case python-threads -- "$python" -B "$in/threads.py" out
else
  echo "SKIP: python3: not installed"
  skipped=$((skipped + 1))
fi

check_torture() { both_trees_equal "$1" w no-times; }
check=check_torture
run_case fs_torture -- "$torture" w

# The calls format 5 added: getcwd (the wrapper, realpath's own call, raw), inotify_init1 and
# inotify_add_watch, and bind to a path (a socket node chmod, stat and unlink then use; the
# whole 108 bytes of sun_path, raw), beside binds that name no path. Besides the coverage, the
# recorded trace must show each (before format 5 it held none of them).
check_sock() {
  both_trees_equal "$1" w no-times || return 1
  "$iorr" dump "$1/rec.iorr" > "$1/rec.txt" || { echo "dump failed"; return 1; }
  local long want n
  long=$(printf 'n%.0s' $(seq 1 108))
  while IFS='|' read -r n want; do
    [[ $(grep -cF -- "$want" "$1/rec.txt") -ge $n ]] ||
      { echo "fewer than $n lines with: $want"; grep -E 'getcwd|inotify|bind|sock"' "$1/rec.txt" | head -n 20; return 1; }
  done <<EOT
5|getcwd(..., 
1|inotify_init1(
1|, ".", IN_MODIFY|IN_CREATE) = 
1|, "missing", IN_ATTRIB) = -1 ENOENT
1|, ".", IN_DELETE) = 
1|{sa_family=AF_UNIX, sun_path="sock"}, 7) = 0
1|{sa_family=AF_UNIX, sun_path="sock"}, 7) = -1 EADDRINUSE
1|{sa_family=AF_UNIX, sun_path="$long"}, 110) = 0
4|bind(
3|, {...}, 
1|, {...}, 200) = -1 EINVAL
1|chmod("sock", 0600) = 0
1|unlink("sock") = 0
1|unlink("$long") = 0
EOT
}
check=check_sock
run_case sock_calls -- "$sock_calls" w

if [[ $skipped -gt 0 ]]; then
  echo "$passed passed, $failed failed ($skipped skipped)"
else
  echo "$passed passed, $failed failed"
fi
[[ $failed -eq 0 ]]
