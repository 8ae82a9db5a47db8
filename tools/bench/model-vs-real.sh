#!/usr/bin/env bash
# Model against reality, side by side (issue 5). Records each workload RUNS times (on tmpfs, so
# the recorded durations are the programs' CPU), then for each real configuration
#   ext4-barrier    loop-mounted ext4, barrier=1 (the default)
#   ext4-nobarrier  loop-mounted ext4, barrier=0
#   xfs-wb          loop-mounted xfs, loop write cache "write back" (barriers reach the device)
#   xfs-wt          loop-mounted xfs, loop write cache "write through" (the block layer strips
#                   PREFLUSH/FUA: barriers off)
# runs each workload RUNS times for real on a fresh file system (measured: its wall time; the
# four configurations in turn in each round, so that the host's drift affects them alike), and
# replays its first recording RUNS times onto a fresh file system with `iorr replay --block-trace`
# (measured: the flushes, FUA writes and bytes by kind the kernel queued at block_bio_queue).
# The prediction is `iorr model` of each recording with the matching file-system model (the
# median over the recordings), on a
# device profile and per-call CPU tables (iorr calibrate, iorr calibrate --calls) measured
# beforehand on separate images (never on the runs they predict). Prints, per workload and
# configuration, measured and predicted time with the error, the counts side by side, and the
# barrier-on/off time ratios measured and predicted.
#
# The loop images are filled (tools/loopfs.sh --fill), so the loop device is a disk whose blocks
# exist. The calibrated profile, the call-cost tables and the
# errors measured go to OUT (default /var/tmp/iorr-model-vs-real): disk.json, calls-*.json and
# disk.validation.json, which `iorr model --disk OUT/disk.json` reads to mark its rows
# validated with these errors.
#
# Usage: model-vs-real.sh [--subset N] [--workloads fsync,sqlite,tar,rm,cp,cpx] [--runs N]
#                         [--keep DIR] [--out DIR] [--size 1G]
#   --size: the loop images (1G; the whole tarball needs 4G)
#   --subset N  entries of the Linux tarball for tar/rm/cp (default 5000; 0 = the whole tarball)
#   cp: `cp -a` of that tree (extracted beforehand, not timed) then `sync`
#   cpx: the same, recorded on a loop-mounted xfs instead of tmpfs: cp clones each file there
#        (FICLONE) instead of copying it, and the recording says so; the model and the replay
#        then copy on ext4 what the recording cloned
#   RUNS (or --runs) replays per configuration, medians reported (default 3).
# Needs root, loop devices, tracefs, mkfs.ext4, mkfs.xfs, python3, sqlite3.
set -euo pipefail
all_args="$*"
root=$(cd "$(dirname "$0")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
source "$root/tools/shared-dir.sh"
loopfs=$root/tools/loopfs.sh
runs=${RUNS:-3}
subset=5000
workloads=fsync,sqlite,tar,rm,cp,cpx
keep=
out=${IORR_MVR_OUT:-/var/tmp/iorr-model-vs-real}
size=1G
while [[ $# -gt 0 ]]; do
  case $1 in
    --subset) subset=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    *) echo "usage: model-vs-real.sh [--subset N] [--workloads LIST] [--runs N] [--keep DIR] [--out DIR] [--size S]" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "model-vs-real: needs root (loop devices, tracefs)" >&2; exit 77; }
[[ -x $iorr ]] || { echo "model-vs-real: $iorr is missing: build first (tools/build.sh)" >&2; exit 2; }

rec=$(mktemp -d /dev/shm/iorr-mvr-rec.XXXXXX)
work=${keep:-$(mktemp -d /var/tmp/iorr-mvr.XXXXXX)}
mkdir -p "$work"
mnt=$work/mnt
cleanup() {
  bash "$loopfs" umount "$mnt" > /dev/null 2>&1 || true
  bash "$loopfs" umount "$work/cal" > /dev/null 2>&1 || true
  bash "$loopfs" umount "$rec/cpx" > /dev/null 2>&1 || true
  rm -rf "$rec"
  [[ -n $keep ]] || rm -rf "$work"
  quiet_host_end
}
source "$root/tools/bench/quiet-host.sh"
trap cleanup EXIT
quiet_host_begin
log() { echo "model-vs-real: $*" >&2; }

# ---- 1. Record the workloads (on tmpfs).
tarball=
if [[ ,$workloads, == *,tar,* || ,$workloads, == *,rm,* || ,$workloads, == *,cp,* ||
  ,$workloads, == *,cpx,* ]]; then
  if [[ $subset == 0 ]]; then tarball=$(bash "$shared/workloads/linux-tar.sh")
  else tarball=$(bash "$shared/workloads/linux-tar.sh" --subset "$subset"); fi
