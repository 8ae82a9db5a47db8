// Lexical path normalization shared by the replayer and the model: "a/./b//c/../d" -> "a/b/d",
// no leading or trailing slash, ".." above the top dropped. Lexical only: symlinks are not
// followed (neither user can). Header-only, stateless.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace iorr::trace {

// Appends the components of p to the absolute, normalized path *out ("/" or "/a/b"): "." and
// empty ones dropped, ".." drops the last one (none above the top). The model resolves paths
// this way into reused buffers, against a cwd already normal.
inline void AppendNormalized(std::string* out, std::string_view p) {
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view c = p.substr(i, j - i);
    if (c == "..") {
      if (out->size() > 1) out->resize(std::max<size_t>(1, out->rfind('/')));
    } else if (!c.empty() && c != ".") {
      if (out->size() > 1) out->push_back('/');
      out->append(c);
    }
    i = j + 1;
  }
}

inline std::string NormalizePath(std::string_view p) {
  std::string out = "/";
  AppendNormalized(&out, p);
  return out.substr(1);
}

}  // namespace iorr::trace
