// `iorr report TRACE -o FILE.html`: a storage engineer's one-page view of a recording, to attach
// to a bug or a review: the trace's header and notes, the summary `iorr stats` gives, the call
// mix with durations, a timeline, the busiest files, the processes and the errors by errno; with
// --replay, reports `iorr replay --report` wrote, beside the recording; with --disk, `iorr
// model`'s what-if table. One self-contained HTML file: inline CSS and SVG, no script, valid
// UTF-8, every string from a trace or a report escaped (names in traces are untrusted input).
//
// One pass over the trace, in effect order as the model reads it (file descriptors are followed
// by number, across forks), in memory bounded by the caps below rather than by the trace's
// length: per-call and per-file aggregates, durations in log histograms, a timeline whose
// buckets widen as the run grows. Main thread only.
#include <fcntl.h>
#include <linux/sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tools/iorr/cli.h"
#include "tools/iorr/event_counts.h"
#include "tools/iorr/model_table.h"
#include "traces/json.h"
#include "traces/jsonl.h"
#include "traces/names.h"
#include "traces/path_normalize.h"
#include "traces/reader.h"

namespace iorr::cli {
namespace {

using trace::ArgKind;
using trace::CallId;
using trace::Effect;
using trace::Event;

// Caps that bound memory on any trace (the page says when one was reached).
constexpr size_t kMaxFiles = 250'000;            // distinct files (and fd stand-ins) followed
constexpr size_t kMaxFileNameBytes = 64u << 20;  // their names
constexpr size_t kMaxProcesses = 100'000;        // processes followed one by one
constexpr size_t kMaxThreads = 1'000'000;        // distinct threads counted
constexpr size_t kMaxLiveFds = 1u << 20;         // fd table entries, over all processes
constexpr size_t kMaxOtherCalls = 256;           // distinct syscalls outside the table
constexpr size_t kMaxPathBytes = 4095;           // a name longer than PATH_MAX is not kept
constexpr const char* kLongName = "(names longer than PATH_MAX)";
// What the page lists.
constexpr size_t kTopFiles = 20;
constexpr size_t kTopProcesses = 30;
constexpr size_t kMaxNotesShown = 300;
constexpr size_t kMaxShownBytes = 1000;  // a longer string is cut in the page
constexpr size_t kTimelineBuckets = 200;

struct Options {
  std::string trace;
  std::string output;
  std::string title;
  std::vector<std::string> replays;
  std::vector<std::string> disks;
  std::vector<std::string> fs = {"ext4"};
  std::vector<std::string> only;
};

// ---- Escaping and formatting.

// Appends s as HTML text or a quoted attribute's value: & < > " ' as character references;
// control characters and bytes that are not well-formed UTF-8 as a visible \xNN (\n and \t as
// such), and so a backslash as \\, as `iorr dump` prints names. The page stays valid UTF-8 and
// no byte of a name can open markup. Strings past kMaxShownBytes are cut, and say so.
void AppendHtml(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  size_t shown = std::min(s.size(), kMaxShownBytes);
  for (size_t i = 0; i < shown; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    static constexpr std::pair<char, const char*> kReplaced[] = {
        {'&', "&amp;"},  {'<', "&lt;"},  {'>', "&gt;"}, {'"', "&quot;"},
        {'\'', "&#39;"}, {'\\', "\\\\"}, {'\n', "\\n"}, {'\t', "\\t"}};
    const char* replaced = nullptr;
    for (const auto& [from, to] : kReplaced)
      if (c == static_cast<unsigned char>(from)) replaced = to;
    if (replaced) {
      out += replaced;
      continue;
    }
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    // Well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF) passes.
    size_t len = iorr::Utf8SequenceAt(s, i);
    bool valid = len != 0;
    // C1 controls (U+0080..U+009F) are not allowed in HTML text either.
    if (valid && len == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0)
      valid = false;
    if (valid) {
      out.append(s.data() + i, len);
      i += len - 1;
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (shown < s.size()) out += "&#8230; (" + Thousands(s.size()) + " bytes)";
}

std::string Html(std::string_view s) {
  std::string out;
  AppendHtml(out, s);
  return out;
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// 1234567 -> "1.2 MB" (decimal units, as `iorr model` prints MB).
std::string HumanBytes(uint64_t b) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1000 && u < 6) {
    v /= 1000;
    ++u;
  }
  return u == 0 ? std::to_string(b) + " B" : Fmt("%.1f ", v) + kUnits[u];
}

// ns as seconds: "12.345678 s" with the digits the resolution gives (6 at 1 us).
std::string Seconds(int64_t ns, int decimals = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f s", decimals, static_cast<double>(ns) / 1e9);
  return buf;
}

std::string Micros(double ns) { return Fmt("%.1f", ns / 1e3); }

std::string WallTime(int64_t ns) {
  if (ns <= 0) return "unknown";
  time_t secs = static_cast<time_t>(ns / 1000000000);
  struct tm tm {};
  if (gmtime_r(&secs, &tm) == nullptr) return "unknown";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// ---- Aggregates.

// Durations in a log-linear histogram of time units: exact below 64 units, 32 buckets per
// power of two above (a bucket's middle is within 1.6% of any value in it), in at most 1,920
// counters however many calls.
class DurationHistogram {
 public:
  void Add(uint64_t units) {
    size_t i = Index(units);
    if (i >= counts_.size()) counts_.resize(i + 1);
    ++counts_[i];
    ++n_;
    max_ = std::max(max_, units);
  }
  // The value of rank round(q (n - 1)), as `iorr replay`'s report takes its percentiles (its
  // bucket's middle, so no more than the largest value added).
  uint64_t Quantile(double q) const {
    if (n_ == 0) return 0;
    auto rank = static_cast<uint64_t>(q * static_cast<double>(n_ - 1) + 0.5);
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen > rank) return std::min(Middle(i), max_);
    }
    return max_;
  }
  static size_t Index(uint64_t v) {
    if (v < 64) return v;
    int e = 63 - __builtin_clzll(v);  // 6..63
    return 64 + static_cast<size_t>(e - 6) * 32 + ((v >> (e - 5)) & 31);
  }
  static uint64_t Middle(size_t i) {
    if (i < 64) return i;
    size_t e = (i - 64) / 32 + 6, sub = (i - 64) % 32;
    return ((32 + sub) << (e - 5)) + ((uint64_t{1} << (e - 5)) >> 1);
  }

 private:
  std::vector<uint64_t> counts_;
  uint64_t n_ = 0, max_ = 0;
};

struct CallStats {
  uint64_t count = 0, errors = 0;
  uint64_t total_ns = 0;  // saturates
  int64_t max_ns = 0;
  DurationHistogram durations;  // in time units
};

// Calls, bytes and errors over time, by start: buckets of a width that doubles whenever the
// events seen so far would need more than kTimelineBuckets (so 100 to 200 at the end, in any
// order of arrival).
class Timeline {
 public:
  struct Bucket {
    uint64_t calls = 0, bytes_read = 0, bytes_written = 0, errors = 0;
    void operator+=(const Bucket& o) {
      calls += o.calls;
      bytes_read += o.bytes_read;
      bytes_written += o.bytes_written;
      errors += o.errors;
    }
  };
  explicit Timeline(int64_t unit_ns) : width_(std::max<int64_t>(1, unit_ns)) {}

  void Add(int64_t t, const Bucket& add) {
    int64_t i = FloorDiv(t, width_);
    if (buckets_.empty()) {
      lo_ = i;
      buckets_.resize(1);
    }
    while (i < lo_ || i - lo_ >= static_cast<int64_t>(buckets_.size())) {
      int64_t hi = lo_ + static_cast<int64_t>(buckets_.size()) - 1;
      int64_t new_lo = std::min(lo_, i), new_hi = std::max(hi, i);
      if (static_cast<uint64_t>(new_hi) - static_cast<uint64_t>(new_lo) < kTimelineBuckets) {
        if (i < lo_)
          buckets_.insert(buckets_.begin(), static_cast<size_t>(lo_ - i), Bucket{});
        else
          buckets_.resize(static_cast<size_t>(i - lo_) + 1);
        lo_ = new_lo;
        break;
      }
      Coarsen();
      i = FloorDiv(t, width_);
    }
    buckets_[static_cast<size_t>(i - lo_)] += add;
  }

  int64_t width_ns() const { return width_; }
  int64_t start_ns() const { return lo_ * width_; }  // of the first bucket
  const std::vector<Bucket>& buckets() const { return buckets_; }

 private:
  static int64_t FloorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b < 0) ? q - 1 : q;
  }
  void Coarsen() {
    width_ *= 2;  // (2^62 at most: indices of int64 times then span 4 buckets)
    int64_t new_lo = FloorDiv(lo_, 2);
    int64_t hi = lo_ + static_cast<int64_t>(buckets_.size()) - 1;
    std::vector<Bucket> merged(static_cast<size_t>(FloorDiv(hi, 2) - new_lo) + 1);
    for (size_t k = 0; k < buckets_.size(); ++k)
      merged[static_cast<size_t>(FloorDiv(lo_ + static_cast<int64_t>(k), 2) - new_lo)] +=
          buckets_[k];
    buckets_ = std::move(merged);
    lo_ = new_lo;
  }
  int64_t width_;
  int64_t lo_ = 0;  // index of buckets_[0]
  std::vector<Bucket> buckets_;
};

