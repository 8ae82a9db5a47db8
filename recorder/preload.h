// The recording core of libiorr-preload.so, shared by the wrappers (wrappers.cc).
//
// Rules of this library (enforced by review, -fno-exceptions and the poisoned names below):
//  - The hook path (BeginCall .. EndCall) never allocates, never takes a lock and never throws;
//    per-thread encoders are preallocated with mmap, a thread hands a full one to the writer
//    thread through atomics.
//  - errno is the program's: EndCall saves and restores it (ProgramErrno).
//  - A call made while the thread is already inside the hook (a signal handler, the library's
//    own work) goes straight through, unrecorded.
//  - The library's own system calls use RawSyscall6, never the libc functions it interposes.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/ucontext.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "traces/calls.h"
#include "traces/event.h"

// The hot path of every recorded call (begin, clock, ring, end) goes together in .text.hot,
// what it rarely takes in .text.unlikely: a program's kernel work between two calls pushes the
// library out of the caches, and each call pays for every cache line of code it touches
// (record-call-cost.sh COLD=1024).
#define IORR_HOT __attribute__((hot))
#define IORR_COLD __attribute__((cold, noinline))

// The bounds of the gate (dispatch.cc) and the instruction after its system call.
extern "C" {
extern char iorr_gate_start[] __attribute__((visibility("hidden")));
extern char iorr_gate_end[] __attribute__((visibility("hidden")));
extern char iorr_raw_syscall_ret[] __attribute__((visibility("hidden")));
}

namespace iorr::recorder {

using trace::CallId;
using trace::Event;

// Whether the process runs under a seccomp filter, which may refuse or trap the system calls the
// library makes for itself (membarrier, madvise).
bool UnderSeccomp();
// Around a call of the program's (number, arguments; then its kernel-style result): one that
// installed a seccomp filter keeps the process from patching (PatchNow). Dispatch's caught calls
// and the syscall() wrapper pass theirs. Begin returns what End takes.
bool BeginSeccompCall(long nr, const long* a);
void EndSeccompCall(bool begun, long ret);

// What a fatal signal's handler may take for the return of a call's system call, to write the
// event the process would die before writing (EndCallAtDeath): SIGPIPE comes as write returns
// EPIPE, and SIG_DFL ends the process on that return, before the wrapper's EndCall.
enum class AtDeath : uint8_t {
  kNone,    // nothing: the call is not written at death
  kDecode,  // a wrapper: a system call of its libc function whose number, set just before it
            // (mov $nr, %eax, or through a patched site's stub), is the call's own
  kSole,    // a wrapper whose libc function makes this one system call, whatever its code
            // (syscall()); a number seen set to another one still rules it out
  kGate,    // a caught call, carried out at the gate (dispatch's and the patched sites')
};

// One call in progress. `on` is false when the call is not recorded (disabled, or nested in a
// call that does the library's own work). `nested`: the call came while the thread was inside
// a plain call (a signal handler that interrupted it, a callback): the outer call's state is
// kept in the saved_ fields, set only then, and put back at its end (BeginNested).
// death: the call's AtDeath (top 2 bits) and CallId, set by the caller before BeginCall in one
// field beside on and nested, so that a wrapper's one 32-bit store sets all three (separate
// fields took an 8-byte constant: one instruction more per call); t_hot.call points at the call
// the thread is inside.
struct Call {
  bool on = false;
  bool nested = false;
  uint16_t death = 0;
  bool lost;  // nested, and counted as lost: not recorded (BeginNested)
  char saved_selector;
  int64_t start = 0;
  int64_t saved_since;
  uintptr_t saved_frame;
  Call* saved_call;
  Call() = default;
  constexpr Call(AtDeath how, CallId call)
      : death(static_cast<uint16_t>(static_cast<unsigned>(how) << 14 |
                                    static_cast<unsigned>(call))) {}  // (above 0x3fff: no call)
  AtDeath How() const { return static_cast<AtDeath>(death >> 14); }
  CallId Id() const { return static_cast<CallId>(death & 0x3fff); }
};
static_assert(trace::kMaxTag < 0x4000);

// t_hot.depth inside a call begun by BeginNestableCall: a plain call whose real function (or
// system call) runs meanwhile, with nothing of the library's own under way, so a call that
// interrupts it (a signal handler's, of any kind) is recorded nested in it. 1: any other call
// (fork, exec, the library's work on the thread), in which nothing is recorded nested; 2:
// writing an event.
inline constexpr int kDepthNestable = 3;

// Starts recording a call: takes the start time and marks the thread as inside a call (depth
// 1 or kDepthNestable). `frame`: the calling wrapper's frame address; a call that begins at or
// above the frame of the call the thread is still inside cannot be nested in it (see
// LeftByLongjmp).
bool BeginCallAt(Call* c, uintptr_t frame, int depth);
// Whether the call the thread is inside (t_hot.depth 1 or kDepthNestable) was left by a
// siglongjmp, judged by a frame (or stack pointer) of the program's that is at or above that
// call's wrapper frame, off any alternate signal stack; if so, the thread is inside no call or
// handler any more (a note says a call was left). A caught call judges by the program's
// stack pointer at its system call: its own handler's frames lie below, as a nested call's do.
bool LeftByLongjmp(uintptr_t frame);
// Inlined into every caller, so that the frame is the wrapper's own (a frame pointer, at the
// same distance below its caller's stack pointer in every wrapper).
__attribute__((always_inline)) inline bool BeginCall(Call* c) {
  return BeginCallAt(c, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)), 1);
}
// The same for a plain call (the RECORD wrappers, dispatch's and the patched sites' calls
// without effects on processes): calls that come while it runs are recorded.
__attribute__((always_inline)) inline bool BeginNestableCall(Call* c) {
  return BeginCallAt(c, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)), kDepthNestable);
}
// Records `call` with the kernel-level arguments (as the syscall received them, in the table's
// order) and result (>= 0, or -errno). Reads strings and arrays the arguments point to unless
// the call failed with EFAULT. Restores errno.
void EndCall(Call* c, CallId call, const long* kargs, long ret);

