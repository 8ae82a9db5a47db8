// See replayer.h.
#include "replayer/replayer.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "replayer/paths.h"
#include "replayer/prepare.h"
#include "traces/names.h"
#include "traces/reader.h"

static_assert(iorr::trace::kFiclone == FICLONE, "traces/event.h: kFiclone is not FICLONE");

namespace iorr::replay {
namespace {

using trace::CallId;
using trace::Event;

int64_t MonoNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

long Ret(long r) { return r < 0 ? -errno : r; }
// What an empty path ("") stands for where the call was not given AT_EMPTY_PATH: a name the
// kernel refuses with ENOENT (stat(""), mkdir("")) before looking anything up. (Composed with
// the cwd, it named the cwd: stat("") succeeded and mkdir("") failed EEXIST.) Never a real
// name: it holds a NUL byte, which no recorded path can (those are refused first).
const std::string kEmptyPath("\0", 1);
// A recorded FICLONE result that says the file system (or the pair of files) could not clone.
bool CannotClone(long ret) {
  return ret == -EOPNOTSUPP || ret == -EXDEV || ret == -EINVAL || ret == -ENOTTY;
}

// A live fd standing for a recorded one. Shared by dup'd and inherited recorded fds.
struct Live {
  int fd = -1;
  bool not_file = false;  // pipe, socket, ...: its calls are skipped
  const char* skip = nullptr;  // the open was skipped: its calls are, for the same reason
  std::string path;       // normalised, root-relative
  ~Live() {
    if (fd >= 0) ::close(fd);
  }
};

// A process's recorded fds, by number. The calls come in effect order, which across threads is
// start order, but the kernel hands out a new fd's number late in its call: thread A's open that
// returns 3 can start before thread B opens, uses and closes its own 3, and end after (A was
// preempted for milliseconds). Issued first, A's open had its number taken over by B's, and
// B's close dropped it: A's later calls on 3 were skipped as unknown, or went to B's file (stop
// 39's sweep: a Python job of three I/O threads and 150 forks, 57,255 mismatches in 1 replay of
// 3). So an fd counts from its call's recorded end, and a number may stand for two fds for a
// while: a call gets the one that counts from latest at or before its start, else the earliest.
class FdTable {
 public:
  // The live fd recorded as `fd` for a call that started at `at`; empty if none.
  std::shared_ptr<Live> Get(int64_t fd, int64_t at) const {
    auto it = fds_.find(fd);
    return it == fds_.end() ? nullptr : it->second[Pick(it->second, at)].live;
  }
  // `fd` made by a call from `start` to `end`: it replaces what counted from before the call
  // began (a number is free when an fd is made), and leaves one a call under way then made.
  void Set(int64_t fd, std::shared_ptr<Live> l, int64_t start, int64_t end) {
    std::vector<Gen>& v = fds_[fd];
    std::erase_if(v, [&](const Gen& g) { return g.from <= start; });
    v.push_back({std::move(l), end});
  }
  // The close of `fd` by a call that started at `at`: the fd it gets, taken out; empty if none.
  std::shared_ptr<Live> Take(int64_t fd, int64_t at) {
    auto it = fds_.find(fd);
    if (it == fds_.end()) return nullptr;
    std::vector<Gen>& v = it->second;
    size_t i = Pick(v, at);
    std::shared_ptr<Live> l = std::move(v[i].live);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
    if (v.empty()) fds_.erase(it);
    return l;
  }
  void Forget(int64_t fd) { fds_.erase(fd); }
  void ForgetRange(int64_t lo, int64_t hi) {
    std::erase_if(fds_, [&](const auto& kv) { return kv.first >= lo && kv.first <= hi; });
  }

 private:
  struct Gen {
    std::shared_ptr<Live> live;
    int64_t from;  // the recorded end of the call that made it
  };
  static size_t Pick(const std::vector<Gen>& v, int64_t at) {
    size_t best = v.size(), earliest = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].from <= at && (best == v.size() || v[i].from > v[best].from)) best = i;
      if (v[i].from < v[earliest].from) earliest = i;
    }
    return best != v.size() ? best : earliest;
  }
  std::unordered_map<int64_t, std::vector<Gen>> fds_;  // (one entry but for such overlaps)
};

struct Proc {
  std::string cwd;
  FdTable fds;
  // The recorded process's umask: inherited at fork, set by umask(). The replayer's own is 0
  // while it replays (Run), so that each creation is given mode & ~umask explicitly: one
  // process umask shared by every recorded process gave files other modes ("umask(): recorded
  // 18, replayed 0").
  mode_t umask = 022;
};

class Engine {
 public:
  Engine(const Options& o, Report* r) : o_(o), r_(r) {}

  Status OpenRoot() {
    root_ = ::open(o_.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_ < 0) return Status::Error("--root " + o_.root + ": " + std::strerror(errno));
    for (const std::string& p : o_.only) only_.push_back(Normalize(p));
    return {};
  }
  ~Engine() {
    procs_.clear();
    for (const auto& [key, fd] : fifo_holders_) ::close(fd);
    if (root_ >= 0) ::close(root_);
  }

  // A FIFO inside the root held open for reading and writing by the replay itself, so that
  // an open for writing the recording's kernel let through (its reader was another process,
  // blocked in open until then) does not fail ENXIO in the replay's non-blocking open, and what
  // is written stays in the pipe for the reader's open and read that come after (see
  // OpenIn). At most kMaxFifoHolders (a hostile trace's millions of FIFOs would use up the fd
  // table). False when n is no FIFO, or already held.
  static constexpr size_t kMaxFifoHolders = 1024;
  // any: true also when it is held already.
  bool HoldFifo(const std::string& n, bool any = false) {
    int path_fd = OpenIn(n, O_PATH, 0);
    if (path_fd < 0) return false;
    struct stat st {};
    bool ok = fstat(path_fd, &st) == 0 && S_ISFIFO(st.st_mode);
    if (ok && fifo_holders_.count({st.st_dev, st.st_ino}) != 0) {
      ::close(path_fd);
      return any;
    }
    ok = ok && fifo_holders_.size() < kMaxFifoHolders;
    int h = ok ? ::open(("/proc/self/fd/" + std::to_string(path_fd)).c_str(),
                        O_RDWR | O_NONBLOCK | O_CLOEXEC)
               : -1;
    ::close(path_fd);
    if (h < 0) return false;
    fifo_holders_[{st.st_dev, st.st_ino}] = h;
    return true;
  }

