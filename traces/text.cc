// See text.h.
#include "traces/text.h"

#include <charconv>

#include "traces/jsonl.h"
#include "traces/names.h"

namespace iorr::trace {
void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

void AppendEscaped(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size(); ++i) {
    size_t run = i;
    while (run < s.size() && static_cast<unsigned char>(s[run]) >= 0x20 &&
           static_cast<unsigned char>(s[run]) < 0x7f && s[run] != '"' && s[run] != '\\')
      ++run;
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
      if (i == s.size()) break;
    }
    char ch = s[i];
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(ch);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
}

void AppendCallText(std::string& out, const Event& e) {
  const CallSpec& spec = e.spec();
  AppendCallName(out, e);
  if (e.call == CallId::other) {
    out += "(...)";
  } else {
    out.push_back('(');
    for (int i = 0; i < spec.nargs; ++i) {
      if (i) out += ", ";
      ArgKind k = spec.args[i].kind;
      const Arg& a = e.args[i];
      if (!IsStored(k)) {
        out += "...";
      } else if (e.call == CallId::bind && i == 1) {
        // As strace prints an AF_UNIX pathname address; any other (not stored) as "{...}".
        if (a.null) {
          out += "{...}";
        } else {
          out += "{sa_family=AF_UNIX, sun_path=\"";
          AppendEscaped(out, a.s);
          out += "\"}";
        }
      } else if (IsString(k)) {
        if (a.null) {
          out += "NULL";
        } else {
          out.push_back('"');
          AppendEscaped(out, a.s);
          out.push_back('"');
        }
      } else {
        AppendArg(out, k, a.i);
      }
    }
    out.push_back(')');
  }
  out += " = ";
  if (e.failed()) {
    int err = e.err();
    out += "-1 ";
    std::string_view name = ErrnoName(err);
    std::string_view message = ErrnoMessage(err);
    if (name.empty()) {
      out += "ERRNO_";
      AppendInt(out, err);
    } else {
      out.append(name);
    }
    out += " (";
    if (message.empty()) {
      out += "Unknown error ";
      AppendInt(out, err);
    } else {
      out.append(message);
    }
    out.push_back(')');
  } else if (spec.ret == Ret::kAddr) {
    AppendArg(out, ArgKind::kAddr, e.ret);
  } else if (spec.ret == Ret::kMode) {
    AppendArg(out, ArgKind::kMode, e.ret);
  } else {
    AppendInt(out, e.ret);
  }
}

}  // namespace iorr::trace
