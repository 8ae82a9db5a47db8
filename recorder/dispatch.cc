// Syscall User Dispatch: completeness beyond the PLT. libc's internal calls (stdio, opendir,
// emulated *at calls) and raw syscall instructions do not pass through the wrappers; with
// dispatch armed they trap into SigsysHandler, which records them and carries them out from
// the gate, the one code region allowed to make system calls.
//
// The gate holds iorr_raw_syscall and the signal restorer. Rules that keep programs unharmed:
//  - every handler the program installs gets our restorer (its rt_sigreturn must come from the
//    gate), and SIGSYS is never blocked or taken over (a trap with SIGSYS blocked kills);
//  - the handler runs with SA_NODEFER and no added mask, so signals still interrupt blocking
//    calls made on the program's behalf, with the kernel's own restart rules;
//  - calls that create a task sharing memory or a new stack (threads, vfork, posix_spawn) cannot
//    be carried out inside a handler: they are re-issued natively with the selector at ALLOW
//    (until the next recorded call sets BLOCK again) and counted as escapes.
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "recorder/preload.h"
#include "recorder/raw_syscall.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif

// The gate: the only instructions allowed to make system calls once dispatch is armed.
__asm__(
    ".pushsection .text.iorr_gate,\"ax\",@progbits\n"
    ".p2align 4\n"
    ".globl iorr_gate_start\n.hidden iorr_gate_start\n"
    "iorr_gate_start:\n"
    ".globl iorr_raw_syscall\n.hidden iorr_raw_syscall\n.type iorr_raw_syscall,@function\n"
    "iorr_raw_syscall:\n"
    "  .cfi_startproc\n"  // (cancellation unwinds through a blocked call: see patch.cc)
    "  movq %rdi, %rax\n"
    "  movq %rsi, %rdi\n"
    "  movq %rdx, %rsi\n"
    "  movq %rcx, %rdx\n"
    "  movq %r8, %r10\n"
    "  movq %r9, %r8\n"
    "  movq 8(%rsp), %r9\n"
    "  syscall\n"
    ".globl iorr_raw_syscall_ret\n.hidden iorr_raw_syscall_ret\n"
    "iorr_raw_syscall_ret:\n"  // (a fatal signal at a caught call's return: EndCallAtDeath)
    "  ret\n"
    "  .cfi_endproc\n"
    ".size iorr_raw_syscall, .-iorr_raw_syscall\n"
    // Outside any FDE: an unwinder looks up a return address minus one, and for the restorer
    // below it must find none, so that it recognises the sigreturn trampoline by its code.
    "  nop\n"
    // Named as glibc's restorer: gdb takes a frame for a signal frame by that name (or by
    // the code below where there is no name), and unwinds a core or a live process through a
    // handler that returns here into the program's frames.
    ".globl __restore_rt\n.hidden __restore_rt\n.type __restore_rt,@function\n"
    "__restore_rt:\n"
    "  movq $15, %rax\n"  // rt_sigreturn
    ".globl iorr_restore_rt_syscall\n.hidden iorr_restore_rt_syscall\n"
    "iorr_restore_rt_syscall:\n"
    "  syscall\n"
    "  hlt\n"
    ".size __restore_rt, .-__restore_rt\n"
    ".globl iorr_gate_end\n.hidden iorr_gate_end\n"
    "iorr_gate_end:\n"
    ".popsection\n");

extern "C" {
void iorr_restore_rt() __asm__("__restore_rt") __attribute__((visibility("hidden")));
extern char iorr_restore_rt_syscall[] __attribute__((visibility("hidden")));
}

extern char** environ;

namespace iorr::recorder {

constinit thread_local ThreadHot t_hot __attribute__((tls_model("initial-exec")));

namespace {

// The kernel's struct sigaction (rt_sigaction with an 8-byte sigset).
struct KSigaction {
  void* handler;  // or kDfl / kIgn
  unsigned long flags;
  void* restorer;
  uint64_t mask;
};
constexpr unsigned long kSaRestorer = 0x04000000;
void* const kDfl = nullptr;                     // SIG_DFL
void* const kIgn = reinterpret_cast<void*>(1);  // SIG_IGN

bool g_enabled = false;
bool g_tracee = false;             // PTRACE_TRACEME: nothing of this process is armed again
KSigaction g_program_sigsys = {};  // what the program believes SIGSYS's disposition is

// The table's call for each x86_64 syscall number, or -1.
struct CallsByNumber {
  int16_t tag[512];
};
constexpr CallsByNumber MakeCallsByNumber() {
  CallsByNumber t{};
  for (auto& v : t.tag) v = -1;
  for (const auto& c : trace::kCalls)
    if (c.nr >= 0 && c.nr < 512) t.tag[c.nr] = static_cast<int16_t>(c.tag);
  return t;
}
constexpr CallsByNumber kCallsByNumber = MakeCallsByNumber();

void CallOf(long nr, int* tag) { *tag = (nr >= 0 && nr < 512) ? kCallsByNumber.tag[nr] : -1; }

long Raw(long nr, const long* a) { return RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]); }

// Runs a call on the program's behalf and records it when the table has it.
long RunRecorded(long nr, const long* a) {
  int tag;
  CallOf(nr, &tag);
  Call c(AtDeath::kGate, static_cast<CallId>(tag));
  bool on = tag > 0 && trace::Shape(static_cast<CallId>(tag)).effect != trace::Effect::kProcess &&
            BeginNestableCall(&c);
  long r = Raw(nr, a);
  if (on) EndCall(&c, static_cast<CallId>(tag), a, r);
  return r;
}

// A call of the table recorded with `result` instead of being made (the library's fds: EBADF).
long RecordRefused(long nr, const long* a, long result) {
  int tag;
  CallOf(nr, &tag);
  Call c(AtDeath::kGate, static_cast<CallId>(tag));
  if (tag > 0 && BeginNestableCall(&c)) EndCall(&c, static_cast<CallId>(tag), a, result);
  return result;
}

// A program's disposition as the kernel gets it under dispatch: a handler returns through our
// restorer (see iorr_restore_rt), and no handler blocks SIGSYS.
KSigaction UnderDispatch(KSigaction k) {
  if (k.handler != kDfl && k.handler != kIgn) {
    k.flags |= kSaRestorer;
    k.restorer = reinterpret_cast<void*>(iorr_restore_rt);
  }
  k.mask &= ~SigBit(SIGSYS);
  return k;
}

