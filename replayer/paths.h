// Recorded paths, as the replayer sees them: every path is made relative to the recorded "/"
// (the replay root) by composing it with the recorded cwd or a directory fd's path. Pure string
// functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace iorr::replay {

// `p` seen from `base` (both relative to the root): absolute paths drop their leading '/'s.
// Not normalised: the kernel resolves "..", inside the root, at replay.
std::string Compose(std::string_view base, std::string_view p);

// Lexical normal form (".", "..", "//" removed; ".." stops at the root). For reasoning about
// names before replay, where no file system can be asked.
std::string Normalize(std::string_view p);

// The parent of a normalised path ("" for a top-level name or the root itself).
std::string_view Parent(std::string_view normalized);

// True for paths on pseudo file systems (proc, sys, dev but /dev/shm), which are never replayed.
bool IsPseudo(std::string_view normalized);

// Splits a composed path into the directory and the last component, dropping trailing '/'s.
// False when the last component is empty, "." or ".." (no name to operate on), or the path holds
// a NUL byte (a system call would read it only up to there).
bool SplitLeaf(std::string_view composed, std::string* dir, std::string* leaf);

}  // namespace iorr::replay