struct FileStats {
  std::string name;  // absolute and normal, or "(...)" for what is not a named file
  uint64_t calls = 0, errors = 0, bytes_read = 0, bytes_written = 0;
};

struct Process {
  bool seen = false;  // it has events (a fork's child may have none)
  uint32_t parent = 0;
  bool has_parent = false;
  std::string program;  // the last exec's, or the parent's
  bool exec = false;    // program is from an exec of its own
  uint32_t threads = 0;
  uint64_t events = 0, errors = 0, bytes_read = 0, bytes_written = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
};

struct ErrnoStats {
  uint64_t count = 0;
  std::map<std::string, uint64_t> calls;  // by call name
  std::string example;                    // the first path that failed so
};

// Everything the page shows of the trace's events.
class Tally {
 public:
  Tally(const trace::Header& h, const std::vector<std::string>& only)
      : unit_ns_(std::max<uint32_t>(1, h.core.time_unit_ns)), timeline_(unit_ns_) {
    std::string_view cwd = h.Get(trace::key::kCwd);
    if (!cwd.empty() && cwd[0] == '/') initial_cwd_ = Normal(cwd);
    for (const std::string& p : only) only_.push_back(Normal(p));
  }

  void Add(const Event& e);

  const EventCounts& all() const { return all_; }
  const EventCounts& kept() const { return kept_; }
  bool filtered() const { return !only_.empty(); }
  const std::vector<std::string>& only() const { return only_; }
  uint32_t unit_ns() const { return unit_ns_; }
  const CallStats& call(uint16_t tag) const { return calls_[tag]; }
  const std::map<int64_t, CallStats>& other_calls() const { return other_calls_; }
  const CallStats& more_calls() const { return more_calls_; }
  const Timeline& timeline() const { return timeline_; }
  const std::deque<FileStats>& files() const { return files_; }
  uint64_t named_files() const { return named_files_; }
  bool files_capped() const { return files_capped_; }
  const FileStats& untracked() const { return untracked_; }
  const std::unordered_map<uint32_t, Process>& processes() const { return processes_; }
  bool processes_capped() const { return processes_capped_; }
  uint64_t threads() const { return threads_.size(); }
  bool threads_capped() const { return threads_capped_; }
  const std::map<int, ErrnoStats>& errnos() const { return errnos_; }
  bool fds_capped() const { return fds_capped_; }

 private:
  struct OpenFile {
    std::string path;   // what it was opened by (absolute, normal), or a stand-in "(pipe)"
    int64_t file = -1;  // index in files_, -1 if not followed (cap)
    bool kept = false;  // under --only
  };
  struct Fd {
    std::shared_ptr<const OpenFile> of;
    bool cloexec = false;
  };
  using FdTable = std::unordered_map<int64_t, Fd>;

  static std::string Normal(std::string_view p) {
    std::string out = "/";
    trace::AppendNormalized(&out, p);
    return out;
  }
  bool Under(const std::string& path) const {
    for (const std::string& prefix : only_)
      if (prefix == "/" ||
          (path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
           (path.size() == prefix.size() || path[prefix.size()] == '/')))
        return true;
    return false;
  }

  const Fd* FindFd(uint32_t pid, int64_t fd) const {
    auto t = tables_.find(pid);
    if (t == tables_.end()) return nullptr;
    auto it = t->second->find(fd);
    return it == t->second->end() ? nullptr : &it->second;
  }
  std::shared_ptr<FdTable> NewTable(const FdTable* from) {
    auto* t = from ? new FdTable(*from) : new FdTable();
    live_fds_ += t->size();
    return std::shared_ptr<FdTable>(t, [live = &live_fds_](FdTable* gone) {
      *live -= gone->size();
      delete gone;
    });
  }
  FdTable& TableOf(uint32_t pid) {
    std::shared_ptr<FdTable>& t = tables_[pid];
    if (!t) t = NewTable(nullptr);
    return *t;
  }
  void SetFd(uint32_t pid, int64_t fd, Fd entry) {
    FdTable& t = TableOf(pid);
    auto it = t.find(fd);
    if (it != t.end()) {
      it->second = std::move(entry);
    } else if (live_fds_ < kMaxLiveFds) {
      t.emplace(fd, std::move(entry));
      ++live_fds_;
    } else {
      fds_capped_ = true;
    }
  }
  void EraseFd(uint32_t pid, int64_t fd) {
    auto t = tables_.find(pid);
    if (t != tables_.end()) live_fds_ -= t->second->erase(fd);
  }

  // The file at this name (made if new and under the cap), or -1.
  int64_t FileIndex(const std::string& name) {
    auto it = file_index_.find(name);
    if (it != file_index_.end()) return static_cast<int64_t>(it->second);
    if (files_.size() >= kMaxFiles || file_name_bytes_ + name.size() > kMaxFileNameBytes) {
      files_capped_ = true;
      return -1;
    }
    files_.push_back(FileStats{name});
    file_name_bytes_ += name.size();
    if (name[0] == '/') ++named_files_;
    file_index_.emplace(files_.back().name, files_.size() - 1);  // (a deque's elements stay)
    return static_cast<int64_t>(files_.size() - 1);
  }
  FileStats& FileAt(int64_t i) { return i >= 0 ? files_[static_cast<size_t>(i)] : untracked_; }
  // named: path is a file's name, not a stand-in (which --only never keeps).
  std::shared_ptr<const OpenFile> NewOpenFile(std::string path, bool named = true) {
    auto of = std::make_shared<OpenFile>();
    of->kept = only_.empty() || (named && Under(path));
    of->file = FileIndex(path);
    of->path = std::move(path);
    return of;
  }

  // The absolute, normal path of argument idx, relative to its dirfd or the process's cwd.
  void Resolve(const Event& e, int idx, std::string* out) const;
  // What fd names in e's process: its open file, or a stand-in for an fd the trace never showed
  // opened.
  std::shared_ptr<const OpenFile> OpenFileOf(uint32_t pid, int64_t fd);
  // fds: what Add found each fd argument (or path naming its dirfd) to name.
  void Bookkeep(const Event& e, const std::shared_ptr<const OpenFile>* fds);

  uint32_t unit_ns_;
  std::string initial_cwd_ = "/";
  std::vector<std::string> only_;
  EventCounts all_, kept_;
  CallStats calls_[trace::kMaxTag + 1];
  std::map<int64_t, CallStats> other_calls_;
  CallStats more_calls_;  // syscalls outside the table past kMaxOtherCalls distinct ones
  Timeline timeline_;
  std::deque<FileStats> files_;
  std::unordered_map<std::string_view, size_t> file_index_;  // views of files_' names
  size_t file_name_bytes_ = 0;
  uint64_t named_files_ = 0;
  bool files_capped_ = false;
  FileStats untracked_{"(files past the cap)"};
  std::unordered_map<int64_t, std::shared_ptr<const OpenFile>> unknown_fds_;  // by fd number
  std::shared_ptr<const OpenFile> more_unknown_fds_;
  std::unordered_map<uint32_t, Process> processes_;
  bool processes_capped_ = false;
  std::unordered_set<uint64_t> threads_;
  bool threads_capped_ = false;
  std::map<int, ErrnoStats> errnos_;
  size_t live_fds_ = 0;  // before tables_: their deleters count it down
  bool fds_capped_ = false;
  std::unordered_map<uint32_t, std::shared_ptr<FdTable>> tables_;  // CLONE_FILES: shared
  std::unordered_map<uint32_t, std::string> cwd_;
  std::string resolved_[trace::kMaxArgs];
};

void Tally::Resolve(const Event& e, int idx, std::string* out) const {
  std::string_view p = e.args[idx].s;
  if (p.size() > kMaxPathBytes) {  // (the kernel refuses it: ENAMETOOLONG)
    *out = kLongName;
    return;
  }
  if (!p.empty() && p[0] == '/') {
    *out = "/";
    trace::AppendNormalized(out, p);
    return;
  }
  const std::string* base = nullptr;
  if (idx > 0 && e.spec().args[idx - 1].kind == ArgKind::kDirFd && e.args[idx - 1].i != AT_FDCWD)
    if (const Fd* fd = FindFd(e.pid, e.args[idx - 1].i); fd && fd->of->path[0] == '/')
      base = &fd->of->path;
  if (!base) {
    auto it = cwd_.find(e.pid);
    base = it != cwd_.end() ? &it->second : &initial_cwd_;
  }
  *out = *base;
  trace::AppendNormalized(out, p);
  if (out->size() > kMaxPathBytes) *out = kLongName;
}

