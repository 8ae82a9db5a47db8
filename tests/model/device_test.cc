// Device models against closed forms: HDD random reads and sequential rates, flush cost after
// scattered cached writes, write cache off, barriers off, command queueing, SSD parallelism
// and flush with and without power-loss protection, RAID 0 splitting and flush fan-out, and
// the event interface's promises (order, every tag once, determinism).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "model/hdd.h"
#include "model/raid0.h"
#include "model_test_util.h"

namespace iorr::model {
namespace {

using testing::LoadShipped;
using testing::Make;
using testing::Req;
using testing::Rng;

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;

HddGeometry Geometry(const Profile& p) {
  auto g = HddGeometry::Make(p.hdd);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g.value());
}

// Mean latency of n random reads (or writes) of `bytes` at queue depth 1, each submitted when
// the previous completes. Also returns the mean media transfer time of the same requests.
double MeanQd1Ns(DeviceModel& d, BlockOp op, int n, uint64_t bytes, uint64_t seed,
                 const HddGeometry* g = nullptr, double* mean_xfer_ns = nullptr) {
  Rng rng(seed);
  int64_t t = 0;
  double sum = 0, xfer = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t s = rng.Sector(d.capacity_sectors(), bytes / 512);
    Completion c = d.Run(Req(t, op, s, bytes));
    sum += static_cast<double>(c.done_ns - c.submit_ns);
    if (g) xfer += g->TransferNs(s, bytes / 512);
    t = c.done_ns;
  }
  if (mean_xfer_ns) *mean_xfer_ns = xfer / n;
  return sum / n;
}

// ---- HDD: random reads at queue depth 1 ----

class HddProfiles : public ::testing::TestWithParam<const char*> {};

