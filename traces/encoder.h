// ChunkEncoder turns the events of one stream (a thread of a process) into one chunk: a
// columnar payload (FORMAT.md) compressed into one zstd frame, preceded by its metadata record.
//
// Built for the recorder's rules: all memory is taken once in Init(); Add() never allocates,
// locks or throws; the file compiles with -fno-exceptions. One encoder per stream; not
// thread-safe (each instance is used by one thread at a time).
#pragma once

#include <cstddef>
#include <cstdint>

#include "traces/event.h"
#include "traces/format.h"

typedef struct ZSTD_CCtx_s ZSTD_CCtx;
typedef struct ZSTD_outBuffer_s ZSTD_outBuffer;

namespace iorr::trace {

struct ChunkLimits {
  uint32_t max_events = 65536;       // events per chunk
  uint32_t section_bytes = 1 << 20;  // capacity of each payload section
  uint32_t max_strings = 32768;      // distinct strings per chunk
  int zstd_level = 1;  // 1 meets both the size and the encode-speed targets (README figures)
};

// A zstd compression context whose memory is all taken by Init (a static context: it fails
// rather than allocates). One per compressing thread; encoders borrow it in Finish.
class ChunkCompressor {
 public:
  ChunkCompressor() = default;
  ~ChunkCompressor();
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;
  bool Init(int level);
  // The same on memory the caller owns (WorkspaceBytes(level) bytes): no malloc at all.
  bool Init(int level, void* workspace, size_t bytes);
  // The same on memory map(WorkspaceBytes(level)) gives at the first use (cctx): a user whose
  // payloads are all stored never runs zstd's code, whose first run in a process costs some
  // 20 us of page faults. The caller frees workspace() (workspace_bytes() long), if set.
  bool InitLazy(int level, void* (*map)(size_t));
  // InitLazy's workspace now, bytes long (0: WorkspaceBytes(level)); true when there is one.
  bool MapWorkspace(size_t bytes = 0);
  void* workspace() const { return map_ ? memory_ : nullptr; }
  size_t workspace_bytes() const { return map_ ? bytes_ : 0; }
  static size_t WorkspaceBytes(int level);
  static unsigned BuiltVersion();  // the zstd header's ZSTD_VERSION_NUMBER this was built with
  // The context, set up at the first use (zstd's set-up reads the CPU's features, which costs
  // a trap to the hypervisor per cpuid in a VM, and touches the workspace): a recorded process
  // whose chunks are all small never pays it. nullptr when it cannot be set up.
  ZSTD_CCtx* cctx();

 private:
  ZSTD_CCtx* cctx_ = nullptr;
  void* workspace_ = nullptr;       // malloc'ed by Init(level)
  void* memory_ = nullptr;          // the workspace in use
  void* (*map_)(size_t) = nullptr;  // InitLazy's
  size_t bytes_ = 0;
  int level_ = 0;
};

class ChunkEncoder {
 public:
  enum class AddResult { kOk, kFull, kInvalid };
  static constexpr size_t kMinSlots = 128;  // the string table's first size (2 KiB)
  // A compact start's room per section (and for the strings): all in the memory's first page.
  static constexpr uint32_t kCompactBytes = 384;
  // Payloads of at most this many bytes are stored in their frame, not compressed.
  static constexpr size_t kStoredMaxBytes = 1024;

  ChunkEncoder() = default;
  ~ChunkEncoder();
  ChunkEncoder(const ChunkEncoder&) = delete;
  ChunkEncoder& operator=(const ChunkEncoder&) = delete;

  // Takes all memory (malloc). time_unit_ns: the trace's resolution. False when memory is short
  // or the limits are out of range.
  bool Init(const ChunkLimits& limits, uint32_t time_unit_ns);
  // The same on memory the caller owns (MemoryBytes(limits) bytes, 16-byte aligned, zeroed or
  // not), e.g. from mmap in the recorder. The encoder never frees it.
  bool Init(const ChunkLimits& limits, uint32_t time_unit_ns, void* memory);
  static size_t MemoryBytes(const ChunkLimits& limits);

  // Keeps the sections (kCompactBytes each) and the strings in the first page of the memory
  // until a chunk there is full (Add says kFull: that chunk ends early, the next one has the
  // limits' layout) or an event does not fit an empty chunk there (the limits' layout at once);
  // then the limits' layout for good. A short-lived stream (a short process's thread) touches
  // one page, not one per section. On an empty encoder only (after Init or Begin).
  void StartCompact();

