// Device profiles: JSON files (model/profiles/*.json, every key documented in
// model/profiles/README.md) that describe a disk for the device models, read with strict
// validation: an unknown or missing key, a wrong type or an impossible value gives a one-line
// error naming the field (`hdd-7200.json: "rpm": must be > 0 (got 0)`). Pure functions apart
// from LoadProfile reading files; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/device.h"
#include "model/params.h"
#include "traces/status.h"

namespace iorr::model {

enum class DeviceType : uint8_t { kHdd, kSsd, kRaid0 };

struct Profile {
  std::string name;
  std::string description;
  DeviceType type = DeviceType::kHdd;
  HddParams hdd;                 // kHdd
  SsdParams ssd;                 // kSsd
  uint32_t chunk_kib = 64;       // kRaid0
  std::vector<Profile> members;  // kRaid0
};

// Parses and checks a profile. `origin` starts error messages ("hdd-7200.json"). RAID
// members given by name are read from `dir`/NAME.json (with `dir` empty they are an error).
Result<Profile> ParseProfile(std::string_view json_text, std::string_view origin,
                             const std::string& dir);

// Reads a profile file; members given by name are looked up beside it.
Result<Profile> LoadProfile(const std::string& path);

// Builds the device model a profile describes, with the given settings (applied to every
// member of an array too).
Result<std::unique_ptr<DeviceModel>> MakeDevice(const Profile& p, const DeviceSettings& s);

}  // namespace iorr::model
