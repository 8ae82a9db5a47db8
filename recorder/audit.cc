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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <time.h>

#include "recorder/valgrind.h"
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
enum Copy : uint8_t {
  kNone,
  kString,
  kIovec,
  kEight,
  kDirents,
  kRetBytes,
  kSizeBytes,
  kSockaddr,  // bind's address: as many bytes as its length says (the library reads sun_path)
};
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
        case ArgKind::kLinkTarget:  // readlink: the bytes it returned (no NUL)
          t.copy[c.nr][i] = kRetBytes;
          break;
        case ArgKind::kXattrValue:  // setxattr: the value's bytes, after a success
          t.copy[c.nr][i] = kSizeBytes;
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
  t.copy[__NR_bind][1] = kSockaddr;       // not a C string: a struct sockaddr_un holds the path
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
// SIGSYS's restorer, followed by what leads the recording library to the log (TakeOverFromAudit
// in preload.cc finds it in this module's code): a magic and the log's offset from the end of
// the magic, which the static linker fills in (no relocation at load).
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

// Ends the log: dispatch disarmed, and SIGSYS's action put back (a fork child, an exec'd image
// or a query sees the program's again). The recording library finds the log by the module's
// code, not by the handler (preload.cc, TakeOverFromAudit).
void EndLog(int nr) {
  Raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
  if (iorr_audit_log.old_sigsys_valid) {
    Raw(SYS_rt_sigaction, SIGSYS, reinterpret_cast<long>(iorr_audit_log.old_sigsys), 0, 8);
    iorr_audit_log.old_sigsys_valid = 0;
  }
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

long g_pid = 0;  // the process's, for SafeRead

// The dynamic loader's code (la_objopen): calls made from there pass the loader's own buffers
// (its paths, its stat and ELF header buffers), which are read directly. Every other caller's
// arguments (a constructor's: any pointer at all) go through process_vm_readv, a system call
// per argument; the loader's are most of the calls logged here.
uintptr_t g_loader_lo = 0, g_loader_hi = 0;
uintptr_t g_la_version_caller = 0;  // an address in the loader's code (la_version's return)

// Up to n bytes from process pid's address src, through process_vm_readv: the bytes read.
uint32_t ReadOf(long pid, void* dst, uintptr_t src, uint32_t n) {
  struct {
    void* base;
    unsigned long len;
  } local = {dst, n}, remote = {reinterpret_cast<void*>(src), n};
  long got = Raw(SYS_process_vm_readv, pid, reinterpret_cast<long>(&local), 1,
                 reinterpret_cast<long>(&remote), 1, 0);
  return got > 0 ? static_cast<uint32_t>(got) : 0;
}

// Copies up to n bytes from the program's address src, stopping at the first byte that cannot
// be read (the kernel may have refused a call before reading its arguments): bytes copied.
// direct: the loader's call, whose arguments are read as they are, up to n bytes or, for a
// string (nul), through its NUL and not a byte further (what follows may not be mapped).
uint32_t SafeRead(uint8_t* dst, long src, uint32_t n, bool direct = false, bool nul = false) {
  if (direct) {
    const auto* from = reinterpret_cast<const volatile uint8_t*>(src);
    for (uint32_t i = 0; i < n; ++i)
      if ((dst[i] = from[i]) == 0 && nul) return i + 1;
    return n;
  }
  return ReadOf(g_pid, dst, static_cast<uintptr_t>(src), n);
}

void Keep(long nr, const long* a, long ret, uint64_t t0, uint64_t t1, bool direct) {
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
    uint32_t n = 0;
    switch (kind) {
      case kString: {  // read in steps up to its NUL (at most 64 KiB, as the recording reads)
        uint32_t room = kAuditLogBytes - end;
        if (room < 16) {
          Full();
          return;
        }
        uint32_t limit = room - 8 < (1u << 16) - 1 ? room - 8 : (1u << 16) - 1;
        uint8_t* dst = iorr_audit_log.data + end;
        bool nul = false;
        while (n < limit && !nul) {
          uint32_t step = limit - n < 256 ? limit - n : 256;
          uint32_t got = SafeRead(dst + n, a[i] + n, step, direct, true);
          for (uint32_t j = 0; j < got; ++j)
            if (dst[n + j] == 0) {
              got = j;
              nul = true;
              break;
            }
          n += got;
          if (got < step && !nul) break;  // unreadable from here on
        }
        if (n == 0 && !nul) {  // nothing readable: recorded as NULL
          e->args[i] = 0;
          continue;
        }
        dst[n++] = 0;
        e->args[i] = end - at;
        e->copied = static_cast<uint16_t>(e->copied | (1u << i));
        end += (n + 7) & ~7u;
        continue;
      }
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
      case kDirents: {  // never past the buffer (its size is the next argument)
        long want = ret < a[i + 1] ? ret : a[i + 1];
        n = want > 0 ? static_cast<uint32_t>(want) : 0;
        break;
      }
      case kSizeBytes: {  // as the library reads: after a success, the size the next argument says
        long size = i + 1 < 6 ? a[i + 1] : 0;
        if (ret != 0 || size <= 0 || size > kMaxXattrValue) continue;
        n = static_cast<uint32_t>(size);
        break;
      }
      case kSockaddr: {  // as the kernel reads it: its length, when 0 < length <= 128
        long len = static_cast<int32_t>(a[i + 1]);
        if (len <= 0 || len > 128) continue;
        n = static_cast<uint32_t>(len);
        break;
      }
      case kRetBytes: {  // at most the buffer's size (the next argument), as the library reads
        long room = i + 1 < 6 ? a[i + 1] : 0;
        long want = ret < room ? ret : room;
        if (want <= 0) continue;  // nothing was written: NULL, as the library stores it
        n = want < (1 << 16) ? static_cast<uint32_t>(want) : (1u << 16);
        break;
      }
    }
    uint8_t* dst = Reserve(end, n);
    if (dst == nullptr) {
      Full();
      return;
    }
    uint32_t got = SafeRead(dst, a[i], n, direct);
    if (got == 0 && n > 0) {  // nothing readable: recorded as NULL
      e->args[i] = 0;
      continue;
    }
    for (uint32_t j = got; j < n; ++j) dst[j] = 0;  // the rest of a partly readable array
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
  if (info->si_code != 2) {  // not a trap (SYS_USER_DISPATCH): a SIGSYS sent by someone
    // SIGSYS's action was the default (la_version): end the log, put it back, and let the
    // signal do what it would have done (terminate, with a core).
    EndLog(SIGSYS + 1000);  // SIG_DFL again
    Raw(SYS_tgkill, Raw(SYS_getpid), Raw(SYS_gettid), SIGSYS);
    return;
  }
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
    case SYS_rt_sigprocmask: {
      uint64_t set = 0;
      reissue = a[1] != 0 && a[0] != SIG_UNBLOCK &&
                SafeRead(reinterpret_cast<uint8_t*>(&set), a[1], 8) == 8 &&
                (set & (1ull << (SIGSYS - 1)));
      break;
    }
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
  auto site = reinterpret_cast<uintptr_t>(info->si_call_addr);
  bool direct = site >= g_loader_lo && site < g_loader_hi;
  uint64_t t0 = keep ? Tsc() : 0;
  long ret = Raw(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  uint64_t t1 = keep ? Tsc() : 0;
  r[REG_RAX] = ret;
  if (ret >= 0 && InstallsSeccomp(nr, a)) ++iorr_audit_log.seccomp_installs;  // preload.cc
  // The handler runs with the interrupted context's mask (SA_NODEFER, no sa_mask), which its
  // rt_sigreturn puts back: a change made here goes into that context.
  if (nr == SYS_rt_sigprocmask && ret == 0 && a[1] != 0) {
    uint64_t now = 0;
    if (Raw(SYS_rt_sigprocmask, SIG_BLOCK, 0, reinterpret_cast<long>(&now), 8) == 0)
      *reinterpret_cast<uint64_t*>(&uc->uc_sigmask) = now;
  }
  if (keep) Keep(nr, a, ret, t0, t1, direct);
}

}  // namespace
}  // namespace iorr::recorder

