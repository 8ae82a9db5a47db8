// See call_costs.h.
#include "model/call_costs.h"

#include <fcntl.h>

#include <fstream>
#include <sstream>

#include "model/json_fields.h"

namespace iorr::model {

using trace::CallId;

CallCategory CallCosts::CategoryOf(const trace::Event& e) {
  switch (e.call) {
    case CallId::open:
    case CallId::openat:
    case CallId::openat2:
    case CallId::creat: {
      int idx = e.call == CallId::open || e.call == CallId::creat ? 1 : 2;
      bool create = e.call == CallId::creat || (e.args[idx].i & O_CREAT);
      return create ? CallCategory::kCreate : CallCategory::kOpen;
    }
    case CallId::close:
      return CallCategory::kClose;
    case CallId::write:
    case CallId::pwrite64:
    case CallId::writev:
    case CallId::pwritev:
    case CallId::pwritev2:
      return CallCategory::kWrite;
    case CallId::read:
    case CallId::pread64:
    case CallId::readv:
    case CallId::preadv:
    case CallId::preadv2:
      return CallCategory::kRead;
    case CallId::unlink:
      return CallCategory::kUnlink;
    case CallId::unlinkat:
      return (e.args[2].i & AT_REMOVEDIR) ? CallCategory::kRmdir : CallCategory::kUnlink;
    case CallId::rmdir:
      return CallCategory::kRmdir;
    case CallId::mkdir:
    case CallId::mkdirat:
      return CallCategory::kMkdir;
    case CallId::rename:
    case CallId::renameat:
    case CallId::renameat2:
      return CallCategory::kRename;
    default:
      break;
  }
  switch (e.spec().effect) {
    case trace::Effect::kSetAttr:
      return CallCategory::kSetAttr;
    case trace::Effect::kLookup:
      return CallCategory::kStat;
    default:
      return CallCategory::kNone;
  }
}

int64_t CallCosts::CostNs(const trace::Event& e) const {
  CallCategory c = CategoryOf(e);
  if (c == CallCategory::kNone) return 0;
  double cost = ns[static_cast<int>(c)];
  if (c == CallCategory::kUnlink) cost += unlink_deferred_ns;
  if (e.ret > 0 && (c == CallCategory::kWrite || c == CallCategory::kRead))
    cost += static_cast<double>(e.ret) / 1024.0 *
            (c == CallCategory::kWrite ? write_ns_per_kib : read_ns_per_kib);
  return static_cast<int64_t>(cost);
}

Result<CallCosts> ParseCallCosts(std::string_view text, const std::string& origin) {
  jsonfields::json::Parser p;
  if (!p.Parse(text))
    return Status::Error(origin + ": " + jsonfields::WhereInText(text, p.error()));
  if (p.value(0).type != jsonfields::json::Type::kObject)
    return Status::Error(origin + ": not a JSON object");
  jsonfields::Fields top(p, 0, "");
  auto fail = [&](const Status& s) { return Status::Error(origin + ": " + s.message()); };
  if (Status s = top.Check({"type", "fs", "description", "calls_us"}); !s) return fail(s);
  std::string type, description;
  CallCosts c;
  if (Status s = top.String("type", &type, true); !s) return fail(s);
  if (type != "call-costs") return fail(top.Error("type", "must be \"call-costs\""));
  if (Status s = top.String("fs", &c.fs, true); !s) return fail(s);
  if (c.fs.empty()) return fail(top.Error("fs", "must not be empty"));
  if (Status s = top.String("description", &description, false); !s) return fail(s);
  const jsonfields::json::Value* calls = top.Find("calls_us");
  if (!calls || calls->type != jsonfields::json::Type::kObject)
    return fail(top.Error("calls_us", calls ? "must be an object" : "missing"));
  jsonfields::Fields f(p, static_cast<uint32_t>(calls - &p.value(0)), "calls_us.");
  if (Status s = f.Check({"create", "open", "close", "write", "write_per_kib", "read",
                          "read_per_kib", "setattr", "stat", "unlink", "mkdir", "rmdir", "rename",
                          "unlink_deferred", "writeback_per_file"});
      !s)
    return fail(s);
  auto number = [&](std::string_view key, double* out) -> Status {
    double us = 0;
    if (Status s = f.Number(key, &us); !s) return s;
    if (us < 0 || us > 1e6) return f.Error(key, "must be between 0 and 1000000 us");
    *out = us * 1000;
    return Status();
  };
  for (int i = 0; i < kCallCategories; ++i)
    if (Status s = number(kCallCategoryNames[i], &c.ns[i]); !s) return fail(s);
  if (Status s = number("write_per_kib", &c.write_ns_per_kib); !s) return fail(s);
  if (Status s = number("read_per_kib", &c.read_ns_per_kib); !s) return fail(s);
  if (f.Find("unlink_deferred"))
    if (Status s = number("unlink_deferred", &c.unlink_deferred_ns); !s) return fail(s);
  if (f.Find("writeback_per_file"))
    if (Status s = number("writeback_per_file", &c.writeback_ns_per_file); !s) return fail(s);
  return c;
}

Result<CallCosts> LoadCallCosts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot read");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > (1u << 20)) return Status::Error(path + ": too large for a call-cost table");
  return ParseCallCosts(text, path);
}

}  // namespace iorr::model
