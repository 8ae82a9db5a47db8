#!/usr/bin/env bash
# Replays of hand-written traces (iorr import jsonl, no recording) that check single rules of
# the replayer, each one a mismatch a compatibility sweep of real programs found: O_DIRECT,
# per-process umask, "/" and "", symlink targets, sizes, renames, inherited fds, bind to a path.
# Usage: replay_cases_test.sh IORR_BIN SRC_DIR. Prints "N passed, M failed"; a case that cannot
# run here prints "skip: CASE (reason)".
set -uo pipefail
iorr=$1 src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-replay-cases.XXXXXX")
mounted=()
cleanup() {
  for m in "${mounted[@]}"; do
    if [[ $m == tmpfs:* ]]; then umount "${m#tmpfs:}" 2> /dev/null; else
      bash "$src/tools/loopfs.sh" umount "$m" > /dev/null 2>&1; fi
  done
  rm -rf "$work"
}
[[ -n ${KEEP:-} ]] || trap cleanup EXIT
cd "$work"
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
header='{"iorr_header":{"version":4,"time_unit_ns":1000,"start_mono_ns":0,"start_wall_ns":0,"fields":[["cwd","/w"]]}}'

# replay_jsonl NAME ROOT [REPLAY OPTIONS...]: NAME.jsonl imported to NAME.iorr and replayed
# onto ROOT (made if missing) with --json into NAME.json (errors of both in NAME.err).
replay_jsonl() {
  local name=$1 root=$2
  shift 2
  mkdir -p "$root"
  "$iorr" import jsonl "$name.jsonl" -o "$name.iorr" 2> "$name.err" || return 2
  "$iorr" replay "$name.iorr" --root "$root" --cache warm --json "$@" > "$name.json" 2>> "$name.err"
}
mismatches() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["mismatches"], *d.get("first_mismatches", [])[:3], sep="; ")' "$1.json" 2> /dev/null || echo "no report: $(head -c 300 "$1.err")"; }
zero() { [[ $(mismatches "$1") == 0 ]]; }

