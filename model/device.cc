// DeviceModel and QueuedDevice: submission, stripping per the settings, completions, the host
// queue with its flush rules. See device.h. Not thread-safe.
#include "model/device.h"

#include <algorithm>
#include <utility>

namespace iorr::model {

DeviceModel::DeviceModel(std::string name, uint64_t capacity_sectors, bool write_cache,
                         bool barriers)
    : name_(std::move(name)),
      capacity_sectors_(std::max<uint64_t>(capacity_sectors, 1)),
      write_cache_(write_cache),
      barriers_(barriers),
      out_(64) {}

void DeviceModel::Submit(const BlockRequest& req, uint64_t tag) {
  BlockRequest r = req;
  while (DoNextEventNs() < r.time_ns) Step();
  if (r.time_ns < now_) {
    r.time_ns = now_;
    ++stats_.late_submits;
  }
  now_ = r.time_ns;
  ++stats_.requests;
  if (outstanding_++ == 0) busy_since_ = now_;

  // The host strips flush and FUA when barriers are off, and when the device has no volatile
  // cache (Linux: blk_queue_write_cache(q, false, false)); a dropped flush completes at once.
  if (r.op != BlockOp::kWrite) r.flags &= static_cast<uint8_t>(~kFua);
  if (r.op == BlockOp::kWrite && r.bytes == 0 && r.has(kPreflush)) {
    r.op = BlockOp::kFlush;
    r.flags &= static_cast<uint8_t>(~kPreflush);
  }
  if (!barriers_ || !write_cache_) {
    if (r.has(kPreflush)) ++stats_.flushes_stripped;
    if (r.has(kFua)) ++stats_.fua_stripped;
    r.flags &= static_cast<uint8_t>(~(kPreflush | kFua));
    if (r.op == BlockOp::kFlush) {
      ++stats_.flushes_stripped;
      Deliver(tag, now_, now_);
      return;
    }
  }
  if (r.op == BlockOp::kFlush) {
    r.sector = 0;
    r.bytes = 0;
  } else if (r.bytes == 0 && !r.has(kPreflush)) {
    ++stats_.empty_requests;
    Deliver(tag, now_, now_);
    return;
  }

  // Keep the request on the device: wrap a start past the end, then pull it back to fit.
  uint64_t n = r.sectors();
  if (n > 0 && (r.sector >= capacity_sectors_ || capacity_sectors_ - r.sector < n)) {
    ++stats_.beyond_capacity;
    if (n > capacity_sectors_) {
      n = capacity_sectors_;
      r.bytes = n * kSectorBytes;
    }
    r.sector %= capacity_sectors_;
    if (capacity_sectors_ - r.sector < n) r.sector = capacity_sectors_ - n;
  }

  switch (r.op) {
    case BlockOp::kRead:
      if (r.bytes > 0) ++stats_.reads;
      stats_.bytes_read += r.bytes;
      break;
    case BlockOp::kWrite:
      if (r.bytes > 0) ++stats_.writes;
      stats_.bytes_written += r.bytes;
      stats_.bytes_written_by_kind[static_cast<int>(r.kind) % kBlockKinds] += r.bytes;
      break;
    case BlockOp::kDiscard:
      ++stats_.discards;
      break;
    case BlockOp::kFlush:
      break;
  }
  DoSubmit(r, tag);
}

void DeviceModel::Step() {
  int64_t t = DoNextEventNs();
  if (t == kNever) return;
  if (t > now_) now_ = t;
  DoStep(now_);
}

bool DeviceModel::PopCompletion(Completion* out) {
  if (out_.empty()) return false;
  *out = out_.pop_front();
  return true;
}

void DeviceModel::Deliver(uint64_t tag, int64_t submit_ns, int64_t done_ns) {
  out_.push_back(Completion{tag, submit_ns, done_ns});
  ++delivered_;
  stats_.wait_ns += done_ns - submit_ns;
  stats_.last_ns = std::max(stats_.last_ns, done_ns);
  if (--outstanding_ == 0) stats_.busy_ns += done_ns - busy_since_;
}

Completion DeviceModel::Run(const BlockRequest& r) {
  // A tag no caller is likely to use; searched for among the new completions only.
  constexpr uint64_t kRunTag = ~uint64_t{0} - 0x5eed;
  size_t seen = out_.size();
  Submit(r, kRunTag);
  for (;;) {
    for (size_t i = seen; i < out_.size(); ++i) {
      if (out_[i].tag == kRunTag) {
        Completion c = out_[i];
        out_.erase(i);
        return c;
      }
    }
    seen = out_.size();
    if (DoNextEventNs() == kNever) return Completion{kRunTag, r.time_ns, now_};  // not reached
    Step();
  }
}

int64_t DeviceModel::Drain() {
  while (outstanding_ > 0 && DoNextEventNs() != kNever) Step();
  return now_;
}

int64_t DeviceModel::Quiesce() {
  while (DoNextEventNs() != kNever) Step();
  return now_;
}

// ---- QueuedDevice ----

QueuedDevice::QueuedDevice(std::string name, uint64_t capacity_sectors, bool write_cache,
                           bool barriers, uint32_t queue_depth, bool fua)
    : DeviceModel(std::move(name), capacity_sectors, write_cache, barriers),
      queue_depth_(std::max<uint32_t>(queue_depth, 1)),
      fua_(fua),
      host_queue_(64) {
  slots_.reserve(64);
  free_.reserve(64);
}

void QueuedDevice::DoSubmit(const BlockRequest& r, uint64_t tag) {
  uint32_t s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& slot = slots_[s];
  slot.req = r;
  slot.tag = tag;
  slot.submit_ns = r.time_ns;
  slot.phases = 0;
  if (r.has(kPreflush)) slot.phases |= kPre;
  if (r.op == BlockOp::kFlush) {
    slot.phases |= kPre;  // a flush is just its flush step
  } else {
    slot.phases |= kMain;
    if (r.op == BlockOp::kWrite && r.has(kFua) && !fua_) slot.phases |= kPost;
  }
  host_queue_.push_back(s);
  MarkDispatch(r.time_ns);
}

void QueuedDevice::MarkDispatch(int64_t t) {
  if (!dispatch_pending_ || t < dispatch_at_) dispatch_at_ = t;
  dispatch_pending_ = true;
}

int64_t QueuedDevice::DoNextEventNs() const {
  int64_t t = NextFinishNs();
  if (dispatch_pending_ && dispatch_at_ < t) t = dispatch_at_;
  return t;
}

void QueuedDevice::DoStep(int64_t t) {
  if (NextFinishNs() <= t) {
    uint64_t before = delivered();
    Finish(t);
    MarkDispatch(t);
    if (delivered() != before) return;  // the driver reacts before the next decision
  }
  if (dispatch_pending_ && dispatch_at_ <= t) {
    dispatch_pending_ = false;
    Admit(t);
    Dispatch(t);
  }
}

void QueuedDevice::Admit(int64_t t) {
  while (!host_queue_.empty() && !barrier_) {
    uint32_t s = host_queue_.front();
    Slot& slot = slots_[s];
    uint8_t phase = slot.phases & static_cast<uint8_t>(-slot.phases);  // lowest bit
    bool flush = phase != kMain;
    if (flush ? in_device_ > 0 : in_device_ >= queue_depth_) break;
    host_queue_.pop_front();
    ++in_device_;
    Command& c = slot.cmd;
    if (flush) {
      barrier_ = true;
      c = Command{};
      c.op = BlockOp::kFlush;
      ++stats_.flushes;
    } else {
      const BlockRequest& r = slot.req;
      c.op = r.op;
      c.fua = r.op == BlockOp::kWrite && r.has(kFua) && fua_;
      c.kind = r.kind;
      c.sector = r.sector;
      c.sectors = r.sectors();
      c.bytes = r.bytes;
      if (c.fua) ++stats_.fua_writes;
    }
    Accept(s, t);
  }
}

void QueuedDevice::Done(uint32_t s, int64_t t) {
  Slot& slot = slots_[s];
  --in_device_;
  if (slot.cmd.op == BlockOp::kFlush) barrier_ = false;
  slot.phases &= static_cast<uint8_t>(slot.phases - 1);  // clear the lowest bit
  if (slot.phases != 0) {
    host_queue_.push_front(s);  // its next step goes first
  } else {
    Deliver(slot.tag, slot.submit_ns, t);
    free_.push_back(s);
  }
  MarkDispatch(t);
}

}  // namespace iorr::model
