// File-system models: turn a trace's calls into block requests as a file system would, and run
// the workload closed loop against a device model (model/device.h).
//
// One interface (RunFsModel), one file per model under model/fs/: ext4.cc (jbd2, data=ordered,
// delayed allocation), ext3.cc (jbd, data=ordered, block allocation at write), ext2.cc (no
// journal), xfs.cc (delayed logging, and `xfs-legacy`: every log buffer write PREFLUSH|FUA,
// objects logged in full per transaction). What they share (the page cache with its dirty
// thresholds and expiry, files and fds, the closed-loop clock) is model/fs/fs_base.h.
//
// Time: each call costs the program's own time (the gap after its thread's previous call and
// the call's recorded duration, with the recording's own I/O waits left out: a call the model
// makes wait counts 20 us of CPU at most; with a call-cost table of the modelled file system,
// a call the table covers costs the table's CPU instead) plus what it waits for in the model.
// Threads run apart: a call starts when its thread's previous call and the latest call of each
// other thread, if that ended since, have ended in the model, plus the same think time, so
// threads that overlapped in the recording overlap in the model (fs_base.cc, FsBase::Run).
// Models are unvalidated until tools/bench/model-vs-real.sh compares them with a real run.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/call_costs.h"
#include "model/device.h"
#include "traces/status.h"

namespace iorr::model {

struct FsModelOptions {
  uint64_t mem_bytes = 8ull << 30;
  double dirty_background_ratio = 10;          // vm.dirty_background_ratio
  double dirty_ratio = 20;                     // vm.dirty_ratio
  int64_t dirty_expire_ns = 30'000'000'000;    // vm.dirty_expire_centisecs
  int64_t dirty_writeback_ns = 5'000'000'000;  // vm.dirty_writeback_centisecs
  int64_t commit_interval_ns = 5'000'000'000;  // ext3/ext4 commit=, xfs: log worker (30 s)
  // ext3/ext4 journal size (mke2fs: 32 MiB for a 1 GiB file system, 64 MiB up to 16 GiB,
  // 128 MiB up to 32 GiB); a transaction commits early past a third of it (ext4; ext3: a
  // quarter), and a checkpoint writes the oldest ones home when it is nearly full.
  uint64_t journal_bytes = 128ull << 20;
  // false: drop the program's time between calls, as `iorr replay --timing afap` does (to
  // compare with such a replay); the calls' own recorded durations still count.
  bool think = true;
  // Non-empty: only calls on paths under these recorded prefixes (and on fds opened there)
  // count, as `iorr replay --only` replays them; everything else is neither modelled nor
  // charged a cost of its own, but the time it took in the recording stays in the program's
  // time between the calls that count (reading a source file elsewhere costs what it cost).
  std::vector<std::string> only;
  // The modelled file system's per-call CPU (model/call_costs.h), or null: recorded durations.
  const CallCosts* costs = nullptr;
};

struct FsModelResult {
  int64_t elapsed_ns = 0;        // simulated time from the first call to the last one's end
  int64_t io_wait_ns = 0;        // of which the program waited for the device
  int64_t writeback_cpu_ns = 0;  // of io_wait, writeback's own CPU (a call-cost table's)
  int64_t cpu_ns = 0;            // the calls' own CPU, summed over threads (table or recorded)
  uint64_t commits = 0;          // journal commits / log checkpoints / log buffer writes
  uint64_t events = 0;
  // Requests as the file system asked for them, before the device's settings strip flags: the
  // figures to compare with a block trace captured at bio level.
  uint64_t asked_flushes = 0;  // PREFLUSH bits and explicit flushes
  uint64_t asked_fua = 0;      // writes with FUA
  DeviceStats device;
  std::map<std::string, uint64_t> not_modelled;  // calls the model ignores, by name
};

// The models RunFsModel knows, by name.
const std::vector<std::string_view>& FsModelNames();

// Runs the trace (merged, in effect order: trace::MergeOrder) against `device` with the named
// model; an unknown name is an error naming the known ones.
Result<FsModelResult> RunFsModel(std::string_view fs, const std::string& trace_path,
                                 DeviceModel& device, const FsModelOptions& options);

}  // namespace iorr::model
