// The JSON lines form of traces (traces/jsonl.h): event -> JSON -> event round trips for every
// call of the table, the JSON parser's answers to malformed and hostile lines, and the strace
// spellings hand-written lines may use.
#include "traces/jsonl.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "traces/json.h"
#include "traces/names.h"

namespace iorr::trace {
namespace {

// An event with its own copies of its strings.
struct Owned {
  Event e;
  std::string s[kMaxArgs];

  Event View() const {
    Event v = e;
    for (int i = 0; i < kMaxArgs; ++i)
      if (!v.args[i].null) v.args[i].s = s[i];
    return v;
  }
};

// Compares what the trace stores of two events; empty when equal.
std::string Diff(const Event& a, const Event& b) {
  if (a.call != b.call) return "call";
  if (a.pid != b.pid || a.tid != b.tid) return "pid/tid";
  if (a.start_ns != b.start_ns || a.end_ns != b.end_ns) return "times";
  if (a.ret != b.ret) return "ret " + std::to_string(a.ret) + " vs " + std::to_string(b.ret);
  const CallSpec& c = a.spec();
  for (int i = 0; i < c.nargs; ++i) {
    ArgKind k = c.args[i].kind;
    if (!IsStored(k)) continue;
    if (IsString(k)) {
      if (a.args[i].null != b.args[i].null) return "null of arg " + std::to_string(i);
      if (!a.args[i].null && a.args[i].s != b.args[i].s) return "string arg " + std::to_string(i);
    } else if (a.args[i].i != b.args[i].i) {
      return "int arg " + std::to_string(i);
    }
  }
  return "";
}

std::string RandomString(std::mt19937_64& rng) {
  static const std::vector<std::string> kPieces = {"a",
                                                   "dir/",
                                                   "file.c",
                                                   "\"",
                                                   "\\",
                                                   "\n",
                                                   "\t",
                                                   "\r",
                                                   std::string(1, '\0'),
                                                   "\x01",
                                                   "\x1f",
                                                   "\x7f",
                                                   "\xc3\xa9",
                                                   "\xe2\x82\xac",
                                                   "\xf0\x9f\x98\x80",
                                                   "\xc3",
                                                   "\xe2\x82",
                                                   "\xff",
                                                   "\x80",
                                                   "\xe0\x80\x80",
                                                   "\xed\xa0\x80",
                                                   "\xff\x80\x80",
                                                   "\xf4\x90\x80\x80",
                                                   "/",
                                                   " ",
                                                   "%",
                                                   "\\u00e9"};
  std::string s;
  switch (rng() % 8) {
    case 0:
      return s;  // empty
    case 1:      // every byte once, in a random rotation
      for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>((i + rng()) & 0xff));
      return s;
    default: {
      int n = static_cast<int>(rng() % 12);
      for (int i = 0; i < n; ++i) s += kPieces[rng() % kPieces.size()];
      if (rng() % 4 == 0) s.push_back(static_cast<char>(0x80 + rng() % 0x80));
      return s;
    }
  }
}

int64_t RandomInt(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return 0;
    case 1:
      return -100;
    case 2:
      return static_cast<int64_t>(rng() % 1000);
    case 3:
      return static_cast<int64_t>(rng());  // any 64-bit value
    case 4:
      return INT64_MIN + static_cast<int64_t>(rng() % 3);
    default:
      return -static_cast<int64_t>(rng() % 5000);
  }
}

