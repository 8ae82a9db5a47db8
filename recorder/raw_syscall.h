// Raw x86_64 system calls, for the library's own needs (its writer thread, memory, the trace
// fd) and for the calls it carries out on the program's behalf. They all go through one
// function, iorr_raw_syscall, which lives in the "gate": the only code region that Syscall User
// Dispatch lets make system calls without trapping (dispatch.cc). Thread-safe; no errno:
// results are the kernel's (negative errno on failure).
#pragma once

extern "C" long iorr_raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
    __attribute__((visibility("hidden")));

namespace iorr::recorder {

inline long RawSyscall6(long nr, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                        long a6 = 0) {
  return iorr_raw_syscall(nr, a1, a2, a3, a4, a5, a6);
}

}  // namespace iorr::recorder
