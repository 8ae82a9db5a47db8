// `iorr record -o TRACE -- COMMAND [ARGS...]`: the launcher. Writes the trace's header record,
// sets up the shared state page and the environment of recorder/protocol.h, runs COMMAND with
// libiorr-preload.so (whose processes append their chunks to the same file), waits as their
// subreaper until every process of the tree has exited, then counts what was recorded and writes
// the end record. Single-threaded; the signal handlers only use async-signal-safe calls.
#include <elf.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "recorder/patch_plan.h"
#include "recorder/protocol.h"
#include "tools/iorr/cli.h"
#include "traces/encoder.h"
#include "traces/format.h"
#include "traces/header.h"
#include "traces/json.h"
#include "traces/mountinfo.h"
#include "traces/reader.h"
#include "traces/repair.h"

extern char** environ;

namespace iorr::cli {
namespace {

// Whether the program (COMMAND, found on PATH as execvp would) names rtld-audit modules of its own
// in its dynamic section (DT_AUDIT, DT_DEPAUDIT: -Wl,--audit), which glibc loads after
// LD_AUDIT's: the chained audit module must then go first (recorder/audit.cc). Only the
// command iorr starts is read; a program it execs later with such modules is not (README).
bool NamesAuditModules(const std::string& command) {
  std::string path = command;
  if (command.find('/') == std::string::npos) {
    path.clear();
    const char* env_path = std::getenv("PATH");
    std::string_view dirs = env_path ? env_path : "/usr/local/bin:/usr/bin:/bin";
    while (path.empty()) {
      size_t colon = dirs.find(':');
      std::string dir(dirs.substr(0, colon));
      std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
      if (::access(candidate.c_str(), X_OK) == 0) path = candidate;
      if (colon == std::string_view::npos) break;
      dirs.remove_prefix(colon + 1);
    }
    if (path.empty()) return false;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool found = false;
  ElfW(Ehdr) eh;
  if (::pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
      eh.e_phentsize == sizeof(ElfW(Phdr)) && eh.e_phnum <= 64) {
    ElfW(Phdr) ph[64];
    size_t bytes = eh.e_phnum * sizeof(ElfW(Phdr));
    if (::pread(fd, ph, bytes, static_cast<off_t>(eh.e_phoff)) == static_cast<ssize_t>(bytes)) {
      for (int i = 0; i < eh.e_phnum && !found; ++i) {
        if (ph[i].p_type != PT_DYNAMIC) continue;
        std::vector<ElfW(Dyn)> dyn(std::min<size_t>(ph[i].p_filesz / sizeof(ElfW(Dyn)), 4096));
        ssize_t want = static_cast<ssize_t>(dyn.size() * sizeof(ElfW(Dyn)));
        if (::pread(fd, dyn.data(), static_cast<size_t>(want),
                    static_cast<off_t>(ph[i].p_offset)) != want)
          break;
        for (const ElfW(Dyn) & d : dyn) {
          if (d.d_tag == DT_NULL) break;
          if (d.d_tag == DT_AUDIT || d.d_tag == DT_DEPAUDIT) found = true;
        }
      }
    }
  }
  ::close(fd);
  return found;
}

// A reading of the TSC and CLOCK_MONOTONIC at the same moment: the TSC between two monotonic
// readings, taken as their midpoint (the tightest of a few tries).
struct ClockPair {
  int64_t mono;
  uint64_t tsc;
};
ClockPair ReadClockPair() {
  auto mono = [] {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  ClockPair best{};
  int64_t best_spread = INT64_MAX;
  for (int i = 0; i < 5; ++i) {
    int64_t a = mono();
    uint64_t c = __builtin_ia32_rdtsc();
    int64_t b = mono();
    if (b - a < best_spread) {
      best_spread = b - a;
      best = {a + (b - a) / 2, c};
    }
  }
  return best;
}

// Whether the TSC counts alike on every CPU this process may run on, where the kernel does not
// say so by keeping time with it. A virtual machine's kernel may keep kvm-clock (itself the TSC,
// scaled per machine) and be told that the TSC is unstable (a VM that may be restored from a
// snapshot elsewhere): the recorder then read clock_gettime twice per call, 29.5 ns a read
// against 12 to 20 with the TSC, and `tar xf` cost 1.11x instead of about 1.05x (stop 23). The
// check is the kernel's own at boot (check_tsc_warp): a thread on the first CPU and one on each
// other CPU take turns through a shared word, each reading the TSC once it sees the other's
// reading; a reading below the other's last one is a warp. Bounded: 20 ms per CPU, and a CPU
// whose thread could not take its turns in time counts as not checked. `*why`: what was seen.
bool TscInSync(std::string* why) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    *why = "no CPU affinity to check";
    return false;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  constexpr int kTurns = 4000;  // about 3 ms between two vCPUs here, within the 5 ms calibration
  long worst = 0;
  for (size_t i = 1; i < cpus.size(); ++i) {
    std::atomic<uint64_t> last{0};
    std::atomic<int> turn{0};  // even: the first CPU's turn; odd: the other's; -1: give up
    std::atomic<long> warp{0};
    std::atomic<int> ready{0};
    auto side = [&](int cpu, int parity) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      if (sched_setaffinity(0, sizeof(one), &one) != 0) {
        turn.store(-1);
        ready.fetch_add(1);
        return;
      }
      // Both sides in place first, yielding meanwhile: a side spinning on the launcher's CPU
      // kept the launcher from starting the other side until the scheduler's next tick (3 ms a
      // side on stop 24's host).
      ready.fetch_add(1);
      while (ready.load() < 2) sched_yield();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      for (int k = parity; k < kTurns; k += 2) {
        int t;
        for (unsigned spin = 0; (t = turn.load(std::memory_order_acquire)) != k; ++spin) {
          if (t < 0) return;
          if ((spin & 1023) == 1023 && std::chrono::steady_clock::now() > deadline) {
            turn.store(-1);
            return;
          }
        }
        __builtin_ia32_lfence();
        uint64_t now = __builtin_ia32_rdtsc();
        uint64_t before = last.load(std::memory_order_relaxed);
        if (now < before) warp.store(std::max<long>(warp.load(), static_cast<long>(before - now)));
        last.store(now, std::memory_order_relaxed);
        turn.store(k + 1, std::memory_order_release);
      }
    };
    std::thread a(side, cpus[0], 0), b(side, cpus[i], 1);
    a.join();
    b.join();
    if (turn.load() != kTurns) {
      *why = "CPUs " + std::to_string(cpus[0]) + " and " + std::to_string(cpus[i]) +
             " did not take turns within 20 ms";
      return false;
    }
    worst = std::max(worst, warp.load());
  }
  if (worst > 0) {
    *why = "the TSC of one CPU ran " + std::to_string(worst) + " ticks behind another's";
    return false;
  }
  *why = "no warp in " + std::to_string(kTurns) + " turns between CPU " +
         (cpus.empty() ? std::string("0") : std::to_string(cpus[0])) + " and each of the other " +
         std::to_string(cpus.empty() ? 0 : cpus.size() - 1);
  return true;
}

// How the recorded calls are timed: "tsc" where the kernel keeps time with the TSC (then it is
// invariant and synchronised across CPUs) or where TscInSync finds it so, else
// "clock_gettime". IORR_CLOCK=clock_gettime chooses the latter (a comparison, or a machine
// whose TSC the check cannot be trusted on). *why: the reason, for the trace's header.
bool UseTsc(std::string* why) {
  const char* forced = std::getenv("IORR_CLOCK");
  if (forced != nullptr && std::string_view(forced) == "clock_gettime") {
    *why = "IORR_CLOCK=clock_gettime";
    return false;
  }
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  std::getline(in, source);
  if (source == "tsc") {
    *why = "clocksource tsc";
    return true;
  }
  std::string seen;
  bool ok = TscInSync(&seen);
  *why = "clocksource " + source + "; " + seen;
  return ok;
}

// The clock the recorded calls are timed with: the TSC (tsc_ns_q32: ns per tick x 2^32) or
// clock_gettime (0), and why.
struct ClockChoice {
  uint64_t tsc_ns_q32 = 0;
  std::string why;
};

// ns per TSC tick x 2^32 (see UseTsc), measured against CLOCK_MONOTONIC over at least 5 ms
// from `start` (taken when the launcher began, so that its set-up counts towards them; about
// 10 ppm: the library re-reads both clocks every 20 ms, so errors stay well under 1 us); 0 when
// the TSC is not used.
uint64_t CalibrateTsc(const ClockPair& start, bool use_tsc) {
  if (!use_tsc) return 0;
  ClockPair end;
  do {
    end = ReadClockPair();
  } while (end.mono - start.mono < 5'000'000);
  if (end.tsc <= start.tsc) return 0;
  return (static_cast<uint64_t>(end.mono - start.mono) << 32) / (end.tsc - start.tsc);
}

// IORR_CACHE=0: no file is read or written (iorr-clock, iorr-sites).
bool CacheOff() {
  const char* knob = std::getenv("IORR_CACHE");
  return knob != nullptr && std::string_view(knob) == "0";
}

// ${XDG_CACHE_HOME:-$HOME/.cache}/NAME, or "" (IORR_CACHE=0, or no such directory to name).
std::string CachePath(const char* name) {
  if (CacheOff()) return "";
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && cache[0] == '/') return std::string(cache) + "/" + name;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache/" + name;
  return "";
}

// The choice is kept for the rest of the boot in a small file (ClockCachePath), so that only a
// boot's first recording pays for the check and the calibration (about 8 ms together; a
// recording's start took 28 ms on stop 24's host). The boot's identity (boot_id) keys it: a TSC
// that passed the check stays in sync until the machine restarts, and its rate is fixed (the
// library re-anchors on CLOCK_MONOTONIC every 20 ms, so a rate a few ppm off moves no timestamp
// by more than 0.1 us). IORR_CLOCK=check checks and calibrates again and rewrites the file.
std::string ClockCachePath() {
  const char* run = std::getenv("XDG_RUNTIME_DIR");  // per user, emptied at boot
  if (!CacheOff() && run != nullptr && run[0] == '/') return std::string(run) + "/iorr-clock";
  return CachePath("iorr-clock");
}

// Writes `text` to `path` whole under a temporary name, then renames it: a reader sees the old
// file or the new. The directory is made if missing (~/.cache); failures are ignored.
void ReplaceFile(const std::string& path, std::string_view text) {
  ::mkdir(path.substr(0, path.rfind('/')).c_str(), 0700);
  std::string tmp = path + "." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
}

// The boot and the kernel's clocksource now: the kept choice holds while both are the same (a
// kernel whose watchdog finds the TSC unstable mid-boot moves to another clocksource, and the
// choice is made again).
std::string ClockKey() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id, source;
  std::getline(in, id);
  std::ifstream cs("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::getline(cs, source);
  return id.size() == 36 ? id + " " + source : "";
}

constexpr std::string_view kClockCacheTag = "iorr-clock 1";

// The kept choice: its lines are the tag, the boot_id, the multiplier (0: clock_gettime) and the
// reason. False when there is none for this boot, or it does not read back whole.
bool ReadClockCache(const std::string& path, const std::string& boot, ClockChoice* c) {
  std::ifstream in(path);
  std::string tag, id, mult, why;
  if (!std::getline(in, tag) || tag != kClockCacheTag || !std::getline(in, id) || id != boot ||
      !std::getline(in, mult) || !std::getline(in, why) || why.empty() || mult.empty() ||
      mult.size() > 20 || mult.find_first_not_of("0123456789") != std::string::npos)
    return false;
  c->tsc_ns_q32 = std::stoull(mult);
  c->why = why;
  // 0 (clock_gettime) or a TSC of 100 MHz to 100 GHz.
  return c->tsc_ns_q32 == 0 ||
         (c->tsc_ns_q32 >= (uint64_t{1} << 32) / 100 && c->tsc_ns_q32 <= (uint64_t{10} << 32));
}

void WriteClockCache(const std::string& path, const std::string& boot, const ClockChoice& c) {
  ReplaceFile(path, std::string(kClockCacheTag) + "\n" + boot + "\n" +
                        std::to_string(c.tsc_ns_q32) + "\n" + c.why + "\n");
}

ClockChoice ChooseClock(const ClockPair& start) {
  ClockChoice c;
  const char* knob = std::getenv("IORR_CLOCK");
  std::string_view forced = knob != nullptr ? knob : "";
  if (forced == "clock_gettime") {
    c.why = "IORR_CLOCK=clock_gettime";
    return c;
  }
  const std::string path = ClockCachePath(), boot = ClockKey();
  const bool keep = !path.empty() && !boot.empty();
  if (keep && forced != "check" && ReadClockCache(path, boot, &c)) {
    c.why += "; kept from this boot's first check";
    return c;
  }
  const bool use_tsc = UseTsc(&c.why);
  c.tsc_ns_q32 = CalibrateTsc(start, use_tsc);
  if (use_tsc && c.tsc_ns_q32 == 0) c.why += "; calibration failed";
  if (keep) WriteClockCache(path, boot, c);
  return c;
}

namespace rec = iorr::recorder;

// ---- the decoded system call sites, kept from one recording for the next ----
// A recording's processes publish in the shared state the system call sites they decode in each
// loaded object, keyed by its build ID and layout (recorder/patch_plan.h), and the launcher
// decodes libc and the loader while the program starts (PrePlan). That decoding took 10 to 13 ms
// of CPU on stop 24's host, on the second of two CPUs while the program started on the first: it
// held up the start of the program's writer thread by 4 ms. The decodings are kept in
// ${XDG_CACHE_HOME:-~/.cache}/iorr-sites for the next recording, for one build of the library
// (its size and modification time key the file): a recording that finds its objects there
// decodes nothing. A process checks every site against the bytes of its own copy of the object
// before rewriting it (FromCache), as for a decoding another process published, so a file that
// does not match its objects means decoding again, never a wrong rewrite; a file that does not
// parse is ignored, and replaced at the end.
struct SitesKey {
  uint64_t lib_size = 0;
  int64_t lib_mtime_ns = 0;
};
struct SitesFileHead {
  char magic[8];
  SitesKey key;
  uint32_t objects, sites;
};
struct SavedObject {
  uint32_t patchable, build_id_len, skipped, count;
  uint8_t build_id[32];
  uint64_t map_size, text_lo, text_hi;
  char why[88];
};
constexpr char kSitesMagic[8] = {'I', 'O', 'R', 'R', 'S', 'I', 'T', '1'};
// At most half the shared state's room is filled from the file: the rest stays for the objects
// of this recording's programs that are not in it (with no room left, each process would decode
// them itself).
constexpr uint32_t kKeptObjects = rec::kPatchObjects / 2, kKeptSites = rec::kPatchSites / 2;
static_assert(sizeof(rec::PatchSite) == 20 && sizeof(SavedObject) == 160);

bool KeyOf(const std::string& lib, SitesKey* k) {
  struct stat st {};
  if (::stat(lib.c_str(), &st) != 0) return false;
  k->lib_size = static_cast<uint64_t>(st.st_size);
  k->lib_mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return true;
}

// Fills the fresh shared state's patch cache from the file; returns the objects taken.
uint32_t LoadSites(rec::SharedState* sh, const std::string& path, const SitesKey& key) {
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SitesFileHead head{};
  if (data.size() < sizeof head || data.size() > (4u << 20)) return 0;
  std::memcpy(&head, data.data(), sizeof head);
  if (std::memcmp(head.magic, kSitesMagic, sizeof kSitesMagic) != 0 ||
      head.key.lib_size != key.lib_size || head.key.lib_mtime_ns != key.lib_mtime_ns ||
      head.objects > kKeptObjects || head.sites > kKeptSites ||
      data.size() !=
          sizeof head + head.objects * sizeof(SavedObject) + head.sites * sizeof(rec::PatchSite))
    return 0;
  std::vector<SavedObject> objs(head.objects);
  std::memcpy(objs.data(), data.data() + sizeof head, head.objects * sizeof(SavedObject));
  uint64_t total = 0;
  for (const SavedObject& o : objs) {
    if (o.build_id_len == 0 || o.build_id_len > sizeof o.build_id || o.patchable > 1) return 0;
    total += o.count;
  }
  if (total != head.sites) return 0;
  rec::PatchCache& c = sh->patch;
  std::memcpy(c.site, data.data() + sizeof head + head.objects * sizeof(SavedObject),
              head.sites * sizeof(rec::PatchSite));
  uint32_t first = 0;
  for (uint32_t i = 0; i < head.objects; ++i) {
    const SavedObject& o = objs[i];
    rec::PatchObject& e = c.object[i];
    e.patchable = o.patchable;
    std::memcpy(e.build_id, o.build_id, sizeof e.build_id);
    e.build_id_len = o.build_id_len;
    e.skipped = o.skipped;
    e.map_size = o.map_size;
    e.text_lo = o.text_lo;
    e.text_hi = o.text_hi;
    e.first = first;
    e.count = o.count;
    std::memcpy(e.why, o.why, sizeof e.why);
    e.why[sizeof e.why - 1] = '\0';
    first += o.count;
    e.state.store(2, std::memory_order_release);
  }
  c.next_site.store(first, std::memory_order_relaxed);
  return head.objects;
}

// Writes the finished decodings of the recording to the file when this recording made new ones
// (the entries after the `loaded` ones): those first, then the kept ones, within kKeptObjects
// and kKeptSites (an object not used for a while falls out as new ones come).
void SaveSites(const rec::SharedState* sh, const std::string& path, const SitesKey& key,
               uint32_t loaded) {
  const rec::PatchCache& c = sh->patch;
  auto done = [](const rec::PatchObject& e) {
    return e.state.load(std::memory_order_acquire) == 2 && e.first <= rec::kPatchSites &&
           e.count <= rec::kPatchSites - e.first && e.build_id_len != 0 &&
           e.build_id_len <= sizeof e.build_id;
  };
  bool any_new = false;
  for (uint32_t i = loaded; i < rec::kPatchObjects; ++i) any_new |= done(c.object[i]);
  if (!any_new) return;
  std::vector<SavedObject> objs;
  std::string sites;
  for (uint32_t k = 0; k < rec::kPatchObjects; ++k) {
    const rec::PatchObject& e = c.object[(k + loaded) % rec::kPatchObjects];  // the new first
    if (!done(e) || objs.size() == kKeptObjects ||
        sites.size() / sizeof(rec::PatchSite) + e.count > kKeptSites)
      continue;
    SavedObject o{};
    o.patchable = e.patchable != 0 ? 1 : 0;
    o.build_id_len = e.build_id_len;
    o.skipped = e.skipped;
    o.count = e.count;
    std::memcpy(o.build_id, e.build_id, sizeof o.build_id);
    o.map_size = e.map_size;
    o.text_lo = e.text_lo;
    o.text_hi = e.text_hi;
    std::memcpy(o.why, e.why, sizeof o.why);
    o.why[sizeof o.why - 1] = '\0';
    objs.push_back(o);
    sites.append(reinterpret_cast<const char*>(&c.site[e.first]), e.count * sizeof(rec::PatchSite));
  }
  SitesFileHead head{};
  std::memcpy(head.magic, kSitesMagic, sizeof head.magic);
  head.key = key;
  head.objects = static_cast<uint32_t>(objs.size());
  head.sites = static_cast<uint32_t>(sites.size() / sizeof(rec::PatchSite));
  std::string text(reinterpret_cast<const char*>(&head), sizeof head);
  text.append(reinterpret_cast<const char*>(objs.data()), objs.size() * sizeof(SavedObject));
  text += sites;
  ReplaceFile(path, text);
}

// Overrides where the launcher looks for the library (tests, uninstalled builds).
constexpr const char* kEnvPreloadLib = "IORR_PRELOAD_LIB";
constexpr const char* kLibName = "libiorr-preload.so";
// The fds the children inherit go below min(soft RLIMIT_NOFILE, this) - 8: a process's fd table
// grows to its highest fd and is copied at every fork, so a limit of 1M must not mean fd 1M.
constexpr long kHighFdCeiling = 4096;
constexpr size_t kNoteBytes = 64 << 10;  // snapshot lines per note record, at most

struct Options {
  std::string trace;
  uint32_t time_unit_ns = 1000;
  std::vector<std::string> snapshots;
  bool quiet = false;
  bool json = false;  // the summary as JSON
  double linger = -1;  // seconds to go on recording after COMMAND exits; < 0: until all exit
  std::vector<std::string> command;
  bool dash_dash = false;  // the command came after "--"
};

[[noreturn]] void Fail(const std::string& what) { throw Error(what, rec::kExitRecorderError); }

std::string ErrnoText(int err) { return std::strerror(err); }

int64_t NowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// argv joined by spaces, each word single-quoted when the shell would otherwise change it.
std::string ShellQuote(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& w : argv) {
    if (!out.empty()) out.push_back(' ');
    bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::strchr("_@%+=:,./-", c) != nullptr;
    });
    if (plain) {
      out += w;
      continue;
    }
    out.push_back('\'');
    for (char c : w) {
      if (c == '\'')
        out += "'\\''";
      else
        out.push_back(c);
    }
    out.push_back('\'');
  }
  return out;
}

