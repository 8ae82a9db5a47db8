// strace's spelling of events for people: dump's lines, the coverage tool's listings.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "traces/event.h"

namespace iorr::trace {

// v in decimal, without allocating (to_chars).
void AppendInt(std::string& out, int64_t v);

// s as inside strace's double quotes: \" \\ \n \t, other non-printables as \xNN.
void AppendEscaped(std::string& out, std::string_view s);

// `openat(AT_FDCWD, "a/b", O_WRONLY|O_CREAT, 0644) = 3`, or `= -1 ENOENT (No such file or
// directory)`: the call, its arguments (buffers as ...), and its result.
void AppendCallText(std::string& out, const Event& e);

}  // namespace iorr::trace
