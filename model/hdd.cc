// The HDD model: geometry and seek curve (HddGeometry), and the drive (HddModel): one actuator
// serving host commands and destaging a write-back cache, an interface for cache hits, a
// read-ahead stream. Equations and sources: model/README.md. Instances are not thread-safe.
#include "model/hdd.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "model/extent_set.h"

namespace iorr::model {
namespace {

std::string Num(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

Status Bad(std::string_view prefix, std::string_view field, const std::string& what) {
  std::string m = "\"";
  m.append(prefix);
  m.append(field);
  m += "\": ";
  m += what;
  return Status::Error(std::move(m));
}

// Checks lo < v (or lo <= v) and v <= hi; "must be > 0 (got -1)".
Status Range(std::string_view prefix, std::string_view field, double v, double lo, bool lo_open,
             double hi = INFINITY) {
  if (!std::isfinite(v)) return Bad(prefix, field, "must be a finite number");
  if (lo_open ? !(v > lo) : !(v >= lo))
    return Bad(
        prefix, field,
        std::string(lo_open ? "must be > " : "must be >= ") + Num(lo) + " (got " + Num(v) + ")");
  if (v > hi) return Bad(prefix, field, "must be <= " + Num(hi) + " (got " + Num(v) + ")");
  return Status();
}

constexpr int kMomentPoints = 1024;

}  // namespace

// ---- HddGeometry ----

Result<HddGeometry> HddGeometry::Make(const HddParams& p, std::string_view pre) {
  Status s;
  if (!(s = Range(pre, "capacity_gb", p.capacity_gb, 0, true, 1e6))) return s;
  if (!(s = Range(pre, "rpm", p.rpm, 0, true, 1e5))) return s;
  if (!(s = Range(pre, "heads", p.heads, 1, false, 1024))) return s;
  if (!(s = Range(pre, "track_to_track_ms", p.track_to_track_ms, 0, true, 1e3))) return s;
  if (!(s = Range(pre, "average_seek_ms", p.average_seek_ms, p.track_to_track_ms, true, 1e3)))
    return Bad(pre, "average_seek_ms",
               "must be more than track_to_track_ms (" + Num(p.track_to_track_ms) + ", got " +
                   Num(p.average_seek_ms) + ")");
  if (!(s = Range(pre, "full_stroke_ms", p.full_stroke_ms, p.average_seek_ms, true, 1e3)))
    return Bad(pre, "full_stroke_ms",
               "must be more than average_seek_ms (" + Num(p.average_seek_ms) + ", got " +
                   Num(p.full_stroke_ms) + ")");
  if (!(s = Range(pre, "outer_mb_per_s", p.outer_mb_per_s, 0, true, 1e6))) return s;
  if (!(s = Range(pre, "inner_mb_per_s", p.inner_mb_per_s, 0, true, 1e6))) return s;
  if (p.inner_mb_per_s > p.outer_mb_per_s)
    return Bad(pre, "inner_mb_per_s",
               "must not exceed outer_mb_per_s (" + Num(p.outer_mb_per_s) + ", got " +
                   Num(p.inner_mb_per_s) + ")");
  if (!(s = Range(pre, "interface_mb_per_s", p.interface_mb_per_s, 0, true, 1e6))) return s;
  if (!(s = Range(pre, "command_overhead_ms", p.command_overhead_ms, 0, false, 1e3))) return s;
  if (!(s = Range(pre, "cache_mib", p.cache_mib, 0, false, 1 << 20))) return s;
  if (p.write_cache && p.cache_mib * 2048 < 1)
    return Bad(pre, "write_cache", "is true but cache_mib holds no sector");
  if (!(s = Range(pre, "read_ahead_kib", p.read_ahead_kib, 0, false, 1 << 20))) return s;
  if (!(s = Range(pre, "queue_depth", p.queue_depth, 1, false, 1024))) return s;

  HddGeometry g;
  g.sectors_ = static_cast<uint64_t>(p.capacity_gb * 1e9 / kSectorBytes);
  g.heads_ = p.heads;
  g.rotation_ns_ = 60e9 / p.rpm;
  double rot_s = 60.0 / p.rpm;
  g.spt_outer_ = p.outer_mb_per_s * 1e6 * rot_s / kSectorBytes;
  double spt_inner = p.inner_mb_per_s * 1e6 * rot_s / kSectorBytes;
  if (spt_inner < 1)
    return Bad(pre, "inner_mb_per_s",
               "gives less than one sector per revolution at " + Num(p.rpm) + " rpm");
  g.spt_slope_ = g.sectors_ > 0 ? (spt_inner - g.spt_outer_) / static_cast<double>(g.sectors_) : 0;
  g.total_tracks_ = g.Track(g.sectors_);
  g.cylinders_ = g.total_tracks_ / g.heads_;
  if (g.cylinders_ < 2)
    return Bad(pre, "capacity_gb", "gives fewer than 2 cylinders (" + Num(g.cylinders_) + ")");

  // Fit c + a*sqrt(u) + b*u: c is the track-to-track time, the curve passes through the full
  // stroke at u = 1 and its mean over random sector pairs is the average seek.
  double c = p.track_to_track_ms * 1e6, full = p.full_stroke_ms * 1e6;
  double avg = p.average_seek_ms * 1e6;
  double pm, ms, ml;
  g.ComputeMoments(&pm, &ms, &ml);
  double lo = c * pm + ml * (full - c), hi = c * pm + (2 * ms - ml) * (full - c);
  if (avg < lo || avg > hi) {
    bool below = avg < lo;
    return Bad(pre, "average_seek_ms",
               Num(p.average_seek_ms) + (below ? " is less than " : " is more than ") +
                   Num(std::round((below ? lo : hi) / 1e3) / 1e3) + ", the " +
                   (below ? "least" : "most") +
                   " a sqrt-then-linear seek curve through track_to_track_ms (" +
                   Num(p.track_to_track_ms) + ") and full_stroke_ms (" + Num(p.full_stroke_ms) +
                   ") can average on this disk");
  }
  g.c_ns_ = c;
  g.a_ns_ = ((avg - c * pm) - ml * (full - c)) / (ms - ml);
  g.b_ns_ = full - c - g.a_ns_;
  g.mean_seek_ns_ = c * pm + g.a_ns_ * ms + g.b_ns_ * ml;
  return g;
}

double HddGeometry::Track(uint64_t lba) const {
  double l = static_cast<double>(lba);
  if (spt_slope_ == 0) return l / spt_outer_;
  return std::log1p(spt_slope_ * l / spt_outer_) / spt_slope_;
}

double HddGeometry::LbaAtTrack(double track) const {
  if (spt_slope_ == 0) return track * spt_outer_;
  return spt_outer_ * std::expm1(spt_slope_ * track) / spt_slope_;
}

double HddGeometry::RateBytesPerSec(uint64_t lba) const {
  double spt = spt_outer_ + spt_slope_ * static_cast<double>(lba);
  return spt * kSectorBytes / (rotation_ns_ / 1e9);
}

double HddGeometry::SeekNs(double d) const {
  if (d < 0.5) return 0;
  double u = d <= 1 ? 0 : std::min(1.0, (d - 1) / (cylinders_ - 1));
  return c_ns_ + a_ns_ * std::sqrt(u) + b_ns_ * u;
}

// Moments of the seek distance over pairs of uniformly random sectors, by the midpoint rule on
// kMomentPoints sector quantiles: P(seek > 0), E[sqrt(u)], E[u]. Within a quantile cell the
// mean distance of two random points is a third of the cell's width.
void HddGeometry::ComputeMoments(double* p, double* ms, double* ml) const {
  // The same disk is made again for every row of a sweep (and for checking the profile): the
  // last result is kept, for what the moments depend on.
  struct Memo {
    uint64_t sectors;
    uint32_t heads;
    double cylinders, spt_outer, spt_slope;
    double p, ms, ml;
  };
  thread_local std::optional<Memo> memo;
  if (memo && memo->sectors == sectors_ && memo->heads == heads_ && memo->cylinders == cylinders_ &&
      memo->spt_outer == spt_outer_ && memo->spt_slope == spt_slope_) {
    *p = memo->p;
    *ms = memo->ms;
    *ml = memo->ml;
    return;
  }
  ComputeMomentsUncached(p, ms, ml);
  memo = Memo{sectors_, heads_, cylinders_, spt_outer_, spt_slope_, *p, *ms, *ml};
}

void HddGeometry::ComputeMomentsUncached(double* p, double* ms, double* ml) const {
  constexpr int m = kMomentPoints;
  std::vector<double> x(m), w(m);
  double n = static_cast<double>(sectors_);
  for (int i = 0; i < m; ++i) {
    x[i] = Track(static_cast<uint64_t>(n * (i + 0.5) / m));
    w[i] = Track(static_cast<uint64_t>(n * (i + 1) / m)) - Track(static_cast<uint64_t>(n * i / m));
  }
  double sp = 0, ss = 0, sl = 0;
  auto add = [&](double d, double weight) {
    if (d < 0.5) return;
    double u = d <= 1 ? 0 : std::min(1.0, (d - 1) / (cylinders_ - 1));
    sp += weight;
    ss += weight * std::sqrt(u);
    sl += weight * u;
  };
  for (int i = 0; i < m; ++i) {
    add(w[i] / 3 / heads_, 1);
    for (int j = i + 1; j < m; ++j) add((x[j] - x[i]) / heads_, 2);
  }
  double total = static_cast<double>(m) * m;
  *p = sp / total;
  *ms = ss / total;
  *ml = sl / total;
}

// ---- HddModel ----

namespace {

constexpr uint32_t kNoSlot = ~uint32_t{0};
// Largest destage operation; lets reads in between long sequential destages.
constexpr uint64_t kMaxDestageSectors = 2048;
// A queued command older than this is served next whatever its positioning time (NCQ aging).
constexpr int64_t kAgeLimitNs = 500'000'000;
// A rotational wait within this of a whole revolution is rounding after a contiguous transfer.
constexpr double kSnapNs = 1000;

class HddModel final : public QueuedDevice {
 public:
  HddModel(std::string name, const HddParams& p, HddGeometry g, const DeviceSettings& s)
      : QueuedDevice(std::move(name), g.sectors(), s.write_cache.value_or(p.write_cache),
                     s.barriers, p.queue_depth, p.fua),
        geo_(std::move(g)),
        wce_(write_cache()),
        reorder_(p.reorder),
        overhead_ns_(std::llround(p.command_overhead_ms * 1e6)),
        bus_ns_per_byte_(1e3 / p.interface_mb_per_s),
        cache_sectors_(static_cast<uint64_t>(p.cache_mib * 2048)),
        ra_sectors_(static_cast<uint64_t>(p.read_ahead_kib * 2)),
        bus_(64),
        blocked_(64) {
    queue_.reserve(p.queue_depth);
    // Room for a cache full of 4 KiB writes, so that the dirty index stops allocating early.
    dirty_.Reserve(std::min<uint64_t>(cache_sectors_ / 8 + 1, 1 << 20));
  }

