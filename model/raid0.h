// RAID 0 as Linux md does it (mdadm -l 0): the array is cut into chunks dealt round-robin to
// the members; a request is split at chunk boundaries, each member gets one contiguous piece;
// a flush (or PREFLUSH) goes to every member, and a PREFLUSH request's data follows once all
// members have flushed. md is bio-based: no queue of its own, each member queues its pieces.
// Instances are not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/device.h"
#include "traces/status.h"

namespace iorr::model {

class Raid0Model final : public DeviceModel {
 public:
  // members: 2 or more; chunk_kib: a multiple of 4. The settings are the array's; the members
  // should have been made with the same.
  static Result<std::unique_ptr<Raid0Model>> Make(std::string name,
                                                  std::vector<std::unique_ptr<DeviceModel>> members,
                                                  uint32_t chunk_kib,
                                                  const DeviceSettings& settings);

  size_t members() const { return members_.size(); }
  const DeviceModel& member(size_t i) const { return *members_[i]; }
  uint64_t chunk_sectors() const { return chunk_; }

  // The array's own counts (what reached md), plus the members' media counts, cache hits and
  // the largest member media busy time.
  DeviceStats stats() const override;

 private:
  struct Parent {
    uint64_t tag = 0;
    int64_t submit_ns = 0;
    BlockRequest req;
    uint32_t pending = 0;
    bool pre = false;  // running the PREFLUSH step
  };
  struct Piece {
    uint64_t sector = 0;
    uint64_t sectors = 0;
  };

  Raid0Model(std::string name, std::vector<std::unique_ptr<DeviceModel>> members,
             uint64_t chunk_sectors, uint64_t capacity, bool write_cache, bool barriers);
  void DoSubmit(const BlockRequest& r, uint64_t tag) override;
  int64_t DoNextEventNs() const override;
  void DoStep(int64_t t) override;
  void FlushAll(uint32_t p, int64_t t);
  void SubmitData(uint32_t p, int64_t t);
  void Collect();

  std::vector<std::unique_ptr<DeviceModel>> members_;
  uint64_t chunk_;
  std::vector<Parent> parents_;
  std::vector<uint32_t> free_;
  std::vector<Piece> pieces_;  // scratch, one per member
};

}  // namespace iorr::model
