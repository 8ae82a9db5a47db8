// Recording core of libiorr-preload.so: per-thread encoders, the writer thread, the shared
// watermark slots, fork and exec. See preload.h for the library's rules.
//
// Each recorded thread copies its events, raw, into its own ring (mmap, single producer, single
// consumer: no locks); the writer thread drains the rings into one ChunkEncoder per thread,
// compresses full chunks and writes them, and writes a partial chunk once its oldest event is
// 100 ms old, so a killed program loses at most that much. Encoding and compression stay off
// the program's threads; a hook costs a few copies.
//
// Watermarks: slot.unflushed_min is the earliest start among a thread's events not yet in the
// file. Only the writer raises it; the thread lowers it (a CAS min) after publishing an event,
// and its in_call_since covers the call until then. The writer re-reads the ring's tail after
// storing, so an event published meanwhile is never left uncovered.
//
// Both of those are store-then-load orderings between a program thread and the writer (the
// thread announces its call, then reads the clock; publishes an event, then reads the
// watermark; the writer reads the clock, then the slots; raises the watermark, then reads the
// tail). A full fence on each side is the textbook answer, and on the thread's side it cost a
// locked instruction per store, twice per call: about 9 ns of a recorded call's 55
// (tools/bench/record-call-cost.sh). The fences are asymmetric instead: the thread's side is a
// compiler barrier, and the writer's side, which runs a few hundred times a second at most, is
// membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which makes every running thread of every
// registered process execute a full barrier (an interrupt) before it returns; a thread not
// running has gone through a context switch, itself a full barrier. Every recorded process
// registers before its first call (Init). Where it cannot (no membarrier, a seccomp filter),
// the process keeps real fences on both sides, and its writer's watermark over other
// processes' threads leans on the 1 ms clock margin (kClockSkewMarginNs) and on how briefly a
// store sits in a store buffer: a heuristic, not a bound the architecture gives.
#include "recorder/preload.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <linux/close_range.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <utility>

#include "recorder/audit.h"
#include "recorder/elf_next.h"
#include "recorder/protocol.h"
#include "recorder/raw_syscall.h"
#include "recorder/valgrind.h"
#include "traces/encoder.h"
#include "traces/format.h"

extern char** environ;
// glibc's registration behind pthread_atfork (exported since 2.3.2), which takes the object
// whose finalization drops the handlers: null for none (see Init).
extern "C" int __register_atfork(void (*prepare)(), void (*parent)(), void (*child)(),
                                 void* dso_handle);

