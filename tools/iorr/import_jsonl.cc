// `iorr import jsonl FILE -o TRACE`: makes a trace from JSON lines (the shape `iorr dump --json`
// prints, traces/jsonl.h). Any bad line stops the import; the trace is written to TRACE.tmp and
// renamed only on success, so a failed import never leaves a valid-looking trace.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/iorr/cli.h"
#include "traces/format.h"
#include "traces/jsonl.h"
#include "traces/writer.h"

namespace iorr::cli {
namespace {

struct Options {
  std::string input;
  std::string output;
  uint32_t time_unit = 0;  // 0: the header line's, else 1000
};

// Reads a file ("-": stdin) line by line in large blocks. Lines are views into the buffer,
// valid until the next call.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path) {
    if (path == "-") {
      fd_ = 0;
    } else {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
      own_ = true;
    }
    buf_.resize(1 << 20);
  }
  ~LineReader() {
    if (own_) ::close(fd_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n'; false at the end of the input. Throws on read errors and
  // on lines longer than the JSON parser takes.
  bool Next(std::string_view* line) {
    for (;;) {
      const char* base = buf_.data();
      if (const void* nl = std::memchr(base + scan_, '\n', end_ - scan_)) {
        size_t at = static_cast<size_t>(static_cast<const char*>(nl) - base);
        *line = std::string_view(base + begin_, at - begin_);
        consumed_ += at + 1 - begin_;
        begin_ = scan_ = at + 1;
        return true;
      }
      scan_ = end_;
      if (end_ - begin_ > trace::json::kMaxLineBytes)
        throw Error(path_ + ":" + std::to_string(line_no() + 1) + ": line longer than 16 MiB");
      if (eof_) {
        if (begin_ == end_) return false;
        *line = std::string_view(base + begin_, end_ - begin_);
        consumed_ += end_ - begin_;
        begin_ = scan_ = end_;
        return true;
      }
      if (begin_ > 0) {
        std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        scan_ -= begin_;
        begin_ = 0;
      }
      if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
      ssize_t got = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
      if (got < 0) {
        if (errno == EINTR) continue;
        throw Error("cannot read " + path_ + ": " + std::strerror(errno));
      }
      if (got == 0) eof_ = true;
      end_ += static_cast<size_t>(got);
    }
  }
  void count_line() { ++lines_; }
  uint64_t line_no() const { return lines_; }
  uint64_t consumed() const { return consumed_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool own_ = false;
  std::vector<char> buf_;
  size_t begin_ = 0, scan_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t lines_ = 0;
  uint64_t consumed_ = 0;
};

// Removes the temporary trace unless the import succeeded.
struct TempFile {
  std::string path;
  bool keep = false;
  ~TempFile() {
    if (!path.empty() && !keep) ::unlink(path.c_str());
  }
};

// No promise: the writer's initial state.
constexpr int64_t kNoPromise = std::numeric_limits<int64_t>::min();

int Run(const Options& o) {
  if (o.time_unit != 0 && !trace::ValidTimeUnit(o.time_unit))
    throw Error("--time-unit must be 1, 10, 100 or 1000");
  const std::string name = o.input == "-" ? "stdin" : o.input;
  LineReader in(o.input);
  struct stat st {};
  uint64_t in_bytes =
      o.input != "-" && ::stat(o.input.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;

  TempFile tmp;
  std::string target = o.output;
  if (o.output != "-") {
    tmp.path = o.output + ".tmp";
    target = tmp.path;
  }

  trace::JsonlParser parser;
  std::unique_ptr<trace::TraceWriter> w;
  auto fail = [&](const std::string& why) -> Error {
    return Error(name + ":" + std::to_string(in.line_no()) + ": " + why);
  };
  auto create = [&](trace::Header h) {
    trace::WriterOptions wo;
    wo.time_unit_ns = o.time_unit ? o.time_unit : h.core.time_unit_ns;
    auto created = trace::TraceWriter::Create(target, std::move(h), wo);
    if (!created.ok()) throw Error(created.status().message());
    w = std::move(*created);
  };
  auto default_header = [] {
    trace::Header h;
    h.core.time_unit_ns = 1000;
    h.Set(trace::key::kSource, "jsonl");
    return h;
  };

  bool ordered = true;  // starts non-decreasing so far: promise each start
  int64_t last_start = std::numeric_limits<int64_t>::min();
  int64_t promise = kNoPromise;
  int64_t flushed_promise = kNoPromise;  // highest promise in force when a chunk was written
  uint64_t chunks = 0;
  bool warned = false;
  std::unordered_map<uint64_t, int64_t> stream_last;  // (pid, tid) -> its latest start so far
  Progress progress("importing", in_bytes);
  std::string_view line;
  while (in.Next(&line)) {
    in.count_line();
    progress.Update(in.consumed());
    switch (parser.Parse(line)) {
      case trace::JsonlParser::Kind::kBlank:
        break;
      case trace::JsonlParser::Kind::kError:
        throw fail(parser.error());
      case trace::JsonlParser::Kind::kHeader:
        if (w) throw fail("the header line must come first");
        create(parser.header());
        break;
      case trace::JsonlParser::Kind::kNote:
        if (!w) create(default_header());
        if (Status s = w->AddNote(parser.note()); !s.ok()) throw fail(s.message());
        break;
      case trace::JsonlParser::Kind::kEvent: {
        if (!w) create(default_header());
        const trace::Event& e = parser.event();
        if (ordered && e.start_ns < last_start) {
          ordered = false;  // from here on the merged order rests on the readers' buffering
          promise = kNoPromise;
          w->Promise(promise);
        }
        if (ordered) {
          last_start = e.start_ns;
          promise = e.start_ns;
          w->Promise(promise);
        }
        // A chunk's events come out of the merged reader in the order they were added, so a
        // thread that goes back in time starts a new chunk.
        auto [last, fresh] = stream_last.try_emplace(uint64_t{e.pid} << 32 | e.tid, e.start_ns);
        if (!fresh) {
          if (e.start_ns < last->second) {
            if (Status s = w->EndStream(e.pid, e.tid); !s.ok()) throw fail(s.message());
          }
          last->second = e.start_ns;
        }
        if (e.start_ns < flushed_promise && !warned) {
          warned = true;
          std::fprintf(stderr,
                       "iorr: warning: %s:%llu: start_ns goes back before events already written; "
                       "merged views will show such events out of time order\n",
                       name.c_str(), static_cast<unsigned long long>(in.line_no()));
        }
        if (Status s = w->Add(e); !s.ok()) throw fail(s.message());
        if (e.call == trace::CallId::exit || e.call == trace::CallId::exit_group) {
          // The thread is done: its stream goes out now, as the recorder's and the strace
          // importer's do, so a trace of many short processes holds one encoder at a time
          // (10,000 processes took 572 MB and 1.6 s, 100,000 over 5 GB and minutes).
          if (Status s = w->EndStream(e.pid, e.tid); !s.ok()) throw fail(s.message());
          stream_last.erase(uint64_t{e.pid} << 32 | e.tid);
        }
        if (w->chunks() != chunks) {
          chunks = w->chunks();
          if (promise > flushed_promise) flushed_promise = promise;
        }
        break;
      }
    }
  }
  progress.Done();
  if (!w) create(default_header());
  if (Status s = w->Close(); !s.ok()) throw Error(s.message());
  w.reset();
  if (!tmp.path.empty()) {
    if (::rename(tmp.path.c_str(), o.output.c_str()) != 0)
      throw Error("cannot rename " + tmp.path + " to " + o.output + ": " + std::strerror(errno));
    tmp.keep = true;
  }
  return kExitOk;
}

}  // namespace

void RegisterImportJsonl(CLI::App& import, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = import.add_subcommand(
      "jsonl",
      "Make a trace from JSON lines as `iorr dump --json` prints them: an optional\n"
      "header line, one object per event, notes. Arguments may also be given as strace\n"
      "spellings (\"flags\":\"O_WRONLY|O_CREAT\"). Any bad line stops the import.");
  sub->add_option("file", o->input, "JSON lines file (- for stdin)")->required();
  sub->add_option("-o,--output", o->output, "Trace to write (- for stdout)")->required();
  sub->add_option("--time-unit", o->time_unit,
                  "Time resolution of the trace in ns: 1, 10, 100 or 1000 (default: the header "
                  "line's, else 1000)")
      ->type_name("NS");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
