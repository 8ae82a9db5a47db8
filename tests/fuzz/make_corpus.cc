// Writes the seed corpus for trace_reader_fuzz: a few small real traces made with TraceWriter
// (every time unit, several streams, shared-prefix and repeated strings, null and empty strings,
// notes, clean and incomplete closes), truncated and damaged copies of them, and the same traces
// as IOFZ build scripts (uncompressed payloads; format at the top of trace_reader_fuzz.cc).
//
//   make_corpus OUT_DIR      (OUT_DIR must exist; files in it are overwritten)
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "traces/format.h"
#include "traces/reader.h"
#include "traces/varint.h"
#include "traces/writer.h"

namespace iorr::trace {
namespace {

std::string g_dir;
int g_failures = 0;

void Fail(const std::string& what) {
  std::fprintf(stderr, "make_corpus: %s\n", what.c_str());
  ++g_failures;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& name, const std::string& data) {
  std::string path = g_dir + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) Fail("cannot write " + path);
}

// A trace being written, with the strings of the current event kept alive for Add.
class Trace {
 public:
  Trace(const std::string& name, uint32_t unit, ChunkLimits limits = {})
      : path_(g_dir + "/" + name) {
    Header h;
    h.Set(key::kTool, "iorr make_corpus");
    h.Set(key::kSource, "fuzz-seed");
    h.Set(key::kCwd, "/home/u/src");
    h.Set(key::kCmdline, "make -j8 'all targets'");
    h.Set("mount:/", "/dev/nvme0n1p2 ext4 rw,relatime");
    h.core.start_mono_ns = 123456789;
    h.core.start_wall_ns = 1700000000123456789;
    WriterOptions opt;
    opt.time_unit_ns = unit;
    opt.limits = limits;
    opt.limits.zstd_level = 1;
    auto w = TraceWriter::Create(path_, h, opt);
    if (!w.ok()) {
      Fail(w.status().message());
      return;
    }
    w_ = std::move(*w);
  }
  TraceWriter* w() { return w_.get(); }
  const std::string& path() const { return path_; }

  // Adds a call; args as integers, strings in s (nullptr: a NULL pointer).
  void Add(CallId call, uint32_t pid, uint32_t tid, int64_t start, int64_t dur, int64_t ret,
           std::vector<int64_t> ints, std::vector<const char*> strs = {}) {
    if (!w_) return;
    Event e;
    e.call = call;
    e.pid = pid;
    e.tid = tid;
    e.start_ns = start;
    e.end_ns = start + dur;
    e.ret = ret;
    const CallSpec& c = Spec(call);
    size_t ni = 0, ns = 0;
    for (int i = 0; i < c.nargs; ++i) {
      ArgKind k = c.args[i].kind;
      if (!IsStored(k)) continue;
      if (IsString(k)) {
        const char* s = ns < strs.size() ? strs[ns++] : "";
        if (s == nullptr)
          e.args[i].null = true;
        else
          e.args[i].s = s;
      } else {
        e.args[i].i = ni < ints.size() ? ints[ni++] : 0;
      }
    }
    if (Status st = w_->Add(e); !st.ok()) Fail(path_ + ": " + st.message());
  }
  void Close(uint64_t dropped = 0, bool incomplete = false) {
    if (!w_) return;
    if (Status st = w_->Close(dropped, incomplete); !st.ok()) Fail(path_ + ": " + st.message());
  }

