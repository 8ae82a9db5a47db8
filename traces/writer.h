// TraceWriter: the tools' way to write a trace (importers, tests, replay output). Routes events
// to one ChunkEncoder per (pid, tid) stream, flushes full chunks with a watermark, and writes the
// header and end records. Not thread-safe; one writer per file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "traces/encoder.h"
#include "traces/header.h"
#include "traces/status.h"

namespace iorr::trace {

struct WriterOptions {
  uint32_t time_unit_ns = 1000;
  ChunkLimits limits;
  // A stream with pending events and none added since this long before the promise (an idle
  // thread) goes out as a partial chunk, checked every 4096 events: otherwise one early event
  // of an idle thread holds every later chunk's watermark back to it, and a merged reader holds
  // everything written after it. Busy streams still fill their chunks (flushing every stream
  // whose oldest event is this old, as the recorder does for its bounded loss, made the strace
  // import of the Linux tar 168 chunks and 3.40 bytes/event instead of 12 and 2.99).
  // 0: only full chunks and ended streams.
  int64_t idle_flush_ns = 100'000'000;
  // Each stream's encoder starts compact (ChunkEncoder::StartCompact), as the recorder's do.
  bool compact_start = false;
};

class TraceWriter {
 public:
  // Creates (truncates) path, or writes to stdout for "-", and writes the header record.
  static Result<std::unique_ptr<TraceWriter>> Create(const std::string& path, Header header,
                                                     const WriterOptions& options);
  ~TraceWriter();

  // Adds an event to its (pid, tid) stream. A thread's events should come in start order: a
  // chunk keeps them as added, so one that goes back in time is read back out of time order.
  Status Add(const Event& e);
  // The caller promises that no event added from now on starts before ns. Without promises a
  // merged reader must hold the whole trace; keep them as tight as the source allows. Promises
  // also pace the flush of idle streams (WriterOptions::idle_flush_ns).
  void Promise(int64_t ns) { promise_ = ns; }
  // Flushes a stream's pending events and forgets it (a thread exited; its tid may be reused).
  Status EndStream(uint32_t pid, uint32_t tid);
  // A free-text note stored in the trace (record type 4).
  Status AddNote(std::string_view text);
  // Flushes everything and writes the end record. `incomplete`: the source lost events.
  Status Close(uint64_t dropped_events = 0, bool incomplete = false);

  uint64_t events() const { return events_; }
  uint64_t chunks() const { return chunks_; }
  uint64_t bytes() const { return bytes_; }
  uint32_t time_unit_ns() const { return options_.time_unit_ns; }

 private:
  struct Stream {
    uint64_t id = 0;
    int64_t last_start_ns = 0;  // of the latest event added
    std::unique_ptr<ChunkEncoder> encoder;
  };
  TraceWriter(std::FILE* f, bool owned, const WriterOptions& options);
  Status Write(const void* p, size_t n);
  Status Flush(Stream& s);
  Status Flush(Stream& s, int64_t watermark);
  // Flushes, as partial chunks, the streams with pending events and none started since ns.
  Status FlushIdle(int64_t ns);
  // Flushes the streams with pending events for which pred(stream).
  template <typename Pred>
  Status FlushAll(Pred pred);
  int64_t Watermark(const Stream* except) const;

  ChunkCompressor compressor_;
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  bool closed_ = false;
  WriterOptions options_;
  std::map<std::pair<uint32_t, uint32_t>, Stream> streams_;
  std::map<std::pair<uint32_t, uint32_t>, Stream>::iterator last_ = streams_.end();
  std::vector<std::unique_ptr<ChunkEncoder>> spare_;  // encoders of ended streams, for reuse
  std::unique_ptr<uint8_t[]> out_;  // uninitialised: only the bytes written are touched
  size_t out_cap_ = 0;
  uint64_t next_stream_id_ = 0;
  int64_t promise_ = std::numeric_limits<int64_t>::min();
  uint64_t events_ = 0, chunks_ = 0, bytes_ = 0;
};

}  // namespace iorr::trace
