// xfs, as a model (model/fs_model.h), in two generations:
//
// `xfs` (delayed logging, every kernel since 2.6.39): a transaction relogs its items into the
// committed item list (CIL) in memory; an item logged again before the next checkpoint costs
// nothing more. A checkpoint (CIL push) formats the CIL into 32 KiB in-core log buffers
// (iclogs) written to the log: the first with PREFLUSH, the last (commit record) with
// PREFLUSH|FUA; one iclog gets both. A push happens on fsync of a file with logged changes (log
// force; fdatasync skips timestamp-only changes), on sync, when the CIL passes an eighth of the
// log (a background push: its commit iclog stays active and the next checkpoint starts in it,
// so it sends no flush of its own), and every 30 s (log worker). fsync that needs no log force
// sends a lone flush (xfs_file_fsync, single device). xfsaild pushing items still pinned by
// the CIL forces the log, twice per push (see RequestAilPush), as block traces of real runs
// show (xfs_log_force from xfsaild, then a fresh iclog with PREFLUSH).
//
// What a checkpoint logs of a buffer is every 128-byte chunk dirtied since the buffer was last
// written home, not only since the last checkpoint: the dirty bitmap of its log item is cleared
// when the buffer is written. So a directory block relogged by create after create, with
// nothing written home in between, logs more at each fsync, up to the whole block.
//
// `xfs-legacy` (before delayed logging): every transaction copies its items in full into the
// current iclog at commit; an iclog is written when full, on a log force and by the 30 s worker,
// and with barriers every iclog write is PREFLUSH|FUA (XBF_ORDERED). Unvalidated: today's
// kernels cannot run it.
//
// Both: data allocated at writeback (delayed allocation), allocation logging the inode and the
// free-space btrees; logged metadata goes home (AIL push) every 30 s and when three quarters of
// the log is in use, never on sync. Sizes follow the log formats (xfs_log_format.h): op headers,
// inode log format and core, buffer log format and dirty chunks, directory entries by name
// length in short-form, block and leaf directories.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/fs/models.h"

