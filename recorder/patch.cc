// Patched system call sites: completeness beyond the PLT without Syscall User Dispatch.
//
// Dispatch (dispatch.cc) makes the kernel check every system call of an armed thread, and on
// this project's machines that check alone costs about 4.6% of `tar xf` (recorded 1.095x with
// it, 1.049x with the wrappers only; tools/bench/record-overhead.sh). But the system call
// instructions of an ordinary dynamically linked program are all in two objects, libc and the
// dynamic loader (526 and 46 in Debian 12's), and their code is ordinary compiler output. So
// at start-up the library finds them and rewrites each one that can reach a call it cares
// about into a jump to a stub of its own, as rr does with its syscall buffer:
//
//   stub:  [the instruction before the syscall, when that one was overwritten]
//          cmpb $0, %fs:t_selector     the thread's selector, as dispatch reads it
//          je   raw                    ALLOW (inside a wrapper, or not armed): the plain call
//          lea  -128(%rsp), %rsp       keep out of the red zone
//          call iorr_patch_entry       records and carries out the call (dispatch's switch)
//          lea  128(%rsp), %rsp
//          test %r11d, %r11d           0: done, the result is in %rax
//          je   done
//   raw:   syscall
//   done:  [the instruction after the syscall, when that one was overwritten]
//          jmp  back
//
// A site is found with certainty: the bytes 0f 05 are decoded as an instruction only when a
// sweep from the start of the function holding them (from .eh_frame_hdr) lands on them
// (x86.cc; tests/recorder/x86_decode_test.cc checks the decoder against objdump). A site is
// rewritten by replacing the 5-byte jump over the instruction before it (when that is at least
// 5 bytes, has no RIP-relative operand and is not a branch; the syscall's own bytes stay, so a
// branch to them still makes the call) or over the syscall and the instruction after it (when
// no branch of the function lands on that one). Sites whose call number is known from a
// `mov $nr, %eax` before them and is of no interest (futex, mmap, rt_sigreturn, ...) are left
// alone. Where any site with a call of interest cannot be rewritten, a decoding is not
// certain, or any other object of the process holds a system call instruction (the sanitizer
// runtimes, libgomp, a program with its own), the process uses dispatch as before: nothing is
// patched. Objects loaded later (dlopen) are checked at their mmap; one with system call
// instructions is noted as an escape.
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
#include <initializer_list>

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
// r9, r8, r10, rdx, rsi, rdi) and the whole extended register state (the kernel preserves it
// across a system call; the library's C code and the libc functions it calls may not), calls
// iorr_patched_syscall(frame) and returns its answer in %r11.
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
    "  movl $-1, %eax\n"
    "  movl $-1, %edx\n"
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
    "  movl $-1, %eax\n"
    "  movl $-1, %edx\n"
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

// The save area's size (set before any site is rewritten) and whether xsave is usable.
extern "C" {
__attribute__((visibility("hidden"))) uint64_t iorr_xsave_size = 512 + 64;
__attribute__((visibility("hidden"))) uint8_t iorr_have_xsave = 0;
}

extern "C" void iorr_patch_entry() __attribute__((visibility("hidden")));

namespace iorr::recorder {
namespace {

namespace x = x86;

bool g_patched = false;

// Calls a patched site must reach: the table's, and those dispatch's switch handles for the
// library's own sake (processes, the library's fds).
bool Wanted(long nr) {
  if (nr < 0) return true;
  for (const auto& c : trace::kCalls)
    if (c.nr == nr) return true;
  switch (nr) {
    case SYS_close_range:
    case SYS_dup2:
    case SYS_dup3:
    case SYS_ptrace:
    case SYS_sigaltstack:
      return true;
    default:
      return false;
  }
}

// DWARF pointer encodings used by .eh_frame_hdr and FDEs (only the common ones).
constexpr uint8_t kPeOmit = 0xff;
bool ReadEncoded(const uint8_t* p, const uint8_t* end, uint8_t enc, uintptr_t data_base,
                 uintptr_t* out, const uint8_t** next) {
  if (enc == kPeOmit) return false;
  uintptr_t base = 0;
  switch (enc & 0x70) {
    case 0x00:
      base = 0;
      break;  // absptr
    case 0x10:
      base = reinterpret_cast<uintptr_t>(p);
      break;  // pcrel
    case 0x30:
      base = data_base;
      break;  // datarel
    default:
      return false;
  }
  uintptr_t v;
  switch (enc & 0x0f) {
    case 0x03: {  // udata4
      if (end - p < 4) return false;
      uint32_t u;
      std::memcpy(&u, p, 4);
      v = u;
      p += 4;
      break;
    }
    case 0x0b: {  // sdata4
      if (end - p < 4) return false;
      int32_t s;
      std::memcpy(&s, p, 4);
      v = static_cast<uintptr_t>(static_cast<intptr_t>(s));
      p += 4;
      break;
    }
    case 0x00:
    case 0x04:
    case 0x0c: {  // absptr / udata8 / sdata8
      if (end - p < 8) return false;
      uint64_t u;
      std::memcpy(&u, p, 8);
      v = u;
      p += 8;
      break;
    }
    default:
      return false;
  }
  *out = base + v;
  *next = p;
  return true;
}

uint64_t Uleb(const uint8_t*& p, const uint8_t* end) {
  uint64_t v = 0;
  int shift = 0;
  while (p < end) {
    uint8_t b = *p++;
    if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80)) break;
  }
  return v;
}

