// ext2: no journal. Metadata blocks (inodes, directories, bitmaps) are dirty buffers of the
// block device, written home by the flusher when they expire and by sync; blocks are allocated
// at write. fsync writes the file's data, its inode block and the metadata buffers it dirtied
// (sync_mapping_buffers), then sends a flush (generic_file_fsync); sync writes everything and
// sends one flush (sync_filesystem's blkdev_issue_flush is ext4's; ext2's sync_fs has none).
#include <map>
#include <unordered_map>
#include <vector>

#include "model/fs/models.h"

namespace iorr::model::fs {
namespace {

class Ext2 : public FsBase {
 public:
  using FsBase::FsBase;

 protected:
  void MetadataChanged(File& f, MetaBlock dir) override {
    Dirty(f.inode_block, &f);
    if (dir) Dirty(dir, &f);
  }
  void Allocated(File& f) override {
    Dirty(BlockBitmapOf(f.sector), &f);
    Dirty(f.inode_block, &f);
  }
  bool AllocateAtWrite() const override { return true; }
  void Fsync(File& f, bool datasync) override {
    (void)datasync;
    std::vector<uint64_t> tags;
    ChargeWriteBack(f);
    WriteBack(f, &tags);
    for (auto it = dirty_.begin(); it != dirty_.end();) {
      if (it->second.owner == &f) {
        tags.push_back(Submit(BlockOp::kWrite, it->first * kSectorsPerBlock, kBlock, kSync,
                              BlockKind::kMetadata));
        it = dirty_.erase(it);
      } else {
        ++it;
      }
    }
    Wait(tags);
    Wait({Submit(BlockOp::kWrite, 0, 0, kPreflush, BlockKind::kMetadata)});
  }
  void SyncAll() override {
    std::vector<uint64_t> tags;
    WriteBackAll(&tags, /*waited=*/true);
    WriteMeta(&tags, false);
    Wait(tags);
  }
  void Tick() override {
    if (now() < next_pass_ns_) return;
    next_pass_ns_ = now() + options().dirty_writeback_ns;
    WriteMeta(nullptr, true);
  }

 private:
  struct Buf {
    int64_t since = 0;
    const File* owner = nullptr;
  };
  void Dirty(MetaBlock b, const File* owner) {
    auto [it, fresh] = dirty_.try_emplace(b, Buf{now(), owner});
    if (!fresh) it->second.owner = owner;
  }
  void WriteMeta(std::vector<uint64_t>* tags, bool only_expired) {
    for (auto it = dirty_.begin(); it != dirty_.end();) {
      if (only_expired && now() - it->second.since < options().dirty_expire_ns) {
        ++it;
        continue;
      }
      uint64_t tag =
          Submit(BlockOp::kWrite, it->first * kSectorsPerBlock, kBlock, 0, BlockKind::kMetadata);
      if (tags) tags->push_back(tag);
      it = dirty_.erase(it);
    }
  }
  std::map<MetaBlock, Buf> dirty_;
  int64_t next_pass_ns_ = 0;
};

}  // namespace

std::unique_ptr<FsBase> MakeExt2(DeviceModel& dev, const FsModelOptions& o) {
  return std::make_unique<Ext2>(dev, o);
}

}  // namespace iorr::model::fs
