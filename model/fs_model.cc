// See fs_model.h.
#include "model/fs_model.h"

#include <fcntl.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace iorr::model {
namespace {

using trace::CallId;
using trace::Effect;
using trace::Event;

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kSectorsPerBlock = kBlock / kSectorBytes;
constexpr uint64_t kJournalStart = 1ull << 30 >> 9;          // sector of the journal: 1 GiB in
constexpr uint64_t kJournalBlocks = (128ull << 20) / kBlock;  // 128 MiB, circular
constexpr uint64_t kMetaStart = 4ull << 30 >> 9;             // inode tables and directories
constexpr uint64_t kDataStart = 8ull << 30 >> 9;             // file data
constexpr uint64_t kMaxRequest = 512 << 10;

struct File {
  uint64_t sector = 0;         // where its data starts (allocated at first use)
  bool placed = false;
  uint64_t inode_block = 0;    // its inode's block in the inode table
  uint64_t dirty_from = UINT64_MAX, dirty_to = 0;  // dirty byte range in the page cache
  uint64_t cached_to = 0;      // bytes from 0 known to be in the page cache
  uint64_t size = 0;
};

class Ext4 {
 public:
  Ext4(DeviceModel& dev, const FsModelOptions& o) : dev_(dev), o_(o) {}