std::shared_ptr<const Tally::OpenFile> Tally::OpenFileOf(uint32_t pid, int64_t fd) {
  if (const Fd* f = FindFd(pid, fd)) return f->of;
  auto it = unknown_fds_.find(fd);
  if (it != unknown_fds_.end()) return it->second;
  if (unknown_fds_.size() >= 4096) {  // (a hostile trace's fd numbers: one stand-in for the rest)
    if (!more_unknown_fds_)
      more_unknown_fds_ = NewOpenFile("(other fds not opened in the trace)", false);
    return more_unknown_fds_;
  }
  auto of = NewOpenFile("(fd " + std::to_string(fd) + ", not opened in the trace)", false);
  unknown_fds_.emplace(fd, of);
  return of;
}

void Tally::Add(const Event& e) {
  all_.Add(e);
  const trace::CallSpec& spec = e.spec();
  uint64_t thread = uint64_t{e.pid} << 32 | e.tid;
  bool new_thread = false;
  if (threads_.size() < kMaxThreads)
    new_thread = threads_.insert(thread).second;
  else
    threads_capped_ = threads_capped_ || !threads_.count(thread);
  Process* proc = nullptr;
  if (auto it = processes_.find(e.pid); it != processes_.end()) {
    proc = &it->second;
  } else if (processes_.size() < kMaxProcesses) {
    proc = &processes_[e.pid];
  } else {
    processes_capped_ = true;
  }
  if (proc) {
    proc->seen = true;
    if (new_thread) ++proc->threads;
  }

  // The files the event names: its paths (resolved) and its fds.
  std::shared_ptr<const OpenFile> fds[trace::kMaxArgs];
  bool path_given = false, kept_path = false;
  for (int i = 0; i < spec.nargs; ++i) {
    ArgKind k = spec.args[i].kind;
    if (k == ArgKind::kPath) {
      resolved_[i].clear();
      if (e.args[i].null || e.args[i].s.empty()) {
        // A null or empty path after a dirfd names the dirfd's file (futimens is utimensat(fd,
        // NULL), fstat newfstatat(fd, "", AT_EMPTY_PATH)).
        if (i > 0 && spec.args[i - 1].kind == ArgKind::kDirFd && e.args[i - 1].i >= 0)
          fds[i] = OpenFileOf(e.pid, e.args[i - 1].i);
        if (e.args[i].null || fds[i]) continue;
      }
      Resolve(e, i, &resolved_[i]);
      path_given = true;
      kept_path = kept_path || only_.empty() || Under(resolved_[i]);
    } else if (k == ArgKind::kFd && e.args[i].i >= 0) {
      fds[i] = OpenFileOf(e.pid, e.args[i].i);
    }
  }
  bool keep = only_.empty();
  if (!keep) {
    if (path_given) {
      keep = kept_path;
    } else if (e.call == CallId::sync) {
      keep = true;
    } else {
      for (int i = 0; i < spec.nargs && !keep; ++i) keep = fds[i] && fds[i]->kept;
    }
  }
  // What the recorder saw of the file system (listings, the initial state) and block requests
  // are counted as events, as `iorr stats` does, but are not calls of the program.
  bool state = spec.effect == Effect::kState || spec.effect == Effect::kBlock;
  if (keep) {
    kept_.Add(e);
    CallStats* cs = &calls_[spec.tag];
    if (e.call == CallId::other) {
      auto it = other_calls_.find(e.args[0].i);
      if (it != other_calls_.end())
        cs = &it->second;
      else if (other_calls_.size() < kMaxOtherCalls)
        cs = &other_calls_[e.args[0].i];
      else
        cs = &more_calls_;
    }
    ++cs->count;
    if (e.failed()) ++cs->errors;
    int64_t d = e.end_ns > e.start_ns ? e.end_ns - e.start_ns : 0;
    if (__builtin_add_overflow(cs->total_ns, static_cast<uint64_t>(d), &cs->total_ns))
      cs->total_ns = UINT64_MAX;
    cs->max_ns = std::max(cs->max_ns, d);
    cs->durations.Add(static_cast<uint64_t>(d) / unit_ns_);
  }
  if (keep && !state) {
    uint64_t r, w;
    EventCounts::Bytes(e, &r, &w);
    timeline_.Add(e.start_ns, Timeline::Bucket{1, r, w, e.failed() ? 1u : 0u});
    if (proc) {
      ++proc->events;
      proc->errors += e.failed();
      proc->bytes_read += r;
      proc->bytes_written += w;
      proc->first = std::min(proc->first, e.start_ns);
      proc->last = std::max(proc->last, e.end_ns);
    }
    // Each file the event names once: a call, an error, and the bytes its fd moved (a copy
    // reads one fd and writes the other).
    int64_t seen[2 * trace::kMaxArgs];
    int nseen = 0;
    auto touch = [&](int64_t file) {
      for (int k = 0; k < nseen; ++k)
        if (seen[k] == file) return;
      seen[nseen++] = file;
      FileStats& f = FileAt(file);
      ++f.calls;
      f.errors += e.failed();
    };
    for (int i = 0; i < spec.nargs; ++i) {
      if (fds[i]) {
        touch(fds[i]->file);
      } else if (!resolved_[i].empty() && spec.args[i].kind == ArgKind::kPath) {
        touch(FileIndex(resolved_[i]));
      }
    }
    int read_arg = -1, write_arg = -1;
    if (spec.effect == Effect::kRead) read_arg = 0;
    if (spec.effect == Effect::kWrite) write_arg = 0;
    if (e.call == CallId::copy_file_range) read_arg = 0, write_arg = 2;
    if (e.call == CallId::sendfile) read_arg = 1, write_arg = 0;
    if (read_arg >= 0 && fds[read_arg]) FileAt(fds[read_arg]->file).bytes_read += r;
    if (write_arg >= 0 && fds[write_arg]) FileAt(fds[write_arg]->file).bytes_written += w;
    if (e.failed()) {
      ErrnoStats& es = errnos_[e.err()];
      ++es.count;
      ++es.calls[e.call == CallId::other ? EventCounts::OtherName(e.args[0].i)
                                         : std::string(spec.name)];
      if (es.example.empty()) {
        for (int i = 0; i < spec.nargs && es.example.empty(); ++i)
          if (fds[i])
            es.example = fds[i]->path;
          else if (spec.args[i].kind == ArgKind::kPath)
            es.example = resolved_[i];
      }
    }
  }
  Bookkeep(e, fds);
}

