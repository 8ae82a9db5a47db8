// MergedReader's effect order (MergeOrder::kEffect): a call a signal handler interrupted comes
// right after the handler's calls that were recorded nested in it, at any depth, across chunks
// (in the chunk after the call's, or in earlier chunks, as the recorder writes them when it
// drains a handler's calls before the interrupted call ends), without changing the order of a
// trace with no nesting; a call that cannot wait (a close) keeps its place before them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "traces/reader.h"
#include "traces/writer.h"

namespace iorr::trace {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/iorr_effect_" + std::to_string(getpid()) + "_" + name;
}

// An event with its path owned; `id` tells events apart in the expectations.
struct Ev {
  int id = 0;
  uint32_t pid = 0, tid = 0;
  int64_t start = 0, end = 0;
  CallId call = CallId::openat;
  std::string path;  // openat's path, or empty for a close
  int64_t fd = 5;
};

Event View(const Ev& v) {
  Event e;
  e.pid = v.pid;
  e.tid = v.tid;
  e.start_ns = v.start;
  e.end_ns = v.end;
  e.call = v.call;
  if (v.call == CallId::openat) {
    e.args[0].i = -100;
    e.args[1].s = v.path;
    e.args[2].i = 0;
    e.args[3].i = 0;
    e.ret = v.fd;
  } else {
    e.args[0].i = v.fd;
    e.ret = 0;
  }
  return e;
}

