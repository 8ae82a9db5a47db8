// Splits strace text logs into structured records (calls, exits, kills, signals) and reads plain
// or compressed logs line by line. Knows nothing of the call table: arguments stay text.
// Not thread-safe: use one StraceParser or LineSource per thread; instances share no state.
//
// Accepted line shapes (strace 4.x to 6.x):
//   [TID |[pid TID] ][TIME ]BODY
// TID is the pid column of `-f -o` (or `[pid N] ` without -o); TIME is `-ttt` (S.F, ns since the
// epoch), `-tt` or `-t` (HH:MM:SS[.F], ns since midnight), or absent. BODY is one of
//   NAME(ARGS) = RET[<fd path>] [ERRNAME] [(note)]... [<DUR>]
//   NAME(ARGS <unfinished ...>              joined with the same tid's
//   <... NAME resumed>ARGS) = RET ...        (ARGS may start with ", " or be empty)
//   +++ exited with N +++ | +++ killed by SIG [(core dumped)] +++
//   +++ superseded by execve in pid N +++ | --- SIG {...} --- | --- stopped by SIG ---
// Anything else is counted as an error with its line number; nothing is dropped silently.
//
// Record order: by start line. A record is held back while a call that started before it is
// still unfinished; when more than StraceParserOptions::max_held records wait behind one
// unfinished call, that call leaves the ordering and comes out when it completes (or at
// Finish()). So the order is exact start-line order except for calls that stay unfinished
// for a long time (a shell's wait4 around a whole run), which come out at their completion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace iorr::trace {

struct StraceArg {
  std::string_view text;  // one top-level argument, trimmed, as printed
};

struct StraceRecord {
  // kSuperseded: `+++ superseded by execve in pid N +++`: thread `tid` (a group leader) was
  // replaced by thread N, whose execve comes out joined with its resume line.
  enum class Kind { kCall, kExited, kKilled, kSignal, kSuperseded };
  Kind kind = Kind::kCall;
  uint32_t tid = 0;              // 0 when the line has no pid column (see set_default_tid)
  bool has_time = false;         // false: the log has no timestamps, time_ns is meaningless
  bool time_of_day = false;      // -tt/-t: time_ns counts from midnight, not the epoch
  int64_t time_ns = 0;           // -ttt: ns since the epoch; -tt/-t: ns since midnight
  std::string_view name;         // kCall: syscall; kKilled/kSignal: signal name ("SIGKILL")
  std::vector<StraceArg> args;   // kCall: top-level arguments, split at top-level commas
  bool has_ret = false;          // false for '= ?' and never-resumed calls
  int64_t ret = 0;               // as printed: -1 for errors; hex returns as their bits
  std::string_view ret_fd_path;  // -y: "/x/y" of `= 3</x/y>`, escaped (UnescapeStraceText)
  std::string_view err_name;     // "ENOENT", "ERESTARTSYS" or empty
  std::string_view ret_note;     // inside of the first "(...)" after the return value
  bool has_duration = false;     // -T given and known (not `<unavailable>`)
  int64_t duration_ns = 0;
  bool unfinished_never_resumed = false;  // no usable resume line (thread died, log ended)
  int exit_status = 0;                    // kExited
  uint32_t execve_tid = 0;                // kSuperseded: the thread whose execve replaced `tid`
  std::string_view text;                  // process events: the text between the +++/--- markers
  uint64_t line_no = 0;                   // 1-based line of the start (unfinished) line
};

// Decodes a strace quoted string "..." (with C escapes, optionally followed by the `...` of
// truncation) into bytes; returns nullopt if malformed. `truncated`, when given, is set to
// whether the trailing `...` was present.
std::optional<std::string> UnescapeStraceString(std::string_view quoted, bool* truncated = nullptr);
// Decodes escaped text without surrounding quotes (an -y fd path such as `/a\76b`).
std::optional<std::string> UnescapeStraceText(std::string_view escaped);

struct StraceParserOptions {
  // Records held behind one unfinished call before that call is taken out of the ordering.
  size_t max_held = 1 << 16;
};

