// Block-stream input: the block requests a real kernel issued during a replay (`iorr replay
// --block-trace`, or `iorr import blkparse`), as the model's ground truth and as a workload for
// the device models alone.
//
// ReadBlockStream takes the requests of one phase (by default BLK_QUEUE: the bios as the file
// system submitted them, with the PREFLUSH/FUA it asked for) and sorts them into kinds:
//   - journal: written by ext4's journal thread (comm "jbd2/..."), or inside the sector range
//     of the header key `block.log` (START+SECTORS; xfs's internal log), when there is one;
//   - metadata: REQ_META writes outside the journal;
//   - data: the rest. Metadata the kernel writes without REQ_META (ext4's checkpointed
//     buffers, written back through the block device's page cache) counts as data here: the
//     stream does not say better.
// Counts are of requests as asked: a 0-byte write with PREFLUSH is a flush, a write with
// PREFLUSH is a flush and a write.
//
// RunBlockStream replays the requests open loop against a device model: each at its recorded
// time after the first (the real run's pacing, so a faster device cannot make the host issue
// sooner), and reports when the device would have finished.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/block.h"
#include "model/device.h"
#include "traces/status.h"

namespace iorr::model {

struct CapturedCounts {
  uint64_t requests = 0;
  uint64_t reads = 0, writes = 0;  // with data
  uint64_t flushes = 0;            // PREFLUSH bits and flush operations
  uint64_t fua_writes = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written_by_kind[kBlockKinds] = {};
  int64_t first_ns = 0, last_ns = 0;  // trace times of the first and last request
};

struct BlockStream {
  std::vector<BlockRequest> requests;  // time_ns relative to the first request
  CapturedCounts counts;
  uint64_t other_events = 0;  // non-block events and other phases, skipped
  std::string device;         // header block.device, if any
};

// phase: trace::block::kQueue, kIssue or kComplete.
Result<BlockStream> ReadBlockStream(const std::string& trace_path, int phase);

struct BlockRunResult {
  int64_t elapsed_ns = 0;  // first submission to last completion
  DeviceStats device;
};
BlockRunResult RunBlockStream(const BlockStream& s, DeviceModel& device);

// Whether the trace's first events are block events (a block trace rather than a call trace).
Result<bool> IsBlockTrace(const std::string& trace_path);

}  // namespace iorr::model
