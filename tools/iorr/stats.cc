// `iorr stats TRACE`: what a trace holds — events per call, bytes, processes, threads, files,
// duration, and how compactly it is stored. Reads chunks in file order (no merge needed).
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tools/iorr/cli.h"
#include "tools/iorr/event_counts.h"
#include "traces/json.h"
#include "traces/names.h"
#include "traces/reader.h"

namespace iorr::cli {
namespace {

// A set of distinct strings: open addressing on a 64-bit hash, names copied into 1 MiB blocks.
// (std::unordered_set spent most of stats' time on bucket lists.)
class DistinctStrings {
 public:
  DistinctStrings() : slots_(1 << 16) {}
  // Inserts a batch, prefetching each string's slot a few strings ahead: a table of 80,000
  // paths is larger than the cache, and the slot's load missed on most inserts.
  void InsertAll(const std::vector<std::string_view>& batch) {
    constexpr size_t kAhead = 8;
    hashes_.resize(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) hashes_[i] = Hash(batch[i]) | 1;  // 0: empty
    for (size_t i = 0; i < batch.size(); ++i) {
      if (i + kAhead < batch.size())
        __builtin_prefetch(&slots_[hashes_[i + kAhead] & (slots_.size() - 1)]);
      InsertHashed(batch[i], hashes_[i]);
    }
  }
  size_t size() const { return size_; }

 private:
  void InsertHashed(std::string_view s, uint64_t h) {
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.hash == 0) {
        slot.hash = h;
        slot.s = Copy(s);
        if (++size_ * 2 > slots_.size()) Grow();
        return;
      }
      if (slot.hash == h && slot.s == s) return;
    }
  }
  struct Slot {
    uint64_t hash = 0;
    std::string_view s;
  };
  static uint64_t Hash(std::string_view s) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
    size_t n = s.size();
    const char* p = s.data();
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
  }
  std::string_view Copy(std::string_view s) {
    // (An empty name, the first one seen: no block yet, and none needed. It crashed here.)
    if (s.empty()) return {};
    if (block_size_ - block_used_ < s.size()) {
      block_size_ = std::max<size_t>(1 << 20, s.size());
      blocks_.push_back(std::make_unique<char[]>(block_size_));
      block_used_ = 0;
    }
    char* copy = blocks_.back().get() + block_used_;
    if (!s.empty()) std::memcpy(copy, s.data(), s.size());
    block_used_ += s.size();
    return {copy, s.size()};
  }
  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.hash == 0) continue;
      size_t i = s.hash & mask;
      while (slots_[i].hash != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::vector<uint64_t> hashes_;  // InsertAll's batch
  size_t size_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0, block_size_ = 0;
};

struct Options {
  std::string trace;
  bool json = false;
  bool salvage = false;
};