  // openat2 inside the root: "..", absolute paths and symlinks cannot leave it. Never waiting
  // for a peer: a FIFO the trace made (mknod) and opens would block the replay for good (a
  // hostile trace's way to hang it), so every open but O_PATH is non-blocking, which regular
  // files and directories ignore; a FIFO opened for writing without a reader then fails (ENXIO)
  // and its reads and writes do not wait.
  int OpenIn(const std::string& rel, int flags, mode_t mode) {
    if (rel == kEmptyPath) return -ENOENT;
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NONBLOCK);
    how.mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode & 07777) : 0;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    long r = syscall(SYS_openat2, root_, rel.empty() ? "." : rel.c_str(), &how, sizeof(how));
    return r < 0 ? -errno : static_cast<int>(r);
  }

  // The parent directory of rel, opened inside the root, and the last name in *leaf. The root
  // itself ("/", or ".." above it) is the root with the leaf ".", which the calls that take a
  // parent and a name treat as the kernel treats "/" (stat and lstat succeed, mkdir fails
  // EEXIST, rename and rmdir fail; before, EINVAL for all: statx("/") in `stat /`).
  int ParentIn(const std::string& rel, std::string* leaf) {
    if (rel == kEmptyPath) return -ENOENT;
    if (rel.empty()) {
      *leaf = ".";
      return OpenIn(rel, O_PATH | O_DIRECTORY, 0);
    }
    std::string dir;
    if (!SplitLeaf(rel, &dir, leaf)) return -EINVAL;
    return OpenIn(dir, O_PATH | O_DIRECTORY, 0);
  }

  bool Filtered(const std::string& n) const {
    if (only_.empty() || n == kEmptyPath) return false;
    for (const std::string& p : only_)
      if (n == p || (n.size() > p.size() && n.compare(0, p.size(), p) == 0 && n[p.size()] == '/') ||
          p.empty())
        return false;
    return true;
  }

  // mkdir -p inside the root. A component that is a symlink to nothing yet (a merged /usr's
  // bin -> usr/bin, made before usr/bin in name order) gets its target made instead, so that
  // names under the link can be made (at most 40 links, as the kernel follows).
  void MakeDirs(const std::string& n, int links = 0) {
    if (n.empty()) return;
    std::string leaf;
    int dir = ParentIn(n, &leaf);
    if (dir == -ENOENT) {
      MakeDirs(std::string(Parent(n)), links);
      dir = ParentIn(n, &leaf);
    }
    if (dir < 0) return;
    if (mkdirat(dir, leaf.c_str(), 0755) == 0) {
      ++r_->prepared_dirs;
    } else if (errno == EEXIST && links < 40) {
      char target[4096];
      ssize_t k = readlinkat(dir, leaf.c_str(), target, sizeof target);
      if (k > 0 && static_cast<size_t>(k) < sizeof target) {
        ::close(dir);
        MakeDirs(Normalize(Compose(Parent(n), std::string_view(target, static_cast<size_t>(k)))),
                 links + 1);
        return;
      }
    }
    ::close(dir);
  }

  bool RootFree(struct statvfs* vfs) const { return fstatvfs(root_, vfs) == 0; }

  void PrepareRoot(const std::map<std::string, InitialEntry>& entries) {
    std::vector<char> zeros(1 << 20, 0);
    // The recorded cwd and the --only prefixes exist, whatever the trace says of their parents.
    MakeDirs(cwd0_);
    for (const std::string& p : only_) MakeDirs(p);
    for (const auto& [n, x] : entries) {
      if (n.empty() || IsPseudo(n) || Filtered(n)) continue;
      std::string leaf;
      int dir = ParentIn(n, &leaf);
      if (dir == -ENOENT) {
        MakeDirs(std::string(Parent(n)));
        dir = ParentIn(n, &leaf);
      }
      if (dir < 0) continue;
      switch (x.type) {
        case 'd':
          if (mkdirat(dir, leaf.c_str(), x.mode ? x.mode : 0755) == 0) ++r_->prepared_dirs;
          break;
        case 'l':
          if (symlinkat(x.target.empty() ? kUnknownTarget : x.target.c_str(), dir,
                        leaf.c_str()) == 0)
            ++r_->prepared_links;
          break;
        case 'p':
          mknodat(dir, leaf.c_str(), S_IFIFO | (x.mode ? x.mode : 0644), 0);
          break;
        case 'f': {
          int fd = OpenIn(n, O_WRONLY | O_CREAT | O_EXCL, x.mode ? x.mode : 0644);
          if (fd >= 0) {
            ++r_->prepared_files;
            if (o_.prepare == Prepare::kFull) {
              uint64_t left = x.size;
              while (left > 0) {
                ssize_t w = ::write(fd, zeros.data(), std::min<uint64_t>(left, zeros.size()));
                if (w <= 0) break;
                left -= static_cast<uint64_t>(w);
              }
            } else if (x.size > 0) {
              if (ftruncate(fd, static_cast<off_t>(x.size)) != 0) {
              }
            }
            r_->prepared_bytes += x.size;
            ::close(fd);
          }
          break;
        }
        default:
          break;  // sockets and device nodes are not made
      }
      ::close(dir);
    }
    // What was made goes to disk before the replay starts, so that neither the replay's time
    // nor its --block-trace counts the tree's creation. (Until stop 32 this was syncfs on the
    // O_PATH root, which the kernel refuses with EBADF: the prepared tree's metadata was committed
    // and written home by the workload's first sync. A recorded `cp -a` of the 5,000-entry tree
    // then showed 1,164 metadata blocks in the block trace against 896 for a real `cp -a`, and
    // a read-only `find | cat` 582 where a real one writes 314, the atimes.)
    // A root the replay cannot read (mode 0333 for a user who is not root) cannot be opened for
    // syncfs: sync() then, which also reaches file systems mounted inside the root.
    int sync_fd = openat(root_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sync_fd < 0 || syncfs(sync_fd) != 0) ::sync();
    if (sync_fd >= 0) ::close(sync_fd);
    if (o_.cache == Cache::kCold) {
      int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "3", 1) != 1) r_->skipped["page cache not dropped (not root?)"]++;
      if (fd >= 0) ::close(fd);
    }
  }

  void Replay(const Event& e, int64_t* latency);

 private:
  Proc& P(uint32_t pid) {
    auto it = procs_.find(pid);
    if (it != procs_.end()) return it->second;
    Proc& p = procs_[pid];
    p.cwd = cwd0_;
    p.umask = umask0_;
    return p;
  }
  void Skip(const char* why) { r_->skipped[why]++; }
  // The most one read or write moves at a time: a larger count is carried out in pieces of
  // this size (the trace's counts are not trusted: one of 1 GiB on a buffer of this size let
  // the kernel write past it, and a write sent the replayer's own memory to a file).
  static constexpr uint64_t kMaxIo = 64u << 20;
  // Per replaying thread, at least min(n, kMaxIo) bytes, aligned for direct I/O (kIoAlign, a
  // multiple of any logical block size): an O_DIRECT read or write the recording's kernel took
  // must not fail EINVAL here for the buffer's address alone (a replayed `dd oflag=direct`
  // failed every write before, from a std::vector's buffer). The sizes it is taken in are
  // multiples of kIoAlign too, so that pieces of a large count start aligned.
  static constexpr uint64_t kIoAlign = 4096;
  static char* Buffer(uint64_t n) {
    struct Aligned {
      char* p = nullptr;
      uint64_t size = 0;
      ~Aligned() { std::free(p); }
    };
    thread_local Aligned buf;
    if (n > kMaxIo) n = kMaxIo;
    n = (n + kIoAlign - 1) / kIoAlign * kIoAlign;
    if (buf.size < n) {
      void* p = nullptr;
      if (posix_memalign(&p, kIoAlign, n) != 0) std::abort();
      std::memset(p, 0xA5, n);
      std::free(buf.p);
      buf.p = static_cast<char*>(p);
      buf.size = n;
    }
    return buf.p;
  }
  // Bytes [from, end) of `in` written at the same offsets of `out`: copy_file_range, then read
  // and write for what it cannot copy (between two file systems, EXDEV: a mount point inside
  // the root, a review's case). 0 or -errno.
  static long CopyRange(int in, int out, loff_t from, loff_t end) {
    loff_t to = from;
    while (from < end) {
      ssize_t k = ::copy_file_range(in, &from, out, &to,
                                    std::min(static_cast<uint64_t>(end - from), kMaxIo), 0);
      if (k < 0 && (errno == EXDEV || errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS))
        break;
      if (k <= 0) return k < 0 ? -errno : -EIO;
    }
    while (from < end) {
      uint64_t piece = std::min(static_cast<uint64_t>(end - from), kMaxIo);
      char* b = Buffer(piece);
      ssize_t k = ::pread(in, b, piece, from);
      if (k <= 0) return k < 0 ? -errno : -EIO;
      ssize_t w = ::pwrite(out, b, static_cast<size_t>(k), to);
      if (w != k) return w < 0 ? -errno : -EIO;
      from += k;
      to += k;
    }
    return 0;
  }
  // The whole of file `in` written over the start of `out` (a FICLONE carried out as a copy),
  // its data only: holes stay holes, as cp makes them, and `out` ends at least as long as `in`.
  // (A source that prepare made as large as the trace's clone said is a hole: a hostile size
  // filled the root's disk with zeros, a review's case.) `in`'s file position is put back. 0
  // or -errno.
  static long CopyWhole(int in, int out) {
    struct stat st {};
    if (fstat(in, &st) != 0) return -errno;
    const off_t n = st.st_size;
    const off_t pos = ::lseek(in, 0, SEEK_CUR);
    long res = 0;
    for (off_t at = 0; at < n && res == 0;) {
      off_t data = ::lseek(in, at, SEEK_DATA);
      if ((data < 0 && errno == ENXIO) || data >= n) break;  // no data after `at`
      if (data < 0) data = at;  // a file system that cannot say: all of it is data
      off_t hole = ::lseek(in, data, SEEK_HOLE);
      if (hole < 0 || hole > n) hole = n;
      res = CopyRange(in, out, data, hole);
      at = hole;
    }
    if (pos >= 0) ::lseek(in, pos, SEEK_SET);
    if (res != 0) return res;
    struct stat ost {};
    if (fstat(out, &ost) != 0) return -errno;
    if (ost.st_size < n && ::ftruncate(out, n) != 0) return -errno;
    return 0;
  }
  // n bytes read or written in pieces of at most kMaxIo through io(buffer, piece, done so far),
  // which returns what the system call did; stops at an error (returned when nothing was done
  // yet), at end of file, or at a short piece, as one call of that count would.
  template <class Io>
  static long InPieces(uint64_t n, Io&& io) {
    char* b = Buffer(n);
    uint64_t done = 0;
    do {
      uint64_t piece = std::min(n - done, kMaxIo);
      long r = io(b, piece, done);
      if (r < 0) return done == 0 ? r : static_cast<long>(done);
      done += static_cast<uint64_t>(r);
      if (static_cast<uint64_t>(r) < piece) break;
    } while (done < n);
    return static_cast<long>(done);
  }

 public:
  std::string cwd0_;
  mode_t umask0_ = 022;  // the umask the recorded processes started with

 private:
  const Options& o_;
  Report* r_;
  int root_ = -1;
  std::vector<std::string> only_;
  std::unordered_map<uint32_t, Proc> procs_;
  std::map<std::pair<dev_t, ino_t>, int> fifo_holders_;  // see HoldFifo
  // Per held FIFO, bytes its readers were given before the writer that wrote them (see read).
  std::map<std::pair<dev_t, ino_t>, uint64_t> fifo_owed_;

 public:
  // Concurrent replay: held around Replay's bookkeeping, released during the call itself.
  std::mutex* mu_ = nullptr;
};

// Whether a replayed result stands for the recorded one.
bool Same(const Event& e, long r) {
  if (e.failed()) return r == e.ret;
  if (r < 0) return false;
  const trace::CallSpec& spec = e.spec();
  if (spec.ret == trace::Ret::kCount || e.call == CallId::lseek || e.call == CallId::umask)
    return r == e.ret;
  if (e.call == CallId::getdents64) return (r > 0) == (e.ret > 0);
  return true;
}

