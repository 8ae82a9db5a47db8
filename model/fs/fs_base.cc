// See fs_base.h.
#include "model/fs/fs_base.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <list>
#include <queue>
#include <string_view>

#include "traces/path_normalize.h"
#include "traces/reader.h"

namespace iorr::model::fs {

using trace::CallId;
using trace::Effect;
using trace::Event;

namespace {

using trace::AppendNormalized;

// Bytes of x equal to the byte repeated in pat: 0x80 in those bytes, 0 in the others.
constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
constexpr uint64_t kSlashes = 0x2f2f2f2f2f2f2f2full, kDots = 0x2e2e2e2e2e2e2e2eull;
inline uint64_t BytesEqual(uint64_t x, uint64_t pat) {
  uint64_t t = x ^ pat;
  return ~(((t & kLow7) + kLow7) | t | kLow7);
}
inline uint64_t Load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Whether relative path p is already normal, so AppendNormalized would append it as it is:
// true when it neither starts nor ends with '/', holds no "//" and no component starts with '.'
// (false for some normal paths, such as ones with a dot file: those take the slow way).
bool IsNormalRelative(std::string_view p) {
  static_assert(std::endian::native == std::endian::little);
  size_t n = p.size();
  if (n == 0 || p[0] == '/' || p[0] == '.' || p[n - 1] == '/') return false;
  const char* s = p.data();
  uint64_t bad = 0;
  size_t i = 0;
  for (; i + 9 <= n; i += 8) {  // s[i..i+7] and the byte after each
    uint64_t x = Load8(s + i), y = Load8(s + i + 1);
    bad |= BytesEqual(x, kSlashes) & (BytesEqual(y, kSlashes) | BytesEqual(y, kDots));
  }
  for (; i + 1 < n; ++i)
    bad |= static_cast<uint64_t>(s[i] == '/' && (s[i + 1] == '/' || s[i + 1] == '.'));
  return bad == 0;
}

// AppendNormalized for *out, "/" or a normal absolute path, without the per-component work
// when p is already normal.
void AppendPath(std::string* out, std::string_view p) {
  if (IsNormalRelative(p)) {
    if (out->size() > 1) out->push_back('/');
    out->append(p);
  } else {
    AppendNormalized(out, p);
  }
}

// "/a/./b//c/../d" -> "/a/b/d": absolute, lexical (the model cannot follow symlinks).
std::string Normalize(std::string_view path) {
  std::string out = "/";
  AppendNormalized(&out, path);
  return out;
}

bool Under(const std::string& path, const std::string& prefix) {
  if (prefix == "/") return true;
  return path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// Values no recorded call can have, which a hostile trace can: the model leaves such events out
// (counted under not_modelled), since times near the int64 range's end never end the device's
// loop (a close ending at INT64_MAX hung it), a count of 2^63 dirtied 2^44 blocks (bad_alloc),
// and names deeper at each chdir kept the square of their length (review at stop 30).
constexpr int64_t kMaxTimeNs = int64_t{1} << 62;  // 146 years either way
constexpr int64_t kMaxRwCount = 0x7ffff000;       // Linux's MAX_RW_COUNT: no call moves more
constexpr int64_t kMaxOffset = int64_t{1} << 62;
constexpr size_t kMaxName = 4095;  // a path argument's (PATH_MAX with its NUL)
// A FICLONE's size beyond which it is left out: modelled as a copy, 1 TiB is 2 Mi requests
// (7.8 s, 269 MB); a hostile 2^62 ran the model out of memory (review).
constexpr int64_t kMaxCloneSize = int64_t{1} << 40;
const char* Implausible(const Event& e) {
  if (e.start_ns < -kMaxTimeNs || e.start_ns > kMaxTimeNs || e.end_ns < e.start_ns ||
      e.end_ns > kMaxTimeNs)
    return "(left out: times out of range or backwards)";
  const trace::CallSpec& spec = e.spec();
  bool io =
      spec.effect == Effect::kRead || spec.effect == Effect::kWrite || spec.effect == Effect::kCopy;
  if (io && e.ret > kMaxRwCount) return "(left out: a count above Linux's MAX_RW_COUNT)";
  for (int i = 0; i < spec.nargs; ++i) {
    if (e.args[i].null) continue;
    if (spec.args[i].kind == trace::ArgKind::kOffset &&
        (e.args[i].i > kMaxOffset || e.args[i].i < -kMaxOffset))
      return "(left out: an offset or length beyond 2^62)";
    if (spec.args[i].kind == trace::ArgKind::kPath && e.args[i].s.size() > kMaxName)
      return "(left out: a path longer than PATH_MAX)";
    if (spec.args[i].kind == trace::ArgKind::kCloneSize && e.args[i].i > kMaxCloneSize)
      return "(left out: a clone larger than 1 TiB)";
  }
  return nullptr;
}

}  // namespace

void FsBase::ResolveInto(const Event& e, int idx, std::string* out) {
  out->clear();
  if (e.args[idx].null) return;
  std::string_view p = e.args[idx].s;
  out->push_back('/');
  if (!p.empty() && p[0] == '/') {
    AppendPath(out, p.substr(1));
    return;
  }
  const std::string* base = nullptr;
  const trace::CallSpec& spec = e.spec();
  int64_t dirfd = AT_FDCWD;
  if (idx > 0 && spec.args[idx - 1].kind == trace::ArgKind::kDirFd) dirfd = e.args[idx - 1].i;
  if (dirfd != AT_FDCWD) {
    if (const Fd* fd = FindFd(e.pid, dirfd); fd && !fd->d->name.empty()) base = &fd->d->name;
  }
  if (!base) {
    auto it = cwd_.find(e.pid);
    base = it != cwd_.end() ? &it->second : &initial_cwd_;
  }
  if (p.empty()) {  // AT_EMPTY_PATH: the dirfd itself
    *out = *base;
    return;
  }
  std::string_view b = *base;
  if (b == normal_base_) {  // the cwd or dirfd of the call before, most of the time
    *out = b;
  } else {
    if (!b.empty() && b[0] == '/') b.remove_prefix(1);
    AppendPath(out, b);
    if (*out == *base) normal_base_ = *out;
  }
  AppendPath(out, p);
}

const std::string& FsBase::Resolve(const Event& e, int idx) {
  if (!(resolved_valid_ & (1u << idx))) {
    ResolveInto(e, idx, &resolved_[idx]);
    resolved_valid_ |= 1u << idx;
  }
  return resolved_[idx];
}

File& FsBase::FileOf(Description& d) {
  if (d.file == nullptr || d.names_gen != names_gen_) {
    d.file = &FileNamed(d.name);
    d.names_gen = names_gen_;
  }
  return *d.file;
}

const FsBase::Fd* FsBase::FindFd(int64_t pid, int64_t fd) const {
  auto t = tables_.find(pid);
  if (t == tables_.end()) return nullptr;
  auto it = t->second->fds->find(fd);
  return it == t->second->fds->end() ? nullptr : &it->second;
}

std::shared_ptr<FsBase::FdTable> FsBase::NewTable(const FdTable* from) {
  auto* t = from ? new FdTable(*from) : new FdTable();
  live_fds_ += t->size();
  return std::shared_ptr<FdTable>(t, [live = &live_fds_](FdTable* gone) {
    *live -= gone->size();
    delete gone;
  });
}

FsBase::FdTable* FsBase::Writable(int64_t pid, bool unshare) {
  std::shared_ptr<Files>& files = tables_[pid];
  if (!files)
    files = std::make_shared<Files>(Files{NewTable(nullptr)});
  else if (unshare && files.use_count() > 1)
    files = std::make_shared<Files>(Files{files->fds});
  if (files->fds.use_count() > 1) {
    if (live_fds_ + files->fds->size() > kMaxLiveFds) {
      ++r_->not_modelled["(left out: a change to a copied fd table past 4 Mi open fds)"];
      return nullptr;
    }
    files->fds = NewTable(files->fds.get());
  }
  // Only this Files holds the table now, and it was made writable by NewTable.
  return const_cast<FdTable*>(files->fds.get());
}

void FsBase::SetFd(int64_t pid, int64_t fd, Fd entry) {
  if (FdTable* t = Writable(pid)) {
    auto [it, added] = t->insert_or_assign(fd, std::move(entry));
    if (added) ++live_fds_;
  }
}

void FsBase::EraseFd(int64_t pid, int64_t fd) {
  if (!FindFd(pid, fd)) return;
  if (FdTable* t = Writable(pid)) live_fds_ -= t->erase(fd);
}

void FsBase::Bookkeep(const Event& e) {
  // What no longer names a file the model knows: a process's fds when it is gone, its O_CLOEXEC
  // fds after an exec, a range closed at once, and an fd number that a call other than an open
  // hands out anew (a pipe, a socket).
  if (e.call == CallId::exit_group) {
    tables_.erase(e.pid);
    return;
  }
  if (e.failed()) return;
  if (e.call == CallId::execve || e.call == CallId::execveat) {
    // exec unshares a table shared by CLONE_FILES (its entries stay shared until changed), then
    // closes the close-on-exec fds.
    auto t = tables_.find(e.pid);
    if (t != tables_.end()) {
      if (t->second.use_count() > 1) t->second = std::make_shared<Files>(Files{t->second->fds});
      const FdTable& fds = *t->second->fds;
      bool any =
          std::any_of(fds.begin(), fds.end(), [](const auto& fd) { return fd.second.cloexec; });
      if (FdTable* table = any ? Writable(e.pid) : nullptr) {
        for (auto it = table->begin(); it != table->end();) {
          if (it->second.cloexec) {
            it = table->erase(it);
            --live_fds_;
          } else {
            ++it;
          }
        }
      }
    }
  } else if (e.call == CallId::close_range) {
    auto first = static_cast<uint64_t>(e.args[0].i), last = static_cast<uint64_t>(e.args[1].i);
    bool cloexec = e.args[2].i & CLOSE_RANGE_CLOEXEC;
    FdTable* table = nullptr;
    if (first <= last && tables_.count(e.pid))
      table = Writable(e.pid, e.args[2].i & CLOSE_RANGE_UNSHARE);
    if (table) {
      auto change = [&](FdTable::iterator it) {
        if (cloexec) {
          it->second.cloexec = true;
          return std::next(it);
        }
        --live_fds_;
        return table->erase(it);
      };
      // A narrow range is looked up fd by fd: a scan of the table per call made a program
      // closing its fds one range at a time cost the square of their number.
      if (last - first < table->size()) {
        for (uint64_t fd = first;; ++fd) {
          if (auto it = table->find(static_cast<int64_t>(fd)); it != table->end()) change(it);
          if (fd == last) break;
        }
      } else {
        for (auto it = table->begin(); it != table->end();)
          if (static_cast<uint64_t>(it->first) >= first && static_cast<uint64_t>(it->first) <= last)
            it = change(it);
          else
            ++it;
      }
    }
  } else if (e.spec().effect == Effect::kNotFile) {
    if (e.spec().ret == trace::Ret::kFd && e.ret >= 0) EraseFd(e.pid, e.ret);
    for (int i = 0; i < e.spec().nargs; ++i)
      if (e.spec().args[i].kind == trace::ArgKind::kFdPair) {
        auto pair = static_cast<uint64_t>(e.args[i].i);
        EraseFd(e.pid, static_cast<uint32_t>(pair));
        EraseFd(e.pid, static_cast<uint32_t>(pair >> 32));
      }
  }
  bool dup =
      e.call == CallId::dup || e.call == CallId::dup2 || e.call == CallId::dup3 ||
      (e.call == CallId::fcntl && (e.args[1].i == F_DUPFD || e.args[1].i == F_DUPFD_CLOEXEC));
  if (dup) {
    // The new fd names the old one's description (dup2/dup3 close what was there first; dup2
    // of an fd onto itself does nothing).
    if (e.call == CallId::dup2 && e.ret == e.args[0].i) return;
    const Fd* old = FindFd(e.pid, e.args[0].i);
    if (!old) {
      EraseFd(e.pid, e.ret);
      return;
    }
    Fd copy{old->d, (e.call == CallId::fcntl && e.args[1].i == F_DUPFD_CLOEXEC) ||
                        (e.call == CallId::dup3 && (e.args[2].i & O_CLOEXEC))};
    SetFd(e.pid, e.ret, std::move(copy));
  } else if (e.call == CallId::fcntl && e.args[1].i == F_SETFD) {
    if (const Fd* fd = FindFd(e.pid, e.args[0].i);
        fd && fd->cloexec != bool(e.args[2].i & FD_CLOEXEC))
      SetFd(e.pid, e.args[0].i, Fd{fd->d, (e.args[2].i & FD_CLOEXEC) != 0});
  } else if (e.call == CallId::fcntl && e.args[1].i == F_SETFL) {
    if (const Fd* fd = FindFd(e.pid, e.args[0].i)) fd->d->append = (e.args[2].i & O_APPEND) != 0;
  } else if (e.call == CallId::chdir) {
    // Resolved before the process's entry exists: a new one would be an empty cwd, and a
    // process's first relative chdir would go from / instead of the trace's cwd.
    std::string dir;
    ResolveInto(e, 0, &dir);
    // (A cwd past PATH_MAX is not followed: a chdir a step deeper each time, with names kept
    // whole, would keep the square of its depth.)
    if (dir.size() <= kMaxName) cwd_[e.pid] = std::move(dir);
  } else if (e.call == CallId::fchdir) {
    if (const Fd* fd = FindFd(e.pid, e.args[0].i)) cwd_[e.pid] = fd->d->name;
  } else if (e.spec().effect == Effect::kProcess && e.spec().ret == trace::Ret::kPid && e.ret > 0) {
    // fork, vfork, clone: a new process starts with the parent's cwd and a copy of its fd table
    // (the same descriptions), or the table itself with CLONE_FILES; a thread (CLONE_THREAD)
    // is the same process and shares both.
    bool by_clone = e.call == CallId::clone || e.call == CallId::clone3;
    uint64_t flags = by_clone ? static_cast<uint64_t>(e.args[0].i) : 0;
    if (flags & CLONE_THREAD) return;
    auto child = static_cast<int64_t>(e.ret);
    if (child == e.pid) return;  // (a hostile trace's)
    auto it = cwd_.find(e.pid);
    cwd_[child] = it != cwd_.end() ? it->second : initial_cwd_;
    if (flags & CLONE_FILES) {
      Writable(e.pid);  // made now if it has none, to be shared
      std::shared_ptr<Files> shared = tables_[e.pid];
      tables_[child] = std::move(shared);
    } else if (auto parent = tables_.find(e.pid); parent != tables_.end()) {
      auto copy = std::make_shared<Files>(Files{parent->second->fds});  // copy on write
      tables_[child] = std::move(copy);
    } else {
      tables_.erase(child);
    }
  }
}

// A null path after a dirfd names the open file itself (futimens: utimensat(fd, NULL)).
static bool NamesItsDirFd(const Event& e, int path) {
  return e.args[path].null && path > 0 && e.spec().args[path - 1].kind == trace::ArgKind::kDirFd;
}

bool FsBase::KnownFd(const Event& e, int idx) const {
  return FindFd(e.pid, e.args[idx].i) != nullptr;
}

bool FsBase::Keep(const Event& e) {
  const trace::CallSpec& spec = e.spec();
  bool any_path = false;
  for (int i = 0; i < spec.nargs; ++i)
    if (spec.args[i].kind == trace::ArgKind::kPath) {
      if (NamesItsDirFd(e, i)) return KnownFd(e, i - 1);
      any_path = true;
      const std::string& p = Resolve(e, i);
      for (const std::string& prefix : o_.only)
        if (Under(p, prefix)) return true;
    }
  if (any_path) return false;
  if (e.call == CallId::sync) return true;
  return spec.nargs > 0 && spec.args[0].kind == trace::ArgKind::kFd && KnownFd(e, 0);
}

bool FsBase::TableCovers(const Event& e) const {
  if (CallCosts::CategoryOf(e) == CallCategory::kNone) return false;
  const trace::CallSpec& spec = e.spec();
  for (int i = 0; i < spec.nargs; ++i)
    if (spec.args[i].kind == trace::ArgKind::kPath)
      return !e.args[i].null || (NamesItsDirFd(e, i) && KnownFd(e, i - 1));
  return spec.nargs > 0 && spec.args[0].kind == trace::ArgKind::kFd && KnownFd(e, 0);
}

void FsBase::AddEntry(MetaBlock dir, int delta) {
  uint64_t& n = dir_entries_[dir];
  if (delta < 0 && n == 0) return;
  n = static_cast<uint64_t>(static_cast<int64_t>(n) + delta);
}

Status FsBase::Run(const std::string& trace_path, FsModelResult* r) {
  r_ = r;
  auto opened = trace::TraceReader::Open(trace_path);
  if (!opened.ok()) return opened.status();
  std::string_view cwd = (*opened)->header().Get("cwd");
  if (!cwd.empty() && cwd[0] == '/') initial_cwd_ = std::string(cwd);
  std::vector<std::string> only;
  for (const std::string& p : o_.only) only.push_back(Normalize(p));
  o_.only = only;
  // Effect order: a call a signal handler interrupted comes after the handler's calls recorded
  // nested in it (an open that returned the fd number the handler opened and closed meanwhile
  // names its own file in the fd table), and its own time runs from when it resumed (the last
  // nested call's end: resumed_ns, which is the start of every other call) to its end, so the
  // handler's calls are not counted twice.
  trace::MergedReader m(opened->get(), trace::MergeOrder::kEffect);
  Event e;
  // Threads run apart, in recorded order, each call starting when what happened before it in
  // the recording has happened in the model: its thread's previous call, and the latest call
  // of each other thread if that call ended after the previous one (and before this call
  // started), have ended in the model, plus, in program timing, the same think time after
  // each. So for e,
  //   start(e) = e.start + max over those calls of (model end - recorded end)   (program timing)
  //   start(e) = max over those calls of their model end                        (afap)
  // A single thread runs exactly as a sequence; threads whose calls overlapped in the
  // recording overlap in the model (one waiting for the disk does not hold up another). Only
  // calls since the thread's own previous call count, and of another thread only its latest
  // (what came before it is behind that thread already): counting more would pin a thread to
  // another's past, a shell waiting for its child to the child's first calls, so that the
  // model could not run faster than the recording once it had run slower. A thread's first
  // call looks back to the last call that ended before the thread's first event (its
  // creator's, most of the time). Calls are still applied in recorded order, so a thread
  // behind the device's clock submits late (the device takes it at its clock).
  struct Ended {
    int64_t rec_end, model_end;
    uint32_t tid;
    bool operator>(const Ended& o) const { return rec_end > o.rec_end; }
  };
  std::priority_queue<Ended, std::vector<Ended>, std::greater<Ended>> ended;
  // Each thread's latest ended call (seq: its place in recorded end order, 1, 2, ...), in a
  // list ordered by seq: a thread's record moves to the back when it ends a call, so the calls
  // since seq s are the records at the back with a seq past s. A new thread's record starts at
  // the window's start, with no call yet. Records of threads that exited stay until no live
  // thread's window reaches them.
  struct Rec {
    uint64_t seq;
    int64_t delay;  // model end - recorded end of that call (none yet: INT64_MIN)
    int64_t end;    // its model end (none yet: INT64_MIN)
    uint32_t tid, pid;
    bool live;
  };
  std::list<Rec> recs;
  using RecIt = std::list<Rec>::iterator;
  uint64_t seq = 0;
  // Live threads, by tid; few, so found by a scan from the last one used.
  std::vector<std::pair<uint32_t, RecIt>> live;
  size_t last_used = 0;
  auto find_live = [&](uint32_t tid) -> RecIt* {
    if (last_used < live.size() && live[last_used].first == tid) return &live[last_used].second;
    for (size_t i = 0; i < live.size(); ++i)
      if (live[i].first == tid) return &live[last_used = i].second;
    return nullptr;
  };
  // Two dead records side by side answer every window alike (no live thread's record lies
  // between them, and a thread's record only moves to the back): the earlier folds into the
  // later, unless the later is the back, which a new thread's window holds alone. So a parent
  // idle through thousands of short children keeps a handful of records, not one per child.
  auto fold = [&](RecIt later) {
    if (later == recs.end() || later == recs.begin() || later->live ||
        std::next(later) == recs.end())
      return;
    RecIt earlier = std::prev(later);
    if (earlier->live) return;
    later->delay = std::max(later->delay, earlier->delay);
    later->end = std::max(later->end, earlier->end);
    recs.erase(earlier);
  };
  auto retire = [&](size_t i) {
    RecIt it = live[i].second;
    it->live = false;
    live[i] = live.back();
    live.pop_back();
    RecIt next = std::next(it);
    fold(it);    // its dead predecessor into it
    fold(next);  // it into its dead successor
    // Behind every live thread's window; the newest stays for the next new thread's.
    while (recs.size() > 1 && !recs.front().live) recs.pop_front();
  };
  auto live_of = [&](uint32_t tid, uint32_t pid) -> RecIt {
    if (RecIt* it = find_live(tid)) {
      if ((*it)->pid == pid) return *it;
      retire(last_used);  // a tid reused by another process: the first is gone
    }
    // A new thread: its window starts at the last call ended so far (just before the newest).
    uint64_t from = seq > 0 ? seq - 1 : 0;
    auto pos = recs.end();
    if (!recs.empty() && recs.back().seq > from) --pos;
    RecIt it = recs.insert(pos, Rec{from, INT64_MIN, INT64_MIN, tid, pid, true});
    last_used = live.size();
    live.emplace_back(tid, it);
    return it;
  };
  // The largest delay and model end over the thread's window (its own latest call included).
  auto window = [&](RecIt mine, int64_t* delay, int64_t* after) {
    *delay = mine->delay;
    *after = mine->end;
    for (auto it = recs.end(); it != recs.begin();) {
      --it;
      if (it->seq <= mine->seq) break;
      *delay = std::max(*delay, it->delay);
      *after = std::max(*after, it->end);
    }
    if (*delay == INT64_MIN) *delay = 0;  // nothing ended before it: the first call
    if (*after == INT64_MIN) *after = 0;
  };
  // Calls recorded as ended by `until` become their thread's latest.
  auto settle = [&](int64_t until) {
    while (!ended.empty() && ended.top().rec_end <= until) {
      const Ended& x = ended.top();
      ++seq;
      int64_t delay = x.model_end - x.rec_end;
      if (RecIt* it = find_live(x.tid)) {
        RecIt rec = *it, next = std::next(rec);
        rec->seq = seq;
        rec->delay = delay;
        rec->end = x.model_end;
        recs.splice(recs.end(), recs, rec);
        fold(next);  // its old neighbours may both be dead
      } else {
        // A call that ended after its thread was retired (a sibling's exit_group is recorded
        // before it takes effect): it still orders what follows.
        recs.push_back(Rec{seq, delay, x.model_end, x.tid, 0, false});
        if (recs.size() > 1) fold(std::prev(recs.end(), 2));
      }
      ended.pop();
    }
  };
  int64_t elapsed = 0, tail = 0;
  next_flusher_ns_ = o_.dirty_writeback_ns;
  while (m.Next(&e)) {
    if (e.call == CallId::initial_state || e.call == CallId::dirents || e.call == CallId::block)
      continue;
    if (const char* why = Implausible(e)) {
      ++r->not_modelled[why];
      continue;
    }
    const int64_t from = m.resumed_ns();
    settle(from);
    RecIt mine = live_of(e.tid, e.pid);
    // A chdir's own path is relative to the directory it leaves: filter it before Bookkeep.
    bool cwd_call = e.spec().effect == trace::Effect::kCwd;
    bool keep = o_.only.empty() || !cwd_call || Keep(e);
    Bookkeep(e);
    resolved_valid_ = 0;  // Bookkeep's chdir changed the cwd: Keep and Apply resolve anew
    if (!o_.only.empty() && !cwd_call) keep = Keep(e);
    int64_t delay = 0, after = 0;
    window(mine, &delay, &after);
    if (keep) {
      ++r->events;
      int64_t start = o_.think ? std::max<int64_t>(0, from + delay) : after;
      t_ = start;  // this thread's time; may be behind another thread's
      Advance(t_);
      int64_t before = t_;
      bool priced = o_.costs && TableCovers(e);
      bool waited = Apply(e);
      waited = waited || t_ > before;
      int64_t cpu = std::max<int64_t>(0, e.end_ns - from);
      if (waited) cpu = std::min<int64_t>(cpu, 20'000);  // the recording's own wait is not CPU
      // The target file system's CPU, where the table covers the call (call_costs.h).
      if (priced) cpu = o_.costs->CostNs(e);
      r->io_wait_ns += t_ - before;
      r->cpu_ns += cpu;
      Advance(t_ + cpu);
      elapsed = std::max(elapsed, t_);
      ended.push({e.end_ns, t_, e.tid});
    } else {
      // Not counted: the time it took in the recording stays in the program's time (none in
      // afap timing), so what comes after it, in its thread, in threads it precedes, or the end
      // of the run, comes as late after it as recorded.
      int64_t end = o_.think ? e.end_ns + delay : after;
      tail = std::max(tail, end);
      ended.push({e.end_ns, end, e.tid});
    }
    if (e.call == CallId::exit || e.call == CallId::exit_group) {
      settle(e.end_ns);  // its calls still order what follows; the thread (or process) is done
      for (size_t i = live.size(); i-- > 0;)
        if (live[i].first == e.tid ||
            (e.call == CallId::exit_group && live[i].second->pid == e.pid))
          retire(i);
    }
    if (!keep) continue;
    if (t_ >= next_flusher_ns_) {
      WriteBackExpired();
      next_flusher_ns_ = t_ + o_.dirty_writeback_ns;
    }
    Tick();
  }
  if (!m.status().ok()) return m.status();
  // Program timing: the recording went on after the last call counted (exits, --only).
  if (o_.think) elapsed = std::max(elapsed, tail);
  t_ = std::max(t_, elapsed);
  Advance(t_);
  r->elapsed_ns = elapsed;
  dev_.Quiesce();
  r->device = dev_.stats();
  return {};
}

void FsBase::Completed(uint64_t tag) {
  uint8_t& st = tag_state_[tag];
  if (st & kWaited) --waiting_;
  st = 0;
}

void FsBase::Advance(int64_t t) {
  // (kNever is the idle device's: never a time to step to.)
  while (dev_.NextEventNs() <= t && dev_.NextEventNs() != kNever) {
    dev_.Step();
    Completion c;
    while (dev_.PopCompletion(&c)) Completed(c.tag);
  }
  t_ = std::max(t_, t);
}

void FsBase::Wait(const std::vector<uint64_t>& tags) {
  waited_.clear();
  for (uint64_t tag : tags) {
    uint8_t& st = tag_state_[tag];
    if (st == kPending) {
      st |= kWaited;
      ++waiting_;
      waited_.push_back(tag);
    }
  }
  while (waiting_ != 0 && dev_.NextEventNs() != kNever) Advance(dev_.NextEventNs());
  for (uint64_t tag : waited_) tag_state_[tag] &= static_cast<uint8_t>(~kWaited);
  waiting_ = 0;
}

uint64_t FsBase::Submit(BlockOp op, uint64_t sector, uint64_t bytes, uint8_t flags,
                        BlockKind kind) {
  BlockRequest q;
  q.time_ns = std::max(t_, dev_.now_ns());
  q.sector = sector;
  q.bytes = bytes;
  q.op = op;
  q.flags = flags;
  q.kind = kind;
  if ((flags & kPreflush) || op == BlockOp::kFlush) ++r_->asked_flushes;
  if (op == BlockOp::kWrite && (flags & kFua)) ++r_->asked_fua;
  uint64_t tag = ++tag_;
  tag_state_.push_back(kPending);  // tag_state_[tag]
  dev_.Submit(q, tag);
  return tag;
}

void FsBase::SubmitRange(BlockOp op, uint64_t sector, uint64_t bytes, uint8_t flags, BlockKind kind,
                         std::vector<uint64_t>* tags) {
  for (uint64_t off = 0; off < bytes; off += kMaxRequest) {
    uint64_t n = std::min(kMaxRequest, bytes - off);
    uint64_t tag = Submit(op, sector + off / kSectorBytes, n, flags, kind);
    if (tags) tags->push_back(tag);
  }
}

File& FsBase::FileNamed(std::string_view name, bool* existed) {
  auto [slot, made] = files_.TryEmplace(name, nullptr);
  if (existed) *existed = !made;
  if (!made) return **slot;
  File& f = storage_.emplace_back();
  f.ino = next_inode_++;
  f.inode_block = kMetaStart / kSectorsPerBlock + inode_block_of(f.ino);
  *slot = &f;
  return f;
}

MetaBlock FsBase::DirBlock(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view dir =
      slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
  entry_name_bytes_ = slash == std::string_view::npos ? path.size() : path.size() - slash - 1;
  auto [slot, made] = dir_blocks_.TryEmplace(dir, 0);
  if (!made) return *slot;
  MetaBlock b = kMetaStart / kSectorsPerBlock + next_dir_block_++;
  *slot = b;
  File& d = FileNamed(dir.empty() ? std::string_view("/") : dir);
  d.is_dir = true;
  dir_files_[b] = &d;
  return b;
}

void FsBase::Place(File& f, uint64_t bytes) {
  if (f.placed) return;
  f.placed = true;
  // Contiguous, right after the previous file's blocks, sized to what the file holds now.
  f.sector = next_data_;
  uint64_t room = std::max<uint64_t>(kBlock, (bytes + kBlock - 1) / kBlock * kBlock);
  next_data_ += room / kSectorBytes;
  Allocated(f);
}

void FsBase::MakeDirty(File& f, uint64_t from, uint64_t to) {
  from = from / kBlock * kBlock;
  to = (to + kBlock - 1) / kBlock * kBlock;
  if (!f.is_dirty()) {
    f.dirtied_ns = t_;
    dirty_order_.push_back(&f);
  }
  // Merge [from, to) into the sorted ranges (files have a handful at most).
  auto& d = f.dirty;
  auto it = std::lower_bound(d.begin(), d.end(), from,
                             [](const auto& r, uint64_t v) { return r.second < v; });
  uint64_t lo = from, hi = to, removed = 0;
  auto first = it;
  while (it != d.end() && it->first <= hi) {
    lo = std::min(lo, it->first);
    hi = std::max(hi, it->second);
    removed += it->second - it->first;
    ++it;
  }
  it = d.erase(first, it);
  d.insert(it, {lo, hi});
  uint64_t added = (hi - lo) - removed;
  f.dirty_bytes += added;
  dirty_bytes_ += added;
}

void FsBase::DropDirty(File& f) {
  dirty_bytes_ -= std::min(dirty_bytes_, f.dirty_bytes);
  f.dirty.clear();
  f.dirty_bytes = 0;
  f.dirtied_ns = -1;
}

void FsBase::WriteBack(File& f, std::vector<uint64_t>* tags) {
  if (!f.is_dirty()) return;
  Place(f, f.dirty_end());
  for (const auto& [from, to] : f.dirty)
    SubmitRange(BlockOp::kWrite, f.sector + from / kSectorBytes, to - from, 0, BlockKind::kData,
                tags);
  DropDirty(f);
  f.dirtied_ns = -1;
}

void FsBase::ChargeWriteBack(const File& f) {
  if (o_.costs && o_.costs->writeback_ns_per_file > 0 && f.is_dirty()) {
    auto ns = static_cast<int64_t>(o_.costs->writeback_ns_per_file);
    r_->writeback_cpu_ns += ns;
    Advance(t_ + ns);
  }
}

void FsBase::WriteBackAll(std::vector<uint64_t>* tags, bool waited) {
  // Waited for: writeback's own CPU per file adds to the device's time rather than overlapping
  // it, which is how `iorr calibrate --calls` measures it (a sync of N files less a sync of one
  // file of as many bytes). So it is charged in full before the requests go out. (A throttled
  // writer waits too, but only until the flusher has brought the dirty pages under the limit:
  // not charged.)
  // A file fsynced and dirtied again is in dirty_order_ twice: charged once.
  if (waited) {
    ++writebacks_waited_;
    for (File* f : dirty_order_)
      if (f->charged != writebacks_waited_) {
        f->charged = writebacks_waited_;
        ChargeWriteBack(*f);
      }
  }
  while (!dirty_order_.empty()) {
    File* f = dirty_order_.front();
    dirty_order_.pop_front();
    WriteBack(*f, tags);
  }
}

void FsBase::WriteBackExpired() {
  while (!dirty_order_.empty()) {
    File* f = dirty_order_.front();
    if (f->dirtied_ns >= 0 && t_ - f->dirtied_ns < o_.dirty_expire_ns) break;
    dirty_order_.pop_front();
    WriteBack(*f, nullptr);
  }
}

void FsBase::Throttle() {
  double mem = static_cast<double>(o_.mem_bytes);
  if (static_cast<double>(dirty_bytes_) > mem * o_.dirty_ratio / 100) {
    std::vector<uint64_t> tags;
    WriteBackAll(&tags);
    Wait(tags);
  } else if (static_cast<double>(dirty_bytes_) > mem * o_.dirty_background_ratio / 100) {
    WriteBackAll(nullptr);
  }
}

bool FsBase::ReadData(File& f, uint64_t off, uint64_t end) {
  if (end <= f.cached_to) return false;
  Place(f, end);
  std::vector<uint64_t> tags;
  uint64_t from = std::max(off, f.cached_to) / kBlock * kBlock;
  SubmitRange(BlockOp::kRead, f.sector + from / kSectorBytes, end - from, kSync, BlockKind::kData,
              &tags);
  f.cached_to = std::max(f.cached_to, end);
  Wait(tags);
  return true;
}

bool FsBase::WriteData(File& f, uint64_t off, uint64_t end, bool sync) {
  bool grows = end > f.size;
  MakeDirty(f, off, end);
  f.size = std::max(f.size, end);
  f.cached_to = std::max(f.cached_to, end);
  if (AllocateAtWrite() && grows) {
    if (!f.placed)
      Place(f, end);
    else
      Allocated(f);
  }
  Written(f, grows);  // size and mtime
  if (sync) {
    Fsync(f, true);
    return true;
  }
  Throttle();
  return false;
}

// n bytes of `from` at in_off put into `to` at out_off (either may be null: a file the trace
// does not show), inside the kernel: shared when `clone` (the caller checked the file system
// can), else read and written. True when the program waited for the device.
bool FsBase::CloneOrCopy(Description* from, Description* to, uint64_t in_off, uint64_t out_off,
                         uint64_t n, bool clone) {
  bool waited = false;
  if (clone && to) {
    // The remap first writes both files' dirty pages and waits for them
    // (filemap_write_and_wait_range), and forces the log for an O_SYNC or O_DSYNC fd.
    File* src = from ? &FileOf(*from) : nullptr;
    File& f = FileOf(*to);
    std::vector<uint64_t> tags;
    if (src) WriteBack(*src, &tags);
    WriteBack(f, &tags);
    if (!tags.empty()) {
      Wait(tags);
      waited = true;
    }
    f.size = std::max(f.size, out_off + n);
    Cloned(f, src);
    if ((from && from->sync) || to->sync) {
      Fsync(f, true);
      waited = true;
    }
    return waited;
  }
  if (from) waited = ReadData(FileOf(*from), in_off, in_off + n);
  if (to) waited = WriteData(FileOf(*to), out_off, out_off + n, to->sync) || waited;
  return waited;
}

// Applies one call; true when the program waited for the device.
bool FsBase::Apply(const Event& e) {
  const trace::CallSpec& spec = e.spec();
  bool ok = !e.failed();
  auto path = [&](int idx) -> const std::string& { return Resolve(e, idx); };
  auto open_file = [&](int idx) -> Description* {
    const Fd* fd = FindFd(e.pid, e.args[idx].i);
    return fd ? fd->d.get() : nullptr;
  };
  switch (e.call) {
    case CallId::open:
    case CallId::openat:
    case CallId::openat2:
    case CallId::creat: {
      if (!ok) return false;
      int idx = (e.call == CallId::openat || e.call == CallId::openat2) ? 1 : 0;
      const std::string& name = path(idx);
      // (Nor a directory fd ever deeper, opened relative to the one before: not kept.)
      if (name.size() > 4 * kMaxName) return false;
      int64_t flags = e.call == CallId::creat ? (O_CREAT | O_WRONLY | O_TRUNC) : e.args[idx + 1].i;
      auto d = std::make_shared<Description>();
      d->name = name;
      d->sync = (flags & (O_SYNC | O_DSYNC)) != 0;
      d->append = (flags & O_APPEND) != 0;
      bool existed = false;
      File& f = FileNamed(name, &existed);
      d->file = &f;
      d->names_gen = names_gen_;
      SetFd(e.pid, e.ret, Fd{std::move(d), (flags & O_CLOEXEC) != 0});
      f.unlinked = false;
      if (flags & O_DIRECTORY) f.is_dir = true;
      if ((flags & O_CREAT) && !existed) {
        MetaBlock dir = DirBlock(name);
        AddEntry(dir, 1);
        MetadataChanged(f, dir);
      } else if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY && f.size > 0) {
        DropDirty(f);
        f.size = 0;
        Freed(f, 0);
      }
      return false;
    }
    case CallId::close:
      EraseFd(e.pid, e.args[0].i);
      return false;
    case CallId::lseek:
      // (A position past 2^62 is no real file's: left where it was.)
      if (Description* of = open_file(0); ok && of && e.ret <= kMaxOffset)
        of->pos = static_cast<uint64_t>(e.ret);
      return false;
    case CallId::write:
    case CallId::pwrite64:
    case CallId::writev:
    case CallId::pwritev:
    case CallId::pwritev2: {
      Description* of = open_file(0);
      if (!ok || e.ret <= 0 || !of) return false;
      File& f = FileOf(*of);
      // pwritev2 at offset -1 writes at the file position, as write does. On an O_APPEND fd
      // (or with RWF_APPEND) every write goes to the end, pwrite's too (pwrite(2), BUGS), and
      // a positional one leaves the position alone.
      bool positional = e.call == CallId::pwrite64 || e.call == CallId::pwritev ||
                        (e.call == CallId::pwritev2 && e.args[3].i != -1);
      bool append =
          of->append || (e.call == CallId::pwritev2 && (e.args[4].i & 0x10 /*RWF_APPEND*/));
      uint64_t off = positional ? static_cast<uint64_t>(e.args[3].i) : of->pos;
      if (append) off = f.size;
      uint64_t end = off + static_cast<uint64_t>(e.ret);
      if (!positional) of->pos = end;
      bool dsync = e.call == CallId::pwritev2 && (e.args[4].i & 0x2 /*RWF_DSYNC*/);
      return WriteData(f, off, end, of->sync || dsync);
    }
    case CallId::read:
    case CallId::pread64:
    case CallId::readv:
    case CallId::preadv:
    case CallId::preadv2: {
      Description* of = open_file(0);
      if (!ok || e.ret <= 0 || !of) return false;
      File& f = FileOf(*of);
      // read, readv and preadv2 at offset -1 read at the file position and move it. (Until stop
      // 31 they read where the cached part of the file ended: a file every process of a build
      // reads from its start, a library's ELF header, went to the disk again in each one.)
      bool positional = e.call == CallId::pread64 || e.call == CallId::preadv ||
                        (e.call == CallId::preadv2 && e.args[3].i != -1);
      uint64_t off = positional ? static_cast<uint64_t>(e.args[3].i) : of->pos;
      uint64_t end = off + static_cast<uint64_t>(e.ret);
      if (!positional) of->pos = end;
      return ReadData(f, off, end);
    }
    case CallId::fsync:
    case CallId::fdatasync: {
      Description* of = open_file(0);
      if (!of) return false;
      Fsync(FileOf(*of), e.call == CallId::fdatasync);
      return true;
    }
    case CallId::sync_file_range: {
      // SYNC_FILE_RANGE_WRITE starts writeback of the file's data (the whole file here);
      // WAIT_AFTER waits for it. No journal commit, no flush: it is not an integrity sync.
      Description* of = open_file(0);
      if (!ok || !of) return false;
      std::vector<uint64_t> tags;
      if (e.args[3].i & 2 /*SYNC_FILE_RANGE_WRITE*/) WriteBack(FileOf(*of), &tags);
      if (e.args[3].i & 4 /*WAIT_AFTER*/) Wait(tags);
      return !tags.empty() && (e.args[3].i & 4);
    }
    case CallId::sync:
    case CallId::syncfs:
      SyncAll();
      return true;
    case CallId::ftruncate:
    case CallId::fallocate: {
      Description* of = open_file(0);
      if (ok && of) MetadataChanged(FileOf(*of), 0);
      return false;
    }
    case CallId::rename:
    case CallId::renameat:
    case CallId::renameat2: {
      if (!ok) return false;
      int from_idx = e.call == CallId::rename ? 0 : 1;
      int to_idx = e.call == CallId::rename ? 1 : 3;
      const std::string &from = path(from_idx), &to = path(to_idx);
      File& f = FileNamed(from);
      MetadataChanged(f, DirBlock(from));
      if (DirBlock(to) != DirBlock(from)) {
        AddEntry(DirBlock(from), -1);
        AddEntry(DirBlock(to), 1);
        MetadataChanged(f, DirBlock(to));
      }
      File* fp = *files_.Find(from);  // FileNamed made it
      files_.Erase(from);
      ++names_gen_;  // fds naming `from` or `to` name other files now
      File** old = files_.Find(to);
      if (old && *old != fp) {
        File& victim = **old;
        victim.unlinked = true;
        DropDirty(victim);
        Freed(victim, 0);
      }
      if (old)
        *old = fp;
      else
        files_.TryEmplace(to, fp);
      return false;
    }
    case CallId::unlink:
    case CallId::unlinkat:
    case CallId::rmdir: {
      if (!ok) return false;
      const std::string& name = path(e.call == CallId::unlinkat ? 1 : 0);
      File& f = FileNamed(name);
      DropDirty(f);  // dirty pages of a removed file are dropped, never written
      f.unlinked = true;
      AddEntry(DirBlock(name), -1);
      bool dir =
          e.call == CallId::rmdir || (e.call == CallId::unlinkat && (e.args[2].i & AT_REMOVEDIR));
      if (dir) {
        const MetaBlock* own = dir_blocks_.Find(name);
        DirRemoved(own ? *own : 0);
      }
      Freed(f, DirBlock(name));
      if (files_.Erase(name)) ++names_gen_;  // fds naming it name a new file from now
      return false;
    }
    case CallId::sendfile:
    case CallId::copy_file_range: {
      // A copy inside the kernel: a read of the source and a write of as many bytes to the
      // destination (cp copies every file so since coreutils 9; until stop 31 the model left
      // these calls out, and a recorded `cp -a` wrote no data). An offset pointer of -1 stands
      // for NULL: the file position is used and moved. On a file system that shares blocks
      // (SharesExtents) copy_file_range clones instead where it can: no data moves, the
      // destination's block map changes (a `cp -a` of the 5,000-entry tree wrote 29.0 MB of
      // data on ext4 and none on xfs, whose mkfs makes reflink file systems); sendfile always
      // copies. FICLONE is the ioctl case below.
      if (!ok || e.ret <= 0) return false;
      bool cfr = e.call == CallId::copy_file_range;
      int64_t in_at = e.args[cfr ? 1 : 2].i, out_at = cfr ? e.args[3].i : -1;
      auto n = static_cast<uint64_t>(e.ret);
      auto asked = static_cast<uint64_t>(e.args[cfr ? 4 : 3].i);
      Description* from = open_file(cfr ? 0 : 1);
      Description* to = open_file(cfr ? 2 : 0);
      if (from && (in_at < -1 || in_at > kMaxOffset)) from = nullptr;
      if (to && (out_at < -1 || out_at > kMaxOffset)) to = nullptr;
      uint64_t in_off = !from ? 0 : in_at == -1 ? from->pos : static_cast<uint64_t>(in_at);
      uint64_t out_off = !to            ? 0
                         : out_at == -1 ? (to->append ? FileOf(*to).size : to->pos)
                                        : static_cast<uint64_t>(out_at);
      if (from && in_at == -1) from->pos = in_off + n;
      if (to && out_at == -1) to->pos = out_off + n;
      // A remap needs block-aligned offsets and a length that is block-aligned or runs to the
      // source's end (a copy that moved less than it asked for reached it); otherwise xfs
      // copies (generic_remap_checks; a review found unaligned copies modelled as clones).
      bool clone = cfr && SharesExtents() && from && to && &FileOf(*from) != &FileOf(*to) &&
                   in_off % kBlock == 0 && out_off % kBlock == 0 && (n % kBlock == 0 || n < asked);
      return CloneOrCopy(from, to, in_off, out_off, n, clone);
    }
    case CallId::ioctl: {
      // FICLONE: the destination shares the whole source, `size` bytes (format 4: the recorder
      // asks the source's size after the call; -1 in older traces and strace imports, which the
      // models leave out). A file system that shares blocks remaps them; one that cannot (the
      // recording's could) copies them, as cp does where FICLONE fails: a `cp -a` recorded on
      // xfs or btrfs, modelled on ext4, writes its data.
      // Other requests, and a FICLONE whose size or files the model does not know, are counted
      // as not modelled ("ioctl").
      if (!ok || !e.IsFiclone()) break;
      int64_t size = e.args[3].i;
      Description* from = open_file(2);
      Description* to = open_file(0);
      if (size < 0 || !to) break;
      if (from && &FileOf(*from) == &FileOf(*to)) return false;  // (the kernel refuses: EINVAL)
      // (A source the trace does not show is cloned from, or copied without its read.)
      return CloneOrCopy(from, to, 0, 0, static_cast<uint64_t>(size), SharesExtents());
    }
    default:
      break;
  }
  if (!ok) return false;
  switch (spec.effect) {
    case Effect::kCreate:
    case Effect::kSetAttr: {
      int last_path = -1, fd_arg = -1;
      bool by_path = false;
      for (int i = 0; i < spec.nargs; ++i) {
        if (spec.args[i].kind == trace::ArgKind::kPath) {
          last_path = i;
          by_path = by_path || !e.args[i].null;
        }
        if (fd_arg < 0 && (spec.args[i].kind == trace::ArgKind::kFd ||
                           spec.args[i].kind == trace::ArgKind::kDirFd))
          fd_arg = i;
      }
      // fchmod, fchown, fsetxattr, futimens (utimensat with a null path): the open file.
      if (!by_path && fd_arg >= 0 && spec.effect == Effect::kSetAttr) {
        if (Description* of = open_file(fd_arg)) MetadataChanged(FileOf(*of), 0);
        return false;
      }
      for (int i = 0; i < spec.nargs; ++i)
        if (spec.args[i].kind == trace::ArgKind::kPath && !e.args[i].null) {
          // Create calls (mkdir, mknod, link, symlink) name what they make last.
          bool made = spec.effect == Effect::kCreate && i == last_path;
          if (spec.effect == Effect::kCreate && !made) continue;  // link's and symlink's source
          const std::string& name = Resolve(e, i);
          File& f = FileNamed(name);
          if (made) {
            if (e.call == CallId::mkdir || e.call == CallId::mkdirat) f.is_dir = true;
            AddEntry(DirBlock(name), 1);
          }
          MetadataChanged(f, made ? DirBlock(name) : 0);
        }
      return false;
    }
    case Effect::kRemove:
    case Effect::kRename:
    case Effect::kTruncate:
    case Effect::kLookup:
    case Effect::kReadDir:
    case Effect::kSeek:
    case Effect::kClose:
    case Effect::kFdTable:
    case Effect::kCwd:
    case Effect::kHint:
    case Effect::kNotFile:
    case Effect::kProcess:
    case Effect::kOther:
    case Effect::kState:
    case Effect::kBlock:
      return false;  // no I/O in these models (metadata reads are assumed cached)
    default:
      ++r_->not_modelled[std::string(spec.name)];
      return false;
  }
}

}  // namespace iorr::model::fs
