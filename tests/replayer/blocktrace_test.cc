// The tracefs line parser of `iorr replay --block-trace` on lines as kernels print them (6.x with
// the ioprio field, older ones without), flushes, errors, lost-event lines and garbage; and the
// block device lookup on a file system without one.
#include "replayer/blocktrace.h"

#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include <string>

#include "traces/block.h"

namespace iorr::replay {
namespace {

namespace blk = trace::block;

struct Parsed {
  LineKind kind;
  BlockEvent e;
  std::string comm;
  uint64_t lost = 0;
};

Parsed Parse(std::string_view line) {
  Parsed p;
  std::string_view comm;
  p.kind = ParseTraceLine(line, &p.e, &comm, &p.lost);
  p.comm = std::string(comm);
  return p;
}

TEST(BlockTraceLine, BioQueue) {
  Parsed p = Parse(
      "             tar-1234    [001] .....  1234.567890: block_bio_queue: 7,0 WS 1234 + 8 [tar]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.phase, blk::kQueue);
  EXPECT_EQ(p.e.mono_ns, 1234567890000);
  EXPECT_EQ(p.e.dev, makedev(7, 0));
  EXPECT_EQ(p.e.sector, 1234);
  EXPECT_EQ(p.e.bytes, 4096u);
  EXPECT_EQ(p.e.op, blk::kWrite | blk::kSync);
  EXPECT_EQ(p.e.ret, 0);
  EXPECT_EQ(p.comm, "tar");
}

TEST(BlockTraceLine, PreflushFuaCommitAndEmptyFlush) {
  Parsed p = Parse(
      "    jbd2/loop0-8-26484   [001] .....  9334.361663: block_bio_queue: 7,0 FWFSM 524352 + 8 "
      "[jbd2/loop0-8]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.op, blk::kPreflush | blk::kWrite | blk::kFua | blk::kSync | blk::kMeta);
  EXPECT_EQ(p.comm, "jbd2/loop0-8");
  p = Parse(
      "         python3-29482   [001] .....  9412.505348: block_bio_queue: 7,0 FWS 0 + 0 "
      "[python3]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.op, blk::kPreflush | blk::kWrite | blk::kSync);
  EXPECT_EQ(p.e.bytes, 0u);
  EXPECT_EQ(p.e.sector, 0);
}

TEST(BlockTraceLine, RqIssueWithAndWithoutIoprio) {
  Parsed p = Parse(
      "    jbd2/loop0-8-26484   [001] .....  9334.361545: block_rq_issue: 7,0 WSM 28672 () 524296 "
      "+ 56 be,0,3 [jbd2/loop0-8]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.phase, blk::kIssue);
  EXPECT_EQ(p.e.bytes, 28672u);
  EXPECT_EQ(p.e.sector, 524296);
  EXPECT_EQ(p.e.op, blk::kWrite | blk::kSync | blk::kMeta);
  EXPECT_EQ(p.comm, "jbd2/loop0-8");
  p = Parse(
      "  kworker/u4:2-56 [000] ..... 1234.567891: block_rq_issue: 7,0 WS 4096 () 1234 + 8 "
      "[kworker/u4:2]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.bytes, 4096u);
  EXPECT_EQ(p.e.sector, 1234);
  EXPECT_EQ(p.comm, "kworker/u4:2");
  // The flush machinery's own request: REQ_OP_FLUSH with REQ_PREFLUSH.
  p = Parse(
      "    kworker/1:1H-949     [001] .....  9334.361687: block_rq_issue: 7,0 FF 0 () 0 + 0 "
      "none,0,0 [kworker/1:1H]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.op, blk::kPreflush | blk::kFlushOp);
  EXPECT_EQ(p.e.bytes, 0u);
  // A passthrough command in the parentheses, with spaces.
  p = Parse(
      "  sg-1 [000] ..... 1.000001: block_rq_issue: 8,0 R 512 (12 00 00 00 24 00) 0 + 0 [sg]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.bytes, 512u);
}

TEST(BlockTraceLine, RqComplete) {
  Parsed p = Parse(
      "     ksoftirqd/1-22      [001] ..s..  9334.361349: block_rq_complete: 7,0 WS () 266240 + 16 "
      "be,0,4 [0]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.phase, blk::kComplete);
  EXPECT_EQ(p.e.sector, 266240);
  EXPECT_EQ(p.e.bytes, 16u * 512);
  EXPECT_EQ(p.e.ret, 0);
  EXPECT_EQ(p.comm, "ksoftirqd/1");  // the task that was running
  p = Parse(
      "     ksoftirqd/1-22      [001] ..s..  9334.361809: block_rq_complete: 7,0 FF () "
      "18446744073709551615 + 0 none,0,0 [0]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.sector, -1);
  p = Parse(
      "          <idle>-0       [000] d.h1.   100.000002: block_rq_complete: 8,16 W () 8 + 8 [-5]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.e.ret, -5);
  EXPECT_EQ(p.e.dev, makedev(8, 16));
  EXPECT_EQ(p.comm, "<idle>");
  p = Parse(
      "           <...>-77      [000] .....   100.000002: block_rq_complete: 8,16 R () 8 + 8 [0]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.comm, "");
  // options/record-tgid adds "(tgid)" after the pid.
  p = Parse(
      "     fio-1234  (   1230) [000] .....   100.000002: block_rq_complete: 8,16 R () 8 + 8 [0]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.comm, "fio");
}

TEST(BlockTraceLine, CommsWithSpacesDashesAndBrackets) {
  Parsed p =
      Parse("  my prog-x-77 [000] ..... 5.000100: block_bio_queue: 259,1 RA 16 + 256 [my prog-x]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.comm, "my prog-x");
  EXPECT_EQ(p.e.op, blk::kRead | blk::kReadahead);
  EXPECT_EQ(p.e.dev, makedev(259, 1));
  EXPECT_EQ(p.e.mono_ns, 5000100000);
  p = Parse("  a]b-77 [000] ..... 5.000100: block_bio_queue: 7,0 W 16 + 8 [a]b]");
  ASSERT_EQ(p.kind, LineKind::kEvent);
  EXPECT_EQ(p.comm, "a]b");
}

TEST(BlockTraceLine, LostSkippedAndBadLines) {
  Parsed p = Parse("CPU:1 [LOST 123 EVENTS]");
  EXPECT_EQ(p.kind, LineKind::kLost);
  EXPECT_EQ(p.lost, 123u);
  EXPECT_EQ(Parse("").kind, LineKind::kSkip);
  EXPECT_EQ(Parse("# tracer: nop").kind, LineKind::kSkip);
  EXPECT_EQ(Parse("  x-1 [000] ..... 1.000001: block_plug: [x]").kind, LineKind::kSkip);
  const char* bad[] = {
      "garbage",
      "  x-1 [000] ..... 1.000001: block_bio_queue: 7,0 WS 12 + [x]",
      "  x-1 [000] ..... 1.000001: block_bio_queue: 7,0 QQ 12 + 8 [x]",
      "  x-1 [000] ..... 1.000001: block_bio_queue: 70 WS 12 + 8 [x]",
      "  x-1 [000] ..... 1.000001: block_bio_queue: 7,0 WS 12 + 8 x",
      "  x-1 [000] ..... : block_bio_queue: 7,0 WS 12 + 8 [x]",
      "  x-1 [000] ..... 1.000001: block_rq_issue: 7,0 WS 4096 ( 12 + 8 [x]",
      "  x-1 [000] ..... 1.000001: block_rq_complete: 7,0 WS () 12 + 8 [oops]",
      "  x-1 [000] ..... 1.000001: block_rq_complete: 7,0 WS () 12 + 8 [5]",
      "CPU:1 [LOST",
      "  x-1 [000] ..... 1.000001: block_bio_queue: 7,0 WS 99999999999999999999999 + 8 [x]",
  };
  for (const char* line : bad) EXPECT_EQ(Parse(line).kind, LineKind::kBad) << line;
  // Cut anywhere, a good line is either still understood or bad, never a crash.
  std::string good =
      "    jbd2/loop0-8-26484   [001] .....  9334.361545: block_rq_issue: 7,0 WSM 28672 () "
      "524296 + 56 be,0,3 [jbd2/loop0-8]";
  for (size_t n = 0; n <= good.size(); ++n) Parse(std::string_view(good).substr(0, n));
}

TEST(BlockDeviceLookup, RefusesProcAndMissingPaths) {
  auto r = FindBlockDevice("/proc");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("proc"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  EXPECT_FALSE(FindBlockDevice("/nonexistent/iorr/dir").ok());
}

}  // namespace
}  // namespace iorr::replay
