// trace_coverage STRACE_TRACE RECORDED_TRACE [--verbose] [--ignore-fd N]...
//
// How complete is a recording? Compares, thread by thread, the file-system calls that strace saw
// (the first trace, imported from `strace -f -ttt -T -o LOG iorr record -o RECORDED -- CMD`)
// with those in the recorder's own trace, in order and with their return values, and prints
//   coverage: 123/125 (98.4%) file-system calls, 0 order/return mismatches, N extra
// Exit status: 0 when every call is covered and none mismatches, 1 otherwise, 2 on bad input.
//
// The file-system calls are those of the call table whose effect is a file operation, plus
// execve and mmap of an fd. Left out of the strace side: the launcher's process (header
// recorder_pid of the recorded trace), the recorder's writer threads (notes
// `writer-thread PID TID`), calls on the recorder's fds (header trace_fd and shm_fd, the
// launcher's memfds as strace saw them passed down, --ignore-fd) and what a child of the
// launcher does before its execve of CMD (that execve itself may be recorded or not), and the
// dynamic loader's reading in of libiorr-preload.so (open, reads, mmaps, close). Missing
// calls are told apart as before main (in a thread or exec'd image, before the first call the
// recorder saw there: the dynamic loader's) or after. Leniencies, each for a reason given where
// it is implemented: strace's `= ?` matches any result, a close_range that the library splits
// around its own fds counts as the program's one call, a mode result matches in either of
// strace's octal and the importer's decimal reading.
// The tests include this file with IORR_TRACE_COVERAGE_NO_MAIN defined to reach the matching
// logic (namespace iorr::coverage). Single-threaded; nothing here is thread-safe.
#include <fcntl.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/calls.h"
#include "traces/event.h"
#include "traces/header.h"
#include "traces/jsonl.h"
#include "traces/names.h"
#include "traces/reader.h"
#include "traces/status.h"
#include "traces/text.h"

namespace iorr::coverage {

using trace::CallId;
using trace::Effect;

inline constexpr int kExitComplete = 0;
inline constexpr int kExitIncomplete = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr size_t kNotMatched = SIZE_MAX;

// ---- Loading ----

// What the comparison keeps of an event: no strings, the integer arguments by position.
struct LiteEvent {
  CallId call = CallId::kInvalid;
  uint32_t pid = 0, tid = 0;
  int64_t start_ns = 0, end_ns = 0, ret = 0;
  int64_t args[trace::kMaxArgs] = {};
  uint64_t detail = 0;  // hash of what strace and a recorder show alike: see Detail()
  bool opens_recorder_library = false;  // an open of libiorr-preload.so (the loader's)
  int64_t reopens_fd = -1;  // N of an open of /proc/self/fd/N (the library's liveness lock)

  const trace::CallSpec& spec() const { return trace::Spec(call); }
  bool failed() const { return ret < 0 && ret >= -4095; }
};

// One event of a trace, with its text for reports when asked for.
struct Ev {
  LiteEvent e;
  std::string text;  // strace-shaped: `openat(AT_FDCWD, "a", O_RDONLY, 000) = 3`
  uint64_t seq = 0;  // position in the file, to keep a thread's order for equal start times
};

struct TraceData {
  trace::Header header;
  std::vector<std::string> notes;
  std::string warning;                          // TraceReader::IntegrityWarning
  std::map<uint32_t, std::vector<Ev>> threads;  // by tid, in call order
};

// `name(args) = ret` the way strace prints it (buffers as "...").
std::string EventText(const trace::Event& e) {
  std::string out;
  trace::AppendCallText(out, e);
  return out;
}

inline uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// A hash of the call, its result, its fd, size and offset arguments and the first 32 bytes of
// its strings (strace's default -s): the same for one call in both traces, and different for
// most look-alike calls, which makes good anchors for aligning long sequences.
uint64_t Detail(const trace::Event& e) {
  uint64_t h = Mix(static_cast<uint64_t>(e.call), static_cast<uint64_t>(e.ret));
  const trace::CallSpec& spec = e.spec();
  for (int i = 0; i < spec.nargs; ++i) {
    switch (spec.args[i].kind) {
      case trace::ArgKind::kFd:
      case trace::ArgKind::kDirFd:
      case trace::ArgKind::kSize:
      case trace::ArgKind::kOffset:
        h = Mix(h, static_cast<uint64_t>(e.args[i].i));
        break;
      case trace::ArgKind::kPath:
      case trace::ArgKind::kStr:
        // (Not readlink's target: strace prints a pointer for a failed call and cuts long ones,
        // where the import then has none.)
        for (char ch : e.args[i].s.substr(0, 32)) h = Mix(h, static_cast<unsigned char>(ch));
        break;
      default:
        break;
    }
  }
  return h;
}

// True for an open of one of the recorder's libraries (by its file name).
bool OpensRecorderLibrary(const trace::Event& e) {
  if (e.spec().effect != Effect::kOpen) return false;
  const trace::CallSpec& spec = e.spec();
  for (int i = 0; i < spec.nargs; ++i) {
    if (spec.args[i].kind != trace::ArgKind::kPath) continue;
    std::string_view path = e.args[i].s;
    size_t slash = path.rfind('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    // libiorr-preload.so, and libiorr-audit.so (recorder/audit.h), loaded before anything
    // could record it.
    return name.substr(0, 15) == "libiorr-preload" || name.substr(0, 13) == "libiorr-audit";
  }
  return false;
}

// N of a successful open of "/proc/self/fd/N", else -1.
int64_t ReopenedFd(const trace::Event& e) {
  if (e.spec().effect != Effect::kOpen || e.failed()) return -1;
  const trace::CallSpec& spec = e.spec();
  for (int i = 0; i < spec.nargs; ++i) {
    if (spec.args[i].kind != trace::ArgKind::kPath) continue;
    std::string_view path = e.args[i].s;
    constexpr std::string_view kPrefix = "/proc/self/fd/";
    if (path.substr(0, kPrefix.size()) != kPrefix) return -1;
    int64_t n = 0;
    for (char ch : path.substr(kPrefix.size())) {
      if (ch < '0' || ch > '9') return -1;
      n = n * 10 + (ch - '0');
    }
    return n;
  }
  return -1;
}

// Reads a whole trace; with_text keeps every event's text (for --verbose reports).
Result<TraceData> LoadTrace(const std::string& path, bool with_text = true) {
  auto opened = trace::TraceReader::Open(path);
  if (!opened.ok()) return Status::Error(path + ": " + opened.status().message());
  trace::TraceReader& reader = **opened;
  TraceData data;
  data.header = reader.header();
  trace::Chunk chunk;
  uint64_t seq = 0;
  while (reader.NextChunk(&chunk)) {
    if (chunk.meta.kind != trace::ChunkKind::kEvents) continue;
    trace::ChunkCursor cursor;
    if (Status s = cursor.Init(&chunk, reader.time_unit_ns()); !s.ok())
      return Status::Error(path + ": " + s.message());
    trace::Event e;
    while (cursor.Next(&e)) {
      Ev ev;
      if (with_text) ev.text = EventText(e);
      ev.e.call = e.call;
      ev.e.pid = e.pid;
      ev.e.tid = e.tid;
      ev.e.start_ns = e.start_ns;
      ev.e.end_ns = e.end_ns;
      ev.e.ret = e.ret;
      for (int i = 0; i < trace::kMaxArgs; ++i) ev.e.args[i] = e.args[i].i;
      ev.e.detail = Detail(e);
      ev.e.opens_recorder_library = OpensRecorderLibrary(e);
      ev.e.reopens_fd = ReopenedFd(e);
      ev.seq = seq++;
      data.threads[e.tid].push_back(std::move(ev));
    }
    if (!cursor.status().ok()) return Status::Error(path + ": " + cursor.status().message());
  }
  if (!reader.status().ok()) return Status::Error(path + ": " + reader.status().message());
  data.notes = reader.info().notes;
  data.warning = reader.IntegrityWarning();
  // A thread's calls follow one another, so start order is call order; chunks of one thread
  // may sit in the file out of order (an importer that relabels a stream), equal starts keep
  // the file's order.
  for (auto& [tid, evs] : data.threads)
    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
      return a.e.start_ns != b.e.start_ns ? a.e.start_ns < b.e.start_ns : a.seq < b.seq;
    });
  return data;
}