// How a ring entry stores an argument of each kind: from the register alone (nothing, as a
// 32-bit int, as a 32-bit unsigned, as it is: the kernel reads the 32-bit kinds as ints, and
// the register may hold anything above), or from the memory it points to (strings, iovecs,
// offsets, fd pairs, struct open_how), which ArgValues in preload.cc reads.
enum class Stored : uint8_t { kNothing, kInt32, kUint32, kRaw, kPointee };
constexpr Stored StoredAs(trace::ArgKind k) {
  using K = trace::ArgKind;
  switch (k) {
    case K::kBuf:
      return Stored::kNothing;
    case K::kPath:
    case K::kStr:
    case K::kLinkTarget:
    case K::kXattrValue:
    case K::kIovec:
    case K::kOffsetPtr:
    case K::kFdPair:
    case K::kOpenHow:
    case K::kCloneSize:  // from the call's other arguments and result, not a register
      return Stored::kPointee;
    case K::kFd:
    case K::kDirFd:
    case K::kInt:
    case K::kId:
    case K::kWhence:
    case K::kFcntlCmd:
    case K::kAdvice:
    case K::kFlockOp:
    case K::kAccessMode:
      return Stored::kInt32;
    case K::kOpenFlags:
    case K::kMode:
    case K::kAtFlags:
    case K::kRwfFlags:
    case K::kRenameFlags:
    case K::kXattrFlags:
    case K::kInotifyMask:
    case K::kFallocMode:
    case K::kSyncRangeFlags:
    case K::kMsyncFlags:
    case K::kCloseRangeFlags:
    case K::kStatxMask:
    case K::kProt:
    case K::kMapFlags:
      return Stored::kUint32;
    default:
      return Stored::kRaw;
  }
}
template <Stored kHow>
constexpr int64_t StoredValue(long v) {
  if constexpr (kHow == Stored::kInt32) return static_cast<int32_t>(v);
  if constexpr (kHow == Stored::kUint32) return static_cast<uint32_t>(v);
  if constexpr (kHow == Stored::kRaw) return v;
  return 0;
}

