// Turns an strace text log (strace -f -ttt -T [-y]) into a trace: each call line becomes an event
// through the call table; calls outside the table are kept as `other` with their syscall number;
// lines and arguments that cannot be understood are counted and reported, never dropped silently.
// Not thread-safe; one import per instance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/status.h"
#include "traces/writer.h"

namespace iorr::trace {

class LineSource;

struct StraceImportOptions {
  uint32_t time_unit_ns = 1000;  // strace -ttt prints microseconds
  ChunkLimits limits;
};

struct StraceImportReport {
  uint64_t lines = 0;
  uint64_t events = 0;            // calls written to the trace
  uint64_t table_calls = 0;       // of which in the call table
  uint64_t other_calls = 0;       // of which outside it (kept as `other`)
  uint64_t process_lines = 0;     // +++ exited/killed +++, --- signals ---
  uint64_t unparsed_lines = 0;    // lines the parser could not read
  uint64_t unknown_calls = 0;     // names neither in the table nor known syscalls (dropped, counted)
  uint64_t bad_args = 0;          // arguments that did not parse (stored as 0)
  uint64_t no_return = 0;         // calls without a result (`= ?`, never resumed)
  uint64_t trace_bytes = 0;
  std::vector<std::string> problems;  // the first few, "line N: reason: text"
};

// Reads every line of `log` and writes the trace to `out_path`. Fails only when the input
// cannot be read at all or the trace cannot be written.
Result<StraceImportReport> ImportStrace(LineSource& log, const std::string& out_path,
                                        const StraceImportOptions& options);

}  // namespace iorr::trace