namespace iorr::recorder {
namespace {

using trace::ChunkCompressor;
using trace::ChunkEncoder;
using trace::ChunkLimits;

constexpr int kMaxThreads = 4096;
constexpr int64_t kFlushAgeNs = 100'000'000;  // a pending event is written within this
constexpr int64_t kWriterTickNs = 20'000'000;
constexpr int64_t kClockSkewMarginNs = 1'000'000;

constexpr uint64_t kRingBytes = 2u << 20;  // per thread; populated as used (PopulateRing)
// The ring's first lap is populated in steps of this much at least and at most (PopulateRing),
// the steps doubling: a short process's thread (one page of events) has one page made, not
// four (each some 2 us here).
constexpr uint64_t kPopulateMin = 4u << 10, kPopulateMax = 512u << 10;
static_assert(kRingBytes % kPopulateMax == 0 && kPopulateMax % kPopulateMin == 0);

// A ring entry: this head, then the bytes of the string arguments (their lengths in args[]),
// padded to 8. size 0 marks the unused end of the ring before wrapping.
struct EntryHead {
  uint32_t size;
  uint16_t call;
  uint16_t reserved;
  int64_t start, end, ret;
  int64_t args[trace::kMaxArgs];  // strings: their length, or -1 for NULL
};
static_assert(sizeof(EntryHead) % 8 == 0);

// What writing a chunk needs: a compressor and an output buffer. The process's (g_buffers) are
// used under g_writer_lock; a vfork child has its own (see VmChildFlush).
struct WriterBuffers {
  ChunkCompressor* compressor = nullptr;
  uint8_t* out = nullptr;
  size_t cap = 0;
};

}  // namespace

// A recorded thread (named in preload.h's ThreadHot, so outside the anonymous namespace).
struct ThreadState {
  // The thread's own, written on every call; the writer reads only tail, once a pass. The
  // fields the writer reads for every entry it drains are kept out of this line: when pid, tid
  // and encoder_since shared it with last_start, each entry drained took the line from the
  // program's thread, whose next call took it back (a recorded lseek in a loop: 19 ns less per
  // call apart, median of 25 paired runs).
  alignas(64) std::atomic<uint64_t> tail{0};  // bytes published by the thread
  uint64_t head_seen = 0;                     // the thread's last look at head
  uint64_t populated = 0;  // the thread: its ring is populated for tails below this (PopulateRing)
  uint64_t populate_lap = 0;  // the thread: where the populated first lap ends; 0: not begun
  int64_t last_start = 0;     // the thread: start of its latest call
  int64_t last_end = 0;       // the thread: end of its latest recorded call
  // Set when the thread is registered and read by both sides after, in a line of their own
  // that both can keep.
  alignas(64) uint8_t* ring = nullptr;
  ThreadSlot* slot = nullptr;
  uint32_t pid = 0, tid = 0;
  uint64_t stream = 0;
  size_t memory_bytes = 0;
  alignas(64) Event scratch;                  // the thread's event being written (AddEvent)
  alignas(64) std::atomic<uint64_t> head{0};  // bytes consumed by the writer
  std::atomic<int> exited{0};
  std::atomic<int> leaving{0};  // its key destructor ran: it is on its way out
  // A vfork child's (see iorr_vfork_child): inside its exec; its process entry and lock.
  std::atomic<int> exec_pending{0};
  std::atomic<int> vm_writing{0};  // inside VmChildFlush (a child killed there left it half done)
  int vm_lock_fd = -1;
  uint32_t vm_entry = 0;
  WriterBuffers vm_buffers;    // it writes its own chunks (VmChildFlush)
  bool longjmp_noted = false;  // the thread: a call left by longjmp was noted
  // The thread: a piece of directory entries being gathered (AddDirents), kept off its stack,
  // which may be small (a thread on a stack of the program's own memory).
  char dirent_piece[4000 + 256 + 2];
  // The writer's: ServiceThread reads and writes these for every entry.
  alignas(64) int64_t encoder_since = kNever;  // writer: when its encoder's oldest event started
  // Writer: the start of the event its encoder took last (INT64_MIN: none). A call recorded
  // nested in another (BeginNested) is in the ring before the call it came in, which started
  // earlier: that call then goes into a chunk of its own, as a chunk's events are in start
  // order (the merged reader takes each chunk's in file order).
  int64_t encoder_last_start = INT64_MIN;
  uint64_t drained = 0;                        // writer: the head when it raised the watermark
  bool raising = false;                        // writer: a raise window is open (Service)
  uint32_t raise_q = 0;                        // writer: the window's (odd) raise_seq
  Event decoded;                               // writer
  ChunkEncoder enc;                            // writer
};

namespace {

// Process-wide state. Written by the constructor and after fork; read by every thread.
// The TSC clock's anchor (see g_tsc_mult below).
struct TscAnchor {
  uint64_t base = 0;  // TSC at the anchor
  int64_t mono = 0;   // CLOCK_MONOTONIC at base
  int64_t from = 0;   // the clock's value at base (>= mono)
  uint64_t rate = 0;  // the slower multiplier from `from` (== mult when from == mono)
};
// What every recorded call reads of it, in one cache line: a program's kernel work between two
// calls pushes the library's data out of the caches too, and each line is a miss. (Spread over
// .data and .bss these took six.) The writer thread's resync writes the anchor every tick.
struct alignas(64) HotGlobals {
  TscAnchor anchor;
  uint64_t tsc_mult = 0;  // calibrated ns per tick, Q32
  int64_t start_mono = 0;
  std::atomic<uint32_t> tsc_seq{0};
  std::atomic<int> writer_started{0};
  int patch_after = 4096;  // see PatchLater
  bool on = false;
  std::atomic<bool> released{false};  // ReleaseProcessSlots ran (exit): nothing more is recorded
  std::atomic<bool> dying{false};     // FlushBeforeDeath: recorded calls wait (ParkForDeath)
};
static_assert(sizeof(HotGlobals) == 64);
HotGlobals g_hot;
bool& g_on = g_hot.on;
int64_t& g_start_mono = g_hot.start_mono;
std::atomic<bool>& g_released = g_hot.released;
std::atomic<int>& g_writer_started = g_hot.writer_started;
uint64_t& g_tsc_mult = g_hot.tsc_mult;
std::atomic<uint32_t>& g_tsc_seq = g_hot.tsc_seq;
TscAnchor& g_anchor = g_hot.anchor;
std::atomic<bool>& g_dying = g_hot.dying;
int& g_patch_after = g_hot.patch_after;
int g_trace_fd = -1;
int g_shm_fd = -1;
SharedState* g_shared = nullptr;
uint32_t g_unit = 1000;
char g_lib[4096];
ChunkLimits g_limits;
pthread_key_t g_key;
uint32_t g_pid = 0;
int g_lock_fd = -1;  // this process's liveness lock (see protocol.h), -1: none
uint32_t g_entry = 0;
std::atomic<int> g_exec_windows{
    0};  // threads between ExecKeepsLock(true) and (false)  // 1 + this process's entry, 0: none

// The writer thread works in an fd table of its own once it has moved (PrivateFdTable): the
// numbers of the library's fds in it, which no program thread can move. A program thread
// moving one of the library's fds in the program's table (VacateFd) holds g_fd_move_lock, so
// that the writer copies the table with the numbers the globals say, and, until it moves,
// uses them while they are the library's (InWriterTable).
thread_local bool t_writer_thread __attribute__((tls_model("initial-exec"))) = false;
int g_writer_trace_fd = -1, g_writer_shm_fd = -1, g_writer_lock_fd = -1;
std::atomic<int> g_fd_move_lock{0};
int OutFd();
int ShmFd();
int OwnLockFd() { return t_writer_thread ? g_writer_lock_fd : g_lock_fd; }

std::atomic<ThreadState*> g_threads[kMaxThreads];
std::atomic<int> g_threads_used{0};  // 1 + the highest index ever registered (scans stop there)
std::atomic<int> g_writer_lock{0};
std::atomic<uint32_t> g_wake{0};
WriterBuffers g_buffers;

// TSC clock (SharedState::tsc_ns_q32). The writer thread re-anchors it on CLOCK_MONOTONIC every
// tick so that rounding in the calibrated multiplier never adds up; a seqlock keeps the anchor
// consistent for readers. Between anchors,
//   ns = max(from + (tsc - base) * rate, mono + (tsc - base) * mult) / 2^32
// where mono is CLOCK_MONOTONIC at base and from >= mono where the clock had run ahead of it
// (then rate < mult: the first line is a slower continuation, the second takes over once the
// monotonic clock has caught up). Both lines rise, so the clock never steps back.
__extension__ using U128 = unsigned __int128;

int64_t MonoNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t Scaled(uint64_t ticks, uint64_t rate) {
  return static_cast<int64_t>((static_cast<U128>(ticks) * rate) >> 32);
}

__attribute__((always_inline)) inline int64_t ClockAt(uint64_t tsc, const TscAnchor& a) {
  // A reading not fenced against the anchor's loads (ReadClock<false>) may precede its base.
  uint64_t d = tsc > a.base ? tsc - a.base : 0;
  int64_t on_mono = a.mono + Scaled(d, g_tsc_mult);
  if (a.rate == g_tsc_mult) return on_mono;
  return std::max(a.from + Scaled(d, a.rate), on_mono);
}

// Re-anchors the TSC clock (see above). The monotonic clock is read between two TSC reads; when
// they lie far apart (the thread was preempted, the VM paused) the pair is not trusted and the
// old anchor stays. The new anchor's TSC is read once the sequence is odd, so every reading that
// passes a reader's check was taken before it and is at most the clock's value there.
void ResyncTsc() {
  if (g_tsc_mult == 0) return;
  constexpr int64_t kMaxReadSpreadNs = 20'000;
  bool first = g_anchor.rate == 0;
  uint64_t t0 = 0, t1 = 0;
  int64_t mono = 0;
  for (int tries = first ? 5 : 1; tries > 0; --tries) {
    t0 = __builtin_ia32_rdtsc();
    mono = MonoNs();
    t1 = __builtin_ia32_rdtsc();
    if (t1 >= t0 && Scaled(t1 - t0, g_tsc_mult) <= kMaxReadSpreadNs) break;
    if (!first) return;  // the first anchor takes the last try, trusted or not
  }
  uint64_t mid = t0 + (t1 - t0) / 2;
  g_tsc_seq.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
  std::atomic_signal_fence(std::memory_order_seq_cst);
  __builtin_ia32_lfence();
  uint64_t tsc = __builtin_ia32_rdtsc();
  __builtin_ia32_lfence();
  TscAnchor n;
  n.base = tsc;
  n.mono = mono + Scaled(tsc - mid, g_tsc_mult);
  n.from = n.mono;
  n.rate = g_tsc_mult;
  if (!first) {
    int64_t now = ClockAt(tsc, g_anchor);
    if (now > n.mono) {
      // Ahead: go on from `now`, up to 1% slower, until the monotonic line takes over.
      int64_t slow = std::min<int64_t>(now - n.mono, kWriterTickNs / 100);
      n.from = now;
      n.rate = static_cast<uint64_t>(static_cast<U128>(g_tsc_mult) *
                                     static_cast<uint64_t>(kWriterTickNs - slow) /
                                     static_cast<uint64_t>(kWriterTickNs));
    }
  }
  g_anchor = n;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  g_tsc_seq.fetch_add(1, std::memory_order_release);
}

// The thread's alternate signal stack, [lo, hi) (NoteAltStack); 0, 0: none.
thread_local uintptr_t t_alt_lo __attribute__((tls_model("initial-exec"))) = 0;
thread_local uintptr_t t_alt_hi __attribute__((tls_model("initial-exec"))) = 0;
// A vfork child that asked to be traced (OnTraceMe): its exec hands it on.
thread_local bool t_vm_tracee __attribute__((tls_model("initial-exec"))) = false;
constexpr uint32_t kNoOwner = ~uint32_t{0};  // no task's tid: every task is foreign
bool ForeignSlow();
// Free while the storage has never had such descendants; a gettid after.
inline bool Foreign() { return __builtin_expect(t_hot.owner_tid != 0, 0) && ForeignSlow(); }

// A vfork child's own numbers for the trace's fds once it moved them in its fd table (a dup2
// onto them: see VacateFd), -1: the process's. In thread-local storage, saved and restored
// around a vfork like the rest, so a vfork child's vfork child (whose table is a copy of its
// parent's) starts with them, and a fork child takes them for the process's (AfterForkChildOf).
thread_local int t_vm_trace_fd __attribute__((tls_model("initial-exec"))) = -1;
thread_local int t_vm_shm_fd __attribute__((tls_model("initial-exec"))) = -1;

// The trace's fds as the calling task's fd table numbers them: a vfork child may have moved its
// copies (VacateFd), the writer has its own table (PrivateFdTable).
int CurTraceFd() {
  if (t_hot.vm_child && t_vm_trace_fd >= 0 && !Foreign()) return t_vm_trace_fd;
  return g_trace_fd;
}
int CurShmFd() {
  if (t_hot.vm_child && t_vm_shm_fd >= 0 && !Foreign()) return t_vm_shm_fd;
  return g_shm_fd;
}
int OutFd() { return t_writer_thread ? g_writer_trace_fd : CurTraceFd(); }
int ShmFd() { return t_writer_thread ? g_writer_shm_fd : CurShmFd(); }
// Dispatch now, patched sites after g_patch_after calls of a thread (IORR_PATCH_AFTER; see
// PatchLater).
bool g_patch_pending = false;

// The saves around vfork (see the vfork section at the end).
struct VforkSave {
  ThreadState* state;
  ThreadState* child;  // the child's thread state (null: the child is not recorded)
  uintptr_t ret_addr;  // vfork's caller
  uint64_t mask;       // the signal mask before vfork
  int depth;
  bool done;
  bool in_handler;
  bool armed;
  bool vm_child;  // the caller is itself a vfork child (a nested vfork)
  uintptr_t call_frame;
  Call* hot_call;  // t_hot.call
  bool vm_tracee;  // t_vm_tracee: a vfork child's PTRACE_TRACEME is its own
  char selector;
  Call call;                   // the parent's clone event
  int level;                   // its place on the stack (the entry hands the save's address on)
  uint32_t owner_tid;          // t_hot.owner_tid
  long ppid;                   // the saving task's parent: another one on return means it died
  int vm_trace_fd, vm_shm_fd;  // t_vm_trace_fd, t_vm_shm_fd
  // Set by a task further down the stack that resumed while this save's task waited in vfork:
  // the task is foreign on its return (see iorr_vfork_parent).
  bool orphaned;
  // The value g_fd_move_lock holds while the parent holds it for the child (from the parent's
  // tid, see iorr_vfork_prepare), 0 when it was not taken.
  int fd_lock;
};
constexpr int kVforkNesting = 16;  // a vfork child's vfork's child's ... (or a handler's vfork)
// The first level in thread-local storage, deeper ones (a vfork child's own vfork) in a page
// mapped at the first nested vfork and unmapped once the thread is back at level 0: static TLS
// is carved from every thread's stack, and under an audit module it comes from a small fixed
// surplus that other libraries' initial-exec TLS needs too (the sixteen levels took 1,152 of
// the library's 1,248 bytes).
thread_local VforkSave t_vfork0 __attribute__((tls_model("initial-exec")));
thread_local VforkSave* t_vfork_more __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local int t_vfork_level __attribute__((tls_model("initial-exec"))) = 0;
// See iorr_vfork_plain.
thread_local char t_plain_selector __attribute__((tls_model("initial-exec"))) = 0;
thread_local uint64_t t_plain_mask __attribute__((tls_model("initial-exec"))) = 0;
VforkSave& VforkLevel(int level) { return level == 0 ? t_vfork0 : t_vfork_more[level - 1]; }

long Gettid() { return RawSyscall6(SYS_gettid); }
IORR_COLD bool ForeignSlow() { return Gettid() != static_cast<long>(t_hot.owner_tid); }

void* MapMemory(size_t n) {
  long p = RawSyscall6(SYS_mmap, 0, static_cast<long>(n), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return (p < 0 && p > -4096) ? nullptr : reinterpret_cast<void*>(p);
}

void Yield() { RawSyscall6(SYS_sched_yield); }

// The asymmetric fences (see the top of this file). g_membarrier: this process is registered.
// Not under a seccomp filter: one that does not list membarrier may kill or trap the caller
// (the filter's mode is asked before each use: a program may install one at any time).
std::atomic<bool> g_membarrier{false};
}  // namespace
bool UnderSeccomp() { return RawSyscall6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) != 0; }
// Under seccomp since the image started, and no_new_privs then (PatchNow): a program that
// installs a filter of its own without privileges must set no_new_privs first.
bool g_seccomp_at_start = false;
long g_no_new_privs_at_start = 0;
long NoNewPrivs() { return RawSyscall6(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); }
// A call of the program's that installed a seccomp filter (or strict mode) was seen: caught by
// dispatch or through the syscall() wrapper, which see every such call until patching, or by
// the audit module before the library started (AuditLog::seccomp_installs, DropAuditLog).
// Only a call that succeeded (libseccomp and systemd probe with prctl(PR_SET_SECCOMP, FILTER,
// NULL), EFAULT), and not a vfork child's or another process's on this memory (review).
// Decided before the call (Foreign() may make a call the new filter refuses), and counted as
// in progress meanwhile: patching waits while an install may be under way.
bool g_program_seccomp = false;
// Whether the program's calls that install seccomp filters are seen (dispatch or patched sites
// catch them; PLT wrappers alone, under a debugger or Valgrind, do not): g_program_seccomp can
// be trusted only then.
bool g_sees_seccomp_installs = false;
int g_seccomp_installing = 0;
bool BeginSeccompCall(long nr, const long* a) {
  if (!InstallsSeccomp(nr, a) || t_hot.vm_child || Foreign()) return false;
  __atomic_fetch_add(&g_seccomp_installing, 1, __ATOMIC_SEQ_CST);
  return true;
}
void EndSeccompCall(bool begun, long ret) {
  if (!begun) return;
  if (ret >= 0) __atomic_store_n(&g_program_seccomp, true, __ATOMIC_SEQ_CST);
  __atomic_fetch_sub(&g_seccomp_installing, 1, __ATOMIC_SEQ_CST);
}
// Under a seccomp filter the program installed (see PatchNow).
bool SeccompForbidsPatching() {
  if (__atomic_load_n(&g_seccomp_installing, __ATOMIC_SEQ_CST) != 0) return true;
  return UnderSeccomp() && (__atomic_load_n(&g_program_seccomp, __ATOMIC_SEQ_CST) ||
                            !g_seccomp_at_start || NoNewPrivs() != g_no_new_privs_at_start);
}
namespace {
void RegisterMembarrier() {
  g_membarrier.store(
      !UnderSeccomp() &&
          RawSyscall6(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0,
      std::memory_order_relaxed);
}
// The program thread's half: between a store and a load that must not pass it.
inline void LightFence() {
  if (__builtin_expect(g_membarrier.load(std::memory_order_relaxed), 1))
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
// The writer's half; false when it could not be made (membarrier refused, or a seccomp filter
// came): the process then goes back to real fences on both sides, and what program threads
// published meanwhile with a compiler barrier only is not known to be visible yet (Service
// keeps its raise windows open until its next pass).
bool HeavyFence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  bool ok = true;
  if (g_membarrier.load(std::memory_order_relaxed) &&
      (UnderSeccomp() || RawSyscall6(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0)) {
    g_membarrier.store(false, std::memory_order_relaxed);
    ok = false;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return ok;
}

IORR_COLD void Wake() {
  g_wake.fetch_add(1, std::memory_order_release);
  RawSyscall6(SYS_futex, reinterpret_cast<long>(&g_wake), FUTEX_WAKE_PRIVATE, 1);
}

// `value`: what the lock holds while held (see iorr_vfork_prepare for one that is not 1).
void Lock(std::atomic<int>& l, int value = 1) {
  int expect = 0;
  while (!l.compare_exchange_weak(expect, value, std::memory_order_acquire)) {
    expect = 0;
    Yield();
  }
}
void Unlock(std::atomic<int>& l) { l.store(0, std::memory_order_release); }

// Blocks the signals of `set` on the calling thread for the scope (the kernel's own mask, by the
// raw system call: nothing of libc's), then puts the thread's mask back. `hold` false: nothing.
class SignalsHeld {
 public:
  explicit SignalsHeld(uint64_t set, bool hold = true) : on_(hold) {
    if (on_)
      RawSyscall6(SYS_rt_sigprocmask, SIG_BLOCK, reinterpret_cast<long>(&set),
                  reinterpret_cast<long>(&old_), sizeof(uint64_t));
  }
  ~SignalsHeld() {
    if (on_)
      RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&old_), 0,
                  sizeof(uint64_t));
  }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  bool on_;
  uint64_t old_ = 0;
};
constexpr uint64_t kAllSignals = ~uint64_t{0};

bool NoSeccompFilter();

// Under a file size limit (ulimit -f: RLIMIT_FSIZE), a write of the trace's at or past the limit
// would have the kernel send SIGXFSZ to the process, whose default action ends the program
// (stop 36's sweep: a recording under `ulimit -f` died where the plain run exited 0). A record
// that does not fit below the limit is not written (WriteAll fails: its events count as lost
// and the trace is marked incomplete). The limit is read before each record (the program may
// change it), except where a seccomp filter may refuse prlimit64: there the last value read
// stands (the first at the library's start).
std::atomic<uint64_t> g_fsize_limit{RLIM64_INFINITY};
void ReadFileSizeLimit() {
  struct {
    uint64_t cur, max;
  } lim;
  if (RawSyscall6(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, reinterpret_cast<long>(&lim)) == 0)
    g_fsize_limit.store(lim.cur, std::memory_order_relaxed);
}
// The check and the write are one step across the recording's processes (a review of stop 37:
// between one process's check and its write another's record took the file to the limit, and
// the write at the limit brought SIGXFSZ: 3 of 30 runs of 8 children flushing at their exit):
// SharedState::append_lock, held by a pid. Taken within 20 ms, or from a holder that is gone;
// else the record is not written (counted lost). Only under a limit: no cost otherwise.
struct LimitedAppend {
  uint32_t pid = 0;
  bool held = false;
  LimitedAppend() {
    pid = static_cast<uint32_t>(RawSyscall6(SYS_getpid));
    for (int i = 0; i < 200 && !held; ++i) {
      uint32_t holder = 0;
      held = g_shared->append_lock.compare_exchange_strong(holder, pid, std::memory_order_acquire);
      if (held) break;
      // A holder that died inside its write (SIGKILL) leaves it taken.
      if (RawSyscall6(SYS_kill, holder, 0) == -ESRCH &&
          g_shared->append_lock.compare_exchange_strong(holder, pid, std::memory_order_acquire)) {
        held = true;
        break;
      }
      struct timespec pause = {0, 100'000};
      RawSyscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    }
  }
  ~LimitedAppend() {
    if (held) g_shared->append_lock.store(0, std::memory_order_release);
  }
};
bool FitsFileSizeLimit(size_t n) {
  uint64_t limit = g_fsize_limit.load(std::memory_order_relaxed);
  struct stat st;
  if (RawSyscall6(SYS_fstat, OutFd(), reinterpret_cast<long>(&st)) != 0) return true;
  return static_cast<uint64_t>(st.st_size) + n <= limit;
}

// Writes all of buf to the trace fd (O_APPEND: one write per record keeps records whole).
// Once the launcher has closed the trace to the processes left running (SharedState::closed,
// iorr record --linger), nothing is written and the record counts as written: the counters
// the launcher read when it closed the trace are final.
bool WriteAll(const void* buf, size_t n) {
  if (g_shared != nullptr && g_shared->closed.load(std::memory_order_relaxed) != 0) return true;
  if (NoSeccompFilter()) ReadFileSizeLimit();
  bool limited = g_fsize_limit.load(std::memory_order_relaxed) != RLIM64_INFINITY;
  std::optional<LimitedAppend> step;
  if (limited && g_shared != nullptr) {
    step.emplace();
    if (!step->held) return false;
  }
  if (limited && !FitsFileSizeLimit(n)) return false;
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    long w = RawSyscall6(SYS_write, OutFd(), reinterpret_cast<long>(p), static_cast<long>(n));
    if (w == -EINTR) continue;
    if (w <= 0) return false;
    // Cut short by the file size limit (another process's record came first): the next write
    // would be at the limit, and SIGXFSZ. The launcher repairs the torn record.
    if (limited && static_cast<size_t>(w) < n) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void WriteNote(const char* text) {
  uint8_t buf[4352];
  size_t len = strnlen(text, sizeof(buf) - 16);
  size_t n = trace::FrameRecord(trace::RecordType::kNote, reinterpret_cast<const uint8_t*>(text),
                                len, buf);
  WriteAll(buf, n);
}

// A slot of this process: by its entry where it has one (pids alone collide across PID
// namespaces: every namespace has its pid 1), else by pid.
bool OwnSlot(const ThreadSlot& s) {
  if (s.pid.load(std::memory_order_relaxed) != g_pid) return false;
  return g_entry == 0 || s.proc.load(std::memory_order_relaxed) == g_entry;
}

// Whether the main thread has left, and how many threads remain, without opening a file: the
// writer runs beside the program's threads, and an fd it takes for a moment is the lowest free
// one, perhaps the very number the program has just closed to dup2 onto (dash's redirections
// close fd 1, then dup2 onto it; the dup2 then failed with EBUSY and the write after it with
// EBADF). So: a path lookup and a readlink, no open.
//
// The main thread has left (a zombie leader: still listed, but its fs, and with it its cwd,
// went when it exited). Its task is /proc/PID/task/PID with PID as /proc numbers this process
// (its pid namespace may not be ours).
bool LeaderZombie() {
  char self[24], task[64], cwd[72], link[8];
  long r = RawSyscall6(SYS_readlinkat, AT_FDCWD, reinterpret_cast<long>("/proc/self"),
                       reinterpret_cast<long>(self), sizeof(self) - 1);
  if (r <= 0) return false;
  self[r] = 0;
  snprintf(task, sizeof(task), "/proc/%s/task/%s", self, self);
  snprintf(cwd, sizeof(cwd), "/proc/%s/task/%s/cwd", self, self);
  struct stat st;
  if (RawSyscall6(SYS_newfstatat, AT_FDCWD, reinterpret_cast<long>(task),
                  reinterpret_cast<long>(&st), 0) != 0)
    return false;  // no /proc: nothing can be told
  return RawSyscall6(SYS_readlinkat, AT_FDCWD, reinterpret_cast<long>(cwd),
                     reinterpret_cast<long>(link), sizeof(link)) == -ENOENT;
}

// True when the writer is the only thread left beside the zombie leader: /proc/self/task
// links 2 + the threads (the zombie leader counts until it is reaped).
bool AloneWithLeaderGone() {
  struct stat st;
  if (!LeaderZombie() ||
      RawSyscall6(SYS_newfstatat, AT_FDCWD, reinterpret_cast<long>("/proc/self/task"),
                  reinterpret_cast<long>(&st), 0) != 0)
    return false;
  return st.st_nlink == 4;
}

// Marks a slot free: its watermark fields, then its pid and entry, then its tid (last: a slot
// seen taken has its owner's pid and entry, or none). tid: the one expected there, 0 for any.
void FreeSlot(ThreadSlot& s, uint32_t tid = 0) {
  s.unflushed_min.store(kNever, std::memory_order_relaxed);
  s.in_call_since.store(kNever, std::memory_order_relaxed);
  s.raise_from.store(kNever, std::memory_order_relaxed);
  // A raise its writer left open (killed in it) is closed.
  uint32_t q = s.raise_seq.load(std::memory_order_relaxed);
  if (q & 1) s.raise_seq.store(q + 1, std::memory_order_release);
  s.proc.store(0, std::memory_order_relaxed);
  s.pid.store(0, std::memory_order_relaxed);
  if (tid == 0)
    s.tid.store(0, std::memory_order_release);
  else
    s.tid.compare_exchange_strong(tid, 0, std::memory_order_release);
}

// A spawn window (kSpawnWindowTid) that nobody took for this long is dropped by the next writer:
// the child that would have taken it was not recorded, or its exec failed.
constexpr int64_t kSpawnWindowNs = 1'000'000'000;
// A spawn window being freed or taken over: whoever moved its tid here, by CAS from
// kSpawnWindowTid, owns it until it stores the next tid (0, or its own thread's, a few stores
// later: see MakeOwnSlot). Loops that free slots without a CAS leave such slots, and windows,
// alone.
constexpr uint32_t kClosingWindowTid = kSpawnWindowTid - 1;
// A spawn window being opened: it holds the watermarks already, at a bound, until its opener
// stores the start and makes it a window (kSpawnWindowTid) that children look for. Freed by
// nobody else while its process lives (FreeGoneEntry frees it once the process is gone, and
// an exec's new image frees those of threads the exec ended).
constexpr uint32_t kOpeningWindowTid = kSpawnWindowTid - 2;
bool SpecialTid(uint32_t tid) { return tid >= kOpeningWindowTid; }
// Claims spawn window `id` in slot s (tid kClosingWindowTid, fields untouched: its
// in_call_since still holds the watermarks): false when it is gone (taken by a child, dropped
// by a writer, its spawner gone) or the slot holds another window since.
bool ClaimSpawnWindow(ThreadSlot& s, int64_t id) {
  if (s.raise_from.load(std::memory_order_acquire) != id) return false;
  uint32_t tid = kSpawnWindowTid;
  if (!s.tid.compare_exchange_strong(tid, kClosingWindowTid, std::memory_order_acq_rel))
    return false;
  if (s.raise_from.load(std::memory_order_acquire) != id) {  // another window since: not ours
    tid = kClosingWindowTid;
    s.tid.compare_exchange_strong(tid, kSpawnWindowTid, std::memory_order_acq_rel);
    return false;
  }
  return true;
}
bool FreeSpawnWindow(ThreadSlot& s, int64_t id) {
  if (!ClaimSpawnWindow(s, id)) return false;
  FreeSlot(s, kClosingWindowTid);
  return true;
}

// One F_OFD_* lock call (cmd, type) on byte e of the shared memfd through fd: process entry
// e's liveness lock. *type_out: the type F_OFD_GETLK found.
long EntryLock(long fd, int cmd, short type, uint32_t e, short* type_out = nullptr) {
  struct flock fl = {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = e;
  fl.l_len = 1;
  long r = RawSyscall6(SYS_fcntl, fd, cmd, reinterpret_cast<long>(&fl));
  if (type_out != nullptr) *type_out = fl.l_type;
  return r;
}

// True when process entry `e` (0-based) has no liveness lock: its process is gone. Asked
// through the shared fd's description, which holds no lock itself.
bool EntryGone(uint32_t e) {
  short type = 0;
  return EntryLock(ShmFd(), F_OFD_GETLK, F_WRLCK, e, &type) == 0 && type == F_UNLCK;
}

// The slots a scan reads: all that were ever taken (see SharedState::slots_used). Read after
// whatever fence the scan needs: a slot taken since is one whose taking that fence precedes.
uint32_t SlotsInUse() {
  uint32_t n = g_shared->slots_used.load(std::memory_order_seq_cst);
  return n < g_shared->slots ? n : g_shared->slots;
}

// Frees the thread slots of a process found gone (entry e, pid as seen), then the entry. Slots
// are matched by entry and pid, so a finder that comes late cannot free those of a process that
// has taken the entry since; freeing twice is harmless (the process is gone). The finder whose
// CAS frees the entry writes the note.
void FreeGoneEntry(uint32_t e, uint32_t pid, bool say = true) {
  int freed = 0;
  for (uint32_t i = 0, used = SlotsInUse(); i < used; ++i) {
    ThreadSlot& s = g_shared->slot[i];
    uint32_t tid = s.tid.load(std::memory_order_acquire);
    int64_t window = s.raise_from.load(std::memory_order_acquire);  // (before the checks below)
    if (s.proc.load(std::memory_order_acquire) != e + 1 ||
        s.pid.load(std::memory_order_relaxed) != pid || tid == 0 || tid == kClosingWindowTid)
      continue;                    // (one being opened goes below: its opener is gone)
    if (tid == kSpawnWindowTid) {  // (its child, if it comes, finds none: it drops its log)
      FreeSpawnWindow(s, window);
      continue;
    }
    FreeSlot(s);
    ++freed;
  }
  uint32_t expect = pid;
  if (!g_shared->proc_pid[e].compare_exchange_strong(expect, 0)) return;
  if (say && freed > 0) {
    char note[128];
    snprintf(note, sizeof(note),
             "process-gone %u: ended without releasing its slots (killed?); %d thread slots freed",
             pid, freed);
    WriteNote(note);
  }
}

// Frees the entries (and slots) of every process whose lock is gone.
void SweepGoneEntries() {
  for (uint32_t e = 0; e < kSharedProcs; ++e) {
    uint32_t pid = g_shared->proc_pid[e].load(std::memory_order_relaxed);
    if (pid != 0 && e + 1 != g_entry && EntryGone(e)) FreeGoneEntry(e, pid, false);
  }
}

// A slot whose watermark has not moved for this long is checked: is its process still there?
constexpr int64_t kStuckNs = 100'000'000;
constexpr int64_t kOrphanNs = 1'000'000'000;  // a slot whose process released its entry

// The earliest start a slot covers. in_call_since is read before unflushed_min: a thread ends
// a call by lowering unflushed_min to the event's start, then clearing in_call_since, so a
// reader that sees the call cleared sees the lowered value (read the other way round, both
// could be missed). A raise under way (raise_seq odd, see protocol.h) also covers raise_from;
// a raise that began or ended between the reads (the count moved) makes them read again.
int64_t SlotMin(const ThreadSlot& s) {
  for (int tries = 0;; ++tries) {
    uint32_t q = s.raise_seq.load(std::memory_order_acquire);
    int64_t b = s.in_call_since.load(std::memory_order_acquire);
    int64_t a = s.unflushed_min.load(std::memory_order_acquire);
    int64_t from = s.raise_from.load(std::memory_order_acquire);
    std::atomic_thread_fence(std::memory_order_acquire);
    int64_t m = std::min(a, b);
    // After many moves (a writer raising this slot over and over), raise_from read between
    // two of them still bounds what was unwritten then.
    if ((q & 1) || tries >= 64) m = std::min(m, from);
    if (q == s.raise_seq.load(std::memory_order_relaxed) || tries >= 64) return m;
  }
}

// Every event not yet in the file starts at or after this: the clock is read first (and fenced),
// then every thread's slot (see BeginCall for why that order is enough).
int64_t Watermark() {
  __builtin_ia32_lfence();
  // Each process keeps its own TSC-to-time pair: allow for their skew (< 1 us when resynced
  // every 20 ms) with a wide margin.
  int64_t now = NowNs();
  int64_t w = now - kClockSkewMarginNs;
  __builtin_ia32_lfence();
  HeavyFence();
  for (uint32_t i = 0, used = SlotsInUse(); i < used; ++i) {
    ThreadSlot& s = g_shared->slot[i];
    uint32_t holder = s.tid.load(std::memory_order_acquire);
    if (holder == 0) continue;
    // (The window's id before its start: a start read after would be a later window's.)
    int64_t window = holder == kSpawnWindowTid ? s.raise_from.load(std::memory_order_acquire) : 0;
    int64_t m = SlotMin(s);
    if (holder == kSpawnWindowTid && m < now - kSpawnWindowNs && FreeSpawnWindow(s, window))
      continue;
    if (m < now - kStuckNs) {
      // A process killed mid-call (SIGKILL) never clears its slots: free them once its lock
      // is gone. Its unwritten events are lost with it; no later event can come from it.
      uint32_t proc = s.proc.load(std::memory_order_acquire);
      uint32_t pid = s.pid.load(std::memory_order_relaxed);
      if (proc != 0 && proc != g_entry && proc <= kSharedProcs) {
        uint32_t owner = g_shared->proc_pid[proc - 1].load(std::memory_order_acquire);
        if (owner == pid && EntryGone(proc - 1)) {
          FreeGoneEntry(proc - 1, pid);
          continue;
        }
        // Its entry no longer names it: its process released it at exit (and a thread of it
        // took this slot as the release went by). Stuck for a second past that, it is gone.
        if (owner != pid && m < now - kOrphanNs) {
          uint32_t tid = s.tid.load(std::memory_order_acquire);
          if (tid != 0 && !SpecialTid(tid) && s.pid.load(std::memory_order_relaxed) == pid &&
              s.proc.load(std::memory_order_relaxed) == proc) {
            FreeSlot(s, tid);
            continue;
          }
        }
      }
    }
    if (m < w) w = m;
  }
  return w;
}

// Compresses one encoder's chunk and appends it. Under g_writer_lock.
void WriteEncoder(ChunkEncoder* enc, WriterBuffers& b) {
  if (enc->empty()) return;
  uint32_t events = enc->events();
  size_t n = enc->Finish(*b.compressor, Watermark(), b.out, b.cap);
  if (n == 0 || !WriteAll(b.out, n)) {
    g_shared->dropped_events.fetch_add(events, std::memory_order_relaxed);
    g_shared->write_errors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_shared->events.fetch_add(events, std::memory_order_relaxed);
  g_shared->chunks.fetch_add(1, std::memory_order_relaxed);
}

// The first entry at or after position pos (skipping a wrap marker), or nullptr at tail.
const EntryHead* EntryAt(ThreadState* ts, uint64_t pos, uint64_t tail, uint64_t* at) {
  while (pos < tail) {
    const auto* h = reinterpret_cast<const EntryHead*>(ts->ring + (pos & (kRingBytes - 1)));
    if (h->size != 0) {
      *at = pos;
      return h;
    }
    pos += kRingBytes - (pos & (kRingBytes - 1));
  }
  return nullptr;
}

void DecodeEntry(ThreadState* ts, const EntryHead* h, Event* e) {
  const trace::CallShape& spec = trace::Shape(static_cast<CallId>(h->call));
  e->call = static_cast<CallId>(h->call);
  e->pid = ts->pid;
  e->tid = ts->tid;
  e->start_ns = h->start;
  e->end_ns = h->end;
  e->ret = h->ret;
  const char* str = reinterpret_cast<const char*>(h + 1);
  for (int i = 0; i < spec.nargs; ++i) {
    trace::Arg& a = e->args[i];
    if (trace::IsString(spec.args[i].kind)) {
      a.null = h->args[i] < 0;
      size_t n = a.null ? 0 : static_cast<size_t>(h->args[i]);
      a.s = std::string_view(str, n);
      str += n;
    } else {
      a.i = h->args[i];
    }
  }
}

// Compresses and writes a thread's encoder. Under g_writer_lock.
void WriteThreadChunk(ThreadState* ts, WriterBuffers& b) {
  WriteEncoder(&ts->enc, b);
  ts->enc.Begin(ts->stream, ts->pid, ts->tid);
  ts->encoder_since = kNever;
  ts->encoder_last_start = INT64_MIN;
}

// Lowers a slot's unflushed_min to `start` if it is later (a CAS: the writer may raise it).
__attribute__((always_inline)) inline void CoverStart(ThreadSlot& s, int64_t start) {
  int64_t cur = s.unflushed_min.load(std::memory_order_relaxed);
  while (start < cur &&
         !s.unflushed_min.compare_exchange_weak(cur, start, std::memory_order_seq_cst)) {
  }
}

void EndRaise(ThreadState* ts);

// Drains a thread's ring into its encoder, writing full chunks, and the partial one when
// `force`, when the thread exited, or when its oldest event is older than kFlushAgeNs. Then
// publishes the thread's earliest unwritten start. Under g_writer_lock.
// A raise of the slot's watermark opens a window (protocol.h): true when this call opened one.
// The caller then fences (HeavyFence, unless the thread cannot be publishing: a vfork child
// writing its own ring) and closes it with EndRaise, which covers what the thread published
// meanwhile.
bool ServiceThread(ThreadState* ts, bool force, int64_t now, WriterBuffers& b) {
  if (ts->raising) {  // left open by a pass whose fence failed: threads fence fully since
    EndRaise(ts);
    ts->raising = false;
  }
  uint64_t head = ts->head.load(std::memory_order_relaxed);
  uint64_t tail = ts->tail.load(std::memory_order_acquire);
  // The ring is taken kDrainWindow entries at a time, each window in start order: the calls
  // recorded nested in another (BeginNested) are in the ring before the call they came in,
  // which started first, and usually in the same window. One that goes back in time across
  // windows or passes starts a chunk of its own (below): one per interrupted call cost a
  // review's program (a 1 kHz handler's calls in a loop of calls) 1,647 chunks for 15.
  constexpr int kDrainWindow = 128;
  const EntryHead* window[kDrainWindow];
  for (;;) {
    int n = 0;
    bool sorted = true;
    uint64_t next = head, at;
    while (n < kDrainWindow) {
      const EntryHead* h = EntryAt(ts, next, tail, &at);
      if (h == nullptr) break;
      if (n > 0 && h->start < window[n - 1]->start) sorted = false;
      window[n++] = h;
      next = at + h->size;
    }
    if (n == 0) break;
    if (__builtin_expect(!sorted, 0)) {  // insertion sort, stable: the few nested calls move
      for (int i = 1; i < n; ++i) {
        const EntryHead* h = window[i];
        int j = i;
        for (; j > 0 && window[j - 1]->start > h->start; --j) window[j] = window[j - 1];
        window[j] = h;
      }
    }
    for (int i = 0; i < n; ++i) {
      const EntryHead* h = window[i];
      DecodeEntry(ts, h, &ts->decoded);
      if (__builtin_expect(h->start < ts->encoder_last_start, 0) && !ts->enc.empty())
        WriteThreadChunk(ts, b);
      auto r = ts->enc.Add(ts->decoded);
      if (r == ChunkEncoder::AddResult::kFull) {
        WriteThreadChunk(ts, b);
        r = ts->enc.Add(ts->decoded);
      }
      if (r == ChunkEncoder::AddResult::kOk) {
        ts->encoder_last_start = h->start;
        if (h->start < ts->encoder_since) ts->encoder_since = h->start;
      } else {
        g_shared->dropped_events.fetch_add(1, std::memory_order_relaxed);
      }
    }
    head = next;
    ts->head.store(head, std::memory_order_release);
  }
  bool exited = ts->exited.load(std::memory_order_acquire) != 0;
  if (!ts->enc.empty() && (force || exited || now - ts->encoder_since >= kFlushAgeNs))
    WriteThreadChunk(ts, b);
  // Publish the earliest unwritten start. Lowering is always safe; a raise opens a window.
  ThreadSlot& s = *ts->slot;
  int64_t old = s.unflushed_min.load(std::memory_order_relaxed);
  if (ts->encoder_since <= old) {
    CoverStart(s, ts->encoder_since);
    return false;
  }
  uint32_t q = s.raise_seq.load(std::memory_order_relaxed) & ~1u;
  ts->raise_q = q + 1;
  s.raise_from.store(old, std::memory_order_relaxed);
  s.raise_seq.store(q + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // the window, then the raise
  ts->drained = head;
  // A CAS: a thread that lowered it meanwhile published an event not drained yet; the lowered
  // value stays (it covers everything unwritten), and the window closes with nothing to check.
  if (!s.unflushed_min.compare_exchange_strong(old, ts->encoder_since, std::memory_order_seq_cst)) {
    s.raise_seq.store(q + 2, std::memory_order_release);
    return false;
  }
  return true;
}

// Closes the window ServiceThread opened, once the writer's side of the fence is done: an event
// the thread published while the raise went on is either seen in its ring now or the thread saw
// the raised value and covered it itself.
void EndRaise(ThreadState* ts) {
  ThreadSlot& s = *ts->slot;
  uint64_t at;
  if (const EntryHead* h = EntryAt(ts, ts->drained, ts->tail.load(std::memory_order_acquire), &at))
    CoverStart(s, h->start);
  // Only the window this writer opened (a slot freed and taken meanwhile is someone else's).
  uint32_t q = ts->raise_q;
  s.raise_seq.compare_exchange_strong(q, q + 1, std::memory_order_release);
}

// ServiceThread and EndRaise for a ring nobody else is publishing into.
void ServiceThreadAlone(ThreadState* ts, bool force, int64_t now, WriterBuffers& b) {
  if (ServiceThread(ts, force, now, b)) EndRaise(ts);
}

void FreeThread(int index, ThreadState* ts) {
  g_threads[index].store(nullptr, std::memory_order_release);
  // Only while the slot is still this thread's: a release at exit or a finder may have freed it,
  // and another thread may hold it since.
  ThreadSlot& s = *ts->slot;
  if (s.tid.load(std::memory_order_acquire) == ts->tid &&
      s.pid.load(std::memory_order_relaxed) == ts->pid && OwnSlot(s))
    FreeSlot(s, ts->tid);
  size_t bytes = ts->memory_bytes;
  ts->~ThreadState();
  RawSyscall6(SYS_munmap, reinterpret_cast<long>(ts), static_cast<long>(bytes));
}

// Maps a compressor and an output buffer in one mapping (pages are touched as used), the
// compressor's workspace apart, at its first use (ChunkCompressor::InitLazy) unless
// PrepareWriterBuffers maps it first. No malloc: this runs at exec and exit, also in children
// of multi-threaded programs where another thread may have held malloc's lock when they were
// cloned.
bool MapWriterBuffers(WriterBuffers* b) {
  if (b->compressor) return true;
  size_t head = (sizeof(ChunkCompressor) + 4095) & ~size_t{4095};
  size_t out_cap = trace::kMaxChunkRecordBytes + 64 +
                   static_cast<size_t>(g_limits.section_bytes) * (trace::kNumSections + 2) * 2;
  auto* mem = static_cast<uint8_t*>(MapMemory(head + out_cap));
  if (!mem) return false;
  auto* c = new (mem) ChunkCompressor();
  if (!c->InitLazy(g_limits.zstd_level, MapMemory)) return false;
  b->out = mem + head;
  b->cap = out_cap;
  b->compressor = c;
  return true;
}

void UnmapWriterBuffers(WriterBuffers* b) {
  if (!b->compressor) return;
  auto* mem = reinterpret_cast<uint8_t*>(b->compressor);
  size_t len = static_cast<size_t>(b->out + b->cap - mem);
  if (void* ws = b->compressor->workspace())
    RawSyscall6(SYS_munmap, reinterpret_cast<long>(ws),
                static_cast<long>(b->compressor->workspace_bytes()));
  b->compressor->~ChunkCompressor();
  RawSyscall6(SYS_munmap, reinterpret_cast<long>(mem), static_cast<long>(len));
  *b = WriterBuffers{};
}

bool EnsureWriterResources() { return MapWriterBuffers(&g_buffers); }

std::atomic<long> g_writer_owner{0};  // tid holding g_writer_lock
// This thread holds the writer lock for an exit or exec (FlushAllAndHold).
thread_local bool t_holds_writer __attribute__((tls_model("initial-exec"))) = false;
// A fatal signal that came during this thread's own Service pass (FlushBeforeDeath).
thread_local int t_deferred_signal __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<bool> g_leader_left{false};  // the main thread left through pthread_exit/exit
unsigned* g_nptl_nthreads = nullptr;     // glibc's count of its threads (GLIBC_PRIVATE)
std::atomic<int> g_last_exit_code{0};    // of the latest thread seen leaving (SYS_exit)

// One pass over all threads. `force`: write everything pending now.
// A process that never starts a writer thread (posix_spawn's child, NoWriterInThisProcess): its
// threads write their rings themselves when one is full (Service).
bool g_no_writer = false;

void ServicePass(bool force);

// A pass by thread `self`, which has just taken g_writer_lock; the lock is given back.
void ServiceHolding(long self, bool force) {
  g_writer_owner.store(self, std::memory_order_release);
  ServicePass(force);
  g_writer_owner.store(0, std::memory_order_release);
  Unlock(g_writer_lock);
}

void Service(bool force) {
  long self = Gettid();
  if (g_writer_owner.load(std::memory_order_acquire) == self) return;  // re-entered (a signal)
  Lock(g_writer_lock);
  ServiceHolding(self, force);
  if (__builtin_expect(t_deferred_signal != 0, 0)) {  // a fatal signal came during the pass
    int sig = t_deferred_signal;
    t_deferred_signal = 0;
    DieOfSignal(sig);
  }
}

// Service's pass, with g_writer_lock held.
void ServicePass(bool force) {
  if (EnsureWriterResources()) {
    int64_t now = NowNs();
    int used = g_threads_used.load(std::memory_order_acquire);
    bool raised = false;
    for (int i = 0; i < used; ++i) {
      ThreadState* ts = g_threads[i].load(std::memory_order_acquire);
      if (ts == nullptr) continue;
      // A leaving thread whose SYS_exit was not seen (it left from inside a wrapped call, where
      // syscalls run untrapped) is done once the kernel no longer knows its tid.
      if (ts->leaving.load(std::memory_order_acquire) &&
          !ts->exited.load(std::memory_order_acquire) &&
          (ts->tid == g_pid ? LeaderZombie()
                            : RawSyscall6(SYS_tgkill, g_pid, ts->tid, 0) == -ESRCH))
        ts->exited.store(1, std::memory_order_release);
      ts->raising = ServiceThread(ts, force, now, g_buffers);
      raised |= ts->raising;
    }
    // One fence for every window this pass opened, then they close (without the fence, at the
    // next pass, when threads fence fully again).
    bool fenced = !raised || HeavyFence();
    for (int i = 0; i < used; ++i) {
      ThreadState* ts = g_threads[i].load(std::memory_order_acquire);
      if (ts == nullptr) continue;
      if (ts->raising && fenced) {
        EndRaise(ts);
        ts->raising = false;
      }
      if (ts->exited.load(std::memory_order_acquire) && ts->enc.empty() &&
          ts->head.load(std::memory_order_relaxed) == ts->tail.load(std::memory_order_acquire))
        FreeThread(i, ts);
    }
  }
}

// Gives the writer thread an fd table of its own holding only the library's fds. Sharing the
// program's, it made every fd call of the program take the kernel's path for tables shared
// between threads (a reference taken on the file, and for read, write and lseek the file
// position's lock): 15 to 50 ns per call (tools/bench/record-call-cost.sh, dispatch off).
//
// The writer must never hold a reference to a file of the program, not even for a moment: a
// close of the program's would then not be the file's last (its flock and OFD locks would stay,
// a pipe would not reach EOF nor give EPIPE, a port would stay bound). No way of leaving a
// shared table copies nothing: unshare and clone copy every fd, and close_range with
// CLOSE_RANGE_UNSHARE over the whole range still copies the first 64 (the kernel's dup_fd
// copies at least NR_OPEN_DEFAULT entries, references taken) and then closes them in the new
// table. (Until stop 38 the writer did that at its start, while the program ran on: a program
// forking 300 children that each made a recorded call, then closed a pipe's read end and
// wrote to it, had 2 or 3 of those writes take a byte instead of EPIPE in every recorded run;
// behaviour case "a closed pipe at the writer's start".)
// So the table is made while no thread of the program can close anything: on the request of
// the program's only thread, the main one, which waits meanwhile with every signal blocked
// (OwnWriterTable). Waiting at every writer's start cost a short process its writer's whole
// start (300 processes of one call each: +0.3 to 0.4 ms a process; /bin/true under sh: +0.35 ms),
// so it is asked for only where the shared table would cost more: at a thread's 4096th
// recorded call (kOwnTableAfterCalls), or as the program starts its first thread after 200.
// The wait is the writer's pass under way, if any, and the move: well under a millisecond on a
// quiet machine, milliseconds on a loaded one. Until then the writer shares the program's
// table, and works on the library's fds in it under g_fd_move_lock (InWriterTable), as a
// program thread moves them under it (VacateFd). Before the program leaves the table itself
// (unshare(CLONE_FILES) through libc, close_range with CLOSE_RANGE_UNSHARE), the writer moves
// first: left in the old table it would keep every file of it open. It stays in the program's
// table while the program has threads of its own (asked again 4096 calls later), and for good
// where the move cannot be made safely: another process sharing the table (CLONE_FILES), a
// seccomp filter (the program's may refuse or kill for close_range or pidfd_getfd), no
// pidfd_getfd (before Linux 5.6; probed once by iorr record). (Left: a raw unshare system call,
// unseen, leaves the writer in the old table.) The library's three fds are taken into the writer's
// emptied table through a pidfd of the process (pidfd_getfd copies an fd from the table of the
// process's main thread, the program's); g_fd_move_lock keeps a program thread from moving them
// meanwhile. Returns false when the writer was left with a table it cannot work in (a call failed
// half-way): it then goes.
bool g_pidfd_getfd = false;  // iorr record's probe (SharedState), false after a failure here
std::atomic<long> g_writer_tid{0};             // the writer thread's, while it runs
std::atomic<int> g_table_request{0};           // 1: OwnWriterTable waits for the writer
std::atomic<uint32_t> g_writer_table_done{0};  // futex word: the writer has served the request
bool g_writer_table_asked = false;             // once per process
constexpr uint32_t kOwnTableAfterCalls = 4096;
bool PrivateFdTable() {
  if (!g_pidfd_getfd) return true;
  Lock(g_fd_move_lock);
  int want[3] = {g_trace_fd, g_shm_fd, g_lock_fd};
  bool ok = true;
  if (RawSyscall6(SYS_close_range, 0, UINT_MAX, CLOSE_RANGE_UNSHARE) == 0) {
    long pidfd = RawSyscall6(SYS_pidfd_open, g_pid, 0);
    ok = pidfd >= 0;
    int got[3] = {-1, -1, -1};
    for (int i = 0; i < 3 && ok; ++i) {
      if (want[i] < 0) continue;  // no lock fd
      long fd = RawSyscall6(SYS_pidfd_getfd, pidfd, want[i], 0);
      ok = fd >= 0;
      got[i] = static_cast<int>(fd);
    }
    if (pidfd >= 0) RawSyscall6(SYS_close, pidfd);
    if (ok) {
      g_writer_trace_fd = got[0];
      g_writer_shm_fd = got[1];
      g_writer_lock_fd = got[2];
      t_writer_thread = true;
    }
  }  // else: still the program's table, shared
  Unlock(g_fd_move_lock);
  return ok;
}

// The writer's buffers and the compressor's workspace (3.5 MiB at level 3), mapped as the
// writer is started, at the process's first recorded call: not when a chunk first needs
// compressing, later in the program's life, when it may have lowered its RLIMIT_AS or
// installed a seccomp filter that refuses mmap (a mapping then fails, and what it was for, or
// kills the program: behaviour case "narrowed after start"). The size comes from iorr record
// (SharedState::zstd_workspace_bytes): zstd's estimate is cold code, some 20 us of page faults
// in every process. A process without a writer maps them at its first flush, the workspace
// only when a chunk needs compressing (ChunkCompressor::InitLazy).
void PrepareWriterBuffers() {
  long self = Gettid();
  // Not where this thread holds the lock already (an exec's hold, whose exec failed): its
  // first flush maps them.
  if (t_holds_writer || g_writer_owner.load(std::memory_order_acquire) == self) return;
  size_t bytes = g_shared->zstd_version == ChunkCompressor::BuiltVersion()
                     ? g_shared->zstd_workspace_bytes
                     : 0;  // MapWorkspace's own estimate
  Lock(g_writer_lock);
  g_writer_owner.store(self, std::memory_order_release);
  if (EnsureWriterResources()) g_buffers.compressor->MapWorkspace(bytes);
  g_writer_owner.store(0, std::memory_order_release);
  Unlock(g_writer_lock);
}

// The writer's half of OwnWriterTable: true when there was a request. A writer left without a
// table it can work in leaves.
bool ServeTableRequest() {
  int one = 1;
  if (g_table_request.load(std::memory_order_acquire) == 0 ||
      !g_table_request.compare_exchange_strong(one, 0))
    return false;
  bool ok = PrivateFdTable();
  g_writer_table_done.store(1, std::memory_order_release);
  RawSyscall6(SYS_futex, reinterpret_cast<long>(&g_writer_table_done), FUTEX_WAKE_PRIVATE, 1);
  if (ok) return true;
  // No trace fd in the writer's table, and no way back to the program's: a later writer
  // shares it. (This thread is not counted by glibc and leaves without telling it.)
  g_pidfd_getfd = false;
  g_writer_tid.store(0, std::memory_order_release);
  g_writer_started.store(0, std::memory_order_release);
  // The leader goes on once told, and may leave through pthread_exit: this thread's own exit
  // would then end the process with its status, 0, instead of the leader's. Wait for the
  // leader to be gone, up to 100 ms, and end the process as the kernel would have; a leader
  // that stays keeps the process going, and this thread leaves.
  for (int i = 0; i < 100; ++i) {
    if (AloneWithLeaderGone())
      RawSyscall6(SYS_exit_group, g_last_exit_code.load(std::memory_order_relaxed));
    struct timespec ms = {0, 1'000'000};
    RawSyscall6(SYS_nanosleep, reinterpret_cast<long>(&ms), 0);
  }
  RawSyscall6(SYS_exit, 0);
  return false;
}

// The writer's work on the library's fds (a pass: its writes, the liveness locks it asks; a
// note): while it shares the program's table, where a program thread may move them (VacateFd,
// as the program dup2s onto one) or a vfork child copy them, under g_fd_move_lock, so that the
// numbers it reads are the ones it uses (a review of stop 38: a pass's chunk written to the
// number the program had just dup2'd its own file onto). Such a thread waits for the pass.
template <typename F>
void InWriterTable(F work) {
  bool sharing = !t_writer_thread;
  if (sharing) Lock(g_fd_move_lock);
  work();
  if (sharing) Unlock(g_fd_move_lock);
}

void* WriterMain(void*) {
  t_hot.done = true;
  t_hot.depth = 1;
  // First: the note tells readers (trace_coverage) that this thread's system calls are the
  // library's, PrivateFdTable's included, even when the process ends before the writer has
  // its own table.
  char note[96];
  g_writer_tid.store(Gettid(), std::memory_order_release);
  snprintf(note, sizeof(note), "writer-thread %u %ld", g_pid, Gettid());
  InWriterTable([&] { WriteNote(note); });
  if (g_nptl_nthreads == nullptr)
    InWriterTable([] {
      WriteNote(
          "writer-thread counted by glibc (no __nptl_nthreads): a program whose main thread "
          "leaves with pthread_exit ends without running its exit handlers");
    });
  unsigned ticks = 0;
  for (;;) {
    uint32_t seen = g_wake.load(std::memory_order_acquire);
    // A request made before `seen` was read is seen here; one made after changed g_wake.
    if (!ServeTableRequest()) {
      struct timespec ts = {0, kWriterTickNs};
      RawSyscall6(SYS_futex, reinterpret_cast<long>(&g_wake), FUTEX_WAIT_PRIVATE, seen,
                  reinterpret_cast<long>(&ts));
      ServeTableRequest();
    }
    ResyncTsc();
    InWriterTable([] { Service(false); });
    // The main thread left without ending the process, and every other thread has left too
    // without glibc ending it (raw exit calls, or a glibc that does not let the writer go
    // uncounted: see StartWriter). Without the writer the process would have ended here, with
    // the status of the thread that left last: end it so, keeping the trace.
    // Every tick once the main thread was seen leaving, else every fifth (a leaving that
    // bypassed every wrapper: a raw syscall instruction in PLT-only recording).
    if ((g_leader_left.load(std::memory_order_acquire) || ++ticks % 5 == 0) &&
        AloneWithLeaderGone()) {
      int code = g_last_exit_code.load(std::memory_order_relaxed);
      char last[96];
      snprintf(last, sizeof(last), "last-thread-exit %u: status %d", g_pid, code);
      InWriterTable([&] {
        WriteNote(last);
        Service(true);
        ReleaseProcessSlots();
      });
      RawSyscall6(SYS_exit_group, code);
    }
  }
  return nullptr;
}

// glibc's flag for a process without threads: for a program with no threads of its own,
// StartWriter sets `__libc_single_threaded` back after creating the writer. glibc reads that flag
// before each cancellable call (read, write, openat, close: with the flag down, each one takes and
// gives back asynchronous cancellation, two atomic operations; 2.2% of `tar xf`'s samples under
// perf at stop 27, and 1.089x against 1.065x side by side), and malloc, pthread_mutex_lock and fork
// take shortcuts on it. Those shortcuts stay right because the writer calls none of them: it
// allocates nothing from malloc (its buffers are mmap'd), takes no pthread mutex and never forks or
// cancels (perf probes on malloc, free and pthread_mutex_lock fired in no writer thread while tar,
// rm and sh were recorded). What does change is glibc's setuid family, which with the flag up
// changes only the calling thread: the writer would keep root after the program dropped it. The
// wrappers of that family put the flag down for the call (BeforeSetxid, AfterSetxid; initgroups,
// whose NSS modules may start threads meanwhile, with the flag up, then its groups again with the
// flag down); the program's own pthread_create and pthread_cancel put it down as they would
// unrecorded. The flag is in two places when the program reads it itself: glibc's own, which
// glibc's code reads, and the program's copy, which pthread_create writes as well; both change
// together.
std::atomic<bool> g_single_reset{false};
char* g_single_libc = nullptr;  // glibc's own (Init)

void SetSingleThreaded(char value) {
  *g_single_libc = value;
  __libc_single_threaded = value;
}

// Whether thread `tid` has the calling thread's capabilities (effective, permitted and
// inheritable; capget reads another thread's without privilege). They are per thread: a
// program that raises its own effective set (capset, after PR_SET_KEEPCAPS and a setresuid,
// as `setpriv --reuid=... --keep-groups` does) leaves the writer without them, and the next
// id change glibc hands to every thread fails in the writer, which makes glibc abort the
// process ("fatal inconsistency": stop 39's sweep, setpriv ended by SIGABRT recorded).
bool SameCapabilities(long tid) {
  struct {
    uint32_t version;
    int pid;
  } self = {0x20080522, 0}, other = {0x20080522, static_cast<int>(tid)};  // version 3
  struct {
    uint32_t effective, permitted, inheritable;
  } a[2], b[2];
  return RawSyscall6(SYS_capget, reinterpret_cast<long>(&self), reinterpret_cast<long>(a)) == 0 &&
         RawSyscall6(SYS_capget, reinterpret_cast<long>(&other), reinterpret_cast<long>(b)) == 0 &&
         memcmp(a, b, sizeof(a)) == 0;
}
// Set once the writer was left out of an id change: its ids may differ from the program's from
// then on, and a later change the program's thread fails could succeed in the writer, or the
// reverse (setgid(0) after such a change: glibc aborted), whatever their capabilities: every
// later change is the calling thread's alone. A fork child's writer starts with its ids.
bool g_writer_ids_apart = false;
}  // namespace

bool BeforeSetxid(SetxidWindow* w) {
  w->lowered = false;
  // Not in a vfork child, nor in a CLONE_VM child of the program's: the flag and glibc's lock
  // of its thread list are their parent's; there the flag up gives the child's own call alone,
  // as for the unrecorded program. Nor once the program has threads of its own (glibc put its
  // flag down then).
  if (t_hot.vm_child || Foreign() || !g_single_reset.load(std::memory_order_relaxed) ||
      *g_single_libc == 0)
    return false;
  // Nor where the writer's capabilities are not the program's (SameCapabilities), nor ever
  // after that (g_writer_ids_apart): the change is then the calling thread's alone, as in the
  // program unrecorded, and the writer keeps the ids it had (said in the trace, once).
  if (g_writer_ids_apart) return false;
  long writer = g_writer_tid.load(std::memory_order_acquire);
  // A writer made but not running yet has no tid to ask, and glibc's broadcast would reach it
  // all the same: its tid is waited for, 500 ms at most (CI of stop 40, IORR_PATCH=0 beside
  // another suite: "keepcaps" ended once by SIGABRT, the abort glibc makes when a thread fails
  // the change the others made; not seen again in 210 runs here, with load or without).
  for (int i = 0; writer == 0 && !g_no_writer &&
                  g_writer_started.load(std::memory_order_acquire) != 0 && i < 5000;
       ++i) {
    struct timespec pause = {0, 100'000};
    RawSyscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    writer = g_writer_tid.load(std::memory_order_acquire);
  }
  if (writer != 0 && !SameCapabilities(writer)) {
    g_writer_ids_apart = true;
    if (g_on) {  // (not in a vfork child: above)
      char note[200];
      snprintf(note, sizeof(note),
               "capture %u: the program changed its ids with capabilities its thread alone has "
               "(capset): the writer thread keeps the ids it had",
               g_pid);
      WriteNote(note);
    }
    return false;
  }
  // A handler's own setuid (async-signal-safe) must not come in while glibc holds its thread
  // list's lock for this one: with the flag down it would take the lock again and wait for
  // ever. Signals wait for the call's end, and so that none is needed for dispatch's traps,
  // the thread's calls run natively meanwhile (not file-system calls: nothing goes unrecorded).
  w->selector = t_hot.selector;
  AllowSyscalls();
  sigset_t all;
  sigfillset(&all);
  RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&all),
              reinterpret_cast<long>(&w->mask), sizeof(uint64_t));
  SetSingleThreaded(0);
  w->lowered = true;
  return true;
}

// After the call, every thread has the new ids (glibc waits for them all): the flag goes up
// again, as the program would see it unrecorded.
void AfterSetxid(const SetxidWindow& w) {
  if (!w.lowered) return;
  SetSingleThreaded(1);
  RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&w.mask), 0,
              sizeof(uint64_t));
  if (t_hot.armed) t_hot.selector = w.selector;
}

namespace {

// libc's code, where a trapped call may switch the process to patched sites (PatchFromHandler).
uintptr_t g_libc_text_lo = 0, g_libc_text_hi = 0;

}  // namespace

bool InLibcText(uintptr_t pc) { return pc >= g_libc_text_lo && pc < g_libc_text_hi; }

// glibc's own handlers for 32 and 33 (pthread_cancel's, setuid's in a process with threads)
// lie in libc's text; a program's own for those numbers (set by a raw rt_sigaction) does not.
// Before libc's text is known, any is taken for glibc's (as until stop 37).
bool GlibcSignalHandler(int sig, const void* handler) {
  if (sig != 32 && sig != 33) return false;
  auto at = reinterpret_cast<uintptr_t>(handler);
  return g_libc_text_hi == 0 || (at >= g_libc_text_lo && at < g_libc_text_hi);
}

namespace {

// libc's address range (all its loadable segments) and its text, found by its soname's file
// name (dl_iterate_phdr allocates nothing).
struct LibcRange {
  uintptr_t lo = ~uintptr_t{0}, hi = 0, text_lo = 0, text_hi = 0;
  bool Holds(const void* p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    return p != nullptr && a >= lo && a < hi;
  }
};
int FindLibc(struct dl_phdr_info* info, size_t, void* data) {
  if (!NameEndsWith(info->dlpi_name, "/libc.so.6")) return 0;
  auto* r = static_cast<LibcRange*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    r->lo = std::min(r->lo, lo);
    r->hi = std::max(r->hi, lo + ph.p_memsz);
    if (ph.p_flags & PF_X) {
      r->text_lo = lo;
      r->text_hi = lo + ph.p_memsz;
    }
  }
  return 1;
}

// stdio's locks, which pthread_create turns on for good (glibc's _IO_enable_locks: a flag of
// libc's own, `stdio_needs_locking`, for the streams opened later, and _IO_FLAGS2_NEED_LOCK on
// every stream of libc's list). With them every getc, putc, ungetc, feof and ferror takes and
// gives back the stream's lock: a program reading a file with getc ran 5 times slower recorded
// (tools/bench/record-stdio.sh).
// The writer uses no stream (snprintf writes to a buffer), so for a program without threads of
// its own StartWriter turns them off again: libc's flag back to 0, and the flag off on the
// streams that did not have it before (fopencookie's and open_memstream's set it themselves).
// The program's own pthread_create turns them on as unrecorded. libc's flag is found in
// _IO_enable_locks's code (GLIBC_PRIVATE), which loads it and then stores 1 into it; where
// that code looks otherwise, the locks stay on.
int* g_stdio_needs_locking = nullptr;
FILE** g_io_list_all = nullptr;
constexpr int kNeedLock = 0x80;  // _IO_FLAGS2_NEED_LOCK

int* FindStdioNeedsLocking(const uint8_t* code) {
  int32_t rel;
  // mov rel32(%rip),%eax; test %eax,%eax; jne
  if (code[0] != 0x8b || code[1] != 0x05 || code[6] != 0x85 || code[7] != 0xc0 || code[8] != 0x75)
    return nullptr;
  memcpy(&rel, code + 2, 4);
  const uint8_t* flag = code + 6 + rel;
  for (int k = 9; k + 10 <= 40; ++k) {  // movl $1,rel32(%rip) into the same flag
    if (code[k] != 0xc7 || code[k + 1] != 0x05 || code[k + 6] != 1 || code[k + 7] != 0 ||
        code[k + 8] != 0 || code[k + 9] != 0)
      continue;
    memcpy(&rel, code + k + 2, 4);
    if (code + k + 10 + rel == flag) return reinterpret_cast<int*>(const_cast<uint8_t*>(flag));
  }
  return nullptr;
}

struct StdioLocks {
  bool off = false;
  int kept = 0;
  FILE* keep[32];  // the streams that had the flag already
  void Before() {
    // glibc's pthread_create turns the locks on only while it counts one thread: without the
    // count (which StartWriter takes the writer out of) the program's own threads would not.
    if (g_stdio_needs_locking == nullptr || g_nptl_nthreads == nullptr ||
        *g_stdio_needs_locking != 0)
      return;
    for (FILE* f = *g_io_list_all; f != nullptr; f = f->_chain) {
      if ((f->_flags2 & kNeedLock) == 0) continue;
      if (kept == 32) return;  // many: leave the locks on
      keep[kept++] = f;
    }
    off = true;
  }
  void After() {  // once the writer is out of glibc's count
    if (!off || __atomic_load_n(g_nptl_nthreads, __ATOMIC_SEQ_CST) != 1) return;
    *g_stdio_needs_locking = 0;
    for (FILE* f = *g_io_list_all; f != nullptr; f = f->_chain)
      if (std::find(keep, keep + kept, f) == keep + kept) f->_flags2 &= ~kNeedLock;
  }
};

IORR_COLD void StartWriter() {
  int expect = 0;
  if (!g_writer_started.compare_exchange_strong(expect, 1)) return;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 << 10);
  // The writer must not receive the program's signals.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static CreateFn real_create = nullptr;
  if (real_create == nullptr)
    real_create = reinterpret_cast<CreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
  PrepareWriterBuffers();
  bool single = g_single_libc != nullptr && *g_single_libc != 0 && __libc_single_threaded != 0;
  StdioLocks stdio;
  if (single) stdio.Before();
  int rc = real_create ? real_create(&t, &attr, WriterMain, nullptr) : -1;
  // pthread_create told glibc the process has threads now; for a program that had none, put
  // that back (see g_single_reset and StdioLocks).
  if (rc == 0 && single) {
    SetSingleThreaded(1);
    g_single_reset.store(true, std::memory_order_relaxed);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  if (rc != 0) g_writer_started.store(0);  // exec and exit still flush synchronously
  // glibc ends the process with exit(0) when the last of the threads it counts leaves through
  // pthread_exit. Counted, the writer would keep a program whose main thread called
  // pthread_exit running forever once its workers are done. Uncounted (after the create: the
  // count must never fall below the threads alive), glibc ends it as it would unrecorded, on
  // the program's own thread, stack and signal mask.
  if (rc == 0 && g_nptl_nthreads != nullptr)
    __atomic_fetch_sub(g_nptl_nthreads, 1u, __ATOMIC_SEQ_CST);
  if (rc == 0 && single) stdio.After();
}

// The thread's key destructor: it is leaving. Its recording goes on until it is gone: the
// calls it still makes (the exit(0) glibc runs on the last thread: atexit handlers, the stdio
// flush) are the program's. A trapped SYS_exit ends it (ThreadGone); else the writer finds the
// thread gone (Service). A thread leaving from inside a recorded call (cancelled, or a
// handler's pthread_exit) is done at once: nothing more of it can be recorded.
// The key's value is the thread's tid, not its state (see NewThreadState): a value that is not
// this thread's was left by an earlier thread on the same descriptor, and is not this one's to
// act on.
void ThreadExit(void* p) {
  if (Foreign()) return;  // the owner's key value (a vfork child's pthread_exit: undefined)
  if (reinterpret_cast<uintptr_t>(p) != static_cast<uintptr_t>(Gettid())) return;
  ThreadState* ts = t_hot.state;
  if (ts != nullptr && t_hot.depth == 0) {
    ts->leaving.store(1, std::memory_order_release);  // (it goes on recording into its state)
    return;
  }
  t_hot.done = true;
  if (ts == nullptr) return;
  ts->slot->in_call_since.store(kNever, std::memory_order_release);
  ts->exited.store(1, std::memory_order_release);
  Wake();
}

// A thread's state with its ring and encoder, in one private mapping; not yet anyone's.
ThreadState* AllocThreadState() {
  size_t enc_bytes = ChunkEncoder::MemoryBytes(g_limits);
  size_t head = (sizeof(ThreadState) + 4095) & ~size_t{4095};
  size_t total = head + kRingBytes + enc_bytes;
  void* mem = MapMemory(total);
  if (!mem) return nullptr;
  auto* ts = new (mem) ThreadState();
  ts->memory_bytes = total;
  ts->ring = static_cast<uint8_t*>(mem) + head;
  if (!ts->enc.Init(g_limits, g_unit, ts->ring + kRingBytes)) {
    RawSyscall6(SYS_munmap, reinterpret_cast<long>(mem), static_cast<long>(total));
    return nullptr;
  }
  ts->enc.StartCompact();  // a short-lived thread's chunk in one page, not nine
  return ts;
}

void UnmapThreadState(ThreadState* ts) {
  UnmapWriterBuffers(&ts->vm_buffers);
  size_t bytes = ts->memory_bytes;
  ts->~ThreadState();
  RawSyscall6(SYS_munmap, reinterpret_cast<long>(ts), static_cast<long>(bytes));
}

// A slot's owner (pid, process entry), nothing unwritten, raise_from `from`, no raise open: what
// a slot taken (TakeSlot) or taken over (MakeOwnSlot) starts with; in_call_since and the tid are
// the caller's to store.
void SetSlotOwner(ThreadSlot& s, uint32_t pid, uint32_t proc, int64_t from) {
  s.pid.store(pid, std::memory_order_seq_cst);
  s.proc.store(proc, std::memory_order_seq_cst);
  s.unflushed_min.store(kNever, std::memory_order_relaxed);
  s.raise_from.store(from, std::memory_order_relaxed);
  uint32_t q = s.raise_seq.load(std::memory_order_relaxed);
  if (q & 1) s.raise_seq.store(q + 1, std::memory_order_relaxed);
}

// Takes a free shared slot for tid (a thread's, or kSpawnWindowTid), under pid and entry `proc`,
// with in_call_since `since` and raise_from `from`; nullptr when none is free.
ThreadSlot* TakeSlot(uint32_t tid, uint32_t pid, uint32_t proc, int64_t since, int64_t from) {
  for (int pass = 0; pass < 2; ++pass) {
    // None free: free those of processes that are gone (killed while idle, or ended without
    // releasing them), then look again.
    if (pass == 1) SweepGoneEntries();
    for (uint32_t i = 0; i < g_shared->slots; ++i) {
      if (g_shared->slot[i].tid.load(std::memory_order_relaxed) != 0) continue;
      // Scans see it once it is taken: the mark first (slots_used).
      uint32_t used = g_shared->slots_used.load(std::memory_order_seq_cst);
      while (used < i + 1 &&
             !g_shared->slots_used.compare_exchange_weak(used, i + 1, std::memory_order_seq_cst)) {
      }
      uint32_t expect = 0;
      if (!g_shared->slot[i].tid.compare_exchange_strong(expect, tid)) continue;
      ThreadSlot* s = &g_shared->slot[i];
      SetSlotOwner(*s, pid, proc, from);
      s->in_call_since.store(
          since, since == kNever ? std::memory_order_release : std::memory_order_seq_cst);
      return s;
    }
  }
  return nullptr;
}

// Gives ts its identity (pid, tid: the calling task's), a stream and a shared slot for the
// watermark under entry `proc`. No slot: ts->slot stays null.
void StartThreadState(ThreadState* ts, uint32_t pid, uint32_t proc, ThreadSlot* held = nullptr) {
  ts->pid = pid;
  ts->tid = static_cast<uint32_t>(Gettid());
  ts->last_start = NowNs();
  ts->stream = g_shared->next_stream.fetch_add(1, std::memory_order_relaxed);
  ts->enc.Begin(ts->stream, ts->pid, ts->tid);
  if (held == nullptr) {
    ts->slot = TakeSlot(ts->tid, ts->pid, proc, kNever, kNever);
    return;
  }
  // A slot made this thread's already (MakeOwnSlot: pid and entry are this process's) whose
  // in_call_since holds the watermarks at a start it takes over (BeginCallHolding).
  (void)proc;
  ts->slot = held;
}

// Hands ts to the writer; false when the registry is full.
bool RegisterThread(ThreadState* ts) {
  for (int i = 0; i < kMaxThreads; ++i) {
    if (g_threads[i].load(std::memory_order_relaxed) != nullptr) continue;
    // The count first: a fork child clears entries up to it, and must see this one if the
    // entry is taken before the fork.
    int used = g_threads_used.load(std::memory_order_relaxed);
    while (used < i + 1 &&
           !g_threads_used.compare_exchange_weak(used, i + 1, std::memory_order_seq_cst)) {
    }
    ThreadState* expect = nullptr;
    if (g_threads[i].compare_exchange_strong(expect, ts)) return true;
  }
  return false;
}

// held: see StartThreadState; when no state comes of it, a slot not already given back here is
// the caller's to free.
IORR_COLD ThreadState* NewThreadState(ThreadSlot* held = nullptr) {
  ThreadState* ts = AllocThreadState();
  if (!ts) return nullptr;
  StartThreadState(ts, g_pid, g_entry, held);
  // The process began to release its slots (exit) since this thread's call began: give this
  // one back. Either this load sees the release, or the release's scan (after its exchange)
  // sees this slot's pid and entry; a slot taken in between would otherwise stay, unflushed
  // and with no entry, holding watermarks back for the rest of the run.
  if (ts->slot != nullptr && g_released.load(std::memory_order_seq_cst)) {
    ThreadSlot& sl = *ts->slot;
    uint32_t pid = ts->pid;  // the release's scan may have freed it first (and it be taken)
    if (sl.pid.compare_exchange_strong(pid, 0)) FreeSlot(sl, ts->tid);
    UnmapThreadState(ts);
    return nullptr;
  }
  if (ts->slot == nullptr) {
    static std::atomic<bool> noted{false};
    if (!noted.exchange(true)) {
      char note[96];
      snprintf(note, sizeof(note), "escape %u: no free thread slot: new threads go unrecorded",
               g_pid);
      WriteNote(note);
    }
    g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
  }
  if (!ts->slot || !RegisterThread(ts)) {
    if (ts->slot) ts->slot->tid.store(0);
    UnmapThreadState(ts);
    return nullptr;
  }
  // The key's value is the tid, which ThreadExit checks, not the state: a thread that records
  // its first call after glibc ran its key destructors (a signal handler at its very end) sets
  // the value for good, and glibc hands the thread's descriptor, value included, to a later
  // thread, whose exit then acted on a state unmapped long since, or on another thread's at the
  // same address (stop 40's sweep: SIGSEGV in ThreadExit, or at the SYS_exit after it, in 5 of
  // 5 runs of 1,000 threads each sent a signal right after pthread_create; there since the key
  // held the state).
  pthread_setspecific(g_key, reinterpret_cast<void*>(static_cast<uintptr_t>(ts->tid)));
  return ts;
}

// Writing a nested call's event (EndCallWith): the ring's room is not waited for (RingWaitRoom).
thread_local bool t_nested_write __attribute__((tls_model("initial-exec"))) = false;

// A vfork child's writing (see iorr_vfork_child): its events go out through its own buffers,
// under no lock (a task of the parent may hold g_writer_lock, or die holding it, and the child
// may die holding one of its own). The child is the only task touching its state until it
// execs or ends; its parent is suspended until then.
IORR_COLD void VmChildFlush(ThreadState* ts) {
  if (ts == nullptr || ts->slot == nullptr || !MapWriterBuffers(&ts->vm_buffers)) return;
  // Once at a time: a signal handler's call may come here while the child is already writing.
  if (ts->vm_writing.exchange(1, std::memory_order_relaxed) != 0) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  ServiceThreadAlone(ts, true, NowNs(), ts->vm_buffers);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  ts->vm_writing.store(0, std::memory_order_relaxed);
  ts->head_seen = ts->head.load(std::memory_order_relaxed);
}

// Populates the thread's ring ahead of its writes, for tails up to `upto`, over the ring's first
// lap from where the thread began, in one MADV_POPULATE_WRITE per step: 16 KiB, then as much as
// is done already, up to 512 KiB (a thread of a few calls populates 4 pages, a busy one nine
// steps in all). A page fault costs a trap into the kernel and back for each 4 KiB page, which
// under a hypervisor's page-table isolation is 11 us against 1 to 2 us for the same page
// populated inside one system call (stop 24's host; `rm -rf` of the Linux tree faulted in all
// 512 pages of its ring, 5.6 ms on the program's thread). Not under a seccomp filter (one may
// refuse or trap madvise), nor where the kernel does not know the advice (before Linux 5.14):
// then the pages fault in as they are written, as before.
IORR_COLD void PopulateRing(ThreadState* ts, uint64_t upto) {
  if (ts->populate_lap == 0) {
    uint64_t from = ts->tail.load(std::memory_order_relaxed) & ~(kPopulateMin - 1);
    ts->populated = from;
    ts->populate_lap = from + kRingBytes;
    if (UnderSeccomp()) ts->populated = ~uint64_t{0};
  }
  while (ts->populated < upto) {
    uint64_t done = ts->populated - (ts->populate_lap - kRingBytes);
    uint64_t at = ts->populated & (kRingBytes - 1);
    uint64_t n = std::min({std::max(done, kPopulateMin), kPopulateMax, kRingBytes - at,
                           ts->populate_lap - ts->populated});
    if (n == 0 || RawSyscall6(SYS_madvise, reinterpret_cast<long>(ts->ring + at),
                              static_cast<long>(n), MADV_POPULATE_WRITE) != 0) {
      ts->populated = ~uint64_t{0};  // all of it, or no more tries
      return;
    }
    ts->populated += n;
  }
}

// Reserves `size` bytes (a multiple of 8, at most kRingBytes / 4) for an entry at the thread's
// ring's tail, waiting (yielding) only when the ring is full. nullptr: the event is dropped
// (counted), as nobody would drain the ring. *tail: where the entry starts (after a wrap).
// RingReserve's slow part: the ring looks full from what the thread last saw of its head.
// False: the event is dropped (counted).
IORR_COLD bool RingWaitRoom(ThreadState* ts, uint64_t tail, uint64_t need) {
  if (t_hot.vm_child) VmChildFlush(ts);  // a vfork child drains its own ring
  // A nested call's event (BeginNested) does not wait, nor service the ring itself: the
  // interrupted code may be what the writer waits for. (A vfork child's own flush above is
  // safe: the interrupted code is inside a call, not writing.)
  if (t_nested_write) {
    ts->head_seen = ts->head.load(std::memory_order_acquire);
    if (tail + need - ts->head_seen <= kRingBytes) return true;
    g_shared->dropped_events.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  // So does posix_spawn's child, whose file actions can be many (it waited for ever on a
  // writer thread that is its parent's).
  if (g_no_writer && !t_hot.vm_child) Service(false);
  ts->head_seen = ts->head.load(std::memory_order_acquire);
  while (tail + need - ts->head_seen > kRingBytes) {
    if (t_hot.vm_child || g_writer_started.load(std::memory_order_acquire) == 0) {
      g_shared->dropped_events.fetch_add(1, std::memory_order_relaxed);  // nobody would drain it
      return false;
    }
    Wake();
    Yield();
    ts->head_seen = ts->head.load(std::memory_order_acquire);
  }
  return true;
}

// Reserves `size` bytes (a multiple of 8, at most kRingBytes / 4) for an entry at the thread's
// ring's tail, waiting (yielding) only when the ring is full. nullptr: the event is dropped
// (counted), as nobody would drain the ring. *tail: where the entry starts (after a wrap).
// Inlined into the hook path with RingPublish and the clock, their rare parts out of line: with
// the thread's state in one block (ThreadHot), a recorded lseek went from 369 to 300
// instructions on the program's thread (callgrind, tools/bench/record-call-instructions.sh).
__attribute__((always_inline)) inline EntryHead* RingReserve(ThreadState* ts, uint64_t size,
                                                             uint64_t* tail_out) {
  uint64_t tail = ts->tail.load(std::memory_order_relaxed);
  uint64_t room_to_end = kRingBytes - (tail & (kRingBytes - 1));
  uint64_t need = size <= room_to_end ? size : size + room_to_end;
  if (__builtin_expect(tail + need - ts->head_seen > kRingBytes, 0) &&
      !RingWaitRoom(ts, tail, need))
    return nullptr;
  if (__builtin_expect(tail + need > ts->populated, 0)) PopulateRing(ts, tail + need);
  if (__builtin_expect(size > room_to_end, 0)) {  // mark the unused end and wrap
    *reinterpret_cast<uint32_t*>(ts->ring + (tail & (kRingBytes - 1))) = 0;
    tail += room_to_end;
  }
  *tail_out = tail;
  return reinterpret_cast<EntryHead*>(ts->ring + (tail & (kRingBytes - 1)));
}

// An entry's head but its arguments.
inline void PutHead(EntryHead* h, uint64_t size, CallId call, int64_t start, int64_t end,
                    int64_t ret) {
  h->size = static_cast<uint32_t>(size);
  h->call = static_cast<uint16_t>(call);
  h->reserved = 0;
  h->start = start;
  h->end = end;
  h->ret = ret;
}

// The ring passed half full: a vfork child drains it, any other thread wakes the writer.
IORR_COLD void RingHalfFull(ThreadState* ts) {
  if (t_hot.vm_child) {
    VmChildFlush(ts);
  } else {
    ts->head_seen = ts->head.load(std::memory_order_acquire);
    Wake();
  }
}

// Publishes the entry RingReserve gave at `tail` to the writer.
__attribute__((always_inline)) inline void RingPublish(ThreadState* ts, uint64_t tail,
                                                       uint64_t size, int64_t start) {
  uint64_t before = ts->tail.load(std::memory_order_relaxed);
  ts->tail.store(tail + size, std::memory_order_release);
  // Cover this event in the watermark until the writer has written it (the fence: a writer
  // raising the watermark meanwhile either sees the new tail or this load sees its raise).
  LightFence();
  CoverStart(*ts->slot, start);
  // Wake the writer when the ring passes half full, not on every event.
  uint64_t used_before = before - ts->head_seen, used_after = tail + size - ts->head_seen;
  if (__builtin_expect(used_before < kRingBytes / 2 && used_after >= kRingBytes / 2, 0))
    RingHalfFull(ts);
}

// Writes an entry into the thread's ring: v the arguments as stored (kMaxArgs of them, strings
// as their length or -1), the bytes of the strings at the positions of `strings` after them,
// `total` bytes in all. Too long an entry is dropped (counted).
__attribute__((always_inline)) inline void PutEntry(ThreadState* ts, CallId call, const int64_t* v,
                                                    const char* const* str, unsigned strings,
                                                    size_t total, long ret, int64_t start,
                                                    int64_t end) {
  uint64_t size = (sizeof(EntryHead) + total + 7) & ~uint64_t{7};
  if (size > kRingBytes / 4) {  // not storable (strings of megabytes)
    g_shared->dropped_events.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint64_t tail;
  EntryHead* h = RingReserve(ts, size, &tail);
  if (h == nullptr) return;
  PutHead(h, size, call, start, end, ret);
  memcpy(h->args, v, sizeof(h->args));
  char* s = reinterpret_cast<char*>(h + 1);
  for (unsigned m = strings; m != 0; m &= m - 1) {
    int i = __builtin_ctz(m);
    if (v[i] > 0) {
      memcpy(s, str[i], static_cast<size_t>(v[i]));
      s += v[i];
    }
  }
  RingPublish(ts, tail, size, start);
}

// Copies an event into the thread's ring (the pseudo-events: dirents).
void AddEvent(ThreadState* ts, const Event& e) {
  const trace::CallShape& spec = trace::Shape(e.call);
  int64_t v[trace::kMaxArgs] = {};
  const char* str[trace::kMaxArgs] = {};
  unsigned strings = 0;
  size_t total = 0;
  for (int i = 0; i < spec.nargs; ++i) {
    const trace::Arg& a = e.args[i];
    if (trace::IsString(spec.args[i].kind)) {
      strings |= 1u << i;
      v[i] = a.null ? -1 : static_cast<int64_t>(a.s.size());
      str[i] = a.s.data();
      if (!a.null) total += a.s.size();
    } else {
      v[i] = a.i;
    }
  }
  PutEntry(ts, e.call, v, str, strings, total, e.ret, e.start_ns, e.end_ns);
}

// What the trace cannot hold is said in it: I/O submitted through io_uring or libaio, and stores
// through a shared writable mapping of a file (once per process).
bool g_noted_shared_map = false;
// Whether a note said once per process is due (`noted`: said already); a vfork child, on its
// parent's memory, says its own each time.
bool DueOncePerProcess(bool& noted) {
  if (t_hot.vm_child) return true;
  if (noted) return false;
  noted = true;
  return true;
}
// The calling task's process: a vfork child (recorded or not) is a process of its own.
uint32_t TaskPid() {
  if (Foreign()) return static_cast<uint32_t>(RawSyscall6(SYS_getpid));
  if (!t_hot.vm_child) return g_pid;
  return t_hot.state ? t_hot.state->pid : static_cast<uint32_t>(RawSyscall6(SYS_getpid));
}

void NoteEscapesOf(CallId call, const long* k, long ret) {
  char note[160];
  uint32_t pid = TaskPid();
  if (trace::Shape(call).effect == trace::Effect::kEscape && ret >= 0) {
    snprintf(note, sizeof(note), "escape %u: %s: I/O submitted through it is not recorded", pid,
             trace::NameOf(call));
    WriteNote(note);
    g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
  } else if (call == CallId::mmap && ret >= 0 && static_cast<int>(k[4]) >= 0 &&
             (k[3] & MAP_SHARED) && (k[2] & PROT_WRITE) && DueOncePerProcess(g_noted_shared_map)) {
    snprintf(note, sizeof(note),
             "escape %u: stores through a shared writable mapping (fd %d) are not recorded", pid,
             static_cast<int>(k[4]));
    WriteNote(note);
    g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
  } else if (call == CallId::mmap && ret >= 0 && (k[2] & PROT_EXEC) &&
             static_cast<int>(k[4]) >= 0 && (k[3] & MAP_DENYWRITE) && PatchEnabled()) {
    // Code loaded after start-up (dlopen: the loader maps segments with MAP_DENYWRITE) with
    // system call instructions of its own: its sites were not rewritten (dispatch would have
    // caught them).
    int n = PatchCountSyscalls(ret, k[1]);
    if (n > 0) {
      snprintf(note, sizeof(note),
               "escape %u: code mapped from fd %d after the switch to patched sites holds %d "
               "system call instructions: calls made there are not recorded",
               pid, static_cast<int>(k[4]), n);
      WriteNote(note);
      g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

// Only a successful mmap or call of the kEscape kind can need a note (most calls are neither).
inline void NoteEscapes(CallId call, const long* k, long ret) {
  if (ret >= 0 && (call == CallId::mmap || trace::Shape(call).effect == trace::Effect::kEscape))
    NoteEscapesOf(call, k, ret);
}

void NoteExec(const char* what, const char* path) {
  char note[4200];
  uint32_t pid = TaskPid();
  if (path)
    snprintf(note, sizeof(note), "%s %u %s", what, pid, path);
  else
    snprintf(note, sizeof(note), "%s %u", what, pid);
  WriteNote(note);
}

// The names and types a getdents64 returned, as `dirents` pseudo-events after it (pieces of at
// most kDirentPiece bytes), written through the thread's scratch event.
constexpr size_t kDirentPiece = 4000;
static_assert(sizeof(ThreadState::dirent_piece) == kDirentPiece + 256 + 2);
void AddDirents(ThreadState* ts, int64_t fd, int64_t end_ns, long buf, long n) {
  Event& e = ts->scratch;
  e.pid = ts->pid;
  e.tid = ts->tid;
  e.end_ns = end_ns;
  char* piece = ts->dirent_piece;
  size_t used = 0;
  int64_t count = 0;
  auto flush = [&] {
    if (count == 0) return;
    e.call = CallId::dirents;
    e.start_ns = e.end_ns;
    e.args[0] = trace::Arg{};
    e.args[0].i = fd;
    e.args[1] = trace::Arg{};
    e.args[1].s = std::string_view(piece, used);
    e.ret = count;
    AddEvent(ts, e);
    used = 0;
    count = 0;
  };
  const char* p = reinterpret_cast<const char*>(buf);
  for (long off = 0; off + 19 < n;) {
    uint16_t reclen;
    memcpy(&reclen, p + off + 16, 2);
    if (reclen < 20 || off + reclen > n) break;
    const char* name = p + off + 19;
    size_t len = strnlen(name, static_cast<size_t>(reclen - 19));
    if (used + len + 2 > kDirentPiece) flush();
    piece[used++] = p[off + 18];  // d_type
    memcpy(piece + used, name, len);
    used += len;
    piece[used++] = 0;
    ++count;
    off += reclen;
  }
  flush();
}

// No seccomp filter can see the library's own calls on this thread now: none at the image's
// start, none installed since (seen until patching), and the kernel says none (asked each
// time: a filter can come at any moment). A call the program did not make, under a filter
// that does not list it, may kill the program.
bool NoSeccompFilter() {
  return !g_seccomp_at_start && g_sees_seccomp_installs &&
         !__atomic_load_n(&g_program_seccomp, __ATOMIC_SEQ_CST) && !UnderSeccomp();
}

// The arguments as a ring entry stores them (EntryHead::args): integers, what pointers point to
// (iovec lengths, fd pairs, offsets), strings as their length or -1 for NULL with their bytes at
// str[i]. Returns the strings' total length. The event's own buffer is not read (kBuf: 0).
size_t ArgValues(const trace::CallShape& spec, CallId call, const long* k, long ret, int64_t* out,
                 const char** str) {
  bool fault = ret == -EFAULT;
  size_t strings = 0;
  for (int i = 0; i < spec.nargs; ++i) {
    int64_t& a = out[i];
    long v = k[i];
    switch (StoredAs(spec.args[i].kind)) {
      case Stored::kNothing:
        a = 0;
        break;
      case Stored::kInt32:
        a = StoredValue<Stored::kInt32>(v);
        break;
      case Stored::kUint32:
        a = StoredValue<Stored::kUint32>(v);
        break;
      case Stored::kRaw:
        a = v;
        break;
      case Stored::kPointee:
        switch (spec.args[i].kind) {
          case trace::ArgKind::kIovec: {
            long total = 0;
            if (v != 0 && !fault) {
              const auto* iov = reinterpret_cast<const struct iovec*>(v);
              long n = (i + 1 < spec.nargs) ? k[i + 1] : 0;
              for (long j = 0; j < n && j < 1024; ++j) total += static_cast<long>(iov[j].iov_len);
            }
            a = total;
            break;
          }
          case trace::ArgKind::kOffsetPtr:
            // The kernel advanced *ptr by the bytes moved: store the offset the call started at.
            a = (v == 0 || fault) ? -1 : *reinterpret_cast<const int64_t*>(v) - (ret > 0 ? ret : 0);
            break;
          case trace::ArgKind::kFdPair: {
            const int* fds = reinterpret_cast<const int*>(v);
            a = (v == 0 || ret < 0) ? 0
                                    : static_cast<int64_t>(static_cast<uint32_t>(fds[0])) |
                                          static_cast<int64_t>(static_cast<uint64_t>(fds[1]) << 32);
            break;
          }
          case trace::ArgKind::kOpenHow:  // struct open_how: its first field is the flags
            a = (v == 0 || fault) ? 0 : *reinterpret_cast<const int64_t*>(v);
            break;
          case trace::ArgKind::kCloneSize: {
            // A FICLONE that succeeded made the destination share the whole source: its
            // size, asked of the kernel just after the call (not recorded: the program did
            // not make it), is what a model of a file system that cannot clone copies. Not
            // under a seccomp filter, which may kill on an fstat the program never makes (a
            // review: a sandbox that lets ioctl through and kills on SYS_fstat died
            // recorded), as for setxattr's value above. The kernel reads the request as 32
            // bits. The audit module's calls come here after the library started: a FICLONE
            // made before (none is known) would read the source's size of then, or -1.
            a = -1;
            struct stat st;
            if (ret == 0 && static_cast<uint32_t>(k[1]) == FICLONE && NoSeccompFilter() &&
                RawSyscall6(SYS_fstat, static_cast<int32_t>(k[2]), reinterpret_cast<long>(&st)) ==
                    0 &&
                S_ISREG(st.st_mode))
              a = st.st_size;
            break;
          }
          case trace::ArgKind::kLinkTarget:
          case trace::ArgKind::kXattrValue: {
            // Bytes the call moved, whose count the next argument bounds: readlink's target,
            // the `ret` bytes the kernel wrote, never more than the buffer holds (a tracer or a
            // seccomp supervisor can make the call return more than the kernel would);
            // setxattr's value, its `size` bytes, only after a success, when the kernel read
            // them all (an error can come before it reads any, from a buffer that may not be
            // there), at most kMaxXattrValue (an ACL is tens: larger values could make the
            // event too big to store), and not under a seccomp filter, which can make the call
            // succeed unread (a review: a sandbox's no-op setxattr on a PROT_NONE page killed
            // the program). Installs are seen only until patching: after it, and to be sure,
            // the kernel is asked, once per successful setxattr, as SeccompForbidsPatching does.
            long room = i + 1 < spec.nargs ? k[i + 1] : 0;
            long n = 0;
            if (spec.args[i].kind == trace::ArgKind::kLinkTarget) {
              n = std::min<long>(std::min<long>(ret, room), 1 << 16);
            } else if (ret == 0 && room <= kMaxXattrValue && room > 0 && v != 0 &&
                       NoSeccompFilter()) {
              n = room;
            }
            if (v == 0 || n <= 0) {
              a = -1;
            } else {
              str[i] = reinterpret_cast<const char*>(v);
              a = n;
              strings += static_cast<size_t>(n);
            }
            break;
          }
          default:  // kPath, kStr
            if (call == CallId::bind) {
              // The path of an AF_UNIX pathname address: sun_path up to its first NUL, within
              // the address's length (the kernel needs no NUL: all 108 bytes may be the path).
              // NULL for another family, an abstract or unnamed address, or an address the
              // kernel did not read (EFAULT, a length it refused before reading: EINVAL).
              a = -1;
              long len = static_cast<int32_t>(k[2]);  // the kernel reads an int
              constexpr long kPathAt = offsetof(struct sockaddr_un, sun_path);
              if (v == 0 || fault || len <= kPathAt ||
                  len > static_cast<long>(sizeof(struct sockaddr_storage)))
                break;
              const auto* un = reinterpret_cast<const struct sockaddr_un*>(v);
              if (un->sun_family != AF_UNIX || un->sun_path[0] == 0) break;
              size_t room =
                  std::min<size_t>(static_cast<size_t>(len - kPathAt), sizeof(un->sun_path));
              str[i] = un->sun_path;
              a = static_cast<int64_t>(strnlen(un->sun_path, room));
              strings += static_cast<size_t>(a);
              break;
            }
            if (v == 0 || fault) {
              a = -1;
            } else {
              str[i] = reinterpret_cast<const char*>(v);
              size_t len = strnlen(str[i], 1 << 16);
              a = static_cast<int64_t>(len);
              strings += len;
            }
        }
    }
  }
  // Arguments the call does not read hold whatever the registers had: store 0, as strace
  // prints them (not at all).
  if (call == CallId::openat || call == CallId::open) {
    int flags_idx = call == CallId::openat ? 2 : 1;
    if (!((out[flags_idx] & O_CREAT) || (out[flags_idx] & O_TMPFILE) == O_TMPFILE))
      out[flags_idx + 1] = 0;
  } else if (call == CallId::fcntl) {
    switch (out[1]) {
      case F_GETFD:
      case F_GETFL:
      case F_GETOWN:
      case F_GETSIG:
      case F_GETLEASE:
      case F_GETPIPE_SZ:
      case F_GET_SEALS:
        out[2] = 0;
    }
  }
  return strings;
}

// The variables iorr record and the library set; others (IORR_DISPATCH, ...) are the user's.
bool IsProtocolVar(const char* s) {
  static const char* const kVars[] = {kEnvTraceFd, kEnvSharedFd,   kEnvTimeUnit,  kEnvStartNs,
                                      kEnvLib,     kEnvReinjected, kEnvExecStart, kEnvLock,
                                      kEnvTraced,  kEnvAuditAdded};
  for (const char* v : kVars) {
    size_t n = strlen(v);
    if (strncmp(s, v, n) == 0 && s[n] == '=') return true;
  }
  return false;
}

const char* GetEnv(char** env, const char* name, size_t len) {
  for (char** p = env; p && *p; ++p)
    if (strncmp(*p, name, len) == 0 && (*p)[len] == '=') return *p + len + 1;
  return nullptr;
}

// Removes NAME=... from environ in place (no allocation).
void Unsetenv(const char* name) {
  size_t len = strlen(name);
  char** w = environ;
  for (char** r = environ; r && *r; ++r)
    if (!(strncmp(*r, name, len) == 0 && (*r)[len] == '=')) *w++ = *r;
  if (w) *w = nullptr;
}

// NAME (LD_PRELOAD, LD_AUDIT) without `first`, which the library put in front of it (for a
// program we re-injected into); the variable goes when nothing else is left in it.
void RemoveFirstFromList(const char* name, const char* first) {
  size_t len = strlen(name);
  for (char** p = environ; p && *p; ++p) {
    if (strncmp(*p, name, len) != 0 || (*p)[len] != '=') continue;
    char* v = *p + len + 1;
    size_t n = strlen(first);
    if (strncmp(v, first, n) == 0 && (v[n] == ':' || v[n] == ' ' || v[n] == 0)) {
      if (v[n] == 0) {
        Unsetenv(name);
      } else {
        memmove(v, v + n + 1, strlen(v + n + 1) + 1);
      }
    }
    return;
  }
}

void RemoveSelfFromPreload() { RemoveFirstFromList("LD_PRELOAD", g_lib); }

// NAME's list without `last`, which the audit module put at its end (":" before it, or alone).
void RemoveLastFromList(const char* name, const char* last) {
  char* v = getenv(name);
  if (v == nullptr) return;
  size_t len = strlen(v), n = strlen(last);
  if (len == n && strcmp(v, last) == 0)
    Unsetenv(name);
  else if (len > n && strcmp(v + len - n, last) == 0 && v[len - n - 1] == ':')
    v[len - n - 1] = 0;
}

// A program the audit module ran again for its libraries' static TLS (audit.h): noted, and
// the environment as it was (but for the larger room, which the program's children do not get).
void NoteTlsRestart() {
  const char* r = getenv(kEnvTlsRestarts);
  if (r == nullptr) return;
  char* end;
  long restarts = strtol(r, &end, 10);
  long room = *end == ':' ? strtol(end + 1, &end, 10) : 0;
  long need = *end == ':' ? strtol(end + 1, &end, 10) : 0;
  char note[320];
  snprintf(note, sizeof(note),
           "capture %u: run again by the audit module (%ld time%s) with %ld bytes of optional "
           "static TLS: its libraries need %ld, more than the loader's room beside the module; "
           "the loader's calls of the first attempt%s are not in the trace",
           g_pid, restarts, restarts == 1 ? "" : "s", room, need, restarts == 1 ? "" : "s");
  WriteNote(note);
  char entry[96];
  snprintf(entry, sizeof(entry), "%s=%ld", kTlsTunableName, room);
  Unsetenv(kEnvTlsRestarts);
  RemoveLastFromList("GLIBC_TUNABLES", entry);
}

long ParseLong(const char* s, long dflt) {
  if (s == nullptr || *s == 0) return dflt;
  char* end;
  long v = strtol(s, &end, 10);
  return *end == 0 ? v : dflt;
}

}  // namespace

bool ForeignTask() { return Foreign(); }
void CountUnwatchedHandlerRun() {
  if (g_shared != nullptr) g_shared->unwatched_handler_runs.fetch_add(1, std::memory_order_relaxed);
}
// A handler set without an entry keeps dispatch for good (PatchNow), even once it is taken
// down again (SA_RESETHAND, or by itself): its frames cannot be counted (review of stop 36).
bool g_unentered_handler = false;
void CountUnenteredHandler() {
  g_unentered_handler = true;
  if (g_shared != nullptr) g_shared->unentered_handlers.fetch_add(1, std::memory_order_relaxed);
}
bool g_uncounted_vm_task = false;
void NoteUncountedVmTask() { g_uncounted_vm_task = true; }
void MarkThreadForeign() { t_hot.owner_tid = kNoOwner; }

constexpr uint32_t kStorageNotShared = ~uint32_t{0} - 1;  // ShareStorage changed nothing
constinit thread_local bool t_in_clone __attribute__((tls_model("initial-exec"))) = false;
bool g_noted_shared_storage = false;
uint32_t ShareStorage() {
  // A foreign task's new task is foreign too (the owner is another); nothing to change.
  if (!g_on || Foreign()) return kStorageNotShared;
  uint32_t before = t_hot.owner_tid;
  __atomic_store_n(&t_hot.owner_tid, static_cast<uint32_t>(Gettid()), __ATOMIC_SEQ_CST);
  return before;
}
void NoteSharedStorage(const char* what) {
  if (!g_on || Foreign() || !DueOncePerProcess(g_noted_shared_storage)) return;
  g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
  char note[256];
  snprintf(note, sizeof(note),
           "escape %u: %s: the new task is not recorded until its exec (noted once per process)",
           TaskPid(), what);
  WriteNote(note);
}
void EndSharedStorage(uint32_t token) {
  if (token != kStorageNotShared && !Foreign()) t_hot.owner_tid = token;
}
bool g_noted_own_tls = false;
void NoteOwnTlsClone() {
  if (!g_on || Foreign() || !DueOncePerProcess(g_noted_own_tls)) return;
  g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
  char note[320];
  snprintf(note, sizeof(note),
           "escape %u: clone() with CLONE_SETTLS: a task on thread-local storage of the "
           "program's own is recorded through the PLT wrappers only (not armed): its "
           "libc-internal calls are not recorded (noted once per process)",
           TaskPid());
  WriteNote(note);
}

template <class Add>
void EndCallWith(Call* c, Add&& add);

// Before an exit or exec's flush (below, at FlushAllAndHold); bound_ns: it ends by itself then.
void HoldOtherThreads(int64_t bound_ns);
bool MayHoldOthers();

namespace {

void AddCall(ThreadState* ts, CallId call, const long* kargs, long ret, int64_t start, int64_t end);

// The audit module's log (audit.h) of the calls made before this library started, from Init
// until they are recorded; and the clock readings that place its time stamp counter readings.
AuditLog* g_audit = nullptr;
uint64_t g_audit_stop_tsc = 0;
int64_t g_audit_stop_ns = 0;
bool g_audit_image = false;  // this image started under the audit module
// The module's path (beside this library) and its variant for programs with audit modules of
// their own (audit.cc), one after the other in one buffer: two arrays of PATH_MAX were two pages
// written in every process, for some 60 bytes each.
char g_audit_paths[2 * 4096];
const char* g_audit_lib = g_audit_paths;          // "" until Init
const char* g_audit_chained = g_audit_paths + 1;  // "" until Init

// Whether LEN bytes at Q name one of the two (an LD_AUDIT entry).
bool IsOurAudit(const char* q, size_t len) {
  return (len == strlen(g_audit_lib) && strncmp(q, g_audit_lib, len) == 0) ||
         (len == strlen(g_audit_chained) && strncmp(q, g_audit_chained, len) == 0);
}
// Whether an LD_AUDIT value holds either path (set: Init).
bool MentionsOurAudit(const char* v) {
  return strstr(v, g_audit_lib) != nullptr || strstr(v, g_audit_chained) != nullptr;
}
// Whether an LD_AUDIT value names our plain module and a module not ours.
bool NeedsChainedAudit(const char* v) {
  bool plain = false, other = false;
  for (const char* q = v; *q != 0;) {
    const char* end = q;
    while (*end != 0 && *end != ':') ++end;
    size_t piece = static_cast<size_t>(end - q);
    if (piece == strlen(g_audit_lib) && strncmp(q, g_audit_lib, piece) == 0)
      plain = true;
    else if (piece > 0 && !IsOurAudit(q, piece))
      other = true;
    q = *end != 0 ? end + 1 : end;
  }
  return plain && other;
}

// The audit module's log, through the loader's list of objects of every namespace (the module
// is in one of its own; r_debug_extended, glibc 2.35 and later): its code holds the restorer,
// a magic and the log's offset (audit.cc).
AuditLog* FindAuditLog() {
  auto* dbg = static_cast<r_debug_extended*>(dlsym(RTLD_DEFAULT, "_r_debug"));
  if (dbg == nullptr || dbg->base.r_version < 2) return nullptr;
  static const uint8_t kCode[16] = {0xb8, 0x0f, 0,   0,   0,   0x0f, 0x05, 0xf4,
                                    'I',  'O',  'R', 'R', 'A', 'U',  'D',  'T'};
  for (r_debug_extended* d = dbg->r_next; d != nullptr; d = d->r_next) {  // past the default
    for (link_map* l = d->base.r_map; l != nullptr; l = l->l_next) {
      if (!NameEndsWith(l->l_name, "/libiorr-audit.so") &&
          !NameEndsWith(l->l_name, "/libiorr-audit-chained.so"))
        continue;
      const auto* eh = reinterpret_cast<const ElfW(Ehdr)*>(l->l_addr);  // first segment at 0
      if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) continue;
      const auto* ph = reinterpret_cast<const ElfW(Phdr)*>(l->l_addr + eh->e_phoff);
      for (int i = 0; i < eh->e_phnum; ++i) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X)) continue;
        const auto* code = reinterpret_cast<const uint8_t*>(l->l_addr + ph[i].p_vaddr);
        if (ph[i].p_memsz < sizeof(kCode) + 4) continue;
        // memmem, not a memcmp at every byte (which took some 15 us in every process).
        const void* hit = memmem(code, ph[i].p_memsz - 4, kCode, sizeof(kCode));
        if (hit == nullptr) continue;
        size_t at = static_cast<size_t>(static_cast<const uint8_t*>(hit) - code);
        int32_t rel;
        memcpy(&rel, code + at + 16, sizeof(rel));
        auto* log = reinterpret_cast<AuditLog*>(const_cast<uint8_t*>(code) + at + 16 + rel);
        return log->magic == kAuditMagic ? log : nullptr;
      }
    }
  }
  return nullptr;
}

// Stops the audit module's log and disarms its dispatch, first thing in Init, and puts SIGSYS's
// action back. Nothing happens without the module, or where it did not arm.
void TakeOverFromAudit() {
  AuditLog* log = FindAuditLog();
  if (log == nullptr) return;
  log->stop = 1;
  RawSyscall6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
  if (log->old_sigsys_valid) {
    RawSyscall6(SYS_rt_sigaction, SIGSYS, reinterpret_cast<long>(log->old_sigsys), 0, 8);
    log->old_sigsys_valid = 0;
  }
  __builtin_ia32_lfence();
  g_audit_stop_tsc = __builtin_ia32_rdtsc();
  g_audit_stop_ns = MonoNs();
  if (log->seccomp_installs != 0) g_program_seccomp = true;  // before the library started
  g_audit = log;
  g_audit_image = true;
}

// The trace time (ns since its start) of a time stamp counter reading in the audit log,
// interpolated between the module's arming and the library's takeover.
int64_t AuditTime(const AuditLog& log, uint64_t tsc) {
  uint64_t span_tsc = g_audit_stop_tsc - log.armed_tsc;
  int64_t span_ns = g_audit_stop_ns - log.armed_ns;
  int64_t ns = log.armed_ns;
  if (tsc > log.armed_tsc && span_tsc > 0 && span_ns > 0)
    ns += static_cast<int64_t>(static_cast<U128>(tsc - log.armed_tsc) *
                               static_cast<uint64_t>(span_ns) / span_tsc);
  return ns - g_start_mono;
}

// Records the audit log's calls, in order, on the calling thread (inside a call whose slot
// covers them: see RecordExecFromEnv), and a note of what the log caught.
void AddAuditCalls(ThreadState* ts) {
  AuditLog* log = g_audit;
  g_audit = nullptr;
  uint32_t recorded = 0;
  long library_fd = -1;  // the loader's fd of this library, from its open to its close
  for (uint32_t off = 0; off + sizeof(AuditEntry) <= log->used;) {
    auto* e = reinterpret_cast<AuditEntry*>(log->data + off);
    if (e->size < sizeof(AuditEntry) || e->size > log->used - off) break;
    int tag = CallTagOf(e->nr);
    long k[6];
    for (int i = 0; i < 6; ++i)
      k[i] = (e->copied >> i) & 1
                 ? reinterpret_cast<long>(reinterpret_cast<uint8_t*>(e) + e->args[i])
                 : e->args[i];
    // The loader reading this library in is the recorder's doing, not the program's (a run
    // without the recorder does not make those calls): left out, as strace comparisons do.
    if ((e->nr == SYS_openat || e->nr == SYS_open) && e->ret >= 0 &&
        (e->copied >> (e->nr == SYS_openat ? 1 : 0)) & 1 &&
        strcmp(reinterpret_cast<const char*>(k[e->nr == SYS_openat ? 1 : 0]), g_lib) == 0) {
      library_fd = e->ret;
      off += e->size;
      continue;
    }
    if (library_fd >= 0) {
      long fd_arg = e->nr == SYS_mmap ? k[4] : k[0];
      if (fd_arg == library_fd) {
        if (e->nr == SYS_close) library_fd = -1;
        off += e->size;
        continue;
      }
    }
    if (tag > 0) {
      AddCall(ts, static_cast<CallId>(tag), k, e->ret, AuditTime(*log, e->start_tsc),
              AuditTime(*log, e->end_tsc));
      ++recorded;
    }
    off += e->size;
  }
  char note[256];
  int n = snprintf(note, sizeof(note),
                   "capture %u: %u calls before the library started (the loader's, "
                   "constructors'), caught by the audit module",
                   ts->pid, recorded);
  if (log->lost != 0 && n > 0 && n < static_cast<int>(sizeof(note)))
    snprintf(note + n, sizeof(note) - static_cast<size_t>(n),
             "; its log was full: later ones lost");
  else if (log->end_reason > 0 && n > 0 && n < static_cast<int>(sizeof(note)))
    snprintf(note + n, sizeof(note) - static_cast<size_t>(n),
             "; it stopped at system call %d, made natively: later ones before the library "
             "are not recorded",
             log->end_reason);
  WriteNote(note);
  if (log->lost != 0 || log->end_reason > 0)
    g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
}

// An image whose exec nobody announced (IORR_EXEC_START: a spawn from inside libc, where no
// wrapper saw the exec): nothing held the watermarks back since the exec, so the log's calls
// could come after chunks other processes wrote as later; they are left out, and said so.
void DropAuditLog() {
  if (g_audit == nullptr) return;
  char note[200];
  snprintf(note, sizeof(note),
           "capture %u: %u calls before the library started not recorded (no exec window to "
           "place them in: an exec from inside libc)",
           g_pid, g_audit->entries);
  g_audit = nullptr;
  WriteNote(note);
  g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
}

// The image's exec, then what the loader did before this library started (the audit log), in
// a call begun at the exec's start whose slot now holds the watermarks there.
void RecordExecAndLog(Call* c, int64_t start) {
  const char* path = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
  long k[6] = {reinterpret_cast<long>(path), 0, 0, 0, 0, 0};
  if (g_audit == nullptr) {
    EndCall(c, CallId::execve, k, 0);
    return;
  }
  EndCallWith(c, [&](ThreadState* ts) {
    AddCall(ts, CallId::execve, k, 0, start, AuditTime(*g_audit, g_audit->armed_tsc));
    AddAuditCalls(ts);
  });
}

// Makes slot s, just claimed by CAS, this process's and this thread's (tid), its in_call_since
// untouched: a slot of a process that dies from here on is freed as any of its threads' is
// (FreeGoneEntry), not left claimed for the rest of the run (review).
void MakeOwnSlot(ThreadSlot& s, uint32_t tid) {
  SetSlotOwner(s, g_pid, g_entry, kNever);
  s.tid.store(tid, std::memory_order_release);
}

// A call of this thread's begun at `start` in `held`, a slot made its own (MakeOwnSlot) whose
// in_call_since holds the watermarks at or before `start` and goes on holding them as the
// thread's own (its first: no state yet). `frame`: the caller's, as BeginCall's. Taking over the
// slot that holds the watermarks, rather than holding them in a slot of its own and then freeing
// the other, leaves no moment in which a writer's scan, which reads the slots one after the other,
// could miss both (review). False (held freed) when the thread cannot record.
bool BeginCallHolding(Call* c, ThreadSlot* held, int64_t start, uintptr_t frame) {
  auto tid = static_cast<uint32_t>(Gettid());
  if (!g_on || t_hot.done || Foreign() || t_hot.depth != 0 || t_hot.state != nullptr ||
      g_released.load(std::memory_order_relaxed)) {
    FreeSlot(*held, tid);
    return false;
  }
  t_hot.depth = 1;
  ThreadState* ts = t_hot.state = NewThreadState(held);
  t_hot.depth = 0;
  if (ts == nullptr) {
    // No state: the slot is still this thread's (no memory), or was given back (tid store).
    if (held->tid.load(std::memory_order_acquire) == tid) FreeSlot(*held, tid);
    return false;
  }
  t_hot.depth = 1;
  t_hot.call_frame = frame;
  AllowSyscalls();
  c->on = true;
  c->start = start;
  ts->last_start = start;
  ts->slot->in_call_since.store(start, std::memory_order_seq_cst);  // (it holds that already)
  return true;
}

// False when no exec was announced to this image (kEnvExecStart).
bool RecordExecFromEnv() {
  const char* s = getenv(kEnvExecStart);
  if (s == nullptr) return false;
  int64_t start = ParseLong(s, 0);
  Unsetenv(kEnvExecStart);
  NoteExec("exec-ok", reinterpret_cast<const char*>(getauxval(AT_EXECFN)));
  // The old image's slots (same pid and entry): the exec's thread's holds the exec's start (its
  // call is in progress), or an earlier one (an exec made inside a call that was not recorded
  // as one: the outer call's); this thread takes it over, moving its tid straight to its own
  // (same pid and entry: a slot of this process whichever the tid), and the others go.
  auto self = static_cast<uint32_t>(Gettid());
  ThreadSlot* held = nullptr;
  for (int pass = 0; pass < 2 && held == nullptr; ++pass) {
    for (uint32_t i = 0, used = SlotsInUse(); i < used && held == nullptr; ++i) {
      ThreadSlot& old = g_shared->slot[i];
      uint32_t proc = old.proc.load(std::memory_order_relaxed);
      uint32_t tid = old.tid.load(std::memory_order_acquire);
      int64_t since = old.in_call_since.load(std::memory_order_acquire);
      if (tid != 0 && !SpecialTid(tid) && old.pid.load(std::memory_order_relaxed) == g_pid &&
          (proc == 0 || proc == g_entry) && (pass == 0 ? since == start : since < start) &&
          old.tid.compare_exchange_strong(tid, self, std::memory_order_acq_rel)) {
        MakeOwnSlot(old, self);
        held = &old;
      }
    }
  }
  Call c;
  bool on = held != nullptr
                ? BeginCallHolding(&c, held, start,
                                   reinterpret_cast<uintptr_t>(__builtin_frame_address(0)))
                : BeginCall(&c);
  if (!on) return true;
  if (held == nullptr) {  // (nothing of the old image holds its start: none of its calls did)
    c.start = start;
    t_hot.state->slot->in_call_since.store(start, std::memory_order_seq_cst);
  }
  for (uint32_t i = 0, used = SlotsInUse(); i < used; ++i) {
    ThreadSlot& old = g_shared->slot[i];
    uint32_t proc = old.proc.load(std::memory_order_relaxed);
    uint32_t tid = old.tid.load(std::memory_order_acquire);
    // The old image's other threads', and windows they were opening when the exec ended them
    // (kOpeningWindowTid). Its spawn windows stay for their children, which find them by this
    // pid; one being taken is its taker's.
    if (&old != t_hot.state->slot && old.pid.load(std::memory_order_relaxed) == g_pid &&
        (proc == 0 || proc == g_entry) && tid != 0 && tid != kSpawnWindowTid &&
        tid != kClosingWindowTid)
      FreeSlot(old);
  }
  RecordExecAndLog(&c, start);
  return true;
}

// An image no exec announced may be a child glibc spawned from inside libc for system(),
// popen() or wordexp(), whose wrapper opened a window in its parent's name (OpenSpawnWindow).
// Of its parent's open windows it takes the one opened last before the audit module armed
// (its exec came after that window opened; a later one may belong to a sibling spawned since),
// claims it, takes the slot over as its own (BeginCallHolding), and records its exec (from the
// window's start: its own start is not known) and the loader's calls as an announced exec's
// image does. False when there is no such window (the log is dropped, as before, by
// DropAuditLog).
bool AdoptSpawnWindow() {
  auto ppid = static_cast<uint32_t>(RawSyscall6(SYS_getppid));
  auto self = static_cast<uint32_t>(Gettid());
  int64_t limit = g_audit != nullptr ? AuditTime(*g_audit, g_audit->armed_tsc) : NowNs();
  // A sibling may take the window this one picked meanwhile (one spawned earlier whose loader
  // ran later): then this image's own is still there for it. A few tries.
  for (int tries = 0; tries < 8; ++tries) {
    ThreadSlot* best = nullptr;
    int64_t start = 0, id = 0;
    for (uint32_t i = 0, used = SlotsInUse(); i < used; ++i) {
      ThreadSlot& w = g_shared->slot[i];
      if (w.tid.load(std::memory_order_acquire) != kSpawnWindowTid ||
          w.pid.load(std::memory_order_acquire) != ppid)
        continue;
      int64_t wid = w.raise_from.load(std::memory_order_acquire);
      int64_t t = w.in_call_since.load(std::memory_order_acquire);
      if (t != kNever && t <= limit && (best == nullptr || t > start)) {
        best = &w;
        start = t;
        id = wid;
      }
    }
    if (best == nullptr) return false;
    // Claimed, and still the window read (same id; its start does not move once it is open).
    // The start read may still be another's: the scan can read a window's tid, then a later
    // window's id and the bound it held while it was being opened.
    if (!ClaimSpawnWindow(*best, id)) continue;
    if (best->in_call_since.load(std::memory_order_acquire) != start) {
      uint32_t mine = kClosingWindowTid;  // not the one read after all: put it back
      best->tid.compare_exchange_strong(mine, kSpawnWindowTid, std::memory_order_acq_rel);
      continue;
    }
    MakeOwnSlot(*best, self);  // at once: claimed by a task that dies, it would stay claimed
    Call c;
    if (!BeginCallHolding(&c, best, start, reinterpret_cast<uintptr_t>(__builtin_frame_address(0))))
      return false;
    NoteExec("exec-ok", reinterpret_cast<const char*>(getauxval(AT_EXECFN)));
    RecordExecAndLog(&c, start);
    return true;
  }
  return false;
}

// A free process entry for pid, with its liveness lock taken through an open file description
// of its own (reopening the memfd through /proc), placed above the trace's fds and
// close-on-exec. False without /proc or when all entries are taken by live processes.
bool ClaimEntry(uint32_t pid, int* fd_out, uint32_t* entry_out) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", CurShmFd());
  long fd = RawSyscall6(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDWR);
  if (fd < 0) return false;
  // Above the trace's fds (the launcher leaves the top of the fd range to the recorder), never
  // among the program's; close-on-exec but for the recorded execs (ExecKeepsLock), so no child
  // a spawn inherits keeps this process's lock alive.
  long high = RawSyscall6(SYS_fcntl, fd, F_DUPFD_CLOEXEC, std::max(g_trace_fd, g_shm_fd) + 1);
  RawSyscall6(SYS_close, fd);
  if (high < 0) return false;
  auto claim = [&](uint32_t e) {
    // The lock first: an entry whose pid is set must never be without its lock (a finder would
    // free it while its process lives).
    if (EntryLock(high, F_OFD_SETLK, F_WRLCK, e) != 0) return false;  // still locked: not free
    uint32_t expect = 0;
    if (!g_shared->proc_pid[e].compare_exchange_strong(expect, pid)) {
      EntryLock(high, F_OFD_SETLK, F_UNLCK, e);
      return false;
    }
    *fd_out = static_cast<int>(high);
    *entry_out = e + 1;
    return true;
  };
  // A free entry first (no system calls); else one whose process ended without freeing it.
  for (uint32_t e = 0; e < kSharedProcs; ++e)
    if (g_shared->proc_pid[e].load(std::memory_order_relaxed) == 0 && claim(e)) return true;
  for (uint32_t e = 0; e < kSharedProcs; ++e) {
    uint32_t cur = g_shared->proc_pid[e].load(std::memory_order_relaxed);
    if (cur == 0 || !EntryGone(e)) continue;
    FreeGoneEntry(e, cur, false);
    if (claim(e)) return true;
  }
  RawSyscall6(SYS_close, high);
  return false;
}

// A spawn inside libc (system, popen) racing a recorded exec in another thread can hand this
// image a copy of its parent's lock fd (close-on-exec is cleared during that exec): it would
// keep the parent's lock alive and show the program an fd. Such copies sit just above the
// trace's fds, where the library puts lock fds: close those that are the shared memfd.
void CloseStrayLockFds() {
  // Which of the eight are open, in one call (a closed fd polls as POLLNVAL); usually none.
  int base = std::max(g_trace_fd, g_shm_fd) + 1;
  struct pollfd pf[8];
  for (int i = 0; i < 8; ++i) pf[i] = {base + i, 0, 0};
  if (RawSyscall6(SYS_poll, reinterpret_cast<long>(pf), 8, 0) < 0) return;
  struct stat shm;
  bool have_shm = false;
  for (const auto& p : pf) {
    if ((p.revents & POLLNVAL) || p.fd == g_lock_fd) continue;
    if (!have_shm && RawSyscall6(SYS_fstat, g_shm_fd, reinterpret_cast<long>(&shm)) != 0) return;
    have_shm = true;
    struct stat st;
    if (RawSyscall6(SYS_fstat, p.fd, reinterpret_cast<long>(&st)) != 0) continue;
    if (st.st_dev == shm.st_dev && st.st_ino == shm.st_ino) RawSyscall6(SYS_close, p.fd);
  }
}

// Takes a process entry and its liveness lock for this process (see protocol.h): the one the
// image before exec held (IORR_LOCK names it with this pid), else a new one. Without /proc (no
// new open file description to lock through) the process goes without: if killed, its slots
// hold watermarks back, as before entries existed.
void TakeProcessEntry() {
  g_entry = 0;
  if (const char* v = getenv(kEnvLock)) {
    // The lock fd of this process's image before exec: adopted when it is this pid's and the
    // fd is the shared memfd (an image that did not record may have reused the number).
    long fd = -1, entry = 0, pid = 0;
    struct stat shm, st;
    if (sscanf(v, "%ld:%ld:%ld", &fd, &entry, &pid) == 3 && fd >= 0 &&
        pid == static_cast<long>(g_pid) && entry > 0 && entry <= static_cast<long>(kSharedProcs) &&
        RawSyscall6(SYS_fstat, g_shm_fd, reinterpret_cast<long>(&shm)) == 0 &&
        RawSyscall6(SYS_fstat, fd, reinterpret_cast<long>(&st)) == 0 && st.st_dev == shm.st_dev &&
        st.st_ino == shm.st_ino) {
      g_lock_fd = static_cast<int>(fd);
      g_entry = static_cast<uint32_t>(entry);
      RawSyscall6(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);  // see ExecKeepsLock
    }
    Unsetenv(kEnvLock);
  }
  CloseStrayLockFds();
  if (g_entry != 0) return;
  int fd = -1;
  uint32_t entry = 0;
  if (ClaimEntry(g_pid, &fd, &entry)) {
    g_lock_fd = fd;
    g_entry = entry;
  }
}

void AtExit(int, void*);

__attribute__((constructor(102))) void Init() {
  TakeOverFromAudit();  // before any call of this library's
  const char* fd = getenv(kEnvTraceFd);
  const char* shm = getenv(kEnvSharedFd);
  if (fd == nullptr || shm == nullptr) return;
  g_trace_fd = static_cast<int>(ParseLong(fd, -1));
  g_shm_fd = static_cast<int>(ParseLong(shm, -1));
  g_unit = static_cast<uint32_t>(ParseLong(getenv(kEnvTimeUnit), 1000));
  g_start_mono = ParseLong(getenv(kEnvStartNs), 0);
  const char* lib = getenv(kEnvLib);
  if (lib) snprintf(g_lib, sizeof(g_lib), "%s", lib);
  if (g_trace_fd < 0 || g_shm_fd < 0 || !trace::ValidTimeUnit(g_unit)) return;
  long p = RawSyscall6(SYS_mmap, 0, sizeof(SharedState), PROT_READ | PROT_WRITE, MAP_SHARED,
                       g_shm_fd, 0);
  if (p < 0 && p > -4096) return;
  g_shared = reinterpret_cast<SharedState*>(p);
  if (g_shared->magic != kSharedMagic) return;
  // The launcher has closed the trace (processes left running past --linger): a process they
  // start is not recorded (nor does it pay for the library).
  if (g_shared->closed.load() != 0) return;
  g_limits.max_events = 65536;
  g_limits.section_bytes = 256 << 10;
  g_limits.max_strings = 32768;
  g_limits.zstd_level = kRecorderZstdLevel;
  g_pid = static_cast<uint32_t>(RawSyscall6(SYS_getpid));
  g_tsc_mult = g_shared->tsc_ns_q32;
  ResyncTsc();
  RegisterMembarrier();  // before any recorded call (see the top of this file)
  g_seccomp_at_start = UnderSeccomp();
  ReadFileSizeLimit();
  g_no_new_privs_at_start = NoNewPrivs();
  // glibc's own variables, not the copy a program that reads one has in its executable (a copy
  // relocation: what `__libc_single_threaded` names here then), nor one of the program's own
  // name: looked up after this library (RTLD_NEXT: the executable, first in the search order,
  // is passed over) and taken only where they lie in libc. Not through
  // dlopen("libc.so.6", RTLD_NOLOAD)'s handle: dlopen builds the object's search list and
  // allocates, some 15 us more in every recorded process than these lookups.
  LibcRange libc;
  dl_iterate_phdr(FindLibc, &libc);
  auto in_libc = [&](const char* name) -> void* {
    void* sym = dlsym(RTLD_NEXT, name);
    return libc.Holds(sym) ? sym : nullptr;
  };
  g_nptl_nthreads = static_cast<unsigned*>(in_libc("__nptl_nthreads"));
  g_single_libc = static_cast<char*>(in_libc("__libc_single_threaded"));
  auto* enable = static_cast<const uint8_t*>(in_libc("_IO_enable_locks"));
  g_io_list_all = static_cast<FILE**>(in_libc("_IO_list_all"));
  g_libc_text_lo = libc.text_lo;
  g_libc_text_hi = libc.text_hi;
  if (enable != nullptr && g_io_list_all != nullptr)
    g_stdio_needs_locking = FindStdioNeedsLocking(enable);
  // Valgrind knows no pidfd_getfd (and says so on stderr, which changes the program's output):
  // decided here, before the exec's event below may start the writer thread, which uses it.
  g_pidfd_getfd = g_shared->pidfd_getfd == 1 && !OnValgrind();
  TakeProcessEntry();
  if (pthread_key_create(&g_key, ThreadExit) != 0) return;
  // Registered as the program's own (no object's handle): pthread_atfork gives this library's,
  // and glibc drops an object's handlers when it finalizes it (__cxa_finalize), which at exit
  // comes before the destructors of the libraries loaded ahead of this one. One of those that
  // forked made a child on the parent's state, recorded under the parent's ids; a writer pass
  // under way at the fork left its lock held in the child for ever (CI of stop 39: a destructor
  // that forks, 1 run in 15 of PLT-only recording hung).
  __register_atfork(nullptr, nullptr, AfterForkChild, nullptr);
  // The exit's last flush (AtExit), as an exit handler of no object's (on_exit; atexit gives
  // this library's handle, and its finalization would run it): __libc_start_main registers the
  // loader's finalizer, which runs every object's destructors, after the constructors (this
  // one among them) have run, and exit handlers run last first.
  on_exit(AtExit, nullptr);
  g_shared->processes.fetch_add(1, std::memory_order_relaxed);
  // Every real function now (the wrappers registered them before this constructor ran), before
  // any recorded call and before the program can fork: no dlsym, which takes the loader's lock,
  // runs later in a child cloned from a multi-threaded parent, nor once in every fork child.
  t_hot.depth = 1;
  ResolveAllReals();
  t_hot.depth = 0;
  uintptr_t tp;
  asm("movq %%fs:0, %0" : "=r"(tp));
  g_errno_tp_offset =
      static_cast<int32_t>(reinterpret_cast<intptr_t>(&errno) - static_cast<intptr_t>(tp));
  g_on = true;
  GrowDefaultStack();
  if (getenv(kEnvReinjected)) {
    Unsetenv(kEnvReinjected);
    RemoveSelfFromPreload();
    const char* vars[] = {kEnvTraceFd, kEnvSharedFd, kEnvTimeUnit, kEnvStartNs, kEnvLib};
    for (const char* v : vars) Unsetenv(v);
  }
  {
    const char* slash = strrchr(g_lib, '/');
    int dir = slash ? static_cast<int>(slash - g_lib) : 0;
    int n = snprintf(g_audit_paths, sizeof(g_audit_paths) / 2, "%.*s%slibiorr-audit.so", dir, g_lib,
                     slash ? "/" : "");
    if (n > 0 && static_cast<size_t>(n) < sizeof(g_audit_paths) / 2) {
      char* chained = g_audit_paths + n + 1;
      snprintf(chained, sizeof(g_audit_paths) - static_cast<size_t>(n) - 1,
               "%.*s%slibiorr-audit-chained.so", dir, g_lib, slash ? "/" : "");
      g_audit_chained = chained;
    } else {
      g_audit_paths[0] = 0;  // longer than PATH_MAX: no module is added
    }
  }
  if (getenv(kEnvAuditAdded)) {
    Unsetenv(kEnvAuditAdded);
    if (g_audit_lib[0] != 0) {
      RemoveFirstFromList("LD_AUDIT", g_audit_lib);
      RemoveFirstFromList("LD_AUDIT", g_audit_chained);
    }
    RemoveFirstFromList("GLIBC_TUNABLES", kAuditTunable);
  }
  if (!RecordExecFromEnv()) AdoptSpawnWindow();
  DropAuditLog();
  NoteTlsRestart();
  // Completeness beyond the PLT (IORR_DISPATCH=0 turns it off, e.g. to measure its cost).
  const char* dispatch = getenv("IORR_DISPATCH");
  if (getenv(kEnvTraced)) {  // a debugger's inferior: traced since before this image
    Unsetenv(kEnvTraced);
    DispatchBecomeTracee();
    NoteTracee();
  } else if (OnValgrind()) {  // see valgrind.h
    WriteNote(
        "capture: PLT wrappers only (the process runs on Valgrind, where Syscall User Dispatch "
        "would trap Valgrind's own calls): libc-internal calls are not recorded");
  } else if (dispatch == nullptr || strcmp(dispatch, "0") != 0) {
    g_sees_seccomp_installs = true;
    // Dispatch, and patched sites (patch.cc) once the process has made IORR_PATCH_AFTER calls
    // (PatchLater). IORR_PATCH=1: patched sites from the start; IORR_PATCH=0: dispatch only.
    const char* patch = getenv("IORR_PATCH");
    const char* after = getenv("IORR_PATCH_AFTER");
    if (after != nullptr && atoi(after) > 0) g_patch_after = atoi(after);
    bool never = patch != nullptr && strcmp(patch, "0") == 0;
    bool now = patch != nullptr && strcmp(patch, "1") == 0;
    char why[256] = "";
    char note[320];
    // Nor from the start under a filter the program installed before the library started (its
    // .preinit_array, an earlier constructor: the audit module saw it).
    bool forbidden = !never && SeccompForbidsPatching();
    if (forbidden) snprintf(why, sizeof(why), "the program installed a seccomp filter");
    if (now && !forbidden && PatchInstall(why, sizeof(why))) {
      DispatchArmThread();
      FlushSignalsInstall();
      snprintf(note, sizeof(note), "capture: patched system call sites (%s)", why);
      WriteNote(note);
    } else if (DispatchInstall() && DispatchArmThread()) {
      FlushSignalsInstall();
      g_patch_pending = !never && !now && !forbidden;  // forbidden for good: seccomp stays
      if (why[0] != 0)
        snprintf(note, sizeof(note), "capture: Syscall User Dispatch (not patched: %s)", why);
      else if (g_patch_pending)
        snprintf(note, sizeof(note),
                 "capture: Syscall User Dispatch (patched system call sites after %d calls)",
                 g_patch_after);
      else
        snprintf(note, sizeof(note), "capture: Syscall User Dispatch");
      WriteNote(note);
    } else if (!never && !now && !forbidden && PatchInstall(why, sizeof(why))) {  // refused
      DispatchArmThread();
      FlushSignalsInstall();
      snprintf(note, sizeof(note),
               "capture: patched system call sites (Syscall User Dispatch refused; %s)", why);
      WriteNote(note);
    } else {
      WriteNote(
          "capture: PLT wrappers only (Syscall User Dispatch refused): libc-internal calls "
          "are not recorded");
    }
  } else {
    WriteNote(
        "capture: PLT wrappers only (Syscall User Dispatch off): libc-internal calls "
        "are not recorded");
  }
}

// Flushes at exit, after every object's destructors (see Init): exit() then only flushes stdio
// (libc-internal writes) and ends the process. Under dispatch the exit_group that ends the
// process flushes once more, and holds the other threads for it (FlushAllAndHold); without it
// nothing sees that exit_group: this is the process's last flush, and the other threads are
// held for it (HoldOtherThreads). Until stop 40 this was the library's destructor, which runs
// before the destructors of the libraries loaded after it (the program's own, but libc): their
// recorded calls were lost in PLT-only recording, and one that needed a lock a parked thread held
// waited for ever. The hold still ends by itself after 100 ms: code may follow (an exit handler
// registered with no object's handle before this library's constructor ran).
void AtExit(int, void*) {
  if (!g_on) return;
  if (!DispatchEnabled() && MayHoldOthers()) HoldOtherThreads(100'000'000);
  FlushAll();
  // Not released here without dispatch (where nothing sees the exit_group that follows):
  // other threads may still be inside calls whose events would come after a watermark that
  // left them out. The lock goes with the process; finders free what is left.
}

}  // namespace

namespace {
// One try at reading the TSC clock: false when the anchor was being written meanwhile.
template <bool kFenced>
__attribute__((always_inline)) inline bool TryReadClock(int64_t* ns) {
  uint32_t seq = g_tsc_seq.load(std::memory_order_acquire);
  TscAnchor a = g_anchor;
  std::atomic_thread_fence(std::memory_order_acquire);
  // The TSC is read between the two loads of the sequence, so a reading that passes the
  // check was taken before any newer anchor's TSC (ResyncTsc).
  std::atomic_signal_fence(std::memory_order_seq_cst);  // earlier stores stay before it
  if (kFenced) __builtin_ia32_lfence();
  uint64_t tsc = __builtin_ia32_rdtsc();
  // The second load of the sequence goes through an address computed from the TSC reading
  // (plus a zero the processor has to compute from it), so it cannot be carried out before
  // the TSC is read: cheaper than a second lfence, which waits for everything before it.
  uintptr_t at = reinterpret_cast<uintptr_t>(&g_tsc_seq), zero = tsc;
  asm("shr $32, %1\n\tshr $32, %1\n\tadd %1, %0" : "+r"(at), "+r"(zero));
  if ((seq & 1) != 0 ||
      seq != reinterpret_cast<const std::atomic<uint32_t>*>(at)->load(std::memory_order_acquire))
    return false;
  *ns = ClockAt(tsc, a) - g_start_mono;
  return true;
}

// ReadClock's rare part: the anchor was being written, or there is no TSC clock.
template <bool kFenced>
IORR_COLD int64_t ReadClockSlow() {
  if (g_tsc_mult != 0) {
    // The anchor's writer never leaves it odd for long, unless it died there (a process killed
    // mid-resync whose vfork child lives on): then the monotonic clock.
    int64_t ns;
    for (int spins = 0; spins < (1 << 20); ++spins)
      if (TryReadClock<kFenced>(&ns)) return ns;
  }
  return MonoNs() - g_start_mono;
}

// Inlined into the hook path, its rare part out of line (see RingReserve). !kFenced: a call's
// end, read right after its system call returned, without the lfence (5.6 ns of 14 on this
// project's machines): the TSC may then be read a few nanoseconds before the loads that
// precede it complete, which no 1 us (or even 1 ns) trace can tell; the next call's fenced
// start still comes after it, EndCall keeps it at or after the call's start, and a reading
// taken before the anchor's base counts as the base (ClockAt).
template <bool kFenced>
__attribute__((always_inline)) inline int64_t ReadClock() {
  int64_t ns;
  if (__builtin_expect(g_tsc_mult != 0, 1) && TryReadClock<kFenced>(&ns)) return ns;
  return ReadClockSlow<kFenced>();
}
}  // namespace

// The lfence keeps the TSC read after everything before it: a call's start then follows
// whatever the thread saw before the call (another thread's event that ended first, the
// announcement in BeginCallAt).
int64_t NowNs() { return ReadClock<true>(); }

// A fatal signal's flush is under way in another thread (FlushBeforeDeath): this thread waits
// here, before its call, for the process to die (the kernel would have ended it already), or
// for EndDeath.
std::atomic<uint32_t> g_death_word{0};
// The thread that holds the others before an exit or exec's flush (HoldOtherThreads), which
// does not wait itself.
std::atomic<long> g_holding_tid{0};
// When such a hold ends by itself (NowNs), 0 for never: the hold at the destructors' flush in
// PLT-only recording (Fini), after which code still runs (a library's destructor, run later,
// that takes a lock a parked thread holds waited for ever: review of stop 39).
std::atomic<int64_t> g_hold_until{0};
// This thread holds the others (HoldOtherThreads): it neither waits nor withdraws itself.
bool HoldsOthers() {
  long holder = g_holding_tid.load(std::memory_order_relaxed);
  return holder != 0 && holder == Gettid();
}
bool HoldExpired() {
  int64_t until = g_hold_until.load(std::memory_order_acquire);
  return until != 0 && NowNs() >= until;
}
thread_local bool t_flushing_death __attribute__((tls_model("initial-exec"))) = false;
// The handler that flushed has returned, leaving the signal to kill the process
// (DeathHandlerReturned): a process still alive well after that lived on (a tracer dropped the
// signal), and its waiting threads go on by themselves.
std::atomic<bool> g_death_returned{false};
void DeathHandlerReturned() { g_death_returned.store(true, std::memory_order_release); }
IORR_COLD void ParkForDeath() {
  // (A vfork child is a process of its own: its parent's end does not end it.)
  if (t_writer_thread || t_hot.vm_child || HoldsOthers()) return;
  if (t_flushing_death) {  // this thread's fatal signal did not end the process after all
    EndDeath();
    return;
  }
  int returned_for = 0;  // 100 ms waits that ended with the handler returned
  for (;;) {
    uint32_t word = g_death_word.load(std::memory_order_acquire);
    if (!g_dying.load(std::memory_order_acquire) || HoldExpired()) return;
    if (returned_for >= 2) {
      EndDeath();
      return;
    }
    struct timespec wait = {0, 100'000'000};
    RawSyscall6(SYS_futex, reinterpret_cast<long>(&g_death_word), FUTEX_WAIT_PRIVATE, word,
                reinterpret_cast<long>(&wait));
    returned_for = g_death_returned.load(std::memory_order_acquire) ? returned_for + 1 : 0;
  }
}

bool LockWithin(std::atomic<int>& lock, int tries, long pause_ns) {
  for (int i = 0; i < tries; ++i) {
    int expect = 0;
    if (lock.compare_exchange_strong(expect, 1, std::memory_order_acquire)) return true;
    struct timespec pause = {0, pause_ns};
    RawSyscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
  }
  return false;
}

void EndCallAtDeath(const ucontext_t* uc, char* selector);

bool VforkChildMayFlush() {
  return t_hot.vm_child && !Foreign() && t_vfork_level > 0 && VforkLevel(t_vfork_level - 1).armed;
}

FatalFlush FlushBeforeDeath(int sig, bool may_defer, const ucontext_t* uc, char* selector) {
  if (!g_on || Foreign()) return FatalFlush::kDie;
  if (t_hot.vm_child) {  // alone in its process; the flag would be its suspended parent's too
    if (uc != nullptr) EndCallAtDeath(uc, selector);
    VmChildFlush(t_hot.state);
    return FatalFlush::kDie;
  }
  // A fork child before AfterForkChildOf still holds its parent's state (threads, rings, a
  // writer lock the parent's writer may have held at the fork): nothing of it is its own.
  if (RawSyscall6(SYS_getpid) != static_cast<long>(g_pid)) return FatalFlush::kDie;
  // Holding the writer for an exit or exec: everything is written already.
  if (t_holds_writer) return FatalFlush::kDie;
  // Inside this thread's own pass (an exit's flush, as a Pool worker's when terminate() sends
  // SIGTERM): the pass finishes, then Service sends the signal again (a flush from here would
  // find the lock taken, and dying here lost the whole pass: a worker's every event).
  long self = Gettid();
  if (g_writer_owner.load(std::memory_order_acquire) == self) {
    if (!may_defer) return FatalFlush::kDie;
    t_deferred_signal = sig;
    return FatalFlush::kDeferred;
  }
  if (uc != nullptr) EndCallAtDeath(uc, selector);
  t_flushing_death = true;
  g_dying.store(true, std::memory_order_release);
  // Bounded: for a few instructions around g_writer_owner this thread may hold the lock itself.
  if (LockWithin(g_writer_lock, 5000, 100'000)) ServiceHolding(self, true);
  return FatalFlush::kFlushed;
}

void EndDeath() {
  t_flushing_death = false;
  g_death_returned.store(false, std::memory_order_release);
  g_dying.store(false, std::memory_order_release);
  g_death_word.fetch_add(1, std::memory_order_release);
  RawSyscall6(SYS_futex, reinterpret_cast<long>(&g_death_word), FUTEX_WAKE_PRIVATE, INT_MAX);
}

// A signal handler that siglongjmps out of a wrapped call (a blocking read interrupted by an
// alarm, as shells' timed reads do) abandons it: its EndCall never runs, and the thread would
// stay "inside" it, unrecorded and holding every watermark back, from then on. A wrapper whose
// frame is at or above the pending call's wrapper's (the stack grows down; the same height is a
// call from the same caller's frame) cannot be nested in it: that call's frame is gone. Nested
// calls (libc calling a wrapped function, a handler interrupting the call on the same stack,
// callbacks such as atfork handlers or a cancelled thread's cleanup handlers, which the unwinder
// runs below) are deeper. A handler on an alternate signal stack may lie anywhere: SS_ONSTACK
// says the thread is on it, and then the call counts as nested, as before. The abandoned call
// is not recorded (its result is unknown); a note says so, once per thread.
// At depth 2 (the call's event being written) a handler that interrupts the write runs deeper on
// the same stack, or on the alternate stack: a call from at or above the frame comes after a
// handler left the write by siglongjmp (one the entry does not put off: SA_RESETHAND's, a
// fault's), which until stop 40 left the thread at depth 2 for good, every later call counted
// lost and, with the entry's deferral, every later signal put off (review of stop 40).
IORR_COLD bool LeftByLongjmp(uintptr_t frame) {
  if ((t_hot.depth != 1 && t_hot.depth != 2 && t_hot.depth != kDepthNestable) ||
      t_hot.call_frame == 0 || frame < t_hot.call_frame)
    return false;
  if (AltStackLow(frame) != 0) return false;  // on the alternate stack
  ThreadState* ts = t_hot.state;
  if (ts != nullptr && ts->slot != nullptr) {
    ts->slot->in_call_since.store(kNever, std::memory_order_release);
    if (!ts->longjmp_noted) {
      ts->longjmp_noted = true;
      char text[192];
      snprintf(text, sizeof(text),
               "longjmp %u %u: a recorded call was left without returning (a longjmp out of a "
               "signal handler); it is not in the trace (noted once per thread)",
               ts->pid, ts->tid);
      WriteNote(text);
    }
  }
  t_hot.in_handler = false;  // a SIGSYS handler's frame is gone too
  t_nested_write = false;    // (a nested call's write left so)
  t_hot.depth = 0;
  if (t_hot.deferred) ReleaseDeferredSignals();  // put off inside the write that was left
  return true;
}

// A call that comes while the thread is inside a plain call (kDepthNestable): a signal handler
// that interrupted the call's system call (or its wait in the kernel) and calls a wrapped
// function, or a callback. Until stop 34 such calls went unrecorded (a review: a SIGTERM
// handler's unlink of its lock file while main waited in read, a SIGALRM handler's open and
// close). The outer call's event is written when it ends, after this one's, which is written
// first and so comes first in the thread's stream (as strace prints a call interrupted by a
// handler: unfinished, the handler's calls, then resumed). The outer call holds the thread's
// slot at its start, which is before this one's: this one announces itself only where the
// outer call has not yet (kNever), and puts back what it found. It takes no writer start and
// no switch to patched sites (not from a handler), and writes its event only if the ring has
// room without waiting (a wait for the writer, or the thread's own flush, could wait for what
// the interrupted code holds): else it is dropped and counted, as a full ring's event is
// (t_nested_write, RingWaitRoom). A call that makes a process (fork, exec, posix_spawn) from
// such a handler is recorded nested too, as is a call from frames deeper than a call a
// siglongjmp left (LeftByLongjmp cannot tell them from a handler's: the stack is the same).
// Announces a call in the thread's slot and returns its start. The announcement comes before
// the clock is read: a writer that computes a watermark from its own clock reading and then
// misses this announcement is then sure that this call starts after its reading. Until the
// start is known, the previous one is a valid lower bound.
__attribute__((always_inline)) inline int64_t AnnounceCall(ThreadState* ts) {
  ts->slot->in_call_since.store(ts->last_start, std::memory_order_relaxed);
  LightFence();
  // After the store: the writer's membarrier is the fence's other half.
  int64_t start = ReadClock<true>();
  ts->last_start = start;
  ts->slot->in_call_since.store(start, std::memory_order_release);
  return start;
}

IORR_COLD bool BeginNested(Call* c, uintptr_t frame) {
  ThreadState* ts = t_hot.state;
  if (ts == nullptr || ts->slot == nullptr) return false;
  c->nested = true;
  c->saved_selector = t_hot.selector;
  c->saved_call = t_hot.call;
  t_hot.call = c;  // (a lost one too: EndCallAtDeath then leaves the outer call alone)
  // (A fork child before its pthread_atfork handler has reset its state: the state, and the
  // slot in shared memory, are still the parent's.)
  if (t_hot.depth != kDepthNestable || g_no_writer ||
      RawSyscall6(SYS_getpid) != static_cast<long>(g_pid)) {
    // Inside the library's own work (1: an exec, a spawn; 2: writing an event, where the ring
    // is being written), a handler's call cannot be recorded: it is counted as lost, so the
    // trace says it is incomplete (a timer's handler inside a loop of calls lost about one
    // call in twenty so, as the interrupted code was writing its event: since stop 40 the
    // library's entry puts such a handler off until the write is done, DeferSignal, and this
    // is left to depth 1, to handlers without the entry and to a signal it could not put off). Its
    // real function runs at ALLOW and the selector is put back at its end, so that a wrapper's call
    // is not counted again by the trap of its system call (the handler runs at BLOCK there since
    // stop 35: iorr_handler_entry).
    g_shared->dropped_events.fetch_add(1, std::memory_order_relaxed);
    g_shared->handler_calls_lost.fetch_add(1, std::memory_order_relaxed);
    c->lost = true;
    c->start = ReadClock<true>();  // (an exec's wrapper takes it for its window)
    AllowSyscalls();
    c->on = true;
    return true;
  }
  c->lost = false;
  c->saved_frame = t_hot.call_frame;
  int64_t since = ts->slot->in_call_since.load(std::memory_order_relaxed);
  c->saved_since = since;
  t_hot.call_frame = frame;
  AllowSyscalls();
  c->on = true;
  if (since == kNever) {
    c->start = AnnounceCall(ts);
  } else {
    c->start = ReadClock<true>();
    ts->last_start = std::max(ts->last_start, c->start);
  }
  return true;
}

// The call just announced waits for the process's end after all (see the end of BeginCallAt):
// announced no more, it waits, then begins again if the process lives on. The thread that holds
// the others, or flushes for a fatal signal, goes on.
IORR_COLD bool WithdrawForDeath(Call* c, ThreadState* ts, uintptr_t frame, int depth) {
  if (t_flushing_death || t_writer_thread || t_hot.vm_child || HoldExpired() || HoldsOthers())
    return true;
  ts->slot->in_call_since.store(kNever, std::memory_order_release);
  c->on = false;
  t_hot.depth = 0;
  BlockSyscalls();
  ParkForDeath();
  return BeginCallAt(c, frame, depth);
}

IORR_HOT bool BeginCallAt(Call* c, uintptr_t frame, int depth) {
  if (__builtin_expect(g_dying.load(std::memory_order_relaxed), 0)) ParkForDeath();
  // (A vfork child goes on when its parent's process ends: the release is the parent's.)
  if (!g_on || t_hot.done || (g_released.load(std::memory_order_relaxed) && !t_hot.vm_child))
    return false;
  if (Foreign()) return false;
  if (t_hot.depth != 0 && !LeftByLongjmp(frame)) return BeginNested(c, frame);
  // A signal handler jumped out of a trapped call that was not being recorded (pause): the
  // SIGSYS handler's frame is gone (else the writer never started, waiting for it to end).
  if (t_hot.in_handler && frame > t_hot.handler_frame && !(frame >= t_alt_lo && frame < t_alt_hi))
    t_hot.in_handler = false;
  ThreadState* ts = t_hot.state;
  if (ts == nullptr) {
    t_hot.depth = 1;
    ts = t_hot.state = NewThreadState();
    t_hot.depth = 0;
    if (ts == nullptr) {
      // No memory or slot: this thread goes unrecorded. (Its process ending is no reason to
      // mark it: the check above keeps it out, and a fork child starts afresh.)
      if (!g_released.load(std::memory_order_relaxed)) {
        t_hot.done = true;
        g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
      }
      return false;
    }
  }
  t_hot.depth = depth;
  t_hot.call_frame = frame;
  t_hot.call = c;
  AllowSyscalls();  // the real libc function runs natively; this call records it
  c->on = true;
  c->start = AnnounceCall(ts);
  // A hold of the other threads for an exit or exec (HoldOtherThreads) that began between the
  // check above and the announcement may have missed this call: the fence in AnnounceCall and
  // the holder's HeavyFence make one of the two see the other.
  if (__builtin_expect(g_dying.load(std::memory_order_relaxed), 0))
    return WithdrawForDeath(c, ts, frame, depth);
  return true;
}

// Patched sites (patch.cc) once a process has shown it makes many calls: a short process keeps
// dispatch, whose set-up costs nothing, and never pays for rewriting (about 0.2 ms, and the
// decoding of libc by the first process of a recording to get there).

bool g_patch_from_handler = false;
int32_t g_errno_tp_offset = 0;  // see ProgramErrno (preload.h)

namespace {
void PatchNow(uintptr_t* resume_at, bool before_thread = false);
}  // namespace

IORR_COLD void PatchLater() {
  if (!g_patch_pending || DispatchTracee()) return;
  // Not in a vfork child (the parent's memory), nor under other threads: try again later.
  // Inside a trapped call: at the handler's end, if the call allows it (PatchFromHandler).
  if (t_hot.vm_child || ProgramThreads() != 1) {
    t_hot.patch_calls = 0;
    return;
  }
  if (t_hot.in_handler) {
    g_patch_from_handler = g_libc_text_hi != 0;
    t_hot.patch_calls = 0;
    return;
  }
  PatchNow(nullptr);
}

constexpr uint32_t kPatchBeforeThreadCalls = 200;

// The program is about to start its first thread (the pthread_create wrapper): the last moment
// the switch can come, since code is rewritten only in a process of one thread (PatchInstall).
// After it every call libc makes itself (futex, mmap, its stdio's reads and writes) would trap
// for the rest of the process's life: 4 Python threads of 1-byte writes ran 1.7x plain with
// dispatch against 1.15x patched from the start (stop 36). Not inside a call, a trapped call
// or the library's work (a handler's thread), nor in a vfork child.
IORR_COLD void PatchBeforeThread() {
  // Not in a process that has made few calls so far: a short process that starts a thread
  // would pay the rewriting (0.4 to 0.9 ms) for little (a review of stop 36: 200 processes
  // starting one thread each, +1 ms a process). 200: Python has made more by its first thread
  // (512 kept it trapping).
  if (!g_patch_pending || t_hot.patch_calls < kPatchBeforeThreadCalls || DispatchTracee() ||
      t_hot.vm_child || t_hot.in_handler || t_hot.depth != 0 || !t_hot.armed ||
      ProgramThreads() != 1)
    return;
  PatchNow(nullptr, true);
}

// The program's half of the writer's move to a table of its own (see PrivateFdTable): from the
// main thread while it is the program's only one, outside a vfork child, once per process
// (where it is not the time, again after as many calls). Every signal is blocked while it
// waits (a handler could close or dup2); the library's own system calls meanwhile are not
// trapped, so it may wait inside the SIGSYS handler too. A request the writer has not taken
// within 100 ms (a writer not running: never scheduled, or gone) is withdrawn; one it has
// taken is waited for, up to 2 s in all.
bool g_files_shared = false;  // NoteFilesSharedTask
IORR_COLD void OwnWriterTable() {
  if (g_writer_table_asked || !g_pidfd_getfd || g_uncounted_vm_task || g_files_shared) return;
  if (t_hot.vm_child || g_writer_started.load(std::memory_order_acquire) != 1 ||
      ProgramThreads() != 1 || Gettid() != static_cast<long>(g_pid)) {
    t_hot.table_calls = 0;  // not now: again after as many calls
    return;
  }
  g_writer_table_asked = true;
  if (UnderSeccomp()) return;
  SignalsHeld held(kAllSignals);
  g_writer_table_done.store(0, std::memory_order_relaxed);
  g_table_request.store(1, std::memory_order_release);
  Wake();
  for (int i = 0; i < 1000 && g_writer_table_done.load(std::memory_order_acquire) == 0; ++i) {
    int one = 1;
    if (i == 50 && g_table_request.compare_exchange_strong(one, 0)) break;  // withdrawn
    struct timespec ms2 = {0, 2'000'000};
    RawSyscall6(SYS_futex, reinterpret_cast<long>(&g_writer_table_done), FUTEX_WAIT_PRIVATE, 0,
                reinterpret_cast<long>(&ms2));
  }
}

// The program is about to start its first thread: the last moment for OwnWriterTable, in a
// process that has made enough calls for it (as PatchBeforeThread).
void OwnWriterTableBeforeThread() {
  if (t_hot.table_calls >= kPatchBeforeThreadCalls && !t_hot.in_handler && t_hot.depth == 0)
    OwnWriterTable();
}

void NoteFilesSharedTask() { g_files_shared = true; }

// A process whose calls all trap (a program doing its I/O through stdio alone: libc's own
// calls, none through a wrapper) would otherwise keep dispatch for good, a trap per call
// (200,000 fputc and fflush: 0.02 s plain, 0.33 to 0.48 s recorded at stop 27). From inside
// the handler the rewriting is safe when the trapped call is one of libc's I/O calls made in
// libc's own code (not the loader's, which may be loading an object, nor a memory call, which
// malloc makes), the handler is the outermost one, and the thread goes on outside every
// window about to be rewritten, or right after the syscall of one, whose stub then takes it on
// (PatchInstall moves *resume_at). Otherwise the next trap tries.
IORR_COLD void PatchFromHandler(long nr, uintptr_t site, uintptr_t* resume_at) {
  switch (nr) {
    case SYS_read:
    case SYS_write:
    case SYS_pread64:
    case SYS_pwrite64:
    case SYS_readv:
    case SYS_writev:
    case SYS_lseek:
    case SYS_close:
    case SYS_fstat:
    case SYS_newfstatat:
    case SYS_getdents64:
      break;
    default:
      return;
  }
  if (site < g_libc_text_lo || site >= g_libc_text_hi || !g_patch_pending || t_hot.vm_child ||
      ProgramThreads() != 1)
    return;
  g_patch_from_handler = false;
  PatchNow(resume_at);
}

namespace {
void PatchNow(uintptr_t* resume_at, bool before_thread) {
  // Not while a frame of the program's signal handlers is live on the thread (the only one):
  // this call may be inside one, and the context it interrupted may be inside a window about
  // to be rewritten (a trapped call returns there, and a signal is delivered at any
  // instruction). The next calls try again. Every handler runs behind the library's entry,
  // which counts its frames (stop 36; until then a process that had ever installed a handler
  // kept dispatch for good, and so paid a trap for each of libc's own calls: shells, make,
  // Python, sqlite3's shell); one that does not (set where rt_sigaction was not caught, or past
  // the 256 entries) cannot be counted, and its process keeps dispatch.
  if (t_hot.program_handlers != 0) {
    t_hot.patch_calls = 0;
    g_patch_from_handler = false;
    return;
  }
  g_patch_pending = false;
  if (g_uncounted_vm_task) {  // (a task glibc does not count may be inside a window)
    WriteNote(
        "capture: Syscall User Dispatch (not patched: a task on the program's memory that "
        "glibc does not count as a thread was started, clone with CLONE_VM)");
    return;
  }
  if (int sig = DispatchUnenteredSignal(); sig != 0 || g_unentered_handler) {
    char note[160];
    if (sig != 0)
      snprintf(note, sizeof(note),
               "capture: Syscall User Dispatch (not patched: the program handles signal %d "
               "without the library's entry)",
               sig);
    else
      snprintf(note, sizeof(note),
               "capture: Syscall User Dispatch (not patched: the program set a handler past the "
               "library's entries)");
    WriteNote(note);
    return;
  }
  // Nor under a seccomp filter the program installed since it started (a sandbox): rewriting
  // maps and protects memory, which such a filter may refuse or answer by killing the program
  // (behaviour case "narrowed after start"). A filter inherited at exec let the loader map and
  // protect the program's objects, and patching goes on (a container's, for one) unless
  // no_new_privs was set since, as a program does to install a filter without privileges, or
  // the program was seen installing one (BeginSeccompCall: under a filter inherited with
  // no_new_privs already set, a new filter changes neither). Told without /proc: a probe of
  // the filter count could itself be what a new filter kills (review).
  if (SeccompForbidsPatching()) {
    WriteNote(
        "capture: Syscall User Dispatch (not patched: the program installed a seccomp filter)");
    return;
  }
  char why[256] = "";
  char note[320];
  // No handler of the program's may run while the code is half rewritten (its libc calls would
  // run it): signals wait for the end, but for SIGSYS (a trap while it is blocked kills) and
  // those a fault raises.
  bool installed;
  {
    SignalsHeld held(~(SigBit(SIGSYS) | SigBit(SIGSEGV) | SigBit(SIGBUS) | SigBit(SIGILL) |
                       SigBit(SIGFPE) | SigBit(SIGTRAP)));
    installed = PatchInstall(why, sizeof(why), resume_at);
  }
  if (installed) {
    DispatchDisarmThread();
    if (before_thread)
      snprintf(note, sizeof(note),
               "capture: patched system call sites before the program's first thread (%s)", why);
    else
      snprintf(note, sizeof(note), "capture: patched system call sites after %d calls%s (%s)",
               g_patch_after, resume_at != nullptr ? ", from a trapped call" : "", why);
  } else if (resume_at != nullptr && strcmp(why, kResumeInWindow) == 0) {
    g_patch_pending = true;  // the next trapped call tries again
    g_patch_from_handler = true;
    return;
  } else {
    snprintf(note, sizeof(note), "capture: Syscall User Dispatch (not patched: %s)", why);
  }
  WriteNote(note);
}
}  // namespace

namespace {

// AddCall for a DirectCall (the wrappers' EndCallOf): the strings read here, as ArgValues reads
// them (NULL or EFAULT: -1).
template <bool kStrings>
__attribute__((always_inline)) inline void AddDirectCall(ThreadState* ts, CallId call, int64_t* v,
                                                         const char* const* str, unsigned strings,
                                                         long ret, int64_t start, int64_t end) {
  if constexpr (!kStrings) {
    ts->last_end = end;
    PutEntry(ts, call, v, str, 0, 0, ret, start, end);
    return;
  }
  bool fault = ret == -EFAULT;
  size_t total = 0;
  for (unsigned m = strings; m != 0; m &= m - 1) {
    int i = __builtin_ctz(m);
    if (str[i] == nullptr || fault) {
      v[i] = -1;
    } else {
      size_t len = strnlen(str[i], 1 << 16);
      v[i] = static_cast<int64_t>(len);
      total += len;
    }
  }
  ts->last_end = end;
  PutEntry(ts, call, v, str, strings, total, ret, start, end);
}

// Puts a call's event (and its listing, for getdents64) into the calling thread's ring, the
// arguments straight from the call's (the hook path: no event in between).
void AddCall(ThreadState* ts, CallId call, const long* kargs, long ret, int64_t start,
             int64_t end) {
  const trace::CallShape& spec = trace::Shape(call);
  int64_t v[trace::kMaxArgs] = {};
  const char* str[trace::kMaxArgs];
  size_t total = ArgValues(spec, call, kargs, ret, v, str);
  ts->last_end = end;
  PutEntry(ts, call, v, str, StringArgs(call), total, ret, start, end);
  if (call == CallId::getdents64 && ret > 0)
    AddDirents(ts, static_cast<int32_t>(kargs[0]), end, kargs[1],
               std::min(ret, kargs[2]));  // never past the buffer (a tracer can say more)
  NoteEscapes(call, kargs, ret);
}

}  // namespace

template <class Add>
__attribute__((always_inline)) inline void EndCallWith(Call* c, Add&& add) {
  if (!c->on) return;
  int saved_errno = ProgramErrno();
  // A call begun before a fork, in a handler of the parent's, ends in the child too, whose
  // state starts afresh (depth 0: AfterForkChildOf); the parent records it. (Until stop 35 the
  // child wrote it into no state and died of SIGSEGV: review of stop 35.)
  if (__builtin_expect(t_hot.depth == 0, 0)) {
    // Counted as lost: restarted (SA_RESTART), the call took effect in the child too.
    g_shared->dropped_events.fetch_add(1, std::memory_order_relaxed);
    BlockSyscalls();
    SetProgramErrno(saved_errno);
    return;
  }
  ThreadState* ts = t_hot.state;
  if (__builtin_expect(c->nested, 0)) {  // back to the call it came in (BeginNested)
    t_hot.call = c->saved_call;
    if (c->lost) {
      t_hot.selector = c->saved_selector;
      SetProgramErrno(saved_errno);
      return;
    }
    t_hot.depth = 2;
    t_nested_write = true;
    add(ts);
    t_nested_write = false;
    ts->slot->in_call_since.store(c->saved_since, std::memory_order_release);
    t_hot.call_frame = c->saved_frame;
    t_hot.depth = kDepthNestable;
    t_hot.selector = c->saved_selector;
    if (__builtin_expect(t_hot.deferred, 0)) ReleaseDeferredSignals();
    SetProgramErrno(saved_errno);
    return;
  }
  t_hot.depth = 2;  // writing the event: nothing interrupting it may take the call as left
  add(ts);
  ts->slot->in_call_since.store(kNever, std::memory_order_release);
  // Not from inside the SIGSYS handler (pthread_create allocates and may trap).
  // Nor from a vfork child: the thread would be the child's, on the parent's memory. A vfork
  // child writes what is older than the flush age itself.
  if (t_hot.vm_child) {
    if (ts->last_end - ts->slot->unflushed_min.load(std::memory_order_relaxed) >= kFlushAgeNs)
      VmChildFlush(ts);
  } else if (g_writer_started.load(std::memory_order_relaxed) == 0 && !t_hot.in_handler) {
    StartWriter();
  }
  if (__builtin_expect(++t_hot.patch_calls == static_cast<uint32_t>(g_patch_after), 0))
    PatchLater();
  if (__builtin_expect(++t_hot.table_calls == kOwnTableAfterCalls, 0)) OwnWriterTable();
  t_hot.depth = 0;
  BlockSyscalls();
  // (Before errno is put back: a handler that changes errno does so as if it came before the
  // wrapper returned.)
  if (__builtin_expect(t_hot.deferred, 0)) ReleaseDeferredSignals();
  SetProgramErrno(saved_errno);
}

IORR_HOT void EndCall(Call* c, CallId call, const long* kargs, long ret) {
  EndCallWith(
      c, [&](ThreadState * ts) __attribute__((always_inline)) {
        AddCall(ts, call, kargs, ret, c->start, std::max(c->start, ReadClock<false>()));
      });
}

template <bool kStrings>
IORR_HOT void EndCallDirect(Call* c, CallId call, int64_t* v, const char* const* str,
                            unsigned strings, long ret) {
  EndCallWith(
      c, [&](ThreadState * ts) __attribute__((always_inline)) {
        AddDirectCall<kStrings>(ts, call, v, str, strings, ret, c->start,
                                std::max(c->start, ReadClock<false>()));
      });
}
template void EndCallDirect<false>(Call*, CallId, int64_t*, const char* const*, unsigned, long);
template void EndCallDirect<true>(Call*, CallId, int64_t*, const char* const*, unsigned, long);

// A fatal signal that the kernel delivers as a system call returns (SIGPIPE as a write gets
// EPIPE, the common end of `prog | head`; any signal sent meanwhile) ends a process with SIG_DFL
// on that return, before the wrapper or the caught call's handler writes the call's event:
// strace shows the call done, the trace did not have it (stop 36's sweep). FatalSignalHandler
// runs instead of that death; where the context it interrupted is the return of the system
// call of the call the thread is inside, the call is written here as its EndCall would have
// written it, with the kernel's result, and marked done (on = false), so that a process that
// lives on after all (a tracer dropped the signal) does not write it again. Told by:
//  - depth kDepthNestable: a plain call whose real function or system call runs (1: fork,
//    exec, the library's own work; 2: an event being written, which is left: see the docs);
//  - the call's AtDeath (see preload.h), and its start taken (BeginCall is done);
//  - the stack pointer a little below the Call (kNearCall): the system call was made by the
//    frames the call's own code called, not by a signal handler that interrupted them (a
//    signal frame alone takes more), nor on another stack;
//  - the instruction before the interrupted one is a syscall (0f 05) that is not also the
//    next one: a call that the signal interrupted before it was done is restarted (the kernel
//    steps back onto the syscall, rax the number again) or fails with EINTR, which unrecorded
//    it would not have (it died unfinished): neither is written;
//  - kGate: that syscall is the gate's, which carries out caught calls; kDecode and kSole:
//    it is not (the wrapper's libc function made it), and its number is the call's (kSole: is
//    not seen to be another one). The registers then hold the call's arguments as the kernel
//    took them (syscall keeps all but rax, rcx and r11), as dispatch records them.
// Code bytes are read through process_vm_readv: around an interrupted instruction they may lie
// on another page, unmapped (false then, and nothing is written).
namespace {
constexpr uintptr_t kNearCall = 512;  // seen: 8 (write), 40 (a caught call), 72 (syscall())
bool ReadOwn(uintptr_t addr, void* out, size_t n) {
  struct iovec local = {out, n}, remote = {reinterpret_cast<void*>(addr), n};
  return RawSyscall6(SYS_process_vm_readv, RawSyscall6(SYS_getpid), reinterpret_cast<long>(&local),
                     1, reinterpret_cast<long>(&remote), 1, 0) == static_cast<long>(n);
}
uint32_t Imm32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
// The patched sites' selector check (patch.cc's WriteStub): cmpb $0, %fs:disp32.
bool SelectorCheck(const uint8_t* p) {
  return p[0] == 0x64 && p[1] == 0x80 && p[2] == 0x3c && p[3] == 0x25 && p[8] == 0;
}
// The number set just before the syscall instruction that ends at `end`, -1 if not known:
// mov $nr, %eax or xor %eax, %eax before it (glibc's own code); in a patched site's stub, the
// copy of the mov, then the selector's check and its jne; at a patched site whose syscall
// stayed in place, the jump to the stub that took the mov's place (int3 after it), and the
// copy of the mov at the end of the stub's copied instructions.
long NumberBefore(uintptr_t end) {
  uint8_t b[32];
  if (!ReadOwn(end - sizeof(b), b, sizeof(b))) return -1;
  const uint8_t* at = b + sizeof(b) - 2;  // the syscall
  if (at[-2] == 0x31 && at[-1] == 0xc0) return 0;
  if (at[-5] == 0xb8) return Imm32(at - 4);
  if (at[-2] == 0x75 && SelectorCheck(at - 11) && at[-16] == 0xb8) return Imm32(at - 15);
  const uint8_t* j = at;
  while (j > b + 5 && j[-1] == 0xcc) --j;
  if (j - b < 5 || j[-5] != 0xe9) return -1;
  uintptr_t from = end - 2 - static_cast<uintptr_t>(at - j) - 5;  // the jump's address
  uintptr_t nbefore = end - 2 - from;
  uint8_t st[48];
  uintptr_t stub =
      from + 5 + static_cast<uintptr_t>(static_cast<int64_t>(static_cast<int32_t>(Imm32(j - 4))));
  if (nbefore < 5 || nbefore + 16 > sizeof(st) || !ReadOwn(stub, st, nbefore + 16)) return -1;
  const uint8_t* chk = st + nbefore;
  // ... the check, its jne, and the jump back to the syscall
  if (!SelectorCheck(chk) || chk[9] != 0x75 || chk[11] != 0xe9 ||
      stub + nbefore + 16 +
              static_cast<uintptr_t>(static_cast<int64_t>(static_cast<int32_t>(Imm32(chk + 12)))) !=
          end - 2 ||
      chk[-5] != 0xb8)
    return -1;
  return Imm32(chk - 4);
}
bool SyscallReturnedAt(const Call& c, uintptr_t rip) {
  if (c.How() == AtDeath::kGate) return rip == reinterpret_cast<uintptr_t>(iorr_raw_syscall_ret);
  if (rip >= reinterpret_cast<uintptr_t>(iorr_gate_start) &&
      rip < reinterpret_cast<uintptr_t>(iorr_gate_end))
    return false;
  uint8_t around[4];
  if (!ReadOwn(rip - 2, around, sizeof(around)) || around[0] != 0x0f || around[1] != 0x05 ||
      (around[2] == 0x0f && around[3] == 0x05))
    return false;
  long nr = NumberBefore(rip);
  long want = trace::Shape(c.Id()).nr;
  return nr == want || (nr == -1 && c.How() == AtDeath::kSole);
}
}  // namespace

IORR_COLD void EndCallAtDeath(const ucontext_t* uc, char* selector) {
  if (t_hot.depth != kDepthNestable) return;
  // Not under a seccomp filter that may refuse process_vm_readv: the process would die of
  // that (SIGSYS) instead of its own signal.
  if (!NoSeccompFilter()) return;
  Call* c = t_hot.call;
  ThreadState* ts = t_hot.state;
  if (c == nullptr || ts == nullptr || ts->slot == nullptr) return;
  const greg_t* r = uc->uc_mcontext.gregs;
  auto rsp = static_cast<uintptr_t>(r[REG_RSP]), at = reinterpret_cast<uintptr_t>(c);
  if (rsp >= at || at - rsp > kNearCall) return;
  if (!c->on || c->How() == AtDeath::kNone || c->start == 0 || (c->nested && c->lost)) return;
  uint16_t tag = static_cast<uint16_t>(c->Id());
  if (tag == 0 || trace::ShapeOf(tag) == nullptr || trace::Shape(c->Id()).nr < 0) return;
  long ret = r[REG_RAX];
  if (ret == -EINTR || !SyscallReturnedAt(*c, static_cast<uintptr_t>(r[REG_RIP]))) return;
  const long k[6] = {r[REG_RDI], r[REG_RSI], r[REG_RDX], r[REG_R10], r[REG_R8], r[REG_R9]};
  // As EndCallWith, without what the call's end does for later calls (the writer's start, the
  // switch to patched sites): the flush follows. The ring's room is not waited for.
  t_hot.depth = 2;
  t_nested_write = true;
  AddCall(ts, c->Id(), k, ret, c->start, std::max(c->start, ReadClock<false>()));
  t_nested_write = false;
  c->on = false;
  if (c->nested) {
    ts->slot->in_call_since.store(c->saved_since, std::memory_order_release);
    t_hot.call_frame = c->saved_frame;
    t_hot.call = c->saved_call;
    t_hot.depth = kDepthNestable;
    *selector = c->saved_selector;
  } else {
    ts->slot->in_call_since.store(kNever, std::memory_order_release);
    t_hot.depth = 0;
    if (t_hot.armed) *selector = 1;  // SYSCALL_DISPATCH_FILTER_BLOCK, as BlockSyscalls
  }
}

void NoteExecAttempt(int dirfd, const char* path) {
  if (!g_on) return;
  // As the kernel names it (fs/exec.c, alloc_bprm). (Names past 4 KiB are cut: not a path
  // the kernel takes.)
  char name[4160];
  if (path == nullptr)
    snprintf(name, sizeof(name), "?");
  else if (dirfd == AT_FDCWD || path[0] == '/')
    snprintf(name, sizeof(name), "%s", path);
  else if (path[0] == 0)
    snprintf(name, sizeof(name), "/dev/fd/%d", dirfd);
  else
    snprintf(name, sizeof(name), "/dev/fd/%d/%s", dirfd, path);
  NoteExec("exec-attempt", name);
}
void NoteExecFailed() {
  if (g_on) NoteExec("exec-failed", nullptr);
}
void NoteAltStack(const stack_t& ss) {
  if (Foreign()) return;
  bool on = !(ss.ss_flags & SS_DISABLE) && ss.ss_size != 0;
  t_alt_lo = on ? reinterpret_cast<uintptr_t>(ss.ss_sp) : 0;
  t_alt_hi = on ? t_alt_lo + ss.ss_size : 0;
}
bool OnNotedAltStack(uintptr_t sp) { return sp >= t_alt_lo && sp < t_alt_hi; }
uintptr_t AltStackLow(uintptr_t sp) {
  if (OnNotedAltStack(sp)) return t_alt_lo;
  stack_t ss;
  if (RawSyscall6(SYS_sigaltstack, 0, reinterpret_cast<long>(&ss)) == 0 &&
      (ss.ss_flags & SS_ONSTACK))
    return reinterpret_cast<uintptr_t>(ss.ss_sp);
  return 0;
}

void OnTraceMe() {
  if (Foreign()) return;  // nothing of this storage is its own (its exec records on, audited)
  if (t_hot.vm_child) {   // the parent's threads and its own flag are not the child's to change
    t_vm_tracee = true;
  } else {
    ThreadState* ts = t_hot.state;
    if (ts != nullptr && ts->tid != static_cast<uint32_t>(Gettid())) return;  // a CLONE_VM task
    if (DispatchTracee()) return;
    DispatchBecomeTracee();
  }
  int saved = errno;  // the wrappers return the program's ptrace result and errno
  NoteTracee();
  errno = saved;
}

void NoteTracee() {
  if (!g_on) return;
  char text[160];
  snprintf(text, sizeof(text),
           "capture %u: traced (PTRACE_TRACEME): PLT wrappers only in this process and what it "
           "starts; libc-internal calls are not recorded",
           TaskPid());
  WriteNote(text);
}

bool g_noted_small_stack = false;
void NoteSmallStack(size_t size) {
  if (!g_on || g_noted_small_stack || !DispatchEnabled()) return;
  g_noted_small_stack = true;
  char text[200];
  snprintf(text, sizeof(text),
           "capture %u: a thread on a stack of the program's own memory of %zu bytes is recorded "
           "through the PLT wrappers only (a trap's signal frame could overrun it); so is any "
           "such thread after it",
           TaskPid(), size);
  WriteNote(text);
}

// The calling task's liveness lock fd: a vfork child's own, else the process's.
int& CurrentLockFd() {
  static int none = -1;
  if (Foreign()) return none = -1;  // its own copy was closed when it became a vfork child
  if (!t_hot.vm_child) return g_lock_fd;
  return t_hot.state ? t_hot.state->vm_lock_fd : (none = -1);
}
SharedState* Shared() { return g_shared; }

int ProgramThreads() {
  return g_nptl_nthreads != nullptr
             ? static_cast<int>(__atomic_load_n(g_nptl_nthreads, __ATOMIC_SEQ_CST))
             : -1;
}

bool IsOwnFd(long fd) {
  int lock = CurrentLockFd();
  return g_on && (fd == CurTraceFd() || fd == CurShmFd() || (lock >= 0 && fd == lock));
}
int LockFd() { return CurrentLockFd(); }
int TraceFd() { return CurTraceFd(); }
int SharedFd() { return CurShmFd(); }

bool VacateFd(int fd) {
  if (!IsOwnFd(fd)) return true;
  int& lock = CurrentLockFd();
  // A vfork child moves its own copies and keeps their numbers in thread-local storage (the
  // globals are the parent's, whose other threads use them). A foreign task has nowhere to
  // keep them: a dup2 onto them, just below the fd limit, gets EBUSY.
  if (Foreign()) return false;
  bool vm_own = t_hot.vm_child;
  // Not while the writer takes copies of them (PrivateFdTable). Signals are blocked meanwhile:
  // a handler that jumped out (siglongjmp) would leave the lock held for good. (Only the gate's
  // system calls run in between, so SIGSYS blocked cannot kill.)
  bool locking = !t_hot.vm_child;
  SignalsHeld held(kAllSignals, locking);
  if (locking) Lock(g_fd_move_lock);
  long moved = RawSyscall6(SYS_fcntl, fd, fd == lock ? F_DUPFD_CLOEXEC : F_DUPFD, fd + 1);
  if (moved >= 0) {
    RawSyscall6(SYS_close, fd);
    if (vm_own) {
      if (fd == CurTraceFd()) t_vm_trace_fd = static_cast<int>(moved);
      if (fd == CurShmFd()) t_vm_shm_fd = static_cast<int>(moved);
    } else {
      if (fd == g_trace_fd) g_trace_fd = static_cast<int>(moved);
      if (fd == g_shm_fd) g_shm_fd = static_cast<int>(moved);
    }
    if (fd == lock) lock = static_cast<int>(moved);
  }
  if (locking) Unlock(g_fd_move_lock);
  return moved >= 0;
}

// A vfork child's slot, then its entry and lock (see iorr_vfork_child), once.
void ReleaseVforkChild(ThreadState* ts) {
  if (ts->slot) {
    uint32_t pid = ts->pid;
    if (ts->slot->tid.load(std::memory_order_acquire) == ts->tid &&
        ts->slot->pid.compare_exchange_strong(pid, 0))
      FreeSlot(*ts->slot, ts->tid);
    ts->slot = nullptr;
  }
  if (ts->vm_entry != 0) {
    uint32_t pid = ts->pid;
    g_shared->proc_pid[ts->vm_entry - 1].compare_exchange_strong(pid, 0);
    ts->vm_entry = 0;
  }
  // Its lock fd is in the child's fd table: it goes with the child (or its exec, close-on-exec).
}

void FlushAll() {
  if (!g_on || Foreign()) return;
  if (t_hot.vm_child) {
    // A vfork child writes its own events only: the parent's threads are the parent's writer's
    // (and the checks Service makes of them read /proc/self, which is the child's here).
    VmChildFlush(t_hot.state);
    return;
  }
  Service(true);
}

// The other threads' calls when the process ends (exit_group) or execs (which ends every other
// thread): unrecorded, a call another thread is making goes on to take effect (its data reaches
// the file) until the kernel ends the thread, and the threads between calls may start more;
// recorded, those events came after the last flush and were lost, the trace still complete
// (stop 39's sweep: three threads writing 8 bytes at a time, 2 to 11 writes of about 1,880 in
// the files not in the trace at the main thread's exit(), 300 to 1,000 of 56,000 at a thread's
// exec). Before that flush, as for a fatal signal (FlushBeforeDeath), the other threads' next
// calls wait (ParkForDeath), and a call under way is waited for while its thread runs or waits
// uninterruptibly (the kernel's kill lets such a call finish): not one asleep in an
// interruptible wait (a read of an empty pipe, which the kill ends unrecorded as it does
// unrecorded), and kHoldMaxNs in all. Where /proc does not say, while the call is younger than
// kHoldFreshNs. After a failed exec, ReleaseOtherThreads.
constexpr int64_t kHoldFreshNs = 2'000'000, kHoldMaxNs = 50'000'000;
// A thread's scheduler state as /proc shows it ('R', 'S', 'D', ...), 0 where it cannot be read.
char ThreadRunState(uint32_t tid) {
  // Not under a seccomp filter, which may kill for an openat the program never makes: the
  // kernel's answer for this thread now (NoSeccompFilter is false for good in PLT-only
  // recording, which cannot see a filter installed: there the 2 ms rule alone lost a write
  // preempted longer under load, in 8 of 20 runs).
  if (UnderSeccomp()) return 0;
  char path[64], buf[512];
  snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
  long fd = RawSyscall6(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  long n = RawSyscall6(SYS_read, fd, reinterpret_cast<long>(buf), sizeof(buf) - 1);
  RawSyscall6(SYS_close, fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* end = strrchr(buf, ')');  // the name may hold anything but ends the field
  return end != nullptr && end[1] == ' ' ? end[2] : 0;
}
void HoldOtherThreads(int64_t bound_ns) {
  if (g_dying.load(std::memory_order_acquire)) return;  // a fatal signal's flush holds them
  int threads = ProgramThreads();  // glibc counts them (0 once the main thread has left too)
  if (threads == 0 || threads == 1) return;  // no other thread of the program's
  g_holding_tid.store(Gettid(), std::memory_order_relaxed);
  g_hold_until.store(bound_ns != 0 ? NowNs() + bound_ns : 0, std::memory_order_release);
  g_dying.store(true, std::memory_order_seq_cst);
  // The other half of the fence after a call's announcement (BeginCallAt): a thread that read
  // g_dying before this store has announced its call by now, or reads it after.
  if (!HeavyFence()) {
    struct timespec settle = {0, 200'000};  // (real fences from now on; an earlier light one)
    RawSyscall6(SYS_nanosleep, reinterpret_cast<long>(&settle), 0);
  }
  ThreadState* self = t_hot.state;
  int64_t from = NowNs();
  for (int i = 0, used = g_threads_used.load(std::memory_order_acquire); i < used; ++i) {
    ThreadState* ts = g_threads[i].load(std::memory_order_acquire);
    // (Not a vfork child's: a process of its own, which goes on.)
    if (ts == nullptr || ts == self || ts->slot == nullptr || ts->pid != g_pid) continue;
    for (;;) {
      int64_t since = ts->slot->in_call_since.load(std::memory_order_acquire);
      int64_t now = NowNs();
      if (since == kNever || now - from > kHoldMaxNs) break;
      char state = ThreadRunState(ts->tid);
      if (state == 'S' || state == 'T' || state == 't' || state == 'Z' || state == 'X' ||
          (state == 0 && now - since > kHoldFreshNs))
        break;
      struct timespec pause = {0, 20'000};
      RawSyscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    }
  }
}
void ReleaseOtherThreads() {
  if (!HoldsOthers()) return;
  g_holding_tid.store(0, std::memory_order_relaxed);
  g_hold_until.store(0, std::memory_order_release);
  EndDeath();  // the waiting threads go on, as after a fatal signal the process survived
}

// Not in a vfork child (the other threads are its parent's, which go on), nor in a task of
// another process on this memory, nor where this thread holds the writer already.
bool MayHoldOthers() {
  return g_on && !t_hot.vm_child && !t_holds_writer && !Foreign() &&
         RawSyscall6(SYS_getpid) == static_cast<long>(g_pid);
}

void FlushAllAndHold() {
  if (MayHoldOthers()) HoldOtherThreads(0);
  FlushAll();
  if (!g_on || t_hot.vm_child || t_holds_writer || Foreign()) return;
  // Not in a task of another process on this memory (a raw clone(CLONE_VM) child, which the
  // library does not see as a vfork child): its exit or exec would leave the lock held for ever.
  if (RawSyscall6(SYS_getpid) != static_cast<long>(g_pid)) return;
  long self = Gettid();
  if (g_writer_owner.load(std::memory_order_acquire) == self) return;  // a handler inside Service
  Lock(g_writer_lock);
  g_writer_owner.store(self, std::memory_order_release);
  t_holds_writer = true;
}

void ReleaseHeldWriter() {
  ReleaseOtherThreads();
  if (!t_holds_writer || Foreign()) return;  // held by the storage's owner, if at all
  t_holds_writer = false;
  g_writer_owner.store(0, std::memory_order_release);
  Unlock(g_writer_lock);
}

void ReleaseProcessSlots() {
  if (!g_on || Foreign()) return;
  // An owner of its storage (see ForeignTask) ending leaves it nobody's: its tid may come back
  // as a foreign task's.
  if (t_hot.owner_tid != 0) t_hot.owner_tid = kNoOwner;
  if (t_hot.vm_child) {  // a vfork child ending: its own slot and entry (the parent's stay)
    if (t_hot.state) ReleaseVforkChild(t_hot.state);
    t_hot.state = nullptr;  // nothing more of it is recorded (its parent unmaps the state)
    t_hot.done = true;
    return;
  }
  if (g_released.load()) return;
  // A child that shares this memory without having become a process of its own here (a clone
  // the library let through, a vfork without fork handlers) must not release its parent's.
  if (RawSyscall6(SYS_getpid) != static_cast<long>(g_pid)) return;
  // Once, and first: a thread whose first call comes after this would take a slot that nobody
  // frees (BeginCall records nothing from now on); OwnSlot needs the entry, which goes below.
  if (g_released.exchange(true)) return;
  for (uint32_t i = 0, used = SlotsInUse(); i < used; ++i) {
    ThreadSlot& s = g_shared->slot[i];
    // Freed by whoever wins the pid's CAS: this scan, or a thread giving its slot back. This
    // process's spawn windows go too: a popen child not yet started would find it by its
    // parent's pid, which it no longer has once its parent is gone (it drops its log).
    uint32_t mine = g_pid;
    uint32_t holder = s.tid.load(std::memory_order_acquire);
    int64_t window = s.raise_from.load(std::memory_order_acquire);  // (before OwnSlot's reads)
    // (A window a thread is opening, or one being freed or taken, is its opener's or its
    // taker's: an opening one goes once this process is found gone, FreeGoneEntry.)
    if (!OwnSlot(s) || holder == 0 || holder == kClosingWindowTid || holder == kOpeningWindowTid)
      continue;
    if (holder == kSpawnWindowTid)
      FreeSpawnWindow(s, window);
    else if (s.pid.compare_exchange_strong(mine, 0))
      FreeSlot(s);
  }
  if (g_entry != 0) {  // then the entry (freed before the lock goes, so no finder takes it)
    uint32_t mine = g_pid;
    g_shared->proc_pid[g_entry - 1].compare_exchange_strong(mine, 0);
    EntryLock(OwnLockFd(), F_OFD_SETLK, F_UNLCK, g_entry - 1);
    g_entry = 0;
  }
}

// Around a recorded exec: the lock fd loses close-on-exec, so the new image (which IORR_LOCK
// names it to) keeps the lock through the exec; after a failed exec it gets it back.
void ExecKeepsLock(bool keep) {
  if (!g_on || Foreign()) return;
  if (t_hot.vm_child) {  // a vfork child's own lock (the parent's stays closed to the new image)
    ThreadState* ts = t_hot.state;
    if (ts == nullptr) return;
    ts->exec_pending.store(keep ? 1 : 0);
    if (ts->vm_lock_fd >= 0) RawSyscall6(SYS_fcntl, ts->vm_lock_fd, F_SETFD, keep ? 0 : FD_CLOEXEC);
    return;
  }
  if (g_entry == 0 || g_lock_fd < 0) return;
  if (keep ? g_exec_windows.fetch_add(1) == 0 : g_exec_windows.fetch_sub(1) == 1)
    RawSyscall6(SYS_fcntl, g_lock_fd, F_SETFD, keep ? 0 : FD_CLOEXEC);
}

// Whether a tracer is attached to the calling task (TracerPid in /proc/self/status). Only a
// foreign task's exec asks (see PrepareExecEnv): its fd table is its own process's.
bool TracedNow() {
  long fd = RawSyscall6(SYS_openat, AT_FDCWD, reinterpret_cast<long>("/proc/self/status"),
                        O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[2048];
  long n = RawSyscall6(SYS_read, fd, reinterpret_cast<long>(buf), sizeof(buf) - 1);
  RawSyscall6(SYS_close, fd);
  if (n <= 0) return false;
  buf[n] = 0;
  const char* t = strstr(buf, "TracerPid:");
  if (t == nullptr) return false;
  t += 10;
  while (*t == ' ' || *t == '\t') ++t;
  return *t >= '1' && *t <= '9';
}

bool EnvHasLibrary(char* const* envp) {
  const char* preload = GetEnv(const_cast<char**>(envp), "LD_PRELOAD", 10);
  return preload && g_lib[0] && strstr(preload, g_lib);
}

void NoteUnarmedSpawn() {
  if (!g_on || g_lib[0] == 0) return;
  char note[160];
  snprintf(note, sizeof(note),
           "escape %u: a child spawned from inside libc (system, popen) with an environment "
           "without the recorder's library runs unrecorded",
           TaskPid());
  WriteNote(note);
  g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
}

char SpawnFromLibcBegin() {
  // Only an unseen spawn is noted here. What dispatch and the patched sites' stubs go by is
  // the selector alone: at BLOCK they see the clone and note it there. At ALLOW nothing does:
  // a thread they do not cover, and an armed thread whose previous trapped call escaped.
  if (g_on && t_hot.selector == 0 && !Foreign() && !EnvHasLibrary(environ)) NoteUnarmedSpawn();
  return Foreign() ? 0 : t_hot.selector;
}
void SpawnFromLibcEnd(char selector) {
  // Not where the thread stopped being armed meanwhile (a handler's PTRACE_TRACEME during the
  // call: a tracee's selector stays at ALLOW for good), as BlockSyscalls.
  if (selector != 0 && t_hot.armed && !Foreign()) t_hot.selector = selector;
}

void OpenSpawnWindow() {
  // Not for a child the recording does not reach (its environment lacks the library: noted by
  // SpawnFromLibcBegin or at the clone), nor from a vfork child or a foreign task (the pid and
  // entry would be another process's).
  if (!g_on || g_shared == nullptr || Foreign() || t_hot.vm_child || !EnvHasLibrary(environ) ||
      g_released.load(std::memory_order_relaxed))
    return;
  // The id tells this window from a later one in the same slot, of any process, image or
  // thread: the time stamp counter (never 0 or kNever here).
  auto id = static_cast<int64_t>((__builtin_ia32_rdtsc() >> 1) | 1);
  // As BeginCall announces a call: the slot first holds a bound known to be earlier (a clock
  // reading from before it was taken), then the clock is read, then the start goes in. A writer
  // that misses the first store read its clock before it, so before the start read after it
  // (review: a start read first could fall behind a watermark stamped while this thread was
  // preempted before storing it). Children see it only then (kOpeningWindowTid until then): none
  // takes it with its bound.
  ThreadSlot* w = TakeSlot(kOpeningWindowTid, g_pid, g_entry, NowNs(), id);
  if (w == nullptr) return;
  // The process began to release its slots meanwhile (exit): give it back, as NewThreadState.
  if (g_released.load(std::memory_order_seq_cst)) {
    FreeSlot(*w, kOpeningWindowTid);
    return;
  }
  LightFence();
  w->in_call_since.store(NowNs(), std::memory_order_release);
  w->tid.store(kSpawnWindowTid, std::memory_order_release);
}

bool PrepareExecEnv(char* const* envp, int64_t exec_start, char** out, int cap, char* buf,
                    int buf_cap) {
  if (!g_on) return false;  // not recording (no iorr record above, or set-up failed): hands off
  int n = 0;
  int used = 0;
  auto add = [&](const char* fmt, const char* a, long b) {
    if (n >= cap - 1 || used >= buf_cap) return false;
    int w = a ? snprintf(buf + used, static_cast<size_t>(buf_cap - used), fmt, a)
              : snprintf(buf + used, static_cast<size_t>(buf_cap - used), fmt, b);
    if (w < 0 || used + w >= buf_cap) return false;
    out[n++] = buf + used;
    used += w + 1;
    return true;
  };
  bool has_lib = false;
  const char* preload = GetEnv(const_cast<char**>(envp), "LD_PRELOAD", 10);
  if (preload && strstr(preload, g_lib)) has_lib = true;
  // A debugger's inferior runs without the audit module, whose trapped calls would be signal
  // stops for the debugger (the library stays out of its way: DispatchBecomeTracee).
  bool foreign = Foreign();
  // (A foreign task's PTRACE_TRACEME went unnoted, the flag being the owner's: the kernel says.)
  bool traced = DispatchTracee() || (foreign ? TracedNow() : t_hot.vm_child && t_vm_tracee);
  // Nor does Valgrind's tool (its launcher names itself in VALGRIND_LAUNCHER): the module would
  // not arm on Valgrind (valgrind.h), but the loader allocates memory for the audit namespace
  // that libc frees at exit, and Valgrind reports those frees as invalid (a failed run with
  // --error-exitcode).
  bool no_audit = traced || GetEnv(const_cast<char**>(envp), "VALGRIND_LAUNCHER", 17) != nullptr;
  // The audit module goes with the library into an image whose environment lacks it (the
  // program cleared it), when this image had it: that image takes it out again (kEnvAuditAdded).
  const char* audit = GetEnv(const_cast<char**>(envp), "LD_AUDIT", 8);
  bool add_audit = g_audit_image && !no_audit && g_audit_lib[0] != 0 &&
                   (audit == nullptr || !MentionsOurAudit(audit));
  for (char* const* p = envp; p && *p; ++p) {
    const char* s = *p;
    if (IsProtocolVar(s)) continue;  // rewritten below with current values
    if (!has_lib && strncmp(s, "LD_PRELOAD=", 11) == 0) continue;
    if (add_audit && (strncmp(s, "LD_AUDIT=", 9) == 0 || strncmp(s, "GLIBC_TUNABLES=", 15) == 0))
      continue;
    bool audit_var = !add_audit && g_audit_lib[0] != 0 && strncmp(s, "LD_AUDIT=", 9) == 0;
    if (audit_var && (no_audit ? MentionsOurAudit(s) : NeedsChainedAudit(s + 9))) {
      // Without the module: LD_AUDIT without ours (the others kept, in order). With it, where
      // the program put modules of its own beside our plain one (LD_AUDIT=$LD_AUDIT:own.so):
      // ours is the chained variant (audit.cc: glibc's dlsym path stops behind the plain one).
      // Entries split at ':' as glibc does (rtld.c, audit_list_next); ours written once.
      if (used >= buf_cap - 16) return false;
      char* w = buf + used;
      int len = snprintf(w, static_cast<size_t>(buf_cap - used), "LD_AUDIT=");
      bool any = false, ours_put = false;
      for (const char* q = s + 9; *q != 0;) {
        const char* end = q;
        while (*end != 0 && *end != ':') ++end;
        size_t piece = static_cast<size_t>(end - q);
        const char* put = q;
        if (piece > 0 && IsOurAudit(q, piece)) {
          put = no_audit || ours_put ? nullptr : g_audit_chained;
          piece = put ? strlen(put) : 0;
          ours_put = true;
        }
        if (piece > 0 && put != nullptr) {
          if (used + len + static_cast<int>(piece) + 2 >= buf_cap) return false;
          if (any) w[len++] = ':';
          memcpy(w + len, put, piece);
          len += static_cast<int>(piece);
          any = true;
        }
        q = *end != 0 ? end + 1 : end;
      }
      w[len] = 0;
      if (any) {
        if (n >= cap - 12) return false;
        out[n++] = w;
        used += len + 1;
      }
      continue;
    }
    if (n >= cap - 12) return false;
    out[n++] = *p;
  }
  // NAME=ours, or NAME=ours:what the environment had.
  auto prepend = [&](const char* name, const char* ours, const char* had) {
    if (n >= cap - 1 || used >= buf_cap) return false;
    int w =
        had && *had
            ? snprintf(buf + used, static_cast<size_t>(buf_cap - used), "%s=%s:%s", name, ours, had)
            : snprintf(buf + used, static_cast<size_t>(buf_cap - used), "%s=%s", name, ours);
    if (w < 0 || used + w >= buf_cap) return false;
    out[n++] = buf + used;
    used += w + 1;
    return true;
  };
  if (!has_lib) {
    if (!prepend("LD_PRELOAD", g_lib, preload)) return false;
    if (!add("IORR_REINJECTED=%s", "1", 0)) return false;
  }
  if (!add("IORR_FD=%ld", nullptr, CurTraceFd()) || !add("IORR_SHM_FD=%ld", nullptr, CurShmFd()) ||
      !add("IORR_TIME_UNIT=%ld", nullptr, g_unit) ||
      !add("IORR_START_NS=%ld", nullptr, g_start_mono) || !add("IORR_LIB=%s", g_lib, 0) ||
      !add("IORR_EXEC_START=%ld", nullptr, exec_start))
    return false;
  int lock_fd = g_lock_fd;
  uint32_t entry = g_entry, pid = g_pid;
  if (foreign) {  // nothing to hand on
    lock_fd = -1;
  } else if (t_hot.vm_child) {  // a vfork child hands on its own
    lock_fd = t_hot.state ? t_hot.state->vm_lock_fd : -1;
    entry = t_hot.state ? t_hot.state->vm_entry : 0;
    pid = t_hot.state ? t_hot.state->pid : 0;
  }
  if (lock_fd >= 0 && entry != 0) {
    char lock[64];
    snprintf(lock, sizeof(lock), "%d:%u:%u", lock_fd, entry, pid);
    if (!add("IORR_LOCK=%s", lock, 0)) return false;
  }
  if (add_audit) {
    if (!prepend("GLIBC_TUNABLES", kAuditTunable,
                 GetEnv(const_cast<char**>(envp), "GLIBC_TUNABLES", 14)) ||
        !prepend(
            "LD_AUDIT",
            audit != nullptr && audit[strspn(audit, ": ")] != 0 ? g_audit_chained : g_audit_lib,
            audit) ||
        !add("IORR_AUDIT_ADDED=%s", "1", 0))
      return false;
  }
  if (traced && !add("IORR_TRACED=%s", "1", 0)) return false;
  out[n] = nullptr;
  return true;
}

// close_range around the library's fds: one kernel call per piece, each recorded as the kernel
// saw it.
int CloseRangeKeepingOwn(unsigned first, unsigned last, int flags) {
  if (flags & CLOSE_RANGE_UNSHARE) OwnWriterTable();  // before the program leaves its table
  unsigned own[3];
  int n = 0;
  for (int fd : {TraceFd(), SharedFd(), LockFd()})
    if (fd >= 0 && static_cast<unsigned>(fd) >= first && static_cast<unsigned>(fd) <= last)
      own[n++] = static_cast<unsigned>(fd);
  for (int i = 1; i < n; ++i)  // at most three: insertion sort
    for (int j = i; j > 0 && own[j - 1] > own[j]; --j) std::swap(own[j - 1], own[j]);
  int result = 0;
  auto piece = [&](unsigned lo, unsigned hi) {
    if (lo > hi) return;
    Call c;
    bool on = BeginCall(&c);
    long r = RawSyscall6(SYS_close_range, lo, hi, flags);
    if (on) {
      long k[6] = {lo, hi, flags};
      EndCall(&c, CallId::close_range, k, r);
    }
    if (r < 0 && result == 0) result = static_cast<int>(r);
  };
  unsigned lo = first;
  for (int i = 0; i < n; ++i) {
    if (own[i] > lo) piece(lo, own[i] - 1);
    lo = own[i] + 1;
    if (own[i] == UINT_MAX) return result < 0 ? (errno = -result, -1) : 0;
  }
  if (n == 0 || lo <= last) piece(lo, last);
  if (result < 0) {
    errno = -result;
    return -1;
  }
  return 0;
}

void NoWriterInThisProcess() {
  g_no_writer = true;
  g_writer_started.store(1);
}

void StopRecordingThread() {
  if (!Foreign()) t_hot.done = true;
}

void ThreadGone() {
  if (!g_on || Foreign()) return;
  t_hot.done = true;
  if (ThreadState* ts = t_hot.state) {
    ts->exited.store(1, std::memory_order_release);
    Wake();
  }
}

void NoteThreadExit(int code) {
  if (!g_on || Foreign()) return;
  g_last_exit_code.store(code & 0xff, std::memory_order_relaxed);
  if (Gettid() != static_cast<long>(g_pid)) return;
  g_leader_left.store(true, std::memory_order_release);
  Wake();
}

void AfterForkChild() { AfterForkChildOf(false); }

void AfterForkChildOf(bool shared_files) {
  if (!g_on) return;
  // The lock fd this copy of the fd table holds: the forker's. A vfork child's is its own (the
  // number of the process's was closed in its table and may be the program's now); a task
  // foreign to its storage (see ForeignTask: its process is not the owner's) has none, and the
  // handler state it saw was the owner's.
  bool foreign = false;
  if (t_hot.owner_tid != 0) {
    uint32_t owner_pid = t_hot.vm_child ? (t_hot.state ? t_hot.state->pid : 0) : g_pid;
    foreign = RawSyscall6(SYS_getppid) != static_cast<long>(owner_pid);
  }
  int forker_lock = foreign           ? -1
                    : !t_hot.vm_child ? g_lock_fd
                    : t_hot.state     ? t_hot.state->vm_lock_fd
                                      : -1;
  if (foreign) {
    t_hot.in_handler = false;
    t_hot.handler_frame = 0;
    t_alt_lo = t_alt_hi = 0;
  } else if (t_hot.vm_child) {  // numbers its forker moved in the table this child copied
    if (t_vm_trace_fd >= 0) g_trace_fd = t_vm_trace_fd;
    if (t_vm_shm_fd >= 0) g_shm_fd = t_vm_shm_fd;
  }
  t_vm_trace_fd = t_vm_shm_fd = -1;
  g_released.store(false);
  t_hot.owner_tid = 0;  // this memory is the child's alone, whoever forked it
  g_noted_shared_map = g_noted_shared_storage = g_noted_own_tls = false;  // this process's notes
  g_uncounted_vm_task = false;  // (those tasks share the parent's memory, not this copy)
  t_hot.done = false;       // the thread that forked may have been left unrecorded there
  g_exec_windows.store(0);  // another thread of the parent may have been inside an exec
  // Everything but this thread is gone, and what the parent's threads had pending is the
  // parent's to write. Start afresh: new streams, no writer yet, then the new pid (below).
  // The parent's writer may have been inside ResyncTsc (the sequence odd): no one would finish
  // it here.
  if (g_tsc_seq.load() & 1) {  // the anchor may be torn: start afresh
    g_tsc_seq.fetch_add(1);
    g_anchor.rate = 0;
  }
  ResyncTsc();
  RegisterMembarrier();  // the kernel copies it with the memory; said again, to not depend on it
  // Only the entries ever used: clearing all 4096 would copy eight pages the parent shares.
  for (int i = 0, used = g_threads_used.load(); i < used; ++i)
    g_threads[i].store(nullptr, std::memory_order_relaxed);
  g_threads_used.store(0);
  g_writer_lock.store(0);
  g_writer_owner.store(0);
  t_holds_writer = false;
  g_writer_started.store(0);
  g_writer_tid.store(0);
  g_writer_ids_apart = false;  // this process's writer starts with its ids
  // An exit's or exec's hold, or a fatal signal's flush, of the parent's (a destructor that
  // forks after the hold began, in PLT-only recording): not this process's.
  g_dying.store(false);
  g_holding_tid.store(0);
  g_hold_until.store(0);
  t_flushing_death = false;
  g_table_request.store(0);
  g_writer_table_asked = false;  // this process's writer will share its table until asked
  t_hot.table_calls = 0;         // (counts toward kOwnTableAfterCalls in this process)
  // g_files_shared stays: a clone(CLONE_FILES) child comes here too, and shares the table.
  g_fd_move_lock.store(0);  // the parent's writer may have held it; it is not in this process
  g_writer_trace_fd = g_writer_shm_fd = g_writer_lock_fd = -1;
  g_leader_left.store(false);   // this thread is the child's main thread
  g_buffers = WriterBuffers{};  // the parent's stay mapped; this process makes its own
  t_hot.state = nullptr;
  t_hot.vm_child = false;  // forked from a vfork child: a process of its own
  t_vfork_level = 0;
  t_hot.depth = 0;  // fork's wrapper began a call in the parent; the child records afresh
  t_hot.call_frame = 0;
  // Last: a fatal signal's flush takes a process whose g_pid is its own for one that has left
  // its parent's state (FlushBeforeDeath). Set before the parent's threads were dropped, a
  // child killed in between wrote the parent's pending events again (CI of stop 23: 9,127
  // duplicate opens from 50 children killed right after their fork, once in five runs).
  g_pid = static_cast<uint32_t>(RawSyscall6(SYS_getpid));
  g_shared->processes.fetch_add(1, std::memory_order_relaxed);
  // The parent's lock fd refers to the parent's lock: close this copy, take an entry of its own.
  // A child sharing the parent's fd table (CLONE_FILES) must not close it: it goes without.
  if (shared_files) {
    g_entry = 0;
  } else {
    if (forker_lock >= 0) RawSyscall6(SYS_close, forker_lock);
    g_lock_fd = -1;
    TakeProcessEntry();
  }
  DispatchArmThread();  // the kernel does not carry dispatch into a child
}

// ---- vfork ----
// vfork() runs the child on the parent's memory until it execs or ends, which costs a fraction
// of fork (no page tables to copy, no copy-on-write faults after), and keeps what the program
// sees of it (a child's stores reach the parent). The child shares the calling thread's
// thread-local storage too, so around the system call (recorder/wrappers.cc has the entry, in
// assembly: the child returns from vfork into the caller's frame, so nothing is kept on the
// stack across the system call):
//  - the parent saves its thread state, signal mask and return address on a small stack in
//    thread-local storage, with every signal blocked (but SIGSYS, which the library's own work
//    never raises there) until it has its state back, so no handler runs on the child's state;
//  - the child takes a thread state, a slot and a process entry with its lock of its own, and
//    writes its events itself, through buffers of its own and under no lock (a task of the
//    parent may hold g_writer_lock or die holding it; the parent's writer never sees the
//    child's state): when its ring is half full, when its oldest event is 100 ms old at its next
//    call, at exec and at its end. It is not armed for dispatch (see iorr_vfork_child), so
//    nothing it does goes through the SIGSYS handler and the state that handler keeps for the
//    process (the program's SIGSYS disposition, a trapped exec's pages) stays the parent's;
//  - the child's new image adopts its entry and frees its slot once it has recorded the exec,
//    as after any exec; a child that ends frees both; the parent, resumed, writes what a child
//    killed before exec left and frees its slot, and unmaps the child's state.
// A vfork child killed while its own vfork child runs: the kernel resumes the parent, which takes
// its storage back while the grandchild still runs on the same memory and storage (they are
// now the parent's). The parent marks the saves above its own as orphaned and names itself the
// storage's owner (t_hot.owner_tid); every task on it but the owner is then foreign: it records
// nothing and leaves the library's state alone until its exec (whose image is recorded), and
// its own vforks are plain ones. From then on each call of that thread pays a gettid.
// (User-space shadow stacks, which glibc 2.36 does not enable, would need vfork's child to jump
// rather than return, as glibc's own vfork does.)

}  // namespace iorr::recorder

using iorr::recorder::t_vfork_level;
using iorr::recorder::t_vfork_more;
using iorr::recorder::VforkSave;

// What the entry returns: vfork's result in rax, the caller's address (to push and return to)
// in rdx.
struct VforkReturn {
  long value;
  uintptr_t ret_addr;
};

// Before the system call, in the parent. The gate is not used for vfork's own syscall (it must
// be made from the entry, whose frame is the caller's): the selector allows it.
// Returns the address of the saved state, for iorr_vfork_child and iorr_vfork_parent (the entry
// keeps it in a register), and the caller's address; 0 for a foreign task, whose vfork the
// entry makes plainly, as libc's does.
extern "C" __attribute__((visibility("hidden"))) VforkReturn iorr_vfork_prepare(
    uintptr_t ret_addr) {
  using namespace iorr::recorder;
  if (Foreign()) return VforkReturn{0, ret_addr};
  uint64_t all = ~(uint64_t{1} << (SIGSYS - 1)), old = 0;
  RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&all),
              reinterpret_cast<long>(&old), 8);
  if (t_vfork_level > 0 && t_vfork_more == nullptr)
    t_vfork_more = static_cast<VforkSave*>(MapMemory(sizeof(VforkSave) * (kVforkNesting - 1)));
  if (t_vfork_level >= kVforkNesting || (t_vfork_level > 0 && t_vfork_more == nullptr)) {
    // No room for a save (sixteen levels, counting those an orphan may still need), or no
    // memory for the nested ones: a plain vfork, whose child is foreign (this task names itself
    // the storage's owner) and goes unrecorded until its exec. Signals stay blocked until
    // iorr_vfork_plain (the selector and mask wait in thread-local storage).
    char note[160];
    snprintf(note, sizeof(note), "escape %u: %s: a vfork child runs unrecorded until its exec",
             TaskPid(),
             t_vfork_level >= kVforkNesting ? "no room for a vfork's saved state (16 levels)"
                                            : "no memory for a nested vfork's saved state");
    WriteNote(note);
    g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
    __atomic_store_n(&t_hot.owner_tid, static_cast<uint32_t>(Gettid()), __ATOMIC_SEQ_CST);
    t_plain_selector = t_hot.selector;
    t_plain_mask = old;
    AllowSyscalls();
    return VforkReturn{1, ret_addr};
  }
  long level = t_vfork_level++;
  VforkSave& v = VforkLevel(static_cast<int>(level));
  v = VforkSave{};
  v.ret_addr = ret_addr;
  v.mask = old;
  v.depth = t_hot.depth;
  v.call_frame = t_hot.call_frame;
  v.hot_call = t_hot.call;
  v.done = t_hot.done;
  v.in_handler = t_hot.in_handler;
  v.armed = t_hot.armed;
  v.vm_child = t_hot.vm_child;
  v.selector = t_hot.selector;
  v.vm_tracee = t_vm_tracee;
  v.level = static_cast<int>(level);
  v.owner_tid = t_hot.owner_tid;
  v.vm_trace_fd = t_vm_trace_fd;
  v.vm_shm_fd = t_vm_shm_fd;
  if (t_hot.vm_child) v.ppid = RawSyscall6(SYS_getppid);
  bool on = BeginCall(&v.call);
  v.state = t_hot.state;  // after BeginCall, which makes the thread's first one
  if (on && !t_hot.vm_child) v.child = AllocThreadState();  // none: the child goes unrecorded
  // The child copies this fd table at the system call and reads the numbers of the library's
  // fds from the process's variables: no other thread may move them (VacateFd) in between, or
  // the child would take a number that is not the library's fd in its table. The child gives
  // the lock back once it has its numbers (iorr_vfork_child); the parent, if the child could
  // not (no child, or one killed first). A vfork child's own numbers are its own already.
  // The lock holds a value of the parent's own, not Lock()'s 1: whichever of the two gives it
  // back first, the other's give-back finds another value (free, or another thread's) and leaves
  // it, so a child killed at any point neither keeps the lock nor has it given back twice. The
  // tid with bit 30 set (tids stay below 2^22): a namespace's first process has tid 1.
  if (!t_hot.vm_child) {
    v.fd_lock = static_cast<int>(Gettid()) | (1 << 30);
    Lock(g_fd_move_lock, v.fd_lock);
  }
  AllowSyscalls();
  return VforkReturn{reinterpret_cast<long>(&v), ret_addr};
}

namespace iorr::recorder {
namespace {
void GiveBackFdLock(const VforkSave& v) {
  int held = v.fd_lock;
  if (held != 0) g_fd_move_lock.compare_exchange_strong(held, 0, std::memory_order_release);
}
}  // namespace
}  // namespace iorr::recorder

// After a plain vfork (see iorr_vfork_prepare), in both: the result; for one made by a task with
// no room for a save (`deep`), the mask before it in both, and the owner's selector back (the
// child, foreign, leaves the storage alone; it reads it while the owner waits).
extern "C" __attribute__((visibility("hidden"))) VforkReturn iorr_vfork_plain(long ret,
                                                                              uintptr_t ret_addr,
                                                                              long deep) {
  using namespace iorr::recorder;
  if (deep) {
    if (!Foreign()) t_hot.selector = t_plain_selector;
    RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&t_plain_mask), 0, 8);
  }
  if (ret < 0) {
    errno = static_cast<int>(-ret);
    ret = -1;
  }
  return VforkReturn{ret, ret_addr};
}

// In the child (pid 0 returned), before it returns into the caller.
extern "C" __attribute__((visibility("hidden"))) VforkReturn iorr_vfork_child(VforkSave* save) {
  using namespace iorr::recorder;
  VforkSave& v = *save;
  // Taken back meanwhile by a task above the parent (its own parent died): foreign at once.
  if (v.orphaned || t_hot.owner_tid != v.owner_tid) {
    GiveBackFdLock(v);
    RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&v.mask), 0, 8);
    return VforkReturn{0, v.ret_addr};
  }
  // The storage is this task's while its parent waits (the parent's foreign tasks stay so).
  if (t_hot.owner_tid != 0) t_hot.owner_tid = static_cast<uint32_t>(Gettid());
  // The parent's lock stays the parent's: this fd table's copy of it goes (the parent's table
  // keeps its own), found before this task counts as a vfork child (CurrentLockFd).
  int inherited = CurrentLockFd();
  if (inherited >= 0) RawSyscall6(SYS_close, inherited);
  if (v.fd_lock) {  // the numbers this table has, kept as a vfork child's own (CurTraceFd)
    t_vm_trace_fd = g_trace_fd;
    t_vm_shm_fd = g_shm_fd;
    GiveBackFdLock(v);
  }
  ThreadState* ts = v.child;
  t_hot.vm_child = true;  // also unrecorded: the parent's lock and state are not this task's
  t_hot.state = nullptr;
  t_hot.depth = 0;
  t_hot.call_frame = 0;
  t_vm_tracee = false;
  t_hot.in_handler = false;
  t_hot.done =
      true;  // until it has a state and a slot; unrecorded, its exec carries the recording on
  if (ts != nullptr) {
    uint32_t pid = static_cast<uint32_t>(RawSyscall6(SYS_getpid));
    int fd = -1;
    uint32_t entry = 0;
    if (ClaimEntry(pid, &fd, &entry)) {
      ts->vm_lock_fd = fd;
      ts->vm_entry = entry;
    }
    StartThreadState(ts, pid, ts->vm_entry);
    if (ts->slot != nullptr) {
      t_hot.state = ts;
      t_hot.done = false;
    } else {
      ReleaseVforkChild(ts);
    }
  }
  // Not armed (the kernel does not carry dispatch into a child): a trap raises SIGSYS, and a
  // child that asked to be traced (PTRACE_TRACEME, as gdb's inferior does before its exec)
  // stops at every signal for a tracer that is its vfork parent, suspended until the exec:
  // both would wait forever. Until its exec the child is recorded through the wrappers only.
  t_hot.armed = false;
  t_hot.selector = 0;
  RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&v.mask), 0, 8);
  return VforkReturn{0, v.ret_addr};
}

// In the parent once the child has exec'd or ended: the parent's thread state back, the call
// recorded, what the child left written and its state unmapped.
extern "C" __attribute__((visibility("hidden"))) VforkReturn iorr_vfork_parent(long ret,
                                                                               VforkSave* save) {
  using namespace iorr::recorder;
  VforkSave& v = *save;
  long value = ret < 0 ? -1 : ret;
  GiveBackFdLock(v);  // no child took it back: the system call failed, or the child was killed
  // A task above this one resumed meanwhile and took the storage back (or is about to: its
  // child, this task's parent, has died; the kernel wakes the task above before it reparents
  // this one, so a narrow window remains): this task is foreign now, and leaves the storage
  // alone. (It is a nested vfork child: unrecorded, its child too.)
  if (v.orphaned || (v.vm_child && RawSyscall6(SYS_getppid) != v.ppid)) {
    RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&v.mask), 0, 8);
    if (ret < 0) errno = static_cast<int>(-ret);
    return VforkReturn{value, v.ret_addr};
  }
  // This task's own save, as iorr_vfork_prepare returned it: the levels above it are those of
  // vfork children killed while their own vfork child ran (the kernel resumes this task when its
  // child dies, though the child's child may still run on this memory). They never return, and
  // their saves are not this task's: taking the top one returned into a dead child's frame, with
  // its state. (A tid would not tell the tasks apart: a vfork child in a new PID namespace may
  // have its parent's number.)
  int left_at = t_vfork_level;
  bool had_foreign = t_hot.owner_tid != 0;  // a task below took the storage back from its orphans
  bool orphans = left_at > v.level + 1;
  // The storage is named this task's first: a foreign task reading it meanwhile must not take
  // the state restored below for its own.
  if (orphans || had_foreign) {
    __atomic_store_n(&t_hot.owner_tid, static_cast<uint32_t>(Gettid()), __ATOMIC_SEQ_CST);
  } else {
    t_hot.owner_tid = v.owner_tid;
  }
  bool fresh = false;  // orphans not seen by a task below (each is noted once)
  for (int l = v.level + 1; l < left_at; ++l) {
    fresh |= !VforkLevel(l).orphaned;
    VforkLevel(l).orphaned = true;
  }
  // Their levels stay taken while an orphan may wait in its own vfork (its save is there): this
  // task's next vfork saves above them. (Sixteen levels in all, then plain vforks.)
  t_vfork_level = orphans ? left_at : v.level;
  ThreadState* child = v.child;
  t_hot.vm_child = v.vm_child;
  t_hot.state = v.state;
  t_hot.depth = v.call.on ? 1 : v.depth;  // inside the call, as BeginCall left it
  t_hot.call_frame = v.call_frame;
  t_hot.call = v.hot_call;
  t_hot.done = v.done;
  // A child killed between putting a signal off and its release left the flag in the storage
  // it shared: the signal was blocked in the child's mask, not this task's (vfork is not called
  // at depth 2, where a signal is put off).
  ForgetDeferredSignals();
  t_hot.in_handler = v.in_handler;
  t_hot.armed = v.armed;
  t_hot.selector = v.selector;
  t_vm_tracee = v.vm_tracee;      // a child's PTRACE_TRACEME was its own
  t_vm_trace_fd = v.vm_trace_fd;  // a child's moves were in its own fd table
  t_vm_shm_fd = v.vm_shm_fd;
  if (fresh) {
    char note[200];
    snprintf(note, sizeof(note),
             "escape %u: a vfork child was killed during its own vfork: its descendants on this "
             "memory run unrecorded until their exec",
             TaskPid());
    WriteNote(note);
    g_shared->escapes.fetch_add(1, std::memory_order_relaxed);
  }
  if (v.call.on) AllowSyscalls();
  if (child != nullptr) {
    // Ended without an exec (exec_pending clear) and not through the library (killed, or a
    // raw exit): what it left is written now, its slot and entry freed. After an exec its new
    // image adopts both and frees the slot once it has recorded the exec; an image that is not
    // recorded keeps the lock until it ends.
    if (ret >= 0 && child->slot != nullptr && !child->exec_pending.load()) {
      // Killed while writing: its encoder may be half way through an event. What it held is
      // lost (as with any process killed mid-write); the ring from its head is whole.
      if (child->vm_writing.load()) {
        g_shared->dropped_events.fetch_add(child->enc.events(), std::memory_order_relaxed);
        child->enc.Begin(child->stream, child->pid, child->tid);
        child->encoder_since = kNever;
        child->encoder_last_start = INT64_MIN;
      }
      // Written with a slot of its own: a finder may free the child's real one meanwhile
      // (its lock is gone), and another process take it.
      ThreadSlot* real = child->slot;
      ThreadSlot scratch{};
      child->slot = &scratch;
      if (MapWriterBuffers(&child->vm_buffers))
        ServiceThreadAlone(child, true, NowNs(), child->vm_buffers);
      child->slot = real;
      ReleaseVforkChild(child);
    }
    UnmapThreadState(child);
  }
  if (v.call.on) {
    long k[6] = {CLONE_VM | CLONE_VFORK | SIGCHLD};
    EndCall(&v.call, CallId::clone, k, ret);
  }
  if (ret < 0) errno = static_cast<int>(-ret);
  uintptr_t ret_addr = v.ret_addr;
  uint64_t mask = v.mask;
  if (t_vfork_level == 0 && t_vfork_more != nullptr) {  // no nested level is in use now
    RawSyscall6(SYS_munmap, reinterpret_cast<long>(t_vfork_more),
                static_cast<long>(sizeof(VforkSave) * (kVforkNesting - 1)));
    t_vfork_more = nullptr;
  }
  int saved = errno;
  RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&mask), 0, 8);
  errno = saved;
  return VforkReturn{value, ret_addr};
}

