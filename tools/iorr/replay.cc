// `iorr replay TRACE --root DIR`: reissues a recorded workload under DIR, which it never leaves,
// after creating the files and directories the trace expects to find; compares every result
// with the recorded one and reports mismatches, skips and latencies. Exit 1 on mismatches.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "replayer/blocktrace.h"
#include "replayer/replayer.h"
#include "tools/iorr/cli.h"
#include "traces/json.h"

namespace iorr::cli {
namespace {

struct Options {
  replay::Options r;
  std::string timing = "afap";
  std::string prepare = "sparse";
  std::string cache = "cold";
  std::string threads = "per-thread";
  std::string report;
  std::string block_trace;
  bool json = false;
};

int64_t Percentile(std::vector<int64_t>& v, double q) {
  if (v.empty()) return 0;
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

// A report's counts by reason (skipped, emulated) as the members of a JSON object.
void AppendCountsJson(std::string& out, const std::map<std::string, uint64_t>& counts) {
  bool comma = false;
  for (const auto& [why, n] : counts) {
    if (comma) out += ",";
    comma = true;
    AppendJsonString(out, why);
    out += ":" + std::to_string(n);
  }
}

// ... and as text under a title, when there are any.
void PrintCounts(const char* title, const std::map<std::string, uint64_t>& counts) {
  if (counts.empty()) return;
  std::printf("%s\n", title);
  for (const auto& [why, n] : counts) std::printf("  %12s  %s\n", Thousands(n).c_str(), why.c_str());
}

// extra: more members for the top-level object, each with a leading comma.
std::string ReportJson(replay::Report& rep, const std::string& extra) {
  std::string out = "{";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "\"prepare_seconds\":%.6f,\"replay_seconds\":%.6f,\"events\":%llu,"
                "\"replayed\":%llu,\"threads\":%llu,\"mismatches\":%llu,\"prepared\":{\"files\":%llu,\"dirs\":%llu,"
                "\"links\":%llu,\"bytes\":%llu},\"skipped\":{",
                rep.prepare_seconds, rep.replay_seconds, (unsigned long long)rep.events,
                (unsigned long long)rep.replayed, (unsigned long long)rep.threads,
                (unsigned long long)rep.mismatches,
                (unsigned long long)rep.prepared_files, (unsigned long long)rep.prepared_dirs,
                (unsigned long long)rep.prepared_links, (unsigned long long)rep.prepared_bytes);
  out += buf;
  AppendCountsJson(out, rep.skipped);
  out += "},\"emulated\":{";
  AppendCountsJson(out, rep.emulated);
  out += "},\"first_mismatches\":[";
  for (size_t i = 0; i < rep.first_mismatches.size(); ++i) {
    if (i) out += ",";
    AppendJsonString(out, rep.first_mismatches[i]);
  }
  out += "],\"calls\":{";
  bool comma = false;
  for (auto& [name, cs] : rep.calls) {
    if (comma) out += ",";
    comma = true;
    AppendJsonString(out, name);
    std::snprintf(buf, sizeof buf,
                  ":{\"count\":%llu,\"mismatches\":%llu,\"latency_ns\":{\"p50\":%lld,\"p90\":%lld,"
                  "\"p99\":%lld,\"max\":%lld}}",
                  (unsigned long long)cs.count, (unsigned long long)cs.mismatches,
                  (long long)Percentile(cs.latency_ns, 0.5), (long long)Percentile(cs.latency_ns, 0.9),
                  (long long)Percentile(cs.latency_ns, 0.99),
                  (long long)Percentile(cs.latency_ns, 1.0));
    out += buf;
  }
  out += "}";
  if (!rep.issue_error_ns.empty()) {
    std::snprintf(buf, sizeof buf, ",\"issue_error_ns\":{\"p50\":%lld,\"p99\":%lld,\"max\":%lld}",
                  (long long)Percentile(rep.issue_error_ns, 0.5),
                  (long long)Percentile(rep.issue_error_ns, 0.99),
                  (long long)Percentile(rep.issue_error_ns, 1.0));
    out += buf;
  }
  out += extra;
  out += "}\n";
  return out;
}

// ,"block_trace":{...} for the JSON report.
std::string BlockTraceJson(const std::string& file, const replay::BlockDevice& dev,
                           const replay::BlockTraceSummary& s) {
  std::string out = ",\"block_trace\":{\"file\":";
  AppendJsonString(out, file);
  out += ",\"device\":";
  AppendJsonString(out, dev.path);
  out += ",\"fs\":";
  AppendJsonString(out, dev.fs);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                ",\"seconds\":%.6f,\"events\":%llu,\"queued\":%llu,\"issued\":%llu,"
                "\"completed\":%llu,\"preflush\":%llu,\"fua\":%llu,\"empty_flushes\":%llu,"
                "\"queued_write_bytes\":%llu,\"queued_read_bytes\":%llu,"
                "\"completion_errors\":%llu,\"lost\":%llu,\"unparsed\":%llu}",
                s.seconds, (unsigned long long)s.events, (unsigned long long)s.queued,
                (unsigned long long)s.issued, (unsigned long long)s.completed,
                (unsigned long long)s.preflush, (unsigned long long)s.fua,
                (unsigned long long)s.empty_flushes, (unsigned long long)s.queued_write_bytes,
                (unsigned long long)s.queued_read_bytes, (unsigned long long)s.completion_errors,
                (unsigned long long)s.lost, (unsigned long long)s.unparsed);
  out += buf;
  return out;
}

void PrintText(replay::Report& rep) {
  std::printf("prepare      %.3f s: %s files (%s bytes), %s directories, %s symlinks\n",
              rep.prepare_seconds, Thousands(rep.prepared_files).c_str(),
              Thousands(rep.prepared_bytes).c_str(), Thousands(rep.prepared_dirs).c_str(),
              Thousands(rep.prepared_links).c_str());
  std::printf("replay       %.3f s: %s of %s events replayed in %s threads, %s mismatches\n",
              rep.replay_seconds, Thousands(rep.replayed).c_str(), Thousands(rep.events).c_str(),
              Thousands(rep.threads).c_str(), Thousands(rep.mismatches).c_str());
  PrintCounts("skipped", rep.skipped);
  PrintCounts("emulated", rep.emulated);
  std::printf("%-18s %10s %10s %10s %10s %10s %8s\n", "call", "count", "p50 us", "p90 us",
              "p99 us", "max us", "mismatch");
  for (auto& [name, cs] : rep.calls)
    std::printf("%-18s %10s %10.1f %10.1f %10.1f %10.1f %8s\n", name.c_str(),
                Thousands(cs.count).c_str(), Percentile(cs.latency_ns, 0.5) / 1e3,
                Percentile(cs.latency_ns, 0.9) / 1e3, Percentile(cs.latency_ns, 0.99) / 1e3,
                Percentile(cs.latency_ns, 1.0) / 1e3, Thousands(cs.mismatches).c_str());
  if (!rep.issue_error_ns.empty())
    std::printf("issue error  p50 %.1f us, p99 %.1f us, max %.1f us\n",
                Percentile(rep.issue_error_ns, 0.5) / 1e3, Percentile(rep.issue_error_ns, 0.99) / 1e3,
                Percentile(rep.issue_error_ns, 1.0) / 1e3);
  for (const auto& m : rep.first_mismatches) std::printf("mismatch: %s\n", m.c_str());
}

int Run(Options& o) {
  o.r.timing = o.timing == "exact"   ? replay::Timing::kExact
               : o.timing == "think" ? replay::Timing::kThink
                                     : replay::Timing::kAfap;
  o.r.prepare = o.prepare == "full"   ? replay::Prepare::kFull
                : o.prepare == "none" ? replay::Prepare::kNone
                                      : replay::Prepare::kSparse;
  o.r.cache = o.cache == "warm" ? replay::Cache::kWarm : replay::Cache::kCold;
  o.r.per_thread = o.threads == "per-thread";
  if (o.r.speed <= 0) throw Error("--speed must be positive");
  o.r.progress = isatty(2) == 1;

  // --block-trace: everything that can fail is checked before the replay starts.
  std::optional<replay::BlockDevice> device;
  replay::BlockTracer tracer;
  std::optional<Result<replay::BlockTraceSummary>> summary;
  bool created_output = false;
  struct RemoveOutput {  // a block trace left half-made or empty by a failure
    const std::string& path;
    bool& armed;
    ~RemoveOutput() {
      if (armed) ::unlink(path.c_str());
    }
  } remove_output{o.block_trace, created_output};
  if (!o.block_trace.empty()) {
    auto found = replay::FindBlockDevice(o.r.root);
    if (!found.ok()) throw Error("--block-trace: " + found.status().message());
    device = *found;
    if (Status s = tracer.Open(*device); !s.ok()) throw Error("--block-trace: " + s.message());
    int fd = ::open(o.block_trace.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      created_output = true;
    } else if (errno == EEXIST) {
      fd = ::open(o.block_trace.c_str(), O_WRONLY | O_CLOEXEC);
    }
    if (fd < 0)
      throw Error("--block-trace: cannot create " + o.block_trace + ": " + std::strerror(errno));
    ::close(fd);
    o.r.on_timed_start = [&tracer] { return tracer.Start(); };
    o.r.on_timed_end = [&tracer, &summary] { summary = tracer.Stop(); };
  }

  auto rep = replay::Run(o.r);
  if (!rep.ok()) throw Error(rep.status().message());
  std::string extra;
  if (device) {
    if (!summary) throw Error("--block-trace: the capture did not run");
    if (!summary->ok()) throw Error("--block-trace: " + summary->status().message());
    const replay::BlockTraceSummary& s = **summary;
    auto absolute = [](const std::string& p) {
      char real[PATH_MAX];
      return realpath(p.c_str(), real) ? std::string(real) : p;
    };
    if (Status w = tracer.WriteTrace(
            o.block_trace, s,
            {{"replay.trace", absolute(o.r.trace)}, {"replay.root", absolute(o.r.root)}});
        !w.ok())
      throw Error("--block-trace: " + w.message());
    created_output = false;
    extra = BlockTraceJson(o.block_trace, *device, s);
    std::fprintf(stderr,
                 "block trace: %s events on %s (%s) in %.3f s: %s queued, %s issued, %s completed; "
                 "%s PREFLUSH and %s FUA bios queued (%s empty flushes); %s lost -> %s\n",
                 Thousands(s.events).c_str(), device->path.c_str(), device->fs.c_str(), s.seconds,
                 Thousands(s.queued).c_str(), Thousands(s.issued).c_str(),
                 Thousands(s.completed).c_str(), Thousands(s.preflush).c_str(),
                 Thousands(s.fua).c_str(), Thousands(s.empty_flushes).c_str(),
                 Thousands(s.lost).c_str(), o.block_trace.c_str());
    if (s.lost > 0)
      std::fprintf(stderr,
                   "iorr: warning: the kernel lost %s block events (buffer full): the block trace "
                   "has gaps\n",
                   Thousands(s.lost).c_str());
    if (s.unparsed > 0)
      std::fprintf(stderr, "iorr: warning: %s tracefs lines not understood, the first: %s\n",
                   Thousands(s.unparsed).c_str(), s.first_unparsed.c_str());
  }
  if (o.json)
    std::fputs(ReportJson(*rep, extra).c_str(), stdout);
  else
    PrintText(*rep);
  if (!o.report.empty()) {
    std::FILE* f = std::fopen(o.report.c_str(), "w");
    if (f == nullptr) throw Error("cannot write " + o.report);
    std::fputs(ReportJson(*rep, extra).c_str(), f);
    std::fclose(f);
  }
  if (!rep->integrity_warning.empty())
    std::fprintf(stderr, "iorr: warning: %s\n", rep->integrity_warning.c_str());
  return rep->mismatches ? kExitWorkloadFailed : kExitOk;
}

}  // namespace