// The program's signal handlers run behind entries of the library's, which the kernel holds in
// their place (the program is told its own: ProgramView). A handler that interrupts a plain
// call (a read waiting on a pipe, a FIFO's open) finds the selector at ALLOW, set for the
// call's real function: libc's own calls in it (fopen's openat, fclose's write and close,
// signal()'s rt_sigaction, raise's tgkill) then went natively, unrecorded (a review of stop
// 34), and a handler that ended the process with `signal(sig, SIG_DFL); raise(sig)` (GNU tools'
// cleanup idiom) died without the library's flush, losing up to 100 ms of calls. The entry
// sets the selector to BLOCK for the handler's run and back to ALLOW after it, so those calls
// are caught as anywhere else: recorded nested in the interrupted call (BeginNested), or
// counted as lost where the library itself was at work (depth 1; at depth 2, writing an event,
// the handler is put off until the write is done since stop 40: DeferSignal). Not on an alternate
// signal stack with less than kCatchRoom left below the handler: a caught call needs a trap's
// signal frame and the library's frames there (a handler's fopen on a 7 KiB stack died of
// SIGSEGV: review of stop 35); its libc calls go natively, as before, and such a run is
// counted (unwatched_handler_runs), so the trace notes it as an escape. A handler that leaves by
// siglongjmp leaves the selector at BLOCK, as outside any call.
// One entry per handler (iorr_handler_stubs: 256 stubs of 16 bytes, each `mov $i, %eax; jmp`
// to the common part), its handler fixed once given: a disposition the program reads where
// rt_sigaction is not caught (a thread on a stack of its own, a vfork child, after an escaped
// CLONE_VM clone) holds the entry, and setting it again, there or anywhere, brings back that
// handler, not whichever the signal had meanwhile (a single entry with a table by signal did:
// review of stop 35). Past 256 handlers, or for glibc's own two (32, 33) and SIGSYS (kept
// apart), the kernel gets the handler itself (past 256: counted, noted as an escape).
constexpr int kHandlerStubs = 256;
constexpr uintptr_t kStubBytes = 16;
constexpr uintptr_t kCatchRoom = 32 * 1024;
std::atomic<void*> g_stub_handler[kHandlerStubs];
std::atomic<int> g_stubs_used{0};

}  // namespace
}  // namespace iorr::recorder

extern "C" {
extern char iorr_handler_stubs[] __attribute__((visibility("hidden")));
__attribute__((visibility("hidden"))) void iorr_handler_entry(int sig, siginfo_t* info, void* ctx,
                                                              unsigned stub);
}

// The stubs: the kernel calls one as the handler; it passes its number in the fourth argument's
// register to iorr_handler_entry, whose return address is then the kernel's (the restorer). One
// FDE covers them all: nothing in them moves the stack pointer.
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl iorr_handler_stubs\n.hidden iorr_handler_stubs\n"
    "iorr_handler_stubs:\n"
    "  .cfi_startproc\n"
    "  .set iorr_stub_n, 0\n"
    "  .rept 256\n"
    "  .p2align 4\n"
    "  movl $iorr_stub_n, %ecx\n"
    "  jmp iorr_handler_entry\n"
    "  .set iorr_stub_n, iorr_stub_n + 1\n"
    "  .endr\n"
    "  .cfi_endproc\n");

namespace iorr::recorder {
namespace {

// The stub that stands for handler h: the one already given it, else a new one; -1 if none is
// left.
int StubOf(void* h) {
  int used = g_stubs_used.load(std::memory_order_acquire);
  for (int i = 0; i < used && i < kHandlerStubs; ++i)
    if (g_stub_handler[i].load(std::memory_order_acquire) == h) return i;
  int i = g_stubs_used.load(std::memory_order_relaxed);
  do {
    if (i >= kHandlerStubs) return -1;
  } while (!g_stubs_used.compare_exchange_weak(i, i + 1, std::memory_order_acq_rel));
  g_stub_handler[i].store(h, std::memory_order_release);
  return i;
}

void* StubAddress(int i) { return iorr_handler_stubs + static_cast<uintptr_t>(i) * kStubBytes; }

}  // namespace

void* ProgramHandler(void* handler) {
  auto at = reinterpret_cast<uintptr_t>(handler),
       base = reinterpret_cast<uintptr_t>(iorr_handler_stubs);
  if (at < base || at >= base + kHandlerStubs * kStubBytes || (at - base) % kStubBytes != 0)
    return handler;
  void* h = g_stub_handler[(at - base) / kStubBytes].load(std::memory_order_acquire);
  return h != nullptr ? h : handler;
}

namespace {

bool EntryHandler(void* handler) { return ProgramHandler(handler) != handler; }

// The handler the kernel gets for the program's handler of sig: its stub, where it has one.
void* KernelHandler(int sig, void* handler) {
  // (A program's own handler for 32 or 33, set by a raw rt_sigaction, went without an entry
  // until stop 37, uncounted: the switch to patched sites came under it and crashed the
  // program, behaviour case "handlers the switch could not see", sig32.)
  if (sig <= 0 || sig >= 65 || sig == SIGSYS || handler == kDfl || handler == kIgn ||
      EntryHandler(handler) || GlibcSignalHandler(sig, handler))
    return handler;
  int i = StubOf(handler);
  if (i >= 0) return StubAddress(i);
  CountUnenteredHandler();  // (its calls inside a recorded call go unrecorded: noted)
  return handler;
}

// What the program sees of a disposition the kernel holds: its own handler for a stub.
void ProgramView(KSigaction* k) { k->handler = ProgramHandler(k->handler); }

// Whether the thread is on an alternate signal stack with less than kCatchRoom left below sp.
bool LittleAltRoom(uintptr_t sp) {
  uintptr_t lo = AltStackLow(sp);
  return lo != 0 && sp - lo < kCatchRoom;
}

}  // namespace
}  // namespace iorr::recorder

