// See repair.h.
#include "traces/repair.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "traces/format.h"
#include "traces/varint.h"

namespace iorr::trace {
namespace {

constexpr uint32_t kPaddingMagic = kSkippableBase;  // another program's skippable frame

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool PwriteAll(int fd, const uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return true;
}

// Moves [from, size) to `to` (< from) and cuts the file to its new end.
Status CutOut(int fd, uint64_t to, uint64_t from, uint64_t size) {
  std::vector<uint8_t> buf(1 << 20);
  while (from < size) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - from));
    ssize_t r = ::pread(fd, buf.data(), n, static_cast<off_t>(from));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Status::Error(Errno("reading the trace back"));
    if (!PwriteAll(fd, buf.data(), static_cast<size_t>(r), to))
      return Status::Error(Errno("rewriting the trace"));
    from += static_cast<uint64_t>(r);
    to += static_cast<uint64_t>(r);
  }
  if (::ftruncate(fd, static_cast<off_t>(to)) != 0)
    return Status::Error(Errno("cutting the trace"));
  return {};
}

}  // namespace

Result<std::vector<TornRegion>> RepairTornRecords(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::Error(Errno("fstat of the trace"));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::vector<TornRegion> torn;
  if (size == 0) return torn;
  void* mem = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) return Status::Error(Errno("mapping the trace"));
  const auto* base = static_cast<const uint8_t*>(mem);
  static const uint8_t kMagic[4] = {0x5E, 0x2A, 0x4D, 0x18};  // kSkippableMagic, little-endian
  uint64_t o = 0;  // the header record (holding the file magic) comes first
  while (o < size) {
    if (size_t n = WholeRecordAt(base + o, size - o)) {
      o += n;
      continue;
    }
    // Not a whole record: the next whole one of ours ends the piece; none: the incomplete end.
    uint64_t next = o + 1;
    bool found = false;
    while (next < size) {
      const uint8_t* hit = std::search(base + next, base + size, kMagic, kMagic + 4);
      next = static_cast<uint64_t>(hit - base);
      if (next >= size) break;
      if (WholeRecordAt(hit, size - next) != 0) {
        found = true;
        break;
      }
      ++next;
    }
    if (!found) break;
    torn.push_back({o, next - o, false});
    o = next;
  }
  ::munmap(mem, size);

  // Frames in place first (offsets unchanged), then the cuts, from the last one back.
  for (TornRegion& t : torn) {
    if (t.bytes < 8 || t.bytes - 8 > kMaxRecordBytes) {
      t.removed = true;
      continue;
    }
    uint8_t head[8];
    PutFixed32(PutFixed32(head, kPaddingMagic), static_cast<uint32_t>(t.bytes - 8));
    if (!PwriteAll(fd, head, sizeof(head), t.offset))
      return Status::Error(Errno("rewriting the trace"));
  }
  uint64_t end = size;
  for (auto it = torn.rbegin(); it != torn.rend(); ++it) {
    if (!it->removed) continue;
    if (Status s = CutOut(fd, it->offset, it->offset + it->bytes, end); !s.ok()) return s;
    end -= it->bytes;
  }
  return torn;
}

}  // namespace iorr::trace
