#!/usr/bin/env bash
# iorr report end to end, on a hand-written trace (iorr import jsonl): the page holds the figures
# iorr stats gives, the call mix with the right percentiles, the files as fds name them across a
# fork, a dup and a chdir, the processes, errors and notes; it is well formed, self-contained and
# valid UTF-8, and a hostile name comes out escaped; --replay shows a real replay report's
# figures, --disk the model table iorr model --json gives; bad input exits 2 with one line on
# stderr and leaves no page.
# Usage: report_test.sh IORR_BIN
set -uo pipefail
iorr=$1
command -v python3 > /dev/null || { echo "SKIP: python3 is missing"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/iorr-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

# Process 10 opens out.log and forks 11, which execs, writes out.log through the inherited fd
# and a dup of it, changes directory and writes sub/rel (nine writes of 1 to 9 us, three
# fsyncs), writes a pipe from a second thread, fails three times, and creates a file whose name
# is markup and another with bytes that are not UTF-8. Process 10 reads an fd it never opened.
cat > in.jsonl << 'EOF'
{"iorr_header":{"version":1,"time_unit_ns":1000,"start_mono_ns":0,"start_wall_ns":0,"fields":[["cwd","/w"],["cmdline","sh -c 'make <all>'"],["tool","hand-written"]]}}
{"pid":10,"tid":10,"call":"openat","start_ns":1000,"end_ns":2000,"ret":3,"args":{"dirfd":"AT_FDCWD","path":"out.log","flags":"O_WRONLY|O_CREAT|O_TRUNC","mode":"0644"}}
{"pid":10,"tid":10,"call":"write","start_ns":3000,"end_ns":4000,"ret":100,"args":{"fd":3,"count":100}}
{"pid":10,"tid":10,"call":"fork","start_ns":5000,"end_ns":6000,"ret":11}
{"pid":11,"tid":11,"call":"execve","start_ns":7000,"end_ns":8000,"ret":0,"args":{"pathname":"/usr/bin/child"}}
{"pid":11,"tid":11,"call":"write","start_ns":9000,"end_ns":10000,"ret":200,"args":{"fd":3,"count":200}}
{"pid":11,"tid":11,"call":"dup","start_ns":11000,"end_ns":12000,"ret":5,"args":{"oldfd":3}}
{"pid":11,"tid":11,"call":"write","start_ns":13000,"end_ns":14000,"ret":50,"args":{"fd":5,"count":50}}
{"pid":11,"tid":11,"call":"mkdir","start_ns":14000,"end_ns":15000,"ret":0,"args":{"path":"sub","mode":"0755"}}
{"pid":11,"tid":11,"call":"chdir","start_ns":15000,"end_ns":16000,"ret":0,"args":{"path":"sub"}}
{"pid":11,"tid":11,"call":"openat","start_ns":20000,"end_ns":21000,"ret":4,"args":{"dirfd":"AT_FDCWD","path":"rel","flags":"O_WRONLY|O_CREAT","mode":"0644"}}
{"pid":11,"tid":11,"call":"write","start_ns":22000,"end_ns":23000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"write","start_ns":24000,"end_ns":26000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"write","start_ns":27000,"end_ns":30000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"fsync","start_ns":31000,"end_ns":5031000,"ret":0,"args":{"fd":4}}
{"pid":11,"tid":11,"call":"write","start_ns":5032000,"end_ns":5036000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"write","start_ns":5037000,"end_ns":5042000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"write","start_ns":5043000,"end_ns":5049000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"fsync","start_ns":5050000,"end_ns":10050000,"ret":0,"args":{"fd":4}}
{"pid":11,"tid":11,"call":"write","start_ns":10051000,"end_ns":10058000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"write","start_ns":10059000,"end_ns":10067000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"write","start_ns":10068000,"end_ns":10077000,"ret":1000,"args":{"fd":4,"count":1000}}
{"pid":11,"tid":11,"call":"fsync","start_ns":10078000,"end_ns":15078000,"ret":0,"args":{"fd":4}}
{"pid":11,"tid":11,"call":"close","start_ns":15079000,"end_ns":15080000,"ret":0,"args":{"fd":4}}
{"pid":11,"tid":11,"call":"pipe2","start_ns":15081000,"end_ns":15082000,"ret":0,"args":{"fds":"[6, 7]","flags":0}}
{"pid":11,"tid":12,"call":"write","start_ns":15083000,"end_ns":15084000,"ret":64,"args":{"fd":7,"count":64}}
{"pid":11,"tid":11,"call":"openat","start_ns":15085000,"end_ns":15086000,"ret":-1,"errno":"ENOENT","args":{"dirfd":"AT_FDCWD","path":"missing","flags":"O_RDONLY","mode":0}}
{"pid":11,"tid":11,"call":"stat","start_ns":15087000,"end_ns":15088000,"ret":-1,"errno":"ENOENT","args":{"path":"/nope"}}
{"pid":11,"tid":11,"call":"openat","start_ns":15089000,"end_ns":15090000,"ret":-1,"errno":"ENOTDIR","args":{"dirfd":"AT_FDCWD","path":"/w/out.log/x","flags":"O_RDONLY","mode":0}}
{"pid":11,"tid":11,"call":"openat","start_ns":15091000,"end_ns":15092000,"ret":8,"args":{"dirfd":"AT_FDCWD","path":"/w/<script>alert(1)</script>","flags":"O_WRONLY|O_CREAT","mode":"0644"}}
{"pid":11,"tid":11,"call":"write","start_ns":15093000,"end_ns":15094000,"ret":7,"args":{"fd":8,"count":7}}
{"pid":11,"tid":11,"call":"close","start_ns":15095000,"end_ns":15096000,"ret":0,"args":{"fd":8}}
{"pid":11,"tid":11,"call":"openat","start_ns":15097000,"end_ns":15098000,"ret":8,"args":{"dirfd":"AT_FDCWD","path":"/w/odd\u00ff\u0001\"&'name","flags":"O_WRONLY|O_CREAT","mode":"0644"}}
{"pid":11,"tid":11,"call":"close","start_ns":15099000,"end_ns":15100000,"ret":0,"args":{"fd":8}}
{"pid":11,"tid":11,"call":"exit_group","start_ns":15101000,"end_ns":15101000,"ret":0,"args":{"status":0}}
{"pid":10,"tid":10,"call":"read","start_ns":15200000,"end_ns":15201000,"ret":10,"args":{"fd":0,"count":4096}}
{"pid":10,"tid":10,"call":"exit_group","start_ns":15300000,"end_ns":15300000,"ret":0,"args":{"status":0}}
{"iorr_note":"escape 11: stores through a shared writable mapping (fd 9) are not recorded"}
{"iorr_note":"writer-thread 10 13"}
EOF
"$iorr" import jsonl in.jsonl -o t.iorr 2> import.err || { echo "FAIL: import: $(cat import.err)"; exit 1; }

# Tables of a page as lists of rows of cell texts, a well-formedness check, and the SVG bars.
cat > page.py << 'PY'
import html.parser, re, sys

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "area", "base", "source"}

