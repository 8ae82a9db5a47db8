// JSON lines form of a trace (`iorr dump --json`, `iorr import jsonl`): one header line, one
// object per event, one line per note. Writers are pure functions; a JsonlParser instance
// owns its scratch storage and is not thread-safe (use one per thread).
//
// Line shapes:
//   {"iorr_header":{"version":1,"time_unit_ns":1000,"start_mono_ns":0,"start_wall_ns":0,
//                   "fields":[["key","value"],...]}}
//   {"pid":1,"tid":1,"call":"openat","start_ns":0,"end_ns":0,"ret":3,"errno":null,
//    "args":{"dirfd":-100,"path":"a","flags":65,"mode":420}}
//   {"iorr_note":"text"}
//
// Strings: traces/json.h writes bytes that are not valid UTF-8 as \u00XX. The parser therefore
// decodes \u0080..\u00ff as the single raw byte 0x80..0xff (not as the UTF-8 encoding of
// U+0080..U+00FF); every other \u escape (with surrogate pairs) becomes UTF-8. Raw UTF-8 in a
// string passes through unchanged; raw control characters are rejected as JSON requires.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "traces/event.h"
#include "traces/header.h"

namespace iorr::trace {

// Appends one event as a JSON object (no newline). Keys in this order: pid, tid, call,
// start_ns, end_ns, ret, errno, args. `call` is the table name; for CallId::other it is the
// syscall's name (SyscallName), or "syscall_N" when that is unknown or names a call of the
// table, and args is {}. `ret` is -1 for a failure (errno then names it: "ENOENT", or its
// number when it has no name) and the raw result otherwise (errno null). `args` holds every
// stored argument (kBuf ones are skipped) by its table name: integers as numbers, strings as
// JSON strings, NULL strings as null.
void AppendEventJson(std::string& out, const Event& e);

// The name an event's call is shown under (dump, JSON lines): the table name; for
// CallId::other the syscall's name, or "syscall_N" when that is unknown or names a table call
// (which would read back as that call).
void AppendCallName(std::string& out, const Event& e);

// {"iorr_header":{...}} as above (no newline); fields keep their order.
void AppendHeaderJson(std::string& out, const Header& h);

// {"iorr_note":"text"} (no newline).
void AppendNoteJson(std::string& out, std::string_view note);

// A strict JSON parser for single lines, sufficient for (and tuned to) the shapes above.
// Parses objects, arrays, strings (all escapes; see the file comment for \u00XX), integers
// (that fit int64; other numbers parse but are flagged non-integer), true, false and null.
// Limits: nesting depth kMaxDepth, kMaxValues values, input of kMaxLineBytes.
namespace json {

enum class Type : uint8_t { kNull, kBool, kInt, kNumber, kString, kArray, kObject };

struct Value {
  Type type = Type::kNull;
  bool b = false;        // kBool
  int64_t i = 0;         // kInt
  std::string_view s;    // kString: decoded bytes; kNumber: the literal as written
  std::string_view key;  // member of an object: its decoded key
  uint32_t size = 0;     // kArray, kObject: number of children
  uint32_t first = 0;    // kArray, kObject: index of the first child (when size > 0)
  uint32_t next = 0;     // index of the next sibling (0: none)
};

inline constexpr int kMaxDepth = 32;
inline constexpr uint32_t kMaxValues = 1u << 16;
inline constexpr size_t kMaxLineBytes = 16u << 20;

class Parser {
 public:
  // Parses text as exactly one JSON value (blanks around it allowed). False on an error:
  // error() then reads "column 12: expected ':'" (1-based byte column). On success the
  // root is value(0); values and their strings stay valid until the next Parse.
  bool Parse(std::string_view text);
  const Value& value(uint32_t index) const { return values_[index]; }
  const std::string& error() const { return error_; }

 private:
  bool ParseValue(int depth, uint32_t* index);
  bool ParseString(std::string_view* out);
  bool ParseNumber(Value* v);
  bool Fail(size_t column, std::string_view what);
  void SkipBlanks();
  uint32_t NewValue();

  const char* begin_ = nullptr;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  std::vector<Value> values_;
  std::string arena_;  // decoded strings; reserved to the input size so views never move
  std::string error_;
};

}  // namespace json

// Parses JSON lines of the shapes above into events, headers and notes.
class JsonlParser {
 public:
  enum class Kind { kBlank, kEvent, kHeader, kNote, kError };

  // Parses one line (a trailing '\r' or '\n' is ignored). Blank lines give kBlank.
  // kEvent: event() is valid, its strings point into this parser's storage until the next
  // call. kHeader: header() holds it. kNote: note(). kError: error() says why, naming the
  // field: `"args.flags": not a number or O_* flags`, `column 7: unterminated string`.
  Kind Parse(std::string_view line);

  const Event& event() const { return event_; }
  const Header& header() const { return header_; }
  std::string_view note() const { return note_; }
  const std::string& error() const { return error_; }

  // Event lines accept, beyond what AppendEventJson writes, for hand-written traces:
  //  - args as strace spellings in JSON strings, parsed with ParseArg: "flags":"O_WRONLY|O_CREAT",
  //    "dirfd":"AT_FDCWD", "mode":"0644"; "ret" as a C integer literal string ("0x7f00");
  //  - "errno" as a name or a number (then "ret" must be -1, or be left out);
  //  - a syscall outside the table by name or "syscall_N" (CallId::other, args {});
  //  - missing "end_ns" (= start_ns), "tid" (= pid), "args" (= {}) and "errno" (= null).
  // Every stored argument must be given; unknown keys and arguments are errors. A "ret" in
  // -4095..-1 without "errno" is an error (it would read as a failure).

 private:
  Kind Fail(std::string field, std::string_view what);
  Kind ParseEvent(uint32_t root);
  Kind ParseHeader(uint32_t obj);

  json::Parser json_;
  Event event_;
  Header header_;
  std::string_view note_;
  std::string error_;
};

}  // namespace iorr::trace