  Status Run(const std::string& path, FsModelResult* r) {
    auto opened = trace::TraceReader::Open(path);
    if (!opened.ok()) return opened.status();
    trace::MergedReader m(opened->get());
    Event e;
    bool first = true;
    int64_t prev_end = 0;
    while (m.Next(&e)) {
      if (e.call == CallId::initial_state || e.call == CallId::dirents) continue;
      ++r->events;
      int64_t gap = first ? 0 : std::max<int64_t>(0, e.start_ns - prev_end);
      first = false;
      prev_end = e.end_ns;
      Advance(t_ + gap);
      int64_t before = t_;
      bool waited = Apply(e, r);
      int64_t cpu = std::max<int64_t>(0, e.end_ns - e.start_ns);
      if (waited) cpu = std::min<int64_t>(cpu, 20'000);  // the recording's own wait is not CPU
      r->io_wait_ns += t_ - before;
      Advance(t_ + cpu);
      if (t_ - last_commit_ >= o_.commit_interval_ns && !txn_.empty()) Commit(/*wait=*/false);
    }
    if (!m.status().ok()) return m.status();
    r->elapsed_ns = t_;
    r->commits = commits_;
    dev_.Quiesce();
    r->device = dev_.stats();
    return {};
  }

 private:
  // Lets the device run up to time t (background writeback, checkpoints).
  void Advance(int64_t t) {
    while (dev_.NextEventNs() <= t) {
      dev_.Step();
      Completion c;
      while (dev_.PopCompletion(&c)) pending_.erase(c.tag);
    }
    t_ = std::max(t_, t);
  }
  // The program waits for these requests.
  void Wait(const std::vector<uint64_t>& tags) {
    for (;;) {
      bool all = true;
      for (uint64_t tag : tags)
        if (pending_.count(tag)) all = false;
      if (all || dev_.NextEventNs() == kNever) break;
      int64_t next = dev_.NextEventNs();
      Advance(next);
    }
  }
  uint64_t Submit(BlockOp op, uint64_t sector, uint64_t bytes, uint8_t flags, BlockKind kind) {
    BlockRequest q;
    q.time_ns = std::max(t_, dev_.now_ns());
    q.sector = sector;
    q.bytes = bytes;
    q.op = op;
    q.flags = flags;
    q.kind = kind;
    uint64_t tag = ++tag_;
    pending_.insert(tag);
    dev_.Submit(q, tag);
    return tag;
  }
  void SubmitRange(BlockOp op, uint64_t sector, uint64_t bytes, uint8_t flags, BlockKind kind,
                   std::vector<uint64_t>* tags) {
    for (uint64_t off = 0; off < bytes; off += kMaxRequest) {
      uint64_t n = std::min(kMaxRequest, bytes - off);
      uint64_t tag = Submit(op, sector + off / kSectorBytes, n, flags, kind);
      if (tags) tags->push_back(tag);
    }
  }

  File& F(const std::string& name) {
    auto it = files_.find(name);
    if (it != files_.end()) return it->second;
    File& f = files_[name];
    f.inode_block = next_inode_++ / 16;  // 16 inodes of 256 bytes per block
    return f;
  }
  void Place(File& f, uint64_t bytes) {
    if (f.placed) return;
    f.placed = true;
    // Delayed allocation, as ext4 does: a file gets its blocks when first written back (or
    // read), contiguous and right after the previous file's, sized to what it holds then.
    f.sector = next_data_;
    uint64_t room = std::max<uint64_t>(kBlock, (bytes + kBlock - 1) / kBlock * kBlock);
    next_data_ += room / kSectorBytes;
  }
  void DirtyMeta(uint64_t block) { txn_.insert(block); }
  uint64_t DirBlock(const std::string& path) {
    std::string dir = path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
    auto it = dir_blocks_.find(dir);
    if (it != dir_blocks_.end()) return it->second;
    uint64_t b = next_dir_block_++;
    dir_blocks_[dir] = b;
    return b;
  }

  // Writes a file's dirty data. Returns the tags.
  void WriteBack(File& f, std::vector<uint64_t>* tags) {
    if (f.dirty_to <= f.dirty_from) return;
    Place(f, f.dirty_to);
    uint64_t from = f.dirty_from / kBlock * kBlock;
    uint64_t to = (f.dirty_to + kBlock - 1) / kBlock * kBlock;
    SubmitRange(BlockOp::kWrite, f.sector + from / kSectorBytes, to - from, 0, BlockKind::kData,
                tags);
    dirty_bytes_ -= std::min(dirty_bytes_, f.dirty_to - f.dirty_from);
    f.dirty_from = UINT64_MAX;
    f.dirty_to = 0;
  }
  void WriteBackAll(std::vector<uint64_t>* tags) {
    for (auto& [name, f] : files_) WriteBack(f, tags);
  }

  // jbd2 commit: ordered data first, then descriptor + metadata blocks, then the commit block
  // with PREFLUSH|FUA; the metadata goes home (checkpoint) in the background afterwards.
  void Commit(bool wait) {
    std::vector<uint64_t> data, journal;
    WriteBackAll(&data);
    if (wait) Wait(data);
    uint64_t blocks = 1 + txn_.size();
    uint64_t head = journal_head_;
    for (uint64_t i = 0; i < blocks;) {
      uint64_t run = std::min(blocks - i, kJournalBlocks - (head % kJournalBlocks));
      SubmitRange(BlockOp::kWrite, kJournalStart + (head % kJournalBlocks) * kSectorsPerBlock,
                  run * kBlock, kSync | kMeta, BlockKind::kJournal, &journal);
      head += run;
      i += run;
    }
    if (wait) Wait(journal);
    journal.push_back(Submit(BlockOp::kWrite, kJournalStart + (head % kJournalBlocks) * kSectorsPerBlock,
                             kBlock, kPreflush | kFua | kSync | kMeta, BlockKind::kJournal));
    journal_head_ = head + 1;
    if (wait) Wait(journal);
    for (uint64_t b : txn_)
      Submit(BlockOp::kWrite, kMetaStart + b * kSectorsPerBlock, kBlock, kMeta, BlockKind::kMetadata);
    txn_.clear();
    ++commits_;
    last_commit_ = t_;
  }

  std::string PathOf(const Event& e, int idx) {
    return e.args[idx].null ? std::string() : std::string(e.args[idx].s);
  }

  // Applies one call; true when the program waited for the device.
  bool Apply(const Event& e, FsModelResult* r) {
    const trace::CallSpec& spec = e.spec();
    bool ok = !e.failed();
    auto fdkey = [&](int64_t fd) { return (static_cast<uint64_t>(e.pid) << 32) | static_cast<uint32_t>(fd); };
    switch (e.call) {
      case CallId::open:
      case CallId::openat:
      case CallId::creat: {
        if (!ok) return false;
        int idx = e.call == CallId::openat ? 1 : 0;
        std::string name = PathOf(e, idx);
        int64_t flags = e.call == CallId::creat ? (O_CREAT | O_TRUNC) : e.args[idx + 1].i;
        fds_[fdkey(e.ret)] = {name, (flags & (O_SYNC | O_DSYNC)) != 0};
        File& f = F(name);
        if (flags & (O_CREAT | O_TRUNC)) {
          DirtyMeta(f.inode_block);
          if (flags & O_CREAT) DirtyMeta(DirBlock(name));
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
        auto it = fds_.find(fdkey(e.args[0].i));
        if (!ok || e.ret <= 0 || it == fds_.end()) return false;
        File& f = F(it->second.name);
        bool positional = e.call == CallId::pwrite64 || e.call == CallId::pwritev || e.call == CallId::pwritev2;
        uint64_t off = positional ? static_cast<uint64_t>(e.args[3].i) : f.size;  // appends
        uint64_t end = off + static_cast<uint64_t>(e.ret);
        f.dirty_from = std::min(f.dirty_from, off);
        f.dirty_to = std::max(f.dirty_to, end);
        f.size = std::max(f.size, end);
        f.cached_to = std::max(f.cached_to, end);
        dirty_bytes_ += static_cast<uint64_t>(e.ret);
        DirtyMeta(f.inode_block);  // size and mtime
        bool sync = it->second.sync || (e.call == CallId::pwritev2 && (e.args[4].i & 0x2 /*RWF_DSYNC*/));
        if (sync) return Fsync(f);
        return Throttle();
      }
      case CallId::read:
      case CallId::pread64:
      case CallId::readv:
      case CallId::preadv:
      case CallId::preadv2: {
        auto it = fds_.find(fdkey(e.args[0].i));
        if (!ok || e.ret <= 0 || it == fds_.end()) return false;
        File& f = F(it->second.name);
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
        auto it = fds_.find(fdkey(e.args[0].i));
        if (it == fds_.end()) return false;
        return Fsync(F(it->second.name));
      }
      case CallId::sync:
      case CallId::syncfs: {
        Commit(/*wait=*/true);
        return true;
      }
      case CallId::ftruncate:
      case CallId::fallocate: {
        auto it = fds_.find(fdkey(e.args[0].i));
        if (it != fds_.end()) DirtyMeta(F(it->second.name).inode_block);
        return false;
      }
      default:
        break;
    }
    if (!ok) return false;
    switch (spec.effect) {
      case Effect::kCreate:
      case Effect::kRemove:
      case Effect::kRename:
      case Effect::kSetAttr:
        for (int i = 0; i < spec.nargs; ++i)
          if (spec.args[i].kind == trace::ArgKind::kPath && !e.args[i].null) {
            std::string name(e.args[i].s);
            DirtyMeta(F(name).inode_block);
            if (spec.effect != Effect::kSetAttr) DirtyMeta(DirBlock(name));
          }
        return false;
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
        return false;  // no I/O in this model (metadata reads are assumed cached)
      default:
        ++r->not_modelled[std::string(spec.name)];
        return false;
    }
  }

  bool Fsync(File& f) {
    std::vector<uint64_t> tags;
    WriteBack(f, &tags);
    Wait(tags);
    Commit(/*wait=*/true);
    return true;
  }

  // Page-cache limits: background writeback past the background ratio, a wait past the ratio.
  bool Throttle() {
    double mem = static_cast<double>(o_.mem_bytes);
    if (static_cast<double>(dirty_bytes_) > mem * o_.dirty_ratio / 100) {
      std::vector<uint64_t> tags;
      WriteBackAll(&tags);
      Wait(tags);
      return true;
    }
    if (static_cast<double>(dirty_bytes_) > mem * o_.dirty_background_ratio / 100)
      WriteBackAll(nullptr);
    return false;
  }

  struct OpenFile {
    std::string name;
    bool sync = false;
  };
  DeviceModel& dev_;
  FsModelOptions o_;
  int64_t t_ = 0;
  int64_t last_commit_ = 0;
  uint64_t tag_ = 0;
  uint64_t commits_ = 0;
  std::unordered_set<uint64_t> pending_;
  std::unordered_map<std::string, File> files_;
  std::unordered_map<uint64_t, OpenFile> fds_;
  std::unordered_map<std::string, uint64_t> dir_blocks_;
  std::unordered_set<uint64_t> txn_;
  uint64_t next_inode_ = 0, next_dir_block_ = 1 << 18, next_data_ = kDataStart;
  uint64_t journal_head_ = 0;
  uint64_t dirty_bytes_ = 0;
};

}  // namespace

Result<FsModelResult> RunExt4(const std::string& trace_path, DeviceModel& device,
                              const FsModelOptions& options) {
  FsModelResult r;
  Ext4 fs(device, options);
  if (Status s = fs.Run(trace_path, &r); !s.ok()) return s;
  return r;
}

}  // namespace iorr::model
