// JSON lines writers and parsers; see jsonl.h. No shared state.
#include "traces/jsonl.h"

#include <charconv>
#include <climits>
#include <cstring>
#include <optional>

#include "traces/format.h"
#include "traces/json.h"
#include "traces/names.h"
#include "traces/text.h"

namespace iorr::trace {
namespace {


// True when AppendJsonString would copy s unchanged (printable ASCII, no '"' or '\\').
bool Plain(std::string_view s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

// AppendJsonString with a fast path for the common plain string.
inline void AppendJsonStr(std::string& out, std::string_view s) {
  if (!Plain(s)) {
    AppendJsonString(out, s);
    return;
  }
  out.push_back('"');
  out.append(s);
  out.push_back('"');
}

// The name AppendEventJson writes for a CallId::other event with syscall number nr.
void AppendOtherName(std::string& out, int64_t nr) {
  std::string_view n = nr >= INT_MIN && nr <= INT_MAX ? SyscallName(static_cast<int>(nr)) : "";
  // A table call's name would read back as that call; keep the number instead.
  if (n.empty() || SpecByName(n) != nullptr) {
    out += "syscall_";
    AppendInt(out, nr);
  } else {
    out.append(n);
  }
}

// What an integer argument of kind k may be spelled as, for error messages.
std::string_view KindWords(ArgKind k) {
  switch (k) {
    case ArgKind::kFd:
      return "an fd";
    case ArgKind::kDirFd:
      return "AT_FDCWD or an fd";
    case ArgKind::kOpenFlags:
      return "O_* flags";
    case ArgKind::kOpenHow:
      return "open_how flags";
    case ArgKind::kMode:
      return "a mode (0644, S_IFREG|0644)";
    case ArgKind::kSize:
      return "a size";
    case ArgKind::kOffset:
      return "an offset";
    case ArgKind::kOffsetPtr:
      return "an offset pointer ([5] or NULL)";
    case ArgKind::kIovec:
      return "an iovec array";
    case ArgKind::kWhence:
      return "SEEK_*";
    case ArgKind::kAtFlags:
      return "AT_* flags";
    case ArgKind::kAccessMode:
      return "F_OK or R_OK|W_OK|X_OK";
    case ArgKind::kFcntlCmd:
      return "an F_* command";
    case ArgKind::kRwfFlags:
      return "RWF_* flags";
    case ArgKind::kRenameFlags:
      return "RENAME_* flags";
    case ArgKind::kXattrFlags:
      return "XATTR_* flags";
    case ArgKind::kFallocMode:
      return "FALLOC_FL_* flags";
    case ArgKind::kSyncRangeFlags:
      return "SYNC_FILE_RANGE_* flags";
    case ArgKind::kMsyncFlags:
      return "MS_* flags";
    case ArgKind::kCloseRangeFlags:
      return "CLOSE_RANGE_* flags";
    case ArgKind::kStatxMask:
      return "STATX_* flags";
    case ArgKind::kAdvice:
      return "POSIX_FADV_*";
    case ArgKind::kBlockPhase:
      return "BLK_QUEUE, BLK_ISSUE or BLK_COMPLETE";
    case ArgKind::kBlockOp:
      return "BLK_* flags";
    case ArgKind::kIoctlReq:
      return "an ioctl request";
    case ArgKind::kFlockOp:
      return "LOCK_* flags";
    case ArgKind::kInotifyMask:
      return "IN_* flags";
    case ArgKind::kProt:
      return "PROT_* flags";
    case ArgKind::kMapFlags:
      return "MAP_* flags";
    case ArgKind::kCloneFlags:
      return "CLONE_* flags";
    case ArgKind::kAddr:
      return "an address";
    case ArgKind::kDev:
      return "a device number";
    case ArgKind::kId:
      return "a uid or gid";
    case ArgKind::kFdPair:
      return "an fd pair ([3, 4])";
    case ArgKind::kSysNr:
      return "a syscall name";
    case ArgKind::kInt:
      return "a constant";
    case ArgKind::kCloneSize:
      return "a size or -1";
    case ArgKind::kBuf:
    case ArgKind::kPath:
    case ArgKind::kStr:
    case ArgKind::kLinkTarget:
    case ArgKind::kXattrValue:
      break;
  }
  return "a value";
}

}  // namespace

namespace {

// Where WriteEventJson writes: a std::string (any event), or a buffer with room for the event
// (events whose strings need no escapes; see AppendEventJson).
struct StringSink {
  std::string& out;
  void Lit(std::string_view s) { out.append(s); }
  void Char(char c) { out.push_back(c); }
  void Int(int64_t v) { AppendInt(out, v); }
  void Str(std::string_view s) { AppendJsonStr(out, s); }
  void OtherName(int64_t nr) { AppendOtherName(out, nr); }
};

struct BufSink {
  char* p;
  void Lit(std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  void Char(char c) { *p++ = c; }
  void Int(int64_t v) { p = std::to_chars(p, p + 24, v).ptr; }
  void Str(std::string_view s) {  // plain: checked by the caller
    *p++ = '"';
    Lit(s);
    *p++ = '"';
  }
  void OtherName(int64_t nr) {
    std::string name;
    AppendOtherName(name, nr);
    Lit(name);
  }
};

template <typename Sink>
void WriteEventJson(Sink& out, const Event& e) {
  const CallSpec& spec = e.spec();
  out.Lit("{\"pid\":");
  out.Int(e.pid);
  out.Lit(",\"tid\":");
  out.Int(e.tid);
  out.Lit(",\"call\":\"");
  bool other = e.call == CallId::other;
  if (other)
    out.OtherName(e.args[0].i);
  else
    out.Lit(spec.name);
  out.Lit("\",\"start_ns\":");
  out.Int(e.start_ns);
  out.Lit(",\"end_ns\":");
  out.Int(e.end_ns);
  if (e.failed()) {
    out.Lit(",\"ret\":-1,\"errno\":");
    std::string_view name = ErrnoName(e.err());
    if (name.empty()) {
      out.Int(e.err());
    } else {
      out.Char('"');
      out.Lit(name);
      out.Char('"');
    }
  } else {
    out.Lit(",\"ret\":");
    out.Int(e.ret);
    out.Lit(",\"errno\":null");
  }
  out.Lit(",\"args\":{");
  if (!other) {
    bool comma = false;
    for (int i = 0; i < spec.nargs; ++i) {
      ArgKind k = spec.args[i].kind;
      if (!IsStored(k)) continue;
      if (comma) out.Char(',');
      comma = true;
      out.Char('"');
      out.Lit(spec.args[i].name);
      out.Lit("\":");
      const Arg& a = e.args[i];
      if (!IsString(k))
        out.Int(a.i);
      else if (a.null)
        out.Lit("null");
      else
        out.Str(a.s);
    }
  }
  out.Lit("}}");
}

}  // namespace

void AppendCallName(std::string& out, const Event& e) {
  if (e.call == CallId::other)
    AppendOtherName(out, e.args[0].i);
  else
    out.append(e.spec().name);
}

void AppendEventJson(std::string& out, const Event& e) {
  // Fast path: build the line in a stack buffer and append it at once. Taken when no string
  // needs escaping and the line surely fits: the fixed part (keys, six integers, call and
  // errno names) stays under 320 bytes.
  constexpr size_t kBuf = 4096;
  const CallSpec& spec = e.spec();
  size_t bound = 320;
  bool fast = true;
  if (e.call != CallId::other) {
    for (int i = 0; i < spec.nargs && fast; ++i) {
      ArgKind k = spec.args[i].kind;
      if (!IsStored(k)) continue;
      bound += spec.args[i].name.size() + 4;
      if (IsString(k) && !e.args[i].null) {
        bound += e.args[i].s.size() + 2;
        fast = bound <= kBuf && Plain(e.args[i].s);
      } else {
        bound += 20;
      }
    }
  }
  if (fast && bound <= kBuf) {
    char buf[kBuf];
    BufSink sink{buf};
    WriteEventJson(sink, e);
    out.append(buf, static_cast<size_t>(sink.p - buf));
  } else {
    StringSink sink{out};
    WriteEventJson(sink, e);
  }
}

void AppendHeaderJson(std::string& out, const Header& h) {
  out += "{\"iorr_header\":{\"version\":";
  AppendInt(out, h.core.version);
  out += ",\"time_unit_ns\":";
  AppendInt(out, h.core.time_unit_ns);
  out += ",\"start_mono_ns\":";
  AppendInt(out, h.core.start_mono_ns);
  out += ",\"start_wall_ns\":";
  AppendInt(out, h.core.start_wall_ns);
  out += ",\"fields\":[";
  for (size_t i = 0; i < h.fields.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('[');
    AppendJsonStr(out, h.fields[i].first);
    out.push_back(',');
    AppendJsonStr(out, h.fields[i].second);
    out.push_back(']');
  }
  out += "]}}";
}

void AppendNoteJson(std::string& out, std::string_view note) {
  out += "{\"iorr_note\":";
  AppendJsonStr(out, note);
  out.push_back('}');
}

// ---- json::Parser ----

namespace json {

bool Parser::Fail(size_t column, std::string_view what) {
  error_ = "column " + std::to_string(column) + ": ";
  error_.append(what);
  return false;
}

void Parser::SkipBlanks() {
  while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
}

uint32_t Parser::NewValue() {
  values_.emplace_back();
  return static_cast<uint32_t>(values_.size() - 1);
}

bool Parser::Parse(std::string_view text) {
  values_.clear();
  arena_.clear();
  error_.clear();
  if (text.size() > kMaxLineBytes) return Fail(1, "line longer than 16 MiB");
  // Decoded strings are never longer than their JSON text, so the arena never reallocates
  // and the string_views handed out stay put.
  arena_.reserve(text.size());
  begin_ = p_ = text.data();
  end_ = p_ + text.size();
  SkipBlanks();
  uint32_t root;
  if (!ParseValue(0, &root)) return false;
  SkipBlanks();
  if (p_ != end_)
    return Fail(static_cast<size_t>(p_ - begin_) + 1, "unexpected text after the value");
  return true;
}

bool Parser::ParseValue(int depth, uint32_t* index) {
  size_t col = static_cast<size_t>(p_ - begin_) + 1;
  if (p_ == end_) return Fail(col, "unexpected end of line, expected a value");
  if (values_.size() >= kMaxValues) return Fail(col, "too many values");
  char c = *p_;
  auto literal = [&](std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() ||
        std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    return true;
  };
  switch (c) {
    case '{':
    case '[': {
      if (depth >= kMaxDepth) return Fail(col, "nesting deeper than 32 levels");
      uint32_t me = NewValue();
      *index = me;
      values_[me].type = c == '{' ? Type::kObject : Type::kArray;
      char close = c == '{' ? '}' : ']';
      ++p_;
      SkipBlanks();
      if (p_ < end_ && *p_ == close) {
        ++p_;
        return true;
      }
      uint32_t prev = 0, count = 0;
      for (;;) {
        std::string_view key;
        if (close == '}') {
          if (p_ == end_)
            return Fail(static_cast<size_t>(p_ - begin_) + 1,
                        "unexpected end of line, expected a key");
          if (*p_ != '"')
            return Fail(static_cast<size_t>(p_ - begin_) + 1, "expected a string key");
          if (!ParseString(&key)) return false;
          SkipBlanks();
          if (p_ == end_ || *p_ != ':')
            return Fail(static_cast<size_t>(p_ - begin_) + 1, "expected ':'");
          ++p_;
          SkipBlanks();
        }
        uint32_t child;
        if (!ParseValue(depth + 1, &child)) return false;
        values_[child].key = key;
        if (count == 0)
          values_[me].first = child;
        else
          values_[prev].next = child;
        prev = child;
        ++count;
        SkipBlanks();
        if (p_ == end_)
          return Fail(static_cast<size_t>(p_ - begin_) + 1,
                      close == '}' ? "unexpected end of line, expected ',' or '}'"
                                   : "unexpected end of line, expected ',' or ']'");
        if (*p_ == ',') {
          ++p_;
          SkipBlanks();
          continue;
        }
        if (*p_ == close) {
          ++p_;
          break;
        }
        return Fail(static_cast<size_t>(p_ - begin_) + 1,
                    close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
      }
      values_[me].size = count;
      return true;
    }
    case '"': {
      std::string_view s;
      if (!ParseString(&s)) return false;
      uint32_t me = NewValue();
      values_[me].type = Type::kString;
      values_[me].s = s;
      *index = me;
      return true;
    }
    case 't':
    case 'f':
    case 'n': {
      uint32_t me = NewValue();
      *index = me;
      if (literal("true")) {
        values_[me].type = Type::kBool;
        values_[me].b = true;
      } else if (literal("false")) {
        values_[me].type = Type::kBool;
      } else if (literal("null")) {
        values_[me].type = Type::kNull;
      } else {
        return Fail(col, "invalid literal");
      }
      return true;
    }
    default: {
      if (c != '-' && (c < '0' || c > '9')) return Fail(col, "expected a value");
      uint32_t me = NewValue();
      *index = me;
      return ParseNumber(&values_[me]);
    }
  }
}

bool Parser::ParseNumber(Value* v) {
  const char* start = p_;
  size_t col = static_cast<size_t>(p_ - begin_) + 1;
  bool neg = false;
  if (*p_ == '-') {
    neg = true;
    ++p_;
  }
  if (p_ == end_ || *p_ < '0' || *p_ > '9') return Fail(col, "bad number");
  uint64_t mag = 0;
  bool overflow = false;
  if (*p_ == '0') {
    ++p_;
    if (p_ < end_ && *p_ >= '0' && *p_ <= '9') return Fail(col, "bad number (leading zero)");
  } else {
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      unsigned d = static_cast<unsigned>(*p_ - '0');
      if (mag > (UINT64_MAX - d) / 10)
        overflow = true;
      else
        mag = mag * 10 + d;
      ++p_;
    }
  }
  bool integer = true;
  if (p_ < end_ && *p_ == '.') {
    integer = false;
    ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return Fail(col, "bad number (digits after '.')");
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    integer = false;
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return Fail(col, "bad number (exponent)");
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
  }
  const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (integer && !overflow && mag <= limit) {
    v->type = Type::kInt;
    v->i = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
  } else {
    v->type = Type::kNumber;
  }
  v->s = std::string_view(start, static_cast<size_t>(p_ - start));
  return true;
}

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads 4 hex digits at p (end checked by the caller); -1 if they are not hex.
int32_t Hex4(const char* p) {
  int32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    int d = HexDigit(p[i]);
    if (d < 0) return -1;
    v = v << 4 | d;
  }
  return v;
}

}  // namespace

bool Parser::ParseString(std::string_view* out) {
  ++p_;  // the opening quote
  size_t start = arena_.size();
  for (;;) {
    const char* run = p_;
    while (p_ < end_) {
      auto c = static_cast<unsigned char>(*p_);
      if (c == '"' || c == '\\' || c < 0x20) break;
      ++p_;
    }
    arena_.append(run, static_cast<size_t>(p_ - run));
    if (p_ == end_) return Fail(static_cast<size_t>(p_ - begin_) + 1, "unterminated string");
    size_t col = static_cast<size_t>(p_ - begin_) + 1;
    char c = *p_;
    if (c == '"') {
      ++p_;
      break;
    }
    if (c != '\\') return Fail(col, "control character in string (must be escaped)");
    if (end_ - p_ < 2) return Fail(col, "unterminated string");
    char e = p_[1];
    p_ += 2;
    switch (e) {
      case '"':
        arena_.push_back('"');
        break;
      case '\\':
        arena_.push_back('\\');
        break;
      case '/':
        arena_.push_back('/');
        break;
      case 'b':
        arena_.push_back('\b');
        break;
      case 'f':
        arena_.push_back('\f');
        break;
      case 'n':
        arena_.push_back('\n');
        break;
      case 'r':
        arena_.push_back('\r');
        break;
      case 't':
        arena_.push_back('\t');
        break;
      case 'u': {
        if (end_ - p_ < 4) return Fail(col, "bad \\u escape (needs 4 hex digits)");
        int32_t cp = Hex4(p_);
        if (cp < 0) return Fail(col, "bad \\u escape (needs 4 hex digits)");
        p_ += 4;
        if (cp >= 0xdc00 && cp <= 0xdfff) return Fail(col, "bad \\u escape (lone low surrogate)");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          int32_t lo = end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u' ? Hex4(p_ + 2) : -1;
          if (lo < 0xdc00 || lo > 0xdfff)
            return Fail(col, "bad \\u escape (high surrogate without a low one)");
          p_ += 6;
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (cp <= 0xff) {
          // ASCII, or \u0080..\u00ff: one raw byte (json.h's escape of a byte that is not UTF-8).
          arena_.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
          arena_.push_back(static_cast<char>(0xc0 | cp >> 6));
          arena_.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
          arena_.push_back(static_cast<char>(0xe0 | cp >> 12));
          arena_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
          arena_.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        } else {
          arena_.push_back(static_cast<char>(0xf0 | cp >> 18));
          arena_.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
          arena_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
          arena_.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
        }
        break;
      }
      default:
        return Fail(col, "bad escape in string");
    }
  }
  *out = std::string_view(arena_.data() + start, arena_.size() - start);
  return true;
}

}  // namespace json

// ---- JsonlParser ----

namespace {

using json::Type;
using json::Value;

constexpr std::string_view kTypeNames[] = {"null",     "a boolean", "an integer", "a number",
                                           "a string", "an array",  "an object"};

std::string_view TypeName(Type t) { return kTypeNames[static_cast<int>(t)]; }

}  // namespace

JsonlParser::Kind JsonlParser::Fail(std::string field, std::string_view what) {
  if (field.empty()) {
    error_.assign(what);
  } else {
    error_ = "\"" + field + "\": ";
    error_.append(what);
  }
  return Kind::kError;
}

JsonlParser::Kind JsonlParser::Parse(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i == line.size()) return Kind::kBlank;
  if (!json_.Parse(line)) return Fail("", json_.error());
  const Value& root = json_.value(0);
  if (root.type != Type::kObject)
    return Fail("", std::string("expected an object, not ") + std::string(TypeName(root.type)));
  if (root.size >= 1) {
    const Value& first = json_.value(root.first);
    if (first.key == "iorr_header" || first.key == "iorr_note") {
      if (root.size != 1) return Fail(std::string(first.key), "must be the only key of its line");
      if (first.key == "iorr_note") {
        if (first.type != Type::kString) return Fail("iorr_note", "not a string");
        note_ = first.s;
        return Kind::kNote;
      }
      return ParseHeader(root.first);
    }
  }
  return ParseEvent(0);
}

