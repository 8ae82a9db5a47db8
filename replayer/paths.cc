// See paths.h.
#include "replayer/paths.h"

#include <vector>

#include "traces/path_normalize.h"

namespace iorr::replay {

std::string Compose(std::string_view base, std::string_view p) {
  if (!p.empty() && p[0] == '/') {
    size_t i = p.find_first_not_of('/');
    return i == std::string_view::npos ? std::string() : std::string(p.substr(i));
  }
  if (base.empty()) return std::string(p);
  if (p.empty()) return std::string(base);
  std::string out(base);
  out.push_back('/');
  out += p;
  return out;
}

std::string Normalize(std::string_view p) { return trace::NormalizePath(p); }

std::string_view Parent(std::string_view n) {
  size_t i = n.rfind('/');
  return i == std::string_view::npos ? std::string_view() : n.substr(0, i);
}

bool IsPseudo(std::string_view n) {
  std::string_view first = n.substr(0, n.find('/'));
  if (first == "dev") {  // /dev/shm is an ordinary tmpfs
    return !(n == "dev/shm" || n.substr(0, 8) == "dev/shm/");
  }
  return first == "proc" || first == "sys";
}

bool SplitLeaf(std::string_view composed, std::string* dir, std::string* leaf) {
  // The name would end at the NUL in the system call ("..\0" is ".." there).
  if (composed.find('\0') != std::string_view::npos) return false;
  std::string_view p = composed;
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  size_t i = p.rfind('/');
  std::string_view d = i == std::string_view::npos ? std::string_view() : p.substr(0, i);
  std::string_view l = i == std::string_view::npos ? p : p.substr(i + 1);
  if (l.empty() || l == "." || l == ".." || l == "/") return false;
  *dir = std::string(d);
  *leaf = std::string(l);
  return true;
}

}  // namespace iorr::replay