// A call whose arguments are integers, stored from their registers, and strings (paths,
// names) only, and that needs nothing more (a note, a listing, arguments it does not read
// cleared) but, for open and openat, its mode cleared when the flags do not use it (EndCallOf
// does that): write, close, fchown, openat, newfstatat, unlinkat, ... The wrappers store such a
// call without looking its arguments' kinds up (EndCallOf).
constexpr bool DirectCall(CallId id) {
  const trace::CallShape& spec = trace::Shape(id);
  if (id == CallId::fcntl || id == CallId::getdents64 || id == CallId::mmap ||
      id == CallId::bind ||  // its path is inside a struct sockaddr_un (ArgValues)
      spec.effect == trace::Effect::kEscape)
    return false;
  for (int i = 0; i < spec.nargs; ++i)
    if ((!trace::IsString(spec.args[i].kind) && StoredAs(spec.args[i].kind) == Stored::kPointee) ||
        spec.args[i].kind == trace::ArgKind::kLinkTarget ||  // not C strings: ArgValues reads
        spec.args[i].kind == trace::ArgKind::kXattrValue)    // them
      return false;
  return true;
}
// A call's string arguments, a bit each.
constexpr unsigned StringArgs(CallId id) {
  const trace::CallShape& spec = trace::Shape(id);
  unsigned strings = 0;
  for (int i = 0; i < spec.nargs; ++i)
    if (trace::IsString(spec.args[i].kind)) strings |= 1u << i;
  return strings;
}
static_assert(DirectCall(CallId::write) && DirectCall(CallId::close) &&
              DirectCall(CallId::fchown) && DirectCall(CallId::openat) &&
              DirectCall(CallId::symlinkat) && !DirectCall(CallId::fcntl) &&
              !DirectCall(CallId::getdents64) && !DirectCall(CallId::mmap) &&
              !DirectCall(CallId::openat2) && !DirectCall(CallId::preadv) &&
              !DirectCall(CallId::bind) && DirectCall(CallId::inotify_add_watch));
static_assert(StringArgs(CallId::openat) == 0b10 && StringArgs(CallId::newfstatat) == 0b10 &&
              StringArgs(CallId::renameat2) == 0b1010 && StringArgs(CallId::symlinkat) == 0b101 &&
              StringArgs(CallId::write) == 0);

// EndCall for a DirectCall: v holds its integer arguments as stored (0 past its own: the
// entry's slots past the call's arguments are 0), str the strings' addresses (nullptr: NULL)
// at the positions of `strings`.
// kStrings: strings != 0 (a call without strings writes a fixed-size entry: about 30
// instructions fewer for every write, read, close, ...).
template <bool kStrings>
void EndCallDirect(Call* c, CallId call, int64_t* v, const char* const* str, unsigned strings,
                   long ret);

// EndCall with the call known at compile time: a DirectCall's arguments are converted right
// here (callgrind: about 260 instructions fewer for a recorded lseek, 200 for an openat, than
// looking each one's kind up).
template <CallId kCall>
__attribute__((always_inline)) inline void EndCallOf(Call* c, const long* kargs, long ret) {
  if constexpr (DirectCall(kCall)) {
    constexpr unsigned kStrings = StringArgs(kCall);
    int64_t v[trace::kMaxArgs] = {};
    const char* str[trace::kMaxArgs] = {};
    [&]<int... I>(std::integer_sequence<int, I...>) {
      (((kStrings >> I) & 1
            ? void(str[I] = reinterpret_cast<const char*>(kargs[I]))
            : void(v[I] = StoredValue<StoredAs(trace::Shape(kCall).args[I].kind)>(kargs[I]))),
       ...);
    }
    (std::make_integer_sequence<int, trace::Shape(kCall).nargs>());
    // As ArgValues: a mode the call does not read holds whatever the register had.
    if constexpr (kCall == CallId::openat || kCall == CallId::open) {
      constexpr int f = kCall == CallId::openat ? 2 : 1;
      if (!((v[f] & O_CREAT) || (v[f] & O_TMPFILE) == O_TMPFILE)) v[f + 1] = 0;
    }
    EndCallDirect<kStrings != 0>(c, kCall, v, str, kStrings, ret);
  } else {
    EndCall(c, kCall, kargs, ret);
  }
}