class Page(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.tables, self.ids, self.hrefs, self.titles = [], [], [], set(), [], []
        self.cell = None
        self.in_title = False
        self.feed(text)
        self.close()
        if self.stack:
            self.errors.append("unclosed: " + " ".join(self.stack))

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        for k in a:
            if k.startswith("on") or k in ("src", "srcset", "action", "formaction"):
                self.errors.append("attribute %s on <%s>" % (k, tag))
        if tag in ("script", "iframe", "object", "embed", "link", "img", "form"):
            self.errors.append("element <%s>" % tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""
        elif tag == "title" and self.stack and self.stack[-1] == "rect":
            self.in_title = True
            self.titles.append("")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag not in VOID and tag not in ("line", "rect", "path", "circle"):
            self.errors.append("self-closed <%s/>" % tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else ""))
            return
        self.stack.pop()
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell.strip())
            self.cell = None
        if tag == "title":
            self.in_title = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.in_title:
            self.titles[-1] += data

    def table(self, first_header):
        """The rows (as dicts by header) of the first table whose first header cell is given."""
        for t in self.tables:
            if t and t[0] and t[0][0] == first_header:
                return [dict(zip(t[0], r)) for r in t[1:]]
        raise KeyError("no table headed " + first_header)

    def pairs(self):
        """Every two-cell row of every table, as a dict."""
        return {r[0]: r[1] for t in self.tables for r in t if len(r) == 2}

    def bars(self, label):
        total = 0
        for t in self.titles:
            m = re.search(r": %s: ([\d,]+)" % re.escape(label), t)
            if m:
                total += int(m.group(1).replace(",", ""))
        return total

