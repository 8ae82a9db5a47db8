// The recorder's rule for the encoder: after Init, adding events and finishing chunks never
// calls malloc. This binary interposes malloc to count calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "traces/encoder.h"

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);

namespace {
std::atomic<long> g_mallocs{0};
}

extern "C" void* malloc(size_t n) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t a, size_t b) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, size_t n) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}

namespace iorr::trace {
namespace {

TEST(ChunkEncoder, AddAndFinishNeverAllocate) {
  ChunkLimits limits;
  limits.max_events = 4096;
  limits.section_bytes = 64 << 10;
  ChunkEncoder enc;
  ASSERT_TRUE(enc.Init(limits, 1000));
  ChunkCompressor zc;
  ASSERT_TRUE(zc.Init(limits.zstd_level));
  std::vector<uint8_t> out(enc.MaxOutputBytes());
  std::vector<std::string> paths;
  for (int i = 0; i < 500; ++i) paths.push_back("src/dir" + std::to_string(i % 37) + "/file" + std::to_string(i));
  enc.Begin(0, 1, 1);

  long before = g_mallocs.load();
  size_t chunks = 0, bytes = 0;
  Event e;
  for (int i = 0; i < 200000; ++i) {
    e.call = (i % 3 == 0) ? CallId::openat : CallId::write;
    e.start_ns = i * 1000;
    e.end_ns = e.start_ns + 500;
    if (e.call == CallId::openat) {
      e.args[0].i = -100;
      e.args[1].s = paths[static_cast<size_t>(i) % paths.size()];
      e.args[2].i = 0x241;
      e.args[3].i = 0644;
      e.ret = 4;
    } else {
      e.args[0].i = 4;
      e.args[2].i = 4096;
      e.ret = 4096;
    }
    auto r = enc.Add(e);
    if (r == ChunkEncoder::AddResult::kFull) {
      size_t n = enc.Finish(zc, e.start_ns, out.data(), out.size());
      ASSERT_GT(n, 0u);
      bytes += n;
      ++chunks;
      r = enc.Add(e);
    }
    ASSERT_EQ(r, ChunkEncoder::AddResult::kOk);
  }
  bytes += enc.Finish(zc, 0, out.data(), out.size());
  long after = g_mallocs.load();
  EXPECT_GT(chunks, 10u);
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(after - before, 0) << "malloc calls while encoding";
}

}  // namespace
}  // namespace iorr::trace
