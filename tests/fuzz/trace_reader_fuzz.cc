// libFuzzer target for the trace readers (TraceReader, ChunkCursor, MergedReader).
//
// Every input is written to a memfd and opened through /proc/self/fd/N, so the reader runs its
// real file path (open, read, Fill) and its API stays unchanged. Each input is read in normal mode
// (and in salvage mode when normal mode fails), once chunk by chunk with a ChunkCursor and twice
// through a MergedReader (start order and effect order), and the three are compared; every
// string the readers hand out is read byte by byte so ASan catches views into freed or foreign
// memory. Invariants the API promises are checked with Check() (abort => a libFuzzer crash).
//
// Checksums and zstd would stop almost every mutation at the first CRC, so inputs take one of
// three routes:
//   1. as is (a trace file, or garbage);
//   2. the same bytes with every record and payload checksum recomputed ("fixed up"), so that
//      mutated chunk metadata, headers and end records get past the CRCs;
//   3. inputs starting with "IOFZ" are a build script (below): the harness builds a trace from
//      chunk metadata and *uncompressed* payloads, compressing them itself, so that the fuzzer
//      mutates what ChunkCursor decodes directly.
//
// IOFZ script (all varints LEB128, s = zigzag varint):
//   "IOFZ" unit_selector(1 byte: 1, 10, 100, 1000 ns by value % 4) then ops until the input ends:
//   op byte; op & 7:
//     0-3  events chunk:  pid tid events s:first_start s:last_start s:watermark raw_len raw[raw_len]
//     4    other chunk:   kind(1 byte), then as for 0-3
//     5    note:          len bytes[len]
//     6    end record:    events chunks dropped flags
//     7    truncate:      k — drop the last k bytes built so far and stop
//   op flags for chunks: 0x80 damage the payload checksum, 0x40 claim raw_size + 1,
//                        0x20 damage the chunk record's checksum.
// tests/fuzz/make_corpus.cc writes seeds in this form from real traces.
//
// Work per input is bounded: the input is at most -max_len bytes and the harness stops after
// kMaxEventsPerPass events and kMaxChunksPerPass chunks per pass.
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "traces/crc32c.h"
#include "traces/format.h"
#include "traces/header.h"
#include "traces/reader.h"
#include "traces/varint.h"

namespace iorr::trace {
namespace {

constexpr uint64_t kMaxEventsPerPass = 1u << 20;
constexpr uint64_t kMaxChunksPerPass = 1u << 16;

volatile uint64_t g_sink;  // keeps the touched bytes alive

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "trace_reader_fuzz: invariant violated: %s\n", what);
  std::abort();
}

uint64_t Mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001B3ull + (h >> 29); }

uint64_t Touch(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = Mix(h, static_cast<uint8_t>(c));  // every byte: ASan checks each read
  return h;
}

// Reads every field of an event the way a consumer would (spec, args by the table's positions)
// and returns an order-independent digest of it.
uint64_t TouchEvent(const Event& e) {
  const CallSpec* spec = SpecOf(e.call);
  Check(spec != nullptr, "event with a call the table does not have");
  uint64_t h = Mix(0, static_cast<uint64_t>(e.call));
  h = Mix(h, e.pid);
  h = Mix(h, e.tid);
  h = Mix(h, static_cast<uint64_t>(e.start_ns));
  h = Mix(h, static_cast<uint64_t>(e.end_ns));
  h = Mix(h, static_cast<uint64_t>(e.ret));
  h = Mix(h, Touch(spec->name));
  Check(spec->nargs <= kMaxArgs, "nargs > kMaxArgs");
  for (int i = 0; i < spec->nargs; ++i) {
    const Arg& a = e.args[i];
    ArgKind k = spec->args[i].kind;
    if (!IsStored(k)) continue;
    if (IsString(k)) {
      Check(!a.null || a.s.empty(), "null string with a non-empty view");
      h = Mix(h, a.null ? 1 : 2);
      h = Mix(h, Touch(a.s));
    } else {
      h = Mix(h, static_cast<uint64_t>(a.i));
    }
  }
  (void)e.failed();
  (void)e.err();
  return h;
}

void TouchReader(const TraceReader& r) {
  uint64_t h = 0;
  const Header& hd = r.header();
  for (const auto& [k, v] : hd.fields) h += Touch(k) + Touch(v);
  h += Touch(hd.Get(key::kTool));
  h += r.time_unit_ns();
  h += Touch(r.status().message());
  const ReadInfo& info = r.info();
  for (const auto& n : info.notes) h += Touch(n);
  h += info.bytes + info.truncated_bytes + info.skipped_chunks + info.skipped_records;
  h += Touch(r.IntegrityWarning());
  g_sink = g_sink + h;
}

// The result of reading a file one way, for comparing the two ways.
struct Pass {
  bool opened = false;
  bool clean = false;      // no error anywhere and no budget cut
  bool reader_ok = false;  // TraceReader itself reached the end without an error
  uint64_t events = 0;
  uint64_t digest = 0;     // sum of event digests (order-independent)
};

std::string Path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

