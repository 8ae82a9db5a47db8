// A block request as a file-system model or a block-trace reader hands it to a device model
// (model/device.h): when it was issued, where, how long, which operation and which flags.
// Plain value type; no shared state.
#pragma once

#include <cstdint>
#include <string_view>

namespace iorr::model {

inline constexpr uint64_t kSectorBytes = 512;

enum class BlockOp : uint8_t { kRead, kWrite, kFlush, kDiscard };

// Request flags, as Linux's REQ_* bits mean them (include/linux/blk_types.h).
enum BlockFlag : uint8_t {
  kPreflush = 1u << 0,  // REQ_PREFLUSH: flush the volatile cache before this request
  kFua = 1u << 1,       // REQ_FUA: this write is on stable media when it completes
  kSync = 1u << 2,      // REQ_SYNC: someone waits for it (no effect on the device models)
  kMeta = 1u << 3,      // REQ_META: file-system metadata (no effect on the device models)
};

// What the bytes are, for accounting (bytes written by kind); no effect on timing.
enum class BlockKind : uint8_t { kData, kJournal, kMetadata };
inline constexpr int kBlockKinds = 3;

struct BlockRequest {
  int64_t time_ns = 0;  // when the request reaches the device's queue
  uint64_t sector = 0;  // first sector, in 512-byte units
  uint64_t bytes = 0;   // length; 0 for a flush (a write of 0 bytes with kPreflush is a flush)
  BlockOp op = BlockOp::kRead;
  uint8_t flags = 0;  // BlockFlag bits
  BlockKind kind = BlockKind::kData;

  bool has(BlockFlag f) const { return (flags & f) != 0; }
  uint64_t sectors() const { return (bytes + kSectorBytes - 1) / kSectorBytes; }
};

inline std::string_view BlockOpName(BlockOp op) {
  switch (op) {
    case BlockOp::kRead:
      return "read";
    case BlockOp::kWrite:
      return "write";
    case BlockOp::kFlush:
      return "flush";
    case BlockOp::kDiscard:
      return "discard";
  }
  return "?";
}

inline std::string_view BlockKindName(BlockKind k) {
  switch (k) {
    case BlockKind::kData:
      return "data";
    case BlockKind::kJournal:
      return "journal";
    case BlockKind::kMetadata:
      return "metadata";
  }
  return "?";
}

}  // namespace iorr::model
