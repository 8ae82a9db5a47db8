// A raw close in a second executable segment placed after .bss (two_segments.ld): rewriting
// it must leave the data between the two segments writable.
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
int counter = 1; /* .data, between the two executable segments */
__attribute__((section(".text2"), noinline)) int dummy2(int x) { return x * 3 + 1; }
__attribute__((section(".text2"), noinline)) int dummy3(int x) { return x * 5 + 1; }
__attribute__((section(".text2"), noinline)) long raw_getpid2(void) {
  long r;
  __asm__ volatile("mov $39, %%eax\n\tsyscall" : "=a"(r)::"rcx", "r11", "memory");
  return r;
}
__attribute__((section(".text2"), noinline)) long raw_close(long fd) {
  long r;
  __asm__ volatile("mov %1, %%rdi\n\tmovl $3, %%eax\n\tsyscall\n\tnop\n\tnop\n\tnop"
                   : "=a"(r)
                   : "r"(fd)
                   : "rcx", "r11", "rdi", "memory");
  return r;
}
int main(void) {
  int fd = open("/dev/null", O_RDONLY);
  raw_close(fd);
  for (int i = 0; i < 100; ++i) {
    counter++;
    close(open("/dev/null", O_RDONLY));
  }
  printf("counter %d pid %ld %d\n", counter, raw_getpid2(), dummy2(counter) + dummy3(1));
  return 0;
}
