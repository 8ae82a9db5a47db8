// Per-call CPU costs of a file system, measured by `iorr calibrate DIR --calls` on the file
// system DIR is on, for the file-system models (model/fs_model.h).
//
// Why: a recorded call's duration is its CPU on the recording's file system (tmpfs, say) plus
// any wait for that disk. Another file system spends different CPU on the same call: ext4
// creates a file in about 11 us where tmpfs takes 2 to 3. With a table for the modelled file
// system, a call it covers costs the table's cost, whatever it took in the recording: the
// recorded duration is the recording file system's CPU, and the recording host's state with it
// (three tmpfs recordings of the same tar, one after another, spent 0.67, 0.67 and 2.40 s in
// write: 0.23 against 0.98 us per KiB, the host's memory). Taking the larger of the two, as
// until stop 12, passed that noise on (whole-tarball predictions from 3.8 to 5.4 s; with the
// table alone, 3.76 to 3.78 s). Calls the table has no category for, and calls on an fd the
// model does not know as an opened file (a pipe, a tty, a socket: the wait may be for another
// program), keep their recorded duration.
//
// File format (JSON, strict: unknown keys and missing categories are errors):
//   {"type": "call-costs", "fs": "ext4", "description": "...",
//    "calls_us": {"create": 10.9, "open": 2.1, "close": 1.0, "write": 2.5, "write_per_kib": 0.1,
//                 "read": 1.2, "read_per_kib": 0.05, "setattr": 1.8, "stat": 0.6,
//                 "unlink": 8.0, "mkdir": 20.0, "rmdir": 15.0, "rename": 9.0,
//                 "unlink_deferred": 15.0, "writeback_per_file": 9.0}}  (the last two optional)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "traces/event.h"
#include "traces/status.h"

namespace iorr::model {

enum class CallCategory : uint8_t {
  kCreate,
  kOpen,
  kClose,
  kWrite,
  kRead,
  kSetAttr,
  kStat,
  kUnlink,
  kMkdir,
  kRmdir,
  kRename,
  kNone,
};
inline constexpr int kCallCategories = 11;
// JSON names, in CallCategory order.
inline constexpr std::string_view kCallCategoryNames[kCallCategories] = {
    "create", "open",   "close", "write", "read",  "setattr",
    "stat",   "unlink", "mkdir", "rmdir", "rename"};

struct CallCosts {
  std::string fs;  // the file system they were measured on (statfs type name)
  double ns[kCallCategories] = {};
  double write_ns_per_kib = 0, read_ns_per_kib = 0;
  // Work an unlink leaves to the file system's background threads (xfs inode inactivation),
  // which sync waits for: charged to the unlink. Optional in the file ("unlink_deferred").
  double unlink_deferred_ns = 0;
  // Writeback's own work per file it writes (ext4_writepages, block allocation, building the
  // bios), which a program waiting for it (sync, fsync) waits for: charged per file written on
  // its behalf. Optional in the file ("writeback_per_file").
  double writeback_ns_per_file = 0;

  // The category of a call (kNone for calls the table does not cover).
  static CallCategory CategoryOf(const trace::Event& e);
  // The table's CPU for e, in ns (0 for kNone).
  int64_t CostNs(const trace::Event& e) const;
};

Result<CallCosts> ParseCallCosts(std::string_view json, const std::string& origin);
Result<CallCosts> LoadCallCosts(const std::string& path);

}  // namespace iorr::model