 private:
  enum class Mech : uint8_t { kIdle, kHost, kDestage, kFlushWait };
  struct Queued {
    uint32_t slot;
    int64_t since;
    double track;  // of its first sector
  };
  struct BusItem {
    int64_t t;
    uint32_t slot;
  };

  int64_t NextFinishNs() const override {
    int64_t t = bus_.empty() ? kNever : bus_.front().t;
    if (mech_ != Mech::kIdle && mech_end_ < t) t = mech_end_;
    return t;
  }

  void Finish(int64_t t) override {
    while (!bus_.empty() && bus_.front().t <= t) Done(bus_.pop_front().slot, t);
    if (mech_ == Mech::kIdle || mech_end_ > t) return;
    Mech m = mech_;
    mech_ = Mech::kIdle;
    switch (m) {
      case Mech::kHost: {
        const Command& c = command(mech_slot_);
        if (c.op == BlockOp::kRead && ra_sectors_ > 0) {
          // The media goes on reading after the request: a read-ahead stream.
          seg_lo_ = c.sector;
          seg_hi_ = c.sector + c.sectors;
          seg_track_ = geo_.Track(seg_hi_);
          seg_t_ = stream_t_;
          seg_cap_ = seg_hi_ + ra_sectors_;
          streaming_ = true;
        }
        Done(mech_slot_, t);
        break;
      }
      case Mech::kDestage:
        inflight_ = 0;
        while (!blocked_.empty() && CacheFits(command(blocked_.front()).sectors))
          CacheWrite(blocked_.pop_front(), t);
        break;
      case Mech::kFlushWait: {
        uint32_t s = flush_slot_;
        flush_slot_ = kNoSlot;
        Done(s, t);
        break;
      }
      case Mech::kIdle:
        break;
    }
  }