fi
IFS=, read -r -a wl <<< "$workloads"
# The interpreter itself, not a wrapper found first in PATH (a version manager's shim is a shell
# script that starts dozens of processes: the workload would measure their start-up, not I/O).
python=$(command -v /usr/bin/python3 || command -v python3)
{ echo "PRAGMA synchronous=FULL; CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);"
  for i in $(seq 250); do echo "BEGIN; INSERT INTO t(v) VALUES ('row $i $(printf '%0200d' "$i")'); COMMIT;"; done
} > "$work/sqlite.sql"
# The workloads, each run in the current directory: under `iorr record` on tmpfs, and for real on
# the loop file systems. rm removes a tree extracted beforehand (set_up rm), not timed.
workload() {  # name [prefix command...]
  local w=$1
  shift
  case $w in
    fsync)  # 250 files of 16 KiB, each written and fsynced: 250 flushes with barriers
      "$@" "$python" -c "
import os
os.mkdir('d')
for i in range(250):
    fd = os.open('d/f%03d' % i, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b'x' * 16384); os.fsync(fd); os.close(fd)
" ;;
    sqlite) "$@" sh -c "sqlite3 db.sqlite < '$work/sqlite.sql'" ;;  # 250 small transactions
    tar) "$@" sh -c "tar xf '$tarball' && sync" ;;
    rm) "$@" sh -c 'rm -rf -- * && sync' ;;
    cp | cpx) "$@" sh -c 'cp -a src dst && sync' ;;  # copy_file_range or FICLONE, ACLs, times
    *) echo "model-vs-real: unknown workload $w" >&2; exit 2 ;;
  esac
}
# What a workload reads outside the file system under test (its programs, the tarball, the SQL
# script), read again after the cache drop and before the clock starts: it was cached when the
# workload was recorded, and the model counts only calls under the recorded tree (--only). Timed
# cold, the real tar run read the 21 MB subset tarball from the host's disk, and every run paged
# in its programs, time the model never sees.
warm_up() {  # name
  sh -c : && cat "$work/sqlite.sql" > /dev/null
  case $1 in
    fsync) "$python" -c pass ;;
    sqlite) sqlite3 -version ;;
    tar) tar --version && cat "$tarball" ;;
    rm) rm --version ;;
    cp | cpx) cp --version ;;
  esac > /dev/null
}
set_up() {  # name: what a workload needs in the current directory before it runs
  [[ $1 == rm ]] && tar xf "$tarball" && sync
  [[ $1 == cp || $1 == cpx ]] && mkdir src && tar xf "$tarball" -C src && sync
  return 0
}
# Each workload is recorded RUNS times: a recording is a measurement too (the program's own time
# between calls comes from it; one recording of the whole tarball took 1.9 s and another, on a
# busier host, 3.9 s), so the prediction is the median over the recordings. The replays, which
# count block requests, use the first.
for w in "${wl[@]}"; do
  mkdir -p "$rec/$w"
  for i in $(seq "$runs"); do
    t=$work/$w.iorr
    [[ $i == 1 ]] || t=$work/$w.$i.iorr
    rm -rf "${rec:?}/$w" && mkdir -p "$rec/$w"
    # cpx is recorded on xfs (reflink, mkfs.xfs's default), mounted where the others are
    # recorded: the paths, and so --only, stay the same.
    [[ $w == cpx ]] && bash "$loopfs" mount xfs "$rec/$w" --size "$size" > /dev/null
    # Recorded warm, as the real runs are timed: what the workload reads elsewhere keeps its
    # recorded time in the model (cold, the whole tarball's reads took 2.4 s of a 3.9 s
    # recording).
    warm_up "$w"
    (cd "$rec/$w" && set_up "$w" && workload "$w" "$iorr" record -q -o "$t" --) > /dev/null
    [[ $w == cpx ]] && bash "$loopfs" umount "$rec/$w" > /dev/null
    log "recorded $w ($i of $runs): $("$iorr" stats "$t" | awk '/^events/ {e = $2} /^duration/ {d = $2} END {print e " events, " d " s"}')"
  done
