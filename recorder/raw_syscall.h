// Raw x86_64 system calls, for the library's own needs (its writer thread, memory, the trace
// fd): they must not pass through libc wrappers that the library itself interposes, and later
// they are the only calls allowed from inside Syscall User Dispatch's allowed region.
// Thread-safe; no errno: results are the kernel's (negative errno on failure).
#pragma once

namespace iorr::recorder {

inline long RawSyscall6(long nr, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                        long a6 = 0) {
  long ret;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

}  // namespace iorr::recorder
