// Round trips through TraceWriter and the readers, and the reader's answers to damaged files.
#include "traces/format.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "traces/crc32c.h"
#include "traces/encoder.h"
#include "traces/reader.h"
#include "traces/repair.h"
#include "traces/writer.h"

namespace iorr::trace {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/iorr_" + std::to_string(getpid()) + "_" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// An owned copy of an event, so tests can compare across reads.
struct Owned {
  Event e;
  std::string s[kMaxArgs];
  bool operator==(const Owned& o) const {
    if (e.call != o.e.call || e.pid != o.e.pid || e.tid != o.e.tid || e.start_ns != o.e.start_ns ||
        e.end_ns != o.e.end_ns || e.ret != o.e.ret)
      return false;
    const CallSpec& c = Spec(e.call);
    for (int i = 0; i < c.nargs; ++i) {
      if (!IsStored(c.args[i].kind)) continue;
      if (IsString(c.args[i].kind)) {
        if (e.args[i].null != o.e.args[i].null || s[i] != o.s[i]) return false;
      } else if (e.args[i].i != o.e.args[i].i) {
        return false;
      }
    }
    return true;
  }
};

Owned Own(const Event& e) {
  Owned o;
  o.e = e;
  for (int i = 0; i < kMaxArgs; ++i) {
    o.s[i] = std::string(e.args[i].s);
    o.e.args[i].s = {};
  }
  return o;
}

// Events of several threads, with paths that repeat and share prefixes.
std::vector<Owned> MakeEvents(int n, uint32_t unit, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<Owned> out;
  int64_t t[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; ++i) {
    int th = static_cast<int>(rng() % 4);
    Owned o;
    Event& e = o.e;
    e.pid = 100 + (th / 2);
    e.tid = 1000 + th;
    t[th] += static_cast<int64_t>(rng() % 50000) * unit / 10 * 10;
    e.start_ns = t[th] / unit * unit;
    e.end_ns = e.start_ns + static_cast<int64_t>(rng() % 9000) / unit * unit;
    t[th] = e.end_ns;
    switch (rng() % 5) {
      case 0:
        e.call = CallId::openat;
        e.args[0].i = -100;
        o.s[1] = "linux/drivers/net/file" + std::to_string(rng() % 300) + ".c";
        e.args[2].i = 0x241;
        e.args[3].i = 0644;
        e.ret = (rng() % 7 == 0) ? -2 : 4;
        break;
      case 1:
        e.call = CallId::write;
        e.args[0].i = 4;
        e.args[2].i = static_cast<int64_t>(rng() % 20000);
        e.ret = (rng() % 10 == 0) ? -28 : e.args[2].i;
        break;
      case 2:
        e.call = CallId::renameat2;
        e.args[0].i = 3;
        o.s[1] = "a/b" + std::to_string(rng() % 10);
        e.args[2].i = -100;
        o.s[3] = "";
        e.args[4].i = 1;
        e.ret = 0;
        break;
      case 3:
        e.call = CallId::utimensat;
        e.args[0].i = 4;
        e.args[1].null = true;
        e.args[3].i = 0;
        e.ret = 0;
        break;
      default:
        e.call = CallId::other;
        e.args[0].i = static_cast<int64_t>(rng() % 400);
        e.ret = static_cast<int64_t>(rng());
        break;
    }
    out.push_back(o);
  }
  return out;
}

Event View(const Owned& o) {
  Event e = o.e;
  for (int i = 0; i < kMaxArgs; ++i)
    if (!e.args[i].null) e.args[i].s = o.s[i];
  return e;
}

std::string WriteTrace(const std::string& name, const std::vector<Owned>& events, uint32_t unit,
                       ChunkLimits limits = {}, bool promise_start = false,
                       bool compact_start = false) {
  std::string path = TempPath(name);
  Header h;
  h.Set(key::kSource, "test");
  h.Set(key::kCwd, "/tmp");
  WriterOptions opt;
  opt.time_unit_ns = unit;
  opt.limits = limits;
  opt.compact_start = compact_start;
  auto w = TraceWriter::Create(path, h, opt);
  EXPECT_TRUE(w.ok()) << w.status().message();
  for (const auto& o : events) {
    (*w)->Promise(promise_start ? o.e.start_ns : 0);
    EXPECT_TRUE((*w)->Add(View(o)).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

std::vector<Owned> ReadMerged(const std::string& path, Status* st = nullptr,
                              TraceReader::Options opt = {}) {
  std::vector<Owned> out;
  auto r = TraceReader::Open(path, opt);
  if (!r.ok()) {
    if (st) *st = r.status();
    return out;
  }
  MergedReader m(r->get());
  Event e;
  while (m.Next(&e)) out.push_back(Own(e));
  if (st) *st = m.status();
  return out;
}

std::vector<Owned> SortedByTime(std::vector<Owned> v) {
  std::stable_sort(v.begin(), v.end(), [](const Owned& a, const Owned& b) {
    if (a.e.start_ns != b.e.start_ns) return a.e.start_ns < b.e.start_ns;
    if (a.e.pid != b.e.pid) return a.e.pid < b.e.pid;
    return a.e.tid < b.e.tid;
  });
  return v;
}

// The trace at path reads back, merged, as the events sorted by time; then it is removed.
void ExpectReadsBackInTimeOrder(const std::string& path, const std::vector<Owned>& events) {
  Status st;
  auto back = ReadMerged(path, &st);
  std::remove(path.c_str());
  ASSERT_TRUE(st.ok()) << st.message();
  auto want = SortedByTime(events);
  ASSERT_EQ(back.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_TRUE(back[i] == want[i]) << "event " << i;
}

TEST(TraceFormat, RoundTripMergedInTimeOrder) {
  for (uint32_t unit : {1u, 10u, 100u, 1000u}) {
    auto events = MakeEvents(20000, unit, unit);
    ChunkLimits small;
    small.max_events = 700;  // many chunks per stream
    ExpectReadsBackInTimeOrder(WriteTrace("rt" + std::to_string(unit), events, unit, small),
                               events);
  }
}

// Encoders that start compact (as the recorder's do: a short process's chunk in one page): the
// same events read back, in every unit, with paths longer than a compact section (which move
// an empty chunk to the full layout at once) and listings among them.
TEST(TraceFormat, CompactStartRoundTrips) {
  for (uint32_t unit : {1u, 1000u}) {
    auto events = MakeEvents(20000, unit, unit + 7);
    ExpectReadsBackInTimeOrder(
        WriteTrace("compact" + std::to_string(unit), events, unit, {}, false, true), events);
  }
  std::vector<Owned> events;
  std::string base(1000, 'd');
  for (int i = 0; i < 50; ++i) {
    Owned o;
    o.e.call = CallId::newfstatat;
    o.e.pid = o.e.tid = 7 + i % 3;
    o.e.start_ns = o.e.end_ns = i * 2000;
    o.e.args[0].i = 3;
    o.s[1] = i % 2 ? base + "/" + std::to_string(i) : "short" + std::to_string(i);
    events.push_back(o);
    Owned l;
    l.e.call = CallId::dirents;
    l.e.pid = l.e.tid = o.e.pid;
    l.e.start_ns = l.e.end_ns = i * 2000 + 1000;
    l.e.args[0].i = 3;
    l.e.args[1].null = false;
    int names = 1 + i % 40;
    for (int k = 0; k < names; ++k) {
      l.s[1] += static_cast<char>(8);
      l.s[1] += "name" + std::to_string(k);
      l.s[1] += '\0';
    }
    l.e.ret = names;
    events.push_back(l);
  }
  ExpectReadsBackInTimeOrder(WriteTrace("compactlong", events, 1000, {}, false, true), events);
}

TEST(TraceFormat, HeaderFieldsSurvive) {
  std::string path = WriteTrace("hdr", MakeEvents(10, 1000, 1), 1000);
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->header().Get(key::kCwd), "/tmp");
  EXPECT_EQ((*r)->header().core.version, kFormatVersion);
  EXPECT_EQ((*r)->time_unit_ns(), 1000u);
  Chunk c;
  while ((*r)->NextChunk(&c)) {
  }
  EXPECT_TRUE((*r)->status().ok());
  EXPECT_TRUE((*r)->info().end_record);
  EXPECT_EQ((*r)->info().end.events, 10u);
  EXPECT_EQ((*r)->IntegrityWarning(), "");
}

TEST(TraceFormat, MergedMemoryIsBoundedByWatermarks) {
  // Two threads in lockstep over many chunks: the merge must never hold more than a few chunks.
  std::vector<Owned> events;
  for (int i = 0; i < 40000; ++i) {
    Owned o;
    o.e.call = CallId::close;
    o.e.pid = 1;
    o.e.tid = 1 + i % 2;
    o.e.start_ns = i * 1000;
    o.e.end_ns = i * 1000 + 500;
    o.e.args[0].i = 3;
    events.push_back(o);
  }
  ChunkLimits small;
  small.max_events = 500;
  std::string path = WriteTrace("bounded", events, 1000, small, /*promise_start=*/true);
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok());
  MergedReader m(r->get());
  Event e;
  size_t n = 0;
  while (m.Next(&e)) ++n;
  EXPECT_EQ(n, events.size());
  EXPECT_LE(m.max_live_chunks(), 4u);
  EXPECT_EQ(m.order_violations(), 0u);
}

// One early event of an idle thread holds every later chunk's watermark back to it, so a merged
// reader holds everything written after it, unless the writer flushes the idle thread's stream
// (WriterOptions::idle_flush_ns, as the recorder does every 100 ms).
size_t LiveChunksWithIdleThread(bool flush_idle, uint64_t* chunks) {
  std::string path = TempPath(flush_idle ? "idle-flushed" : "idle-held");
  Header h;
  h.Set(key::kSource, "test");
  WriterOptions opt;
  opt.limits.max_events = 500;
  opt.idle_flush_ns = flush_idle ? 100000 : 0;
  auto w = TraceWriter::Create(path, h, opt);
  EXPECT_TRUE(w.ok());
  Owned idle;
  idle.e.call = CallId::close;
  idle.e.pid = idle.e.tid = 1;
  idle.e.start_ns = 0;
  idle.e.end_ns = 500;
  (*w)->Promise(0);
  EXPECT_TRUE((*w)->Add(View(idle)).ok());
  for (int i = 1; i <= 40000; ++i) {
    Owned o;
    o.e.call = CallId::close;
    o.e.pid = o.e.tid = 2;
    o.e.start_ns = i * 1000;
    o.e.end_ns = i * 1000 + 500;
    (*w)->Promise(o.e.start_ns);
    EXPECT_TRUE((*w)->Add(View(o)).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  *chunks = (*w)->chunks();
  auto r = TraceReader::Open(path);
  EXPECT_TRUE(r.ok());
  MergedReader m(r->get());
  Event e;
  size_t n = 0;
  while (m.Next(&e)) ++n;
  EXPECT_EQ(n, 40001u);
  EXPECT_EQ(m.order_violations(), 0u);
  return m.max_live_chunks();
}

TEST(TraceFormat, FlushingAnIdleThreadBoundsTheMerge) {
  uint64_t chunks_held = 0, chunks_flushed = 0;
  size_t held = LiveChunksWithIdleThread(false, &chunks_held);
  size_t flushed = LiveChunksWithIdleThread(true, &chunks_flushed);
  EXPECT_GE(held, 80u);  // all of thread 2's chunks, held until the idle thread's comes
  // The writer looks for idle streams every 4096 events: the reader holds at most the chunks
  // of one such interval (500 events each) and the one being filled.
  EXPECT_LE(flushed, 4096u / 500 + 2);
  // Only the idle stream goes out early: the busy one still fills its chunks (80 of 500).
  EXPECT_EQ(chunks_held, 81u);
  EXPECT_EQ(chunks_flushed, 81u);
  std::printf("live chunks: %zu held, %zu flushed\n", held, flushed);
}

TEST(TraceFormat, ZstdSeesOneValidStream) {
  std::string path = WriteTrace("zstd", MakeEvents(5000, 1000, 7), 1000);
  std::string data = ReadAll(path);
  // The whole file decompresses with plain libzstd: skippable frames are skipped.
  ZSTD_DStream* ds = ZSTD_createDStream();
  ZSTD_initDStream(ds);
  std::vector<char> out(1 << 16);
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  size_t total = 0, r = 0;
  while (in.pos < in.size) {
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    r = ZSTD_decompressStream(ds, &o, &in);
    ASSERT_FALSE(ZSTD_isError(r)) << ZSTD_getErrorName(r);
    total += o.pos;
  }
  ZSTD_freeDStream(ds);
  EXPECT_EQ(r, 0u);
  EXPECT_GT(total, 5000u);
  if (std::system("command -v zstd >/dev/null") == 0) {
    std::string cmd = "zstd -dc " + path + " > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
}

TEST(TraceFormat, TruncatedTraceReadsUpToLastWholeFrame) {
  auto events = MakeEvents(30000, 1000, 3);
  ChunkLimits small;
  small.max_events = 1000;
  std::string path = WriteTrace("trunc", events, 1000, small);
  std::string data = ReadAll(path);
  for (size_t cut : {data.size() - 1, data.size() / 2, data.size() / 3 + 7, size_t{60}}) {
    std::string tpath = TempPath("trunc_cut");
    WriteAll(tpath, data.substr(0, cut));
    auto r = TraceReader::Open(tpath);
    ASSERT_TRUE(r.ok()) << r.status().message();
    MergedReader m(r->get());
    Event e;
    size_t n = 0;
    while (m.Next(&e)) ++n;
    EXPECT_TRUE(m.status().ok()) << m.status().message();
    if (cut == data.size() - 1) {
      EXPECT_EQ(n, events.size());  // only the end record was cut
    } else {
      EXPECT_LT(n, events.size());
    }
    EXPECT_NE((*r)->IntegrityWarning(), "") << "cut " << cut;
    EXPECT_FALSE((*r)->info().end_record);
    if (cut > data.size() / 2) {
      EXPECT_GT(n, events.size() / 3);
    }
  }
}

TEST(TraceFormat, BadMagicAndNewerVersionAreRefused) {
  std::string path = TempPath("bad");
  WriteAll(path, "hello, this is not a trace at all");
  auto r = TraceReader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not an iorr trace"), std::string::npos);

  std::string good = ReadAll(WriteTrace("ver", MakeEvents(10, 1000, 1), 1000));
  std::string newer = good;
  newer[8 + 1 + 8] = kFormatVersion + 1;  // version low byte; then re-seal the header's CRC
  uint32_t size = static_cast<uint8_t>(newer[4]) | static_cast<uint8_t>(newer[5]) << 8;
  uint32_t crc = Crc32c(newer.data() + 8, size - 4);
  for (int i = 0; i < 4; ++i) newer[8 + size - 4 + i] = static_cast<char>(crc >> (8 * i));
  WriteAll(path, newer);
  r = TraceReader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.status().message().find("version " + std::to_string(kFormatVersion + 1) + " is newer"),
      std::string::npos)
      << r.status().message();

  WriteAll(path, "");
  EXPECT_FALSE(TraceReader::Open(path).ok());
  EXPECT_FALSE(TraceReader::Open(TempPath("does_not_exist")).ok());
}

TEST(TraceFormat, CorruptChunkIsAnErrorOrSkippedInSalvage) {
  auto events = MakeEvents(30000, 1000, 5);
  ChunkLimits small;
  small.max_events = 1000;
  std::string path = WriteTrace("corrupt", events, 1000, small);
  std::string data = ReadAll(path);
  data[data.size() / 2] ^= 0x5a;
  WriteAll(path, data);
  Status st;
  ReadMerged(path, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("at byte"), std::string::npos) << st.message();

  TraceReader::Options salvage;
  salvage.salvage = true;
  auto back = ReadMerged(path, &st, salvage);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_GT(back.size(), events.size() / 2);
  EXPECT_LT(back.size(), events.size());
}

// Offsets and lengths of the whole records, the header's first.
std::vector<std::pair<size_t, size_t>> Records(const std::string& data) {
  std::vector<std::pair<size_t, size_t>> out;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t o = 0;
  while (o < data.size()) {
    size_t n = WholeRecordAt(p + o, data.size() - o);
    if (n == 0) break;
    out.emplace_back(o, n);
    o += n;
  }
  return out;
}

Result<std::vector<TornRegion>> Repair(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  auto r = RepairTornRecords(fd);
  ::close(fd);
  return r;
}

// A process killed while appending a record leaves a piece of it between whole records: after
// the repair, a strict reader reads every other record, whatever the piece's length.
TEST(TraceFormat, TornRecordsInTheMiddleAreRepaired) {
  auto events = MakeEvents(20000, 1000, 17);
  ChunkLimits small;
  small.max_events = 1000;
  std::string path = WriteTrace("torn", events, 1000, small);
  std::string data = ReadAll(path);
  auto recs = Records(data);
  ASSERT_GT(recs.size(), 10u);
  ASSERT_EQ(recs.back().first + recs.back().second, data.size()) << "the writer's file is whole";
  auto whole = Repair(path);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_TRUE(whole->empty());
  EXPECT_EQ(ReadAll(path), data);

  auto [at, len] = recs[recs.size() / 2];
  ASSERT_GT(len, 40u);
  for (size_t keep :
       {size_t{1}, size_t{4}, size_t{7}, size_t{8}, size_t{9}, size_t{13}, size_t{40}, len - 1}) {
    SCOPED_TRACE("piece of " + std::to_string(keep) + " bytes of " + std::to_string(len));
    WriteAll(path, data.substr(0, at) + data.substr(at, keep) + data.substr(at + len));
    Status st;
    ReadMerged(path, &st);
    EXPECT_FALSE(st.ok());
    auto torn = Repair(path);
    ASSERT_TRUE(torn.ok()) << torn.status().message();
    ASSERT_EQ(torn->size(), 1u);
    EXPECT_EQ((*torn)[0].offset, at);
    EXPECT_EQ((*torn)[0].bytes, keep);
    EXPECT_EQ((*torn)[0].removed, keep < 8);
    auto back = ReadMerged(path, &st);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(back.size(), events.size() - 1000);  // the torn chunk's events only
    EXPECT_EQ(ReadAll(path).size(), data.size() - len + (keep < 8 ? 0 : keep));
  }

  // Unrepaired, a salvaging reader skips the piece alone, not the whole records after it that
  // the size its header claims would cover.
  {
    WriteAll(path, data.substr(0, at) + data.substr(at, len - 1) + data.substr(at + len));
    TraceReader::Options salvage;
    salvage.salvage = true;
    Status st;
    auto back = ReadMerged(path, &st, salvage);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(back.size(), events.size() - 1000);
  }

  // Two pieces, one of each kind; and a piece at the very end stays (the reader cuts it).
  auto [at2, len2] = recs[recs.size() / 4];
  WriteAll(path, data.substr(0, at2) + data.substr(at2, 3) +
                     data.substr(at2 + len2, at - at2 - len2) + data.substr(at, 30) +
                     data.substr(at + len) + data.substr(at, 20));
  auto torn = Repair(path);
  ASSERT_TRUE(torn.ok()) << torn.status().message();
  ASSERT_EQ(torn->size(), 2u);
  EXPECT_TRUE((*torn)[0].removed);
  EXPECT_FALSE((*torn)[1].removed);
  Status st;
  auto back = ReadMerged(path, &st);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back.size(), events.size() - 2000);
}

TEST(TraceFormat, RandomByteFlipsNeverCrash) {
  std::string data = ReadAll(WriteTrace("flip", MakeEvents(3000, 1000, 9), 1000));
  std::mt19937 rng(42);
  std::string path = TempPath("flipped");
  for (int round = 0; round < 300; ++round) {
    std::string d = data;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) d[rng() % d.size()] ^= static_cast<char>(1 + rng() % 255);
    WriteAll(path, d);
    Status st;
    ReadMerged(path, &st);  // any answer but a crash
    TraceReader::Options salvage;
    salvage.salvage = true;
    ReadMerged(path, &st, salvage);
  }
}

TEST(TraceFormat, WithoutPromisesMergedOrderIsStillExact) {
  for (uint32_t unit : {1u, 1000u}) {
    auto events = MakeEvents(3000, unit, 11);
    std::string path = TempPath("nopromise");
    WriterOptions opt;
    opt.time_unit_ns = unit;
    opt.limits.max_events = 100;
    auto w = TraceWriter::Create(path, Header{}, opt);
    ASSERT_TRUE(w.ok());
    for (const auto& o : events) ASSERT_TRUE((*w)->Add(View(o)).ok());
    ASSERT_TRUE((*w)->Close().ok());
    auto r = TraceReader::Open(path);
    ASSERT_TRUE(r.ok());
    MergedReader m(r->get());
    Event e;
    size_t n = 0;
    while (m.Next(&e)) ++n;
    EXPECT_EQ(n, events.size());
    EXPECT_EQ(m.order_violations(), 0u) << "unit " << unit;
  }
}

TEST(TraceFormat, LongPathsSharingPrefixesReadBack) {
  std::vector<Owned> events;
  std::string base(1000, 'd');
  for (int i = 0; i < 2000; ++i) {
    Owned o;
    o.e.call = CallId::stat;
    o.e.pid = o.e.tid = 7;
    o.e.start_ns = i * 1000;
    o.e.end_ns = i * 1000;
    o.s[0] = base + "/" + std::to_string(i);
    events.push_back(o);
  }
  Status st;
  auto back = ReadMerged(WriteTrace("longpaths", events, 1000), &st);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(back.size(), events.size());
  EXPECT_EQ(back[1999].s[0], events[1999].s[0]);
}

// The string table starts small and grows while a chunk takes more strings: references made
// before and after each growth read back, the first mention and the repeat alike.
TEST(TraceFormat, ManyStringsInOneChunkReadBack) {
  std::vector<Owned> events;
  for (int i = 0; i < 12000; ++i) {
    Owned o;
    o.e.call = CallId::stat;
    o.e.pid = o.e.tid = 7;
    o.e.start_ns = i * 1000;
    o.e.end_ns = i * 1000;
    int n = i < 6000 ? i : (i * 7919) % 6000;  // 6000 new names, then each again, shuffled
    o.s[0] = "dir" + std::to_string(n % 13) + "/name" + std::to_string(n);
    events.push_back(o);
  }
  Status st;
  auto back = ReadMerged(WriteTrace("manystrings", events, 1000), &st);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(back.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) ASSERT_EQ(back[i].s[0], events[i].s[0]) << i;
}

// An encoder and compressor with the default limits, and an output buffer that holds any chunk.
class ChunkEncoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(enc.Init(limits, 1000));
    ASSERT_TRUE(zc.Init(limits.zstd_level));
    out.resize(enc.MaxOutputBytes());
  }
  ChunkLimits limits;
  ChunkEncoder enc;
  ChunkCompressor zc;
  std::vector<uint8_t> out;
};

// A string the table already holds is a back-reference also once the table has grown: the
// repeats add a few bytes of references each, not their names again.
TEST_F(ChunkEncoderTest, RepeatsAfterTheTableGrewAreReferences) {
  auto raw_size = [&](int events) {
    enc.Begin(0, 7, 7);
    Event e;
    e.call = CallId::stat;
    std::string name;
    for (int i = 0; i < events; ++i) {
      int n = i < 6000 ? i : (i * 7919) % 6000;
      name = "some/longer/directory" + std::to_string(n % 13) + "/name" + std::to_string(n);
      e.start_ns = e.end_ns = i * 1000;
      e.args[0].null = false;
      e.args[0].s = name;
      EXPECT_EQ(enc.Add(e), ChunkEncoder::AddResult::kOk);
    }
    EXPECT_GT(enc.Finish(zc, 0, out.data(), out.size()), 0u);
    return enc.last_meta().raw_size;
  };
  uint64_t firsts = raw_size(6000), all = raw_size(12000);
  EXPECT_LT(all - firsts, 6000u * 8) << firsts << " " << all;
}

// Each section of the payload ends a zstd block of its own (Compress: a block's entropy tables
// fit one section's values; rm -rf's trace 4.16 -> 3.77 bytes/event). The chunk's frame is
// walked block by block (RFC 8878 3.1.1): one block per non-empty section at least, where one
// frame of a few KiB would otherwise be a single block.
TEST_F(ChunkEncoderTest, EachSectionEndsAZstdBlock) {
  enc.Begin(0, 7, 7);
  std::string name;
  for (int i = 0; i < 2000; ++i) {
    Event e;
    e.call = CallId::pwrite64;  // fd, buffer, size, offset: calls, times, rets, fds, ints
    e.start_ns = i * 3000;
    e.end_ns = e.start_ns + 1000 + (i * 7919) % 5000;
    e.args[0].i = 3 + i % 5;
    e.args[2].i = 4096;
    e.args[3].i = i * 4096;
    e.ret = 4096;
    ASSERT_EQ(enc.Add(e), ChunkEncoder::AddResult::kOk);
    Event o;
    o.call = CallId::openat;  // a path: string references and bytes
    o.start_ns = o.end_ns = i * 3000 + 2000;
    o.args[0].i = -100;
    name = "dir" + std::to_string(i % 17) + "/file-" + std::to_string(i);
    o.args[1].null = false;
    o.args[1].s = name;
    o.ret = 3;
    ASSERT_EQ(enc.Add(o), ChunkEncoder::AddResult::kOk);
  }
  size_t n = enc.Finish(zc, 0, out.data(), out.size());
  ASSERT_GT(n, 0u);
  const uint8_t magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
  const uint8_t* f = std::search(out.data(), out.data() + n, magic, magic + 4);
  ASSERT_NE(f, out.data() + n) << "no zstd frame in the chunk record";
  const uint8_t* end = out.data() + n;
  const uint8_t* p = f + 4;
  uint8_t fhd = *p++;
  int fcs_flag = fhd >> 6, single = (fhd >> 5) & 1, dict = fhd & 3;
  p += single ? 0 : 1;  // window descriptor
  p += dict == 0 ? 0 : (dict == 1 ? 1 : dict == 2 ? 2 : 4);
  p += fcs_flag == 0 ? (single ? 1 : 0) : (fcs_flag == 1 ? 2 : fcs_flag == 2 ? 4 : 8);
  int blocks = 0;
  for (bool last = false; !last;) {
    ASSERT_LE(p + 3, end);
    uint32_t h = p[0] | (p[1] << 8) | (p[2] << 16);
    last = h & 1;
    uint32_t type = (h >> 1) & 3, size = h >> 3;
    ASSERT_NE(type, 3u) << "reserved block type";
    p += 3 + (type == 1 ? 1 : size);
    ++blocks;
  }
  EXPECT_GE(blocks, 8) << "the sections share blocks";
  EXPECT_EQ(p + ((fhd >> 2) & 1 ? 4 : 0), end) << "the blocks do not end the frame";
}

// A getdents64 listing's names join the string table (format 2): removing the listed files
// in listing order costs each one reference byte, not its name again.
TEST_F(ChunkEncoderTest, ListedNamesAreReferencedNotRepeated) {
  const int kNames = 200;
  std::string listing = std::string("\x04.\0\x04..\0", 6);
  std::vector<std::string> names;
  for (int i = 0; i < kNames; ++i) {
    names.push_back("a-rather-long-file-name-" + std::to_string(i) + ".c");
    listing += '\x08' + names.back() + '\0';
  }
  auto raw_size = [&](bool unlink) {
    enc.Begin(0, 7, 7);
    Event e;
    e.call = CallId::dirents;
    e.args[0].i = 3;
    e.args[1].s = listing;
    e.ret = kNames + 2;
    EXPECT_EQ(enc.Add(e), ChunkEncoder::AddResult::kOk);
    for (int i = 0; unlink && i < kNames; ++i) {
      Event u;
      u.call = CallId::unlinkat;
      u.args[0].i = 3;
      u.args[1].s = names[static_cast<size_t>(i)];
      EXPECT_EQ(enc.Add(u), ChunkEncoder::AddResult::kOk);
    }
    EXPECT_GT(enc.Finish(zc, 0, out.data(), out.size()), 0u);
    return enc.last_meta().raw_size;
  };
  uint64_t listed = raw_size(false), removed = raw_size(true);
  // Per unlinkat: call, start, duration, result, fd, flags and one reference of a byte or two;
  // its name again would be 26 more.
  EXPECT_LE(removed - listed, kNames * 8u) << listed << " " << removed;
}

// A listing of more names than the string table holds can never fit a chunk: refused as
// invalid, not "full" (which would ask for an empty chunk again and again).
TEST_F(ChunkEncoderTest, ListingLargerThanTheTableIsInvalid) {
  ChunkLimits small;
  small.max_strings = 100;
  ChunkEncoder e2;
  ASSERT_TRUE(e2.Init(small, 1000));
  std::string listing;
  for (int i = 0; i < 99; ++i) listing += "\x08n" + std::to_string(i) + '\0';
  Event e;
  e.call = CallId::dirents;
  e.args[1].s = listing;
  e2.Begin(0, 7, 7);
  EXPECT_EQ(e2.Add(e), ChunkEncoder::AddResult::kOk);  // 99 names and the listing: 100
  listing += std::string("\x08n99\0", 5);
  e.args[1].s = listing;
  e2.Begin(0, 7, 7);
  EXPECT_EQ(e2.Add(e), ChunkEncoder::AddResult::kInvalid);
  ChunkLimits huge;
  huge.section_bytes = 64u << 20;
  huge.max_strings = (1u << 24) + 1;  // more than a reader accepts
  EXPECT_FALSE(ChunkEncoder().Init(huge, 1000));
}

// Payloads up to kStoredMaxBytes go into their zstd frame uncompressed (one Raw block):
// frame header and block header only, still one valid zstd frame that reads back; larger ones
// are compressed.
TEST_F(ChunkEncoderTest, SmallChunksAreStoredLargeOnesCompressed) {
  for (int events : {0, 1, 20, 3000}) {
    enc.Begin(0, 7, 7);
    Event e;
    e.call = CallId::openat;
    for (int i = 0; i < events; ++i) {
      e.start_ns = e.end_ns = i * 1000;
      e.args[0].i = -100;
      e.args[1].null = false;
      e.args[1].s = "/usr/lib/locale/C.utf8/LC_CTYPE";
      EXPECT_EQ(enc.Add(e), ChunkEncoder::AddResult::kOk);
    }
    size_t n = enc.Finish(zc, 0, out.data(), out.size());
    ASSERT_GT(n, 0u);
    const ChunkMeta& m = enc.last_meta();
    const uint8_t* frame = out.data() + n - m.compressed_size;
    std::vector<uint8_t> back(m.raw_size + 1);
    EXPECT_EQ(ZSTD_decompress(back.data(), back.size(), frame, m.compressed_size), m.raw_size);
    if (m.raw_size <= ChunkEncoder::kStoredMaxBytes) {
      EXPECT_EQ(m.compressed_size, m.raw_size + (m.raw_size < 256 ? 9u : 10u)) << events;
      EXPECT_EQ(ZSTD_getFrameContentSize(frame, m.compressed_size), m.raw_size);
    } else {
      EXPECT_LT(m.compressed_size, m.raw_size / 4) << events;
    }
  }
}

// A compact start's first chunk ends after a few events (kFull), still whole; the encoder then
// takes the limits' layout and keeps it: thousands of events in one chunk, and its output
// buffer (MaxOutputBytes) sized for that layout from the start.
TEST_F(ChunkEncoderTest, CompactStartEndsItsFirstChunkEarly) {
  size_t full_out = enc.MaxOutputBytes();
  enc.Begin(0, 7, 7);
  enc.StartCompact();
  EXPECT_EQ(enc.MaxOutputBytes(), full_out);
  Event e;
  e.call = CallId::openat;
  e.args[0].i = -100;
  e.args[1].null = false;
  std::string name;
  int added = 0;
  ChunkEncoder::AddResult r = ChunkEncoder::AddResult::kOk;
  for (; added < 1000; ++added) {
    name = "/usr/lib/x86_64-linux-gnu/lib" + std::to_string(added) + ".so";
    e.args[1].s = name;
    e.start_ns = e.end_ns = added * 1000;
    if ((r = enc.Add(e)) != ChunkEncoder::AddResult::kOk) break;
  }
  EXPECT_EQ(r, ChunkEncoder::AddResult::kFull);
  EXPECT_GT(added, 3);
  EXPECT_LT(added, 40);
  ASSERT_GT(enc.Finish(zc, 0, out.data(), out.size()), 0u);
  EXPECT_EQ(enc.last_meta().events, static_cast<uint32_t>(added));
  EXPECT_LE(enc.last_meta().raw_size, ChunkEncoder::kCompactBytes * kNumSections + 64);
  for (int i = 0; i < 3000; ++i) {
    name = "/usr/lib/x86_64-linux-gnu/lib" + std::to_string(i) + ".so";
    e.args[1].s = name;
    e.start_ns = e.end_ns = (1000 + i) * 1000;
    ASSERT_EQ(enc.Add(e), ChunkEncoder::AddResult::kOk) << i;
  }
  ASSERT_GT(enc.Finish(zc, 0, out.data(), out.size()), 0u);
  EXPECT_EQ(enc.last_meta().events, 3000u);
}

// A stored frame of 256 bytes or more has a 10-byte header: an output buffer one byte short
// of it is refused, not overrun.
TEST_F(ChunkEncoderTest, StoredFrameNeedsItsWholeHeaderRoom) {
  auto fill = [&] {
    enc.Begin(0, 7, 7);
    Event e;
    e.call = CallId::openat;
    std::string name;  // outlives each Add, which only points at it
    for (int i = 0; i < 20; ++i) {
      e.start_ns = e.end_ns = i * 1000;
      e.args[0].i = -100;
      e.args[1].null = false;
      name = "some/file/name/" + std::to_string(i * 7919);
      e.args[1].s = name;
      ASSERT_EQ(enc.Add(e), ChunkEncoder::AddResult::kOk);
    }
  };
  fill();
  ASSERT_GT(enc.Finish(zc, 0, out.data(), out.size()), 0u);
  uint64_t raw = enc.last_meta().raw_size;
  ASSERT_GE(raw, 256u);
  ASSERT_LE(raw, ChunkEncoder::kStoredMaxBytes);
  fill();
  EXPECT_EQ(enc.Finish(zc, 0, out.data(), kMaxChunkRecordBytes + 9 + raw), 0u);
  fill();
  EXPECT_GT(enc.Finish(zc, 0, out.data(), kMaxChunkRecordBytes + 10 + raw), 0u);
}

TEST(TraceFormat, SalvageGetsPastADamagedChunkRecord) {
  ChunkLimits small;
  small.max_events = 1000;
  auto events = MakeEvents(10000, 1000, 13);
  std::string path = WriteTrace("badrecord", events, 1000, small);
  // Find the second chunk record and damage a byte inside it.
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok());
  Chunk c;
  ASSERT_TRUE((*r)->NextChunk(&c));
  ASSERT_TRUE((*r)->NextChunk(&c));
  std::string data = ReadAll(path);
  data[c.offset + 12] ^= 0x20;
  WriteAll(path, data);
  Status st;
  ReadMerged(path, &st);
  EXPECT_FALSE(st.ok());
  TraceReader::Options salvage;
  salvage.salvage = true;
  auto back = ReadMerged(path, &st, salvage);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(back.size(), events.size() - c.meta.events);
}