// A program's handler, through its stub (above).
void iorr_handler_entry(int sig, siginfo_t* info, void* ctx, unsigned stub) {
  using namespace iorr::recorder;
  void* h = g_stub_handler[stub % kHandlerStubs].load(std::memory_order_acquire);
  if (h == nullptr) return;  // (never: given before the kernel has the stub)
  // Inside the library's write of an event, the handler's calls could not be recorded: it runs
  // once the write is done.
  if (t_hot.depth == 2 && DeferSignal(sig, info, ctx)) return;
  bool inside = t_hot.selector == 0 && t_hot.armed && t_hot.depth != 0 && !ForeignTask();
  bool block = inside && !LittleAltRoom(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  if (block)
    t_hot.selector = 1;  // SYSCALL_DISPATCH_FILTER_BLOCK
  else if (inside)
    CountUnwatchedHandlerRun();  // its libc calls go natively: noted, not silently missed
  ProgramHandlerBegins();        // (PatchNow waits while a frame is live)
  reinterpret_cast<void (*)(int, siginfo_t*, void*)>(h)(sig, info, ctx);
  ProgramHandlerEnds();
  // The interrupted call's real function goes on (or restarts) at ALLOW; not where the thread
  // is inside no call any more (a fork child's state starts afresh: AfterForkChildOf).
  if (block && t_hot.depth != 0) t_hot.selector = 0;
}

namespace iorr::recorder {

// A program's handler put off while the library writes an event (see preload.h). A SIGCHLD
// reaper's run inside an event's write lost all its calls (stop 40's CI: 7 children reaped, 14
// calls, in one run; 1 run in 20 beside two busy loops, where a preempted write is resumed with
// the signal pending). The write is short and does nothing a handler waits for, so the handler
// runs a few hundred nanoseconds later, as it would for a signal sent that much later. Not:
//  - a fault (an instruction's signal comes back at once, for ever, if not handled);
//  - where the disposition is not the entry any more (SA_RESETHAND reset it: sent again, the
//    signal would take the default action);
//  - at an exec's or a spawn's work (depth 1): an exec would carry the blocked signal into the
//    new image (an exec from a handler run inside the write, after a signal was put off,
//    releases it first: see the exec paths);
//  - a real-time signal: sent again, it would go behind the instances queued meanwhile (a
//    review of stop 40: 2 to 90 of 20,000 sigqueue values out of order);
//  - where the interrupted code is neither this library's nor a leaf function of libc's it
//    called (memcpy, strnlen: the word at the stack pointer is the return address into the
//    library): elsewhere depth 2 is stale, a handler having left the write by siglongjmp
//    (LeftByLongjmp mends it at the thread's next call; a program spinning without calls
//    until a handler has run, in clock_gettime, was never released: review of stop 40). The
//    stack pointer alone cannot tell: a PLT wrapper's frame lies a few bytes below its
//    caller's, above any function the caller calls next.
thread_local uint64_t t_deferred_set __attribute__((tls_model("initial-exec"))) = 0;
}  // namespace iorr::recorder
// This library's code: from its ELF header to the end of its text (the linker's symbols).
extern "C" char __ehdr_start[] __attribute__((visibility("hidden")));
extern "C" char etext[] __attribute__((visibility("hidden")));
namespace iorr::recorder {
bool DeferSignal(int sig, siginfo_t* info, void* ctx) {
  if (info == nullptr || ctx == nullptr || ForeignTask() || sig >= 32) return false;
  auto* uc = static_cast<ucontext_t*>(ctx);
  auto own = [](uintptr_t pc) {
    return pc >= reinterpret_cast<uintptr_t>(__ehdr_start) &&
           pc < reinterpret_cast<uintptr_t>(etext);
  };
  auto pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  if (!own(pc) &&
      !(InLibcText(pc) && own(*reinterpret_cast<const uintptr_t*>(uc->uc_mcontext.gregs[REG_RSP]))))
    return false;
  KSigaction now = {};
  if (RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&now), 8) != 0 ||
      ProgramHandler(now.handler) == now.handler)
    return false;
  // The kernel writes the siginfo into the frame for an SA_SIGINFO handler only (the register
  // points at stack bytes left as they were otherwise): a fault is told by its si_code, and
  // without one the signals faults raise are not put off.
  bool with_info = (now.flags & SA_SIGINFO) != 0;
  if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP ||
       sig == SIGSYS) &&
      (!with_info || info->si_code > 0))
    return false;
  // Blocked first (an SA_NODEFER handler runs with it unblocked: sent again, it would come back
  // into this entry at once); the handler's return puts back the context's mask, blocking it too.
  uint64_t bit = SigBit(sig);
  RawSyscall6(SYS_rt_sigprocmask, SIG_BLOCK, reinterpret_cast<long>(&bit), 0, 8);
  // To this thread, with the siginfo as the kernel gave it (a process may send itself any
  // si_code: a child's exit status, a sender's pid stay as they were); a handler without
  // SA_SIGINFO sees the number only.
  long pid = RawSyscall6(SYS_getpid), tid = RawSyscall6(SYS_gettid);
  long sent = with_info
                  ? RawSyscall6(SYS_rt_tgsigqueueinfo, pid, tid, sig, reinterpret_cast<long>(info))
                  : RawSyscall6(SYS_tgkill, pid, tid, sig);
  if (sent != 0) return false;  // (the handler's return unblocks it again)
  uint64_t mask;  // the kernel's sigset: its first 8 bytes
  std::memcpy(&mask, &uc->uc_sigmask, sizeof(mask));
  mask |= bit;
  std::memcpy(&uc->uc_sigmask, &mask, sizeof(mask));
  t_deferred_set |= bit;
  t_hot.deferred = true;
  return true;
}

void ForgetDeferredSignals() {
  t_deferred_set = 0;
  t_hot.deferred = false;
}

void ReleaseDeferredSignals() {
  uint64_t set = t_deferred_set;
  t_deferred_set = 0;
  t_hot.deferred = false;
  RawSyscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, reinterpret_cast<long>(&set), 0, 8);
}

