// CRC-32C (Castagnoli) of byte ranges, for chunk and record checksums. Table-driven
// (slicing-by-8), constexpr tables: thread-safe, no allocation, usable from the recorder.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iorr::trace {

// Extends crc (start with 0) over data[0, n).
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

}  // namespace iorr::trace
