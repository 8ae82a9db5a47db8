#!/usr/bin/env bash
# Prints the path of the strace log of `tar xf` of the whole Linux tarball into tmpfs
# (strace -f -ttt -T), zstd-compressed, building and caching it on first use.
# --subset N: the log of a tarball of the first N entries instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tools/shared-dir.sh"
dir=${IORR_WORKLOADS:-/var/tmp/iorr-workloads}
mkdir -p "$dir"
if [[ ${1:-} == --subset ]]; then
  tarball=$(bash "$shared/workloads/linux-tar.sh" --subset "$2")
  log=$dir/linux-$2-tar-xf.strace.zst
else
  tarball=$(bash "$shared/workloads/linux-tar.sh")
  log=$dir/linux-tar-xf.strace.zst
fi
if [[ ! -s $log ]]; then
  command -v strace >/dev/null || { echo "strace-log: strace is not installed" >&2; exit 2; }
  work=$(mktemp -d /dev/shm/iorr-strace.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/x"
  (cd "$work/x" && strace -f -ttt -T -o "$work/log" tar xf "$tarball")
  zstd -q -T0 -10 "$work/log" -o "$log.part"
  mv "$log.part" "$log"
fi
echo "$log"