// What changes which file an fd or a relative name names, as the model's bookkeeping does
// (model/fs/fs_base.cc, FsBase::Bookkeep), and which program a process runs.
void Tally::Bookkeep(const Event& e, const std::shared_ptr<const OpenFile>* fds) {
  const trace::CallSpec& spec = e.spec();
  if (e.call == CallId::exit_group) {
    tables_.erase(e.pid);
    cwd_.erase(e.pid);
    return;
  }
  if (e.failed()) return;
  auto cloexec_of = [](int64_t flags) { return (flags & O_CLOEXEC) != 0; };
  switch (spec.effect) {
    case Effect::kOpen:
      if (e.ret >= 0) {
        int path = e.call == CallId::openat || e.call == CallId::openat2 ? 1 : 0;
        bool cloexec = e.call != CallId::creat && cloexec_of(e.args[path + 1].i);
        if (!resolved_[path].empty())
          SetFd(e.pid, e.ret, Fd{NewOpenFile(resolved_[path]), cloexec});
        else if (fds[path])
          SetFd(e.pid, e.ret, Fd{fds[path], cloexec});
        else
          EraseFd(e.pid, e.ret);
      }
      return;
    case Effect::kClose:
      if (e.call == CallId::close) {
        EraseFd(e.pid, e.args[0].i);
      } else if (auto t = tables_.find(e.pid); t != tables_.end()) {  // close_range
        auto first = static_cast<uint64_t>(e.args[0].i), last = static_cast<uint64_t>(e.args[1].i);
        bool cloexec = e.args[2].i & CLOSE_RANGE_CLOEXEC;
        if (e.args[2].i & CLOSE_RANGE_UNSHARE && t->second.use_count() > 1)
          t->second = NewTable(t->second.get());
        FdTable& table = *t->second;
        for (auto it = table.begin(); it != table.end();) {
          auto fd = static_cast<uint64_t>(it->first);
          if (fd < first || fd > last) {
            ++it;
          } else if (cloexec) {
            it->second.cloexec = true;
            ++it;
          } else {
            it = table.erase(it);
            --live_fds_;
          }
        }
      }
      return;
    case Effect::kNotFile: {
      // Pipes and sockets: their fds stand for what they are.
      const char* what = e.call == CallId::pipe || e.call == CallId::pipe2 ? "(pipe)"
                         : e.call == CallId::eventfd2                      ? "(eventfd)"
                         : e.call == CallId::memfd_create                  ? "(memfd)"
                         : e.call == CallId::epoll_create1                 ? "(epoll)"
                         : e.call == CallId::inotify_init || e.call == CallId::inotify_init1
                             ? "(inotify)"
                             : "(socket)";
      auto of = NewOpenFile(what, false);
      if (spec.ret == trace::Ret::kFd && e.ret >= 0) SetFd(e.pid, e.ret, Fd{of});
      for (int i = 0; i < spec.nargs; ++i)
        if (spec.args[i].kind == ArgKind::kFdPair) {
          auto pair = static_cast<uint64_t>(e.args[i].i);
          SetFd(e.pid, static_cast<uint32_t>(pair), Fd{of});
          SetFd(e.pid, static_cast<uint32_t>(pair >> 32), Fd{of});
        }
      return;
    }
    case Effect::kFdTable: {
      bool dupfd =
          e.call == CallId::fcntl && (e.args[1].i == F_DUPFD || e.args[1].i == F_DUPFD_CLOEXEC);
      if (e.call == CallId::dup || e.call == CallId::dup2 || e.call == CallId::dup3 || dupfd) {
        if (e.call == CallId::dup2 && e.ret == e.args[0].i) return;
        const Fd* old = FindFd(e.pid, e.args[0].i);
        if (!old) {
          EraseFd(e.pid, e.ret);
          return;
        }
        bool cloexec = (dupfd && e.args[1].i == F_DUPFD_CLOEXEC) ||
                       (e.call == CallId::dup3 && cloexec_of(e.args[2].i));
        SetFd(e.pid, e.ret, Fd{old->of, cloexec});
      } else if (e.call == CallId::fcntl && e.args[1].i == F_SETFD) {
        if (const Fd* fd = FindFd(e.pid, e.args[0].i))
          SetFd(e.pid, e.args[0].i, Fd{fd->of, (e.args[2].i & FD_CLOEXEC) != 0});
      }
      return;
    }
    case Effect::kCwd:
      if (e.call == CallId::chdir) {
        if (!resolved_[0].empty() && resolved_[0][0] == '/') cwd_[e.pid] = resolved_[0];
      } else if (e.call == CallId::fchdir) {
        if (const Fd* fd = FindFd(e.pid, e.args[0].i); fd && fd->of->path[0] == '/')
          cwd_[e.pid] = fd->of->path;
      }
      return;
    case Effect::kProcess:
      if (e.call == CallId::execve || e.call == CallId::execveat) {
        int path = e.call == CallId::execveat ? 1 : 0;
        const std::string& program = !resolved_[path].empty() ? resolved_[path]
                                     : fds[path]              ? fds[path]->path
                                                              : resolved_[path];
        if (auto it = processes_.find(e.pid); it != processes_.end() && !program.empty()) {
          it->second.program = program;
          it->second.exec = true;
        }
        // The close-on-exec fds go (a table shared with CLONE_FILES is unshared first).
        if (auto t = tables_.find(e.pid); t != tables_.end()) {
          if (t->second.use_count() > 1) t->second = NewTable(t->second.get());
          FdTable& table = *t->second;
          for (auto it = table.begin(); it != table.end();)
            if (it->second.cloexec) {
              it = table.erase(it);
              --live_fds_;
            } else {
              ++it;
            }
        }
      } else if (spec.ret == trace::Ret::kPid && e.ret > 0) {
        // fork, vfork, clone: a new process with the parent's cwd and a copy of its fd table
        // (the table itself with CLONE_FILES); a thread is the same process.
        bool by_clone = e.call == CallId::clone || e.call == CallId::clone3;
        uint64_t flags = by_clone ? static_cast<uint64_t>(e.args[0].i) : 0;
        auto child = static_cast<uint32_t>(e.ret);
        if ((flags & CLONE_THREAD) || child == e.pid) return;
        if (auto it = cwd_.find(e.pid); it != cwd_.end())
          cwd_[child] = it->second;
        else
          cwd_.erase(child);
        if (flags & CLONE_FILES) {
          TableOf(e.pid);
          tables_[child] = tables_[e.pid];
        } else if (auto parent = tables_.find(e.pid);
                   parent != tables_.end() && live_fds_ + parent->second->size() <= kMaxLiveFds) {
          tables_[child] = NewTable(parent->second.get());
        } else {
          if (parent != tables_.end()) fds_capped_ = true;
          tables_.erase(child);
        }
        Process* c = nullptr;
        if (auto it = processes_.find(child); it != processes_.end())
          c = &it->second;
        else if (processes_.size() < kMaxProcesses)
          c = &processes_[child];
        if (c && !c->has_parent) {
          c->parent = e.pid;
          c->has_parent = true;
          if (!c->exec)
            if (auto it = processes_.find(e.pid); it != processes_.end())
              c->program = it->second.program;
        }
      }
      return;
    default:
      return;
  }
}

// ---- Replay reports (iorr replay --report).

struct ReplayCall {
  uint64_t count = 0, mismatches = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
};

struct ReplayReport {
  std::string file;
  double prepare_s = 0, replay_s = 0;
  uint64_t events = 0, replayed = 0, threads = 0, mismatches = 0;
  uint64_t prepared_files = 0, prepared_dirs = 0, prepared_links = 0, prepared_bytes = 0;
  std::vector<std::pair<std::string, uint64_t>> skipped, emulated;
  std::vector<std::string> first_mismatches;
  std::map<std::string, ReplayCall> calls;
  bool timed = false;  // issue_error_ns present (exact timing)
  int64_t issue_p50 = 0, issue_p99 = 0, issue_max = 0;
  bool block = false;  // block_trace present
  std::string block_device, block_fs;
  uint64_t block_preflush = 0, block_fua = 0, block_write_bytes = 0, block_read_bytes = 0;
};

// Reads a replay report strictly enough that a file of another kind is refused with its name.
class ReplayReader {
 public:
  explicit ReplayReader(const std::string& path) : path_(path) {}

  ReplayReport Read() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw Error("--replay " + path_ + ": " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    text_ = text.str();
    if (text_.size() > (16u << 20)) Fail("larger than a replay report can be (16 MiB)");
    if (!p_.Parse(text_) || p_.value(0).type != trace::json::Type::kObject)
      Fail("not JSON: " + p_.error());
    ReplayReport r;
    r.file = path_;
    r.prepare_s = Number(0, "prepare_seconds");
    r.replay_s = Number(0, "replay_seconds");
    r.events = Count(0, "events");
    r.replayed = Count(0, "replayed");
    r.threads = Count(0, "threads", true);
    r.mismatches = Count(0, "mismatches");
    if (const auto* prep = Member(0, "prepared", trace::json::Type::kObject, true)) {
      uint32_t o = Index(prep);
      r.prepared_files = Count(o, "files");
      r.prepared_dirs = Count(o, "dirs");
      r.prepared_links = Count(o, "links");
      r.prepared_bytes = Count(o, "bytes");
    }
    for (auto [key, out] : {std::pair{"skipped", &r.skipped}, {"emulated", &r.emulated}})
      if (const auto* obj = Member(0, key, trace::json::Type::kObject, true))
        for (uint32_t i = First(obj), n = 0; n < obj->size; ++n, i = p_.value(i).next)
          out->emplace_back(std::string(p_.value(i).key), Count(i, nullptr));
    if (const auto* list = Member(0, "first_mismatches", trace::json::Type::kArray, true))
      for (uint32_t i = First(list), n = 0; n < list->size; ++n, i = p_.value(i).next) {
        if (p_.value(i).type != trace::json::Type::kString)
          Fail("\"first_mismatches\": not strings");
        r.first_mismatches.emplace_back(p_.value(i).s);
      }
    const auto* calls = Member(0, "calls", trace::json::Type::kObject, false);
    for (uint32_t i = First(calls), n = 0; n < calls->size; ++n, i = p_.value(i).next) {
      if (p_.value(i).type != trace::json::Type::kObject) Fail("\"calls\": not objects");
      ReplayCall c;
      c.count = Count(i, "count");
      c.mismatches = Count(i, "mismatches");
      uint32_t lat = Index(Member(i, "latency_ns", trace::json::Type::kObject, false));
      c.p50 = Int(lat, "p50");
      c.p90 = Int(lat, "p90");
      c.p99 = Int(lat, "p99");
      c.max = Int(lat, "max");
      r.calls[std::string(p_.value(i).key)] = c;
    }
    if (const auto* ie = Member(0, "issue_error_ns", trace::json::Type::kObject, true)) {
      uint32_t o = Index(ie);
      r.timed = true;
      r.issue_p50 = Int(o, "p50");
      r.issue_p99 = Int(o, "p99");
      r.issue_max = Int(o, "max");
    }
    if (const auto* bt = Member(0, "block_trace", trace::json::Type::kObject, true)) {
      uint32_t o = Index(bt);
      r.block = true;
      r.block_device = String(o, "device");
      r.block_fs = String(o, "fs");
      r.block_preflush = Count(o, "preflush");
      r.block_fua = Count(o, "fua");
      r.block_write_bytes = Count(o, "queued_write_bytes");
      r.block_read_bytes = Count(o, "queued_read_bytes");
    }
    return r;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    throw Error("--replay " + path_ + ": not a report of iorr replay --report: " + what);
  }
  uint32_t Index(const trace::json::Value* v) const {
    return static_cast<uint32_t>(v - &p_.value(0));
  }
  uint32_t First(const trace::json::Value* v) const { return v->size ? v->first : 0; }
  const trace::json::Value* Member(uint32_t obj, std::string_view key, trace::json::Type type,
                                   bool optional) {
    const trace::json::Value& o = p_.value(obj);
    uint32_t i = o.size ? o.first : 0;
    for (uint32_t n = 0; n < o.size; ++n, i = p_.value(i).next)
      if (p_.value(i).key == key) {
        if (p_.value(i).type != type) Fail("\"" + std::string(key) + "\": wrong type");
        return &p_.value(i);
      }
    if (!optional) Fail("\"" + std::string(key) + "\": missing");
    return nullptr;
  }
  // key null: the value at index obj itself.
  const trace::json::Value& Scalar(uint32_t obj, const char* key) {
    if (!key) return p_.value(obj);
    const trace::json::Value& o = p_.value(obj);
    uint32_t i = o.size ? o.first : 0;
    for (uint32_t n = 0; n < o.size; ++n, i = p_.value(i).next)
      if (p_.value(i).key == key) return p_.value(i);
    Fail("\"" + std::string(key) + "\": missing");
  }
  int64_t Int(uint32_t obj, const char* key) {
    const trace::json::Value& v = Scalar(obj, key);
    if (v.type != trace::json::Type::kInt)
      Fail("\"" + std::string(key ? key : p_.value(obj).key) + "\": not an integer");
    return v.i;
  }
  uint64_t Count(uint32_t obj, const char* key, bool optional = false) {
    if (optional && key) {
      const trace::json::Value& o = p_.value(obj);
      bool found = false;
      uint32_t i = o.size ? o.first : 0;
      for (uint32_t n = 0; n < o.size; ++n, i = p_.value(i).next)
        found = found || p_.value(i).key == key;
      if (!found) return 0;
    }
    int64_t v = Int(obj, key);
    if (v < 0) Fail("\"" + std::string(key ? key : p_.value(obj).key) + "\": negative");
    return static_cast<uint64_t>(v);
  }
  double Number(uint32_t obj, const char* key) {
    const trace::json::Value& v = Scalar(obj, key);
    if (v.type == trace::json::Type::kInt) return static_cast<double>(v.i);
    if (v.type != trace::json::Type::kNumber) Fail("\"" + std::string(key) + "\": not a number");
    double d = std::strtod(std::string(v.s).c_str(), nullptr);
    if (!std::isfinite(d)) Fail("\"" + std::string(key) + "\": not a finite number");
    return d;
  }
  std::string String(uint32_t obj, const char* key) {
    const trace::json::Value& v = Scalar(obj, key);
    if (v.type != trace::json::Type::kString) Fail("\"" + std::string(key) + "\": not a string");
    return std::string(v.s);
  }

