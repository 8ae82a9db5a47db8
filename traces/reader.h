// Reading traces: TraceReader walks the records of a file in order and hands out chunks;
// ChunkCursor decodes one chunk's events; MergedReader yields the events of all streams in
// start-time order (or in effect order: MergeOrder) with memory bounded by the chunks whose
// events are not yet due (chunk watermarks, FORMAT.md). Input is untrusted: every failure is a
// Status with the byte offset, never a crash. Instances are not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/event.h"
#include "traces/format.h"
#include "traces/header.h"
#include "traces/status.h"
#include "traces/varint.h"

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
  // The start (ns) of the event Next would decode, without decoding the rest of it (its start
  // is read once: Next takes it from here). False at the end, or when it cannot be read (Next
  // will say why). After an Init that succeeded.
  bool PeekStart(int64_t* start_ns) {
    if (!peeked_start_) {
      if (index_ >= chunk_->meta.events) return false;
      const uint8_t* q = GetVarint(sec_[kSecStarts].p, sec_[kSecStarts].end, &peeked_ds_);
      if (q == nullptr) return false;
      sec_[kSecStarts].p = q;
      peeked_start_ = true;
    }
    // As Next computes it (wrapping arithmetic).
    *start_ns = static_cast<int64_t>(
        (static_cast<uint64_t>(prev_start_u_) + static_cast<uint64_t>(UnZigZag(peeked_ds_))) *
        static_cast<uint64_t>(unit_));
    return true;
  }
  // Its start and end (ns).
  bool PeekTimes(int64_t* start_ns, int64_t* end_ns);
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
  bool peeked_start_ = false;       // the next event's start delta was read (PeekStart)
  uint64_t peeked_ds_ = 0;
  Status status_;
};

// The order MergedReader yields events in.
enum class MergeOrder {
  // By start: (start, pid, tid, file order). What the trace says happened when.
  kStart,
  // By effect, for readers that follow fds by number, file positions or fd tables: start
  // order, except that an event whose interval contains the events that follow it in its
  // thread (a call a signal handler interrupted: the handler's calls are recorded nested in
  // it, start >= its start and end <= its end) comes right after the last of them, as strace
  // prints "<unfinished ...>", the handler's calls, then "<... resumed>", when it is a call
  // that can have been interrupted before it took effect (TakesEffectAfterNested). Nested
  // events may hold nested events of their own. The interrupted call took effect when it
  // resumed (an open of a FIFO, an accept, an open restarted by SA_RESTART hand out their fd at
  // their end), so a handler that opened and closed the fd number the call then got is seen
  // doing so first. Events that only overlap (a later end) stay in start order. A trace without
  // nesting comes out exactly as in start order; the check costs a look at the start of each
  // such call's successor in its chunk, and a chunk loaded early now and then (while a call
  // outlasts the watermark, its thread's next event is not known yet).
  kEffect,
};

// Whether a signal handler's calls recorded inside e can have run before e took effect: e can
// wait interruptibly for another party, and so be interrupted, run the handler, and be
// restarted or go on (an open, which waits for a FIFO's peer or a device; accept; reads,
// writes and copies, which wait on pipes, sockets and terminals; flock and fcntl's F_SETLKW and
// F_OFD_SETLKW). The kernel runs a handler only when a call waits so or returns: inside any
// other call the handler ran after the call's work, which start order has right (a close has
// released its fd, which the handler may have been given again: a recorded case).
bool TakesEffectAfterNested(const Event& e);

// All events of a trace in start-time order (ties: pid, tid, then file order), or in effect
// order (MergeOrder).
class MergedReader {
 public:
  explicit MergedReader(TraceReader* reader, MergeOrder order = MergeOrder::kStart)
      : reader_(reader), effect_(order == MergeOrder::kEffect) {}
  // Next event; string views valid until the next call. False at the end or on an error.
  bool Next(Event* e) { return effect_ ? NextEffect(e) : NextStart(e); }
  const Status& status() const { return status_; }
  uint64_t order_violations() const { return order_violations_; }  // broken watermark promises
  size_t max_live_chunks() const { return max_live_; }
  // Effect order: whether the event Next gave last was held back for events nested in it, and
  // when it resumed: the latest end of the events of its thread given out since its start
  // (the last nested call's end). For any other event, its start. A replay issues the event
  // then; a model counts its own time from then to its end.
  bool held_back() const { return last_held_; }
  int64_t resumed_ns() const { return resumed_ns_; }
  uint64_t held_back_events() const { return held_count_; }  // so far