Owned RandomEvent(const CallSpec& spec, std::mt19937_64& rng) {
  Owned o;
  Event& e = o.e;
  e.call = static_cast<CallId>(spec.tag);
  e.pid = static_cast<uint32_t>(rng());
  e.tid = rng() % 2 ? e.pid : static_cast<uint32_t>(rng());
  e.start_ns =
      rng() % 8 == 0 ? -static_cast<int64_t>(rng() % 100000) : static_cast<int64_t>(rng() >> 2);
  e.end_ns = e.start_ns + static_cast<int64_t>(rng() % 100000);
  switch (rng() % 5) {
    case 0:
      e.ret = -static_cast<int64_t>(1 + rng() % 4095);
      break;  // failure, named or not
    case 1:
      e.ret = -static_cast<int64_t>(1 + rng() % 133);
      break;
    case 2:
      e.ret = static_cast<int64_t>(rng() >> 1);
      break;
    case 3:
      e.ret = -4096 - static_cast<int64_t>(rng() % 100000);
      break;  // not an errno
    default:
      e.ret = 0;
      break;
  }
  for (int i = 0; i < spec.nargs; ++i) {
    ArgKind k = spec.args[i].kind;
    if (!IsStored(k)) {
      e.args[i].i = 12345;  // not stored: must not matter
      continue;
    }
    if (IsString(k)) {
      if (rng() % 5 == 0)
        e.args[i].null = true;
      else
        o.s[i] = RandomString(rng);
    } else {
      e.args[i].i = RandomInt(rng);
    }
  }
  if (e.call == CallId::other) {
    static const int64_t kNrs[] = {SYS_getpid, SYS_openat, SYS_read,  1000,      -5,
                                   334,        100000,     INT64_MIN, INT64_MAX, 0x1f4};
    e.args[0].i = kNrs[rng() % (sizeof kNrs / sizeof kNrs[0])];
  }
  return o;
}

TEST(Jsonl, EveryCallRoundTrips) {
  std::mt19937_64 rng(42);
  JsonlParser parser;
  std::string line, again;
  for (const CallSpec& spec : kCalls) {
    for (int round = 0; round < 300; ++round) {
      Owned o = RandomEvent(spec, rng);
      Event want = o.View();
      line.clear();
      AppendEventJson(line, want);
      ASSERT_EQ(parser.Parse(line), JsonlParser::Kind::kEvent) << line << "\n" << parser.error();
      const Event& got = parser.event();
      ASSERT_EQ(Diff(want, got), "") << spec.name << ": " << line;
      again.clear();
      AppendEventJson(again, got);
      ASSERT_EQ(line, again);
    }
  }
}

TEST(Jsonl, EventJsonShape) {
  Event e;
  e.call = CallId::openat;
  e.pid = 7;
  e.tid = 8;
  e.start_ns = 1000;
  e.end_ns = 3000;
  e.ret = -2;
  e.args[0].i = -100;
  e.args[1].s = "a\"b\xff";
  e.args[2].i = 0x41;
  e.args[3].i = 0644;
  std::string s;
  AppendEventJson(s, e);
  EXPECT_EQ(s,
            "{\"pid\":7,\"tid\":8,\"call\":\"openat\",\"start_ns\":1000,\"end_ns\":3000,\"ret\":-1,"
            "\"errno\":\"ENOENT\",\"args\":{\"dirfd\":-100,\"path\":\"a\\\"b\\u00ff\",\"flags\":65,"
            "\"mode\":420}}");
  // The same event with a path that needs no escapes (AppendEventJson's buffered path).
  e.args[1].s = "a/b";
  e.ret = 3;
  s.clear();
  AppendEventJson(s, e);
  EXPECT_EQ(s,
            "{\"pid\":7,\"tid\":8,\"call\":\"openat\",\"start_ns\":1000,\"end_ns\":3000,\"ret\":3,"
            "\"errno\":null,\"args\":{\"dirfd\":-100,\"path\":\"a/b\",\"flags\":65,\"mode\":420}}");
  // kBuf arguments are left out; a null path is null; an errno without a name is a number.
  Event f;
  f.call = CallId::stat;
  f.pid = f.tid = 1;
  f.args[0].null = true;
  f.ret = -4000;
  s.clear();
  AppendEventJson(s, f);
  EXPECT_EQ(s,
            "{\"pid\":1,\"tid\":1,\"call\":\"stat\",\"start_ns\":0,\"end_ns\":0,\"ret\":-1,"
            "\"errno\":4000,\"args\":{\"path\":null}}");
  // Calls outside the table are named by their number's syscall name, args {}.
  Event g;
  g.call = CallId::other;
  g.args[0].i = SYS_getpid;
  g.ret = 5;
  s.clear();
  AppendEventJson(s, g);
  EXPECT_NE(s.find("\"call\":\"getpid\""), std::string::npos) << s;
  EXPECT_NE(s.find("\"args\":{}}"), std::string::npos) << s;
  g.args[0].i = SYS_openat;  // a table call's number under `other` keeps its number
  s.clear();
  AppendEventJson(s, g);
  EXPECT_NE(s.find("\"call\":\"syscall_257\""), std::string::npos) << s;
}

