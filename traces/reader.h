// Reading traces: TraceReader walks the records of a file in order and hands out chunks;
// ChunkCursor decodes one chunk's events; MergedReader yields the events of all streams in
// start-time order with memory bounded by the chunks whose events are not yet due (chunk
// watermarks, FORMAT.md). Input is untrusted: every failure is a Status with the byte offset,
// never a crash. Instances are not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "traces/event.h"
#include "traces/format.h"
#include "traces/header.h"
#include "traces/status.h"

typedef struct ZSTD_DCtx_s ZSTD_DCtx;

namespace iorr::trace {

struct Chunk {
  ChunkMeta meta;
  uint64_t offset = 0;                // file offset of the chunk record
  uint64_t sequence = 0;              // position among the file's chunks
  uint16_t version = kFormatVersion;  // the file's format version (string references differ)
  std::vector<uint8_t> raw;           // decompressed payload
};

// What a read found out about the file's integrity.
struct ReadInfo {
  uint64_t bytes = 0;            // bytes consumed
  bool end_record = false;       // the writer closed the trace cleanly
  EndRecord end;                 // valid when end_record
  uint64_t truncated_bytes = 0;  // bytes of an incomplete last frame (killed writer)
  uint64_t skipped_chunks = 0;   // damaged chunks skipped (salvage mode)
  uint64_t skipped_records = 0;  // unknown record types skipped
  std::vector<std::string> notes;
};

class TraceReader {
 public:
  struct Options {
    bool salvage = false;  // skip damaged chunks instead of failing
    // Chunks come back with their metadata only (raw stays empty): no checksum, no
    // decompression. For walking a file's structure fast (counting, checking it is whole).
    bool metadata_only = false;
  };
  // Opens a trace ("-" for stdin) and reads its header.
  static Result<std::unique_ptr<TraceReader>> Open(const std::string& path, Options options);
  static Result<std::unique_ptr<TraceReader>> Open(const std::string& path) {
    return Open(path, Options{});
  }
  ~TraceReader();

  const Header& header() const { return header_; }
  uint32_t time_unit_ns() const { return header_.core.time_unit_ns; }

  // Reads the next chunk of any kind into *chunk. False at the end of the file or on an error:
  // then status() tells which.
  bool NextChunk(Chunk* chunk);
  const Status& status() const { return status_; }
  const ReadInfo& info() const { return info_; }
  // One line on what was lost, or empty: "trace truncated: 1234 bytes of an incomplete frame".
  std::string IntegrityWarning() const;

 private:
  TraceReader() = default;
  // Makes n bytes at the read position contiguous in buf_; false at EOF (short) or error.
  bool Fill(size_t n);
  bool Fail(uint64_t offset, const std::string& what);
  bool Resync();  // salvage: skips to the next iorr record magic
  Status ReadHeader();

  int fd_ = -1;
  bool own_fd_ = false;
  Options options_;
  Header header_;
  std::vector<uint8_t> buf_;
  size_t begin_ = 0, end_ = 0;  // unread bytes in buf_
  bool eof_ = false;
  uint64_t offset_ = 0;     // file offset of buf_[begin_]
  uint64_t file_size_ = 0;  // regular files: their size, to refuse impossible claims early
  uint64_t chunks_ = 0;
  Status status_;
  ReadInfo info_;
  ZSTD_DCtx* dctx_ = nullptr;
};

// Decodes the events of one events chunk, in stream order.
class ChunkCursor {
 public:
  // Keeps a pointer to chunk, which must outlive the cursor.
  Status Init(const Chunk* chunk, uint32_t time_unit_ns);
  // Decodes the next event into *e (string views valid until the next call). False at the end
  // or on an error (status()).
  bool Next(Event* e);
  const Status& status() const { return status_; }
  const Chunk& chunk() const { return *chunk_; }
  uint64_t index() const { return index_; }

 private:
  bool Fail(const std::string& what);
  const Chunk* chunk_ = nullptr;
  int64_t unit_ = 1000;
  struct Range {
    const uint8_t* p;
    const uint8_t* end;
  } sec_[kNumSections] = {};
  uint64_t index_ = 0;
  int64_t prev_start_u_ = 0;
  std::vector<uint32_t> str_off_, str_len_;  // string table
  std::vector<char> arena_;
  uint32_t prev_new_ = UINT32_MAX;
  uint32_t last_ref_ = UINT32_MAX;  // version 2: the entry last referenced or added
  Status status_;
};

// All events of a trace in start-time order (ties: pid, tid, then file order).
class MergedReader {
 public:
  explicit MergedReader(TraceReader* reader) : reader_(reader) {}
  // Next event; string views valid until the next call. False at the end or on an error.
  bool Next(Event* e);
  const Status& status() const { return status_; }
  uint64_t order_violations() const { return order_violations_; }  // broken watermark promises
  size_t max_live_chunks() const { return max_live_; }

 private:
  struct Live {
    std::unique_ptr<Chunk> chunk;
    ChunkCursor cursor;
    Event next;
    bool has_next = false;  // next holds its next event
  };
  struct Later {
    bool operator()(const Live* a, const Live* b) const;
  };
  bool LoadChunk();              // false at the end of the file
  bool Advance(Live* l);         // decodes l's next event and queues it, or frees l
  bool Queue(Live* l);           // queues l's decoded next event, or frees l if it has none
  void Emit(Live* l, Event* e);  // hands out l's next event (l is advanced on the next call)

  TraceReader* reader_;
  std::priority_queue<Live*, std::vector<Live*>, Later> heap_;
  std::vector<std::unique_ptr<Live>> live_;
  Live* pending_ = nullptr;  // emitted last; advanced on the next call
  int64_t watermark_ns_ = INT64_MIN;
  bool file_done_ = false;
  int64_t last_emitted_ = INT64_MIN;
  uint64_t order_violations_ = 0;
  size_t max_live_ = 0;
  Status status_;
};

}  // namespace iorr::trace