// ---- What is compared ----

// The file-system calls: by effect, plus execve and mmap of an fd.
bool InScope(const LiteEvent& e) {
  if (e.call == CallId::execve || e.call == CallId::execveat) return true;
  if (e.call == CallId::mmap) return e.args[4] >= 0;
  switch (e.spec().effect) {
    case Effect::kRead:
    case Effect::kWrite:
    case Effect::kSeek:
    case Effect::kCopy:
    case Effect::kOpen:
    case Effect::kClose:
    case Effect::kSync:
    case Effect::kTruncate:
    case Effect::kHint:
    case Effect::kRemove:
    case Effect::kRename:
    case Effect::kCreate:
    case Effect::kLookup:
    case Effect::kReadDir:
    case Effect::kSetAttr:
    case Effect::kFdTable:
    case Effect::kCwd:
    case Effect::kControl:
      return true;
    default:
      return false;
  }
}

bool IsExec(const LiteEvent& e) {
  return (e.call == CallId::execve || e.call == CallId::execveat) && e.ret == 0;
}

// True when a call uses one of the fds (an fd argument, a dirfd, or the new fd it returns).
bool OnFds(const LiteEvent& e, const std::set<int64_t>& fds) {
  if (fds.empty()) return false;
  const trace::CallSpec& spec = e.spec();
  for (int i = 0; i < spec.nargs; ++i) {
    trace::ArgKind k = spec.args[i].kind;
    if ((k == trace::ArgKind::kFd || k == trace::ArgKind::kDirFd) && fds.count(e.args[i]))
      return true;
  }
  return spec.ret == trace::Ret::kFd && !e.failed() && fds.count(e.ret);
}

// One call of a thread, reduced to what the comparison needs.
struct Call {
  CallId call = CallId::kInvalid;
  int64_t ret = 0;
  bool ret_unknown = false;     // strace `= ?`: ignore the result
  bool optional = false;        // may be absent from the recording (the launcher's execve of CMD)
  bool new_image = false;       // a successful execve: a new program image starts here
  int64_t alt_ret = INT64_MIN;  // another reading of strace's result that counts as equal
  size_t index = 0;             // position in the thread's full event list (for reports)
  uint64_t detail = 0;          // LiteEvent::detail: only to find anchors
};

// Matching rule: same call; same result unless strace could not tell it.
inline bool Same(const Call& expected, const Call& actual) {
  return expected.call == actual.call &&
         (expected.ret_unknown || expected.ret == actual.ret || expected.alt_ret == actual.ret);
}

// strace prints a mode result in octal ("umask(000) = 022"); an importer that reads it as
// decimal stores 22. Both readings count.
int64_t AltRet(const LiteEvent& e) {
  if (e.spec().ret != trace::Ret::kMode || e.ret < 0) return INT64_MIN;
  int64_t octal = 0, scale = 1;
  for (int64_t v = e.ret; v > 0; v /= 10, scale *= 8) {
    if (v % 10 > 7) return INT64_MIN;
    octal += v % 10 * scale;
  }
  return octal;
}

// ---- Alignment ----

// Pairs of matched positions, increasing in both sequences.
using Matches = std::vector<std::pair<size_t, size_t>>;

// A longest common subsequence of two call sequences under Same(), by Myers' O(ND)
// divide-and-conquer diff (linear space). Past a work budget: the earliest-match subsequence
// when the recorded calls are one (still exact), else an anchored diff that says it is
// approximate.
class Aligner {
 public:
  Aligner(const std::vector<Call>& expected, const std::vector<Call>& actual, uint64_t budget)
      : a_(expected), b_(actual), budget_(budget) {}

  Matches Run() {
    Matches m;
    Diff(0, a_.size(), 0, b_.size(), &m);
    if (over_budget_) {
      m.clear();
      // When the recorded calls are a subsequence of strace's (calls only missing), taking
      // the earliest equal call for each is a longest common subsequence, in O(N log N).
      if (!Subsequence(0, a_.size(), 0, b_.size(), &m)) {
        exact_ = false;
        m.clear();
        Anchored(&m);
      }
    }
    return m;
  }
  bool exact() const { return exact_; }