namespace {

void ForwardSigsys(int sig, siginfo_t* info, void* ctx) {
  void* h = g_program_sigsys.handler;
  if (h == kIgn) return;
  if (h == kDfl) {  // the default action: die of SIGSYS, as without the recorder
    DieOfSignal(SIGSYS);
    return;
  }
  // Counted as a handler behind the entry is (a review of stop 36: a SIGSYS handler of the
  // program's making calls was the switch's blind spot, and the switch under it crashed).
  ProgramHandlerBegins();
  if (g_program_sigsys.flags & SA_SIGINFO)
    reinterpret_cast<void (*)(int, siginfo_t*, void*)>(h)(sig, info, ctx);
  else
    reinterpret_cast<void (*)(int)>(h)(sig);
  ProgramHandlerEnds();
}

// Fatal signals: a process killed by a signal it does not handle (SIGTERM from a parent, as
// multiprocessing's Pool.terminate() ends its workers; SIGINT from a terminal; SIGPIPE in
// `prog | head`; SIGSEGV or SIGABRT when it crashes) lost what it had recorded since the
// writer's last flush, up to 100 ms, which for a short process was everything (a Pool's
// workers: 75 of 120 opens missing, stop 22). While the program leaves such a signal at
// SIG_DFL, the kernel has FatalSignalHandler for it: it writes out what the process has
// recorded (FlushBeforeDeath), puts SIG_DFL back and sends the signal again while the handler
// still blocks it, then returns: the signal is delivered, with SIG_DFL, where the program was
// when it came, so the process dies of it as it would have, and a core it dumps holds the
// program's registers and stack as they were (not the handler's frames). A fault (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL raised by an instruction) is not even run again. The program is
// told SIG_DFL (Sigaction below keeps what it set), which needs rt_sigaction caught: with
// dispatch or patched sites only (FlushSignalsInstall). Left alone: SIGTRAP (debuggers and
// single-stepping own it), SIGSYS (dispatch's), SIGXFSZ (the flush's own writes would meet
// the same file size limit).
constexpr int kFlushSignals[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGABRT, SIGBUS,  SIGFPE,
                                 SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU};
template <size_t N>
constexpr uint64_t SetOf(const int (&sigs)[N]) {
  uint64_t set = 0;
  for (int sig : sigs) set |= SigBit(sig);
  return set;
}
constexpr uint64_t kFlushSet = SetOf(kFlushSignals);
bool g_flush_signals = false;  // FlushSignalsInstall ran: Sigaction keeps them
KSigaction g_program_dfl[65];  // what the program set (or inherited) with SIG_DFL, where ours is

// A fault: the signal an instruction raised (si_code > 0 for these; a kill or tgkill of them
// has SI_USER, SI_TKILL or SI_QUEUE, all <= 0).
bool Fault(int sig, const siginfo_t* info) {
  return info != nullptr && info->si_code > 0 &&
         (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

// SIG_DFL back and sig sent again to this thread, where the handler blocks it (its mask is
// all but SIGSYS): it stays pending until the handler returns, and then kills the process at
// the place the first one interrupted. (While sig is blocked the kernel does not end the
// process at the send, as it does for an unblocked fatal signal.) The mask rt_sigreturn puts
// back may block sig (sigsuspend, ppoll, pselect6 and epoll_pwait unblock it for the wait
// only: the review of stop 23 found such a process living on, and a thread of it joining
// another for ever): sig is taken out of it. The first signal's siginfo goes again (a fault's
// si_code and si_addr, a kill's sender), so a core shows what an unrecorded one would; the
// kernel takes any si_code from a process signalling itself.
void DieOnReturn(int sig, const siginfo_t* info, void* ctx) {
  if (ctx != nullptr) {
    uint64_t mask;  // the kernel's sigset: the first 8 bytes
    auto* uc = static_cast<ucontext_t*>(ctx);
    std::memcpy(&mask, &uc->uc_sigmask, sizeof(mask));
    mask &= ~SigBit(sig);
    std::memcpy(&uc->uc_sigmask, &mask, sizeof(mask));
  }
  KSigaction dfl = {kDfl, 0, nullptr, 0};
  RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&dfl), 0, 8);
  long pid = RawSyscall6(SYS_getpid), tid = RawSyscall6(SYS_gettid);
  if (info == nullptr ||
      RawSyscall6(SYS_rt_tgsigqueueinfo, pid, tid, sig, reinterpret_cast<long>(info)) != 0)
    RawSyscall6(SYS_tgkill, pid, tid, sig);
}

void FatalSignalHandler(int sig, siginfo_t* info, void* ctx) {
  // The flush runs on the thread's stack, as an exit's does: not on a small stack of the
  // program's own memory (such a thread is not armed: see the pthread_create wrapper), nor on
  // an alternate signal stack the signal found it on (its size is the program's; with
  // SS_AUTODISARM sigaltstack calls it disabled while a handler runs on it: the range
  // sigaltstack set is checked too).
  bool on_alt = AltStackLow(reinterpret_cast<uintptr_t>(__builtin_frame_address(0))) != 0;
  int saved_errno = errno;
  char selector = t_hot.selector;
  FatalFlush how = FatalFlush::kDie;
  if ((t_hot.armed || VforkChildMayFlush()) && !on_alt) {
    t_hot.selector = 0;  // the flush's own calls go untrapped
    // A fault inside this thread's own flush cannot wait for the flush to end (it would
    // come again at once): it dies there. A fault is no call's return either.
    bool fault = Fault(sig, info);
    how = FlushBeforeDeath(sig, !fault, fault ? nullptr : static_cast<const ucontext_t*>(ctx),
                           &selector);
  }
  // kDeferred: the signal came inside this thread's own flush, which goes on and sends it
  // again when done (Service). Else the process dies once this returns; should it live on
  // (a tracer dropped the signal, another thread gave it a handler meanwhile), this thread's
  // next recorded call, or 100 to 200 ms, lets the other threads go on (ParkForDeath).
  if (how != FatalFlush::kDeferred) DieOnReturn(sig, info, ctx);
  if (how == FatalFlush::kFlushed) DeathHandlerReturned();
  t_hot.selector = selector;
  errno = saved_errno;
}

}  // namespace

void DieOfSignal(int sig) {
  KSigaction dfl = {kDfl, 0, nullptr, 0};
  RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&dfl), 0, 8);
  uint64_t bit = SigBit(sig);
  RawSyscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, reinterpret_cast<long>(&bit), 0, 8);
  RawSyscall6(SYS_tgkill, RawSyscall6(SYS_getpid), RawSyscall6(SYS_gettid), sig);
}

namespace {

bool OurFatalHandler(const KSigaction& k) {
  return k.handler == reinterpret_cast<void*>(FatalSignalHandler);
}

// Puts FatalSignalHandler in the kernel for sig (the program's disposition is SIG_DFL).
long TakeFatalSignal(int sig) {
  KSigaction act = {};
  act.handler = reinterpret_cast<void*>(FatalSignalHandler);
  act.flags = SA_SIGINFO | SA_RESTART | kSaRestorer;
  act.restorer = reinterpret_cast<void*>(iorr_restore_rt);
  act.mask = ~SigBit(SIGSYS);  // nothing else interrupts the flush
  return RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&act), 0, 8);
}

// The few system calls that read and change a fatal signal's disposition (FlushSigaction) are
// one step for the program, as its rt_sigaction is: between two threads setting the same
// signal, one could otherwise put the library's handler over the handler the other had just
// set, or read back half of the other's g_program_dfl entry. Signals are blocked meanwhile (a
// handler of this thread calling sigaction would wait for itself), and the wait is bounded (a
// fork or vfork child may hold a copy taken while another thread held it).
std::atomic<int> g_sigaction_lock{0};
struct SigactionStep {
  uint64_t mask = 0;
  bool locked = false;
  SigactionStep() {
    uint64_t all = ~SigBit(SIGSYS);
    RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&all),
                reinterpret_cast<long>(&mask), 8);
    locked = LockWithin(g_sigaction_lock, 2000, 50'000);
  }
  ~SigactionStep() {
    if (locked) g_sigaction_lock.store(0, std::memory_order_release);
    RawSyscall6(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&mask), 0, 8);
  }
};

// A crash handler of the program's on an alternate signal stack often ends by raising a crash
// signal itself (abort(), or SIG_DFL back and raise), and with the library's handler there the
// kernel has to push a second signal frame (3.4 KiB on an AVX-512 machine) onto that stack: on
// an 8 KiB one it overflowed, and the process died of SIGSEGV instead of SIGABRT (review of
// stop 23). Once the program has a handler with SA_ONSTACK, these signals are the kernel's
// SIG_DFL again, without the flush.
constexpr int kCrashSignals[] = {SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV};
constexpr uint64_t kCrashSet = SetOf(kCrashSignals);
bool g_crash_given_back = false;
// (glibc's own handlers for 32 and 33, pthread_cancel's and setuid's in a process with threads,
// have SA_ONSTACK and raise nothing; SIGSYS's is dispatch's, the program's is kept apart.)
bool OnStackHandler(int sig, const KSigaction& k) {
  return !GlibcSignalHandler(sig, k.handler) && sig != SIGSYS && k.handler != kDfl &&
         k.handler != kIgn && !OurFatalHandler(k) && (k.flags & SA_ONSTACK);
}
void GiveBackCrashSignals() {
  if (g_crash_given_back) return;
  g_crash_given_back = true;
  for (int sig : kCrashSignals) {
    KSigaction cur = {};
    if (RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&cur), 8) == 0 &&
        OurFatalHandler(cur))
      RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&g_program_dfl[sig]), 0, 8);
  }
}