// The calling task runs on thread-local storage that another task has taken back: a
// descendant of a vfork child killed during its own vfork (see iorr_vfork_parent). It records
// nothing and must leave the library's state alone.
bool ForeignTask();
// Counts, for iorr record's end note, a signal handler run inside a recorded call that the
// library could not watch (its libc calls go natively), and a handler installed without the
// library's entry (all 256 taken).
void CountUnwatchedHandlerRun();
void CountUnenteredHandler();
// Makes the calling thread foreign for good: a thread a foreign task started (its storage is
// fresh, but the process's state it would record into is the owner's).
void MarkThreadForeign();
// A task is about to start on the calling thread's memory and thread-local storage without the
// library's knowledge (a raw clone: CLONE_VM without CLONE_SETTLS, or a process on a stack of
// its own whose code runs before anything of the library could): the thread names itself the
// storage's owner, so the new task is foreign, recording nothing and leaving the library's
// state alone until its exec (whose image is recorded). For good: a task the foreign one starts
// on the same storage may outlive it. Each later call of this thread pays a gettid. Returns
// what EndSharedStorage needs.
uint32_t ShareStorage();
// The escape note for it, once per process (`what`: the kind of clone).
void NoteSharedStorage(const char* what);
// A task on this memory that glibc does not count as a thread (a clone with CLONE_VM and without
// CLONE_VFORK, not pthread_create's): the process keeps dispatch for good (PatchNow), since
// such a task may sit inside a window the switch would rewrite (blocked in libc's read, it
// returned into a half-written jump). A fork child, on memory of its own, starts without it.
void NoteUncountedVmTask();
// The clone ShareStorage was for failed: no task was started.
void EndSharedStorage(uint32_t token);
// A task started by clone() on thread-local storage the program made (CLONE_SETTLS): recorded
// through the wrappers only (dispatch is per thread, and its storage is not the library's to
// arm): an escape note, once per process.
void NoteOwnTlsClone();
// Inside the clone() wrapper, which sees to the new task itself (dispatch's ForkLike leaves it).
extern constinit thread_local bool t_in_clone __attribute__((tls_model("initial-exec")));

// libc's return convention to the kernel's: -1 and errno -> -errno.
inline long KernelRet(long r, int err) { return r == -1 ? -static_cast<long>(err) : r; }

// The program's errno on the hook path, read and written through the thread pointer, as
// libc's own code does (errno is in libc's initial-exec TLS: at the same offset from the
// thread pointer in every thread), not through a call of __errno_location through the PLT:
// every recorded call read errno three times (the result, and EndCall's save and restore),
// 73 samples of a recorded `tar xf`'s main thread against 1 plain (perf, stop 39). The offset
// is __errno_location()'s answer less the thread pointer, taken by Init before the library
// records anything (g_on): used only after a call was begun.
extern int32_t g_errno_tp_offset;
__attribute__((always_inline)) inline int ProgramErrno() {
  int v;
  asm volatile("movl %%fs:(%1), %0"
               : "=r"(v)
               : "r"(static_cast<long>(g_errno_tp_offset))
               : "memory");
  return v;
}
__attribute__((always_inline)) inline void SetProgramErrno(int v) {
  asm volatile("movl %1, %%fs:(%0)"
               :
               : "r"(static_cast<long>(g_errno_tp_offset)), "r"(v)
               : "memory");
}

// The library's fds: the program may not close or replace them.
bool IsOwnFd(long fd);
// Moves the library's fd away from `fd` (the program wants that number); false if it cannot.
bool VacateFd(int fd);
int TraceFd();
int SharedFd();
int LockFd();  // the process's liveness lock (see protocol.h), -1: none

// close_range that leaves the library's fds open: one kernel call per piece, each recorded.
int CloseRangeKeepingOwn(unsigned first, unsigned last, int flags);

