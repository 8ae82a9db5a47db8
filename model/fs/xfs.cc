// xfs, as a model (model/fs_model.h), in two generations:
//
// `xfs` (delayed logging, every kernel since 2.6.39): a transaction relogs its items into the
// committed item list (CIL) in memory; an item logged again before the next checkpoint costs
// nothing more, except directory buffers, whose dirty 128-byte regions add up. A checkpoint
// (CIL push) formats the CIL into 32 KiB in-core log buffers (iclogs) written to the log: the
// first with PREFLUSH, the last (commit record) with PREFLUSH|FUA; one iclog gets both. A push
// happens on fsync of a file with logged changes (log force; fdatasync skips timestamp-only
// changes), on sync, when the CIL passes an eighth of the log, and every 30 s (log worker).
// fsync that needs no log force sends a lone flush (xfs_file_fsync, single device).
//
// `xfs-legacy` (before delayed logging): every transaction copies its items in full into the
// current iclog at commit; an iclog is written when full, on a log force and by the 30 s worker,
// and with barriers every iclog write is PREFLUSH|FUA (XBF_ORDERED). Unvalidated: today's
// kernels cannot run it.
//
// Both: data allocated at writeback (delayed allocation), allocation logging the inode and the
// free-space btrees; logged metadata goes home (AIL push) every 30 s and when three quarters of
// the log is in use, never on sync. Sizes are estimates from the log formats (inode core and
// log format about 600 bytes, AG headers 256, btree and directory regions 512 per change).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include "model/fs/models.h"

namespace iorr::model::fs {
namespace {

constexpr uint64_t kIclogBytes = 32 << 10;
constexpr uint64_t kIclogHeader = 512;
constexpr uint64_t kLogBytes = 64ull << 20;  // internal log
constexpr uint64_t kCilLimit = kLogBytes / 8;
constexpr uint64_t kCheckpointOverhead = 400;  // start record, transaction header, commit record
constexpr uint64_t kTransOverhead = 64;        // legacy: per-transaction headers
constexpr int64_t kLogWorkerNs = 30'000'000'000;
// Logged bytes per item, formats and op headers included: an inode core with its extents, the
// dirty 128-byte regions of an AG header or btree block. Checked against the log writes of real
// xfs (6.x, v5, 512-byte inodes): create + write + fsync in a small directory writes one iclog
// of 2.5 to 3.5 KiB, in a directory of 250 entries about 6 KiB (its hash leaf shifts).
constexpr uint64_t kInodeLog = 300, kHeaderLog = 160, kRegionLog = 300;
constexpr uint64_t kShortformEntries = 12;    // entries that fit in a 512-byte inode's literal area
constexpr uint64_t kBlockFormEntries = 120;   // entries of a single-block directory
constexpr uint64_t kLeafOffset = 1ull << 22;  // a directory block -> its hash leaf block
constexpr uint64_t kAgfBlock = kMetaStart / kSectorsPerBlock - 1;  // AGF, AGI sectors
constexpr uint64_t kAgiBlock = kMetaStart / kSectorsPerBlock - 2;
constexpr uint64_t kBtreeBase = kMetaStart / kSectorsPerBlock + (1ull << 20);

class Xfs : public FsBase {
 public:
  Xfs(DeviceModel& dev, const FsModelOptions& o, bool legacy) : FsBase(dev, o), legacy_(legacy) {}