Pass ReadByChunks(int fd, TraceReader::Options opt) {
  Pass p;
  auto r = TraceReader::Open(Path(fd), opt);
  if (!r.ok()) {
    g_sink = g_sink + Touch(r.status().message());
    return p;
  }
  p.opened = true;
  TraceReader& reader = **r;
  TouchReader(reader);
  bool cut = false, bad = false;
  Chunk chunk;  // reused, as the tools do
  ChunkCursor cursor;
  Event e;
  uint64_t chunks = 0;
  while (reader.NextChunk(&chunk)) {
    Check(chunk.raw.size() == chunk.meta.raw_size, "chunk raw size differs from its metadata");
    Check(chunk.sequence == chunks, "chunk sequence numbers not consecutive");
    if (++chunks > kMaxChunksPerPass) {
      cut = true;
      break;
    }
    g_sink = g_sink + chunk.meta.events + chunk.offset + static_cast<uint64_t>(chunk.meta.watermark);
    if (chunk.meta.kind != ChunkKind::kEvents) {
      Check(!cursor.Init(&chunk, reader.time_unit_ns()).ok(), "cursor accepted a non-events chunk");
      continue;
    }
    if (Status s = cursor.Init(&chunk, reader.time_unit_ns()); !s.ok()) {
      g_sink = g_sink + Touch(s.message());
      bad = true;
      continue;
    }
    while (cursor.Next(&e)) {
      p.digest += TouchEvent(e);
      if (++p.events >= kMaxEventsPerPass) {
        cut = true;
        break;
      }
    }
    if (cut) break;
    if (!cursor.status().ok()) {
      g_sink = g_sink + Touch(cursor.status().message());
      bad = true;
    }
  }
  TouchReader(reader);
  p.reader_ok = !cut && reader.status().ok();
  p.clean = p.reader_ok && !bad;
  return p;
}

Pass ReadMerged(int fd, TraceReader::Options opt, MergeOrder order) {
  Pass p;
  auto r = TraceReader::Open(Path(fd), opt);
  if (!r.ok()) {
    g_sink = g_sink + Touch(r.status().message());
    return p;
  }
  p.opened = true;
  MergedReader m(r->get(), order);
  Event e;
  bool cut = false;
  while (m.Next(&e)) {
    p.digest += TouchEvent(e);
    g_sink = g_sink + static_cast<uint64_t>(m.resumed_ns()) + m.held_back();
    if (++p.events >= kMaxEventsPerPass) {
      cut = true;
      break;
    }
  }
  g_sink = g_sink + Touch(m.status().message()) + m.order_violations() + m.max_live_chunks();
  TouchReader(**r);
  p.clean = !cut && m.status().ok();
  return p;
}

