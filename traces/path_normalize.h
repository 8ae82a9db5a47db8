// Lexical path normalization shared by the replayer and the model: "a/./b//c/../d" -> "a/b/d",
// no leading or trailing slash, ".." above the top dropped. Lexical only: symlinks are not
// followed (neither user can). Header-only, stateless.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace iorr::trace {

inline std::string NormalizePath(std::string_view p) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view c = p.substr(i, j - i);
    if (c == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!c.empty() && c != ".") {
      parts.push_back(c);
    }
    i = j + 1;
  }
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out.push_back('/');
    out += parts[k];
  }
  return out;
}

}  // namespace iorr::trace