bool PseudoFileSystem(std::string_view fstype) {
  static constexpr std::string_view kPseudo[] = {
      "proc",       "sysfs",       "devpts", "mqueue",     "debugfs", "tracefs",
      "securityfs", "pstore",      "bpf",    "configfs",   "fusectl", "hugetlbfs",
      "autofs",     "binfmt_misc", "nsfs",   "rpc_pipefs", "efivarfs"};
  if (fstype.substr(0, 6) == "cgroup") return true;
  return std::find(std::begin(kPseudo), std::end(kPseudo), fstype) != std::end(kPseudo);
}

// One "mount:<mount point>" field per real file system in /proc/self/mountinfo; a mount point
// mounted over keeps the value of the mount that is visible (the last one).
void AddMountFields(trace::Header& h) {
  std::vector<trace::MountEntry> mounts;
  trace::ReadMountinfo(&mounts);
  for (const trace::MountEntry& m : mounts) {
    if (PseudoFileSystem(m.fstype)) continue;
    h.Set(std::string(trace::key::kMountPrefix) + m.point,
          m.source + " " + m.fstype + " " + m.options + "," + m.super_options);
  }
}

// Duplicates fd (without FD_CLOEXEC) to a high number, out of the way of the program's own fds.
int DupHigh(int fd) {
  long soft = kHighFdCeiling;
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      rl.rlim_cur < static_cast<rlim_t>(soft))
    soft = static_cast<long>(rl.rlim_cur);
  // 32 below the limit, not at its top: Valgrind keeps the top 12 fds of a limit it cannot raise
  // (soft equal to hard, e.g. ulimit -n 4096) for itself and refuses its guest's calls on them
  // (EBADF), so a guest recorded through fds there lost all its events (until stop 22).
  const long bases[] = {std::max(soft - 32, 100L), soft - 32, soft / 2, 10, 3};
  int err = EMFILE;
  for (long base : bases) {
    if (base < 3) continue;
    int high = fcntl(fd, F_DUPFD, base);
    if (high >= 0) return high;
    err = errno;
  }
  errno = err;
  return -1;
}