 protected:
  void MetadataChanged(File& f, MetaBlock dir) override {
    Trans t;
    t.Inode(f);
    if (dir) {
      // The entry: in the directory inode while it is short, then in a directory block, then
      // also in a hash leaf whose sorted entries shift on insert (about half of them logged).
      uint64_t n = DirEntries(dir);
      if (n > kShortformEntries) t.Buf(dir, kRegionLog, kBlock);
      if (n > kBlockFormEntries)
        t.Buf(dir + kLeafOffset, std::min<uint64_t>(kBlock, 12 * n), kBlock);
      if (const File* d = DirFile(dir)) t.Inode(*d);  // the directory's inode
      t.Buf(kAgiBlock, kHeaderLog, kSectorBytes);     // inode allocation or unlinked list
      t.Buf(kBtreeBase, kRegionLog, kBlock);          // inobt / finobt
    }
    Commit(t, f, /*data_change=*/true);
  }
  void Written(File& f, bool grew) override {
    Trans t;
    t.Inode(f);
    Commit(t, f, /*data_change=*/grew);
  }
  void Allocated(File& f) override {
    Trans t;
    t.Inode(f);
    t.Buf(kAgfBlock, kHeaderLog, kSectorBytes);
    t.Buf(kBtreeBase + 1, kRegionLog, kBlock);  // bnobt
    t.Buf(kBtreeBase + 2, kRegionLog, kBlock);  // cntbt
    Commit(t, f, true);
  }
  // A freed directory's buffers are cancelled: not logged in full, not written home.
  void DirRemoved(MetaBlock own) override {
    if (own == 0) return;
    for (uint64_t id : {own, own + kLeafOffset}) {
      auto it = cil_.find(id);
      if (it != cil_.end()) {
        cil_bytes_ -= std::min(cil_bytes_, it->second.log_bytes);
        cil_.erase(it);
      }
      ail_.erase(id);
    }
  }
  void Freed(File& f, MetaBlock dir) override {
    MetadataChanged(f, dir);
    if (f.placed) Allocated(f);  // the extent goes back to the free-space btrees
  }
  void Fsync(File& f, bool datasync) override {
    std::vector<uint64_t> tags;
    WriteBack(f, &tags);
    Wait(tags);
    bool force = (datasync ? f.data_seq : f.seq) >= seq_;
    if (f.is_dir) {
      // xfs_dir_fsync: a log force if the directory has unforced changes, else nothing.
      if (force) ForceLog(/*wait=*/true);
      return;
    }
    if (force && ForceLog(/*wait=*/true)) return;
    Wait({Submit(BlockOp::kWrite, 0, 0, kPreflush, BlockKind::kJournal)});
  }
  void SyncAll() override {
    std::vector<uint64_t> tags;
    WriteBackAll(&tags);
    Wait(tags);
    ForceLog(/*wait=*/true);
  }
  void Tick() override {
    if (now() < next_worker_ns_) return;
    next_worker_ns_ = now() + kLogWorkerNs;
    ForceLog(/*wait=*/false);
    PushAil();
  }

 private:
  struct Item {
    uint64_t log_bytes = 0;   // what the next checkpoint logs of it
    uint64_t home_block = 0;  // where it lives: a buffer's block, an inode's cluster
    uint64_t home_bytes = 0;  // what goes home: the buffer, the inode cluster buffer
  };
  // Items are named by id: a buffer by its block, an inode (logged on its own, not with its
  // cluster) by kInodeIds + its number.
  static constexpr uint64_t kInodeIds = 1ull << 62;
  struct Trans {
    std::vector<std::pair<uint64_t, Item>> items;
    void Inode(const File& f) {
      items.push_back({kInodeIds + f.ino, {kInodeLog, f.inode_block, 2 * kBlock}});
    }
    void Buf(uint64_t block, uint64_t log, uint64_t home) {
      items.push_back({block, {log, block, home}});
    }
  };

  void Commit(const Trans& t, File& f, bool data_change) {
    f.seq = seq_;
    if (data_change) f.data_seq = seq_;
    if (legacy_) {
      uint64_t bytes = kTransOverhead;
      for (const auto& [id, item] : t.items) {
        bytes += item.log_bytes;
        ail_.try_emplace(item.home_block, item.home_bytes);
      }
      AppendToIclog(bytes);
      return;
    }
    for (const auto& [id, item] : t.items) {
      auto [it, fresh] = cil_.try_emplace(id, item);
      if (fresh) {
        cil_bytes_ += item.log_bytes;
      } else if (item.home_bytes == kBlock && it->second.log_bytes < item.home_bytes) {
        // More dirty regions of the same buffer, up to all of it.
        uint64_t more = std::min(item.log_bytes, item.home_bytes - it->second.log_bytes);
        it->second.log_bytes += more;
        cil_bytes_ += more;
      }
    }
    if (cil_bytes_ > kCilLimit) ForceLog(/*wait=*/false);
  }

