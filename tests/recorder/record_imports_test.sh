#!/usr/bin/env bash
# Issue 3: "check with nm -D on tar, cp, rm, sqlite3 and python3 that nothing they import is
# missed". Every function such a program imports from glibc that is a call of the table
# (traces/syscalls.def; glibc's decorations taken off: a leading __, a trailing 64, _2 or _chk)
# or a known thin wrapper of one (below) must be one of the library's wrappers, so that it is
# recorded even through the wrappers alone (IORR_DISPATCH=0, or where dispatch is refused).
# What glibc does inside other functions (stdio, fts, realpath) is dispatch's and the patched
# sites' to catch, and the strace comparisons check it. Prints per program how many of its
# imports are file-system calls and that each is wrapped.
# Usage: record_imports_test.sh LIBRARY SYSCALLS_DEF
set -uo pipefail
lib=$1
def=$2
command -v nm > /dev/null || { echo "skip: no nm (binutils)"; exit 77; }
[[ -r $lib && -r $def ]] || { echo "skip: no library at $lib"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-imports.XXXXXX")
trap 'rm -rf "$work"' EXIT

nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$work/wrapped"
grep -o '^IORR_CALL([0-9]*, [a-z0-9_]*' "$def" | awk '{print $2}' | sort -u > "$work/table"
[[ -s $work/wrapped && -s $work/table ]] || { echo "FAIL: cannot read $lib or $def"; exit 1; }

# glibc functions that are one call of the table under another name.
cat > "$work/thin" << 'EOF'
stat newfstatat
fstat newfstatat
lstat newfstatat
fstatat newfstatat
pread pread64
pwrite pwrite64
posix_fadvise fadvise64
posix_fallocate fallocate
statvfs statfs
fstatvfs fstatfs
mkfifo mknodat
mkfifoat mknodat
mknod mknodat
utime utimensat
utimes utimensat
lutimes utimensat
futimes utimensat
futimens utimensat
futimesat utimensat
opendir openat
fdopendir fcntl
closedir close
readdir getdents64
getdirentries getdents64
pipe pipe2
execl execve
execle execve
execlp execve
execv execve
execvp execve
execvpe execve
fexecve execveat
fork clone
posix_spawn clone
posix_spawnp clone
closefrom close_range
remove unlink
system clone
popen clone
lockf fcntl
EOF
# Imports left to dispatch and the patched sites, and why.
cat > "$work/left" << 'EOF'
exit the process's end: its exit_group is recorded by dispatch, or by the _exit wrapper
system a spawn from inside libc: dispatch sees its clone; the program run is recorded through its environment
popen a spawn from inside libc: dispatch sees its clone; the program run is recorded through its environment
lockf fcntl on a struct flock of glibc's own: recorded by dispatch
EOF

failed=0
checked=0
for prog in tar cp rm sqlite3 python3; do
  path=/usr/bin/$prog
  [[ -x $path ]] || path=$(command -v "$prog" 2> /dev/null)
  if [[ -z $path || ! -x $path ]]; then
    echo "skip: $prog is not installed"
    continue
  fi
  path=$(readlink -f "$path")
  if ! nm -D --undefined-only "$path" > "$work/nm" 2> /dev/null; then
    echo "skip: nm cannot read $path"
    continue
  fi
  grep '@GLIBC' "$work/nm" | awk '{print $2}' | sed 's/@.*//' | sort -u > "$work/imports"
  fs=0
  missing=()
  while read -r sym; do
    base=${sym#__}
    for suffix in _chk _2 64; do base=${base%"$suffix"}; done
    call=$(awk -v b="$base" '$1 == b {print $2}' "$work/thin")
    [[ -z $call ]] && grep -qx -- "$base" "$work/table" && call=$base
    [[ -z $call ]] && continue
    if awk -v b="$base" '$1 == b {found = 1} END {exit !found}' "$work/left"; then
      echo "  $prog: $sym left to dispatch: $(awk -v b="$base" '$1 == b {$1 = ""; print substr($0, 2)}' "$work/left")"
      continue
    fi
    fs=$((fs + 1))
    grep -qx -- "$sym" "$work/wrapped" || missing+=("$sym ($call)")
  done < "$work/imports"
  checked=$((checked + 1))
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "ok: $prog ($path): $fs of its $(wc -l < "$work/imports") glibc imports are file-system calls of the table, all wrapped"
  else
    echo "FAIL: $prog ($path): not wrapped: ${missing[*]}"
    failed=$((failed + 1))
  fi
done
[[ $checked -gt 0 ]] || { echo "skip: none of the programs is installed"; exit 77; }
[[ $failed -eq 0 ]]
