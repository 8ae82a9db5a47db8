// Patched system call sites: completeness beyond the PLT without Syscall User Dispatch.
//
// Dispatch (dispatch.cc) makes the kernel check every system call of an armed thread, and on
// this project's machines that check alone cost `tar xf` 2 to 5% (side by side: 1.081x
// recorded against 1.121x with dispatch only). But the system call instructions of an
// ordinary dynamically linked program are all in two objects, libc and the dynamic loader (526
// and 46 in Debian 12's), and their code is ordinary compiler output. So a process that makes
// many calls (PatchLater in preload.cc) rewrites each one that can reach a call of interest
// into a jump to a stub of its own, as rr does with its syscall buffer (WriteStub below). The
// stub reads the thread's selector as the kernel's dispatch would: ALLOW (inside a wrapper, or
// not armed) makes the plain call; BLOCK calls iorr_patch_entry, which runs dispatch's switch
// (CaughtCall) without a signal.
//
// Finding and choosing the sites is patch_plan.cc's work: a site counts only where a sweep of
// the object's code (x86.cc, checked against objdump by tests/recorder/x86_decode_test.cc)
// is in step at the start of its function (.eh_frame_hdr), and the bytes a jump overwrites are
// whole movable instructions that no branch of the object enters past their first byte. Sites
// whose call number is set just before them and is of no interest (futex, rt_sigreturn, ...)
// are left alone. Where a site of interest cannot be rewritten or a decoding is not certain,
// the process keeps dispatch and nothing is rewritten. Code the loader maps later (dlopen) is
// checked at its mmap; one with system call instructions is noted as an escape.
#include <cpuid.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <initializer_list>

#include "recorder/patch_plan.h"
#include "recorder/preload.h"
#include "recorder/protocol.h"
#include "recorder/raw_syscall.h"
#include "recorder/x86.h"

// The entry from a stub (see above). On entry the stack holds the return address into the
// stub, then the site's address + 1 (pushed by the stub), then the 128 bytes of red zone the
// stub stepped over; the site's own stack pointer is 8 + 8 + 128 = 144 bytes up. The unwind
// information says so: a return to "site + 1" in the function that made the call, whose frame
// rules then apply (cancellation of a thread blocked in the call unwinds through here).
// It saves what the call and the code around the site need (rax, the number, then the result;
// r9, r8, r10, rdx, rsi, rdi) and the extended register state (the kernel preserves it across
// a system call; the library's C code and the libc functions it calls may not), calls
// iorr_patched_syscall(frame) and returns its answer in %r11. The AMX tile state is left out
// (iorr_xsave_mask): nothing the library runs uses tiles, and with it the area is 11 KiB, not
// 2.7: more than a crash handler's small alternate signal stack has room for (abort() in a
// SIGSEGV handler on an 8 KiB sigaltstack overflowed it on a Sapphire Rapids host).
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl iorr_patch_entry\n.hidden iorr_patch_entry\n.type iorr_patch_entry,@function\n"
    "iorr_patch_entry:\n"
    "  .cfi_startproc\n"
    "  .cfi_def_cfa %rsp, 144\n"
    "  .cfi_offset %rip, -136\n"
    "  pushq %rbp\n"
    "  .cfi_def_cfa_offset 152\n"
    "  .cfi_offset %rbp, -152\n"
    "  movq %rsp, %rbp\n"
    "  .cfi_def_cfa_register %rbp\n"
    "  pushq %rdi\n"
    "  pushq %rsi\n"
    "  pushq %rdx\n"
    "  pushq %r10\n"
    "  pushq %r8\n"
    "  pushq %r9\n"
    "  pushq %rax\n"
    "  subq iorr_xsave_size(%rip), %rsp\n"
    "  andq $-64, %rsp\n"
    "  cmpb $0, iorr_have_xsave(%rip)\n"
    "  je 1f\n"
    "  xorl %eax, %eax\n"  // the header must be zero before xsave (only XSTATE_BV is written)
    "  movq %rax, 512(%rsp)\n"
    "  movq %rax, 520(%rsp)\n"
    "  movq %rax, 528(%rsp)\n"
    "  movq %rax, 536(%rsp)\n"
    "  movq %rax, 544(%rsp)\n"
    "  movq %rax, 552(%rsp)\n"
    "  movq %rax, 560(%rsp)\n"
    "  movq %rax, 568(%rsp)\n"
    "  movl iorr_xsave_mask(%rip), %eax\n"
    "  movl iorr_xsave_mask+4(%rip), %edx\n"
    "  xsave64 (%rsp)\n"
    "  jmp 2f\n"
    "1:\n"
    "  fxsave64 (%rsp)\n"
    "2:\n"
    "  leaq -56(%rbp), %rdi\n"
    "  call iorr_patched_syscall\n"
    "  movq %rax, %r11\n"
    "  cmpb $0, iorr_have_xsave(%rip)\n"
    "  je 3f\n"
    "  movl iorr_xsave_mask(%rip), %eax\n"
    "  movl iorr_xsave_mask+4(%rip), %edx\n"
    "  xrstor64 (%rsp)\n"
    "  jmp 4f\n"
    "3:\n"
    "  fxrstor64 (%rsp)\n"
    "4:\n"
    "  leaq -56(%rbp), %rsp\n"
    "  popq %rax\n"
    "  popq %r9\n"
    "  popq %r8\n"
    "  popq %r10\n"
    "  popq %rdx\n"
    "  popq %rsi\n"
    "  popq %rdi\n"
    "  popq %rbp\n"
    "  .cfi_def_cfa %rsp, 144\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size iorr_patch_entry, .-iorr_patch_entry\n");

