#!/usr/bin/env bash
# Block traces out and in: a hand-written block trace (JSON lines) is exported as blkparse text
# and as fio iologs, checked line for line; the text imported back gives the same events; other
# blkparse actions and the summary are skipped; bad blkparse input exits 2 and writes no trace.
# When blkparse and python3 are installed, a binary blktrace made here goes through the real
# blkparse, and iorr must import its lines and print them back the same; when fio and python3
# are, fio replays the iolog onto a file. Neither is required.
# Usage: block_export_test.sh IORR_BINARY
set -euo pipefail
iorr=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() {
  echo "FAIL: $*"
  exit 1
}

# Queue, issue and completion of a write; an empty flush (PREFLUSH bio, flush request, failed
# completion); a journal commit (PREFLUSH|FUA); readahead; discard; secure erase and write
# zeroes (no fio action); a second device, more than 10 s in, with an empty command; and one
# file-system call that is not a block event.
cat > orig.jsonl <<'EOF'
{"iorr_header":{"version":1,"time_unit_ns":1000,"start_mono_ns":5000000000,"start_wall_ns":1700000000000000000,"fields":[["source","replay"],["block.device","/dev/loop0"],["block.dev","7:0"]]}}
{"pid":0,"tid":1,"call":"block","start_ns":0,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(7, 0)","sector":2048,"bytes":4096,"op":"BLK_WRITE|BLK_SYNC","comm":"tar"}}
{"pid":0,"tid":1,"call":"block","start_ns":250000,"ret":0,"args":{"phase":"BLK_ISSUE","dev":"makedev(7, 0)","sector":2048,"bytes":4096,"op":"BLK_WRITE|BLK_SYNC","comm":"kworker/0:1H"}}
{"pid":100,"tid":100,"call":"openat","start_ns":500000,"end_ns":501000,"ret":3,"args":{"dirfd":"AT_FDCWD","path":"a","flags":"O_RDONLY","mode":0}}
{"pid":0,"tid":1,"call":"block","start_ns":1000000,"ret":0,"args":{"phase":"BLK_COMPLETE","dev":"makedev(7, 0)","sector":2048,"bytes":4096,"op":"BLK_WRITE|BLK_SYNC","comm":null}}
{"pid":0,"tid":1,"call":"block","start_ns":2000000,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(7, 0)","sector":0,"bytes":0,"op":"BLK_PREFLUSH|BLK_WRITE|BLK_SYNC","comm":"jbd2/loop0-8"}}
{"pid":0,"tid":1,"call":"block","start_ns":2001000,"ret":0,"args":{"phase":"BLK_ISSUE","dev":"makedev(7, 0)","sector":0,"bytes":0,"op":"BLK_PREFLUSH|BLK_FLUSH","comm":"kworker/0:1H"}}
{"pid":0,"tid":1,"call":"block","start_ns":2500000,"ret":-1,"errno":"EIO","args":{"phase":"BLK_COMPLETE","dev":"makedev(7, 0)","sector":0,"bytes":0,"op":"BLK_PREFLUSH|BLK_FLUSH","comm":null}}
{"pid":0,"tid":1,"call":"block","start_ns":3000000,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(7, 0)","sector":100,"bytes":8192,"op":"BLK_PREFLUSH|BLK_WRITE|BLK_FUA|BLK_SYNC|BLK_META","comm":"jbd2/loop0-8"}}
{"pid":0,"tid":1,"call":"block","start_ns":3100000,"ret":0,"args":{"phase":"BLK_ISSUE","dev":"makedev(7, 0)","sector":100,"bytes":8192,"op":"BLK_WRITE|BLK_FUA|BLK_SYNC|BLK_META","comm":"kworker/0:1H"}}
{"pid":0,"tid":1,"call":"block","start_ns":4000000,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(7, 0)","sector":300,"bytes":16384,"op":"BLK_READ|BLK_RAHEAD","comm":null}}
{"pid":0,"tid":1,"call":"block","start_ns":5000000,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(7, 0)","sector":4096,"bytes":1048576,"op":"BLK_DISCARD","comm":"fstrim"}}
{"pid":0,"tid":1,"call":"block","start_ns":6000000,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(7, 0)","sector":8192,"bytes":4096,"op":"BLK_SECURE_ERASE","comm":"blkdiscard"}}
{"pid":0,"tid":1,"call":"block","start_ns":7000000,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(7, 0)","sector":9000,"bytes":4096,"op":"BLK_OTHER","comm":"Web Content"}}
{"pid":0,"tid":1,"call":"block","start_ns":12345678000,"ret":0,"args":{"phase":"BLK_QUEUE","dev":"makedev(259, 12)","sector":2048,"bytes":4096,"op":"BLK_WRITE","comm":""}}
EOF
"$iorr" import jsonl orig.jsonl -o orig.iorr

# ---- export blkparse ----
cat > want.blk <<'EOF'
  7,0    0        1     0.000000000     0  Q  WS 2048 + 8 [tar]
  7,0    0        2     0.000250000     0  D  WS 2048 + 8 [kworker/0:1H]
  7,0    0        3     0.001000000     0  C  WS 2048 + 8 [0]
  7,0    0        4     0.002000000     0  Q FWS [jbd2/loop0-8]
  7,0    0        5     0.002001000     0  D  FF [kworker/0:1H]
  7,0    0        6     0.002500000     0  C  FF 0 [65531]
  7,0    0        7     0.003000000     0  Q FWFSM 100 + 16 [jbd2/loop0-8]
  7,0    0        8     0.003100000     0  D WFSM 100 + 16 [kworker/0:1H]
  7,0    0        9     0.004000000     0  Q  RA 300 + 32 [(null)]
  7,0    0       10     0.005000000     0  Q   D 4096 + 2048 [fstrim]
  7,0    0       11     0.006000000     0  Q  DE 8192 + 8 [blkdiscard]
  7,0    0       12     0.007000000     0  Q   N 9000 + 8 [Web Content]
259,12   0       13    12.345678000     0  Q   W 2048 + 8 []
EOF
"$iorr" export blkparse orig.iorr -o got.blk 2> err
diff -u want.blk got.blk || fail "export blkparse: unexpected text"
[[ ! -e got.blk.tmp ]] || fail "export blkparse left got.blk.tmp"
grep -qx "iorr: exported 13 block events, 1 non-block events skipped" err ||
  fail "export blkparse: no count of the skipped event: $(cat err)"
"$iorr" export blkparse -q orig.iorr > stdout.blk 2> err
cmp want.blk stdout.blk || fail "export blkparse to stdout differs from -o"
[[ ! -s err ]] || fail "export blkparse -q printed: $(cat err)"
echo "ok: export blkparse"

# ---- import blkparse: the round trip ----
blocks() { "$iorr" dump --json "$1" | grep '"call":"block"'; }
blocks orig.iorr > orig.events
"$iorr" import blkparse got.blk -o rt.iorr 2> err
grep -q "imported 13 lines: 13 block events (Q 8, D 3, C 2)" err || fail "import summary: $(cat err)"
blocks rt.iorr > rt.events
diff -u orig.events rt.events || fail "blkparse round trip changed the block events"
[[ $("$iorr" dump --json rt.iorr | grep -c .) -eq 14 ]] || fail "round trip: extra lines in the trace"
header=$("$iorr" dump --json rt.iorr | head -n 1)
for field in '["source","blkparse"]' '["block.device","/dev/block/7:0"]' '["block.dev","7:0"]'; do
  [[ $header == *"$field"* ]] || fail "imported header lacks $field: $header"
done
"$iorr" import blkparse -q --time-unit 1000 --device /dev/loop0 got.blk -o rt2.iorr
diff -u orig.events <(blocks rt2.iorr) || fail "round trip with --time-unit 1000 changed the events"
"$iorr" dump --json rt2.iorr | sed -n 1p | grep -qF '["block.device","/dev/loop0"]' ||
  fail "--device did not set block.device"
"$iorr" import blkparse -q - -o rt3.iorr < got.blk
diff -u orig.events <(blocks rt3.iorr) || fail "import from stdin differs"
echo "ok: blkparse round trip"

# Other actions, messages and blkparse's summary (as blkparse 1.2.0 prints them) are skipped;
# blkparse -t's elapsed times and CRLF line ends are read.
{
  head -n 1 want.blk
  cat <<'EOF'
  7,0    0        2     0.000000100  1234  G  WS 2048 + 8 [tar]
  7,0    0        3     0.000000200  1234  P   N [tar]
  7,0    0        4     0.000000300  1234  I  WS 2048 + 8 [tar]
  7,0    0        5     0.000000400  1234  U   N [tar] 1
  7,0    0        0     0.000000450     0  m   N cfq workload slice:100

EOF
  sed -n 2p want.blk | sed 's/\[kworker/(  249500) [kworker/'
  sed -n '3,12p' want.blk | sed 's/$/\r/'
  cat <<'EOF'
  7,0    0       12     0.007000500   321  M  WS 116 + 8 [jbd2/loop0-8]
EOF
  tail -n 1 want.blk
  printf 'CPU0 (loop0):\n Reads Queued:           2,     1040KiB\t Writes Queued:           3,       12KiB\n'
  printf ' Read depth:             1        \t Write depth:             1\n\n'
  printf 'Total (loop0):\n Reads Queued:           2,     1040KiB\t Writes Queued:           3,       12KiB\n\n'
  printf 'Throughput (R/W): 0KiB/s / 0KiB/s\nEvents (loop0): 19 entries\nSkips: 0 forward (0 -   0.0%%)\n'
  printf 'Input file loop0.blktrace.0 added\n'
} > mixed.blk
"$iorr" import blkparse mixed.blk -o mixed.iorr 2> err
grep -q "6 lines of other actions skipped (G 1, I 1, M 1, P 1, U 1, m 1), 9 summary lines skipped" err ||
  fail "other actions or summary not counted: $(cat err)"
cmp <("$iorr" dump --json rt.iorr) <("$iorr" dump --json mixed.iorr) ||
  fail "other actions, -t or the summary changed the imported trace"
echo "ok: other actions and summary skipped"

# ---- bad blkparse input: exit 2, one line with the line number, no trace ----
expect_bad() {  # name, expected line number; input in $1.blk
  local rc=0
  "$iorr" import blkparse "$1.blk" -o "$1.iorr" 2> "$1.err" || rc=$?
  [[ $rc -eq 2 ]] || fail "$1: exit $rc, not 2"
  [[ $(wc -l < "$1.err") -eq 1 ]] || fail "$1: not one line: $(cat "$1.err")"
  grep -q "^iorr: $1.blk:$2: " "$1.err" || fail "$1: no line number $2: $(cat "$1.err")"
  [[ ! -e $1.iorr && ! -e $1.iorr.tmp ]] || fail "$1: a trace was left behind"
}
{ head -n 2 want.blk; echo "this is not blkparse output"; tail -n +3 want.blk; } > garbage.blk
expect_bad garbage 3
{ head -n 4 want.blk; head -n 5 want.blk | tail -n 1 | cut -c 1-30; } > truncated.blk
expect_bad truncated 5
sed '7s/FWFSM/FXW/' want.blk > rwbs.blk
expect_bad rwbs 7
sed '3s/\[0\]/[tar]/' want.blk > error.blk
expect_bad error 3
sed '9s/ + 32 / + /' want.blk > sectors.blk
expect_bad sectors 9
printf '\0\1\2binary\n' > binary.blk
expect_bad binary 1
# --lenient: skipped, counted, reported and noted in the trace.
"$iorr" import blkparse --lenient garbage.blk -o lenient.iorr 2> err
grep -q "1 bad lines skipped" err || fail "--lenient: bad line not counted: $(cat err)"
grep -q "garbage.blk: line 3: " err || fail "--lenient: bad line not reported: $(cat err)"
diff -u orig.events <(blocks lenient.iorr 2>/dev/null) || fail "--lenient lost events"
"$iorr" dump lenient.iorr 2>/dev/null | grep -q "^# note: imported from blkparse: .*1 bad lines skipped" ||
  fail "--lenient: no note in the trace"
echo "ok: bad blkparse input"

# ---- export fio ----
cat > want.fio <<'EOF'
fio version 3 iolog
1 /dev/loop0 add
1 /dev/loop0 open
1 /dev/loop0 write 1048576 4096
2000 /dev/loop0 sync 0 0
3000 /dev/loop0 sync 0 0
3000 /dev/loop0 write 51200 8192
3000 /dev/loop0 sync 0 0
4000 /dev/loop0 read 153600 16384
5000 /dev/loop0 trim 2097152 1048576
12345678 /dev/loop0 write 1048576 4096
12345678 /dev/loop0 close
EOF
"$iorr" export fio orig.iorr -o got.fio 2> err
diff -u want.fio got.fio || fail "export fio: unexpected iolog"
grep -q "2 secure-erase or other requests skipped" err || fail "export fio: skips not counted: $(cat err)"
cat > want-issue.fio <<'EOF'
fio version 3 iolog
250 /dev/sdb add
250 /dev/sdb open
250 /dev/sdb write 1048576 4096
2001 /dev/sdb sync 0 0
3100 /dev/sdb write 51200 8192
3100 /dev/sdb close
EOF
diff -u want-issue.fio <("$iorr" export fio -q --phase issue --fua drop --device /dev/sdb orig.iorr) ||
  fail "export fio --phase issue --fua drop: unexpected iolog"
diff -u <(sed 's,/dev/sdb,/dev/loop0,; /3100 .* write/a 3100 /dev/loop0 sync 0 0' want-issue.fio) \
  <("$iorr" export fio -q --phase issue orig.iorr) || fail "export fio --phase issue: unexpected iolog"
# Without a block.device header the file is /dev/loop0; a trace without block events still
# gives a valid iolog.
"$iorr" export fio -q rt.iorr | sed -n 2p | grep -qx "1 /dev/block/7:0 add" ||
  fail "export fio: block.device header not used"
grep -v '"call":"block"' orig.jsonl | sed 's/\["block.device","\/dev\/loop0"\],//' > noblock.jsonl
"$iorr" import jsonl noblock.jsonl -o noblock.iorr
diff -u <(printf 'fio version 3 iolog\n1 /dev/loop0 add\n1 /dev/loop0 open\n1 /dev/loop0 close\n') \
  <("$iorr" export fio -q noblock.iorr) || fail "export fio of a trace without block events"
rc=0
"$iorr" export fio -q --device "/dev/with space" orig.iorr > /dev/null 2> err || rc=$?
[[ $rc -eq 2 ]] || fail "export fio: a device name with a space was accepted"
echo "ok: export fio"

# ---- export jsonl is dump --json ----
cmp <("$iorr" dump --json orig.iorr) <("$iorr" export jsonl orig.iorr) || fail "export jsonl != dump --json"
"$iorr" export jsonl orig.iorr -o got.jsonl
cmp <("$iorr" dump --json orig.iorr) got.jsonl || fail "export jsonl -o differs"
# A damaged trace (a chunk's checksum fails): exit 2 and no output file.
cp orig.iorr damaged.iorr
printf '\xa5' | dd of=damaged.iorr bs=1 seek=200 conv=notrunc status=none
for format in jsonl blkparse fio; do
  rc=0
  "$iorr" export $format damaged.iorr -o damaged.$format 2> /dev/null || rc=$?
  [[ $rc -eq 2 ]] || fail "export $format of a damaged trace: exit $rc"
  [[ ! -e damaged.$format && ! -e damaged.$format.tmp ]] || fail "export $format left a file"
done
echo "ok: export jsonl, damaged traces"

# ---- the real blkparse (optional) ----
if command -v blkparse > /dev/null && command -v python3 > /dev/null; then
  # A binary blktrace (struct blk_io_trace of linux/blktrace_api.h, native endian): names for
  # three pids, then Q G P I U D C of a write, an empty flush, a PREFLUSH|FUA write, a back
  # merge, readahead of a pid without a name, a discard, a message, a FUA completion at 7 s.
  python3 - > loop0.blktrace.0 <<'EOF'
import struct, sys
magic = 0x65617400 | 7
cat = {'R': 1, 'W': 2, 'F': 4, 'S': 8, 'Q': 16, 'I': 64, 'C': 128, 'N': 1 << 10, 'A': 1 << 11,
       'M': 1 << 12, 'D': 1 << 13, 'U': 1 << 15}
dev = (7 << 20) | 0
out = bytearray()
seq = 0
def ev(ns, act, cats, sector, nbytes, pid, error=0, pdu=b''):
    global seq
    seq += 1
    for c in cats:
        act |= cat[c] << 16
    out.extend(struct.pack('=IIQQIIIIIHH', magic, seq, ns, sector, nbytes, act, pid, dev, 0,
                           error, len(pdu)) + pdu)
def note(ns, what, pid, pdu):
    out.extend(struct.pack('=IIQQIIIIIHH', magic, 0, ns, 0, 0, what | cat['N'] << 16, pid, dev,
                           0, 0, len(pdu)) + pdu)
for pid, comm in ((1234, 'tar'), (321, 'jbd2/loop0-8'), (55, 'kworker/0:1H')):
    note(0, 0, pid, comm.encode().ljust(16, b'\0'))
ev(1000, 1, 'QWS', 2048, 4096, 1234)
ev(1100, 4, 'QWS', 2048, 4096, 1234)
ev(1200, 9, 'Q', 0, 0, 1234)
ev(1300, 12, 'QWS', 2048, 4096, 1234)
ev(1400, 10, 'Q', 0, 0, 1234, pdu=struct.pack('>Q', 1))
ev(1500, 7, 'IWS', 2048, 4096, 55)
ev(250000, 8, 'CWS', 2048, 4096, 0)
ev(2000000, 1, 'QWSF', 0, 0, 321)
ev(2001000, 7, 'IF', 0, 0, 55)
ev(2500000, 8, 'CF', 0, 0, 0, error=65531)
ev(3000000, 1, 'QWFSUM', 100, 8192, 321)
ev(3000500, 2, 'QWS', 116, 4096, 321)
ev(4000000, 1, 'QRA', 300, 16384, 999)
ev(5000000, 1, 'QD', 4096, 1048576, 1234)
note(5500000, 2, 0, b'hello')
ev(7000000000, 8, 'CWUSM', 100, 12288, 0)
sys.stdout.buffer.write(out)
EOF
  blkparse -i loop0 > real.txt 2> /dev/null
  [[ $(grep -cE '^ +7,0 .* [QDC] ' real.txt) -eq 10 ]] || fail "blkparse printed: $(cat real.txt)"
  "$iorr" import blkparse -q real.txt -o real.iorr
  "$iorr" export blkparse -q real.iorr > ours.txt
  # Equal but for the sequence numbers (iorr counts its lines) and the pids (not kept).
  events() {
    grep -E '^ *[0-9]+,[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9]+ +[QDC] ' "$1" |
      sed -E 's/^(.{11}).{8}(.{17}).{5}/\1........\2...../'
  }
  diff -u <(events real.txt) <(events ours.txt) || fail "iorr does not print blkparse's lines back"
  [[ $(wc -l < ours.txt) -eq 10 ]] || fail "export of blkparse's events has extra lines"
  echo "ok: $(blkparse -V 2>&1 | head -n 1): lines read and printed back the same"
else
  echo "skip: blkparse or python3 is not installed"
fi

# ---- fio replays the iolog (optional) ----
if command -v fio > /dev/null && command -v python3 > /dev/null; then
  truncate -s 16M disk.img
  # fio 3.33 parses trims but does not replay them, and a trim of a file depends on the engine.
  grep -v ' trim ' got.fio > replay.fio
  fio --name=replay --read_iolog=replay.fio --replay_redirect="$work/disk.img" --ioengine=psync \
    --replay_no_stall=1 --output-format=json > fio.json 2> fio.err || fail "fio failed: $(cat fio.err)"
  python3 - fio.json <<'EOF' || fail "fio did not replay what the iolog says"
import json, sys
job = json.load(open(sys.argv[1]))['jobs'][0]
got = (job['write']['total_ios'], job['write']['io_bytes'], job['read']['total_ios'],
       job['read']['io_bytes'], job['sync']['total_ios'])
want = (3, 16384, 1, 16384, 3)
print(f"fio replayed writes, bytes, reads, bytes, syncs = {got}")
sys.exit(0 if got == want else 1)
EOF
  echo "ok: $(fio --version) replays the iolog"
else
  echo "skip: fio or python3 is not installed"
fi
echo "1 passed, 0 failed"
