// `iorr dump TRACE`: every event of a trace in time order, as strace-shaped text or (--json)
// as JSON lines that `iorr import jsonl` reads back. Output is built in large blocks.
// `iorr export jsonl TRACE [-o FILE]` is the same code as dump --json, with an output file.
#include <sys/stat.h>

#include <charconv>
#include <cstdio>
#include <memory>
#include <string>

#include "tools/iorr/cli.h"
#include "traces/jsonl.h"
#include "traces/text.h"
#include "traces/names.h"
#include "traces/reader.h"

namespace iorr::cli {
namespace {

struct Options {
  std::string trace;
  std::string output;  // "" or "-": stdout
  bool json = false;
  bool salvage = false;
  uint64_t limit = UINT64_MAX;
};

constexpr size_t kFlushBytes = 1 << 20;

using trace::AppendInt;

// Digits after the point for a time unit: 1000 ns -> 6, 100 -> 7, 10 -> 8, 1 -> 9.
int Decimals(uint32_t unit) {
  int d = 9;
  for (uint32_t u = unit; u >= 10; u /= 10) --d;
  return d;
}

// ns as seconds with `decimals` digits (truncated to the trace's resolution): "12.000123".
void AppendSeconds(std::string& out, int64_t ns, int decimals) {
  uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out.push_back('-');
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, mag / 1000000000);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
  out.push_back('.');
  static constexpr uint64_t kDrop[10] = {1000000000, 100000000, 10000000, 1000000, 100000,
                                         10000,      1000,      100,      10,      1};
  uint64_t frac = mag % 1000000000 / kDrop[decimals];
  char digits[9];
  for (int i = decimals - 1; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + frac % 10);
    frac /= 10;
  }
  out.append(digits, static_cast<size_t>(decimals));
}

// Bytes C-escaped the way strace prints strings, without the quotes.
// One event in strace's shape:
//   [pid tid] 12.000123 openat(AT_FDCWD, "a/b", O_WRONLY|O_CREAT, 0644) = 3 <0.000012>
void AppendEventText(std::string& out, const trace::Event& e, int decimals) {
  out.push_back('[');
  AppendInt(out, e.pid);
  out.push_back(' ');
  AppendInt(out, e.tid);
  out += "] ";
  AppendSeconds(out, e.start_ns, decimals);
  out.push_back(' ');
  trace::AppendCallText(out, e);
  out += " <";
  AppendSeconds(out, e.end_ns - e.start_ns, decimals);
  out += ">\n";
}

void AppendHeaderText(std::string& out, const trace::Header& h) {
  out += "# iorr trace format ";
  AppendInt(out, h.core.version);
  out += ", time unit ";
  AppendInt(out, h.core.time_unit_ns);
  out += " ns, start_mono_ns ";
  AppendInt(out, h.core.start_mono_ns);
  out += ", start_wall_ns ";
  AppendInt(out, h.core.start_wall_ns);
  out.push_back('\n');
  for (const auto& [k, v] : h.fields) {
    out += "# ";
    trace::AppendEscaped(out, k);
    out += ": ";
    trace::AppendEscaped(out, v);
    out.push_back('\n');
  }
}

int Run(const Options& o) {
  auto opened = trace::TraceReader::Open(o.trace, {o.salvage});
  if (!opened.ok()) throw Error(opened.status().message());
  trace::TraceReader& r = **opened;
  struct stat st {};
  uint64_t file_bytes =
      o.trace != "-" && ::stat(o.trace.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  int decimals = Decimals(r.time_unit_ns());

  OutputFile file(o.output);
  std::string out;
  out.reserve(kFlushBytes + (64 << 10));
  if (o.json) {
    trace::AppendHeaderJson(out, r.header());
    out.push_back('\n');
  } else {
    AppendHeaderText(out, r.header());
  }

  trace::MergedReader merged(&r);
  trace::Event e;
  uint64_t n = 0;
  Progress progress("dumping", file_bytes);
  while (n < o.limit && merged.Next(&e)) {
    ++n;
    if (o.json) {
      trace::AppendEventJson(out, e);
      out.push_back('\n');
    } else {
      AppendEventText(out, e, decimals);
    }
    if (out.size() >= kFlushBytes) file.Write(out);
    progress.Update(r.info().bytes);
  }
  progress.Done();
  if (!merged.status().ok()) {
    file.Write(out);
    std::fflush(stdout);
    throw Error(o.trace + ": " + merged.status().message());
  }
  for (const auto& note : r.info().notes) {
    if (o.json) {
      trace::AppendNoteJson(out, note);
      out.push_back('\n');
    } else {
      out += "# note: ";
      trace::AppendEscaped(out, note);
      out.push_back('\n');
    }
  }
  file.Write(out);
  file.Commit();
  if (n < o.limit) {  // read to the end: what the reader found out about the file is complete
    std::string warning = r.IntegrityWarning();
    if (!warning.empty())
      std::fprintf(stderr, "iorr: warning: %s: %s\n", o.trace.c_str(), warning.c_str());
    if (merged.order_violations())
      std::fprintf(stderr, "iorr: warning: %s: %s events out of time order (broken watermarks)\n",
                   o.trace.c_str(), Thousands(merged.order_violations()).c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterDump(CLI::App& app, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "dump",
      "Print every event of a trace in time order: strace-shaped text, or JSON lines\n"
      "(--json: a header line, one object per event, then the notes) that\n"
      "`iorr import jsonl` turns back into the same trace.");
  sub->add_option("trace", o->trace, "Trace file (- for stdin)")->required();
  sub->add_flag("--json", o->json, "JSON lines instead of text");
  sub->add_flag("--salvage", o->salvage, "Skip damaged chunks instead of failing");
  sub->add_option("--limit", o->limit, "Print at most N events")->type_name("N");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

void RegisterExportJsonl(CLI::App& exp, Action* action) {
  auto o = std::make_shared<Options>();
  o->json = true;
  CLI::App* sub = exp.add_subcommand(
      "jsonl",
      "Write a trace as JSON lines: the same output as `iorr dump --json` (a header line,\n"
      "one object per event in time order, then the notes), which `iorr import jsonl`\n"
      "turns back into the same trace.");
  sub->add_option("trace", o->trace, "Trace file (- for stdin)")->required();
  sub->add_option("-o,--output", o->output,
                  "File to write (default: stdout); written as FILE.tmp and renamed when complete")
      ->type_name("FILE");
  sub->add_flag("--salvage", o->salvage, "Skip damaged chunks instead of failing");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
