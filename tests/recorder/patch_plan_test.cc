// The planning of patched system call sites (recorder/patch_plan.cc) on real objects of this
// machine, mapped from their files as the loader lays them out (code and .eh_frame_hdr; nothing
// runs). Since stop 16 a candidate `0f 05` that its own function's decoding shows to be bytes of
// another instruction no longer costs a sweep of the whole object: the plans must be the same as
// with the sweep first, site for site, and objects without a system call must not be swept.
// (What the drop leaves out, in an object without any system call the sweep would see, is
// described at PlanObject.)
#include "recorder/patch_plan.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

using iorr::recorder::patch::Object;
using iorr::recorder::patch::Plan;
using iorr::recorder::patch::PlanObject;

// An ELF file's PT_LOAD segments mapped read-only at one base, as an Object.
class MappedElf {
 public:
  explicit MappedElf(const std::string& path) : path_(path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
      close(fd);
      return;
    }
    std::vector<uint8_t> head(static_cast<size_t>(st.st_size));
    if (pread(fd, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) {
      close(fd);
      return;
    }
    Elf64_Ehdr eh;
    std::memcpy(&eh, head.data(), sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phoff + eh.e_phnum * sizeof(Elf64_Phdr) > head.size()) {
      close(fd);
      return;
    }
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    std::memcpy(ph.data(), head.data() + eh.e_phoff, ph.size() * sizeof(Elf64_Phdr));
    uint64_t hi = 0;
    for (const auto& p : ph)
      if (p.p_type == PT_LOAD) hi = std::max<uint64_t>(hi, p.p_vaddr + p.p_memsz);
    size_ = (hi + 4095) & ~uint64_t{4095};
    void* base = mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      close(fd);
      return;
    }
    base_ = static_cast<uint8_t*>(base);
    o_.name = path_.c_str();
    o_.lo = UINTPTR_MAX;
    o_.map_lo = reinterpret_cast<uintptr_t>(base_);
    o_.map_hi = o_.map_lo + size_;
    for (const auto& p : ph) {
      uintptr_t lo = o_.map_lo + p.p_vaddr;
      if (p.p_type == PT_LOAD) {
        uintptr_t page = lo & ~uintptr_t{4095};
        size_t len = ((lo + p.p_filesz + 4095) & ~uintptr_t{4095}) - page;
        off_t off = static_cast<off_t>(p.p_offset - (lo - page));
        if (p.p_filesz > 0 && mmap(reinterpret_cast<void*>(page), len, PROT_READ,
                                   MAP_PRIVATE | MAP_FIXED, fd, off) == MAP_FAILED) {
          close(fd);
          return;
        }
        if ((p.p_flags & PF_X) && o_.nseg < 4) {
          o_.seg[o_.nseg++] = {lo, lo + p.p_filesz};
          o_.lo = std::min(o_.lo, lo);
          o_.hi = std::max(o_.hi, lo + p.p_filesz);
        }
      } else if (p.p_type == PT_GNU_EH_FRAME) {
        o_.eh_hdr = reinterpret_cast<const uint8_t*>(lo);
      }
    }
    close(fd);
    ok_ = o_.nseg > 0;
  }
  ~MappedElf() {
    if (base_ != nullptr) munmap(base_, size_);
  }
  MappedElf(const MappedElf&) = delete;
  MappedElf& operator=(const MappedElf&) = delete;
  bool ok() const { return ok_; }
  const Object& object() const { return o_; }

 private:
  std::string path_;
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  Object o_;
  bool ok_ = false;
};

struct Result {
  bool ok;
  std::string why;
  int skipped;
  size_t swept;
  std::vector<std::string> sites;  // "at from to keeps" relative to the object
};

Plan g_plan;

Result PlanOf(const Object& o, bool sweep_first) {
  g_plan.Reset();
  char why[256] = "";
  Result r;
  r.ok = PlanObject(o, &g_plan, why, sizeof why, sweep_first);
  r.why = why;
  r.skipped = g_plan.skipped;
  r.swept = g_plan.swept;
  for (int i = 0; i < g_plan.nsite; ++i) {
    const auto& s = g_plan.site[i];
    char text[96];
    std::snprintf(text, sizeof text, "%lx %lx %lx %d", s.at - o.map_lo, s.from - o.map_lo,
                  s.to - o.map_lo, s.keeps_syscall ? 1 : 0);
    r.sites.emplace_back(text);
  }
  return r;
}

bool Exists(const char* path) { return access(path, R_OK) == 0; }