// One loaded object's code.
struct Object {
  const char* name = nullptr;
  uintptr_t lo = 0, hi = 0;  // its executable segments' span
  struct Seg {
    uintptr_t lo, hi;
  } seg[4];
  int nseg = 0;
  const uint8_t* eh_hdr = nullptr;    // .eh_frame_hdr, or nullptr
  uintptr_t map_lo = 0, map_hi = 0;   // all its segments (for reading FDEs)
  const uint8_t* build_id = nullptr;  // NT_GNU_BUILD_ID's bytes, or nullptr
  uint32_t build_id_len = 0;
};

// The object's NT_GNU_BUILD_ID note in a PT_NOTE segment.
void FindBuildId(Object* o, uintptr_t lo, size_t size) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(lo);
  const uint8_t* end = p + size;
  while (end - p >= 12) {
    uint32_t namesz, descsz, type;
    std::memcpy(&namesz, p, 4);
    std::memcpy(&descsz, p + 4, 4);
    std::memcpy(&type, p + 8, 4);
    const uint8_t* name = p + 12;
    const uint8_t* desc = name + ((namesz + 3) & ~3u);
    const uint8_t* next = desc + ((descsz + 3) & ~3u);
    if (next > end || next < p) return;
    if (type == NT_GNU_BUILD_ID && namesz == 4 && std::memcmp(name, "GNU", 4) == 0 && descsz > 0 &&
        descsz <= 32) {
      o->build_id = desc;
      o->build_id_len = descsz;
      return;
    }
    p = next;
  }
}

bool InSegs(const Object& o, uintptr_t a, size_t len) {
  for (int i = 0; i < o.nseg; ++i)
    if (a >= o.seg[i].lo && a + len <= o.seg[i].hi) return true;
  return false;
}

