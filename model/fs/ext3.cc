// ext3 in data=ordered mode (jbd): the journal model of jbd.h with blocks allocated at write
// time, so every commit first writes the dirty data of the files its transaction touched.
// Unvalidated: today's kernels mount ext3 with the ext4 driver, which allocates lazily.
#include "model/fs/jbd.h"
#include "model/fs/models.h"

namespace iorr::model::fs {

std::unique_ptr<FsBase> MakeExt3(DeviceModel& dev, const FsModelOptions& o) {
  return std::make_unique<Jbd>(dev, o, /*delalloc=*/false, /*max_txn_divisor=*/4);
}

}  // namespace iorr::model::fs
