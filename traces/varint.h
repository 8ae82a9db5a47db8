// LEB128 varints and zigzag coding, with bounds-checked decoding for untrusted input.
// Pure functions; thread-safe. Header-only so the recorder can inline them (no exceptions).
#pragma once

#include <cstddef>
#include <cstdint>

namespace iorr::trace {

inline constexpr size_t kMaxVarintBytes = 10;

constexpr uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Writes v at p (which must have kMaxVarintBytes of room); returns the new end.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

constexpr size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Reads a varint from [p, end). Returns nullptr when the input ends inside the varint or the
// varint is longer than 10 bytes (hostile input).
inline const uint8_t* GetVarint(const uint8_t* p, const uint8_t* end, uint64_t* v) {
  if (p < end && *p < 0x80) {  // the common one-byte case
    *v = *p;
    return p + 1;
  }
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    uint64_t byte = *p++;
    result |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      *v = result;
      return p;
    }
  }
  return nullptr;
}

// A bounds-checked reader over a byte range. After any failed read ok() stays false and
// further reads return 0, so callers may check once at the end of a record.
class ByteReader {
 public:
  ByteReader() = default;
  ByteReader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  bool ok() const { return ok_; }
  bool empty() const { return p_ >= end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* pos() const { return p_; }

  uint64_t Varint() {
    uint64_t v = 0;
    const uint8_t* q = ok_ ? GetVarint(p_, end_, &v) : nullptr;
    if (q == nullptr) return Fail();
    p_ = q;
    return v;
  }
  int64_t Signed() { return UnZigZag(Varint()); }
  uint64_t Fixed(int bytes) {  // little-endian
    if (!ok_ || remaining() < static_cast<size_t>(bytes)) return Fail();
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += bytes;
    return v;
  }
  // Returns a pointer to n bytes and skips them, or nullptr.
  const uint8_t* Bytes(size_t n) {
    if (!ok_ || remaining() < n) {
      Fail();
      return nullptr;
    }
    const uint8_t* q = p_;
    p_ += n;
    return q;
  }

 private:
  uint64_t Fail() {
    ok_ = false;
    p_ = end_;
    return 0;
  }
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  bool ok_ = true;
};

inline uint8_t* PutFixed32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
  return p;
}

}  // namespace iorr::trace