TEST_P(HddProfiles, RandomReadQd1IsSeekPlusHalfRotationPlusTransfer) {
  Profile p = LoadShipped(GetParam());
  HddGeometry g = Geometry(p);
  auto d = Make(p);
  double xfer;
  double mean = MeanQd1Ns(*d, BlockOp::kRead, 20000, 4096, 42, &g, &xfer);
  double expect =
      p.hdd.command_overhead_ms * 1e6 + p.hdd.average_seek_ms * 1e6 + g.rotation_ns() / 2 + xfer;
  std::printf(
      "%-9s random 4 KiB read QD1: %.3f ms; closed form %.3f ms = overhead %.3f + "
      "average seek %.3f + half rotation %.3f + transfer %.3f (%+.2f%%)\n",
      GetParam(), mean / 1e6, expect / 1e6, p.hdd.command_overhead_ms, p.hdd.average_seek_ms,
      g.rotation_ns() / 2e6, xfer / 1e6, 100 * (mean - expect) / expect);
  EXPECT_NEAR(mean, expect, 0.02 * expect);
  DeviceStats s = d->stats();
  EXPECT_EQ(s.reads, 20000u);
  EXPECT_EQ(s.media_reads + s.cache_hits, 20000u);
  EXPECT_EQ(s.flushes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Shipped, HddProfiles,
                         ::testing::Values("hdd-7200", "hdd-15k", "scsi-10k", "ide-7200"));

TEST(HddGeometry, FitHitsTheThreePoints) {
  Profile p = LoadShipped("hdd-7200");
  HddGeometry g = Geometry(p);
  EXPECT_NEAR(g.SeekNs(1), 1.0e6, 1);               // track to track
  EXPECT_NEAR(g.SeekNs(g.cylinders()), 18.0e6, 1);  // full stroke
  EXPECT_NEAR(g.mean_seek_ns(), 8.5e6, 1);          // mean over random sector pairs
  EXPECT_EQ(g.SeekNs(0.3), 0);                      // same cylinder
  EXPECT_GT(g.seek_a_ns(), 0);                      // sqrt part
  EXPECT_NEAR(g.rotation_ns() / 2, 4.1667e6, 100);  // 4.17 ms average rotational latency
  EXPECT_NEAR(g.RateBytesPerSec(0), 85e6, 1e3);
  EXPECT_NEAR(g.RateBytesPerSec(g.sectors()), 45e6, 1e3);
  // Monotone.
  double prev = 0;
  for (double c = 1; c < g.cylinders(); c *= 1.5) {
    EXPECT_GE(g.SeekNs(c), prev);
    prev = g.SeekNs(c);
  }
  std::printf("hdd-7200 seek curve: %.3f + %.3f*sqrt(u) + %.3f*u ms over %.0f cylinders\n",
              g.seek_c_ns() / 1e6, g.seek_a_ns() / 1e6, g.seek_b_ns() / 1e6, g.cylinders());
}

// ---- HDD: sequential rates ----

// Throughput of QD1 sequential reads of `chunk` bytes over `total` bytes from `start`, timed
// from the first completion (which pays the initial positioning) to the last.
double SeqReadRate(DeviceModel& d, uint64_t start, uint64_t total, uint64_t chunk) {
  int64_t t = 0, first = 0;
  uint64_t s = start;
  for (uint64_t done = 0; done < total; done += chunk, s += chunk / 512) {
    Completion c = d.Run(Req(t, BlockOp::kRead, s, chunk));
    if (done == 0) first = c.done_ns;
    t = c.done_ns;
  }
  return static_cast<double>(total - chunk) / (static_cast<double>(t - first) / 1e9);
}

TEST(Hdd, SequentialReadRunsAtTheZoneRate) {
  Profile p = LoadShipped("hdd-7200");
  HddGeometry g = Geometry(p);
  uint64_t total = 128 * kMiB;
  {
    auto d = Make(p);
    double rate = SeqReadRate(*d, 0, total, 64 * kKiB);
    double zone = g.RateBytesPerSec(total / 1024);  // middle of the region
    std::printf("sequential 64 KiB reads, outer zone: %.2f MB/s, zone rate %.2f MB/s\n", rate / 1e6,
                zone / 1e6);
    EXPECT_NEAR(rate, zone, 0.01 * zone);
    EXPECT_GT(d->stats().cache_hits + d->stats().media_reads, 0u);
  }
  {
    auto d = Make(p);
    uint64_t start = d->capacity_sectors() - total / 512 - 2048;
    double rate = SeqReadRate(*d, start, total, 64 * kKiB);
    double zone = g.RateBytesPerSec(start + total / 1024);
    std::printf("sequential 64 KiB reads, inner zone: %.2f MB/s, zone rate %.2f MB/s\n", rate / 1e6,
                zone / 1e6);
    EXPECT_NEAR(rate, zone, 0.01 * zone);
  }
}

TEST(Hdd, SequentialCachedWritesRunAtTheZoneRate) {
  Profile p = LoadShipped("hdd-7200");
  HddGeometry g = Geometry(p);
  auto d = Make(p);
  uint64_t total = 256 * kMiB, chunk = kMiB;
  int64_t t = 0;
  for (uint64_t s = 0; s < total / 512; s += chunk / 512)
    t = d->Run(Req(t, BlockOp::kWrite, s, chunk)).done_ns;
  Completion f = d->Run(Req(t, BlockOp::kFlush, 0, 0));
  double rate = static_cast<double>(total) / (static_cast<double>(f.done_ns) / 1e9);
  double zone = g.RateBytesPerSec(total / 1024);
  std::printf("sequential 1 MiB cached writes + flush: %.2f MB/s, zone rate %.2f MB/s\n",
              rate / 1e6, zone / 1e6);
  EXPECT_NEAR(rate, zone, 0.02 * zone);
  DeviceStats s = d->stats();
  EXPECT_EQ(s.media_bytes_written, total);
  EXPECT_EQ(s.flushes, 1u);
}

// ---- HDD: flush after scattered cached writes ----

// Submits n random 4 KiB writes and a flush, all at time 0; returns the flush's completion.
int64_t FlushAfterScatteredWrites(DeviceModel& d, int n, uint64_t seed) {
  Rng rng(seed);
  for (int i = 0; i < n; ++i)
    d.Submit(Req(0, BlockOp::kWrite, rng.Sector(d.capacity_sectors(), 8), 4096), i);
  d.Submit(Req(0, BlockOp::kFlush, 0, 0), 1u << 30);
  d.Drain();
  Completion c, flush{};
  while (d.PopCompletion(&c))
    if (c.tag == 1u << 30) flush = c;
  return flush.done_ns;
}

TEST(Hdd, FlushCostGrowsWithDirtyExtentsAndElevatorBeatsFifo) {
  Profile p = LoadShipped("hdd-7200");
  HddGeometry g = Geometry(p);
  double half_rot = g.rotation_ns() / 2;
  double xfer = g.TransferNs(g.sectors() / 2, 8);
  double overhead = p.hdd.command_overhead_ms * 1e6;
  double prev = 0;
  for (int n : {16, 64, 256, 1024}) {
    auto d = Make(p);
    auto flush = static_cast<double>(FlushAfterScatteredWrites(*d, n, 7 + n));
    // Unsorted, each destage would pay an average seek; in LBA order the seeks shrink to the
    // gap between neighbours (a 1/n share of the cylinders), plus one return sweep. The
    // rotational wait stays half a revolution on average.
    double fifo = n * (p.hdd.average_seek_ms * 1e6 + half_rot + xfer);
    double sorted = n * (g.SeekNs(g.cylinders() / (n + 1)) + half_rot + xfer) +
                    g.SeekNs(g.cylinders()) + overhead;
    std::printf(
        "flush after %4d scattered 4 KiB writes: %8.2f ms; elevator estimate %8.2f ms "
        "(%+.1f%%), unsorted n*(seek+rotation) %8.2f ms\n",
        n, flush / 1e6, sorted / 1e6, 100 * (flush - sorted) / sorted, fifo / 1e6);
    // Few extents leave wide, uneven gaps (the sqrt part of the curve then gives less than
    // the estimate, by about a return seek); many are close to it.
    if (n >= 64) {
      EXPECT_NEAR(flush, sorted, 0.10 * sorted);
    }
    EXPECT_LT(flush, sorted * 1.1);
    EXPECT_GT(flush, 0.75 * n * half_rot);  // sorting cannot save the rotational wait
    EXPECT_LT(flush, 0.9 * fifo);
    EXPECT_GT(flush, prev);
    prev = flush;
    DeviceStats s = d->stats();
    EXPECT_EQ(s.flushes, 1u);
    EXPECT_EQ(s.media_writes, static_cast<uint64_t>(n));  // 4 KiB apart: no merging at random
  }
}

TEST(Hdd, FlushWithCleanCacheCostsTheCommandOnly) {
  Profile p = LoadShipped("hdd-7200");
  auto d = Make(p);
  Completion c = d->Run(Req(1000, BlockOp::kFlush, 0, 0));
  EXPECT_EQ(c.done_ns - c.submit_ns, std::llround(p.hdd.command_overhead_ms * 1e6));
}

TEST(Hdd, RewritingDirtySectorsMergesInTheCache) {
  Profile p = LoadShipped("hdd-7200");
  auto d = Make(p);
  // 100 rewrites of the same 8 adjacent 4 KiB blocks, then a flush. The writes cross the
  // interface in 800 x 0.114 ms = 91 ms while the drive destages in the background: each
  // destage takes the whole merged 32 KiB extent (or what was rewritten since), about one
  // per positioning time, never one per write.
  for (int i = 0; i < 800; ++i) d->Submit(Req(0, BlockOp::kWrite, 1000 + 8 * (i % 8), 4096), i);
  d->Submit(Req(0, BlockOp::kFlush, 0, 0), 9999);
  int64_t end = d->Drain();
  DeviceStats s = d->stats();
  std::printf(
      "800 rewrites of 32 KiB, then a flush: %lu destages, %lu KiB to the media in "
      "%.1f ms\n",
      static_cast<unsigned long>(s.media_writes),
      static_cast<unsigned long>(s.media_bytes_written / kKiB), end / 1e6);
  EXPECT_LE(s.media_writes, static_cast<uint64_t>(end / 4'000'000));
  EXPECT_LE(s.media_bytes_written, s.media_writes * 32 * kKiB);
  EXPECT_EQ(s.bytes_written, 800 * 4096u);
}

// ---- HDD: write cache off ----

TEST(Hdd, WriteCacheOffMakesEachWritePayPositioning) {
  Profile p = LoadShipped("hdd-7200");
  HddGeometry g = Geometry(p);
  DeviceSettings off;
  off.write_cache = false;
  auto d = Make(p, off);
  double xfer;
  double mean = MeanQd1Ns(*d, BlockOp::kWrite, 10000, 4096, 99, &g, &xfer);
  double expect =
      p.hdd.command_overhead_ms * 1e6 + p.hdd.average_seek_ms * 1e6 + g.rotation_ns() / 2 + xfer;
  auto on = Make(p);
  double cached = MeanQd1Ns(*on, BlockOp::kWrite, 2000, 4096, 99);
  double cached_expect = p.hdd.command_overhead_ms * 1e6 + 4096 * 1e3 / p.hdd.interface_mb_per_s;
  std::printf(
      "random 4 KiB write QD1: cache off %.3f ms (closed form %.3f, %+.2f%%), cache on "
      "%.3f ms (overhead + interface %.3f)\n",
      mean / 1e6, expect / 1e6, 100 * (mean - expect) / expect, cached / 1e6, cached_expect / 1e6);
  EXPECT_NEAR(mean, expect, 0.02 * expect);
  EXPECT_NEAR(cached, cached_expect, 1);  // destaging in the background costs it nothing
  DeviceStats s = d->stats();
  EXPECT_EQ(s.media_writes, 10000u);
  EXPECT_EQ(s.media_bytes_written, 10000 * 4096u);
}

TEST(Hdd, WriteCacheOffStripsFlushesAsTheHostDoes) {
  Profile p = LoadShipped("scsi-10k");  // ships with the write cache off
  auto d = Make(p);
  EXPECT_FALSE(d->write_cache());
  int64_t t = 0;
  for (int i = 0; i < 10; ++i) {
    t = d->Run(Req(t, BlockOp::kWrite, 1000 + 64 * i, 4096, kPreflush | kFua)).done_ns;
    t = d->Run(Req(t, BlockOp::kFlush, 0, 0)).done_ns;
  }
  DeviceStats s = d->stats();
  EXPECT_EQ(s.flushes, 0u);
  EXPECT_EQ(s.fua_writes, 0u);
  EXPECT_EQ(s.flushes_stripped, 20u);
  EXPECT_EQ(s.fua_stripped, 10u);
  EXPECT_EQ(s.media_writes, 10u);
  DeviceSettings on;
  on.write_cache = true;
  EXPECT_TRUE(Make(p, on)->write_cache());
}

// ---- barriers ----

// 200 journal-like commits: a 16 KiB write with PREFLUSH|FUA after 4 scattered data writes.
DeviceStats Commits(const Profile& p, bool barriers, int64_t* elapsed) {
  DeviceSettings s;
  s.barriers = barriers;
  auto d = Make(p, s);
  Rng rng(5);
  int64_t t = 0;
  uint64_t journal = 1'000'000;
  for (int i = 0; i < 200; ++i) {
    for (int k = 0; k < 4; ++k)
      t = d->Run(Req(t, BlockOp::kWrite, rng.Sector(d->capacity_sectors(), 8), 4096)).done_ns;
    t = d->Run(Req(t, BlockOp::kWrite, journal, 16384, kPreflush | kFua | kSync)).done_ns;
    journal += 32;
    if (i % 10 == 0) t = d->Run(Req(t, BlockOp::kFlush, 0, 0)).done_ns;
  }
  *elapsed = t;
  return d->stats();
}

TEST(Barriers, OffStripsPreflushAndFua) {
  Profile p = LoadShipped("hdd-7200");
  int64_t on_ns, off_ns;
  DeviceStats on = Commits(p, true, &on_ns);
  DeviceStats off = Commits(p, false, &off_ns);
  EXPECT_EQ(on.flushes, 220u);
  EXPECT_EQ(on.fua_writes, 200u);
  EXPECT_EQ(off.flushes, 0u);
  EXPECT_EQ(off.fua_writes, 0u);
  EXPECT_EQ(off.flushes_stripped, 220u);
  EXPECT_EQ(off.fua_stripped, 200u);
  EXPECT_EQ(on.bytes_written, off.bytes_written);
  std::printf("200 commits on hdd-7200: barriers on %.1f ms, off %.1f ms (%.1fx)\n", on_ns / 1e6,
              off_ns / 1e6, static_cast<double>(on_ns) / off_ns);
  EXPECT_GT(on_ns, 5 * off_ns);
}

TEST(Barriers, FuaWithoutDeviceSupportBecomesWriteThenFlush) {
  Profile p = LoadShipped("ide-7200");  // fua: false
  auto d = Make(p);
  d->Run(Req(0, BlockOp::kWrite, 5000, 4096, kFua));
  DeviceStats s = d->stats();
  EXPECT_EQ(s.fua_writes, 0u);
  EXPECT_EQ(s.flushes, 1u);
  EXPECT_EQ(s.media_writes, 1u);
  auto d2 = Make(p);
  d2->Run(Req(0, BlockOp::kWrite, 5000, 4096, kPreflush | kFua));
  EXPECT_EQ(d2->stats().flushes, 2u);  // before and after
}

TEST(Barriers, FuaWriteGoesToMediaAndDropsCachedCopy) {
  Profile p = LoadShipped("hdd-7200");
  auto d = Make(p);
  Completion c = d->Run(Req(0, BlockOp::kWrite, 123456, 4096, kFua));
  EXPECT_GT(c.done_ns - c.submit_ns, 1'000'000);  // positioning, not the cache
  EXPECT_EQ(d->stats().fua_writes, 1u);
  EXPECT_EQ(d->stats().media_writes, 1u);
}

// ---- command queueing ----

// Random 4 KiB reads kept `depth` deep for n completions; returns IOPS.
double ClosedLoopIops(DeviceModel& d, int depth, int n, uint64_t seed, uint64_t bytes = 4096) {
  Rng rng(seed);
  uint64_t tag = 0;
  for (int i = 0; i < depth; ++i)
    d.Submit(Req(0, BlockOp::kRead, rng.Sector(d.capacity_sectors(), bytes / 512), bytes), tag++);
  int done = 0;
  int64_t last = 0;
  Completion c;
  while (done < n) {
    d.Step();
    while (d.PopCompletion(&c)) {
      ++done;
      last = c.done_ns;
      d.Submit(Req(c.done_ns, BlockOp::kRead, rng.Sector(d.capacity_sectors(), bytes / 512), bytes),
               tag++);
    }
  }
  return done / (static_cast<double>(last) / 1e9);
}

TEST(Hdd, ReorderingAtDepthRaisesRandomReadRate) {
  Profile p = LoadShipped("hdd-7200");
  auto qd1 = Make(p);
  double one = ClosedLoopIops(*qd1, 1, 5000, 3);
  auto qd31 = Make(p);
  double deep = ClosedLoopIops(*qd31, 31, 20000, 3);
  Profile fifo = p;
  fifo.hdd.reorder = false;
  auto qd31_fifo = Make(fifo);
  double deep_fifo = ClosedLoopIops(*qd31_fifo, 31, 5000, 3);
  std::printf(
      "random 4 KiB reads on hdd-7200: QD1 %.0f IOPS, QD31 FIFO %.0f, QD31 reordered "
      "%.0f (%.2fx)\n",
      one, deep_fifo, deep, deep / one);
  EXPECT_NEAR(deep_fifo, one, 0.05 * one);
  EXPECT_GT(deep, 2.0 * one);
}

// ---- SSD ----

TEST(Ssd, ParallelChannelsAndLatency) {
  Profile p = LoadShipped("ssd-sata");
  const SsdParams& s = p.ssd;
  double one_read = s.read_latency_us * 1e3 + 4096 * 1e3 / s.read_mb_per_s * s.channels;
  auto d = Make(p);
  double mean = MeanQd1Ns(*d, BlockOp::kRead, 2000, 4096, 1);
  EXPECT_NEAR(mean, one_read, 2);
  auto deep = Make(p);
  double iops = ClosedLoopIops(*deep, 32, 20000, 2);
  double expect = s.channels * 1e9 / one_read;
  std::printf("ssd-sata 4 KiB reads: QD1 %.1f us; QD32 %.0f IOPS, %u channels give %.0f\n",
              mean / 1e3, iops, s.channels, expect);
  EXPECT_NEAR(iops, expect, 0.03 * expect);
  // A large read uses every channel: bandwidth-bound.
  auto big = Make(p);
  Completion c = big->Run(Req(0, BlockOp::kRead, 0, 8 * kMiB));
  double big_expect = s.read_latency_us * 1e3 + 8.0 * kMiB * 1e3 / s.read_mb_per_s;
  EXPECT_NEAR(static_cast<double>(c.done_ns), big_expect, 0.001 * big_expect);
}

TEST(Ssd, FlushWithPowerLossProtectionIsNearlyFree) {
  Profile p = LoadShipped("nvme-plp");
  auto d = Make(p);
  for (uint64_t i = 0; i < 64; ++i) d->Submit(Req(0, BlockOp::kWrite, i * 256, 128 * kKiB), i);
  d->Drain();
  int64_t t = d->now_ns();
  Completion f = d->Run(Req(t, BlockOp::kFlush, 0, 0));
  std::printf("nvme-plp flush after 8 MiB of writes: %.1f us\n", (f.done_ns - t) / 1e3);
  EXPECT_LE(f.done_ns - t, 10'000);
  EXPECT_EQ(d->stats().flushes, 1u);
}

TEST(Ssd, FlushWithoutPlpDrainsTheBuffer) {
  Profile p = LoadShipped("ssd-sata");
  SsdParams& s = p.ssd;
  s.write_mb_per_s = 100;  // slow drain so the buffer holds data at the flush
  s.interface_mb_per_s = 500;
  s.buffer_mib = 64;
  auto d = Make(p);
  int n = 64;
  uint64_t bytes = 128 * kKiB;
  for (int i = 0; i < n; ++i) d->Submit(Req(0, BlockOp::kWrite, i * 256ull, bytes), i);
  d->Submit(Req(0, BlockOp::kFlush, 0, 0), 999);
  d->Drain();
  Completion c;
  int64_t last_write = 0, flush_done = 0;
  while (d->PopCompletion(&c)) (c.tag == 999 ? flush_done : last_write) = c.done_ns;
  // Writes cross the interface back to back; the buffer drains at write_mb_per_s from t = 0.
  double xfer = bytes * 1e3 / s.interface_mb_per_s;
  double t_w = n * xfer + s.write_latency_us * 1e3;
  double dirty_mb = (n * bytes - t_w / 1e9 * s.write_mb_per_s * 1e6) / 1e6;
  double expect = t_w + s.flush_ms * 1e6 + dirty_mb * s.flush_per_mb_ms * 1e6;
  std::printf(
      "ssd-sata flush with %.2f MB in the buffer: %.3f ms (closed form %.3f ms: %.1f "
      "fixed + %.1f per MB)\n",
      dirty_mb, (flush_done - last_write) / 1e6, (expect - t_w) / 1e6, s.flush_ms,
      s.flush_per_mb_ms);
  EXPECT_NEAR(static_cast<double>(last_write), t_w, 10);
  EXPECT_NEAR(static_cast<double>(flush_done), expect, 1e-4 * expect);
  // With an empty buffer only the fixed cost is left.
  int64_t later = flush_done + 1'000'000'000;
  Completion f = d->Run(Req(later, BlockOp::kFlush, 0, 0));
  EXPECT_EQ(f.done_ns - later, std::llround(s.flush_ms * 1e6));
}

// ---- RAID 0 ----

TEST(Raid0, SplitsLargeRequestsOverMembers) {
  Profile p = LoadShipped("raid0-6x-ide");
  auto dev = Make(p);
  auto* raid = dynamic_cast<Raid0Model*>(dev.get());
  ASSERT_NE(raid, nullptr);
  ASSERT_EQ(raid->members(), 6u);
  EXPECT_EQ(raid->chunk_sectors(), 128u);
  // 384 KiB from sector 0: one 64 KiB chunk per member.
  dev->Run(Req(0, BlockOp::kWrite, 0, 384 * kKiB));
  for (size_t m = 0; m < 6; ++m) EXPECT_EQ(raid->member(m).stats().bytes_written, 64 * kKiB);
  // 1 MiB from 32 KiB: half of chunk 0, chunks 1..15, half of chunk 16; chunk k is on member
  // k % 6: member 0 gets 0, 6, 12 (32 + 64 + 64 KiB), member 4 gets 4, 10, 16 (64 + 64 + 32).
  auto dev2 = Make(p);
  auto* raid2 = dynamic_cast<Raid0Model*>(dev2.get());
  dev2->Run(Req(0, BlockOp::kWrite, 64, kMiB));
  uint64_t want[6] = {160, 192, 192, 192, 160, 128};
  uint64_t sum = 0;
  for (size_t m = 0; m < 6; ++m) {
    EXPECT_EQ(raid2->member(m).stats().bytes_written, want[m] * kKiB) << "member " << m;
    EXPECT_EQ(raid2->member(m).stats().writes, 1u) << "one contiguous piece per member";
    sum += raid2->member(m).stats().bytes_written;
  }
  EXPECT_EQ(sum, kMiB);
}

TEST(Raid0, LargeReadsRunInParallel) {
  Profile p = LoadShipped("raid0-6x-ide");
  Profile one = p.members[0];
  auto raid = Make(p);
  auto disk = Make(one);
  // Six chunks in parallel vs one chunk on one disk: the same positioning, a sixth of the data
  // each.
  int64_t t_raid = 0, t_disk = 0;
  Rng rng(11);
  for (int i = 0; i < 200; ++i) {
    uint64_t stripe = rng.Next() % (raid->capacity_sectors() / 768 - 1);
    Completion a = raid->Run(Req(t_raid, BlockOp::kRead, stripe * 768, 384 * kKiB));
    t_raid = a.done_ns;
    Completion b = disk->Run(Req(t_disk, BlockOp::kRead, stripe * 128, 384 * kKiB));
    t_disk = b.done_ns;
  }
  std::printf("200 random 384 KiB reads: raid0-6x-ide %.1f ms, one ide-7200 %.1f ms\n",
              t_raid / 1e6, t_disk / 1e6);
  EXPECT_LT(t_raid, t_disk);
}

TEST(Raid0, FlushesGoToEveryMember) {
  Profile p = LoadShipped("raid0-6x-ide");
  auto dev = Make(p);
  auto* raid = dynamic_cast<Raid0Model*>(dev.get());
  int64_t t = dev->Run(Req(0, BlockOp::kWrite, 0, 128 * kKiB)).done_ns;
  Completion f = dev->Run(Req(t, BlockOp::kFlush, 0, 0));
  EXPECT_GT(f.done_ns, t);
  Completion w = dev->Run(Req(f.done_ns, BlockOp::kWrite, 4096, 8192, kPreflush));
  for (size_t m = 0; m < 6; ++m) EXPECT_EQ(raid->member(m).stats().flushes, 2u) << m;
  DeviceStats s = dev->stats();
  EXPECT_EQ(s.flushes, 2u);
  EXPECT_GT(w.done_ns, f.done_ns);
  // Barriers off: nothing reaches the members.
  DeviceSettings off;
  off.barriers = false;
  auto dev2 = Make(p, off);
  auto* raid2 = dynamic_cast<Raid0Model*>(dev2.get());
  dev2->Run(Req(0, BlockOp::kFlush, 0, 0));
  dev2->Run(Req(0, BlockOp::kWrite, 0, 4096, kPreflush | kFua));
  for (size_t m = 0; m < 6; ++m) EXPECT_EQ(raid2->member(m).stats().flushes, 0u);
  EXPECT_EQ(dev2->stats().flushes_stripped, 2u);
}

// ---- the event interface ----

struct Trace {
  std::vector<Completion> done;
  DeviceStats stats;
};

// A mixed open-loop stream: reads, writes, some with PREFLUSH/FUA, flushes, discards.
Trace OpenLoop(const Profile& p, DeviceSettings s, int n, uint64_t seed) {
  auto d = Make(p, s);
  Rng rng(seed);
  int64_t t = 0;
  Trace out;
  Completion c;
  for (int i = 0; i < n; ++i) {
    t += static_cast<int64_t>(rng.Next() % 2'000'000);
    uint64_t r = rng.Next() % 100;
    uint64_t bytes = 4096u << (rng.Next() % 6);
    BlockRequest q = Req(t, BlockOp::kRead, rng.Sector(d->capacity_sectors(), bytes / 512), bytes);
    if (r < 45) {
      q.op = BlockOp::kWrite;
    } else if (r < 50) {
      q.op = BlockOp::kWrite;
      q.flags = kPreflush | kFua;
    } else if (r < 53) {
      q.op = BlockOp::kFlush;
    } else if (r < 55) {
      q.op = BlockOp::kDiscard;
    }
    d->Submit(q, i);
    while (d->PopCompletion(&c)) out.done.push_back(c);
  }
  d->Drain();
  while (d->PopCompletion(&c)) out.done.push_back(c);
  out.stats = d->stats();
  return out;
}

TEST(Interface, EveryRequestCompletesOnceInTimeOrderDeterministically) {
  for (const char* name :
       {"hdd-7200", "hdd-15k", "scsi-10k", "ide-7200", "ssd-sata", "nvme-plp", "raid0-6x-ide"}) {
    Profile p = LoadShipped(name);
    for (bool barriers : {true, false}) {
      DeviceSettings s;
      s.barriers = barriers;
      Trace a = OpenLoop(p, s, 3000, 17);
      ASSERT_EQ(a.done.size(), 3000u) << name;
      std::vector<int> seen(3000);
      for (size_t i = 0; i < a.done.size(); ++i) {
        ASSERT_LT(a.done[i].tag, 3000u);
        ++seen[a.done[i].tag];
        EXPECT_GE(a.done[i].done_ns, a.done[i].submit_ns);
        if (i) {
          EXPECT_GE(a.done[i].done_ns, a.done[i - 1].done_ns) << name << " at " << i;
        }
      }
      for (int k : seen) EXPECT_EQ(k, 1);
      Trace b = OpenLoop(p, s, 3000, 17);
      for (size_t i = 0; i < a.done.size(); ++i) {
        EXPECT_EQ(a.done[i].tag, b.done[i].tag);
        EXPECT_EQ(a.done[i].done_ns, b.done[i].done_ns);
      }
      EXPECT_GT(a.stats.busy_ns, 0);
      EXPECT_LE(a.stats.busy_ns, a.stats.last_ns);
      if (!barriers) {
        EXPECT_EQ(a.stats.flushes, 0u) << name;
      }
    }
  }
}

TEST(Interface, LateSubmissionsMoveToTheClock) {
  auto d = Make(LoadShipped("hdd-7200"));
  Completion a = d->Run(Req(5'000'000, BlockOp::kRead, 0, 4096));
  Completion b = d->Run(Req(0, BlockOp::kRead, 8, 4096));
  EXPECT_EQ(b.submit_ns, a.done_ns);
  EXPECT_EQ(d->stats().late_submits, 1u);
}

TEST(Interface, RequestsPastTheEndWrapIntoTheDevice) {
  auto d = Make(LoadShipped("ssd-sata"));
  d->Run(Req(0, BlockOp::kRead, d->capacity_sectors() + 5, 4096));
  d->Run(Req(0, BlockOp::kRead, d->capacity_sectors() - 1, 4096));
  EXPECT_EQ(d->stats().beyond_capacity, 2u);
}

TEST(Interface, BytesWrittenByKind) {
  auto d = Make(LoadShipped("nvme-plp"));
  BlockRequest r = Req(0, BlockOp::kWrite, 0, 4096);
  r.kind = BlockKind::kJournal;
  d->Run(r);
  r.kind = BlockKind::kMetadata;
  r.bytes = 8192;
  d->Run(r);
  DeviceStats s = d->stats();
  EXPECT_EQ(s.bytes_written_by_kind[static_cast<int>(BlockKind::kData)], 0u);
  EXPECT_EQ(s.bytes_written_by_kind[static_cast<int>(BlockKind::kJournal)], 4096u);
  EXPECT_EQ(s.bytes_written_by_kind[static_cast<int>(BlockKind::kMetadata)], 8192u);
  EXPECT_EQ(s.bytes_written, 12288u);
}

// How many requests per second of host time the models process, kept 32 deep (printed; a
// loose floor so that a slow machine does not fail it).
TEST(Speed, RequestsPerSecond) {
  for (const char* name : {"hdd-7200", "ide-7200", "ssd-sata", "nvme-plp", "raid0-6x-ide"}) {
    auto d = Make(LoadShipped(name));
    Rng rng(1);
    int n = 300000, done = 0;
    uint64_t tag = 0;
    auto next = [&](int64_t t) {
      uint64_t r = rng.Next() % 100;
      BlockOp op = r < 60 ? BlockOp::kWrite : BlockOp::kRead;
      d->Submit(Req(t, op, rng.Sector(d->capacity_sectors(), 8), 4096, r == 99 ? kPreflush : 0),
                tag++);
    };
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 32; ++i) next(0);
    Completion c;
    while (done < n) {
      d->Step();
      while (d->PopCompletion(&c)) {
        ++done;
        next(c.done_ns);
      }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-13s %5.2f M requests/s (32 deep, random 4 KiB, 60%% writes, 1%% PREFLUSH)\n",
                name, n / secs / 1e6);
    EXPECT_GT(n / secs, 1e5);
  }
}

}  // namespace
}  // namespace iorr::model