// Syscall User Dispatch (dispatch.cc). Once a thread is armed, every system call it makes from
// outside the library's gate traps into a SIGSYS handler that records and carries it out,
// unless the thread's selector says ALLOW: the wrappers allow while they run the real libc
// function (they record it themselves).
// The calling thread's state that the hook path reads on every recorded call, in one block of
// thread-local storage: in a shared library each initial-exec variable is reached through a
// GOT slot of its own (a load of its offset, then the %fs access), and the dozen the hook path
// read apart cost a recorded call 16 instructions more and their GOT slots' cache lines
// (callgrind). The selector's address is the one dispatch and the patched sites check.
struct ThreadState;  // preload.cc
struct alignas(64) ThreadHot {
  ThreadState* state = nullptr;  // the thread's recording (preload.cc), null until its first call
  // BeginCall's frame when the thread's pending call began (see LeftByLongjmp).
  uintptr_t call_frame = 0;
  Call* call = nullptr;  // that call (read at depth kDepthNestable only: EndCallAtDeath)
  // The outermost SIGSYS handler's frame while in_handler (a call from above it means a
  // signal handler jumped out of the trapped call: see BeginCallAt).
  uintptr_t handler_frame = 0;
  // The one task entitled to this thread-local storage, 0: whichever runs on it. Set when a
  // vfork parent resumes while tasks it did not make may still run on its memory and storage:
  // the descendants of a vfork child killed during its own vfork (see iorr_vfork_parent).
  // Those are then foreign here: they record nothing and touch none of the library's state
  // (the storage, its locks and rings are the resumed parent's) until their exec, which
  // records on.
  uint32_t owner_tid = 0;
  uint32_t patch_calls = 0;  // calls so far, for PatchLater
  uint32_t table_calls = 0;  // calls so far, for OwnWriterTable (reset where it declines)
  int depth = 0;  // inside the hook: 1 a call, kDepthNestable a plain call, 2 writing its event
  char selector = 0;         // Syscall User Dispatch's selector byte (SYSCALL_DISPATCH_FILTER_*)
  bool armed = false;        // dispatch is armed in this thread (dispatch.cc)
  bool in_handler = false;   // inside the SIGSYS handler
  bool done = false;         // exiting, or the library's own thread: nothing recorded
  // This task is a vfork child running on its parent's memory and thread-local storage (see
  // VforkChild); state is then its own, not the parent thread's.
  bool vm_child = false;
  // A program's handler was put off while the library wrote an event (DeferSignal): its signals
  // are blocked and pending until the write ends (ReleaseDeferredSignals).
  bool deferred = false;
  // Frames of the program's signal handlers live on this thread (iorr_handler_entry, and the
  // program's SIGSYS handler through ForwardSigsys): the switch to patched sites waits while
  // one is, since the context it interrupted may lie in a window about to be rewritten
  // (PatchNow). One left by siglongjmp stays counted; the count sticks at its top rather than
  // wrap (a review of stop 36: after 65,535 frames left so, a 16-bit count read 0 in a live
  // handler, and the switch under it crashed the program).
  uint32_t program_handlers = 0;
};
extern constinit thread_local ThreadHot t_hot __attribute__((tls_model("initial-exec")));
inline void AllowSyscalls() {
  if (t_hot.armed) t_hot.selector = 0;  // SYSCALL_DISPATCH_FILTER_ALLOW
}
inline void BlockSyscalls() {
  if (t_hot.armed) t_hot.selector = 1;  // SYSCALL_DISPATCH_FILTER_BLOCK
}
// Per process: the SIGSYS handler, and our restorer under the program's existing handlers.
bool DispatchInstall();
// Per process, where rt_sigaction is caught (dispatch or patched sites): the fatal signals the
// program leaves at SIG_DFL flush the recording before the process dies of them (dispatch.cc).
void FlushSignalsInstall();
void FlushSignalsRelease();  // a tracee: the program's own dispositions back
// From a fatal signal's handler (dispatch.cc): writes out what the process has recorded, while
// the program's other threads wait at their next recorded call, as if already gone (the
// kernel would have ended them with the signal). kDie: nothing to flush (or no way to: a fork
// child that has not yet left its parent's state, a foreign task); kFlushed: flushed (the
// writer lock within half a second, else without it); kDeferred: the signal came inside this
// thread's own flush, which goes on and sends it again when done (unless !may_defer: a fault,
// which would come again at once; then kDie). EndDeath lets the other threads go on, for a
// process that lives on after all (the dying thread's next recorded call calls it).
enum class FatalFlush { kDie, kFlushed, kDeferred };  // kDeferred: return from the handler
// A vfork child (never armed: see iorr_vfork_child) of a thread that was armed, on its parent's
// stack: its fatal signal's handler writes out what it recorded, as an armed thread's does.
bool VforkChildMayFlush();
// uc: the context the signal interrupted, or nullptr (a fault: no call returned there). Before
// the flush, the call the thread is inside is written when that context is its system call's
// return (EndCallAtDeath); *selector is then what the call's end leaves.
FatalFlush FlushBeforeDeath(int sig, bool may_defer, const ucontext_t* uc, char* selector);
// Takes `lock` (0: free, 1: held) within `tries` attempts, sleeping pause_ns between them (a
// lock a fork child copied held, or its own thread holds, is never given back): false if not.
bool LockWithin(std::atomic<int>& lock, int tries, long pause_ns);
void EndDeath();
// The handler that flushed returns, the signal pending with SIG_DFL: threads waiting for the
// process to die go on by themselves if it is still alive 100 to 200 ms later.
void DeathHandlerReturned();
// Dies of sig as SIG_DFL would have it (dispatch.cc); returns if it does not (a tracer dropped
// the signal, or the program gave it a handler meanwhile).
void DieOfSignal(int sig);
// Per thread: arms dispatch (at start, in new threads, in a forked child), or the selector of
// patched sites. False: nothing armed (dispatch refused by the kernel or a seccomp filter).
bool DispatchArmThread();
bool DispatchEnabled();  // dispatch or patched sites catch calls outside the wrappers
// Patched system call sites (patch.cc): rewrites libc's and the loader's system call
// instructions into jumps to stubs that check the selector as dispatch would. False (and why)
// when the process's code does not allow it; then nothing was changed.
// resume_at: where a trapped call the rewriting runs inside goes on (null: none); set to where
// it must go on instead when that was right after a rewritten syscall.
bool PatchInstall(char* why, size_t why_len, uintptr_t* resume_at = nullptr);
// PatchInstall's why when it refused only because of resume_at: a later trap may try again.
inline constexpr char kResumeInWindow[] = "the trapped call goes on inside a window";
// Set when the switch to patched sites came due inside the SIGSYS handler: SigsysHandler then
// tries it at its end (PatchFromHandler).
extern bool g_patch_from_handler;
void PatchFromHandler(long nr, uintptr_t site, uintptr_t* resume_at);
struct SharedState;
SharedState* Shared();  // the recording's shared state (protocol.h)
// The threads glibc counts (pthread_create's; the library's writer is not counted), -1: unknown.
int ProgramThreads();
bool PatchEnabled();
// The calling thread stops trapping (its code was just patched; the selector goes on).
void DispatchDisarmThread();
int DispatchUnenteredSignal();
// Whether handler is glibc's own for signal 32 or 33 (in libc's text), which stays out of the
// library's handler entry; a program's own handler for them goes behind it as any other does.
bool GlibcSignalHandler(int sig, const void* handler);
// Before the program's first thread: patched sites now, where they are still to come.
void PatchBeforeThread();
void OwnWriterTableBeforeThread();  // (see PrivateFdTable in preload.cc)
// The writer's move to an fd table of its own, where it can be made now (see PrivateFdTable
// in preload.cc): at a thread's 4096th call, and before the program leaves its shared table
// (unshare(CLONE_FILES), close_range with CLOSE_RANGE_UNSHARE). Left behind in the table the
// program leaves, the writer would keep every file of it open; where it cannot move (threads
// of the program's share the old table too, and hold its files anyway), it stays.
void OwnWriterTable();
// A process that shares this one's fd table (clone with CLONE_FILES): the writer stays in it.
void NoteFilesSharedTask();
// A program handler's frame begins or ends on this thread (ThreadHot::program_handlers).
inline void ProgramHandlerBegins() {
  if (t_hot.program_handlers != ~uint32_t{0}) ++t_hot.program_handlers;
}
inline void ProgramHandlerEnds() {
  if (t_hot.program_handlers != ~uint32_t{0}) --t_hot.program_handlers;
}
// A signal's bit in a kernel signal mask.
constexpr uint64_t SigBit(int sig) { return uint64_t{1} << (sig - 1); }
// A program's handler whose signal comes while the library writes an event on the thread (depth
// 2), where its calls could not be recorded (BeginNested counted them lost): the signal is
// blocked in the interrupted context's mask and sent again to this thread with its siginfo, so
// that it stays pending, and the handler is not run now. False where it cannot be put off (a
// fault, a disposition SA_RESETHAND has reset, the send refused): the handler runs now.
bool DeferSignal(int sig, siginfo_t* info, void* ctx);
// The write has ended (depth back to 0 or kDepthNestable): the signals put off are unblocked,
// and the kernel delivers them at once, their handlers' calls recorded (dispatch.cc).
void ReleaseDeferredSignals();
// pc lies in libc's code (false until it is known).
bool InLibcText(uintptr_t pc);
// Drops the record of signals put off without unblocking them (a vfork parent resumed: they were
// the child's).
void ForgetDeferredSignals();
// The system call instructions a linear sweep finds in [addr, addr + len), read safely (code
// the loader maps after start-up is checked).
int PatchCountSyscalls(long addr, long len);
// PTRACE_TRACEME succeeded (or the image before exec was traced): this thread stops trapping
// and no thread or child of this process is armed again; exec hands it on (IORR_TRACED).
void DispatchBecomeTracee();
bool DispatchTracee();
// The thread's alternate signal stack as sigaltstack set it (kept: with SS_AUTODISARM the
// kernel reports it disabled while a handler runs on it). See LeftByLongjmp.
void NoteAltStack(const stack_t& ss);
// sp lies on the alternate signal stack NoteAltStack kept for this thread.
bool OnNotedAltStack(uintptr_t sp);
// The low end of the alternate signal stack sp lies on, 0 if none: the one noted (sigaltstack
// through the library; with SS_AUTODISARM the kernel says disabled while a handler runs on
// it), else the kernel's, if it says the thread is on it (SS_ONSTACK).
uintptr_t AltStackLow(uintptr_t sp);
// The program's signal handler that a disposition's handler stands for: the handler itself,
// unless it is one of the library's stubs (dispatch.cc).
void* ProgramHandler(void* handler);  // the noted stack's low end if sp is on it, else 0
// PTRACE_TRACEME succeeded in the calling task: DispatchBecomeTracee and a note for a task of
// its own; a vfork child's is its own until its exec (its parent's threads stay armed); a
// task on its parent's thread-local storage (a raw CLONE_VM clone) changes nothing. Leaves
// errno as it was.
void OnTraceMe();
// The note for it ("capture PID: traced (PTRACE_TRACEME) ...").
void NoteTracee();
// A thread is about to start on a small stack of the program's own memory (`size` bytes),
// recorded through the wrappers only: a note, once per process.
void NoteSmallStack(size_t size);
// Gives the process's default thread stack the room small stacks get (wrappers.cc) when it is
// small (a small RLIMIT_STACK). At start-up.
void GrowDefaultStack();

