// strace log -> trace; see strace_import.h.
#include "traces/strace_import.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>

#include "traces/names.h"
#include "traces/strace_parse.h"

namespace iorr::trace {
namespace {

constexpr size_t kMaxProblems = 20;
// Lines of different processes may carry slightly out-of-order times; promises keep this
// margin so that the merged order stays exact.
constexpr int64_t kPromiseSlackNs = 10'000'000;

bool IsIdent(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "name=value" -> name, or empty.
std::string_view KeyOf(std::string_view token) {
  size_t i = 0;
  while (i < token.size() && IsIdent(token[i])) ++i;
  if (i == 0 || i >= token.size() || token[i] != '=') return {};
  return token.substr(0, i);
}

// The path of an AF_UNIX pathname address as strace prints it,
// `{sa_family=AF_UNIX, sun_path="/tmp/s"}`, or nullopt for any other: another family, an
// abstract (`sun_path=@"..."`) or unnamed (`{sa_family=AF_UNIX}`) address, a pointer strace
// could not read, `{...}` (what iorr dump prints for an address not stored).
std::optional<std::string> UnixSocketPath(std::string_view text) {
  if (!text.starts_with("{sa_family=AF_UNIX, ")) return std::nullopt;
  size_t at = text.find("sun_path=\"");
  if (at == std::string_view::npos) return std::nullopt;
  size_t open = at + 9;
  size_t close = open + 1;
  for (; close < text.size(); ++close) {
    if (text[close] == '\\') {
      ++close;
    } else if (text[close] == '"') {
      break;
    }
  }
  if (close >= text.size()) return std::nullopt;
  bool truncated = false;
  auto path = UnescapeStraceString(text.substr(open, close - open + 1), &truncated);
  if (!path || truncated) return std::nullopt;
  return path;
}

class Importer {
 public:
  Importer(const std::string& out_path, const StraceImportOptions& options)
      : out_path_(out_path), options_(options) {}

  Status Run(LineSource& log) {
    StraceParser parser;
    std::string_view line;
    StraceRecord rec;
    while (log.Next(line)) {
      parser.Feed(line);
      while (parser.Next(rec))
        if (Status s = Take(rec, parser); !s.ok()) return s;
    }
    if (log.failed()) return Status::Error(log.error());
    parser.Finish();
    while (parser.Next(rec))
      if (Status s = Take(rec, parser); !s.ok()) return s;
    report_.lines = parser.lines();
    report_.unparsed_lines = parser.errors();
    for (const auto& e : parser.first_errors())
      AddProblem("line " + std::to_string(e.line_no) + ": " + e.reason + ": " + e.line);
    if (!writer_) {
      if (Status s = OpenWriter(0); !s.ok()) return s;
    }
    std::string note = "imported from strace: " + std::to_string(report_.lines) + " lines, " +
                       std::to_string(report_.events) + " calls";
    if (report_.unparsed_lines) note += ", " + std::to_string(report_.unparsed_lines) + " unparsed lines";
    if (report_.unknown_calls) note += ", " + std::to_string(report_.unknown_calls) + " unknown calls";
    if (report_.bad_args) note += ", " + std::to_string(report_.bad_args) + " arguments not understood";
    if (Status s = writer_->AddNote(note); !s.ok()) return s;
    bool lossy = report_.unparsed_lines || report_.unknown_calls;
    if (Status s = writer_->Close(report_.unparsed_lines + report_.unknown_calls, lossy); !s.ok())
      return s;
    report_.trace_bytes = writer_->bytes();
    return {};
  }

  StraceImportReport& report() { return report_; }

 private:
  void AddProblem(std::string p) {
    if (report_.problems.size() < kMaxProblems) report_.problems.push_back(std::move(p));
  }

  Status OpenWriter(int64_t base_ns) {
    Header h;
    h.core.start_wall_ns = base_ns;
    h.Set(key::kTool, "iorr 0.1.0 import strace");
    h.Set(key::kSource, "strace");
    if (!cmdline_.empty()) h.Set(key::kCmdline, cmdline_);
    WriterOptions wo;
    wo.time_unit_ns = options_.time_unit_ns;
    wo.limits = options_.limits;
    auto w = TraceWriter::Create(out_path_, std::move(h), wo);
    if (!w.ok()) return w.status();
    writer_ = std::move(*w);
    return {};
  }

  uint32_t Tgid(uint32_t tid) {
    auto it = tgid_.find(tid);
    if (it != tgid_.end()) return it->second;
    tgid_[tid] = tid;
    return tid;
  }

  Status Take(const StraceRecord& rec, const StraceParser& parser) {
    if (rec.kind != StraceRecord::Kind::kCall) {
      ++report_.process_lines;
      if ((rec.kind == StraceRecord::Kind::kExited || rec.kind == StraceRecord::Kind::kKilled) &&
          writer_)
        return writer_->EndStream(Tgid(rec.tid), rec.tid);
      return {};
    }
    const CallSpec* spec = SpecByName(rec.name);
    int other_nr = -1;
    if (spec == nullptr) {
      other_nr = SyscallNumber(rec.name);
      if (other_nr < 0) {
        ++report_.unknown_calls;
        AddProblem("line " + std::to_string(rec.line_no) + ": unknown syscall " +
                   std::string(rec.name));
        return {};
      }
      spec = &Spec(CallId::other);
    }
    if (!writer_) {
      if (spec->tag == static_cast<uint16_t>(CallId::execve) && rec.args.size() >= 2)
        cmdline_ = std::string(rec.args[1].text);
      base_ns_ = rec.has_time ? rec.time_ns : 0;
      if (Status s = OpenWriter(base_ns_); !s.ok()) return s;
    }
    Event e;
    e.call = static_cast<CallId>(spec->tag);
    e.tid = rec.tid;
    e.pid = Tgid(rec.tid);
    e.start_ns = rec.has_time ? rec.time_ns - base_ns_ : 0;
    // (Both may be near 9e18 ns, what a log's seconds can say: the sum saturates, as a signed
    // overflow here made end times negative, and undefined behaviour, found by review.)
    if (__builtin_add_overflow(e.start_ns, rec.has_duration ? rec.duration_ns : 0, &e.end_ns))
      e.end_ns = std::numeric_limits<int64_t>::max();
    if (other_nr >= 0) {
      e.args[0].i = other_nr;
      ++report_.other_calls;
    } else {
      ++report_.table_calls;
      MapArgs(*spec, rec, &e);
    }
    if (!rec.has_ret) {
      ++report_.no_return;
      e.ret = 0;
    } else if (!rec.err_name.empty()) {
      int err = ErrnoFromName(rec.err_name);
      if (err <= 0 || err > 4095) {
        ++report_.bad_args;
        AddProblem("line " + std::to_string(rec.line_no) + ": unknown errno " +
                   std::string(rec.err_name));
        err = 4095;
      }
      e.ret = -err;
    } else if (spec->ret == Ret::kMode) {  // strace prints modes in octal: "022"
      e.ret = ParseArg(ArgKind::kMode, "0" + std::to_string(rec.ret)).value_or(rec.ret);
    } else {
      e.ret = rec.ret;
    }
    NoteProcesses(*spec, e);
    if (rec.has_time) {
      // Records come in start order, except calls still unfinished: they may start earlier.
      int64_t oldest = parser.OldestUnfinishedNs();
      int64_t promise = std::min(rec.time_ns, oldest) - base_ns_ - kPromiseSlackNs;
      if (promise > promised_) {
        promised_ = promise;
        writer_->Promise(promise);
      }
    }
    ++report_.events;
    return writer_->Add(e);
  }

  void MapArgs(const CallSpec& spec, const StraceRecord& rec, Event* e) {
    for (int a = 0; a < spec.nargs; ++a)  // not in strace's text (FICLONE's size): unknown
      if (spec.args[a].kind == ArgKind::kCloneSize) e->args[a].i = -1;
    bool named = !rec.args.empty() && !KeyOf(rec.args[0].text).empty() &&
                 spec.tag == static_cast<uint16_t>(CallId::clone);
    for (size_t t = 0; t < rec.args.size(); ++t) {
      std::string_view text = rec.args[t].text;
      int i = static_cast<int>(t);
      if (named) {
        std::string_view k = KeyOf(text);
        i = -1;
        for (int a = 0; a < spec.nargs; ++a)
          if (spec.args[a].name == k) i = a;
        if (i < 0) continue;
        text = text.substr(k.size() + 1);
      }
      if (i >= spec.nargs) break;
      ArgKind kind = spec.args[i].kind;
      if (kind == ArgKind::kBuf) continue;
      if (kind == ArgKind::kLinkTarget || kind == ArgKind::kXattrValue) {
        // Bytes the call moved (format 3): readlink's target, as many as it returned;
        // setxattr's value, as many as its size says, if it succeeded. Unknown (NULL, as a
        // trace before format 3 has them) where strace printed a pointer (a failure, -X), cut
        // the string (-s), or printed another length. (MapArgs runs before the result is
        // stored: it is read from the record.)
        int64_t ok_ret = rec.has_ret && rec.err_name.empty() ? rec.ret : -1;
        int64_t want = -1;
        if (kind == ArgKind::kLinkTarget)
          want = ok_ret;
        else if (ok_ret == 0 && t + 1 < rec.args.size())
          want = ParseArg(ArgKind::kSize, rec.args[t + 1].text).value_or(-1);
        bool truncated = false;
        auto s = want > 0 ? UnescapeStraceString(text, &truncated) : std::nullopt;
        if (!s || truncated || static_cast<int64_t>(s->size()) != want) {
          e->args[i].null = true;
          continue;
        }
        strings_[i] = std::move(*s);
        e->args[i].s = strings_[i];
        continue;
      }
      if (spec.tag == static_cast<uint16_t>(CallId::bind) && i == 1) {
        // The path of an AF_UNIX pathname address, `{sa_family=AF_UNIX, sun_path="/tmp/s"}`;
        // NULL for any other: another family, an abstract (sun_path=@"...") or unnamed one.
        std::optional<std::string> path = UnixSocketPath(text);
        if (path) {
          strings_[i] = std::move(*path);
          e->args[i].s = strings_[i];
        } else {
          e->args[i].null = true;
        }
        continue;
      }
      if (IsString(kind)) {
        if (text == "NULL") {
          e->args[i].null = true;
          continue;
        }
        auto s = UnescapeStraceString(text);
        if (!s) {
          BadArg(rec, spec, i, text);
          continue;
        }
        strings_[i] = std::move(*s);
        e->args[i].s = strings_[i];
        continue;
      }
      auto v = ParseArg(kind, text);
      if (!v) {
        BadArg(rec, spec, i, text);
        continue;
      }
      e->args[i].i = *v;
    }
  }

  void BadArg(const StraceRecord& rec, const CallSpec& spec, int i, std::string_view text) {
    ++report_.bad_args;
    AddProblem("line " + std::to_string(rec.line_no) + ": " + std::string(spec.name) + " argument " +
               std::string(spec.args[i].name) + " not understood: " +
               std::string(text.substr(0, 200)));
  }

  // Threads and processes: a clone with CLONE_THREAD makes a thread of the caller's process.
  void NoteProcesses(const CallSpec& spec, const Event& e) {
    if (e.ret <= 0 || spec.effect != Effect::kProcess) return;
    auto child = static_cast<uint32_t>(e.ret);
    bool thread = (spec.tag == static_cast<uint16_t>(CallId::clone) ||
                   spec.tag == static_cast<uint16_t>(CallId::clone3)) &&
                  (e.args[0].i & 0x00010000 /* CLONE_THREAD */);
    tgid_[child] = thread ? e.pid : child;
  }

  std::string out_path_;
  StraceImportOptions options_;
  std::unique_ptr<TraceWriter> writer_;
  StraceImportReport report_;
  std::unordered_map<uint32_t, uint32_t> tgid_;
  std::string strings_[kMaxArgs];
  std::string cmdline_;
  int64_t base_ns_ = 0;
  int64_t promised_ = std::numeric_limits<int64_t>::min();
};

}  // namespace

Result<StraceImportReport> ImportStrace(LineSource& log, const std::string& out_path,
                                        const StraceImportOptions& options) {
  Importer imp(out_path, options);
  if (Status s = imp.Run(log); !s.ok()) return s;
  return imp.report();
}

}  // namespace iorr::trace