void WriteAll(int fd, const void* data, size_t n, const std::string& what) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) Fail("cannot write " + what + ": " + ErrnoText(w < 0 ? errno : ENOSPC));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Returns the bytes written.
size_t WriteNote(int fd, std::string_view text, const std::string& trace) {
  std::vector<uint8_t> buf(text.size() + 16);
  size_t n =
      trace::FrameRecord(trace::RecordType::kNote, reinterpret_cast<const uint8_t*>(text.data()),
                         text.size(), buf.data());
  WriteAll(fd, buf.data(), n, trace);
  return n;
}

// The recorder library: $IORR_PRELOAD_LIB, else <dir of this executable>/../lib.
std::string FindLibrary() {
  std::string path;
  const char* env = std::getenv(kEnvPreloadLib);
  if (env != nullptr && *env != '\0') {
    path = env;
  } else {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
      Fail(std::string("cannot find the recorder library: /proc/self/exe: ") + ErrnoText(errno) +
           " (set " + kEnvPreloadLib + ")");
    std::string dir(exe, static_cast<size_t>(n));
    dir.resize(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
    path = dir + "/../lib/" + kLibName;
  }
  char real[PATH_MAX];
  struct stat st {};
  if (realpath(path.c_str(), real) == nullptr || ::stat(real, &st) != 0)
    Fail("cannot find the recorder library " + path + ": " + ErrnoText(errno) +
         (env != nullptr && *env != '\0' ? "" : std::string(" (set ") + kEnvPreloadLib + ")"));
  if (!S_ISREG(st.st_mode)) Fail(std::string("the recorder library ") + real + " is not a file");
  std::string lib = real;
  if (lib.find_first_of(": \t") != std::string::npos)
    Fail("the recorder library's path cannot go into LD_PRELOAD (it holds a colon or a space): " +
         lib);
  return lib;
}

// ---- --snapshot ----

struct SnapshotResult {
  uint64_t entries = 0;
  uint64_t errors = 0;
  uint64_t bytes = 0;  // of note records
  double seconds = 0;
};

// Paths are one per line: a backslash and a newline in a name are written as \\ and \n.
void AppendPath(std::string& out, const char* path) {
  for (const char* p = path; *p; ++p) {
    if (*p == '\\')
      out += "\\\\";
    else if (*p == '\n')
      out += "\\n";
    else
      out.push_back(*p);
  }
}

int CompareNames(const FTSENT** a, const FTSENT** b) {
  return std::strcmp((*a)->fts_name, (*b)->fts_name);
}

// Walks dir (its own symlink followed, no other; one file system) and stores one
// `initial_state` event per name (path, mode with type bits, size, symlink target) in a stream
// of pid 0, so that a replay can recreate the starting tree. Notes mark its beginning, end and
// time ("snapshot-begin DIR", "snapshot-end DIR SECONDS") and what could not be read
// ("snapshot-error REASON PATH").
SnapshotResult Snapshot(int fd, const std::string& dir, const std::string& trace,
                        int64_t start_mono, uint32_t time_unit, uint64_t stream) {
  SnapshotResult r;
  int64_t start = NowNs(CLOCK_MONOTONIC);
  r.bytes += WriteNote(fd, "snapshot-begin " + dir, trace);
  trace::ChunkLimits limits;
  trace::ChunkEncoder enc;
  trace::ChunkCompressor zc;
  if (!enc.Init(limits, time_unit) || !zc.Init(limits.zstd_level)) Fail("out of memory");
  enc.Begin(stream, 0, 0);
  std::vector<uint8_t> out(enc.MaxOutputBytes());
  auto flush = [&] {
    if (enc.empty()) return;
    int64_t now = NowNs(CLOCK_MONOTONIC) - start_mono;  // later chunks all start after this
    size_t n = enc.Finish(zc, now, out.data(), out.size());
    if (n == 0) Fail("snapshot: compression failed");
    WriteAll(fd, out.data(), n, trace);
    r.bytes += n;
  };
  char target[PATH_MAX + 1];
  auto add = [&](const char* path, const struct stat& st) {
    trace::Event e;
    e.call = trace::CallId::initial_state;
    e.start_ns = e.end_ns = NowNs(CLOCK_MONOTONIC) - start_mono;
    e.args[0].s = path;
    e.args[1].i = st.st_mode;
    e.args[2].i = st.st_size;
    e.args[3].null = true;
    if (S_ISLNK(st.st_mode)) {
      ssize_t n = readlink(path, target, sizeof(target) - 1);
      if (n >= 0) {
        e.args[3].null = false;
        e.args[3].s = std::string_view(target, static_cast<size_t>(n));
      }
    }
    auto res = enc.Add(e);
    if (res == trace::ChunkEncoder::AddResult::kFull) {
      flush();
      res = enc.Add(e);
    }
    if (res != trace::ChunkEncoder::AddResult::kOk) ++r.errors;
    ++r.entries;
  };
  auto error = [&](int err, const char* path) {
    ++r.errors;
    std::string reason = ErrnoText(err);
    std::replace(reason.begin(), reason.end(), ' ', '_');  // one word
    std::string line = "snapshot-error " + reason + " ";
    AppendPath(line, path);
    r.bytes += WriteNote(fd, line, trace);
  };
  std::string root = dir;
  char* roots[] = {root.data(), nullptr};
  FTS* fts = fts_open(roots, FTS_PHYSICAL | FTS_COMFOLLOW | FTS_XDEV | FTS_NOCHDIR, CompareNames);
  if (fts == nullptr) Fail("--snapshot " + dir + ": " + ErrnoText(errno));
  while (FTSENT* e = fts_read(fts)) {
    switch (e->fts_info) {
      case FTS_DP:
        continue;
      case FTS_NS:
      case FTS_ERR:
      case FTS_DNR:
        if (e->fts_info == FTS_DNR) add(e->fts_path, *e->fts_statp);  // known, its entries not
        error(e->fts_errno, e->fts_path);
        continue;
      default:
        add(e->fts_path, *e->fts_statp);
    }
  }
  int err = errno;
  fts_close(fts);
  if (err != 0) error(err, dir.c_str());
  flush();
  r.seconds = static_cast<double>(NowNs(CLOCK_MONOTONIC) - start) / 1e9;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.6f", r.seconds);
  r.bytes += WriteNote(fd, "snapshot-end " + dir + " " + secs, trace);
  return r;
}

// ---- signals ----

constexpr int kForwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
constexpr int kIgnored[] = {SIGINT, SIGQUIT};  // the terminal sends them to the program too
// Every signal whose disposition the launcher changes before the fork; the child restores them.
constexpr int kChanged[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGINT, SIGQUIT, SIGCHLD};

std::atomic<pid_t> g_main_child{0};  // 0 once the main child has been reaped
struct rlimit g_program_fsize {};    // RLIMIT_FSIZE and SIGXFSZ's action as iorr found them
struct sigaction g_program_xfsz {};
std::atomic<bool> g_alarm{false};
char g_children_path[64];  // /proc/self/task/<pid>/children: our children, orphans included

// Calls each(pid) for each of the launcher's children (orphans re-parented to it included);
// returns how many there are. Only async-signal-safe calls (a signal handler's SignalChildren).
template <class Each>
int ForEachChild(Each each) {
  int fd = ::open(g_children_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  int count = 0;
  long pid = -1;
  char buf[256];
  auto end_of_pid = [&] {
    if (pid > 0) {
      ++count;
      each(static_cast<pid_t>(pid));
    }
    pid = -1;
  };
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9')
        pid = (pid < 0 ? 0 : pid * 10) + (buf[i] - '0');
      else
        end_of_pid();
    }
  }
  end_of_pid();
  ::close(fd);
  return count;
}