 private:
  std::string path_;
  std::unique_ptr<TraceWriter> w_;
};

constexpr int64_t kAtFdcwd = -100;

// 1. Microsecond units, one process with two threads, a build-like mix of calls, a note.
void Basic() {
  Trace t("t1_us_basic.trace", 1000);
  int64_t now = 5000;
  for (int i = 0; i < 12; ++i) {
    uint32_t tid = 100 + static_cast<uint32_t>(i % 2);
    std::string path = "src/lib/module" + std::to_string(i % 5) + ".c";
    t.Add(CallId::openat, 100, tid, now, 3000, 3 + i % 2, {kAtFdcwd, 0x80000, 0}, {path.c_str()});
    t.Add(CallId::read, 100, tid, now + 4000, 1500, 4096, {3, 4096});
    t.Add(CallId::pread64, 100, tid, now + 6000, 900, 100, {3, 4096, 8192});
    t.Add(CallId::lseek, 100, tid, now + 7000, 100, 0, {3, 0, 0});
    t.Add(CallId::close, 100, tid, now + 8000, 200, 0, {3});
    t.Add(CallId::newfstatat, 100, tid, now + 9000, 700, -2, {kAtFdcwd, 0},
          {(path + ".o").c_str()});
    now += 10000 + i * 777;
  }
  t.Add(CallId::write, 100, 100, now, 50000, -28, {1, 65536});
  if (t.w()) t.w()->AddNote("seed trace: basic; 1 event lost to ENOSPC");
  t.Add(CallId::renameat2, 100, 101, now + 100, 20000, 0, {kAtFdcwd, kAtFdcwd, 1},
        {"out/a.tmp", "out/a"});
  t.Close();
}

// 2. Nanosecond units, three processes with two threads each, tiny chunks (many per stream),
// promises, a stream ended and its tid reused, NULL and empty strings, extreme integers and
// times, and an incomplete close.
void ManyStreams() {
  ChunkLimits small;
  small.max_events = 5;
  small.max_strings = 4;
  Trace t("t2_ns_many_streams.trace", 1, small);
  int64_t now = -3000;  // events may start before the trace start
  for (int round = 0; round < 6; ++round) {
    for (uint32_t pid = 200; pid < 203; ++pid) {
      for (uint32_t th = 0; th < 2; ++th) {
        uint32_t tid = pid * 10 + th;
        now += 37 + round * 11 + th;
        if (t.w()) t.w()->Promise(now);
        t.Add(CallId::utimensat, pid, tid, now, 12, 0, {kAtFdcwd, 0x100}, {nullptr});
        t.Add(CallId::symlinkat, pid, tid, now + 1, 5, -17, {kAtFdcwd}, {"", "dir/link"});
        t.Add(CallId::pwrite64, pid, tid, now + 2, 999, 7, {5, INT64_MAX, INT64_MIN});
        t.Add(CallId::getxattr, pid, tid, now + 3, 1, -61, {0},
              {"/usr/share/very/long/shared/prefix/file", "user.mime_type"});
        t.Add(CallId::getxattr, pid, tid, now + 4, 1, -61, {0},
              {"/usr/share/very/long/shared/prefix/file2", "user.mime_type"});
        t.Add(CallId::other, pid, tid, now + 5, 0, INT64_MIN, {INT64_MAX});
      }
    }
    if (round == 2 && t.w()) {
      if (Status s = t.w()->EndStream(201, 2010); !s.ok()) Fail(s.message());
    }
  }
  t.Add(CallId::exit_group, 201, 2010, now + 100, 0, 0, {1});  // tid reused after EndStream
  t.Close(5, true);
}

// 3. 10 ns units: every call of the table once, with every argument kind.
void AllCalls() {
  Trace t("t3_10ns_all_calls.trace", 10);
  int64_t now = 1000;
  int n = 0;
  for (const CallSpec& c : kCalls) {
    uint32_t tid = 300 + static_cast<uint32_t>(n % 3);
    std::vector<int64_t> ints;
    std::vector<std::string> owned;
    std::vector<const char*> strs;
    for (int i = 0; i < c.nargs; ++i) {
      ArgKind k = c.args[i].kind;
      if (IsString(k))
        owned.push_back("/p/" + std::string(c.name) + "/" + std::to_string(i));
      else if (k == ArgKind::kDirFd)
        ints.push_back(kAtFdcwd);
      else if (k == ArgKind::kOffsetPtr)
        ints.push_back(-1);
      else if (IsStored(k))
        ints.push_back(n * 1000 + i);
    }
    for (const auto& s : owned) strs.push_back(s.c_str());
    int64_t ret = c.ret == Ret::kCount ? (n % 4 == 0 ? -4 : 100 + n) : (n % 5 == 0 ? -13 : n);
    t.Add(static_cast<CallId>(c.tag), 300, tid, now, 10 * n, ret, ints, strs);
    now += 40;
    ++n;
  }
  t.Close();
}

// 5. Directory listings whose names join the string table (format 2), and references to them:
// next, same and back, a DT_UNKNOWN entry (a NUL type byte), an unterminated tail, a NULL path.
void Listings() {
  Trace t("t5_us_listings.trace", 1000);
  if (!t.w()) return;
  auto add = [&](CallId call, int64_t at, std::string_view s, bool null = false) {
    Event e;
    e.call = call;
    e.pid = e.tid = 500;
    e.start_ns = e.end_ns = at;
    e.args[0].i = 3;
    e.args[1].s = s;
    e.args[1].null = null;
    if (Status st = t.w()->Add(e); !st.ok()) Fail(t.path() + ": " + st.message());
  };
  static const char kListing[] = "\x04.\0\x04..\0\x08Makefile\0\x00odd\0\x04sub\0\x08tail";
  std::string_view listing(kListing, sizeof(kListing) - 1);
  add(CallId::dirents, 1000, listing);
  add(CallId::unlinkat, 2000, "Makefile");
  add(CallId::unlinkat, 3000, "odd");
  add(CallId::newfstatat, 4000, "sub");
  add(CallId::openat, 5000, "sub");
  add(CallId::dirents, 6000, listing);
  add(CallId::unlinkat, 7000, "Makefile");
  add(CallId::unlinkat, 8000, "", true);
  add(CallId::unlinkat, 9000, "sub");
  t.Close();
}

// 4. 100 ns units, written whole and then cut: inside the last frame, just past the header, and
// exactly before the end record (no end record).
void Truncated() {
  ChunkLimits small;
  small.max_events = 16;
  Trace t("t4_100ns_full.trace", 100, small);
  for (int i = 0; i < 60; ++i) {
    std::string p = "data/" + std::to_string(i % 7) + "/blob";
    t.Add(CallId::open, 400, 400 + static_cast<uint32_t>(i % 2), i * 2500, 700, 3, {0x241, 0644},
          {p.c_str()});
    t.Add(CallId::fsync, 400, 400 + static_cast<uint32_t>(i % 2), i * 2500 + 900, 50000, 0, {3});
  }
  uint64_t events = t.w() ? t.w()->events() : 0;
  t.Close();
  uint64_t chunks = t.w() ? t.w()->chunks() : 0;
  std::string full = ReadFile(t.path());
  uint8_t end[kMaxEndRecordBytes];
  size_t end_len = EncodeEndRecord(EndRecord{events, chunks, 0, 0}, end);
  if (full.size() <= end_len + 100) {
    Fail("t4 trace unexpectedly small");
    return;
  }
  if (full.compare(full.size() - end_len, end_len, reinterpret_cast<const char*>(end), end_len) !=
      0)
    Fail("t4: the end record is not where expected");
  WriteFile("t4_100ns_no_end_record.trace", full.substr(0, full.size() - end_len));
  WriteFile("t4_100ns_cut_in_frame.trace", full.substr(0, full.size() - end_len - 9));
  WriteFile("t4_100ns_cut_after_header.trace", full.substr(0, 120));
}

// 5. Damaged copies of trace 1: a flipped payload byte (salvage skips the chunk) and a flipped
// chunk-record checksum.
void Damaged() {
  std::string full = ReadFile(g_dir + "/t1_us_basic.trace");
  auto r = TraceReader::Open(g_dir + "/t1_us_basic.trace");
  if (!r.ok()) {
    Fail(r.status().message());
    return;
  }
  Chunk c;
  if (!(*r)->NextChunk(&c)) {
    Fail("t1 has no chunk");
    return;
  }
  uint64_t rec_size = 8;
  for (int i = 0; i < 4; ++i)
    rec_size += static_cast<uint64_t>(static_cast<uint8_t>(full[c.offset + 4 + i])) << (8 * i);
  std::string payload = full;
  payload[c.offset + rec_size + c.meta.compressed_size / 2] ^= 0x10;
  WriteFile("t5_damaged_payload.trace", payload);
  std::string record = full;
  record[c.offset + rec_size - 1] ^= 0x01;
  WriteFile("t5_damaged_record_crc.trace", record);
}

void PutV(std::string& s, uint64_t v) {
  uint8_t b[kMaxVarintBytes];
  s.append(reinterpret_cast<const char*>(b), static_cast<size_t>(PutVarint(b, v) - b));
}

// The same trace as an IOFZ build script: its chunks' metadata and uncompressed payloads.
void AsScript(const std::string& trace, const std::string& name) {
  auto r = TraceReader::Open(g_dir + "/" + trace);
  if (!r.ok()) {
    Fail(r.status().message());
    return;
  }
  std::string s = "IOFZ";
  uint32_t unit = (*r)->time_unit_ns();
  s += static_cast<char>(unit == 1 ? 0 : unit == 10 ? 1 : unit == 100 ? 2 : 3);
  Chunk c;
  while ((*r)->NextChunk(&c)) {
    if (c.meta.kind == ChunkKind::kEvents) {
      s += '\0';
    } else {
      s += '\4';
      s += static_cast<char>(c.meta.kind);
    }
    PutV(s, c.meta.pid);
    PutV(s, c.meta.tid);
    PutV(s, c.meta.events);
    PutV(s, ZigZag(c.meta.first_start));
    PutV(s, ZigZag(c.meta.last_start));
    PutV(s, ZigZag(c.meta.watermark));
    PutV(s, c.raw.size());
    s.append(reinterpret_cast<const char*>(c.raw.data()), c.raw.size());
  }
  if (!(*r)->status().ok()) Fail(trace + ": " + (*r)->status().message());
  for (const auto& note : (*r)->info().notes) {
    s += '\5';
    PutV(s, note.size());
    s += note;
  }
  if ((*r)->info().end_record) {
    const EndRecord& e = (*r)->info().end;
    s += '\6';
    PutV(s, e.events);
    PutV(s, e.chunks);
    PutV(s, e.dropped_events);
    PutV(s, e.flags);
  }
  WriteFile(name, s);
}

}  // namespace
}  // namespace iorr::trace