// The same plan either way, for every object at hand (big ones included: python3, cc1).
TEST(PatchPlan, FunctionCheckFirstPlansAsTheWholeSweep) {
  const char* paths[] = {"/lib/x86_64-linux-gnu/libc.so.6",
                         "/lib64/ld-linux-x86-64.so.2",
                         "/lib/x86_64-linux-gnu/libstdc++.so.6",
                         "/lib/x86_64-linux-gnu/libpcre2-8.so.0",
                         "/lib/x86_64-linux-gnu/libselinux.so.1",
                         "/lib/x86_64-linux-gnu/libzstd.so.1",
                         "/lib/x86_64-linux-gnu/libm.so.6",
                         "/usr/bin/tar",
                         "/usr/bin/python3",
                         "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"};
  int compared = 0;
  for (const char* path : paths) {
    if (!Exists(path)) continue;
    MappedElf elf(path);
    ASSERT_TRUE(elf.ok()) << path;
    Result whole = PlanOf(elf.object(), true);
    Result quick = PlanOf(elf.object(), false);
    std::printf("%-40s %s, %zu sites, %d skipped; swept %zu KiB whole, %zu KiB with the check\n",
                path, whole.ok ? "patchable" : whole.why.c_str(), whole.sites.size(), whole.skipped,
                whole.swept >> 10, quick.swept >> 10);
    EXPECT_EQ(quick.ok, whole.ok) << path;
    EXPECT_EQ(quick.why, whole.why) << path;
    EXPECT_EQ(quick.skipped, whole.skipped) << path;
    EXPECT_EQ(quick.sites, whole.sites) << path;
    EXPECT_LE(quick.swept, whole.swept) << path;
    ++compared;
  }
  EXPECT_GE(compared, 3);
}

// Hand-made cases (tests/recorder/patch/plan_cases.c; case 2 is data_before_syscall.c, the
// program the behaviour test runs). 1: bytes 0f 05 inside an immediate, then a real openat:
// planned from the start with the sweep once the real one shows, one site, as before. 2: a
// function ending with a data byte, so that decoding from the start of the function before the
// next one runs through its real openat out of step, reading it as bytes of other instructions:
// the sweep's verdict (the openat planned, or the object refused), not a drop (that function's
// own start is not an instruction start of that decoding). 3: the same with the openat in code
// between two FDEs, after an FDE that ends with a data byte: the end of that FDE must be reached
// too.
TEST(PatchPlan, HandMadeCasesPlanAsTheWholeSweep) {
  MappedElf one(PLAN_CASE1), two(PLAN_CASE2);
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(two.ok());
  Result whole1 = PlanOf(one.object(), true), quick1 = PlanOf(one.object(), false);
  EXPECT_TRUE(whole1.ok) << whole1.why;
  EXPECT_EQ(whole1.sites.size(), 1u);
  EXPECT_EQ(quick1.ok, whole1.ok);
  EXPECT_EQ(quick1.sites, whole1.sites);
  EXPECT_EQ(quick1.skipped, whole1.skipped);
  Result whole2 = PlanOf(two.object(), true), quick2 = PlanOf(two.object(), false);
  EXPECT_TRUE(!whole2.ok || whole2.sites.size() == 1) << "the sweep lost case 2's openat";
  EXPECT_EQ(quick2.ok, whole2.ok);
  EXPECT_EQ(quick2.why, whole2.why);
  EXPECT_EQ(quick2.sites, whole2.sites);
  MappedElf three(PLAN_CASE3);
  ASSERT_TRUE(three.ok());
  Result whole3 = PlanOf(three.object(), true), quick3 = PlanOf(three.object(), false);
  EXPECT_TRUE(!whole3.ok || whole3.sites.size() == 1) << "the sweep lost case 3's openat";
  EXPECT_EQ(quick3.ok, whole3.ok);
  EXPECT_EQ(quick3.why, whole3.why);
  EXPECT_EQ(quick3.sites, whole3.sites);
}

// Objects holding the two bytes only inside other instructions are no longer swept whole; libc,
// with real system calls, still is.
TEST(PatchPlan, ObjectsWithoutSystemCallsAreNotSwept) {
  int checked = 0;
  for (const char* path : {"/usr/bin/tar", "/lib/x86_64-linux-gnu/libpcre2-8.so.0",
                           "/usr/bin/python3", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"}) {
    if (!Exists(path)) continue;
    MappedElf elf(path);
    ASSERT_TRUE(elf.ok()) << path;
    Result whole = PlanOf(elf.object(), true);
    if (whole.swept == 0) continue;  // no candidate at all in this build
    Result quick = PlanOf(elf.object(), false);
    EXPECT_TRUE(quick.sites.empty()) << path;
    EXPECT_EQ(quick.swept, 0u) << path;
    ++checked;
  }
  MappedElf libc("/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_TRUE(libc.ok());
  Result quick = PlanOf(libc.object(), false);
  EXPECT_GT(quick.swept, 0u);
  EXPECT_FALSE(quick.sites.empty());
  if (checked == 0) GTEST_SKIP() << "no object here holds 0f 05 inside another instruction";
}

}  // namespace
