// The models' speed rule: once a device has seen its working set of queue slots, cache extents
// and completions, submitting, stepping and completing requests never calls malloc. This
// binary interposes malloc to count calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "model_test_util.h"

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void* __libc_memalign(size_t, size_t);

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
// Aligned operator new (which std::pmr's pools use upstream) goes through these.
extern "C" void* aligned_alloc(size_t a, size_t n) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
extern "C" void* memalign(size_t a, size_t n) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(a, n);
}
extern "C" int posix_memalign(void** out, size_t a, size_t n) {
  g_mallocs.fetch_add(1, std::memory_order_relaxed);
  *out = __libc_memalign(a, n);
  return *out ? 0 : ENOMEM;
}

namespace iorr::model {
namespace {

using testing::LoadShipped;
using testing::Make;
using testing::Req;
using testing::Rng;

// A mixed stream kept up to 32 requests deep: random and sequential reads and writes, some
// with PREFLUSH/FUA, flushes and discards, for n completions.
void Drive(DeviceModel& d, Rng& rng, int n, uint64_t* tag) {
  Completion c;
  int done = 0;
  uint64_t seq = 0;
  auto next = [&](int64_t t) {
    uint64_t r = rng.Next() % 100;
    uint64_t bytes = 4096u << (rng.Next() % 5);
    BlockRequest q = Req(t, BlockOp::kWrite, rng.Sector(d.capacity_sectors(), 256), bytes);
    if (r < 30) q.op = BlockOp::kRead;
    if (r >= 30 && r < 40) {
      q.sector = seq;
      seq += bytes / 512;
    }
    if (r >= 90 && r < 95) q.flags = kPreflush | kFua;
    if (r == 95) q.op = BlockOp::kFlush;
    if (r == 96) q.op = BlockOp::kDiscard;
    d.Submit(q, (*tag)++);
  };
  for (int i = 0; i < 32; ++i) next(d.now_ns());
  while (done < n) {
    d.Step();
    while (d.PopCompletion(&c)) {
      ++done;
      next(c.done_ns);
    }
  }
}

TEST(ModelAlloc, SteadyStateNeverAllocates) {
  for (const char* name : {"hdd-7200", "ide-7200", "ssd-sata", "nvme-plp", "raid0-6x-ide"}) {
    Profile p = LoadShipped(name);
    long start = g_mallocs.load();
    auto d = Make(p);
    ASSERT_GT(g_mallocs.load(), start) << name << ": the counter counts";
    Rng rng(3);
    uint64_t tag = 0;
    Drive(*d, rng, 50000, &tag);  // warm-up: slots, rings, cache extents reach their size
    long before = g_mallocs.load();
    Drive(*d, rng, 100000, &tag);
    long calls = g_mallocs.load() - before;
    ASSERT_EQ(calls, 0) << name << ": malloc calls in 100000 requests";
    EXPECT_GT(d->stats().requests, 150000u);
  }
}

}  // namespace
}  // namespace iorr::model