// The function holding `addr`: [start, end) from the FDE whose range covers it, or the code
// between the FDE before it and the next.
// *sweep_from: where to start decoding: the start of the function before it (an FDE may begin
// inside the padding before its code: glibc's signal trampoline's FDE starts one byte early, so
// that unwinders find it from a return address minus one).
bool FunctionOf(const Object& o, uintptr_t addr, uintptr_t* start, uintptr_t* end,
                uintptr_t* sweep_from) {
  const uint8_t* h = o.eh_hdr;
  if (h == nullptr || h[0] != 1) return false;
  const uint8_t* hend = reinterpret_cast<const uint8_t*>(o.map_hi);
  uint8_t ptr_enc = h[1], count_enc = h[2], table_enc = h[3];
  const uint8_t* p = h + 4;
  uintptr_t eh_frame, count;
  if (!ReadEncoded(p, hend, ptr_enc, 0, &eh_frame, &p)) return false;
  if (!ReadEncoded(p, hend, count_enc, 0, &count, &p)) return false;
  if (table_enc != 0x3b) return false;  // datarel sdata4: what binutils and lld write
  const auto* table = reinterpret_cast<const int32_t*>(p);
  if (count == 0 || reinterpret_cast<const uint8_t*>(table + 2 * count) > hend) return false;
  uintptr_t base = reinterpret_cast<uintptr_t>(h);
  // The last entry whose initial location is <= addr.
  size_t lo = 0, hi = count;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (base + static_cast<uintptr_t>(static_cast<intptr_t>(table[2 * mid])) <= addr)
      lo = mid;
    else
      hi = mid;
  }
  uintptr_t fn = base + static_cast<uintptr_t>(static_cast<intptr_t>(table[2 * lo]));
  *sweep_from =
      lo > 0 ? base + static_cast<uintptr_t>(static_cast<intptr_t>(table[2 * lo - 2])) : fn;
  if (fn > addr) return false;
  const uint8_t* fde = reinterpret_cast<const uint8_t*>(
      base + static_cast<uintptr_t>(static_cast<intptr_t>(table[2 * lo + 1])));
  if (fde < reinterpret_cast<const uint8_t*>(o.map_lo) || fde + 16 > hend) return false;
  uint32_t len, cie_off;
  std::memcpy(&len, fde, 4);
  std::memcpy(&cie_off, fde + 4, 4);
  if (len == 0xffffffff || len < 12) return false;
  const uint8_t* cie = fde + 4 - cie_off;
  if (cie < reinterpret_cast<const uint8_t*>(o.map_lo) || cie + 16 > hend) return false;
  // The CIE's augmentation says how the FDE's addresses are encoded ('R').
  const uint8_t* c = cie + 8;  // after length and id
  const uint8_t* cend = cie + 4 + [&] {
    uint32_t l;
    std::memcpy(&l, cie, 4);
    return l;
  }();
  if (cend > hend) return false;
  uint8_t version = *c++;
  const char* aug = reinterpret_cast<const char*>(c);
  size_t aug_len = strnlen(aug, static_cast<size_t>(cend - c));
  c += aug_len + 1;
  Uleb(c, cend);  // code alignment
  Uleb(c, cend);  // data alignment (signed; skipped alike)
  if (version == 1)
    ++c;
  else
    Uleb(c, cend);
  uint8_t fde_enc = 0;  // absptr
  if (aug_len > 0 && aug[0] == 'z') {
    Uleb(c, cend);
    for (size_t i = 1; i < aug_len && c < cend; ++i) {
      if (aug[i] == 'R') {
        fde_enc = *c++;
      } else if (aug[i] == 'P') {
        uint8_t penc = *c++;
        uintptr_t ignored;
        if (!ReadEncoded(c, cend, penc, 0, &ignored, &c)) return false;
      } else if (aug[i] == 'L') {
        ++c;
      } else if (aug[i] != 'S' && aug[i] != 'B') {
        return false;
      }
    }
  }
  const uint8_t* f = fde + 8;
  uintptr_t pc_begin, pc_range;
  if (!ReadEncoded(f, fde + 4 + len, fde_enc, 0, &pc_begin, &f)) return false;
  if (!ReadEncoded(f, fde + 4 + len, fde_enc & 0x0f, 0, &pc_range, &f)) return false;
  if (pc_begin != fn) return false;
  *start = pc_begin;
  *end = pc_begin + pc_range;
  if (addr >= *end) {
    // Code between two FDEs (hand-written assembly: clone's child path ends the FDE of clone
    // so that unwinding stops there): swept from the previous function's start up to the next
    // one's.
    if (lo + 1 >= count) return false;
    *end = base + static_cast<uintptr_t>(static_cast<intptr_t>(table[2 * (lo + 1)]));
    if (addr >= *end) return false;
  }
  return true;
}

// How one site is rewritten.
struct Site {
  uintptr_t at;        // the syscall instruction
  uintptr_t from;      // first byte overwritten (the jump goes here)
  uintptr_t to;        // first byte after what the stub stands for (it jumps back here)
  uint8_t before[30];  // the instructions copied before the call, if any
  uint8_t nbefore;
  uint8_t after[30];  // the instructions copied after it, if any
  uint8_t nafter;
  bool keeps_syscall;  // the jump fits in the instruction before: the syscall's bytes stay
};

constexpr int kMaxSites = 1024;
constexpr int kMaxBranches = 4096;

struct Plan {
  Site site[kMaxSites];
  int nsite = 0;
  int skipped = 0;  // sites of calls of no interest
  bool ok = true;   // false: a site of interest cannot be rewritten, or a decoding failed
  const char* why = nullptr;
  uintptr_t why_at = 0;
};

void Fail(Plan* plan, const char* why, uintptr_t at) {
  if (plan->ok) {
    plan->why = why;
    plan->why_at = at;
  }
  plan->ok = false;
}

// Plans the rewriting of the system call instruction candidate at `cand` (bytes 0f 05).
// Decodes its function; returns without a site when the bytes are not an instruction there.
//
// The jump needs 5 bytes. They are taken from a run of whole instructions around the syscall
// that the stub can run elsewhere (no branch, no RIP-relative operand, no ret/jmp) and that no
// branch of the function enters except at its first byte. Preferred: the instruction before
// alone when it is long enough (the syscall's bytes then stay, so a branch to them still makes
// the call); then the shortest run with the syscall in it.
constexpr int kMaxInsns = 16384;
struct Decoded {
  uint32_t off[kMaxInsns];  // instruction starts, from the function's start
  uint8_t len[kMaxInsns];
  bool movable[kMaxInsns];
  uintptr_t branch[kMaxBranches];
};
Decoded g_dec;  // only the constructor's thread uses it