// Sends sig (0: none) to each of the launcher's children; returns how many there are.
int SignalChildren(int sig) {
  return ForEachChild([sig](pid_t pid) {
    if (sig != 0) kill(pid, sig);
  });
}

// To the program while it runs; afterwards to the processes it left behind.
extern "C" void ForwardSignal(int sig) {
  int saved = errno;
  pid_t child = g_main_child.load();
  if (child > 0)
    kill(child, sig);
  else
    SignalChildren(sig);
  errno = saved;
}

extern "C" void OnAlarm(int) { g_alarm.store(true); }

// Ctrl-C once the command has exited: close the trace soon without what is left running
// (CloseToLeftovers). The terminal sends it to those processes too when they are in its
// foreground group: the grace lets them die, and flush, first.
std::atomic<bool> g_interrupted{false};
extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

// The launcher's children after the command's exit (orphans re-parented to it): pid and name.
std::vector<std::pair<int, std::string>> LeftProcesses() {
  std::vector<pid_t> pids;
  ForEachChild([&](pid_t pid) { pids.push_back(pid); });
  std::vector<std::pair<int, std::string>> out;
  for (pid_t pid : pids) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    out.emplace_back(pid, name.empty() ? "?" : name);
  }
  return out;
}

// Closes the trace to the processes still running: their writers append nothing from now on
// (SharedState::closed), and the trace's bytes so far move to a new file under the trace's
// name, so that a record one of them was already writing lands in the old file, which no name
// leads to any more, and never after the end record. (A count of writers at work, waited for,
// would stay up for good where a writer died inside its write: another thread's exec or
// exit_group ends it there.) A record cut short at the copy's end is repaired as a torn one
// (ScanTrace). Returns false, with a warning, where the copy cannot be made: the trace then
// stays as it is, and may get their records after its end record.
bool CloseToLeftovers(rec::SharedState* shared, int* fd, const std::string& trace) {
  shared->closed.store(1, std::memory_order_seq_cst);
  auto fail = [&](const std::string& what, const std::string& tmp) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    std::fprintf(stderr,
                 "iorr: warning: cannot close %s to the processes left running (%s: %s): "
                 "their last records may come after its end record\n",
                 trace.c_str(), what.c_str(), ErrnoText(errno).c_str());
    return false;
  };
  struct stat st {};
  if (::fstat(*fd, &st) != 0) return fail("fstat", "");
  if (!S_ISREG(st.st_mode)) return fail("not a regular file", "");
  int in = ::open(("/proc/self/fd/" + std::to_string(*fd)).c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return fail("reopen", "");
  // Beside the file the trace's fd names, and renamed over that name: a trace path that is a
  // symlink stays one (a review: --linger replaced the link with the new file, and left the
  // link's target without an end record). Another hard link keeps the old file.
  char resolved[PATH_MAX];
  std::string name = ::realpath(trace.c_str(), resolved) != nullptr ? resolved : trace;
  std::string tmp = name + ".closing." + std::to_string(getpid());
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
  if (out < 0) {
    ::close(in);
    return fail("create " + tmp, "");
  }
  off_t left = st.st_size;
  while (left > 0) {
    ssize_t n = copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(left), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    left -= n;
  }
  int copy_errno = errno;
  ::close(in);
  if (left > 0) {
    ::close(out);
    errno = copy_errno;
    return fail("copy", tmp);
  }
  if (::rename(tmp.c_str(), name.c_str()) != 0) {
    ::close(out);
    return fail("rename", tmp);
  }
  ::close(*fd);
  *fd = out;  // at its end: the launcher's notes and end record follow
  return true;
}

void SetHandler(int sig, void (*handler)(int), struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  for (int s : kForwarded) sigaddset(&sa.sa_mask, s);
  sa.sa_flags = 0;  // no SA_RESTART: waitid returns EINTR and the loop looks at the flags
  sigaction(sig, &sa, old);
}

// ---- the child ----

// Between vfork and exec, on the launcher's memory and stack (Run): only system calls, which
// write nothing the launcher keeps but errno. glibc's execvpe searches PATH in a buffer on the
// stack, as posix_spawnp does in the same kind of child.
[[noreturn]] void ExecChild(char* const* argv, char* const* envp, int err_pipe,
                            const struct sigaction* saved, const sigset_t& mask) {
  for (int s : kChanged) sigaction(s, &saved[s], nullptr);
  sigaction(SIGXFSZ, &g_program_xfsz, nullptr);
  setrlimit(RLIMIT_FSIZE, &g_program_fsize);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  execvpe(argv[0], argv, envp);  // PATH search as env(1) does
  int err = errno;
  while (::write(err_pipe, &err, sizeof err) < 0 && errno == EINTR) {
  }
  _exit(rec::kExitNotFound);
}

