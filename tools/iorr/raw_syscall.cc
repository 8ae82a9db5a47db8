// The raw system call the recorder's planning code (recorder/patch_plan.cc) uses, for the iorr
// command: there is no dispatch gate here, so libc's syscall() serves, in the kernel's
// convention (negative errno on failure).
#include <unistd.h>

#include <cerrno>

extern "C" long iorr_raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  long r = syscall(nr, a1, a2, a3, a4, a5, a6);
  return r == -1 ? -errno : r;
}
