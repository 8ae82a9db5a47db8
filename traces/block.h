// Block request events (the `block` pseudo-call, FORMAT.md §10): the phase and operation bits
// they store, and conversion from and to blktrace's rwbs strings ("FWFSM"), which tracefs prints
// for block_bio_queue, block_rq_issue and block_rq_complete. Header-only, constexpr, no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace iorr::trace::block {

// Where a request was seen (the `phase` argument). Values are file format: never renumber.
enum Phase : uint8_t {
  kQueue = 1,     // block_bio_queue: a bio as the file system submitted it (blkparse 'Q')
  kIssue = 2,     // block_rq_issue: a request handed to the driver (blkparse 'D')
  kComplete = 3,  // block_rq_complete: the driver finished it (blkparse 'C')
};

// The `op` argument: one operation bit and any flag bits. Values are file format.
enum Op : uint32_t {
  kRead = 1u << 0,          // R
  kWrite = 1u << 1,         // W
  kDiscard = 1u << 2,       // D
  kSecureErase = 1u << 3,   // DE
  kFlushOp = 1u << 4,       // F as the operation (REQ_OP_FLUSH, a request of the flush machinery)
  kOtherOp = 1u << 5,       // N (any other operation: zone management, write zeroes, ...)
  kPreflush = 1u << 8,      // F before the operation: REQ_PREFLUSH
  kFua = 1u << 9,           // F after the operation: REQ_FUA
  kReadahead = 1u << 10,    // A: REQ_RAHEAD
  kSync = 1u << 11,         // S: REQ_SYNC
  kMeta = 1u << 12,         // M: REQ_META
};
inline constexpr uint32_t kOpMask = 0xff;
inline constexpr uint32_t kKnownBits = 0x3f | 0x1f00;

inline char PhaseLetter(int64_t phase) {
  switch (phase) {
    case kQueue: return 'Q';
    case kIssue: return 'D';
    case kComplete: return 'C';
    default: return '?';
  }
}

// blk_fill_rwbs(): [F]op[F][A][S][M]. Returns false (and leaves *op alone) for a string that
// blk_fill_rwbs cannot have written.
inline bool ParseRwbs(std::string_view s, uint32_t* op) {
  uint32_t v = 0;
  size_t i = 0;
  auto is_op = [](char c) { return c == 'W' || c == 'R' || c == 'D' || c == 'N' || c == 'F'; };
  if (s.size() >= 2 && s[0] == 'F' && is_op(s[1])) {
    v |= kPreflush;
    i = 1;
  }
  if (i >= s.size()) return false;
  switch (s[i++]) {
    case 'W': v |= kWrite; break;
    case 'R': v |= kRead; break;
    case 'F': v |= kFlushOp; break;
    case 'N': v |= kOtherOp; break;
    case 'D':
      if (i < s.size() && s[i] == 'E') {
        v |= kSecureErase;
        ++i;
      } else {
        v |= kDiscard;
      }
      break;
    default: return false;
  }
  // The flag letters, each at most once and in blk_fill_rwbs's order.
  const char letters[] = {'F', 'A', 'S', 'M'};
  const uint32_t bits[] = {kFua, kReadahead, kSync, kMeta};
  size_t next = 0;
  for (; i < s.size(); ++i) {
    while (next < 4 && letters[next] != s[i]) ++next;
    if (next == 4) return false;
    v |= bits[next++];
  }
  *op = v;
  return true;
}

inline std::string FormatRwbs(uint64_t op) {
  std::string s;
  if (op & kPreflush) s += 'F';
  if (op & kWrite) s += 'W';
  else if (op & kSecureErase) s += "DE";
  else if (op & kDiscard) s += 'D';
  else if (op & kFlushOp) s += 'F';
  else if (op & kRead) s += 'R';
  else s += 'N';
  if (op & kFua) s += 'F';
  if (op & kReadahead) s += 'A';
  if (op & kSync) s += 'S';
  if (op & kMeta) s += 'M';
  return s;
}

// The block stream's place in a trace: pid 0, tid 1 (tid 0 of pid 0 is the snapshot).
// Whether a request's sector and size are ones a device can have: a hostile trace's (a request
// of 2^63 bytes) made fio's iolog 2^31 lines and the block model run out of memory (stop 30).
// Discards of a whole large device are split by the block layer well below 1 TiB.
inline constexpr bool PossibleRequest(int64_t sector, int64_t bytes) {
  return sector >= 0 && sector <= (int64_t{1} << 53) && bytes >= 0 && bytes <= (int64_t{1} << 40);
}

inline constexpr int32_t kStreamPid = 0;
inline constexpr int32_t kStreamTid = 1;

}  // namespace iorr::trace::block