TEST(Jsonl, HeaderAndNotesRoundTrip) {
  Header h;
  h.core.version = 1;
  h.core.time_unit_ns = 100;
  h.core.start_mono_ns = 123456789;
  h.core.start_wall_ns = -5;
  h.fields = {{"source", "jsonl"}, {"cmdline", "tar xf 'a b'\n\xff"}, {"", ""}, {"source", "x"}};
  std::string s;
  AppendHeaderJson(s, h);
  JsonlParser p;
  ASSERT_EQ(p.Parse(s), JsonlParser::Kind::kHeader) << p.error();
  EXPECT_EQ(p.header().core.time_unit_ns, 100u);
  EXPECT_EQ(p.header().core.start_mono_ns, 123456789);
  EXPECT_EQ(p.header().core.start_wall_ns, -5);
  EXPECT_EQ(p.header().fields, h.fields);
  std::string note = "escaped: \xff\x01 \"q\"\n";
  s.clear();
  AppendNoteJson(s, note);
  ASSERT_EQ(p.Parse(s), JsonlParser::Kind::kNote) << p.error();
  EXPECT_EQ(p.note(), note);
  EXPECT_EQ(p.Parse(""), JsonlParser::Kind::kBlank);
  EXPECT_EQ(p.Parse("  \t\r\n"), JsonlParser::Kind::kBlank);
}

// ---- the JSON parser ----

