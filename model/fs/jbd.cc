// See jbd.h.
#include "model/fs/jbd.h"

#include <algorithm>

namespace iorr::model::fs {
namespace {

constexpr uint64_t kTagsPerDescriptor = 250;
constexpr MetaBlock kGroupDescriptors = kMetaStart / kSectorsPerBlock - 1;
constexpr MetaBlock kInodeBitmap = kMetaStart / kSectorsPerBlock - 2;

}  // namespace

void Jbd::Dirty(MetaBlock b) {
  if (txn_.empty()) txn_start_ns_ = now();
  txn_.insert(b);
  // jbd2's j_max_transaction_buffers: a transaction that would fill a quarter of the journal
  // commits at once.
  if (txn_.size() >= journal_blocks_ / 4) Commit(/*wait=*/false);
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
  home_dirty_.erase(own);
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
  for (uint64_t i = 0; i < blocks;) {
    uint64_t pos = head % journal_blocks_;
    uint64_t run = std::min(blocks - i, journal_blocks_ - pos);
    SubmitRange(BlockOp::kWrite, kLogStart + pos * kSectorsPerBlock, run * kBlock, kSync,
                BlockKind::kJournal, &journal);
    head += run;
    i += run;
  }
  // jbd2 waits for the journal blocks before it writes the commit block; a background commit
  // makes nobody wait (the device keeps the order: the commit block's PREFLUSH drains it).
  if (wait) Wait(journal);
  std::vector<uint64_t> commit{Submit(BlockOp::kWrite,
                                      kLogStart + (head % journal_blocks_) * kSectorsPerBlock,
                                      kBlock, kPreflush | kFua | kSync, BlockKind::kJournal)};
  journal_head_ = head + 1;
  if (wait) Wait(commit);
  for (MetaBlock b : txn_) home_dirty_.emplace(b, now());
  txn_.clear();
  txn_start_ns_ = -1;
  ++tid_;
  ++result().commits;
  // Checkpoint when a quarter of the journal holds transactions whose blocks are not home.
  if (journal_head_ - checkpointed_ > journal_blocks_ / 4) WriteHome(/*wait=*/false, false);
}

void Jbd::WriteHome(bool wait, bool only_expired) {
  std::vector<uint64_t> tags;
  for (auto it = home_dirty_.begin(); it != home_dirty_.end();) {
    if (only_expired && now() - it->second < options().dirty_expire_ns) {
      ++it;
      continue;
    }
    // Runs of adjacent blocks go out as one request, as the block device's writeback sends them.
    MetaBlock first = it->first, last = first;
    auto next = std::next(it);
    home_dirty_.erase(it);
    while (next != home_dirty_.end() && next->first == last + 1 &&
           (!only_expired || now() - next->second >= options().dirty_expire_ns)) {
      last = next->first;
      next = home_dirty_.erase(next);
    }
    SubmitRange(BlockOp::kWrite, first * kSectorsPerBlock, (last - first + 1) * kBlock, 0,
                BlockKind::kMetadata, wait ? &tags : nullptr);
    it = next;
  }
  if (home_dirty_.empty()) checkpointed_ = journal_head_;
  if (wait) Wait(tags);
}

void Jbd::Fsync(File& f, bool datasync) {
  std::vector<uint64_t> tags;
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
  WriteBackAll(&tags);
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