namespace iorr::model::fs {
namespace {

constexpr uint64_t kIclogBytes = 32 << 10;
constexpr uint64_t kIclogHeader = 512;       // xlog_rec_header, one sector per 32 KiB iclog
constexpr uint64_t kLogBytes = 64ull << 20;  // internal log
constexpr uint64_t kCilLimit = kLogBytes / 8;
constexpr uint64_t kTransOverhead = 64;  // legacy: per-transaction headers
constexpr int64_t kLogWorkerNs = 30'000'000'000;
constexpr int64_t kAilPassNs = 50'000'000;  // xfsaild's back-off after a pass that met pinned items
// What the log formats cost (xfs_log_format.h, v5 file system, 512-byte inodes):
// every region is an op with a 12-byte header; a checkpoint adds a start record, a
// transaction header and a commit record.
constexpr uint64_t kOpHeader = 12;
constexpr uint64_t kCheckpointOverhead = 3 * kOpHeader + 16;
// An inode: its xfs_inode_log_format and its core (xfs_log_dinode), then its data fork:
// extents of 16 bytes, or a short-form directory in the inode's literal area.
constexpr uint64_t kInodeLog = kOpHeader + 56 + kOpHeader + 176 + kOpHeader;
constexpr uint64_t kLiteralArea = 512 - 176;
// A buffer: its xfs_buf_log_format, then its dirty 128-byte chunks, each contiguous run an op.
constexpr uint64_t kBufFormat = kOpHeader + 24;
constexpr uint64_t kChunk = 128;
constexpr uint64_t Chunks(uint64_t bytes) { return (bytes + kChunk - 1) / kChunk * kChunk; }
// An AG header (AGF, AGI) or a btree block changes in its header chunk and the chunk of the
// record (the model allocates in order, so the same record); the AGI's unlinked-list buckets
// are a second chunk.
constexpr uint64_t kHeaderChunks = 1, kBtreeChunks = 1;
// Directories (xfs_dir2): a short-form entry is 8 bytes and the name; a data entry 12 and the
// name, rounded to 8; a hash leaf entry 8. A block-form directory is one block (data header,
// entries, leaf entries, tail); past it, data blocks and a hash leaf block of its own.
constexpr uint64_t kDirHeader = 64;
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
    t.Inode(f, ForkBytes(f));
    if (dir) {
      DirEntry(t, dir);
      // Inode allocation or the unlinked list: the AGI, the inode btree and the free inode btree.
      t.Buf(kAgiBlock, kHeaderChunks * kChunk, 0, kSectorBytes);
      t.Buf(kBtreeBase, kBtreeChunks * kChunk, 0, kBlock);
      t.Buf(kBtreeBase + 3, kBtreeChunks * kChunk, 0, kBlock);
    }
    Commit(t, f, /*data_change=*/true);
  }
  void Written(File& f, bool grew) override {
    Trans t;
    t.Inode(f, ForkBytes(f));
    Commit(t, f, /*data_change=*/grew);
  }
  void Allocated(File& f) override {
    Trans t;
    t.Inode(f, ForkBytes(f));
    t.Buf(kAgfBlock, kHeaderChunks * kChunk, 0, kSectorBytes);
    t.Buf(kBtreeBase + 1, kBtreeChunks * kChunk, 0, kBlock);  // bnobt
    t.Buf(kBtreeBase + 2, kBtreeChunks * kChunk, 0, kBlock);  // cntbt
    Commit(t, f, true);
  }
  // Reflink (mkfs.xfs's default since xfsprogs 5.1; not the legacy generation's v4 format):
  // copy_file_range remaps the source's extents into the destination, logging both inodes (the
  // destination's new extent; the reflink flag both get) and the reference-count btree's
  // record, and allocating nothing.
  bool SharesExtents() const override { return !legacy_; }
  void Cloned(File& f, File* from) override {
    Trans t;
    t.Inode(f, 16);
    if (from) t.Inode(*from, ForkBytes(*from));
    t.Buf(kBtreeBase + 3, kBtreeChunks * kChunk, 0, kBlock);  // refcountbt
    Commit(t, f, true);
  }
  // A freed directory's buffers are cancelled: not logged, not written home.
  void DirRemoved(MetaBlock own) override {
    if (own == 0) return;
    for (uint64_t id : {own, own + kLeafOffset, own + 2 * kLeafOffset}) {
      auto it = items_.find(id);
      if (it == items_.end()) continue;
      if (cil_.erase(id)) cil_bytes_ -= std::min(cil_bytes_, it->second.Logged());
      ail_.erase(id);
      items_.erase(it);
    }
  }
  void Freed(File& f, MetaBlock dir) override {
    if (dir) {  // unlink puts the inode on the AGI's unlinked list (a bucket in another chunk)
      Trans t;
      t.Buf(kAgiBlock, 0, kChunk, kSectorBytes);
      Commit(t, f, true);
    }
    MetadataChanged(f, dir);
    if (f.placed) Allocated(f);  // the extent goes back to the free-space btrees
    // The inode is freed; when all of its cluster is, the cluster is freed with it and its
    // buffer goes stale (xfs_ifree_cluster): logged, never written home.
    if (++freed_[f.inode_block] < kInodesPerCluster) return;
    freed_.erase(f.inode_block);
    uint64_t first = f.ino / kInodesPerCluster * kInodesPerCluster;
    for (uint64_t ino = first; ino < first + kInodesPerCluster; ++ino) {
      auto it = items_.find(kInodeIds + ino);
      if (it == items_.end()) continue;
      if (cil_.count(it->first)) {
        it->second.home_bytes = 0;
      } else {
        ail_.erase(it->first);
        items_.erase(it);
      }
    }
  }
  void Fsync(File& f, bool datasync) override {
    std::vector<uint64_t> tags;
    ChargeWriteBack(f);
    WriteBack(f, &tags);
    Wait(tags);
    const uint64_t seq = datasync ? f.data_seq : f.seq;
    if (seq >= seq_ && ForceLog(/*wait=*/true)) return;
    // Checkpointed by a background push whose commit record still waits in the active iclog:
    // the force writes that iclog (xlog_force_lsn).
    if (!legacy_ && seq >= open_seq_ && WriteActiveIclog(/*wait=*/true)) return;
    // xfs_dir_fsync: nothing more when no log force was needed.
    if (f.is_dir) return;
    Wait({Submit(BlockOp::kWrite, 0, 0, kPreflush, BlockKind::kJournal)});
  }
  void SyncAll() override {
    std::vector<uint64_t> tags;
    WriteBackAll(&tags, /*waited=*/true);
    Wait(tags);
    ForceLog(/*wait=*/true);
  }
  void Tick() override {
    if (ail_push_ && !push_awaits_commit_ && now() >= ail_pass_ns_ &&
        (push_tag_ == 0 || Done(push_tag_)))
      AilPass();
    if (now() < next_worker_ns_) return;
    next_worker_ns_ = now() + kLogWorkerNs;
    ForceLog(/*wait=*/false);  // xfs_log_worker: a log force
    PushAil();
  }

