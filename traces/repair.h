// Repair of records cut short in the middle of a trace.
//
// Every process of a recording appends whole records to the one trace file (O_APPEND). A process
// killed while appending (SIGKILL, or its own exit_group or exec ending the thread that wrote)
// leaves the part of a record it had written, and the records other processes append after it
// are whole. A strict reader stops at such a piece. RepairTornRecords finds each piece between
// whole records and makes the file read cleanly again, without touching any whole record.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/status.h"

namespace iorr::trace {

struct TornRegion {
  uint64_t offset = 0;  // where the piece was, in the file as it was before the repair
  uint64_t bytes = 0;
  bool removed = false;  // too short for a frame of its own: cut out, later records moved up
};

// fd: the trace, open for reading and writing (not O_APPEND), whose header record is whole. A piece
// of 8 bytes or more becomes a skippable frame of another program's magic (0x184D2A50), which
// readers skip; a shorter one is cut out of the file. An incomplete record at the very end is
// left as it is (a reader reports it as truncated). Returns the pieces, in file order; none
// when the file was whole.
Result<std::vector<TornRegion>> RepairTornRecords(int fd);

}  // namespace iorr::trace
