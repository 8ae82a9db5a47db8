// `iorr model TRACE --disk PROFILE`: what the recorded workload would cost on that disk with
// the write cache on or off and barriers on or off, from a first ext4 (data=ordered) model.
// Prints one row per configuration; every row says its models are unvalidated until checked
// against a real run.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/block_stream.h"
#include "model/fs_model.h"
#include "model/json_fields.h"
#include "model/profile.h"
#include "tools/iorr/cli.h"
#include "traces/block.h"
#include "traces/json.h"
#include "traces/jsonl.h"
#include "traces/reader.h"

#ifndef IORR_PROFILE_DIR
#define IORR_PROFILE_DIR "model/profiles"
#endif

namespace iorr::cli {
namespace {

struct Options {
  std::string trace;
  std::string disk = "hdd-7200";
  std::vector<std::string> fs = {"ext4"};
  std::vector<std::string> cache = {"on", "off"};
  std::vector<std::string> barrier = {"on", "off"};
  uint64_t mem = 0;
  double dirty_ratio = 0, dirty_background_ratio = 0;
  bool json = false;
  std::string timing = "program";
  std::vector<std::string> only;
  std::vector<std::string> cpu;
  uint64_t journal_mb = 128;
  bool csv = false;
};

std::string ProfilePath(const std::string& disk) {
  if (disk.find('/') != std::string::npos ||
      (disk.size() > 5 && disk.substr(disk.size() - 5) == ".json"))
    return disk;
  const char* dir = std::getenv("IORR_PROFILES");
  return std::string(dir ? dir : IORR_PROFILE_DIR) + "/" + disk + ".json";
}

struct Row {
  std::string fs, cache, barrier;
  int64_t elapsed_ns = 0, io_wait_ns = -1;  // io_wait -1: not applicable (block stream)
  int64_t cpu_ns = 0, writeback_cpu_ns = 0;
  uint64_t commits = 0;
  uint64_t events = 0;                        // events the model ran (after --only)
  uint64_t asked_flushes = 0, asked_fua = 0;  // as the file system asked (call traces)
  model::DeviceStats d;
  // Set when a validation file (see LoadValidation) has this fs x cache x barrier on this
  // profile: the largest errors tools/bench/model-vs-real.sh measured, as fractions.
  bool validated = false;
  double time_error = 0, flush_error = 0;
};

// What tools/bench/model-vs-real.sh measured for a profile, kept beside it as
// NAME.validation.json: {"profile": NAME, "command": ..., "rows": [{"fs": "ext4", "cache":
// "on", "barrier": "on", "time_error": -0.12, "flush_error": 0.03, ...}]}. Rows of the model
// output that match get "validated" with those errors; a profile without the file (every
// shipped one: nobody here has the hardware) stays "unvalidated".
void ApplyValidation(const std::string& profile_path, std::vector<Row>* rows) {
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
    for (Row& r : *rows)
      if (r.fs == fs && r.cache == cache && r.barrier == barrier) {
        r.validated = true;
        r.time_error = time_error;
        r.flush_error = flush_error;
      }
  }
}

std::string Checked(const Row& r) {
  if (!r.validated) return "unvalidated";
  char buf[96];
  std::snprintf(buf, sizeof buf, "validated (time %+.0f%%, flushes %+.0f%%)", 100 * r.time_error,
                100 * r.flush_error);
  return buf;
}

void AppendRowJson(std::string& out, const Row& r) {
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "{\"fs\":\"%s\",\"cache\":\"%s\",\"barrier\":\"%s\",\"elapsed_s\":%.6f,",
                r.fs.c_str(), r.cache.c_str(), r.barrier.c_str(), r.elapsed_ns / 1e9);
  out += buf;
  if (r.io_wait_ns >= 0) {
    std::snprintf(buf, sizeof buf,
                  "\"io_wait_s\":%.6f,\"writeback_cpu_s\":%.6f,\"cpu_s\":%.6f,\"events\":%llu,"
                  "\"commits\":%llu,\"asked_flushes\":%llu,\"asked_fua\":%llu,",
                  r.io_wait_ns / 1e9, r.writeback_cpu_ns / 1e9, r.cpu_ns / 1e9,
                  (unsigned long long)r.events, (unsigned long long)r.commits,
                  (unsigned long long)r.asked_flushes, (unsigned long long)r.asked_fua);
    out += buf;
  }
  const auto& d = r.d;
  std::snprintf(
      buf, sizeof buf,
      "\"flushes\":%llu,\"fua_writes\":%llu,\"flushes_stripped\":%llu,\"fua_stripped\":%llu,"
      "\"bytes_written\":{\"data\":%llu,\"journal\":%llu,\"metadata\":%llu},"
      "\"bytes_read\":%llu,\"device_busy_s\":%.6f,",
      (unsigned long long)d.flushes, (unsigned long long)d.fua_writes,
      (unsigned long long)d.flushes_stripped, (unsigned long long)d.fua_stripped,
      (unsigned long long)d.bytes_written_by_kind[0],
      (unsigned long long)d.bytes_written_by_kind[1],
      (unsigned long long)d.bytes_written_by_kind[2], (unsigned long long)d.bytes_read,
      d.busy_ns / 1e9);
  out += buf;
  if (r.validated) {
    std::snprintf(buf, sizeof buf, "\"validated\":true,\"time_error\":%.4f,\"flush_error\":%.4f}",
                  r.time_error, r.flush_error);
    out += buf;
  } else {
    out += "\"validated\":false}";
  }
}