  std::string path_;
  std::string text_;
  trace::json::Parser p_;
};

// ---- The page.

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}th,td{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.p{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
.sub{color:#666}.warn{border:2px solid #c33;background:#fff3f3;padding:.5em 1em;margin:1em 0}
.warn h2{border:0;margin:.2em 0;color:#a00}.note{color:#666;font-size:.92em}
.rep{background:#eef5ff}svg{display:block;margin:.5em 0}svg text{font:11px sans-serif;fill:#444}
details{margin:.5em 0}summary{cursor:pointer;color:#036}
)";

// A series of a chart: one value per bucket.
struct Series {
  std::vector<uint64_t> values;
  const char* color;
  const char* label;  // "calls", "bytes written"
  bool bytes;         // format as bytes
};

std::string ValueText(uint64_t v, bool bytes) {
  return bytes ? Thousands(v) + " bytes (" + HumanBytes(v) + ")" : Thousands(v);
}

// A bar chart over the timeline: `up` above the axis and, if given, `down` below it, on one
// scale; every bar has a <title> with its interval and value (a tooltip, no script).
void AppendChart(std::string& out, const Timeline& t, const Series& up, const Series* down) {
  const size_t n = t.buckets().size();
  if (n == 0) return;
  const double left = 80, right = 10, top = 10, bottom = 24, width = 900;
  const double half = 120;
  const double plot_w = width - left - right;
  const double height = top + half * (down ? 2 : 1) + bottom;
  const double axis = top + half;
  uint64_t max = 1;
  for (uint64_t v : up.values) max = std::max(max, v);
  if (down)
    for (uint64_t v : down->values) max = std::max(max, v);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                width, height, width, height);
  out += buf;
  const double bar = plot_w / static_cast<double>(n);
  auto interval = [&](size_t k) {
    int64_t from = t.start_ns() + static_cast<int64_t>(k) * t.width_ns();
    return Fmt("%.6f", static_cast<double>(from) / 1e9) + "&#8211;" +
           Fmt("%.6f", static_cast<double>(from + t.width_ns()) / 1e9) + " s";
  };
  auto bars = [&](const Series& s, bool below) {
    for (size_t k = 0; k < n; ++k) {
      uint64_t v = s.values[k];
      if (v == 0) continue;
      double h = std::max(0.5, half * static_cast<double>(v) / static_cast<double>(max));
      std::snprintf(buf, sizeof buf,
                    "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">",
                    left + bar * static_cast<double>(k), below ? axis : axis - h,
                    std::max(bar - 0.3, 0.3), h, s.color);
      out += buf;
      out += "<title>" + interval(k) + ": " + s.label + ": " + ValueText(v, s.bytes) +
             "</title></rect>\n";
    }
  };
  bars(up, false);
  if (down) bars(*down, true);
  // Axes and labels.
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>\n", left,
                axis, left + plot_w, axis);
  out += buf;
  auto label = [&](double x, double y, const char* anchor, const std::string& text) {
    std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    out += buf;
    out += text + "</text>\n";
  };
  auto scale = [&](uint64_t v, bool bytes) { return bytes ? HumanBytes(v) : Thousands(v); };
  label(left - 4, top + 9, "end", scale(max, up.bytes));
  label(left - 4, axis + 4, "end", "0");
  std::string legend = std::string(up.label) + " (above)";
  if (down) {
    label(left - 4, axis + half, "end", scale(max, down->bytes));
    legend += ", " + std::string(down->label) + " (below)";
  }
  const double base = top + half * (down ? 2 : 1);
  // Enough decimals that the five times differ.
  double tick_s = static_cast<double>(n) * static_cast<double>(t.width_ns()) / 4e9;
  int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(tick_s))), 1, 9);
  for (int q = 0; q <= 4; ++q) {
    double frac = q / 4.0;
    int64_t at = t.start_ns() + static_cast<int64_t>(frac * static_cast<double>(n) *
                                                     static_cast<double>(t.width_ns()));
    label(left + plot_w * frac, base + 16,
          q == 0   ? "start"
          : q == 4 ? "end"
                   : "middle",
          Fmt(("%." + std::to_string(decimals) + "f s").c_str(), static_cast<double>(at) / 1e9));
  }
  out += "</svg>\n<p class=\"note\">" + Html(legend) + "; each bar " +
         Html(Fmt("%.6f", static_cast<double>(t.width_ns()) / 1e9)) +
         " s of the run, by call start (" + std::to_string(n) + " bars).</p>\n";
}