def load(path):
    raw = open(path, "rb").read()
    return raw, Page(raw.decode("utf-8"))

def num(s):
    return int(s.replace(",", "").split()[0])
PY

"$iorr" report t.iorr -o page.html > out.txt 2> err.txt
rc=$?
if [[ $rc -eq 0 && -s page.html && ! -s err.txt && ! -e page.html.tmp ]]; then ok "report written, nothing on stderr"
else fail "report: exit $rc, stderr: $(cat err.txt)"; fi

python3 - page.html << 'PY' && ok "well formed, self-contained, valid UTF-8, anchors resolve" || fail "page structure"
import sys; sys.path.insert(0, ".")
from page import load
raw, p = load(sys.argv[1])  # decode("utf-8") raises on invalid UTF-8
assert not p.errors, p.errors
assert raw.startswith(b"<!DOCTYPE html>"), raw[:40]
assert b'<meta charset="utf-8">' in raw
for bad in (b"<script", b"http://", b"https://", b"url(", b"@import", b"javascript:"):
    if bad == b"http://":  # only the SVG namespace
        assert raw.count(bad) == raw.count(b'xmlns="http://www.w3.org/2000/svg"'), bad
    else:
        assert bad not in raw.lower(), bad
for h in p.hrefs:
    assert h.startswith("#") and h[1:] in p.ids, h
assert raw.count(b"<svg") == 2, raw.count(b"<svg")
PY

"$iorr" stats t.iorr --json > stats.json || fail "stats"
python3 - page.html stats.json << 'PY' && ok "summary equals iorr stats: events, processes, threads, duration, bytes" || fail "summary against stats"
import json, sys; sys.path.insert(0, ".")
from page import load, num
_, p = load(sys.argv[1])
s = json.load(open(sys.argv[2]))
kv = p.pairs()
assert num(kv["events"]) == s["events"] == 36, (kv["events"], s["events"])
assert num(kv["processes"]) == s["processes"] == 2, kv["processes"]
assert num(kv["threads"]) == s["threads"] == 3, kv["threads"]
assert num(kv["bytes written"]) == s["bytes_written"] == 9421, kv["bytes written"]
assert num(kv["bytes read"]) == s["bytes_read"] == 10, kv["bytes read"]
assert abs(float(kv["duration"].split()[0]) - s["duration_ns"] / 1e9) < 1e-6, kv["duration"]
assert num(kv["failed calls"]) == sum(s["errors"].values()) == 3, kv["failed calls"]
assert kv["command line"] == "sh -c 'make <all>'", kv["command line"]
assert kv["resolution"] == "1,000 ns", kv["resolution"]
PY

