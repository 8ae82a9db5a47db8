// The what-if table of `iorr model`: one row per file system x write cache x barrier setting,
// from a trace of calls (a file-system model on a device model) or from a block trace (the
// device model alone). `iorr model` prints it as text, JSON or CSV; `iorr report` puts it in
// its page. Main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/block_stream.h"
#include "model/call_costs.h"
#include "model/device.h"
#include "model/fs_model.h"
#include "model/profile.h"

namespace iorr::cli {

// What `iorr model`'s options say (see its --help).
struct ModelOptions {
  std::string trace;
  std::string disk = "hdd-7200";
  std::vector<std::string> fs = {"ext4"};
  std::vector<std::string> cache = {"on", "off"};
  std::vector<std::string> barrier = {"on", "off"};
  uint64_t mem = 0;
  double dirty_ratio = 0, dirty_background_ratio = 0;
  std::string timing = "program";
  std::vector<std::string> only;
  std::vector<std::string> cpu;
  uint64_t journal_mb = 128;
};

struct ModelRow {
  std::string fs, cache, barrier;
  int64_t elapsed_ns = 0, io_wait_ns = -1;  // io_wait -1: not applicable (block stream)
  int64_t cpu_ns = 0, writeback_cpu_ns = 0;
  uint64_t commits = 0;
  uint64_t events = 0;                        // events the model ran (after --only)
  uint64_t asked_flushes = 0, asked_fua = 0;  // as the file system asked (call traces)
  model::DeviceStats d;
  // Set when a validation file (NAME.validation.json beside the profile) has this fs x cache x
  // barrier: the largest errors tools/bench/model-vs-real.sh measured, as fractions.
  bool validated = false;
  double time_error = 0, flush_error = 0;
};

struct ModelTable {
  std::string disk;  // the profile's name
  std::vector<ModelRow> rows;
  std::map<std::string, uint64_t> not_modelled;  // calls the model ignores, by name
};

// A profile name (model/profiles, or $IORR_PROFILES) or a JSON file's path, as a path.
std::string ProfilePath(const std::string& disk);

// "unvalidated", or "validated (time -12%, flushes +0%)".
std::string Checked(const ModelRow& r);

// The table for one disk. The constructor loads and checks everything the run needs (the
// profile, the file-system model names, the call-cost tables, the trace's header), so bad input
// is refused before any modelling; Run models every row. Both throw Error on bad input.
class WhatIf {
 public:
  explicit WhatIf(const ModelOptions& o);
  // progress(rows done, rows), called before each row and at the end.
  ModelTable Run(const std::function<void(size_t, size_t)>& progress = {});
  // The captured requests when the trace is a block trace, else null.
  const model::BlockStream* stream() const { return stream_ ? &*stream_ : nullptr; }

 private:
  ModelOptions o_;
  model::Profile profile_;
  std::optional<model::BlockStream> stream_;
  std::vector<std::string> fss_;
  model::FsModelOptions fo_;
  std::vector<model::CallCosts> tables_;
};

}  // namespace iorr::cli