TEST(JsonParser, StringsAndEscapes) {
  json::Parser p;
  auto str = [&](std::string_view text) -> std::string {
    if (!p.Parse(text)) return "ERROR " + p.error();
    if (p.value(0).type != json::Type::kString) return "NOT A STRING";
    return std::string(p.value(0).s);
  };
  EXPECT_EQ(str(R"("a\"b\\c\/d\b\f\n\r\t")"), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(str(R"("\u0041\u0000")"), std::string("A\0", 2));
  EXPECT_EQ(str(R"("\u00e9\u0080\u00FF")"), "\xe9\x80\xff");  // bytes, as traces/json.h means
  EXPECT_EQ(str(R"("\u0100\u20ac")"), "\xc4\x80\xe2\x82\xac");
  EXPECT_EQ(str(R"("\ud83d\ude00")"), "\xf0\x9f\x98\x80");
  EXPECT_EQ(str("\"raw \xc3\xa9 \xff\""), "raw \xc3\xa9 \xff");  // raw bytes pass through
  EXPECT_EQ(str(R"("")"), "");
  // Every byte survives AppendJsonString and back.
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(str(JsonString(all)), all);
}

TEST(JsonParser, Numbers) {
  json::Parser p;
  ASSERT_TRUE(
      p.Parse("[0,-0,9223372036854775807,-9223372036854775808,9223372036854775808,"
              "1.5,1e3,-2E-2,99999999999999999999999]"));
  const json::Value& a = p.value(0);
  ASSERT_EQ(a.size, 9u);
  std::vector<json::Value> v;
  for (uint32_t c = a.first, n = 0; n < a.size; c = p.value(c).next, ++n) v.push_back(p.value(c));
  EXPECT_EQ(v[0].type, json::Type::kInt);
  EXPECT_EQ(v[1].i, 0);
  EXPECT_EQ(v[2].i, INT64_MAX);
  EXPECT_EQ(v[3].i, INT64_MIN);
  EXPECT_EQ(v[4].type, json::Type::kNumber);  // overflow: not an integer
  EXPECT_EQ(v[5].type, json::Type::kNumber);
  EXPECT_EQ(v[5].s, "1.5");
  EXPECT_EQ(v[6].type, json::Type::kNumber);
  EXPECT_EQ(v[7].type, json::Type::kNumber);
  EXPECT_EQ(v[8].type, json::Type::kNumber);
}

TEST(JsonParser, RejectsMalformed) {
  json::Parser p;
  struct Case {
    std::string text;
    std::string error;
  };
  const Case kCases[] = {
      {"", "column 1: unexpected end of line, expected a value"},
      {"{", "column 2: unexpected end of line, expected a key"},
      {"{\"a\"", "column 5: expected ':'"},
      {"{\"a\":", "column 6: unexpected end of line, expected a value"},
      {"{\"a\":1", "column 7: unexpected end of line, expected ',' or '}'"},
      {"{\"a\":1,}", "column 8: expected a string key"},
      {"[1,]", "column 4: expected a value"},
      {"[1 2]", "column 4: expected ',' or ']'"},
      {"{\"a\" 1}", "column 6: expected ':'"},
      {"{a:1}", "column 2: expected a string key"},
      {"\"abc", "column 5: unterminated string"},
      {"\"abc\\", "column 5: unterminated string"},
      {"\"\\x41\"", "column 2: bad escape in string"},
      {"\"\\u12\"", "column 2: bad \\u escape (needs 4 hex digits)"},
      {"\"\\u12g4\"", "column 2: bad \\u escape (needs 4 hex digits)"},
      {"\"\\ud800\"", "column 2: bad \\u escape (high surrogate without a low one)"},
      {"\"\\ud800\\u0041\"", "column 2: bad \\u escape (high surrogate without a low one)"},
      {"\"\\udc00\"", "column 2: bad \\u escape (lone low surrogate)"},
      {"\"a\tb\"", "column 3: control character in string (must be escaped)"},
      {"\"a\nb\"", "column 3: control character in string (must be escaped)"},
      {"tru", "column 1: invalid literal"},
      {"nul", "column 1: invalid literal"},
      {"True", "column 1: expected a value"},
      {"01", "column 1: bad number (leading zero)"},
      {"-", "column 1: bad number"},
      {"1.", "column 1: bad number (digits after '.')"},
      {"1e", "column 1: bad number (exponent)"},
      {"+1", "column 1: expected a value"},
      {"1 2", "column 3: unexpected text after the value"},
      {"{} x", "column 4: unexpected text after the value"},
  };
  for (const auto& c : kCases) {
    EXPECT_FALSE(p.Parse(c.text)) << c.text;
    EXPECT_EQ(p.error(), c.error) << c.text;
  }
}

TEST(JsonParser, DepthAndSizeLimits) {
  json::Parser p;
  std::string ok = std::string(json::kMaxDepth, '[') + std::string(json::kMaxDepth, ']');
  EXPECT_TRUE(p.Parse(ok)) << p.error();
  std::string deep = std::string(json::kMaxDepth + 1, '[') + std::string(json::kMaxDepth + 1, ']');
  EXPECT_FALSE(p.Parse(deep));
  EXPECT_EQ(p.error(), "column 33: nesting deeper than 32 levels");
  std::string very_deep(1 << 20, '[');  // must not recurse a million times
  EXPECT_FALSE(p.Parse(very_deep));
  std::string objects;
  for (int i = 0; i < 100; ++i) objects += "{\"a\":";
  EXPECT_FALSE(p.Parse(objects));
  EXPECT_NE(p.error().find("nesting deeper"), std::string::npos);
  std::string many = "[";
  for (uint32_t i = 0; i < json::kMaxValues + 10; ++i) many += "0,";
  many += "0]";
  EXPECT_FALSE(p.Parse(many));
  EXPECT_NE(p.error().find("too many values"), std::string::npos);
}

// ---- event lines: errors name the field ----

std::string ErrorOf(std::string_view line) {
  JsonlParser p;
  if (p.Parse(line) != JsonlParser::Kind::kError) return "(no error)";
  return p.error();
}

TEST(Jsonl, EventErrorsNameTheField) {
  const std::string base = R"("pid":1,"tid":2,"start_ns":5,"ret":0)";
  auto ev = [&](std::string_view rest) { return "{" + base + "," + std::string(rest) + "}"; };
  EXPECT_EQ(ErrorOf("[1]"), "expected an object, not an array");
  EXPECT_EQ(ErrorOf("{\"pid\":1}"), "\"call\": missing");
  EXPECT_EQ(ErrorOf(ev(R"("call":"frobnicate")")), "\"call\": unknown call \"frobnicate\"");
  EXPECT_EQ(ErrorOf(ev(R"("call":7)")), "\"call\": not a string");
  EXPECT_EQ(ErrorOf(ev(R"("call":"close","args":{"fd":3,"flags":1})")),
            "\"args.flags\": close has no such (stored) argument");
  EXPECT_EQ(ErrorOf(ev(R"("call":"read","args":{"fd":3,"buf":1,"count":1})")),
            "\"args.buf\": read has no such (stored) argument");
  EXPECT_EQ(ErrorOf(ev(R"("call":"read","args":{"fd":3})")), "\"args.count\": missing");
  EXPECT_EQ(ErrorOf(ev(R"("call":"close")")), "\"args.fd\": missing");
  EXPECT_EQ(ErrorOf(ev(R"("call":"close","args":{"fd":3,"fd":4})")), "\"args.fd\": duplicate key");
  EXPECT_EQ(ErrorOf(ev(R"("call":"close","args":{"fd":"three"})")),
            "\"args.fd\": not a number or an fd");
  EXPECT_EQ(ErrorOf(ev(R"("call":"close","args":{"fd":1.5})")),
            "\"args.fd\": not a number or an fd");
  EXPECT_EQ(ErrorOf(ev(R"("call":"close","args":{"fd":null})")),
            "\"args.fd\": not a number or an fd");
  EXPECT_EQ(
      ErrorOf(ev(
          R"("call":"openat","args":{"dirfd":"AT_FDCWD","path":"x","flags":"O_BOGUS","mode":0})")),
      "\"args.flags\": not a number or O_* flags");
  EXPECT_EQ(ErrorOf(ev(R"("call":"unlink","args":{"path":5})")),
            "\"args.path\": not a string or null");
  EXPECT_EQ(ErrorOf(ev(R"("call":"close","args":[3])")), "\"args\": not an object");
  EXPECT_EQ(ErrorOf(ev(R"("call":"getpid","args":{"x":1})")),
            "\"args.x\": the arguments of getpid are not stored (not in the call table)");
  EXPECT_EQ(ErrorOf(ev(R"("call":"sync","colour":"red")")), "\"colour\": unknown key");
  // A key with a newline (or a terminal code) is named escaped: the error stays on one line.
  EXPECT_EQ(ErrorOf(ev(R"("call":"sync","col\nour\u001b[2J":"red")")),
            "\"col\\nour\\u001b[2J\": unknown key");
  EXPECT_EQ(ErrorOf(ev(R"("call":"sync","pid":3)")), "\"pid\": duplicate key");
  EXPECT_EQ(ErrorOf(R"({"pid":"1","start_ns":5,"ret":0,"call":"sync"})"),
            "\"pid\": not an integer 0..4294967295");
  EXPECT_EQ(ErrorOf(R"({"pid":-1,"start_ns":5,"ret":0,"call":"sync"})"),
            "\"pid\": not an integer 0..4294967295");
  EXPECT_EQ(ErrorOf(R"({"pid":4294967296,"start_ns":5,"ret":0,"call":"sync"})"),
            "\"pid\": not an integer 0..4294967295");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"tid":true,"start_ns":5,"ret":0,"call":"sync"})"),
            "\"tid\": not an integer 0..4294967295");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"ret":0,"call":"sync"})"), "\"start_ns\": missing");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1.0,"ret":0,"call":"sync"})"),
            "\"start_ns\": not a 64-bit integer");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":99999999999999999999,"ret":0,"call":"sync"})"),
            "\"start_ns\": not a 64-bit integer");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"end_ns":"2","ret":0,"call":"sync"})"),
            "\"end_ns\": not a 64-bit integer");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"call":"sync"})"), "\"ret\": missing");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"ret":"x","call":"sync"})"),
            "\"ret\": not a 64-bit integer");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"ret":-2,"call":"sync"})"),
            "\"ret\": -2 reads as a failure: give \"ret\":-1 and \"errno\"");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"ret":0,"errno":"ENOENT","call":"sync"})"),
            "\"ret\": must be -1 when \"errno\" is given");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"ret":-1,"errno":"EBOGUS","call":"sync"})"),
            "\"errno\": unknown errno name \"EBOGUS\"");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"ret":-1,"errno":0,"call":"sync"})"),
            "\"errno\": not 1..4095");
  EXPECT_EQ(ErrorOf(R"({"pid":1,"start_ns":1,"ret":-1,"errno":[],"call":"sync"})"),
            "\"errno\": not an errno name, number or null");
  // Header and note lines.
  EXPECT_EQ(ErrorOf(R"({"iorr_note":1})"), "\"iorr_note\": not a string");
  EXPECT_EQ(ErrorOf(R"({"iorr_note":"x","pid":1})"),
            "\"iorr_note\": must be the only key of its line");
  EXPECT_EQ(ErrorOf(R"({"iorr_header":{"version":6}})"),
            "\"iorr_header.version\": version 6 is not one this iorr reads (1..5)");
  EXPECT_EQ(ErrorOf(R"({"iorr_header":{"time_unit_ns":7}})"),
            "\"iorr_header.time_unit_ns\": not 1, 10, 100 or 1000");
  EXPECT_EQ(ErrorOf(R"({"iorr_header":{"fields":[["a","b"],["c"]]}})"),
            "\"iorr_header.fields[1]\": not a [\"key\", \"value\"] pair of strings");
  EXPECT_EQ(ErrorOf(R"({"iorr_header":{"hostname":"x"}})"),
            "\"iorr_header.hostname\": unknown key");
  EXPECT_EQ(ErrorOf(R"({"iorr_header":[]})"), "\"iorr_header\": not an object");
  // Syntax errors carry the column.
  EXPECT_EQ(ErrorOf(R"({"pid":1,"call":"sync")"),
            "column 23: unexpected end of line, expected ',' or '}'");
}