// The save area's size (set before any site is rewritten), whether xsave is usable, and the
// state components it saves (XCR0 without the tiles).
extern "C" {
__attribute__((visibility("hidden"))) uint64_t iorr_xsave_size = 512 + 64;
__attribute__((visibility("hidden"))) uint8_t iorr_have_xsave = 0;
__attribute__((visibility("hidden"))) uint64_t iorr_xsave_mask = 0;
}

namespace iorr::recorder {
namespace {
constexpr uint64_t kTileState = (uint64_t{1} << 17) | (uint64_t{1} << 18);  // XTILECFG, XTILEDATA

// The standard-form save area for the enabled components but the tiles: the legacy area and
// header (576 bytes), then each component at the offset CPUID leaf 0xD gives it.
void ChooseXsave() {
  unsigned a, b, c, d;
  __cpuid(1, a, b, c, d);
  if (!(c & (1u << 26)) || !(c & (1u << 27))) return;  // no XSAVE, or not enabled (OSXSAVE)
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  uint64_t mask = ((uint64_t{hi} << 32) | lo) & ~kTileState;
  __cpuid_count(0xd, 0, a, b, c, d);
  const uint64_t all_size = b;  // the area for every enabled component, tiles included
  uint64_t size = 512 + 64;
  for (unsigned i = 2; i < 63; ++i) {
    if (!(mask & (uint64_t{1} << i))) continue;
    __cpuid_count(0xd, i, a, b, c, d);  // a: the component's size, b: its offset
    if (a == 0 || b == 0) {  // not told (a hypervisor's filtered CPUID): all of it, as before
      mask = ~uint64_t{0};
      size = all_size;
      break;
    }
    size = std::max<uint64_t>(size, uint64_t{b} + a);
  }
  iorr_xsave_mask = mask;
  iorr_xsave_size = size + 64;  // and room to align the area to 64 bytes
  iorr_have_xsave = 1;
}
}  // namespace
}  // namespace iorr::recorder

extern "C" void iorr_patch_entry() __attribute__((visibility("hidden")));

