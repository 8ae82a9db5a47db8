// A first file-system model: turns a trace's calls into block requests on a device model, as
// ext4 in data=ordered mode roughly does, and runs the workload closed-loop against it.
//
// What it models (and what it does not, yet): a page cache with dirty data written back in
// the background past vm.dirty_background_ratio and waited for past vm.dirty_ratio; files
// allocated at writeback (delayed allocation), one after the other; metadata changes (creates,
// removes, renames, attribute changes) dirtying an inode block and a directory block in the
// running jbd2 transaction; a commit every 5 s or on fsync/fdatasync/sync, writing the transaction's data
// first (ordered), then the journal blocks and a commit block with PREFLUSH|FUA, and later the
// metadata to its home location (checkpoint); reads of data not yet read or written. The
// program's own time between and inside calls comes from the recording (traces made on tmpfs
// or a warm cache measure CPU, not I/O). All recorded threads run as one sequence.
// Unvalidated: no comparison with a real run yet. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/device.h"
#include "traces/reader.h"
#include "traces/status.h"

namespace iorr::model {

struct FsModelOptions {
  uint64_t mem_bytes = 8ull << 30;
  double dirty_background_ratio = 10;
  double dirty_ratio = 20;
  int64_t commit_interval_ns = 5'000'000'000;
};

struct FsModelResult {
  int64_t elapsed_ns = 0;   // simulated time from the first call to the last one's end
  int64_t io_wait_ns = 0;   // of which the program waited for the device
  uint64_t commits = 0;
  uint64_t events = 0;
  DeviceStats device;
  std::map<std::string, uint64_t> not_modelled;  // calls the model ignores, by name
};

// Runs the trace (merged order) against `device` with an ext4-like model.
Result<FsModelResult> RunExt4(const std::string& trace_path, DeviceModel& device,
                              const FsModelOptions& options);

}  // namespace iorr::model