 private:
  // A log item, from when it is first logged until it is written home: a buffer logs every
  // 128-byte chunk dirtied since it was last written home (its dirty bitmap is cleared only
  // when the buffer is written), however many checkpoints ago; an inode logs its core and fork.
  struct Item {
    uint64_t dirty = 0;  // buffers: dirty bytes (a multiple of kChunk); inodes: log size
    bool buffer = false;
    uint64_t home_block = 0;  // where it lives: a buffer's block, an inode's cluster
    uint64_t home_bytes = 0;  // what goes home: the buffer, the inode cluster buffer
    // What a checkpoint logs of it: a buffer's format and its dirty chunks, as two runs (the
    // header's and the changed records').
    uint64_t Logged() const {
      return buffer ? kBufFormat + std::min(home_bytes, Chunks(dirty)) + 2 * kOpHeader : dirty;
    }
  };
  // Items are named by id: a buffer by its block, an inode (logged on its own, not with its
  // cluster) by kInodeIds + its number.
  static constexpr uint64_t kInodeIds = 1ull << 62;
  // Inodes per cluster buffer (FsBase: 16 to an inode block; 2 * kBlock of 512-byte inodes).
  static constexpr uint64_t kInodesPerCluster = 16;
  struct Change {
    uint64_t id;
    Item item;
    uint64_t grow;  // buffers: bytes this change dirties beyond what was dirty already
  };
  struct Trans {
    std::vector<Change> changes;
    void Inode(const File& f, uint64_t fork) {
      changes.push_back(
          {kInodeIds + f.ino, {kInodeLog + fork, false, f.inode_block, 2 * kBlock}, 0});
    }
    // A buffer change: `fixed` bytes that the same change always dirties (a header, a record
    // the model rewrites in place), `grow` bytes that each change dirties afresh (directory
    // entries appended). Home: the buffer at `block` (`home` bytes) unless `at` names another.
    void Buf(uint64_t block, uint64_t fixed, uint64_t grow, uint64_t home, uint64_t at = 0) {
      changes.push_back({block, {fixed, true, at ? at : block, home}, grow});
    }
  };

  static uint64_t ForkBytes(const File& f) { return f.placed ? 16 : 0; }

  // A directory entry added or removed in `dir`, by the directory's format after the change.
  void DirEntry(Trans& t, MetaBlock dir) {
    const File* d = DirFile(dir);
    uint64_t name = entry_name_bytes();
    uint64_t n = DirEntries(dir);
    uint64_t sf = 6 + n * (8 + name), ent = (12 + name + 7) / 8 * 8;
    if (sf <= kLiteralArea) {  // short form: in the directory inode, logged with it
      if (d) t.Inode(*d, sf);
      return;
    }
    if (d) t.Inode(*d, 16);  // its extent
    bool was_sf = 6 + (n - 1) * (8 + name) <= kLiteralArea;
    uint64_t block_form = kDirHeader + n * (ent + 8) + 8;
    if (block_form <= kBlock) {
      // One block: the data header's chunk and the entries appended since it was written home
      // (all of them when it was just made from the short form), and the hash leaf at the
      // block's end, whose sorted entries shift on insert (the whole leaf, soon).
      t.Buf(dir, kChunk + (was_sf ? n * ent : 0), ent, kBlock);
      t.Buf(dir + 2 * kLeafOffset, Chunks(n * 8 + 8), 0, kBlock, dir);
      return;
    }
    // Leaf form: a data block (logged in full when it was just made from the block form) and
    // the hash leaf block.
    bool was_block = kDirHeader + (n - 1) * (ent + 8) + 8 <= kBlock;
    t.Buf(dir, was_block ? kBlock : kChunk, ent, kBlock);
    t.Buf(dir + kLeafOffset, std::min(kBlock, Chunks(kDirHeader + n * 8)), 0, kBlock);
  }