void RegisterReplay(CLI::App& app, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "replay",
      "Reissue a trace under --root DIR, which it never leaves (paths resolve inside DIR, as\n"
      "if DIR were the recorded \"/\"). First creates what the trace expects to exist (from\n"
      "--snapshot, directory listings and the calls themselves), then replays and compares\n"
      "every result. Each recorded thread replays in its own thread; a call waits only for\n"
      "earlier calls of other threads on the same name, file, fd or cwd. Exit 1 when results\n"
      "differ.");
  sub->add_option("trace", o->r.trace, "Trace file")->required();
  sub->add_option("--root", o->r.root, "Directory standing for the recorded \"/\"")->required();
  sub->add_option("--timing", o->timing,
                  "afap (as fast as possible), exact (each call at its recorded time) or think\n"
                  "(each thread keeps its recorded gaps between calls, closed loop)")
      ->check(CLI::IsMember({"afap", "exact", "think"}))
      ->capture_default_str();
  sub->add_option("--speed", o->r.speed, "Scale recorded time (exact timing)")->capture_default_str();
  sub->add_option("--prepare", o->prepare, "sparse, full (write the bytes) or none")
      ->check(CLI::IsMember({"sparse", "full", "none"}))
      ->capture_default_str();
  sub->add_option("--cache", o->cache, "cold (drop the page cache after prepare) or warm")
      ->check(CLI::IsMember({"cold", "warm"}))
      ->capture_default_str();
  sub->add_option("--threads", o->threads,
                  "per-thread (each recorded thread in its own, ordered only where calls share a\n"
                  "name, file, fd or cwd) or one (all in recorded order)")
      ->check(CLI::IsMember({"per-thread", "one"}))
      ->capture_default_str();
  sub->add_option("--only", o->r.only, "Replay only paths under this recorded prefix (repeatable)");
  sub->add_option("--report", o->report, "Also write the report as JSON to this file");
  sub->add_option("--block-trace", o->block_trace,
                  "Capture the block requests on the block device under --root while the timed\n"
                  "part runs (after prepare and the cache drop, until the last call returns) and\n"
                  "write them to this file as a trace of `block` events: bios as queued\n"
                  "(PREFLUSH/FUA as the file system asked), requests issued and completed.\n"
                  "Needs root and tracefs; --root must be on a block device (not tmpfs)");
  sub->add_flag("--json", o->json, "Print the report as JSON");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
