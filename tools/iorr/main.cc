// The iorr command: one CLI11 subcommand per file in this folder. Exceptions stop here:
// one line on stderr and the exit code of DESIGN.md.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "tools/iorr/cli.h"
#include "traces/format.h"

namespace iorr::cli {

Progress::Progress(std::string what, uint64_t total)
    : what_(std::move(what)), total_(total), enabled_(isatty(2) == 1) {
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { Done(); }

void Progress::Update(uint64_t done) {
  if (!enabled_ || (++calls_ & 0xffff) != 0) return;
  Show(done);
}

void Progress::Step(uint64_t done) {
  if (enabled_) Show(done);
}

void Progress::Show(uint64_t done) {
  auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(200))
    return;
  last_ = now;
  shown_ = true;
  if (total_)
    std::fprintf(stderr, "\r%s: %3.0f%%", what_.c_str(), 100.0 * static_cast<double>(done) / total_);
  else
    std::fprintf(stderr, "\r%s: %s", what_.c_str(), Thousands(done).c_str());
  std::fflush(stderr);
}

void Progress::Done() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

std::string Thousands(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path.empty() || path == "-") {
    file_ = stdout;
    return;
  }
  tmp_ = path + ".tmp";
  file_ = std::fopen(tmp_.c_str(), "we");
  if (!file_) throw Error("cannot create " + tmp_ + ": " + std::strerror(errno));
}

OutputFile::~OutputFile() {
  if (file_ && file_ != stdout) {
    std::fclose(file_);
    ::unlink(tmp_.c_str());
  }
}

void OutputFile::Write(std::string& buf) {
  if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), file_) != buf.size())
    throw Error("cannot write " + (tmp_.empty() ? std::string("the output") : tmp_) + ": " +
                std::strerror(errno));
  buf.clear();
}

void OutputFile::Commit() {
  if (file_ == stdout) {
    if (std::fflush(stdout) != 0) throw Error("cannot write the output");
    return;
  }
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    ::unlink(tmp_.c_str());
    throw Error("cannot write " + tmp_ + ": " + std::strerror(errno));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    throw Error("cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(err));
  }
}

}  // namespace iorr::cli

int main(int argc, char** argv) {
  using namespace iorr::cli;
  CLI::App app{
      "iorr: record the file-system calls of a program, replay them on another file system, and\n"
      "model what they would cost on another disk.\n\n"
      "Exit status: 0 success, 1 the workload failed (replay mismatches), 2 bad input;\n"
      "`iorr record` exits with the recorded program's status (see iorr record --help)."};
  // The format it writes and the oldest it reads, from the format's own constants (the text
  // said "trace format 1" from stop 1 on, while traces moved on to format 4).
  app.set_version_flag("--version", "iorr 0.1.0 (writes trace format " +
                                        std::to_string(iorr::trace::kFormatVersion) + ", reads " +
                                        std::to_string(iorr::trace::kMinFormatVersion) + " to " +
                                        std::to_string(iorr::trace::kFormatVersion) + ")");
  app.require_subcommand(1);
  Action action;
  RegisterDump(app, &action);
  RegisterStats(app, &action);
  RegisterReplay(app, &action);
  RegisterCalibrate(app, &action);
  RegisterModel(app, &action);
  RegisterReport(app, &action);
  RegisterRecord(app, &action);
  const CLI::App* record = app.get_subcommand("record");
  CLI::App* import = app.add_subcommand(
      "import",
      "Make a trace from another tool's output (strace logs, JSON lines, blkparse text).");
  import->require_subcommand(1);
  RegisterImportStrace(*import, &action);
  RegisterImportJsonl(*import, &action);
  RegisterImportBlkparse(*import, &action);
  CLI::App* exp = app.add_subcommand(
      "export", "Write a trace in another tool's format (JSON lines, blkparse text, fio iolog).");
  exp->require_subcommand(1);
  RegisterExportJsonl(*exp, &action);
  RegisterExportBlkparse(*exp, &action);
  RegisterExportFio(*exp, &action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // `record` uses 125 for its own errors, as env and timeout do: 1, 2... are the program's.
    bool in_record = record->parsed();
    std::cerr << "iorr: " << e.what()
              << (in_record ? " (see iorr record --help)\n" : " (see iorr --help)\n");
    return in_record ? 125 : kExitBadInput;
  }
  try {
    return action ? action() : kExitOk;
  } catch (const Error& e) {
    std::cout.flush();
    std::cerr << "iorr: " << e.what() << "\n";
    return e.code();
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "iorr: " << e.what() << "\n";
    return kExitBadInput;
  }
}
