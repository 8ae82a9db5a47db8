// Profile parsing and validation (see profile.h), on the strict JSON parser of traces/jsonl.h.
// Stateless apart from reading files.
#include "model/profile.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

#include "model/hdd.h"
#include "model/json_fields.h"
#include "model/raid0.h"
#include "model/ssd.h"
#include "traces/jsonl.h"

namespace iorr::model {
namespace {

namespace json = iorr::trace::json;

constexpr int kMaxMemberDepth = 4;
constexpr size_t kMaxProfileBytes = 1 << 20;

using jsonfields::Fields;
using jsonfields::Num;
using jsonfields::WhereInText;

#define IORR_TRY(expr)                      \
  do {                                      \
    if (Status s_ = (expr); !s_) return s_; \
  } while (0)

Status ReadHdd(const Fields& f, HddParams* h) {
  IORR_TRY(f.Check({"type", "name", "description", "capacity_gb", "rpm", "heads",
                    "track_to_track_ms", "average_seek_ms", "full_stroke_ms", "outer_mb_per_s",
                    "inner_mb_per_s", "interface_mb_per_s", "command_overhead_ms", "cache_mib",
                    "write_cache", "read_ahead_kib", "queue_depth", "reorder", "fua"}));
  IORR_TRY(f.Number("capacity_gb", &h->capacity_gb));
  IORR_TRY(f.Number("rpm", &h->rpm));
  IORR_TRY(f.Whole("heads", &h->heads, 1, 1024));
  IORR_TRY(f.Number("track_to_track_ms", &h->track_to_track_ms));
  IORR_TRY(f.Number("average_seek_ms", &h->average_seek_ms));
  IORR_TRY(f.Number("full_stroke_ms", &h->full_stroke_ms));
  IORR_TRY(f.Number("outer_mb_per_s", &h->outer_mb_per_s));
  IORR_TRY(f.Number("inner_mb_per_s", &h->inner_mb_per_s));
  IORR_TRY(f.Number("interface_mb_per_s", &h->interface_mb_per_s));
  IORR_TRY(f.Number("command_overhead_ms", &h->command_overhead_ms));
  IORR_TRY(f.Number("cache_mib", &h->cache_mib));
  IORR_TRY(f.Bool("write_cache", &h->write_cache));
  IORR_TRY(f.Number("read_ahead_kib", &h->read_ahead_kib));
  IORR_TRY(f.Whole("queue_depth", &h->queue_depth, 1, 1024));
  IORR_TRY(f.Bool("reorder", &h->reorder));
  IORR_TRY(f.Bool("fua", &h->fua));
  auto g = HddGeometry::Make(*h, f.prefix());
  return g.ok() ? Status() : g.status();
}

Status ReadSsd(const Fields& f, SsdParams* d) {
  IORR_TRY(f.Check({"type", "name", "description", "capacity_gb", "read_latency_us",
                    "write_latency_us", "program_latency_us", "read_mb_per_s", "write_mb_per_s",
                    "interface_mb_per_s", "channels", "queue_depth", "buffer_mib", "write_cache",
                    "power_loss_protection", "flush_ms", "flush_per_mb_ms", "fua"}));
  IORR_TRY(f.Number("capacity_gb", &d->capacity_gb));
  IORR_TRY(f.Number("read_latency_us", &d->read_latency_us));
  IORR_TRY(f.Number("write_latency_us", &d->write_latency_us));
  IORR_TRY(f.Number("program_latency_us", &d->program_latency_us));
  IORR_TRY(f.Number("read_mb_per_s", &d->read_mb_per_s));
  IORR_TRY(f.Number("write_mb_per_s", &d->write_mb_per_s));
  IORR_TRY(f.Number("interface_mb_per_s", &d->interface_mb_per_s));
  IORR_TRY(f.Whole("channels", &d->channels, 1, 4096));
  IORR_TRY(f.Whole("queue_depth", &d->queue_depth, 1, 65536));
  IORR_TRY(f.Number("buffer_mib", &d->buffer_mib));
  IORR_TRY(f.Bool("write_cache", &d->write_cache));
  IORR_TRY(f.Bool("power_loss_protection", &d->power_loss_protection));
  IORR_TRY(f.Number("flush_ms", &d->flush_ms));
  IORR_TRY(f.Number("flush_per_mb_ms", &d->flush_per_mb_ms));
  IORR_TRY(f.Bool("fua", &d->fua));
  return ValidateSsd(*d, f.prefix());
}

bool PlainName(std::string_view n) {
  if (n.empty() || n[0] == '.') return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  return true;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxProfileBytes) return Status::Error(path + ": larger than 1 MiB");
  }
  if (in.bad()) return Status::Error(path + ": read error");
  return text;
}

Result<Profile> Parse(std::string_view text, std::string_view origin, const std::string& dir,
                      int depth);