class Page {
 public:
  explicit Page(std::string* out) : out_(*out) {}
  void Raw(std::string_view s) { out_ += s; }
  void Text(std::string_view s) { AppendHtml(out_, s); }
  void H2(const char* id, std::string_view title) {
    out_ += "<h2 id=\"";
    out_ += id;
    out_ += "\">";
    Text(title);
    out_ += "</h2>\n";
  }
  // A table: columns whose name starts with '#' are numeric (right-aligned).
  void Begin(const std::vector<std::string>& columns) {
    numeric_.clear();
    out_ += "<table><thead><tr>";
    for (const std::string& c : columns) {
      bool n = !c.empty() && c[0] == '#';
      numeric_.push_back(n);
      out_ += n ? "<th class=\"n\">" : "<th>";
      Text(n ? std::string_view(c).substr(1) : std::string_view(c));
      out_ += "</th>";
    }
    out_ += "</tr></thead><tbody>\n";
  }
  // One row of cells already escaped (Html()) or made of numbers.
  void Row(const std::vector<std::string>& cells, const char* cls = nullptr) {
    out_ += cls ? "<tr class=\"" + std::string(cls) + "\">" : std::string("<tr>");
    for (size_t i = 0; i < cells.size(); ++i) {
      bool n = i < numeric_.size() && numeric_[i];
      out_ += n ? "<td class=\"n\">" : "<td>";
      out_ += cells[i];
      out_ += "</td>";
    }
    out_ += "</tr>\n";
  }
  void End() { out_ += "</tbody></table>\n"; }
  // A two-column table of names and values (values already escaped).
  void KeyValues(const std::vector<std::pair<std::string, std::string>>& rows) {
    out_ += "<table><tbody>\n";
    for (const auto& [k, v] : rows) {
      out_ += "<tr><th>";
      Text(k);
      out_ += "</th><td>" + v + "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
  }
  void Note(std::string_view escaped) {
    out_ += "<p class=\"note\">";
    out_ += escaped;
    out_ += "</p>\n";
  }

 private:
  std::string& out_;
  std::vector<bool> numeric_;
};

// Notes that mean the trace misses something: shown at the top of the page.
bool NoteIsLoss(std::string_view n) {
  for (std::string_view kind : {"escape", "process-gone", "longjmp", "recorder:", "lost"})
    if (n.substr(0, kind.size()) == kind) return true;
  return n.find("not recorded") != std::string_view::npos ||
         n.find(" lost") != std::string_view::npos;
}

struct ReportInput {
  const Options& o;
  const trace::Header& header;
  const trace::ReadInfo& info;
  std::string integrity;  // the reader's warning, or empty
  uint64_t order_violations = 0;
  uint64_t trace_bytes = 0;
  const Tally& tally;
  const std::vector<ReplayReport>& replays;
  const std::vector<ModelTable>& models;
};

uint64_t ErrorCount(const EventCounts& c) {
  uint64_t n = 0;
  for (const auto& [err, k] : c.errors) n += k;
  return n;
}

std::string Num(uint64_t v) { return Thousands(v); }

void CallMix(Page& p, const ReportInput& in) {
  const Tally& t = in.tally;
  p.H2("calls", "Call mix");
  struct Row {
    std::string name;
    const CallStats* s;
  };
  std::vector<Row> rows;
  for (const auto& c : trace::kCalls)
    if (t.call(c.tag).count && c.tag != static_cast<uint16_t>(CallId::other))
      rows.push_back({std::string(c.name), &t.call(c.tag)});
  for (const auto& [nr, s] : t.other_calls()) rows.push_back({EventCounts::OtherName(nr), &s});
  if (t.more_calls().count) rows.push_back({"(other syscalls)", &t.more_calls()});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.s->count != b.s->count ? a.s->count > b.s->count : a.name < b.name;
  });
  if (rows.empty()) {
    p.Note("No calls.");
    return;
  }
  std::vector<std::string> cols = {"call",    "#count",  "#errors", "#total s",
                                   "#p50 µs", "#p99 µs", "#max µs"};
  for (size_t j = 0; j < in.replays.size(); ++j) {
    std::string r = in.replays.size() > 1 ? "replay " + std::to_string(j + 1) + " " : "replay ";
    for (const char* c : {"count", "p50 µs", "p99 µs", "mismatches"}) cols.push_back("#" + r + c);
  }
  p.Begin(cols);
  const double unit = t.unit_ns();
  for (const Row& r : rows) {
    std::vector<std::string> cells = {
        Html(r.name),
        Num(r.s->count),
        Num(r.s->errors),
        Fmt("%.6f", static_cast<double>(r.s->total_ns) / 1e9),
        Micros(static_cast<double>(r.s->durations.Quantile(0.5)) * unit),
        Micros(static_cast<double>(r.s->durations.Quantile(0.99)) * unit),
        Micros(static_cast<double>(r.s->max_ns))};
    for (const ReplayReport& rep : in.replays) {
      auto it = rep.calls.find(r.name);
      if (it == rep.calls.end()) {
        cells.insert(cells.end(), 4, "&#8212;");
        continue;
      }
      const ReplayCall& c = it->second;
      cells.push_back(Num(c.count));
      cells.push_back(Micros(static_cast<double>(c.p50)));
      cells.push_back(Micros(static_cast<double>(c.p99)));
      cells.push_back(c.mismatches ? "<b>" + Num(c.mismatches) + "</b>" : Num(c.mismatches));
    }
    p.Row(cells);
  }
  p.End();
  p.Note(Html("Durations as recorded (return minus entry, at the trace's " +
              Thousands(t.unit_ns()) +
              " ns resolution); p50 and p99 come from a log histogram: exact below 64 times the "
              "resolution, within 1.6% above. dirents and initial_state are what the recorder "
              "saw of the file system, not calls.") +
         (in.replays.empty() ? ""
                             : Html(" Replay columns: the latencies and mismatches the replay "
                                    "report gives for the same call (see Replay).")));
}

void TimelineSection(Page& p, const ReportInput& in) {
  const Timeline& tl = in.tally.timeline();
  p.H2("timeline", "Timeline");
  if (tl.buckets().empty()) {
    p.Note("No calls.");
    return;
  }
  Series calls{{}, "#4a7bb7", "calls", false}, errors{{}, "#c33", "failed calls", false};
  Series written{{}, "#d08a2b", "bytes written", true}, read{{}, "#3b9a5a", "bytes read", true};
  for (const Timeline::Bucket& b : tl.buckets()) {
    calls.values.push_back(b.calls);
    errors.values.push_back(b.errors);
    written.values.push_back(b.bytes_written);
    read.values.push_back(b.bytes_read);
  }
  p.Raw("<h3>Calls per interval</h3>\n");
  std::string svg;
  AppendChart(svg, tl, calls, &errors);
  p.Raw(svg);
  p.Raw("<h3>Bytes per interval</h3>\n");
  svg.clear();
  AppendChart(svg, tl, written, &read);
  p.Raw(svg);
}

void FileTable(Page& p, const std::vector<const FileStats*>& list) {
  p.Begin({"file", "#calls", "#errors", "#bytes written", "#bytes read"});
  for (const FileStats* f : list)
    p.Row({"<span class=\"p\">" + Html(f->name) + "</span>", Num(f->calls), Num(f->errors),
           Num(f->bytes_written), Num(f->bytes_read)});
  p.End();
}

// The n largest by key (ties by name), with a key above 0.
template <typename T, typename Key>
std::vector<const T*> Top(const std::deque<T>& all, size_t n, Key key) {
  std::vector<const T*> v;
  for (const T& x : all)
    if (key(x) > 0) v.push_back(&x);
  auto before = [&](const T* a, const T* b) {
    return key(*a) != key(*b) ? key(*a) > key(*b) : a->name < b->name;
  };
  if (v.size() > n) {
    std::partial_sort(v.begin(), v.begin() + static_cast<long>(n), v.end(), before);
    v.resize(n);
  } else {
    std::sort(v.begin(), v.end(), before);
  }
  return v;
}

void Files(Page& p, const ReportInput& in) {
  const Tally& t = in.tally;
  p.H2("files", "Files");
  p.Note(Html(Thousands(t.named_files()) +
              " distinct files named (paths resolved against the process's cwd or the call's "
              "dirfd, lexically, as the model resolves them: a renamed file is listed under each "
              "of its names). Calls on fds are counted for the file the fd was opened as; "
              "(pipe), (socket) and (fd N, not opened in the trace) stand for what is not a "
              "named file."));
  if (t.files_capped() || t.fds_capped())
    p.Raw("<div class=\"warn\"><p>" +
          Html("Capped: only the first " + Thousands(kMaxFiles) +
               " files are followed; calls on files first named after that (" +
               Num(t.untracked().calls) + " calls, " + Num(t.untracked().bytes_written) +
               " bytes written, " + Num(t.untracked().bytes_read) +
               " bytes read) are not in these lists." +
               (t.fds_capped() ? " More than " + Thousands(kMaxLiveFds) +
                                     " fds were open at once: later ones are not followed."
                               : "")) +
          "</p></div>\n");
  auto written = Top(t.files(), kTopFiles, [](const FileStats& f) { return f.bytes_written; });
  p.Raw("<h3>Top files by bytes written</h3>\n");
  if (written.empty())
    p.Note("Nothing written.");
  else
    FileTable(p, written);
  auto calls = Top(t.files(), kTopFiles, [](const FileStats& f) { return f.calls; });
  p.Raw("<h3>Top files by calls</h3>\n");
  if (calls.empty())
    p.Note("No calls on files.");
  else
    FileTable(p, calls);
}

void Processes(Page& p, const ReportInput& in) {
  const Tally& t = in.tally;
  p.H2("processes", "Processes");
  std::vector<std::pair<uint32_t, const Process*>> list;
  for (const auto& [pid, proc] : t.processes())
    if (proc.events) list.emplace_back(pid, &proc);
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
    return a.second->events != b.second->events ? a.second->events > b.second->events
                                                : a.first < b.first;
  });
  size_t more = list.size() > kTopProcesses ? list.size() - kTopProcesses : 0;
  list.resize(std::min(list.size(), kTopProcesses));
  if (list.empty()) {
    p.Note("No calls.");
    return;
  }
  p.Begin({"#pid", "#parent", "program", "#threads", "#events", "#errors", "#bytes read",
           "#bytes written", "#first s", "#last s"});
  for (const auto& [pid, proc] : list) {
    std::string program = proc->program.empty() ? "&#8212;" : Html(proc->program);
    if (!proc->program.empty() && !proc->exec) program += " <span class=\"note\">(fork)</span>";
    p.Row({std::to_string(pid), proc->has_parent ? std::to_string(proc->parent) : "&#8212;",
           "<span class=\"p\">" + program + "</span>", Num(proc->threads), Num(proc->events),
           Num(proc->errors), Num(proc->bytes_read), Num(proc->bytes_written),
           Fmt("%.6f", static_cast<double>(proc->first) / 1e9),
           Fmt("%.6f", static_cast<double>(proc->last) / 1e9)});
  }
  p.End();
  std::string note =
      "Program: the path of the process's last exec in the trace, or its "
      "parent's program (fork) when it made none.";
  if (more) note += " " + Thousands(more) + " more processes with fewer events are not listed.";
  if (t.processes_capped())
    note += " Only the first " + Thousands(kMaxProcesses) + " processes are followed one by one.";
  p.Note(Html(note));
}

