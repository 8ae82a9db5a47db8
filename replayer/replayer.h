// Replays a trace under a root directory that it never leaves: every recorded path is resolved
// inside the root (openat2 RESOLVE_IN_ROOT, or a parent opened that way plus one name), fds are
// mapped per recorded process, and every result is compared with the recorded one.
//
// Calls are taken in effect order (trace::MergeOrder::kEffect): recorded start order, except
// that a call a signal handler interrupted comes right after the handler's calls recorded
// nested in it, since it took effect when it resumed (the fd an open of a FIFO returns may be
// one the handler opened and closed meanwhile).
//
// Each recorded thread replays in its own thread. A call waits for the earlier calls (in
// that order) of other threads that share a resource with it: a name or a file
// (exclusively), its directory for namespace changes, an fd, the process's cwd and its
// existence (shared for use, exclusive for change). Nothing else is serialised. Run is not
// reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "traces/status.h"

namespace iorr::replay {

enum class Timing { kAfap, kExact, kThink };
enum class Prepare { kSparse, kFull, kNone };
enum class Cache { kCold, kWarm };

struct Options {
  std::string trace;
  std::string root;
  Timing timing = Timing::kAfap;
  double speed = 1.0;
  Prepare prepare = Prepare::kSparse;
  Cache cache = Cache::kCold;
  std::vector<std::string> only;  // recorded path prefixes (absolute); empty: everything
  bool progress = false;
  // Each recorded thread in its own thread; a call waits only for earlier calls of other
  // threads on the same resources. false: one thread, in effect order.
  bool per_thread = true;
  // Called just before the timed part (after prepare, its syncfs and the cache drop) and just
  // after its last call returned (also when it failed); an error from on_timed_start stops the
  // replay with that error. `iorr replay --block-trace` starts and stops its capture here.
  std::function<Status()> on_timed_start;
  std::function<void()> on_timed_end;
};

struct CallStats {
  uint64_t count = 0;
  uint64_t mismatches = 0;
  std::vector<int64_t> latency_ns;  // of replayed calls
};

struct Report {
  double prepare_seconds = 0;
  double replay_seconds = 0;
  uint64_t events = 0;
  uint64_t replayed = 0;
  std::map<std::string, uint64_t> skipped;  // by reason
  // Calls carried out otherwise than the program made them, by how (a FICLONE the root's file
  // system cannot do, as a copy).
  std::map<std::string, uint64_t> emulated;
  uint64_t mismatches = 0;
  std::vector<std::string> first_mismatches;
  std::map<std::string, CallStats> calls;
  uint64_t prepared_files = 0, prepared_dirs = 0, prepared_links = 0, prepared_bytes = 0;
  std::vector<int64_t> issue_error_ns;  // exact timing: actual minus target issue time
  std::string integrity_warning;
  uint64_t threads = 0;  // replaying threads
};

// Prepares the root and replays the trace. Fails only on bad input (unreadable trace,
// unusable root); mismatches are in the report.
Result<Report> Run(const Options& options);

}  // namespace iorr::replay