 private:
  // True when the recorded calls, less those equal to no expected call at all (extra for
  // sure), are a subsequence of the expected ones; then *m has the earliest matches, which are
  // a longest common subsequence.
  bool Subsequence(size_t a0, size_t a1, size_t b0, size_t b1, Matches* m) const {
    std::set<std::pair<CallId, int64_t>> keys;
    std::set<CallId> any_result;
    for (size_t i = a0; i < a1; ++i) {
      if (a_[i].ret_unknown) {
        any_result.insert(a_[i].call);
      } else {
        keys.emplace(a_[i].call, a_[i].ret);
        if (a_[i].alt_ret != INT64_MIN) keys.emplace(a_[i].call, a_[i].alt_ret);
      }
    }
    size_t i = a0, size = m->size();
    for (size_t j = b0; j < b1; ++j) {
      if (!any_result.count(b_[j].call) && !keys.count({b_[j].call, b_[j].ret})) continue;
      while (i < a1 && !Eq(i, j)) ++i;
      if (i == a1) {
        m->resize(size);
        return false;
      }
      m->emplace_back(i++, j);
    }
    return true;
  }

  // Too many differences for one diff (patience diff): calls whose details occur once in each
  // sequence, in the same order, are matched first; the stretches between them are diffed one
  // by one, each within its own budget, else as a subsequence, else greedily.
  void Anchored(Matches* m) {
    struct Seen {
      size_t count = 0, index = 0;
    };
    std::unordered_map<uint64_t, Seen> in_a, in_b;
    for (size_t i = 0; i < a_.size(); ++i) {
      if (a_[i].ret_unknown) continue;
      Seen& s = in_a[a_[i].detail];
      ++s.count;
      s.index = i;
    }
    for (size_t j = 0; j < b_.size(); ++j) {
      Seen& s = in_b[b_[j].detail];
      ++s.count;
      s.index = j;
    }
    Matches candidates;
    for (const auto& [detail, sa] : in_a) {
      auto it = in_b.find(detail);
      if (sa.count == 1 && it != in_b.end() && it->second.count == 1 &&
          Eq(sa.index, it->second.index))
        candidates.emplace_back(sa.index, it->second.index);
    }
    std::sort(candidates.begin(), candidates.end());
    // Longest run increasing in both (patience sorting).
    std::vector<size_t> tails, prev(candidates.size(), kNotMatched);
    for (size_t k = 0; k < candidates.size(); ++k) {
      auto pos = std::lower_bound(tails.begin(), tails.end(), candidates[k].second,
                                  [&](size_t t, size_t j) { return candidates[t].second < j; });
      if (pos != tails.begin()) prev[k] = *(pos - 1);
      if (pos == tails.end())
        tails.push_back(k);
      else
        *pos = k;
    }
    Matches anchors;
    for (size_t k = tails.empty() ? kNotMatched : tails.back(); k != kNotMatched; k = prev[k])
      anchors.push_back(candidates[k]);
    std::reverse(anchors.begin(), anchors.end());
    size_t i = 0, j = 0;
    for (auto [ai, aj] : anchors) {
      Stretch(i, ai, j, aj, m);
      m->emplace_back(ai, aj);
      i = ai + 1;
      j = aj + 1;
    }
    Stretch(i, a_.size(), j, b_.size(), m);
  }

  // Diffs one stretch between anchors with what is left of the budget for the whole thread.
  void Stretch(size_t a0, size_t a1, size_t b0, size_t b1, Matches* m) {
    if (a0 == a1 || b0 == b1) return;
    constexpr uint64_t kMinBudget = 1'000'000;
    work_ = 0;
    budget_ = std::max(kMinBudget, stretch_budget_);
    over_budget_ = false;
    Matches w;
    Diff(a0, a1, b0, b1, &w);
    stretch_budget_ -= std::min(stretch_budget_, work_);
    if (over_budget_) {
      w.clear();
      if (!Subsequence(a0, a1, b0, b1, &w)) Greedy(a0, a1, b0, b1, &w);
    }
    m->insert(m->end(), w.begin(), w.end());
  }

  bool Eq(size_t i, size_t j) const { return Same(a_[i], b_[j]); }

  void Diff(size_t a0, size_t a1, size_t b0, size_t b1, Matches* m) {
    if (over_budget_) return;
    while (a0 < a1 && b0 < b1 && Eq(a0, b0)) m->emplace_back(a0++, b0++);
    size_t suffix = 0;
    while (a0 < a1 && b0 < b1 && Eq(a1 - 1, b1 - 1)) --a1, --b1, ++suffix;
    if (a0 < a1 && b0 < b1) {
      size_t x = 0, y = 0;
      if (Bisect(a0, a1, b0, b1, &x, &y)) {
        if ((x == 0 && y == 0) || (x == a1 - a0 && y == b1 - b0)) {
          Greedy(a0, a1, b0, b1, m);  // cannot happen; never recurse on the same problem
        } else {
          Diff(a0, a0 + x, b0, b0 + y, m);
          Diff(a0 + x, a1, b0 + y, b1, m);
        }
      }
    }
    for (size_t k = 0; k < suffix; ++k) m->emplace_back(a1 + k, b1 + k);
  }

