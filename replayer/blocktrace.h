// Block requests from the kernel during a replay (`iorr replay --block-trace`): the block device
// under the replay root (from /proc/self/mountinfo), a private tracefs instance that records
// block_bio_queue, block_rq_issue and block_rq_complete on that device, a reader thread that
// parses its trace_pipe text, and the output trace of `block` pseudo-call events
// (traces/FORMAT.md §10, traces/block.h).
//
// The global trace buffer is never touched: everything happens in
// <tracefs>/instances/iorr-<pid>, which is removed by Stop(), by the destructor, and on SIGINT
// or SIGTERM (the signal is then re-raised with its default action). One BlockTracer per
// process at a time.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/status.h"

namespace iorr::replay {

// The block device holding a directory.
struct BlockDevice {
  std::string path;           // the mount's source, e.g. /dev/loop0
  dev_t dev = 0;              // its st_rdev
  dev_t disk = 0;             // the whole disk when dev is a partition, else dev
  std::string fs;             // file system type, e.g. ext4
  std::string mount_point;    // where it is mounted
  std::string mount_options;  // per-mount options, then the super block's, comma-separated
  std::string log;            // xfs: its internal log as "START+SECTORS" (512-byte), else empty
};

// Finds the mount that holds dir (by its mount id, else the longest mount point above its real
// path) and the block device it is mounted from. Fails with a one-line reason for file systems
// without one (tmpfs, overlay, NFS, ...).
Result<BlockDevice> FindBlockDevice(const std::string& dir);

// One event as parsed from a trace_pipe line.
struct BlockEvent {
  int64_t mono_ns = 0;  // event time (trace_clock mono: CLOCK_MONOTONIC)
  int64_t sector = 0;   // first 512-byte sector (all ones, i.e. -1, for some flush completions)
  uint64_t bytes = 0;   // length
  dev_t dev = 0;        // makedev(major, minor)
  uint32_t op = 0;      // trace::block::Op bits
  int32_t ret = 0;      // completion: 0 or -errno
  uint32_t comm = 0;    // BlockTracer: 0 none, else BlockTracer::comm(comm)
  uint8_t phase = 0;    // trace::block::Phase
};

enum class LineKind {
  kEvent,  // *event and *comm filled (comm empty: tracefs did not say)
  kLost,   // "CPU:N [LOST M EVENTS]": *lost = M
  kSkip,   // blank line, "# ..." comment, an event of another kind
  kBad,    // not understood
};

// Parses one trace_pipe line of block_bio_queue, block_rq_issue or block_rq_complete, in the
// formats kernels have printed (with or without the ioprio field of 6.x; rq_issue's byte count
// and cmd; the error of rq_complete). comm is the task named in the event (queue, issue) or the
// task that was running (complete; empty for "<...>"). Never throws.
LineKind ParseTraceLine(std::string_view line, BlockEvent* event, std::string_view* comm,
                        uint64_t* lost);

struct BlockTraceSummary {
  uint64_t events = 0;  // parsed events kept
  uint64_t queued = 0, issued = 0, completed = 0;
  uint64_t preflush = 0;       // bios queued with REQ_PREFLUSH
  uint64_t fua = 0;            // bios queued with REQ_FUA
  uint64_t empty_flushes = 0;  // of the preflush bios, those with no data
  uint64_t queued_write_bytes = 0, queued_read_bytes = 0;
  uint64_t completion_errors = 0;
  uint64_t lost = 0;      // overwritten or dropped in the kernel's buffer (per_cpu stats)
  uint64_t unparsed = 0;  // lines not understood
  std::string first_unparsed;
  double seconds = 0;  // from Start to Stop
};

class BlockTracer {
 public:
  struct Options {
    uint32_t buffer_size_kb = 16384;  // per CPU
  };

  BlockTracer() = default;
  ~BlockTracer();  // stops the reader and removes the instance if still there
  BlockTracer(const BlockTracer&) = delete;
  BlockTracer& operator=(const BlockTracer&) = delete;

  // Checks the privileges and tracefs (root, mounted tracefs with instances, the block events,
  // trace_clock mono), creates the instance and sets it up: clock, buffer size, the three
  // events filtered on the device (queue on dev, issue and complete on the whole disk), still
  // disabled. Installs the SIGINT/SIGTERM clean-up. Errors are one line.
  Status Open(const BlockDevice& device, const Options& options);
  Status Open(const BlockDevice& device) { return Open(device, Options{}); }
  // Empties the buffer, takes the capture's start time, enables the events and starts the
  // reader thread.
  Status Start();
  // Disables the events, reads what is left, adds up the lost events, removes the instance.
  Result<BlockTraceSummary> Stop();

  // After Stop: the events in time order, their task names, and the start of the capture.
  const std::vector<BlockEvent>& events() const { return events_; }
  std::string_view comm(uint32_t id) const { return id ? comms_[id - 1] : std::string_view(); }
  int64_t start_mono_ns() const { return start_mono_ns_; }
  int64_t start_wall_ns() const { return start_wall_ns_; }
  const BlockDevice& device() const { return device_; }

  // Writes the events as an iorr trace at path: header (tool, kind=block-trace, block.device,
  // block.dev, block.fs, block.mount_options, the machine fields, then `extra`), the events of
  // stream pid 0 tid 1, and the note "block-trace EVENTS LOST". Removes path on failure.
  Status WriteTrace(const std::string& path, const BlockTraceSummary& summary,
                    const std::vector<std::pair<std::string, std::string>>& extra) const;

 private:
  void ReadLoop();
  void Consume(const char* p, size_t n);
  void Line(std::string_view line);
  Status WriteFile(const std::string& rel, std::string_view value) const;
  void RemoveInstance();

  BlockDevice device_;
  std::string tracefs_, instance_;
  int pipe_fd_ = -1;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  bool started_ = false;
  std::string partial_;  // an incomplete line between reads
  int64_t start_mono_ns_ = 0, start_wall_ns_ = 0, stop_mono_ns_ = 0;

  // Filled by the reader thread; read after it is joined.
  std::vector<BlockEvent> events_;
  std::vector<std::string> comms_;
  std::unordered_map<std::string, uint32_t> comm_ids_;
  uint64_t lost_lines_ = 0, unparsed_ = 0;
  std::string first_unparsed_;
  std::string read_error_;
};

}  // namespace iorr::replay