// vfork, not fork: fork copies the launcher's page tables for an exec to drop, and the
// launcher then takes a copy-on-write fault on each page it writes. On stop 24's host (11 us a
// fault) that was 2 to 4 ms of every recording's start. The forwarded signals are blocked and
// the others are ignored or at their default here, so no handler runs in the child before it
// has put back the program's dispositions.
// The child never returns from here: it runs ExecChild on this frame's stack and leaves by exec or
// _exit, so nothing of the caller's frame is changed under it.
__attribute__((noinline)) pid_t Spawn(char* const* argv, char* const* envp, int err_pipe,
                                      const struct sigaction* saved, const sigset_t& mask) {
  pid_t child = vfork();
  if (child == 0) ExecChild(argv, envp, err_pipe, saved, mask);
  return child;
}

// Whether pidfd_getfd works here (Linux 5.6 and later, no seccomp filter refusing it): the
// recording library's writer threads then work in fd tables of their own.
bool ProbePidfdGetfd(int some_fd) {
  long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
  if (pidfd < 0) return false;
  long fd = syscall(SYS_pidfd_getfd, pidfd, some_fd, 0);
  if (fd >= 0) ::close(static_cast<int>(fd));
  ::close(static_cast<int>(pidfd));
  return fd >= 0;
}

// ---- summary ----

std::string HumanBytes(uint64_t n) {
  char buf[32];
  if (n < 1000) {
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
    return buf;
  }
  const char* unit[] = {"kB", "MB", "GB", "TB"};
  double v = static_cast<double>(n) / 1000;
  int u = 0;
  while (v >= 999.95 && u < 3) {
    v /= 1000;
    ++u;
  }
  std::snprintf(buf, sizeof buf, "%.1f %s", v, unit[u]);
  return buf;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return Thousands(n) + " " + (n == 1 ? one : many);
}

struct Counts {
  uint64_t events = 0, chunks = 0;
  std::set<uint64_t> streams;
  std::set<uint32_t> pids;
  bool problem = false;                       // the trace could not be read to the end
  std::vector<std::string> unrecorded_execs;  // "PATH by process PID"
};

// Execs that reached no recorded image: an "exec-attempt PID NAME" note followed by neither
// "exec-failed PID" nor "exec-ok PID NAME" of the same NAME (a static or setuid binary, or one
// that dropped LD_PRELOAD). An exec-ok of another name is a later exec in the same process
// (a static program that execs a dynamic one): the attempt's image ran unrecorded in between.
// (An exec-ok without a name, from a library before stop 39, ends any attempt.)
std::vector<std::string> UnrecordedExecs(const std::vector<std::string>& notes) {
  std::map<std::string, std::string> pending;  // pid -> path
  std::vector<std::string> out;
  for (const std::string& n : notes) {
    std::istringstream in(n);
    std::string what, pid, name;
    in >> what >> pid;
    std::getline(in >> std::ws, name);
    if (what == "exec-attempt") {
      pending[pid] = name;
    } else if (what == "exec-failed" || what == "exec-ok") {
      auto it = pending.find(pid);
      if (it == pending.end()) continue;
      if (what == "exec-ok" && !name.empty() && name != it->second)
        out.push_back(it->second + " by process " + pid + " (which then ran " + name + ")");
      pending.erase(it);
    }
  }
  for (const auto& [pid, path] : pending) out.push_back(path + " by process " + pid);
  return out;
}

// Makes records cut short in the middle of the trace (a process killed while appending one)
// read cleanly again (traces/repair.h), and says so in a note. False: nothing was repaired.
bool RepairTorn(int fd, const std::string& trace, bool quiet) {
  // The trace fd appends (O_APPEND), and pwrite on it would too: a descriptor of its own.
  int rw = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDWR | O_CLOEXEC);
  if (rw < 0) return false;
  auto torn = trace::RepairTornRecords(rw);
  ::close(rw);
  if (!torn.ok()) {
    std::fprintf(stderr, "iorr: warning: %s: %s\n", trace.c_str(), torn.status().message().c_str());
    return false;
  }
  if (torn->empty()) return false;
  uint64_t bytes = 0;
  for (const trace::TornRegion& t : *torn) bytes += t.bytes;
  std::string what = std::to_string(torn->size()) + " record" + (torn->size() == 1 ? "" : "s") +
                     " cut short in the middle of the trace (a process killed while writing; " +
                     std::to_string(bytes) + " bytes, the first at byte " +
                     std::to_string(torn->front().offset) + ") made skippable";
  try {
    WriteNote(fd, "recorder: " + what, trace);
  } catch (const Error&) {
  }
  if (!quiet) std::fprintf(stderr, "iorr: warning: %s: %s\n", trace.c_str(), what.c_str());
  return true;
}

// Reads the chunks back (by fd, so a program that renamed or removed the trace cannot hide it).
// Repairs records cut short in the middle (RepairTorn), and cuts off an incomplete last record
// (a process killed mid-write, a full disk) so that the end record follows whole records.
Counts ScanTrace(int fd, const std::string& trace, bool quiet, bool repaired = false) {
  Counts c;
  trace::TraceReader::Options only_metadata;
  only_metadata.metadata_only = true;  // counting and the completeness check need no payloads
  auto opened = trace::TraceReader::Open("/proc/self/fd/" + std::to_string(fd), only_metadata);
  if (!opened.ok()) opened = trace::TraceReader::Open(trace, only_metadata);
  if (!opened.ok()) {
    std::fprintf(stderr, "iorr: warning: cannot read back %s: %s\n", trace.c_str(),
                 opened.status().message().c_str());
    c.problem = true;
    return c;
  }
  trace::TraceReader& r = **opened;
  trace::Chunk chunk;
  while (r.NextChunk(&chunk)) {
    ++c.chunks;
    if (chunk.meta.kind != trace::ChunkKind::kEvents) continue;
    c.events += chunk.meta.events;
    c.streams.insert(chunk.meta.stream_id);
    c.pids.insert(chunk.meta.pid);
  }
  c.unrecorded_execs = UnrecordedExecs(r.info().notes);
  // A piece of a record in the middle reads as an error, or, when the size it claims runs past
  // the end of the file, as an incomplete record at the end: repaired first either way, so that
  // the cut below never takes whole records with it.
  if ((!r.status().ok() || r.info().truncated_bytes > 0) && !repaired &&
      RepairTorn(fd, trace, quiet)) {
    Counts again = ScanTrace(fd, trace, quiet, true);
    again.problem = true;
    return again;
  }
  if (!r.status().ok()) {
    std::fprintf(stderr, "iorr: warning: %s: %s\n", trace.c_str(), r.status().message().c_str());
    c.problem = true;
  } else if (r.info().truncated_bytes > 0) {
    uint64_t cut = r.info().truncated_bytes;
    c.problem = true;
    if (ftruncate(fd, static_cast<off_t>(r.info().bytes)) == 0) {
      std::string what = "removed " + std::to_string(cut) +
                         " bytes of an incomplete record at the end of the trace";
      try {
        WriteNote(fd, "recorder: " + what, trace);
      } catch (const Error&) {
      }
      if (!quiet) std::fprintf(stderr, "iorr: warning: %s: %s\n", trace.c_str(), what.c_str());
    }
  }
  return c;
}

// ---- the launcher ----