python3 - page.html in.jsonl << 'PY' && ok "call mix: counts, errors, p50 and p99 as replay ranks them, max" || fail "call mix"
import json, sys; sys.path.insert(0, ".")
from page import load, num
_, p = load(sys.argv[1])
calls = {r["call"]: r for r in p.table("call")}
events = [json.loads(l) for l in open(sys.argv[2]) if '"call"' in l]
for name in ("write", "openat", "fsync", "close"):
    mine = [e for e in events if e["call"] == name]
    d = sorted((e["end_ns"] - e["start_ns"]) / 1000 for e in mine)
    rank = lambda q: d[int(q * (len(d) - 1) + 0.5)]
    r = calls[name]
    assert num(r["count"]) == len(mine), (name, r)
    assert num(r["errors"]) == sum(1 for e in mine if "errno" in e), (name, r)
    # fsyncs take 5,000 us: above 64 units, within 1.6%
    tol = 0.016 * rank(0.5)
    assert abs(float(r["p50 µs"]) - rank(0.5)) <= tol, (name, r, rank(0.5))
    assert abs(float(r["p99 µs"]) - rank(0.99)) <= 0.016 * rank(0.99), (name, r, rank(0.99))
    assert float(r["max µs"]) == d[-1], (name, r)
# 14 writes: six of 1 us, then 2 to 9 us
assert calls["write"]["p50 µs"] == "3.0" and calls["write"]["p99 µs"] == "9.0", calls["write"]
assert calls["fsync"]["p50 µs"] == "5000.0", calls["fsync"]
PY

python3 - page.html << 'PY' && ok "files: bytes through an inherited fd and a dup, a path after chdir, a pipe, an fd never opened" || fail "files"
import sys; sys.path.insert(0, ".")
from page import load, num
_, p = load(sys.argv[1])
top = {r["file"]: r for r in p.table("file")}  # by bytes written
assert list(top)[0] == "/w/sub/rel" and num(top["/w/sub/rel"]["bytes written"]) == 9000, top
assert num(top["/w/out.log"]["bytes written"]) == 350, top["/w/out.log"]
assert num(top["/w/out.log"]["calls"]) == 5, top["/w/out.log"]  # open, 3 writes, dup
assert num(top["(pipe)"]["bytes written"]) == 64, top
assert num(top["/w/<script>alert(1)</script>"]["bytes written"]) == 7, top
tables = [t for t in p.tables if t and t[0] and t[0][0] == "file"]
by_calls = {r[0]: r for r in tables[1][1:]}
assert num(by_calls["/w/sub/rel"][1]) == 14, by_calls["/w/sub/rel"]  # open, 9 writes, 3 fsyncs, close
assert num(by_calls["(fd 0, not opened in the trace)"][4]) == 10, by_calls
PY

python3 - page.html << 'PY' && ok "processes (parent, exec'd program, threads), errors by errno, timeline sums" || fail "processes, errors, timeline"
import sys; sys.path.insert(0, ".")
from page import load, num
_, p = load(sys.argv[1])
procs = {r["pid"]: r for r in p.table("pid")}
assert procs["11"]["parent"] == "10" and procs["11"]["program"] == "/usr/bin/child", procs["11"]
assert num(procs["11"]["threads"]) == 2 and num(procs["11"]["events"]) == 31, procs["11"]
assert num(procs["10"]["events"]) == 5, procs["10"]
errs = {r["errno"]: r for r in p.table("errno")}
assert num(errs["ENOENT"]["count"]) == 2 and errs["ENOENT"]["message"] == "No such file or directory", errs
assert errs["ENOENT"]["first path"] == "/w/sub/missing", errs["ENOENT"]
assert num(errs["ENOTDIR"]["count"]) == 1, errs
assert p.bars("calls") == 36 and p.bars("failed calls") == 3, (p.bars("calls"), p.bars("failed calls"))
assert p.bars("bytes written") == 9421 and p.bars("bytes read") == 10, p.bars("bytes written")
import re
bars = [int(n) for n in re.findall(r"\((\d+) bars\)", open(sys.argv[1], encoding="utf-8").read())]
assert len(bars) == 2 and all(100 <= n <= 200 for n in bars), bars  # 15 ms at 1 us: coarsened
PY

