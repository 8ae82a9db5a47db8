// The journaling both ext3 (jbd) and ext4 (jbd2) do in data=ordered mode, as a model
// (model/fs_model.h). A running transaction collects the metadata blocks calls dirty; it
// commits every commit interval (from its start), on fsync of a file it holds, and on sync:
//   1. ordered data: the dirty data of files written in the transaction (ext3; under ext4's
//      delayed allocation this is only data allocated in it, which writeback already sent);
//   2. descriptor blocks (one per 250 tags) and a copy of every dirty metadata block, REQ_SYNC,
//      into the circular journal, waited for;
//   3. the commit block with PREFLUSH|FUA (barriers), waited for by whoever asked.
// Committed metadata is then dirty in the block device's page cache: it goes to its home
// location when it has been dirty for the expiry time, on sync, or when the journal is a
// quarter full (checkpoint), without flags. fsync of a file whose changes are already committed
// sends a lone flush instead (ext4_sync_file's needs_barrier), and so does sync with nothing to
// commit. Revoke records are not modelled.
#pragma once

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/fs/fs_base.h"

namespace iorr::model::fs {

class Jbd : public FsBase {
 public:
  Jbd(DeviceModel& dev, const FsModelOptions& o, bool delalloc)
      : FsBase(dev, o),
        delalloc_(delalloc),
        journal_blocks_(std::max<uint64_t>(1024, o.journal_bytes / kBlock)) {}

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

  bool delalloc_;
  uint64_t journal_blocks_;  // circular
  uint64_t tid_ = 1;         // the running transaction
  int64_t txn_start_ns_ = -1;
  std::unordered_set<MetaBlock> txn_;
  void Order(File& f);    // f's data goes out before the commit
  void Unorder(File& f);  // ... or no longer (freed)
  // Files with data ordered before commit, in the order they joined the transaction (jbd's
  // t_sync_datalist): ordered_at_ holds the position of each file's live entry in ordered_.
  std::vector<File*> ordered_;
  std::unordered_map<File*, size_t> ordered_at_;
  std::map<MetaBlock, int64_t> home_dirty_;  // committed, not yet home: since when
  uint64_t journal_head_ = 0;                // blocks written, ever
  uint64_t checkpointed_ = 0;                // journal blocks freed by checkpoints
  int64_t next_home_check_ns_ = 0;           // the flusher's next pass
};

}  // namespace iorr::model::fs