  // Finds where the middle snake of an optimal path ends (as diff-match-patch's bisect does).
  // False when nothing is common or the budget ran out.
  bool Bisect(size_t a0, size_t a1, size_t b0, size_t b1, size_t* sx, size_t* sy) {
    const auto n = static_cast<int64_t>(a1 - a0), m = static_cast<int64_t>(b1 - b0);
    const int64_t max_d = (n + m + 1) / 2, off = max_d, len = 2 * max_d + 2;
    v1_.assign(static_cast<size_t>(len), -1);
    v2_.assign(static_cast<size_t>(len), -1);
    v1_[off + 1] = 0;
    v2_[off + 1] = 0;
    const int64_t delta = n - m;
    const bool front = delta % 2 != 0;
    int64_t k1start = 0, k1end = 0, k2start = 0, k2end = 0;
    for (int64_t d = 0; d < max_d; ++d) {
      work_ += static_cast<uint64_t>(2 * d + 2);
      if (work_ > budget_) {
        over_budget_ = true;
        return false;
      }
      for (int64_t k1 = -d + k1start; k1 <= d - k1end; k1 += 2) {
        const int64_t k1off = off + k1;
        int64_t x1 = k1 == -d || (k1 != d && v1_[k1off - 1] < v1_[k1off + 1]) ? v1_[k1off + 1]
                                                                              : v1_[k1off - 1] + 1;
        int64_t y1 = x1 - k1;
        const int64_t x1s = x1;
        while (x1 < n && y1 < m && Eq(a0 + x1, b0 + y1)) ++x1, ++y1;
        work_ += static_cast<uint64_t>(x1 - x1s);
        v1_[k1off] = x1;
        if (x1 > n) {
          k1end += 2;
        } else if (y1 > m) {
          k1start += 2;
        } else if (front) {
          const int64_t k2off = off + delta - k1;
          if (k2off >= 0 && k2off < len && v2_[k2off] != -1 && x1 >= n - v2_[k2off]) {
            *sx = static_cast<size_t>(x1);
            *sy = static_cast<size_t>(y1);
            return true;
          }
        }
      }
      for (int64_t k2 = -d + k2start; k2 <= d - k2end; k2 += 2) {
        const int64_t k2off = off + k2;
        int64_t x2 = k2 == -d || (k2 != d && v2_[k2off - 1] < v2_[k2off + 1]) ? v2_[k2off + 1]
                                                                              : v2_[k2off - 1] + 1;
        int64_t y2 = x2 - k2;
        const int64_t x2s = x2;
        while (x2 < n && y2 < m && Eq(a0 + (n - x2 - 1), b0 + (m - y2 - 1))) ++x2, ++y2;
        work_ += static_cast<uint64_t>(x2 - x2s);
        v2_[k2off] = x2;
        if (x2 > n) {
          k2end += 2;
        } else if (y2 > m) {
          k2start += 2;
        } else if (!front) {
          const int64_t k1off = off + delta - k2;
          if (k1off >= 0 && k1off < len && v1_[k1off] != -1) {
            const int64_t x1 = v1_[k1off], y1 = off + x1 - k1off;
            if (x1 >= n - x2) {
              *sx = static_cast<size_t>(x1);
              *sy = static_cast<size_t>(y1);
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  // Walks both sequences; at a difference skips the shorter way to the next equal pair (within
  // a window): expected calls as missing or actual calls as extra.
  void Greedy(size_t a0, size_t a1, size_t b0, size_t b1, Matches* m) const {
    constexpr size_t kWindow = 512;
    size_t i = a0, j = b0;
    while (i < a1 && j < b1) {
      if (Eq(i, j)) {
        m->emplace_back(i++, j++);
        continue;
      }
      size_t dk = kWindow, dl = kWindow;
      for (size_t k = 1; k < kWindow && j + k < b1; ++k)
        if (Eq(i, j + k)) {
          dk = k;
          break;
        }
      for (size_t l = 1; l < kWindow && l < dk && i + l < a1; ++l)
        if (Eq(i + l, j)) {
          dl = l;
          break;
        }
      if (dk == kWindow && dl == kWindow) {  // nothing near: both unmatched
        ++i, ++j;
      } else if (dl <= dk) {
        i += dl;
      } else {
        j += dk;
      }
    }
  }

  const std::vector<Call>& a_;
  const std::vector<Call>& b_;
  uint64_t budget_;
  uint64_t stretch_budget_ = budget_ > UINT64_MAX / 4 ? UINT64_MAX : 4 * budget_;  // Anchored()
  uint64_t work_ = 0;
  bool over_budget_ = false;
  bool exact_ = true;
  std::vector<int64_t> v1_, v2_;
};

// What became of each call of one thread.
enum class Fate : uint8_t {
  kMatched,         // same call, same result, in order
  kMissing,         // expected, not recorded
  kOrderMismatch,   // recorded with the same result, but elsewhere in the thread's order
  kReturnMismatch,  // recorded in its place with another result
  kExtra,           // recorded, strace did not see it
  kOptionalAbsent,  // optional and not recorded: not counted
};

struct ThreadResult {
  std::vector<Fate> expected_fate;
  std::vector<size_t> expected_partner;  // index in actual, or kNotMatched
  std::vector<bool> before_main;         // missing calls before the first recorded one of its image
  std::vector<Fate> actual_fate;
  std::vector<size_t> actual_partner;
  bool exact = true;  // false: the alignment is approximate (Aligner)
  uint64_t expected = 0, matched = 0, missing = 0, missing_before_main = 0, order_mismatches = 0,
           return_mismatches = 0, extra = 0;
};

ThreadResult CompareThread(const std::vector<Call>& expected, const std::vector<Call>& actual,
                           uint64_t budget = 300'000'000) {
  ThreadResult r;
  const size_t n = expected.size(), m = actual.size();
  r.expected_fate.assign(n, Fate::kMissing);
  r.expected_partner.assign(n, kNotMatched);
  r.before_main.assign(n, false);
  r.actual_fate.assign(m, Fate::kExtra);
  r.actual_partner.assign(m, kNotMatched);
  Aligner aligner(expected, actual, budget);
  Matches matches = aligner.Run();
  // Where several alignments are equally long, a recorder most likely missed the early calls of
  // a thread or image (before the library runs), not look-alikes after main: each match slides
  // to the latest equal expected call before the next match.
  for (size_t k = matches.size(); k-- > 0;) {
    size_t bound = k + 1 < matches.size() ? matches[k + 1].first : n;
    for (size_t i = bound; i-- > matches[k].first + 1;) {
      if (Same(expected[i], actual[matches[k].second])) {
        matches[k].first = i;
        break;
      }
    }
  }
  for (auto [i, j] : matches) {
    r.expected_fate[i] = r.actual_fate[j] = Fate::kMatched;
    r.expected_partner[i] = j;
    r.actual_partner[j] = i;
  }
  r.exact = aligner.exact();
  auto pair = [&](size_t i, size_t j, Fate f) {
    r.expected_fate[i] = r.actual_fate[j] = f;
    r.expected_partner[i] = j;
    r.actual_partner[j] = i;
  };
  // A call recorded with its result but out of order: the same call and result among the
  // unmatched recorded calls near where it belongs (the recorded position after the last match
  // before it), nearest first.
  constexpr size_t kReorderReach = 64;
  size_t place = 0;
  for (size_t i = 0; i < n; ++i) {
    if (r.expected_fate[i] == Fate::kMatched) {
      place = r.expected_partner[i] + 1;
      continue;
    }
    if (r.expected_fate[i] != Fate::kMissing || expected[i].optional) continue;
    for (size_t d = 0; d < kReorderReach; ++d) {
      size_t found = kNotMatched;
      if (place + d < m && r.actual_fate[place + d] == Fate::kExtra &&
          Same(expected[i], actual[place + d]))
        found = place + d;
      else if (d > 0 && d <= place && r.actual_fate[place - d] == Fate::kExtra &&
               Same(expected[i], actual[place - d]))
        found = place - d;
      if (found != kNotMatched) {
        pair(i, found, Fate::kOrderMismatch);
        break;
      }
    }
  }
  // A call recorded in its place with another result: the same call among the unmatched
  // recorded ones between the matches around it.
  size_t next_actual = 0;  // actual calls before this one lie before the current gap
  for (size_t i = 0; i < n; ++i) {
    if (r.expected_fate[i] == Fate::kMatched) {
      next_actual = r.expected_partner[i] + 1;
      continue;
    }
    if (r.expected_fate[i] != Fate::kMissing || expected[i].optional) continue;
    for (size_t j = next_actual; j < m && r.actual_fate[j] != Fate::kMatched; ++j) {
      if (r.actual_fate[j] == Fate::kExtra && actual[j].call == expected[i].call) {
        pair(i, j, Fate::kReturnMismatch);
        break;
      }
    }
  }
  // Missing calls of an image (the thread's start, or a successful execve) that come before
  // the first of its calls the recorder saw happened before the library was running.
  for (size_t i = 0; i < n;) {
    size_t end = i + 1;
    while (end < n && !expected[end].new_image) ++end;
    size_t first_seen = end;
    for (size_t k = i; k < end; ++k) {
      if (!expected[k].new_image && r.expected_fate[k] != Fate::kMissing &&
          r.expected_fate[k] != Fate::kOptionalAbsent) {
        first_seen = k;
        break;
      }
    }
    if (first_seen == end) first_seen = i;  // the recorder saw nothing of this image
    for (size_t k = i; k < first_seen; ++k) r.before_main[k] = r.expected_fate[k] == Fate::kMissing;
    i = end;
  }
  for (size_t i = 0; i < n; ++i) {
    if (expected[i].optional) {
      if (r.expected_fate[i] == Fate::kMissing) r.expected_fate[i] = Fate::kOptionalAbsent;
      r.before_main[i] = false;
      continue;
    }
    ++r.expected;
    switch (r.expected_fate[i]) {
      case Fate::kMatched:
        ++r.matched;
        break;
      case Fate::kMissing:
        ++r.missing;
        r.missing_before_main += r.before_main[i];
        break;
      case Fate::kOrderMismatch:
        ++r.order_mismatches;
        break;
      case Fate::kReturnMismatch:
        ++r.return_mismatches;
        break;
      default:
        break;
    }
  }
  for (size_t j = 0; j < m; ++j) r.extra += r.actual_fate[j] == Fate::kExtra;
  return r;
}

// ---- The comparison of two traces ----

struct Options {
  std::vector<int64_t> ignore_fds;
  uint64_t budget = 300'000'000;  // alignment work per thread before the approximate fallback
};

struct ThreadReport {
  uint32_t tid = 0, pid = 0;
  std::vector<Call> expected, actual;
  ThreadResult result;
};

struct Report {
  uint64_t expected = 0, matched = 0, missing = 0, missing_before_main = 0, order_mismatches = 0,
           return_mismatches = 0, extra = 0, optional_matched = 0;
  // strace calls in scope left out, by reason.
  uint64_t excluded_launcher = 0, excluded_writer = 0, excluded_fds = 0, excluded_before_exec = 0,
           excluded_library = 0;
  uint64_t merged_close_range = 0;  // split close_range calls counted as one
  int64_t recorder_pid = -1;
  std::set<int64_t> recorder_fds;
  std::set<uint32_t> writer_tids;
  std::vector<std::string> warnings;
  std::vector<ThreadReport> threads;  // every thread with calls on either side, by tid
};

std::optional<int64_t> HeaderInt(const trace::Header& h, std::string_view key) {
  std::string_view v = h.Get(key);
  if (v.empty()) return std::nullopt;
  return trace::ParseInteger(v);
}

// Notes `writer-thread PID TID`.
std::set<uint32_t> WriterThreads(const std::vector<std::string>& notes) {
  std::set<uint32_t> tids;
  for (const std::string& note : notes) {
    unsigned pid = 0, tid = 0;
    if (std::sscanf(note.c_str(), "writer-thread %u %u", &pid, &tid) == 2) tids.insert(tid);
  }
  return tids;
}

// Thread-group ids from the clone, fork and vfork results seen in the strace trace.
struct Family {
  std::map<uint32_t, uint32_t> parent;  // child tid -> the tid that created it
  std::set<uint32_t> threads;           // tids created with CLONE_THREAD

  uint32_t Tgid(uint32_t tid) {
    for (int depth = 0; depth < 64 && threads.count(tid); ++depth) {
      auto it = parent.find(tid);
      if (it == parent.end()) break;
      tid = it->second;
    }
    return tid;
  }
};

Family FamilyOf(const TraceData& t) {
  Family f;
  for (const auto& [tid, evs] : t.threads) {
    for (const Ev& ev : evs) {
      const LiteEvent& e = ev.e;
      if (e.spec().effect != Effect::kProcess || e.ret <= 0 || e.failed()) continue;
      bool thread = false;
      if (e.call == CallId::clone || e.call == CallId::clone3)
        thread = (e.args[0] & 0x00010000) != 0;  // CLONE_THREAD
      else if (e.call != CallId::fork && e.call != CallId::vfork)
        continue;
      auto child = static_cast<uint32_t>(e.ret);
      f.parent[child] = tid;
      if (thread) f.threads.insert(child);
    }
  }
  return f;
}

// The launcher's memfds (the recorder's shared state) open when it started the command, by their
// numbers after F_DUPFD and dup*: the library maps them in every recorded process.
std::set<int64_t> LauncherMemfds(const TraceData& strace, Family& family, uint32_t launcher) {
  std::vector<const LiteEvent*> evs;
  for (const auto& [tid, list] : strace.threads)
    if (family.Tgid(tid) == launcher)
      for (const Ev& ev : list) evs.push_back(&ev.e);
  std::stable_sort(evs.begin(), evs.end(), [](const LiteEvent* a, const LiteEvent* b) {
    return a->start_ns < b->start_ns;
  });
  std::set<int64_t> fds;
  for (const LiteEvent* e : evs) {
    if (e->failed()) continue;
    switch (e->call) {
      case CallId::memfd_create:
        fds.insert(e->ret);
        break;
      case CallId::fcntl:
        if ((e->args[1] == F_DUPFD || e->args[1] == F_DUPFD_CLOEXEC) && fds.count(e->args[0]))
          fds.insert(e->ret);
        break;
      case CallId::dup:
      case CallId::dup2:
      case CallId::dup3:
        if (fds.count(e->args[0])) fds.insert(e->ret);
        break;
      case CallId::close:
        fds.erase(e->args[0]);
        break;
      case CallId::fork:
      case CallId::vfork:
        if (e->ret > 0) return fds;
        break;
      case CallId::clone:
      case CallId::clone3:
        if (e->ret > 0 && (e->args[0] & 0x00010000) == 0) return fds;  // not CLONE_THREAD
        break;
      default:
        break;
    }
  }
  return fds;
}

// Folds runs of close_range that a library split around its own fds back into one call:
// close_range(a, F-1, fl) = 0; close_range(F+1, b, fl) = 0, with F a recorder fd.
void MergeSplitCloseRange(std::vector<Call>* calls, const std::vector<Ev>& evs,
                          const std::set<int64_t>& recorder_fds, uint64_t* merged) {
  std::vector<Call> out;
  out.reserve(calls->size());
  uint64_t last_end = 0, flags = 0;
  for (const Call& c : *calls) {
    const LiteEvent& e = evs[c.index].e;
    if (c.call == CallId::close_range && e.ret == 0 && !out.empty() &&
        out.back().call == CallId::close_range && out.back().ret == 0 &&
        static_cast<uint64_t>(e.args[2]) == flags) {
      auto first = static_cast<uint64_t>(static_cast<uint32_t>(e.args[0]));
      bool gap_is_ours = first > last_end + 1;
      for (uint64_t fd = last_end + 1; gap_is_ours && fd < first; ++fd)
        gap_is_ours = recorder_fds.count(static_cast<int64_t>(fd)) != 0;
      if (gap_is_ours) {
        last_end = static_cast<uint32_t>(e.args[1]);
        ++*merged;
        continue;
      }
    }
    if (c.call == CallId::close_range && e.ret == 0) {
      last_end = static_cast<uint32_t>(e.args[1]);
      flags = static_cast<uint64_t>(e.args[2]);
    }
    out.push_back(c);
  }
  *calls = std::move(out);
}

Report Compare(const TraceData& strace, const TraceData& recorded, const Options& options) {
  Report rep;
  if (auto pid = HeaderInt(recorded.header, "recorder_pid"))
    rep.recorder_pid = *pid;
  else
    rep.warnings.push_back("the recorded trace has no recorder_pid: no launcher left out");
  if (auto fd = HeaderInt(recorded.header, "trace_fd"))
    rep.recorder_fds.insert(*fd);
  else
    rep.warnings.push_back("the recorded trace has no trace_fd: no calls on it left out");
  if (auto fd = HeaderInt(recorded.header, "shm_fd")) rep.recorder_fds.insert(*fd);
  // The fds just above the trace's are the library's (its liveness lock; at load it also
  // looks there for stray copies of one): the launcher leaves that top of the range to it.
  if (!rep.recorder_fds.empty()) {
    int64_t top = *rep.recorder_fds.rbegin();
    for (int64_t fd = top + 1; fd <= top + 16; ++fd) rep.recorder_fds.insert(fd);
  }
  for (int64_t fd : options.ignore_fds) rep.recorder_fds.insert(fd);
  rep.writer_tids = WriterThreads(recorded.notes);
  if (!strace.warning.empty()) rep.warnings.push_back("strace trace: " + strace.warning);
  if (!recorded.warning.empty()) rep.warnings.push_back("recorded trace: " + recorded.warning);

  Family family = FamilyOf(strace);
  if (rep.recorder_pid >= 0)
    for (int64_t fd : LauncherMemfds(strace, family, static_cast<uint32_t>(rep.recorder_pid)))
      rep.recorder_fds.insert(fd);
  // The library's liveness lock: it reopens the shared memfd (/proc/self/fd/SHM), moves the
  // new fd high with F_DUPFD and closes the low one; the high fd lives on in the process and
  // its children. All of these are the recorder's, found in a first pass over every thread
  // (a child may close its parent's copy before the parent's thread comes up here).
  for (const auto& [tid, evs] : strace.threads) {
    std::set<int64_t> reopened;
    for (const auto& ev : evs) {
      const LiteEvent& e = ev.e;
      if (e.reopens_fd >= 0 && rep.recorder_fds.count(e.reopens_fd)) reopened.insert(e.ret);
      if (e.call == CallId::fcntl && reopened.count(e.args[0]) &&
          (e.args[1] == F_DUPFD || e.args[1] == F_DUPFD_CLOEXEC) && !e.failed())
        rep.recorder_fds.insert(e.ret);
      if (e.call == CallId::close && reopened.count(e.args[0])) reopened.erase(e.args[0]);
    }
  }
  // Children of the launcher: what they do before their execve of CMD is the launcher's.
  std::set<uint32_t> launcher_children;
  for (const auto& [child, parent] : family.parent)
    if (!family.threads.count(child) && rep.recorder_pid >= 0 &&
        family.Tgid(parent) == static_cast<uint32_t>(rep.recorder_pid))
      launcher_children.insert(child);

  std::map<uint32_t, ThreadReport> threads;
  for (const auto& [tid, evs] : strace.threads) {
    uint32_t tgid = family.Tgid(tid);
    bool launcher = rep.recorder_pid >= 0 && tgid == static_cast<uint32_t>(rep.recorder_pid);
    bool writer = rep.writer_tids.count(tid) != 0;
    bool before_exec = launcher_children.count(tid) != 0;
    std::set<int64_t> library_fd;  // the loader's fd of libiorr-preload.so, from open to close
    std::set<int64_t> reopened;    // the library's reopen of its memfd, from open to close
    std::vector<Call> calls;
    for (size_t k = 0; k < evs.size(); ++k) {
      const LiteEvent& e = evs[k].e;
      if (!InScope(e)) continue;
      // The loader reading the recorder's library in is no call of the program's (an
      // unrecorded run does not make it), and no recorder can see it.
      if (!launcher && !writer && !before_exec) {
        if (e.opens_recorder_library && !e.failed()) {
          library_fd = {e.ret};
          ++rep.excluded_library;
          continue;
        }
        if (OnFds(e, library_fd)) {
          if (e.call == CallId::close) library_fd.clear();
          ++rep.excluded_library;
          continue;
        }
      }
      if (launcher) {
        ++rep.excluded_launcher;
        continue;
      }
      if (writer) {
        ++rep.excluded_writer;
        continue;
      }
      Call c;
      c.call = e.call;
      c.ret = e.ret;
      c.alt_ret = AltRet(e);
      c.index = k;
      c.detail = e.detail;
      c.new_image = IsExec(e);
      if (before_exec) {
        if (!c.new_image) {
          ++rep.excluded_before_exec;
          continue;
        }
        before_exec = false;
        c.optional = true;
      }
      if (e.reopens_fd >= 0 && rep.recorder_fds.count(e.reopens_fd)) {
        reopened.insert(e.ret);
        ++rep.excluded_fds;
        continue;
      }
      if (OnFds(e, reopened)) {
        if (e.call == CallId::close) reopened.erase(e.args[0]);
        ++rep.excluded_fds;
        continue;
      }
      if (OnFds(e, rep.recorder_fds)) {
        ++rep.excluded_fds;
        continue;
      }
      // strace's `= ?` (no result, no duration) imports as 0 without a duration.
      c.ret_unknown = e.ret == 0 && e.end_ns == e.start_ns;
      calls.push_back(c);
    }
    MergeSplitCloseRange(&calls, evs, rep.recorder_fds, &rep.merged_close_range);
    if (calls.empty()) continue;
    ThreadReport& t = threads[tid];
    t.tid = tid;
    t.pid = tgid;
    t.expected = std::move(calls);
  }
  for (const auto& [tid, evs] : recorded.threads) {
    if (rep.writer_tids.count(tid)) continue;
    std::vector<Call> calls;
    for (size_t k = 0; k < evs.size(); ++k) {
      const LiteEvent& e = evs[k].e;
      if (!InScope(e) || OnFds(e, rep.recorder_fds)) continue;
      if (rep.recorder_pid >= 0 && e.pid == static_cast<uint32_t>(rep.recorder_pid)) continue;
      Call c;
      c.call = e.call;
      c.ret = e.ret;
      c.index = k;
      c.detail = e.detail;
      c.new_image = IsExec(e);
      calls.push_back(c);
    }
    uint64_t merged = 0;
    MergeSplitCloseRange(&calls, evs, rep.recorder_fds, &merged);
    if (calls.empty()) continue;
    ThreadReport& t = threads[tid];
    if (t.tid == 0) {
      t.tid = tid;
      t.pid = evs.front().e.pid;
    }
    t.actual = std::move(calls);
  }
  for (auto& [tid, t] : threads) {
    t.result = CompareThread(t.expected, t.actual, options.budget);
    const ThreadResult& r = t.result;
    rep.expected += r.expected;
    rep.matched += r.matched;
    rep.missing += r.missing;
    rep.missing_before_main += r.missing_before_main;
    rep.order_mismatches += r.order_mismatches;
    rep.return_mismatches += r.return_mismatches;
    rep.extra += r.extra;
    for (size_t i = 0; i < t.expected.size(); ++i)
      rep.optional_matched += t.expected[i].optional && r.expected_fate[i] == Fate::kMatched;
    if (!r.exact)
      rep.warnings.push_back(
          "thread " + std::to_string(tid) +
          ": too many differences for an exact alignment; counts are approximate");
    rep.threads.push_back(std::move(t));
  }
  return rep;
}

bool Complete(const Report& r) {
  return r.expected > 0 && r.matched == r.expected && r.order_mismatches == 0 &&
         r.return_mismatches == 0;
}

// Calls the dynamic loader makes before the recorder's library is loaded (and the library's
// constructor runs) cannot be seen from inside the process; --after-main judges the rest.
bool CompleteAfterMain(const Report& r) {
  return r.expected > 0 && r.matched + r.missing_before_main == r.expected &&
         r.order_mismatches == 0 && r.return_mismatches == 0;
}

int ExitCode(const Report& r, bool after_main) {
  return (after_main ? CompleteAfterMain(r) : Complete(r)) ? kExitComplete : kExitIncomplete;
}

// "98.4%", never rounded up to 100.0% when something is missing.
std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  uint64_t tenths = part * 1000 / whole;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

std::string CoverageLine(const Report& r) {
  return "coverage: " + std::to_string(r.matched) + "/" + std::to_string(r.expected) + " (" +
         Percent(r.matched, r.expected) + ") file-system calls, " +
         std::to_string(r.order_mismatches + r.return_mismatches) + " order/return mismatches, " +
         std::to_string(r.extra) + " extra";
}

// ---- Reports ----

// strace's -ttt time of an event of the strace trace.
std::string WallTime(const TraceData& t, int64_t start_ns) {
  int64_t ns = t.header.core.start_wall_ns + start_ns;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%06" PRId64, ns / 1'000'000'000,
                ns % 1'000'000'000 / 1000);
  return buf;
}

constexpr size_t kListed = 20;

void PrintThread(std::FILE* out, const ThreadReport& t, const TraceData& strace,
                 const TraceData& recorded) {
  const ThreadResult& r = t.result;
  std::fprintf(out,
               "tid %u (pid %u): %" PRIu64 " calls, %" PRIu64 " matched, %" PRIu64
               " missing (%" PRIu64 " before main), %" PRIu64 " order and %" PRIu64
               " return mismatches, %" PRIu64 " extra%s\n",
               t.tid, t.pid, r.expected, r.matched, r.missing, r.missing_before_main,
               r.order_mismatches, r.return_mismatches, r.extra, r.exact ? "" : " (approximate)");
  static const std::vector<Ev> kNone;
  auto sit = strace.threads.find(t.tid);
  const std::vector<Ev>& full = sit == strace.threads.end() ? kNone : sit->second;
  auto rit = recorded.threads.find(t.tid);
  const std::vector<Ev>& rec = rit == recorded.threads.end() ? kNone : rit->second;

  // Missing calls after main with the strace lines around them (2 before, 1 after), "-"
  // marking them; then those before main, alone.
  std::vector<size_t> after, before;
  for (size_t i = 0; i < t.expected.size(); ++i) {
    if (r.expected_fate[i] != Fate::kMissing) continue;
    std::vector<size_t>& list = r.before_main[i] ? before : after;
    if (list.size() < kListed) list.push_back(t.expected[i].index);
  }
  if (!after.empty()) {
    std::fprintf(out, "  missing after main, the first %zu (strace -ttt times):\n", after.size());
    std::set<size_t> lines;
    for (size_t k : after)
      for (size_t l = k >= 2 ? k - 2 : 0; l <= k + 1 && l < full.size(); ++l) lines.insert(l);
    std::set<size_t> marked(after.begin(), after.end());
    size_t prev = SIZE_MAX;
    for (size_t l : lines) {
      if (prev != SIZE_MAX && l != prev + 1) std::fprintf(out, "    ...\n");
      prev = l;
      std::fprintf(out, "  %c %s %s\n", marked.count(l) ? '-' : ' ',
                   WallTime(strace, full[l].e.start_ns).c_str(), full[l].text.c_str());
    }
  }
  if (!before.empty()) {
    std::fprintf(out, "  missing before main, the first %zu:\n", before.size());
    for (size_t l : before)
      std::fprintf(out, "  - %s %s\n", WallTime(strace, full[l].e.start_ns).c_str(),
                   full[l].text.c_str());
  }
  size_t shown = 0;
  for (size_t i = 0; i < t.expected.size() && shown < kListed; ++i) {
    Fate f = r.expected_fate[i];
    if (f != Fate::kOrderMismatch && f != Fate::kReturnMismatch) continue;
    ++shown;
    std::fprintf(out, "  %s mismatch: strace %s %s\n",
                 f == Fate::kOrderMismatch ? "order" : "return",
                 WallTime(strace, full[t.expected[i].index].e.start_ns).c_str(),
                 full[t.expected[i].index].text.c_str());
    std::fprintf(out, "      recorded as call %zu of the thread: %s\n",
                 t.actual[r.expected_partner[i]].index,
                 rec[t.actual[r.expected_partner[i]].index].text.c_str());
  }
  shown = 0;
  for (size_t j = 0; j < t.actual.size() && shown < kListed; ++j) {
    if (r.actual_fate[j] != Fate::kExtra) continue;
    ++shown;
    std::fprintf(out, "  extra: recorded call %zu of the thread: %s\n", t.actual[j].index,
                 rec[t.actual[j].index].text.c_str());
  }
}

std::string DetailsLine(const Report& r) {
  auto n = [](uint64_t v) { return std::to_string(v); };
  uint64_t incomplete = 0;
  for (const ThreadReport& t : r.threads)
    incomplete += t.result.missing + t.result.order_mismatches + t.result.return_mismatches > 0;
  std::string fds;
  for (int64_t fd : r.recorder_fds) fds += " " + std::to_string(fd);
  return "details: " + n(r.missing) + " missing (" + n(r.missing_before_main) + " before main, " +
         n(r.missing - r.missing_before_main) + " after), " + n(r.order_mismatches) +
         " order and " + n(r.return_mismatches) + " return mismatches; " + n(r.threads.size()) +
         " threads, " + n(incomplete) +
         " incomplete; left out of strace's calls: " + n(r.excluded_launcher) +
         " of the launcher, " + n(r.excluded_writer) + " of writer threads, " + n(r.excluded_fds) +
         " on the recorder's fds, " + n(r.excluded_before_exec) +
         " before the execve of the command, " + n(r.excluded_library) +
         " loading the recorder's library; " + n(r.merged_close_range) +
         " split close_range merged; recorder fds:" + (fds.empty() ? " none" : fds);
}

void PrintReport(std::FILE* out, const Report& r, const TraceData& strace,
                 const TraceData& recorded, bool verbose) {
  for (const std::string& w : r.warnings) std::fprintf(out, "warning: %s\n", w.c_str());
  std::fprintf(out, "%s\n", CoverageLine(r).c_str());
  std::fprintf(out, "%s\n", DetailsLine(r).c_str());
  if (!verbose) return;
  for (const ThreadReport& t : r.threads) {
    const ThreadResult& res = t.result;
    if (res.missing + res.order_mismatches + res.return_mismatches + res.extra == 0) continue;
    PrintThread(out, t, strace, recorded);
  }
}

constexpr char kUsage[] =
    "usage: trace_coverage STRACE_TRACE RECORDED_TRACE [--verbose] [--after-main] "
    "[--ignore-fd N]...\n"
    "  --after-main  exit 0 when every call after the recorder's library started is there\n"
    "                (the dynamic loader's calls before it cannot be seen from inside)\n";

int Main(int argc, char** argv) {
  std::vector<std::string> paths;
  bool verbose = false;
  bool after_main = false;
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--verbose" || a == "-v") {
      verbose = true;
    } else if (a == "--after-main") {
      after_main = true;
    } else if (a == "--ignore-fd" && i + 1 < argc) {
      auto fd = trace::ParseInteger(argv[++i]);
      if (!fd || *fd < 0) {
        std::fprintf(stderr, "trace_coverage: bad fd %s\n", argv[i]);
        return kExitBadInput;
      }
      options.ignore_fds.push_back(*fd);
    } else if (a == "--align-budget" && i + 1 < argc) {  // for tests of the fallbacks
      auto b = trace::ParseInteger(argv[++i]);
      if (!b || *b < 0) {
        std::fprintf(stderr, "trace_coverage: bad budget %s\n", argv[i]);
        return kExitBadInput;
      }
      options.budget = static_cast<uint64_t>(*b);
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      return kExitComplete;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "trace_coverage: unknown option %s\n", argv[i]);
      return kExitBadInput;
    } else {
      paths.emplace_back(a);
    }
  }
  if (paths.size() != 2) {
    std::fprintf(stderr, "%s", kUsage);
    return kExitBadInput;
  }
  auto strace = LoadTrace(paths[0], verbose);
  if (!strace.ok()) {
    std::fprintf(stderr, "trace_coverage: %s\n", strace.status().message().c_str());
    return kExitBadInput;
  }
  auto recorded = LoadTrace(paths[1], verbose);
  if (!recorded.ok()) {
    std::fprintf(stderr, "trace_coverage: %s\n", recorded.status().message().c_str());
    return kExitBadInput;
  }
  Report report = Compare(*strace, *recorded, options);
  PrintReport(stdout, report, *strace, *recorded, verbose);
  if (report.expected == 0)
    std::printf("no file-system calls of the program in the strace trace\n");
  std::fflush(stdout);
  return ExitCode(report, after_main);
}

}  // namespace iorr::coverage

#ifndef IORR_TRACE_COVERAGE_NO_MAIN
int main(int argc, char** argv) { return iorr::coverage::Main(argc, argv); }
#endif
