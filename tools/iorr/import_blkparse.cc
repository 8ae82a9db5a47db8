// `iorr import blkparse LOG -o TRACE`: blkparse's default text output (`blkparse -i DEV`, or
// `iorr export blkparse`) becomes a block trace: one `block` event (FORMAT.md §10) per Q, D and
// C line, in the block stream (pid 0, tid 1), at the line's time, with header keys block.dev
// (MAJOR:MINOR of the first event) and block.device (--device, else /dev/block/MAJOR:MINOR,
// the udev name of that device number).
//
// Accepted lines (export.cc's comment describes the format):
//   MAJ,MIN CPU SEQ SECS.NANOS PID ACTION RWBS TAIL
// Q and D tails: "SECTOR + SECTORS [COMM]", "[COMM]" (no sectors), "SECTOR [COMM]"; C tails:
// "SECTOR + SECTORS [ERROR]", "SECTOR [ERROR]"; blkparse -t's "(ELAPSED)" before the bracket is
// ignored. "(null)" is a NULL comm. The error may be a positive errno, a negative one, or a
// negative one as an unsigned 16-bit number (what blkparse prints from a kernel trace: 65531 is
// -EIO); the event's result is -errno. Lines of other actions (G, I, M, P, U, X, A, m, ...)
// are counted and skipped; so are blank lines and the summary blkparse prints at the end
// (from the first "CPU0 (sda):", "Total (sda):" or -s "name (pid)" line on, every line that is
// not an event line). Not kept: CPU, sequence number and pid (a block event has no place for
// them), and a C line's command (blkparse prints the error in its place).
//
// A bad line stops the import with its line number (exit 2) and leaves no trace: blkparse
// output is machine-made, so a line that does not parse means a damaged or wrong file. This
// differs from `import strace`, whose default keeps going (strace logs legitimately hold lines
// no parser knows); --lenient does what import strace does by default: bad lines are counted,
// the first ones reported, and the trace gets a note saying so.
#include <sys/sysmacros.h>

#include <charconv>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tools/iorr/cli.h"
#include "traces/block.h"
#include "traces/header.h"
#include "traces/strace_parse.h"
#include "traces/writer.h"

