// Strict reading of the model's small JSON files (device profiles, call-cost tables): a field
// reader that names fields in its errors, on the strict parser of traces/jsonl.h. Header-only;
// stateless.
#pragma once

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "traces/jsonl.h"
#include "traces/status.h"

namespace iorr::model::jsonfields {

namespace json = iorr::trace::json;

inline std::string Num(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// "column 37: expected ':'" from the JSON parser, as "line 3, column 5: expected ':'".
inline std::string WhereInText(std::string_view text, const std::string& error) {
  if (error.rfind("column ", 0) != 0) return error;
  size_t col = 0;
  const char* p = error.data() + 7;
  auto r = std::from_chars(p, error.data() + error.size(), col);
  if (r.ec != std::errc() || col == 0) return error;
  size_t off = std::min(col - 1, text.size()), line = 1, start = 0;
  for (size_t i = 0; i < off; ++i) {
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(off - start + 1) +
         std::string(r.ptr, error.data() + error.size());
}

// Reads the members of one JSON object, naming fields as "<prefix><key>" in errors.
class Fields {
 public:
  Fields(const json::Parser& p, uint32_t obj, std::string prefix)
      : p_(p), obj_(obj), prefix_(std::move(prefix)) {}

  Status Error(std::string_view key, const std::string& what) const {
    return Status::Error("\"" + prefix_ + std::string(key) + "\": " + what);
  }

  // Every key must be in `allowed` and appear once.
  Status Check(std::initializer_list<std::string_view> allowed) const {
    const json::Value& o = p_.value(obj_);
    uint32_t i = o.size ? o.first : 0;
    for (uint32_t n = 0; n < o.size; ++n, i = p_.value(i).next) {
      std::string_view key = p_.value(i).key;
      bool known = false;
      for (std::string_view a : allowed) known = known || a == key;
      if (!known) return Error(key, "unknown key");
      uint32_t j = p_.value(i).next;
      for (uint32_t m = n + 1; m < o.size; ++m, j = p_.value(j).next)
        if (p_.value(j).key == key) return Error(key, "given twice");
    }
    return Status();
  }

  const json::Value* Find(std::string_view key) const {
    const json::Value& o = p_.value(obj_);
    uint32_t i = o.size ? o.first : 0;
    for (uint32_t n = 0; n < o.size; ++n, i = p_.value(i).next)
      if (p_.value(i).key == key) return &p_.value(i);
    return nullptr;
  }

  Status Number(std::string_view key, double* out) const {
    const json::Value* v = Find(key);
    if (!v) return Error(key, "missing");
    if (v->type == json::Type::kInt) {
      *out = static_cast<double>(v->i);
      return Status();
    }
    if (v->type != json::Type::kNumber) return Error(key, "must be a number");
    double d = 0;
    auto r = std::from_chars(v->s.data(), v->s.data() + v->s.size(), d);
    if (r.ec != std::errc() || !std::isfinite(d)) return Error(key, "number out of range");
    *out = d;
    return Status();
  }

  Status Whole(std::string_view key, uint32_t* out, double lo, double hi) const {
    double d;
    if (Status s = Number(key, &d); !s) return s;
    if (d != std::floor(d)) return Error(key, "must be a whole number (got " + Num(d) + ")");
    if (d < lo) return Error(key, "must be >= " + Num(lo) + " (got " + Num(d) + ")");
    if (d > hi) return Error(key, "must be <= " + Num(hi) + " (got " + Num(d) + ")");
    *out = static_cast<uint32_t>(d);
    return Status();
  }

  Status Bool(std::string_view key, bool* out) const {
    const json::Value* v = Find(key);
    if (!v) return Error(key, "missing");
    if (v->type != json::Type::kBool) return Error(key, "must be true or false");
    *out = v->b;
    return Status();
  }

  Status String(std::string_view key, std::string* out, bool required) const {
    const json::Value* v = Find(key);
    if (!v) return required ? Error(key, "missing") : Status();
    if (v->type != json::Type::kString) return Error(key, "must be a string");
    *out = std::string(v->s);
    return Status();
  }

  const json::Parser& parser() const { return p_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const json::Parser& p_;
  uint32_t obj_;
  std::string prefix_;
};

}  // namespace iorr::model::jsonfields
