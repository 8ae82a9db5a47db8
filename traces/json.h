// Minimal JSON output helpers shared by dump, stats and reports. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace iorr {

// The length of the well-formed UTF-8 sequence at s[i] (no overlongs, surrogates or code points
// past U+10FFFF), 0 where there is none: what the JSON writer and iorr report pass through.
inline size_t Utf8SequenceAt(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t len = c >= 0xf0 && c < 0xf5   ? 4
               : c >= 0xe0 && c < 0xf0 ? 3
               : c >= 0xc2 && c < 0xe0 ? 2
                                       : 0;
  if (len == 0 || i + len > s.size()) return 0;
  auto c1 = static_cast<unsigned char>(s[i + 1]);  // its range depends on the first byte
  unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (c1 < lo || c1 > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return len;
}

// Appends s as a JSON string literal (quotes included). Bytes that are not valid UTF-8 are
// written as \u00XX escapes of their byte value, so every path survives the round trip.
inline void AppendJsonString(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      // Pass well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF)
      // through; escape everything else.
      size_t len = Utf8SequenceAt(s, i);
      bool valid = len != 0;
      if (valid) {
        out.append(s.data() + i, len);
        i += len - 1;
      } else {
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      }
    }
  }
  out.push_back('"');
}

inline std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

}  // namespace iorr