# Whether DIR's file system takes O_DIRECT (an aligned 4 KiB write).
direct_ok() {
  python3 - "$1" << 'PY' 2> /dev/null
import mmap, os, sys
fd = os.open(os.path.join(sys.argv[1], ".direct-probe"), os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
buf = mmap.mmap(-1, 4096)
os.write(fd, buf)
os.close(fd)
os.unlink(os.path.join(sys.argv[1], ".direct-probe"))
PY
}

# ---- O_DIRECT: reads and writes from an aligned buffer, the recorded counts and offsets as
# they are, and F_SETFL turning O_DIRECT off for a short last write (dd oflag=direct). Before:
# every O_DIRECT call failed EINVAL from an unaligned buffer, and the short write too.
cat > direct.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"openat","start_ns":1000,"end_ns":2000,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/d","flags":"O_RDWR|O_CREAT|O_DIRECT","mode":420}}
{"pid":1,"tid":1,"call":"write","start_ns":3000,"end_ns":4000,"ret":1048576,"errno":null,"args":{"fd":3,"count":1048576}}
{"pid":1,"tid":1,"call":"pwrite64","start_ns":5000,"end_ns":6000,"ret":4096,"errno":null,"args":{"fd":3,"count":4096,"offset":1048576}}
{"pid":1,"tid":1,"call":"lseek","start_ns":7000,"end_ns":8000,"ret":0,"errno":null,"args":{"fd":3,"offset":0,"whence":0}}
{"pid":1,"tid":1,"call":"read","start_ns":9000,"end_ns":10000,"ret":8192,"errno":null,"args":{"fd":3,"count":8192}}
{"pid":1,"tid":1,"call":"pread64","start_ns":11000,"end_ns":12000,"ret":65536,"errno":null,"args":{"fd":3,"count":65536,"offset":4096}}
{"pid":1,"tid":1,"call":"fcntl","start_ns":13000,"end_ns":14000,"ret":0,"errno":null,"args":{"fd":3,"cmd":4,"arg":32770}}
{"pid":1,"tid":1,"call":"lseek","start_ns":15000,"end_ns":16000,"ret":1052672,"errno":null,"args":{"fd":3,"offset":0,"whence":2}}
{"pid":1,"tid":1,"call":"write","start_ns":17000,"end_ns":18000,"ret":1000,"errno":null,"args":{"fd":3,"count":1000}}
{"pid":1,"tid":1,"call":"close","start_ns":19000,"end_ns":20000,"ret":0,"errno":null,"args":{"fd":3}}
JSON
direct_case() {  # WHERE DIR
  local where=$1 dir=$2 name=direct-${1//[^a-z0-9]/}
  if ! direct_ok "$dir"; then echo "skip: O_DIRECT on $where (its file system refuses O_DIRECT)"; return; fi
  cp direct.jsonl "$name.jsonl"
  replay_jsonl "$name" "$dir/root"
  if zero "$name" && [[ $(stat -c %s "$dir/root/w/d") == 1053672 ]]; then
    ok "O_DIRECT on $where: 0 mismatches, a 1,053,672-byte file"
  else
    fail "O_DIRECT on $where: $(mismatches "$name"), size $(stat -c %s "$dir/root/w/d" 2>&1)"
  fi
}
mkdir here && direct_case "the test's file system ($(stat -f -c %T .))" "$work/here"
if [[ $(id -u) == 0 ]]; then
  mkdir tmpfs
  if mount -t tmpfs -o size=64m iorr-cases tmpfs 2> /dev/null; then
    mounted+=("tmpfs:$work/tmpfs")
    direct_case tmpfs "$work/tmpfs"
  else
    echo "skip: O_DIRECT on tmpfs (cannot mount one)"
  fi
  if bash "$src/tools/loopfs.sh" mount ext4 "$work/ext4" --size 64M > /dev/null 2> loop.err; then
    mounted+=("$work/ext4")
    direct_case "loop ext4" "$work/ext4"
  else
    echo "skip: O_DIRECT on loop ext4 ($(head -n 1 loop.err))"
  fi
else
  echo "skip: O_DIRECT on tmpfs and loop ext4 (not root)"
fi

# ---- umask: per recorded process, inherited at fork, set by umask(), applied to what the
# process creates; the umask call's own result (the previous umask) is the process's. The
# processes start with what the trace's first umask call returned (022 here), whatever the
# replayer's own umask is (027 here). Before: one umask, the replayer's, shared by every
# recorded process ("umask(): recorded 63, replayed 18", files 0640).
cat > umask.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"umask","start_ns":1000,"end_ns":1100,"ret":18,"errno":null,"args":{"mask":63}}
{"pid":1,"tid":1,"call":"openat","start_ns":2000,"end_ns":2100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/a","flags":"O_WRONLY|O_CREAT","mode":438}}
{"pid":1,"tid":1,"call":"clone","start_ns":3000,"end_ns":3100,"ret":2,"errno":null,"args":{"flags":17}}
{"pid":2,"tid":2,"call":"openat","start_ns":4000,"end_ns":4100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/b","flags":"O_WRONLY|O_CREAT","mode":438}}
{"pid":2,"tid":2,"call":"umask","start_ns":5000,"end_ns":5100,"ret":63,"errno":null,"args":{"mask":18}}
{"pid":1,"tid":1,"call":"umask","start_ns":6000,"end_ns":6100,"ret":63,"errno":null,"args":{"mask":0}}
{"pid":2,"tid":2,"call":"mkdir","start_ns":7000,"end_ns":7100,"ret":0,"errno":null,"args":{"path":"/w/c","mode":511}}
{"pid":1,"tid":1,"call":"mkdir","start_ns":8000,"end_ns":8100,"ret":0,"errno":null,"args":{"path":"/w/d","mode":511}}
{"pid":1,"tid":1,"call":"mknodat","start_ns":9000,"end_ns":9100,"ret":0,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/p","mode":4534,"dev":0}}
{"pid":2,"tid":2,"call":"umask","start_ns":10000,"end_ns":10100,"ret":18,"errno":null,"args":{"mask":18}}
JSON
for threads in one per-thread; do
  (umask 027 && replay_jsonl umask "root-umask-$threads" --threads "$threads")
  modes=$(cd "root-umask-$threads/w" 2> /dev/null && stat -c %a a b c d p | tr '\n' ' ')
  if zero umask && [[ $modes == "600 600 755 777 666 " ]]; then
    ok "umask per process ($threads): 0 mismatches, modes $modes"
  else
    fail "umask per process ($threads): $(mismatches umask), modes $modes (want 600 600 755 777 666)"
  fi
done

# ---- "/" is the root itself, with or without following (statx of "/" with
# AT_SYMLINK_NOFOLLOW, as `stat /` does, replayed EINVAL: no parent and leaf for it); and an
# empty path names nothing (ENOENT) unless the call was given AT_EMPTY_PATH (stat("") and
# mkdir("") composed with the cwd named it: 0 and EEXIST).
cat > rootpath.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"statx","start_ns":1000,"end_ns":1100,"ret":0,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/","flags":2304,"mask":1}}
{"pid":1,"tid":1,"call":"newfstatat","start_ns":2000,"end_ns":2100,"ret":0,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/","flags":"AT_SYMLINK_NOFOLLOW"}}
{"pid":1,"tid":1,"call":"lstat","start_ns":3000,"end_ns":3100,"ret":0,"errno":null,"args":{"path":"/"}}
{"pid":1,"tid":1,"call":"stat","start_ns":4000,"end_ns":4100,"ret":0,"errno":null,"args":{"path":"/.."}}
{"pid":1,"tid":1,"call":"mkdir","start_ns":5000,"end_ns":5100,"ret":-1,"errno":"EEXIST","args":{"path":"/","mode":493}}
{"pid":1,"tid":1,"call":"readlink","start_ns":6000,"end_ns":6100,"ret":-1,"errno":"EINVAL","args":{"path":"/","buf":null,"bufsiz":64}}
JSON
replay_jsonl rootpath rootpath
if zero rootpath; then ok '"/" replays as the root: stat, lstat, statx NOFOLLOW, mkdir EEXIST (0 mismatches)'
else fail "\"/\": $(mismatches rootpath)"; fi
cat > empty.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"newfstatat","start_ns":1000,"end_ns":1100,"ret":-1,"errno":"ENOENT","args":{"dirfd":"AT_FDCWD","path":"","flags":0}}
{"pid":1,"tid":1,"call":"mkdir","start_ns":2000,"end_ns":2100,"ret":-1,"errno":"ENOENT","args":{"path":"","mode":511}}
{"pid":1,"tid":1,"call":"openat","start_ns":3000,"end_ns":3100,"ret":-1,"errno":"ENOENT","args":{"dirfd":"AT_FDCWD","path":"","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"access","start_ns":4000,"end_ns":4100,"ret":-1,"errno":"ENOENT","args":{"path":"","mode":"F_OK"}}
{"pid":1,"tid":1,"call":"openat","start_ns":5000,"end_ns":5100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w","flags":"O_RDONLY|O_DIRECTORY","mode":0}}
{"pid":1,"tid":1,"call":"newfstatat","start_ns":6000,"end_ns":6100,"ret":0,"errno":null,"args":{"dirfd":3,"path":"","flags":"AT_EMPTY_PATH"}}
{"pid":1,"tid":1,"call":"statx","start_ns":7000,"end_ns":7100,"ret":-1,"errno":"ENOENT","args":{"dirfd":3,"path":"","flags":0,"mask":1}}
{"pid":1,"tid":1,"call":"fchownat","start_ns":8000,"end_ns":8100,"ret":0,"errno":null,"args":{"dirfd":3,"path":"","owner":-1,"group":-1,"flags":"AT_EMPTY_PATH"}}
{"pid":1,"tid":1,"call":"unlinkat","start_ns":9000,"end_ns":9100,"ret":-1,"errno":"ENOENT","args":{"dirfd":3,"path":"","flags":0}}
JSON
replay_jsonl empty rootempty
if zero empty && [[ -d rootempty/w ]]; then ok 'an empty path fails ENOENT, with AT_EMPTY_PATH names the fd (0 mismatches)'
else fail "empty path: $(mismatches empty)"; fi

# ---- Sizes: the largest a file is seen to have at the start: an lseek to SEEK_END says where
# it ended (java's classes.jsa: 952 bytes read of 13.5 MB after a SEEK_END; prepared with 952),
# unless the trace had written to it by then (an append before the SEEK_END says nothing of
# the initial size).
cat > seekend.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"openat","start_ns":1000,"end_ns":1100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/big","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":2000,"end_ns":2100,"ret":100,"errno":null,"args":{"fd":3,"count":100}}
{"pid":1,"tid":1,"call":"lseek","start_ns":3000,"end_ns":3100,"ret":1000000,"errno":null,"args":{"fd":3,"offset":0,"whence":2}}
{"pid":1,"tid":1,"call":"openat","start_ns":6000,"end_ns":6100,"ret":4,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/log","flags":"O_RDWR|O_APPEND","mode":0}}
{"pid":1,"tid":1,"call":"write","start_ns":7000,"end_ns":7100,"ret":50,"errno":null,"args":{"fd":4,"count":50}}
{"pid":1,"tid":1,"call":"lseek","start_ns":8000,"end_ns":8100,"ret":50,"errno":null,"args":{"fd":4,"offset":0,"whence":2}}
JSON
replay_jsonl seekend rootseek
sizes=$(stat -c %s rootseek/w/big rootseek/w/log 2>&1 | tr '\n' ' ')
if zero seekend && [[ $sizes == "1000000 50 " ]]; then
  ok "a SEEK_END's result sizes the file (1,000,000 bytes), not after a write (0 mismatches)"
else
  fail "sizes from SEEK_END: $(mismatches seekend), sizes $sizes"
fi

# ---- Symlinks (trace format 3 on: readlink's result is the target). (A) One seen only in a
# listing (DT_LNK), target never read, then stat'ed and read through: made as the file it led
# to (before: a dangling placeholder, stat and open ENOENT). (B) One traversed as a directory
# first and readlink'd later: a symlink to the directory (before: a directory, readlink
# EINVAL). (C) Bytes read through one whose target readlink gave: its target holds them
# (before: credited to the link, the target made empty, the read 0).
cat > links.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"openat","start_ns":1000,"end_ns":1100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/a","flags":"O_RDONLY|O_DIRECTORY","mode":0}}
{"pid":1,"tid":1,"call":"dirents","start_ns":1200,"end_ns":1200,"ret":2,"errno":null,"args":{"fd":3,"entries":"\nlink\u0000\u0004sub\u0000"}}
{"pid":1,"tid":1,"call":"close","start_ns":1300,"end_ns":1400,"ret":0,"errno":null,"args":{"fd":3}}
{"pid":1,"tid":1,"call":"newfstatat","start_ns":2000,"end_ns":2100,"ret":0,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/a/link","flags":0}}
{"pid":1,"tid":1,"call":"openat","start_ns":3000,"end_ns":3100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/a/link","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":4000,"end_ns":4100,"ret":5,"errno":null,"args":{"fd":3,"count":100}}
{"pid":1,"tid":1,"call":"close","start_ns":4200,"end_ns":4300,"ret":0,"errno":null,"args":{"fd":3}}
{"pid":1,"tid":1,"call":"openat","start_ns":5000,"end_ns":5100,"ret":4,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/b/dirlink/real.txt","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":6000,"end_ns":6100,"ret":7,"errno":null,"args":{"fd":4,"count":100}}
{"pid":1,"tid":1,"call":"readlink","start_ns":7000,"end_ns":7100,"ret":3,"errno":null,"args":{"path":"/w/b/dirlink","buf":"sub","bufsiz":64}}
{"pid":1,"tid":1,"call":"openat","start_ns":8000,"end_ns":8100,"ret":5,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/c/link","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":9000,"end_ns":9100,"ret":9,"errno":null,"args":{"fd":5,"count":100}}
{"pid":1,"tid":1,"call":"readlink","start_ns":10000,"end_ns":10100,"ret":12,"errno":null,"args":{"path":"/w/c/link","buf":"sub/real.txt","bufsiz":64}}
JSON
replay_jsonl links rootlinks
got=$(cd rootlinks/w 2> /dev/null && echo "$(stat -c %F:%s a/link) $(readlink b/dirlink) $(stat -c %s b/sub/real.txt) $(readlink c/link) $(stat -c %s c/sub/real.txt)")
if zero links && [[ $got == "regular file:5 sub 7 sub/real.txt 9" ]]; then
  ok "symlinks: listed-only made as the file followed, traversed then readlink'd, read through (0 mismatches)"
else
  fail "symlinks: $(mismatches links); got '$got', want 'regular file:5 sub 7 sub/real.txt 9'"
fi

# A hostile trace's link targets: absolute to a file outside the root, and ".."s above it,
# read through, written through and traversed. Prepare makes the links as the trace says and
# what they lead to inside the root; nothing outside the root changes.
mkdir -p outside && echo canary > outside/canary && touch -d '2001-01-01' outside/canary outside
t1=$work/outside/canary t2=../../../../../../../..$work/outside
cat > evil.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"openat","start_ns":1000,"end_ns":1100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/evil","flags":"O_RDWR|O_TRUNC","mode":0}}
{"pid":1,"tid":1,"call":"write","start_ns":2000,"end_ns":2100,"ret":5,"errno":null,"args":{"fd":3,"count":5}}
{"pid":1,"tid":1,"call":"readlink","start_ns":3000,"end_ns":3100,"ret":${#t1},"errno":null,"args":{"path":"/w/evil","buf":"$t1","bufsiz":4096}}
{"pid":1,"tid":1,"call":"openat","start_ns":4000,"end_ns":4100,"ret":4,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/up/canary","flags":"O_RDWR","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":5000,"end_ns":5100,"ret":5,"errno":null,"args":{"fd":4,"count":100}}
{"pid":1,"tid":1,"call":"write","start_ns":6000,"end_ns":6100,"ret":7,"errno":null,"args":{"fd":4,"count":7}}
{"pid":1,"tid":1,"call":"readlink","start_ns":7000,"end_ns":7100,"ret":${#t2},"errno":null,"args":{"path":"/w/up","buf":"$t2","bufsiz":4096}}
{"pid":1,"tid":1,"call":"unlink","start_ns":8000,"end_ns":8100,"ret":0,"errno":null,"args":{"path":"/w/up/canary"}}
{"pid":1,"tid":1,"call":"openat","start_ns":9000,"end_ns":9100,"ret":5,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/up/new","flags":"O_WRONLY|O_CREAT","mode":420}}
JSON
before=$(stat -c "%s %Y %i" outside/canary outside; ls -l outside; cat outside/canary)
replay_jsonl evil rootevil
after=$(stat -c "%s %Y %i" outside/canary outside; ls -l outside; cat outside/canary)
if [[ $before == "$after" && $(readlink rootevil/w/evil) == "$t1" && $(readlink rootevil/w/up) == "$t2" &&
      -f rootevil$work/outside/new && ! -e rootevil$work/outside/canary ]]; then
  ok "hostile link targets (absolute, ..): made inside the root, nothing outside changed ($(mismatches evil) mismatches)"
else
  fail "hostile link targets: evil -> $(readlink rootevil/w/evil), $(mismatches evil); outside '$before' -> '$after'; $(find rootevil | head -n 8 | tr '\n' ' ')"
fi

# ---- Renames of names that existed before the run: what is used under the new name existed
# under the old one (before: a directory renamed and then used was prepared under its new name
# too, so the rename, and a mkdir of the new parent, failed EEXIST; a file renamed and then read
# was prepared empty under its old name, and the read gave 0).
cat > rename.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"rename","start_ns":1000,"end_ns":1100,"ret":0,"errno":null,"args":{"oldpath":"/w/c2","newpath":"/w/c3"}}
{"pid":1,"tid":1,"call":"openat","start_ns":2000,"end_ns":2100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/c3/x/f","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":3000,"end_ns":3100,"ret":2,"errno":null,"args":{"fd":3,"count":100}}
{"pid":1,"tid":1,"call":"mkdir","start_ns":4000,"end_ns":4100,"ret":0,"errno":null,"args":{"path":"/w/m","mode":493}}
{"pid":1,"tid":1,"call":"renameat2","start_ns":5000,"end_ns":5100,"ret":0,"errno":null,"args":{"olddirfd":"AT_FDCWD","oldpath":"d2","newdirfd":"AT_FDCWD","newpath":"m/d3","flags":0}}
{"pid":1,"tid":1,"call":"openat","start_ns":6000,"end_ns":6100,"ret":4,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"m/d3/x","flags":"O_RDONLY|O_DIRECTORY","mode":0}}
{"pid":1,"tid":1,"call":"rename","start_ns":7000,"end_ns":7100,"ret":0,"errno":null,"args":{"oldpath":"a","newpath":"b"}}
{"pid":1,"tid":1,"call":"openat","start_ns":8000,"end_ns":8100,"ret":5,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"b","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":9000,"end_ns":9100,"ret":2,"errno":null,"args":{"fd":5,"count":100}}
{"pid":1,"tid":1,"call":"openat","start_ns":10000,"end_ns":10100,"ret":6,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"a","flags":"O_WRONLY|O_CREAT|O_EXCL","mode":420}}
JSON
replay_jsonl rename rootrename
got=$(cd rootrename/w 2> /dev/null && find . | sort | tr '\n' ' ')
if zero rename && [[ $got == ". ./a ./b ./c3 ./c3/x ./c3/x/f ./m ./m/d3 ./m/d3/x " ]]; then
  ok "renames of names that existed before: prepared under the old names (0 mismatches)"
else
  fail "renames: $(mismatches rename); tree $got"
fi

# A lookup under a directory another process renamed just before (sh: mv c2 m/c3; ls m/c3/x)
# waits for that rename in a per-thread replay, however long the renaming thread is busy
# before it (here with a 64 MiB write and an fsync): lookups go after renames of the
# directories above them (before: the lookup ran first and failed ENOENT).
cat > renamerace.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"clone","start_ns":1000,"end_ns":1100,"ret":2,"errno":null,"args":{"flags":17}}
{"pid":1,"tid":1,"call":"openat","start_ns":2000,"end_ns":2100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/big","flags":"O_WRONLY|O_CREAT|O_EXCL","mode":420}}
{"pid":1,"tid":1,"call":"write","start_ns":3000,"end_ns":3100,"ret":67108864,"errno":null,"args":{"fd":3,"count":67108864}}
{"pid":1,"tid":1,"call":"fsync","start_ns":4000,"end_ns":4100,"ret":0,"errno":null,"args":{"fd":3}}
{"pid":1,"tid":1,"call":"rename","start_ns":5000,"end_ns":5100,"ret":0,"errno":null,"args":{"oldpath":"/w/c2","newpath":"/w/c3"}}
{"pid":2,"tid":2,"call":"newfstatat","start_ns":6000,"end_ns":6100,"ret":0,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/c3/x","flags":0}}
{"pid":2,"tid":2,"call":"newfstatat","start_ns":7000,"end_ns":7100,"ret":-1,"errno":"ENOENT","args":{"dirfd":"AT_FDCWD","path":"/w/c2/x","flags":0}}
JSON
replay_jsonl renamerace rootrenamerace --threads per-thread
if zero renamerace; then ok "a lookup under a directory renamed by another thread waits for the rename (0 mismatches)"
else fail "lookup after another thread's rename: $(mismatches renamerace)"; fi
rm -rf rootrenamerace

# ---- Fds the trace did not open (inherited stdin and stdout). A shell's `echo hi > a` saves
# its stdout (F_DUPFD to 11), points fd 1 at a and restores it with dup2(11, 1): fd 1 is the
# inherited stdout again, not a (before: still a, and cat's copy to it was replayed into a). A
# copy between a file and such an fd moves the file's side as recorded: cat's position
# advances (before: it stayed, and the next copy, recorded 0 at the end, gave 3), and a file
# copied into from stdin gets the bytes.
cat > inherited.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"openat","start_ns":1000,"end_ns":1100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/a","flags":"O_WRONLY|O_CREAT|O_TRUNC","mode":438}}
{"pid":1,"tid":1,"call":"fcntl","start_ns":2000,"end_ns":2100,"ret":11,"errno":null,"args":{"fd":1,"cmd":0,"arg":10}}
{"pid":1,"tid":1,"call":"close","start_ns":3000,"end_ns":3100,"ret":0,"errno":null,"args":{"fd":1}}
{"pid":1,"tid":1,"call":"dup2","start_ns":4000,"end_ns":4100,"ret":1,"errno":null,"args":{"oldfd":3,"newfd":1}}
{"pid":1,"tid":1,"call":"close","start_ns":5000,"end_ns":5100,"ret":0,"errno":null,"args":{"fd":3}}
{"pid":1,"tid":1,"call":"write","start_ns":6000,"end_ns":6100,"ret":3,"errno":null,"args":{"fd":1,"count":3}}
{"pid":1,"tid":1,"call":"dup2","start_ns":7000,"end_ns":7100,"ret":1,"errno":null,"args":{"oldfd":11,"newfd":1}}
{"pid":1,"tid":1,"call":"openat","start_ns":8000,"end_ns":8100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/a","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"copy_file_range","start_ns":9000,"end_ns":9100,"ret":3,"errno":null,"args":{"fd_in":3,"off_in":"NULL","fd_out":1,"off_out":"NULL","len":9223372035781033984,"flags":0}}
{"pid":1,"tid":1,"call":"copy_file_range","start_ns":10000,"end_ns":10100,"ret":0,"errno":null,"args":{"fd_in":3,"off_in":"NULL","fd_out":1,"off_out":"NULL","len":9223372035781033984,"flags":0}}
{"pid":1,"tid":1,"call":"read","start_ns":11000,"end_ns":11100,"ret":0,"errno":null,"args":{"fd":3,"count":100}}
{"pid":1,"tid":1,"call":"openat","start_ns":12000,"end_ns":12100,"ret":4,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/out","flags":"O_WRONLY|O_CREAT","mode":420}}
{"pid":1,"tid":1,"call":"copy_file_range","start_ns":13000,"end_ns":13100,"ret":7,"errno":null,"args":{"fd_in":0,"off_in":"NULL","fd_out":4,"off_out":"NULL","len":100,"flags":0}}
{"pid":1,"tid":1,"call":"lseek","start_ns":14000,"end_ns":14100,"ret":7,"errno":null,"args":{"fd":4,"offset":0,"whence":1}}
JSON
replay_jsonl inherited rootinherited
sizes=$(stat -c %s rootinherited/w/a rootinherited/w/out 2>&1 | tr '\n' ' ')
if zero inherited && [[ $sizes == "3 7 " ]]; then
  ok "inherited fds: dup2 of one restores it, copies move the file's side (0 mismatches, sizes $sizes)"
else
  fail "inherited fds: $(mismatches inherited), sizes $sizes (want 3 7)"
fi

# ---- Format 5's calls. bind to an AF_UNIX path makes a socket node, which stat, chmod and
# unlink then use, and a second bind to it fails EADDRINUSE; made inside the root for a
# hostile path too ("../.."s above the root, an absolute path to a directory outside it), and
# under a root whose path is longer than sun_path's 108 bytes. A bind without a path (NULL:
# abstract, AF_INET) is not a file. inotify_add_watch looks its path up (found, ENOENT);
# getcwd has nothing to replay. Before format 5 none of these calls could be in a trace.
header5=${header/\"version\":4/\"version\":5}
up=../../../../../../../../iorr-bind-escape-$$
cat > sock.jsonl << JSON
$header5
{"pid":1,"tid":1,"call":"socket","start_ns":1000,"end_ns":1100,"ret":3,"errno":null,"args":{"domain":"AF_UNIX","type":"SOCK_STREAM","protocol":0}}
{"pid":1,"tid":1,"call":"bind","start_ns":2000,"end_ns":2100,"ret":0,"errno":null,"args":{"sockfd":3,"addr":"s","addrlen":4}}
{"pid":1,"tid":1,"call":"newfstatat","start_ns":3000,"end_ns":3100,"ret":0,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/s","flags":0}}
{"pid":1,"tid":1,"call":"chmod","start_ns":4000,"end_ns":4100,"ret":0,"errno":null,"args":{"path":"s","mode":384}}
{"pid":1,"tid":1,"call":"bind","start_ns":5000,"end_ns":5100,"ret":-1,"errno":"EADDRINUSE","args":{"sockfd":4,"addr":"/w/s","addrlen":7}}
{"pid":1,"tid":1,"call":"unlink","start_ns":6000,"end_ns":6100,"ret":0,"errno":null,"args":{"path":"s"}}
{"pid":1,"tid":1,"call":"stat","start_ns":7000,"end_ns":7100,"ret":-1,"errno":"ENOENT","args":{"path":"s"}}
{"pid":1,"tid":1,"call":"bind","start_ns":8000,"end_ns":8100,"ret":0,"errno":null,"args":{"sockfd":5,"addr":"$up","addrlen":110}}
{"pid":1,"tid":1,"call":"stat","start_ns":8200,"end_ns":8300,"ret":0,"errno":null,"args":{"path":"$up"}}
{"pid":1,"tid":1,"call":"bind","start_ns":9000,"end_ns":9100,"ret":0,"errno":null,"args":{"sockfd":6,"addr":"$work/outside/sock","addrlen":110}}
{"pid":1,"tid":1,"call":"lstat","start_ns":9200,"end_ns":9300,"ret":0,"errno":null,"args":{"path":"$work/outside/sock"}}
{"pid":1,"tid":1,"call":"bind","start_ns":10000,"end_ns":10100,"ret":0,"errno":null,"args":{"sockfd":7,"addr":null,"addrlen":16}}
{"pid":1,"tid":1,"call":"inotify_init1","start_ns":11000,"end_ns":11100,"ret":8,"errno":null,"args":{"flags":"IN_CLOEXEC"}}
{"pid":1,"tid":1,"call":"inotify_add_watch","start_ns":12000,"end_ns":12100,"ret":1,"errno":null,"args":{"fd":8,"pathname":"/w","mask":"IN_MODIFY|IN_CREATE"}}
{"pid":1,"tid":1,"call":"inotify_add_watch","start_ns":13000,"end_ns":13100,"ret":-1,"errno":"ENOENT","args":{"fd":8,"pathname":"none","mask":"IN_ATTRIB"}}
{"pid":1,"tid":1,"call":"getcwd","start_ns":14000,"end_ns":14100,"ret":3,"errno":null,"args":{"size":4096}}
JSON
sockroot=rootsock-$(printf 'l%.0s' $(seq 1 120))
before=$(stat -c "%s %Y %i" outside; ls -l outside)
replay_jsonl sock "$sockroot"
after=$(stat -c "%s %Y %i" outside; ls -l outside)
leaf=iorr-bind-escape-$$
if zero sock && [[ $before == "$after" && ! -e s && ! -e /$leaf && ! -e ../$leaf &&
      -S $sockroot/$leaf && -S $sockroot$work/outside/sock && ! -e $sockroot/w/s &&
      $(stat -c %a "$sockroot/$leaf") == 755 ]] &&
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["replayed"] < 11)' sock.json; then
  ok "bind to a path: socket nodes made inside a root longer than sun_path, hostile paths kept inside, stat/chmod/unlink/EADDRINUSE as recorded; inotify_add_watch found and ENOENT (0 mismatches)"
else
  fail "bind and inotify: $(mismatches sock); outside '$before' -> '$after'; $(find "$sockroot" -maxdepth 3 | sed "s|$sockroot|ROOT|" | head -n 8 | tr '\n' ' ') $(head -c 600 sock.json)"
fi

# ---- A FIFO written by one process and read by another (sh: mkfifo ff; (echo x > ff &); cat
# ff). The writer's open comes first here (the reader's open waited for it in the recording),
# and the reader's read, which waited for the write, starts before it. The replay holds the
# FIFO open itself so that the writer's non-blocking open does not fail ENXIO, gives the
# reader the recorded count and takes as many bytes of the later write out of the FIFO, so
# that the reader's last read finds the end of file (before: open ENXIO, read 0).
cat > fifo.jsonl << JSON
$header
{"pid":1,"tid":1,"call":"mknodat","start_ns":1000,"end_ns":1100,"ret":0,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/ff","mode":4516,"dev":0}}
{"pid":1,"tid":1,"call":"clone","start_ns":2000,"end_ns":2100,"ret":2,"errno":null,"args":{"flags":17}}
{"pid":2,"tid":2,"call":"openat","start_ns":3000,"end_ns":7000,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"/w/ff","flags":"O_WRONLY|O_CREAT|O_TRUNC","mode":438}}
{"pid":1,"tid":1,"call":"openat","start_ns":6900,"end_ns":7000,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"ff","flags":"O_RDONLY","mode":0}}
{"pid":1,"tid":1,"call":"read","start_ns":7100,"end_ns":8200,"ret":9,"errno":null,"args":{"fd":3,"count":131072}}
{"pid":2,"tid":2,"call":"write","start_ns":8000,"end_ns":8100,"ret":9,"errno":null,"args":{"fd":3,"count":9}}
{"pid":2,"tid":2,"call":"close","start_ns":8300,"end_ns":8400,"ret":0,"errno":null,"args":{"fd":3}}
{"pid":1,"tid":1,"call":"read","start_ns":9000,"end_ns":9100,"ret":0,"errno":null,"args":{"fd":3,"count":131072}}
JSON
for threads in one per-thread; do
  replay_jsonl fifo "root-fifo-$threads" --threads "$threads"
  if zero fifo && [[ -p root-fifo-$threads/w/ff ]]; then ok "FIFO between two processes ($threads): 0 mismatches"
  else fail "FIFO between two processes ($threads): $(mismatches fifo)"; fi
done

# An fd number reused while another thread's open of it was under way (stop 39's sweep): thread
# 101's openat returns 3 at its end, after thread 102 opened, wrote and closed its own 3. Issued
# first, 101's open had its number taken over and dropped by 102's: 101's write and lseek were
# skipped as "fd not opened by the trace" (a.dat empty, 0 mismatches), or went to the other file.
cat > fdreuse.jsonl << JSON
$header
{"pid":100,"tid":101,"call":"openat","start_ns":1000,"end_ns":9000,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"a.dat","flags":"O_WRONLY|O_CREAT|O_TRUNC","mode":420}}
{"pid":100,"tid":102,"call":"openat","start_ns":2000,"end_ns":2100,"ret":3,"errno":null,"args":{"dirfd":"AT_FDCWD","path":"b.dat","flags":"O_WRONLY|O_CREAT|O_TRUNC","mode":420}}
{"pid":100,"tid":102,"call":"write","start_ns":2200,"end_ns":2300,"ret":10,"errno":null,"args":{"fd":3,"count":10}}
{"pid":100,"tid":102,"call":"close","start_ns":2400,"end_ns":2500,"ret":0,"errno":null,"args":{"fd":3}}
{"pid":100,"tid":101,"call":"write","start_ns":9500,"end_ns":9600,"ret":100,"errno":null,"args":{"fd":3,"count":100}}
{"pid":100,"tid":101,"call":"lseek","start_ns":9700,"end_ns":9800,"ret":100,"errno":null,"args":{"fd":3,"offset":0,"whence":"SEEK_CUR"}}
{"pid":100,"tid":101,"call":"close","start_ns":9900,"end_ns":9950,"ret":0,"errno":null,"args":{"fd":3}}
JSON
for threads in one per-thread; do
  replay_jsonl fdreuse "root-fdreuse-$threads" --threads "$threads"
  sizes="$(stat -c %s "root-fdreuse-$threads/w/a.dat" "root-fdreuse-$threads/w/b.dat" 2> /dev/null | tr '\n' ' ')"
  replayed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replayed"])' fdreuse.json 2> /dev/null)
  if zero fdreuse && [[ $sizes == "100 10 " && $replayed == 7 ]]; then
    ok "an fd number reused during another thread's open ($threads): sizes 100 and 10, 7 of 7 replayed"
  else
    fail "an fd number reused during another thread's open ($threads): sizes '$sizes', $replayed replayed, $(mismatches fdreuse)"
  fi
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
