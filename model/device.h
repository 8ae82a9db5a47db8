// Device models as discrete-event simulations. A driver (a file-system model, a block-trace
// replayer, a test) submits block requests at times; the device says when each completes and
// keeps accounting (flushes, FUA writes, bytes, busy time, media operations). One interface,
// one file per model: hdd.cc, ssd.cc, raid0.cc. A model instance is not thread-safe (use one
// per thread); distinct instances share nothing.
//
// Driving a device. Time is in nanoseconds and never goes back.
//   - Submit(r, tag) queues r at r.time_ns. Earlier device events are processed first, so an
//     open-loop driver may simply submit a whole stream in time order and then Drain().
//   - NextEventNs() is the time of the device's next internal event (a completion or a
//     decision), kNever when it has nothing to do. Step() processes the events at that time.
//     Completions come out of PopCompletion() in time order.
//   - A closed-loop driver interleaves its own events with the device's:
//         for (;;) {
//           int64_t tf = my.NextEventNs(), td = dev.NextEventNs();
//           if (tf == kNever && td == kNever) break;
//           if (tf <= td) { my.Step(); continue; }  // may Submit at tf
//           dev.Step();
//           while (dev.PopCompletion(&c)) my.OnCompletion(c);  // may Submit at c.done_ns
//         }
//   - Same-instant rule: a Step that completes requests stops before the device makes its next
//     decision at that instant, so requests the driver submits in reaction, at the completion
//     time, are seen by that decision (as if the host reacted in zero time). Requests
//     submitted at the same instant are all seen by the device's decision at that instant.
//   - Run(r) is the queue-depth-1 shortcut: submit r and step until it completes.
// Everything is deterministic: no randomness, no wall clock.
//
// Settings (DeviceSettings): `write_cache` off makes every write wait for the media; `barriers`
// off strips PREFLUSH and FUA before the device sees them and completes explicit flushes at
// once. With the write cache off the host strips them too, as Linux does for a device without
// a volatile cache (blk_queue_write_cache); stats() counts what was stripped.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "model/block.h"
#include "model/ring.h"

namespace iorr::model {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct Completion {
  uint64_t tag = 0;       // as given to Submit
  int64_t submit_ns = 0;  // when it was queued (after any move to the device clock)
  int64_t done_ns = 0;    // when it completed
};

struct DeviceSettings {
  std::optional<bool> write_cache;  // unset: as the profile ships the drive
  bool barriers = true;             // false: PREFLUSH/FUA stripped, flushes dropped
};

struct DeviceStats {
  // What reached the device's interface, after barrier and write-cache stripping.
  uint64_t requests = 0;          // every Submit
  uint64_t reads = 0;             // read requests
  uint64_t writes = 0;            // write requests with data
  uint64_t discards = 0;          // discard requests
  uint64_t flushes = 0;           // flushes executed: explicit, PREFLUSH and FUA emulation
  uint64_t fua_writes = 0;        // writes executed with FUA
  uint64_t flushes_stripped = 0;  // flushes and PREFLUSH flags removed (barriers/cache off)
  uint64_t fua_stripped = 0;      // FUA flags removed (barriers/cache off)
  uint64_t empty_requests = 0;    // reads and writes of 0 bytes without PREFLUSH: done at once
  uint64_t late_submits = 0;      // dated before the device clock; moved up to it
  uint64_t beyond_capacity = 0;   // past the last sector; wrapped into the device
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t bytes_written_by_kind[kBlockKinds] = {};  // indexed by BlockKind
  int64_t busy_ns = 0;      // time with at least one request outstanding (iostat's %util)
  int64_t wait_ns = 0;      // sum over requests of completion - submission
  int64_t last_ns = 0;      // time of the last completion
  uint64_t cache_hits = 0;  // reads served from the device's cache or read-ahead
  // What reached the medium (platters, flash).
  uint64_t media_reads = 0;   // media read operations
  uint64_t media_writes = 0;  // media write operations (HDD: one per destaged extent)
  uint64_t media_bytes_read = 0;
  uint64_t media_bytes_written = 0;
  int64_t media_busy_ns = 0;  // HDD: mechanism busy; SSD: flash time / channels
};

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;
  DeviceModel(const DeviceModel&) = delete;
  DeviceModel& operator=(const DeviceModel&) = delete;

  // Queues r at r.time_ns (see the file comment). tag comes back in its Completion.
  void Submit(const BlockRequest& r, uint64_t tag);
  // Time of the next internal event; kNever when idle.
  int64_t NextEventNs() const { return DoNextEventNs(); }
  // Processes the events at NextEventNs() (one round; see the same-instant rule).
  void Step();
  // The next completion, in time order; false when none is waiting.
  bool PopCompletion(Completion* out);