  // Starts a new, empty chunk for a stream.
  void Begin(uint64_t stream_id, uint32_t pid, uint32_t tid);

  // Adds one event (its pid and tid are the stream's and are not read). kFull: nothing was
  // added; Finish the chunk and Add again. kInvalid: an unknown call, strings longer than a
  // quarter of a section, or a `dirents` listing of max_strings names or more (its names join
  // the string table, FORMAT.md 6.2).
  AddResult Add(const Event& e);

  uint32_t events() const { return events_; }
  bool empty() const { return events_ == 0; }
  // The earliest start among the pending events (streams of imports may go back in time).
  int64_t min_start_ns() const { return min_start_u_ * static_cast<int64_t>(unit_); }

  // Bytes Finish may write at most.
  size_t MaxOutputBytes() const;

  // Compresses the chunk into out: the chunk record, then its zstd frame. `watermark_ns`:
  // no event written to the file after this chunk starts before it. Returns the bytes
  // written, or 0 on a compression error. Leaves the encoder empty (same stream).
  size_t Finish(ChunkCompressor& compressor, int64_t watermark_ns, uint8_t* out, size_t cap);

  // The metadata of the last finished chunk.
  const ChunkMeta& last_meta() const { return meta_; }

 private:
  struct Sec {
    uint8_t* begin = nullptr;
    uint8_t* p = nullptr;
    uint8_t* end = nullptr;
    size_t room() const { return static_cast<size_t>(end - p); }
  };
  struct Slot {
    uint32_t hash;
    uint32_t offset;  // in arena_
    uint32_t len;
    uint32_t index;  // + 1; 0 marks an empty slot
  };
  Slot& Probe(std::string_view s, uint32_t hash);
  int32_t Intern(std::string_view s, uint32_t hash);  // table index, -1 when new
  void AddListedName(uint32_t offset, uint32_t len);  // a name in the arena joins the table
  bool Compress(ZSTD_CCtx* cctx, const uint8_t* prefix, size_t prefix_len, size_t raw_size,
                ZSTD_outBuffer* zout) const;
  bool PutStoredFrame(const uint8_t* prefix, size_t prefix_len, size_t raw_size,
                      ZSTD_outBuffer* zout) const;
  void UseTable(size_t n);
  void GrowTable();
  bool PutString(const Arg& a, bool listing);
  void Layout(bool compact);  // the sections and the arena (on an empty encoder)
  bool Fits(size_t nargs, size_t str_bytes, size_t nstr) const;
  void Reset();

  ChunkLimits limits_{};
  uint32_t unit_ = 1000;
  uint8_t* memory_ = nullptr;
  size_t memory_bytes_ = 0;
  Sec sec_[kNumSections];
  uint8_t* raw_ = nullptr;  // serialized payload, before compression
  size_t raw_cap_ = 0;
  char* arena_ = nullptr;  // full strings of the table
  uint32_t arena_used_ = 0;
  uint32_t arena_cap_ = 0;
  Slot* slot_region_ = nullptr;  // every table size's place (MaxSlots in encoder.cc)
  Slot* slots_ = nullptr;        // the table in use
  uint32_t slot_mask_ = 0;
  uint32_t max_slots_ = 0;
  uint32_t strings_ = 0;
  uint32_t prev_new_offset_ = 0, prev_new_len_ = 0;
  uint32_t last_ref_ = UINT32_MAX;  // table index last referenced or added by a reference
  bool owns_memory_ = false;
  bool compact_ = false;       // StartCompact's layout in use
  bool compact_full_ = false;  // a compact chunk said kFull: the next one takes the full layout

  uint64_t stream_id_ = 0;
  uint32_t pid_ = 0, tid_ = 0;
  uint32_t events_ = 0;
  int64_t first_start_u_ = 0, last_start_u_ = 0, prev_start_u_ = 0, max_start_u_ = 0,
          min_start_u_ = 0;
  ChunkMeta meta_{};
};

// Floor division of a time in ns by the unit (correct for negative times).
constexpr int64_t ToUnits(int64_t ns, uint32_t unit) {
  int64_t q = ns / static_cast<int64_t>(unit);
  return (ns % static_cast<int64_t>(unit) < 0) ? q - 1 : q;
}

}  // namespace iorr::trace