// Notes around an exec, so that iorr record can tell which execs did not reach a recorded image
// (static or setuid binaries): "exec-attempt PID FILENAME", "exec-failed PID", "exec-ok PID
// FILENAME". FILENAME is the name the kernel gives the new image (AT_EXECFN): the path, or
// /dev/fd/DIRFD/PATH for execveat with a relative path (/dev/fd/DIRFD for AT_EMPTY_PATH). An
// exec-ok of another name than the pending attempt's is a later exec in the same process: the
// attempt's image ran unrecorded (a static program that execs a dynamic one).
void NoteExecAttempt(int dirfd, const char* path);
// Around glibc's setuid family (setuid ... setgroups): makes it change every thread's ids, the
// writer's too (see g_single_reset in preload.cc). True: the window is open (signals blocked
// until AfterSetxid).
struct SetxidWindow {
  bool lowered;
  uint8_t selector;
  sigset_t mask;
};
bool BeforeSetxid(SetxidWindow* w);
void AfterSetxid(const SetxidWindow& w);
// Whether envp would load this library into an exec'd program.
bool EnvHasLibrary(char* const* envp);
// An escape note for a child libc spawns (clone(CLONE_VM|CLONE_VFORK) from inside libc) whose
// environment lacks the library.
void NoteUnarmedSpawn();
// Around system(), popen() and wordexp() (their wrappers, SpawnFromLibc). glibc's spawn inside
// them makes its clone natively (dispatch and the patched sites cannot carry out a CLONE_VM
// child's clone), which leaves the thread's selector at ALLOW: every later call libc makes on
// its own (stdio, fts, opendir) then ran unrecorded until the thread's next wrapped call (a
// program that read a file with fopen after system() lost that read). Begin writes the escape
// note for a spawn without the library in its environment that neither dispatch nor the
// patched sites will see (they note the others at the clone), and returns the selector; End
// puts it back when it was BLOCK.
char SpawnFromLibcBegin();
void SpawnFromLibcEnd(char selector);
// The exec window of such a spawn (see kSpawnWindowTid in protocol.h), opened before the call
// where the child will load the library, so that its image can record its exec and the
// loader's calls (the audit module's log) in place. Not closed when the call returns: a child
// may take a sibling's window (one opened later, by another thread, before its loader ran),
// and its own is then the sibling's to take; a window nobody takes goes after a second.
void OpenSpawnWindow();
void NoteExecFailed();