using namespace iorr::recorder;

extern "C" __attribute__((visibility("default"))) unsigned la_version(unsigned version) {
  (void)version;
  g_la_version_caller = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  // Armed whether or not a recording library follows (the module cannot read the environment
  // without making calls of its own): without one, the log fills and then ends itself, so a
  // program run with LD_AUDIT but no recording traps a few thousand calls at most.
  // Not where SIGSYS is blocked (a trap would kill the process) or ignored (the program's
  // choice, which a handler here would undo for its children).
  // Nor on Valgrind (valgrind.h).
  uint64_t mask = 0;
  KSigaction cur = {};
  if (iorr::recorder::OnValgrind() ||
      Raw(SYS_rt_sigprocmask, SIG_BLOCK, 0, reinterpret_cast<long>(&mask), 8) != 0 ||
      (mask & (1ull << (SIGSYS - 1))) != 0 ||
      Raw(SYS_rt_sigaction, SIGSYS, 0, reinterpret_cast<long>(&cur), 8) != 0 ||
      cur.handler != nullptr)  // SIG_DFL
    return LAV_CURRENT;
  // SA_NODEFER: a signal delivered while a trapped call runs in the handler has its own
  // handler's rt_sigreturn trap here too (with SIGSYS blocked, the kernel would kill).
  KSigaction act = {reinterpret_cast<void*>(&Handler), SA_SIGINFO | SA_NODEFER | kSaRestorer,
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
  g_pid = Raw(SYS_getpid);
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

#ifdef IORR_AUDIT_CHAINED
// libiorr-audit-chained.so, the same module for a program that has audit modules of its own
// after the recorder's in LD_AUDIT (iorr record and the exec wrappers choose it then). glibc
// 2.36's dlsym path (_dl_audit_symbind_alt) moves along its list of auditors only past one that
// has la_symbind and asked for binding callbacks on either object: behind the plain module
// (neither), the program's own module's la_symbind was never called for a dlsym. This one asks
// for them on every object and gives each binding back unchanged, leaving the flags alone (a
// flag set here would reach the next module's la_symbind and its PLT hooks). Not in the plain
// module: any la_symbind makes the loader allocate a table per object's PLT (from the program's
// heap for objects dlopen'd later) and go through it at every lazy binding.
constexpr unsigned kBindFlags = LA_FLG_BINDTO | LA_FLG_BINDFROM;
extern "C" __attribute__((visibility("default"))) uintptr_t la_symbind64(ElfW(Sym) * sym, unsigned,
                                                                         uintptr_t*, uintptr_t*,
                                                                         unsigned*, const char*) {
  return sym->st_value;
}
#else
constexpr unsigned kBindFlags = 0;  // no symbol binding callbacks
#endif

// Static TLS (see audit.h): what the objects the loader adds after sizing the static TLS block
// (the program's libraries, the recording library) need of its surplus, checked as each is
// added, before any is relocated (where the loader would fail). Only at start: objects a
// program dlopens later (la_preinit has run) take dynamic TLS unless they are initial-exec,
// which the loader checks against the optional part alone, as without the module.
bool g_started = false;     // la_preinit has run
long g_self = 0;            // the process, for ReadSelf
uint64_t g_static_tls = 0;  // bytes of static TLS the added objects need
uint64_t g_tls_room = 0;    // the surplus they may take (0: the environment not read yet)
// Below this much, the environment is not even read: the recorder's tunable gives more.
constexpr uint64_t kTlsLookFrom = 4096;
// Of the surplus, what it holds beyond the optional part (glibc 2.36 adds 144 bytes per
// namespace twice over, of which the module's namespace takes its C library's part): measured
// here with the optional part at 6,144 bytes, objects marked DF_STATIC_TLS needing 7,456 bytes
// in all (a library's 7,136 beside the recording library's and libc's 320) load, 7,488 do not
// ("cannot allocate memory in static TLS block"). The check allows 1,024: an object within
// about 300 bytes of the limit runs the program again where it would have fit.
constexpr uint64_t kTlsSlack = 1024;
constexpr long kEnvCap = 4l << 20;  // /proc/self/environ and cmdline: ARG_MAX is 2 MiB here

uint32_t ReadSelf(void* dst, uintptr_t src, uint32_t n) {
  if (g_self == 0) g_self = Raw(SYS_getpid);
  return ReadOf(g_self, dst, src, n);
}

char* MapBytes(long n) {
  long r = Raw(SYS_mmap, 0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
               -1, 0);
  return r < 0 && r > -4096 ? nullptr : reinterpret_cast<char*>(r);
}

// A /proc file of the process, whole, into a fresh mapping (*out): its length, or -1.
long ReadProc(const char* path, char** out) {
  char* buf = MapBytes(kEnvCap);
  if (buf == nullptr) return -1;
  long fd =
      Raw(SYS_openat, -100 /* AT_FDCWD */, reinterpret_cast<long>(path), 02000000 /* O_CLOEXEC */);
  if (fd < 0) return -1;
  long len = 0;
  for (;;) {
    long n = Raw(SYS_read, fd, reinterpret_cast<long>(buf + len), kEnvCap - 1 - len);
    if (n == -4) continue;  // EINTR
    if (n <= 0) break;
    len += n;
    if (len >= kEnvCap - 1) {
      len = -1;  // too long to copy whole
      break;
    }
  }
  Raw(SYS_close, fd);
  *out = buf;
  return len;
}

bool StartsWith(const char* s, const char* prefix) {
  while (*prefix != 0)
    if (*s++ != *prefix++) return false;
  return true;
}

uint64_t ParseU(const char* s) {
  uint64_t v = 0;
  while (*s >= '0' && *s <= '9' && v < (1ull << 40)) v = v * 10 + static_cast<uint64_t>(*s++ - '0');
  return v;
}

uint64_t Len(const char* s) {
  uint64_t n = 0;
  while (s[n] != 0) ++n;
  return n;
}

char* Put(char* at, const char* s) {
  while (*s != 0) *at++ = *s++;
  return at;
}

char* PutU(char* at, uint64_t v) {
  char d[24];
  int n = 0;
  do d[n++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) != 0);
  while (n > 0) *at++ = d[--n];
  return at;
}

// The optional_static_tls tunable in effect: the last one GLIBC_TUNABLES gives (512 without).
uint64_t OptionalTls(const char* env, long len) {
  uint64_t v = 512;
  for (long i = 0; i < len; i += static_cast<long>(Len(env + i)) + 1) {
    const char* e = env + i;
    if (!StartsWith(e, "GLIBC_TUNABLES=")) continue;
    const char* p = e + 15;
    while (*p != 0) {
      if (StartsWith(p, kTlsTunableName) && p[Len(kTlsTunableName)] == '=')
        v = ParseU(p + Len(kTlsTunableName) + 1);
      while (*p != 0 && *p != ':') ++p;
      if (*p == ':') ++p;
    }
  }
  return v;
}

// What an earlier attempt's module said in kEnvTlsRestarts: how many times the program was run
// again, and with what room (the loader rewrites GLIBC_TUNABLES in place, keeping the first of
// two entries of a name in what the program then reads, though the last one took effect).
struct Restarts {
  uint64_t count = 0, room = 0;
};
Restarts EarlierRestarts(const char* env, long len) {
  Restarts r;
  for (long i = 0; i < len; i += static_cast<long>(Len(env + i)) + 1) {
    const char* e = env + i;
    if (!StartsWith(e, kEnvTlsRestarts) || e[Len(kEnvTlsRestarts)] != '=') continue;
    const char* p = e + Len(kEnvTlsRestarts) + 1;
    r.count = ParseU(p);
    while (*p >= '0' && *p <= '9') ++p;
    if (*p == ':') r.room = ParseU(p + 1);
  }
  return r;
}

// Runs the program again (see audit.h) with a room of twice what its objects have asked for so
// far and 8 KiB more (those still to come count in the next attempt's check), unless it has
// been run again kMaxTlsRestarts times already. Returns where it cannot: the loader goes on
// and fails as it would.
void RunAgainWithRoom(const char* env, long env_len) {
  uint64_t restarts = EarlierRestarts(env, env_len).count;
  if (restarts >= kMaxTlsRestarts) return;
  char* cmd = nullptr;
  long cmd_len = ReadProc("/proc/self/cmdline", &cmd);
  if (cmd_len <= 0) return;
  uint64_t room = (2 * g_static_tls + 8192 + 4095) & ~uint64_t{4095};
  // The new environment: the old one's strings, GLIBC_TUNABLES with the room appended (it wins
  // over any earlier value), the restart variable replaced; then both pointer arrays.
  char* strings = MapBytes(env_len + 4096);
  char** envp = reinterpret_cast<char**>(MapBytes((env_len + 4) * 8));  // ("" entries)
  char** argv = reinterpret_cast<char**>(MapBytes((cmd_len + 2) * 8));
  if (strings == nullptr || envp == nullptr || argv == nullptr) return;
  char* w = strings;
  int n = 0;
  bool tunables = false;
  for (long i = 0; i < env_len; i += static_cast<long>(Len(env + i)) + 1) {
    const char* e = env + i;
    if (StartsWith(e, kEnvTlsRestarts) && e[Len(kEnvTlsRestarts)] == '=') continue;
    envp[n++] = w;
    w = Put(w, e);
    if (StartsWith(e, "GLIBC_TUNABLES=")) {
      tunables = true;
      if (e[15] != 0) *w++ = ':';
      w = PutU(Put(Put(w, kTlsTunableName), "="), room);
    }
    *w++ = 0;
  }
  if (!tunables) {
    envp[n++] = w;
    w = PutU(Put(Put(Put(w, "GLIBC_TUNABLES="), kTlsTunableName), "="), room);
    *w++ = 0;
  }
  envp[n++] = w;
  w = Put(Put(w, kEnvTlsRestarts), "=");
  w = PutU(Put(PutU(Put(PutU(w, restarts + 1), ":"), room), ":"), g_static_tls);
  *w++ = 0;
  envp[n] = nullptr;
  int a = 0;
  for (long i = 0; i < cmd_len; i += static_cast<long>(Len(cmd + i)) + 1) argv[a++] = cmd + i;
  argv[a] = nullptr;
  // (Syscall User Dispatch and the module's SIGSYS handler end with the image.)
  Raw(SYS_execve, reinterpret_cast<long>("/proc/self/exe"), reinterpret_cast<long>(argv),
      reinterpret_cast<long>(envp));
}

void CheckStaticTls(struct link_map* map) {
  if (g_started || map->l_name == nullptr || map->l_name[0] == 0) return;  // "": the program
  ElfW(Ehdr) eh;
  if (ReadSelf(&eh, map->l_addr, sizeof(eh)) != sizeof(eh) || eh.e_ident[0] != 0x7f ||
      eh.e_ident[1] != 'E' || eh.e_ident[2] != 'L' || eh.e_ident[3] != 'F' ||
      eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum > 64)
    return;
  ElfW(Phdr) ph[64];
  uint32_t bytes = static_cast<uint32_t>(eh.e_phnum * sizeof(ElfW(Phdr)));
  if (ReadSelf(ph, map->l_addr + eh.e_phoff, bytes) != bytes) return;
  // Only an object the link editor marked as using static TLS (initial-exec accesses:
  // DF_STATIC_TLS) takes it; another's TLS is allocated per thread as it is first used.
  bool static_tls = false;
  ElfW(Dyn) dyn[64];
  for (uintptr_t at = reinterpret_cast<uintptr_t>(map->l_ld), k = 0;
       at != 0 && k < 16 && !static_tls; ++k, at += sizeof(dyn)) {
    uint32_t got = ReadSelf(dyn, at, sizeof(dyn)) / sizeof(ElfW(Dyn));
    bool end = got == 0;
    for (uint32_t j = 0; j < got && !end; ++j) {
      if (dyn[j].d_tag == DT_NULL) end = true;
      if (dyn[j].d_tag == DT_FLAGS && (dyn[j].d_un.d_val & DF_STATIC_TLS)) static_tls = true;
    }
    if (end) break;
  }
  if (!static_tls) return;
  for (int i = 0; i < eh.e_phnum; ++i) {
    if (ph[i].p_type != PT_TLS) continue;
    uint64_t align = ph[i].p_align > 1 ? ph[i].p_align : 1;
    g_static_tls = (g_static_tls + ph[i].p_memsz + align - 1) / align * align;
  }
  if (g_static_tls <= kTlsLookFrom || (g_tls_room != 0 && g_static_tls <= g_tls_room)) return;
  char* env = nullptr;
  long env_len = ReadProc("/proc/self/environ", &env);
  if (env_len < 0) return;
  uint64_t optional = OptionalTls(env, env_len), earlier = EarlierRestarts(env, env_len).room;
  g_tls_room = (optional > earlier ? optional : earlier) + kTlsSlack;
  if (g_static_tls > g_tls_room) RunAgainWithRoom(env, env_len);
  Raw(SYS_munmap, reinterpret_cast<long>(env), kEnvCap);
}

// Called by the loader for each object it adds, the loader itself among the first: the one
// whose executable segment holds la_version's caller is the loader (see g_loader_lo). Its ELF
// header and program headers are read through process_vm_readv: an object's load bias is its
// header's address only where its first segment is at address 0 (a program linked with another
// image base: nothing is mapped there). Asks for no other auditing of the object (kBindFlags).
extern "C" __attribute__((visibility("default"))) unsigned la_objopen(struct link_map* map,
                                                                      Lmid_t lmid, uintptr_t*) {
  if (map != nullptr && lmid == LM_ID_BASE) CheckStaticTls(map);
  if (g_loader_hi != 0 || map == nullptr || g_la_version_caller == 0 || g_pid == 0)
    return kBindFlags;
  ElfW(Ehdr) eh;
  if (SafeRead(reinterpret_cast<uint8_t*>(&eh), static_cast<long>(map->l_addr), sizeof(eh)) !=
          sizeof(eh) ||
      eh.e_ident[0] != 0x7f || eh.e_ident[1] != 'E' || eh.e_ident[2] != 'L' ||
      eh.e_ident[3] != 'F' || eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum > 64)
    return kBindFlags;
  ElfW(Phdr) ph[64];
  uint32_t bytes = static_cast<uint32_t>(eh.e_phnum * sizeof(ElfW(Phdr)));
  if (SafeRead(reinterpret_cast<uint8_t*>(ph), static_cast<long>(map->l_addr + eh.e_phoff),
               bytes) != bytes)
    return kBindFlags;
  for (int i = 0; i < eh.e_phnum; ++i) {
    if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X)) continue;
    uintptr_t lo = map->l_addr + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
    if (g_la_version_caller >= lo && g_la_version_caller < hi) {
      g_loader_lo = lo;
      g_loader_hi = hi;
    }
  }
  return kBindFlags;
}

// After the objects of the program's start are relocated, before their constructors: objects
// added from now on are dlopen's (CheckStaticTls).
extern "C" __attribute__((visibility("default"))) void la_preinit(uintptr_t*) { g_started = true; }