  void Accept(uint32_t slot, int64_t t) override {
    const Command& c = command(slot);
    uint64_t lo = c.sector, hi = c.sector + c.sectors;
    switch (c.op) {
      case BlockOp::kFlush:
        flush_slot_ = slot;
        flush_ready_ = t + overhead_ns_;
        return;
      case BlockOp::kDiscard:
        dirty_.Erase(lo, hi);
        DropSegment(lo, hi, t);
        Bus(slot, t, 0);
        return;
      case BlockOp::kRead:
        if (dirty_.Covers(lo, hi) || SegmentHit(lo, hi, t)) {
          ++stats_.cache_hits;
          Bus(slot, t, c.bytes);
          return;
        }
        break;
      case BlockOp::kWrite:
        DropSegment(lo, hi, t);
        if (wce_ && !c.fua) {
          if (blocked_.empty() && CacheFits(c.sectors))
            CacheWrite(slot, t);
          else
            blocked_.push_back(slot);
          return;
        }
        if (wce_) dirty_.Erase(lo, hi);  // a FUA write supersedes cached data
        break;
    }
    queue_.push_back(Queued{slot, t, geo_.Track(lo)});
  }

  void Dispatch(int64_t t) override {
    while (!blocked_.empty() && CacheFits(command(blocked_.front()).sectors))
      CacheWrite(blocked_.pop_front(), t);  // room made by a discard or a FUA write
    while (mech_ == Mech::kIdle) {
      if (flush_slot_ != kNoSlot) {  // a flush holds the drive until the cache is clean
        if (!dirty_.empty()) {
          StartDestage(t);
        } else {
          mech_ = Mech::kFlushWait;
          mech_end_ = std::max(t, flush_ready_);
        }
        return;
      }
      if (!blocked_.empty() && !dirty_.empty()) {  // writes wait for room
        StartDestage(t);
        return;
      }
      if (!queue_.empty()) {
        size_t i = Pick(t);
        uint32_t slot = queue_[i].slot;
        queue_.erase(queue_.begin() + static_cast<ptrdiff_t>(i));
        StartHost(slot, t);
        continue;  // a read that became a hit leaves the mechanism idle
      }
      if (wce_ && !dirty_.empty()) StartDestage(t);  // background destage when idle
      return;
    }
  }