// Flushes every thread's pending events of this process to the trace (before exec and exit).
void FlushAll();
// FlushAll, then holds the process's writer lock until the process ends: exit_group and a
// successful exec kill the other threads, the writer thread among them, and one killed while
// writing a record would leave it cut short in the middle of the trace. After a failed exec,
// ReleaseHeldWriter. Not in a vfork child (the lock is its parent's).
void FlushAllAndHold();
void ReleaseHeldWriter();

// At process exit, after the last flush: frees this process's watermark slots.
void ReleaseProcessSlots();

// Fills envp_out (capacity cap, NULL-terminated) with envp plus what the recording needs in
// the new image: the library in LD_PRELOAD, the IORR_* variables, and the exec start time.
// Strings are written into buf (capacity buf_cap). Returns false if it does not fit.
bool PrepareExecEnv(char* const* envp, int64_t exec_start, char** envp_out, int cap, char* buf,
                    int buf_cap);
int64_t NowNs();

// The calling thread is about to leave without ending the process (pthread_exit, raw exit)
// with status `code`.
// When it is the main thread, the writer watches for the moment no other thread of the program
// is left and then ends the process as the kernel would (see WriterMain).
void NoteThreadExit(int code);
// The calling thread's SYS_exit is about to run: its recording ends (see ThreadExit).
void ThreadGone();
// Nothing more of the calling thread is recorded (its process is about to end).
void StopRecordingThread();