void Errors(Page& p, const ReportInput& in) {
  const Tally& t = in.tally;
  p.H2("errors", "Errors by errno");
  if (t.errnos().empty()) {
    p.Note("No call failed.");
    return;
  }
  std::vector<std::pair<int, const ErrnoStats*>> list;
  for (const auto& [err, es] : t.errnos()) list.emplace_back(err, &es);
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
    return a.second->count != b.second->count ? a.second->count > b.second->count
                                              : a.first < b.first;
  });
  p.Begin({"errno", "#count", "message", "calls", "first path"});
  for (const auto& [err, es] : list) {
    std::string_view name = trace::ErrnoName(err);
    std::vector<std::pair<std::string, uint64_t>> calls(es->calls.begin(), es->calls.end());
    std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    std::string by;
    for (size_t i = 0; i < calls.size() && i < 6; ++i)
      by += (i ? ", " : "") + calls[i].first + " " + Thousands(calls[i].second);
    if (calls.size() > 6) by += ", ...";
    p.Row({Html(name.empty() ? std::to_string(err) : std::string(name)), Num(es->count),
           Html(trace::ErrnoMessage(err)), Html(by),
           "<span class=\"p\">" + Html(es->example) + "</span>"});
  }
  p.End();
}

void Replays(Page& p, const ReportInput& in) {
  p.H2("replay", "Replay");
  const int64_t recorded = in.tally.all().Duration();
  for (size_t j = 0; j < in.replays.size(); ++j) {
    const ReplayReport& r = in.replays[j];
    p.Raw("<h3>");
    p.Text((in.replays.size() > 1 ? "Replay " + std::to_string(j + 1) + ": " : "") + r.file);
    p.Raw("</h3>\n");
    std::string ratio = recorded > 0 ? Fmt(" (%.2fx the recording's ",
                                           r.replay_s * 1e9 / static_cast<double>(recorded)) +
                                           Seconds(recorded) + ")"
                                     : "";
    std::vector<std::pair<std::string, std::string>> kv = {
        {"replay", Fmt("%.6f s", r.replay_s) + Html(ratio)},
        {"prepare", Fmt("%.6f s", r.prepare_s) + ": " + Num(r.prepared_files) + " files (" +
                        Num(r.prepared_bytes) + " bytes), " + Num(r.prepared_dirs) +
                        " directories, " + Num(r.prepared_links) + " symlinks"},
        {"events", Num(r.replayed) + " of " + Num(r.events) + " replayed (the recording has " +
                       Num(in.tally.all().events) + ") in " + Num(r.threads) + " threads"},
        {"mismatches", r.mismatches ? "<b>" + Num(r.mismatches) + "</b>" : Num(r.mismatches)},
    };
    if (r.events != in.tally.all().events)
      kv.emplace_back("note", Html("the replay read " + Num(r.events) + " events, this trace has " +
                                   Num(in.tally.all().events) +
                                   ": a replay of another trace, or of part of it?"));
    auto counts = [&](const char* what, const std::vector<std::pair<std::string, uint64_t>>& c) {
      if (c.empty()) return;
      std::string v;
      for (const auto& [why, n] : c) v += (v.empty() ? "" : "; ") + Num(n) + " " + Html(why);
      kv.emplace_back(what, v);
    };
    counts("skipped", r.skipped);
    counts("emulated", r.emulated);
    if (r.timed)
      kv.emplace_back("issue error", "p50 " + Micros(static_cast<double>(r.issue_p50)) +
                                         " µs, p99 " + Micros(static_cast<double>(r.issue_p99)) +
                                         " µs, max " + Micros(static_cast<double>(r.issue_max)) +
                                         " µs");
    if (r.block)
      kv.emplace_back("block trace", Html(r.block_device + " (" + r.block_fs + "): ") +
                                         Num(r.block_preflush) + " PREFLUSH and " +
                                         Num(r.block_fua) + " FUA bios, " +
                                         Num(r.block_write_bytes) + " bytes written, " +
                                         Num(r.block_read_bytes) + " read");
    p.KeyValues(kv);
    if (!r.first_mismatches.empty()) {
      p.Raw("<details><summary>First mismatches</summary>\n<ul>\n");
      for (const std::string& m : r.first_mismatches)
        p.Raw("<li><span class=\"p\">" + Html(m) + "</span></li>\n");
      p.Raw("</ul>\n</details>\n");
    }
  }
  p.Note("Per-call replay latencies are beside the recorded durations in the call mix.");
}

void Models(Page& p, const ReportInput& in) {
  p.H2("model", "Model: what if");
  p.Note(
      Html("What iorr model estimates the recorded workload would take on these disks "
           "(file-system model x write cache x barriers), as iorr model prints it. The "
           "recording took " +
           Seconds(in.tally.all().Duration()) + " on its host."));
  for (size_t j = 0; j < in.models.size(); ++j) {
    const ModelTable& m = in.models[j];
    p.Raw("<h3>");
    p.Text("disk " + m.disk + " (" + in.o.disks[j] + ")");
    p.Raw("</h3>\n");
    p.Begin({"fs", "cache", "barrier", "#elapsed s", "#io wait s", "#flushes", "#FUA writes",
             "#data MB", "#journal MB", "#meta MB", "#dev busy s", "checked"});
    bool any = false;
    for (const ModelRow& r : m.rows) {
      any = any || r.validated;
      p.Row({Html(r.fs), Html(r.cache), Html(r.barrier),
             Fmt("%.3f", static_cast<double>(r.elapsed_ns) / 1e9),
             r.io_wait_ns >= 0 ? Fmt("%.3f", static_cast<double>(r.io_wait_ns) / 1e9) : "-",
             Num(r.d.flushes), Num(r.d.fua_writes),
             Fmt("%.1f", static_cast<double>(r.d.bytes_written_by_kind[0]) / 1e6),
             Fmt("%.1f", static_cast<double>(r.d.bytes_written_by_kind[1]) / 1e6),
             Fmt("%.1f", static_cast<double>(r.d.bytes_written_by_kind[2]) / 1e6),
             Fmt("%.3f", static_cast<double>(r.d.busy_ns) / 1e9), Html(Checked(r))});
    }
    p.End();
    std::string note = any ? "Validated rows: errors measured by tools/bench/model-vs-real.sh "
                             "on this profile."
                           : "Models unvalidated on this profile: not compared with a real run.";
    if (!m.not_modelled.empty()) {
      note += " Calls the model ignores:";
      for (const auto& [name, n] : m.not_modelled) note += " " + name + " " + Thousands(n) + ";";
    }
    p.Note(Html(note));
  }
}

void Notes(Page& p, const ReportInput& in) {
  const auto& notes = in.info.notes;
  p.H2("notes", "Trace notes");
  if (notes.empty()) {
    p.Note("The trace has no notes.");
    return;
  }
  p.Note(Html(Thousands(notes.size()) +
              " notes: what the recorder or an importer said about the recording (FORMAT.md "
              "3.5); those that mean something is missing are in bold and at the top."));
  p.Raw("<ul>\n");
  for (size_t i = 0; i < notes.size() && i < kMaxNotesShown; ++i)
    p.Raw(NoteIsLoss(notes[i]) ? "<li><b>" + Html(notes[i]) + "</b></li>\n"
                               : "<li>" + Html(notes[i]) + "</li>\n");
  p.Raw("</ul>\n");
  if (notes.size() > kMaxNotesShown)
    p.Note(Html(Thousands(notes.size() - kMaxNotesShown) + " more notes (iorr dump prints them)."));
}