  // The queued command to serve next: the oldest, or with reordering the one the head reaches
  // first (a command older than kAgeLimitNs goes first).
  size_t Pick(int64_t t) const {
    if (!reorder_ || queue_.size() == 1 || t - queue_[0].since > kAgeLimitNs) return 0;
    double from = HeadTrack(t);
    size_t best = 0;
    int64_t best_cost = kNever;
    for (size_t i = 0; i < queue_.size(); ++i) {
      const Command& c = command(queue_[i].slot);
      int64_t cost = c.op == BlockOp::kRead && Continues(c.sector, t)
                         ? 0
                         : PositionNs(t + overhead_ns_, from, queue_[i].track);
      if (cost < best_cost) {
        best_cost = cost;
        best = i;
      }
    }
    return best;
  }

  void StartHost(uint32_t slot, int64_t t) {
    const Command& c = command(slot);
    if (c.op == BlockOp::kRead) {
      uint64_t hi = c.sector + c.sectors;
      if (SegmentHit(c.sector, hi, t)) {  // read ahead while it waited
        ++stats_.cache_hits;
        Bus(slot, t, c.bytes);
        return;
      }
      if (Continues(c.sector, t)) {  // the stream reaches it without positioning
        stream_t_ = seg_t_ + std::llround((geo_.Track(hi) - seg_track_) * geo_.rotation_ns());
        streaming_ = false;
        mech_ = Mech::kHost;
        mech_slot_ = slot;
        mech_end_ = std::max(t + overhead_ns_, stream_t_);
        head_track_ = geo_.Track(hi);
        head_lba_ = hi;
        ++stats_.media_reads;
        stats_.media_bytes_read += c.sectors * kSectorBytes;
        stats_.media_busy_ns += mech_end_ - t;
        return;
      }
    }
    StartMedia(Mech::kHost, slot, t, overhead_ns_, c.sector, c.sectors, c.op == BlockOp::kWrite);
    stream_t_ = mech_end_;
  }