// Inputs that once got past the reader's checks (tests/fixtures/hostile): each must give a
// clean error, in normal and salvage modes.
TEST(TraceFormat, HostileFixturesAreRefused) {
  const char* kFiles[] = {"section-lengths-wrap.trace"};
  for (const char* f : kFiles) {
    std::string path = std::string(IORR_SOURCE_DIR) + "/tests/fixtures/hostile/" + f;
    ASSERT_FALSE(ReadAll(path).empty()) << path;
    Status st;
    ReadMerged(path, &st);
    EXPECT_FALSE(st.ok()) << f;
    TraceReader::Options salvage;
    salvage.salvage = true;
    ReadMerged(path, &st, salvage);  // any answer but a crash
  }
}

// Listings and the references into them read back exactly in every shape: names equal to
// earlier strings, a listing repeated, "." and "..", DT_UNKNOWN (a NUL type byte), an
// unterminated tail, an empty listing, NULL paths, and chunks cut at every few events.
TEST(TraceFormat, ListingsAndReferencesReadBack) {
  std::mt19937_64 rng(5);
  std::vector<std::string> pool = {"Makefile", "Kconfig", "a", "", "sub", "x.c", "y.h", "."};
  std::vector<Owned> events;
  int64_t t = 0;
  for (int i = 0; i < 3000; ++i) {
    Owned o;
    o.e.pid = o.e.tid = 9;
    o.e.start_ns = o.e.end_ns = (t += 1000);
    if (rng() % 4 == 0) {
      o.e.call = CallId::dirents;
      o.e.args[0].i = 3;
      std::string l;
      size_t n = rng() % 6;
      for (size_t k = 0; k < n; ++k) {
        l += static_cast<char>(rng() % 3 == 0 ? 0 : 8);
        l += pool[rng() % pool.size()] + std::to_string(rng() % 3);
        l += '\0';
      }
      if (rng() % 5 == 0) l += std::string("\x04..\0\x08tail", 10);  // unterminated
      o.s[1] = l;
      o.e.ret = static_cast<int64_t>(n);
    } else {
      o.e.call = rng() % 2 ? CallId::unlinkat : CallId::newfstatat;
      o.e.args[0].i = 3;
      if (rng() % 17 == 0)
        o.e.args[1].null = true;
      else
        o.s[1] = pool[rng() % pool.size()] + std::to_string(rng() % 3);
    }
    events.push_back(o);
  }
  for (uint32_t max_events : {7u, 65536u}) {
    ChunkLimits limits;
    limits.max_events = max_events;
    Status st;
    auto back = ReadMerged(WriteTrace("listings", events, 1000, limits), &st);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(back.size(), events.size());
    for (size_t i = 0; i < events.size(); ++i) ASSERT_TRUE(back[i] == events[i]) << i;
  }
}

