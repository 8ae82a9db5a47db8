// `iorr export blkparse|fio TRACE [-o FILE]`: the block events of a trace (the `block`
// pseudo-call, FORMAT.md §10) as blkparse's default text output, or as a fio iolog (version 3)
// that fio replays onto a device. `iorr export jsonl` is dump --json (dump.cc).
//
// blkparse: one line per block event, in time order, as blkparse 1.2.0 prints its default
// format "%D %2c %8s %5T.%9t %5p %2a %3d " followed by the action's tail (checked against
// blkparse run on binary traces made for the purpose):
//   Q, D: "SECTOR + SECTORS [COMM]", or "[COMM]" alone for a request of no sectors (a flush);
//   C:    "SECTOR + SECTORS [ERROR]", or "SECTOR [ERROR]" for no sectors.
// What differs follows from what a block event holds: the CPU is 0, the sequence number counts
// the lines written from 1, the pid is 0 (a block event does not store one), times are since
// the trace's start (blkparse's are since its first event), a NULL comm prints "(null)" as
// blkparse prints a process it has no name for, the error is what the kernel's blktrace stores
// (the negative errno as an unsigned 16-bit number: -EIO prints as 65531), and rwbs is tracefs'
// spelling (block::FormatRwbs), so a REQ_OP_FLUSH request reads "FF" where blkparse says "FN".
// `iorr import blkparse` reads these lines back (import_blkparse.cc).
//
// fio: fio's iolog v3 ("fio version 3 iolog", then "TIME FILE add|open|close" and
// "TIME FILE read|write|trim|sync OFFSET LENGTH"; TIME in microseconds: fio 3.33 writes
// microseconds and waits TIME minus the previous line's TIME before each line). fio issues
// reads, writes, trims and fsyncs; it cannot ask for PREFLUSH or FUA, so the mapping is:
//   BLK_FLUSH, or PREFLUSH with no data   -> sync (fsync of a block device: a cache flush)
//   PREFLUSH write                          -> sync, then write (the flush comes first)
//   FUA write                               -> write, then sync (--fua sync, the default): the
//       kernel's own emulation for devices without FUA (libata's default, loop). The data is as
//       durable, but the sync flushes the whole cache where a FUA device would force out only
//       this write, so on such devices the replay costs more; --fua drop writes a plain write.
//   secure erase, other operations (write zeroes, zone commands) -> skipped and counted: fio
//       has no action for them; treating them as trims or writes would claim what did not happen.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "tools/iorr/cli.h"
#include "traces/block.h"
#include "traces/reader.h"

namespace iorr::cli {
namespace {

namespace block = trace::block;

constexpr size_t kFlushBytes = 1 << 20;

// Argument positions of the block pseudo-call (traces/syscalls.def).
enum BlockArg {
  kPhaseArg = 0,
  kDevArg = 1,
  kSectorArg = 2,
  kBytesArg = 3,
  kOpArg = 4,
  kCommArg = 5
};

// The block events of a trace in time order; the other events are counted.
class BlockEvents {
 public:
  BlockEvents(const std::string& path, bool salvage) : path_(path) {
    auto opened = trace::TraceReader::Open(path, {salvage});
    if (!opened.ok()) throw Error(opened.status().message());
    reader_ = std::move(*opened);
    merged_ = std::make_unique<trace::MergedReader>(reader_.get());
    struct stat st {};
    if (path != "-" && ::stat(path.c_str(), &st) == 0)
      file_bytes_ = static_cast<uint64_t>(st.st_size);
    progress_ = std::make_unique<Progress>("exporting", file_bytes_);
  }

  const trace::Header& header() const { return reader_->header(); }

  // The next block event (string views valid until the next call); false at the end. Throws on
  // a damaged trace.
  bool Next(trace::Event* e) {
    while (merged_->Next(e)) {
      progress_->Update(reader_->info().bytes);
      if (e->call == trace::CallId::block) return true;
      ++others_;
    }
    progress_->Done();
    if (!merged_->status().ok()) throw Error(path_ + ": " + merged_->status().message());
    return false;
  }