namespace {
// A key as an error message names it: escaped as in JSON, without the quotes (a newline in one
// split the one-line error, and terminal codes went through: found by fuzzing at stop 30).
std::string KeyForMessage(std::string_view key) {
  std::string s = JsonString(key);
  return s.size() >= 2 ? s.substr(1, s.size() - 2) : s;
}
}  // namespace

JsonlParser::Kind JsonlParser::ParseHeader(uint32_t obj) {
  const Value& h = json_.value(obj);
  if (h.type != Type::kObject) return Fail("iorr_header", "not an object");
  header_ = Header{};
  header_.core.version = kFormatVersion;
  unsigned seen = 0;
  for (uint32_t c = h.size ? h.first : 0, n = 0; n < h.size; c = json_.value(c).next, ++n) {
    const Value& v = json_.value(c);
    std::string field = "iorr_header." + KeyForMessage(v.key);
    static constexpr std::string_view kKeys[] = {"version", "time_unit_ns", "start_mono_ns",
                                                 "start_wall_ns", "fields"};
    int k = 0;
    while (k < 5 && kKeys[k] != v.key) ++k;
    if (k == 5) return Fail(field, "unknown key");
    if (seen & (1u << k)) return Fail(field, "duplicate key");
    seen |= 1u << k;
    if (k < 4 && v.type != Type::kInt) return Fail(field, "not an integer");
    switch (k) {
      case 0:
        if (v.i < 1 || v.i > kFormatVersion)
          return Fail(field, "version " + std::to_string(v.i) + " is not one this iorr reads (1.." +
                                 std::to_string(kFormatVersion) + ")");
        header_.core.version = static_cast<uint16_t>(v.i);
        break;
      case 1:
        if (v.i < 0 || !ValidTimeUnit(static_cast<uint64_t>(v.i)))
          return Fail(field, "not 1, 10, 100 or 1000");
        header_.core.time_unit_ns = static_cast<uint32_t>(v.i);
        break;
      case 2:
        header_.core.start_mono_ns = v.i;
        break;
      case 3:
        header_.core.start_wall_ns = v.i;
        break;
      default: {
        if (v.type != Type::kArray) return Fail(field, "not an array");
        uint32_t idx = 0;
        for (uint32_t f = v.size ? v.first : 0, m = 0; m < v.size;
             f = json_.value(f).next, ++m, ++idx) {
          const Value& pair = json_.value(f);
          const Value* kv =
              pair.type == Type::kArray && pair.size == 2 ? &json_.value(pair.first) : nullptr;
          const Value* vv = kv ? &json_.value(kv->next) : nullptr;
          if (!kv || kv->type != Type::kString || vv->type != Type::kString)
            return Fail(field + "[" + std::to_string(idx) + "]",
                        "not a [\"key\", \"value\"] pair of strings");
          header_.fields.emplace_back(std::string(kv->s), std::string(vv->s));
        }
      }
    }
  }
  return Kind::kHeader;
}