// Traces of format 1 (before listed names and "next"/"same" references) still read: a file
// written by format 1's iorr and that iorr's JSON lines of it (tests/fixtures/v1).
TEST(TraceFormat, Version1TracesStillRead) {
  std::string dir = std::string(IORR_SOURCE_DIR) + "/tests/fixtures/v1/";
  auto r = TraceReader::Open(dir + "rm.iorr");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->header().core.version, 1);
  MergedReader m(r->get());
  Event e;
  std::ifstream want(dir + "rm.names");
  std::string line;
  size_t n = 0;
  while (m.Next(&e)) {  // one line per event: the call's name and its strings
    std::string got(e.spec().name);
    for (int i = 0; i < e.spec().nargs; ++i)
      if (IsString(e.spec().args[i].kind))
        got += e.args[i].null
                   ? " NULL"
                   : " " + std::to_string(e.args[i].s.size()) + ":" + std::string(e.args[i].s);
    ASSERT_TRUE(std::getline(want, line)) << n;
    ASSERT_EQ(got, line) << "event " << n;
    ++n;
  }
  ASSERT_TRUE(m.status().ok()) << m.status().message();
  EXPECT_FALSE(std::getline(want, line));
  EXPECT_GT(n, 300u);
}

// Format 3 stores readlink's target (its buffer, as many bytes as it returned: no NUL, any
// byte); a failed readlink stores none.
TEST(TraceFormat, ReadlinkTargetsRoundTrip) {
  std::vector<Owned> events;
  auto add = [&](CallId call, int64_t ret, std::string path, std::optional<std::string> target) {
    Owned o;
    o.e.call = call;
    o.e.pid = o.e.tid = 7;
    o.e.start_ns = 2000 * static_cast<int64_t>(events.size() + 1);
    o.e.end_ns = o.e.start_ns + 1000;
    o.e.ret = ret;
    int p = call == CallId::readlinkat ? 1 : 0;
    if (call == CallId::readlinkat) o.e.args[0].i = AT_FDCWD;
    o.s[p] = std::move(path);
    if (target)
      o.s[p + 1] = *target;
    else
      o.e.args[p + 1].null = true;
    o.e.args[p + 2].i = 4096;
    events.push_back(o);
  };
  add(CallId::readlink, 6, "/usr/bin/gcc", "gcc-12");
  add(CallId::readlinkat, 23, "/usr/bin/gcc-12", "x86_64-linux-gnu-gcc-12");
  add(CallId::readlink, -EINVAL, "/usr/bin/x86_64-linux-gnu-gcc-12", std::nullopt);
  add(CallId::readlink, 6, "/usr/bin/gcc", "gcc-12");  // the same target again: a reference
  add(CallId::readlink, 5, "/odd", std::string("a\nb\0c", 5));
  ExpectReadsBackInTimeOrder(WriteTrace("readlink", events, 1000), events);
}

