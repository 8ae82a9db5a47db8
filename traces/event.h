// One decoded event: a call with its times, result and arguments. A plain value; string
// arguments are views into the chunk they came from (valid until the reader moves on) or into
// storage the caller owns when writing.
#pragma once

#include <cstdint>
#include <string_view>

#include "traces/calls.h"

namespace iorr::trace {

struct Arg {
  int64_t i = 0;          // integer value (kinds stored as integers)
  std::string_view s;     // string value (kPath, kStr)
  bool null = false;      // string kinds: the pointer was NULL
  uint32_t string_id = 0; // decoded string kinds: 1 + index in the chunk's string table
};

// The FICLONE ioctl request (_IOW(0x94, 9, int), <linux/fs.h>; checked against it in
// replayer.cc), without that header here.
inline constexpr uint32_t kFiclone = 0x40049409;

struct Event {
  CallId call = CallId::kInvalid;
  uint32_t pid = 0;       // process (thread group) id
  uint32_t tid = 0;       // thread id
  int64_t start_ns = 0;   // call entry, ns since the trace's start (header.start_mono_ns)
  int64_t end_ns = 0;     // call return
  int64_t ret = 0;        // raw kernel result: >= 0, or -errno in [-4095, -1]
  Arg args[kMaxArgs];     // by the table's argument positions; kBuf positions are unused

  const CallSpec& spec() const { return Spec(call); }
  bool failed() const { return ret < 0 && ret >= -4095; }
  int err() const { return failed() ? static_cast<int>(-ret) : 0; }
  // An ioctl FICLONE (args: dest fd, request, source fd, size). The kernel reads the request as
  // 32 bits, its `unsigned int cmd`: a raw call with other bits above is a FICLONE too.
  bool IsFiclone() const {
    return call == CallId::ioctl && static_cast<uint32_t>(args[1].i) == kFiclone;
  }
};

}  // namespace iorr::trace