TEST(Jsonl, TruncatedAndMutatedLinesNeverCrash) {
  std::mt19937_64 rng(7);
  JsonlParser p;
  std::string line;
  for (const CallSpec& spec : kCalls) {
    line.clear();
    AppendEventJson(line, RandomEvent(spec, rng).View());
    // Every proper prefix is an error (except the empty one).
    for (size_t n = 1; n < line.size(); ++n)
      ASSERT_EQ(p.Parse(std::string_view(line).substr(0, n)), JsonlParser::Kind::kError)
          << line.substr(0, n);
    // Random byte changes: any answer but a crash; errors always say something.
    for (int round = 0; round < 200; ++round) {
      std::string m = line;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < edits; ++k) {
        size_t at = rng() % m.size();
        switch (rng() % 3) {
          case 0:
            m[at] = static_cast<char>(rng());
            break;
          case 1:
            m.erase(at, 1);
            break;
          default:
            m.insert(at, 1, "{}[]\",:\\u0"[rng() % 11]);
            break;
        }
      }
      if (p.Parse(m) == JsonlParser::Kind::kError) {
        ASSERT_FALSE(p.error().empty());
      }
    }
  }
}

// ---- hand-written lines ----

TEST(Jsonl, SymbolicArgumentsAccepted) {
  JsonlParser p;
  ASSERT_EQ(
      p.Parse(R"({"pid":1,"call":"openat","start_ns":10,"ret":3,"args":)"
              R"({"dirfd":"AT_FDCWD","path":"a/b","flags":"O_WRONLY|O_CREAT","mode":"0644"}})"),
      JsonlParser::Kind::kEvent)
      << p.error();
  const Event& e = p.event();
  EXPECT_EQ(e.call, CallId::openat);
  EXPECT_EQ(e.tid, 1u);     // tid defaults to pid
  EXPECT_EQ(e.end_ns, 10);  // end_ns defaults to start_ns
  EXPECT_EQ(e.args[0].i, AT_FDCWD);
  EXPECT_EQ(e.args[1].s, "a/b");
  EXPECT_EQ(e.args[2].i, O_WRONLY | O_CREAT);
  EXPECT_EQ(e.args[3].i, 0644);

  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"lseek","start_ns":0,"ret":0,"args":)"
                    R"({"fd":3,"offset":"0x10","whence":"SEEK_END"}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().args[1].i, 16);
  EXPECT_EQ(p.event().args[2].i, SEEK_END);

  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"pipe2","start_ns":0,"ret":0,"args":)"
                    R"({"fds":"[3, 4]","flags":"O_CLOEXEC"}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().args[0].i, 3 | int64_t{4} << 32);
  EXPECT_EQ(p.event().args[1].i, O_CLOEXEC);

  // readlink's target: given, or left out as a dump of a format-2 trace leaves it (NULL).
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"readlink","start_ns":0,"ret":6,"args":)"
                    R"({"path":"/usr/bin/gcc","buf":"gcc-12","bufsiz":64}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().args[1].s, "gcc-12");
  EXPECT_FALSE(p.event().args[1].null);
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"readlink","start_ns":0,"ret":6,"args":)"
                    R"({"path":"/usr/bin/gcc","bufsiz":64}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_TRUE(p.event().args[1].null);

  // FICLONE's size: given, or left out as a dump of a format-3 trace leaves it (-1, unknown).
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"ioctl","start_ns":0,"ret":0,"args":)"
                    R"({"fd":4,"request":"FICLONE","arg":3,"size":65536}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().args[3].i, 65536);
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"ioctl","start_ns":0,"ret":0,"args":)"
                    R"({"fd":4,"request":"FICLONE","arg":3}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().args[3].i, -1);

  // setxattr's value likewise (any bytes: JSON escapes).
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"fsetxattr","start_ns":0,"ret":0,"args":)"
                    R"({"fd":4,"name":"user.a","value":"\u0002\u0000x","size":3,"flags":0}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().args[2].s, std::string("\x02\0x", 3));
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"fsetxattr","start_ns":0,"ret":0,"args":)"
                    R"({"fd":4,"name":"user.a","size":3,"flags":0}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_TRUE(p.event().args[2].null);

  // errno by name or number; ret may then be left out.
  ASSERT_EQ(
      p.Parse(R"({"pid":1,"call":"unlink","start_ns":0,"errno":"ENOENT","args":{"path":null}})"),
      JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().ret, -ENOENT);
  EXPECT_TRUE(p.event().args[0].null);
  ASSERT_EQ(
      p.Parse(R"({"pid":1,"call":"unlink","start_ns":0,"ret":-1,"errno":13,"args":{"path":""}})"),
      JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().ret, -EACCES);
  EXPECT_FALSE(p.event().args[0].null);
  EXPECT_EQ(p.event().args[0].s, "");

  // Calls outside the table, by name or number; `other` with its argument.
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"getpid","start_ns":0,"ret":1})"),
            JsonlParser::Kind::kEvent);
  EXPECT_EQ(p.event().call, CallId::other);
  EXPECT_EQ(p.event().args[0].i, SYS_getpid);
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"syscall_1234","start_ns":0,"ret":0,"args":{}})"),
            JsonlParser::Kind::kEvent);
  EXPECT_EQ(p.event().args[0].i, 1234);
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"other","start_ns":0,"ret":0,"args":{"nr":"getppid"}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().args[0].i, SYS_getppid);

  // ret as a literal (mmap's address in hex).
  ASSERT_EQ(
      p.Parse(R"({"pid":1,"call":"mmap","start_ns":0,"ret":"0x7f0000000000","args":)"
              R"({"addr":"NULL","length":4096,"prot":"PROT_READ|PROT_WRITE","flags":"MAP_SHARED",)"
              R"("fd":3,"offset":0}})"),
      JsonlParser::Kind::kEvent)
      << p.error();
  EXPECT_EQ(p.event().ret, 0x7f0000000000);
  EXPECT_EQ(p.event().args[2].i, 3);
}

