// Whether the calling code runs on Valgrind's synthetic CPU. Header-only, no C library: the
// audit module (built without one) uses it too.
//
// Valgrind hands prctl to the kernel but runs the program's code from translations of its own:
// Syscall User Dispatch armed from there traps Valgrind's own system calls, and Valgrind dies of
// SIGSYS (`iorr record -- valgrind /bin/true` ended with status 159), and rewritten system call
// sites would not be read again. A process on Valgrind is recorded through the PLT wrappers only.
#pragma once

namespace iorr::recorder {

// Valgrind's documented client-request sequence (valgrind.h's RUNNING_ON_VALGRIND, request
// 0x1001): rotations of rdi that add up to a whole turn, then xchg %rbx,%rbx. A real processor
// leaves rdx as it was (0); Valgrind puts its answer there (the number of Valgrinds, at least 1).
inline bool OnValgrind() {
  unsigned long request[6] = {0x1001, 0, 0, 0, 0, 0};
  unsigned long answer = 0;
  asm volatile(
      "rolq $3, %%rdi\n\trolq $13, %%rdi\n\trolq $61, %%rdi\n\trolq $51, %%rdi\n\t"
      "xchgq %%rbx, %%rbx"
      : "=d"(answer)
      : "a"(request), "0"(answer)
      : "cc", "memory");
  return answer != 0;
}

}  // namespace iorr::recorder