// Format 3 stores setxattr's value (its `size` bytes; NULL for a failed call).
TEST(TraceFormat, XattrValuesRoundTrip) {
  std::vector<Owned> events;
  auto add = [&](int64_t ret, std::optional<std::string> value) {
    Owned o;
    o.e.call = CallId::fsetxattr;
    o.e.pid = o.e.tid = 7;
    o.e.start_ns = 2000 * static_cast<int64_t>(events.size() + 1);
    o.e.end_ns = o.e.start_ns + 1000;
    o.e.ret = ret;
    o.e.args[0].i = 4;
    o.s[1] = "system.posix_acl_access";
    if (value)
      o.s[2] = *value;
    else
      o.e.args[2].null = true;
    o.e.args[3].i = value ? static_cast<int64_t>(value->size()) : 28;
    events.push_back(o);
  };
  add(0, std::string("\x02\0\0\0\x01\0\x06\0\xff\xff\xff\xff", 12));
  add(-EOPNOTSUPP, std::nullopt);
  add(0, std::string("\x02\0\0\0\x01\0\x06\0\xff\xff\xff\xff", 12));  // a reference
  ExpectReadsBackInTimeOrder(WriteTrace("xattr", events, 1000), events);
}

// Format 4 stores the bytes a FICLONE gave its destination as ioctl's fourth argument: a size,
// 0 for an empty source, -1 where the recorder could not say (another request, a failure).
TEST(TraceFormat, CloneSizesRoundTrip) {
  std::vector<Owned> events;
  auto add = [&](int64_t ret, unsigned long request, int64_t size) {
    Owned o;
    o.e.call = CallId::ioctl;
    o.e.pid = o.e.tid = 7;
    o.e.start_ns = 2000 * static_cast<int64_t>(events.size() + 1);
    o.e.end_ns = o.e.start_ns + 1000;
    o.e.ret = ret;
    o.e.args[0].i = 4;
    o.e.args[1].i = static_cast<int64_t>(request);
    o.e.args[2].i = 3;
    o.e.args[3].i = size;
    events.push_back(o);
  };
  add(0, FICLONE, 1000000);
  add(0, FICLONE, 0);
  add(-EOPNOTSUPP, FICLONE, -1);
  add(0, FIONREAD, -1);
  add(0, FICLONE, int64_t{1} << 40);
  ExpectReadsBackInTimeOrder(WriteTrace("ficlone", events, 1000), events);
}