  void Commit(const Trans& t, File& f, bool data_change) {
    f.seq = seq_;
    if (data_change) f.data_seq = seq_;
    uint64_t logged = 0;
    for (const Change& c : t.changes) {
      auto [it, fresh] = items_.try_emplace(c.id, c.item);
      Item& item = it->second;
      uint64_t before = fresh ? 0 : item.Logged();
      if (!item.buffer)
        item.dirty = c.item.dirty;
      else
        item.dirty =
            std::min(item.home_bytes, std::max(item.dirty, c.item.dirty) + (fresh ? 0 : c.grow));
      logged += item.Logged();
      if (legacy_) {
        ail_.insert(c.id);
      } else if (cil_.insert(c.id).second) {
        cil_bytes_ += item.Logged();
      } else {
        cil_bytes_ += item.Logged() - before;
      }
    }
    if (legacy_) {
      // Every transaction copies its items, all their dirty regions, into the iclogs.
      AppendToIclog(kTransOverhead + logged);
      return;
    }
    if (cil_bytes_ > kCilLimit) ForceLog(/*wait=*/false, /*stable=*/false);
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
    if (push_awaits_commit_) {  // this iclog holds the commit record the AIL push waits for
      push_tag_ = tag;
      push_awaits_commit_ = false;
    }
    // It holds the commit record of the checkpoints formatted since the last iclog write: their
    // items are no longer pinned; those of a push's target logged again since move past it in
    // the AIL (they go home with their new checkpoint), and those a push's own log force wrote
    // are pinned during that pass.
    for (const auto& [id, seq] : uncommitted_)
      if (seq > target_seq_ && target_.erase(id) && forcing_) inflight_ = true;
    uncommitted_.clear();
    if (tags) tags->push_back(tag);
    log_head_ += bytes;
    log_used_ += bytes;
    iclog_fill_ = 0;
    ++result().commits;
    if (log_used_ > kLogBytes * 3 / 4) RequestAilPush(seq_ - 1);  // the AIL: older checkpoints
  }

