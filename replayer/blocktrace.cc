// See blocktrace.h.
#include "replayer/blocktrace.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "traces/block.h"
#include "traces/calls.h"
#include "traces/event.h"
#include "traces/header.h"
#include "traces/mountinfo.h"
#include "traces/writer.h"

namespace iorr::replay {
namespace {

namespace blk = trace::block;

constexpr const char* kEventNames[] = {"block_bio_queue", "block_rq_issue", "block_rq_complete"};
constexpr int kNumEvents = 3;

int64_t NowNs(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string ErrnoText(int e) { return std::strerror(e); }

// ------------------------------------------------------------------------------ line parsing

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void SkipSpaces(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

void TrimRight(std::string_view& s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
}

// The next space-separated token.
std::string_view Token(std::string_view& s) {
  SkipSpaces(s);
  size_t n = 0;
  while (n < s.size() && s[n] != ' ' && s[n] != '\t') ++n;
  std::string_view t = s.substr(0, n);
  s.remove_prefix(n);
  return t;
}

template <typename T>
bool ParseNum(std::string_view t, T* v) {
  if (t.empty()) return false;
  auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

// "12345.678901" (any number of decimals up to 9) -> ns.
bool ParseTimestamp(std::string_view t, int64_t* ns) {
  size_t dot = t.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  uint64_t sec = 0, frac = 0;
  if (!ParseNum(t.substr(0, dot), &sec) || sec > 9'000'000'000ull) return false;
  std::string_view f = t.substr(dot + 1);
  if (f.empty() || f.size() > 9 || !ParseNum(f, &frac)) return false;
  for (size_t i = f.size(); i < 9; ++i) frac *= 10;
  *ns = static_cast<int64_t>(sec * 1'000'000'000ull + frac);
  return true;
}

// The task of the line's context, "  jbd2/loop0-8-26484  [001] ....." -> "jbd2/loop0-8" (the pid
// after the last '-' before the CPU column); empty when it is "<...>" or not found.
std::string_view ContextComm(std::string_view head) {
  TrimRight(head);
  size_t rb = head.rfind(']');
  if (rb == std::string_view::npos) return {};
  size_t lb = head.rfind('[', rb);
  if (lb == std::string_view::npos) return {};
  head = head.substr(0, lb);
  TrimRight(head);
  if (!head.empty() && head.back() == ')') {  // options/record-tgid: "comm-pid (tgid)"
    size_t lp = head.rfind('(');
    if (lp == std::string_view::npos) return {};
    head = head.substr(0, lp);
    TrimRight(head);
  }
  size_t n = head.size();
  while (n > 0 && IsDigit(head[n - 1])) --n;
  if (n == head.size() || n == 0 || head[n - 1] != '-') return {};
  head = head.substr(0, n - 1);
  SkipSpaces(head);
  if (head == "<...>") return {};
  return head;
}

// ------------------------------------------------------------------- signals and clean-up

// What a signal handler needs to remove the instance: preformatted paths, flags. One
// BlockTracer per process, so one set.
struct SignalState {
  std::atomic<bool> live{false};           // the instance exists and is not being removed
  std::atomic<bool> reader_active{false};  // the reader thread holds trace_pipe open
  std::atomic<int> pending{0};             // a signal the reader thread is to act on
  char dir[PATH_MAX] = {};
  char enable[kNumEvents][PATH_MAX] = {};
  bool installed[2] = {false, false};
  struct sigaction old[2];
};
SignalState g_sig;
constexpr int kSignals[2] = {SIGINT, SIGTERM};

// Async-signal-safe: disables the events and removes the instance (trace_pipe must be closed).
void RemoveInstanceNow() {
  for (const char* p : g_sig.enable) {
    int fd = ::open(p, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t w = ::write(fd, "0", 1);
      (void)w;
      ::close(fd);
    }
  }
  for (int i = 0; i < 50 && ::rmdir(g_sig.dir) != 0 && errno == EBUSY; ++i) {
    struct timespec ts = {0, 10'000'000};
    nanosleep(&ts, nullptr);
  }
}

// Async-signal-safe: clean up, then die of sig as if there were no handler.
void DieOf(int sig) {
  if (g_sig.live.exchange(false)) RemoveInstanceNow();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  kill(getpid(), sig);  // delivered once the handler (if any) returns
}

void OnSignal(int sig) {
  int saved = errno;
  g_sig.pending.store(sig);
  // While the reader holds trace_pipe the instance cannot be removed: it does it within 100 ms.
  if (!g_sig.reader_active.load()) DieOf(sig);
  errno = saved;
}

void InstallHandlers() {
  for (int i = 0; i < 2; ++i) {
    struct sigaction old {};
    if (sigaction(kSignals[i], nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(kSignals[i], &sa, &g_sig.old[i]) == 0) g_sig.installed[i] = true;
  }
}

void RestoreHandlers() {
  for (int i = 0; i < 2; ++i)
    if (g_sig.installed[i]) {
      sigaction(kSignals[i], &g_sig.old[i], nullptr);
      g_sig.installed[i] = false;
    }
}

// Removes instances "iorr-PID" left by processes that no longer exist (killed with SIGKILL).
void RemoveStaleInstances(const std::string& tracefs) {
  std::string dir = tracefs + "/instances";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* de = readdir(d)) {
    std::string_view name = de->d_name;
    if (name.substr(0, 5) != "iorr-") continue;
    int pid = 0;
    if (!ParseNum(name.substr(5), &pid) || pid <= 0 || pid == getpid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::string inst = dir + "/" + std::string(name);
    for (const char* e : kEventNames) {
      int fd = ::open((inst + "/events/block/" + e + "/enable").c_str(), O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        ssize_t w = ::write(fd, "0", 1);
        (void)w;
        ::close(fd);
      }
    }
    ::rmdir(inst.c_str());
  }
  closedir(d);
}

// ------------------------------------------------------------------------------ mountinfo

bool ReadSmallFile(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::getline(in, *out, '\0');
  return true;
}

std::string DevText(dev_t d) { return std::to_string(major(d)) + ":" + std::to_string(minor(d)); }

}  // namespace

// ------------------------------------------------------------------------- ParseTraceLine

LineKind ParseTraceLine(std::string_view line, BlockEvent* ev, std::string_view* comm,
                        uint64_t* lost) {
  TrimRight(line);
  std::string_view probe = line;
  SkipSpaces(probe);
  if (probe.empty() || probe.front() == '#') return LineKind::kSkip;
  if (probe.substr(0, 4) == "CPU:") {  // "CPU:1 [LOST 123 EVENTS]"
    size_t at = probe.find("[LOST ");
    if (at == std::string_view::npos) return LineKind::kBad;
    std::string_view rest = probe.substr(at + 6);
    uint64_t n = 0;
    if (!ParseNum(Token(rest), &n)) return LineKind::kBad;
    *lost = n;
    return LineKind::kLost;
  }
  size_t at = line.find(": block_");
  if (at == std::string_view::npos) return LineKind::kBad;
  std::string_view rest = line.substr(at + 2);
  size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return LineKind::kBad;
  std::string_view name = rest.substr(0, colon);
  std::string_view p = rest.substr(colon + 2);
  BlockEvent e;
  if (name == "block_bio_queue")
    e.phase = blk::kQueue;
  else if (name == "block_rq_issue")
    e.phase = blk::kIssue;
  else if (name == "block_rq_complete")
    e.phase = blk::kComplete;
  else
    return LineKind::kSkip;

  // The timestamp ends where ": block_" begins.
  size_t b = at;
  while (b > 0 && (IsDigit(line[b - 1]) || line[b - 1] == '.')) --b;
  if (!ParseTimestamp(line.substr(b, at - b), &e.mono_ns)) return LineKind::kBad;

  // "7,0 WS ...": the device.
  std::string_view dev = Token(p);
  size_t comma = dev.find(',');
  unsigned maj = 0, min = 0;
  if (comma == std::string_view::npos || !ParseNum(dev.substr(0, comma), &maj) ||
      !ParseNum(dev.substr(comma + 1), &min))
    return LineKind::kBad;
  e.dev = makedev(maj, min);
  if (!blk::ParseRwbs(Token(p), &e.op)) return LineKind::kBad;
  if (e.phase == blk::kIssue && !ParseNum(Token(p), &e.bytes)) return LineKind::kBad;
  if (e.phase != blk::kQueue) {  // "(cmd)": empty but for passthrough requests
    SkipSpaces(p);
    if (p.empty() || p.front() != '(') return LineKind::kBad;
    size_t rp = p.find(')');
    if (rp == std::string_view::npos) return LineKind::kBad;
    p.remove_prefix(rp + 1);
  }
  uint64_t sector = 0, nr = 0;
  if (!ParseNum(Token(p), &sector) || Token(p) != "+" || !ParseNum(Token(p), &nr))
    return LineKind::kBad;
  e.sector = static_cast<int64_t>(sector);  // 2^64-1 (flush completions) becomes -1
  SkipSpaces(p);
  if (!p.empty() && p.front() != '[') Token(p);  // 6.x: ioprio "be,0,4"
  SkipSpaces(p);
  if (p.size() < 2 || p.front() != '[' || p.back() != ']') return LineKind::kBad;
  std::string_view inner = p.substr(1, p.size() - 2);
  if (e.phase == blk::kComplete) {
    int err = 0;
    if (!ParseNum(inner, &err) || err > 0 || err < -4095) return LineKind::kBad;
    e.ret = err;
    e.bytes = nr * 512;
    *comm = ContextComm(line.substr(0, b));
  } else {
    if (e.phase == blk::kQueue) e.bytes = nr * 512;
    *comm = inner;
  }
  *ev = e;
  return LineKind::kEvent;
}

// ------------------------------------------------------------------------ FindBlockDevice

namespace {

// XFS_IOC_FSGEOMETRY_V1 and its structure (xfs/xfs_fs.h, unchanged since the ioctl appeared);
// declared here so that the build needs no xfslibs-dev.
struct XfsGeometryV1 {
  uint32_t blocksize, rtextsize, agblocks, agcount, logblocks, sectsize, inodesize, imaxpct;
  uint64_t datablocks, rtblocks, rtextents, logstart;
  unsigned char uuid[16];
  uint32_t sunit, swidth;
  int32_t version;
  uint32_t flags, logsectsize, rtsectsize, dirblocksize;
};
constexpr unsigned long kXfsIocFsGeometryV1 = _IOR('X', 100, XfsGeometryV1);

// The internal log of the xfs mounted on `point`, as "START+SECTORS"; empty when unknown (an
// external log, or the ioctl refused).
std::string XfsLogRange(const std::string& point) {
  int fd = ::open(point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return {};
  XfsGeometryV1 g{};
  int rc = ::ioctl(fd, kXfsIocFsGeometryV1, &g);
  ::close(fd);
  if (rc != 0 || g.logstart == 0 || g.logblocks == 0 || g.agblocks == 0 || g.blocksize < 512 ||
      (g.blocksize & (g.blocksize - 1)) != 0)
    return {};
  // logstart is an fsblock number: AG number above agblklog bits, block in the AG below.
  unsigned agblklog = 0;
  while ((1ull << agblklog) < g.agblocks) ++agblklog;
  uint64_t ag = g.logstart >> agblklog, agbno = g.logstart & ((1ull << agblklog) - 1);
  uint64_t per_block = g.blocksize / 512;
  return std::to_string((ag * g.agblocks + agbno) * per_block) + "+" +
         std::to_string(static_cast<uint64_t>(g.logblocks) * per_block);
}

}  // namespace

Result<BlockDevice> FindBlockDevice(const std::string& dir) {
  char real[PATH_MAX];
  if (realpath(dir.c_str(), real) == nullptr) return Status::Error(dir + ": " + ErrnoText(errno));
  uint64_t mnt_id = 0;
  bool have_id = false;
#ifdef STATX_MNT_ID
  struct statx stx {};
  if (statx(AT_FDCWD, real, AT_STATX_SYNC_AS_STAT, STATX_MNT_ID, &stx) == 0 &&
      (stx.stx_mask & STATX_MNT_ID)) {
    mnt_id = stx.stx_mnt_id;
    have_id = true;
  }
#endif
  std::vector<trace::MountEntry> mounts;
  if (!trace::ReadMountinfo(&mounts)) return Status::Error("cannot read /proc/self/mountinfo");
  const trace::MountEntry* hit = nullptr;
  if (have_id)
    for (const trace::MountEntry& m : mounts)
      if (m.id == mnt_id) hit = &m;
  if (hit == nullptr) hit = trace::MountAbove(mounts, real);
  if (hit == nullptr)
    return Status::Error("no mount holds " + std::string(real) + " in /proc/self/mountinfo");
  BlockDevice best;
  best.mount_point = hit->point;
  best.fs = hit->fstype;
  best.mount_options = hit->options + "," + hit->super_options;
  const std::string best_source = hit->source;
  const std::string what = std::string(real) + " is on " + best.fs + " (" + best_source +
                           " mounted on " + best.mount_point + ")";
  struct stat st {};
  if (best_source.empty() || best_source[0] != '/')
    return Status::Error(what + ", which has no block device");
  if (::stat(best_source.c_str(), &st) != 0)
    return Status::Error(what + ": cannot stat " + best_source + ": " + ErrnoText(errno));
  if (!S_ISBLK(st.st_mode)) return Status::Error(what + ", which is not a block device");
  best.path = best_source;
  best.dev = st.st_rdev;
  if (best.fs == "xfs") best.log = XfsLogRange(best.mount_point);
  best.disk = st.st_rdev;
  // A partition: requests are issued on the whole disk.
  std::string sys = "/sys/dev/block/" + DevText(st.st_rdev);
  if (::access((sys + "/partition").c_str(), F_OK) == 0) {
    std::string text;
    unsigned maj = 0, min = 0;
    if (ReadSmallFile(sys + "/../dev", &text) &&
        std::sscanf(text.c_str(), "%u:%u", &maj, &min) == 2)
      best.disk = makedev(maj, min);
  }
  return best;
}

// ---------------------------------------------------------------------------- BlockTracer

BlockTracer::~BlockTracer() {
  if (reader_.joinable()) {
    for (int i = 0; i < kNumEvents; ++i)
      WriteFile(std::string("events/block/") + kEventNames[i] + "/enable", "0");
    stop_.store(true);
    reader_.join();
  }
  RemoveInstance();
}

Status BlockTracer::WriteFile(const std::string& rel, std::string_view value) const {
  std::string path = instance_ + "/" + rel;
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return Status::Error("cannot open " + path + ": " + ErrnoText(errno));
  ssize_t w = value.empty() ? 0 : ::write(fd, value.data(), value.size());
  int e = errno;
  ::close(fd);
  if (w != static_cast<ssize_t>(value.size()))
    return Status::Error("cannot write '" + std::string(value) + "' to " + path + ": " +
                         ErrnoText(w < 0 ? e : EIO));
  return {};
}

void BlockTracer::RemoveInstance() {
  if (pipe_fd_ >= 0) {
    ::close(pipe_fd_);
    pipe_fd_ = -1;
  }
  if (g_sig.live.exchange(false)) RemoveInstanceNow();
  RestoreHandlers();
}

Status BlockTracer::Open(const BlockDevice& device, const Options& options) {
  if (!instance_.empty()) return Status::Error("block tracer already open");
  if (geteuid() != 0) return Status::Error("needs root (tracefs)");
  auto find_tracefs = [this] {
    for (const char* p : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
      if (::access((std::string(p) + "/instances").c_str(), F_OK) == 0) {
        tracefs_ = p;
        return;
      }
    }
  };
  find_tracefs();
  // A machine that booted without tracefs mounted (it is mounted on first use by systemd's
  // automount, or never): mount it where the kernel provides the mount point, as trace-cmd
  // and perf do. It stays mounted (other tools may use it from then on).
  if (tracefs_.empty() && ::access("/sys/kernel/tracing", F_OK) == 0 &&
      ::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
    find_tracefs();
  if (tracefs_.empty())
    return Status::Error(
        "tracefs is not mounted and could not be mounted (mount -t tracefs nodev "
        "/sys/kernel/tracing)");
  for (const char* e : kEventNames)
    if (::access((tracefs_ + "/events/block/" + e).c_str(), F_OK) != 0)
      return Status::Error("tracefs has no events/block/" + std::string(e) +
                           " (kernel without block tracepoints?)");
  std::string clocks;
  if (!ReadSmallFile(tracefs_ + "/trace_clock", &clocks) ||
      clocks.find("mono") == std::string::npos)
    return Status::Error("tracefs has no trace_clock mono");
  RemoveStaleInstances(tracefs_);

  device_ = device;
  std::string inst = tracefs_ + "/instances/iorr-" + std::to_string(getpid());
  if (inst.size() + 64 >= PATH_MAX) return Status::Error("tracefs path too long");
  if (::mkdir(inst.c_str(), 0700) != 0) {
    int e = errno;
    if (e == EEXIST) {  // left by an earlier process with our pid
      ::rmdir(inst.c_str());
      e = ::mkdir(inst.c_str(), 0700) == 0 ? 0 : errno;
    }
    if (e != 0)
      return Status::Error("cannot create the tracefs instance " + inst + ": " + ErrnoText(e));
  }
  instance_ = inst;
  std::snprintf(g_sig.dir, sizeof g_sig.dir, "%s", inst.c_str());
  for (int i = 0; i < kNumEvents; ++i)
    std::snprintf(g_sig.enable[i], sizeof g_sig.enable[i], "%s/events/block/%s/enable",
                  inst.c_str(), kEventNames[i]);
  g_sig.pending.store(0);
  g_sig.live.store(true);
  InstallHandlers();

  auto fail = [this](Status s) {
    RemoveInstance();
    return s;
  };
  if (Status s = WriteFile("trace_clock", "mono"); !s.ok()) return fail(s);
  std::string clock;
  if (!ReadSmallFile(instance_ + "/trace_clock", &clock) ||
      clock.find("[mono]") == std::string::npos)
    return fail(Status::Error("cannot set trace_clock to mono in " + instance_));
  if (Status s = WriteFile("buffer_size_kb", std::to_string(options.buffer_size_kb)); !s.ok())
    return fail(s);
  // The kernel's dev_t in tracepoints: major << 20 | minor.
  auto kdev = [](dev_t d) {
    return std::to_string((static_cast<uint64_t>(major(d)) << 20) | minor(d));
  };
  for (int i = 0; i < kNumEvents; ++i) {
    dev_t d = i == 0 ? device.dev : device.disk;
    if (Status s = WriteFile(std::string("events/block/") + kEventNames[i] + "/filter",
                             "dev == " + kdev(d));
        !s.ok())
      return fail(s);
  }
  return {};
}

Status BlockTracer::Start() {
  if (instance_.empty() || !g_sig.live.load()) return Status::Error("block tracer not open");
  if (started_) return Status::Error("block tracer already started");
  if (Status s = WriteFile("trace", ""); !s.ok()) return s;  // empties the buffer
  std::string pipe = instance_ + "/trace_pipe";
  pipe_fd_ = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (pipe_fd_ < 0) return Status::Error("cannot open " + pipe + ": " + ErrnoText(errno));
  events_.reserve(1 << 16);
  start_mono_ns_ = NowNs(CLOCK_MONOTONIC);
  start_wall_ns_ = NowNs(CLOCK_REALTIME);
  for (int i = 0; i < kNumEvents; ++i) {
    if (Status s = WriteFile(std::string("events/block/") + kEventNames[i] + "/enable", "1");
        !s.ok()) {
      for (int k = 0; k < i; ++k)
        WriteFile(std::string("events/block/") + kEventNames[k] + "/enable", "0");
      ::close(pipe_fd_);
      pipe_fd_ = -1;
      return s;
    }
  }
  started_ = true;
  stop_.store(false);
  g_sig.reader_active.store(true);
  reader_ = std::thread([this] { ReadLoop(); });
  return {};
}

void BlockTracer::ReadLoop() {
  std::unique_ptr<char[]> buf(new char[1 << 18]);
  struct pollfd pfd = {pipe_fd_, POLLIN, 0};
  for (;;) {
    // stop_ is set after the events were disabled: an empty read after seeing it is the end.
    bool stopping = stop_.load();
    ssize_t n = ::read(pipe_fd_, buf.get(), 1 << 18);
    if (n > 0) {
      Consume(buf.get(), static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      read_error_ = "reading trace_pipe: " + ErrnoText(errno);
      break;
    }
    if (stopping || g_sig.pending.load() != 0) break;
    poll(&pfd, 1, 100);
  }
  if (!partial_.empty()) {
    Line(partial_);
    partial_.clear();
  }
  ::close(pipe_fd_);
  pipe_fd_ = -1;
  g_sig.reader_active.store(false);
  if (int sig = g_sig.pending.load()) DieOf(sig);
}

void BlockTracer::Consume(const char* p, size_t n) {
  const char* end = p + n;
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (nl == nullptr) {
      partial_.append(p, end);
      return;
    }
    if (!partial_.empty()) {
      partial_.append(p, nl);
      Line(partial_);
      partial_.clear();
    } else {
      Line(std::string_view(p, static_cast<size_t>(nl - p)));
    }
    p = nl + 1;
  }
}

void BlockTracer::Line(std::string_view line) {
  BlockEvent e;
  std::string_view comm;
  uint64_t lost = 0;
  switch (ParseTraceLine(line, &e, &comm, &lost)) {
    case LineKind::kEvent:
      if (!comm.empty()) {
        if (!comms_.empty() && comms_.back() == comm) {
          e.comm = static_cast<uint32_t>(comms_.size());
        } else {
          auto [it, added] = comm_ids_.try_emplace(std::string(comm), 0);
          if (added) {
            comms_.emplace_back(comm);
            it->second = static_cast<uint32_t>(comms_.size());
          }
          e.comm = it->second;
        }
      }
      events_.push_back(e);
      break;
    case LineKind::kLost:
      lost_lines_ += lost;
      break;
    case LineKind::kSkip:
      break;
    case LineKind::kBad:
      if (unparsed_++ == 0) first_unparsed_ = std::string(line.substr(0, 200));
      break;
  }
}

Result<BlockTraceSummary> BlockTracer::Stop() {
  if (!started_) return Status::Error("block tracer not started");
  stop_mono_ns_ = NowNs(CLOCK_MONOTONIC);
  for (int i = 0; i < kNumEvents; ++i)
    WriteFile(std::string("events/block/") + kEventNames[i] + "/enable", "0");
  stop_.store(true);
  if (reader_.joinable()) reader_.join();
  started_ = false;

  BlockTraceSummary sum;
  // Lost: overwritten before they were read, or dropped, per CPU.
  uint64_t lost = 0;
  if (DIR* d = opendir((instance_ + "/per_cpu").c_str())) {
    while (struct dirent* de = readdir(d)) {
      if (std::strncmp(de->d_name, "cpu", 3) != 0) continue;
      std::ifstream in(instance_ + "/per_cpu/" + de->d_name + "/stats");
      std::string l;
      while (std::getline(in, l)) {
        size_t c = l.find(':');
        if (c == std::string::npos) continue;
        std::string_view k(l.data(), c), v(l.data() + c + 1, l.size() - c - 1);
        SkipSpaces(v);
        uint64_t n = 0;
        if ((k == "overrun" || k == "commit overrun" || k == "dropped events") && ParseNum(v, &n))
          lost += n;
      }
    }
    closedir(d);
  }
  sum.lost = std::max(lost, lost_lines_);
  RemoveInstance();

  std::stable_sort(events_.begin(), events_.end(),
                   [](const BlockEvent& a, const BlockEvent& b) { return a.mono_ns < b.mono_ns; });
  for (const BlockEvent& e : events_) {
    switch (e.phase) {
      case blk::kQueue:
        ++sum.queued;
        if (e.op & blk::kPreflush) {
          ++sum.preflush;
          if (e.bytes == 0) ++sum.empty_flushes;
        }
        if (e.op & blk::kFua) ++sum.fua;
        if (e.op & blk::kWrite) sum.queued_write_bytes += e.bytes;
        if (e.op & blk::kRead) sum.queued_read_bytes += e.bytes;
        break;
      case blk::kIssue:
        ++sum.issued;
        break;
      case blk::kComplete:
        ++sum.completed;
        if (e.ret != 0) ++sum.completion_errors;
        break;
    }
  }
  sum.events = events_.size();
  sum.unparsed = unparsed_;
  sum.first_unparsed = first_unparsed_;
  sum.seconds = static_cast<double>(stop_mono_ns_ - start_mono_ns_) / 1e9;
  if (!read_error_.empty()) return Status::Error(read_error_);
  return sum;
}

Status BlockTracer::WriteTrace(
    const std::string& path, const BlockTraceSummary& summary,
    const std::vector<std::pair<std::string, std::string>>& extra) const {
  trace::Header h;
  h.core.start_mono_ns = start_mono_ns_;
  h.core.start_wall_ns = start_wall_ns_;
  h.Set(trace::key::kTool, "iorr 0.1.0 replay --block-trace");
  h.Set(trace::key::kSource, "tracefs");
  h.Set("kind", "block-trace");
  trace::AddMachineFields(h);
  h.Set("block.device", device_.path);
  h.Set("block.dev", DevText(device_.dev));
  if (device_.disk != device_.dev) h.Set("block.disk", DevText(device_.disk));
  h.Set("block.fs", device_.fs);
  h.Set("block.mount_point", device_.mount_point);
  h.Set("block.mount_options", device_.mount_options);
  if (!device_.log.empty()) h.Set("block.log", device_.log);
  h.Set("block.trace_clock", "mono");
  h.Set("block.events", "block_bio_queue block_rq_issue block_rq_complete");
  for (const auto& [k, v] : extra) h.Set(k, v);

  trace::WriterOptions wo;
  wo.time_unit_ns = 1000;  // tracefs prints microseconds
  auto created = trace::TraceWriter::Create(path, std::move(h), wo);
  if (!created.ok()) return created.status();
  trace::TraceWriter& w = **created;
  auto fail = [&](Status s) {
    created->reset();
    ::unlink(path.c_str());
    return s;
  };
  trace::Event ev;
  ev.call = trace::CallId::block;
  ev.pid = static_cast<uint32_t>(blk::kStreamPid);
  ev.tid = static_cast<uint32_t>(blk::kStreamTid);
  for (const BlockEvent& e : events_) {
    ev.start_ns = ev.end_ns = e.mono_ns - start_mono_ns_;
    ev.ret = e.ret;
    ev.args[0].i = e.phase;
    ev.args[1].i = static_cast<int64_t>(e.dev);
    ev.args[2].i = e.sector;
    ev.args[3].i = static_cast<int64_t>(e.bytes);
    ev.args[4].i = e.op;
    ev.args[5].s = comm(e.comm);
    ev.args[5].null = e.comm == 0;
    w.Promise(ev.start_ns);
    if (Status s = w.Add(ev); !s.ok()) return fail(s);
  }
  if (Status s = w.AddNote("block-trace " + std::to_string(summary.events) + " " +
                           std::to_string(summary.lost));
      !s.ok())
    return fail(s);
  if (summary.unparsed > 0) {
    if (Status s = w.AddNote("block-trace-unparsed " + std::to_string(summary.unparsed) + " " +
                             summary.first_unparsed);
        !s.ok())
      return fail(s);
  }
  if (Status s = w.Close(summary.lost, summary.lost > 0); !s.ok()) return fail(s);
  return {};
}

}  // namespace iorr::replay
