// Record framing; see format.h and FORMAT.md.
#include "traces/format.h"

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

}  // namespace iorr::trace
