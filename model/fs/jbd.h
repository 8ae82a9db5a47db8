// The journaling both ext3 (jbd) and ext4 (jbd2) do in data=ordered mode, as a model
// (model/fs_model.h). A running transaction collects the metadata blocks calls dirty; it
// commits every commit interval (from its start), on fsync of a file it holds, and on sync:
//   1. ordered data: the dirty data of files written in the transaction (ext3; under ext4's
//      delayed allocation this is only data allocated in it, which writeback already sent);
//   2. descriptor blocks (one per 250 tags) and a copy of every dirty metadata block, REQ_SYNC,
//      into the circular journal, waited for;
//   3. the commit block with PREFLUSH|FUA (barriers), waited for by whoever asked.
// A transaction also commits when it holds the most blocks one may (a third of the journal
// under jbd2 since Linux 6.11, a quarter before and under jbd, less the descriptor blocks
// set aside for it). Committed metadata is then dirty in the block device's page cache: it
// goes to its home location, without flags, when it has been dirty for the expiry time, on
// sync, or at a checkpoint: when the journal's free space falls below one largest
// transaction, the oldest transaction's blocks still dirty are written home (a transaction
// that still holds one of them commits first), then a flush and the journal superblock with
// FUA move the journal's tail past it (jbd2_cleanup_journal_tail), one transaction at a time
// until there is room. A commit also moves the tail, with the superblock's FUA write and no
// flush, once transactions written home meanwhile free a largest transaction. fsync of a file
// whose changes are already committed sends a lone flush instead (ext4_sync_file's
// needs_barrier), and so does sync with nothing to commit. Revoke records are not modelled.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/fs/fs_base.h"

namespace iorr::model::fs {

class Jbd : public FsBase {
 public:
  // max_txn_divisor: the largest transaction is the journal's size over this (jbd2_journal_
  // get_max_txn_bufs: 3 since Linux 6.11, 4 before; jbd: 4).
  Jbd(DeviceModel& dev, const FsModelOptions& o, bool delalloc, uint64_t max_txn_divisor);

 protected:
  void MetadataChanged(File& f, MetaBlock dir) override;
  void Written(File& f, bool grew) override;
  void Allocated(File& f) override;
  void Freed(File& f, MetaBlock dir) override;
  void DirRemoved(MetaBlock own) override;
  void Fsync(File& f, bool datasync) override;
  void SyncAll() override;
  void Tick() override;
  bool AllocateAtWrite() const override { return !delalloc_; }

 private:
  void Dirty(MetaBlock b);
  void Commit(bool wait);
  void Flush();
  void WriteHome(bool wait, bool only_expired);
  struct HomeDirty;
  template <typename Pred>
  void WriteHomeIf(bool wait, Pred pred);  // the committed blocks pred(HomeDirty) picks
  uint64_t Free() const;                   // the journal's free space
  void MakeRoom();                         // checkpoint while free space < one largest transaction
  void PopClean();                         // forgets the oldest transactions all home
  void MoveTail(uint64_t tail, bool flush, bool wait);
  void HomeWritten(uint64_t tid);  // one of tid's blocks is no longer dirty for it

  bool delalloc_;
  uint64_t journal_blocks_;  // circular
  uint64_t max_txn_;         // j_max_transaction_buffers: the free space a new handle needs
  uint64_t max_user_txn_;    // ... less the descriptor blocks: a transaction's most blocks
  uint64_t tid_ = 1;         // the running transaction
  int64_t txn_start_ns_ = -1;
  std::unordered_set<MetaBlock> txn_;
  void Order(File& f);    // f's data goes out before the commit
  void Unorder(File& f);  // ... or no longer (freed)
  // Files with data ordered before commit, in the order they joined the transaction (jbd's
  // t_sync_datalist): ordered_at_ holds the position of each file's live entry in ordered_.
  std::vector<File*> ordered_;
  std::unordered_map<File*, size_t> ordered_at_;
  struct HomeDirty {
    int64_t since_ns;  // committed then
    uint64_t tid;      // by this transaction (the last one that logged the block)
  };
  std::map<MetaBlock, HomeDirty> home_dirty_;  // committed, not yet home
  // Committed transactions still holding blocks not home, oldest first: where each ends in the
  // journal (blocks written ever, commit block included) and how many blocks it still holds.
  struct Logged {
    uint64_t tid, end, dirty;
  };
  std::deque<Logged> logged_;
  uint64_t journal_head_ = 0;       // blocks written, ever
  uint64_t tail_ = 0;               // the journal's tail, as its superblock records it
  uint64_t freed_to_ = 0;           // where the oldest transaction not all home starts (>= tail_)
  int64_t next_home_check_ns_ = 0;  // the flusher's next pass
};

}  // namespace iorr::model::fs