// The object at `obj` as a profile; its fields are named with `prefix`.
Status ReadProfile(const json::Parser& p, uint32_t obj, const std::string& prefix,
                   const std::string& dir, int depth, Profile* out) {
  if (p.value(obj).type != json::Type::kObject)
    return Status::Error(prefix.empty() ? std::string("the profile must be a JSON object")
                                        : "\"" + prefix.substr(0, prefix.size() - 1) +
                                              "\": must be a JSON object or a profile name");
  Fields f(p, obj, prefix);
  std::string type;
  IORR_TRY(f.String("type", &type, true));
  IORR_TRY(f.String("name", &out->name, true));
  IORR_TRY(f.String("description", &out->description, false));
  if (out->name.empty()) return f.Error("name", "must not be empty");
  if (type == "hdd") {
    out->type = DeviceType::kHdd;
    return ReadHdd(f, &out->hdd);
  }
  if (type == "ssd") {
    out->type = DeviceType::kSsd;
    return ReadSsd(f, &out->ssd);
  }
  if (type != "raid0")
    return f.Error("type", "must be \"hdd\", \"ssd\" or \"raid0\" (got \"" + type + "\")");
  out->type = DeviceType::kRaid0;
  IORR_TRY(f.Check({"type", "name", "description", "chunk_kib", "members"}));
  IORR_TRY(f.Whole("chunk_kib", &out->chunk_kib, 4, 1 << 20));
  if (out->chunk_kib % 4 != 0)
    return f.Error("chunk_kib", "must be a multiple of 4 (got " + Num(out->chunk_kib) + ")");
  const json::Value* m = f.Find("members");
  if (!m) return f.Error("members", "missing");
  if (m->type != json::Type::kArray) return f.Error("members", "must be an array");
  if (m->size < 2) return f.Error("members", "RAID 0 needs at least 2 (got " + Num(m->size) + ")");
  if (depth >= kMaxMemberDepth)
    return f.Error("members", "nested deeper than " + std::to_string(kMaxMemberDepth) +
                                  " arrays (does a profile name itself?)");
  uint32_t i = m->first;
  for (uint32_t n = 0; n < m->size; ++n, i = p.value(i).next) {
    std::string at = prefix + "members[" + std::to_string(n) + "]";
    Profile member;
    const json::Value& v = p.value(i);
    if (v.type == json::Type::kString) {
      std::string name(v.s);
      if (!PlainName(name))
        return Status::Error("\"" + at + "\": \"" + name +
                             "\" is not a profile name (letters, digits, '-', '_', '.')");
      if (dir.empty())
        return Status::Error("\"" + at + "\": profile \"" + name +
                             "\" named, but there is no directory to find it in");
      auto text = ReadFile(dir + "/" + name + ".json");
      if (!text.ok()) return Status::Error("\"" + at + "\": " + text.status().message());
      auto sub = Parse(text.value(), name + ".json", dir, depth + 1);
      if (!sub.ok()) return Status::Error("\"" + at + "\": " + sub.status().message());
      member = std::move(sub.value());
    } else {
      IORR_TRY(ReadProfile(p, i, at + ".", dir, depth + 1, &member));
    }
    out->members.push_back(std::move(member));
  }
  return Status();
}

Result<Profile> Parse(std::string_view text, std::string_view origin, const std::string& dir,
                      int depth) {
  json::Parser parser;
  std::string where(origin);
  if (!parser.Parse(text)) return Status::Error(where + ": " + WhereInText(text, parser.error()));
  Profile prof;
  if (Status s = ReadProfile(parser, 0, "", dir, depth, &prof); !s)
    return Status::Error(where + ": " + s.message());
  return prof;
}

}  // namespace

Result<Profile> ParseProfile(std::string_view json_text, std::string_view origin,
                             const std::string& dir) {
  return Parse(json_text, origin, dir, 0);
}

Result<Profile> LoadProfile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return Parse(text.value(), base, dir.empty() ? "/" : dir, 0);
}

Result<std::unique_ptr<DeviceModel>> MakeDevice(const Profile& p, const DeviceSettings& s) {
  switch (p.type) {
    case DeviceType::kHdd:
      return MakeHdd(p.name, p.hdd, s);
    case DeviceType::kSsd:
      return MakeSsd(p.name, p.ssd, s);
    case DeviceType::kRaid0:
      break;
  }
  std::vector<std::unique_ptr<DeviceModel>> members;
  for (const Profile& m : p.members) {
    auto d = MakeDevice(m, s);
    if (!d.ok()) return d.status();
    members.push_back(std::move(d.value()));
  }
  auto r = Raid0Model::Make(p.name, std::move(members), p.chunk_kib, s);
  if (!r.ok()) return r.status();
  return std::unique_ptr<DeviceModel>(std::move(r.value()));
}

}  // namespace iorr::model