long FlushSigaction(int sig, const long* a) {
  auto* act = reinterpret_cast<const KSigaction*>(a[1]);
  auto* old = reinterpret_cast<KSigaction*>(a[2]);
  SigactionStep step;
  // The kernel reads and writes the program's structs (a bad pointer gets EFAULT, as
  // unrecorded) and normalises what it keeps; the library reads back its own copies.
  KSigaction cur = {};
  long r = RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&cur), 8);
  if (r != 0) return r;
  KSigaction prev = OurFatalHandler(cur) ? g_program_dfl[sig] : cur;
  ProgramView(&prev);
  if (act != nullptr) {
    if ((r = RawSyscall6(SYS_rt_sigaction, sig, a[1], 0, 8)) != 0) return r;
    KSigaction now = {};
    RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&now), 8);
    if (now.handler == kDfl) {
      g_program_dfl[sig] = now;
      if (!(g_crash_given_back && (kCrashSet & SigBit(sig)))) TakeFatalSignal(sig);
    } else if (now.handler != kIgn) {
      if (OnStackHandler(sig, now)) GiveBackCrashSignals();
      void* kernel = KernelHandler(sig, now.handler);
      bool moved = kernel != now.handler;
      now.handler = kernel;
      if (g_enabled) now = UnderDispatch(now);
      if (moved || g_enabled)
        RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&now), 0, 8);
    }
  }
  // As the kernel does: the new action is set before the old one is written out, which may
  // fail (EFAULT, the new action kept: until stop 35 it was not set then).
  if (old != nullptr) {
    if ((r = RawSyscall6(SYS_rt_sigaction, sig, 0, a[2], 8)) != 0) return r;
    *old = prev;
  }
  return 0;
}

// rt_sigaction of a signal the library does not hold: the program's handlers behind their
// stubs, our restorer under them (dispatch), SIGSYS kept. (act is readable: Sigaction.)
long SigactionOf(const long* a) {
  int sig = static_cast<int>(a[0]);
  auto* act = reinterpret_cast<const KSigaction*>(a[1]);
  auto* old = reinterpret_cast<KSigaction*>(a[2]);
  if (g_enabled && sig == SIGSYS) {
    KSigaction prev = g_program_sigsys;
    if (act) g_program_sigsys = *act;
    if (old) *old = prev;
    return 0;
  }
  long r;
  if (act == nullptr) {
    r = Raw(SYS_rt_sigaction, a);
  } else {
    KSigaction copy = *act;
    copy.handler = KernelHandler(sig, copy.handler);
    if (g_enabled) copy = UnderDispatch(copy);  // (patched sites only: the program's restorer)
    long b[6] = {a[0], reinterpret_cast<long>(&copy), a[2], a[3], 0, 0};
    r = Raw(SYS_rt_sigaction, b);
  }
  if (r == 0 && old != nullptr) ProgramView(old);
  return r;
}

// rt_sigaction on the program's behalf: our restorer under its handlers, SIGSYS kept, the
// fatal signals it leaves at SIG_DFL flushed (above), and the crash signals given back at the
// program's first handler on an alternate signal stack.
long Sigaction(const long* a) {
  int sig = static_cast<int>(a[0]);
  // The kernel refuses another sigset size before it reads anything (EINVAL), and a new action
  // it cannot read (EFAULT) before it checks the signal: for SIGKILL it reads the action and
  // then refuses it, which tells whether the library can read it too (a raw call's bad pointer
  // killed the process with SIGSEGV: review of stop 35).
  if (a[3] != 8) return Raw(SYS_rt_sigaction, a);
  if (a[1] != 0 && RawSyscall6(SYS_rt_sigaction, SIGKILL, a[1], 0, 8) == -EFAULT) return -EFAULT;
  if (g_flush_signals && sig > 0 && sig < 65 && (kFlushSet & SigBit(sig)))
    return FlushSigaction(sig, a);
  if (g_flush_signals && !g_crash_given_back && a[1] != 0) {
    long r = SigactionOf(a);
    KSigaction now = {};
    if (r == 0 && RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&now), 8) == 0 &&
        OnStackHandler(sig, now)) {
      SigactionStep step;
      GiveBackCrashSignals();
    }
    return r;
  }
  return SigactionOf(a);
}

// A signal mask the program passes, in a copy without SIGSYS (nullptr for none): SIGSYS is never
// blocked, by rt_sigprocmask or by the masks calls wait with (sigsuspend, ppoll, pselect6,
// epoll_pwait), or a handler run meanwhile is killed by its first trapped call (the SIGCHLD
// reaper that sigsuspends with everything else blocked).
const uint64_t* WithoutSigsys(long mask, uint64_t* copy) {
  if (mask == 0) return nullptr;
  *copy = *reinterpret_cast<const uint64_t*>(mask) & ~SigBit(SIGSYS);
  return copy;
}

// rt_sigprocmask: SIGSYS never gets blocked (WithoutSigsys).
// The mask the program runs with after the trap is the one rt_sigreturn restores from the
// signal frame: a change made in here goes there too, or the return undoes it (a blocked
// signal was delivered all the same, a signalfd's signal killed the program).
long Sigprocmask(const long* a, ucontext_t* uc) {
  long r;
  if (a[1] == 0 || (a[0] != SIG_BLOCK && a[0] != SIG_SETMASK)) {
    r = Raw(SYS_rt_sigprocmask, a);
  } else {
    uint64_t copy;
    long b[6] = {a[0], reinterpret_cast<long>(WithoutSigsys(a[1], &copy)), a[2], a[3], 0, 0};
    r = Raw(SYS_rt_sigprocmask, b);
  }
  // Whatever the result: the kernel sets the mask before it fails to write the old one out.
  uint64_t now = 0;
  if (uc != nullptr && a[1] != 0 &&
      RawSyscall6(SYS_rt_sigprocmask, SIG_BLOCK, 0, reinterpret_cast<long>(&now), 8) == 0)
    std::memcpy(&uc->uc_sigmask, &now, sizeof(now));  // the kernel's sigset: its first 8 bytes
  return r;
}

// sigaltstack: rt_sigreturn also restores the alternate stack from the signal frame, and the
// program's alternate stack is that one: inside this handler the live one may be disarmed
// (SS_AUTODISARM disarms it for the length of every handler, this one's too). So the old value
// handed back is the frame's, and a new one goes into the frame as well.
long Sigaltstack(long nr, const long* a, ucontext_t* uc) {
  stack_t before = uc->uc_stack;
  long r = RunRecorded(nr, a);
  if (r == 0 && a[1] != 0) std::memcpy(reinterpret_cast<void*>(a[1]), &before, sizeof(before));
  stack_t now;
  if (a[0] != 0 && RawSyscall6(SYS_sigaltstack, 0, reinterpret_cast<long>(&now)) == 0) {
    uc->uc_stack = now;
    NoteAltStack(now);
  }
  return r;
}