  // Legacy: fills iclogs, writing each one as it fills.
  void AppendToIclog(uint64_t bytes) {
    while (bytes > 0) {
      uint64_t room = kIclogBytes - kIclogHeader - iclog_fill_;
      uint64_t n = std::min(room, bytes);
      iclog_fill_ += n;
      bytes -= n;
      if (iclog_fill_ == kIclogBytes - kIclogHeader) WriteIclog(kPreflush | kFua, nullptr);
    }
  }

  void WriteIclog(uint8_t flags, std::vector<uint64_t>* tags) {
    // Rounded to the log's sector (512 bytes; a log stripe unit would round further).
    uint64_t bytes = (iclog_fill_ + kIclogHeader + kSectorBytes - 1) / kSectorBytes * kSectorBytes;
    uint64_t pos = log_head_ % kLogBytes;
    if (pos + bytes > kLogBytes) {  // the log wraps
      log_head_ += kLogBytes - pos;
      pos = 0;
    }
    uint64_t tag = Submit(BlockOp::kWrite, kLogStart + pos / kSectorBytes, bytes,
                          static_cast<uint8_t>(flags | kSync | kMeta), BlockKind::kJournal);
    if (tags) tags->push_back(tag);
    log_head_ += bytes;
    log_used_ += bytes;
    iclog_fill_ = 0;
    ++result().commits;
    if (log_used_ > kLogBytes * 3 / 4) PushAil();
  }

  // Writes what is logged so far; false when there was nothing to write.
  bool ForceLog(bool wait) {
    std::vector<uint64_t> tags;
    if (legacy_) {
      if (iclog_fill_ == 0) return false;
      WriteIclog(kPreflush | kFua, &tags);
    } else {
      if (cil_.empty()) return false;
      uint64_t bytes = cil_bytes_ + kCheckpointOverhead;
      bool first = true;
      while (bytes > 0) {
        uint64_t n = std::min(bytes, kIclogBytes - kIclogHeader);
        iclog_fill_ = n;
        bytes -= n;
        uint8_t flags = bytes == 0 ? (kPreflush | kFua) : (first ? kPreflush : 0);
        WriteIclog(flags, &tags);
        first = false;
      }
      for (const auto& [id, item] : cil_) ail_.try_emplace(item.home_block, item.home_bytes);
      cil_.clear();
      cil_bytes_ = 0;
    }
    ++seq_;
    if (wait) Wait(tags);
    return true;
  }

  // Logged metadata goes home, in block order.
  void PushAil() {
    for (const auto& [id, home] : ail_)
      Submit(BlockOp::kWrite, id * kSectorsPerBlock, home, 0, BlockKind::kMetadata);
    ail_.clear();
    log_used_ = 0;
  }

  bool legacy_;
  uint64_t seq_ = 1;  // the current checkpoint (or, legacy, log force) sequence
  std::unordered_map<uint64_t, Item> cil_;
  uint64_t cil_bytes_ = 0;
  std::map<uint64_t, uint64_t> ail_;  // block -> bytes to write home
  uint64_t iclog_fill_ = 0;
  uint64_t log_head_ = 0, log_used_ = 0;
  int64_t next_worker_ns_ = kLogWorkerNs;
};

}  // namespace

std::unique_ptr<FsBase> MakeXfs(DeviceModel& dev, const FsModelOptions& o) {
  return std::make_unique<Xfs>(dev, o, /*legacy=*/false);
}

std::unique_ptr<FsBase> MakeXfsLegacy(DeviceModel& dev, const FsModelOptions& o) {
  return std::make_unique<Xfs>(dev, o, /*legacy=*/true);
}

}  // namespace iorr::model::fs