python3 - page.html << 'PY' && ok "hostile names escaped: markup, quotes, control and non-UTF-8 bytes" || fail "escaping"
import sys
raw = open(sys.argv[1], "rb").read()
assert b"<script>" not in raw and b"<all>" not in raw, "raw markup in the page"
assert b"/w/&lt;script&gt;alert(1)&lt;/script&gt;" in raw
assert b"make &lt;all&gt;" in raw
assert b"/w/odd\\xff\\x01&quot;&amp;&#39;name" in raw, [l for l in raw.split(b"\n") if b"odd" in l]
PY

python3 - page.html << 'PY' && ok "notes: the escape note at the top of the page, the others listed" || fail "notes"
import sys
text = open(sys.argv[1], encoding="utf-8").read()
top = text.index('id="incomplete"')
assert top < text.index('id="summary"')
assert "escape 11: stores through a shared writable mapping (fd 9) are not recorded" in text[top:text.index('id="summary"')]
assert "<li>writer-thread 10 13</li>" in text[text.index('id="notes"'):]
PY

# --only: the calls on paths under a prefix and on fds opened there.
"$iorr" report t.iorr --only /w/sub -o only.html 2> err.txt || fail "--only: $(cat err.txt)"
python3 - only.html << 'PY' && ok "--only: only calls under the prefix, the summary still the whole trace's" || fail "--only"
import sys; sys.path.insert(0, ".")
from page import load, num
_, p = load(sys.argv[1])
calls = {r["call"]: r for r in p.table("call")}
assert num(calls["write"]["count"]) == 9 and num(calls["fsync"]["count"]) == 3, calls
assert "read" not in calls and "execve" not in calls, calls
files = {r["file"] for r in p.table("file")}
assert files == {"/w/sub/rel"}, files
assert num(p.pairs()["events"]) == 36
PY

# Stdin: the same page.
"$iorr" report - -o stdin.html < t.iorr 2> err.txt && cmp -s <(sed 's/Trace [^ ]* (/Trace X (/' stdin.html) <(sed 's/Trace [^ ]* (/Trace X (/' page.html) &&
  ok "a trace on stdin" || fail "stdin: $(cat err.txt)"

# --replay: a report of a real replay of this trace.
mkdir root
"$iorr" replay t.iorr --root root --report replay.json > replay.out 2>&1
rc=$?
if [[ $rc -gt 1 || ! -s replay.json ]]; then
  fail "replay: exit $rc: $(head -n 3 replay.out)"
else
  "$iorr" report t.iorr --replay replay.json -o rep.html 2> err.txt || fail "report --replay: $(cat err.txt)"
  python3 - rep.html replay.json << 'PY' && ok "--replay: the report's mismatches, events and per-call latencies beside the recording's" || fail "--replay"
import json, sys; sys.path.insert(0, ".")
from page import load, num
_, p = load(sys.argv[1])
rep = json.load(open(sys.argv[2]))
kv = p.pairs()
assert num(kv["mismatches"]) == rep["mismatches"], (kv["mismatches"], rep["mismatches"])
assert kv["events"].startswith("%s of %s replayed" % (format(rep["replayed"], ","), format(rep["events"], ","))), kv["events"]
calls = {r["call"]: r for r in p.table("call")}
w = rep["calls"]["write"]
assert num(calls["write"]["replay count"]) == w["count"], calls["write"]
assert calls["write"]["replay p50 µs"] == "%.1f" % (w["latency_ns"]["p50"] / 1e3), (calls["write"], w)
assert calls["write"]["replay p99 µs"] == "%.1f" % (w["latency_ns"]["p99"] / 1e3), (calls["write"], w)
assert num(calls["write"]["replay mismatches"]) == w["mismatches"]
PY
fi