// Writes the events in the given order. Each is preceded by the promise that nothing added later
// starts before the earliest start still to come, and a thread that steps back in time gets a
// new chunk (as the recorder writes one), so the file is valid whatever the order.
std::string Write(const std::string& name, const std::vector<Ev>& order, ChunkLimits limits = {}) {
  std::string path = TempPath(name);
  Header h;
  h.Set(key::kSource, "test");
  WriterOptions opt;
  opt.time_unit_ns = 1;
  opt.limits = limits;
  auto w = TraceWriter::Create(path, h, opt);
  EXPECT_TRUE(w.ok()) << w.status().message();
  std::vector<int64_t> min_after(order.size() + 1, INT64_MAX);
  for (size_t i = order.size(); i-- > 0;) min_after[i] = std::min(min_after[i + 1], order[i].start);
  std::map<std::pair<uint32_t, uint32_t>, int64_t> last;
  for (size_t i = 0; i < order.size(); ++i) {
    const Ev& v = order[i];
    auto key = std::make_pair(v.pid, v.tid);
    auto it = last.find(key);
    if (it != last.end() && v.start < it->second) {
      EXPECT_TRUE((*w)->EndStream(v.pid, v.tid).ok());
    }
    last[key] = v.start;
    (*w)->Promise(min_after[i]);
    EXPECT_TRUE((*w)->Add(View(v)).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

struct Out {
  int id;
  bool held;
  int64_t resumed;
};

// Reads the trace in the given order: the ids (from the path, "p<id>", or for closes from the
// fd, 1000 + id), whether each was held back, and when it resumed.
std::vector<Out> Read(const std::string& path, MergeOrder order, uint64_t* held = nullptr,
                      uint64_t* violations = nullptr) {
  std::vector<Out> out;
  auto r = TraceReader::Open(path);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return out;
  MergedReader m(r->get(), order);
  Event e;
  while (m.Next(&e)) {
    int id = e.call == CallId::openat ? std::stoi(std::string(e.args[1].s.substr(1)))
                                      : static_cast<int>(e.args[0].i - 1000);
    out.push_back({id, m.held_back(), m.resumed_ns()});
  }
  EXPECT_TRUE(m.status().ok()) << m.status().message();
  if (held) *held = m.held_back_events();
  if (violations) *violations = m.order_violations();
  return out;
}

std::vector<int> Ids(const std::vector<Out>& v) {
  std::vector<int> ids;
  for (const Out& o : v) ids.push_back(o.id);
  return ids;
}

Ev Open(int id, uint32_t tid, int64_t start, int64_t end, int64_t fd = 5) {
  Ev v;
  v.id = id;
  v.pid = 100;
  v.tid = tid;
  v.start = start;
  v.end = end;
  v.path = "p" + std::to_string(id);
  v.fd = fd;
  return v;
}

Ev Close(int id, uint32_t tid, int64_t start, int64_t end) {
  Ev v;
  v.id = id;
  v.pid = 100;
  v.tid = tid;
  v.start = start;
  v.end = end;
  v.call = CallId::close;
  v.fd = 1000 + id;
  return v;
}

std::vector<Ev> ByStart(std::vector<Ev> v) {
  std::stable_sort(v.begin(), v.end(), [](const Ev& a, const Ev& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.tid < b.tid;
  });
  return v;
}

// The recorder's order: each thread's events as they ended (a handler's calls before the call
// they interrupted), threads interleaved by end.
std::vector<Ev> ByEnd(std::vector<Ev> v) {
  std::stable_sort(v.begin(), v.end(), [](const Ev& a, const Ev& b) { return a.end < b.end; });
  return v;
}

// The FIFO case: main's open of a FIFO (1 to 3 s) returns fd 5, which a SIGALRM handler opened
// and closed meanwhile (2.0 s, 2.2 s); another thread makes calls around them.
std::vector<Ev> FifoCase() {
  return {Open(1, 1, 1'000'000'000, 3'000'000'000),  // the FIFO's open, interrupted
          Open(2, 2, 1'500'000'000, 1'500'001'000),  // another thread
          Open(3, 1, 2'000'000'000, 2'100'000'000),  // the handler's open of fd 5
          Open(4, 2, 2'150'000'000, 2'150'001'000),
          Close(5, 1, 2'200'000'000, 2'300'000'000),  // the handler's close of fd 5
          Open(6, 2, 2'250'000'000, 2'250'001'000),
          Open(7, 2, 2'500'000'000, 2'500'001'000),
          Close(8, 1, 3'100'000'000, 3'100'001'000)};  // main's close of the FIFO
}

TEST(EffectOrder, InterruptedCallAfterTheHandlersCalls) {
  const std::vector<int> want = {2, 3, 4, 5, 1, 6, 7, 8};
  for (int layout = 0; layout < 2; ++layout)
    for (uint32_t max_events : {1u, 2u, 3u, 65536u}) {
      ChunkLimits limits;
      limits.max_events = max_events;
      auto events = FifoCase();
      std::string path =
          Write("fifo", layout == 0 ? ByStart(events) : ByEnd(events), limits);
      SCOPED_TRACE("layout " + std::to_string(layout) + ", chunks of " +
                   std::to_string(max_events));
      EXPECT_EQ(Ids(Read(path, MergeOrder::kStart)), std::vector<int>({1, 2, 3, 4, 5, 6, 7, 8}));
      uint64_t held = 0, violations = 0;
      auto out = Read(path, MergeOrder::kEffect, &held, &violations);
      EXPECT_EQ(Ids(out), want);
      EXPECT_EQ(held, 1u);
      EXPECT_EQ(violations, 0u);
      for (const Out& o : out) {
        EXPECT_EQ(o.held, o.id == 1) << o.id;
        // It resumed when the handler's last call returned.
        if (o.id == 1) {
          EXPECT_EQ(o.resumed, 2'300'000'000);
        }
      }
      std::remove(path.c_str());
    }
}

TEST(EffectOrder, NestedInNested) {
  // 1 [10, 100] holds 2 [20, 50], which holds 3 [30, 40]; then 4 [60, 70] in 1; 5 after.
  std::vector<Ev> events = {Open(1, 1, 10, 100), Open(2, 1, 20, 50), Open(3, 1, 30, 40),
                            Open(4, 1, 60, 70), Open(5, 1, 110, 120)};
  for (int layout = 0; layout < 2; ++layout)
    for (uint32_t max_events : {1u, 2u, 65536u}) {
      ChunkLimits limits;
      limits.max_events = max_events;
      std::string path = Write("deep", layout == 0 ? ByStart(events) : ByEnd(events), limits);
      auto out = Read(path, MergeOrder::kEffect);
      EXPECT_EQ(Ids(out), std::vector<int>({3, 2, 4, 1, 5}));
      ASSERT_EQ(out.size(), 5u);
      EXPECT_EQ(out[1].resumed, 40);  // 2 resumed after 3
      EXPECT_EQ(out[3].resumed, 70);  // 1 after 4
      EXPECT_EQ(out[4].resumed, 110);
      std::remove(path.c_str());
    }
}

TEST(EffectOrder, CallsThatCannotWaitTookEffectFirst) {
  // A close (fd 1001) with a handler's open of the fd it released inside it: the handler ran
  // when the close returned (a recorded case), so the close keeps its place. An fcntl that
  // waits for a lock (F_SETLKW) is held back; one that only reads the flags (F_GETFL) is not.
  Ev lock = Close(3, 1, 40, 60);
  lock.call = CallId::fcntl;
  Ev getfl = lock;
  getfl.id = 5;
  getfl.fd = 1005;
  getfl.start = 80;
  getfl.end = 100;
  std::vector<Ev> events = {Close(1, 1, 10, 30), Open(2, 1, 20, 25), lock,  Open(4, 1, 50, 55),
                            getfl, Open(6, 1, 90, 95)};
  std::string path = TempPath("cannot-wait");
  {
    Header h;
    WriterOptions opt;
    opt.time_unit_ns = 1;
    auto w = TraceWriter::Create(path, h, opt);
    ASSERT_TRUE(w.ok());
    for (const Ev& v : events) {
      Event e = View(v);
      if (v.call == CallId::fcntl) e.args[1].i = v.id == 3 ? 7 /*F_SETLKW*/ : 3 /*F_GETFL*/;
      ASSERT_TRUE((*w)->Add(e).ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
  uint64_t held = 0;
  EXPECT_EQ(Ids(Read(path, MergeOrder::kEffect, &held)), std::vector<int>({1, 2, 4, 3, 5, 6}));
  EXPECT_EQ(held, 1u);
  std::remove(path.c_str());
}

TEST(EffectOrder, OverlapsThatAreNotNestingKeepStartOrder) {
  // 2 ends after 1 (not inside it); 4 starts where 3 ends (a dirents at its getdents' end); a
  // zero-length 5 contains nothing; 7 is another thread's.
  std::vector<Ev> events = {Open(1, 1, 10, 30), Open(2, 1, 20, 40), Open(3, 1, 50, 60),
                            Open(4, 1, 60, 60), Open(5, 1, 70, 70), Open(6, 1, 70, 80),
                            Open(7, 2, 15, 25)};
  std::string path = Write("overlap", ByStart(events));
  uint64_t held = 0;
  EXPECT_EQ(Ids(Read(path, MergeOrder::kEffect, &held)), std::vector<int>({1, 7, 2, 3, 4, 5, 6}));
  EXPECT_EQ(held, 0u);
  std::remove(path.c_str());
}

// Random threads of calls, some holding calls of their own (to depth 3), in both layouts and
// several chunk sizes: the reader's order is the one worked out with every event in view.
void Calls(std::mt19937_64& rng, uint32_t tid, int64_t from, int64_t to, int depth, int* id,
           std::vector<Ev>* out) {
  int64_t t = from;
  while (true) {
    int64_t start = t + 1 + static_cast<int64_t>(rng() % 50);
    int64_t len = 1 + static_cast<int64_t>(rng() % (depth < 3 && rng() % 4 == 0 ? 400 : 20));
    if (start + len > to) break;
    // A third of them closes, which cannot wait: what is inside them keeps start order.
    out->push_back(rng() % 3 == 0 ? Close((*id)++, tid, start, start + len)
                                  : Open((*id)++, tid, start, start + len));
    if (len > 20) Calls(rng, tid, start, start + len, depth + 1, id, out);
    t = start + len;
  }
}

std::vector<int> Expected(const std::vector<Ev>& events) {
  std::vector<Ev> sorted = ByStart(events);
  std::map<uint32_t, std::vector<size_t>> by_thread;  // indices into sorted
  std::vector<size_t> pos(sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    auto& v = by_thread[sorted[i].tid];
    pos[i] = v.size();
    v.push_back(i);
  }
  auto next_nested = [&](const Ev& outer, size_t i) {  // the thread's event after sorted[i]
    const auto& v = by_thread[sorted[i].tid];
    if (pos[i] + 1 >= v.size()) return false;
    const Ev& n = sorted[v[pos[i] + 1]];
    return outer.call == CallId::openat && n.start >= outer.start && n.start < outer.end &&
           n.end <= outer.end;
  };
  std::vector<int> out;
  std::map<uint32_t, std::vector<size_t>> held;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (next_nested(sorted[i], i)) {
      held[sorted[i].tid].push_back(i);
      continue;
    }
    out.push_back(sorted[i].id);
    auto& h = held[sorted[i].tid];
    while (!h.empty() && !next_nested(sorted[h.back()], i)) {
      out.push_back(sorted[h.back()].id);
      h.pop_back();
    }
  }
  return out;
}

TEST(EffectOrder, RandomNestingAgainstAFullView) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Ev> events;
    int id = 1;
    for (uint32_t tid = 1; tid <= 3; ++tid) Calls(rng, tid, 0, 20000, 0, &id, &events);
    std::vector<int> want = Expected(events);
    bool nested = false;
    for (const Ev& a : events)
      for (const Ev& b : events)
        nested = nested || (a.call == CallId::openat && a.tid == b.tid && a.id != b.id &&
                            b.start >= a.start && b.end <= a.end);
    ASSERT_TRUE(nested);
    for (int layout = 0; layout < 2; ++layout)
      for (uint32_t max_events : {1u, 3u, 17u, 65536u}) {
        ChunkLimits limits;
        limits.max_events = max_events;
        std::string path = Write("random", layout == 0 ? ByStart(events) : ByEnd(events), limits);
        SCOPED_TRACE("seed " + std::to_string(seed) + ", layout " + std::to_string(layout) +
                     ", chunks of " + std::to_string(max_events));
        EXPECT_EQ(Ids(Read(path, MergeOrder::kEffect)), want);
        std::remove(path.c_str());
      }
  }
}

// Each call inside the one before, 10,000 deep (a hostile trace): the reader holds at most
// kMaxHeld (4,096) of them back and gives every event out once.
TEST(EffectOrder, DeepNestingIsBounded) {
  constexpr int kDepth = 10000;
  std::vector<Ev> events;
  for (int i = 0; i < kDepth; ++i) events.push_back(Open(i + 1, 1, 10 + i, 3 * kDepth - i));
  std::string path = Write("deep-bounded", events);
  uint64_t held = 0;
  std::vector<int> ids = Ids(Read(path, MergeOrder::kEffect, &held));
  EXPECT_EQ(held, 4096u);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kDepth));
  // The first 4,096 held back, the rest in start order, then the held ones innermost first.
  EXPECT_EQ(ids.front(), 4097);
  EXPECT_EQ(ids[kDepth - 4097], kDepth);
  EXPECT_EQ(ids[kDepth - 4096], 4096);
  EXPECT_EQ(ids.back(), 1);
  std::sort(ids.begin(), ids.end());
  for (int i = 0; i < kDepth; ++i) ASSERT_EQ(ids[i], i + 1);
  std::remove(path.c_str());
}

TEST(EffectOrder, NoNestingIsStartOrder) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Ev> events;
    int id = 1;
    for (uint32_t tid = 1; tid <= 4; ++tid) {
      int64_t t = 0;
      for (int i = 0; i < 3000; ++i) {
        int64_t start = t + static_cast<int64_t>(rng() % 30);
        int64_t len = static_cast<int64_t>(rng() % (rng() % 50 == 0 ? 5000 : 20));
        events.push_back(Open(id++, tid, start, start + len));
        t = start + len;
      }
    }
    for (uint32_t max_events : {5u, 100u, 65536u}) {
      ChunkLimits limits;
      limits.max_events = max_events;
      std::string path = Write("plain", ByStart(events), limits);
      uint64_t held = 1;
      auto effect = Read(path, MergeOrder::kEffect, &held);
      EXPECT_EQ(Ids(effect), Ids(Read(path, MergeOrder::kStart)));
      EXPECT_EQ(held, 0u);
      std::remove(path.c_str());
    }
  }
}

}  // namespace
}  // namespace iorr::trace