  // Submits r and steps until it completes; other completions stay for PopCompletion.
  Completion Run(const BlockRequest& r);
  // Steps until no request is outstanding; returns the clock. Background work (destaging) may
  // go on after it returns.
  int64_t Drain();
  // Steps until the device has nothing left to do, background work included.
  int64_t Quiesce();

  int64_t now_ns() const { return now_; }
  uint64_t outstanding() const { return outstanding_; }
  // Accounting so far. busy_ns counts up to the last completion.
  virtual DeviceStats stats() const { return stats_; }
  bool write_cache() const { return write_cache_; }
  bool barriers() const { return barriers_; }
  uint64_t capacity_sectors() const { return capacity_sectors_; }
  const std::string& name() const { return name_; }

 protected:
  DeviceModel(std::string name, uint64_t capacity_sectors, bool write_cache, bool barriers);

  // r is clamped to the device, its flags already stripped per the settings, its time is
  // now_ns(); a flush has op kFlush (never a 0-byte write).
  virtual void DoSubmit(const BlockRequest& r, uint64_t tag) = 0;
  virtual int64_t DoNextEventNs() const = 0;
  // Processes the events at t == DoNextEventNs(); now_ns() is already t.
  virtual void DoStep(int64_t t) = 0;
  // Reports a request as complete at done_ns (>= now_ns()).
  void Deliver(uint64_t tag, int64_t submit_ns, int64_t done_ns);
  uint64_t delivered() const { return delivered_; }

  DeviceStats stats_;

 private:
  std::string name_;
  uint64_t capacity_sectors_;
  bool write_cache_;
  bool barriers_;
  int64_t now_ = 0;
  uint64_t outstanding_ = 0;
  uint64_t delivered_ = 0;
  int64_t busy_since_ = 0;
  Ring<Completion> out_;
};

// The host queue in front of a single device (HDD, SSD): requests wait in FIFO order for one
// of queue_depth command slots; a flush is a non-queued command (as in SATA): it starts when
// every earlier command has completed and nothing starts until it completes. A request with
// PREFLUSH runs as a flush, then the request; a FUA write on a device without FUA runs as the
// write, then a flush (the block layer's emulation). A subclass models what the device does
// with the commands it has been given.
class QueuedDevice : public DeviceModel {
 protected:
  // One step of a request, as the device sees it.
  struct Command {
    BlockOp op = BlockOp::kRead;  // kFlush for a flush step
    bool fua = false;             // a write that must be on media when it completes
    BlockKind kind = BlockKind::kData;
    uint64_t sector = 0;
    uint64_t sectors = 0;
    uint64_t bytes = 0;
  };

  QueuedDevice(std::string name, uint64_t capacity_sectors, bool write_cache, bool barriers,
               uint32_t queue_depth, bool fua);

  const Command& command(uint32_t slot) const { return slots_[slot].cmd; }

  // The model's side. Accept hands over a command at time t; the model must finish it later
  // by calling Done from Finish (never from Accept or Dispatch). Dispatch(t) is called after
  // every change at t (new commands, finished work) to start what can start.
  virtual int64_t NextFinishNs() const = 0;  // earliest pending finish event, or kNever
  virtual void Finish(int64_t t) = 0;        // process finish events at t
  virtual void Accept(uint32_t slot, int64_t t) = 0;
  virtual void Dispatch(int64_t t) = 0;
  void Done(uint32_t slot, int64_t t);

  uint32_t queue_depth() const { return queue_depth_; }

 private:
  enum Phase : uint8_t { kPre = 1, kMain = 2, kPost = 4 };
  struct Slot {
    Command cmd;
    BlockRequest req;
    uint64_t tag = 0;
    int64_t submit_ns = 0;
    uint8_t phases = 0;  // Phase bits still to run; the lowest is running or next
  };

  void DoSubmit(const BlockRequest& r, uint64_t tag) final;
  int64_t DoNextEventNs() const final;
  void DoStep(int64_t t) final;
  void Admit(int64_t t);
  void MarkDispatch(int64_t t);

  uint32_t queue_depth_;
  bool fua_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  Ring<uint32_t> host_queue_;
  uint32_t in_device_ = 0;
  bool barrier_ = false;  // a flush is in the device
  bool dispatch_pending_ = false;
  int64_t dispatch_at_ = 0;
};

}  // namespace iorr::model
