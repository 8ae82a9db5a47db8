// The recorder's x86-64 length decoder (recorder/x86.cc), which decides where the system call
// instructions of loaded code are before they are rewritten: every instruction boundary of the
// system's libraries must be objdump's, and a few encodings are checked byte by byte.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "recorder/x86.h"

namespace {

using iorr::recorder::x86::Decode;
using iorr::recorder::x86::Insn;

int Len(std::vector<uint8_t> b) { return Decode(b.data(), b.size()).length; }

TEST(X86Decode, Encodings) {
  EXPECT_EQ(Len({0x0f, 0x05}), 2);  // syscall
  EXPECT_TRUE(Decode(std::vector<uint8_t>{0x0f, 0x05}.data(), 2).syscall);
  EXPECT_EQ(Len({0xb8, 0x01, 0x01, 0x00, 0x00}), 5);  // mov $257, %eax
  Insn mov = Decode(std::vector<uint8_t>{0xb8, 0x01, 0x01, 0x00, 0x00}.data(), 5);
  EXPECT_TRUE(mov.mov_eax_imm);
  EXPECT_EQ(mov.imm, 257u);
  EXPECT_FALSE(Decode(std::vector<uint8_t>{0x41, 0xb8, 1, 0, 0, 0}.data(), 6).mov_eax_imm);  // %r8d
  EXPECT_EQ(Len({0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}), 10);       // movabs $imm64, %rax
  EXPECT_EQ(Len({0x66, 0xb8, 1, 2}), 4);                          // mov $imm16, %ax
  EXPECT_EQ(Len({0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff}), 6);        // cmp $-4096, %rax
  EXPECT_EQ(Len({0xc5, 0xf8, 0x77}), 3);                          // vzeroupper: no ModRM
  EXPECT_EQ(Len({0xc5, 0xfd, 0x74, 0x0f}), 4);                    // vpcmpeqb (%rdi), %ymm0, %ymm1
  EXPECT_EQ(Len({0xc4, 0xe3, 0x7d, 0x39, 0xc1, 0x01}), 6);        // vextracti128 $1 (map 3: imm8)
  EXPECT_EQ(Len({0x62, 0xe1, 0xfe, 0x28, 0x6f, 0x47, 0x01}), 7);  // vmovdqu64 0x20(%rdi) (disp8)
  EXPECT_EQ(Len({0xf6, 0x07, 0x01}), 3);                          // testb $1, (%rdi)
  EXPECT_EQ(Len({0xf6, 0x1f}), 2);                                // negb (%rdi): no immediate
  EXPECT_EQ(Len({0xf7, 0x07, 1, 0, 0, 0}), 6);                    // testl $1, (%rdi)
  EXPECT_EQ(Len({0x8b, 0x04, 0x25, 0, 0, 0, 0}), 7);              // mov 0x0, %eax (SIB, disp32)
  EXPECT_EQ(Len({0x8b, 0x05, 0, 0, 0, 0}), 6);                    // mov 0x0(%rip), %eax
  EXPECT_TRUE(Decode(std::vector<uint8_t>{0x8b, 0x05, 0, 0, 0, 0}.data(), 6).rip_relative);
  EXPECT_EQ(Len({0x64, 0x80, 0x3c, 0x25, 0, 0, 0, 0, 0}), 9);  // cmpb $0, %fs:0
  EXPECT_EQ(Len({0xf3, 0x0f, 0x1e, 0xfa}), 4);                 // endbr64
  EXPECT_EQ(Len({0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08}), 6);     // palignr $8
  EXPECT_EQ(Len({0xc8, 0x10, 0x00, 0x00}), 4);                 // enter $16, $0
  Insn jmp = Decode(std::vector<uint8_t>{0xe9, 0xfb, 0xff, 0xff, 0xff}.data(), 5);
  EXPECT_EQ(jmp.length, 5);
  EXPECT_TRUE(jmp.branch);
  EXPECT_TRUE(jmp.ends_flow);
  EXPECT_EQ(jmp.rel, -5);
  Insn jcc = Decode(std::vector<uint8_t>{0x0f, 0x84, 0x10, 0, 0, 0}.data(), 6);
  EXPECT_TRUE(jcc.branch);
  EXPECT_FALSE(jcc.ends_flow);
  EXPECT_EQ(jcc.rel, 16);
  // Never past the bytes given.
  EXPECT_EQ(Len({0x48, 0xb8, 1, 2, 3}), 0);
  EXPECT_EQ(Len({0x0f}), 0);
  EXPECT_EQ(Len({0xc4, 0xe3}), 0);
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Instruction starts in the executable sections, by a linear sweep of each section (as objdump
// does); also counts syscall instructions.
// after_fwait: starts right after an fwait (9b), which objdump shows as one instruction with
// an x87 instruction after it, and alone otherwise.
std::set<uint64_t> Sweep(const std::vector<uint8_t>& f, int* syscalls, int* failures,
                         std::set<uint64_t>* after_fwait) {
  std::set<uint64_t> out;
  auto* eh = reinterpret_cast<const Elf64_Ehdr*>(f.data());
  auto* sh = reinterpret_cast<const Elf64_Shdr*>(f.data() + eh->e_shoff);
  for (int s = 0; s < eh->e_shnum; ++s) {
    if (!(sh[s].sh_flags & SHF_EXECINSTR) || sh[s].sh_type != SHT_PROGBITS) continue;
    const uint8_t* p = f.data() + sh[s].sh_offset;
    size_t n = sh[s].sh_size;
    for (size_t off = 0; off < n;) {
      Insn in = Decode(p + off, n - off);
      if (in.length == 0) {
        ++*failures;
        ++off;
        continue;
      }
      out.insert(sh[s].sh_addr + off);
      if (off > 0 && p[off - 1] == 0x9b) after_fwait->insert(sh[s].sh_addr + off);
      *syscalls += in.syscall;
      off += static_cast<size_t>(in.length);
    }
  }
  return out;
}

std::set<uint64_t> Objdump(const std::string& path, int* syscalls) {
  std::set<uint64_t> out;
  std::string cmd = "objdump -d --no-show-raw-insn '" + path + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char line[4096];
  while (fgets(line, sizeof(line), p)) {
    unsigned long long addr;
    int used = 0;
    if (line[0] != ' ' || sscanf(line, " %llx:%n", &addr, &used) != 1 || used == 0) continue;
    std::string rest(line + used);
    if (rest.find("(bad)") != std::string::npos) continue;
    out.insert(addr);
    if (rest.find("\tsyscall") != std::string::npos) ++*syscalls;
  }
  pclose(p);
  return out;
}

TEST(X86Decode, AgreesWithObjdumpOnSystemLibraries) {
  if (system("objdump --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "objdump is missing";
  const char* files[] = {
      "/lib/x86_64-linux-gnu/libc.so.6",         "/lib64/ld-linux-x86-64.so.2",
      "/lib/x86_64-linux-gnu/libm.so.6",         "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
      "/usr/lib/x86_64-linux-gnu/libzstd.so.1",  "/usr/bin/tar",
      IORR_BINARY_DIR "/lib/libiorr-preload.so",
  };
  int checked = 0;
  for (const char* path : files) {
    std::vector<uint8_t> f = ReadFile(path);
    if (f.size() < sizeof(Elf64_Ehdr)) continue;
    int ours_sys = 0, fails = 0, theirs_sys = 0;
    std::set<uint64_t> after_fwait;
    std::set<uint64_t> ours = Sweep(f, &ours_sys, &fails, &after_fwait);
    std::set<uint64_t> theirs = Objdump(path, &theirs_sys);
    ASSERT_FALSE(theirs.empty()) << path;
    EXPECT_EQ(fails, 0) << path;
    EXPECT_EQ(ours_sys, theirs_sys) << path;
    std::vector<uint64_t> only_ours, only_theirs;
    for (uint64_t a : ours)
      if (!theirs.count(a) && !after_fwait.count(a)) only_ours.push_back(a);
    for (uint64_t a : theirs)
      if (!ours.count(a)) only_theirs.push_back(a);
    EXPECT_TRUE(only_ours.empty() && only_theirs.empty())
        << path << ": " << only_ours.size() << " starts only in the sweep (first " << std::hex
        << (only_ours.empty() ? 0 : only_ours[0]) << "), " << std::dec << only_theirs.size()
        << " only in objdump (first " << std::hex << (only_theirs.empty() ? 0 : only_theirs[0])
        << ")";
    printf("%s: %zu instructions, %d system call instructions, as objdump\n", path, ours.size(),
           ours_sys);
    ++checked;
  }
  EXPECT_GE(checked, 2);  // libc and the loader at least
}

}  // namespace
