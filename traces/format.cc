// Record framing; see format.h and FORMAT.md.
#include "traces/format.h"

#include <zstd.h>

#include <cstdint>
#include <cstring>

#include "traces/crc32c.h"
#include "traces/varint.h"

namespace iorr::trace {

size_t FrameRecord(RecordType type, const uint8_t* body, size_t body_len, uint8_t* out) {
  uint8_t* p = PutFixed32(out, kSkippableMagic);
  p = PutFixed32(p, static_cast<uint32_t>(1 + body_len + 4));
  uint8_t* start = p;
  *p++ = static_cast<uint8_t>(type);
  if (body_len) std::memcpy(p, body, body_len);
  p += body_len;
  p = PutFixed32(p, Crc32c(start, static_cast<size_t>(p - start)));
  return static_cast<size_t>(p - out);
}

size_t EncodeChunkRecord(const ChunkMeta& m, uint8_t* out) {
  uint8_t body[kMaxChunkRecordBytes];
  uint8_t* p = body;
  *p++ = static_cast<uint8_t>(m.kind);
  p = PutVarint(p, m.stream_id);
  p = PutVarint(p, m.pid);
  p = PutVarint(p, m.tid);
  p = PutVarint(p, m.events);
  p = PutVarint(p, ZigZag(m.first_start));
  p = PutVarint(p, ZigZag(m.last_start));
  p = PutVarint(p, ZigZag(m.watermark));
  p = PutVarint(p, m.raw_size);
  p = PutVarint(p, m.compressed_size);
  p = PutFixed32(p, m.payload_crc);
  return FrameRecord(RecordType::kChunk, body, static_cast<size_t>(p - body), out);
}

size_t EncodeEndRecord(const EndRecord& e, uint8_t* out) {
  uint8_t body[kMaxEndRecordBytes];
  uint8_t* p = body;
  p = PutVarint(p, e.events);
  p = PutVarint(p, e.chunks);
  p = PutVarint(p, e.dropped_events);
  p = PutVarint(p, e.flags);
  return FrameRecord(RecordType::kEnd, body, static_cast<size_t>(p - body), out);
}

bool DecodeChunkBody(const uint8_t* body, size_t len, ChunkMeta* m) {
  ByteReader br(body, body + len);
  m->kind = static_cast<ChunkKind>(br.Fixed(1));
  m->stream_id = br.Varint();
  uint64_t pid = br.Varint(), tid = br.Varint();
  m->events = br.Varint();
  m->first_start = br.Signed();
  m->last_start = br.Signed();
  m->watermark = br.Signed();
  m->raw_size = br.Varint();
  m->compressed_size = br.Varint();
  m->payload_crc = static_cast<uint32_t>(br.Fixed(4));
  if (!br.ok() || pid > UINT32_MAX || tid > UINT32_MAX || m->events > kMaxChunkEvents ||
      m->raw_size > kMaxChunkRawBytes || m->compressed_size > ZSTD_compressBound(kMaxChunkRawBytes))
    return false;
  m->pid = static_cast<uint32_t>(pid);
  m->tid = static_cast<uint32_t>(tid);
  return true;
}

size_t WholeRecordAt(const uint8_t* p, size_t avail) {
  if (avail < 8) return 0;
  uint32_t magic = 0, size = 0;
  for (int i = 0; i < 4; ++i) {
    magic |= static_cast<uint32_t>(p[i]) << (8 * i);
    size |= static_cast<uint32_t>(p[4 + i]) << (8 * i);
  }
  if ((magic & kSkippableMask) != kSkippableBase) return 0;
  if (avail - 8 < size) return 0;
  if (magic != kSkippableMagic) return 8 + size;  // another program's skippable frame
  if (size < 5 || size > kMaxRecordBytes) return 0;
  const uint8_t* rec = p + 8;
  uint32_t crc = 0;
  for (int i = 0; i < 4; ++i) crc |= static_cast<uint32_t>(rec[size - 4 + i]) << (8 * i);
  if (Crc32c(rec, size - 4) != crc) return 0;
  if (static_cast<RecordType>(rec[0]) != RecordType::kChunk) return 8 + size;
  ChunkMeta m;
  if (!DecodeChunkBody(rec + 1, size - 5, &m)) return 0;
  if (avail - 8 - size < m.compressed_size) return 0;
  if (Crc32c(rec + size, m.compressed_size) != m.payload_crc) return 0;
  return 8 + size + m.compressed_size;
}

}  // namespace iorr::trace
