// Encode and decode speed of the trace format on a real trace: loads every event of TRACE into
// memory, then times (a) encoding them all through TraceWriter into /dev/null and (b) reading
// and decoding the file (TraceReader + ChunkCursor), each several times, and prints medians.
// Usage: trace_codec_bench TRACE [runs=5] [zstd level]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "traces/reader.h"
#include "traces/writer.h"

using namespace iorr;
using namespace iorr::trace;

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: trace_codec_bench TRACE [runs] [zstd-level]\n");
    return 2;
  }
  std::string path = argv[1];
  int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  int level = argc > 3 ? std::atoi(argv[3]) : ChunkLimits{}.zstd_level;
  auto r = TraceReader::Open(path);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().message().c_str());
    return 2;
  }
  uint32_t unit = (*r)->time_unit_ns();
  Header header = (*r)->header();
  // Events in a flat array, their strings in a pool that never moves them.
  std::vector<Event> events;
  std::deque<std::string> pool;
  {
    MergedReader m(r->get());
    Event e;
    while (m.Next(&e)) {
      for (int i = 0; i < kMaxArgs; ++i)
        if (!e.args[i].s.empty()) e.args[i].s = pool.emplace_back(e.args[i].s);
      events.push_back(e);
    }
    if (!m.status().ok()) {
      std::fprintf(stderr, "%s\n", m.status().message().c_str());
      return 2;
    }
  }
  std::vector<double> enc, dec;
  uint64_t bytes = 0;
  for (int run = 0; run < runs; ++run) {
    WriterOptions wo;
    wo.time_unit_ns = unit;
    wo.limits.zstd_level = level;
    auto w = TraceWriter::Create("/dev/null", header, wo);
    if (!w.ok()) return 2;
    double t0 = Now();
    for (const auto& e : events) {
      (*w)->Promise(e.start_ns);
      if (!(*w)->Add(e).ok()) return 2;
    }
    if (!(*w)->Close().ok()) return 2;
    enc.push_back(Now() - t0);
    bytes = (*w)->bytes();

    double t1 = Now();
    auto rr = TraceReader::Open(path);
    Chunk chunk;
    ChunkCursor cursor;
    Event e;
    uint64_t n = 0, sum = 0;
    while ((*rr)->NextChunk(&chunk)) {
      if (!cursor.Init(&chunk, unit).ok()) return 2;
      while (cursor.Next(&e)) {
        ++n;
        sum += static_cast<uint64_t>(e.ret);
      }
    }
    dec.push_back(Now() - t1);
    if (n != events.size()) {
      std::fprintf(stderr, "decoded %llu of %zu events\n", (unsigned long long)n, events.size());
      return 2;
    }
    if (sum == 42) std::puts("");  // keep the loop
  }
  double n = static_cast<double>(events.size());
  std::printf("events            %zu\n", events.size());
  std::printf("encoded size      %llu bytes, %.2f bytes/event (time unit %u ns, zstd level %d)\n",
              (unsigned long long)bytes, static_cast<double>(bytes) / n, unit, level);
  std::printf("encode            %.1f M events/s (median of %d, %.3f s)\n", n / Median(enc) / 1e6,
              runs, Median(enc));
  std::printf("decode            %.1f M events/s (median of %d, %.3f s)\n", n / Median(dec) / 1e6,
              runs, Median(dec));
  return 0;
}