class StraceParser {
 public:
  StraceParser();
  explicit StraceParser(const StraceParserOptions& options);
  ~StraceParser();
  StraceParser(const StraceParser&) = delete;
  StraceParser& operator=(const StraceParser&) = delete;

  // Tid given to lines without a pid column (a `strace -ff` per-process file).
  void set_default_tid(uint32_t tid) { default_tid_ = tid; }

  // Feed lines in file order (without the trailing newline; a trailing '\r' is ignored).
  // Completed records become available through Next(); the string_views inside a record stay
  // valid until the following call to Feed or Finish. The parser keeps its own copy of `line`.
  void Feed(std::string_view line);
  // End of input: unfinished calls become records with unfinished_never_resumed set.
  void Finish();
  // Pops the next record in start-line order (see the file comment); false if none is ready.
  bool Next(StraceRecord& out);

  // The earliest start time among calls still waiting for their resume line, or INT64_MAX.
  // Every record still to come starts at or after min(this, the time of the next line).
  int64_t OldestUnfinishedNs() const;

  uint64_t lines() const { return lines_; }
  uint64_t errors() const { return errors_; }
  // Lines that were strace's own messages ("strace: Process N attached", found in logs captured
  // from stderr without -o): neither records nor errors.
  uint64_t strace_messages() const { return strace_messages_; }
  struct Error {
    uint64_t line_no;
    std::string reason;
    std::string line;  // the offending line, cut to 512 bytes
  };
  const std::vector<Error>& first_errors() const { return first_errors_; }  // at most 20

 private:
  struct Slot;

  Slot* Acquire();
  void Recycle();
  void AddError(uint64_t line_no, std::string_view reason, std::string_view detail,
                std::string_view line);
  void ParseCall(Slot* slot, size_t body, uint64_t line_no);
  void ParseResume(std::string_view line, size_t body, uint32_t tid, uint64_t line_no,
                   bool bracketed);
  void ParseEvent(Slot* slot, size_t body, uint64_t line_no);
  void CloseUnresumed(Slot* slot);
  void Complete(Slot* slot);
  void DropPending(uint32_t tid);
  void ForgetTid(uint32_t tid);

  StraceParserOptions options_;
  uint32_t default_tid_ = 0;
  uint64_t lines_ = 0;
  uint64_t errors_ = 0;
  uint64_t strace_messages_ = 0;
  std::vector<Error> first_errors_;

  std::vector<std::unique_ptr<Slot>> slots_;     // owns every slot
  std::vector<Slot*> free_;                      // ready for reuse
  std::vector<Slot*> released_;                  // popped by Next(); reused at the next Feed
  std::deque<Slot*> order_;                      // records in output order, complete or not
  std::unordered_map<uint32_t, Slot*> pending_;  // tid -> its unfinished call
  std::string joined_;                           // scratch for unfinished + resumed text
  std::string carry_;                            // a line's start, split off by strace's message
  std::string carried_line_;
  uint64_t carry_line_no_ = 0;
  std::unordered_set<uint32_t> live_tids_;  // `[pid N]` logs: tids seen and not yet exited
  uint32_t last_bracketed_tid_ = 0;
  int64_t day_offset_ns_ = 0;        // -tt/-t: the midnights the log went past
  int64_t last_time_of_day_ns_ = 0;  // the latest time of day seen, with them
};

// Opens a log for reading line by line, decompressing by magic bytes (or, failing that, by
// extension): plain, .gz, .xz, .bz2, .zst. "-" means stdin. Returns nullptr and sets *error for a
// missing or unreadable file. Lines longer than 64 MiB are returned in 64 MiB pieces.
class LineSource {
 public:
  static std::unique_ptr<LineSource> Open(const std::string& path, std::string* error);
  virtual ~LineSource() = default;
  // Next line without its '\n' (the last line may lack one); false at the end or after a read
  // or decompression error. The view is valid until the next call.
  virtual bool Next(std::string_view& line) = 0;
  virtual bool failed() const = 0;        // a read or decompression error ended the input
  virtual std::string error() const = 0;  // its message
};

}  // namespace iorr::trace
