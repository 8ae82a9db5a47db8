// libiorr-audit.so: catches the calls a recorded program makes before libiorr-preload.so starts
// (the dynamic loader's, other libraries' constructors'). See audit.h.
//
// Built without a C library (-nostdlib, -ffreestanding): the loader loads an audit module into
// a namespace of its own, and a C library there would be loaded, and make calls, of its own.
// Everything here is raw system calls from this module's code, which is the one region the
// dispatch armed here lets through.
#include "recorder/audit.h"

#include <link.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>

#include "traces/calls.h"

namespace iorr::recorder {
namespace {

using trace::ArgKind;

}  // namespace
}  // namespace iorr::recorder

extern "C" iorr::recorder::AuditLog iorr_audit_log __attribute__((visibility("hidden")));
iorr::recorder::AuditLog iorr_audit_log;

namespace iorr::recorder {
namespace {

// What the recording reads through each argument of each kernel call it records.
enum Copy : uint8_t { kNone, kString, kIovec, kEight, kDirents };
struct CopyTable {
  bool recorded[512];
  uint8_t copy[512][6];
};
constexpr CopyTable BuildCopyTable() {
  CopyTable t{};
  for (const auto& c : trace::kCalls) {
    if (c.nr < 0 || c.nr >= 512 || c.effect == trace::Effect::kProcess) continue;
    t.recorded[c.nr] = true;
    for (int i = 0; i < c.nargs && i < 6; ++i) {
      switch (c.args[i].kind) {
        case ArgKind::kPath:
        case ArgKind::kStr:
          t.copy[c.nr][i] = kString;
          break;
        case ArgKind::kIovec:
          t.copy[c.nr][i] = kIovec;
          break;
        case ArgKind::kOffsetPtr:
        case ArgKind::kOpenHow:
        case ArgKind::kFdPair:
          t.copy[c.nr][i] = kEight;
          break;
        default:
          break;
      }
    }
  }
  t.copy[__NR_getdents64][1] = kDirents;  // the listing the recording keeps
  return t;
}
constexpr CopyTable kCopy = BuildCopyTable();

inline long Raw(long nr, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                long a6 = 0) {
  long ret;
  register long r10 asm("r10") = a4;
  register long r8 asm("r8") = a5;
  register long r9 asm("r9") = a6;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
}

inline uint64_t Tsc() {
  uint32_t lo, hi;
  asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

constexpr unsigned long kSaRestorer = 0x04000000;  // the kernel's SA_RESTORER

// The kernel's struct sigaction (x86_64).
struct KSigaction {
  void* handler;
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

extern "C" void iorr_audit_restore_rt();
// SIGSYS's restorer, followed by what leads the recording library to the log (FindAuditLog in
// preload.cc reads it through the restorer address the kernel holds): a magic and the log's
// offset from the end of the magic, which the static linker fills in (no relocation at load).
asm(".text\n"
    ".p2align 4\n"
    "iorr_audit_restore_rt:\n"
    "  mov $15, %eax\n"
    "  syscall\n"
    "  hlt\n"
    "  .ascii \"IORRAUDT\"\n"
    "  .long iorr_audit_log - .\n");

// This module's code: from its ELF header to the end of its text (the linker's symbols).
extern "C" char __ehdr_start[] __attribute__((visibility("hidden")));
extern "C" char etext[] __attribute__((visibility("hidden")));

void EndLog(int nr) {
  Raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
  iorr_audit_log.end_reason = nr;
  iorr_audit_log.stop = 1;
}

// Room for n more bytes (8-aligned) at the end of the entry being built.
uint8_t* Reserve(uint32_t at, uint32_t n) {
  uint32_t size = (n + 7) & ~7u;
  if (at + size > kAuditLogBytes) return nullptr;
  return iorr_audit_log.data + at;
}

// The log is full: nobody took it over (no recording library), or the program made more calls
// before it started than the log holds. Dispatch ends here.
void Full() {
  ++iorr_audit_log.lost;
  EndLog(-1);
}

void Keep(long nr, const long* a, long ret, uint64_t t0, uint64_t t1) {
  uint32_t at = iorr_audit_log.used;
  if (at + sizeof(AuditEntry) > kAuditLogBytes) {
    Full();
    return;
  }
  auto* e = reinterpret_cast<AuditEntry*>(iorr_audit_log.data + at);
  uint32_t end = at + sizeof(AuditEntry);
  e->copied = 0;
  e->reserved = 0;
  e->nr = nr;
  for (int i = 0; i < 6; ++i) e->args[i] = a[i];
  e->ret = ret;
  e->start_tsc = t0;
  e->end_tsc = t1;
  bool fault = ret == -14;  // EFAULT: the recording reads nothing through the pointers
  for (int i = 0; i < 6; ++i) {
    uint8_t kind = kCopy.copy[nr][i];
    if (kind == kNone || a[i] == 0 || fault) continue;
    const auto* src = reinterpret_cast<const uint8_t*>(a[i]);
    uint32_t n = 0;
    switch (kind) {
      case kString:
        while (n < (1u << 16) && src[n] != 0) ++n;
        ++n;  // the NUL
        break;
      case kIovec: {
        long count = i + 1 < 6 ? a[i + 1] : 0;
        if (count < 0) count = 0;
        if (count > 1024) count = 1024;
        n = static_cast<uint32_t>(count) * 16;
        break;
      }
      case kEight:
        n = 8;
        break;
      case kDirents:
        n = ret > 0 ? static_cast<uint32_t>(ret) : 0;
        break;
    }
    uint8_t* dst = Reserve(end, n);
    if (dst == nullptr) {
      Full();
      return;
    }
    for (uint32_t j = 0; j < n; ++j) dst[j] = src[j];
    e->args[i] = end - at;
    e->copied = static_cast<uint16_t>(e->copied | (1u << i));
    end += (n + 7) & ~7u;
  }
  e->size = end - at;
  iorr_audit_log.used = end;
  ++iorr_audit_log.entries;
}

void Handler(int, siginfo_t* info, void* ctx) {
  auto* uc = static_cast<ucontext_t*>(ctx);
  greg_t* r = uc->uc_mcontext.gregs;
  long nr = info->si_syscall;
  long a[6] = {r[REG_RDI], r[REG_RSI], r[REG_RDX], r[REG_R10], r[REG_R8], r[REG_R9]};
  // Calls that cannot be made from here (a new task or image would start in this handler's
  // frame or on another stack; a signal return would return from this handler), or after
  // which traps could no longer be taken (SIGSYS blocked, or handled by someone else): the
  // log ends, dispatch is disarmed, and the call is made again where the program made it.
  bool reissue = false;
  switch (nr) {
    case SYS_clone:
    case SYS_clone3:
    case SYS_fork:
    case SYS_vfork:
    case SYS_execve:
    case SYS_execveat:
    case SYS_rt_sigreturn:
      reissue = true;
      break;
    case SYS_rt_sigaction:
      reissue = a[0] == SIGSYS && a[1] != 0;  // a new handler: a query is made here
      break;
    case SYS_rt_sigprocmask:
      reissue = a[1] != 0 && a[0] != SIG_UNBLOCK &&
                (*reinterpret_cast<const uint64_t*>(a[1]) & (1ull << (SIGSYS - 1)));
      break;
    default:
      break;
  }
  if (reissue) {
    EndLog(static_cast<int>(nr));
    r[REG_RIP] -= 2;  // the syscall instruction
    r[REG_RAX] = nr;
    return;
  }
  bool keep = !iorr_audit_log.stop && nr >= 0 && nr < 512 && kCopy.recorded[nr];
  uint64_t t0 = keep ? Tsc() : 0;
  long ret = Raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  uint64_t t1 = keep ? Tsc() : 0;
  r[REG_RAX] = ret;
  if (keep) Keep(nr, a, ret, t0, t1);
}

}  // namespace
}  // namespace iorr::recorder

using namespace iorr::recorder;

extern "C" __attribute__((visibility("default"))) unsigned la_version(unsigned version) {
  (void)version;
  // Armed whether or not a recording library follows (the module cannot read the environment
  // without making calls of its own): without one, the log fills and then ends itself, so a
  // program run with LD_AUDIT but no recording traps a few thousand calls at most.
  KSigaction act = {reinterpret_cast<void*>(&Handler), SA_SIGINFO | kSaRestorer,
                    iorr_audit_restore_rt, 0};
  KSigaction old = {};
  if (Raw(SYS_rt_sigaction, SIGSYS, reinterpret_cast<long>(&act), reinterpret_cast<long>(&old),
          8) != 0)
    return LAV_CURRENT;
  iorr_audit_log.old_sigsys[0] = reinterpret_cast<uint64_t>(old.handler);
  iorr_audit_log.old_sigsys[1] = old.flags;
  iorr_audit_log.old_sigsys[2] = reinterpret_cast<uint64_t>(old.restorer);
  iorr_audit_log.old_sigsys[3] = old.mask;
  iorr_audit_log.old_sigsys_valid = 1;
  struct timespec ts;
  Raw(SYS_clock_gettime, CLOCK_MONOTONIC, reinterpret_cast<long>(&ts));
  iorr_audit_log.armed_tsc = Tsc();
  iorr_audit_log.armed_ns = ts.tv_sec * 1000000000ll + ts.tv_nsec;
  long begin = reinterpret_cast<long>(__ehdr_start);
  long len = reinterpret_cast<long>(etext) - begin;
  if (Raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, begin, len, 0) != 0) {
    Raw(SYS_rt_sigaction, SIGSYS, reinterpret_cast<long>(&old), 0, 8);
    iorr_audit_log.old_sigsys_valid = 0;
    return LAV_CURRENT;
  }
  iorr_audit_log.magic = kAuditMagic;
  return LAV_CURRENT;
}
