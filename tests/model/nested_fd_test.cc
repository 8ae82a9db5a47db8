// The file-system models on a trace whose open a signal handler interrupted: the handler's
// calls, recorded nested in the open, opened and closed the fd number the open then returned.
// The model's fd table must give that fd to the interrupted open's file, which the program then
// writes and fsyncs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "model/fs_model.h"
#include "model_test_util.h"
#include "traces/header.h"
#include "traces/writer.h"

namespace iorr::model {
namespace {

using trace::CallId;
using trace::Event;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kMiB = 1 << 20;

struct Call {
  Event e;
  std::string path;
};

Call At(int64_t start_ms, int64_t end_ms, CallId call, int64_t ret) {
  Call c;
  c.e.call = call;
  c.e.pid = c.e.tid = 100;
  c.e.start_ns = start_ms * kMs;
  c.e.end_ns = end_ms * kMs;
  c.e.ret = ret;
  return c;
}
Call OpenAt(int64_t start_ms, int64_t end_ms, std::string path, int flags, int64_t fd) {
  Call c = At(start_ms, end_ms, CallId::openat, fd);
  c.e.args[0].i = AT_FDCWD;
  c.path = std::move(path);
  c.e.args[2].i = flags;
  c.e.args[3].i = 0644;
  return c;
}
Call Fd(int64_t start_ms, int64_t end_ms, CallId call, int64_t fd, int64_t ret, int64_t count = 0) {
  Call c = At(start_ms, end_ms, call, ret);
  c.e.args[0].i = fd;
  c.e.args[2].i = count;  // read and write: (fd, buf, count)
  return c;
}

std::string Write(const std::vector<Call>& calls) {
  std::string path =
      ::testing::TempDir() + "/iorr_nested_fd_" + std::to_string(getpid()) + ".iorr";
  trace::Header h;
  h.Set(trace::key::kSource, "record");
  h.Set(trace::key::kCwd, "/w");
  auto w = trace::TraceWriter::Create(path, h, trace::WriterOptions{});
  EXPECT_TRUE(w.ok()) << w.status().message();
  for (const Call& c : calls) {
    Event e = c.e;
    if (!c.path.empty()) e.args[1].s = c.path;
    (*w)->Promise(e.start_ns);
    EXPECT_TRUE((*w)->Add(e).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

// open("data") blocks from 1 s to 3 s (a FIFO, or restarted after the handler); at 2 s a
// handler opens "x" as fd 5, writes 3 bytes to it and closes it; the open then returns fd 5,
// through which the program writes 1 MiB at 3.1 s and fsyncs it.
std::vector<Call> NestedTrace() {
  return {OpenAt(1000, 3000, "data", O_WRONLY | O_CREAT, 5),
          OpenAt(2000, 2001, "x", O_WRONLY | O_CREAT, 5),
          Fd(2002, 2003, CallId::write, 5, 3, 3),
          Fd(2004, 2005, CallId::close, 5, 0),
          Fd(3100, 3110, CallId::write, 5, kMiB, kMiB),
          Fd(3200, 3210, CallId::fsync, 5, 0),
          Fd(3300, 3301, CallId::close, 5, 0)};
}

TEST(NestedFd, TheInterruptedOpensFdNamesItsFile) {
  std::string path = Write(NestedTrace());
  Profile profile = testing::LoadShipped("ssd-sata");
  for (const std::string_view fs : FsModelNames()) {
    SCOPED_TRACE(std::string(fs));
    auto device = testing::Make(profile);
    ASSERT_TRUE(device);
    FsModelOptions o;
    auto r = RunFsModel(fs, path, *device, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    // The fsync wrote data's MiB (in start order the handler's close took fd 5 away: its write
    // and fsync went nowhere, and no data reached the disk before the end).
    EXPECT_GE(r->device.bytes_written_by_kind[static_cast<int>(BlockKind::kData)],
              static_cast<uint64_t>(kMiB));
    EXPECT_EQ(r->events, 7u);
    // The program's own time: the open counts from when it resumed (2.005 s) to its end, not
    // again the handler's calls inside it; the run ends after the last call, about 3.3 s in.
    EXPECT_LT(r->cpu_ns, 1'100 * kMs);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace iorr::model
