// The what-if table (model_table.h), as `iorr model` has always computed it.
#include "tools/iorr/model_table.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "model/json_fields.h"
#include "tools/iorr/cli.h"
#include "traces/block.h"
#include "traces/jsonl.h"
#include "traces/reader.h"

#ifndef IORR_PROFILE_DIR
#define IORR_PROFILE_DIR "model/profiles"
#endif

namespace iorr::cli {

std::string ProfilePath(const std::string& disk) {
  if (disk.find('/') != std::string::npos ||
      (disk.size() > 5 && disk.substr(disk.size() - 5) == ".json"))
    return disk;
  const char* dir = std::getenv("IORR_PROFILES");
  return std::string(dir ? dir : IORR_PROFILE_DIR) + "/" + disk + ".json";
}

namespace {

// What tools/bench/model-vs-real.sh measured for a profile, kept beside it as
// NAME.validation.json: {"profile": NAME, "command": ..., "rows": [{"fs": "ext4", "cache":
// "on", "barrier": "on", "time_error": -0.12, "flush_error": 0.03, ...}]}. Rows of the model
// output that match get "validated" with those errors; a profile without the file (every
// shipped one: nobody here has the hardware) stays "unvalidated".
void ApplyValidation(const std::string& profile_path, std::vector<ModelRow>* rows) {
  std::string path = profile_path;
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
    path.resize(path.size() - 5);
  path += ".validation.json";
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  trace::json::Parser p;
  if (!p.Parse(text) || p.value(0).type != trace::json::Type::kObject)
    throw Error(path + ": not a validation file: " + p.error());
  const trace::json::Value* list = model::jsonfields::Fields(p, 0, "").Find("rows");
  if (!list || list->type != trace::json::Type::kArray) throw Error(path + ": \"rows\": missing");
  uint32_t i = list->size ? static_cast<uint32_t>(list->first) : 0;
  for (uint32_t k = 0; k < list->size; ++k, i = p.value(i).next) {
    model::jsonfields::Fields row(p, i, "rows[" + std::to_string(k) + "].");
    std::string fs, cache, barrier;
    for (auto [key, out] : {std::pair{"fs", &fs}, {"cache", &cache}, {"barrier", &barrier}})
      if (Status st = row.String(key, out, true); !st) throw Error(path + ": " + st.message());
    double time_error = 0, flush_error = 0;
    for (auto [key, out] : {std::pair{"time_error", &time_error}, {"flush_error", &flush_error}})
      if (row.Find(key))
        if (Status st = row.Number(key, out); !st) throw Error(path + ": " + st.message());
    for (ModelRow& r : *rows)
      if (r.fs == fs && r.cache == cache && r.barrier == barrier) {
        r.validated = true;
        r.time_error = time_error;
        r.flush_error = flush_error;
      }
  }
}

}  // namespace

std::string Checked(const ModelRow& r) {
  if (!r.validated) return "unvalidated";
  char buf[96];
  std::snprintf(buf, sizeof buf, "validated (time %+.0f%%, flushes %+.0f%%)", 100 * r.time_error,
                100 * r.flush_error);
  return buf;
}

WhatIf::WhatIf(const ModelOptions& o) : o_(o) {
  auto profile = model::LoadProfile(ProfilePath(o.disk));
  if (!profile.ok()) throw Error(profile.status().message());
  profile_ = std::move(*profile);
  auto reader = trace::TraceReader::Open(o.trace);
  if (!reader.ok()) throw Error(reader.status().message());
  auto is_block = model::IsBlockTrace(o.trace);
  if (!is_block.ok()) throw Error(o.trace + ": " + is_block.status().message());

  if (*is_block) {
    // A block stream captured from a real run: the device model alone, on what the kernel sent.
    auto s = model::ReadBlockStream(o.trace, trace::block::kQueue);
    if (!s.ok()) throw Error(o.trace + ": " + s.status().message());
    if (s->requests.empty()) throw Error(o.trace + ": no block requests at queue level");
    stream_ = std::move(*s);
    fss_ = {"block"};
  } else {
    for (const std::string& f : o.fs) {
      const auto& names = model::FsModelNames();
      if (std::find(names.begin(), names.end(), f) == names.end()) {
        std::string known;
        for (std::string_view n : names) known += (known.empty() ? "" : ", ") + std::string(n);
        throw Error("--fs " + f + ": no such file-system model (known: " + known + ")");
      }
    }
    fss_ = o.fs;
  }

  const trace::Header& h = (*reader)->header();
  auto num = [&](std::string_view key, double dflt) {
    std::string v(h.Get(key));
    char* end = nullptr;
    double d = v.empty() ? 0 : std::strtod(v.c_str(), &end);
    return d > 0 ? d : dflt;
  };
  fo_.mem_bytes =
      o.mem ? o.mem : static_cast<uint64_t>(num(trace::key::kRamBytes, 8.0 * (1ull << 30)));
  fo_.dirty_ratio = o.dirty_ratio > 0 ? o.dirty_ratio : num(trace::key::kDirtyRatio, 20);
  fo_.dirty_background_ratio = o.dirty_background_ratio > 0
                                   ? o.dirty_background_ratio
                                   : num(trace::key::kDirtyBackgroundRatio, 10);

  for (const std::string& path : o.cpu) {
    auto t = model::LoadCallCosts(path);
    if (!t.ok()) throw Error(t.status().message());
    tables_.push_back(std::move(*t));
  }
  fo_.think = o.timing == "program";
  fo_.journal_bytes = o.journal_mb << 20;
  fo_.only = o.only;
}

ModelTable WhatIf::Run(const std::function<void(size_t, size_t)>& progress) {
  ModelTable t;
  t.disk = profile_.name;
  const size_t total = fss_.size() * o_.cache.size() * o_.barrier.size();
  for (const std::string& fs : fss_)
    for (const std::string& c : o_.cache)
      for (const std::string& b : o_.barrier) {
        if (progress) progress(t.rows.size(), total);
        model::DeviceSettings ds;
        ds.write_cache = c == "on";
        ds.barriers = b == "on";
        auto dev = model::MakeDevice(profile_, ds);
        if (!dev.ok()) throw Error(dev.status().message());
        ModelRow row{fs, c, b};
        if (stream_) {
          model::BlockRunResult r = model::RunBlockStream(*stream_, **dev);
          row.elapsed_ns = r.elapsed_ns;
          row.d = r.device;
        } else {
          model::FsModelOptions fso = fo_;
          for (const model::CallCosts& table : tables_)
            if (table.fs == fs) fso.costs = &table;
          auto r = model::RunFsModel(fs, o_.trace, **dev, fso);
          if (!r.ok()) throw Error(o_.trace + ": " + r.status().message());
          row.elapsed_ns = r->elapsed_ns;
          row.io_wait_ns = r->io_wait_ns;
          row.cpu_ns = r->cpu_ns;
          row.writeback_cpu_ns = r->writeback_cpu_ns;
          row.commits = r->commits;
          row.events = r->events;
          row.asked_flushes = r->asked_flushes;
          row.asked_fua = r->asked_fua;
          row.d = r->device;
          if (t.rows.empty()) t.not_modelled = r->not_modelled;
        }
        t.rows.push_back(row);
      }
  if (progress) progress(t.rows.size(), total);
  ApplyValidation(ProfilePath(o_.disk), &t.rows);
  return t;
}

}  // namespace iorr::cli
