// `iorr model TRACE --disk PROFILE`: what the recorded workload would cost on that disk with
// the write cache on or off and barriers on or off, from a first ext4 (data=ordered) model.
// Prints one row per configuration; every row says its models are unvalidated until checked
// against a real run.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "model/block_stream.h"
#include "tools/iorr/cli.h"
#include "tools/iorr/model_table.h"
#include "traces/json.h"

namespace iorr::cli {
namespace {

struct Options : ModelOptions {
  bool json = false;
  bool csv = false;
};

using Row = ModelRow;

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
  WhatIf what_if(o);
  ModelTable table = what_if.Run();
  const std::vector<Row>& rows = table.rows;
  const std::map<std::string, uint64_t>& not_modelled = table.not_modelled;
  const model::BlockStream* stream = what_if.stream();
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
    AppendJsonString(out, table.disk);
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
    out += "disk " + table.disk + " (" + std::string(o.disk) + "); ";
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