TEST(Jsonl, StringsStayValidUntilTheNextLine) {
  JsonlParser p;
  ASSERT_EQ(p.Parse(R"({"pid":1,"call":"rename","start_ns":0,"ret":0,"args":)"
                    R"({"oldpath":"a\u00ffb","newpath":"\ud83d\ude00"}})"),
            JsonlParser::Kind::kEvent)
      << p.error();
  Event e = p.event();
  EXPECT_EQ(e.args[0].s,
            "a\xff"
            "b");
  EXPECT_EQ(e.args[1].s, "\xf0\x9f\x98\x80");
}

}  // namespace
}  // namespace iorr::trace

// Output stays valid UTF-8: only well-formed sequences pass through raw.
TEST(JsonString, EscapesEveryByteThatIsNotWellFormedUtf8) {
  EXPECT_EQ(iorr::JsonString("a\xc3\xa9"), "\"a\xc3\xa9\"");
  EXPECT_EQ(iorr::JsonString("\xe2\x82\xac"), "\"\xe2\x82\xac\"");
  EXPECT_EQ(iorr::JsonString("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
  EXPECT_EQ(iorr::JsonString("\xe0\x80\x80"), "\"\\u00e0\\u0080\\u0080\"");  // overlong
  EXPECT_EQ(iorr::JsonString("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");  // surrogate
  EXPECT_EQ(iorr::JsonString("\xf4\x90\x80\x80"), "\"\\u00f4\\u0090\\u0080\\u0080\"");  // > U+10FFFF
  EXPECT_EQ(iorr::JsonString("\xff"), "\"\\u00ff\"");
  EXPECT_EQ(iorr::JsonString("\xc3"), "\"\\u00c3\"");  // cut short
}