# --disk: the model's table, as iorr model --json gives it for the same trace.
"$iorr" report t.iorr --disk hdd-7200 -o model.html 2> err.txt || fail "report --disk: $(cat err.txt)"
"$iorr" model t.iorr --disk hdd-7200 --json > model.json 2> /dev/null || fail "iorr model"
python3 - model.html model.json << 'PY' && ok "--disk hdd-7200: every row's elapsed time, flushes and FUA writes equal iorr model --json's" || fail "--disk"
import json, sys; sys.path.insert(0, ".")
from page import load, num
_, p = load(sys.argv[1])
rows = {(r["fs"], r["cache"], r["barrier"]): r for r in p.table("fs")}
m = json.load(open(sys.argv[2]))
assert len(rows) == len(m["rows"]) == 4, rows
for r in m["rows"]:
    mine = rows[(r["fs"], r["cache"], r["barrier"])]
    assert mine["elapsed s"] == "%.3f" % r["elapsed_s"], (mine, r)
    assert num(mine["flushes"]) == r["flushes"] and num(mine["FUA writes"]) == r["fua_writes"], (mine, r)
    assert mine["checked"] == "unvalidated"
assert any(r["flushes"] >= 3 for r in m["rows"]), m["rows"]  # the fsyncs: a figure worth comparing
PY
grep -q 'id="model"' page.html && fail "a model section without --disk" || ok "no model section without --disk"

# Bad input: exit 2, one line on stderr, no page and no FILE.tmp left.
expect_refused() {  # what, then the command
  local what=$1
  shift
  rm -f bad.html bad.html.tmp
  "$@" > /dev/null 2> err.txt
  local rc=$?
  if [[ $rc -eq 2 && $(wc -l < err.txt) -eq 1 && ! -e bad.html && ! -e bad.html.tmp ]]; then
    ok "$what: exit 2, $(cat err.txt)"
  else
    fail "$what: exit $rc, no page: $([[ -e bad.html || -e bad.html.tmp ]] && echo no || echo yes), stderr: $(cat err.txt)"
  fi
}
python3 -c "
d = bytearray(open('t.iorr', 'rb').read()); d[len(d) // 2] ^= 0xff
open('corrupt.iorr', 'wb').write(d)"
expect_refused "corrupt chunk" "$iorr" report corrupt.iorr -o bad.html
head -c 40 t.iorr > header-cut.iorr
expect_refused "truncated inside the header" "$iorr" report header-cut.iorr -o bad.html
: > empty.iorr
expect_refused "empty file" "$iorr" report empty.iorr -o bad.html
expect_refused "missing trace" "$iorr" report no-such.iorr -o bad.html
echo '{"rows": []}' > other.json
expect_refused "--replay of another JSON file" "$iorr" report t.iorr --replay other.json -o bad.html
echo 'not json' > other.json
expect_refused "--replay of a non-JSON file" "$iorr" report t.iorr --replay other.json -o bad.html
expect_refused "--disk of an unknown profile" "$iorr" report t.iorr --disk no-such-disk -o bad.html
expect_refused "--disk with the trace on stdin" "$iorr" report - --disk hdd-7200 -o bad.html
expect_refused "no -o" "$iorr" report t.iorr

# A recording killed mid-write: its last frame cut. The reader reads what is whole (as iorr
# stats and dump do); the page says at its top what was lost.
size=$(stat -c %s t.iorr)
head -c $((size - 20)) t.iorr > cut.iorr
"$iorr" report cut.iorr -o cut.html 2> err.txt
rc=$?
if [[ $rc -eq 0 ]] && grep -q "warning: cut.iorr: trace" err.txt &&
   python3 -c "
import sys; t = open('cut.html', encoding='utf-8').read()
i = t.index('id=\"incomplete\"'); assert i < t.index('id=\"summary\"')
assert 'trace truncated' in t[i:t.index('id=\"summary\"')] or 'no end record' in t[i:t.index('id=\"summary\"')]"; then
  ok "a trace with its last frame cut: the page, with the loss at its top, and a warning"
else
  fail "cut trace: exit $rc, $(cat err.txt)"
fi

"$iorr" report --help > help.txt 2>&1 && grep -q -- "--replay" help.txt && grep -q -- "--disk" help.txt &&
  ok "--help" || fail "--help: $(head -n 3 help.txt)"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
