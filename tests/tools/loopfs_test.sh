#!/usr/bin/env bash
# tools/loopfs.sh for real: loop-mounted ext4 (barrier=1, barrier=0, data=journal), xfs
# (write back and write through), btrfs, ext2 and ext3. For each: mount, write and fsync a
# file, the mount options in findmnt, queue/write_cache and the queue settings, `list`, then
# umount leaves no mount, loop device, image, state or directory behind, and a second umount
# is harmless. Then: failures (bad mount option, mkfs refusing, SIGTERM mid-mkfs) leave
# nothing behind; bad input exits 2 with one line; not root exits 77. Last, tracefs shows
# that an fsync on xfs sends PREFLUSH/FUA to the loop device with `write back` and none with
# `write through` (and likewise ext4 barrier=1 vs barrier=0), at block_rq_issue level.
#
# Usage: loopfs_test.sh ROOT_OF_REPO. Needs root and loop devices (exit 77 otherwise).
# Pieces whose tools are missing (mkfs.xfs: xfsprogs, mkfs.btrfs: btrfs-progs, tracefs) are
# skipped with the reason; the exit status is then 77 unless something failed. Installs
# nothing. Uses its own IORR_LOOPFS_DIR, so it never touches other users' loopfs mounts.
set -u
ROOT=${1:?usage: $0 ROOT_OF_REPO}
LOOPFS=$(realpath -- "$ROOT")/tools/loopfs.sh
[ -f "$LOOPFS" ] || { echo "FAIL: $LOOPFS does not exist"; echo "0 passed, 1 failed"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root (loop devices, mkfs, mount, tracefs)"; exit 77; fi
for t in losetup findmnt mountpoint; do
  command -v "$t" >/dev/null || { echo "SKIP: $t not found (util-linux)"; exit 77; }
done
if ! losetup -f >/dev/null 2>&1; then echo "SKIP: no free loop device ($(losetup -f 2>&1 | head -n1))"; exit 77; fi

passed=0 failed=0 skipped=()
ok() { echo "ok - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
skip() { echo "SKIP - $*"; skipped+=("$*"); }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
  local d=$1
  shift
  if "$@"; then ok "$d"; else fail "$d"; fi
}

export IORR_LOOPFS_DIR
IORR_LOOPFS_DIR=$(mktemp -d /var/tmp/iorr-loopfs-test.XXXXXX) || exit 1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/iorr-loopfs-test.XXXXXX") || exit 1
chmod 755 "$WORK"
TRACEFS='' INST='' TRACEFS_MOUNTED=0

tracing_off() {
  if [ -n "$INST" ] && [ -d "$INST" ]; then
    local e
    for e in block_bio_queue block_rq_issue; do
      echo 0 >"$INST/events/block/$e/enable" 2>/dev/null
      echo 0 >"$INST/events/block/$e/filter" 2>/dev/null
    done
    rmdir "$INST" 2>/dev/null
  fi
  INST=''
  if [ "$TRACEFS_MOUNTED" = 1 ]; then umount "$TRACEFS" 2>/dev/null; TRACEFS_MOUNTED=0; fi
}

cleanup() {
  tracing_off
  local st d
  for st in "$IORR_LOOPFS_DIR"/state/*.state; do
    [ -f "$st" ] || continue
    d=$(sed -n 's/^DIR=//p' "$st")
    [ -n "$d" ] && "$LOOPFS" umount "$d" >/dev/null 2>&1
  done
  [ -n "$(findmnt -rn -o TARGET | grep -F "$WORK")" ] || rm -rf -- "$WORK"
  if [ -n "$(losetup -ln -O BACK-FILE | grep -F "$IORR_LOOPFS_DIR")" ] || [ -n "$(ls -A "$IORR_LOOPFS_DIR/state" 2>/dev/null)" ]; then
    echo "WARNING: left behind in $IORR_LOOPFS_DIR (see IORR_LOOPFS_DIR=$IORR_LOOPFS_DIR $LOOPFS list)"
  else
    rm -rf -- "$IORR_LOOPFS_DIR"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Nothing of one mount is left: no mount on DIR or from DEV, no loop device on IMAGE, no
# image, no state, no DIR (loopfs created it). Prints what is left, if anything.
leftovers() {
  local dev=$1 img=$2 dir=$3 n=${1#/dev/} left=
  [ -z "$(findmnt -n --mountpoint "$dir" 2>/dev/null)" ] || left+=" mount on $dir;"
  [ -z "$dev" ] || [ -z "$(findmnt -n --source "$dev" 2>/dev/null)" ] || left+=" $dev still mounted;"
  [ -z "$(losetup -ln -O NAME,BACK-FILE | grep -F -- "$img")" ] || left+=" loop device on $img;"
  if [ -n "$dev" ] && [ -r "/sys/block/$n/loop/backing_file" ] &&
     grep -qF -- "$img" "/sys/block/$n/loop/backing_file"; then left+=" $dev backed by $img;"; fi
  [ ! -e "$img" ] || left+=" image $img;"
  [ -z "$(ls -A "$IORR_LOOPFS_DIR/state" 2>/dev/null)" ] || left+=" state $(ls "$IORR_LOOPFS_DIR/state");"
  [ ! -e "$dir" ] || left+=" directory $dir;"
  echo "$left"
}

# Comma-separated option lists: has_opts "rw,relatime,nobarrier" "nobarrier,commit=7".
has_opts() {
  local o
  for o in ${2//,/ }; do [[ ,$1, == *,$o,* ]] || return 1; done
}
lacks_opts() {
  local o
  for o in ${2//,/ }; do [[ ,$1, != *,$o,* ]] || return 1; done
}

# fs_case LABEL FS WRITE_CACHE MOUNT_OPTS WANT_IN_FINDMNT WANT_NOT_IN_FINDMNT
fs_case() {
  local label=$1 fs=$2 wc=$3 opts=$4 want=$5 unwanted=$6
  local dir=$WORK/$label out rc dev img extra n q
  out=$("$LOOPFS" mount "$fs" "$dir" --write-cache "$wc" ${opts:+--opts "$opts"} 2>"$WORK/err")
  rc=$?
  if [ $rc -eq 77 ]; then skip "$label: $(cat "$WORK/err")"; return; fi
  if [ $rc -ne 0 ]; then fail "$label: mount exited $rc: $(cat "$WORK/err")"; return; fi
  read -r dev img extra <<<"$out"
  n=${dev#/dev/} q=/sys/block/${dev#/dev/}/queue
  check "$label: mount prints one line 'DEV IMAGE' ($out)" \
    test "$(wc -l <<<"$out")" -eq 1 -a -b "$dev" -a -f "$img" -a -z "$extra"
  check "$label: image is under IORR_LOOPFS_DIR and sparse ($(du -k "$img" | cut -f1) KiB of 512 MiB allocated)" \
    test "${img#"$IORR_LOOPFS_DIR"/}" != "$img" -a "$(du -k "$img" | cut -f1)" -lt $((256 * 1024))
  check "$label: the loop device is backed by the image" grep -qxF -- "$img" "/sys/block/$n/loop/backing_file"

  if dd if=/dev/urandom of="$dir/data" bs=64k count=16 conv=fsync status=none &&
     [ "$(stat -c %s "$dir/data")" -eq 1048576 ]; then
    ok "$label: wrote 1 MiB and fsynced it"
  else
    fail "$label: writing and fsyncing $dir/data"
  fi

  local fstype options
  read -r fstype options <<<"$(findmnt -n -o FSTYPE,OPTIONS --mountpoint "$dir")"
  check "$label: findmnt shows $fs${want:+ with $want}${unwanted:+ without $unwanted} ($fstype $options)" \
    eval '[ "$fstype" = "$fs" ] && has_opts "$options" "$want" && lacks_opts "$options" "$unwanted"'
  check "$label: queue/write_cache is 'write $wc'" test "$(cat "$q/write_cache")" = "write $wc"

  local lbs sched dio listed
  lbs=$(cat "$q/logical_block_size") sched=$(cat "$q/scheduler") dio=off
  [ "$(cat "/sys/block/$n/loop/dio")" = 1 ] && dio=on
  listed=$("$LOOPFS" list | grep -F -- "$dev $img $dir ")
  check "$label: queue sane (logical block $lbs, scheduler '$sched', direct I/O $dio)" \
    eval '[[ $lbs =~ ^(512|1024|2048|4096)$ && $sched == *"[none]"* ]]'
  check "$label: list shows it (${listed:-nothing})" \
    eval '[[ $listed == *" fs=$fs "* && $listed == *" write_cache=$wc "* && $listed == *" dio=$dio "* &&
             $listed == *" sector=$lbs "* && $listed == *" status=mounted" ]]'

  if [ "$label" = ext4-barrier1 ]; then
    "$LOOPFS" mount ext4 "$dir" >/dev/null 2>"$WORK/err"
    rc=$?
    check "$label: a second mount on the same DIR exits 2 ($(cat "$WORK/err"))" test $rc -eq 2
    check "$label: ... and leaves the first one mounted" test "$(findmnt -n -o SOURCE --mountpoint "$dir")" = "$dev"
  fi

  "$LOOPFS" umount "$dir" 2>"$WORK/err"
  rc=$?
  check "$label: umount exits 0 $(cat "$WORK/err")" test $rc -eq 0
  local left
  left=$(leftovers "$dev" "$img" "$dir")
  check "$label: nothing left after umount${left:+:$left}" test -z "$left"
  "$LOOPFS" umount "$dir" 2>/dev/null
  rc=$?
  check "$label: a second umount exits 0" test $rc -eq 0
}

echo "# mount, write, fsync, options, write_cache, umount"
fs_case ext4-barrier1 ext4 back barrier=1 "" nobarrier
fs_case ext4-barrier0 ext4 back barrier=0 nobarrier ""
fs_case ext4-journal ext4 back data=journal,commit=30 data=journal,commit=30 ""
fs_case xfs-back xfs back "" "" ""
fs_case xfs-through xfs through "" "" ""
fs_case btrfs btrfs back "" "" ""
fs_case ext3 ext3 back "" "" ""
fs_case ext2 ext2 through "" "" ""

echo "# --fill: every block of the image written, after mkfs too"
# mkfs zeroes journals, logs and inode tables with write-zeroes, which loop turns into
# fallocate(ZERO_RANGE): unwritten extents whose first write costs the host a metadata update
# inside every later loop flush. --fill must leave none.
fill_case() {
  local fs=$1 dir=$WORK/fill-$1 out rc dev img unwritten
  out=$("$LOOPFS" mount "$fs" "$dir" --size 1G --fill 2>"$WORK/err")
  rc=$?
  if [ $rc -eq 77 ]; then skip "fill $fs: $(cat "$WORK/err")"; return; fi
  if [ $rc -ne 0 ]; then fail "fill $fs: mount exited $rc: $(cat "$WORK/err")"; return; fi
  read -r dev img <<<"$out"
  if ! filefrag -v "$img" >"$WORK/frag" 2>&1; then
    skip "fill $fs: filefrag cannot map $img: $(head -n 1 "$WORK/frag")"
  else
    unwritten=$(grep -c unwritten "$WORK/frag")
    check "fill $fs: no unwritten extent in the image ($unwritten)" test "$unwritten" -eq 0
  fi
  "$LOOPFS" umount "$dir" >/dev/null 2>&1
}
if command -v filefrag >/dev/null; then
  fill_case ext4
  fill_case xfs
else
  skip "fill: filefrag (e2fsprogs) is not installed"
fi

echo "# failures leave nothing behind"
# fail_case LABEL WANT_RC LOOPFS_MOUNT_ARGS...: DIR is $WORK/LABEL, the image $IORR_LOOPFS_DIR/LABEL.img.
fail_case() {
  local label=$1 want=$2 dir=$WORK/$1 img=$IORR_LOOPFS_DIR/$1.img rc
  shift 2
  "$LOOPFS" mount "$1" "$dir" --image "$img" "${@:2}" >"$WORK/out" 2>"$WORK/err"
  rc=$?
  if [ $rc -eq 77 ]; then skip "$label: $(cat "$WORK/err")"; return; fi
  if [ $rc -eq 0 ]; then
    "$LOOPFS" umount "$dir"
    skip "$label: mount succeeded here, so this failure cannot be tested"
    return
  fi
  check "$label: exits $want with one 'loopfs:' line ($(cat "$WORK/err"))" \
    eval '[ $rc -eq $want ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q "^loopfs: " "$WORK/err" && [ ! -s "$WORK/out" ]'
  local left
  left=$(leftovers "" "$img" "$dir")
  check "$label: nothing left${left:+:$left}" test -z "$left"
}
fail_case ext4-bad-option 1 ext4 --opts bogus_option=1
fail_case xfs-mkfs-refuses-64M 1 xfs --size 64M

# SIGTERM while mkfs runs: the mount rolls back once mkfs returns.
sig_case() {
  local dir=$WORK/sigterm img=$IORR_LOOPFS_DIR/sigterm.img pid rc attached=0
  "$LOOPFS" mount ext4 "$dir" --size 4G --image "$img" >/dev/null 2>"$WORK/err" &
  pid=$!
  for _ in $(seq 200); do
    [ -n "$(losetup -j "$img" 2>/dev/null)" ] && { attached=1; break; }
    sleep 0.02
  done
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  if [ $rc -eq 0 ] || [ $attached = 0 ]; then
    "$LOOPFS" umount "$dir" 2>/dev/null
    skip "sigterm: the mount finished before the signal (rc $rc); rollback on a signal not tested"
    return
  fi
  check "sigterm during mkfs: exits 143 (got $rc)" test $rc -eq 143
  local left
  left=$(leftovers "" "$img" "$dir")
  check "sigterm during mkfs: nothing left${left:+:$left}" test -z "$left"
}
sig_case

echo "# bad input exits 2 with one line; not root exits 77"
bad_case() {
  local rc
  "$LOOPFS" "$@" >"$WORK/out" 2>"$WORK/err"
  rc=$?
  check "loopfs.sh $* exits 2 with one line ($(cat "$WORK/err"))" \
    eval '[ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && [ ! -s "$WORK/out" ]'
}
bad_case mount ntfs "$WORK/b"
bad_case mount ext4
bad_case mount ext4 "$WORK/b" --size 12Q
bad_case mount ext4 "$WORK/b" --size 1M
bad_case mount ext4 "$WORK/b" --write-cache off
bad_case mount ext4 "$WORK/b" --frob
bad_case mount ext4 "$WORK/b" --opts
bad_case mount xfs "$WORK/b" --opts nobarrier
bad_case mount xfs "$WORK/b" --opts noatime,barrier=0
touch "$WORK/exists.img"
bad_case mount ext4 "$WORK/b" --image "$WORK/exists.img"
bad_case mount ext4 "$WORK/b" --image "$WORK/no/such/dir.img"
bad_case frob
mkdir -p "$WORK/foreign"
if mount -t tmpfs -o size=1M iorr-loopfs-test "$WORK/foreign" 2>/dev/null; then
  bad_case umount "$WORK/foreign"
  check "umount of a foreign mount point leaves it mounted" mountpoint -q "$WORK/foreign"
  umount "$WORK/foreign"
fi
"$LOOPFS" umount "$WORK/never-mounted" 2>/dev/null
check "umount of a directory loopfs never mounted exits 0" test $? -eq 0
check "list with nothing mounted prints nothing" test -z "$("$LOOPFS" list)"
if command -v setpriv >/dev/null; then
  cp "$LOOPFS" "$WORK/loopfs-copy.sh" && chmod 755 "$WORK/loopfs-copy.sh"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$WORK/loopfs-copy.sh" mount ext4 "$WORK/nr" >/dev/null 2>"$WORK/err"
  rc=$?
  check "not root: exits 77 with a reason ($(cat "$WORK/err"))" eval '[ $rc -eq 77 ] && [ -s "$WORK/err" ] && [ ! -e "$WORK/nr" ]'
else
  skip "not root: setpriv not found"
fi

echo "# PREFLUSH/FUA reaching the loop device (tracefs)"
TRACE_WHY=''
tracing_on() {
  local d
  for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
    [ -d "$d/instances" ] && { TRACEFS=$d; break; }
  done
  if [ -z "$TRACEFS" ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || { TRACE_WHY="cannot mount tracefs"; return 1; }
    TRACEFS=/sys/kernel/tracing TRACEFS_MOUNTED=1
  fi
  [ -d "$TRACEFS/events/block/block_rq_issue" ] && [ -d "$TRACEFS/events/block/block_bio_queue" ] ||
    { TRACE_WHY="no block tracepoints in $TRACEFS"; return 1; }
  # A private instance: its own buffer and event switches, nothing shared with other tracers.
  INST=$TRACEFS/instances/iorr-loopfs-test-$$
  mkdir "$INST" 2>/dev/null || { INST=; TRACE_WHY="cannot create a tracefs instance"; return 1; }
}

# flush_case LABEL FS WRITE_CACHE MOUNT_OPTS EXPECT(yes|no): traces one 16 KiB write + fsync.
flush_case() {
  local label=$1 fs=$2 wc=$3 opts=$4 expect=$5 dir=$WORK/trace-$1 out rc dev img mm num e
  out=$("$LOOPFS" mount "$fs" "$dir" --write-cache "$wc" ${opts:+--opts "$opts"} 2>"$WORK/err")
  rc=$?
  if [ $rc -eq 77 ]; then skip "trace $label: $(cat "$WORK/err")"; return; fi
  if [ $rc -ne 0 ]; then fail "trace $label: mount exited $rc: $(cat "$WORK/err")"; return; fi
  read -r dev img <<<"$out"
  mm=$(cat "/sys/block/${dev#/dev/}/dev")
  num=$(((${mm%:*} << 20) | ${mm#*:}))  # the kernel's dev_t: MAJOR << 20 | MINOR
  # Settle first, so that the traced window holds the fsync and little else.
  dd if=/dev/zero of="$dir/warm" bs=64k count=4 conv=fsync status=none
  sync -f "$dir"
  for e in block_bio_queue block_rq_issue; do
    echo "dev == $num" >"$INST/events/block/$e/filter" && echo 1 >"$INST/events/block/$e/enable" ||
      { fail "trace $label: cannot enable block/$e"; "$LOOPFS" umount "$dir"; return; }
  done
  : >"$INST/trace"
  dd if=/dev/urandom of="$dir/f" bs=4k count=4 conv=fsync status=none
  for e in block_bio_queue block_rq_issue; do
    echo 0 >"$INST/events/block/$e/enable"
    echo 0 >"$INST/events/block/$e/filter"
  done
  # rwbs: a leading F is PREFLUSH, an F as the operation is a flush, an F after the
  # operation letter is FUA; W write, S sync, M metadata.
  local ev
  ev=$(grep -v '^#' "$INST/trace" |
       awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^block_(rq_issue|bio_queue):$/) { print $i, $(i + 2); break } }')
  : >"$INST/trace"
  "$LOOPFS" umount "$dir" || fail "trace $label: umount"
  local rq_all rq_w rq_f bio_f
  rq_all=$(grep -c '^block_rq_issue:' <<<"$ev")
  rq_w=$(grep -c '^block_rq_issue: [^ ]*W' <<<"$ev")
  rq_f=$(grep -c '^block_rq_issue: [^ ]*F' <<<"$ev")
  bio_f=$(grep -c '^block_bio_queue: [^ ]*F' <<<"$ev")
  local summary
  summary="rq_issue: $(grep '^block_rq_issue:' <<<"$ev" | cut -d' ' -f2 | sort | uniq -c | xargs);"
  summary+=" bio_queue: $(grep '^block_bio_queue:' <<<"$ev" | cut -d' ' -f2 | sort | uniq -c | xargs)"
  echo "  $label on $dev (dev $num): $summary"
  check "trace $label: the fsync's writes reach block_rq_issue on $dev ($rq_w of $rq_all)" test "$rq_w" -gt 0
  if [ "$expect" = yes ]; then
    check "trace $label: the file system asks for PREFLUSH/FUA (block_bio_queue, $bio_f)" test "$bio_f" -gt 0
    check "trace $label: flushes reach the loop device (block_rq_issue, $rq_f)" test "$rq_f" -gt 0
  else
    check "trace $label: no PREFLUSH/FUA/flush at block_rq_issue ($rq_f)" test "$rq_f" -eq 0
  fi
}

if tracing_on; then
  flush_case xfs-write-back xfs back "" yes
  flush_case xfs-write-through xfs through "" no
  flush_case ext4-barrier1 ext4 back barrier=1 yes
  flush_case ext4-barrier0 ext4 back barrier=0 no
  tracing_off
  check "tracing: the instance is gone" test ! -e "$TRACEFS/instances/iorr-loopfs-test-$$"
else
  tracing_off
  skip "tracefs: $TRACE_WHY"
fi

if ((${#skipped[@]})); then
  echo "${#skipped[@]} skipped:"
  printf '  %s\n' "${skipped[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || exit 1
((${#skipped[@]} == 0)) || exit 77
exit 0
