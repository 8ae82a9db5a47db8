// ext4 in data=ordered mode with delayed allocation: the jbd2 model of jbd.h, with data blocks
// allocated at writeback (so a commit has no ordered data of its own to write).
#include "model/fs/jbd.h"
#include "model/fs/models.h"

namespace iorr::model::fs {

std::unique_ptr<FsBase> MakeExt4(DeviceModel& dev, const FsModelOptions& o) {
  return std::make_unique<Jbd>(dev, o, /*delalloc=*/true, /*max_txn_divisor=*/3);
}

}  // namespace iorr::model::fs