int Run(const Options& o) {
  auto opened = trace::TraceReader::Open(o.trace, {o.salvage});
  if (!opened.ok()) throw Error(opened.status().message());
  trace::TraceReader& r = **opened;
  struct stat st {};
  uint64_t file_bytes = ::stat(o.trace.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;

  EventCounts counts;  // calls, errors, bytes and times, as `iorr report` counts them
  // Distinct paths: only the first use of a chunk's table entry goes to the global set (the
  // writer refers to strings already in its table, so entries repeat only where a listing's
  // names do).
  DistinctStrings files;
  std::vector<uint8_t> seen_in_chunk;
  std::vector<std::string_view> new_in_chunk;  // first uses of the chunk's table entries
  std::set<uint32_t> pids;
  std::set<std::pair<uint32_t, uint32_t>> threads;
  uint64_t chunks = 0;
  // How far behind its own events a chunk's watermark lags: how far back a later chunk may still
  // reach, so how much a merged reader must hold (a process killed mid-call pins it).
  int64_t max_lag_units = 0;

  Progress progress("reading", file_bytes);
  trace::Chunk chunk;
  trace::ChunkCursor cursor;
  trace::Event e;
  while (r.NextChunk(&chunk)) {
    ++chunks;
    progress.Update(r.info().bytes);
    if (chunk.meta.kind != trace::ChunkKind::kEvents) continue;
    max_lag_units = std::max(max_lag_units, chunk.meta.last_start - chunk.meta.watermark);
    pids.insert(chunk.meta.pid);
    threads.insert({chunk.meta.pid, chunk.meta.tid});
    if (Status s = cursor.Init(&chunk, r.time_unit_ns()); !s.ok())
      throw Error(o.trace + ": " + s.message());
    seen_in_chunk.clear();
    while (cursor.Next(&e)) {
      counts.Add(e);
      const trace::CallSpec& spec = e.spec();
      for (int i = 0; i < spec.nargs; ++i) {
        if (spec.args[i].kind != trace::ArgKind::kPath || e.args[i].null) continue;
        uint32_t id = e.args[i].string_id;
        if (id >= seen_in_chunk.size()) seen_in_chunk.resize(id + 1024);
        if (seen_in_chunk[id]) continue;
        seen_in_chunk[id] = 1;
        new_in_chunk.push_back(e.args[i].s);
      }
    }
    files.InsertAll(new_in_chunk);  // the views point into the chunk, still loaded
    new_in_chunk.clear();
    if (!cursor.status().ok()) throw Error(o.trace + ": " + cursor.status().message());
  }
  progress.Done();
  if (!r.status().ok()) throw Error(o.trace + ": " + r.status().message());
  std::string warning = r.IntegrityWarning();

  const auto calls = counts.CallsByCount();
  const uint64_t events = counts.events, bytes_read = counts.bytes_read,
                 bytes_written = counts.bytes_written;
  const int64_t duration = counts.Duration();
  double per_event = events ? static_cast<double>(file_bytes) / static_cast<double>(events) : 0;

  std::string out;
  char buf[512];
  if (o.json) {
    out += "{\"trace\":";
    AppendJsonString(out, o.trace);
    std::snprintf(buf, sizeof buf,
                  ",\"format_version\":%u,\"time_unit_ns\":%u,\"events\":%llu,\"chunks\":%llu,"
                  "\"processes\":%zu,\"threads\":%zu,\"files_touched\":%zu,\"duration_ns\":%lld,"
                  "\"bytes_read\":%llu,\"bytes_written\":%llu,\"trace_bytes\":%llu,"
                  "\"trace_bytes_per_event\":%.3f,\"max_watermark_lag_s\":%.6f,\"source\":",
                  r.header().core.version, r.time_unit_ns(), (unsigned long long)events,
                  (unsigned long long)chunks, pids.size(), threads.size(), files.size(),
                  (long long)duration, (unsigned long long)bytes_read,
                  (unsigned long long)bytes_written, (unsigned long long)file_bytes, per_event,
                  static_cast<double>(max_lag_units) * r.time_unit_ns() / 1e9);
    out += buf;
    AppendJsonString(out, r.header().Get(trace::key::kSource));
    out += ",\"calls\":{";
    for (size_t i = 0; i < calls.size(); ++i) {
      if (i) out += ",";
      AppendJsonString(out, calls[i].first);
      out += ":" + std::to_string(calls[i].second);
    }
    out += "},\"errors\":{";
    bool comma = false;
    for (const auto& [err, n] : counts.errors) {
      if (comma) out += ",";
      comma = true;
      std::string_view name = trace::ErrnoName(err);
      AppendJsonString(out, name.empty() ? std::to_string(err) : std::string(name));
      out += ":" + std::to_string(n);
    }
    out += "},\"integrity\":";
    if (warning.empty())
      out += "null";
    else
      AppendJsonString(out, warning);
    out += ",\"notes\":[";
    for (size_t i = 0; i < r.info().notes.size(); ++i) {
      if (i) out += ",";
      AppendJsonString(out, r.info().notes[i]);
    }
    out += "]}\n";
  } else {
    std::snprintf(buf, sizeof buf, "trace        %s (format %u, %u ns resolution, source %s)\n",
                  o.trace.c_str(), r.header().core.version, r.time_unit_ns(),
                  std::string(r.header().Get(trace::key::kSource)).c_str());
    out += buf;
    out += "events       " + Thousands(events) + " in " + Thousands(chunks) + " chunks\n";
    std::snprintf(buf, sizeof buf, "duration     %.6f s\n", static_cast<double>(duration) / 1e9);
    out += buf;
    out += "processes    " + Thousands(pids.size()) + "\nthreads      " +
           Thousands(threads.size()) + "\nfiles        " + Thousands(files.size()) +
           " distinct paths\n";
    out += "bytes read   " + Thousands(bytes_read) + "\nbytes written " + Thousands(bytes_written) +
           "\n";
    std::snprintf(buf, sizeof buf, "trace size   %s bytes, %.2f bytes/event\n",
                  Thousands(file_bytes).c_str(), per_event);
    out += buf;
    out += "calls\n";
    for (const auto& [name, n] : calls) {
      std::snprintf(buf, sizeof buf, "  %-20s %12s\n", name.c_str(), Thousands(n).c_str());
      out += buf;
    }
    if (!counts.errors.empty()) {
      out += "errors\n";
      for (const auto& [err, n] : counts.errors) {
        std::string_view name = trace::ErrnoName(err);
        std::snprintf(buf, sizeof buf, "  %-20s %12s\n",
                      name.empty() ? std::to_string(err).c_str() : std::string(name).c_str(),
                      Thousands(n).c_str());
        out += buf;
      }
    }
    for (const auto& note : r.info().notes) out += "note: " + note + "\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!warning.empty())
    std::fprintf(stderr, "iorr: warning: %s: %s\n", o.trace.c_str(), warning.c_str());
  return kExitOk;
}

}  // namespace

void RegisterStats(CLI::App& app, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "stats",
      "Summarise a trace: events per call, bytes read and written, processes, threads,\n"
      "files touched, duration and trace bytes per event.");
  sub->add_option("trace", o->trace, "Trace file (- for stdin)")->required();
  sub->add_flag("--json", o->json, "One JSON object instead of text");
  sub->add_flag("--salvage", o->salvage, "Skip damaged chunks instead of failing");
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace iorr::cli