void Engine::Replay(const Event& e, int64_t* latency) {
  *latency = -1;
  Proc& p = P(e.pid);
  const trace::CallSpec& spec = e.spec();
  // Resolution of a path argument: base (cwd or a dirfd's path) + path, normalised.
  bool bad = false;
  bool nul = false;  // a path with a NUL byte, which no system call can have been given
  // Whether an empty path names the dirfd's file (AT_EMPTY_PATH given to a call that takes it).
  int64_t at_flags = e.call == CallId::newfstatat                             ? e.args[3].i
                     : e.call == CallId::statx                                ? e.args[2].i
                     : e.call == CallId::fchownat || e.call == CallId::linkat ? e.args[4].i
                     : e.call == CallId::faccessat2                           ? e.args[3].i
                                                                              : 0;
  bool empty_names_fd = (at_flags & AT_EMPTY_PATH) != 0;
  auto path = [&](int dir_idx, int path_idx) -> std::string {
    std::string_view s = e.args[path_idx].null ? std::string_view() : e.args[path_idx].s;
    if (!e.args[path_idx].null && s.empty() && !empty_names_fd) return kEmptyPath;
    // Refused: the kernel would have read the name up to the NUL, and so would the replayer's
    // own calls ("..\0" passed for a name and reached the root's parent), unlike its checks.
    if (s.find('\0') != std::string_view::npos) {
      nul = true;
      return {};
    }
    std::string base = p.cwd;
    if (!s.empty() && s[0] == '/') {
      base.clear();
    } else if (dir_idx >= 0 && e.args[dir_idx].i != AT_FDCWD) {
      std::shared_ptr<Live> dir = p.fds.Get(e.args[dir_idx].i, e.start_ns);
      if (dir == nullptr) {
        bad = true;
        return {};
      }
      base = dir->path;
    }
    return Normalize(Compose(base, s));
  };
  auto live = [&](int idx) -> Live* { return p.fds.Get(e.args[idx].i, e.start_ns).get(); };
  auto check_path = [&](const std::string& n) {
    if (nul) {
      Skip("path with a NUL byte (refused)");
      return false;
    }
    if (n.size() > InitialState::kMaxName) {
      Skip("path longer than PATH_MAX from the root (ENAMETOOLONG)");
      return false;
    }
    if (bad) {
      Skip("unknown directory fd");
      return false;
    }
    if (IsPseudo(n)) {
      Skip("pseudo file system (/proc, /sys, /dev)");
      return false;
    }
    if (Filtered(n)) {
      Skip("outside --only");
      return false;
    }
    return true;
  };
  auto fd_ok = [&](Live* l) {
    if (l == nullptr) {
      Skip("fd not opened by the trace (inherited or unknown)");
      return false;
    }
    if (l->skip) {
      Skip(l->skip);
      return false;
    }
    if (l->not_file) {
      Skip("not a file (pipe, socket, ...)");
      return false;
    }
    if (Filtered(l->path)) {
      Skip("outside --only");
      return false;
    }
    return true;
  };

  long r = 0;
  int64_t t0 = 0;
  auto begin = [&] {
    if (mu_) mu_->unlock();
    t0 = MonoNs();
  };
  auto end = [&](long result) {
    *latency = MonoNs() - t0;
    r = result;
    if (mu_) mu_->lock();
  };
  auto with_path_fd = [&](const std::string& n, int flags, auto&& fn) {  // O_PATH inside root
    begin();
    int fd = OpenIn(n, O_PATH | flags, 0);
    long res = fd < 0 ? fd : fn(fd);
    if (fd >= 0) ::close(fd);
    end(res);
  };
  auto with_parent = [&](const std::string& n, auto&& fn) {
    begin();
    std::string leaf;
    int dir = ParentIn(n, &leaf);
    long res = dir < 0 ? dir : fn(dir, leaf.c_str());
    if (dir >= 0) ::close(dir);
    end(res);
  };
  auto proc_path = [](int fd) { return "/proc/self/fd/" + std::to_string(fd); };

  switch (e.call) {
    case CallId::open:
    case CallId::openat:
    case CallId::creat:
    case CallId::openat2: {
      bool at = e.call == CallId::openat || e.call == CallId::openat2;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) {
        if (e.ret >= 0 && !bad) {  // its fd's calls are skipped for the same reason
          auto l = std::make_shared<Live>();
          l->skip = nul              ? "path with a NUL byte (refused)"
                    : IsPseudo(n) ? "pseudo file system (/proc, /sys, /dev)"
                                  : "outside --only";
          l->path = n;
          p.fds.Set(e.ret, l, e.start_ns, e.end_ns);
        }
        return;
      }
      int flags = e.call == CallId::creat ? (O_CREAT | O_WRONLY | O_TRUNC)
                                          : static_cast<int>(e.args[at ? 2 : 1].i);
      mode_t mode = e.call == CallId::creat ? static_cast<mode_t>(e.args[1].i)
                    : e.call == CallId::openat2 ? 0644
                                                : static_cast<mode_t>(e.args[at ? 3 : 2].i);
      mode &= ~p.umask;
      flags &= ~O_NOCTTY;
      begin();
      int fd = OpenIn(n, flags, mode);
      end(fd);
      if (fd == -ENXIO && e.ret >= 0 && (flags & O_ACCMODE) == O_WRONLY && HoldFifo(n)) {
        // A FIFO's writer whose reader opens it after it in the replay (in the recording the
        // reader waited in open): the replay holds the FIFO open meanwhile (before: ENXIO,
        // and the reader read nothing).
        begin();
        fd = OpenIn(n, flags, mode);
        end(fd);
      }
      if (fd >= 0 && e.ret >= 0) {
        auto l = std::make_shared<Live>();
        l->fd = fd;
        l->path = n;
        p.fds.Set(e.ret, l, e.start_ns, e.end_ns);
      } else if (fd >= 0) {
        ::close(fd);
      }
      break;
    }
    case CallId::close: {
      std::shared_ptr<Live> closing = p.fds.Take(e.args[0].i, e.start_ns);
      if (closing == nullptr) return Skip("fd not opened by the trace (inherited or unknown)");
      begin();
      closing.reset();  // the live fd closes with its last recorded fd
      end(0);
      break;
    }
    case CallId::close_range: {
      p.fds.ForgetRange(e.args[0].i, e.args[1].i);
      return Skip("close_range (applied to the fd map)");
    }
    case CallId::dup:
    case CallId::dup2:
    case CallId::dup3: {
      // (A copy of an fd the trace did not open is one too: the target loses what it named.
      // A shell's `echo hi > a` restores its inherited stdout with dup2(11, 1), which left fd 1
      // naming a, and cat's copy_file_range to its stdout was replayed into a.)
      std::shared_ptr<Live> from = p.fds.Get(e.args[0].i, e.start_ns);
      if (e.ret >= 0 && from != nullptr)
        p.fds.Set(e.ret, from, e.start_ns, e.end_ns);
      else if (e.ret >= 0 && e.ret != e.args[0].i)
        p.fds.Forget(e.ret);
      return Skip("dup (applied to the fd map)");
    }
    case CallId::fcntl: {
      int64_t cmd = e.args[1].i;
      if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && e.ret >= 0) {
        std::shared_ptr<Live> from = p.fds.Get(e.args[0].i, e.start_ns);
        if (from != nullptr)
          p.fds.Set(e.ret, from, e.start_ns, e.end_ns);
        else
          p.fds.Forget(e.ret);
      }
      if (cmd != F_SETFL) return Skip("fcntl (applied to the fd map)");
      // F_SETFL changes how the file's later calls go (dd oflag=direct turns O_DIRECT off for
      // its last, short block: left on, that write failed EINVAL). The replay's own
      // O_NONBLOCK stays (see OpenIn).
      Live* l = live(0);
      if (!fd_ok(l)) return;
      begin();
      end(Ret(::fcntl(l->fd, F_SETFL, static_cast<int>(e.args[2].i) | O_NONBLOCK)));
      break;
    }
    case CallId::read:
    case CallId::readv:
    case CallId::write:
    case CallId::writev: {
      Live* l = live(0);
      if (!fd_ok(l)) return;
      uint64_t n = static_cast<uint64_t>(e.call == CallId::readv || e.call == CallId::writev
                                             ? e.args[1].i
                                             : e.args[2].i);
      begin();
      bool rd = e.call == CallId::read || e.call == CallId::readv;
      long res = InPieces(n, [&](char* b, uint64_t piece, uint64_t) {
        return Ret(rd ? ::read(l->fd, b, piece) : ::write(l->fd, b, piece));
      });
      struct stat st {};
      bool fifo = (rd ? res == -EAGAIN : (res > 0 && !fifo_holders_.empty())) &&
                  fstat(l->fd, &st) == 0 && S_ISFIFO(st.st_mode);
      // A FIFO the replay holds open (HoldFifo) has a writer, its own, when the recording's
      // had none left: no data then is the end of file the program saw.
      if (fifo && rd && e.ret == 0) res = 0;
      end(res);
      if (fifo && rd && e.ret > 0 && HoldFifo(l->path, /*any=*/true)) {
        // A read that waited, in the recording, for a writer whose write comes after it in
        // effect order (calls are ordered by their start): the reader is given the recorded
        // count now, and as many bytes of what the writer writes later are taken out of the
        // FIFO, so that the reader's later reads find what they found (end of file).
        r = e.ret;
        fifo_owed_[{st.st_dev, st.st_ino}] += static_cast<uint64_t>(e.ret);
        ++r_->emulated["FIFO read before its writer's write (given the recorded count)"];
      } else if (fifo && !rd) {
        auto owed = fifo_owed_.find({st.st_dev, st.st_ino});
        auto h = fifo_holders_.find({st.st_dev, st.st_ino});
        if (owed != fifo_owed_.end() && h != fifo_holders_.end()) {
          uint64_t take = std::min<uint64_t>({owed->second, static_cast<uint64_t>(res), kMaxIo});
          ssize_t k = ::read(h->second, Buffer(take), take);
          if (k > 0) owed->second -= static_cast<uint64_t>(k);
          if (owed->second == 0) fifo_owed_.erase(owed);
        }
      }
      break;
    }
    case CallId::pread64:
    case CallId::preadv:
    case CallId::preadv2:
    case CallId::pwrite64:
    case CallId::pwritev:
    case CallId::pwritev2: {
      Live* l = live(0);
      if (!fd_ok(l)) return;
      bool vec = e.call != CallId::pread64 && e.call != CallId::pwrite64;
      uint64_t n = static_cast<uint64_t>(vec ? e.args[1].i : e.args[2].i);
      off_t off = static_cast<off_t>(e.args[3].i);
      int rwf = (e.call == CallId::preadv2 || e.call == CallId::pwritev2)
                    ? static_cast<int>(e.args[4].i)
                    : 0;
      begin();
      bool rd = e.call == CallId::pread64 || e.call == CallId::preadv || e.call == CallId::preadv2;
      end(InPieces(n, [&](char* b, uint64_t piece, uint64_t done) {
        struct iovec iov = {b, piece};
        // (An offset of -1 with preadv2/pwritev2 means the file position: it stays -1.)
        off_t at = off == -1 ? -1 : off + static_cast<off_t>(done);
        return Ret(rd ? preadv2(l->fd, &iov, 1, at, rwf) : pwritev2(l->fd, &iov, 1, at, rwf));
      }));
      break;
    }
    case CallId::getxattr:
    case CallId::lgetxattr:
    case CallId::fgetxattr:
    case CallId::listxattr:
    case CallId::llistxattr:
    case CallId::flistxattr:
    case CallId::setxattr:
    case CallId::lsetxattr:
    case CallId::fsetxattr:
    case CallId::removexattr:
    case CallId::lremovexattr:
    case CallId::fremovexattr: {
      // Extended attributes (cp -a reads, sets and removes ACLs on every file). A set writes the
      // value the trace holds (format 3: cp -a gives each file its final mode so, through the
      // minimal ACL the kernel folds into the mode); where it holds none, one of the recorded
      // size: for an ACL the one the file's mode makes, for any other name zeros. Path calls
      // go through an O_PATH fd inside the root (NOFOLLOW for the l* calls) and its
      // /proc/self/fd name.
      bool by_fd = spec.args[0].kind == trace::ArgKind::kFd;
      bool nofollow = e.call == CallId::lgetxattr || e.call == CallId::llistxattr ||
                      e.call == CallId::lsetxattr || e.call == CallId::lremovexattr;
      bool list = e.call == CallId::listxattr || e.call == CallId::llistxattr ||
                  e.call == CallId::flistxattr;
      bool set = spec.effect == trace::Effect::kSetAttr && spec.nargs == 5;
      bool remove = spec.effect == trace::Effect::kSetAttr && spec.nargs == 2;
      std::string name = list || e.args[1].null ? std::string() : std::string(e.args[1].s);
      if (name.find('\0') != std::string::npos) return Skip("path with a NUL byte (refused)");
      int size_idx = list ? 2 : 3;
      auto size = static_cast<size_t>(std::clamp<int64_t>(e.args[size_idx].i, 0, 65536));
      auto run = [&](const char* where, int fd) -> long {
        char* b = Buffer(std::max<size_t>(size, 1));
        if (list) return Ret(fd >= 0 ? ::flistxattr(fd, b, size) : ::listxattr(where, b, size));
        if (remove)
          return Ret(fd >= 0 ? ::fremovexattr(fd, name.c_str())
                             : ::removexattr(where, name.c_str()));
        if (!set)
          return Ret(fd >= 0 ? ::fgetxattr(fd, name.c_str(), b, size)
                             : ::getxattr(where, name.c_str(), b, size));
        std::memset(b, 0, size);
        // (A recorded value only for user attributes and ACLs: a hostile trace's
        // security.capability or trusted.* value would give a file inside the root powers.)
        const trace::Arg& value = e.args[2];  // setxattr(path or fd, name, value, size, flags)
        bool trusted = name.rfind("user.", 0) == 0 || name.rfind("system.posix_acl_", 0) == 0;
        if (trusted && !value.null && value.s.size() == size) {
          std::memcpy(b, value.s.data(), size);
        } else if (name == "system.posix_acl_access" || name == "system.posix_acl_default") {
          struct stat st {};
          if ((fd >= 0 ? ::fstat(fd, &st) : ::stat(where, &st)) == 0 && size >= 28) {
            size = 28;  // version 2, then (tag, perm, id) for user::, group::, other::
            uint32_t version = 2;
            std::memcpy(b, &version, 4);
            const uint16_t tags[3] = {0x01, 0x04, 0x20},
                           perms[3] = {static_cast<uint16_t>((st.st_mode >> 6) & 7),
                                       static_cast<uint16_t>((st.st_mode >> 3) & 7),
                                       static_cast<uint16_t>(st.st_mode & 7)};
            for (int k = 0; k < 3; ++k) {
              uint32_t id = 0xffffffffu;
              std::memcpy(b + 4 + 8 * k, &tags[k], 2);
              std::memcpy(b + 6 + 8 * k, &perms[k], 2);
              std::memcpy(b + 8 + 8 * k, &id, 4);
            }
          }
        }
        int flags = static_cast<int>(e.args[4].i);
        return Ret(fd >= 0 ? ::fsetxattr(fd, name.c_str(), b, size, flags)
                           : ::setxattr(where, name.c_str(), b, size, flags));
      };
      if (by_fd) {
        Live* l = live(0);
        if (!fd_ok(l)) return;
        begin();
        end(run(nullptr, l->fd));
      } else {
        std::string n = path(-1, 0);
        if (!check_path(n)) return;
        with_path_fd(n, nofollow ? O_NOFOLLOW : 0,
                     [&](int fd) { return run(proc_path(fd).c_str(), -1); });
      }
      break;
    }
    case CallId::ioctl: {
      // FICLONE (cp tries it before copying: a clone of the whole file where the file system
      // shares blocks, xfs with reflink and btrfs) between the live fds; other requests are
      // not replayed (their arguments point to structures the trace does not hold).
      if (!e.IsFiclone()) return Skip("ioctl other than FICLONE");
      // Both held while the lock is released: another thread's close of either (ordered after
      // this call, but a review's race had one free the source under an emulated copy) cannot
      // free them or let the fd number be reused meanwhile.
      auto ref = [&](int64_t fd) { return p.fds.Get(fd, e.start_ns); };
      std::shared_ptr<Live> out_ref = ref(e.args[0].i), in_ref = ref(e.args[2].i);
      Live* out = out_ref.get();
      Live* in = in_ref.get();
      if (!fd_ok(out) || !fd_ok(in)) return;
      // The clone's outcome decided what the program did next, and it is the recording file
      // system's: where it could not clone, cp copied the data after, so the replay does not
      // clone either (a replay onto xfs of `cp -a` recorded in tmpfs cloned every file, then
      // copied it again, and counted 4,751 mismatches); where it cloned, the program copied
      // nothing, so a file system that cannot clone gets the data copied in its place (the
      // tree ends the same, with the writes a program there would have made).
      if (CannotClone(e.ret))
        return Skip("FICLONE the recording's file system refused (not issued)");
      begin();
      long res = Ret(::ioctl(out->fd, FICLONE, in->fd));
      auto regular = [](int fd) {
        struct stat st {};
        return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
      };
      // EINVAL is also the answer for anything but two regular files, everywhere: not emulated.
      bool emulated = e.ret == 0 && (res == -EOPNOTSUPP || res == -EXDEV ||
                                     (res == -EINVAL && regular(in->fd) && regular(out->fd)));
      if (emulated) {
        res = CopyWhole(in->fd, out->fd);
        emulated = res == 0;
      }
      end(res);  // (the report is the engine's, under its lock again after end)
      if (emulated) ++r_->emulated["FICLONE as a copy (the root's file system cannot clone)"];
      break;
    }
    case CallId::copy_file_range:
    case CallId::sendfile: {
      // A copy inside the kernel (cp copies every file so since coreutils 9): between the two
      // live fds, at the recorded offsets (-1: the file positions). A copy that moved bytes
      // asks for no more than it moved (cp asks for 2^62 at a time, up to the end of the file).
      bool cfr = e.call == CallId::copy_file_range;
      Live* in = live(cfr ? 0 : 1);
      Live* out = live(cfr ? 2 : 0);
      loff_t in_at = e.args[cfr ? 1 : 2].i, out_at = cfr ? e.args[3].i : -1;
      auto usable = [&](Live* l) {
        return l != nullptr && l->fd >= 0 && !l->skip && !l->not_file && !Filtered(l->path);
      };
      if (usable(in) != usable(out) && e.ret > 0) {
        // One side is not replayed (cat's copy_file_range to an inherited stdout, a pipe): the
        // other still moved as recorded. The file read from advances its position by the
        // bytes copied (before, it stayed, and cat's next copy, recorded 0 at the end, gave
        // 3); the file written to gets that many bytes (from the replay's buffer) where they
        // went.
        begin();
        long res = 0;
        if (usable(in) && in_at == -1) {
          res = Ret(::lseek(in->fd, e.ret, SEEK_CUR));
        } else if (usable(out)) {
          res = InPieces(static_cast<uint64_t>(e.ret), [&](char* b, uint64_t piece, uint64_t done) {
            return out_at == -1
                       ? Ret(::write(out->fd, b, piece))
                       : Ret(::pwrite(out->fd, b, piece, out_at + static_cast<loff_t>(done)));
          });
        }
        end(res);
        if (res >= 0) ++r_->emulated["copy with one fd not replayed: the other's position or data"];
        return Skip(usable(in) ? "copy to an fd not replayed (inherited, pipe, ...)"
                               : "copy from an fd not replayed (inherited, pipe, ...)");
      }
      if (!fd_ok(in) || !fd_ok(out)) return;
      auto len = static_cast<uint64_t>(e.args[cfr ? 4 : 3].i);
      if (e.ret > 0) len = std::min(len, static_cast<uint64_t>(e.ret));
      begin();
      if (cfr)
        end(Ret(::copy_file_range(in->fd, in_at == -1 ? nullptr : &in_at, out->fd,
                                  out_at == -1 ? nullptr : &out_at, len, 0)));
      else
        end(Ret(::sendfile(out->fd, in->fd, in_at == -1 ? nullptr : &in_at, len)));
      break;
    }
    case CallId::lseek: {
      Live* l = live(0);
      if (!fd_ok(l)) return;
      begin();
      end(Ret(::lseek(l->fd, e.args[1].i, static_cast<int>(e.args[2].i))));
      break;
    }
    case CallId::fsync:
    case CallId::fdatasync:
    case CallId::syncfs:
    case CallId::ftruncate:
    case CallId::fallocate:
    case CallId::fadvise64:
    case CallId::sync_file_range:
    case CallId::fchmod:
    case CallId::fchown:
    case CallId::getdents64:
    case CallId::fstatfs:
    case CallId::flock: {
      Live* l = live(0);
      if (!fd_ok(l)) return;
      int fd = l->fd;
      const auto& a = e.args;
      begin();
      long res = 0;
      switch (e.call) {
        case CallId::fsync: res = ::fsync(fd); break;
        case CallId::fdatasync: res = ::fdatasync(fd); break;
        case CallId::syncfs: res = ::syncfs(fd); break;
        case CallId::ftruncate: res = ::ftruncate(fd, a[1].i); break;
        case CallId::fallocate: res = ::fallocate(fd, static_cast<int>(a[1].i), a[2].i, a[3].i); break;
        case CallId::fadvise64: {
          int err = posix_fadvise(fd, a[1].i, a[2].i, static_cast<int>(a[3].i));
          res = err ? (errno = err, -1) : 0;
          break;
        }
        case CallId::sync_file_range:
          res = ::sync_file_range(fd, a[1].i, a[2].i, static_cast<unsigned>(a[3].i));
          break;
        case CallId::fchmod: res = ::fchmod(fd, static_cast<mode_t>(a[1].i)); break;
        case CallId::fchown:
          res = ::fchown(fd, static_cast<uid_t>(a[1].i), static_cast<gid_t>(a[2].i));
          break;
        case CallId::getdents64: {
          uint64_t count = std::min(static_cast<uint64_t>(a[2].i), kMaxIo);
          res = syscall(SYS_getdents64, fd, Buffer(count), count);
          break;
        }
        case CallId::fstatfs: {
          struct statfs sf;
          res = ::fstatfs(fd, &sf);
          break;
        }
        default: res = ::flock(fd, static_cast<int>(a[1].i)); break;  // NOLINT
      }
      end(Ret(res));
      break;
    }
    case CallId::sync:
      begin();
      ::sync();
      end(0);
      break;
    case CallId::newfstatat:
    case CallId::statx: {
      int flags = static_cast<int>(e.call == CallId::newfstatat ? e.args[3].i : e.args[2].i);
      bool empty = e.args[1].null || e.args[1].s.empty();
      struct stat st;
      if (empty && (flags & AT_EMPTY_PATH)) {
        if (e.args[0].i == AT_FDCWD) return Skip("stat of the cwd");
        Live* l = live(0);
        if (!fd_ok(l)) return;
        begin();
        end(Ret(::fstat(l->fd, &st)));
        break;
      }
      std::string n = path(0, 1);
      if (!check_path(n)) return;
      if (flags & AT_SYMLINK_NOFOLLOW)
        with_parent(n, [&](int d, const char* leaf) {
          return Ret(fstatat(d, leaf, &st, AT_SYMLINK_NOFOLLOW));
        });
      else
        with_path_fd(n, 0, [&](int fd) { return Ret(fstatat(fd, "", &st, AT_EMPTY_PATH)); });
      break;
    }
    case CallId::stat:
    case CallId::lstat:
    case CallId::access:
    case CallId::faccessat:
    case CallId::faccessat2: {
      bool at = e.call == CallId::faccessat || e.call == CallId::faccessat2;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      struct stat st;
      if (e.call == CallId::lstat) {
        with_parent(n, [&](int d, const char* leaf) {
          return Ret(fstatat(d, leaf, &st, AT_SYMLINK_NOFOLLOW));
        });
      } else if (e.call == CallId::stat) {
        with_path_fd(n, 0, [&](int fd) { return Ret(fstatat(fd, "", &st, AT_EMPTY_PATH)); });
      } else {
        int mode = static_cast<int>(e.args[at ? 2 : 1].i);
        with_path_fd(n, 0, [&](int fd) {
          return Ret(syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH));
        });
      }
      break;
    }
    case CallId::readlink:
    case CallId::readlinkat: {
      bool at = e.call == CallId::readlinkat;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      uint64_t cap = std::min(static_cast<uint64_t>(e.args[at ? 3 : 2].i), kMaxIo);
      char* b = Buffer(cap ? cap : 1);
      with_parent(n, [&](int d, const char* leaf) { return Ret(::readlinkat(d, leaf, b, cap)); });
      break;
    }
    case CallId::mkdir:
    case CallId::mkdirat: {
      bool at = e.call == CallId::mkdirat;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      mode_t m = static_cast<mode_t>(e.args[at ? 2 : 1].i) & ~p.umask;
      with_parent(n, [&](int d, const char* leaf) { return Ret(::mkdirat(d, leaf, m)); });
      break;
    }
    case CallId::unlink:
    case CallId::unlinkat:
    case CallId::rmdir: {
      bool at = e.call == CallId::unlinkat;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      int flags = e.call == CallId::rmdir ? AT_REMOVEDIR : at ? static_cast<int>(e.args[2].i) : 0;
      with_parent(n, [&](int d, const char* leaf) { return Ret(::unlinkat(d, leaf, flags)); });
      break;
    }
    case CallId::rename:
    case CallId::renameat:
    case CallId::renameat2: {
      bool at = e.call != CallId::rename;
      std::string a = at ? path(0, 1) : path(-1, 0);
      std::string b = at ? path(2, 3) : path(-1, 1);
      if (!check_path(a) || !check_path(b)) return;
      unsigned flags = e.call == CallId::renameat2 ? static_cast<unsigned>(e.args[4].i) : 0;
      // RENAME_WHITEOUT leaves a character device (0:0) where the source was, which mknod's
      // refusal of device nodes must not let through.
      if (flags & ~static_cast<unsigned>(RENAME_NOREPLACE | RENAME_EXCHANGE))
        return Skip("rename with flags other than NOREPLACE and EXCHANGE (refused)");
      begin();
      std::string la, lb;
      int da = ParentIn(a, &la), db = ParentIn(b, &lb);
      long res = da < 0 ? da : db < 0 ? db
                                      : Ret(::renameat2(da, la.c_str(), db, lb.c_str(), flags));
      if (da >= 0) ::close(da);
      if (db >= 0) ::close(db);
      end(res);
      break;
    }
    case CallId::link:
    case CallId::linkat: {
      bool at = e.call == CallId::linkat;
      std::string a = at ? path(0, 1) : path(-1, 0);
      std::string b = at ? path(2, 3) : path(-1, 1);
      if (!check_path(a) || !check_path(b)) return;
      bool follow = at && (e.args[4].i & AT_SYMLINK_FOLLOW);
      begin();
      std::string la, lb;
      int db = ParentIn(b, &lb);
      long res;
      if (db < 0) {
        res = db;
      } else if (follow) {
        int fa = OpenIn(a, O_PATH, 0);
        res = fa < 0 ? fa : Ret(::linkat(fa, "", db, lb.c_str(), AT_EMPTY_PATH));
        if (fa >= 0) ::close(fa);
      } else {
        int da = ParentIn(a, &la);
        res = da < 0 ? da : Ret(::linkat(da, la.c_str(), db, lb.c_str(), 0));
        if (da >= 0) ::close(da);
      }
      if (db >= 0) ::close(db);
      end(res);
      break;
    }
    case CallId::symlink:
    case CallId::symlinkat: {
      std::string n = e.call == CallId::symlink ? path(-1, 1) : path(1, 2);
      if (!check_path(n)) return;
      std::string target(e.args[0].s);
      with_parent(n, [&](int d, const char* leaf) {
        return Ret(::symlinkat(target.c_str(), d, leaf));
      });
      break;
    }
    case CallId::mknod:
    case CallId::mknodat: {
      bool at = e.call == CallId::mknodat;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      mode_t m = static_cast<mode_t>(e.args[at ? 2 : 1].i);
      if (S_ISCHR(m) || S_ISBLK(m)) return Skip("device node (refused)");
      m &= ~(p.umask & 07777);
      with_parent(n, [&](int d, const char* leaf) { return Ret(::mknodat(d, leaf, m, 0)); });
      break;
    }
    case CallId::bind: {
      // A socket bound to an AF_UNIX pathname address is a socket node at that path (mode
      // 0777 less the umask, as bind makes it): made by mknod inside the root, which also
      // spares sun_path's 108-byte limit under a long root. A name that exists fails as bind
      // fails (EADDRINUSE). Other addresses (NULL) name nothing.
      if (e.args[1].null) return Skip("not a file (pipe, socket, ...)");
      std::string n = path(-1, 1);
      if (!check_path(n)) return;
      mode_t m = S_IFSOCK | (0777 & ~p.umask);
      with_parent(n, [&](int d, const char* leaf) {
        long res = Ret(::mknodat(d, leaf, m, 0));
        return res == -EEXIST ? -EADDRINUSE : res;
      });
      break;
    }
    case CallId::inotify_add_watch: {
      // A lookup of the path (followed unless IN_DONT_FOLLOW; a directory for IN_ONLYDIR):
      // found or not, as the call found it. The watch itself is not made.
      std::string n = path(-1, 1);
      if (!check_path(n)) return;
      int64_t mask = e.args[2].i;
      int flags =
          ((mask & IN_DONT_FOLLOW) ? O_NOFOLLOW : 0) | ((mask & IN_ONLYDIR) ? O_DIRECTORY : 0);
      with_path_fd(n, flags, [&](int) { return 1L; });
      break;
    }
    case CallId::getcwd:
      return Skip("getcwd (nothing to replay)");
    case CallId::chmod:
    case CallId::fchmodat: {
      bool at = e.call == CallId::fchmodat;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      mode_t m = static_cast<mode_t>(e.args[at ? 2 : 1].i);
      with_path_fd(n, 0, [&](int fd) { return Ret(::chmod(proc_path(fd).c_str(), m)); });
      break;
    }
    case CallId::chown:
    case CallId::lchown:
    case CallId::fchownat: {
      bool at = e.call == CallId::fchownat;
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      uid_t u = static_cast<uid_t>(e.args[at ? 2 : 1].i);
      gid_t g = static_cast<gid_t>(e.args[at ? 3 : 2].i);
      bool nofollow = e.call == CallId::lchown || (at && (e.args[4].i & AT_SYMLINK_NOFOLLOW));
      if (nofollow)
        with_parent(n, [&](int d, const char* leaf) {
          return Ret(::fchownat(d, leaf, u, g, AT_SYMLINK_NOFOLLOW));
        });
      else
        with_path_fd(n, 0, [&](int fd) { return Ret(::fchownat(fd, "", u, g, AT_EMPTY_PATH)); });
      break;
    }
    case CallId::utimensat:
    case CallId::utimes:
    case CallId::utime: {
      bool at = e.call == CallId::utimensat;
      if (at && (e.args[1].null || e.args[1].s.empty())) {  // futimens
        Live* l = live(0);
        if (!fd_ok(l)) return;
        begin();
        end(Ret(::futimens(l->fd, nullptr)));
        break;
      }
      std::string n = at ? path(0, 1) : path(-1, 0);
      if (!check_path(n)) return;
      if (at && (e.args[3].i & AT_SYMLINK_NOFOLLOW))
        with_parent(n, [&](int d, const char* leaf) {
          return Ret(::utimensat(d, leaf, nullptr, AT_SYMLINK_NOFOLLOW));
        });
      else
        with_path_fd(n, 0, [&](int fd) { return Ret(::utimensat(fd, "", nullptr, AT_EMPTY_PATH)); });
      break;
    }
    case CallId::truncate: {
      std::string n = path(-1, 0);
      if (!check_path(n)) return;
      begin();
      int fd = OpenIn(n, O_WRONLY, 0);
      long res = fd < 0 ? fd : Ret(::ftruncate(fd, e.args[1].i));
      if (fd >= 0) ::close(fd);
      end(res);
      break;
    }
    case CallId::statfs: {
      std::string n = path(-1, 0);
      if (!check_path(n)) return;
      struct statfs sf;
      with_path_fd(n, 0, [&](int fd) { return Ret(::fstatfs(fd, &sf)); });
      break;
    }
    case CallId::chdir: {
      std::string n = path(-1, 0);
      // The recorded process moved there, whether or not the call is replayed (outside --only,
      // a pseudo file system): its later relative paths start from there.
      if (!bad && !nul && !e.failed() && n.size() <= InitialState::kMaxName) p.cwd = n;
      if (!check_path(n)) return;
      with_path_fd(n, O_DIRECTORY, [&](int) { return 0L; });
      break;
    }
    case CallId::fchdir: {
      Live* l = live(0);
      if (l == nullptr) return Skip("fd not opened by the trace (inherited or unknown)");
      p.cwd = l->path;
      return Skip("fchdir (applied to the cwd)");
    }
    case CallId::umask:  // the recorded process's own (see Proc::umask)
      begin();
      end(static_cast<long>(p.umask));
      p.umask = static_cast<mode_t>(e.args[0].i) & 0777;
      break;
    case CallId::pipe:
    case CallId::pipe2:
    case CallId::socketpair: {
      if (e.ret == 0) {
        int64_t pair = e.args[e.call == CallId::socketpair ? 3 : 0].i;
        for (int64_t fd : {pair & 0xffffffff, (pair >> 32) & 0xffffffff}) {
          auto l = std::make_shared<Live>();
          l->not_file = true;
          p.fds.Set(fd, l, e.start_ns, e.end_ns);
        }
      }
      return Skip("not a file (pipe, socket, ...)");
    }
    case CallId::socket:
    case CallId::accept:
    case CallId::accept4:
    case CallId::eventfd2:
    case CallId::memfd_create:
    case CallId::epoll_create1:
    case CallId::inotify_init:
    case CallId::inotify_init1: {
      if (e.ret >= 0) {
        auto l = std::make_shared<Live>();
        l->not_file = true;
        p.fds.Set(e.ret, l, e.start_ns, e.end_ns);
      }
      return Skip("not a file (pipe, socket, ...)");
    }
    case CallId::clone:
    case CallId::clone3:
    case CallId::fork:
    case CallId::vfork:
      if (e.ret > 0 && !(spec.nargs > 0 && (e.args[0].i & 0x00010000))) {
        Proc child = p;
        procs_[static_cast<uint32_t>(e.ret)] = std::move(child);
      }
      return Skip("process (applied to the fd and cwd maps)");
    case CallId::exit_group:
      procs_.erase(e.pid);
      return Skip("process (applied to the fd and cwd maps)");
    case CallId::dirents:
    case CallId::initial_state:
      return;  // what the recorder saw, used by prepare
    default:
      return Skip(e.call == CallId::other ? "not a file-system call" : "not replayed yet");
  }
  ++r_->replayed;
  CallStats& cs = r_->calls[std::string(spec.name)];
  ++cs.count;
  cs.latency_ns.push_back(*latency);
  if (!Same(e, r)) {
    ++cs.mismatches;
    ++r_->mismatches;
    if (r_->first_mismatches.size() < 20) {
      auto name = [](long v) {
        if (v >= 0) return std::to_string(v);
        std::string_view n = trace::ErrnoName(static_cast<int>(-v));
        return n.empty() ? std::to_string(v) : "-" + std::string(n);
      };
      std::string what = std::string(spec.name) + "(";
      for (int i = 0; i < spec.nargs; ++i)
        if (trace::IsString(spec.args[i].kind) && !e.args[i].null)
          what += "\"" + std::string(e.args[i].s.substr(0, 120)) + "\" ";
      what += "): recorded " + name(e.ret) + ", replayed " + name(r);
      r_->first_mismatches.push_back(what);
    }
  }
}


