#!/usr/bin/env bash
# loopfs.sh: make and mount, and later unmount and delete, a loop-device file system for the
# tests, the benchmarks and the demo (issue 4, "Real file systems").
#
#   loopfs.sh mount FS DIR [--size 512M] [--image PATH] [--opts MOUNT_OPTIONS]
#                          [--write-cache back|through] [--direct-io on|off] [--fill]
#       FS is ext4, xfs, btrfs, ext2 or ext3. Makes a sparse image (default
#       $IORR_LOOPFS_DIR/FS-XXXXXX.img, IORR_LOOPFS_DIR defaulting to /var/tmp/iorr-loopfs),
#       attaches a loop device, runs a quiet forced mkfs on it, mounts it on DIR (created if
#       missing) with -o MOUNT_OPTIONS (barrier=0, data=journal, commit=N, ...) and sets the
#       device's queue/write_cache. --fill writes every block of the image first (and keeps
#       mkfs from discarding, and writes again what mkfs zeroed into unwritten extents), so
#       that it is not sparse: the loop device then behaves like a disk whose blocks exist
#       (see "Choices" below). Prints one line "DEV IMAGE" on stdout, e.g.
#       "/dev/loop3 /var/tmp/iorr-loopfs/ext4-h3K9aq.img"; nothing else goes to stdout.
#   loopfs.sh umount DIR
#       syncfs, unmount, detach the loop device, delete the image and DIR (each only if this
#       script made it), forget the state. Calling it again, or on a DIR it never mounted that
#       is not a mount point, does nothing and exits 0.
#   loopfs.sh list
#       one line per file system it mounted:
#       "DEV IMAGE DIR fs=FS opts=OPTS write_cache=back|through dio=on|off sector=N status=S"
#       (status is "mounted", or "stale" when a crash left state behind: umount DIR cleans up).
#
# Exit status: 0 done; 1 failed (one "loopfs: ..." line on stderr; mount leaves nothing
# behind: no mount, loop device, image, state or created DIR); 2 bad input (one line on
# stderr); 77 cannot run here, with the reason on stderr (not root, no loop devices, mkfs
# tool or kernel file system missing) so that tests can skip.
#
# State: one file per mount in $IORR_LOOPFS_DIR/state/, named after a hash of DIR, holding
# DIR, device, image and the image's inode. umount only detaches a loop device that still
# has that very inode as its backing file, and only deletes an image it created (same inode).
#
# Choices about the loop device:
# - Direct I/O (losetup --direct-io=on) by default: loop then reads and writes the image
#   with O_DIRECT (asynchronously, several requests in flight), so the image's data are not
#   cached a second time in the host page cache, writeback of the image does not land at
#   random times in a measurement, and a flush of the loop device costs what an fsync of
#   the image costs on the backing disk. If the kernel refuses it (backing file system
#   without O_DIRECT, misaligned sector size), the device falls back to buffered I/O and
#   `list` shows dio=off. --direct-io off asks for buffered I/O.
# - Logical sector size: that of the block device holding the image (512 if unknown, e.g.
#   on tmpfs or btrfs), so O_DIRECT stays aligned; the file system's own block size is
#   unaffected. queue/rotational is copied from that device, and the I/O scheduler is
#   "none" (loop only forwards requests to the backing file; the real disk's scheduler is
#   the one that counts).
# - Sparse or filled image: writes into holes of a sparse image allocate blocks of the backing
#   file, so the first fsync after them commits the host file system's journal; a flush of
#   the loop device then costs far more than the backing disk's own flush. --fill avoids it
#   (tools/bench/model-vs-real.sh uses it, and calibrates on a filled image too).
# - queue/write_cache: "write back" (the loop default) means the device claims a volatile
#   cache: PREFLUSH/FUA from the file system reach loop, which implements a flush as an
#   fsync of the image. Loop has no FUA (queue/fua is 0), so the block layer turns a FUA
#   write into a write followed by a flush: at block_rq_issue they appear as separate flush
#   requests, at block_bio_queue the flags are as the file system asked.
#   "write through" makes the device claim it has no volatile cache: the block layer then
#   strips REQ_PREFLUSH and REQ_FUA from every bio in submit_bio_noacct() (and completes
#   empty flush bios at once) before they are queued, so no flush ever reaches loop or the
#   backing file. This is "barriers off" (how xfs, whose nobarrier option is gone since
#   Linux 4.19, is run without barriers; ext4 also has barrier=0), not "write cache off":
#   writes are not made synchronous and the data still pass through the host's caches.
set -u
set -o pipefail