void AppendRowText(std::string& out, const Row& r) {
  char buf[512];
  const auto& d = r.d;
  char wait[32] = "-";
  if (r.io_wait_ns >= 0) std::snprintf(wait, sizeof wait, "%.3f", r.io_wait_ns / 1e9);
  std::snprintf(buf, sizeof buf,
                "%-10s %-6s %-8s %12.3f %12s %9llu %9llu %10.1f %10.1f %10.1f %12.3f  %s\n",
                r.fs.c_str(), r.cache.c_str(), r.barrier.c_str(), r.elapsed_ns / 1e9, wait,
                (unsigned long long)d.flushes, (unsigned long long)d.fua_writes,
                d.bytes_written_by_kind[0] / 1e6, d.bytes_written_by_kind[1] / 1e6,
                d.bytes_written_by_kind[2] / 1e6, d.busy_ns / 1e9, Checked(r).c_str());
  out += buf;
}

void AppendCapturedJson(std::string& out, const model::BlockStream& s) {
  const auto& c = s.counts;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\"captured\":{\"requests\":%llu,\"flushes\":%llu,\"fua_writes\":%llu,"
                "\"bytes_written\":{\"data\":%llu,\"journal\":%llu,\"metadata\":%llu},"
                "\"bytes_read\":%llu,\"span_s\":%.6f},",
                (unsigned long long)c.requests, (unsigned long long)c.flushes,
                (unsigned long long)c.fua_writes, (unsigned long long)c.bytes_written_by_kind[0],
                (unsigned long long)c.bytes_written_by_kind[1],
                (unsigned long long)c.bytes_written_by_kind[2], (unsigned long long)c.bytes_read,
                (c.last_ns - c.first_ns) / 1e9);
  out += buf;
}