// Every direct branch target of the object being planned, as a bitmap over its executable
// span: a window must not be entered from anywhere, a function's cold part included (a linear
// sweep of the executable segments; where it goes out of step it marks targets that are not
// real, which only forbids more).
uint64_t* g_targets = nullptr;  // mmap'd per object, bit (a - lo); then the instruction starts
uintptr_t g_targets_lo = 0, g_targets_hi = 0;
size_t g_words = 0;       // of each bitmap
int g_targets_state = 0;  // 0: not swept, 1: swept, -1: no memory (every window is refused)

void Mark(uint64_t* map, uintptr_t a) {
  uintptr_t bit = a - g_targets_lo;
  map[bit / 64] |= uint64_t{1} << (bit % 64);
}
bool Marked(const uint64_t* map, uintptr_t a) {
  if (a < g_targets_lo || a >= g_targets_hi) return false;
  uintptr_t bit = a - g_targets_lo;
  return (map[bit / 64] >> (bit % 64)) & 1;
}
// The object's linear sweep starts an instruction at a.
bool IsStart(uintptr_t a) { return g_targets_state == 1 && Marked(g_targets + g_words, a); }
// Every branch target in [lo, hi) is an instruction start of the sweep.
bool TargetsAreStarts(uintptr_t lo, uintptr_t hi) {
  for (uintptr_t a = lo; a < hi; ++a)
    if (Marked(g_targets, a) && !Marked(g_targets + g_words, a)) return false;
  return true;
}
size_t g_targets_bytes = 0;

void FreeTargets() {
  if (g_targets != nullptr)
    RawSyscall6(SYS_munmap, reinterpret_cast<long>(g_targets), static_cast<long>(g_targets_bytes));
  g_targets = nullptr;
  g_targets_state = 0;
}

void SweepTargets(const Object& o) {
  g_targets_lo = o.lo;
  g_targets_hi = o.hi;
  g_words = (o.hi - o.lo) / 64 + 1;
  g_targets_bytes = (2 * g_words * 8 + 4095) & ~size_t{4095};  // targets, then starts
  long m = RawSyscall6(SYS_mmap, 0, static_cast<long>(g_targets_bytes), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m < 0 && m > -4096) {
    g_targets_state = -1;
    return;
  }
  g_targets = reinterpret_cast<uint64_t*>(m);
  g_targets_state = 1;
  for (int i = 0; i < o.nseg; ++i) {
    for (uintptr_t pc = o.seg[i].lo; pc < o.seg[i].hi;) {
      x::Insn in = x::Decode(reinterpret_cast<const uint8_t*>(pc), o.seg[i].hi - pc);
      if (in.length == 0) {
        ++pc;
        continue;
      }
      Mark(g_targets + g_words, pc);
      pc += static_cast<uintptr_t>(in.length);
      if (!in.branch) continue;
      uintptr_t t = pc + static_cast<uintptr_t>(in.rel);
      if (t >= g_targets_lo && t < g_targets_hi) {
        uintptr_t bit = t - g_targets_lo;
        g_targets[bit / 64] |= uint64_t{1} << (bit % 64);
      }
    }
  }
}

// Whether a branch anywhere in the object lands in [lo, hi).
bool Entered(uintptr_t lo, uintptr_t hi) {
  if (g_targets_state != 1) return true;
  for (uintptr_t a = lo; a < hi; ++a) {
    if (a < g_targets_lo || a >= g_targets_hi) continue;
    uintptr_t bit = a - g_targets_lo;
    if (g_targets[bit / 64] & (uint64_t{1} << (bit % 64))) return true;
  }
  return false;
}

