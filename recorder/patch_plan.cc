// Finding system call sites: see patch_plan.h, and patch.cc for the design.
#include "recorder/patch_plan.h"

#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "recorder/raw_syscall.h"
#include "recorder/x86.h"
#include "traces/calls.h"

namespace iorr::recorder::patch {
namespace {

namespace x = x86;

const std::atomic<bool>* g_stop = nullptr;  // PrePlan's: the launcher no longer needs it
bool Stopped() { return g_stop != nullptr && g_stop->load(std::memory_order_relaxed); }

// Calls a patched site must reach: the table's, and those dispatch's switch handles for the
// library's own sake (processes, the library's fds, the dispositions of the signals that flush
// the recording: FlushSignalsInstall).
bool Wanted(long nr) {
  if (nr < 0) return true;
  for (const auto& c : trace::detail::kShapes.at)  // not kCalls: see trace::CallShape
    if (c.nr == nr) return true;
  switch (nr) {
    case SYS_close_range:
    case SYS_dup2:
    case SYS_dup3:
    case SYS_ptrace:
    case SYS_rt_sigaction:
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
// *gap: for code between two FDEs, where the FDE before it ends (the decoding must pass there,
// as through a function's start: see ReachesStart); else 0.
bool FunctionOf(const Object& o, uintptr_t addr, uintptr_t* start, uintptr_t* end,
                uintptr_t* sweep_from, uintptr_t* gap) {
  *gap = 0;
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
    *gap = *end;
    *end = base + static_cast<uintptr_t>(static_cast<intptr_t>(table[2 * (lo + 1)]));
    if (addr >= *end) return false;
  }
  return true;
}

// Site s stands for the bytes [from, to) around its syscall: the copies of the instructions
// before and after it that the stub runs.
void SetWindow(Site* s, uintptr_t from, uintptr_t to, bool keeps_syscall) {
  s->from = from;
  s->to = to;
  s->keeps_syscall = keeps_syscall;
  s->nbefore = static_cast<uint8_t>(s->at - from);
  s->nafter = static_cast<uint8_t>(to - (s->at + 2));
  std::memcpy(s->before, reinterpret_cast<const uint8_t*>(from), s->nbefore);
  std::memcpy(s->after, reinterpret_cast<const uint8_t*>(s->at + 2), s->nafter);
}

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
// branch of the object enters except at its first byte. Preferred: up to 3 instructions just
// before the syscall (its bytes then stay, and the stub goes back to make the call there);
// then the shortest run with the syscall in it.
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
// Whether the sweep decoded every byte: else only its branch targets are used.
bool g_targets_in_step = true;
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
  g_targets_in_step = true;
  for (int i = 0; i < o.nseg; ++i) {
    for (uintptr_t pc = o.seg[i].lo, n = 0; pc < o.seg[i].hi; ++n) {
      if ((n & 0xffff) == 0 && Stopped()) {
        g_targets_state = -1;
        return;
      }
      x::Insn in = x::Decode(reinterpret_cast<const uint8_t*>(pc), o.seg[i].hi - pc);
      if (in.length == 0) {  // out of step somewhere: each function is swept on its own
        g_targets_in_step = false;
        ++pc;
        continue;
      }
      Mark(g_targets + g_words, pc);
      pc += static_cast<uintptr_t>(in.length);
      if (!in.branch) continue;
      uintptr_t t = pc + static_cast<uintptr_t>(in.rel);
      if (t >= g_targets_lo && t < g_targets_hi) Mark(g_targets, t);
    }
  }
}

// Whether a branch anywhere in the object lands in [lo, hi).
bool Entered(uintptr_t lo, uintptr_t hi) {
  if (g_targets_state != 1) return true;
  for (uintptr_t a = lo; a < hi; ++a)
    if (Marked(g_targets, a)) return true;
  return false;
}

// Whether the instruction at a (len bytes) is a no-op: padding between functions (90, or
// 0f 1f /0, after operand-size and segment prefixes).
bool Padding(uintptr_t a, int len) {
  const auto* b = reinterpret_cast<const uint8_t*>(a);
  int i = 0;
  while (i < len && (b[i] == 0x66 || b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x36 ||
                     b[i] == 0x64 || b[i] == 0x65))
    ++i;
  return (i == len - 1 && b[i] == 0x90) ||
         (i + 2 < len && b[i] == 0x0f && b[i + 1] == 0x1f && ((b[i + 2] >> 3) & 7) == 0);
}

// A function's start, where decoding from the start of the function before it passes: on an
// instruction start (pc == fn), or inside the padding before its code (glibc's signal
// trampolines' FDEs start one byte early, inside a multi-byte nop). Bytes of data at the end of
// the function before it put the decoding out of step, and a system call after them would read
// as bytes of other instructions (patch_plan_test's case 2: it went unrewritten, its calls
// unrecorded, before stop 16).
bool ReachesStart(uintptr_t pc, int len, uintptr_t fn) {
  return pc == fn || (pc < fn && pc + static_cast<uintptr_t>(len) > fn && Padding(pc, len));
}

// What a decoding from the start of the function before must pass through (ReachesStart): the
// function's start, and for code between two FDEs the end of the FDE before it (gap, 0: none).
struct Boundaries {
  uintptr_t fn, gap;
  bool fn_passed = false, gap_passed = false;
  void See(uintptr_t pc, int len) {
    fn_passed = fn_passed || ReachesStart(pc, len, fn);
    gap_passed = gap_passed || (gap != 0 && ReachesStart(pc, len, gap));
  }
  bool Passed() const { return fn_passed && (gap == 0 || gap_passed); }
  uintptr_t Missed() const { return fn_passed ? gap : fn; }
};

void PlanCandidate(const Object& o, uintptr_t cand, Plan* plan) {
  uintptr_t fn, fe, fs, gap;
  if (!FunctionOf(o, cand, &fn, &fe, &fs, &gap) || fs > fn || !InSegs(o, fs, fe - fs)) {
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
  if (g_targets_in_step && IsStart(fs)) {
    // The object's sweep is in step at the start of the function: a sweep of the function
    // would find the same instructions. Only the few around the candidate are decoded again.
    if (!TargetsAreStarts(fs, fe)) {
      Fail(plan, "a branch lands inside an instruction", fs);
      return;
    }
    auto reached = [&](uintptr_t where) {  // (see ReachesStart)
      bool r = IsStart(where);
      for (uintptr_t a = where; !r && a > fs && a + 15 > where;)
        if (IsStart(--a))
          r = ReachesStart(a, x::Decode(reinterpret_cast<const uint8_t*>(a), fe - a).length, where);
      return r;
    };
    bool fn_start = reached(fn);
    if (!fn_start || (gap != 0 && !reached(gap))) {
      Fail(plan, "its function starts inside an instruction", fn_start ? gap : fn);
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
    Boundaries bounds{fn, gap};
    for (uintptr_t pc = fs; pc < fe;) {
      x::Insn in = x::Decode(reinterpret_cast<const uint8_t*>(pc), fe - pc);
      if (in.length == 0) {
        Fail(plan, "cannot decode its function", pc);
        return;
      }
      bounds.See(pc, in.length);
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
    if (!bounds.Passed()) {
      Fail(plan, "its function starts inside an instruction", bounds.Missed());
      return;
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
    SetWindow(&s, lo, cand + 2, true);
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
  SetWindow(&s, start(at - best_b), end(at + best_a), false);
  plan->site[plan->nsite++] = s;
}

}  // namespace

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
  if (objs->skip >= o.map_lo && objs->skip < o.map_hi) return 0;  // the library itself
  uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
  if (vdso != 0 && vdso >= o.map_lo && vdso < o.map_hi) return 0;  // its calls are time calls
  objs->o[objs->n++] = o;
  return 0;
}

namespace {

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

}  // namespace

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

namespace {

// Whether the bytes 0f 05 at cand are inside another instruction by the decoding of the
// function holding them alone, from where PlanCandidate's own fallback decodes it (the start of
// the function before, fs): decoded to its end, the function's own start and every branch
// inside it landing on instruction starts, and cand not one. False when unsure (the object is
// then swept whole, as before).
constexpr int kMaxLocalTargets = 1 << 16;
bool InsideAnInstruction(const Object& o, uintptr_t cand) {
  uintptr_t fn, fe, fs, gap;
  if (!FunctionOf(o, cand, &fn, &fe, &fs, &gap) || fs > fn || !InSegs(o, fs, fe - fs)) return false;
  auto decode = [fe](uintptr_t pc) {
    return x::Decode(reinterpret_cast<const uint8_t*>(pc), fe - pc);
  };
  // Two passes, so that no function is too long (cc1 has one of 35,000 instructions): the
  // branch targets inside it, then whether each is an instruction start.
  static uintptr_t targets[kMaxLocalTargets];  // (touched only as far as used)
  int nbr = 0;
  bool inside = false;
  Boundaries bounds{fn, gap};
  for (uintptr_t pc = fs; pc < fe;) {
    x::Insn in = decode(pc);
    if (in.length == 0 || pc == cand) return false;  // undecodable, or an instruction
    bounds.See(pc, in.length);
    if (pc < cand && pc + static_cast<uintptr_t>(in.length) > cand) inside = true;
    pc += static_cast<uintptr_t>(in.length);
    if (!in.branch) continue;
    uintptr_t t = pc + static_cast<uintptr_t>(in.rel);
    if (t < fs || t >= fe) continue;
    if (nbr >= kMaxLocalTargets) return false;
    targets[nbr++] = t;
  }
  if (!inside || !bounds.Passed()) return false;
  std::sort(targets, targets + nbr);
  int i = 0;
  for (uintptr_t pc = fs; pc < fe && i < nbr;) {
    if (targets[i] < pc) return false;  // inside the instruction before pc
    while (i < nbr && targets[i] == pc) ++i;
    pc += static_cast<uintptr_t>(decode(pc).length);
  }
  return i == nbr;
}

}  // namespace

// Calls f(address) for each pair of bytes 0f 05 in the object's executable segments, in order,
// until f returns false. False when f did.
template <class F>
bool ForEachCandidate(const Object& o, F&& f) {
  for (int i = 0; i < o.nseg; ++i) {
    const auto* p = reinterpret_cast<const uint8_t*>(o.seg[i].lo);
    for (size_t n = o.seg[i].hi - o.seg[i].lo; n >= 2;) {
      const auto* q = static_cast<const uint8_t*>(memchr(p, 0x0f, n - 1));
      if (q == nullptr) break;
      n -= static_cast<size_t>(q + 1 - p);
      p = q + 1;
      if (q[1] == 0x05 && !f(reinterpret_cast<uintptr_t>(q))) return false;
    }
  }
  return true;
}

// Most objects hold the bytes 0f 05 somewhere without a system call (an immediate, a
// displacement): tar's libraries, 796 KiB of code, were swept whole for them, about 10 ms of the
// program's thread, and cc1's 20 MiB 247 ms. So the object is swept, and all its candidates
// planned as before, only once a candidate is not one that InsideAnInstruction shows to be
// bytes of another instruction: an object with a system call gets the plan it got before. One
// without any is left without the sweep, which leaves out the sweep's check that no branch from
// elsewhere in the object lands inside an instruction of those candidates' functions (a system
// call hidden by instructions that overlap, entered from another function: no compiler makes
// such code).
bool PlanObject(const Object& o, Plan* plan, char* why, size_t why_len, bool sweep_first) {
  if (ForEachCandidate(o, [&](uintptr_t c) { return !sweep_first && InsideAnInstruction(o, c); }))
    return true;  // no candidate, or none that may be a system call
  FreeTargets();
  struct Done {
    ~Done() { FreeTargets(); }
  } done;
  SweepTargets(o);
  for (int k = 0; k < o.nseg && g_targets_state == 1; ++k) plan->swept += o.seg[k].hi - o.seg[k].lo;
  if (ForEachCandidate(o, [&](uintptr_t c) {
        PlanCandidate(o, c, plan);
        return plan->ok;
      }))
    return true;
  snprintf(why, why_len, "%s at %s+%#lx", plan->why, o.name[0] ? o.name : "the program",
           static_cast<unsigned long>(plan->why_at - o.map_lo));
  return false;
}

// Offers a decoded object to the other processes of the recording.
// Entry states: 0 free, 1 claimed, 3 its identity written (being filled), 2 ready.
PatchObject* Claim(SharedState* sh, const PatchObject& id) {
  for (auto& e : sh->patch.object) {
    uint32_t free_state = 0;
    if (!e.state.compare_exchange_strong(free_state, 1, std::memory_order_acquire)) continue;
    std::memcpy(e.build_id, id.build_id, sizeof(e.build_id));
    e.build_id_len = id.build_id_len;
    e.map_size = id.map_size;
    e.text_lo = id.text_lo;
    e.text_hi = id.text_hi;
    e.state.store(3, std::memory_order_release);
    return &e;
  }
  return nullptr;
}

void Fill(SharedState* sh, PatchObject* e, const Object& o, const Plan& plan, int first, int count,
          int skipped, bool patchable, const char* why) {
  PatchCache& c = sh->patch;
  uint32_t at = c.next_site.fetch_add(static_cast<uint32_t>(count), std::memory_order_relaxed);
  if (at + static_cast<uint32_t>(count) > kPatchSites) {
    e->state.store(0, std::memory_order_release);  // no room: others decode it themselves
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
  e->first = at;
  e->count = static_cast<uint32_t>(count);
  e->skipped = static_cast<uint32_t>(skipped);
  e->patchable = patchable ? 1 : 0;
  snprintf(e->why, sizeof(e->why), "%s", why);
  e->state.store(2, std::memory_order_release);
}

void Publish(SharedState* sh, const PatchObject& id, const Object& o, const Plan& plan, int first,
             int count, int skipped, bool patchable, const char* why) {
  PatchObject* e = Claim(sh, id);
  if (e != nullptr) Fill(sh, e, o, plan, first, count, skipped, patchable, why);
}

// A published decoding of the object's file, or nullptr. One being filled (by iorr record's
// PrePlan, which starts with the program) is waited for, up to 50 ms.
const PatchObject* Lookup(SharedState* sh, const PatchObject& id) {
  for (int waited_us = 0;; waited_us += 200) {
    bool filling = false;
    for (const auto& e : sh->patch.object) {
      uint32_t st = e.state.load(std::memory_order_acquire);
      if ((st == 2 || st == 3) && SameObject(e, id)) {
        if (st == 2) return &e;
        filling = true;
      }
    }
    if (!filling || waited_us >= 50000) return nullptr;
    struct timespec ts = {0, 200000};
    RawSyscall6(SYS_nanosleep, reinterpret_cast<long>(&ts), 0);
  }
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
    bool inside = s.from <= s.at && s.at + 2 <= s.to && s.to - s.from <= 30 &&
                  InSegs(o, s.from, s.to - s.from);
    if (!inside || *reinterpret_cast<const uint8_t*>(s.at) != 0x0f ||
        *reinterpret_cast<const uint8_t*>(s.at + 1) != 0x05 || SiteSum(s) != p.sum) {
      plan->nsite = first;
      return false;
    }
    SetWindow(&s, s.from, s.to, p.keeps_syscall != 0);
    plan->site[plan->nsite++] = s;
  }
  plan->skipped += static_cast<int>(e.skipped);
  return true;
}

bool Published(const SharedState* sh, const PatchObject& id) {
  for (const auto& e : sh->patch.object)
    if (e.state.load(std::memory_order_acquire) == 2 && SameObject(e, id)) return true;
  return false;
}

void PrePlan(SharedState* sh, const std::atomic<bool>* stop) {
  g_stop = stop;
  static Objects objs;
  objs.n = 0;
  dl_iterate_phdr(Collect, &objs);
  static Plan plan;
  for (int k = 0; k < objs.n; ++k) {
    const Object& o = objs.o[k];
    if (!strstr(o.name, "/libc.so") && !strstr(o.name, "/ld-linux")) continue;
    PatchObject id{};
    if (!Identity(o, &id) || Published(sh, id)) continue;  // (kept from an earlier recording)
    PatchObject* e = Claim(sh, id);  // first: the program's first process waits for it
    if (e == nullptr) return;
    plan.Reset();
    char why[128] = "";
    bool ok = PlanObject(o, &plan, why, sizeof(why));
    if (Stopped()) return;  // (the recording is over: the entry is left as it is)
    Fill(sh, e, o, plan, 0, ok ? plan.nsite : 0, plan.skipped, ok, ok ? "" : why);
  }
}

}  // namespace iorr::recorder::patch
