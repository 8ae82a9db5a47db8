// Replays of traces whose calls a signal handler interrupted: the handler's calls are recorded
// nested in the interrupted call, which started first but took effect last. A handler that
// opened and closed the fd number the interrupted open then got must not take that fd from it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "replayer/replayer.h"
#include "tests/traces/nested_calls.h"

namespace iorr::replay {
namespace {

using trace::CallId;

using test::At;
using test::Call;
using test::Fd;
using test::OpenAt;

class Dir {
 public:
  Dir() {
    std::string t = ::testing::TempDir() + "/iorr_nested_XXXXXX";
    path_ = mkdtemp(t.data()) ? t : std::string();
  }
  ~Dir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes the calls (in start order, as the recorder's trace reads) into dir/t.iorr, recorded
// in /w.
std::string Write(const Dir& dir, const std::vector<Call>& calls) {
  std::string path = dir.path() + "/t.iorr";
  test::WriteCalls(path, calls);
  return path;
}

Report Replay(const Dir& dir, const std::string& trace, bool per_thread) {
  std::string root = dir.path() + (per_thread ? "/root-threads" : "/root-serial");
  mkdir(root.c_str(), 0755);
  Options o;
  o.trace = trace;
  o.root = root;
  o.cache = Cache::kWarm;
  o.per_thread = per_thread;
  auto r = Run(o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Report{};
}

std::string Mismatches(const Report& r) {
  std::string s;
  for (const std::string& m : r.first_mismatches) s += m + "; ";
  return s;
}

// The end-to-end case (tests/replayer/nested_fifo.c) as its recording reads: main (pid 100)
// blocks 2 s in open() of a FIFO; 1 s in, a SIGALRM handler opens, writes and closes
// handler.dat, on fd 5; the open of the FIFO then returns fd 5 too, when the child (pid 101)
// opens the FIFO for writing. main reads what the child wrote through fd 5.
std::vector<Call> FifoTrace() {
  Call mkfifo = At(100, 1, 2, CallId::mknodat, 0);
  mkfifo.e.args[0].i = AT_FDCWD;
  mkfifo.path = "fifo";
  mkfifo.e.args[2].i = S_IFIFO | 0644;
  Call fork = At(100, 3, 4, CallId::clone, 101);
  fork.e.args[0].i = SIGCHLD;
  return {mkfifo,
          fork,
          OpenAt(100, 1000, 3000, "fifo", O_RDONLY, 5),  // interrupted by the handler
          OpenAt(100, 2000, 2001, "handler.dat", O_WRONLY | O_CREAT | O_TRUNC, 5),
          Fd(100, 2002, 2003, CallId::write, 5, 3, 3),
          Fd(100, 2004, 2005, CallId::close, 5, 0),
          OpenAt(101, 2999, 3000, "fifo", O_WRONLY, 3),
          Fd(101, 3001, 3002, CallId::write, 3, 5, 5),
          Fd(101, 3003, 3004, CallId::close, 3, 0),
          At(101, 3005, 3005, CallId::exit_group, 0),
          Fd(100, 3100, 3101, CallId::read, 5, 5, 5),
          Fd(100, 3102, 3103, CallId::close, 5, 0)};
}

TEST(NestedReplay, HandlersFdDoesNotTakeTheInterruptedOpensFd) {
  Dir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string trace = Write(dir, FifoTrace());
  for (bool per_thread : {true, false}) {
    SCOPED_TRACE(per_thread ? "per thread" : "serial");
    Report r = Replay(dir, trace, per_thread);
    EXPECT_EQ(r.threads, per_thread ? 2u : 1u);
    // Before effect order: the handler's open replaced the FIFO's live fd (closing the read
    // side), the child's open for writing then failed with ENXIO, and main's read was skipped
    // ("fd not opened by the trace").
    EXPECT_EQ(r.mismatches, 0u) << Mismatches(r);
    EXPECT_EQ(r.calls["openat"].count, 3u);
    EXPECT_EQ(r.calls["read"].count, 1u);
    EXPECT_EQ(r.calls["write"].count, 2u);
    EXPECT_EQ(r.calls["close"].count, 3u);
    EXPECT_EQ(r.skipped.count("fd not opened by the trace (inherited or unknown)"), 0u);
    struct stat st {};
    std::string root = dir.path() + (per_thread ? "/root-threads" : "/root-serial");
    ASSERT_EQ(stat((root + "/w/handler.dat").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 3);
    ASSERT_EQ(stat((root + "/w/fifo").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
  }
}

// A regular file: an open restarted after a handler (SA_RESTART) that used and closed the same
// fd. Prepare follows the fds too: the file the later read reads must exist with its bytes.
TEST(NestedReplay, PrepareAndReplayFollowTheInterruptedOpensFd) {
  Dir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string trace = Write(dir, {OpenAt(100, 1000, 3000, "data", O_RDONLY, 5),
                                  OpenAt(100, 2000, 2001, "x", O_WRONLY | O_CREAT, 5),
                                  Fd(100, 2002, 2003, CallId::write, 5, 3, 3),
                                  Fd(100, 2004, 2005, CallId::close, 5, 0),
                                  Fd(100, 3100, 3101, CallId::read, 5, 100, 100),
                                  Fd(100, 3102, 3103, CallId::close, 5, 0)});
  Report r = Replay(dir, trace, true);
  EXPECT_EQ(r.mismatches, 0u) << Mismatches(r);
  EXPECT_EQ(r.calls["read"].count, 1u);
  EXPECT_EQ(r.calls["write"].count, 1u);
  EXPECT_EQ(r.skipped.count("fd not opened by the trace (inherited or unknown)"), 0u);
  struct stat st {};
  ASSERT_EQ(stat((dir.path() + "/root-threads/w/data").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 100);  // prepared for the read through the outer open's fd
  ASSERT_EQ(stat((dir.path() + "/root-threads/w/x").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 3);
}

}  // namespace
}  // namespace iorr::replay
