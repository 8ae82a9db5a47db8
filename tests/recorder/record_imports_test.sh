#!/usr/bin/env bash
# Issue 3: "check with nm -D on tar, cp, rm, sqlite3 and python3 that nothing they import is
# missed". Every function such a program, or a library it loads (sqlite3's file calls are
# libsqlite3's, cp's xattr calls libacl's), imports that is a call of the table
# (traces/syscalls.def; glibc's decorations taken off: a leading __, a trailing 64, _2 or _chk)
# or a known thin wrapper of one (below) must be one of the library's wrappers, so that it is
# recorded even through the wrappers alone (IORR_DISPATCH=0, or where dispatch is refused).
# What glibc does inside other functions (stdio, fts, realpath) is dispatch's and the patched
# sites' to catch, and the strace comparisons check it. Prints per program how many of its
# imports are file-system calls and that each is wrapped. git too (since format 5: it imports
# getcwd and bind). Not make: Debian 12's make 4.3 imports glibc's old __xstat, __lxstat and
# __fxstat and remove, which the library does not wrap (dispatch and the patched sites record
# them; the strace comparison's make case checks that).
# Usage: record_imports_test.sh LIBRARY SYSCALLS_DEF
set -uo pipefail
lib=$1
def=$2
command -v nm > /dev/null || { echo "skip: no nm (binutils)"; exit 77; }
[[ -r $lib && -r $def ]] || { echo "FAIL: no library at $lib or no table at $def"; exit 1; }
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
xstat newfstatat
fxstat newfstatat
lxstat newfstatat
fxstatat newfstatat
xmknod mknodat
xmknodat mknodat
system clone
popen clone
lockf fcntl
EOF
# Imports left to dispatch and the patched sites, and why.
cat > "$work/left" << 'EOF'
exit the process's end: its exit_group is recorded by dispatch, or by the _exit wrapper
lockf fcntl on a struct flock of glibc's own: recorded by dispatch
EOF

failed=0
checked=0
for prog in tar cp rm sqlite3 python3 git; do
  path=/usr/bin/$prog
  [[ -x $path ]] || path=$(command -v "$prog" 2> /dev/null)
  if [[ -z $path || ! -x $path ]]; then
    echo "skip: $prog is not installed"
    continue
  fi
  path=$(readlink -f "$path")
  # The program and the libraries it loads but glibc's own (libc, libm, the loader): every
  # undefined dynamic symbol, its version taken off.
  objects=("$path")
  while read -r so; do
    case ${so##*/} in libc.so* | libm.so* | ld-linux*) continue ;; esac
    objects+=("$so")
  done < <(ldd "$path" 2> /dev/null | awk '/=> \// {print $3}')
  # python3's extension modules, which it loads as it imports them (os, subprocess, ...).
  if [[ $prog == python3 ]]; then
    for so in /usr/lib/python3*/lib-dynload/*.so; do [[ -e $so ]] && objects+=("$so"); done
  fi
  : > "$work/imports"
  for o in "${objects[@]}"; do
    nm -D --undefined-only "$o" 2> /dev/null | awk '{print $2}' | sed 's/@.*//' >> "$work/imports"
  done
  sort -u -o "$work/imports" "$work/imports"
  if [[ ! -s $work/imports ]]; then
    echo "FAIL: $prog ($path): nm -D lists no imports"
    failed=$((failed + 1))
    continue
  fi
  fs=0
  missing=()
  while read -r sym; do
    base=${sym#__}
    base=${base/64v2/v2}  # preadv64v2
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
  if [[ $fs -eq 0 ]]; then
    echo "FAIL: $prog ($path): no file-system call among its $(wc -l < "$work/imports") imports (nm -D output not understood?)"
    failed=$((failed + 1))
  elif [[ ${#missing[@]} -eq 0 ]]; then
    echo "ok: $prog ($path and $((${#objects[@]} - 1)) libraries): $fs of its $(wc -l < "$work/imports") imports are file-system calls of the table, all wrapped"
  else
    echo "FAIL: $prog ($path): not wrapped: ${missing[*]}"
    failed=$((failed + 1))
  fi
done
[[ $checked -gt 0 ]] || { echo "skip: none of the programs is installed"; exit 77; }
[[ $failed -eq 0 ]]
