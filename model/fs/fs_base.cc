// See fs_base.h.
#include "model/fs/fs_base.h"

#include <fcntl.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <string_view>

#include "traces/path_normalize.h"
#include "traces/reader.h"

namespace iorr::model::fs {

using trace::CallId;
using trace::Effect;
using trace::Event;

namespace {

// "/a/./b//c/../d" -> "/a/b/d": absolute, lexical (the model cannot follow symlinks).
std::string Normalize(std::string_view path) { return "/" + trace::NormalizePath(path); }

bool Under(const std::string& path, const std::string& prefix) {
  if (prefix == "/") return true;
  return path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

}  // namespace

std::string FsBase::Resolve(const Event& e, int idx) {
  if (e.args[idx].null) return {};
  std::string_view p = e.args[idx].s;
  if (!p.empty() && p[0] == '/') return Normalize(p);
  std::string base;
  const trace::CallSpec& spec = e.spec();
  int64_t dirfd = AT_FDCWD;
  if (idx > 0 && spec.args[idx - 1].kind == trace::ArgKind::kDirFd) dirfd = e.args[idx - 1].i;
  if (dirfd != AT_FDCWD) {
    auto it = fds_.find(FdKey(e.pid, dirfd));
    if (it != fds_.end()) base = it->second.name;
  }
  if (base.empty()) {
    auto it = cwd_.find(e.pid);
    base = it != cwd_.end() ? it->second : initial_cwd_;
  }
  if (p.empty()) return base;  // AT_EMPTY_PATH: the dirfd itself
  base += '/';
  base += p;
  return Normalize(base);
}

void FsBase::Bookkeep(const Event& e) {
  if (e.failed()) return;
  auto fdkey = [&](int64_t fd) { return FdKey(e.pid, fd); };
  bool dup =
      e.call == CallId::dup || e.call == CallId::dup2 || e.call == CallId::dup3 ||
      (e.call == CallId::fcntl && (e.args[1].i == F_DUPFD || e.args[1].i == F_DUPFD_CLOEXEC));
  if (dup) {
    // The new fd names what the old one names (dup2/dup3 close what was there first).
    fds_.erase(fdkey(e.ret));
    auto it = fds_.find(fdkey(e.args[0].i));
    if (it != fds_.end()) {
      OpenFile copy = it->second;
      fds_[fdkey(e.ret)] = std::move(copy);
    }
  } else if (e.call == CallId::chdir) {
    cwd_[e.pid] = Resolve(e, 0);
  } else if (e.call == CallId::fchdir) {
    auto it = fds_.find(FdKey(e.pid, e.args[0].i));
    if (it != fds_.end()) cwd_[e.pid] = it->second.name;
  } else if (e.spec().effect == Effect::kProcess && e.spec().ret == trace::Ret::kPid && e.ret > 0) {
    // fork, vfork, clone: the child starts with the parent's cwd and (for a new process) fds.
    int32_t child = static_cast<int32_t>(e.ret);
    auto it = cwd_.find(e.pid);
    cwd_[child] = it != cwd_.end() ? it->second : initial_cwd_;
    std::vector<std::pair<uint64_t, OpenFile>> inherited;
    for (const auto& [key, of] : fds_)
      if ((key >> 32) == static_cast<uint32_t>(e.pid))
        inherited.push_back({FdKey(child, static_cast<uint32_t>(key)), of});
    for (auto& [key, of] : inherited) fds_[key] = std::move(of);
  }
}

bool FsBase::Keep(const Event& e) {
  const trace::CallSpec& spec = e.spec();
  bool any_path = false;
  for (int i = 0; i < spec.nargs; ++i)
    if (spec.args[i].kind == trace::ArgKind::kPath) {
      any_path = true;
      std::string p = Resolve(e, i);
      for (const std::string& prefix : o_.only)
        if (Under(p, prefix)) return true;
    }
  if (any_path) return false;
  if (e.call == CallId::sync) return true;
  if (spec.nargs > 0 && spec.args[0].kind == trace::ArgKind::kFd)
    return fds_.count(FdKey(e.pid, e.args[0].i)) != 0;
  return false;
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
  trace::MergedReader m(opened->get());
  Event e;
  // Threads run apart, in recorded order, each call starting when what happened before it in
  // the recording has happened in the model: after the recorded start of a call, every call
  // that had ended by then (in any thread) has ended in the model too, plus, in program
  // timing, the same think time after it. So for call e,
  //   start(e) = e.start + max over threads U of (model end - recorded end of U's latest call
  //              that ended before e.start)              (program timing)
  //   start(e) = max over those calls of their model end  (afap)
  // A single thread runs exactly as a sequence; threads whose calls overlapped in the
  // recording overlap in the model (one waiting for the disk does not hold up another).
  // Calls are still applied in recorded order, so a thread behind the device's clock submits
  // late (the device takes it at its clock).
  struct Ended {
    int64_t rec_end, model_end;
    uint32_t tid;
    bool operator>(const Ended& o) const { return rec_end > o.rec_end; }
  };
  std::priority_queue<Ended, std::vector<Ended>, std::greater<Ended>> ended;
  struct Lag {
    int64_t delay = INT64_MIN;  // model end - recorded end of its latest call known ended
    int64_t end = 0;            // that call's model end
  };
  std::unordered_map<uint32_t, Lag> lags;  // by thread
  Lag retired;                             // the largest of threads that exited
  int64_t all_end = 0, elapsed = 0;
  // Calls recorded as ended by `until` update their thread's lag.
  auto settle = [&](int64_t until) {
    while (!ended.empty() && ended.top().rec_end <= until) {
      Lag& l = lags[ended.top().tid];
      l.delay = ended.top().model_end - ended.top().rec_end;
      l.end = ended.top().model_end;
      ended.pop();
    }
  };
  next_flusher_ns_ = o_.dirty_writeback_ns;
  while (m.Next(&e)) {
    if (e.call == CallId::initial_state || e.call == CallId::dirents || e.call == CallId::block)
      continue;
    all_end = std::max(all_end, e.end_ns);
    Bookkeep(e);
    if (!o_.only.empty() && !Keep(e)) continue;
    ++r->events;
    settle(e.start_ns);
    Lag most = retired;
    for (const auto& [tid, l] : lags) {
      most.delay = std::max(most.delay, l.delay);
      most.end = std::max(most.end, l.end);
    }
    if (most.delay == INT64_MIN) most.delay = 0;  // nothing ended before it: the first call
    int64_t start = o_.think ? std::max<int64_t>(0, e.start_ns + most.delay) : most.end;
    t_ = start;  // this thread's time; may be behind another thread's
    Advance(t_);
    int64_t before = t_;
    bool waited = Apply(e);
    waited = waited || t_ > before;
    int64_t cpu = std::max<int64_t>(0, e.end_ns - e.start_ns);
    if (waited) cpu = std::min<int64_t>(cpu, 20'000);        // the recording's own wait is not CPU
    if (o_.costs) cpu = std::max(cpu, o_.costs->CostNs(e));  // the target file system's CPU
    r->io_wait_ns += t_ - before;
    Advance(t_ + cpu);
    elapsed = std::max(elapsed, t_);
    ended.push({e.end_ns, t_, e.tid});
    if (e.call == CallId::exit || e.call == CallId::exit_group) {
      // Its calls still order what follows; keep the thread's lag, drop the thread.
      settle(e.end_ns);  // everything recorded before its exit is known by now
      auto it = lags.find(e.tid);
      if (it != lags.end()) {
        retired.delay = std::max(retired.delay, it->second.delay);
        retired.end = std::max(retired.end, it->second.end);
        lags.erase(it);
      }
    }
    if (t_ >= next_flusher_ns_) {
      WriteBackExpired();
      next_flusher_ns_ = t_ + o_.dirty_writeback_ns;
    }
    Tick();
  }
  if (!m.status().ok()) return m.status();
  // Program timing: the recording went on after the last call counted (exits, --only).
  int64_t delay = retired.delay;
  while (!ended.empty()) {
    delay = std::max(delay, ended.top().model_end - ended.top().rec_end);
    ended.pop();
  }
  for (const auto& [tid, l] : lags) delay = std::max(delay, l.delay);
  if (delay == INT64_MIN) delay = 0;
  if (o_.think) elapsed = std::max(elapsed, all_end + delay);
  t_ = std::max(t_, elapsed);
  Advance(t_);
  r->elapsed_ns = elapsed;
  dev_.Quiesce();
  r->device = dev_.stats();
  return {};
}

void FsBase::Advance(int64_t t) {
  while (dev_.NextEventNs() <= t) {
    dev_.Step();
    Completion c;
    while (dev_.PopCompletion(&c)) {
      pending_.erase(c.tag);
      waiting_.erase(c.tag);
    }
  }
  t_ = std::max(t_, t);
}

void FsBase::Wait(const std::vector<uint64_t>& tags) {
  waiting_.clear();
  for (uint64_t tag : tags)
    if (pending_.count(tag)) waiting_.insert(tag);
  while (!waiting_.empty() && dev_.NextEventNs() != kNever) Advance(dev_.NextEventNs());
  waiting_.clear();
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
  pending_.insert(tag);
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

File& FsBase::FileNamed(const std::string& name) {
  auto it = files_.find(std::string_view(name));
  if (it != files_.end()) return *it->second;
  File& f = storage_.emplace_back();
  f.ino = next_inode_++;
  f.inode_block = kMetaStart / kSectorsPerBlock + inode_block_of(f.ino);
  files_.emplace(Name(name, &arena_), &f);
  return f;
}

MetaBlock FsBase::DirBlock(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash);
  entry_name_bytes_ = slash == std::string::npos ? path.size() : path.size() - slash - 1;
  auto it = dir_blocks_.find(std::string_view(dir));
  if (it != dir_blocks_.end()) return it->second;
  MetaBlock b = kMetaStart / kSectorsPerBlock + next_dir_block_++;
  dir_blocks_.emplace(Name(dir, &arena_), b);
  File& d = FileNamed(dir.empty() ? "/" : dir);
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

void FsBase::WriteBackAll(std::vector<uint64_t>* tags) {
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

// Applies one call; true when the program waited for the device.
bool FsBase::Apply(const Event& e) {
  const trace::CallSpec& spec = e.spec();
  bool ok = !e.failed();
  auto fdkey = [&](int64_t fd) { return FdKey(e.pid, fd); };
  auto path = [&](int idx) { return Resolve(e, idx); };
  auto open_file = [&](int idx) -> OpenFile* {
    auto it = fds_.find(fdkey(e.args[idx].i));
    return it == fds_.end() ? nullptr : &it->second;
  };
  switch (e.call) {
    case CallId::open:
    case CallId::openat:
    case CallId::openat2:
    case CallId::creat: {
      if (!ok) return false;
      int idx = (e.call == CallId::openat || e.call == CallId::openat2) ? 1 : 0;
      std::string name = path(idx);
      int64_t flags = e.call == CallId::creat ? (O_CREAT | O_WRONLY | O_TRUNC) : e.args[idx + 1].i;
      fds_[fdkey(e.ret)] = {name, (flags & (O_SYNC | O_DSYNC)) != 0};
      bool existed = files_.count(std::string_view(name)) != 0;
      File& f = FileNamed(name);
      f.unlinked = false;
      if (flags & O_DIRECTORY) f.is_dir = true;
      if ((flags & O_CREAT) && !existed) {
        AddEntry(DirBlock(name), 1);
        MetadataChanged(f, DirBlock(name));
      } else if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY && f.size > 0) {
        DropDirty(f);
        f.size = 0;
        Freed(f, 0);
      }
      return false;
    }
    case CallId::close:
      fds_.erase(fdkey(e.args[0].i));
      return false;
    case CallId::write:
    case CallId::pwrite64:
    case CallId::writev:
    case CallId::pwritev:
    case CallId::pwritev2: {
      OpenFile* of = open_file(0);
      if (!ok || e.ret <= 0 || !of) return false;
      File& f = FileNamed(of->name);
      bool positional =
          e.call == CallId::pwrite64 || e.call == CallId::pwritev || e.call == CallId::pwritev2;
      uint64_t off = positional ? static_cast<uint64_t>(e.args[3].i) : f.size;  // appends
      uint64_t end = off + static_cast<uint64_t>(e.ret);
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
      bool dsync = e.call == CallId::pwritev2 && (e.args[4].i & 0x2 /*RWF_DSYNC*/);
      if (of->sync || dsync) {
        Fsync(f, true);
        return true;
      }
      Throttle();
      return false;
    }
    case CallId::read:
    case CallId::pread64:
    case CallId::readv:
    case CallId::preadv:
    case CallId::preadv2: {
      OpenFile* of = open_file(0);
      if (!ok || e.ret <= 0 || !of) return false;
      File& f = FileNamed(of->name);
      bool positional = e.call != CallId::read && e.call != CallId::readv;
      uint64_t off = positional ? static_cast<uint64_t>(e.args[3].i) : f.cached_to;
      uint64_t end = off + static_cast<uint64_t>(e.ret);
      if (end <= f.cached_to) return false;
      Place(f, end);
      std::vector<uint64_t> tags;
      uint64_t from = std::max(off, f.cached_to) / kBlock * kBlock;
      SubmitRange(BlockOp::kRead, f.sector + from / kSectorBytes, end - from, kSync,
                  BlockKind::kData, &tags);
      f.cached_to = std::max(f.cached_to, end);
      Wait(tags);
      return true;
    }
    case CallId::fsync:
    case CallId::fdatasync: {
      OpenFile* of = open_file(0);
      if (!of) return false;
      Fsync(FileNamed(of->name), e.call == CallId::fdatasync);
      return true;
    }
    case CallId::sync_file_range: {
      // SYNC_FILE_RANGE_WRITE starts writeback of the file's data (the whole file here);
      // WAIT_AFTER waits for it. No journal commit, no flush: it is not an integrity sync.
      OpenFile* of = open_file(0);
      if (!ok || !of) return false;
      std::vector<uint64_t> tags;
      if (e.args[3].i & 2 /*SYNC_FILE_RANGE_WRITE*/) WriteBack(FileNamed(of->name), &tags);
      if (e.args[3].i & 4 /*WAIT_AFTER*/) Wait(tags);
      return !tags.empty() && (e.args[3].i & 4);
    }
    case CallId::sync:
    case CallId::syncfs:
      SyncAll();
      return true;
    case CallId::ftruncate:
    case CallId::fallocate: {
      OpenFile* of = open_file(0);
      if (ok && of) MetadataChanged(FileNamed(of->name), 0);
      return false;
    }
    case CallId::rename:
    case CallId::renameat:
    case CallId::renameat2: {
      if (!ok) return false;
      int from_idx = e.call == CallId::rename ? 0 : 1;
      int to_idx = e.call == CallId::rename ? 1 : 3;
      std::string from = path(from_idx), to = path(to_idx);
      File& f = FileNamed(from);
      MetadataChanged(f, DirBlock(from));
      if (DirBlock(to) != DirBlock(from)) {
        AddEntry(DirBlock(from), -1);
        AddEntry(DirBlock(to), 1);
        MetadataChanged(f, DirBlock(to));
      }
      auto it = files_.find(std::string_view(from));
      File* fp = it->second;
      files_.erase(it);
      auto old = files_.find(std::string_view(to));
      if (old != files_.end() && old->second != fp) {
        File& victim = *old->second;
        victim.unlinked = true;
        DropDirty(victim);
        Freed(victim, 0);
      }
      if (old != files_.end())
        old->second = fp;
      else
        files_.emplace(Name(to, &arena_), fp);
      return false;
    }
    case CallId::unlink:
    case CallId::unlinkat:
    case CallId::rmdir: {
      if (!ok) return false;
      std::string name = path(e.call == CallId::unlinkat ? 1 : 0);
      File& f = FileNamed(name);
      DropDirty(f);  // dirty pages of a removed file are dropped, never written
      f.unlinked = true;
      AddEntry(DirBlock(name), -1);
      bool dir =
          e.call == CallId::rmdir || (e.call == CallId::unlinkat && (e.args[2].i & AT_REMOVEDIR));
      if (dir) {
        auto own = dir_blocks_.find(std::string_view(name));
        DirRemoved(own == dir_blocks_.end() ? 0 : own->second);
      }
      Freed(f, DirBlock(name));
      if (auto gone = files_.find(std::string_view(name)); gone != files_.end()) files_.erase(gone);
      return false;
    }
    default:
      break;
  }
  if (!ok) return false;
  switch (spec.effect) {
    case Effect::kCreate:
    case Effect::kSetAttr: {
      int last_path = -1;
      for (int i = 0; i < spec.nargs; ++i)
        if (spec.args[i].kind == trace::ArgKind::kPath) last_path = i;
      for (int i = 0; i < spec.nargs; ++i)
        if (spec.args[i].kind == trace::ArgKind::kPath && !e.args[i].null) {
          // Create calls (mkdir, mknod, link, symlink) name what they make last.
          bool made = spec.effect == Effect::kCreate && i == last_path;
          if (spec.effect == Effect::kCreate && !made) continue;  // link's and symlink's source
          std::string name = Resolve(e, i);
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
