// Shared pieces of the iorr command: subcommand registration, exit codes, errors and progress.
// Used from the main thread only.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

namespace iorr::cli {

// Exit codes (DESIGN.md): 0 success, 1 the workload itself failed, 2 bad input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitWorkloadFailed = 1;
inline constexpr int kExitBadInput = 2;

// Thrown by subcommands for bad input; main prints "iorr: <what>" and exits with `code`.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int code = kExitBadInput)
      : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// A subcommand's action returns the process exit code.
using Action = std::function<int()>;

// Each subcommand file defines one of these; main.cc calls them all.
void RegisterDump(CLI::App& app, Action* action);
void RegisterStats(CLI::App& app, Action* action);
void RegisterReplay(CLI::App& app, Action* action);
void RegisterCalibrate(CLI::App& app, Action* action);
void RegisterModel(CLI::App& app, Action* action);
void RegisterReport(CLI::App& app, Action* action);
// `record` exits 125 for its own errors, CLI11 parse errors included (main.cc).
void RegisterRecord(CLI::App& app, Action* action);
// `import` has one sub-subcommand per source format; `import` is the parent CLI::App.
void RegisterImportStrace(CLI::App& import, Action* action);
void RegisterImportJsonl(CLI::App& import, Action* action);
void RegisterImportBlkparse(CLI::App& import, Action* action);
// `export` likewise, one per target format; `export jsonl` is dump --json (dump.cc).
void RegisterExportJsonl(CLI::App& exp, Action* action);
void RegisterExportBlkparse(CLI::App& exp, Action* action);
void RegisterExportFio(CLI::App& exp, Action* action);

// Where an export writes: stdout for "" or "-", else PATH.tmp, renamed to PATH by Commit(), so
// a failed export (destroyed without Commit) never leaves a complete-looking file behind.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);  // throws Error
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Writes buf and clears it; throws Error.
  void Write(std::string& buf);
  // Flushes, closes and renames; throws Error.
  void Commit();

 private:
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
};

// Progress on stderr for work longer than a second, only when stderr is a terminal.
class Progress {
 public:
  explicit Progress(std::string what, uint64_t total = 0);
  ~Progress();
  void Update(uint64_t done);  // cheap: checks the clock every 64k calls at most
  void Step(uint64_t done);    // for work in a few long steps: checks the clock every call
  void Done();

 private:
  std::string what_;
  uint64_t total_;
  void Show(uint64_t done);
  bool enabled_;
  bool shown_ = false;
  uint32_t calls_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

// "1,234,567"
std::string Thousands(uint64_t v);

}  // namespace iorr::cli
