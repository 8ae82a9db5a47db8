// Header encoding and machine description; see header.h.
#include "traces/header.h"

#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "traces/crc32c.h"
#include "traces/format.h"
#include "traces/varint.h"

namespace iorr::trace {

size_t HeaderRecordSize(const HeaderField* fields, size_t n) {
  size_t body = sizeof(kFileMagic) + 2 + 4 * kMaxVarintBytes;
  for (size_t i = 0; i < n; ++i)
    body += 2 * kMaxVarintBytes + fields[i].key.size() + fields[i].value.size();
  return 8 + 1 + body + 4;
}

size_t EncodeHeaderRecord(const HeaderCore& core, const HeaderField* fields, size_t n, uint8_t* out,
                          size_t cap) {
  size_t need = HeaderRecordSize(fields, n);
  if (cap < need || need - 13 > kMaxRecordBytes) return 0;
  // The body is built in place after the frame header, then framed by FrameRecord's layout.
  uint8_t* body = out + 9;
  uint8_t* p = body;
  std::memcpy(p, kFileMagic, sizeof(kFileMagic));
  p += sizeof(kFileMagic);
  *p++ = static_cast<uint8_t>(core.version);
  *p++ = static_cast<uint8_t>(core.version >> 8);
  p = PutVarint(p, core.time_unit_ns);
  p = PutVarint(p, ZigZag(core.start_mono_ns));
  p = PutVarint(p, ZigZag(core.start_wall_ns));
  p = PutVarint(p, n);
  for (size_t i = 0; i < n; ++i) {
    p = PutVarint(p, fields[i].key.size());
    std::memcpy(p, fields[i].key.data(), fields[i].key.size());
    p += fields[i].key.size();
    p = PutVarint(p, fields[i].value.size());
    std::memcpy(p, fields[i].value.data(), fields[i].value.size());
    p += fields[i].value.size();
  }
  size_t body_len = static_cast<size_t>(p - body);
  // Framed by hand (FrameRecord would need a second buffer): magic, size, type, body, CRC.
  uint8_t* q = PutFixed32(out, kSkippableMagic);
  q = PutFixed32(q, static_cast<uint32_t>(1 + body_len + 4));
  *q = static_cast<uint8_t>(RecordType::kHeader);
  p = PutFixed32(p, Crc32c(out + 8, 1 + body_len, 0));
  return static_cast<size_t>(p - out);
}

namespace {
std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

void AddMachineFields(Header& h) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) h.Set(key::kHost, host);
  struct utsname u {};
  if (uname(&u) == 0)
    h.Set(key::kKernel, std::string(u.sysname) + " " + u.release + " " + u.version + " " + u.machine);
  h.Set(key::kClocksource,
        ReadFirstLine("/sys/devices/system/clocksource/clocksource0/current_clocksource"));
  struct sysinfo si {};
  if (sysinfo(&si) == 0)
    h.Set(key::kRamBytes, std::to_string(static_cast<uint64_t>(si.totalram) * si.mem_unit));
  const std::pair<std::string_view, const char*> vm[] = {
      {key::kDirtyRatio, "/proc/sys/vm/dirty_ratio"},
      {key::kDirtyBackgroundRatio, "/proc/sys/vm/dirty_background_ratio"},
      {key::kDirtyBytes, "/proc/sys/vm/dirty_bytes"},
      {key::kDirtyBackgroundBytes, "/proc/sys/vm/dirty_background_bytes"},
      {key::kDirtyExpire, "/proc/sys/vm/dirty_expire_centisecs"},
      {key::kDirtyWriteback, "/proc/sys/vm/dirty_writeback_centisecs"},
  };
  for (const auto& [k, path] : vm) h.Set(k, ReadFirstLine(path));
}

}  // namespace iorr::trace