JsonlParser::Kind JsonlParser::ParseEvent(uint32_t root) {
  const Value& obj = json_.value(root);
  event_ = Event{};
  static constexpr std::string_view kKeys[] = {"pid",    "tid", "call",  "start_ns",
                                               "end_ns", "ret", "errno", "args"};
  constexpr int kNumKeys = 8;
  uint32_t at[kNumKeys] = {};
  bool have[kNumKeys] = {};
  for (uint32_t c = obj.size ? obj.first : 0, n = 0; n < obj.size; c = json_.value(c).next, ++n) {
    const Value& v = json_.value(c);
    int k = 0;
    while (k < kNumKeys && kKeys[k] != v.key) ++k;
    if (k == kNumKeys) return Fail(KeyForMessage(v.key), "unknown key");
    if (have[k]) return Fail(KeyForMessage(v.key), "duplicate key");
    have[k] = true;
    at[k] = c;
  }
  enum { kPid, kTid, kCall, kStart, kEnd, kRet, kErrno, kArgs };

  // call
  if (!have[kCall]) return Fail("call", "missing");
  const Value& call = json_.value(at[kCall]);
  if (call.type != Type::kString) return Fail("call", "not a string");
  const CallSpec* spec = SpecByName(call.s);
  bool other_by_name = false;
  int64_t other_nr = 0;
  if (spec == nullptr) {
    std::optional<int64_t> nr;
    if (call.s.size() > 8 && call.s.substr(0, 8) == "syscall_") {
      nr = ParseInteger(call.s.substr(8));
    } else {
      int n = SyscallNumber(call.s);
      if (n >= 0) nr = n;
    }
    if (!nr) return Fail("call", "unknown call " + JsonString(call.s));
    spec = &Spec(CallId::other);
    other_by_name = true;
    other_nr = *nr;
  }
  event_.call = static_cast<CallId>(spec->tag);

  // pid, tid
  auto get_u32 = [&](int k, uint32_t* out) {
    const Value& v = json_.value(at[k]);
    if (v.type != Type::kInt || v.i < 0 || v.i > UINT32_MAX) return false;
    *out = static_cast<uint32_t>(v.i);
    return true;
  };
  if (!have[kPid]) return Fail("pid", "missing");
  if (!get_u32(kPid, &event_.pid)) return Fail("pid", "not an integer 0..4294967295");
  event_.tid = event_.pid;
  if (have[kTid] && !get_u32(kTid, &event_.tid)) return Fail("tid", "not an integer 0..4294967295");

  // times
  auto int_or_fail = [&](int k, int64_t* out) {
    const Value& v = json_.value(at[k]);
    if (v.type != Type::kInt) return false;
    *out = v.i;
    return true;
  };
  if (!have[kStart]) return Fail("start_ns", "missing");
  if (!int_or_fail(kStart, &event_.start_ns)) return Fail("start_ns", "not a 64-bit integer");
  event_.end_ns = event_.start_ns;
  if (have[kEnd] && !int_or_fail(kEnd, &event_.end_ns))
    return Fail("end_ns", "not a 64-bit integer");

  // errno and ret
  int err = 0;
  if (have[kErrno]) {
    const Value& v = json_.value(at[kErrno]);
    if (v.type == Type::kString) {
      err = ErrnoFromName(v.s);
      if (err == 0) return Fail("errno", "unknown errno name " + JsonString(v.s));
    } else if (v.type == Type::kInt) {
      if (v.i < 1 || v.i > 4095) return Fail("errno", "not 1..4095");
      err = static_cast<int>(v.i);
    } else if (v.type != Type::kNull) {
      return Fail("errno", "not an errno name, number or null");
    }
  }
  int64_t ret = 0;
  if (have[kRet]) {
    const Value& v = json_.value(at[kRet]);
    if (v.type == Type::kInt) {
      ret = v.i;
    } else if (std::optional<int64_t> r; v.type == Type::kString && (r = ParseInteger(v.s))) {
      ret = *r;
    } else {
      return Fail("ret", "not a 64-bit integer");
    }
  } else if (err == 0) {
    return Fail("ret", "missing");
  }
  if (err != 0) {
    if (have[kRet] && ret != -1) return Fail("ret", "must be -1 when \"errno\" is given");
    event_.ret = -static_cast<int64_t>(err);
  } else {
    if (ret >= -4095 && ret <= -1)
      return Fail("ret",
                  std::to_string(ret) + " reads as a failure: give \"ret\":-1 and \"errno\"");
    event_.ret = ret;
  }

  // args
  uint32_t args_obj = 0;
  uint32_t nargs = 0;
  if (have[kArgs]) {
    const Value& v = json_.value(at[kArgs]);
    if (v.type != Type::kObject) return Fail("args", "not an object");
    args_obj = at[kArgs];
    nargs = v.size;
  }
  if (other_by_name) {
    if (nargs != 0) {
      return Fail(
          "args." + std::string(json_.value(json_.value(args_obj).first).key),
          "the arguments of " + std::string(call.s) + " are not stored (not in the call table)");
    }
    event_.args[0].i = other_nr;
    return Kind::kEvent;
  }
  unsigned given = 0;
  for (uint32_t c = nargs ? json_.value(args_obj).first : 0, n = 0; n < nargs;
       c = json_.value(c).next, ++n) {
    const Value& v = json_.value(c);
    int i = 0;
    while (i < spec->nargs && (spec->args[i].name != v.key || !IsStored(spec->args[i].kind))) ++i;
    std::string field = "args." + std::string(v.key);
    if (i == spec->nargs)
      return Fail(field, std::string(spec->name) + " has no such (stored) argument");
    if (given & (1u << i)) return Fail(field, "duplicate key");
    given |= 1u << i;
    ArgKind k = spec->args[i].kind;
    Arg& a = event_.args[i];
    if (IsString(k)) {
      if (v.type == Type::kString)
        a.s = v.s;
      else if (v.type == Type::kNull)
        a.null = true;
      else
        return Fail(field, "not a string or null");
    } else if (v.type == Type::kInt) {
      a.i = v.i;
    } else if (std::optional<int64_t> r; v.type == Type::kString && (r = ParseArg(k, v.s))) {
      a.i = *r;
    } else {
      return Fail(field, "not a number or " + std::string(KindWords(k)));
    }
  }
  for (int i = 0; i < spec->nargs; ++i) {
    if (!IsStored(spec->args[i].kind) || (given & (1u << i))) continue;
    // readlink's target and setxattr's value, stored since format version 3: a dump of an
    // older trace has none.
    if (StoredSinceVersion3(spec->args[i].kind)) {
      event_.args[i].null = true;
      continue;
    }
    if (StoredSinceVersion4(spec->args[i].kind)) {  // FICLONE's size, since version 4
      event_.args[i].i = -1;
      continue;
    }
    return Fail("args." + std::string(spec->args[i].name), "missing");
  }
  return Kind::kEvent;
}

}  // namespace iorr::trace