BASE=${IORR_LOOPFS_DIR:-/var/tmp/iorr-loopfs}
STATE_DIR=$BASE/state
USAGE="usage: loopfs.sh mount FS DIR [--size 512M] [--image PATH] [--opts OPTS] [--write-cache back|through] [--direct-io on|off] [--fill] | umount DIR | list"

die() { echo "loopfs: $*" >&2; exit 1; }
bad() { echo "loopfs: $*" >&2; exit 2; }
skip() { echo "loopfs: SKIP: $*" >&2; exit 77; }

# First non-empty line of a file that looks like an error, else its last non-empty line,
# squeezed to one line.
first_error() {
  local l
  l=$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | grep -i -m1 -E 'error|fail|invalid|unknown|too small|must be|cannot|denied|not permitted|wrong' )
  [ -n "$l" ] || l=$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n1)
  printf '%s' "$l" | tr -s ' \t' ' '
}

# Bytes from 512M, 1G, 1GiB, 300MB, 4096, ...
to_bytes() {
  local s=${1^^} n u
  [[ $s =~ ^([0-9]+)([KMGT]?)(I?B)?$ ]] || return 1
  n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]}
  [ ${#n} -le 12 ] || return 1
  n=$((10#$n))
  case $u in
    K) n=$((n << 10)) ;; M) n=$((n << 20)) ;; G) n=$((n << 30)) ;; T) n=$((n << 40)) ;;
  esac
  echo "$n"
}

state_file_for() { echo "$STATE_DIR/$(printf '%s' "$1" | sha1sum | cut -c1-16).state"; }

# Absolute path without requiring it to exist (symlinks in existing parts resolved).
abspath() { realpath -m -- "$1"; }

# "INODE MAJ:MIN" of a file.
file_id() { stat -L -c '%i %Hd:%Ld' -- "$1" 2>/dev/null; }

# "INODE MAJ:MIN" of a loop device's backing file ("" if unattached).
loop_backing_id() {
  losetup -n -O BACK-INO,BACK-MAJ:MIN -- "$1" 2>/dev/null | awk 'NF == 2 { print $1 " " $2 }'
}

# sysfs directory of the block device holding PATH ("" if none, e.g. tmpfs, btrfs).
backing_sysfs() {
  local d s
  d=$(stat -c '%Hd:%Ld' -- "$1" 2>/dev/null) || return 0
  s=/sys/dev/block/$d
  if [ -r "$s/queue/logical_block_size" ]; then echo "$s"
  elif [ -r "$s/partition" ] && [ -r "$s/../queue/logical_block_size" ]; then realpath "$s/.."
  fi
}

# The source mounted on DIR (the top mount if several are stacked), "" if none.
mounted_source() { findmnt -n -o SOURCE --mountpoint "$1" 2>/dev/null | tail -n1; }