  void StartDestage(int64_t t) {
    StopStream(t);
    uint64_t lo = 0, hi = 0;
    dirty_.TakeNext(head_lba_, kMaxDestageSectors, &lo, &hi);
    inflight_ = hi - lo;
    StartMedia(Mech::kDestage, kNoSlot, t, 0, lo, hi - lo, true);
  }

  // A media operation at lba..lba+n from time t, after `pre` ns of command processing.
  void StartMedia(Mech kind, uint32_t slot, int64_t t, int64_t pre, uint64_t lba, uint64_t n,
                  bool write) {
    StopStream(t);
    int64_t start = t + pre;
    double to = geo_.Track(lba);
    int64_t position = PositionNs(start, head_track_, to);
    int64_t xfer = std::llround(geo_.TransferNs(lba, n));
    mech_ = kind;
    mech_slot_ = slot;
    mech_end_ = start + position + xfer;
    head_track_ = geo_.Track(lba + n);
    head_lba_ = lba + n;
    stats_.media_busy_ns += mech_end_ - t;
    if (write) {
      ++stats_.media_writes;
      stats_.media_bytes_written += n * kSectorBytes;
    } else {
      ++stats_.media_reads;
      stats_.media_bytes_read += n * kSectorBytes;
    }
  }

  // Seek from track `from` to track `to` starting at t, then the wait for the sector's angle
  // to come under the head (the platter's angle is t / rotation, from 0 at time 0).
  int64_t PositionNs(int64_t t, double from, double to) const {
    double seek = std::round(geo_.SeekNs(std::fabs(to - from) / geo_.heads()));
    double rot = geo_.rotation_ns();
    double arrive = static_cast<double>(t) + seek;
    double wait = (to - std::floor(to)) - std::fmod(arrive, rot) / rot;
    if (wait < 0) wait += 1;
    wait *= rot;
    if (wait > rot - kSnapNs) wait = 0;
    return static_cast<int64_t>(seek) + std::llround(wait);
  }

  // ---- read-ahead stream: [seg_lo_, Reach(t)) is in the buffer ----