// ---- Concurrent replay ----

// An event that owns its strings, queued for a replaying thread.
struct Item {
  Event e;
  std::string s[trace::kMaxArgs];
  int64_t issue_ns = 0;  // when it is issued in the recorded time line (MergedReader::resumed_ns)
  uint64_t seq = 0;
  std::vector<std::pair<struct Worker*, uint64_t>> deps;  // wait until worker did seq
  bool stop = false;
};

struct Worker {
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> queue;
  bool sleeping = false;          // under mu: waiting on cv
  std::atomic<uint64_t> done{0};  // seq of the last call this worker finished
};

// Which earlier calls of other threads an event must wait for. Keys name resources; each keeps
// its last writer and, since then, the latest reader per worker.
class Dependencies {
 public:
  explicit Dependencies(std::string cwd) : cwd0_(std::move(cwd)) {}

  void Compute(const Event& e, Worker* w, uint64_t seq, std::vector<std::pair<Worker*, uint64_t>>* deps) {
    deps_ = deps;
    w_ = w;
    seq_ = seq;
    const trace::CallSpec& spec = e.spec();
    DProc& p = Proc(e.pid);
    Read(ProcKey(e.pid));
    // sync and syncfs write back what every earlier call left dirty, whoever made it: they wait
    // for all earlier calls, and every later call waits for them.
    if (e.call == CallId::sync || e.call == CallId::syncfs) {
      Write(GlobalKey());
    } else {
      Read(GlobalKey());
    }
    bool ns_change = spec.effect == trace::Effect::kCreate || spec.effect == trace::Effect::kRemove ||
                     spec.effect == trace::Effect::kRename;
    for (int i = 0; i < spec.nargs; ++i) {
      trace::ArgKind k = spec.args[i].kind;
      // FICLONE's argument is the source's fd (the replay reads it, an emulated clone for long).
      if (i == 2 && e.IsFiclone()) k = trace::ArgKind::kFd;
      if ((k == trace::ArgKind::kFd || k == trace::ArgKind::kDirFd) && e.args[i].i != AT_FDCWD &&
          e.call != CallId::dirents) {
        Read(FdKey(e.pid, e.args[i].i));
        auto it = p.fdpath.find(e.args[i].i);
        if (it != p.fdpath.end() && k == trace::ArgKind::kFd && spec.effect != trace::Effect::kClose)
          Write(NameKey(it->second));  // the file behind the fd
      } else if (k == trace::ArgKind::kPath && !e.args[i].null) {
        std::string_view s = e.args[i].s;
        std::string base = p.cwd;
        if (s.empty() || s[0] != '/') {
          Read(CwdKey(e.pid));
          int dir = i > 0 && spec.args[i - 1].kind == trace::ArgKind::kDirFd ? i - 1 : -1;
          if (dir >= 0 && e.args[dir].i != AT_FDCWD) {
            auto it = p.fdpath.find(e.args[dir].i);
            if (it != p.fdpath.end()) base = it->second;
          }
        }
        std::string n = Normalize(Compose(base, s));
        Write(NameKey(n));
        // The lookup goes through every directory above the name: it comes after an earlier
        // rename of one of them by another thread, and a later rename of one comes after it
        // (before, `mv c2 m/c3` and then `ls m/c3/x` in another process could replay the
        // lookup first: ENOENT where it succeeded).
        for (std::string_view up = Parent(n); !up.empty(); up = Parent(up)) Read(NameKey(up));
        bool creates = ns_change || (spec.effect == trace::Effect::kOpen && !e.failed());
        if (creates) Write(NameKey(Parent(n)));
        paths_[i] = n;
      }
    }
    // What the call changes in the process's tables.
    switch (e.call) {
      case CallId::open:
      case CallId::openat:
      case CallId::openat2:
      case CallId::creat:
        if (e.ret >= 0) {
          Write(FdKey(e.pid, e.ret));
          int idx = e.call == CallId::openat || e.call == CallId::openat2 ? 1 : 0;
          p.fdpath[e.ret] = paths_[idx];
        }
        break;
      case CallId::close:
        Write(FdKey(e.pid, e.args[0].i));
        p.fdpath.erase(e.args[0].i);
        break;
      case CallId::dup:
      case CallId::dup2:
      case CallId::dup3:
      case CallId::fcntl:
        if (e.ret >= 0 && (e.call != CallId::fcntl || e.args[1].i == F_DUPFD ||
                           e.args[1].i == F_DUPFD_CLOEXEC)) {
          Write(FdKey(e.pid, e.ret));
          auto it = p.fdpath.find(e.args[0].i);
          if (it != p.fdpath.end())
            p.fdpath[e.ret] = it->second;
          else if (e.ret != e.args[0].i)
            p.fdpath.erase(e.ret);
        }
        break;
      case CallId::close_range:
      case CallId::exit_group:
      case CallId::execve:
      case CallId::umask:       // (the modes of the process's creations)
        Write(ProcKey(e.pid));  // every fd of the process
        break;
      case CallId::chdir:
        Write(CwdKey(e.pid));
        if (e.ret == 0) p.cwd = paths_[0];
        break;
      case CallId::fchdir: {
        Write(CwdKey(e.pid));
        auto it = p.fdpath.find(e.args[0].i);
        if (e.ret == 0 && it != p.fdpath.end()) p.cwd = it->second;
        break;
      }
      case CallId::clone:
      case CallId::clone3:
      case CallId::fork:
      case CallId::vfork:
        if (e.ret > 0 && !(spec.nargs > 0 && (e.args[0].i & 0x00010000))) {
          Write(ProcKey(static_cast<uint64_t>(e.ret)));
          procs_[static_cast<uint32_t>(e.ret)] = p;
        }
        break;
      default:
        if (spec.effect == trace::Effect::kNotFile && e.ret >= 0) {
          Write(FdKey(e.pid, e.ret));
          if (e.call == CallId::pipe || e.call == CallId::pipe2 || e.call == CallId::socketpair) {
            int64_t pair = e.args[e.call == CallId::socketpair ? 3 : 0].i;
            Write(FdKey(e.pid, pair & 0xffffffff));
            Write(FdKey(e.pid, (pair >> 32) & 0xffffffff));
          }
        }
    }
  }