# Globals read by read_state.
S_DIR='' S_FS='' S_DEV='' S_IMAGE='' S_IMAGE_ID='' S_CREATED_IMAGE='' S_CREATED_DIR='' S_OPTS='' S_WC='' S_DIO='' S_SECTOR=''
read_state() {
  S_DIR='' S_FS='' S_DEV='' S_IMAGE='' S_IMAGE_ID='' S_CREATED_IMAGE=0 S_CREATED_DIR=0 S_OPTS='' S_WC='' S_DIO='' S_SECTOR=''
  local k v
  while IFS= read -r line; do
    k=${line%%=*} v=${line#*=}
    case $k in
      DIR) S_DIR=$v ;; FS) S_FS=$v ;; DEV) S_DEV=$v ;; IMAGE) S_IMAGE=$v ;;
      IMAGE_ID) S_IMAGE_ID=$v ;; CREATED_IMAGE) S_CREATED_IMAGE=$v ;;
      CREATED_DIR) S_CREATED_DIR=$v ;; OPTS) S_OPTS=$v ;; WRITE_CACHE) S_WC=$v ;;
      DIO) S_DIO=$v ;; SECTOR) S_SECTOR=$v ;;
    esac
  done <"$1"
  [ -n "$S_DIR" ]
}

# ---------------------------------------------------------------------------------- mount

# What a failed mount must undo; filled in as resources are acquired.
M_STATE='' M_IMAGE='' M_IMAGE_ID='' M_DEV='' M_DIR='' M_CREATED_DIR=0 M_MOUNTED=0 M_DONE=0 M_TMP=''

write_state() {
  local tmp=$M_STATE.tmp.$$
  {
    echo "DIR=$M_DIR"
    echo "FS=$fs"
    echo "DEV=$M_DEV"
    echo "IMAGE=$M_IMAGE"
    echo "IMAGE_ID=$M_IMAGE_ID"
    echo "CREATED_IMAGE=1"
    echo "CREATED_DIR=$M_CREATED_DIR"
    echo "OPTS=$opts"
    echo "WRITE_CACHE=$wc"
    echo "DIO=${M_DIO:-}"
    echo "SECTOR=${M_SECTOR:-}"
    echo "PID=$$"
  } >"$tmp" && mv -f -- "$tmp" "$M_STATE"
}

mount_rollback() {
  local rc=$?
  [ "$M_DONE" = 1 ] && { [ -n "$M_TMP" ] && rm -f -- "$M_TMP"; return; }
  trap - INT TERM HUP
  if [ "$M_MOUNTED" = 1 ]; then
    umount -- "$M_DIR" 2>/dev/null || { sleep 0.2; umount -- "$M_DIR" 2>/dev/null; }
  fi
  if [ -n "$M_DEV" ] && [ "$(loop_backing_id "$M_DEV")" = "$M_IMAGE_ID" ]; then
    losetup -d "$M_DEV" 2>/dev/null
  fi
  if [ -n "$M_IMAGE" ] && [ "$(file_id "$M_IMAGE")" = "$M_IMAGE_ID" ]; then
    rm -f -- "$M_IMAGE"
  fi
  [ "$M_CREATED_DIR" = 1 ] && rmdir -- "$M_DIR" 2>/dev/null
  [ -n "$M_STATE" ] && rm -f -- "$M_STATE" "$M_STATE.tmp.$$"
  [ -n "$M_TMP" ] && rm -f -- "$M_TMP"
  exit "$rc"
}