// Called in the child after fork (pthread_atfork) and at vfork's child return.
void AfterForkChild();
// The same for a fork-like clone; shared_files: the child shares the parent's fd table.
void AfterForkChildOf(bool shared_files);
// Around a recorded exec (see preload.cc).
void ExecKeepsLock(bool keep);
// A short-lived child (posix_spawn's) that execs at once: never start a writer thread in it;
// its exec flushes synchronously.
void NoWriterInThisProcess();
// Starts a process on this memory, as vfork does, but on a stack of its own (clone with
// CLONE_VM | CLONE_VFORK, a stack of stack_bytes mapped for it): posix_spawn's child, which costs
// no page-table copy and leaves the parent no copy-on-write faults, whatever the parent's size.
// The child runs child(arg) with every signal but SIGSYS blocked and must exec or exit_group;
// it is recorded as a vfork child (iorr_vfork_child), and the calling thread waits until it has
// exec'd or ended. *parent_mask: the calling thread's signal mask, for the child to set before
// its exec. A child that set *failed (its exec failed) is reaped before the thread's signals are
// unblocked. Returns the child's pid or -errno, or kNoVmChild, having done nothing, when the
// calling task cannot (it is a vfork child itself, foreign to its storage, or on Valgrind).
inline constexpr long kNoVmChild = -(1L << 40);
long SpawnVmChild(void (*child)(void*), void* arg, size_t stack_bytes, uint64_t* parent_mask,
                  const volatile int* failed);
// The call table's tag of kernel call nr (dispatch.cc), or <= 0 when the table lacks it.
int CallTagOf(long nr);
// Looks up every interposed function's real address (at load).
void ResolveAllReals();

}  // namespace iorr::recorder
