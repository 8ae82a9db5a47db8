// /proc/self/mountinfo, read the same way wherever iorr needs it (the recorder's header, the
// replayer's block device lookup, calibration): one entry per line, fields unescaped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace iorr::trace {

struct MountEntry {
  uint64_t id = 0;
  std::string point;    // the mount point
  std::string options;  // per-mount options
  std::string fstype;
  std::string source;
  std::string super_options;  // the super block's options
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string UnescapeMountinfo(std::string_view s);

// One line: id parent major:minor root mount-point options [optional...] - fstype source
// super-options. False for a line that does not have that shape.
bool ParseMountinfoLine(std::string_view line, MountEntry* out);

// Every entry of a mountinfo file, in file order (later entries are mounted on top); false if
// the file cannot be read.
bool ReadMountinfo(std::vector<MountEntry>* out, const char* path = "/proc/self/mountinfo");

// The mount holding an absolute, symlink-free path: the longest mount point above it, the last
// of equals (the one on top). Null when none is.
const MountEntry* MountAbove(const std::vector<MountEntry>& mounts, std::string_view path);

}  // namespace iorr::trace