 private:
  struct Stream;
  struct Live {
    std::unique_ptr<Chunk> chunk;
    ChunkCursor cursor;
    Event next;
    bool has_next = false;     // next holds its next event
    Stream* stream = nullptr;  // effect order: its thread
    bool unordered = false;    // effect order: its stream's flag (Stream::unordered)
  };
  struct Later {
    bool operator()(const Live* a, const Live* b) const;
  };
  // Effect order: an event held back for the events nested in it, with its own strings (its
  // chunk's decoder moves on, and may be freed, meanwhile).
  struct Held {
    Event e;
    std::string s[kMaxArgs];
    int64_t inner_end = INT64_MIN;  // the latest end of its thread's events given out since
  };
  // Effect order: one thread (pid, tid).
  struct Stream {
    uint64_t key = 0;
    std::vector<Live*> lives;  // its chunks with events left, in load order
    int64_t max_last_start = INT64_MIN;  // ns, over the chunks of it loaded while it was known
    bool unordered = false;  // a chunk began before an earlier one's last start: scan them all
    std::vector<Held> held;  // held back, the innermost last
  };
  bool LoadChunk();              // false at the end of the file
  bool Advance(Live* l);         // decodes l's next event and queues it, or frees l
  bool Queue(Live* l);           // queues l's decoded next event, or frees l if it has none
  void Emit(Live* l, Event* e);  // hands out l's next event (l is advanced on the next call)
  bool Due(const Live* l) const { return file_done_ || l->next.start_ns < watermark_ns_; }
  bool NextStart(Event* e);
  // Effect order.
  bool NextEffect(Event* e);
  // The earliest start of the events not given out yet that are known in s (other than `except`
  // and l's decoded next, which the caller counts), with its end; false if none is loaded.
  bool StreamNext(const Stream* s, const Live* except, int64_t* start, int64_t* end) const;
  // Whether the thread's next event after `outer`, starting at `start` (if `known`), is nested
  // in it: 1 yes, 0 no, -1 not known until more chunks are loaded.
  int NestedNext(const Event& outer, bool known, int64_t start, int64_t end) const;
  // l's next event: held back (1), out (0), unknown (-1). Plain is the quick answer of most
  // events: its thread's next event is known to start at or after its end.
  bool Plain(Live* l) {
    const Event& o = l->next;
    int64_t next;
    return o.end_ns <= o.start_ns || !TakesEffectAfterNested(o) ||
           (!l->unordered && l->cursor.PeekStart(&next) && next >= o.end_ns &&
            (next < watermark_ns_ || file_done_));
  }
  int NestsInNext(Live* l);
  int HeldReady(Stream* s);   // s's innermost held event: out now (1), not yet (0), unknown (-1)
  bool Hold(Live* l);  // holds l's next event back and advances l; false when it cannot
  void EmitEffect(Live* l, Event* e) {
    Emit(l, e);
    last_held_ = false;
    resumed_ns_ = e->start_ns;
    if (held_now_ != 0) Inside(l->stream, e->end_ns);
  }
  // An event of s went out that ended at end: the innermost event s holds back held it.
  void Inside(Stream* s, int64_t end);
  void EmitHeld(Stream* s, Event* e);
  void Forget(Stream* s);     // erases s if nothing of it is left

  TraceReader* reader_;
  bool effect_ = false;
  std::priority_queue<Live*, std::vector<Live*>, Later> heap_;
  std::vector<std::unique_ptr<Live>> live_;
  Live* pending_ = nullptr;  // emitted last; advanced on the next call
  int64_t watermark_ns_ = INT64_MIN;
  bool file_done_ = false;
  int64_t last_emitted_ = INT64_MIN;
  uint64_t order_violations_ = 0;
  size_t max_live_ = 0;
  Status status_;
  // Effect order.
  std::unordered_map<uint64_t, Stream> streams_;
  Stream* check_ = nullptr;  // its thread's event went out last, and it holds one back
  Held out_;                 // the held event given out last (its strings live until the next call)
  bool last_held_ = false;
  int64_t resumed_ns_ = 0;
  uint64_t held_count_ = 0;
  uint64_t held_now_ = 0;  // events held back now, over all streams
  // A hostile trace's nesting (events each inside the one before, millions deep) may not hold
  // the reader's memory: past these, a call goes out in start order.
  static constexpr uint64_t kMaxHeld = 4096;
  static constexpr uint64_t kMaxHeldBytes = 64u << 20;  // their strings
  uint64_t held_bytes_ = 0;
};

}  // namespace iorr::trace
