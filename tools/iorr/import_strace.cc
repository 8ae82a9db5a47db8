// `iorr import strace LOG -o TRACE`: an strace log (plain, .gz, .xz, .bz2, .zst) becomes a
// trace. Lines that cannot be parsed are counted and reported, never dropped silently.
#include <cstdio>
#include <memory>
#include <string>

#include "tools/iorr/cli.h"
#include "traces/strace_import.h"
#include "traces/strace_parse.h"

namespace iorr::cli {
namespace {

struct Options {
  std::string log;
  std::string out;
  uint32_t time_unit_ns = 1000;
  bool strict = false;
  bool quiet = false;
};

int Run(const Options& o) {
  std::string error;
  auto source = trace::LineSource::Open(o.log, &error);
  if (!source) throw Error(error);
  trace::StraceImportOptions opt;
  opt.time_unit_ns = o.time_unit_ns;
  std::string tmp = o.out == "-" ? o.out : o.out + ".tmp";
  auto report = trace::ImportStrace(*source, tmp, opt);
  if (!report.ok()) {
    if (tmp != o.out) std::remove(tmp.c_str());
    throw Error(o.log + ": " + report.status().message());
  }
  const auto& r = *report;
  bool lossy = r.unparsed_lines || r.unknown_calls;
  if (o.strict && lossy) {
    if (tmp != o.out) std::remove(tmp.c_str());
    for (const auto& p : r.problems) std::fprintf(stderr, "iorr: %s: %s\n", o.log.c_str(), p.c_str());
    throw Error(o.log + ": " + std::to_string(r.unparsed_lines) + " lines could not be parsed");
  }
  if (tmp != o.out && std::rename(tmp.c_str(), o.out.c_str()) != 0)
    throw Error("cannot rename " + tmp + " to " + o.out);
  if (!o.quiet) {
    std::fprintf(stderr,
                 "iorr: imported %s lines: %s calls (%s in the table, %s other), %s process lines, "
                 "%s unparsed lines, %s unknown calls, %s arguments not understood; %s bytes, "
                 "%.2f bytes/call\n",
                 Thousands(r.lines).c_str(), Thousands(r.events).c_str(),
                 Thousands(r.table_calls).c_str(), Thousands(r.other_calls).c_str(),
                 Thousands(r.process_lines).c_str(), Thousands(r.unparsed_lines).c_str(),
                 Thousands(r.unknown_calls).c_str(), Thousands(r.bad_args).c_str(),
                 Thousands(r.trace_bytes).c_str(),
                 r.events ? static_cast<double>(r.trace_bytes) / static_cast<double>(r.events) : 0.0);
    for (const auto& p : r.problems) std::fprintf(stderr, "iorr: %s: %s\n", o.log.c_str(), p.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterImportStrace(CLI::App& import, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = import.add_subcommand(
      "strace",
      "Import a log of `strace -f -ttt -T -o LOG` (also with -y, -tt, without -f or -T; plain,\n"
      ".gz, .xz, .bz2 or .zst). Calls outside iorr's table are kept by syscall number. Lines\n"
      "that cannot be parsed are counted, reported, and noted in the trace.");
  sub->add_option("log", o->log, "strace log (- for stdin)")->required();
  sub->add_option("-o,--output", o->out, "Trace to write")->required();
  sub->add_option("--time-unit", o->time_unit_ns, "Timestamp resolution in ns: 1, 10, 100 or 1000")
      ->check(CLI::IsMember({1, 10, 100, 1000}))
      ->capture_default_str();
  sub->add_flag("--strict", o->strict, "Fail (exit 2) when any line cannot be parsed");
  sub->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
