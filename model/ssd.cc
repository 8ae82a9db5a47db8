// The SSD model (see ssd.h): requests start as they are admitted; reads and unbuffered writes
// are cut into up to `channels` parts served on the earliest free channels; buffered writes
// cross the interface into a volatile buffer that drains to flash at the program bandwidth
// (a fluid model: O(1) per write). Equations: model/README.md. Not thread-safe.
#include "model/ssd.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

namespace iorr::model {
namespace {

std::string Num(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

Status Range(std::string_view prefix, std::string_view field, double v, double lo, bool lo_open,
             double hi) {
  std::string what;
  if (!std::isfinite(v))
    what = "must be a finite number";
  else if (lo_open ? !(v > lo) : !(v >= lo))
    what = std::string(lo_open ? "must be > " : "must be >= ") + Num(lo) + " (got " + Num(v) + ")";
  else if (v > hi)
    what = "must be <= " + Num(hi) + " (got " + Num(v) + ")";
  else
    return Status();
  return Status::Error("\"" + std::string(prefix) + std::string(field) + "\": " + what);
}

// Flash is striped across channels in units of a page: a request of n pages uses up to n
// channels.
constexpr uint64_t kStripeBytes = 16 << 10;

class SsdModel final : public QueuedDevice {
 public:
  SsdModel(std::string name, const SsdParams& p, const DeviceSettings& s)
      : QueuedDevice(std::move(name), static_cast<uint64_t>(p.capacity_gb * 1e9 / kSectorBytes),
                     s.write_cache.value_or(p.write_cache), s.barriers, p.queue_depth, p.fua),
        wce_(write_cache()),
        plp_(p.power_loss_protection),
        read_ns_(std::llround(p.read_latency_us * 1e3)),
        write_ns_(std::llround(p.write_latency_us * 1e3)),
        program_ns_(std::llround(p.program_latency_us * 1e3)),
        read_ns_per_byte_(1e3 / p.read_mb_per_s * p.channels),  // one channel's share
        program_ns_per_byte_(1e3 / p.write_mb_per_s * p.channels),
        drain_ns_per_byte_(1e3 / p.write_mb_per_s),
        bus_ns_per_byte_(1e3 / p.interface_mb_per_s),
        buffer_bytes_(p.buffer_mib * 1048576.0),
        flush_ns_(std::llround(p.flush_ms * 1e6)),
        flush_ns_per_byte_(p.flush_per_mb_ms * 1e6 / 1e6),
        channel_free_(p.channels, 0),
        order_(p.channels) {
    std::iota(order_.begin(), order_.end(), 0u);
    heap_.reserve(p.queue_depth + 1);
  }

 private:
  struct Finishing {
    int64_t t;
    uint64_t seq;
    uint32_t slot;
  };
  static bool Later(const Finishing& a, const Finishing& b) {
    return a.t != b.t ? a.t > b.t : a.seq > b.seq;
  }

  int64_t NextFinishNs() const override { return heap_.empty() ? kNever : heap_.front().t; }

  void Finish(int64_t t) override {
    while (!heap_.empty() && heap_.front().t <= t) {
      std::pop_heap(heap_.begin(), heap_.end(), Later);
      uint32_t slot = heap_.back().slot;
      heap_.pop_back();
      Done(slot, t);
    }
  }

  void Accept(uint32_t slot, int64_t t) override {
    const Command& c = command(slot);
    int64_t done = t;
    switch (c.op) {
      case BlockOp::kRead:
        done = OnChannels(t, c.bytes, read_ns_, read_ns_per_byte_);
        ++stats_.media_reads;
        stats_.media_bytes_read += c.bytes;
        break;
      case BlockOp::kWrite:
        ++stats_.media_writes;
        stats_.media_bytes_written += c.bytes;
        if (wce_ && (!c.fua || plp_))
          done = Buffered(t, c.bytes);
        else  // straight to flash: cache off, or FUA without power-loss protection
          done = OnChannels(t, c.bytes, program_ns_, program_ns_per_byte_);
        break;
      case BlockOp::kDiscard:
        done = t + write_ns_;
        break;
      case BlockOp::kFlush: {
        done = t + flush_ns_;
        if (!plp_) {  // the volatile buffer must reach flash
          done += std::llround(BufferedBytes(t) * flush_ns_per_byte_);
          drain_end_ = std::min(drain_end_, done);
        }
        break;
      }
    }
    heap_.push_back(Finishing{done, seq_++, slot});
    std::push_heap(heap_.begin(), heap_.end(), Later);
  }

  void Dispatch(int64_t) override {}  // work starts on Accept

  // Serves `bytes` on the earliest free channels, cut into one part per stripe unit (at most
  // one per channel). Returns when the last part is done.
  int64_t OnChannels(int64_t t, uint64_t bytes, int64_t latency, double ns_per_byte) {
    size_t n = channel_free_.size();
    size_t k = std::clamp<uint64_t>((bytes + kStripeBytes - 1) / kStripeBytes, 1, n);
    if (k < n) {
      std::nth_element(order_.begin(), order_.begin() + static_cast<ptrdiff_t>(k - 1), order_.end(),
                       [&](uint32_t a, uint32_t b) {
                         return channel_free_[a] != channel_free_[b]
                                    ? channel_free_[a] < channel_free_[b]
                                    : a < b;
                       });
    }
    int64_t part = latency + std::llround(static_cast<double>(bytes) / k * ns_per_byte);
    int64_t done = t;
    for (size_t i = 0; i < k; ++i) {
      int64_t& free = channel_free_[order_[i]];
      free = std::max(free, t) + part;
      done = std::max(done, free);
    }
    stats_.media_busy_ns += part * static_cast<int64_t>(k) / static_cast<int64_t>(n);
    return done;
  }

  // Bytes still in the volatile buffer at t.
  double BufferedBytes(int64_t t) const {
    return drain_end_ > t ? static_cast<double>(drain_end_ - t) / drain_ns_per_byte_ : 0;
  }

  // A write into the buffer: it waits for room, crosses the interface, and joins the drain.
  int64_t Buffered(int64_t t, uint64_t bytes) {
    double b = static_cast<double>(bytes);
    int64_t admit = t;
    if (buffer_bytes_ > 0) {
      double room_needed = std::min(b, buffer_bytes_);
      admit = std::max<int64_t>(
          t, drain_end_ - std::llround((buffer_bytes_ - room_needed) * drain_ns_per_byte_));
    }
    int64_t start = std::max(admit, bus_free_);
    int64_t xfer = std::llround(b * bus_ns_per_byte_);
    bus_free_ = start + xfer;
    int64_t drain = std::llround(b * drain_ns_per_byte_);
    drain_end_ = std::max(drain_end_, start) + drain;
    stats_.media_busy_ns += drain;
    return start + write_ns_ + xfer;
  }

  bool wce_;
  bool plp_;
  int64_t read_ns_, write_ns_, program_ns_;
  double read_ns_per_byte_, program_ns_per_byte_, drain_ns_per_byte_, bus_ns_per_byte_;
  double buffer_bytes_;
  int64_t flush_ns_;
  double flush_ns_per_byte_;
  std::vector<int64_t> channel_free_;
  std::vector<uint32_t> order_;
  std::vector<Finishing> heap_;
  uint64_t seq_ = 0;
  int64_t bus_free_ = 0;
  int64_t drain_end_ = 0;  // when the buffer will be empty if nothing more comes
};

}  // namespace

Status ValidateSsd(const SsdParams& p, std::string_view pre) {
  Status s;
  if (!(s = Range(pre, "capacity_gb", p.capacity_gb, 0, true, 1e6))) return s;
  if (!(s = Range(pre, "read_latency_us", p.read_latency_us, 0, false, 1e6))) return s;
  if (!(s = Range(pre, "write_latency_us", p.write_latency_us, 0, false, 1e6))) return s;
  if (!(s = Range(pre, "program_latency_us", p.program_latency_us, 0, false, 1e6))) return s;
  if (!(s = Range(pre, "read_mb_per_s", p.read_mb_per_s, 0, true, 1e6))) return s;
  if (!(s = Range(pre, "write_mb_per_s", p.write_mb_per_s, 0, true, 1e6))) return s;
  if (!(s = Range(pre, "interface_mb_per_s", p.interface_mb_per_s, 0, true, 1e6))) return s;
  if (!(s = Range(pre, "channels", p.channels, 1, false, 4096))) return s;
  if (!(s = Range(pre, "queue_depth", p.queue_depth, 1, false, 65536))) return s;
  if (!(s = Range(pre, "buffer_mib", p.buffer_mib, 0, false, 1 << 20))) return s;
  if (p.write_cache && p.buffer_mib * 1048576.0 < kSectorBytes)
    return Status::Error("\"" + std::string(pre) +
                         "write_cache\": is true but buffer_mib holds "
                         "no sector");
  if (!(s = Range(pre, "flush_ms", p.flush_ms, 0, false, 1e4))) return s;
  if (!(s = Range(pre, "flush_per_mb_ms", p.flush_per_mb_ms, 0, false, 1e4))) return s;
  return Status();
}

Result<std::unique_ptr<DeviceModel>> MakeSsd(std::string name, const SsdParams& p,
                                             const DeviceSettings& settings) {
  if (Status s = ValidateSsd(p); !s) return s;
  if (settings.write_cache.value_or(p.write_cache) && p.buffer_mib * 1048576.0 < kSectorBytes)
    return Status::Error("\"buffer_mib\": the write cache is on but holds no sector");
  return std::unique_ptr<DeviceModel>(new SsdModel(std::move(name), p, settings));
}

}  // namespace iorr::model