cmd_mount() {
  [ $# -ge 2 ] || bad "mount needs FS and DIR; $USAGE"
  fs=$1 dir=$2
  shift 2
  local size=512M image='' wc=back dio=on fill=0
  opts=''
  while [ $# -gt 0 ]; do
    case $1 in
      --size|--image|--opts|--write-cache|--direct-io)
        [ $# -ge 2 ] || bad "$1 needs a value"
        case $1 in
          --size) size=$2 ;; --image) image=$2 ;; --opts) opts=$2 ;;
          --write-cache) wc=$2 ;; --direct-io) dio=$2 ;;
        esac
        shift 2 ;;
      --size=*) size=${1#*=}; shift ;;
      --image=*) image=${1#*=}; shift ;;
      --opts=*) opts=${1#*=}; shift ;;
      --write-cache=*) wc=${1#*=}; shift ;;
      --direct-io=*) dio=${1#*=}; shift ;;
      --fill) fill=1; shift ;;
      *) bad "unknown argument '$1'; $USAGE" ;;
    esac
  done

  # Input (exit 2).
  case $fs in ext2|ext3|ext4|xfs|btrfs) ;; *) bad "unsupported file system '$fs' (want ext4, xfs, btrfs, ext2 or ext3)" ;; esac
  [ -n "$dir" ] || bad "empty DIR"
  local bytes
  bytes=$(to_bytes "$size") || bad "bad --size '$size' (want e.g. 512M, 2G, 300MiB or a byte count)"
  [ "$bytes" -ge $((16 << 20)) ] || bad "--size $size is too small (at least 16M; xfs needs 300M)"
  case $wc in
    back|"write back") wc=back ;; through|"write through") wc=through ;;
    *) bad "bad --write-cache '$wc' (want back or through)" ;;
  esac
  case $dio in on|off) ;; *) bad "bad --direct-io '$dio' (want on or off)" ;; esac
  [[ $opts =~ [[:space:]] ]] && bad "--opts must not contain white space: '$opts'"
  [[ $dir$image == *$'\n'* ]] && bad "paths must not contain newlines"
  if [ "$fs" = xfs ] && [[ ,$opts, =~ ,(no)?barrier(=[^,]*)?, ]]; then
    bad "xfs has no barrier/nobarrier mount option (removed in Linux 4.19); use --write-cache through to drop PREFLUSH/FUA"
  fi
  dir=$(abspath "$dir")
  [ "$dir" != / ] || bad "refusing to mount on /"
  [ ! -e "$dir" ] || [ -d "$dir" ] || bad "$dir exists and is not a directory"
  if [ -d "$dir" ] && mountpoint -q -- "$dir"; then bad "$dir is already a mount point"; fi
  if [ -n "$image" ]; then
    image=$(abspath "$image")
    [ ! -e "$image" ] || bad "image $image already exists (loopfs only uses images it creates)"
    [ -d "$(dirname -- "$image")" ] || bad "directory of image $image does not exist"
  fi

  # Can it run here (exit 77)?
  [ "$(id -u)" -eq 0 ] || skip "needs root (losetup, mkfs and mount)"
  local t
  for t in losetup mount umount findmnt mountpoint; do
    command -v "$t" >/dev/null || skip "$t not found (util-linux / mount)"
  done
  local mkfs=mkfs.$fs pkg
  case $fs in xfs) pkg=xfsprogs ;; btrfs) pkg=btrfs-progs ;; *) pkg=e2fsprogs ;; esac
  command -v "$mkfs" >/dev/null || skip "$mkfs not found (install $pkg)"
  if ! grep -qw -- "$fs" /proc/filesystems 2>/dev/null; then
    modprobe -q -- "$fs" 2>/dev/null
    grep -qw -- "$fs" /proc/filesystems 2>/dev/null || skip "the kernel has no $fs file system"
  fi
  if [ ! -e /dev/loop-control ] && ! compgen -G '/dev/loop[0-9]*' >/dev/null; then
    skip "no loop devices (/dev/loop-control missing; modprobe loop?)"
  fi

  mkdir -p -- "$STATE_DIR" || die "cannot create $STATE_DIR"
  M_TMP=$(mktemp "$STATE_DIR/.err.XXXXXX") || die "cannot create a temporary file in $STATE_DIR"
  trap mount_rollback EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP

  # The state file is claimed first (atomically: set -C), so two mounts on one DIR cannot
  # both proceed, and a killed mount leaves something `umount DIR` can clean up.
  M_STATE=$(state_file_for "$dir")
  if ! (set -C; : >"$M_STATE") 2>/dev/null; then
    M_STATE=''
    bad "$dir is already in use by loopfs (see loopfs.sh list; loopfs.sh umount $dir)"
  fi
  M_DIR=$dir
  if [ ! -e "$dir" ]; then
    mkdir -p -- "$dir" || die "cannot create $dir"
    M_CREATED_DIR=1
  fi

  # A sparse image, created here and nowhere else.
  if [ -z "$image" ]; then
    mkdir -p -- "$BASE" || die "cannot create $BASE"
    image=$(mktemp --suffix=.img -p "$BASE" "$fs-XXXXXX") || die "cannot create an image in $BASE"
  else
    (set -C; : >"$image") 2>/dev/null || die "cannot create image $image"
  fi
  M_IMAGE=$image
  M_IMAGE_ID=$(file_id "$image")
  write_state || die "cannot write $M_STATE"
  truncate -s "$bytes" -- "$image" 2>"$M_TMP" || die "cannot size image $image: $(first_error "$M_TMP")"
  if [ "$fill" = 1 ]; then
    # Every block of the image written (and mkfs told not to discard, which would punch holes
    # back): the loop device's writes then land on allocated blocks of the backing file, so a
    # flush costs the backing disk's flush, not a journal commit of the host file system.
    dd if=/dev/zero of="$image" bs=4M count=$(( (bytes + 4194303) / 4194304 )) conv=notrunc \
      oflag=direct status=none 2>"$M_TMP" || die "cannot fill image $image: $(first_error "$M_TMP")"
    truncate -s "$bytes" -- "$image" && sync -- "$image" || die "cannot sync image $image"
  fi

  # The loop device.
  local sys sector=512 rot=
  sys=$(backing_sysfs "$image")
  if [ -n "$sys" ]; then
    sector=$(cat "$sys/queue/logical_block_size" 2>/dev/null || echo 512)
    rot=$(cat "$sys/queue/rotational" 2>/dev/null)
  fi
  [[ $sector =~ ^[0-9]+$ ]] && [ "$sector" -ge 512 ] && [ "$sector" -le 4096 ] || sector=512
  local args=(--find --show --sector-size "$sector")
  [ "$dio" = on ] && args+=(--direct-io=on)
  M_DEV=$(losetup "${args[@]}" -- "$image" 2>"$M_TMP")
  if [ -z "$M_DEV" ] && [ "$dio" = on ]; then
    # Older kernels refuse direct I/O with an error instead of falling back.
    M_DEV=$(losetup --find --show --sector-size "$sector" -- "$image" 2>"$M_TMP")
  fi
  if [ -z "$M_DEV" ]; then
    local e
    e=$(first_error "$M_TMP")
    case ${e,,} in
      *"permission denied"*|*"not permitted"*|*"no such file"*|*"no such device"*|*"cannot find an unused"*|*"could not find any free"*)
        skip "no usable loop device: $e" ;;
    esac
    die "losetup failed: $e"
  fi
  local n=${M_DEV#/dev/} q
  q=/sys/block/$n/queue
  M_DIO=off
  [ "$(cat "/sys/block/$n/loop/dio" 2>/dev/null)" = 1 ] && M_DIO=on
  M_SECTOR=$(cat "$q/logical_block_size" 2>/dev/null || echo "$sector")
  write_state || die "cannot write $M_STATE"

  # Queue settings (see the header). write_cache must take, the others are best effort.
  [ -w "$q/scheduler" ] && grep -qw none "$q/scheduler" && echo none >"$q/scheduler" 2>/dev/null
  [ -n "$rot" ] && [ -w "$q/rotational" ] && echo "$rot" >"$q/rotational" 2>/dev/null
  local want="write $wc"
  echo "$want" >"$q/write_cache" 2>"$M_TMP" || die "cannot set $q/write_cache to '$want': $(first_error "$M_TMP")"
  [ "$(cat "$q/write_cache")" = "$want" ] || die "$q/write_cache is '$(cat "$q/write_cache")' after writing '$want'"

  # mkfs, quiet and forced; its chatter never reaches stdout. ext*: the inode tables and
  # journal are initialised now rather than by a background thread after mount, which would
  # otherwise write into the first minutes of every measurement and block trace.
  local mk=("$mkfs") nodiscard=
  [ "$fill" = 1 ] && nodiscard=,nodiscard
  case $fs in
    ext2|ext3|ext4) mk+=(-q -F -E "lazy_itable_init=0,lazy_journal_init=0$nodiscard") ;;
    xfs|btrfs) mk+=(-q -f) ;;
  esac
  if [ "$fill" = 1 ]; then
    case $fs in xfs|btrfs) mk+=(-K) ;; esac
  fi
  "${mk[@]}" "$M_DEV" >"$M_TMP" 2>&1 || die "$mkfs failed on $M_DEV ($size): $(first_error "$M_TMP")"
  # mkfs zeroes the journal, the log and inode tables with write-zeroes requests, which loop
  # turns into fallocate(ZERO_RANGE) of the image: unwritten extents again. A write there
  # converts them in the host file system, whose next fsync then writes its own metadata: an
  # ext4 journal commit on such a filled image measured 150 us per loop flush against 40 us
  # for the same flush elsewhere. They are written with zeros, so the image stays all written.
  if [ "$fill" = 1 ]; then write_unwritten "$image" || die "cannot write the unwritten extents of $image"; fi

  # mount.
  local mo=(-t "$fs")
  [ -n "$opts" ] && mo+=(-o "$opts")
  if ! mount "${mo[@]}" -- "$M_DEV" "$dir" 2>"$M_TMP"; then
    local e hint
    e=$(first_error "$M_TMP")
    case ${e,,} in
      *"unknown filesystem type"*) skip "the kernel cannot mount $fs: $e" ;;
      *"permission denied"*|*"not permitted"*) skip "mount not permitted here: $e" ;;
    esac
    # The kernel's reason (e.g. "ext4: Unknown parameter 'x'") is only in the kernel log.
    hint=$(dmesg 2>/dev/null | tail -n 5 | grep -i -E "($n|$fs)" | tail -n1 | sed 's/^\[[^]]*\] *//')
    die "mount -t $fs${opts:+ -o $opts} $M_DEV $dir failed: $e${hint:+ (kernel: $hint)}"
  fi
  M_MOUNTED=1
  [ "$(mounted_source "$dir")" = "$M_DEV" ] || die "$M_DEV does not show as mounted on $dir"
  write_state || die "cannot write $M_STATE"
  M_DONE=1
  echo "$M_DEV $image"
}

