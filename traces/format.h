// Constants and record layouts of the trace file (documented byte by byte in FORMAT.md), with
// allocation-free encoders that the recorder can use. Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace iorr::trace {

// 2: string references code "next" and "same", and a new `dirents` listing's names join the
// chunk's string table (FORMAT.md 6.2). 3: readlink and readlinkat store the target they read
// (their `buf`), the setxattr calls the value they set. 4: ioctl stores `size`, the bytes a
// FICLONE that succeeded gave its destination. 5: new calls (getcwd, inotify_add_watch, bind,
// inotify_init, inotify_init1), whose tags a reader of 4 does not know; the bytes of every
// other call are as in 4. Readers read versions 1 to 5.
inline constexpr uint16_t kFormatVersion = 5;
inline constexpr uint16_t kMinFormatVersion = 1;

// Every iorr record is a zstd skippable frame with this magic (0x184D2A50 + 0xE).
inline constexpr uint32_t kSkippableMagic = 0x184D2A5Eu;
inline constexpr uint32_t kZstdFrameMagic = 0xFD2FB528u;
inline constexpr uint32_t kSkippableMask = 0xFFFFFFF0u;
inline constexpr uint32_t kSkippableBase = 0x184D2A50u;
inline constexpr char kFileMagic[8] = {'I', 'O', 'R', 'R', 'T', 'R', 'C', '\n'};

// Record types: the first byte of a skippable frame's payload. Never reuse a number.
enum class RecordType : uint8_t {
  kHeader = 1,  // first record of every file
  kChunk = 2,   // chunk metadata; the zstd frame of the chunk's payload follows at once
  kEnd = 3,     // written on a clean close
  kNote = 4,    // free text about the recording (what escaped, import warnings)
};

// Kinds of chunk payload. Never reuse a number.
enum class ChunkKind : uint8_t {
  kEvents = 0,         // calls (this version)
  kInitialState = 1,   // reserved: names, types, sizes, modes seen before the workload
  kDirEntries = 2,     // reserved: names and types returned by getdents64
  kBlockRequests = 3,  // reserved: block requests captured during a replay
};

// String reference codes of version 2 (FORMAT.md 6.2); version 1 has only the first two and
// back-references from 2.
inline constexpr uint64_t kRefNull = 0, kRefNew = 1, kRefNext = 2, kRefSame = 3, kRefBack = 4;
inline constexpr uint64_t kRefBackV1 = 2;

// The names of a `dirents` listing (FORMAT.md 10: entries of a type byte, the name and a NUL),
// in order, without "." and "..": an unterminated last piece is not an entry. From version 2
// they join the chunk's string table after the listing. f(std::string_view name, uint8_t type).
template <class F>
inline void ForEachListedName(std::string_view listing, F&& f) {
  size_t i = 0;
  while (i < listing.size()) {
    size_t end = listing.find('\0', i + 1);
    if (end == std::string_view::npos) return;
    // Not substr: its range check (which cannot fail here, end > i) would pull libstdc++'s
    // exception machinery into the recording library (see recorder/CMakeLists.txt).
    std::string_view name(listing.data() + i + 1, end - i - 1);
    if (name != "." && name != "..") f(name, static_cast<uint8_t>(listing[i]));
    i = end + 1;
  }
}

// Timestamp resolutions a trace may use, in ns.
constexpr bool ValidTimeUnit(uint64_t ns) { return ns == 1 || ns == 10 || ns == 100 || ns == 1000; }

// Limits a reader enforces on untrusted input.
inline constexpr uint64_t kMaxRecordBytes = 16u << 20;     // one skippable frame's payload
inline constexpr uint64_t kMaxChunkRawBytes = 256u << 20;  // one chunk's decompressed payload
inline constexpr uint64_t kMaxChunkEvents = 1u << 24;
inline constexpr uint64_t kMaxChunkStringBytes = 64u << 20;  // decoded strings of one chunk
inline constexpr uint64_t kMaxChunkStrings = 1u << 24;       // listed names in one chunk's table

// Sections of an events chunk's payload, in order.
enum Section : uint8_t {
  kSecCalls = 0,  // varint call tag per event
  kSecStarts,     // zigzag start delta (time units) per event
  kSecDurations,  // zigzag end - start per event
  kSecRets,       // zigzag result (or count - result for Ret::kCount calls)
  kSecFds,        // zigzag value of each kFd/kDirFd argument
  kSecInts,       // zigzag value of each other stored integer argument
  kSecStrRefs,    // string references (FORMAT.md 6.2: 0 null, 1 new, 2 next, 3 same, k>=4 back)
  kSecStrBytes,   // suffix bytes of new strings
  kNumSections,
};

struct ChunkMeta {
  ChunkKind kind = ChunkKind::kEvents;
  uint64_t stream_id = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t events = 0;
  int64_t first_start = 0;  // time units, relative to the trace start
  int64_t last_start = 0;   // the latest start in the chunk
  int64_t watermark = 0;    // no later chunk in the file has an event starting before this
  uint64_t raw_size = 0;    // decompressed payload bytes
  uint64_t compressed_size = 0;
  uint32_t payload_crc = 0;  // CRC-32C of the zstd frame's bytes
};

struct EndRecord {
  uint64_t events = 0;
  uint64_t chunks = 0;
  uint64_t dropped_events = 0;  // events the recorder could not store (disk full, ...)
  uint64_t flags = 0;           // bit 0: the trace is known to be incomplete
};

// Largest encoded size of a chunk or end record, frame header and CRC included.
inline constexpr size_t kMaxChunkRecordBytes = 8 + 1 + 1 + 10 * 10 + 4;
inline constexpr size_t kMaxEndRecordBytes = 8 + 1 + 4 * 10 + 4;

// Frames a record: writes the skippable-frame header, type byte, body and CRC into out.
// `body` must not alias out. Returns the number of bytes written (8 + 1 + body + 4).
size_t FrameRecord(RecordType type, const uint8_t* body, size_t body_len, uint8_t* out);

// Decodes a chunk record's body (the bytes after the type byte, before the CRC) into m, with the
// limits a reader enforces on untrusted input. False: corrupt.
bool DecodeChunkBody(const uint8_t* body, size_t len, ChunkMeta* m);

// The length of the whole, intact record that starts at p (avail bytes readable there): an iorr
// record whose CRC matches (for a chunk record, with its zstd frame, whose CRC matches too), or
// another program's skippable frame that fits. 0: none starts there.
size_t WholeRecordAt(const uint8_t* p, size_t avail);

// Encode a whole record (frame included) into out; returns bytes written.
size_t EncodeChunkRecord(const ChunkMeta& meta, uint8_t* out);
size_t EncodeEndRecord(const EndRecord& end, uint8_t* out);

}  // namespace iorr::trace
