// The trace header: what was recorded, where and how (FORMAT.md, record type 1). HeaderFields
// are key/value strings with documented keys; the encoder is allocation-free for the recorder.
// Header (the owning form) is a plain value type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iorr::trace {

// Documented header keys (FORMAT.md). Writers may add others; readers keep unknown ones.
namespace key {
inline constexpr std::string_view kTool = "tool";                // "iorr 0.1.0 record", ...
inline constexpr std::string_view kSource = "source";            // record | strace | jsonl
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kKernel = "kernel";            // uname -srvm
inline constexpr std::string_view kClocksource = "clocksource";
inline constexpr std::string_view kRamBytes = "ram_bytes";
inline constexpr std::string_view kDirtyRatio = "vm.dirty_ratio";
inline constexpr std::string_view kDirtyBackgroundRatio = "vm.dirty_background_ratio";
inline constexpr std::string_view kDirtyBytes = "vm.dirty_bytes";
inline constexpr std::string_view kDirtyBackgroundBytes = "vm.dirty_background_bytes";
inline constexpr std::string_view kDirtyExpire = "vm.dirty_expire_centisecs";
inline constexpr std::string_view kDirtyWriteback = "vm.dirty_writeback_centisecs";
inline constexpr std::string_view kCmdline = "cmdline";          // argv joined by spaces, shell-quoted
inline constexpr std::string_view kCwd = "cwd";
inline constexpr std::string_view kUmask = "umask";              // octal
inline constexpr std::string_view kMountPrefix = "mount:";       // "mount:/mnt" -> "dev fstype opts"
}  // namespace key

struct HeaderField {
  std::string_view key;
  std::string_view value;
};

struct HeaderCore {
  uint16_t version = 0;
  uint32_t time_unit_ns = 1000;
  int64_t start_mono_ns = 0;  // CLOCK_MONOTONIC at the start; event times are relative to it
  int64_t start_wall_ns = 0;  // CLOCK_REALTIME at the same instant
};

// Encodes a header record (frame included) into out[0, cap). Returns bytes written, or 0 when
// cap is too small.
size_t EncodeHeaderRecord(const HeaderCore& core, const HeaderField* fields, size_t n, uint8_t* out,
                          size_t cap);
size_t HeaderRecordSize(const HeaderField* fields, size_t n);

struct Header {
  HeaderCore core;
  std::vector<std::pair<std::string, std::string>> fields;

  // The value of a key, or empty.
  std::string_view Get(std::string_view k) const {
    for (const auto& [fk, fv] : fields)
      if (fk == k) return fv;
    return {};
  }
  void Set(std::string_view k, std::string_view v) {
    for (auto& [fk, fv] : fields)
      if (fk == k) {
        fv = v;
        return;
      }
    fields.emplace_back(k, v);
  }
};

// Fills fields that describe this machine now: host, kernel, clocksource, RAM and vm.dirty_*.
void AddMachineFields(Header& h);

}  // namespace iorr::trace