# write_unwritten IMAGE: writes zeros over the unwritten extents of IMAGE (filefrag -v),
# which read as zeros already; without filefrag (or on a file system without FIEMAP), nothing.
write_unwritten() {
  local img=$1 bs start len
  command -v filefrag >/dev/null || return 0
  filefrag -v -- "$img" >"$M_TMP" 2>/dev/null || return 0
  bs=$(sed -n 's/.* blocks of \([0-9]*\) bytes).*/\1/p' "$M_TMP" | head -n 1)
  [[ $bs =~ ^[0-9]+$ ]] && [ "$bs" -gt 0 ] || return 0
  sed -n 's/^ *[0-9]*: *\([0-9]*\)\.\. *\([0-9]*\):.*unwritten.*/\1 \2/p' "$M_TMP" |
    while read -r start end; do
      len=$((end - start + 1))
      dd if=/dev/zero of="$img" bs="$bs" seek="$start" count="$len" conv=notrunc oflag=direct \
        status=none || die "cannot write the unwritten extents of $img"
    done
  sync -- "$img"
}

# --------------------------------------------------------------------------------- umount

cmd_umount() {
  [ $# -eq 1 ] || bad "umount needs exactly one DIR; $USAGE"
  local dir st f
  [ -n "$1" ] || bad "empty DIR"
  dir=$(abspath "$1")
  st=$(state_file_for "$dir")
  if [ ! -f "$st" ]; then
    # DIR may have been named through another path (a symlink since removed, say).
    st=''
    for f in "$STATE_DIR"/*.state; do
      [ -f "$f" ] && read_state "$f" && [ "$S_DIR" = "$dir" ] && { st=$f; break; }
    done
  fi
  if [ -z "$st" ]; then
    if [ -d "$dir" ] && mountpoint -q -- "$dir"; then
      bad "$dir is not mounted by loopfs (no state in $STATE_DIR); leaving it alone"
    fi
    echo "loopfs: nothing mounted by loopfs on $dir" >&2
    return 0
  fi
  [ "$(id -u)" -eq 0 ] || skip "needs root (umount, losetup -d)"
  read_state "$st" || die "unreadable state file $st"

  # Unmount, if what is mounted on DIR is our device.
  local src
  src=$(mounted_source "$S_DIR")
  if [ -n "$src" ]; then
    [ -n "$S_DEV" ] && [ "$src" = "$S_DEV" ] ||
      die "$S_DIR has $src mounted on it, not ${S_DEV:-a loopfs device}; unmount that first"
    sync -f -- "$S_DIR" 2>/dev/null
    local err
    err=$(mktemp) || die "cannot create a temporary file"
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      umount -- "$S_DIR" 2>"$err" && break
      sleep 0.2
    done
    if [ "$(mounted_source "$S_DIR")" = "$S_DEV" ]; then
      local e
      e=$(first_error "$err"); rm -f -- "$err"
      die "cannot unmount $S_DIR: $e (processes using it: fuser -vm $S_DIR)"
    fi
    rm -f -- "$err"
  fi

  # Detach the loop device, if it still has our image behind it.
  if [ -n "$S_DEV" ] && [ -n "$S_IMAGE_ID" ] && [ "$(loop_backing_id "$S_DEV")" = "$S_IMAGE_ID" ]; then
    local where
    where=$(findmnt -n -o TARGET --source "$S_DEV" 2>/dev/null | paste -sd' ')
    [ -z "$where" ] || die "$S_DEV is still mounted on $where; unmount it there first"
    losetup -d "$S_DEV" 2>/dev/null || die "losetup -d $S_DEV failed"
    # Detaching is deferred while something (udev's blkid, say) holds the device open.
    for _ in $(seq 50); do
      [ "$(loop_backing_id "$S_DEV")" = "$S_IMAGE_ID" ] || break
      sleep 0.1
    done
    [ "$(loop_backing_id "$S_DEV")" != "$S_IMAGE_ID" ] || die "$S_DEV is still attached to $S_IMAGE after 5 s"
  fi

  # Delete the image it created (the same file: same inode), the DIR it created, the state.
  if [ "$S_CREATED_IMAGE" = 1 ] && [ -n "$S_IMAGE" ] && [ "$(file_id "$S_IMAGE")" = "$S_IMAGE_ID" ]; then
    rm -f -- "$S_IMAGE" || die "cannot delete $S_IMAGE"
  fi
  if [ "$S_CREATED_DIR" = 1 ] && [ -d "$S_DIR" ] && ! mountpoint -q -- "$S_DIR"; then
    rmdir -- "$S_DIR" 2>/dev/null
  fi
  rm -f -- "$st"
}

# ----------------------------------------------------------------------------------- list

cmd_list() {
  [ $# -eq 0 ] || bad "list takes no arguments"
  local f status
  for f in "$STATE_DIR"/*.state; do
    [ -f "$f" ] && read_state "$f" || continue
    status=stale
    [ -n "$S_DEV" ] && [ "$(mounted_source "$S_DIR")" = "$S_DEV" ] &&
      [ "$(loop_backing_id "$S_DEV")" = "$S_IMAGE_ID" ] && status=mounted
    echo "${S_DEV:--} ${S_IMAGE:--} $S_DIR fs=$S_FS opts=${S_OPTS:--} write_cache=${S_WC:--}" \
         "dio=${S_DIO:--} sector=${S_SECTOR:--} status=$status"
  done
  return 0
}

case ${1:-} in
  mount) shift; cmd_mount "$@" ;;
  umount|unmount) shift; cmd_umount "$@" ;;
  list) shift; cmd_list "$@" ;;
  -h|--help|help) echo "$USAGE" ;;
  "") bad "no command; $USAGE" ;;
  *) bad "unknown command '$1'; $USAGE" ;;
esac