// Calls that wait with a mask of their own: see WithoutSigsys.
long WaitWithMask(long nr, const long* a) {
  long b[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
  uint64_t copy;
  struct {
    const uint64_t* set;
    size_t size;
  } pselect_mask;
  switch (nr) {
    case SYS_rt_sigsuspend:
      b[0] = reinterpret_cast<long>(WithoutSigsys(a[0], &copy));
      break;
    case SYS_ppoll:
      b[3] = reinterpret_cast<long>(WithoutSigsys(a[3], &copy));
      break;
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2:
      b[4] = reinterpret_cast<long>(WithoutSigsys(a[4], &copy));
      break;
    case SYS_pselect6:
      if (a[5] != 0) {
        std::memcpy(&pselect_mask, reinterpret_cast<const void*>(a[5]), sizeof(pselect_mask));
        pselect_mask.set = WithoutSigsys(reinterpret_cast<long>(pselect_mask.set), &copy);
        b[5] = reinterpret_cast<long>(&pselect_mask);
      }
      break;
  }
  return RunRecorded(nr, b);
}

constexpr long kCloneVm = 0x00000100;

// fork-like clones run here; the child continues on its copy of this frame.
long ForkLike(long nr, const long* a, bool* escaped) {
  if (nr == SYS_vfork) nr = SYS_fork;  // vfork's child would share this frame
  long flags = 0, stack = 0;
  if (nr == SYS_clone) {
    flags = a[0];
    stack = a[1];
  } else if (nr == SYS_clone3) {
    const auto* args = reinterpret_cast<const uint64_t*>(a[0]);
    flags = static_cast<long>(args[0]);
    stack = static_cast<long>(args[5]);
  }
  // A process sharing this one's fd table: the writer stays in it (OwnWriterTable).
  if ((flags & CLONE_FILES) && !(flags & CLONE_THREAD)) NoteFilesSharedTask();
  if ((flags & (kCloneVm | CLONE_SETTLS)) || stack != 0) {
    *escaped = true;
    // A task that would run on this thread's storage, or a process whose first instructions
    // (on its own stack) no code of the library sees: it would record as this thread, into a
    // copy of its ring or the ring itself. Foreign instead, except where this thread waits
    // meanwhile (CLONE_VM with CLONE_VFORK: libc's own spawns, system() and popen(), are such,
    // and the thread would pay a gettid per call from then on) and where the clone() wrapper
    // sees to it.
    bool vm = (flags & kCloneVm) != 0;
    // A task glibc will not count (PatchNow then never switches): not a vfork child (its parent
    // waits meanwhile), not the clone() wrapper's (which says so itself), nor the shape of
    // glibc's own threads (pthread_create's clone3 does not trap: its wrapper allows it; glibc's
    // threads of its own, as a SIGEV_THREAD timer's, are counted).
    constexpr long kGlibcThread = CLONE_THREAD | CLONE_SETTLS | CLONE_CHILD_CLEARTID;
    if (vm && !(flags & CLONE_VFORK) && !t_in_clone && (flags & kGlibcThread) != kGlibcThread)
      NoteUncountedVmTask();
    if (!(flags & CLONE_SETTLS) && !(vm && (flags & CLONE_VFORK)) && !t_in_clone) {
      ShareStorage();
      NoteSharedStorage(vm ? "a raw clone with CLONE_VM and without CLONE_SETTLS"
                           : "a raw clone of a process on a stack of its own");
    }
    // A spawn from inside libc (glibc's posix_spawn child, as popen and system use): the child
    // runs unarmed and execs with the program's environment. Without the library in it, nothing
    // the child runs is recorded: say so.
    if ((flags & CLONE_VFORK) && !EnvHasLibrary(environ)) NoteUnarmedSpawn();
    return 0;
  }
  Call c;
  bool on = BeginCall(&c);
  long r = Raw(nr, a);
  if (r == 0) {  // the child: new streams, dispatch armed again
    AfterForkChildOf((flags & CLONE_FILES) != 0);
    return 0;
  }
  if (on) {
    long k[6] = {nr == SYS_fork ? 0x11 : flags};  // SIGCHLD for fork
    EndCall(&c, nr == SYS_clone3 ? CallId::clone3 : CallId::clone, k, r);
  }
  return r;
}

// execve, and execveat (fexecve's): env_arg is the index of envp among the arguments.
long Execve(long nr, const long* a) {
  const int env_arg = nr == SYS_execveat ? 3 : 2;
  auto* envp = reinterpret_cast<char* const*>(a[env_arg]);
  int n = 0;
  for (char* const* p = envp; p && *p; ++p) ++n;
  int cap = n + 16;
  // The new environment is built in pages of its own, not on this handler's stack, which may
  // be a small alternate signal stack; an exec that succeeds takes them with the old image.
  const int buf_cap = 16384;
  size_t bytes = sizeof(char*) * static_cast<size_t>(cap) + buf_cap;
  long mem = RawSyscall6(SYS_mmap, 0, static_cast<long>(bytes), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bool have_mem = !(mem < 0 && mem > -4096);
  char** env2 = have_mem ? reinterpret_cast<char**>(mem) : nullptr;
  char* buf =
      have_mem ? reinterpret_cast<char*>(mem) + sizeof(char*) * static_cast<size_t>(cap) : nullptr;
  Call c;
  bool on = BeginCall(&c);
  int64_t start = on ? c.start : NowNs();
  bool ok = have_mem && PrepareExecEnv(envp, start, env2, cap, buf, buf_cap);
  if (t_hot.deferred) ReleaseDeferredSignals();  // not into the new image (see DeferSignal)
  FlushAllAndHold();
  if (nr == SYS_execveat)
    NoteExecAttempt(static_cast<int>(a[0]), reinterpret_cast<const char*>(a[1]));
  else
    NoteExecAttempt(AT_FDCWD, reinterpret_cast<const char*>(a[0]));
  long b[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
  if (ok) b[env_arg] = reinterpret_cast<long>(env2);
  if (ok) ExecKeepsLock(true);  // IORR_LOCK names it to the new image
  long r = Raw(nr, b);
  if (ok) ExecKeepsLock(false);
  ReleaseHeldWriter();
  NoteExecFailed();
  if (have_mem) RawSyscall6(SYS_munmap, mem, static_cast<long>(bytes));
  if (on) EndCall(&c, nr == SYS_execveat ? CallId::execveat : CallId::execve, a, r);
  return r;
}

// A call caught outside the wrappers: trapped by dispatch (uc: the trap's signal frame) or
// reached through a patched site (uc == nullptr; patch.cc). *escaped: the call must be issued
// natively instead (the selector is then ALLOW until the next recorded call); *resumed: the
// frame was redirected (rt_sigreturn).
long CaughtCall(long nr, const long* a, ucontext_t* uc, bool* escaped, bool* resumed) {
  long ret = 0;
  if (uc == nullptr) {  // a patched site: no frame to edit
    switch (nr) {
      case SYS_rt_sigreturn:
        *escaped = true;
        return 0;
      case SYS_sigaltstack: {
        ret = RunRecorded(nr, a);
        stack_t now;
        if (a[0] != 0 && RawSyscall6(SYS_sigaltstack, 0, reinterpret_cast<long>(&now)) == 0)
          NoteAltStack(now);
        return ret;
      }
      // Where dispatch is installed too (a process that switched from it, or one only partly
      // rewritten), SIGSYS must stay unblocked as below; without it, nothing to change.
      case SYS_rt_sigaction:
        return g_enabled || g_flush_signals ? Sigaction(a) : RunRecorded(nr, a);
      case SYS_rt_sigprocmask:
        return g_enabled ? Sigprocmask(a, nullptr) : RunRecorded(nr, a);
      case SYS_rt_sigsuspend:
      case SYS_ppoll:
      case SYS_pselect6:
      case SYS_epoll_pwait:
      case SYS_epoll_pwait2:
        return g_enabled ? WaitWithMask(nr, a) : RunRecorded(nr, a);
      default:
        break;
    }
  }
  switch (nr) {
    case SYS_rt_sigreturn: {
      // A handler installed while our restorer was not in place returns through libc's: go on
      // at the gate's rt_sigreturn, on the same stack, so the kernel unwinds that frame.
      greg_t* r = uc->uc_mcontext.gregs;
      r[REG_RIP] = reinterpret_cast<greg_t>(iorr_restore_rt_syscall);
      r[REG_RAX] = SYS_rt_sigreturn;
      *resumed = true;
      break;
    }
    case SYS_rt_sigaction:
      ret = Sigaction(a);
      break;
    case SYS_rt_sigprocmask:
      ret = Sigprocmask(a, uc);
      break;
    case SYS_sigaltstack:
      ret = Sigaltstack(nr, a, uc);
      break;
    case SYS_rt_sigsuspend:
    case SYS_ppoll:
    case SYS_pselect6:
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2:
      ret = WaitWithMask(nr, a);
      break;
    case SYS_fork:
    case SYS_vfork:
    case SYS_clone:
    case SYS_clone3:
      ret = ForkLike(nr, a, escaped);
      break;
    case SYS_execve:
    case SYS_execveat:
      ret = Execve(nr, a);
      break;
    case SYS_exit:  // a thread leaves; glibc's pthread_exit ends here too
      NoteThreadExit(static_cast<int>(a[0]));
      ThreadGone();
      ret = Raw(nr, a);
      break;
    case SYS_exit_group: {
      Call c;
      if (BeginCall(&c)) EndCall(&c, CallId::exit_group, a, 0);
      FlushAllAndHold();
      ReleaseProcessSlots();
      ret = Raw(nr, a);
      break;
    }
    case SYS_close:
      if (IsOwnFd(a[0])) {  // the trace's fds stay open; the program is told they closed
        Call c;
        if (BeginCall(&c)) EndCall(&c, CallId::close, a, 0);
        ret = 0;
      } else {
        ret = RunRecorded(nr, a);
      }
      break;
    case SYS_close_range:
      ret = CloseRangeKeepingOwn(static_cast<unsigned>(a[0]), static_cast<unsigned>(a[1]),
                                 static_cast<int>(a[2]));
      if (ret < 0) ret = -errno;
      break;
    case SYS_dup2:
    case SYS_dup3:
      if (IsOwnFd(a[0])) {
        ret = RecordRefused(nr, a, -EBADF);  // the library's fds (the dup wrapper)
        break;
      }
      ret = VacateFd(static_cast<int>(a[1])) ? RunRecorded(nr, a) : -EBUSY;
      break;
    case SYS_dup:
    case SYS_fcntl:
    case SYS_ioctl:
      ret = IsOwnFd(a[0]) ? RecordRefused(nr, a, -EBADF) : RunRecorded(nr, a);
      break;
    case SYS_seccomp:
    case SYS_prctl: {
      bool begun = BeginSeccompCall(nr, a);
      ret = RunRecorded(nr, a);
      EndSeccompCall(begun, ret);
      break;
    }
    case SYS_ptrace:  // a debugger's inferior-to-be: traps would stop it for the debugger
      ret = RunRecorded(nr, a);
      if (a[0] == PTRACE_TRACEME && ret == 0) OnTraceMe();
      break;
    default:
      ret = RunRecorded(nr, a);
  }
  return ret;
}

// Around a caught call (SigsysHandler, iorr_patched_syscall): the thread is inside the
// handler (t_hot.in_handler, the outermost one's frame in t_hot.handler_frame), and errno is the
// program's again afterwards.
class CaughtScope {
 public:
  explicit CaughtScope(uintptr_t frame) : saved_errno_(errno), outer_(!t_hot.in_handler) {
    t_hot.in_handler = true;
    if (outer_) t_hot.handler_frame = frame;
  }
  ~CaughtScope() {
    if (outer_) t_hot.in_handler = false;
    errno = saved_errno_;
  }
  bool outer() const { return outer_; }

 private:
  int saved_errno_;
  bool outer_;
};

void SigsysHandler(int sig, siginfo_t* info, void* vctx) {
  if (info->si_code != SYS_USER_DISPATCH) {
    ForwardSigsys(sig, info, vctx);
    return;
  }
  auto* uc = static_cast<ucontext_t*>(vctx);
  greg_t* r = uc->uc_mcontext.gregs;
  // A call after a handler's siglongjmp out of a call (the selector stays at BLOCK: see
  // iorr_handler_entry) may come from above that call's frame, though this handler's frame is
  // below it (not libc's own calls inside a function the program called after the jump).
  if (__builtin_expect(t_hot.depth != 0, 0)) LeftByLongjmp(static_cast<uintptr_t>(r[REG_RSP]));
  CaughtScope scope(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  long nr = info->si_syscall;
  long a[6] = {r[REG_RDI], r[REG_RSI], r[REG_RDX], r[REG_R10], r[REG_R8], r[REG_R9]};
  bool escaped = false;
  bool resumed = false;
  long ret = CaughtCall(nr, a, uc, &escaped, &resumed);
  if (escaped) {
    // Re-issue natively: back to the syscall instruction with its number, selector at ALLOW.
    t_hot.selector = 0;
    r[REG_RAX] = nr;
    r[REG_RIP] -= 2;
  } else if (!resumed) {
    r[REG_RAX] = ret;
    if (__builtin_expect(g_patch_from_handler, 0) && scope.outer()) {
      auto resume = static_cast<uintptr_t>(r[REG_RIP]);
      PatchFromHandler(nr, reinterpret_cast<uintptr_t>(info->si_call_addr), &resume);
      r[REG_RIP] = static_cast<greg_t>(resume);
    }
  }
}

}  // namespace

int CallTagOf(long nr) {
  int tag;
  CallOf(nr, &tag);
  return tag;
}

// A call from a patched site whose thread's selector is BLOCK (patch.cc's stub). frame: rax (the
// number; the result goes back there), r9, r8, r10, rdx, rsi, rdi. Returns 0 when the call was
// carried out, 1 when the stub must issue it natively.
extern "C" __attribute__((visibility("hidden"))) long iorr_patched_syscall(long* frame) {
  // A task on storage that is not its own reads the owner's selector: it is not armed, and the
  // call goes natively, unrecorded (see ForeignTask).
  if (ForeignTask()) return 1;
  // The site's stack pointer: 56 bytes of saved registers, the stub's rbp, its return address,
  // the site's address and the red zone above frame (see iorr_patch_entry).
  if (__builtin_expect(t_hot.depth != 0, 0))
    LeftByLongjmp(reinterpret_cast<uintptr_t>(frame) + 56 + 8 + 144);
  CaughtScope scope(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  long nr = frame[0];
  long a[6] = {frame[6], frame[5], frame[4], frame[3], frame[2], frame[1]};
  bool escaped = false, resumed = false;
  long ret = CaughtCall(nr, a, nullptr, &escaped, &resumed);
  if (escaped)
    t_hot.selector = 0;
  else
    frame[0] = ret;
  return escaped ? 1 : 0;
}

bool DispatchEnabled() { return g_enabled || PatchEnabled(); }

bool DispatchTracee() { return g_tracee; }

void DispatchBecomeTracee() {
  g_tracee = true;
  FlushSignalsRelease();
  if (!t_hot.armed) return;
  RawSyscall6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
  t_hot.armed = false;
  t_hot.selector = 0;
}

void DispatchDisarmThread() {
  if (t_hot.armed && g_enabled)
    RawSyscall6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
  t_hot.armed = true;  // the patched sites read the selector
}

namespace {
// Whether signal sig has a handler of the program's (not SIG_DFL or SIG_IGN); *cur: it.
bool HandledSignal(int sig, KSigaction* cur) {
  if (RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(cur), 8) != 0) return false;
  return cur->handler != kDfl && cur->handler != kIgn && !OurFatalHandler(*cur);
}
}  // namespace

// A tracee (PTRACE_TRACEME) is not armed: rt_sigaction goes natively, so the program's
// dispositions go back to it.
void FlushSignalsRelease() {
  if (!g_flush_signals) return;
  g_flush_signals = false;
  for (int sig : kFlushSignals) {
    KSigaction cur = {};
    if (RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&cur), 8) != 0) continue;
    if (OurFatalHandler(cur))
      RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&g_program_dfl[sig]), 0, 8);
  }
  for (int sig = 1; sig < 65; ++sig) {  // the program's handlers out from behind their stubs
    KSigaction cur = {};
    if (RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&cur), 8) != 0 ||
        !EntryHandler(cur.handler))
      continue;
    ProgramView(&cur);
    RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&cur), 0, 8);
  }
}