// Format 5's calls: getcwd, inotify_add_watch (a path and IN_* bits), bind (an AF_UNIX path,
// or NULL for any other address), inotify_init and inotify_init1.
TEST(TraceFormat, Version5CallsRoundTrip) {
  std::vector<Owned> events;
  auto add = [&](CallId call, int64_t ret) -> Owned& {
    Owned& o = events.emplace_back();
    o.e.call = call;
    o.e.pid = o.e.tid = 9;
    o.e.start_ns = 2000 * static_cast<int64_t>(events.size());
    o.e.end_ns = o.e.start_ns + 1000;
    o.e.ret = ret;
    return o;
  };
  add(CallId::getcwd, 12).e.args[1].i = 4096;
  add(CallId::getcwd, -ERANGE).e.args[1].i = 2;
  add(CallId::inotify_init1, 3).e.args[0].i = 0x80800;
  add(CallId::inotify_init, 4);
  Owned& w = add(CallId::inotify_add_watch, 1);
  w.e.args[0].i = 3;
  w.s[1] = "/tmp/dir";
  w.e.args[2].i = 0x80000102;
  Owned& b = add(CallId::bind, 0);
  b.e.args[0].i = 5;
  b.s[1] = "sock/" + std::string(100, 'n');
  b.e.args[2].i = 110;
  Owned& n = add(CallId::bind, -EADDRINUSE);
  n.e.args[0].i = 6;
  n.e.args[1].null = true;
  n.e.args[2].i = 16;
  ExpectReadsBackInTimeOrder(WriteTrace("v5calls", events, 1000), events);
}