void PlanCandidate(const Object& o, uintptr_t cand, Plan* plan) {
  uintptr_t fn, fe, fs;
  if (!FunctionOf(o, cand, &fn, &fe, &fs) || fs > fn || !InSegs(o, fs, fe - fs)) {
    Fail(plan, "no function holds it", cand);
    return;
  }
  Decoded& d = g_dec;
  int n = 0, nbr = 0, at = -1;
  bool inside = false;  // the bytes are inside another instruction: not a system call
  long nr = -1;         // the call's number when an instruction just before sets %eax/%rax to it
  auto number_of = [](const x::Insn& in, uintptr_t pc) -> long {  // mov $nr, %eax / %rax
    const auto* b = reinterpret_cast<const uint8_t*>(pc);
    if (in.mov_eax_imm) return in.imm;
    if (in.length == 7 && b[0] == 0x48 && b[1] == 0xc7 && b[2] == 0xc0) {
      int32_t v;
      std::memcpy(&v, b + 3, 4);
      return v;
    }
    return -1;
  };
  if (IsStart(fs)) {
    // The object's sweep is in step at the start of the function: a sweep of the function
    // would find the same instructions. Only the few around the candidate are decoded again.
    if (!TargetsAreStarts(fs, fe)) {
      Fail(plan, "a branch lands inside an instruction", fs);
      return;
    }
    if (!IsStart(cand)) return;  // bytes of another instruction
    uintptr_t before[3];
    int nbefore = 0;
    for (uintptr_t a = cand; a > fs && a + 45 > cand && nbefore < 3;)
      if (IsStart(--a)) before[nbefore++] = a;
    uintptr_t list[6];
    for (int i = nbefore - 1; i >= 0; --i) list[n++] = before[i];
    at = n;
    list[n++] = cand;
    uintptr_t pc = cand;
    for (int k = 0; k < 3 && pc < fe; ++k) {  // the syscall and the 2 after it
      x::Insn in = x::Decode(reinterpret_cast<const uint8_t*>(pc), fe - pc);
      if (in.length == 0) break;
      if (k > 0) list[n++] = pc;
      pc += static_cast<uintptr_t>(in.length);
    }
    for (int i = 0; i < n; ++i) {
      x::Insn in = x::Decode(reinterpret_cast<const uint8_t*>(list[i]), fe - list[i]);
      if (in.length == 0 ||
          (i + 1 < n && list[i] + static_cast<uintptr_t>(in.length) != list[i + 1])) {
        Fail(plan, "cannot decode its function", list[i]);
        return;
      }
      d.off[i] = static_cast<uint32_t>(list[i] - fs);
      d.len[i] = static_cast<uint8_t>(in.length);
      d.movable[i] = !in.branch && !in.rip_relative && !in.ends_flow;
      if (i == at - 1) nr = number_of(in, list[i]);
    }
  } else {
    for (uintptr_t pc = fs; pc < fe;) {
      x::Insn in = x::Decode(reinterpret_cast<const uint8_t*>(pc), fe - pc);
      if (in.length == 0) {
        Fail(plan, "cannot decode its function", pc);
        return;
      }
      if (n >= kMaxInsns || (in.branch && nbr >= kMaxBranches)) {
        Fail(plan, "function too large", pc);
        return;
      }
      if (pc < cand && pc + static_cast<uintptr_t>(in.length) > cand) inside = true;
      if (in.branch)
        d.branch[nbr++] = pc + static_cast<uintptr_t>(in.length) + static_cast<uintptr_t>(in.rel);
      if (pc == cand) at = n;
      if (at < 0) nr = number_of(in, pc);  // the instruction just before the syscall
      d.off[n] = static_cast<uint32_t>(pc - fs);
      d.len[n] = static_cast<uint8_t>(in.length);
      d.movable[n] = !in.branch && !in.rip_relative && !in.ends_flow;
      ++n;
      pc += static_cast<uintptr_t>(in.length);
    }
    // A sweep that went out of step would show: every branch inside the swept code lands on the
    // start of an instruction.
    for (int i = 0; i < nbr; ++i) {
      uintptr_t t = d.branch[i];
      if (t < fs || t >= fe) continue;
      uint32_t off = static_cast<uint32_t>(t - fs);
      int lo = 0, hi = n;
      while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (d.off[mid] <= off)
          lo = mid;
        else
          hi = mid;
      }
      if (d.off[lo] != off) {
        Fail(plan, "a branch lands inside an instruction", t);
        return;
      }
    }
  }
  if (at < 0 || inside) return;  // not an instruction: bytes of others
  if (at == 0) nr = -1;
  if (nr >= 0 && !Wanted(nr)) {
    ++plan->skipped;
    return;
  }
  if (plan->nsite >= kMaxSites) {
    Fail(plan, "too many sites", cand);
    return;
  }
  // A branch lands in [lo, hi); a window never reaches back past the function's start, which
  // calls from anywhere (direct or not) may enter.
  auto entered = [&](uintptr_t lo, uintptr_t hi) { return lo < fn || Entered(lo, hi); };
  auto start = [&](int i) { return fs + d.off[i]; };
  auto end = [&](int i) { return fs + d.off[i] + d.len[i]; };
  Site s{};
  s.at = cand;
  // Instructions just before the syscall (up to 3, at least 5 bytes), when no branch enters
  // them past their first byte or lands on the syscall: the syscall's own bytes then stay, and
  // the stub goes back to them to make the call natively, in the function's own code (where
  // the unwinder finds it: cancellation unwinds through a blocked call).
  for (int nb = 1; nb <= 3 && nb <= at; ++nb) {
    bool movable = true;
    for (int i = at - nb; i < at; ++i) movable = movable && d.movable[i];
    if (!movable) break;
    uintptr_t lo = start(at - nb);
    if (cand - lo < 5) continue;
    if (entered(lo + 1, cand + 1) || cand - lo > 30) break;
    s.from = lo;
    s.to = cand + 2;
    s.nbefore = static_cast<uint8_t>(cand - lo);
    s.keeps_syscall = true;
    std::memcpy(s.before, reinterpret_cast<const uint8_t*>(s.from), s.nbefore);
    plan->site[plan->nsite++] = s;
    return;
  }
  // Runs with the syscall: up to 3 instructions before and 2 after, shortest first.
  int best_b = -1, best_a = -1;
  uintptr_t best_len = UINTPTR_MAX;
  for (int nb = 0; nb <= 3 && nb <= at; ++nb) {
    for (int na = 0; na <= 2 && at + na < n; ++na) {
      bool ok = true;
      for (int i = at - nb; i <= at + na && ok; ++i) ok = i == at || d.movable[i];
      if (!ok) continue;
      uintptr_t lo = start(at - nb), hi = end(at + na);
      if (hi - lo < 5 || hi - lo > 30 || entered(lo + 1, hi)) continue;
      if (hi - lo < best_len) {
        best_len = hi - lo;
        best_b = nb;
        best_a = na;
      }
    }
  }
  if (best_b < 0) {
    Fail(plan, "a site cannot be rewritten", cand);
    return;
  }
  s.from = start(at - best_b);
  s.to = end(at + best_a);
  s.nbefore = static_cast<uint8_t>(cand - s.from);
  std::memcpy(s.before, reinterpret_cast<const uint8_t*>(s.from), s.nbefore);
  s.nafter = static_cast<uint8_t>(s.to - (cand + 2));
  std::memcpy(s.after, reinterpret_cast<const uint8_t*>(cand + 2), s.nafter);
  plan->site[plan->nsite++] = s;
}

