// Minimal JSON output helpers shared by dump, stats and reports. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace iorr {

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
      size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      bool valid = len > 0 && i + len <= s.size();
      if (valid) {  // the second byte's range depends on the first
        auto c1 = static_cast<unsigned char>(s[i + 1]);
        unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        valid = c1 >= lo && c1 <= hi;
      }
      for (size_t k = 2; valid && k < len; ++k)
        valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
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