  // Sectors read by t (plus a rounding allowance: Track and LbaAtTrack round-trip inexactly).
  double Reach(int64_t t) const {
    if (!streaming_) return static_cast<double>(seg_hi_);
    double track = seg_track_ + static_cast<double>(t - seg_t_) / geo_.rotation_ns();
    return std::min(geo_.LbaAtTrack(track) + 1e-3, static_cast<double>(seg_cap_));
  }
  double HeadTrack(int64_t t) const {
    return streaming_ ? geo_.Track(static_cast<uint64_t>(Reach(t))) : head_track_;
  }
  bool SegmentHit(uint64_t lo, uint64_t hi, int64_t t) {
    if (lo < seg_lo_ || static_cast<double>(hi) > Reach(t)) return false;
    if (streaming_ && Reach(t) < static_cast<double>(seg_cap_))
      seg_cap_ = std::max(seg_cap_, hi + ra_sectors_);  // the host made room in the buffer
    return true;
  }
  // A read from lo is met by the running stream: lo is buffered or being read now.
  bool Continues(uint64_t lo, int64_t t) const {
    if (!streaming_ || lo < seg_lo_) return false;
    double reach = Reach(t);
    return static_cast<double>(lo) <= reach && reach < static_cast<double>(seg_cap_);
  }
  void StopStream(int64_t t) {
    if (!streaming_) return;
    seg_hi_ = static_cast<uint64_t>(Reach(t));
    streaming_ = false;
    head_track_ = geo_.Track(seg_hi_);
    head_lba_ = seg_hi_;
  }
  void DropSegment(uint64_t lo, uint64_t hi, int64_t t) {
    if (hi <= seg_lo_ || lo >= std::max(seg_hi_, seg_cap_)) return;
    StopStream(t);
    seg_lo_ = seg_hi_;
  }

  // ---- write cache and interface ----

  bool CacheFits(uint64_t n) const {
    uint64_t used = dirty_.sectors() + inflight_;
    return used == 0 || used + n <= cache_sectors_;
  }
  void CacheWrite(uint32_t slot, int64_t t) {
    const Command& c = command(slot);
    dirty_.Insert(c.sector, c.sector + c.sectors);
    Bus(slot, t, c.bytes);
  }
  // Completes slot after command processing and moving `bytes` over the interface, which
  // serves one command at a time.
  void Bus(uint32_t slot, int64_t t, uint64_t bytes) {
    int64_t start = std::max(t, bus_free_);
    bus_free_ = start + overhead_ns_ + std::llround(static_cast<double>(bytes) * bus_ns_per_byte_);
    bus_.push_back(BusItem{bus_free_, slot});
  }

  HddGeometry geo_;
  bool wce_;
  bool reorder_;
  int64_t overhead_ns_;
  double bus_ns_per_byte_;
  uint64_t cache_sectors_;
  uint64_t ra_sectors_;

  Ring<BusItem> bus_;  // completions through the interface, in time order
  int64_t bus_free_ = 0;

  Mech mech_ = Mech::kIdle;
  uint32_t mech_slot_ = kNoSlot;
  int64_t mech_end_ = 0;
  double head_track_ = 0;
  uint64_t head_lba_ = 0;
  int64_t stream_t_ = 0;  // when the running host read's last sector passes the head

  bool streaming_ = false;
  uint64_t seg_lo_ = 0, seg_hi_ = 0, seg_cap_ = 0;
  double seg_track_ = 0;  // Track(seg_hi_)
  int64_t seg_t_ = 0;     // when seg_hi_ passed the head

  ExtentSet dirty_;
  uint64_t inflight_ = 0;      // sectors being destaged
  Ring<uint32_t> blocked_;     // cached writes waiting for room, in order
  std::vector<Queued> queue_;  // commands waiting for the mechanism, oldest first
  uint32_t flush_slot_ = kNoSlot;
  int64_t flush_ready_ = 0;
};

}  // namespace

Result<std::unique_ptr<DeviceModel>> MakeHdd(std::string name, const HddParams& p,
                                             const DeviceSettings& settings) {
  auto g = HddGeometry::Make(p);
  if (!g.ok()) return g.status();
  if (settings.write_cache.value_or(p.write_cache) && p.cache_mib * 2048 < 1)
    return Status::Error("\"cache_mib\": the write cache is on but holds no sector");
  return std::unique_ptr<DeviceModel>(
      new HddModel(std::move(name), p, std::move(g.value()), settings));
}

}  // namespace iorr::model