// A trace of format 4 reads as it was: format 5 changed no other call's bytes (the trace this
// writer makes, its header saying 4).
TEST(TraceFormat, Version4TracesStillRead) {
  auto events = MakeEvents(3000, 1000, 4);
  std::string path = WriteTrace("v4", events, 1000);
  std::string data = ReadAll(path);
  ASSERT_EQ(data[8 + 1 + 8], static_cast<char>(kFormatVersion));
  data[8 + 1 + 8] = 4;  // the version's low byte; then the header's CRC again
  uint32_t size = static_cast<uint8_t>(data[4]) | static_cast<uint8_t>(data[5]) << 8;
  uint32_t crc = Crc32c(data.data() + 8, size - 4);
  for (int i = 0; i < 4; ++i) data[8 + size - 4 + i] = static_cast<char>(crc >> (8 * i));
  WriteAll(path, data);
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->header().core.version, 4);
  ExpectReadsBackInTimeOrder(path, events);
}

// The events of a kept trace of an older format (tests/fixtures/vN/NAME), one line each:
// the call's name, then `arg` of each argument (empty to leave it out), then " = ret".
std::vector<std::string> FixtureLines(const std::string& name, uint16_t version,
                                      std::string (*arg)(const Event&, int)) {
  std::vector<std::string> got;
  auto r = TraceReader::Open(std::string(IORR_SOURCE_DIR) + "/tests/fixtures/v" +
                             std::to_string(version) + "/" + name);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return got;
  EXPECT_EQ((*r)->header().core.version, version);
  MergedReader m(r->get());
  Event e;
  while (m.Next(&e)) {
    std::string line(e.spec().name);
    for (int i = 0; i < e.spec().nargs; ++i) line += arg(e, i);
    got.push_back(line + " = " + std::to_string(e.ret));
  }
  EXPECT_TRUE(m.status().ok()) << m.status().message();
  return got;
}