  // The active iclog holding a background checkpoint's commit record, written (and waited for):
  // false when there is none.
  bool WriteActiveIclog(bool wait) {
    if (iclog_fill_ == 0) return false;
    std::vector<uint64_t> tags;
    WriteIclog(kPreflush | kFua, &tags);
    if (wait) Wait(tags);
    return true;
  }
  // Held in the CIL, or checkpointed with the commit record not yet written: not for xfsaild.
  bool Pinned(uint64_t id) const { return cil_.count(id) || uncommitted_.count(id); }
  // Writes what is logged so far; false when there was nothing to write. stable: a log force
  // (fsync, sync, the log worker, xfsaild), whose commit record goes out at once; a background
  // push (the CIL past its limit) leaves the iclog holding its commit record active, and the
  // next checkpoint starts in it (one iclog then carries that commit's PREFLUSH|FUA and the
  // next start's flush): only a checkpoint that starts in a fresh iclog sends a flush of its own.
  bool ForceLog(bool wait, bool stable = true) {
    std::vector<uint64_t> tags;
    if (legacy_) {
      if (iclog_fill_ == 0) return false;
      WriteIclog(kPreflush | kFua, &tags);
    } else {
      // xlog_cil_flush with an empty CIL: the previous checkpoint's commit iclog, if active.
      if (cil_.empty()) return stable && WriteActiveIclog(wait);
      uint64_t bytes = cil_bytes_ + kCheckpointOverhead;
      // The start: in the active iclog (already flagged PREFLUSH|FUA), or a fresh one.
      uint8_t flags = iclog_fill_ > 0 ? (kPreflush | kFua) : kPreflush;
      while (true) {
        uint64_t n = std::min(bytes, kIclogBytes - kIclogHeader - iclog_fill_);
        iclog_fill_ += n;
        bytes -= n;
        if (bytes == 0) break;
        WriteIclog(flags, &tags);  // full
        flags = 0;
      }
      // The commit record's iclog.
      for (uint64_t id : cil_) uncommitted_[id] = seq_;
      if (stable) {
        WriteIclog(kPreflush | kFua, &tags);
      } else {
        open_seq_ = seq_;
      }
      ail_.insert(cil_.begin(), cil_.end());
      cil_.clear();
      cil_bytes_ = 0;
      if (cold_push_) {
        // The run starts after a cache drop (cold, as `iorr replay` starts by default): xfs
        // reclaiming inodes asked xfsaild to push the whole AIL (xfs_reclaim_inodes_nr ->
        // xfs_ail_push_all). The AIL was empty, so the push waited for the first checkpoint:
        // its items go home once it is written.
        cold_push_ = false;
        RequestAilPush(seq_);  // the target: this checkpoint's items (in ail_ already)
        // xfsaild sees them once the commit record is written: now, or when the active iclog
        // holding it goes out.
        if (stable)
          push_tag_ = tags.back();
        else
          push_awaits_commit_ = true;
      }
    }
    ++seq_;
    if (wait) Wait(tags);
    return true;
  }
  // xfsaild pushes the items the AIL holds now (the target) home. In legacy mode, and from the
  // log worker, at once; otherwise in passes, the first once the awaited commit record is
  // written, then 50 ms apart (its back-off when it met pinned items). A pass writes home the
  // target's items not pinned (in the CIL, or checkpointed with their commit record not yet
  // written); meeting a pinned item makes the next pass start with a log force
  // (xlog_cil_flush: stable, not waited for). Items logged again move past the target when
  // their new commit record is written, but those the pass's own force writes are still
  // pinned during that pass, so a push that meets pinned items forces the log twice.
  void RequestAilPush(uint64_t target_seq) {  // the AIL holds checkpoints up to target_seq
    log_used_ = 0;
    if (legacy_) {
      PushAil();
      return;
    }
    if (ail_push_) return;
    ail_push_ = true;
    flush_next_ = false;
    push_tag_ = 0;
    push_awaits_commit_ = false;
    target_.clear();
    target_.insert(ail_.begin(), ail_.end());
    target_seq_ = target_seq;
    ail_pass_ns_ = now();  // the first pass: after the current call
  }
  void AilPass() {
    inflight_ = false;
    // The force a pass that met pinned items asked for comes first, whatever is left of the
    // target (xfsaild_push: ail_log_flush, then xlog_cil_flush).
    if (flush_next_) {
      flush_next_ = false;
      forcing_ = true;
      ForceLog(/*wait=*/false);
      forcing_ = false;
    }
    if (target_.empty() && !inflight_) {  // all home (or moved past the target)
      ail_push_ = false;
      return;
    }
    bool pinned = inflight_;
    std::map<uint64_t, uint64_t> home;  // block -> bytes
    for (auto it = target_.begin(); it != target_.end();) {
      if (Pinned(*it)) {
        pinned = true;
        ++it;
        continue;
      }
      GoHome(*it, home);
      ail_.erase(*it);
      it = target_.erase(it);
    }
    WriteHome(home);
    if (pinned) {
      flush_next_ = true;
      ail_pass_ns_ = now() + kAilPassNs;
    } else {
      ail_push_ = false;
    }
  }
  void GoHome(uint64_t id, std::map<uint64_t, uint64_t>& home) {
    auto item = items_.find(id);
    if (item == items_.end()) return;
    if (item->second.home_bytes > 0) {  // not stale
      uint64_t& bytes = home[item->second.home_block];
      bytes = std::max(bytes, item->second.home_bytes);
    }
    items_.erase(item);
  }
  void WriteHome(const std::map<uint64_t, uint64_t>& home) {
    for (const auto& [block, bytes] : home)
      Submit(BlockOp::kWrite, block * kSectorsPerBlock, bytes, 0, BlockKind::kMetadata);
  }
  // Logged metadata goes home at once, in block order: the items of the AIL that are not
  // pinned by the CIL (relogged since); each home buffer once. An item written home is clean.
  void PushAil() {
    std::map<uint64_t, uint64_t> home;
    for (auto it = ail_.begin(); it != ail_.end();) {
      if (Pinned(*it)) {
        ++it;
        continue;
      }
      target_.erase(*it);
      GoHome(*it, home);
      it = ail_.erase(it);
    }
    WriteHome(home);
    log_used_ = 0;
  }
  bool legacy_;
  bool cold_push_ = true;
  // An xfsaild push in progress: its target (item ids), when its next pass runs, whether that
  // pass starts with a log force, and whether the force of the current pass wrote target items.
  bool ail_push_ = false, flush_next_ = false, forcing_ = false, inflight_ = false;
  std::unordered_set<uint64_t> target_;
  // Checkpointed, the commit record not yet written: id -> checkpoint sequence.
  std::unordered_map<uint64_t, uint64_t> uncommitted_;
  uint64_t target_seq_ = 0;  // the target holds items of checkpoints up to this one
  int64_t ail_pass_ns_ = 0;
  uint64_t push_tag_ = 0;            // the first pass waits for this request (0: none)
  bool push_awaits_commit_ = false;  // ... which is the next iclog written
  uint64_t seq_ = 1;                 // the current checkpoint (or, legacy, log force) sequence
  uint64_t open_seq_ = 0;            // the checkpoint whose commit record is in the active iclog
  std::unordered_map<uint64_t, Item> items_;      // logged and not yet written home, by id
  std::unordered_set<uint64_t> cil_, ail_;        // ids in the CIL, ids in the AIL
  std::unordered_map<uint64_t, uint64_t> freed_;  // inode cluster -> its inodes freed
  uint64_t cil_bytes_ = 0;
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
