// `iorr calibrate DIR -o PROFILE.json`: measures the device under DIR with O_DIRECT I/O on a
// scratch file (sequential and random read and write, fsync/flush cost, per-MB flush cost,
// O_DSYNC (FUA) writes) and writes an "ssd"-type profile for the model, checked by the
// model's own profile parser. Takes about --seconds (default 30); single-threaded.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "model/call_costs.h"
#include "model/profile.h"
#include "replayer/blocktrace.h"
#include "tools/iorr/cli.h"
#include "traces/block.h"
#include "traces/mountinfo.h"

namespace iorr::cli {
namespace {

struct Options {
  std::string dir;
  std::string out;
  std::string name = "calibrated";
  double seconds = 30;
  uint64_t size_mb = 256;
  bool calls = false;
  uint32_t files = 2000;
  // 9 rounds: the medians of 3 moved by up to 7% between calibrations (xfs unlink, a mean over
  // unlinks that now and then wait for inode inactivation: 23.9 to 25.7 us in five runs; with
  // 9 rounds 25.4 to 26.0 us, and rm's recorded unlinks average 25.7). About 4 s.
  uint32_t rounds = 9;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The block device behind DIR's file system, for its queue settings (empty if none).
std::string QueueFile(const std::string& dir, const char* name) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {};
  std::string base =
      "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  for (const std::string& p : {base + "/queue/" + name, base + "/../queue/" + name}) {
    std::ifstream in(p);
    std::string v;
    if (std::getline(in, v)) return v;
  }
  return {};
}

// What a file system waits for when it writes a block and flushes it, measured by `op` (a
// buffered overwrite of a written 4 KiB block and an fdatasync, which writes it and sends a
// flush; it returns the fdatasync's time) under the tracer: the write and flush requests' own
// times (block_rq_issue -> block_rq_complete, medians) and the fdatasync's. The fdatasync
// takes longer than its two requests: each request's completion wakes the waiting thread,
// which then submits the next (on a loop device 45 + 53 us of requests in a 140 us fdatasync).
// A file system's commit pays that at each I/O it waits for, so the profile's write latency
// and flush cost are each request's time plus half the rest. Timing write + fdatasync - write
// from user space instead gives a flush of 82 to 85 us on a loop device, a direct write from
// user space 58 us nearby and 88 to 130 us at random offsets over 256 MiB (the loop device
// serves nearby writes faster, and a file system's waited writes, journal and database pages,
// are nearby). Negative fields when tracefs cannot show them (not root, no tracefs, no block
// device; flush: no write cache).
struct TracedSync {
  double write = -1, flush = -1, fdatasync = -1;  // seconds, medians
  size_t writes = 0, flushes = 0, ops = 0;        // how many of each were timed
};
template <typename Op>
TracedSync TraceSync(const std::string& dir, double budget, Op&& op) {
  TracedSync r;
  auto device = replay::FindBlockDevice(dir);
  if (!device.ok()) return r;
  replay::BlockTracer tracer;
  if (!tracer.Open(*device).ok() || !tracer.Start().ok()) return r;
  std::vector<double> felt;
  double end = Now() + budget;
  for (int i = 0; i < 20000 && (i < 50 || Now() < end); ++i) felt.push_back(op());
  auto summary = tracer.Stop();
  if (!summary.ok() || summary->lost > 0) return r;
  // The operations run one at a time, so a flush's completion belongs to the latest flush
  // issued before it (a requeued flush is issued twice and completes once), and a write's to
  // the latest write issued at its sector.
  int64_t flush_issued = -1;
  std::vector<std::pair<int64_t, int64_t>> writes_issued;  // sector, time
  std::vector<double> flushes, writes;
  for (const replay::BlockEvent& e : tracer.events()) {
    if (e.op & trace::block::kFlushOp) {
      if (e.phase == trace::block::kIssue) {
        flush_issued = e.mono_ns;
      } else if (e.phase == trace::block::kComplete && flush_issued >= 0) {
        flushes.push_back(static_cast<double>(e.mono_ns - flush_issued) / 1e9);
        flush_issued = -1;
      }
    } else if ((e.op & trace::block::kWrite) && e.bytes > 0) {  // (a flush also completes as
                                                                // an empty write at sector 0)
      auto it = std::find_if(writes_issued.begin(), writes_issued.end(),
                             [&](const auto& w) { return w.first == e.sector; });
      if (e.phase == trace::block::kIssue) {
        if (it != writes_issued.end())
          it->second = e.mono_ns;
        else
          writes_issued.emplace_back(e.sector, e.mono_ns);
      } else if (e.phase == trace::block::kComplete && it != writes_issued.end()) {
        writes.push_back(static_cast<double>(e.mono_ns - it->second) / 1e9);
        writes_issued.erase(it);
      }
    }
  }
  r.writes = writes.size();
  r.flushes = flushes.size();
  r.ops = felt.size();
  if (writes.size() < 20) return r;
  r.write = Median(writes);
  r.fdatasync = Median(felt);
  if (flushes.size() >= 20) r.flush = Median(flushes);
  return r;
}

class Scratch {
 public:
  Scratch(const std::string& dir, uint64_t bytes)
      : path_(dir + "/.iorr-calibrate." + std::to_string(getpid())) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
    if (fd_ < 0)
      throw Error("calibrate: cannot create " + path_ + " with O_DIRECT: " + std::strerror(errno));
    void* p = nullptr;
    if (posix_memalign(&p, 4096, kBlock) != 0) throw Error("out of memory");
    buf_ = static_cast<char*>(p);
    std::memset(buf_, 0x5a, kBlock);
    bytes_ = bytes;
  }
  ~Scratch() {
    ::close(fd_);
    ::unlink(path_.c_str());
    std::free(buf_);
  }
  int fd() const { return fd_; }
  char* buf() const { return buf_; }
  uint64_t bytes() const { return bytes_; }
  static constexpr size_t kBlock = 1 << 20;

