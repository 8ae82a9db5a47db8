// See mountinfo.h.
#include "traces/mountinfo.h"

#include <algorithm>
#include <charconv>
#include <fstream>

namespace iorr::trace {

std::string UnescapeMountinfo(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool ParseMountinfoLine(std::string_view line, MountEntry* out) {
  std::vector<std::string_view> f;
  std::string_view rest = line;
  while (!rest.empty()) {
    size_t sp = rest.find(' ');
    f.push_back(rest.substr(0, sp));
    rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
  }
  if (f.size() < 6) return false;
  auto dash = std::find(f.begin() + 6, f.end(), "-");
  if (f.end() - dash < 4) return false;
  uint64_t id = 0;
  auto r = std::from_chars(f[0].data(), f[0].data() + f[0].size(), id);
  if (r.ec != std::errc() || r.ptr != f[0].data() + f[0].size()) return false;
  out->id = id;
  out->point = UnescapeMountinfo(f[4]);
  out->options = std::string(f[5]);
  out->fstype = UnescapeMountinfo(dash[1]);
  out->source = UnescapeMountinfo(dash[2]);
  out->super_options = std::string(dash[3]);
  return true;
}

bool ReadMountinfo(std::vector<MountEntry>* out, const char* path) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  MountEntry m;
  while (std::getline(in, line))
    if (ParseMountinfoLine(line, &m)) out->push_back(m);
  return true;
}

const MountEntry* MountAbove(const std::vector<MountEntry>& mounts, std::string_view path) {
  const MountEntry* hit = nullptr;
  for (const MountEntry& m : mounts)
    if (path.substr(0, m.point.size()) == m.point &&
        (m.point == "/" || path.size() == m.point.size() || path[m.point.size()] == '/') &&
        (hit == nullptr || m.point.size() >= hit->point.size()))
      hit = &m;
  return hit;
}

}  // namespace iorr::trace
