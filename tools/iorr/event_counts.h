// What `iorr stats` counts of a trace's events, one event at a time: calls by name, errors by
// errno, bytes read and written, the time the events span. `iorr report` counts with the same
// code, so its summary and `iorr stats` agree. A plain value; not thread-safe.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "traces/event.h"
#include "traces/names.h"

namespace iorr::cli {

struct EventCounts {
  uint64_t per_tag[trace::kMaxTag + 1] = {};
  std::map<int64_t, uint64_t> other_nr;  // calls outside the table, by syscall number
  std::map<int, uint64_t> errors;        // failed calls by errno
  uint64_t events = 0, bytes_read = 0, bytes_written = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;  // earliest start, latest end (ns)

  // The bytes e moved: a read's or a write's result, both for a copy.
  static void Bytes(const trace::Event& e, uint64_t* read, uint64_t* written) {
    *read = *written = 0;
    if (e.ret <= 0) return;
    auto n = static_cast<uint64_t>(e.ret);
    trace::Effect effect = e.spec().effect;
    if (effect == trace::Effect::kRead || effect == trace::Effect::kCopy) *read = n;
    if (effect == trace::Effect::kWrite || effect == trace::Effect::kCopy) *written = n;
  }

  void Add(const trace::Event& e) {
    ++per_tag[e.spec().tag];
    if (e.call == trace::CallId::other) ++other_nr[e.args[0].i];
    if (e.failed()) ++errors[e.err()];
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
    uint64_t r, w;
    Bytes(e, &r, &w);
    bytes_read += r;
    bytes_written += w;
    ++events;
  }

  // From the first start to the last end. (Hostile times can run backwards, or span more than
  // an int64 holds: 0, and the maximum.)
  int64_t Duration() const {
    int64_t d = 0;
    if (events && last > first && __builtin_sub_overflow(last, first, &d)) d = INT64_MAX;
    return d;
  }

  // The name a call outside the table is counted under: its syscall's, else "syscall_N".
  static std::string OtherName(int64_t nr) {
    std::string_view name = nr >= INT_MIN && nr <= INT_MAX
                                ? trace::SyscallName(static_cast<int>(nr))
                                : std::string_view();
    return name.empty() ? "syscall_" + std::to_string(nr) : std::string(name);
  }

  // Calls by name, most frequent first (ties by name).
  std::vector<std::pair<std::string, uint64_t>> CallsByCount() const {
    std::vector<std::pair<std::string, uint64_t>> calls;
    for (const auto& c : trace::kCalls)
      if (per_tag[c.tag] && c.tag != static_cast<uint16_t>(trace::CallId::other))
        calls.emplace_back(std::string(c.name), per_tag[c.tag]);
    for (const auto& [nr, n] : other_nr) calls.emplace_back(OtherName(nr), n);
    std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    return calls;
  }
};

}  // namespace iorr::cli