 private:
  std::string path_;
  int fd_ = -1;
  char* buf_ = nullptr;
  uint64_t bytes_ = 0;
};

void Check(bool ok, const char* what) {
  if (!ok) throw Error(std::string("calibrate: ") + what + ": " + std::strerror(errno));
}

// The type of the file system DIR is on, from /proc/self/mountinfo (the mount
// above DIR's real path); statfs cannot tell ext2, ext3 and ext4 apart.
std::string FsTypeOf(const std::string& dir) {
  char real[PATH_MAX];
  std::vector<trace::MountEntry> mounts;
  if (!::realpath(dir.c_str(), real) || !trace::ReadMountinfo(&mounts)) return {};
  const trace::MountEntry* m = trace::MountAbove(mounts, real);
  return m ? m->fstype : std::string();
}

// `--calls`: the CPU each kind of call costs on DIR's file system (model/call_costs.h), from
// `files` files of 4 KiB in a fresh scratch directory, single-threaded, page cache warm: the
// mean of each call's own time, measured around the system call alone.
// One round of the --calls measurements in a fresh directory; appends each category's median
// to `med` (and the 12 KiB write and read means and the deferred unlink cost to the rest).
void CallsRound(const Options& o, uint32_t round, std::vector<double> med[],
                std::vector<double>* write12_med, std::vector<double>* read12_med,
                std::vector<double>* deferred, std::vector<double>* writeback) {
  std::string base =
      o.dir + "/iorr-calls." + std::to_string(::getpid()) + "." + std::to_string(round);
  if (::mkdir(base.c_str(), 0755) != 0)
    throw Error("cannot create " + base + ": " + std::strerror(errno));
  struct Cleanup {
    std::string base;
    uint32_t n;
    ~Cleanup() {
      for (uint32_t i = 0; i < n; ++i) {
        std::string sub = base + "/s" + std::to_string(i / 50) + "/";
        ::unlink((sub + "f" + std::to_string(i)).c_str());
        ::unlink((sub + "g" + std::to_string(i)).c_str());
        ::unlink((sub + "h" + std::to_string(i)).c_str());
        ::rmdir((base + "/d" + std::to_string(i)).c_str());
      }
      ::unlink((base + "/one").c_str());
      for (uint32_t i = 0; i < n; i += 50) ::rmdir((base + "/s" + std::to_string(i / 50)).c_str());
      ::rmdir(base.c_str());
    }
  } cleanup{base, o.files};
  std::vector<double> t[model::kCallCategories];
  std::vector<double> write12, read12;
  std::vector<char> buf(12 << 10, 'x');  // files of 4 + 12 KiB, as in a source tree
  // Files 50 to a directory, as in a source tree (a directory of thousands makes every name
  // operation dearer); directories made and removed straight in base.
  auto name = [&](char c, uint32_t i) {
    if (c == 'd') return base + "/d" + std::to_string(i);
    return base + "/s" + std::to_string(i / 50) + "/" + c + std::to_string(i);
  };
  for (uint32_t i = 0; i < o.files; i += 50)
    if (::mkdir((base + "/s" + std::to_string(i / 50)).c_str(), 0755) != 0)
      throw Error("cannot create a directory in " + base + ": " + std::strerror(errno));
  auto timed = [](std::vector<double>& into, auto&& call) {
    double a = Now();
    auto r = call();
    into.push_back(Now() - a);
    return r;
  };
  auto cat = [&](model::CallCategory c) -> std::vector<double>& { return t[static_cast<int>(c)]; };
  using C = model::CallCategory;
  auto check = [&](long r, const char* what) {
    if (r < 0) throw Error(std::string(what) + " in " + base + ": " + std::strerror(errno));
  };
  for (uint32_t i = 0; i < o.files; ++i) {
    std::string f = name('f', i);
    int fd = timed(cat(C::kCreate),
                   [&] { return ::open(f.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644); });
    check(fd, "create");
    check(timed(cat(C::kWrite), [&] { return ::write(fd, buf.data(), 4096); }), "write");
    check(timed(cat(C::kClose), [&] { return ::close(fd); }), "close");
  }
  for (uint32_t i = 0; i < o.files; ++i) {
    std::string f = name('f', i);
    int fd = timed(cat(C::kOpen), [&] { return ::open(f.c_str(), O_WRONLY | O_APPEND); });
    check(fd, "open");
    check(timed(write12, [&] { return ::write(fd, buf.data(), buf.size()); }), "write");
    ::close(fd);
    struct stat st;
    check(timed(cat(C::kStat), [&] { return ::stat(f.c_str(), &st); }), "stat");
    check(timed(cat(C::kSetAttr), [&] { return ::chmod(f.c_str(), 0640); }), "chmod");
    check(timed(cat(C::kSetAttr), [&] { return ::utimes(f.c_str(), nullptr); }), "utimes");
    fd = ::open(f.c_str(), O_RDONLY);
    check(fd, "open");
    check(timed(cat(C::kRead), [&] { return ::read(fd, buf.data(), 4096); }), "read");
    check(timed(read12, [&] { return ::read(fd, buf.data(), buf.size()); }), "read");
    ::close(fd);
  }
  for (uint32_t i = 0; i < o.files; ++i)
    check(timed(cat(C::kRename),
                [&] { return ::rename(name('f', i).c_str(), name('g', i).c_str()); }),
          "rename");
  // Unlinks, then the work they leave to background threads (xfs inactivates inodes in
  // workers that syncfs waits for): syncfs after them, less a syncfs with nothing to do.
  int dfd = ::open(base.c_str(), O_RDONLY | O_DIRECTORY);
  check(dfd, "open");
  ::syncfs(dfd);
  double idle_sync = Now();
  ::syncfs(dfd);
  idle_sync = Now() - idle_sync;
  for (uint32_t i = 0; i < o.files; ++i)
    check(timed(cat(C::kUnlink), [&] { return ::unlink(name('g', i).c_str()); }), "unlink");
  double after_sync = Now();
  ::syncfs(dfd);
  after_sync = Now() - after_sync;
  ::close(dfd);
  double deferred_us = std::max(0.0, (after_sync - idle_sync) / o.files * 1e6);
  uint32_t dirs = std::min<uint32_t>(o.files, 500);
  for (uint32_t i = 0; i < dirs; ++i)
    check(timed(cat(C::kMkdir), [&] { return ::mkdir(name('d', i).c_str(), 0755); }), "mkdir");
  for (uint32_t i = 0; i < dirs; ++i)
    check(timed(cat(C::kRmdir), [&] { return ::rmdir(name('d', i).c_str()); }), "rmdir");
  // Writeback's own work per file, which sync waits for: files made empty and synced first,
  // then given 16 KiB each, timed by the syncfs that writes them, less the same for one file of
  // as many bytes (the device's share). Everything else is synced before.
  {
    int wfd = ::open(base.c_str(), O_RDONLY | O_DIRECTORY);
    check(wfd, "open");
    std::string one = base + "/one";
    for (uint32_t i = 0; i < o.files; ++i) {
      int fd = ::open(name('h', i).c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
      check(fd, "create");
      ::close(fd);
    }
    int ofd = ::open(one.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    check(ofd, "create");
    ::syncfs(wfd);
    for (uint32_t i = 0; i < o.files; ++i) {
      int fd = ::open(name('h', i).c_str(), O_WRONLY);
      check(fd, "open");
      check(::write(fd, buf.data(), 4096), "write");
      check(::write(fd, buf.data(), buf.size()), "write");
      ::close(fd);
    }
    double many = Now();
    ::syncfs(wfd);
    many = Now() - many;
    for (uint32_t i = 0; i < o.files; ++i) {
      check(::write(ofd, buf.data(), 4096), "write");
      check(::write(ofd, buf.data(), buf.size()), "write");
    }
    double single = Now();
    ::syncfs(wfd);
    single = Now() - single;
    ::close(ofd);
    ::close(wfd);
    writeback->push_back(std::max(0.0, (many - single) / o.files * 1e6));
    for (uint32_t i = 0; i < o.files; ++i) ::unlink(name('h', i).c_str());
    ::unlink(one.c_str());
  }
  // Means, not medians: a workload's time is the sum of its calls, tails included (an xfs
  // unlink now and then waits milliseconds for inode inactivation to catch up).
  for (int i = 0; i < model::kCallCategories; ++i) med[i].push_back(Mean(t[i]));
  write12_med->push_back(Mean(write12));
  read12_med->push_back(Mean(read12));
  deferred->push_back(deferred_us);
}

// `--calls`: see CallsRound; the table holds the median over --rounds rounds of each mean.
int RunCalls(const Options& o) {
  double started = Now();
  std::string fs = FsTypeOf(o.dir);
  if (fs.empty()) throw Error(o.dir + ": cannot tell which file system it is on");
  std::vector<double> med[model::kCallCategories], write12, read12, deferred, writeback;
  for (uint32_t r = 0; r < o.rounds; ++r)
    CallsRound(o, r, med, &write12, &read12, &deferred, &writeback);
  using C = model::CallCategory;
  double deferred_us = Median(deferred);
  double writeback_us = Median(writeback);

  double us[model::kCallCategories];
  for (int i = 0; i < model::kCallCategories; ++i) us[i] = Median(med[i]) * 1e6;
  // Reads and writes: a base per call plus a cost per KiB, from the 4 KiB and 12 KiB ones.
  double w4 = us[static_cast<int>(C::kWrite)], w12 = Median(write12) * 1e6;
  double r4 = us[static_cast<int>(C::kRead)], r12 = Median(read12) * 1e6;  // of the 12 KiB ones
  double w_kib = std::max(0.0, (w12 - w4) / 8), r_kib = std::max(0.0, (r12 - r4) / 8);
  us[static_cast<int>(C::kWrite)] = std::max(0.0, w4 - 4 * w_kib);
  us[static_cast<int>(C::kRead)] = std::max(0.0, r4 - 4 * r_kib);
  std::string json = "{\n  \"type\": \"call-costs\",\n  \"fs\": \"" + fs + "\",\n";
  char line[256];
  std::snprintf(line, sizeof line,
                "  \"description\": \"measured by iorr calibrate --calls on %s (%s), %u rounds of "
                "%u files\",\n",
                o.dir.c_str(), fs.c_str(), o.rounds, o.files);
  json += line;
  json += "  \"calls_us\": {";
  for (int i = 0; i < model::kCallCategories; ++i) {
    std::snprintf(line, sizeof line, "%s\n    \"%s\": %.2f", i ? "," : "",
                  std::string(model::kCallCategoryNames[i]).c_str(), us[i]);
    json += line;
  }
  std::snprintf(line, sizeof line,
                ",\n    \"write_per_kib\": %.3f,\n    \"read_per_kib\": %.3f,\n"
                "    \"unlink_deferred\": %.2f,\n    \"writeback_per_file\": %.2f\n  }\n}\n",
                w_kib, r_kib, deferred_us, writeback_us);
  json += line;
  auto parsed = model::ParseCallCosts(json, o.out);
  if (!parsed.ok())
    throw Error("calibrate produced an invalid table: " + parsed.status().message());
  std::FILE* f = std::fopen(o.out.c_str(), "w");
  if (f == nullptr) throw Error("cannot write " + o.out + ": " + std::strerror(errno));
  std::fputs(json.c_str(), f);
  std::fclose(f);
  std::fprintf(stderr, "iorr: per-call costs of %s (%s) -> %s in %.1f s\n", o.dir.c_str(),
               fs.c_str(), o.out.c_str(), Now() - started);
  std::fputs(json.c_str(), stdout);
  return kExitOk;
}

int Run(const Options& o) {
  struct statvfs vfs {};
  if (::statvfs(o.dir.c_str(), &vfs) != 0) throw Error(o.dir + ": " + std::strerror(errno));
  uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  uint64_t size = std::min<uint64_t>(o.size_mb << 20, free_bytes / 2) & ~uint64_t{(1 << 20) - 1};
  if (size < (16u << 20)) throw Error(o.dir + ": less than 32 MB free");
  double started = Now();
  Scratch s(o.dir, size);
  const double budget = o.seconds / 6;  // per measurement
  int fd = s.fd();

  // Sequential write, 1 MiB direct writes, then fdatasync.
  double t0 = Now();
  uint64_t written = 0;
  while (written < size) {
    Check(pwrite(fd, s.buf(), Scratch::kBlock, static_cast<off_t>(written)) ==
              static_cast<ssize_t>(Scratch::kBlock),
          "sequential write");
    written += Scratch::kBlock;
  }
  Check(fdatasync(fd) == 0, "fdatasync");
  double write_mb_s = static_cast<double>(written) / 1e6 / (Now() - t0);

  // Sequential read.
  t0 = Now();
  uint64_t read = 0;
  while (read < size) {
    Check(pread(fd, s.buf(), Scratch::kBlock, static_cast<off_t>(read)) ==
              static_cast<ssize_t>(Scratch::kBlock),
          "sequential read");
    read += Scratch::kBlock;
  }
  double read_mb_s = static_cast<double>(read) / 1e6 / (Now() - t0);

  std::mt19937_64 rng(1);
  auto random_off = [&] { return static_cast<off_t>((rng() % (size / 4096)) * 4096); };
  auto sample = [&](auto&& op) {
    std::vector<double> v;
    double end = Now() + budget;
    while ((Now() < end && v.size() < 20000) || v.size() < 50) {
      double a = Now();
      op();
      v.push_back(Now() - a);
    }
    return Median(v);
  };
  double rand_read =
      sample([&] { Check(pread(fd, s.buf(), 4096, random_off()) == 4096, "random read"); });
  double rand_write =
      sample([&] { Check(pwrite(fd, s.buf(), 4096, random_off()) == 4096, "random write"); });
  double write_fsync = sample([&] {
    Check(pwrite(fd, s.buf(), 4096, random_off()) == 4096, "write");
    Check(fdatasync(fd) == 0, "fdatasync");
  });
  // Flush cost per MB left in the device's cache: 8 MiB of direct writes, then one flush.
  std::vector<double> per_mb;
  for (int i = 0; i < 5; ++i) {
    for (int k = 0; k < 8; ++k)
      Check(pwrite(fd, s.buf(), Scratch::kBlock, static_cast<off_t>(k) << 20) ==
                static_cast<ssize_t>(Scratch::kBlock),
            "write");
    double a = Now();
    Check(fdatasync(fd) == 0, "fdatasync");
    per_mb.push_back((Now() - a - (write_fsync - rand_write)) / 8.4);
  }
  // O_DSYNC writes: FUA where the device has it, else write + flush.
  int dsync = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(),
                     O_WRONLY | O_DIRECT | O_DSYNC | O_CLOEXEC);
  Check(dsync >= 0, "O_DSYNC open");
  double fua_write =
      sample([&] { Check(pwrite(dsync, s.buf(), 4096, random_off()) == 4096, "O_DSYNC write"); });
  ::close(dsync);

  // A file system's waited write and flush, under the tracer (TraceSync): buffered overwrites of
  // written blocks in the first 8 MiB, each made durable by an fdatasync. The timings above stay
  // free of tracing's own cost.
  int buffered = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_WRONLY | O_CLOEXEC);
  Check(buffered >= 0, "buffered open");
  uint64_t near_blocks = std::min<uint64_t>(size, 8u << 20) / 4096, next_block = 0;
  TracedSync traced = TraceSync(o.dir, budget / 2, [&] {
    off_t off = static_cast<off_t>(next_block++ % near_blocks * 4096);
    Check(pwrite(buffered, s.buf(), 4096, off) == 4096, "write");
    double a = Now();
    Check(fdatasync(buffered) == 0, "fdatasync");
    return Now() - a;
  });
  ::close(buffered);
  // Each I/O the fdatasync waited for costs its request's time and half of what the fdatasync
  // took beyond its two requests (all of it without a flush: a write-through cache).
  double write_latency = rand_write, flush_ms = std::max(0.0, (write_fsync - rand_write) * 1e3);
  char how[384];
  std::snprintf(how, sizeof how, "flush = write+fdatasync - write (no tracefs)");
  std::string cache = QueueFile(o.dir, "write_cache");
  bool write_cache = cache.empty() || cache.find("back") != std::string::npos;
  if (traced.write >= 0) {
    double rest = std::max(0.0, traced.fdatasync - traced.write - std::max(0.0, traced.flush));
    double each = traced.flush >= 0 ? rest / 2 : rest;
    write_latency = traced.write + each;
    char flush[64] = "no flush request";
    if (traced.flush >= 0) {
      flush_ms = (traced.flush + each) * 1e3;
      std::snprintf(flush, sizeof flush, "flush %.1f us", traced.flush * 1e6);
    }
    std::snprintf(how, sizeof how,
                  "requests (block_rq_issue to complete) of a buffered write + fdatasync nearby: "
                  "write %.1f us, %s, fdatasync %.1f us, so %.1f us more per I/O (%zu writes, "
                  "%zu flushes, %zu fdatasyncs)",
                  traced.write * 1e6, flush, traced.fdatasync * 1e6, each * 1e6, traced.writes,
                  traced.flushes, traced.ops);
  }
  // Writes traced but no flush on a write-back cache: the file system sends none (mounted
  // without barriers), so the flush cost cannot be seen here; it stays write + fdatasync - write
  // (next to nothing) and is not read as power-loss protection.
  bool no_flush_seen = traced.write >= 0 && traced.flush < 0 && write_cache;
  if (no_flush_seen)
    std::fprintf(stderr,
                 "iorr: calibrate: %s sends no flush on a write-back cache (mounted without "
                 "barriers?): the profile's flush cost is not measured; calibrate on a mount "
                 "with barriers\n",
                 o.dir.c_str());
  // A flush that costs next to nothing is a power-loss-protected cache: below 50 us timed from
  // user space, as before, or below 20 us at the request (a protected cache answers a flush
  // in a few; this machine's virtio disk takes 22 to 35 us, its loop devices 49 to 58).
  bool plp = traced.flush >= 0 ? traced.flush < 20e-6 : !no_flush_seen && flush_ms < 0.05;
  std::string fua = QueueFile(o.dir, "fua");
  double transfer_4k_us = 4096.0 / (read_mb_s * 1e6) * 1e6;
  char json[3072];
  std::snprintf(
      json, sizeof json,
      "{\n  \"type\": \"ssd\",\n  \"name\": \"%s\",\n"
      "  \"description\": \"measured by iorr calibrate on %s: 4 KiB direct read %.1f us, write "
      "%.1f us, write+fdatasync %.1f us, O_DSYNC write %.1f us, at random offsets; %s; "
      "sequential %.0f MB/s read, "
      "%.0f MB/s write; queue/write_cache '%s', queue/fua '%s'\",\n"
      "  \"capacity_gb\": %.1f,\n  \"read_latency_us\": %.2f,\n  \"write_latency_us\": %.2f,\n"
      "  \"program_latency_us\": %.2f,\n  \"read_mb_per_s\": %.1f,\n  \"write_mb_per_s\": %.1f,\n"
      "  \"interface_mb_per_s\": %.1f,\n  \"channels\": 1,\n  \"queue_depth\": 32,\n"
      "  \"buffer_mib\": 32,\n  \"write_cache\": %s,\n  \"power_loss_protection\": %s,\n"
      "  \"flush_ms\": %.4f,\n  \"flush_per_mb_ms\": %.4f,\n  \"fua\": %s\n}\n",
      o.name.c_str(), o.dir.c_str(), rand_read * 1e6, rand_write * 1e6, write_fsync * 1e6,
      fua_write * 1e6, how, read_mb_s, write_mb_s, cache.c_str(), fua.c_str(),
      static_cast<double>(vfs.f_blocks) * vfs.f_frsize / 1e9,
      std::max(0.0, rand_read * 1e6 - transfer_4k_us), write_latency * 1e6,
      std::max(rand_write, fua_write) * 1e6, read_mb_s, write_mb_s,
      std::max(read_mb_s, write_mb_s) * 1.05, write_cache ? "true" : "false",
      plp ? "true" : "false", flush_ms, std::max(0.0, Median(per_mb) * 1e3),
      fua == "1" ? "true" : "false");
  // The model must accept what we measured.
  auto parsed = model::ParseProfile(json, o.out, "");
  if (!parsed.ok())
    throw Error("calibrate produced an invalid profile: " + parsed.status().message());
  std::FILE* f = std::fopen(o.out.c_str(), "w");
  if (f == nullptr) throw Error("cannot write " + o.out + ": " + std::strerror(errno));
  std::fputs(json, f);
  std::fclose(f);
  std::fprintf(stderr, "iorr: calibrated %s -> %s in %.1f s\n", o.dir.c_str(), o.out.c_str(),
               Now() - started);
  std::fputs(json, stdout);
  return kExitOk;
}

}  // namespace

