// libFuzzer target for the text importers: `iorr import strace` (StraceParser and ImportStrace)
// and `iorr import jsonl`'s line parser (JsonlParser). Both read text from anywhere (a log
// captured on another machine, a hand-written trace), so they must turn any bytes into a trace
// or a clear error, never a crash.
//
// The input's first byte picks the route; the rest is split at '\n' into lines:
//   even: strace. The lines go through ImportStrace (a LineSource over the input) into a trace
//         in a memfd, which the reader must then read to its end without an error: whatever the
//         importer writes is a trace (its own checks promise that, as the writer's do).
//   odd:  JSON lines. Each line is parsed; an event that parses is written back with
//         AppendEventJson and parsed again, and must come back as the same event (the text the
//         dump writes is the text the import reads: `iorr dump --json | iorr import jsonl`).
//
// Invariants are checked with Check() (abort => a libFuzzer crash). Work is bounded by the input's
// size (-max_len).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "traces/jsonl.h"
#include "traces/reader.h"
#include "traces/strace_import.h"
#include "traces/strace_parse.h"

namespace {

using namespace iorr::trace;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "import_fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

// The input's lines, as LineSource::Open's sources give them (without the '\n').
class MemLines : public LineSource {
 public:
  explicit MemLines(std::string_view text) : text_(text) {}
  bool Next(std::string_view& line) override {
    if (pos_ >= text_.size()) return false;
    size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) nl = text_.size();
    line = text_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return true;
  }
  bool failed() const override { return false; }
  std::string error() const override { return {}; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

void Strace(std::string_view text) {
  int fd = memfd_create("import_fuzz", MFD_CLOEXEC);
  if (fd < 0) return;
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  MemLines lines(text);
  StraceImportOptions options;
  auto imported = ImportStrace(lines, path, options);
  if (imported.ok()) {
    auto reader = TraceReader::Open(path);
    Check(reader.ok(), "the imported trace opens");
    MergedReader merged(reader->get());
    Event e;
    uint64_t events = 0;
    while (merged.Next(&e)) ++events;
    Check(merged.status().ok(), "the imported trace reads to its end");
    Check(events == imported->events, "the imported trace holds the events the import counted");
  }
  close(fd);
}

void Jsonl(std::string_view text) {
  JsonlParser first, second;
  MemLines lines(text);
  std::string_view line;
  std::string out, again;
  while (lines.Next(line)) {
    if (first.Parse(line) != JsonlParser::Kind::kEvent) continue;
    out.clear();
    AppendEventJson(out, first.event());
    Check(second.Parse(out) == JsonlParser::Kind::kEvent, "a dumped event parses");
    again.clear();
    AppendEventJson(again, second.event());
    Check(again == out, "a dumped event parses back to the same event");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    Strace(text);
  else
    Jsonl(text);
  return 0;
}