 private:
  struct DProc {
    std::string cwd;
    std::unordered_map<int64_t, std::string> fdpath;
  };
  struct Key {  // keyed by a 64-bit hash: a collision only adds an ordering, never removes one
    Worker* writer = nullptr;
    uint64_t writer_seq = 0;
    std::vector<std::pair<Worker*, uint64_t>> readers;  // since the last write, per worker
  };
  DProc& Proc(uint32_t pid) {
    auto it = procs_.find(pid);
    if (it != procs_.end()) return it->second;
    DProc& p = procs_[pid];
    p.cwd = cwd0_;
    return p;
  }
  static uint64_t Mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
  }
  static uint64_t FdKey(uint32_t pid, int64_t fd) { return Mix(Mix('f', pid), static_cast<uint64_t>(fd)); }
  static uint64_t ProcKey(uint64_t pid) { return Mix('p', pid); }
  static uint64_t GlobalKey() { return Mix('g', 0); }
  static uint64_t CwdKey(uint64_t pid) { return Mix('c', pid); }
  static uint64_t NameKey(std::string_view n) { return Mix('n', std::hash<std::string_view>()(n)); }
  void Need(Worker* w, uint64_t seq) {
    if (w == nullptr || w == w_) return;  // a thread's own calls are in order anyway
    for (auto& d : *deps_)
      if (d.first == w) {
        d.second = std::max(d.second, seq);
        return;
      }
    deps_->emplace_back(w, seq);
  }
  void Read(uint64_t k) {
    Key& key = keys_[k];
    Need(key.writer, key.writer_seq);
    for (auto& r : key.readers)
      if (r.first == w_) {
        r.second = seq_;
        return;
      }
    key.readers.emplace_back(w_, seq_);
  }
  void Write(uint64_t k) {
    Key& key = keys_[k];
    Need(key.writer, key.writer_seq);
    for (const auto& r : key.readers) Need(r.first, r.second);
    key.readers.clear();
    key.writer = w_;
    key.writer_seq = seq_;
  }

  std::string cwd0_;
  std::unordered_map<uint32_t, DProc> procs_;
  std::unordered_map<uint64_t, Key> keys_;
  std::vector<std::pair<Worker*, uint64_t>>* deps_ = nullptr;
  Worker* w_ = nullptr;
  uint64_t seq_ = 0;
  std::string paths_[trace::kMaxArgs];
};