void RegisterCalibrate(CLI::App& app, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Measure the device under DIR (direct I/O on a scratch file: sequential and random\n"
      "reads and writes, fdatasync and O_DSYNC costs) and write a profile for the model.\n"
      "The profile is of type ssd (latencies, bandwidths, flush costs), which fits today's\n"
      "virtual and flash disks; it cannot see internal parallelism (channels is 1).");
  sub->add_option("dir", o->dir, "A directory on the device to measure")->required();
  sub->add_option("-o,--output", o->out, "Profile to write (JSON)")->required();
  sub->add_option("--name", o->name, "The profile's name")->capture_default_str();
  sub->add_option("--seconds", o->seconds, "Time budget for the random-I/O measurements")
      ->check(CLI::Range(1.0, 600.0))
      ->capture_default_str();
  sub->add_flag(
      "--calls", o->calls,
      "Instead: measure what each kind of call (create, write, chmod, unlink, ...) costs\n"
      "in CPU on DIR's file system and write a call-cost table (iorr model --cpu)");
  sub->add_option("--rounds", o->rounds, "Rounds of --calls (the table takes their median)")
      ->check(CLI::Range(1u, 100u))
      ->capture_default_str();
  sub->add_option("--files", o->files, "Files for --calls")
      ->check(CLI::Range(10u, 1000000u))
      ->capture_default_str();
  sub->add_option("--size-mb", o->size_mb, "Scratch file size for the sequential passes")
      ->check(CLI::Range(32, 65536))
      ->capture_default_str();
  sub->callback([o, action] { *action = [o] { return o->calls ? RunCalls(*o) : Run(*o); }; });
}

}  // namespace iorr::cli