int MemFd() {
  static int fd = [] {
    int f = memfd_create("iorr-trace-fuzz", MFD_CLOEXEC);
    if (f < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    return f;
  }();
  return fd;
}

void Exercise(const uint8_t* data, size_t size) {
  int fd = MemFd();
  if (ftruncate(fd, 0) != 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  // Open only reads the header, which salvage does not change, and salvage only changes what
  // happens after a damaged record or chunk, which fails the reader in normal mode: so a file
  // that does not open is not read again, and salvage mode runs only when normal mode failed.
  // (Each Open allocates a 1 MiB buffer, which dominates the cost of small inputs.)
  for (bool salvage : {false, true}) {
    TraceReader::Options opt;
    opt.salvage = salvage;
    Pass a = ReadByChunks(fd, opt);
    if (!a.opened) return;
    Pass b = ReadMerged(fd, opt, MergeOrder::kStart);
    Check(b.opened, "Open succeeded once and failed once on the same bytes");
    Pass c = ReadMerged(fd, opt, MergeOrder::kEffect);
    Check(c.opened, "Open succeeded once and failed once on the same bytes");
    // The passes see the same chunks in the same order: when the chunk-by-chunk pass read every
    // event without an error, the merged reader must return exactly the same events, in either
    // order.
    if (a.clean) {
      Check(b.clean, "merged reader failed on a file that reads cleanly chunk by chunk");
      Check(a.events == b.events, "merged reader returned a different number of events");
      Check(a.digest == b.digest, "merged reader returned different events");
      Check(c.clean, "effect order failed on a file that reads cleanly chunk by chunk");
      Check(a.events == c.events, "effect order returned a different number of events");
      Check(a.digest == c.digest, "effect order returned different events");
    }
    if (a.reader_ok) return;
  }
}

uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
void PutLe32(uint8_t* p, uint32_t v) { PutFixed32(p, v); }

// Recomputes the record checksum of every iorr record and the payload checksum of every chunk
// whose frame is complete. Returns true when anything changed.
bool FixChecksums(std::vector<uint8_t>& f) {
  bool changed = false;
  size_t pos = 0;
  while (f.size() - pos >= 8) {
    uint32_t magic = Le32(&f[pos]), size = Le32(&f[pos + 4]);
    if ((magic & kSkippableMask) != kSkippableBase) break;
    if (size > f.size() - pos - 8) break;
    uint8_t* rec = &f[pos + 8];
    size_t next = pos + 8 + size;
    if (magic == kSkippableMagic && size >= 5) {
      if (rec[0] == static_cast<uint8_t>(RecordType::kChunk)) {
        ByteReader br(rec + 1, rec + size - 4);
        br.Fixed(1);
        for (int i = 0; i < 4; ++i) br.Varint();  // stream, pid, tid, events
        for (int i = 0; i < 3; ++i) br.Varint();  // first, last, watermark
        br.Varint();                              // raw size
        uint64_t csize = br.Varint();
        const uint8_t* crc_at = br.pos();
        br.Fixed(4);
        if (br.ok() && csize <= f.size() - next) {
          uint32_t crc = Crc32c(&f[next], csize);
          uint8_t* w = rec + (crc_at - rec);
          if (Le32(w) != crc) {
            PutLe32(w, crc);
            changed = true;
          }
          next += csize;
        }
      }
      uint32_t crc = Crc32c(rec, size - 4);
      if (Le32(rec + size - 4) != crc) {
        PutLe32(rec + size - 4, crc);
        changed = true;
      }
    }
    pos = next;
  }
  return changed;
}

// Builds a trace from an IOFZ script (see the top of the file).
std::vector<uint8_t> Build(const uint8_t* p, const uint8_t* end) {
  static ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::vector<uint8_t> out;
  static constexpr uint32_t kUnits[4] = {1, 10, 100, 1000};
  HeaderCore core;
  core.version = kFormatVersion;
  core.time_unit_ns = kUnits[p < end ? *p++ % 4 : 3];
  core.start_mono_ns = 1000;
  core.start_wall_ns = 1700000000000000000;
  HeaderField fields[] = {{key::kSource, "fuzz"}, {key::kCwd, "/"}};
  out.resize(HeaderRecordSize(fields, 2));
  out.resize(EncodeHeaderRecord(core, fields, 2, out.data(), out.size()));
  Check(!out.empty(), "cannot encode the fuzz header");

  ByteReader br(p, end);
  std::vector<uint8_t> rec(kMaxChunkRecordBytes + kMaxEndRecordBytes), frame;
  uint64_t stream = 0;
  while (!br.empty() && br.ok()) {
    uint8_t op = static_cast<uint8_t>(br.Fixed(1));
    switch (op & 7) {
      case 5: {  // note
        uint64_t n = br.Varint();
        const uint8_t* text = br.Bytes(n);
        if (!br.ok()) break;
        std::vector<uint8_t> note(n + 16);
        note.resize(FrameRecord(RecordType::kNote, text, n, note.data()));
        out.insert(out.end(), note.begin(), note.end());
        break;
      }
      case 6: {  // end record
        EndRecord e;
        e.events = br.Varint();
        e.chunks = br.Varint();
        e.dropped_events = br.Varint();
        e.flags = br.Varint();
        if (!br.ok()) break;
        size_t n = EncodeEndRecord(e, rec.data());
        out.insert(out.end(), rec.begin(), rec.begin() + static_cast<long>(n));
        break;
      }
      case 7: {  // truncate and stop
        uint64_t k = br.Varint();
        out.resize(out.size() - std::min<uint64_t>(k, out.size()));
        return out;
      }
      default: {  // a chunk
        ChunkMeta m;
        m.kind = (op & 7) == 4 ? static_cast<ChunkKind>(br.Fixed(1)) : ChunkKind::kEvents;
        m.stream_id = stream++;
        m.pid = static_cast<uint32_t>(br.Varint());
        m.tid = static_cast<uint32_t>(br.Varint());
        m.events = br.Varint();
        m.first_start = br.Signed();
        m.last_start = br.Signed();
        m.watermark = br.Signed();
        uint64_t raw_len = br.Varint();
        raw_len = std::min<uint64_t>(raw_len, br.remaining());
        const uint8_t* raw = br.Bytes(raw_len);
        if (!br.ok()) break;
        frame.resize(ZSTD_compressBound(raw_len));
        size_t c = ZSTD_compressCCtx(cctx, frame.data(), frame.size(), raw, raw_len, 1);
        Check(!ZSTD_isError(c), "zstd cannot compress the fuzz payload");
        m.raw_size = raw_len + ((op & 0x40) ? 1 : 0);
        m.compressed_size = c;
        m.payload_crc = Crc32c(frame.data(), c) ^ ((op & 0x80) ? 1u : 0u);
        size_t n = EncodeChunkRecord(m, rec.data());
        if (op & 0x20) rec[n - 1] ^= 0x55;
        out.insert(out.end(), rec.begin(), rec.begin() + static_cast<long>(n));
        out.insert(out.end(), frame.begin(), frame.begin() + static_cast<long>(c));
        break;
      }
    }
  }
  return out;
}

}  // namespace
}  // namespace iorr::trace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace iorr::trace;
  if (size >= 4 && std::memcmp(data, "IOFZ", 4) == 0) {
    std::vector<uint8_t> file = Build(data + 4, data + size);
    Exercise(file.data(), file.size());
    return 0;
  }
  Exercise(data, size);
  std::vector<uint8_t> fixed(data, data + size);
  if (FixChecksums(fixed)) Exercise(fixed.data(), fixed.size());
  return 0;
}