namespace iorr::cli {
namespace {

namespace block = trace::block;

struct Options {
  std::string log;
  std::string out;
  std::string device;
  uint32_t time_unit_ns = 1;
  bool lenient = false;
  bool quiet = false;
};

constexpr size_t kMaxProblems = 10;

// One parsed event line.
struct Line {
  uint32_t major = 0, minor = 0;
  int64_t ns = 0;
  char action = 0;
  std::string_view action_text;
  uint32_t op = 0;
  uint64_t sector = 0;
  uint64_t sectors = 0;
  std::string_view comm;
  bool comm_null = true;
  int64_t ret = 0;
};

enum class Kind {
  kBlank,
  kNotEvent,     // does not start like an event line: summary text, or garbage
  kOtherAction,  // an event line of an action other than Q, D, C
  kEvent,
  kBad,  // starts like an event line but does not parse
};

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

bool ParseUint(std::string_view t, uint64_t* v) {
  if (t.empty()) return false;
  auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

// Walks a line: tokens separated by blanks.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  void Blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  std::string_view Token() {
    Blanks();
    size_t b = i_;
    while (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != '\t') ++i_;
    return s_.substr(b, i_ - b);
  }
  std::string_view Rest() {
    Blanks();
    return s_.substr(i_);
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

// "7,0" -> 7, 0
bool ParseDevice(std::string_view t, uint32_t* major, uint32_t* minor) {
  size_t comma = t.find(',');
  if (comma == std::string_view::npos) return false;
  uint64_t a, b;
  if (!ParseUint(t.substr(0, comma), &a) || !ParseUint(t.substr(comma + 1), &b)) return false;
  if (a > UINT32_MAX || b > UINT32_MAX) return false;
  *major = static_cast<uint32_t>(a);
  *minor = static_cast<uint32_t>(b);
  return true;
}

// "12.000345678" (1 to 9 digits after the point, optional '-') -> ns
bool ParseTime(std::string_view t, int64_t* ns) {
  bool neg = !t.empty() && t[0] == '-';
  if (neg) t.remove_prefix(1);
  size_t dot = t.find('.');
  if (dot == std::string_view::npos) return false;
  std::string_view frac = t.substr(dot + 1);
  uint64_t secs, f;
  if (!ParseUint(t.substr(0, dot), &secs) || frac.size() > 9 || !ParseUint(frac, &f)) return false;
  for (size_t i = frac.size(); i < 9; ++i) f *= 10;
  constexpr uint64_t kMaxSecs = std::numeric_limits<int64_t>::max() / 1000000000 - 1;
  if (secs > kMaxSecs) return false;
  int64_t v = static_cast<int64_t>(secs * 1000000000 + f);
  *ns = neg ? -v : v;
  return true;
}

// A completion's error as blkparse prints it -> the event's result (0 or -errno).
bool ParseError(std::string_view t, int64_t* ret) {
  bool neg = !t.empty() && t[0] == '-';
  if (neg) t.remove_prefix(1);
  uint64_t n;
  if (!ParseUint(t, &n)) return false;
  if (n == 0) {
    *ret = 0;
  } else if (n <= 4095) {
    *ret = -static_cast<int64_t>(n);
  } else if (!neg && n >= 65536 - 4095 && n <= 65535) {
    *ret = static_cast<int64_t>(n) - 65536;
  } else {
    return false;
  }
  return true;
}

Kind ParseLine(std::string_view s, Line* l, const char** why) {
  if (IsBlank(s)) return Kind::kBlank;
  Cursor c(s);
  if (!ParseDevice(c.Token(), &l->major, &l->minor)) return Kind::kNotEvent;
  uint64_t cpu, seq, pid;
  if (!ParseUint(c.Token(), &cpu) || !ParseUint(c.Token(), &seq)) {
    *why = "expected MAJOR,MINOR CPU SEQUENCE SECONDS PID ACTION RWBS";
    return Kind::kBad;
  }
  if (!ParseTime(c.Token(), &l->ns)) {
    *why = "bad time (expected SECONDS.NANOSECONDS)";
    return Kind::kBad;
  }
  if (!ParseUint(c.Token(), &pid)) {
    *why = "bad pid";
    return Kind::kBad;
  }
  l->action_text = c.Token();
  if (l->action_text.empty() || l->action_text.size() > 2) {
    *why = "bad action";
    return Kind::kBad;
  }
  if (l->action_text != "Q" && l->action_text != "D" && l->action_text != "C")
    return Kind::kOtherAction;
  l->action = l->action_text[0];
  if (!block::ParseRwbs(c.Token(), &l->op)) {
    *why = "bad rwbs";
    return Kind::kBad;
  }
  std::string_view tail = c.Rest();
  const bool complete = l->action == 'C';
  *why = complete ? "expected SECTOR [+ SECTORS] [ERROR]" : "expected [SECTOR + SECTORS] [COMMAND]";
  l->sector = l->sectors = 0;
  if (tail.empty()) return Kind::kBad;
  if (tail[0] != '[') {
    Cursor t(tail);
    if (!ParseUint(t.Token(), &l->sector)) return Kind::kBad;
    tail = t.Rest();
    if (!tail.empty() && tail[0] == '+') {
      tail.remove_prefix(1);
      Cursor n(tail);
      if (!ParseUint(n.Token(), &l->sectors)) return Kind::kBad;
      tail = n.Rest();
    }
    if (!tail.empty() && tail[0] == '(') {  // blkparse -t: elapsed ns
      size_t close = tail.find(')');
      if (close == std::string_view::npos) return Kind::kBad;
      uint64_t elapsed;
      std::string_view inner = tail.substr(1, close - 1);
      inner.remove_prefix(std::min(inner.find_first_not_of(' '), inner.size()));
      if (!ParseUint(inner, &elapsed)) return Kind::kBad;
      tail.remove_prefix(close + 1);
      tail.remove_prefix(std::min(tail.find_first_not_of(" \t"), tail.size()));
    }
  } else if (complete) {
    return Kind::kBad;
  }
  if (tail.size() < 2 || tail.front() != '[' || tail.back() != ']') return Kind::kBad;
  std::string_view inner = tail.substr(1, tail.size() - 2);
  if (l->sector > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
      l->sectors > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / 512) {
    *why = "sector or length out of range";
    return Kind::kBad;
  }
  l->ret = 0;
  l->comm = {};
  l->comm_null = true;
  if (complete) {
    if (!ParseError(inner, &l->ret)) {
      *why = "bad error (expected 0, an errno, or -errno as an unsigned 16-bit number)";
      return Kind::kBad;
    }
  } else if (inner != "(null)") {
    l->comm = inner;
    l->comm_null = false;
  }
  return Kind::kEvent;
}

// The first lines of blkparse's summary: "CPU0 (sda):", "Total (sda):", and with -s the
// per-program sections, "tar (1234)".
bool IsSummaryStart(std::string_view s) {
  if (s.starts_with("Total (")) return true;
  if (s.starts_with("CPU")) {
    size_t i = 3;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i > 3 && s.substr(i).starts_with(" (")) return true;
  }
  if (s.empty() || s[0] == ' ' || s[0] == '\t' || !s.ends_with(")")) return false;
  size_t open = s.rfind(" (");
  uint64_t pid;
  return open != std::string_view::npos && open > 0 &&
         ParseUint(s.substr(open + 2, s.size() - open - 3), &pid);
}

// At most 80 bytes of a line for a message, control bytes as '?'.
std::string Snippet(std::string_view s) {
  std::string out(s.substr(0, 80));
  for (char& ch : out)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  if (s.size() > 80) out += "...";
  return out;
}

// Removes the temporary trace unless the import succeeded.
struct TempFile {
  std::string path;
  bool keep = false;
  ~TempFile() {
    if (!path.empty() && !keep) std::remove(path.c_str());
  }
};

int Run(const Options& o) {
  std::string error;
  auto source = trace::LineSource::Open(o.log, &error);
  if (!source) throw Error(error);
  const std::string name = o.log == "-" ? "stdin" : o.log;
  TempFile tmp;
  std::string target = o.out;
  if (o.out != "-") {
    tmp.path = o.out + ".tmp";
    target = tmp.path;
  }

  std::unique_ptr<trace::TraceWriter> w;
  uint32_t dev_major = 0, dev_minor = 0;
  auto create = [&](bool have_dev) {
    trace::Header h;
    h.core.time_unit_ns = o.time_unit_ns;
    h.Set(trace::key::kTool, "iorr 0.1.0 import blkparse");
    h.Set(trace::key::kSource, "blkparse");
    std::string mm = std::to_string(dev_major) + ":" + std::to_string(dev_minor);
    if (!o.device.empty())
      h.Set("block.device", o.device);
    else if (have_dev)
      h.Set("block.device", "/dev/block/" + mm);
    if (have_dev) h.Set("block.dev", mm);
    trace::WriterOptions wo;
    wo.time_unit_ns = o.time_unit_ns;
    auto created = trace::TraceWriter::Create(target, std::move(h), wo);
    if (!created.ok()) throw Error(created.status().message());
    w = std::move(*created);
  };

  uint64_t line_no = 0, summary = 0, bad = 0, other_devices = 0;
  uint64_t per_phase[4] = {};
  std::map<std::string, uint64_t> other_actions;
  std::vector<std::string> problems;
  bool in_summary = false;
  bool ordered = true;
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  std::string_view text;
  Line l;
  trace::Event e;
  while (source->Next(text)) {
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    const char* why = "";
    switch (ParseLine(text, &l, &why)) {
      case Kind::kBlank:
        continue;
      case Kind::kOtherAction:
        ++other_actions[std::string(l.action_text)];
        continue;
      case Kind::kNotEvent:
        if (in_summary || IsSummaryStart(text)) {
          in_summary = true;
          ++summary;
          continue;
        }
        why = "not a line of blkparse's default output";
        break;
      case Kind::kBad:
        break;
      case Kind::kEvent: {
        if (!w) {
          dev_major = l.major;
          dev_minor = l.minor;
          create(true);
        } else if (l.major != dev_major || l.minor != dev_minor) {
          ++other_devices;
        }
        e = trace::Event{};
        e.call = trace::CallId::block;
        e.pid = block::kStreamPid;
        e.tid = block::kStreamTid;
        e.start_ns = e.end_ns = l.ns;
        e.ret = l.ret;
        const int64_t phase = l.action == 'Q'   ? block::kQueue
                              : l.action == 'D' ? block::kIssue
                                                : block::kComplete;
        ++per_phase[phase];
        e.args[0].i = phase;
        e.args[1].i = static_cast<int64_t>(makedev(l.major, l.minor));
        e.args[2].i = static_cast<int64_t>(l.sector);
        e.args[3].i = static_cast<int64_t>(l.sectors * 512);
        e.args[4].i = l.op;
        e.args[5].s = l.comm;
        e.args[5].null = l.comm_null;
        if (l.ns < last_ns) {
          // A chunk keeps its events as added: going back in time starts a new one, and from
          // here on readers order the events by buffering (no more promises).
          if (Status s = w->EndStream(e.pid, e.tid); !s.ok()) throw Error(s.message());
          if (ordered) {
            ordered = false;
            w->Promise(std::numeric_limits<int64_t>::min());
            std::fprintf(stderr,
                         "iorr: warning: %s:%llu: time goes back; merged views may show events "
                         "out of time order\n",
                         name.c_str(), static_cast<unsigned long long>(line_no));
          }
        }
        last_ns = l.ns;
        if (ordered) w->Promise(l.ns);
        if (Status s = w->Add(e); !s.ok())
          throw Error(name + ":" + std::to_string(line_no) + ": " + s.message());
        continue;
      }
    }
    // A bad line.
    const std::string what = std::to_string(line_no) + ": " + why + ": " + Snippet(text);
    if (!o.lenient) throw Error(name + ":" + what);
    ++bad;
    if (problems.size() < kMaxProblems) problems.push_back("line " + what);
  }
  if (source->failed()) throw Error(source->error());
  if (!w) create(false);
  if (bad) {
    std::string note = "imported from blkparse: " + std::to_string(line_no) + " lines, " +
                       std::to_string(w->events()) + " events, " + std::to_string(bad) +
                       " bad lines skipped";
    if (Status s = w->AddNote(note); !s.ok()) throw Error(s.message());
  }
  if (Status s = w->Close(bad, bad > 0); !s.ok()) throw Error(s.message());
  const uint64_t events = w->events(), bytes = w->bytes();
  w.reset();
  if (!tmp.path.empty()) {
    if (std::rename(tmp.path.c_str(), o.out.c_str()) != 0)
      throw Error("cannot rename " + tmp.path + " to " + o.out);
    tmp.keep = true;
  }
  if (!o.quiet) {
    std::string s = "iorr: imported " + Thousands(line_no) + " lines: " + Thousands(events) +
                    " block events (Q " + Thousands(per_phase[block::kQueue]) + ", D " +
                    Thousands(per_phase[block::kIssue]) + ", C " +
                    Thousands(per_phase[block::kComplete]) + ")";
    if (!other_actions.empty()) {
      uint64_t n = 0;
      std::string list;
      for (const auto& [action, count] : other_actions) {
        n += count;
        list += (list.empty() ? "" : ", ") + action + " " + Thousands(count);
      }
      s += ", " + Thousands(n) + " lines of other actions skipped (" + list + ")";
    }
    if (summary) s += ", " + Thousands(summary) + " summary lines skipped";
    if (bad) s += ", " + Thousands(bad) + " bad lines skipped";
    if (other_devices)
      s += ", " + Thousands(other_devices) + " events of devices other than the first";
    s += "; " + Thousands(bytes) + " bytes";
    std::fprintf(stderr, "%s\n", s.c_str());
    for (const auto& p : problems) std::fprintf(stderr, "iorr: %s: %s\n", name.c_str(), p.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterImportBlkparse(CLI::App& import, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = import.add_subcommand(
      "blkparse",
      "Make a block trace from blkparse's default text output (`blkparse -i DEV`, -t too;\n"
      "plain, .gz, .xz, .bz2 or .zst) or from `iorr export blkparse`.");
  sub->footer(
      "Each Q, D and C line becomes a block event (queued, issued, completed) of the block\n"
      "stream at the line's time; the header gets block.dev (MAJOR:MINOR of the first event)\n"
      "and block.device. Lines of other actions (G, I, M, P, U, ...) and blkparse's summary\n"
      "are counted and skipped. Not kept: CPU, sequence number and pid, and a C line's command\n"
      "(blkparse prints the error there). A line that does not parse stops the import: exit 2\n"
      "with its line number, no trace written (--lenient: skipped, counted, noted in the trace).");
  sub->add_option("log", o->log, "blkparse output (- for stdin)")->required();
  sub->add_option("-o,--output", o->out, "Trace to write (- for stdout)")->required();
  sub->add_option("--device", o->device,
                  "block.device header value (default: /dev/block/MAJOR:MINOR of the first "
                  "event)")
      ->type_name("PATH");
  sub->add_option("--time-unit", o->time_unit_ns,
                  "Time resolution of the trace in ns: 1, 10, 100 or 1000 (blkparse prints ns)")
      ->check(CLI::IsMember({1, 10, 100, 1000}))
      ->capture_default_str();
  sub->add_flag("--lenient", o->lenient,
                "Skip lines that do not parse (counted, the first ones reported, and noted in "
                "the trace) instead of failing");
  sub->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
