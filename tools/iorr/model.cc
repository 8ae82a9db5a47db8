// `iorr model TRACE --disk PROFILE`: what the recorded workload would cost on that disk with
// the write cache on or off and barriers on or off, from a first ext4 (data=ordered) model.
// Prints one row per configuration; every row says its models are unvalidated until checked
// against a real run.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/fs_model.h"
#include "model/profile.h"
#include "tools/iorr/cli.h"
#include "traces/json.h"
#include "traces/reader.h"

#ifndef IORR_PROFILE_DIR
#define IORR_PROFILE_DIR "model/profiles"
#endif

namespace iorr::cli {
namespace {

struct Options {
  std::string trace;
  std::string disk = "hdd-7200";
  std::string fs = "ext4";
  std::vector<std::string> cache = {"on", "off"};
  std::vector<std::string> barrier = {"on", "off"};
  uint64_t mem = 0;
  double dirty_ratio = 0, dirty_background_ratio = 0;
  bool json = false;
};

std::string ProfilePath(const std::string& disk) {
  if (disk.find('/') != std::string::npos || (disk.size() > 5 && disk.substr(disk.size() - 5) == ".json"))
    return disk;
  const char* dir = std::getenv("IORR_PROFILES");
  return std::string(dir ? dir : IORR_PROFILE_DIR) + "/" + disk + ".json";
}

int Run(const Options& o) {
  if (o.fs != "ext4") throw Error("--fs " + o.fs + ": only ext4 is modelled so far");
  auto profile = model::LoadProfile(ProfilePath(o.disk));
  if (!profile.ok()) throw Error(profile.status().message());
  auto reader = trace::TraceReader::Open(o.trace);
  if (!reader.ok()) throw Error(reader.status().message());
  model::FsModelOptions fo;
  const trace::Header& h = (*reader)->header();
  auto num = [&](std::string_view key, double dflt) {
    std::string v(h.Get(key));
    char* end = nullptr;
    double d = v.empty() ? 0 : std::strtod(v.c_str(), &end);
    return d > 0 ? d : dflt;
  };
  fo.mem_bytes = o.mem ? o.mem : static_cast<uint64_t>(num(trace::key::kRamBytes, 8.0 * (1ull << 30)));
  fo.dirty_ratio = o.dirty_ratio > 0 ? o.dirty_ratio : num(trace::key::kDirtyRatio, 20);
  fo.dirty_background_ratio = o.dirty_background_ratio > 0
                                  ? o.dirty_background_ratio
                                  : num(trace::key::kDirtyBackgroundRatio, 10);
  std::string out;
  char buf[512];
  if (o.json) {
    out = "{\"trace\":";
    AppendJsonString(out, o.trace);
    out += ",\"fs\":\"ext4\",\"disk\":";
    AppendJsonString(out, profile->name);
    out += ",\"rows\":[";
  } else {
    std::snprintf(buf, sizeof buf, "%-5s %-6s %-8s %12s %12s %9s %9s %10s %10s %10s %12s  %s\n", "fs",
                  "cache", "barrier", "elapsed s", "io wait s", "flushes", "fua", "data MB",
                  "journal MB", "meta MB", "dev busy s", "checked");
    out += buf;
  }
  bool first = true;
  for (const std::string& c : o.cache)
    for (const std::string& b : o.barrier) {
      model::DeviceSettings ds;
      ds.write_cache = c == "on";
      ds.barriers = b == "on";
      auto dev = model::MakeDevice(*profile, ds);
      if (!dev.ok()) throw Error(dev.status().message());
      auto r = model::RunExt4(o.trace, **dev, fo);
      if (!r.ok()) throw Error(o.trace + ": " + r.status().message());
      const auto& d = r->device;
      double mb[3];
      for (int k = 0; k < 3; ++k) mb[k] = static_cast<double>(d.bytes_written_by_kind[k]) / 1e6;
      if (o.json) {
        std::snprintf(buf, sizeof buf,
                      "%s{\"cache\":\"%s\",\"barrier\":\"%s\",\"elapsed_s\":%.6f,\"io_wait_s\":%.6f,"
                      "\"flushes\":%llu,\"fua_writes\":%llu,\"bytes_written\":{\"data\":%llu,"
                      "\"journal\":%llu,\"metadata\":%llu},\"device_busy_s\":%.6f,\"commits\":%llu,"
                      "\"validated\":false}",
                      first ? "" : ",", c.c_str(), b.c_str(), r->elapsed_ns / 1e9, r->io_wait_ns / 1e9,
                      (unsigned long long)d.flushes, (unsigned long long)d.fua_writes,
                      (unsigned long long)d.bytes_written_by_kind[0],
                      (unsigned long long)d.bytes_written_by_kind[1],
                      (unsigned long long)d.bytes_written_by_kind[2], d.busy_ns / 1e9,
                      (unsigned long long)r->commits);
      } else {
        std::snprintf(buf, sizeof buf,
                      "%-5s %-6s %-8s %12.3f %12.3f %9llu %9llu %10.1f %10.1f %10.1f %12.3f  %s\n",
                      "ext4", c.c_str(), b.c_str(), r->elapsed_ns / 1e9, r->io_wait_ns / 1e9,
                      (unsigned long long)d.flushes, (unsigned long long)d.fua_writes, mb[0], mb[1],
                      mb[2], d.busy_ns / 1e9, "unvalidated");
      }
      out += buf;
      first = false;
      if (!r->not_modelled.empty() && !o.json && c == o.cache.front() && b == o.barrier.front()) {
        std::string list;
        for (const auto& [name, n] : r->not_modelled) list += " " + name + "=" + std::to_string(n);
        std::fprintf(stderr, "iorr: calls the model ignores:%s\n", list.c_str());
      }
    }
  if (o.json) out += "]}\n";
  else
    out += "disk " + profile->name + " (" + std::string(o.disk) +
           "); models unvalidated: not yet compared with a real run\n";
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
      "on or off: one row per configuration. File-system model: a first ext4 data=ordered\n"
      "approximation (page cache, jbd2 commits with PREFLUSH|FUA); unvalidated.");
  sub->add_option("trace", o->trace, "Trace file")->required();
  sub->add_option("--disk", o->disk, "Profile name (hdd-7200, ssd-sata, ...) or JSON file")
      ->capture_default_str();
  sub->add_option("--fs", o->fs, "File-system model (ext4)")->capture_default_str();
  sub->add_option("--cache", o->cache, "Write cache settings to model")
      ->delimiter(',')
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--barrier", o->barrier, "Barrier settings to model")
      ->delimiter(',')
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--mem", o->mem, "Memory in bytes (default: the trace header's)");
  sub->add_option("--dirty-ratio", o->dirty_ratio, "vm.dirty_ratio (default: the header's)");
  sub->add_option("--dirty-background-ratio", o->dirty_background_ratio,
                  "vm.dirty_background_ratio (default: the header's)");
  sub->add_flag("--json", o->json, "JSON instead of a table");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
