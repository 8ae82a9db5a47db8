// x86-64 instruction lengths, for finding the system call instructions of loaded code
// (patch.cc). Only what a length needs is decoded: prefixes, REX/VEX/EVEX, the opcode's map,
// ModRM/SIB/displacement and the immediate. No allocation, no libc: it runs inside recorded
// processes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iorr::recorder::x86 {

struct Insn {
  int length = 0;             // bytes; 0: not an instruction this decoder knows
  bool syscall = false;       // 0f 05
  bool mov_eax_imm = false;   // b8 imm32 without prefixes: mov $imm32, %eax
  uint32_t imm = 0;           // mov_eax_imm's immediate
  bool branch = false;        // a direct jmp/jcc/call/loop: target is next + rel
  bool rip_relative = false;  // a memory operand relative to the next instruction
  bool ends_flow = false;     // ret, jmp, ud2, hlt, int3: the next byte need not be code
  int64_t rel = 0;            // the branch's displacement from the next instruction
};

// Decodes the instruction at p (at most n bytes readable). Never reads past p + n.
Insn Decode(const uint8_t* p, size_t n);

}  // namespace iorr::recorder::x86