  uint64_t others() const { return others_; }

  // What the reader found out about the file (call after Next returned false).
  void Warn() const {
    std::string warning = reader_->IntegrityWarning();
    if (!warning.empty())
      std::fprintf(stderr, "iorr: warning: %s: %s\n", path_.c_str(), warning.c_str());
    if (merged_->order_violations())
      std::fprintf(stderr, "iorr: warning: %s: %s events out of time order (broken watermarks)\n",
                   path_.c_str(), Thousands(merged_->order_violations()).c_str());
  }

 private:
  std::string path_;
  std::unique_ptr<trace::TraceReader> reader_;
  std::unique_ptr<trace::MergedReader> merged_;
  std::unique_ptr<Progress> progress_;
  uint64_t file_bytes_ = 0;
  uint64_t others_ = 0;
};

// ", 12 things" when n is not zero.
void AppendCount(std::string& out, uint64_t n, const char* what) {
  if (n == 0) return;
  out += ", ";
  out += Thousands(n);
  out += ' ';
  out += what;
}

// ---- blkparse ----

struct BlkparseOptions {
  std::string trace;
  std::string output;
  bool salvage = false;
  bool quiet = false;
};

// One event as blkparse's default output prints it (see the file comment).
void AppendBlkparseLine(std::string& out, const trace::Event& e, uint64_t seq, char action) {
  const auto dev = static_cast<dev_t>(e.args[kDevArg].i);
  const uint64_t mag =
      e.start_ns < 0 ? 0 - static_cast<uint64_t>(e.start_ns) : static_cast<uint64_t>(e.start_ns);
  char secs[24];
  std::snprintf(secs, sizeof secs, "%s%" PRIu64, e.start_ns < 0 ? "-" : "", mag / 1000000000);
  const std::string rwbs = block::FormatRwbs(static_cast<uint64_t>(e.args[kOpArg].i));
  char buf[160];
  int n = std::snprintf(buf, sizeof buf, "%3u,%-3u %2d %8" PRIu64 " %5s.%09" PRIu64 " %5d %2c %3s ",
                        major(dev), minor(dev), 0, seq, secs, mag % 1000000000, 0, action,
                        rwbs.c_str());
  out.append(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
  const auto sector = static_cast<uint64_t>(e.args[kSectorArg].i);
  const uint64_t sectors = static_cast<uint64_t>(e.args[kBytesArg].i) >> 9;
  if (action == 'C') {
    if (sectors)
      n = std::snprintf(buf, sizeof buf, "%" PRIu64 " + %" PRIu64 " [%u]\n", sector, sectors,
                        static_cast<unsigned>(static_cast<uint16_t>(e.ret)));
    else
      n = std::snprintf(buf, sizeof buf, "%" PRIu64 " [%u]\n", sector,
                        static_cast<unsigned>(static_cast<uint16_t>(e.ret)));
    out.append(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
    return;
  }
  if (sectors) {
    n = std::snprintf(buf, sizeof buf, "%" PRIu64 " + %" PRIu64 " ", sector, sectors);
    out.append(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
  }
  out.push_back('[');
  const trace::Arg& comm = e.args[kCommArg];
  if (comm.null) {
    out += "(null)";
  } else {
    // A command name is at most 15 bytes of anything but NUL: a control character (a newline
    // would start a line of its own, which `iorr import blkparse` read as a request) goes out as
    // '?', as ps prints them.
    for (char ch : comm.s)
      out.push_back(static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? '?' : ch);
  }
  out += "]\n";
}

int RunBlkparse(const BlkparseOptions& o) {
  BlockEvents in(o.trace, o.salvage);
  OutputFile file(o.output);
  std::string out;
  out.reserve(kFlushBytes + (64 << 10));
  uint64_t lines = 0, bad_phase = 0, odd_length = 0;
  trace::Event e;
  while (in.Next(&e)) {
    const char action = block::PhaseLetter(e.args[kPhaseArg].i);
    if (action == '?') {
      ++bad_phase;
      continue;
    }
    if (e.args[kBytesArg].i % 512 != 0) ++odd_length;
    AppendBlkparseLine(out, e, ++lines, action);
    if (out.size() >= kFlushBytes) file.Write(out);
  }
  file.Write(out);
  file.Commit();
  in.Warn();
  if (!o.quiet) {
    std::string s = "iorr: exported " + Thousands(lines) + " block events";
    AppendCount(s, in.others(), "non-block events skipped");
    AppendCount(s, bad_phase, "block events of no known phase skipped");
    AppendCount(s, odd_length, "lengths not a multiple of 512 bytes rounded down to sectors");
    std::fprintf(stderr, "%s\n", s.c_str());
  }
  return kExitOk;
}

// ---- fio ----

struct FioOptions {
  std::string trace;
  std::string output;
  std::string phase = "queue";
  std::string device;
  std::string fua = "sync";
  bool salvage = false;
  bool quiet = false;
};

// fio reads lengths with %u: longer requests (only hand-made traces have them) are split.
constexpr uint64_t kMaxFioLength = 0xfffff000;

class IologWriter {
 public:
  IologWriter(OutputFile* file, std::string device) : file_(file), device_(std::move(device)) {
    out_.reserve(kFlushBytes + (64 << 10));
    out_ = "fio version 3 iolog\n";
  }

  // fio waits the difference between a line's time and the previous line's, except after a
  // line stamped 0, so times are at least 1 us.
  static uint64_t Micros(int64_t ns) { return ns < 1000 ? 1 : static_cast<uint64_t>(ns) / 1000; }

  void Io(uint64_t us, const char* action, uint64_t offset, uint64_t length) {
    Open(us);
    do {
      uint64_t piece = std::min(length, kMaxFioLength);
      Line(us, action);
      char buf[48];
      int n = std::snprintf(buf, sizeof buf, " %" PRIu64 " %" PRIu64 "\n", offset, piece);
      out_.append(buf, static_cast<size_t>(n));
      offset += piece;
      length -= piece;
      if (out_.size() >= kFlushBytes) file_->Write(out_);  // (a long request: many lines)
    } while (length > 0);
  }
  void Sync(uint64_t us) { Io(us, "sync", 0, 0); }

  void Finish() {
    Open(last_us_);
    Line(last_us_, "close");
    out_.push_back('\n');
    file_->Write(out_);
  }
  uint64_t lines() const { return lines_; }

 private:
  void Open(uint64_t us) {
    if (opened_) return;
    opened_ = true;
    Line(us, "add");
    out_.push_back('\n');
    Line(us, "open");
    out_.push_back('\n');
  }
  void Line(uint64_t us, const char* action) {
    last_us_ = us;
    ++lines_;
    char buf[24];
    int n = std::snprintf(buf, sizeof buf, "%" PRIu64 " ", us);
    out_.append(buf, static_cast<size_t>(n));
    out_ += device_;
    out_.push_back(' ');
    out_ += action;
  }

  OutputFile* file_;
  std::string device_;
  std::string out_;
  bool opened_ = false;
  uint64_t last_us_ = 1;
  uint64_t lines_ = 0;
};

int RunFio(const FioOptions& o) {
  const int64_t phase = o.phase == "queue"   ? block::kQueue
                        : o.phase == "issue" ? block::kIssue
                                             : block::kComplete;
  BlockEvents in(o.trace, o.salvage);
  std::string device = o.device;
  if (device.empty()) device = std::string(in.header().Get("block.device"));
  if (device.empty()) device = "/dev/loop0";
  // fio reads the name with %256s.
  if (device.size() > 256 || device.find_first_of(" \t\r\n\v\f") != std::string::npos)
    throw Error("device name '" + device +
                "' cannot be in an iolog (white space, or longer than 256 bytes): use --device");
  const bool fua_sync = o.fua == "sync";

  OutputFile file(o.output);
  IologWriter log(&file, device);
  uint64_t requests = 0, other_phase = 0, bad_phase = 0, no_action = 0, empty = 0, absurd = 0;
  uint64_t flush_syncs = 0, preflush_syncs = 0, fua_syncs = 0;
  trace::Event e;
  while (in.Next(&e)) {
    const int64_t p = e.args[kPhaseArg].i;
    if (p != phase) {
      ++(block::PhaseLetter(p) == '?' ? bad_phase : other_phase);
      continue;
    }
    // A size or sector no device has (block::PossibleRequest).
    if (!block::PossibleRequest(e.args[kSectorArg].i, e.args[kBytesArg].i)) {
      ++absurd;
      continue;
    }
    const auto op = static_cast<uint64_t>(e.args[kOpArg].i);
    const auto bytes = static_cast<uint64_t>(e.args[kBytesArg].i);
    const uint64_t offset = static_cast<uint64_t>(e.args[kSectorArg].i) * 512;
    const uint64_t us = IologWriter::Micros(e.start_ns);
    if ((op & block::kFlushOp) || ((op & block::kPreflush) && bytes == 0)) {
      log.Sync(us);  // a flush request, or an empty bio that asks for one
      ++flush_syncs;
      ++requests;
      continue;
    }
    // The operation, in block::FormatRwbs's order.
    const char* action = nullptr;
    if (op & block::kWrite)
      action = "write";
    else if (op & block::kSecureErase)
      action = nullptr;
    else if (op & block::kDiscard)
      action = "trim";
    else if (op & block::kRead)
      action = "read";
    if (!action) {
      ++no_action;
      continue;
    }
    if (bytes == 0) {
      ++empty;
      continue;
    }
    ++requests;
    if (op & block::kPreflush) {
      log.Sync(us);
      ++preflush_syncs;
    }
    log.Io(us, action, offset, bytes);
    if ((op & block::kFua) && (op & block::kWrite) && fua_sync) {
      log.Sync(us);
      ++fua_syncs;
    }
  }
  log.Finish();
  file.Commit();
  in.Warn();
  if (!o.quiet) {
    std::string s = "iorr: exported " + Thousands(requests) + " requests (phase " + o.phase +
                    ") as " + Thousands(log.lines()) + " iolog lines";
    AppendCount(s, flush_syncs, "flushes as sync");
    AppendCount(s, preflush_syncs, "syncs before PREFLUSH writes");
    AppendCount(s, fua_syncs, "syncs after FUA writes");
    AppendCount(s, in.others(), "non-block events skipped");
    AppendCount(s, other_phase, "block events of other phases skipped");
    AppendCount(s, bad_phase, "block events of no known phase skipped");
    AppendCount(s, no_action, "secure-erase or other requests skipped (no fio action)");
    AppendCount(s, empty, "requests of no bytes skipped");
    AppendCount(s, absurd, "requests of impossible sizes or sectors skipped");
    std::fprintf(stderr, "%s\n", s.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterExportBlkparse(CLI::App& exp, Action* action) {
  auto o = std::make_shared<BlkparseOptions>();
  CLI::App* sub = exp.add_subcommand(
      "blkparse",
      "Write the block events of a trace (iorr replay --block-trace) as blkparse's default\n"
      "text output, one line per event in time order; `iorr import blkparse` reads it back.");
  sub->footer(
      "Lines are as blkparse prints them:\n"
      "  7,0    0        1     0.000000000     0  Q  WS 2048 + 8 [tar]\n"
      "device major,minor; CPU (0); sequence number; seconds since the trace's start; pid (0:\n"
      "block events store none); Q queued, D issued, C completed; rwbs as tracefs prints it;\n"
      "then SECTOR + SECTORS and the command, or on C lines the error as the kernel's blktrace\n"
      "stores it (-EIO is 65531). As in blkparse, a request of no sectors shows [COMMAND] alone\n"
      "on Q and D lines and SECTOR [ERROR] on C lines, and an unknown command is (null).\n"
      "Other events are skipped and counted on stderr.");
  sub->add_option("trace", o->trace, "Trace file (- for stdin)")->required();
  sub->add_option("-o,--output", o->output,
                  "File to write (default: stdout); written as FILE.tmp and renamed when complete")
      ->type_name("FILE");
  sub->add_flag("--salvage", o->salvage, "Skip damaged chunks instead of failing");
  sub->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  sub->callback([o, action] { *action = [o] { return RunBlkparse(*o); }; });
}

void RegisterExportFio(CLI::App& exp, Action* action) {
  auto o = std::make_shared<FioOptions>();
  CLI::App* sub = exp.add_subcommand(
      "fio",
      "Write the block requests of one phase of a trace (iorr replay --block-trace) as a fio\n"
      "iolog, version 3, that `fio --read_iolog=FILE` replays onto a device.");
  sub->footer(
      "  fio version 3 iolog\n"
      "  1250 /dev/loop0 add\n"
      "  1250 /dev/loop0 open\n"
      "  1250 /dev/loop0 write 1048576 4096\n"
      "  ...\n"
      "  98001 /dev/loop0 close\n"
      "Times are microseconds since the trace's start (fio waits the gap between lines; it\n"
      "does not wait after a line stamped 0, so times are at least 1); offsets and lengths are\n"
      "bytes. fio issues reads, writes, trims and fsyncs, never PREFLUSH or FUA, so:\n"
      "  flush (BLK_FLUSH, or PREFLUSH without data) -> sync (fsync of a device: a cache flush)\n"
      "  PREFLUSH write -> sync, then write\n"
      "  FUA write      -> write, then sync (--fua sync): how the kernel emulates FUA on devices\n"
      "                    without it; on a device with FUA the sync flushes the whole cache,\n"
      "                    more than the FUA write did. --fua drop: a plain write\n"
      "  secure erase, other operations (write zeroes, zone commands) -> skipped: no fio action\n"
      "Skipped events are counted on stderr. fio 3.33 (Debian 12) reads trims but does not\n"
      "replay them (\"bad ddir: 2\"). Replay with direct I/O, for instance\n"
      "  fio --name=replay --read_iolog=FILE --ioengine=psync --direct=1\n"
      "(--replay_redirect=DEV for another device): it overwrites the device's data.");
  sub->add_option("trace", o->trace, "Trace file (- for stdin)")->required();
  sub->add_option("-o,--output", o->output,
                  "File to write (default: stdout); written as FILE.tmp and renamed when complete")
      ->type_name("FILE");
  sub->add_option("--phase", o->phase,
                  "Requests to write: queue (the bios the file system submitted), issue (the\n"
                  "requests handed to the driver, after merging and the flush machinery) or\n"
                  "complete")
      ->check(CLI::IsMember({"queue", "issue", "complete"}))
      ->capture_default_str();
  sub->add_option("--device", o->device,
                  "File name in the iolog (default: the trace's block.device header, else "
                  "/dev/loop0)")
      ->type_name("PATH");
  sub->add_option("--fua", o->fua, "FUA writes: sync (write, then sync) or drop (a plain write)")
      ->check(CLI::IsMember({"sync", "drop"}))
      ->capture_default_str();
  sub->add_flag("--salvage", o->salvage, "Skip damaged chunks instead of failing");
  sub->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  sub->callback([o, action] { *action = [o] { return RunFio(*o); }; });
}

}  // namespace iorr::cli