int Run(const Options& o) {
  auto profile = model::LoadProfile(ProfilePath(o.disk));
  if (!profile.ok()) throw Error(profile.status().message());
  auto reader = trace::TraceReader::Open(o.trace);
  if (!reader.ok()) throw Error(reader.status().message());
  auto is_block = model::IsBlockTrace(o.trace);
  if (!is_block.ok()) throw Error(o.trace + ": " + is_block.status().message());

  std::optional<model::BlockStream> stream;
  std::vector<std::string> fss;
  if (*is_block) {
    // A block stream captured from a real run: the device model alone, on what the kernel sent.
    auto s = model::ReadBlockStream(o.trace, trace::block::kQueue);
    if (!s.ok()) throw Error(o.trace + ": " + s.status().message());
    if (s->requests.empty()) throw Error(o.trace + ": no block requests at queue level");
    stream = std::move(*s);
    fss = {"block"};
  } else {
    for (const std::string& f : o.fs) {
      const auto& names = model::FsModelNames();
      if (std::find(names.begin(), names.end(), f) == names.end()) {
        std::string known;
        for (std::string_view n : names) known += (known.empty() ? "" : ", ") + std::string(n);
        throw Error("--fs " + f + ": no such file-system model (known: " + known + ")");
      }
    }
    fss = o.fs;
  }

  model::FsModelOptions fo;
  const trace::Header& h = (*reader)->header();
  auto num = [&](std::string_view key, double dflt) {
    std::string v(h.Get(key));
    char* end = nullptr;
    double d = v.empty() ? 0 : std::strtod(v.c_str(), &end);
    return d > 0 ? d : dflt;
  };
  fo.mem_bytes =
      o.mem ? o.mem : static_cast<uint64_t>(num(trace::key::kRamBytes, 8.0 * (1ull << 30)));
  fo.dirty_ratio = o.dirty_ratio > 0 ? o.dirty_ratio : num(trace::key::kDirtyRatio, 20);
  fo.dirty_background_ratio = o.dirty_background_ratio > 0
                                  ? o.dirty_background_ratio
                                  : num(trace::key::kDirtyBackgroundRatio, 10);

  std::vector<model::CallCosts> tables;
  for (const std::string& path : o.cpu) {
    auto t = model::LoadCallCosts(path);
    if (!t.ok()) throw Error(t.status().message());
    tables.push_back(std::move(*t));
  }
  fo.think = o.timing == "program";
  fo.journal_bytes = o.journal_mb << 20;
  fo.only = o.only;
  std::vector<Row> rows;
  std::map<std::string, uint64_t> not_modelled;
  for (const std::string& fs : fss)
    for (const std::string& c : o.cache)
      for (const std::string& b : o.barrier) {
        model::DeviceSettings ds;
        ds.write_cache = c == "on";
        ds.barriers = b == "on";
        auto dev = model::MakeDevice(*profile, ds);
        if (!dev.ok()) throw Error(dev.status().message());
        Row row{fs, c, b};
        if (stream) {
          model::BlockRunResult r = model::RunBlockStream(*stream, **dev);
          row.elapsed_ns = r.elapsed_ns;
          row.d = r.device;
        } else {
          model::FsModelOptions fso = fo;
          for (const model::CallCosts& t : tables)
            if (t.fs == fs) fso.costs = &t;
          auto r = model::RunFsModel(fs, o.trace, **dev, fso);
          if (!r.ok()) throw Error(o.trace + ": " + r.status().message());
          row.elapsed_ns = r->elapsed_ns;
          row.io_wait_ns = r->io_wait_ns;
          row.cpu_ns = r->cpu_ns;
          row.writeback_cpu_ns = r->writeback_cpu_ns;
          row.commits = r->commits;
          row.events = r->events;
          row.asked_flushes = r->asked_flushes;
          row.asked_fua = r->asked_fua;
          row.d = r->device;
          if (rows.empty()) not_modelled = r->not_modelled;
        }
        rows.push_back(row);
      }

  ApplyValidation(ProfilePath(o.disk), &rows);
  std::string out;
  if (o.csv) {
    out =
        "fs,cache,barrier,elapsed_s,io_wait_s,flushes,fua_writes,data_bytes,journal_bytes,"
        "metadata_bytes,device_busy_s,validated,cpu_s,writeback_cpu_s\n";
    char buf[512];
    for (const Row& r : rows) {
      std::string cpu = r.io_wait_ns >= 0 ? std::to_string(r.cpu_ns / 1e9) + "," +
                                                std::to_string(r.writeback_cpu_ns / 1e9)
                                          : std::string(",");
      std::snprintf(buf, sizeof buf, "%s,%s,%s,%.6f,%s,%llu,%llu,%llu,%llu,%llu,%.6f,%s,%s\n",
                    r.fs.c_str(), r.cache.c_str(), r.barrier.c_str(), r.elapsed_ns / 1e9,
                    r.io_wait_ns >= 0 ? std::to_string(r.io_wait_ns / 1e9).c_str() : "",
                    (unsigned long long)r.d.flushes, (unsigned long long)r.d.fua_writes,
                    (unsigned long long)r.d.bytes_written_by_kind[0],
                    (unsigned long long)r.d.bytes_written_by_kind[1],
                    (unsigned long long)r.d.bytes_written_by_kind[2], r.d.busy_ns / 1e9,
                    r.validated ? "true" : "false", cpu.c_str());
      out += buf;
    }
  } else if (o.json) {
    out = "{\"trace\":";
    AppendJsonString(out, o.trace);
    out += ",\"disk\":";
    AppendJsonString(out, profile->name);
    out += ",\"input\":";
    out += stream ? "\"block-stream\"," : "\"calls\",";
    if (stream) AppendCapturedJson(out, *stream);
    out += "\"not_modelled\":{";
    bool first = true;
    for (const auto& [name, n] : not_modelled) {
      if (!first) out += ',';
      first = false;
      AppendJsonString(out, name);
      out += ':' + std::to_string(n);
    }
    out += "},\"rows\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i) out += ',';
      AppendRowJson(out, rows[i]);
    }
    out += "]}\n";
  } else {
    char buf[512];
    if (stream) {
      const auto& k = stream->counts;
      std::snprintf(buf, sizeof buf,
                    "captured: %llu requests over %.3f s, %llu flushes, %llu FUA writes, "
                    "written data %.1f MB, journal %.1f MB, metadata %.1f MB\n",
                    (unsigned long long)k.requests, (k.last_ns - k.first_ns) / 1e9,
                    (unsigned long long)k.flushes, (unsigned long long)k.fua_writes,
                    k.bytes_written_by_kind[0] / 1e6, k.bytes_written_by_kind[1] / 1e6,
                    k.bytes_written_by_kind[2] / 1e6);
      out += buf;
    }
    std::snprintf(buf, sizeof buf, "%-10s %-6s %-8s %12s %12s %9s %9s %10s %10s %10s %12s  %s\n",
                  "fs", "cache", "barrier", "elapsed s", "io wait s", "flushes", "fua", "data MB",
                  "journal MB", "meta MB", "dev busy s", "checked");
    out += buf;
    for (const Row& r : rows) AppendRowText(out, r);
    out += "disk " + profile->name + " (" + std::string(o.disk) + "); ";
    out += stream ? "block stream replayed open loop at its recorded times; " : "";
    bool any = false;
    for (const Row& r : rows) any = any || r.validated;
    out += any ? "validated rows: errors measured by tools/bench/model-vs-real.sh on this profile\n"
               : "models unvalidated on this profile: not compared with a real run\n";
    if (!not_modelled.empty()) {
      std::string list;
      for (const auto& [name, n] : not_modelled) list += " " + name + "=" + std::to_string(n);
      std::fprintf(stderr, "iorr: calls the model ignores:%s\n", list.c_str());
    }
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace

void RegisterModel(CLI::App& app, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "model",
      "Estimate what the recorded workload would cost on a disk (a profile from model/profiles\n"
      "or a JSON file, e.g. from iorr calibrate) with the write cache on or off and barriers\n"
      "on or off: one row per file system x cache x barrier. A trace of calls runs through a\n"
      "file-system model (ext4, ext3, ext2, xfs, xfs-legacy: page cache, journal or log with\n"
      "PREFLUSH/FUA as the kernel sends them) and a device model; a block trace (iorr replay\n"
      "--block-trace, iorr import blkparse) runs on the device model alone, open loop at its\n"
      "recorded times, and its captured counts are printed too. Rows say whether their models\n"
      "were checked against a real run (tools/bench/model-vs-real.sh).");
  sub->add_option("trace", o->trace, "Trace file")->required();
  sub->add_option("--disk", o->disk, "Profile name (hdd-7200, ssd-sata, ...) or JSON file")
      ->capture_default_str();
  sub->add_option("--fs", o->fs,
                  "File-system models, comma-separated: ext4, ext3, ext2, xfs, xfs-legacy")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--cache", o->cache, "Write cache settings to model")
      ->delimiter(',')
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--barrier", o->barrier, "Barrier settings to model")
      ->delimiter(',')
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--timing", o->timing,
                  "program: the program's own time between calls counts (what the program would\n"
                  "take); afap: it does not, as `iorr replay --timing afap` replays")
      ->check(CLI::IsMember({"program", "afap"}))
      ->capture_default_str();
  sub->add_option("--only", o->only,
                  "Count only calls on paths under this recorded prefix (repeatable), as\n"
                  "`iorr replay --only` replays them; the others keep the time they took in the\n"
                  "recording, as the program's own time between the calls that count");
  sub->add_option("--cpu", o->cpu,
                  "Per-call CPU tables (iorr calibrate DIR --calls), comma-separated or repeated:\n"
                  "a row of file system F uses the table measured on F, and a call the table\n"
                  "covers (on a path, or on an fd opened as a file) costs the table's CPU instead\n"
                  "of its recorded duration")
      ->delimiter(',');
  sub->add_option("--journal-mb", o->journal_mb,
                  "ext3/ext4 journal size in MiB (mke2fs: 32 for 1 GiB, 64 up to 16 GiB, 128 up\n"
                  "to 32 GiB)")
      ->check(CLI::Range(4, 4096))
      ->capture_default_str();
  sub->add_option("--mem", o->mem, "Memory in bytes (default: the trace header's)");
  sub->add_option("--dirty-ratio", o->dirty_ratio, "vm.dirty_ratio (default: the header's)");
  sub->add_option("--dirty-background-ratio", o->dirty_background_ratio,
                  "vm.dirty_background_ratio (default: the header's)");
  sub->add_flag("--json", o->json,
                "JSON instead of a table, with more per row: the calls' own CPU (cpu_s, summed\n"
                "over threads: the call-cost table's or the recorded durations) and the part of\n"
                "io_wait_s that is writeback's own CPU (writeback_cpu_s)");
  sub->add_flag("--csv", o->csv,
                "CSV (one header line, one line per row; cpu_s and writeback_cpu_s as in --json)\n"
                "instead of a table");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
