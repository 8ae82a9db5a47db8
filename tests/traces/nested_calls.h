// Calls of a synthesized trace, for the tests of nested calls (a signal handler's calls recorded
// inside the call it interrupted) in the replayer and the model: one process-and-thread id per
// call, times in milliseconds, the path of an openat beside its event.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "traces/header.h"
#include "traces/writer.h"

namespace iorr::test {

struct Call {
  trace::Event e;
  std::string path;
};

inline Call At(uint32_t pid, int64_t start_ms, int64_t end_ms, trace::CallId call, int64_t ret) {
  constexpr int64_t kMs = 1'000'000;
  Call c;
  c.e.call = call;
  c.e.pid = c.e.tid = pid;
  c.e.start_ns = start_ms * kMs;
  c.e.end_ns = end_ms * kMs;
  c.e.ret = ret;
  return c;
}
inline Call OpenAt(uint32_t pid, int64_t start_ms, int64_t end_ms, std::string path, int flags,
                   int64_t fd) {
  Call c = At(pid, start_ms, end_ms, trace::CallId::openat, fd);
  c.e.args[0].i = AT_FDCWD;
  c.path = std::move(path);
  c.e.args[2].i = flags;
  c.e.args[3].i = 0644;
  return c;
}
inline Call Fd(uint32_t pid, int64_t start_ms, int64_t end_ms, trace::CallId call, int64_t fd,
               int64_t ret, int64_t count = 0) {
  Call c = At(pid, start_ms, end_ms, call, ret);
  c.e.args[0].i = fd;
  c.e.args[2].i = count;  // read and write: (fd, buf, count)
  return c;
}

// Writes the calls (in start order, as the recorder's trace reads) into path, recorded in /w.
inline void WriteCalls(const std::string& path, const std::vector<Call>& calls) {
  trace::Header h;
  h.Set(trace::key::kSource, "record");
  h.Set(trace::key::kCwd, "/w");
  auto w = trace::TraceWriter::Create(path, h, trace::WriterOptions{});
  EXPECT_TRUE(w.ok()) << w.status().message();
  if (!w.ok()) return;
  for (const Call& c : calls) {
    trace::Event e = c.e;
    if (!c.path.empty()) e.args[1].s = c.path;
    (*w)->Promise(e.start_ns);
    EXPECT_TRUE((*w)->Add(e).ok());
  }
  EXPECT_TRUE((*w)->Close().ok());
}

}  // namespace iorr::test