int Run(const Options& o) {
  const ClockPair clock_start = ReadClockPair();  // (CalibrateTsc)
  if (!o.dash_dash) Fail("put -- before the command: iorr record -o TRACE -- COMMAND [ARGS...]");
  if (o.command.empty()) Fail("no command to record");  // an empty name: 127 at its exec, as env
  if (!trace::ValidTimeUnit(o.time_unit_ns)) Fail("--time-unit must be 1, 10, 100 or 1000 (ns)");
  if (o.trace.empty() || o.trace == "-") Fail("-o: the trace must be a file");
  for (const std::string& dir : o.snapshots) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) Fail("--snapshot " + dir + ": " + ErrnoText(errno));
    if (!S_ISDIR(st.st_mode)) Fail("--snapshot " + dir + ": not a directory");
  }
  // A file size limit (ulimit -f) is the program's to meet, not the launcher's: its shared
  // state (a memfd) and its writes of the trace would meet it (SIGXFSZ ended the launcher
  // silently under `ulimit -f 100`, stop 36's sweep). The launcher raises its own soft limit to
  // the hard one and ignores SIGXFSZ (a write past the limit then fails with EFBIG and says so);
  // the program gets both back (ExecChild).
  getrlimit(RLIMIT_FSIZE, &g_program_fsize);
  if (g_program_fsize.rlim_cur < g_program_fsize.rlim_max) {
    struct rlimit up = {g_program_fsize.rlim_max, g_program_fsize.rlim_max};
    setrlimit(RLIMIT_FSIZE, &up);
  }
  {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ign, &g_program_xfsz);
  }
  const std::string lib = FindLibrary();

  // 1. The trace and its header.
  int fd = ::open(o.trace.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) Fail("cannot create " + o.trace + ": " + ErrnoText(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    Fail(o.trace + ": the trace must be a regular file");
  }
  bool started = false;
  // Until the program starts, a failure removes the half-made trace.
  struct Cleanup {
    const std::string& path;
    const bool& started;
    ~Cleanup() {
      if (!started) ::unlink(path.c_str());
    }
  } cleanup{o.trace, started};

  trace::Header h;
  h.core.version = trace::kFormatVersion;
  h.core.time_unit_ns = o.time_unit_ns;
  h.core.start_mono_ns = NowNs(CLOCK_MONOTONIC);
  h.core.start_wall_ns = NowNs(CLOCK_REALTIME);
  h.Set(trace::key::kTool, "iorr 0.1.0 record");
  h.Set(trace::key::kSource, "record");
  trace::AddMachineFields(h);
  h.Set(trace::key::kCmdline, ShellQuote(o.command));
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) != nullptr) h.Set(trace::key::kCwd, cwd);
  mode_t mask = umask(0);
  umask(mask);
  char octal[16];
  std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mask));
  h.Set(trace::key::kUmask, octal);
  h.Set("recorder_pid", std::to_string(getpid()));
  const ClockChoice clock = ChooseClock(clock_start);
  h.Set("recorder_clock",
        std::string(clock.tsc_ns_q32 != 0 ? "tsc" : "clock_gettime") + " (" + clock.why + ")");
  int child_fd = DupHigh(fd);
  if (child_fd < 0) Fail("cannot duplicate the trace's fd: " + ErrnoText(errno));
  h.Set("trace_fd", std::to_string(child_fd));  // the recorded processes' fd for the trace
  AddMountFields(h);
  {
    std::vector<trace::HeaderField> fields;
    for (const auto& [k, v] : h.fields) fields.push_back({k, v});
    std::vector<uint8_t> buf(trace::HeaderRecordSize(fields.data(), fields.size()));
    size_t n =
        trace::EncodeHeaderRecord(h.core, fields.data(), fields.size(), buf.data(), buf.size());
    if (n == 0) Fail("trace header too large");
    WriteAll(fd, buf.data(), n, o.trace);
  }

  // 2. The shared state page.
  int shm_low = memfd_create("iorr-shared", MFD_CLOEXEC);
  if (shm_low < 0) Fail("memfd_create: " + ErrnoText(errno));
  if (ftruncate(shm_low, sizeof(rec::SharedState)) != 0)
    Fail("memfd: " + ErrnoText(errno) +
         (errno == EFBIG
              ? " (the recorder's shared state, " + std::to_string(sizeof(rec::SharedState) >> 10) +
                    " KiB, is over the file size limit: ulimit -f)"
              : ""));
  void* mem =
      mmap(nullptr, sizeof(rec::SharedState), PROT_READ | PROT_WRITE, MAP_SHARED, shm_low, 0);
  if (mem == MAP_FAILED) Fail("mmap of the shared state: " + ErrnoText(errno));
  int shm_fd = DupHigh(shm_low);
  if (shm_fd < 0) Fail("cannot duplicate the shared state's fd: " + ErrnoText(errno));
  ::close(shm_low);
  auto* shared = static_cast<rec::SharedState*>(mem);  // zero-filled by the kernel
  for (rec::ThreadSlot& s : shared->slot) {
    s.unflushed_min.store(rec::kNever, std::memory_order_relaxed);
    s.in_call_since.store(rec::kNever, std::memory_order_relaxed);
    s.raise_from.store(rec::kNever, std::memory_order_relaxed);
  }
  shared->slots = rec::kSharedSlots;
  shared->version = 2;
  shared->tsc_ns_q32 = clock.tsc_ns_q32;
  shared->zstd_workspace_bytes =
      static_cast<uint32_t>(trace::ChunkCompressor::WorkspaceBytes(rec::kRecorderZstdLevel));
  shared->zstd_version = trace::ChunkCompressor::BuiltVersion();
  // Decodings of system call sites kept from an earlier recording (see LoadSites).
  const std::string sites_path = CachePath("iorr-sites");
  SitesKey sites_key;
  const bool keep_sites = !sites_path.empty() && KeyOf(lib, &sites_key);
  const uint32_t sites_loaded = keep_sites ? LoadSites(shared, sites_path, sites_key) : 0;
  if (keep_sites)
    WriteNote(fd,
              "capture: system call sites of " + Plural(sites_loaded, "object", "objects") +
                  " kept from earlier recordings (" + sites_path + ")",
              o.trace);
  shared->pidfd_getfd = ProbePidfdGetfd(fd) ? 1 : 0;
  shared->magic = rec::kSharedMagic;
  // iorr record's decoding of libc's and the loader's system call sites (below), joined on
  // every way out: the shared state it writes must outlive it.
  struct Joined {
    std::thread t;
    std::atomic<bool> stop{false};
    void Join() {
      stop.store(true);
      if (t.joinable()) t.join();
    }
    ~Joined() { Join(); }
  } preplan;

  // --snapshot, before the program starts; its time is reported on its own.
  double snapshot_seconds = 0;
  uint64_t snapshot_bytes = 0;
  for (const std::string& dir : o.snapshots) {
    SnapshotResult r = Snapshot(fd, dir, o.trace, h.core.start_mono_ns, o.time_unit_ns,
                                shared->next_stream.fetch_add(1));
    snapshot_seconds += r.seconds;
    snapshot_bytes += r.bytes;
    if (!o.quiet)
      std::fprintf(stderr, "iorr: snapshot of %s: %s in %.3f s%s\n", dir.c_str(),
                   Plural(r.entries, "entry", "entries").c_str(), r.seconds,
                   r.errors ? (", " + Thousands(r.errors) + " unreadable").c_str() : "");
  }

  // 3. The program's environment: the launcher's, plus the library and the protocol variables.
  std::string old_preload, old_audit;
  if (const char* p = std::getenv("LD_PRELOAD")) old_preload = p;
  if (const char* p = std::getenv("LD_AUDIT")) old_audit = p;
  // The audit module beside the library catches the calls made before the library starts (the
  // dynamic loader's, constructors'): recorder/audit.h. On unless IORR_AUDIT=0. Its price: with
  // an audit module glibc sizes static TLS before the program's libraries load, so libraries'
  // initial-exec TLS must fit in the room asked for below (kAuditTunable: libtsan's and liblsan's
  // do not), and each process pays about 0.3 ms for its loader's trapped calls. Before modules
  // of the program's own, the chained variant (recorder/audit.cc: glibc's dlsym path skips them
  // behind a module without la_symbind).
  bool others =
      old_audit.find_first_not_of(": ") != std::string::npos || NamesAuditModules(o.command[0]);
  std::string audit = lib.substr(0, lib.rfind('/') + 1) +
                      (others ? "libiorr-audit-chained.so" : "libiorr-audit.so");
  const char* audit_knob = std::getenv("IORR_AUDIT");
  if (audit_knob != nullptr && std::string_view(audit_knob) == "0") {
    audit.clear();
  } else if (::access(audit.c_str(), R_OK) != 0 || audit.find_first_of(": ") != std::string::npos) {
    if (!o.quiet)
      std::fprintf(stderr,
                   "iorr: warning: no usable audit module at %s: the dynamic loader's calls "
                   "before the library starts are not recorded\n",
                   audit.c_str());
    audit.clear();
  }
  const std::string_view ours[] = {"LD_PRELOAD",       "LD_AUDIT",        "GLIBC_TUNABLES",
                                   rec::kEnvTraceFd,   rec::kEnvSharedFd, rec::kEnvTimeUnit,
                                   rec::kEnvStartNs,   rec::kEnvLib,      rec::kEnvReinjected,
                                   rec::kEnvExecStart, rec::kEnvLock};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv = *e;
    std::string_view name = kv.substr(0, kv.find('='));
    if (std::find(std::begin(ours), std::end(ours), name) == std::end(ours)) env.emplace_back(kv);
  }
  env.push_back("LD_PRELOAD=" + lib + (old_preload.empty() ? "" : ":" + old_preload));
  if (!audit.empty())
    env.push_back("LD_AUDIT=" + audit + (old_audit.empty() ? "" : ":" + old_audit));
  else if (!old_audit.empty())
    env.push_back("LD_AUDIT=" + old_audit);
  if (!audit.empty()) {  // room in static TLS (protocol.h)
    std::string tunables = rec::kAuditTunable;
    if (const char* t = std::getenv("GLIBC_TUNABLES"); t != nullptr && *t != 0)
      tunables += std::string(":") + t;
    env.push_back("GLIBC_TUNABLES=" + tunables);
  } else if (const char* t = std::getenv("GLIBC_TUNABLES")) {
    env.push_back(std::string("GLIBC_TUNABLES=") + t);
  }
  env.push_back(std::string(rec::kEnvTraceFd) + "=" + std::to_string(child_fd));
  env.push_back(std::string(rec::kEnvSharedFd) + "=" + std::to_string(shm_fd));
  env.push_back(std::string(rec::kEnvTimeUnit) + "=" + std::to_string(o.time_unit_ns));
  env.push_back(std::string(rec::kEnvStartNs) + "=" + std::to_string(h.core.start_mono_ns));
  env.push_back(std::string(rec::kEnvLib) + "=" + lib);
  // The first process records its own execve, which starts now (ns since the header's start).
  env.push_back(std::string(rec::kEnvExecStart) + "=" +
                std::to_string(NowNs(CLOCK_MONOTONIC) - h.core.start_mono_ns));
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = o.command;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // 4. Run it.
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) Fail("pipe: " + ErrnoText(errno));
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) Fail("PR_SET_CHILD_SUBREAPER: " + ErrnoText(errno));
  std::snprintf(g_children_path, sizeof g_children_path, "/proc/self/task/%d/children",
                static_cast<int>(getpid()));
  sigset_t fwd, orig_mask;
  sigemptyset(&fwd);
  for (int s : kForwarded) sigaddset(&fwd, s);
  sigprocmask(SIG_BLOCK, &fwd, &orig_mask);  // until the child's pid is known
  static struct sigaction saved[NSIG];
  for (int s : kForwarded) SetHandler(s, ForwardSignal, &saved[s]);
  for (int s : kIgnored) {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    sigaction(s, &sa, &saved[s]);
  }
  {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;  // an inherited SIG_IGN would reap children behind our back
    sigaction(SIGCHLD, &sa, &saved[SIGCHLD]);
  }
  std::fflush(nullptr);
  int64_t run_start = NowNs(CLOCK_MONOTONIC);
  pid_t child = Spawn(argv.data(), envp.data(), err_pipe[1], saved, orig_mask);
  int fork_errno = errno;
  started = child > 0;
  g_main_child.store(child > 0 ? child : 0);
  sigprocmask(SIG_SETMASK, &orig_mask, nullptr);
  ::close(err_pipe[1]);
  if (child < 0) {
    ::close(err_pipe[0]);
    Fail("vfork: " + ErrnoText(fork_errno));
  }
  // While the program starts: libc's and the loader's system call sites, decoded here once for
  // the whole recording (recorder/patch_plan.h), which its processes would otherwise decode
  // themselves when they switch to patched sites (6 ms).
  {
    const char* patch = getenv("IORR_PATCH");
    const char* dispatch = getenv("IORR_DISPATCH");
    // On a thread of its own, joined before the shared state is unmapped (a few ms at most).
    if (!(patch && std::string(patch) == "0") && !(dispatch && std::string(dispatch) == "0"))
      preplan.t = std::thread([shared, &preplan] { rec::patch::PrePlan(shared, &preplan.stop); });
  }
  int exec_errno = 0;
  for (;;) {
    ssize_t n = ::read(err_pipe[0], &exec_errno, sizeof exec_errno);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof exec_errno)) exec_errno = 0;
    break;
  }
  ::close(err_pipe[0]);

  // Wait for the program, then for everything it left running (orphans are re-parented to us),
  // unless --linger or Ctrl-C closes the trace first (the rest then runs on unrecorded).
  int status = 0;
  bool main_done = false, announced = false;
  int64_t main_end = 0, close_at = INT64_MAX;
  std::string closed_why;  // why the trace was closed with processes left running
  for (;;) {
    siginfo_t si{};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) != 0) {
      if (errno == EINTR) {
        int64_t now = NowNs(CLOCK_MONOTONIC);
        if (g_alarm.exchange(false) && !announced && !o.quiet && now - main_end >= 1'000'000'000) {
          announced = true;
          int left = SignalChildren(0);
          if (left > 0)
            std::fprintf(stderr,
                         "iorr: %s exited; waiting for the %s it left running (still recording; "
                         "Ctrl-C closes the trace and leaves %s running, as --linger SECONDS "
                         "does; kill -TERM %d passes the signal on to %s)\n",
                         o.command[0].c_str(), Plural(left, "process", "processes").c_str(),
                         left == 1 ? "it" : "them", static_cast<int>(getpid()),
                         left == 1 ? "it" : "them");
        }
        if (main_done && g_interrupted.exchange(false) && closed_why.empty()) {
          closed_why = "Ctrl-C";
          close_at = std::min(close_at, now + 300'000'000);
        }
        if (main_done && now >= close_at) {
          if (closed_why.empty()) closed_why = "--linger";
          break;
        }
        continue;
      }
      if (errno != ECHILD)
        std::fprintf(stderr, "iorr: warning: waitid: %s\n", ErrnoText(errno).c_str());
      break;
    }
    if (si.si_pid == child && !main_done) {
      sigprocmask(SIG_BLOCK, &fwd, nullptr);  // no forwarding to a reaped (reusable) pid
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      g_main_child.store(0);
      sigprocmask(SIG_SETMASK, &orig_mask, nullptr);
      main_done = true;
      main_end = NowNs(CLOCK_MONOTONIC);
      if (exec_errno == 0) {
        if (o.linger >= 0) {
          if (o.linger == 0) {  // at once, without waiting for a tick
            closed_why = "--linger";
            break;
          }
          close_at = main_end + static_cast<int64_t>(o.linger * 1e9);
        }
        SetHandler(SIGINT, OnInterrupt, nullptr);
        // A tick every 100 ms while processes are left: the announcement after a second, the
        // end of --linger, Ctrl-C's grace.
        SetHandler(SIGALRM, OnAlarm, nullptr);
        struct itimerval tick {};
        tick.it_interval.tv_usec = tick.it_value.tv_usec = 100'000;
        setitimer(ITIMER_REAL, &tick, nullptr);
      }
    } else {
      while (waitpid(si.si_pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
  {
    struct itimerval off {};
    setitimer(ITIMER_REAL, &off, nullptr);
  }
  // Every process is gone, or the trace is closed to those left: Ctrl-C may stop the launcher
  // again (the trace then has no end record).
  for (int s : kChanged) sigaction(s, &saved[s], nullptr);
  double run_seconds = static_cast<double>(NowNs(CLOCK_MONOTONIC) - run_start) / 1e9;
  std::vector<std::pair<int, std::string>> left;
  if (!closed_why.empty()) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {  // those that have exited are not left
    }
    left = LeftProcesses();
    if (!left.empty()) CloseToLeftovers(shared, &fd, o.trace);  // (none: nobody to append)
  }
  // What the processes counted, read once the trace is closed to them.
  uint64_t dropped = shared->dropped_events.load();
  uint32_t write_errors = shared->write_errors.load();
  uint32_t escapes = shared->escapes.load();
  uint32_t unwatched_runs = shared->unwatched_handler_runs.load();
  uint32_t unentered = shared->unentered_handlers.load();
  uint32_t handler_lost = shared->handler_calls_lost.load();
  if (!left.empty()) {
    // After the main command's exit: their calls from about the writers' last flush (up to
    // 100 ms before) on are not in the trace.
    std::string names;
    for (size_t i = 0; i < left.size() && i < 8; ++i)
      names += (i ? ", " : "") + std::to_string(left[i].first) + " " + left[i].second;
    if (left.size() > 8) names += ", ...";
    char after[64];
    std::snprintf(after, sizeof after, "%.1f s",
                  static_cast<double>(close_at == INT64_MAX ? 0 : close_at - main_end) / 1e9);
    std::string what = Plural(left.size(), "process", "processes") + " (" + names +
                       ") and what they start were still running when iorr closed the trace (" +
                       closed_why + ", " + after + " after " + o.command[0] +
                       " exited): their calls from up to 100 ms before that on are not in the "
                       "trace";
    try {
      WriteNote(fd, "escape: " + what, o.trace);
    } catch (const Error&) {
    }
    ++escapes;
    if (!o.quiet) std::fprintf(stderr, "iorr: warning: %s\n", what.c_str());
  }

  // 5. Count what the processes wrote and close the trace with the end record.
  Counts c = ScanTrace(fd, o.trace, o.quiet);
  for (const std::string& x : c.unrecorded_execs) {
    try {
      WriteNote(fd, "escape: exec of " + x + " was not recorded (a static or setuid binary?)",
                o.trace);
    } catch (const Error&) {
    }
    if (!o.quiet) std::fprintf(stderr, "iorr: warning: exec of %s was not recorded\n", x.c_str());
  }
  escapes += static_cast<uint32_t>(c.unrecorded_execs.size());
  // Signal handlers whose libc calls inside a recorded call went natively (see protocol.h).
  const std::pair<uint32_t, const char*> unwatched[] = {
      {unwatched_runs,
       "signal handler runs inside a recorded call, on an alternate signal stack with less than "
       "32 KiB left, were not watched: file-system calls they made are not in the trace"},
      {unentered,
       "signal handlers were set past the library's 256 handler entries: file-system calls "
       "they make inside a recorded call are not in the trace"}};
  for (const auto& [n, what] : unwatched) {
    if (n == 0) continue;
    try {
      WriteNote(fd, "escape: " + std::to_string(n) + " " + what, o.trace);
    } catch (const Error&) {
    }
    ++escapes;
  }
  // What the lost events were (the end record counts them; the warning points at the notes).
  if (dropped != 0) {
    std::string what = "lost: " + std::to_string(dropped) + " events could not be stored";
    if (handler_lost != 0)
      what += "; " + std::to_string(std::min<uint64_t>(handler_lost, dropped)) +
              " of them calls of signal handlers that came while the recorder was at work on "
              "their thread (writing an event, an exec, a spawn), which it cannot record";
    if (dropped > handler_lost)
      what += "; " + std::to_string(dropped - handler_lost) +
              (handler_lost != 0 ? " others" : " of them") +
              ": a thread's ring full where it could not wait for the writer (inside a signal "
              "handler, a vfork child), an event too large to store, a vfork child killed while "
              "writing its events, or a call begun before a fork and ended in the child";
    try {
      WriteNote(fd, what, o.trace);
    } catch (const Error&) {
    }
  }
  trace::EndRecord end{c.events, c.chunks, dropped,
                       (dropped != 0 || write_errors != 0 || c.problem) ? 1u : 0u};
  uint8_t buf[trace::kMaxEndRecordBytes];
  bool end_ok = true;
  struct stat tst {};
  try {
    WriteAll(fd, buf, trace::EncodeEndRecord(end, buf), o.trace);
  } catch (const Error& e) {
    std::fprintf(stderr, "iorr: %s (the trace has no end record)\n", e.what());
    end_ok = false;
  }
  uint64_t size = fstat(fd, &tst) == 0 ? static_cast<uint64_t>(tst.st_size) : 0;
  if (::close(fd) != 0 && end_ok)
    std::fprintf(stderr, "iorr: cannot close %s: %s\n", o.trace.c_str(), ErrnoText(errno).c_str());
  ::close(child_fd);
  ::close(shm_fd);
  preplan.Join();
  if (keep_sites) SaveSites(shared, sites_path, sites_key, sites_loaded);
  munmap(mem, sizeof(rec::SharedState));

  if (exec_errno != 0)
    throw Error(o.command[0] + ": " + ErrnoText(exec_errno),
                exec_errno == ENOENT ? rec::kExitNotFound : rec::kExitCannotRun);

  // 6. The summary: one JSON object (--json), for scripts that run a recording, or a line of text.
  int exit_status = WIFEXITED(status)     ? WEXITSTATUS(status)
                    : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                          : rec::kExitRecorderError;
  if (o.json) {
    std::string j = "{\"trace\":" + iorr::JsonString(o.trace) +
                    ",\"events\":" + std::to_string(c.events) +
                    ",\"streams\":" + std::to_string(c.streams.size()) +
                    ",\"processes\":" + std::to_string(c.pids.size()) +
                    ",\"trace_bytes\":" + std::to_string(size) +
                    ",\"snapshot_bytes\":" + std::to_string(snapshot_bytes) +
                    ",\"lost_events\":" + std::to_string(dropped) +
                    ",\"write_errors\":" + std::to_string(write_errors) +
                    ",\"escape_notes\":" + std::to_string(escapes) +
                    ",\"complete\":" + (end.flags & 1 ? "false" : "true");
    char t[160];
    std::snprintf(t, sizeof t,
                  ",\"program_seconds\":%.6f,\"snapshot_seconds\":%.6f,\"exit_status\":%d}",
                  run_seconds, snapshot_seconds, exit_status);
    j += t;
    std::fprintf(stderr, "%s\n", j.c_str());
  } else if (!o.quiet) {
    std::string line = "iorr: recorded " + Plural(c.events, "event", "events") + " in " +
                       Plural(c.streams.size(), "stream", "streams") + " (" +
                       Plural(c.pids.size(), "process", "processes") + ") into " + o.trace + ", " +
                       HumanBytes(size);
    if (c.events > 0) {  // the snapshot's notes are not the events' cost
      char per[48];
      std::snprintf(per, sizeof per, " (%.1f bytes/event)",
                    static_cast<double>(size - std::min(size, snapshot_bytes)) /
                        static_cast<double>(c.events));
      line += per;
    }
    if (dropped > 0) line += ", " + Plural(dropped, "event", "events") + " lost";
    if (!o.snapshots.empty()) {
      char t[96];
      std::snprintf(t, sizeof t, "; program %.3f s, snapshot %.3f s before it", run_seconds,
                    snapshot_seconds);
      line += t;
    }
    std::fprintf(stderr, "%s\n", line.c_str());
    if (escapes > 0)
      std::fprintf(stderr, "iorr: warning: calls escaped the recorder (%s; see iorr stats %s)\n",
                   Plural(escapes, "note", "notes").c_str(), o.trace.c_str());
  }

  // 7. The program's exit status.
  return exit_status;
}

}  // namespace