// A trace of format 2 has no readlink targets: they read as NULL, and the strings after them
// as they were (tests/fixtures/v2/readlink.iorr, written by format 2's `iorr import jsonl`).
TEST(TraceFormat, Version2ReadlinkHasNoTarget) {
  auto strings = [](const Event& e, int i) -> std::string {
    if (!IsString(e.spec().args[i].kind)) return "";
    return e.args[i].null ? " NULL" : " " + std::string(e.args[i].s);
  };
  std::vector<std::string> want = {"readlink /usr/bin/gcc NULL = 6", "openat /usr/bin/gcc-12 = 3",
                                   "readlinkat  NULL = -22", "readlinkat /usr/bin/gcc-12 NULL = 23",
                                   "newfstatat /usr/bin/gcc-12 = 0"};
  EXPECT_EQ(FixtureLines("readlink.iorr", 2, strings), want);
}

// A trace of format 3 has no clone sizes: they read as -1, and the calls after them as they
// were (tests/fixtures/v3/ficlone.iorr, written by format 3's `iorr import jsonl`).
TEST(TraceFormat, Version3IoctlHasNoCloneSize) {
  auto ints = [](const Event& e, int i) -> std::string {
    ArgKind k = e.spec().args[i].kind;
    return IsString(k) || !IsStored(k) ? "" : " " + std::to_string(e.args[i].i);
  };
  std::vector<std::string> want = {"openat -100 0 0 = 3", "openat -100 193 420 = 4",
                                   "ioctl 4 " + std::to_string(FICLONE) + " 3 -1 = 0",
                                   "write 4 5 = 5", "close 4 = 0"};
  EXPECT_EQ(FixtureLines("ficlone.iorr", 3, ints), want);
}

TEST(TraceFormat, NotesAreKept) {
  std::string path = TempPath("notes");
  auto w = TraceWriter::Create(path, Header{}, WriterOptions{});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->AddNote("3 lines could not be parsed").ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok());
  Chunk c;
  EXPECT_FALSE((*r)->NextChunk(&c));
  ASSERT_EQ((*r)->info().notes.size(), 1u);
  EXPECT_EQ((*r)->info().notes[0], "3 lines could not be parsed");
}

}  // namespace
}  // namespace iorr::trace