int main(int argc, char** argv) {
  using namespace iorr::trace;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus OUT_DIR\n");
    return 2;
  }
  g_dir = argv[1];
  Basic();
  ManyStreams();
  AllCalls();
  Truncated();
  Listings();
  Damaged();
  AsScript("t1_us_basic.trace", "s1_us_basic.iofz");
  AsScript("t2_ns_many_streams.trace", "s2_ns_many_streams.iofz");
  AsScript("t3_10ns_all_calls.trace", "s3_10ns_all_calls.iofz");
  AsScript("t4_100ns_full.trace", "s4_100ns_full.iofz");
  // Every seed must read back: a seed the reader rejects would mean the writer and the reader
  // disagree, which the fuzzer should not have to discover.
  for (const char* name :
       {"t1_us_basic.trace", "t2_ns_many_streams.trace", "t3_10ns_all_calls.trace",
        "t4_100ns_full.trace", "t5_us_listings.trace"}) {
    auto r = TraceReader::Open(g_dir + "/" + name);
    if (!r.ok()) {
      Fail(r.status().message());
      continue;
    }
    MergedReader m(r->get());
    Event e;
    uint64_t n = 0;
    while (m.Next(&e)) ++n;
    if (!m.status().ok()) Fail(std::string(name) + ": " + m.status().message());
    if (!(*r)->info().end_record) Fail(std::string(name) + ": no end record");
    if (n != (*r)->info().end.events) Fail(std::string(name) + ": event count mismatch");
  }
  return g_failures == 0 ? 0 : 1;
}
