// Helpers for the device-model tests: shipped profiles, deterministic pseudo-random sectors,
// closed-loop drivers. Not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "model/device.h"
#include "model/profile.h"

namespace iorr::model::testing {

inline std::string ProfilePath(const std::string& name) {
  return std::string(IORR_SOURCE_DIR) + "/model/profiles/" + name + ".json";
}

inline Profile LoadShipped(const std::string& name) {
  auto p = LoadProfile(ProfilePath(name));
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? p.value() : Profile{};
}

inline std::unique_ptr<DeviceModel> Make(const Profile& p, DeviceSettings s = {}) {
  auto d = MakeDevice(p, s);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? std::move(d.value()) : nullptr;
}

// splitmix64: a fixed, seeded sequence.
class Rng {
 public:
  explicit Rng(uint64_t seed) : x_(seed) {}
  uint64_t Next() {
    uint64_t z = (x_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // A uniformly random multiple of `align` sectors with room for `sectors` before `limit`.
  uint64_t Sector(uint64_t limit, uint64_t sectors, uint64_t align = 8) {
    return Next() % ((limit - sectors) / align) * align;
  }

 private:
  uint64_t x_;
};

inline BlockRequest Req(int64_t t, BlockOp op, uint64_t sector, uint64_t bytes, uint8_t flags = 0) {
  BlockRequest r;
  r.time_ns = t;
  r.op = op;
  r.sector = sector;
  r.bytes = bytes;
  r.flags = flags;
  return r;
}

}  // namespace iorr::model::testing