Status ReplayConcurrent(const Options& o, Engine& engine, trace::TraceReader& reader,
                        Report* report) {
  std::mutex mu;
  engine.mu_ = &mu;
  Dependencies deps(engine.cwd0_);
  std::unordered_map<uint64_t, std::unique_ptr<Worker>> workers;
  std::atomic<uint64_t> in_flight{0};
  constexpr uint64_t kMaxInFlight = 1 << 16;  // bounds the memory held in queues
  int64_t start = MonoNs();
  int64_t first = INT64_MIN;

  auto work = [&](Worker* w) {
    int64_t latency;
    int64_t recorded_end = 0, replayed_end = 0;  // think timing: this thread's previous call
    for (;;) {
      Item it;
      {
        std::unique_lock<std::mutex> lock(w->mu);
        while (w->queue.empty()) {
          w->sleeping = true;
          w->cv.wait(lock);
          w->sleeping = false;
        }
        it = std::move(w->queue.front());
        w->queue.pop_front();
      }
      if (it.stop) return;
      for (int i = 0; i < trace::kMaxArgs; ++i)
        if (!it.e.args[i].null && !it.s[i].empty()) it.e.args[i].s = it.s[i];
      for (const auto& [other, seq] : it.deps) {
        // Sleep (futex) rather than spin: with more replaying threads than cores, spinning
        // threads take the CPU from the ones whose calls they wait for.
        for (uint64_t d = other->done.load(std::memory_order_acquire); d < seq;
             d = other->done.load(std::memory_order_acquire))
          other->done.wait(d, std::memory_order_acquire);
      }
      if (o.timing != Timing::kAfap && it.e.call != CallId::initial_state &&
          it.e.call != CallId::dirents) {
        int64_t target =
            o.timing == Timing::kThink
                ? (replayed_end == 0 ? MonoNs()
                                     : replayed_end + static_cast<int64_t>(
                                                          static_cast<double>(it.issue_ns - recorded_end) / o.speed))
                : start + static_cast<int64_t>(static_cast<double>(it.issue_ns - first) / o.speed);
        int64_t wake = target - 100'000;
        if (wake > MonoNs()) {
          struct timespec ts = {static_cast<time_t>(wake / 1'000'000'000),
                                static_cast<long>(wake % 1'000'000'000)};
          while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
          }
        }
        while (MonoNs() < target) {
        }
        std::lock_guard<std::mutex> lock(mu);
        report->issue_error_ns.push_back(MonoNs() - target);
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        engine.Replay(it.e, &latency);
      }
      recorded_end = it.e.end_ns;
      replayed_end = MonoNs();
      w->done.store(it.seq, std::memory_order_release);
      w->done.notify_all();
      in_flight.fetch_sub(1, std::memory_order_release);
    }
  };

  // Effect order (as the serial replay and prepare): a call a signal handler interrupted comes
  // after the handler's calls, so the fd maps here (Dependencies) and in the engine follow the
  // fds as the program had them, and the sequence numbers grow along each thread's queue.
  trace::MergedReader m(&reader, trace::MergeOrder::kEffect);
  Event e;
  uint64_t seq = 0;
  while (m.Next(&e)) {
    ++report->events;
    if (first == INT64_MIN && e.call != CallId::initial_state) first = m.resumed_ns();
    uint64_t key = (static_cast<uint64_t>(e.pid) << 32) | e.tid;
    auto& slot = workers[key];
    if (!slot) {
      slot = std::make_unique<Worker>();
      Worker* w = slot.get();
      w->thread = std::thread(work, w);
    }
    Item it;
    it.e = e;
    it.issue_ns = m.resumed_ns();
    it.seq = ++seq;
    const trace::CallSpec& spec = e.spec();
    for (int i = 0; i < spec.nargs; ++i) {
      if (!trace::IsString(spec.args[i].kind)) continue;
      it.s[i] = std::string(e.args[i].s);
      it.e.args[i].s = {};
    }
    deps.Compute(e, slot.get(), it.seq, &it.deps);
    while (in_flight.load(std::memory_order_acquire) >= kMaxInFlight) std::this_thread::yield();
    in_flight.fetch_add(1, std::memory_order_relaxed);
    bool wake;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->queue.push_back(std::move(it));
      wake = slot->sleeping;
    }
    if (wake) slot->cv.notify_one();
  }
  for (auto& [key, w] : workers) {
    {
      std::lock_guard<std::mutex> lock(w->mu);
      Item stop;
      stop.stop = true;
      w->queue.push_back(std::move(stop));
    }
    w->cv.notify_one();
  }
  for (auto& [key, w] : workers) w->thread.join();
  engine.mu_ = nullptr;
  report->threads = workers.size();
  return m.status();
}

}  // namespace

