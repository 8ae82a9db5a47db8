// Parser for strace text logs and a line reader for plain or compressed logs; see the header.
// Not thread-safe per instance; no shared state between instances.
#include "traces/strace_parse.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <boost/iostreams/filter/bzip2.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filtering_streambuf.hpp>
#include <boost/iostreams/operations.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <ios>
#include <limits>
#include <memory>
#include <utility>

namespace iorr::trace {
namespace {

constexpr size_t kMaxErrorsKept = 20;
constexpr size_t kMaxErrorLineBytes = 512;
constexpr int kMaxDepth = 256;
// After this many `<` that looked like an fd path but never closed, a line's remaining `<` are
// plain characters: keeps hostile lines ("a<a<a<...") linear.
constexpr int kMaxFdPathMisses = 16;
constexpr std::string_view kUnfinished = "<unfinished ...>";
constexpr std::string_view kResumed = " resumed>";

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsNameChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || IsUpper(c) || c == '_';
}
inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
inline int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void SkipSpaces(std::string_view s, size_t* i) {
  while (*i < s.size() && IsSpace(s[*i])) ++*i;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

size_t NameLength(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (IsNameChar(s[n]) || s[n] == '?')) ++n;
  return n;
}

// Decimal digits at s[*i]: at least one, at most max_digits, value <= max.
bool ParseUint(std::string_view s, size_t* i, int max_digits, uint64_t max, uint64_t* out) {
  size_t j = *i;
  uint64_t v = 0;
  while (j < s.size() && IsDigit(s[j])) {
    if (static_cast<int>(j - *i) >= max_digits) return false;
    const uint64_t d = static_cast<uint64_t>(s[j] - '0');
    if (v > (max - d) / 10) return false;
    v = v * 10 + d;
    ++j;
  }
  if (j == *i) return false;
  *i = j;
  *out = v;
  return true;
}

// Digits after a '.': at least one; the first nine give nanoseconds, later ones are ignored.
bool ParseFractionNs(std::string_view s, size_t* i, int64_t* ns) {
  size_t j = *i;
  int64_t v = 0;
  int digits = 0;
  while (j < s.size() && IsDigit(s[j])) {
    if (digits < 9) {
      v = v * 10 + (s[j] - '0');
      ++digits;
    }
    ++j;
  }
  if (j == *i) return false;
  for (; digits < 9; ++digits) v *= 10;
  *i = j;
  *ns = v;
  return true;
}

// "S.F" (seconds with a fraction), as in -ttt timestamps and -T durations.
bool ParseSecondsNs(std::string_view s, size_t* i, int64_t* ns) {
  uint64_t sec = 0;
  int64_t frac = 0;
  if (!ParseUint(s, i, 10, 9'000'000'000ULL, &sec)) return false;
  if (*i >= s.size() || s[*i] != '.') return false;
  ++*i;
  if (!ParseFractionNs(s, i, &frac)) return false;
  *ns = static_cast<int64_t>(sec) * 1'000'000'000 + frac;
  return true;
}

struct Prefix {
  bool has_tid = false;
  bool bracketed = false;  // `[pid N] ` rather than a pid column
  uint32_t tid = 0;
  bool has_time = false;
  bool time_of_day = false;
  int64_t time_ns = 0;
  size_t body = 0;
};

// -ttt "S.F" or -tt/-t "HH:MM:SS[.F]" at s[*i].
bool ParseTime(std::string_view s, size_t* i, Prefix* p) {
  size_t j = *i;
  while (j < s.size() && IsDigit(s[j])) ++j;
  if (j < s.size() && s[j] == '.') {
    p->time_of_day = false;
    return ParseSecondsNs(s, i, &p->time_ns);
  }
  if (j >= s.size() || s[j] != ':') return false;
  uint64_t h = 0, m = 0, sec = 0;
  if (!ParseUint(s, i, 2, 23, &h) || *i >= s.size() || s[*i] != ':') return false;
  ++*i;
  if (!ParseUint(s, i, 2, 59, &m) || *i >= s.size() || s[*i] != ':') return false;
  ++*i;
  if (!ParseUint(s, i, 2, 60, &sec)) return false;
  int64_t frac = 0;
  if (*i < s.size() && s[*i] == '.') {
    ++*i;
    if (!ParseFractionNs(s, i, &frac)) return false;
  }
  p->time_of_day = true;
  p->time_ns = static_cast<int64_t>((h * 60 + m) * 60 + sec) * 1'000'000'000 + frac;
  return true;
}

// Splits `[pid N] `, the pid column and the timestamp off a line; returns why it failed.
const char* ParsePrefix(std::string_view s, Prefix* p) {
  const size_t n = s.size();
  size_t i = 0;
  if (n == 0) return "empty line";
  uint64_t v = 0;
  if (s.starts_with("[pid ")) {
    i = 5;
    SkipSpaces(s, &i);
    if (!ParseUint(s, &i, 10, std::numeric_limits<uint32_t>::max(), &v) || i >= n || s[i] != ']') {
      return "bad [pid N] prefix";
    }
    ++i;
    if (i >= n || s[i] != ' ') return "bad [pid N] prefix";
    SkipSpaces(s, &i);
    p->has_tid = true;
    p->bracketed = true;
    p->tid = static_cast<uint32_t>(v);
  } else if (IsDigit(s[0])) {
    size_t j = 0;
    while (j < n && IsDigit(s[j])) ++j;
    if (j < n && IsSpace(s[j])) {  // a pid column; otherwise the digits start a timestamp
      if (!ParseUint(s, &i, 10, std::numeric_limits<uint32_t>::max(), &v)) return "bad pid";
      SkipSpaces(s, &i);
      p->has_tid = true;
      p->tid = static_cast<uint32_t>(v);
    }
  }
  if (i < n && IsDigit(s[i])) {
    if (!ParseTime(s, &i, p) || i >= n || s[i] != ' ') return "bad timestamp";
    p->has_time = true;
    SkipSpaces(s, &i);
  }
  if (i >= n) return "nothing after the pid or timestamp";
  p->body = i;
  return nullptr;
}

// s[i] is '"'; returns the index of the closing quote, or npos.
size_t SkipString(std::string_view s, size_t i) {
  size_t j = i + 1;
  while (j < s.size()) {
    const void* q = std::memchr(s.data() + j, '"', s.size() - j);
    if (q == nullptr) return std::string_view::npos;
    const size_t k = static_cast<size_t>(static_cast<const char*>(q) - s.data());
    size_t backslashes = 0;
    while (k - backslashes > i + 1 && s[k - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return k;
    j = k + 1;
  }
  return std::string_view::npos;
}

// s[i] is the '<' of an -y fd path (`3</a/b>`, `5</dev/null<char 1:3>>`,
// `4<TCP:[1.2.3.4:5->6.7.8.9:10]>`); returns the index of its closing '>', or npos. strace escapes
// '<' and '>' inside paths, so they nest; the '>' of a socket's "->" does not close.
size_t SkipFdPath(std::string_view s, size_t i) {
  int depth = 0;
  for (size_t j = i; j < s.size(); ++j) {
    const char c = s[j];
    if (c == '\\') {
      ++j;
    } else if (c == '<') {
      ++depth;
    } else if (c == '>' && s[j - 1] != '-') {
      if (--depth == 0) return j;
    }
  }
  return std::string_view::npos;
}

enum class Scan { kOk, kNoClose, kUnterminatedString, kUnterminatedComment, kMismatch, kTooDeep };

const char* ScanError(Scan s) {
  switch (s) {
    case Scan::kOk:
      return nullptr;
    case Scan::kNoClose:
      return "no closing ')' of the arguments";
    case Scan::kUnterminatedString:
      return "unterminated string";
    case Scan::kUnterminatedComment:
      return "unterminated /* comment";
    case Scan::kMismatch:
      return "mismatched brackets";
    case Scan::kTooDeep:
      return "brackets nested too deep";
  }
  return "bad arguments";
}

constexpr std::array<bool, 256> kSpecialChars = [] {
  std::array<bool, 256> t{};
  for (char c : std::string_view("\"/()[]{}<,")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// Scans arguments from s[pos] (just after the call's '(') to the ')' that closes them, or with
// to_end to the end of s; splits them at top-level commas into *args when args is not null.
Scan ScanArgs(std::string_view s, size_t pos, std::vector<StraceArg>* args, size_t* close,
              bool to_end) {
  char stack[kMaxDepth];
  int depth = 0;
  int fd_misses = 0;
  size_t arg_start = pos;
  const size_t n = s.size();
  auto emit_last = [&](size_t end) {
    if (args == nullptr) return;
    std::string_view a = Trim(s.substr(arg_start, end - arg_start));
    if (!a.empty() || !args->empty()) args->push_back(StraceArg{a});
  };
  for (size_t i = pos; i < n; ++i) {
    while (i < n && !kSpecialChars[static_cast<unsigned char>(s[i])]) ++i;
    if (i >= n) break;
    const char c = s[i];
    switch (c) {
      case '"':
        i = SkipString(s, i);
        if (i == std::string_view::npos) return Scan::kUnterminatedString;
        break;
      case '/':
        if (i + 1 < n && s[i + 1] == '*') {
          const size_t e = s.find("*/", i + 2);
          if (e == std::string_view::npos) return Scan::kUnterminatedComment;
          i = e + 1;
        }
        break;
      case '(':
      case '[':
      case '{':
        if (depth == kMaxDepth) return Scan::kTooDeep;
        stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
        break;
      case ')':
      case ']':
      case '}':
        if (depth == 0) {
          if (c != ')' || to_end) return Scan::kMismatch;
          emit_last(i);
          *close = i;
          return Scan::kOk;
        }
        if (stack[--depth] != c) return Scan::kMismatch;
        break;
      case '<':
        if (i > pos && IsNameChar(s[i - 1]) && fd_misses < kMaxFdPathMisses) {
          const size_t e = SkipFdPath(s, i);
          if (e != std::string_view::npos) {
            i = e;
          } else {
            ++fd_misses;
          }
        }
        break;
      case ',':
        if (depth == 0 && args != nullptr) {
          args->push_back(StraceArg{Trim(s.substr(arg_start, i - arg_start))});
          arg_start = i + 1;
        }
        break;
      default:
        break;
    }
  }
  if (depth != 0) return Scan::kMismatch;
  if (!to_end) return Scan::kNoClose;
  emit_last(n);
  *close = n;
  return Scan::kOk;
}

// The text after the arguments' ')': ` = RET[<fd>] [ERRNAME] [(note)]... [<DUR>]`.
const char* ParseReturn(std::string_view r, StraceRecord* rec) {
  const size_t n = r.size();
  size_t i = 0;
  SkipSpaces(r, &i);
  if (i >= n || r[i] != '=') return "expected ' = ' after the arguments";
  ++i;
  SkipSpaces(r, &i);
  if (i >= n) return "missing return value";
  if (r[i] == '?') {
    ++i;
  } else {
    const bool negative = r[i] == '-';
    if (negative) ++i;
    uint64_t v = 0;
    if (r.substr(i).starts_with("0x")) {
      i += 2;
      const size_t start = i;
      for (int h; i < n && (h = HexValue(r[i])) >= 0; ++i) {
        if (i - start >= 16) return "bad return value";
        v = v << 4 | static_cast<uint64_t>(h);
      }
      if (i == start) return "bad return value";
    } else if (!ParseUint(r, &i, 20, std::numeric_limits<uint64_t>::max(), &v)) {
      return "bad return value";
    }
    rec->has_ret = true;
    rec->ret = static_cast<int64_t>(negative ? 0 - v : v);
  }
  if (i < n && r[i] == '<' && !(r.substr(i) == "<unavailable>")) {
    const size_t e = SkipFdPath(r, i);
    if (e == std::string_view::npos) return "unterminated <fd path> after the return value";
    rec->ret_fd_path = r.substr(i + 1, e - i - 1);
    i = e + 1;
  }
  bool have_note = false;
  for (;;) {
    const size_t before = i;
    SkipSpaces(r, &i);
    if (i >= n) break;
    if (i == before) return "unexpected text after the return value";
    const char c = r[i];
    if (c == '<') {
      const size_t e = r.find('>', i);
      if (e == std::string_view::npos) return "unterminated <duration>";
      const std::string_view d = r.substr(i + 1, e - i - 1);
      if (d != "unavailable") {
        size_t k = 0;
        if (!ParseSecondsNs(d, &k, &rec->duration_ns) || k != d.size()) return "bad <duration>";
        rec->has_duration = true;
      }
      i = e + 1;
      SkipSpaces(r, &i);
      if (i != n) return "unexpected text after the <duration>";
      break;
    }
    if (c == '(') {
      size_t close = 0;
      if (ScanArgs(r, i + 1, nullptr, &close, false) != Scan::kOk) {
        return "unbalanced (...) after the return value";
      }
      if (!have_note) rec->ret_note = r.substr(i + 1, close - i - 1);
      have_note = true;
      i = close + 1;
      continue;
    }
    if (IsUpper(c) && rec->err_name.empty() && !have_note) {
      size_t j = i;
      while (j < n && (IsUpper(r[j]) || IsDigit(r[j]) || r[j] == '_' || r[j] == '?')) ++j;
      rec->err_name = r.substr(i, j - i);
      i = j;
      continue;
    }
    return "unexpected text after the return value";
  }
  return nullptr;
}

// A complete call `NAME(ARGS) = RET ...`; fills name, args and the return fields.
const char* ParseCallBody(std::string_view body, StraceRecord* rec) {
  const size_t n = NameLength(body);
  if (n == 0 || n >= body.size() || body[n] != '(') return "expected NAME(";
  rec->name = body.substr(0, n);
  rec->args.clear();
  size_t close = 0;
  if (const char* why = ScanError(ScanArgs(body, n + 1, &rec->args, &close, false))) return why;
  return ParseReturn(body.substr(close + 1), rec);
}

void ResetCallFields(StraceRecord* rec) {
  rec->args.clear();
  rec->has_ret = false;
  rec->ret = 0;
  rec->ret_fd_path = {};
  rec->err_name = {};
  rec->ret_note = {};
  rec->has_duration = false;
  rec->duration_ns = 0;
}

// Decodes the escapes of s (no surrounding quotes) and appends the bytes to *out.
bool Unescape(std::string_view s, std::string* out) {
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const char* run = s.data() + i;
    const void* bs = std::memchr(run, '\\', n - i);
    const size_t k =
        bs == nullptr ? n : static_cast<size_t>(static_cast<const char*>(bs) - s.data());
    out->append(run, k - i);
    if (k == n) break;
    i = k + 1;
    if (i >= n) return false;
    const char c = s[i++];
    switch (c) {
      case '\\':
      case '"':
      case '\'':
      case '?':
        out->push_back(c);
        break;
      case 'a':
        out->push_back('\a');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case 'x': {
        int v = 0, digits = 0;
        for (int h; digits < 2 && i < n && (h = HexValue(s[i])) >= 0; ++i, ++digits) v = v * 16 + h;
        if (digits == 0) return false;
        out->push_back(static_cast<char>(v));
        break;
      }
      default: {
        if (c < '0' || c > '7') return false;
        int v = c - '0';
        for (int digits = 1; digits < 3 && i < n && s[i] >= '0' && s[i] <= '7'; ++i, ++digits) {
          v = v * 8 + (s[i] - '0');
        }
        if (v > 255) return false;
        out->push_back(static_cast<char>(v));
        break;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> UnescapeStraceString(std::string_view quoted, bool* truncated) {
  if (quoted.empty() || quoted[0] != '"') return std::nullopt;
  const size_t close = SkipString(quoted, 0);
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view tail = quoted.substr(close + 1);
  if (!tail.empty() && tail != "...") return std::nullopt;
  std::string out;
  out.reserve(close - 1);
  if (!Unescape(quoted.substr(1, close - 1), &out)) return std::nullopt;
  if (truncated != nullptr) *truncated = !tail.empty();
  return out;
}

std::optional<std::string> UnescapeStraceText(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  if (!Unescape(escaped, &out)) return std::nullopt;
  return out;
}

// ---------------------------------------------------------------------------------------------
// StraceParser

struct StraceParser::Slot {
  std::string text;        // owned copy of the line, or of the joined unfinished + resumed text
  StraceRecord rec;        // views point into `text`
  size_t head_offset = 0;  // unfinished: the arguments printed so far, as offsets into `text`
  size_t head_size = 0;
  size_t name_offset = 0;
  bool complete = false;
  bool detached = false;  // left order_ (see max_held); appended again when complete
};

StraceParser::StraceParser() = default;
StraceParser::StraceParser(const StraceParserOptions& options) : options_(options) {}
StraceParser::~StraceParser() = default;

int64_t StraceParser::OldestUnfinishedNs() const {
  int64_t oldest = INT64_MAX;
  for (const auto& [tid, slot] : pending_)
    if (slot->rec.has_time && slot->rec.time_ns < oldest) oldest = slot->rec.time_ns;
  return oldest;
}

StraceParser::Slot* StraceParser::Acquire() {
  Slot* slot;
  if (free_.empty()) {
    slots_.push_back(std::make_unique<Slot>());
    slot = slots_.back().get();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  std::vector<StraceArg> args = std::move(slot->rec.args);
  args.clear();
  slot->rec = StraceRecord{};
  slot->rec.args = std::move(args);
  slot->complete = false;
  slot->detached = false;
  return slot;
}

void StraceParser::Recycle() {
  free_.insert(free_.end(), released_.begin(), released_.end());
  released_.clear();
}

void StraceParser::AddError(uint64_t line_no, std::string_view reason, std::string_view detail,
                            std::string_view line) {
  ++errors_;
  if (first_errors_.size() >= kMaxErrorsKept) return;
  std::string why(reason);
  why += detail;
  first_errors_.push_back(
      Error{line_no, std::move(why), std::string(line.substr(0, kMaxErrorLineBytes))});
}

void StraceParser::Complete(Slot* slot) {
  slot->complete = true;
  if (slot->detached) {
    slot->detached = false;
    order_.push_back(slot);
  }
}

void StraceParser::CloseUnresumed(Slot* slot) {
  StraceRecord& rec = slot->rec;
  const std::string_view text = slot->text;
  ResetCallFields(&rec);
  rec.name = text.substr(slot->name_offset, slot->head_offset - 1 - slot->name_offset);
  std::string_view head = text.substr(slot->head_offset, slot->head_size);
  while (!head.empty() && (IsSpace(head.back()) || head.back() == ',')) head.remove_suffix(1);
  size_t close = 0;
  if (ScanArgs(head, 0, &rec.args, &close, true) != Scan::kOk) {
    rec.args.clear();
    if (!head.empty()) rec.args.push_back(StraceArg{head});
  }
  rec.unfinished_never_resumed = true;
  Complete(slot);
}

void StraceParser::DropPending(uint32_t tid) {
  if (pending_.empty()) return;
  const auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  Slot* slot = it->second;
  pending_.erase(it);
  CloseUnresumed(slot);
}

namespace {

// strace's own "strace: Process N attached" (stderr, so only in logs written without -o) can
// land in the middle of a trace line: `1.0 vfork(strace: Process 7 attached`, ` <unfinished ...>`.
bool IsAttachMessage(std::string_view s) {
  constexpr std::string_view kProcess = "strace: Process ";
  if (!s.starts_with(kProcess)) return false;
  s.remove_prefix(kProcess.size());
  size_t i = 0;
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i > 0 && (s.substr(i) == " attached" || s.substr(i) == " detached");
}

}  // namespace

void StraceParser::Feed(std::string_view line) {
  Recycle();
  uint64_t line_no = ++lines_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!carry_.empty()) {
    carry_.append(line);
    carried_line_.swap(carry_);
    carry_.clear();
    line = carried_line_;
    line_no = carry_line_no_;
  }
  if (line.starts_with("strace: ")) {
    ++strace_messages_;
    return;
  }
  if (line.ends_with("ached")) {
    const size_t at = line.rfind("strace: Process ");
    if (at != std::string_view::npos && IsAttachMessage(line.substr(at))) {
      ++strace_messages_;
      carry_.assign(line.substr(0, at));
      carry_line_no_ = line_no;
      return;
    }
  }
  Prefix p;
  if (const char* why = ParsePrefix(line, &p)) {
    AddError(line_no, why, {}, line);
    return;
  }
  if (p.time_of_day) {
    // -tt and -t count from midnight: a log that goes past it steps back a day, where no
    // reordering between threads can (found by fuzzing at stop 30: its times a day backwards).
    // A line a little late from before the last midnight (another thread's) goes back a day.
    constexpr int64_t kDayNs = 86'400'000'000'000, kHalfDayNs = kDayNs / 2;
    int64_t t = p.time_ns + day_offset_ns_;
    // (At most 10,000 days: a hostile log of 100,000 midnights would overflow the offset.)
    if (t < last_time_of_day_ns_ - kHalfDayNs && day_offset_ns_ < 10'000 * kDayNs) {
      day_offset_ns_ += kDayNs;
      t += kDayNs;
    } else if (t > last_time_of_day_ns_ + kHalfDayNs && day_offset_ns_ >= kDayNs) {
      t -= kDayNs;
    }
    p.time_ns = t;
    last_time_of_day_ns_ = std::max(last_time_of_day_ns_, t);
  }
  uint32_t tid = default_tid_;
  if (p.bracketed) {
    // Without -o, strace prefixes `[pid N] ` only while it traces more than one process; track
    // the live ones so that the unprefixed lines of the last one get its tid.
    tid = p.tid;
    if (tid != last_bracketed_tid_) {
      live_tids_.insert(tid);
      last_bracketed_tid_ = tid;
    }
  } else if (p.has_tid) {
    tid = p.tid;
  } else if (live_tids_.size() == 1) {
    tid = *live_tids_.begin();
  }
  const std::string_view body = line.substr(p.body);
  if (body.starts_with("<... ")) {
    ParseResume(line, p.body, tid, line_no, p.bracketed);
    return;
  }
  Slot* slot = Acquire();
  slot->text.assign(line);
  StraceRecord& rec = slot->rec;
  rec.tid = tid;
  rec.has_time = p.has_time;
  rec.time_of_day = p.time_of_day;
  rec.time_ns = p.time_ns;
  rec.line_no = line_no;
  if (body.starts_with("+++ ") || body.starts_with("--- ")) {
    ParseEvent(slot, p.body, line_no);
  } else {
    ParseCall(slot, p.body, line_no);
  }
}

void StraceParser::ParseCall(Slot* slot, size_t body_offset, uint64_t line_no) {
  const std::string_view body = std::string_view(slot->text).substr(body_offset);
  StraceRecord& rec = slot->rec;
  if (body.ends_with(kUnfinished)) {
    const size_t n = NameLength(body);
    if (n == 0 || body[n] != '(') {
      AddError(line_no, "expected NAME( before <unfinished ...>", {}, slot->text);
      free_.push_back(slot);
      return;
    }
    rec.name = body.substr(0, n);
    slot->name_offset = body_offset;
    slot->head_offset = body_offset + n + 1;
    slot->head_size = body.size() - kUnfinished.size() - (n + 1);
    DropPending(rec.tid);
    pending_[rec.tid] = slot;
    order_.push_back(slot);
    return;
  }
  if (const char* why = ParseCallBody(body, &rec)) {
    AddError(line_no, why, {}, slot->text);
    free_.push_back(slot);
    return;
  }
  DropPending(rec.tid);
  slot->complete = true;
  order_.push_back(slot);
}

void StraceParser::ParseResume(std::string_view line, size_t body_offset, uint32_t tid,
                               uint64_t line_no, bool bracketed) {
  const std::string_view body = line.substr(body_offset);
  const std::string_view after = body.substr(5);  // past "<... "
  const size_t n = NameLength(after);
  if (n == 0 || !after.substr(n).starts_with(kResumed)) {
    AddError(line_no, "expected <... NAME resumed>", {}, line);
    return;
  }
  const std::string_view name = after.substr(0, n);
  std::string_view rest = after.substr(n + kResumed.size());
  // A thread that died inside the call: `<... read resumed> <unfinished ...>) = ?`.
  if (Trim(rest).starts_with(kUnfinished)) rest = Trim(rest).substr(kUnfinished.size());
  auto it = pending_.find(tid);
  if (it == pending_.end() && bracketed && tid != default_tid_) {
    // The first process of a log without -o prints no `[pid N]` until it forks, so a call it
    // started alone resumes under its pid: `vfork( <unfinished ...>`, then
    // `[pid 7] <... vfork resumed>`.
    const auto unprefixed = pending_.find(default_tid_);
    if (unprefixed != pending_.end()) {
      Slot* slot = unprefixed->second;
      const std::string_view text = slot->text;
      if (text.substr(slot->name_offset, slot->head_offset - 1 - slot->name_offset) == name) {
        pending_.erase(unprefixed);
        slot->rec.tid = tid;
        it = pending_.emplace(tid, slot).first;
      }
    }
  }
  if (it == pending_.end()) {
    AddError(line_no, "resumed call without an unfinished one on this tid: ", name, line);
    return;
  }
  Slot* slot = it->second;
  pending_.erase(it);
  const std::string_view text = slot->text;
  const std::string_view pending_name =
      text.substr(slot->name_offset, slot->head_offset - 1 - slot->name_offset);
  if (pending_name != name) {
    AddError(line_no, "resumed call does not match the unfinished one: ", pending_name, line);
    CloseUnresumed(slot);
    return;
  }
  // Join: NAME( + head + rest, with exactly one separator between the two halves.
  std::string_view head = text.substr(slot->head_offset, slot->head_size);
  while (!head.empty() && IsSpace(head.back())) head.remove_suffix(1);
  rest = Trim(rest);
  std::string_view separator;
  if (rest.empty() || rest.front() == ')') {
    while (!head.empty() && (IsSpace(head.back()) || head.back() == ',')) head.remove_suffix(1);
  } else if (rest.front() == ',') {
    if (head.empty() || head.back() == ',') {
      rest = Trim(rest.substr(1));
      if (!head.empty()) separator = " ";
    }
  } else if (!head.empty()) {
    separator = head.back() == ',' ? " " : ", ";
  }
  joined_.clear();
  joined_.append(name);
  joined_.push_back('(');
  joined_.append(head);
  joined_.append(separator);
  joined_.append(rest);
  slot->text.swap(joined_);
  ResetCallFields(&slot->rec);
  if (const char* why = ParseCallBody(slot->text, &slot->rec)) {
    // Keep the start line as a never-resumed call, and count the bad resume line.
    slot->text.swap(joined_);
    AddError(line_no, why, " (in the resumed call)", line);
    CloseUnresumed(slot);
    return;
  }
  Complete(slot);
}

void StraceParser::ParseEvent(Slot* slot, size_t body_offset, uint64_t line_no) {
  const std::string_view body = std::string_view(slot->text).substr(body_offset);
  StraceRecord& rec = slot->rec;
  const bool plus = body[0] == '+';
  const std::string_view marker = plus ? " +++" : " ---";
  auto fail = [&](const char* why) {
    AddError(line_no, why, {}, slot->text);
    free_.push_back(slot);
  };
  if (body.size() < 8 || !body.ends_with(marker)) return fail("unterminated +++/--- line");
  const std::string_view inner = Trim(body.substr(4, body.size() - 8));
  rec.text = inner;
  auto token_after = [&](std::string_view s) {
    const size_t e = s.find(' ');
    return s.substr(0, e);
  };
  if (plus) {
    if (inner.starts_with("exited with ")) {
      size_t i = 12;
      uint64_t v = 0;
      if (!ParseUint(inner, &i, 10, std::numeric_limits<int>::max(), &v) || i != inner.size()) {
        return fail("bad exit status");
      }
      rec.kind = StraceRecord::Kind::kExited;
      rec.exit_status = static_cast<int>(v);
      DropPending(rec.tid);
      ForgetTid(rec.tid);
    } else if (inner.starts_with("killed by ")) {
      rec.kind = StraceRecord::Kind::kKilled;
      rec.name = token_after(inner.substr(10));
      if (rec.name.empty()) return fail("no signal name");
      DropPending(rec.tid);
      ForgetTid(rec.tid);
    } else if (inner.starts_with("superseded by execve in pid ")) {
      size_t i = 28;
      uint64_t v = 0;
      if (!ParseUint(inner, &i, 10, std::numeric_limits<uint32_t>::max(), &v) ||
          i != inner.size()) {
        return fail("bad pid in superseded line");
      }
      rec.kind = StraceRecord::Kind::kSuperseded;
      rec.execve_tid = static_cast<uint32_t>(v);
      // The leader's own call never ends; the execve of thread v resumes under the leader's tid.
      DropPending(rec.tid);
      const auto it = pending_.find(rec.execve_tid);
      if (it != pending_.end()) {
        Slot* execve = it->second;
        pending_.erase(it);
        pending_[rec.tid] = execve;
      }
      ForgetTid(rec.execve_tid);
    } else {
      return fail("unknown +++ event");
    }
  } else {
    rec.kind = StraceRecord::Kind::kSignal;
    rec.name =
        inner.starts_with("stopped by ") ? token_after(inner.substr(11)) : token_after(inner);
    if (rec.name.empty()) return fail("no signal name");
  }
  slot->complete = true;
  order_.push_back(slot);
}

void StraceParser::ForgetTid(uint32_t tid) {
  if (live_tids_.erase(tid) != 0 && last_bracketed_tid_ == tid) last_bracketed_tid_ = 0;
}

void StraceParser::Finish() {
  Recycle();
  if (!carry_.empty()) {  // the log ended inside a line that strace's message had split
    AddError(carry_line_no_, "truncated line", {}, carry_);
    carry_.clear();
  }
  std::vector<Slot*> open;
  open.reserve(pending_.size());
  for (const auto& [tid, slot] : pending_) open.push_back(slot);
  pending_.clear();
  std::sort(open.begin(), open.end(),
            [](const Slot* a, const Slot* b) { return a->rec.line_no < b->rec.line_no; });
  for (Slot* slot : open) CloseUnresumed(slot);
}

bool StraceParser::Next(StraceRecord& out) {
  while (!order_.empty()) {
    Slot* slot = order_.front();
    if (!slot->complete) {
      if (order_.size() <= options_.max_held) return false;
      order_.pop_front();
      slot->detached = true;
      continue;
    }
    order_.pop_front();
    out = slot->rec;
    released_.push_back(slot);
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// LineSource

namespace {

constexpr size_t kInitialBuffer = size_t{1} << 20;
constexpr size_t kMaxLine = size_t{64} << 20;

std::string ErrnoText(int err) { return std::strerror(err); }

// Reads complete lines out of blocks that a subclass supplies.
class BlockLineSource : public LineSource {
 public:
  BlockLineSource() : buf_(new char[kInitialBuffer]), cap_(kInitialBuffer) {}

  bool Next(std::string_view& line) override {
    for (;;) {
      if (scanned_ < end_) {
        const void* nl = std::memchr(buf_.get() + scanned_, '\n', end_ - scanned_);
        if (nl != nullptr) {
          const size_t at = static_cast<size_t>(static_cast<const char*>(nl) - buf_.get());
          line = std::string_view(buf_.get() + begin_, at - begin_);
          begin_ = scanned_ = at + 1;
          return true;
        }
        scanned_ = end_;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(buf_.get() + begin_, end_ - begin_);
        begin_ = scanned_ = end_;
        return true;
      }
      if (begin_ > 0) {
        std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
        end_ -= begin_;
        scanned_ -= begin_;
        begin_ = 0;
      }
      if (end_ == cap_) {
        if (cap_ >= kMaxLine) {  // hostile input: hand out the piece rather than grow forever
          line = std::string_view(buf_.get(), end_);
          begin_ = scanned_ = end_;
          return true;
        }
        const size_t cap = std::min(cap_ * 2, kMaxLine);
        std::unique_ptr<char[]> bigger(new char[cap]);
        std::memcpy(bigger.get(), buf_.get(), end_);
        buf_ = std::move(bigger);
        cap_ = cap;
      }
      const int64_t got = ReadBlock(buf_.get() + end_, cap_ - end_);
      if (got < 0) {
        failed_ = true;
        eof_ = true;
      } else if (got == 0) {
        eof_ = true;
      } else {
        end_ += static_cast<size_t>(got);
      }
    }
  }
  bool failed() const override { return failed_; }
  std::string error() const override { return error_; }

 protected:
  // Fills up to n bytes; returns the count, 0 at the end, or -1 after setting error_.
  virtual int64_t ReadBlock(char* p, size_t n) = 0;
  std::string error_;

 private:
  std::unique_ptr<char[]> buf_;
  size_t cap_;
  size_t begin_ = 0;    // start of the next line
  size_t scanned_ = 0;  // bytes before this hold no '\n' after begin_
  size_t end_ = 0;
  bool eof_ = false;
  bool failed_ = false;
};

// Reads from fd, serving `prefix` (bytes already read to sniff the format) first.
int64_t ReadFd(int fd, std::string_view* prefix, char* p, size_t n, std::string* error) {
  if (!prefix->empty()) {
    const size_t k = std::min(n, prefix->size());
    std::memcpy(p, prefix->data(), k);
    prefix->remove_prefix(k);
    return static_cast<int64_t>(k);
  }
  for (;;) {
    const ssize_t r = ::read(fd, p, n);
    if (r >= 0) return static_cast<int64_t>(r);
    if (errno == EINTR) continue;
    *error = "read: " + ErrnoText(errno);
    return -1;
  }
}

class FdOwner {
 public:
  FdOwner(int fd, bool owned) : fd_(fd), owned_(owned) {}
  ~FdOwner() {
    if (owned_) ::close(fd_);
  }
  FdOwner(const FdOwner&) = delete;
  FdOwner& operator=(const FdOwner&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
  bool owned_;
};

class PlainLineSource : public BlockLineSource {
 public:
  PlainLineSource(int fd, bool owned, std::string prefix)
      : fd_(fd, owned), prefix_(std::move(prefix)), unread_(prefix_) {}

 protected:
  int64_t ReadBlock(char* p, size_t n) override {
    return ReadFd(fd_.fd(), &unread_, p, n, &error_);
  }

 private:
  FdOwner fd_;
  std::string prefix_;
  std::string_view unread_;
};

// A Boost.Iostreams source over a file descriptor; copies share the fd but not its ownership.
class FdDevice {
 public:
  using char_type = char;
  using category = boost::iostreams::source_tag;
  FdDevice(int fd, std::string prefix) : fd_(fd), prefix_(std::move(prefix)) {}
  std::streamsize read(char* p, std::streamsize n) {
    std::string_view unread = std::string_view(prefix_).substr(prefix_used_);
    const size_t before = unread.size();
    std::string error;
    const int64_t got = ReadFd(fd_, &unread, p, static_cast<size_t>(n), &error);
    prefix_used_ += before - unread.size();
    if (got < 0) throw std::ios_base::failure(error);
    return got == 0 ? -1 : got;
  }

 private:
  int fd_;
  std::string prefix_;
  size_t prefix_used_ = 0;
};

enum class Compression { kNone, kGzip, kXz, kBzip2, kZstd };

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "plain";
    case Compression::kGzip:
      return "gzip";
    case Compression::kXz:
      return "xz";
    case Compression::kBzip2:
      return "bzip2";
    case Compression::kZstd:
      return "zstd";
  }
  return "?";
}

Compression ByMagic(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return Compression::kGzip;
  constexpr char kXzMagic[] = {'\xfd', '7', 'z', 'X', 'Z', '\0'};
  if (head.starts_with(std::string_view(kXzMagic, sizeof(kXzMagic)))) return Compression::kXz;
  if (head.starts_with("BZh")) return Compression::kBzip2;
  if (head.starts_with("\x28\xb5\x2f\xfd")) return Compression::kZstd;
  return Compression::kNone;
}

Compression ByExtension(std::string_view path) {
  if (path.ends_with(".gz")) return Compression::kGzip;
  if (path.ends_with(".xz")) return Compression::kXz;
  if (path.ends_with(".bz2")) return Compression::kBzip2;
  if (path.ends_with(".zst") || path.ends_with(".zstd")) return Compression::kZstd;
  return Compression::kNone;
}

// zstd for Boost.Iostreams, strict about the end: Boost's zstd_decompressor takes an input cut
// in the middle of a frame for a whole one (a truncated .zst log imported its first lines and
// exited 0, where gzip, xz and bzip2 say the data is truncated: found by fuzzing at stop 30).
class StrictZstdDecompressor {
 public:
  typedef char char_type;
  struct category : boost::iostreams::multichar_input_filter_tag {};
  StrictZstdDecompressor()
      : s_(std::make_shared<State>()) {}  // copied when pushed: the state is shared

  template <typename Source>
  std::streamsize read(Source& src, char* out, std::streamsize n) {
    State& st = *s_;
    ZSTD_outBuffer o = {out, static_cast<size_t>(n), 0};
    while (o.pos == 0) {
      if (st.in.pos == st.in.size) {
        if (st.eof) break;
        std::streamsize got =
            boost::iostreams::read(src, st.buf.data(), static_cast<std::streamsize>(st.buf.size()));
        if (got <= 0) {
          st.eof = true;
          // The last frame's end not seen (or nothing at all): truncated.
          if (st.pending != 0 || !st.any) throw std::ios_base::failure("truncated zstd frame");
          break;
        }
        st.in = {st.buf.data(), static_cast<size_t>(got), 0};
        st.any = true;
      }
      size_t r = ZSTD_decompressStream(st.ds.get(), &o, &st.in);
      if (ZSTD_isError(r)) throw std::ios_base::failure(ZSTD_getErrorName(r));
      st.pending = r;
    }
    return o.pos == 0 ? -1 : static_cast<std::streamsize>(o.pos);
  }

 private:
  struct State {
    std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds{ZSTD_createDStream(),
                                                                ZSTD_freeDStream};
    std::array<char, 1 << 17> buf{};
    ZSTD_inBuffer in = {nullptr, 0, 0};
    size_t pending = 0;  // ZSTD_decompressStream's last hint: 0 at a frame's end
    bool eof = false, any = false;
  };
  std::shared_ptr<State> s_;
};

class FilteredLineSource : public BlockLineSource {
 public:
  FilteredLineSource(int fd, bool owned, std::string prefix, Compression c)
      : fd_(fd, owned), kind_(c) {
    namespace io = boost::iostreams;
    constexpr std::streamsize kChunk = 1 << 17;
    switch (c) {
      case Compression::kGzip:
        buf_.push(io::gzip_decompressor(io::zlib::default_window_bits, kChunk), kChunk);
        break;
      case Compression::kXz:
        buf_.push(io::lzma_decompressor(io::lzma_params(), kChunk), kChunk);
        break;
      case Compression::kBzip2:
        buf_.push(io::bzip2_decompressor(false, kChunk), kChunk);
        break;
      case Compression::kZstd:
        buf_.push(StrictZstdDecompressor(), kChunk);
        break;
      case Compression::kNone:
        break;
    }
    buf_.push(FdDevice(fd, std::move(prefix)), kChunk);
  }
  ~FilteredLineSource() override {
    try {
      buf_.reset();
    } catch (...) {  // a damaged stream may complain again on close; already reported
    }
  }

 protected:
  int64_t ReadBlock(char* p, size_t n) override {
    if (done_) return 0;
    try {
      const std::streamsize got = buf_.sgetn(p, static_cast<std::streamsize>(n));
      if (got <= 0) done_ = true;
      return got <= 0 ? 0 : static_cast<int64_t>(got);
    } catch (const std::exception& e) {
      error_ =
          std::string(CompressionName(kind_)) + ": corrupt or truncated data (" + e.what() + ")";
      done_ = true;
      return -1;
    }
  }

 private:
  FdOwner fd_;
  Compression kind_;
  bool done_ = false;
  boost::iostreams::filtering_streambuf<boost::iostreams::input> buf_;
};

}  // namespace

std::unique_ptr<LineSource> LineSource::Open(const std::string& path, std::string* error) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + ErrnoText(errno);
    return nullptr;
  }
  auto fail = [&](const std::string& why) -> std::unique_ptr<LineSource> {
    if (!is_stdin) ::close(fd);
    *error = path + ": " + why;
    return nullptr;
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail(ErrnoText(errno));
  if (S_ISDIR(st.st_mode)) return fail("is a directory");
  std::string head(6, '\0');
  size_t got = 0;
  while (got < head.size()) {
    const ssize_t r = ::read(fd, head.data() + got, head.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return fail("cannot read: " + ErrnoText(errno));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  head.resize(got);
  Compression c = ByMagic(head);
  if (c == Compression::kNone && !head.empty()) c = ByExtension(path);
  if (c == Compression::kNone) {
    return std::make_unique<PlainLineSource>(fd, !is_stdin, std::move(head));
  }
  try {
    return std::make_unique<FilteredLineSource>(fd, !is_stdin, std::move(head), c);
  } catch (const std::exception& e) {  // FilteredLineSource's FdOwner closed fd already
    *error = path + ": " + e.what();
    return nullptr;
  }
}

}  // namespace iorr::trace