namespace iorr::recorder {
namespace {

namespace x = x86;
using patch::Collect;
using patch::FromCache;
using patch::Identity;
using patch::kMaxSites;
using patch::Lookup;
using patch::Object;
using patch::Objects;
using patch::Plan;
using patch::PlanObject;
using patch::Publish;
using patch::Site;

bool g_patched = false;

// Stub memory within reach of a rel32 jump from [lo, hi).
uint8_t* StubMemoryNear(uintptr_t lo, uintptr_t hi, size_t size) {
  const uintptr_t step = 1 << 20;
  for (uintptr_t d = step; d < (uintptr_t{1} << 30); d += step) {
    for (int side = 0; side < 2; ++side) {
      uintptr_t want = side == 0 ? ((hi + d) & ~(step - 1)) : ((lo - d - size) & ~(step - 1));
      if (side == 1 && lo < d + size) continue;
      long r = RawSyscall6(SYS_mmap, static_cast<long>(want), static_cast<long>(size),
                           PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (r < 0 && r > -4096) continue;
      return reinterpret_cast<uint8_t*>(r);
    }
  }
  return nullptr;
}

bool Rel32(uintptr_t from_next, uintptr_t to, int32_t* out) {
  int64_t d = static_cast<int64_t>(to) - static_cast<int64_t>(from_next);
  if (d < INT32_MIN || d > INT32_MAX) return false;
  *out = static_cast<int32_t>(d);
  return true;
}

constexpr size_t kStubSize = 160;

// Writes site s's stub at st; false if a jump cannot reach.
//   [before]  cmpb $0,%fs:sel  jne slow
//   fast:  syscall (or, when the syscall's bytes stayed, jmp at)
//   tail:  [after]  jmp to
//   slow:  lea -128(%rsp),%rsp  push $at+1  call iorr_patch_entry  lea 136(%rsp),%rsp
//          test %r11d,%r11d  jnz fast  jmp tail
bool WriteStub(const Site& s, uint8_t* st, int32_t selector_off, uintptr_t* tail_out = nullptr) {
  uint8_t* p = st;
  auto put = [&](std::initializer_list<uint8_t> bytes) {
    for (uint8_t b : bytes) *p++ = b;
  };
  auto put32 = [&](int32_t v) {
    std::memcpy(p, &v, 4);
    p += 4;
  };
  auto put64 = [&](uint64_t v) {
    std::memcpy(p, &v, 8);
    p += 8;
  };
  auto jmp_to = [&](uintptr_t target) {  // jmp rel32
    *p++ = 0xe9;
    int32_t rel;
    if (!Rel32(reinterpret_cast<uintptr_t>(p) + 4, target, &rel)) return false;
    put32(rel);
    return true;
  };
  std::memcpy(p, s.before, s.nbefore);
  p += s.nbefore;
  put({0x64, 0x80, 0x3c, 0x25});  // cmpb $0, %fs:disp32
  put32(selector_off);
  put({0x00});
  put({0x75, 0});  // jne slow (rel8, below)
  uint8_t* jne_slow = p - 1;
  uint8_t* fast = p;
  if (s.keeps_syscall) {
    if (!jmp_to(s.at)) return false;
  } else {
    put({0x0f, 0x05});
  }
  uint8_t* tail = p;
  if (tail_out != nullptr) *tail_out = reinterpret_cast<uintptr_t>(tail);
  std::memcpy(p, s.after, s.nafter);
  p += s.nafter;
  if (!jmp_to(s.to)) return false;
  *jne_slow = static_cast<uint8_t>(p - (jne_slow + 1));
  put({0x48, 0x8d, 0x64, 0x24, 0x80});  // lea -0x80(%rsp), %rsp
  put({0x49, 0xbb});                    // movabs $at+1, %r11
  put64(s.at + 1);
  put({0x41, 0x53});  // push %r11
  put({0x49, 0xbb});  // movabs $iorr_patch_entry, %r11
  put64(reinterpret_cast<uint64_t>(&iorr_patch_entry));
  put({0x41, 0xff, 0xd3});                                // call *%r11
  put({0x48, 0x8d, 0xa4, 0x24, 0x88, 0x00, 0x00, 0x00});  // lea 0x88(%rsp), %rsp
  put({0x45, 0x85, 0xdb});                                // test %r11d, %r11d
  put({0x0f, 0x85});                                      // jnz fast (rel32)
  put32(static_cast<int32_t>(fast - (p + 4)));
  put({0xe9});  // jmp tail
  put32(static_cast<int32_t>(tail - (p + 4)));
  return static_cast<size_t>(p - st) <= kStubSize;
}

int32_t SelectorOffset() {
  uintptr_t fs;
  __asm__("movq %%fs:0, %0" : "=r"(fs));
  return static_cast<int32_t>(reinterpret_cast<intptr_t>(&t_hot.selector) -
                              static_cast<intptr_t>(fs));
}

// The pages of [lo, hi) that sites of the plan lie in, each run of adjacent ones copied for
// writing in one MADV_POPULATE_WRITE: the rewriting's stores would otherwise take one
// copy-on-write fault per page, 11 us each on stop 24's host against 1 to 2 us populated
// (libc: about 70 pages). Failures are left to those faults.
void PopulateSitePages(uintptr_t lo, uintptr_t hi, const Plan& plan, int first, int count) {
  uintptr_t run_lo = 0, run_hi = 0;
  auto flush = [&] {
    if (run_hi > run_lo)
      RawSyscall6(SYS_madvise, static_cast<long>(run_lo), static_cast<long>(run_hi - run_lo),
                  MADV_POPULATE_WRITE);
  };
  for (int i = 0; i < count; ++i) {
    const Site& s = plan.site[first + i];
    if (s.from < lo || s.to > hi) continue;
    uintptr_t a = s.from & ~uintptr_t{4095}, b = (s.to + 4095) & ~uintptr_t{4095};
    if (a >= run_lo && a <= run_hi) {  // inside or adjacent to the run: it grows
      run_hi = std::max(run_hi, b);
      continue;
    }
    flush();
    run_lo = a;
    run_hi = b;
  }
  flush();
}

// A trapped call the rewriting runs inside (PatchInstall's resume_at) whose thread goes on right
// after a syscall that a window covers with instructions after it: the site's syscall, and
// where the thread goes on instead, its stub's tail (the instructions after the syscall, then
// the jump back).
uintptr_t g_resume_site = 0;
uintptr_t g_resume_tail = 0;
bool g_resume_rewritten = false;  // its jump is written: the thread must go on at the tail

// Rewrites the planned sites of one object. Stubs first; then each site's jump.
bool Apply(const Object& o, const Plan& plan, int first, int count) {
  if (count == 0) return true;
  const bool populate = !UnderSeccomp();
  size_t size = (static_cast<size_t>(count) * kStubSize + 4095) & ~size_t{4095};
  uint8_t* mem = StubMemoryNear(o.lo, o.hi, size);
  if (mem == nullptr) return false;
  int32_t sel = SelectorOffset();
  for (int i = 0; i < count; ++i) {
    const Site& s = plan.site[first + i];
    uint8_t* stub = mem + static_cast<size_t>(i) * kStubSize;
    int32_t rel;
    uintptr_t tail = 0;
    if (!WriteStub(s, stub, sel, &tail) ||
        !Rel32(s.from + 5, reinterpret_cast<uintptr_t>(stub), &rel))
      return false;
    if (s.at == g_resume_site) g_resume_tail = tail;
  }
  if (RawSyscall6(SYS_mprotect, reinterpret_cast<long>(mem), static_cast<long>(size),
                  PROT_READ | PROT_EXEC) != 0) {
    RawSyscall6(SYS_munmap, reinterpret_cast<long>(mem), static_cast<long>(size));
    return false;
  }
  // Each executable segment on its own (what lies between two of them may be data, which must
  // not become executable or read-only): writable for the rewriting, then as it was.
  for (int g = 0; g < o.nseg; ++g) {
    uintptr_t page_lo = o.seg[g].lo & ~uintptr_t{4095};
    uintptr_t page_hi = (o.seg[g].hi + 4095) & ~uintptr_t{4095};
    bool any = false;
    for (int i = 0; i < count && !any; ++i)
      any = plan.site[first + i].from >= o.seg[g].lo && plan.site[first + i].to <= o.seg[g].hi;
    if (!any) continue;
    if (RawSyscall6(SYS_mprotect, static_cast<long>(page_lo), static_cast<long>(page_hi - page_lo),
                    PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
      return false;
    if (populate) PopulateSitePages(o.seg[g].lo, o.seg[g].hi, plan, first, count);
    for (int i = 0; i < count; ++i) {
      const Site& s = plan.site[first + i];
      if (s.from < o.seg[g].lo || s.to > o.seg[g].hi) continue;
      auto* at = reinterpret_cast<uint8_t*>(s.from);
      uintptr_t stub = reinterpret_cast<uintptr_t>(mem + static_cast<size_t>(i) * kStubSize);
      int32_t rel = 0;
      Rel32(s.from + 5, stub, &rel);  // in reach: checked above
      uint8_t jmp[5] = {0xe9};
      std::memcpy(jmp + 1, &rel, 4);
      std::memcpy(at, jmp, 5);
      // What is left of the overwritten instructions (a syscall's own bytes stay when the
      // jump covers instructions before it): int3, never reached.
      uintptr_t end = s.keeps_syscall ? s.at : s.to;
      for (uintptr_t b = s.from + 5; b < end; ++b) *reinterpret_cast<uint8_t*>(b) = 0xcc;
      if (s.at == g_resume_site) g_resume_rewritten = true;
    }
    RawSyscall6(SYS_mprotect, static_cast<long>(page_lo), static_cast<long>(page_hi - page_lo),
                PROT_READ | PROT_EXEC);
  }
  return true;
}

Plan g_plan;  // large: static, used once by the constructor

}  // namespace

bool PatchEnabled() { return g_patched; }

int PatchCountSyscalls(long addr, long len) {
  // A linear sweep, as objdump's, of a copy read through process_vm_readv: a mapping may run
  // past the end of its file, and reading that directly would be SIGBUS.
  uint8_t buf[8192];
  long pid = RawSyscall6(SYS_getpid);
  long done = 0;  // bytes of the mapping swept
  size_t have = 0;
  int count = 0;
  bool eof = false;
  while (done < len) {
    if (!eof && have < 16) {
      struct iovec local = {buf + have, sizeof(buf) - have};
      long want =
          std::min(static_cast<long>(sizeof(buf) - have), len - done - static_cast<long>(have));
      local.iov_len = static_cast<size_t>(want);
      struct iovec remote = {reinterpret_cast<void*>(addr + done + static_cast<long>(have)),
                             static_cast<size_t>(want)};
      long r = want > 0 ? RawSyscall6(SYS_process_vm_readv, pid, reinterpret_cast<long>(&local), 1,
                                      reinterpret_cast<long>(&remote), 1, 0)
                        : 0;
      if (r <= 0)
        eof = true;
      else
        have += static_cast<size_t>(r);
    }
    if (have == 0) break;
    size_t off = 0;
    while (off < have && (eof || have - off >= 16)) {
      x::Insn in = x::Decode(buf + off, have - off);
      size_t step = in.length > 0 ? static_cast<size_t>(in.length) : 1;
      count += in.syscall;
      off += step;
    }
    std::memmove(buf, buf + off, have - off);
    have -= off;
    done += static_cast<long>(off);
    if (eof && have == 0) break;
  }
  return count;
}

bool PatchInstall(char* why, size_t why_len, uintptr_t* resume_at) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  static Objects objs;
  objs.n = 0;
  objs.skip = reinterpret_cast<uintptr_t>(&iorr_patch_entry);
  dl_iterate_phdr(Collect, &objs);
  if (objs.overflow) {
    snprintf(why, why_len, "too many objects");
    return false;
  }
  // Code is rewritten only while no other thread can be running it: a thread of an earlier
  // library's constructor, blocked in a call, would return into the middle of a new jump.
  if (ProgramThreads() != 1) {
    snprintf(why, why_len, "threads were started before the recorder (%d)", ProgramThreads());
    return false;
  }
  ChooseXsave();  // the entry's save area (fxsave's without XSAVE)
  SharedState* sh = Shared();
  Plan& plan = g_plan;
  plan.Reset();
  int first[64], count[64];
  int decoded = 0;  // objects with system call sites decoded here (not from the cache)
  for (int k = 0; k < objs.n; ++k) {
    const Object& o = objs.o[k];
    first[k] = plan.nsite;
    PatchObject id{};
    bool known = sh != nullptr && Identity(o, &id);
    const PatchObject* e = known ? Lookup(sh, id) : nullptr;
    if (e != nullptr && !e->patchable) {
      snprintf(why, why_len, "%s", e->why);
      return false;
    }
    if (e == nullptr || !FromCache(sh->patch, *e, o, &plan)) {
      known = known && e == nullptr;  // (a decoding that did not match is not published again)
      int skipped_before = plan.skipped;
      bool ok = PlanObject(o, &plan, why, why_len);
      if (known)
        Publish(sh, id, o, plan, first[k], ok ? plan.nsite - first[k] : 0,
                plan.skipped - skipped_before, ok, ok ? "" : why);
      if (!ok) return false;
      if (plan.nsite > first[k]) ++decoded;
    }
    count[k] = plan.nsite - first[k];
  }
  // From inside a trapped call (PatchFromHandler): the thread goes on at *resume_at, which must
  // not be inside a window about to be rewritten (after a window, or at its start, is fine),
  // unless it is right after the window's own syscall: it then goes on at the stub's tail.
  g_resume_site = 0;
  g_resume_tail = 0;
  g_resume_rewritten = false;
  for (int i = 0; resume_at != nullptr && i < plan.nsite; ++i) {
    const Site& s = plan.site[i];
    if (s.from < *resume_at && *resume_at < s.to) {
      if (*resume_at != s.at + 2 || s.keeps_syscall) {
        snprintf(why, why_len, "%s", kResumeInWindow);
        return false;
      }
      g_resume_site = s.at;
    }
  }
  for (int k = 0; k < objs.n; ++k) {
    if (!Apply(objs.o[k], plan, first[k], count[k])) {
      // The objects rewritten before it keep their stubs, which record as dispatch would
      // (CaughtCall keeps SIGSYS unblocked once dispatch is installed).
      snprintf(why, why_len, "cannot rewrite %s",
               objs.o[k].name[0] ? objs.o[k].name : "the program");
      // An object rewritten before it may hold the window the trapped call goes on in.
      if (g_resume_rewritten) *resume_at = g_resume_tail;
      return false;
    }
  }
  g_patched = true;
  if (g_resume_rewritten) *resume_at = g_resume_tail;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  snprintf(why, why_len,
           "%d system call sites rewritten, %d left (calls of no interest); objects decoded here: "
           "%d, %zu KiB of code swept; %.1f ms",
           plan.nsite, plan.skipped, decoded, plan.swept >> 10,
           static_cast<double>(t1.tv_sec - t0.tv_sec) * 1e3 +
               static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e6);
  return true;
}

}  // namespace iorr::recorder
