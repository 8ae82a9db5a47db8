// A program whose own code makes system calls with the syscall instruction, not through libc:
// the recorder must see them (patched sites or Syscall User Dispatch). Writes "raw N" lines
// into FILE through raw openat/write/close, then exits with 0. Built with -DODD_SITE, the close
// is made from a site that cannot be rewritten (a jump on either side of the instruction), so
// the process must fall back to dispatch.
// Usage: raw_syscalls FILE N
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

// The number in a register the compiler chooses (a site whose number is unknown until it runs).
static long Raw3(long nr, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "a"(nr), "D"(a), "S"(b), "d"(c)
                   : "rcx", "r11", "memory");
  return r;
}

// The number as a constant right before the instruction, as in libc.
static long RawOpenat(const char* path) {
  long r;
  register long mode __asm__("r10") = 0644;
  __asm__ volatile("mov $257, %%eax\n\tsyscall"
                   : "=a"(r)
                   : "D"(AT_FDCWD), "S"(path), "d"(O_WRONLY | O_CREAT | O_TRUNC), "r"(mode)
                   : "rcx", "r11", "memory");
  return r;
}

#ifdef ODD_SITE
// close(fd) between two jumps: no 5 bytes around the syscall can be moved to a stub.
static long RawClose(long fd) {
  long r;
  __asm__ volatile(
      "  jmp 2f\n"
      "1: syscall\n"
      "  jmp 3f\n"
      "2: jmp 1b\n"
      "3:\n"
      : "=a"(r)
      : "a"((long)SYS_close), "D"(fd)
      : "rcx", "r11", "memory");
  return r;
}
#else
static long RawClose(long fd) { return Raw3(SYS_close, fd, 0, 0); }
#endif

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  long fd = RawOpenat(argv[1]);
  if (fd < 0) return 3;
  int n = atoi(argv[2]);
  for (int i = 0; i < n; ++i) {
    char line[32];
    int len = snprintf(line, sizeof(line), "raw %d\n", i);
    if (Raw3(SYS_write, fd, (long)line, len) != len) return 4;
  }
  return RawClose(fd) == 0 ? 0 : 5;
}
