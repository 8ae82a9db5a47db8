#!/usr/bin/env bash
# The main job on a real workload: set-up, build, then `tar xf` of the Linux source tarball
# (a 5,000-entry subset; IORR_DEMO_FULL=1 for all 83,731 entries) followed by `sync`, into
# tmpfs: recorded with `iorr record`, summarised and shown, replayed onto an empty directory
# and (as root, with loop devices and tracefs) onto a loop-mounted ext4 with the block requests
# the kernel issued captured, and modelled on ext4 and xfs over two disks with the write cache
# and barriers on and off. A second recording under `strace -f` shows how many of the calls
# strace sees the recorder caught.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tools/setup.sh
bash tools/build.sh >/dev/null
iorr=$root/build/bin/iorr
source "$root/tools/shared-dir.sh"
# The loop-mounted ext4's size: the whole tree takes about 1.5 GB there (1 GB filled up and the
# replay's later writes failed with ENOSPC: 41,096 mismatches), and the journal mkfs gives it
# (mke2fs: 32 MiB for 1 GiB, 64 MiB for 3 GiB), which the model is told.
if [[ ${IORR_DEMO_FULL:-0} == 1 ]]; then
  tarball=$(bash "$shared/workloads/linux-tar.sh")
  ext4_size=3G ext4_journal_mb=64
else
  tarball=$(bash "$shared/workloads/linux-tar.sh" --subset 5000)
  ext4_size=1G ext4_journal_mb=32
fi
work=$(mktemp -d /dev/shm/iorr-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
trace=${IORR_DEMO_TRACE:-/var/tmp/iorr-demo.iorr}

echo "== iorr record -o $trace -- sh -c 'tar xf $(basename "$tarball") && sync'"
mkdir "$work/x"
(cd "$work/x" && "$iorr" record -o "$trace" -- sh -c "tar xf '$tarball' && sync")
echo
echo "== iorr stats $trace"
"$iorr" stats "$trace"
echo
echo "== iorr dump $trace (tar's first file)"
"$iorr" dump "$trace" | grep -v '^#' | grep -E 'openat\(AT_FDCWD, "linux' -A 11 -m 1 || true
echo
echo "== iorr replay $trace --root <empty tmpfs dir> --only <the recorded cwd>"
mkdir "$work/root"
"$iorr" replay "$trace" --root "$work/root" --only "$work/x" || true
if cmp -s <(cd "$work/x" && find . -type f -printf '%s %p\n' | sort) \
          <(cd "$work/root$work/x" && find . -type f -printf '%s %p\n' | sort); then
  echo "replayed tree: same names and sizes as the real extraction"
fi
echo
echo "== iorr replay $trace --root <loop-mounted ext4> --block-trace bt.iorr: what the kernel sent"
if out=$(IORR_LOOPFS_DIR=/var/tmp/iorr-demo-loopfs bash tools/loopfs.sh mount ext4 "$work/ext4" --size "$ext4_size" --fill 2>&1); then
  "$iorr" replay "$trace" --root "$work/ext4" --only "$work/x" --block-trace "$work/bt.iorr" 2>&1 |
    grep -E '^(replay|block trace)' || true
  IORR_LOOPFS_DIR=/var/tmp/iorr-demo-loopfs bash tools/loopfs.sh umount "$work/ext4"
  "$iorr" model "$work/bt.iorr" --disk hdd-7200 --cache on --barrier on 2> /dev/null | head -n 1
  echo "the ext4 model's own count for the same trace (flushes, FUA as asked, bytes by kind):"
  "$iorr" model "$trace" --fs ext4 --disk hdd-7200 --cache on --barrier on --only "$work/x" \
    --journal-mb "$ext4_journal_mb" --json 2> /dev/null | python3 -c 'import json, sys
r = json.load(sys.stdin)["rows"][0]
print("model:    %d flushes, %d FUA writes, written data %.1f MB, journal %.1f MB, metadata %.1f MB" % (
    r["asked_flushes"], r["asked_fua"], *(r["bytes_written"][k] / 1e6 for k in ("data", "journal", "metadata"))))'
else
  echo "skipped: ${out##*$'\n'}"
fi
echo
echo "== iorr model $trace --fs ext4,xfs: what-if on a 2008 7200 rpm disk and a SATA SSD"
for disk in hdd-7200 ssd-sata; do "$iorr" model "$trace" --fs ext4,xfs --disk "$disk" 2> /dev/null; done
echo
echo "== the same tar xf recorded under strace -f: how much of what strace saw the trace has"
echo "   (the dynamic loader's calls before the library starts included: the audit module)"
mkdir "$work/y"
(cd "$work/y" && strace -f -ttt -T -o "$work/strace.log" "$iorr" record -q -o "$work/s.iorr" -- tar xf "$tarball")
"$iorr" import strace -q "$work/strace.log" -o "$work/strace.iorr"
"$root/build/bin/trace_coverage" "$work/strace.iorr" "$work/s.iorr" || true