int Collect(struct dl_phdr_info* info, size_t, void* data);

struct Objects {
  Object o[64];
  int n = 0;
  bool overflow = false;
};

uintptr_t OwnAddress() { return reinterpret_cast<uintptr_t>(&iorr_patch_entry); }

int Collect(struct dl_phdr_info* info, size_t, void* data) {
  auto* objs = static_cast<Objects*>(data);
  if (objs->n >= 64) {
    objs->overflow = true;
    return 0;
  }
  Object o;
  o.name = info->dlpi_name;
  o.lo = UINTPTR_MAX;
  o.map_lo = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (ph.p_type == PT_LOAD) {
      if (lo < o.map_lo) o.map_lo = lo;
      if (hi > o.map_hi) o.map_hi = hi;
      if (ph.p_flags & PF_X) {
        if (o.nseg >= 4) {
          objs->overflow = true;
          return 0;
        }
        o.seg[o.nseg++] = {lo, lo + ph.p_filesz};
        if (lo < o.lo) o.lo = lo;
        if (lo + ph.p_filesz > o.hi) o.hi = lo + ph.p_filesz;
      }
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      o.eh_hdr = reinterpret_cast<const uint8_t*>(lo);
    } else if (ph.p_type == PT_NOTE && o.build_id == nullptr) {
      FindBuildId(&o, lo, ph.p_filesz);
    }
  }
  if (o.nseg == 0) return 0;
  uintptr_t own = OwnAddress();
  if (own >= o.map_lo && own < o.map_hi) return 0;  // the library itself
  uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
  if (vdso != 0 && vdso >= o.map_lo && vdso < o.map_hi) return 0;  // its calls are time calls
  objs->o[objs->n++] = o;
  return 0;
}

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
// Writes site s's stub at st (layout at the top of this file); false if a jump cannot reach.
//   [before]  cmpb $0,%fs:sel  jne slow
//   fast:  syscall (or, when the syscall's bytes stayed, jmp at)
//   tail:  [after]  jmp to
//   slow:  lea -128(%rsp),%rsp  push $at+1  call iorr_patch_entry  lea 136(%rsp),%rsp
//          test %r11d,%r11d  jnz fast  jmp tail
bool WriteStub(const Site& s, uint8_t* st, int32_t selector_off) {
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
  return static_cast<int32_t>(reinterpret_cast<intptr_t>(&t_selector) - static_cast<intptr_t>(fs));
}