// ---- posix_spawn's child on this memory ----
// clone(flags, a new stack) whose child calls fn(arg) on that stack and never returns; the
// parent gets the system call's result. The system call is made here, outside the gate (the
// caller has set the dispatch selector to allow it, as for vfork).
extern "C" __attribute__((visibility("hidden"))) long iorr_clone_on_stack(long flags, void* stack,
                                                                          void (*fn)(void*),
                                                                          void* arg);
asm(R"(
  .text
  .type iorr_clone_on_stack, @function
  .p2align 4
iorr_clone_on_stack:
  .cfi_startproc
  endbr64
  movq %rdx, %r8
  movq %rcx, %r9
  xorl %edx, %edx
  xorl %r10d, %r10d
  movl $56, %eax
  syscall
  testq %rax, %rax
  jz 1f
  ret
1:
  .cfi_undefined rip
  xorl %ebp, %ebp
  movq %r9, %rdi
  call *%r8
  ud2
  .cfi_endproc
  .size iorr_clone_on_stack, .-iorr_clone_on_stack
)");

namespace iorr::recorder {
namespace {
struct VmChildStart {
  VforkSave* save;
  void (*fn)(void*);
  void* arg;
};
// Not instrumented in sanitizer builds: its noreturn call would have AddressSanitizer take the
// new stack for a stack switch gone wrong.
[[noreturn]] __attribute__((no_sanitize("address"))) void VmChildMain(void* p) {
  auto* s = static_cast<VmChildStart*>(p);
  iorr_vfork_child(s->save);  // every signal but SIGSYS stays blocked: the save says so
  s->fn(s->arg);
  RawSyscall6(SYS_exit_group, 127);
  __builtin_unreachable();
}
}  // namespace

long SpawnVmChild(void (*child)(void*), void* arg, size_t stack_bytes, uint64_t* parent_mask,
                  const volatile int* failed) {
  // Inside a vfork child, or on storage another task has taken back: the caller's other way.
  // On Valgrind, whose clone makes a vfork a fork (the parent would not wait), too.
  if (Foreign() || t_vfork_level != 0 || t_hot.vm_child || OnValgrind()) return kNoVmChild;
  // The stack, with a guard page below it: an overflow would write into whatever of the
  // parent's memory lies there.
  stack_bytes = ((stack_bytes + 4095) & ~size_t{4095}) + 4096;
  long stack = RawSyscall6(SYS_mmap, 0, static_cast<long>(stack_bytes), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (stack < 0 && stack > -4096) return stack;
  if (long r = RawSyscall6(SYS_mprotect, stack, 4096, PROT_NONE); r != 0) {
    RawSyscall6(SYS_munmap, stack, static_cast<long>(stack_bytes));
    return r;
  }
  VforkReturn prep = iorr_vfork_prepare(0);  // level 0: always a save, in thread-local storage
  auto* save = reinterpret_cast<VforkSave*>(prep.value);
  // The child keeps every signal blocked (but SIGSYS, as the parent has it now): a handler
  // running in it would run on this memory, before the child's exec resets it. The program's
  // mask goes to the child through *parent_mask, and back to this thread below.
  uint64_t mask = save->mask;
  *parent_mask = mask;
  save->mask = ~(uint64_t{1} << (SIGSYS - 1));
  VmChildStart start{save, child, arg};
  long ret = iorr_clone_on_stack(CLONE_VM | CLONE_VFORK | SIGCHLD,
                                 reinterpret_cast<char*>(stack) + stack_bytes, VmChildMain, &start);
  save->mask = mask;
  // A child whose exec failed is reaped while this thread's signals are still blocked, as
  // glibc does: a SIGCHLD handler of the program's must not reap a pid posix_spawn never gave it.
  if (ret > 0 && *failed != 0)
    while (RawSyscall6(SYS_wait4, ret, 0, 0, 0) == -EINTR) {
    }
  int saved = errno;
  iorr_vfork_parent(ret, save);  // records the clone, takes the thread's state and mask back
  errno = saved;
  RawSyscall6(SYS_munmap, stack, static_cast<long>(stack_bytes));
  return ret;
}

}  // namespace iorr::recorder