void RegisterRecord(CLI::App& app, Action* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "record",
      "iorr record -o TRACE [OPTIONS] -- COMMAND [ARGS...]\n\n"
      "Run COMMAND and record the file-system calls of every process and thread it starts\n"
      "(children, exec'd programs, threads; failed calls too) into TRACE, through the\n"
      "LD_PRELOAD library libiorr-preload.so. The program runs as it would without iorr:\n"
      "same environment, fds, output, exit status and signals (Ctrl-C reaches it from the\n"
      "terminal; SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 sent to iorr are passed on to it).\n"
      "iorr waits until every process of the tree has exited, then closes the trace and\n"
      "prints a one-line summary on stderr; with --linger, or Ctrl-C once COMMAND has\n"
      "exited, it closes the trace without what COMMAND left running (a daemon it started),\n"
      "which runs on unrecorded, and says so in the trace.");
  sub->add_option("-o,--output", o->trace, "Trace file to write (replaced if it exists)")
      ->required()
      ->type_name("TRACE");
  sub->add_option("--time-unit", o->time_unit_ns,
                  "Timestamp resolution in ns: 1, 10, 100 or 1000 (default 1000)")
      ->type_name("NS");
  sub->add_option("--snapshot", o->snapshots,
                  "Before the program starts, store the names, types, sizes and modes of the\n"
                  "tree under DIR (one file system; symlinks below DIR not followed) in the\n"
                  "trace; "
                  "repeatable. Its time is reported apart from the program's.")
      ->type_name("DIR")
      ->allow_extra_args(false);
  sub->add_option("--linger", o->linger,
                  "Once COMMAND has exited, go on recording what it left running for at most\n"
                  "SECONDS (0: not at all), then close the trace with a note naming them; they\n"
                  "run on, unrecorded. Default: until every process has exited")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  sub->add_flag("--json", o->json,
                "The summary as one JSON object on stderr, the last line iorr writes: trace, "
                "events, streams, processes, trace_bytes, snapshot_bytes, lost_events, "
                "write_errors, escape_notes, complete, program_seconds, snapshot_seconds, "
                "exit_status (warnings stay text lines before it)");
  sub->add_option("command", o->command, "-- COMMAND [ARGS...]: the program to record")->required();
  sub->footer(
      "Exit status: COMMAND's own (128+N when signal N killed it); 125 when iorr itself fails\n"
      "(bad options, the trace cannot be written, the recorder library is missing); 126 when\n"
      "COMMAND cannot be run; 127 when it is not found.\n"
      "The library is $IORR_PRELOAD_LIB if set, else ../lib/libiorr-preload.so next to iorr;\n"
      "libiorr-audit.so beside it (LD_AUDIT) records the dynamic loader's calls before the\n"
      "library starts (about 0.3 ms per process; libiorr-audit-chained.so before audit modules\n"
      "of the program's own); IORR_AUDIT=0 leaves it out (a library with more than about 6 KiB\n"
      "of initial-exec TLS, as libtsan, cannot load beside it).\n"
      "Environment: IORR_PATCH=0 keeps Syscall User Dispatch instead of patched system call\n"
      "sites, IORR_PATCH=1 patches from the start; IORR_DISPATCH=0 records through the libc\n"
      "wrappers only (libc's internal calls are then missed).\n"
      "Files kept between recordings: the clock's choice for this boot\n"
      "($XDG_RUNTIME_DIR, else ~/.cache: iorr-clock; IORR_CLOCK=check checks again,\n"
      "IORR_CLOCK=clock_gettime does without the TSC) and the system call sites decoded\n"
      "in the programs' libraries (~/.cache/iorr-sites); IORR_CACHE=0 keeps none.");
  sub->callback([o, sub, action] {
    // CLI11 keeps the "--" that ended the options among the unparsed arguments.
    auto rest = sub->remaining();
    o->dash_dash = std::find(rest.begin(), rest.end(), "--") != rest.end();
    *action = [o] {
      try {
        return Run(*o);
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {
        throw Error(e.what(), rec::kExitRecorderError);
      }
    };
  });
}

}  // namespace iorr::cli