// Rewrites the planned sites of one object. Stubs first; then each site's jump.
bool Apply(const Object& o, const Plan& plan, int first, int count) {
  if (count == 0) return true;
  size_t size = (static_cast<size_t>(count) * kStubSize + 4095) & ~size_t{4095};
  uint8_t* mem = StubMemoryNear(o.lo, o.hi, size);
  if (mem == nullptr) return false;
  int32_t sel = SelectorOffset();
  for (int i = 0; i < count; ++i) {
    const Site& s = plan.site[first + i];
    uint8_t* stub = mem + static_cast<size_t>(i) * kStubSize;
    int32_t rel;
    if (!WriteStub(s, stub, sel) || !Rel32(s.from + 5, reinterpret_cast<uintptr_t>(stub), &rel))
      return false;
  }
  if (RawSyscall6(SYS_mprotect, reinterpret_cast<long>(mem), static_cast<long>(size),
                  PROT_READ | PROT_EXEC) != 0) {
    RawSyscall6(SYS_munmap, reinterpret_cast<long>(mem), static_cast<long>(size));
    return false;
  }
  uintptr_t page_lo = o.lo & ~uintptr_t{4095}, page_hi = (o.hi + 4095) & ~uintptr_t{4095};
  if (RawSyscall6(SYS_mprotect, static_cast<long>(page_lo), static_cast<long>(page_hi - page_lo),
                  PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
    return false;
  for (int i = 0; i < count; ++i) {
    const Site& s = plan.site[first + i];
    auto* at = reinterpret_cast<uint8_t*>(s.from);
    uintptr_t stub = reinterpret_cast<uintptr_t>(mem + static_cast<size_t>(i) * kStubSize);
    int32_t rel = 0;
    Rel32(s.from + 5, stub, &rel);  // in reach: checked above
    uint8_t jmp[5] = {0xe9};
    std::memcpy(jmp + 1, &rel, 4);
    std::memcpy(at, jmp, 5);
    // What is left of the overwritten instructions (a syscall's own bytes stay when the jump
    // covers the instruction before it alone): int3, never reached.
    uintptr_t end = s.keeps_syscall ? s.at : s.to;
    for (uintptr_t b = s.from + 5; b < end; ++b) *reinterpret_cast<uint8_t*>(b) = 0xcc;
  }
  RawSyscall6(SYS_mprotect, static_cast<long>(page_lo), static_cast<long>(page_hi - page_lo),
              PROT_READ | PROT_EXEC);
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

namespace {

// An object's identity for the cache: its build ID and layout. False: not to be cached.
bool Identity(const Object& o, PatchObject* id) {
  if (o.build_id == nullptr) return false;
  std::memcpy(id->build_id, o.build_id, o.build_id_len);
  id->build_id_len = o.build_id_len;
  id->map_size = o.map_hi - o.map_lo;
  id->text_lo = o.lo - o.map_lo;
  id->text_hi = o.hi - o.map_lo;
  return true;
}

bool SameObject(const PatchObject& a, const PatchObject& b) {
  return a.build_id_len == b.build_id_len &&
         std::memcmp(a.build_id, b.build_id, a.build_id_len) == 0 && a.map_size == b.map_size &&
         a.text_lo == b.text_lo && a.text_hi == b.text_hi;
}

// FNV-1a of the bytes a site overwrites and of its syscall instruction.
uint32_t SiteSum(const Site& s) {
  uint32_t h = 2166136261u;
  auto mix = [&](uintptr_t lo, uintptr_t hi) {
    for (uintptr_t a = lo; a < hi; ++a) h = (h ^ *reinterpret_cast<const uint8_t*>(a)) * 16777619u;
  };
  mix(s.from, s.to);
  mix(s.at, s.at + 2);
  return h;
}

// Decodes one object: its sites are appended to plan. False (and why) when the process must
// keep dispatch because of it.
bool PlanObject(const Object& o, Plan* plan, char* why, size_t why_len) {
  FreeTargets();  // swept at the first candidate
  struct Done {
    ~Done() { FreeTargets(); }
  } done;
  for (int i = 0; i < o.nseg; ++i) {
    const auto* b = reinterpret_cast<const uint8_t*>(o.seg[i].lo);
    size_t n = o.seg[i].hi - o.seg[i].lo;
    for (const uint8_t* p = b; n >= 2;) {
      const auto* q = static_cast<const uint8_t*>(memchr(p, 0x0f, n - 1));
      if (q == nullptr) break;
      if (q[1] == 0x05) {
        if (g_targets_state == 0) SweepTargets(o);
        PlanCandidate(o, reinterpret_cast<uintptr_t>(q), plan);
        if (!plan->ok) {
          snprintf(why, why_len, "%s at %s+%#lx", plan->why, o.name[0] ? o.name : "the program",
                   static_cast<unsigned long>(plan->why_at - o.map_lo));
          return false;
        }
      }
      n -= static_cast<size_t>(q + 1 - p);
      p = q + 1;
    }
  }
  return true;
}

// Offers a decoded object to the other processes of the recording.
void Publish(SharedState* sh, const PatchObject& id, const Object& o, const Plan& plan, int first,
             int count, int skipped, bool patchable, const char* why) {
  PatchCache& c = sh->patch;
  for (auto& e : c.object) {
    uint32_t free_state = 0;
    if (!e.state.compare_exchange_strong(free_state, 1, std::memory_order_acquire)) continue;
    uint32_t at = c.next_site.fetch_add(static_cast<uint32_t>(count), std::memory_order_relaxed);
    if (at + static_cast<uint32_t>(count) > kPatchSites) {
      e.state.store(0, std::memory_order_release);  // no room: others decode it themselves
      return;
    }
    for (int i = 0; i < count; ++i) {
      const Site& s = plan.site[first + i];
      PatchSite& p = c.site[at + static_cast<uint32_t>(i)];
      p.from = static_cast<uint32_t>(s.from - o.map_lo);
      p.at = static_cast<uint32_t>(s.at - o.map_lo);
      p.to = static_cast<uint32_t>(s.to - o.map_lo);
      p.keeps_syscall = s.keeps_syscall;
      p.sum = SiteSum(s);
    }
    std::memcpy(e.build_id, id.build_id, sizeof(e.build_id));
    e.build_id_len = id.build_id_len;
    e.map_size = id.map_size;
    e.text_lo = id.text_lo;
    e.text_hi = id.text_hi;
    e.first = at;
    e.count = static_cast<uint32_t>(count);
    e.skipped = static_cast<uint32_t>(skipped);
    e.patchable = patchable ? 1 : 0;
    snprintf(e.why, sizeof(e.why), "%s", why);
    e.state.store(2, std::memory_order_release);
    return;
  }
}

// A published decoding of the object's file, or nullptr.
const PatchObject* Lookup(SharedState* sh, const PatchObject& id) {
  for (const auto& e : sh->patch.object)
    if (e.state.load(std::memory_order_acquire) == 2 && SameObject(e, id)) return &e;
  return nullptr;
}

// The sites of a published decoding, as a plan for this process's copy of the object. False
// when a site does not match this copy's bytes (then the object is decoded here).
bool FromCache(const PatchCache& c, const PatchObject& e, const Object& o, Plan* plan) {
  int first = plan->nsite;
  if (e.count > kPatchSites || e.first > kPatchSites - e.count ||
      static_cast<uint32_t>(kMaxSites - plan->nsite) < e.count)
    return false;
  for (uint32_t i = 0; i < e.count; ++i) {
    const PatchSite& p = c.site[e.first + i];
    Site s{};
    s.from = o.map_lo + p.from;
    s.at = o.map_lo + p.at;
    s.to = o.map_lo + p.to;
    s.keeps_syscall = p.keeps_syscall != 0;
    bool inside = s.from <= s.at && s.at + 2 <= s.to && s.to - s.from <= 30 &&
                  InSegs(o, s.from, s.to - s.from);
    if (!inside || *reinterpret_cast<const uint8_t*>(s.at) != 0x0f ||
        *reinterpret_cast<const uint8_t*>(s.at + 1) != 0x05 || SiteSum(s) != p.sum) {
      plan->nsite = first;
      return false;
    }
    s.nbefore = static_cast<uint8_t>(s.at - s.from);
    s.nafter = static_cast<uint8_t>(s.to - (s.at + 2));
    std::memcpy(s.before, reinterpret_cast<const uint8_t*>(s.from), s.nbefore);
    std::memcpy(s.after, reinterpret_cast<const uint8_t*>(s.at + 2), s.nafter);
    plan->site[plan->nsite++] = s;
  }
  plan->skipped += static_cast<int>(e.skipped);
  return true;
}

}  // namespace

bool PatchInstall(char* why, size_t why_len) {
  static Objects objs;
  objs.n = 0;
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
  // The entry's save area: xsave's size for the enabled state components (fxsave without it).
  unsigned a, b, c, d;
  __cpuid(1, a, b, c, d);
  if ((c & (1u << 26)) && (c & (1u << 27))) {
    __cpuid_count(0xd, 0, a, b, c, d);
    iorr_xsave_size = b + 64;
    iorr_have_xsave = 1;
  }
  SharedState* sh = Shared();
  Plan& plan = g_plan;  // (not cleared as a whole: its pages are touched only as sites fill it)
  plan.nsite = 0;
  plan.skipped = 0;
  plan.ok = true;
  plan.why = nullptr;
  int first[64], count[64];
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
    }
    count[k] = plan.nsite - first[k];
  }
  for (int k = 0; k < objs.n; ++k) {
    if (!Apply(objs.o[k], plan, first[k], count[k])) {
      // The objects rewritten before it keep their stubs, which record as dispatch would
      // (CaughtCall keeps SIGSYS unblocked once dispatch is installed).
      snprintf(why, why_len, "cannot rewrite %s",
               objs.o[k].name[0] ? objs.o[k].name : "the program");
      return false;
    }
  }
  g_patched = true;
  snprintf(why, why_len, "%d system call sites rewritten, %d left (calls of no interest)",
           plan.nsite, plan.skipped);
  return true;
}

}  // namespace iorr::recorder
