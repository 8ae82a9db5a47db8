// Working out the file-system state a trace expects before it starts: every name the trace
// uses but did not create, with its type, a lower bound on its size and, when the recorder saw
// them (--snapshot, getdents64), its mode and link target. Fed the events in recorded order;
// keeps its own view of each process's cwd and fds. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "traces/event.h"

namespace iorr::replay {

// The target of a symlink the trace read but whose target it does not say (format 1 and 2, a
// failed read): made so, the link dangles.
inline const char kUnknownTarget[] = "iorr-unknown-target";

struct InitialEntry {
  char type = '?';      // f d l p s c b, or ? (resolved by Finish)
  uint64_t size = 0;    // regular files: at least this many bytes
  uint32_t mode = 0;    // permission bits, 0 when unknown
  std::string target;   // symlinks
  bool target_cut = false;  // read by a readlink that filled its buffer: may be longer
  bool sure = false;        // type and mode from the snapshot (initial_state), not inferred
  bool followed = false;    // a call that follows symlinks succeeded on the name
  bool dir_use = false;     // ... and took it for a directory (O_DIRECTORY, chdir)
  bool removed = false;     // the trace removed (or renamed away) the name at some point
  bool written = false;     // the trace changed the file's size or data (its size at a SEEK_END
                            // is then not the initial one)
};

class InitialState {
 public:
  explicit InitialState(std::string cwd) : cwd0_(std::move(cwd)) {}
  void Observe(const trace::Event& e);
  // Resolves unknown types (a name with children, or in which a name was found missing, is a
  // directory, else a file) and returns the
  // entries, keyed by normalised root-relative path; parents sort before their children.
  const std::map<std::string, InitialEntry>& Finish();
  // The names the trace made this keep were more than kMaxNameBytesTotal (a hostile trace: each
  // name keeps all its parents, so deep names cost the square of their length): Finish's
  // entries are incomplete, and the prepare step must not go on.
  bool overflowed() const { return overflowed_; }
  // What the trace's first umask call returned (-1: none): the umask every recorded process
  // started with, since none had changed it before that call.
  int64_t first_umask() const { return first_umask_; }
  // Names longer than this (normalised, root-relative) are left out, here and by the replay,
  // which hands the kernel each name whole (from the root): no system call takes a longer one
  // (PATH_MAX, 4096 with its NUL; ENAMETOOLONG).
  static constexpr size_t kMaxName = 4095;
  static constexpr size_t kMaxNameBytesTotal = size_t{1} << 30;

 private:
  struct Fd {
    std::string path;  // normalised
    int64_t offset = 0;
  };
  struct Proc {
    std::string cwd;
    std::unordered_map<int64_t, std::shared_ptr<Fd>> fds;
  };
  enum class Now : uint8_t { kExists, kAbsent };
  Proc& P(uint32_t pid);
  std::string PathOf(Proc& p, int64_t dirfd, std::string_view path);
  bool Known(const std::string& n) const { return now_.count(n) != 0; }
  void Exists(const std::string& n, char type);
  void Absent(const std::string& n);
  void Executable(const std::string& n);  // found executable: 0755 unless a mode is known
  void MakeExecutable(const std::string& n);  // (by Finish, when every type and target is known)
  void Created(const std::string& n, char type);
  // gone: the object is gone (unlink, rmdir), not moved (rename).
  void Removed(const std::string& n, bool gone = true);
  // The name that n stands for at the start (names renamed by the trace: the name the object
  // had then), or "" for an object the trace made; n itself where no rename is involved.
  std::string Origin(const std::string& n) const;
  // An entry for the initial name o (and its parents), not looked up in the current names.
  void AddInitial(const std::string& o, char type);
  void AtLeast(const std::string& n, uint64_t size);
  // The entry of n if it is still the object that was there at the start, else nullptr.
  InitialEntry* Initial(const std::string& n);
  void Followed(const std::string& n, bool dir = false);
  void Written(const std::string& n);
  // A symlink whose target the trace never read (seen in a listing) but that the program
  // followed: made as what it led to. A symlink followed or read through: what it leads to
  // exists, with the bytes read through it (by Finish).
  void ResolveLinks();
  bool HasChild(const std::string& n) const;

  // Whether n may become a key (not too long, the budget not spent); counts it when it may.
  bool Admit(const std::string& n);
  // Counts bytes kept besides names (symlink targets, marks) against the same budget.
  void Spend(size_t bytes);

  std::string cwd0_;
  size_t name_bytes_ = 0;
  bool overflowed_ = false;
  int64_t first_umask_ = -1;
  std::unordered_map<uint32_t, Proc> procs_;
  std::unordered_map<std::string, Now> now_;
  std::map<std::string, InitialEntry> initial_;
  std::unordered_set<std::string> parents_of_absent_;  // counted in name_bytes_ too
  std::unordered_set<std::string> executable_;         // the same
  // Names the trace renamed to and from (and names made under them since): the initial name
  // each stands for, "" for none. Empty in a trace that renames nothing that existed before.
  std::unordered_map<std::string, std::string> origin_;
};

}  // namespace iorr::replay