Result<Report> Run(const Options& o) {
  Report report;
  // The replay's own umask is 0 until it returns: every creation is given the recorded
  // process's mode & ~umask (Proc::umask), and prepare's modes are made as they are.
  struct UmaskZero {
    mode_t saved = ::umask(0);
    ~UmaskZero() { ::umask(saved); }
  } umask_zero;
  Engine engine(o, &report);
  engine.umask0_ = umask_zero.saved;  // unless the trace says (its first umask call)
  if (Status s = engine.OpenRoot(); !s.ok()) return s;
  auto opened = trace::TraceReader::Open(o.trace);
  if (!opened.ok()) return opened.status();
  std::string cwd = Normalize(std::string((*opened)->header().Get(trace::key::kCwd)));
  engine.cwd0_ = cwd;

  // 1. What must exist before the first call.
  int64_t t0 = MonoNs();
  if (o.prepare != Prepare::kNone) {
    InitialState state(cwd);
    trace::MergedReader m(opened->get(), trace::MergeOrder::kEffect);  // it follows fds too
    Event e;
    while (m.Next(&e) && !state.overflowed()) state.Observe(e);
    if (!m.status().ok()) return m.status();
    if (state.overflowed())
      return Status::Error("prepare: the trace names more than " +
                           std::to_string(InitialState::kMaxNameBytesTotal >> 20) +
                           " MiB of paths (a hostile trace?); replay it with --prepare none");
    const auto& entries = state.Finish();
    if (state.first_umask() >= 0) engine.umask0_ = static_cast<mode_t>(state.first_umask());
    if (o.prepare == Prepare::kFull) {
      // --prepare full writes every byte: not more than the root's file system has free (a
      // trace that read at an offset of 2^62 would fill the disk). Sparse files cost nothing.
      uint64_t total = 0;
      for (const auto& [n, x] : entries)
        if (x.type == 'f' && __builtin_add_overflow(total, x.size, &total)) total = UINT64_MAX;
      struct statvfs vfs {};
      if (engine.RootFree(&vfs) && total > static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize)
        return Status::Error("prepare: the trace's files hold " + std::to_string(total) +
                             " bytes, more than the " +
                             std::to_string(static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize) +
                             " free under --root; replay it with --prepare sparse");
    }
    engine.PrepareRoot(entries);
    opened = trace::TraceReader::Open(o.trace);
    if (!opened.ok()) return opened.status();
  }
  report.prepare_seconds = static_cast<double>(MonoNs() - t0) / 1e9;

  // 2. The calls. Exact timing: no timer slack, and a short spin.
  constexpr int64_t kSpinNs = 100'000;
  if (o.timing != Timing::kAfap) prctl(PR_SET_TIMERSLACK, 1);
  bool several_threads = false;  // one recorded thread gains nothing from the dispatcher
  if (o.per_thread) {
    trace::TraceReader::Options meta;
    meta.metadata_only = true;
    auto scan = trace::TraceReader::Open(o.trace, meta);
    std::pair<uint32_t, uint32_t> first_thread{0, 0};
    bool seen = false;
    trace::Chunk c;
    while (scan.ok() && !several_threads && (*scan)->NextChunk(&c)) {
      if (c.meta.kind != trace::ChunkKind::kEvents || (c.meta.pid == 0 && c.meta.tid == 0)) continue;
      std::pair<uint32_t, uint32_t> t{c.meta.pid, c.meta.tid};
      if (!seen) {
        first_thread = t;
        seen = true;
      } else if (t != first_thread) {
        several_threads = true;
      }
    }
  }
  // The timed part begins: hooks (block tracing) around it, the end also on error paths.
  struct TimedHooks {
    const Options& o;
    bool started = false;
    void End() {
      if (started && o.on_timed_end) o.on_timed_end();
      started = false;
    }
    ~TimedHooks() { End(); }
  } hooks{o};
  if (o.on_timed_start) {
    if (Status s = o.on_timed_start(); !s.ok()) return s;
  }
  hooks.started = true;
  if (several_threads) {
    int64_t begin = MonoNs();
    Status s = ReplayConcurrent(o, engine, **opened, &report);
    report.replay_seconds = static_cast<double>(MonoNs() - begin) / 1e9;
    hooks.End();
    if (!s.ok()) return s;
    report.integrity_warning = (*opened)->IntegrityWarning();
    return report;
  }
  report.threads = 1;
  // Effect order: a call a signal handler interrupted (recorded with the handler's calls nested
  // in it) is replayed after them, when it resumed, so that an fd number the handler opened and
  // closed meanwhile does not take the fd the call got at its end (an open of a FIFO, accept).
  // Timing counts it from then (resumed_ns): exact timing issues it at the last nested call's
  // recorded end, think timing right after that call; every other call at its start, as before.
  trace::MergedReader m(opened->get(), trace::MergeOrder::kEffect);
  Event e;
  int64_t start = MonoNs();
  int64_t first = INT64_MIN;
  int64_t latency;
  // think: per recorded thread, the recorded gap after its previous call, closed loop.
  struct ThreadClock {
    int64_t recorded_end = 0;  // end of its previous recorded call
    int64_t replayed_end = 0;  // when its previous call finished in the replay
  };
  std::unordered_map<uint64_t, ThreadClock> clocks;
  while (m.Next(&e)) {
    ++report.events;
    const int64_t issue = m.resumed_ns();  // its start, unless it was held back
    bool timed = o.timing != Timing::kAfap && e.call != trace::CallId::initial_state &&
                 e.call != trace::CallId::dirents;
    int64_t target = 0;
    ThreadClock* tc = nullptr;
    if (timed && o.timing == Timing::kThink) {
      tc = &clocks[(static_cast<uint64_t>(e.pid) << 32) | e.tid];
      target = tc->replayed_end == 0
                   ? MonoNs()
                   : tc->replayed_end + static_cast<int64_t>(
                                            static_cast<double>(issue - tc->recorded_end) /
                                            o.speed);
    } else if (timed) {
      if (first == INT64_MIN) first = issue;
      target = start + static_cast<int64_t>(static_cast<double>(issue - first) / o.speed);
    }
    if (timed) {
      // Sleep to just before the target, then spin: a sleeping thread wakes tens of us late.
      int64_t wake = target - kSpinNs;
      if (wake > MonoNs()) {
        struct timespec ts = {static_cast<time_t>(wake / 1'000'000'000),
                              static_cast<long>(wake % 1'000'000'000)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
        }
      }
      while (MonoNs() < target) {
      }
      report.issue_error_ns.push_back(MonoNs() - target);
    }
    engine.Replay(e, &latency);
    if (tc) {
      tc->recorded_end = e.end_ns;
      tc->replayed_end = MonoNs();
    }
  }
  int64_t end = MonoNs();
  hooks.End();
  if (!m.status().ok()) return m.status();
  report.replay_seconds = static_cast<double>(end - start) / 1e9;
  report.integrity_warning = (*opened)->IntegrityWarning();
  return report;
}

}  // namespace iorr::replay
