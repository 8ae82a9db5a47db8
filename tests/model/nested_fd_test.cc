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
#include "tests/traces/nested_calls.h"

namespace iorr::model {
namespace {

using trace::CallId;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kMiB = 1 << 20;

using test::Call;
using test::Fd;
using test::OpenAt;

std::string Write(const std::vector<Call>& calls) {
  std::string path =
      ::testing::TempDir() + "/iorr_nested_fd_" + std::to_string(getpid()) + ".iorr";
  test::WriteCalls(path, calls);
  return path;
}

// open("data") blocks from 1 s to 3 s (a FIFO, or restarted after the handler); at 2 s a
// handler opens "x" as fd 5, writes 3 bytes to it and closes it; the open then returns fd 5,
// through which the program writes 1 MiB at 3.1 s and fsyncs it.
std::vector<Call> NestedTrace() {
  return {OpenAt(100, 1000, 3000, "data", O_WRONLY | O_CREAT, 5),
          OpenAt(100, 2000, 2001, "x", O_WRONLY | O_CREAT, 5),
          Fd(100, 2002, 2003, CallId::write, 5, 3, 3),
          Fd(100, 2004, 2005, CallId::close, 5, 0),
          Fd(100, 3100, 3110, CallId::write, 5, kMiB, kMiB),
          Fd(100, 3200, 3210, CallId::fsync, 5, 0),
          Fd(100, 3300, 3301, CallId::close, 5, 0)};
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