namespace {
// The dispositions at the library's start, read once for DispatchInstall and
// FlushSignalsInstall, which run one after the other there (each read all 64 signals: 154 of
// a recorded /bin/true's 360 system calls were rt_sigaction). DispatchInstall writes what it
// sets into it; FlushSignalsInstall, the last, drops it.
struct StartDispositions {
  KSigaction sig[65];
  uint64_t read;  // the signals read without error
  bool valid;
};
StartDispositions g_start = {};
StartDispositions& StartSignals() {
  if (!g_start.valid) {
    g_start.read = 0;
    for (int sig = 1; sig <= 64; ++sig) {
      g_start.sig[sig] = {};
      if (sig != SIGKILL && sig != SIGSTOP &&
          RawSyscall6(SYS_rt_sigaction, sig, 0, reinterpret_cast<long>(&g_start.sig[sig]), 8) == 0)
        g_start.read |= SigBit(sig);
    }
    g_start.valid = true;
  }
  return g_start;
}
}  // namespace

void FlushSignalsInstall() {
  if (g_flush_signals) return;
  StartDispositions& start = StartSignals();
  for (int sig = 1; sig <= 64; ++sig)  // a handler installed before the library started
    if ((start.read & SigBit(sig)) && OnStackHandler(sig, start.sig[sig]))
      g_crash_given_back = true;
  for (int sig : kFlushSignals) {
    if (g_crash_given_back && (kCrashSet & SigBit(sig))) continue;
    if (!(start.read & SigBit(sig))) continue;
    const KSigaction& cur = start.sig[sig];
    if (OurFatalHandler(cur)) continue;  // inherited across fork (the table came with it)
    if (cur.handler != kDfl) continue;   // the program's, or ignored
    g_program_dfl[sig] = cur;
    TakeFatalSignal(sig);
  }
  start.valid = false;
  g_flush_signals = true;
}