done
rm -rf "$rec"/*  # the recorded prefix: replays and the model count only what happened under it

# ---- 2. Calibrate the device under the loop file systems, on a file system of its own.
bash "$loopfs" mount ext4 "$work/cal" --size "$size" --fill > /dev/null
log "calibrating (on a separate loop-mounted ext4) ..."
"$iorr" calibrate "$work/cal" -o "$work/disk.json" --name loop-on-this-machine --seconds 12 > /dev/null
bash "$loopfs" umount "$work/cal"
for fs in ext4 xfs; do  # the file systems' own CPU per call, also on separate images
  bash "$loopfs" mount "$fs" "$work/cal" --size "$size" --fill > /dev/null
  "$iorr" calibrate "$work/cal" --calls -o "$work/calls-$fs.json" > /dev/null
  bash "$loopfs" umount "$work/cal"
done

# ---- 3. Real runs with block traces, and the model's predictions.
# The ext4 journal mke2fs makes for the image size (ext2fs_default_journal_size).
case $size in 1G) journal_mb=32 ;; 2G|3G|4G|8G|16G) journal_mb=64 ;; *) journal_mb=128 ;; esac
configs=(ext4-barrier ext4-nobarrier xfs-wb xfs-wt)
config_args() {  # config: sets fs, args and barrier
  case $1 in
    ext4-barrier) fs=ext4 args=(--opts barrier=1) barrier=on ;;
    ext4-nobarrier) fs=ext4 args=(--opts barrier=0) barrier=off ;;
    xfs-wb) fs=xfs args=(--write-cache back) barrier=on ;;
    xfs-wt) fs=xfs args=(--write-cache through) barrier=off ;;
  esac
}
: > "$work/results.jsonl"
for w in "${wl[@]}"; do
  # Rounds of the four configurations in turn, so that a drift of the host's own costs (its disk,
  # its page cache) during the runs shows in every configuration alike, not in one's ratio.
  for i in $(seq "$runs"); do
    for c in "${configs[@]}"; do
      config_args "$c"
      # The program itself on the real file system, timed (its set-up is not).
      bash "$loopfs" mount "$fs" "$mnt" --size "$size" --fill "${args[@]}" > /dev/null
      (cd "$mnt" && set_up "$w" > /dev/null && sync && echo 3 > /proc/sys/vm/drop_caches &&
        warm_up "$w" && s=$EPOCHREALTIME && workload "$w" > /dev/null && e=$EPOCHREALTIME &&
        awk -v a="$s" -v b="$e" 'BEGIN {printf "%.6f\n", b - a}') > "$work/real.s"
      bash "$loopfs" umount "$mnt"
      # Its replay, for the block requests the kernel queued.
      bash "$loopfs" mount "$fs" "$mnt" --size "$size" --fill "${args[@]}" > /dev/null
      rc=0
      "$iorr" replay "$work/$w.iorr" --root "$mnt" --only "$rec" --block-trace "$work/bt.iorr" --json \
        > "$work/rep.json" 2> "$work/rep.err" || rc=$?
      [[ $rc -le 1 ]] || log "replay of $w on $c failed (exit $rc): $(tail -1 "$work/rep.err")"
      bash "$loopfs" umount "$mnt"
      "$iorr" model "$work/bt.iorr" --disk "$work/disk.json" --cache on --barrier on --json > "$work/cap.json"
      python3 - "$w" "$c" "$work/rep.json" "$work/cap.json" "$work/real.s" >> "$work/results.jsonl" << 'PY'
import json, sys
w, c, rep, cap, real = sys.argv[1:]
r = json.load(open(rep)); k = json.load(open(cap))["captured"]
print(json.dumps({"kind": "real", "workload": w, "config": c, "seconds": float(open(real).read()),
                  "replay_seconds": r["replay_seconds"],
                  "mismatches": r.get("mismatches"), "flushes": k["flushes"], "fua": k["fua_writes"],
                  "bytes": k["bytes_written"]}))
PY
    done
    log "$w: round $i of $runs done"
  done
  for c in "${configs[@]}"; do
    config_args "$c"
    for t in "$work/$w.iorr" "$work/$w".[0-9]*.iorr; do  # every recording of it
      [[ -f $t ]] || continue
      "$iorr" model "$t" --fs "$fs" --disk "$work/disk.json" --cache on --barrier "$barrier" \
        --only "$rec" --cpu "$work/calls-ext4.json,$work/calls-xfs.json" --journal-mb "$journal_mb" \
        --json > "$work/model.json"
      python3 - "$w" "$c" "$work/model.json" >> "$work/results.jsonl" << 'PY'
import json, sys
w, c, path = sys.argv[1:]
row = json.load(open(path))["rows"][0]
print(json.dumps({"kind": "model", "workload": w, "config": c, "seconds": row["elapsed_s"],
                  "flushes": row["asked_flushes"] if row["barrier"] == "on" else row["flushes"],
                  "fua": row["asked_fua"] if row["barrier"] == "on" else row["fua_writes"],
                  "bytes": row["bytes_written"]}))
PY
    done
  done
done

# ---- 4. The table.
mkdir -p "$out"
cp "$work/disk.json" "$work"/calls-*.json "$out/"
cp "$work/results.jsonl" "$out/results.jsonl"
python3 - "$work/results.jsonl" "$runs" "$out/disk.validation.json" "$all_args" << 'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
runs = int(sys.argv[2])
validation_path, args = sys.argv[3], sys.argv[4]
def err(p, m):
    return "   n/a" if m == 0 else f"{100 * (p - m) / m:+6.0f}%"
real, model = {}, {}
for r in rows:
    key = (r["workload"], r["config"])
    (real if r["kind"] == "real" else model).setdefault(key, []).append(r)
# The prediction: the model of the recording whose predicted time is the median.
model = {k: sorted(v, key=lambda r: r["seconds"])[(len(v) - 1) // 2] for k, v in model.items()}
print(f"{'workload':8} {'config':15} {'real s':>8} {'model s':>8} {'err':>7}  {'flushes r/m':>13} {'fua r/m':>11} "
      f"{'data MB r/m':>13} {'journal MB r/m':>15} {'meta MB r/m':>13}")
ratio = {}
for key in sorted(real, key=lambda k: (k[0], k[1])):
    rs, m = real[key], model[key]
    med = lambda f: statistics.median(f(x) for x in rs)
    s = med(lambda x: x["seconds"])
    ratio.setdefault(key[0], {})[key[1]] = (s, m["seconds"])
    mb = lambda d, k: d["bytes"][k] / 1e6
    print(f"{key[0]:8} {key[1]:15} {s:8.3f} {m['seconds']:8.3f} {err(m['seconds'], s):>7}  "
          f"{med(lambda x: x['flushes']):>6.0f}/{m['flushes']:<6} {med(lambda x: x['fua']):>5.0f}/{m['fua']:<5} "
          f"{med(lambda x: mb(x, 'data')):>6.1f}/{mb(m, 'data'):<6.1f} {med(lambda x: mb(x, 'journal')):>7.1f}/{mb(m, 'journal'):<7.1f} "
          f"{med(lambda x: mb(x, 'metadata')):>6.1f}/{mb(m, 'metadata'):<6.1f}")
    bad = [x["mismatches"] for x in rs if x["mismatches"]]
    if bad: print(f"  warning: replay mismatches {bad}")
print(f"\nbarrier on / off time ratio (real = median of {runs} runs, model = median over {runs} recordings;"
      " target: predicted within 25% of measured)")
for w, cs in sorted(ratio.items()):
    for on, off in (("ext4-barrier", "ext4-nobarrier"), ("xfs-wb", "xfs-wt")):
        if on in cs and off in cs:
            rr = cs[on][0] / cs[off][0]; mr = cs[on][1] / cs[off][1]
            print(f"  {w:8} {on.split('-')[0]:5} real {rr:6.2f}  model {mr:6.2f}  {err(mr, rr)}")

# The validation file: per model row (fs x cache x barrier), the largest time error and flush
# count error over the workloads (signed, as fractions of the measured figure).
which = {"ext4-barrier": ("ext4", "on", "on"), "ext4-nobarrier": ("ext4", "on", "off"),
         "xfs-wb": ("xfs", "on", "on"), "xfs-wt": ("xfs", "on", "off")}
vrows = []
for config, (fs, cache, barrier) in which.items():
    te, fe, ws = 0.0, 0.0, []
    for (w, c), rs in real.items():
        if c != config: continue
        m = model[(w, c)]
        s = statistics.median(x["seconds"] for x in rs)
        f = statistics.median(x["flushes"] for x in rs)
        t_err = (m["seconds"] - s) / s if s else 0.0
        f_err = (m["flushes"] - f) / f if f else (0.0 if m["flushes"] == 0 else 1.0)
        te = t_err if abs(t_err) > abs(te) else te
        fe = f_err if abs(f_err) > abs(fe) else fe
        ws.append(w)
    if ws:
        vrows.append({"fs": fs, "cache": cache, "barrier": barrier, "time_error": round(te, 4),
                      "flush_error": round(fe, 4), "workloads": ws})
json.dump({"profile": "loop-on-this-machine", "command": "tools/bench/model-vs-real.sh " + args,
           "runs": runs, "rows": vrows}, open(validation_path, "w"), indent=1)
print(f"\nwrote {validation_path}: iorr model --disk {validation_path.replace('.validation.json', '.json')} marks these rows validated")
PY
