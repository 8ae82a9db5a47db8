// The HDD model's geometry: where a sector lies (track, angle), how long a seek of a given
// distance takes, how fast the media streams. model/README.md gives the equations and their
// sources. Immutable after Make; safe to share between threads. MakeHdd builds the device
// (model/device.h), whose instances are not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model/device.h"
#include "model/params.h"
#include "traces/status.h"

namespace iorr::model {

class HddGeometry {
 public:
  // Checks every field of p (the error names it: `"rpm": must be > 0 (got 0)`, prefixed by
  // field_prefix inside the quotes) and fits the seek curve.
  static Result<HddGeometry> Make(const HddParams& p, std::string_view field_prefix = "");

  uint64_t sectors() const { return sectors_; }
  double rotation_ns() const { return rotation_ns_; }
  double cylinders() const { return cylinders_; }
  uint32_t heads() const { return heads_; }

  // Continuous track number of a sector, counted from the outer edge (0) inwards. Its
  // fractional part is the sector's angle on the track, in revolutions.
  double Track(uint64_t lba) const;
  // The sector at a (continuous) track number; the inverse of Track.
  double LbaAtTrack(double track) const;
  // Media rate at a sector, bytes per second: linear in the sector number from outer to inner.
  double RateBytesPerSec(uint64_t lba) const;
  // Time for n sectors from lba to pass under the head.
  double TransferNs(uint64_t lba, uint64_t n) const {
    return (Track(lba + n) - Track(lba)) * rotation_ns_;
  }
  // Seek over a radial distance in cylinders: 0 under half a cylinder, else
  // c + a*sqrt(u) + b*u with u = (d - 1) / (cylinders - 1).
  double SeekNs(double cylinders) const;
  // The fitted curve's mean over pairs of uniformly random sectors (= average_seek_ms).
  double mean_seek_ns() const { return mean_seek_ns_; }
  double seek_a_ns() const { return a_ns_; }
  double seek_b_ns() const { return b_ns_; }
  double seek_c_ns() const { return c_ns_; }

 private:
  HddGeometry() = default;
  void ComputeMoments(double* p, double* ms, double* ml) const;
  void ComputeMomentsUncached(double* p, double* ms, double* ml) const;

  uint64_t sectors_ = 0;
  uint32_t heads_ = 1;
  double rotation_ns_ = 0;
  double spt_outer_ = 0;  // sectors per track at sector 0
  double spt_slope_ = 0;  // change of sectors per track per sector
  double total_tracks_ = 0;
  double cylinders_ = 0;
  double a_ns_ = 0, b_ns_ = 0, c_ns_ = 0;
  double mean_seek_ns_ = 0;
};

// A 3.5" hard disk: seek curve, rotation, zoned media rate, write-back cache destaged in
// elevator order, read-ahead, command queueing with shortest-positioning-time-first.
Result<std::unique_ptr<DeviceModel>> MakeHdd(std::string name, const HddParams& p,
                                             const DeviceSettings& settings);

}  // namespace iorr::model