int DispatchUnenteredSignal() {
  for (int sig = 1; sig <= 64; ++sig) {
    // (glibc's own handlers for 32 and 33, for pthread_cancel and setuid in a process with
    // other threads: with one thread, none can send them. A program's own for those numbers
    // counts as any other handler.)
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSYS) continue;
    KSigaction cur = {};
    if (HandledSignal(sig, &cur) && !EntryHandler(cur.handler) &&
        !GlibcSignalHandler(sig, cur.handler))
      return sig;
  }
  return 0;
}

bool DispatchInstall() {
  // Our handler for SIGSYS; remember what the program had.
  StartDispositions& start = StartSignals();
  if (!(start.read & SigBit(SIGSYS))) return false;
  g_program_sigsys = start.sig[SIGSYS];
  KSigaction act = {};
  act.handler = reinterpret_cast<void*>(SigsysHandler);
  act.flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | kSaRestorer;
  act.restorer = reinterpret_cast<void*>(iorr_restore_rt);
  act.mask = 0;
  if (RawSyscall6(SYS_rt_sigaction, SIGSYS, reinterpret_cast<long>(&act), 0, 8) != 0) return false;
  start.sig[SIGSYS] = act;
  // Handlers installed before us return through libc's restorer: move them onto ours.
  for (int sig = 1; sig <= 64; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSYS || !(start.read & SigBit(sig))) continue;
    KSigaction& cur = start.sig[sig];
    if (cur.handler == kDfl || cur.handler == kIgn || OurFatalHandler(cur)) continue;
    KSigaction moved = UnderDispatch(cur);
    moved.handler = KernelHandler(sig, moved.handler);
    if (RawSyscall6(SYS_rt_sigaction, sig, reinterpret_cast<long>(&moved), 0, 8) == 0) cur = moved;
  }
  // SIGSYS must not be blocked in this thread (threads inherit the mask).
  uint64_t unblock = SigBit(SIGSYS);
  RawSyscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, reinterpret_cast<long>(&unblock), 0, 8);
  g_enabled = true;
  return true;
}

bool DispatchArmThread() {
  if (PatchEnabled() && !g_tracee) {  // the patched sites read the selector; no kernel state
    t_hot.selector = 1;
    t_hot.armed = true;
    return true;
  }
  if (!g_enabled || g_tracee) return false;
  uint64_t unblock = SigBit(SIGSYS);
  RawSyscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, reinterpret_cast<long>(&unblock), 0, 8);
  // Armed before the kernel is told: a signal handler that runs just after the prctl (a
  // pthread_kill right after pthread_create, a timer) found the thread trapping but not armed,
  // so its wrapped call's AllowSyscalls left the selector at BLOCK, the real function's system
  // call trapped too and was recorded a second time, and with threads that end at once the
  // program died of SIGSEGV in the library's thread exit (stop 40's sweep; there since
  // dispatch). Armed while not yet trapping, the selector only says what the kernel will read.
  t_hot.selector = 1;  // BLOCK
  t_hot.armed = true;
  long r = RawSyscall6(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
                       reinterpret_cast<long>(iorr_gate_start), iorr_gate_end - iorr_gate_start,
                       reinterpret_cast<long>(&t_hot.selector));
  if (r != 0) {
    t_hot.armed = false;
    t_hot.selector = 0;
  }
  return t_hot.armed;
}

}  // namespace iorr::recorder