std::string Render(const ReportInput& in) {
  const Tally& t = in.tally;
  const trace::Header& h = in.header;
  const EventCounts& all = t.all();
  std::string out;
  out.reserve(256 << 10);
  Page p(&out);
  std::string title = in.o.title;
  if (title.empty()) {
    std::string_view cmd = h.Get(trace::key::kCmdline);
    title = "iorr report: " + (cmd.empty() ? in.o.trace : std::string(cmd));
  }
  p.Raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
  p.Text(title);
  p.Raw("</title>\n<style>");
  p.Raw(kStyle);
  p.Raw("</style>\n</head>\n<body>\n<h1>");
  p.Text(title);
  p.Raw("</h1>\n<p class=\"sub\">");
  p.Text("Trace " + in.o.trace + " (" + Thousands(in.trace_bytes) +
         " bytes), made by iorr report. Times are from the trace's start.");
  p.Raw("</p>\n");

  // What the trace misses, first.
  std::vector<std::string> losses;
  if (!in.integrity.empty()) losses.push_back(Html(in.integrity));
  if (in.order_violations)
    losses.push_back(
        Html(Thousands(in.order_violations) + " events out of time order (broken watermarks)"));
  size_t loss_notes = 0;
  for (const std::string& n : in.info.notes)
    if (NoteIsLoss(n) && loss_notes++ < kMaxNotesShown) losses.push_back(Html(n));
  if (loss_notes > kMaxNotesShown)
    losses.push_back(Html(Thousands(loss_notes - kMaxNotesShown) + " more such notes"));
  if (!losses.empty()) {
    p.Raw("<div class=\"warn\" id=\"incomplete\">\n<h2>This trace is incomplete</h2>\n<ul>\n");
    for (const std::string& l : losses) p.Raw("<li>" + l + "</li>\n");
    p.Raw(
        "</ul>\n<p class=\"note\">What a program did through these is missing from every "
        "figure below.</p>\n</div>\n");
  }

  // Contents.
  p.Raw("<p>");
  std::vector<std::pair<const char*, const char*>> toc = {
      {"header", "header"},     {"summary", "summary"}, {"calls", "call mix"},
      {"timeline", "timeline"}, {"files", "files"},     {"processes", "processes"},
      {"errors", "errors"}};
  if (!in.replays.empty()) toc.push_back({"replay", "replay"});
  if (!in.models.empty()) toc.push_back({"model", "model"});
  toc.push_back({"notes", "notes"});
  for (size_t i = 0; i < toc.size(); ++i)
    p.Raw(std::string(i ? " &middot; " : "") + "<a href=\"#" + toc[i].first + "\">" +
          toc[i].second + "</a>");
  p.Raw("</p>\n");

  // Header.
  p.H2("header", "Trace header");
  auto field = [&](std::string_view k) {
    std::string_view v = h.Get(k);
    return v.empty() ? std::string("&#8212;") : Html(v);
  };
  std::string clock = field(trace::key::kClocksource);
  if (!h.Get("recorder_clock").empty()) clock += "; recorder: " + field("recorder_clock");
  p.KeyValues({
      {"command line", field(trace::key::kCmdline)},
      {"recorded by", field(trace::key::kTool) + " (source " + field(trace::key::kSource) + ")"},
      {"format", "version " + std::to_string(h.core.version)},
      {"resolution", Thousands(h.core.time_unit_ns) + " ns"},
      {"clock", clock},
      {"started", Html(WallTime(h.core.start_wall_ns))},
      {"host", field(trace::key::kHost) + ", " + field(trace::key::kKernel)},
      {"working directory", field(trace::key::kCwd)},
  });
  p.Raw("<details><summary>All " + std::to_string(h.fields.size()) + " header fields</summary>\n");
  {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& [k, v] : h.fields) rows.emplace_back(k, Html(v));
    p.KeyValues(rows);
  }
  p.Raw("</details>\n");

  // Summary, as iorr stats.
  p.H2("summary", "Summary");
  const int64_t duration = all.Duration();
  auto at_least = [](bool capped) { return capped ? std::string("at least ") : std::string(); };
  uint64_t pids = 0;
  for (const auto& [pid, proc] : t.processes()) pids += proc.seen;
  p.KeyValues({
      {"events", Thousands(all.events)},
      {"processes", at_least(t.processes_capped()) + Thousands(pids)},
      {"threads", at_least(t.threads_capped()) + Thousands(t.threads())},
      {"duration", Seconds(duration)},
      {"bytes read", Thousands(all.bytes_read) + " (" + HumanBytes(all.bytes_read) + ")"},
      {"bytes written", Thousands(all.bytes_written) + " (" + HumanBytes(all.bytes_written) + ")"},
      {"failed calls", Thousands(ErrorCount(all))},
      {"trace size", Thousands(in.trace_bytes) + " bytes, " +
                         Fmt("%.2f", all.events ? static_cast<double>(in.trace_bytes) /
                                                      static_cast<double>(all.events)
                                                : 0.0) +
                         " bytes/event"},
  });
  if (t.filtered()) {
    std::string prefixes;
    for (const std::string& s : t.only()) prefixes += (prefixes.empty() ? "" : ", ") + s;
    p.Raw("<div class=\"warn\"><p>");
    p.Text("--only " + prefixes + ": the sections below count only the calls on paths under " +
           "it and on fds opened there, " + Thousands(t.kept().events) + " of " +
           Thousands(all.events) + " events (" + Thousands(t.kept().bytes_read) + " bytes read, " +
           Thousands(t.kept().bytes_written) + " written).");
    p.Raw("</p></div>\n");
  }
  CallMix(p, in);
  TimelineSection(p, in);
  Files(p, in);
  Processes(p, in);
  Errors(p, in);
  if (!in.replays.empty()) Replays(p, in);
  if (!in.models.empty()) Models(p, in);
  Notes(p, in);
  p.Raw("</body>\n</html>\n");
  return out;
}

int Run(const Options& o) {
  if (o.trace == "-" && !o.disks.empty())
    throw Error("--disk needs a trace file (the model reads the trace again), not stdin");
  // What can be refused quickly is, before the long read.
  std::vector<ReplayReport> replays;
  for (const std::string& path : o.replays) replays.push_back(ReplayReader(path).Read());
  std::vector<std::unique_ptr<WhatIf>> what_ifs;
  for (const std::string& disk : o.disks) {
    ModelOptions mo;
    mo.trace = o.trace;
    mo.disk = disk;
    mo.fs = o.fs;
    mo.only = o.only;
    what_ifs.push_back(std::make_unique<WhatIf>(mo));
  }
  auto opened = trace::TraceReader::Open(o.trace);
  if (!opened.ok()) throw Error(opened.status().message());
  trace::TraceReader& r = **opened;
  struct stat st {};
  uint64_t file_bytes =
      o.trace != "-" && ::stat(o.trace.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  OutputFile file(o.output);  // FILE.tmp, renamed when the page is complete

  Tally tally(r.header(), o.only);
  // Effect order, as the model reads a trace: fds are followed by number.
  trace::MergedReader merged(&r, trace::MergeOrder::kEffect);
  trace::Event e;
  {
    Progress progress("reading", file_bytes);
    while (merged.Next(&e)) {
      tally.Add(e);
      progress.Update(r.info().bytes);
    }
  }
  if (!merged.status().ok()) throw Error(o.trace + ": " + merged.status().message());

  std::vector<ModelTable> models;
  for (size_t i = 0; i < what_ifs.size(); ++i) {
    Progress progress("modelling on " + o.disks[i], 1000);
    models.push_back(what_ifs[i]->Run(
        [&](size_t done, size_t rows) { progress.Step(rows ? done * 1000 / rows : 0); }));
  }

  std::string warning = r.IntegrityWarning();
  // (stdin: the bytes read, all of them once the reader is at the end.)
  uint64_t trace_bytes = file_bytes ? file_bytes : r.info().bytes;
  std::string page = Render(ReportInput{o, r.header(), r.info(), warning, merged.order_violations(),
                                        trace_bytes, tally, replays, models});
  file.Write(page);
  file.Commit();
  if (!warning.empty())
    std::fprintf(stderr, "iorr: warning: %s: %s\n", o.trace.c_str(), warning.c_str());
  return kExitOk;
}

}  // namespace

void RegisterReport(CLI::App& app, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Write a one-page HTML report of a trace, to attach to a bug or a review: its header and\n"
      "notes (what the recording misses, first), the summary iorr stats gives, the call mix\n"
      "with durations (p50, p99), a timeline of calls and bytes, the busiest files, the\n"
      "processes and the errors by errno. With --replay, reports of `iorr replay --report`\n"
      "beside the recording; with --disk, `iorr model`'s what-if table for that disk. One\n"
      "self-contained file (inline CSS and SVG, no script); names from the trace are escaped.");
  sub->add_option("trace", o->trace, "Trace file (- for stdin, without --disk)")->required();
  sub->add_option("-o,--output", o->output,
                  "HTML file to write (- for stdout); written as FILE.tmp and renamed when "
                  "complete, so a failure leaves no page")
      ->required()
      ->type_name("FILE");
  sub->add_option("--replay", o->replays,
                  "A report `iorr replay --report` wrote for this trace: its figures, and its\n"
                  "per-call latencies and mismatches beside the recorded ones (repeatable)")
      ->type_name("REPORT.json")
      ->allow_extra_args(false);
  sub->add_option("--disk", o->disks,
                  "Add `iorr model`'s what-if table on this disk: a profile name (hdd-7200,\n"
                  "ssd-sata, ...) or JSON file, as for iorr model (repeatable, comma-separated)")
      ->type_name("PROFILE")
      ->delimiter(',')
      ->allow_extra_args(false);
  CLI::Option* disk = sub->get_option("--disk");
  sub->add_option("--fs", o->fs,
                  "File-system models for --disk, comma-separated: ext4, ext3, ext2, xfs,\n"
                  "xfs-legacy")
      ->delimiter(',')
      ->capture_default_str()
      ->needs(disk);
  sub->add_option("--only", o->only,
                  "Count only calls on paths under this recorded prefix and on fds opened there\n"
                  "(repeatable), as `iorr replay --only` and `iorr model --only` do; --disk's\n"
                  "model gets it too. The header, summary and notes stay the whole trace's")
      ->type_name("PREFIX")
      ->allow_extra_args(false);
  sub->add_option("--title", o->title, "The page's title (default: iorr report: COMMAND LINE)");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
