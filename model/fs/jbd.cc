// See jbd.h.
#include "model/fs/jbd.h"

#include <algorithm>

namespace iorr::model::fs {
namespace {

constexpr uint64_t kTagsPerDescriptor = 250;
constexpr MetaBlock kGroupDescriptors = kMetaStart / kSectorsPerBlock - 1;
constexpr MetaBlock kInodeBitmap = kMetaStart / kSectorsPerBlock - 2;

}  // namespace

Jbd::Jbd(DeviceModel& dev, const FsModelOptions& o, bool delalloc, uint64_t max_txn_divisor)
    : FsBase(dev, o),
      delalloc_(delalloc),
      journal_blocks_(std::max<uint64_t>(1024, o.journal_bytes / kBlock)),
      max_txn_(journal_blocks_ / max_txn_divisor),
      // jbd2_max_user_trans_buffers: less the descriptor blocks a largest transaction needs.
      max_user_txn_(max_txn_ - (max_txn_ + kTagsPerDescriptor - 1) / kTagsPerDescriptor) {}

// The journal's free space as jbd2_log_space_left counts it: blocks past the tail, less 32 for
// rounding (block 0 holds the journal's superblock).
uint64_t Jbd::Free() const {
  uint64_t used = journal_head_ - tail_ + 1 + 32;
  return used >= journal_blocks_ ? 0 : journal_blocks_ - used;
}

void Jbd::Dirty(MetaBlock b) {
  // start_this_handle: a handle waits for a checkpoint when the journal could not take one
  // more largest transaction.
  if (Free() < max_txn_) MakeRoom();
  if (txn_.empty()) txn_start_ns_ = now();
  txn_.insert(b);
  if (txn_.size() >= max_user_txn_) Commit(/*wait=*/false);
}

void Jbd::MetadataChanged(File& f, MetaBlock dir) {
  Dirty(f.inode_block);
  if (dir) {
    // A name added or removed: the directory block, the directory's own inode (size, times)
    // and the inode bitmap with its group descriptor (an inode allocated or freed).
    Dirty(dir);
    if (const File* d = DirFile(dir)) Dirty(d->inode_block);
    Dirty(kInodeBitmap);
    Dirty(kGroupDescriptors);
  }
  f.seq = tid_;
  f.data_seq = tid_;
  if (!delalloc_ && f.is_dirty()) Order(f);
}

// A write: the inode's size or times. fdatasync only commits for a size change (ext4's
// i_datasync_tid), fsync for either.
void Jbd::Written(File& f, bool grew) {
  Dirty(f.inode_block);
  f.seq = tid_;
  if (grew) f.data_seq = tid_;
  if (!delalloc_ && f.is_dirty()) Order(f);
}

void Jbd::Allocated(File& f) {
  Dirty(BlockBitmapOf(f.sector));
  Dirty(kGroupDescriptors);
  Dirty(f.inode_block);  // extent tree or block map in the inode
  f.seq = tid_;
  f.data_seq = tid_;
  if (!delalloc_) Order(f);
}

void Jbd::Freed(File& f, MetaBlock dir) {
  MetadataChanged(f, dir);
  if (f.placed) {
    Dirty(BlockBitmapOf(f.sector));
    Dirty(kGroupDescriptors);
  }
  Unorder(f);
}

// A freed directory block dirtied in the running transaction is not journaled (jbd2 forgets
// it and writes a revoke record instead, not modelled), nor written home.
void Jbd::DirRemoved(MetaBlock own) {
  if (own == 0) return;
  txn_.erase(own);
  if (auto it = home_dirty_.find(own); it != home_dirty_.end()) {
    HomeWritten(it->second.tid);
    home_dirty_.erase(it);
  }
}

void Jbd::Order(File& f) {
  if (ordered_at_.emplace(&f, ordered_.size()).second) ordered_.push_back(&f);
}

void Jbd::Unorder(File& f) { ordered_at_.erase(&f); }

void Jbd::Flush() {
  std::vector<uint64_t> tags{Submit(BlockOp::kWrite, 0, 0, kPreflush, BlockKind::kJournal)};
  Wait(tags);
}

void Jbd::Commit(bool wait) {
  std::vector<uint64_t> data, journal;
  for (size_t i = 0; i < ordered_.size(); ++i) {
    auto it = ordered_at_.find(ordered_[i]);
    if (it != ordered_at_.end() && it->second == i) WriteBack(*ordered_[i], &data);
  }
  ordered_.clear();
  ordered_at_.clear();
  if (wait) Wait(data);
  uint64_t n = txn_.size();
  uint64_t blocks = n + (n + kTagsPerDescriptor - 1) / kTagsPerDescriptor;
  uint64_t head = journal_head_;
  const uint64_t ring = journal_blocks_ - 1;  // block 0 holds the journal's superblock
  for (uint64_t i = 0; i < blocks;) {
    uint64_t pos = head % ring;
    uint64_t run = std::min(blocks - i, ring - pos);
    SubmitRange(BlockOp::kWrite, kLogStart + (1 + pos) * kSectorsPerBlock, run * kBlock, kSync,
                BlockKind::kJournal, &journal);
    head += run;
    i += run;
  }
  // jbd2 waits for the journal blocks before it writes the commit block; a background commit
  // makes nobody wait (the device keeps the order: the commit block's PREFLUSH drains it).
  if (wait) Wait(journal);
  std::vector<uint64_t> commit{Submit(BlockOp::kWrite,
                                      kLogStart + (1 + head % ring) * kSectorsPerBlock, kBlock,
                                      kPreflush | kFua | kSync, BlockKind::kJournal)};
  journal_head_ = head + 1;
  if (wait) Wait(commit);
  logged_.push_back({tid_, journal_head_, txn_.size()});
  for (MetaBlock b : txn_) {
    auto [it, added] = home_dirty_.try_emplace(b, HomeDirty{now(), tid_});
    if (!added) {  // logged again: the older transaction no longer has to write it home
      HomeWritten(it->second.tid);
      it->second = {now(), tid_};
    }
  }
  txn_.clear();
  txn_start_ns_ = -1;
  ++tid_;
  ++result().commits;
  // The commit moves the tail past transactions whose blocks went home meanwhile, when that
  // frees at least a largest transaction (jbd2_journal_commit_transaction's update_tail): the
  // journal superblock, with FUA.
  PopClean();
  if (freed_to_ - tail_ >= max_txn_) MoveTail(freed_to_, /*flush=*/false, wait);
}

// Transactions with all their blocks home free their journal space once the tail moves.
void Jbd::PopClean() {
  while (!logged_.empty() && logged_.front().dirty == 0) {
    freed_to_ = logged_.front().end;
    logged_.pop_front();
  }
}

// jbd2_update_log_tail: the journal superblock records the new tail (after a flush when the
// blocks were written home by the checkpoint itself: jbd2_cleanup_journal_tail).
void Jbd::MoveTail(uint64_t tail, bool flush, bool wait) {
  tail_ = tail;
  if (flush) Flush();
  std::vector<uint64_t> sb{
      Submit(BlockOp::kWrite, kLogStart, kBlock, kFua | kSync, BlockKind::kJournal)};
  if (wait) Wait(sb);
}

void Jbd::HomeWritten(uint64_t tid) {
  if (logged_.empty() || tid < logged_.front().tid) return;
  Logged& t = logged_[tid - logged_.front().tid];
  if (t.dirty > 0) --t.dirty;
}

// __jbd2_log_wait_for_space: checkpoint until a largest transaction fits. Each round of
// jbd2_log_do_checkpoint first frees what is already home (jbd2_cleanup_journal_tail: a flush,
// then the superblock), else writes the oldest transaction's blocks home; so every
// transaction checkpointed costs a flush and a FUA.
void Jbd::MakeRoom() {
  while (Free() < max_txn_) {
    PopClean();
    if (freed_to_ != tail_) {
      MoveTail(freed_to_, /*flush=*/true, /*wait=*/true);
      continue;
    }
    if (logged_.empty()) break;
    const uint64_t tid = logged_.front().tid;
    // A block the running transaction holds again commits it first (the block then belongs
    // to that transaction's checkpoint).
    bool relogged = false;
    for (MetaBlock b : txn_) {
      auto it = home_dirty_.find(b);
      if (it != home_dirty_.end() && it->second.tid == tid) {
        relogged = true;
        break;
      }
    }
    if (relogged) {
      Commit(/*wait=*/true);
      continue;
    }
    WriteHomeIf(/*wait=*/true, [tid](const HomeDirty& d) { return d.tid == tid; });
    logged_.front().dirty = 0;  // all of its blocks are home now
  }
}

void Jbd::WriteHome(bool wait, bool only_expired) {
  const int64_t expired = now() - options().dirty_expire_ns;
  if (only_expired)
    WriteHomeIf(wait, [expired](const HomeDirty& d) { return d.since_ns <= expired; });
  else
    WriteHomeIf(wait, [](const HomeDirty&) { return true; });
}

template <typename Pred>
void Jbd::WriteHomeIf(bool wait, Pred pred) {
  std::vector<uint64_t> tags;
  for (auto it = home_dirty_.begin(); it != home_dirty_.end();) {
    if (!pred(it->second)) {
      ++it;
      continue;
    }
    // Runs of adjacent blocks go out as one request, as the block device's writeback sends them.
    MetaBlock first = it->first, last = first;
    HomeWritten(it->second.tid);
    auto next = home_dirty_.erase(it);
    while (next != home_dirty_.end() && next->first == last + 1 && pred(next->second)) {
      last = next->first;
      HomeWritten(next->second.tid);
      next = home_dirty_.erase(next);
    }
    SubmitRange(BlockOp::kWrite, first * kSectorsPerBlock, (last - first + 1) * kBlock, 0,
                BlockKind::kMetadata, wait ? &tags : nullptr);
    it = next;
  }
  if (wait) Wait(tags);
}

void Jbd::Fsync(File& f, bool datasync) {
  std::vector<uint64_t> tags;
  ChargeWriteBack(f);
  WriteBack(f, &tags);
  Wait(tags);
  if (f.is_dir) {
    // ext4_sync_file on a directory forces a commit of the running transaction, if there is
    // one; with nothing to commit it sends nothing, not even a flush.
    if (!txn_.empty()) Commit(/*wait=*/true);
    return;
  }
  if ((datasync ? f.data_seq : f.seq) == tid_ && !txn_.empty()) {
    Commit(/*wait=*/true);
  } else {
    Flush();
  }
}

void Jbd::SyncAll() {
  std::vector<uint64_t> tags;
  WriteBackAll(&tags, /*waited=*/true);
  Wait(tags);
  if (!txn_.empty()) {
    Commit(/*wait=*/true);
  } else {
    Flush();
  }
  WriteHome(/*wait=*/true, false);  // sync(2) writes the block device's dirty pages last
}

void Jbd::Tick() {
  if (txn_start_ns_ >= 0 && now() - txn_start_ns_ >= options().commit_interval_ns)
    Commit(/*wait=*/false);
  if (!home_dirty_.empty() && now() >= next_home_check_ns_) {
    WriteHome(/*wait=*/false, /*only_expired=*/true);
    next_home_check_ns_ = now() + options().dirty_writeback_ns;
  }
}

}  // namespace iorr::model::fs
