// A review of stop 36 (kept as a test): a task on the program's memory that glibc does not count
// as a thread (clone with CLONE_VM: through glibc's clone(), MODE wrap, or the system call itself,
// MODE raw), blocked in libc's read while the main thread's calls bring the switch to patched
// sites about, returned into a rewritten window and died there (the program then hung).
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static int p[2], q[2];
static int task(void* a) {
  (void)a;
  char b;
  for (int i = 0; i < 3; i++) {
    if (read(p[0], &b, 1) != 1) return 1;  // blocked here at the switch
    write(q[1], &b, 1);
  }
  return 0;
}
int main(int argc, char** argv) {
  long calls = argc > 2 ? atol(argv[2]) : 6000;
  int raw = argc > 1 && !strcmp(argv[1], "raw");
  pipe(p);
  pipe(q);
  char* stack = malloc(1 << 20);
  pid_t t;
  if (raw) {  // the clone system call itself: the child runs task on the new stack
    long* top = (long*)(stack + (1 << 20));
    *--top = 0;
    register long r __asm__("rax") = SYS_clone;
    register long di __asm__("rdi") = CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD;
    register long si __asm__("rsi") = (long)top;
    register long dx __asm__("rdx") = 0, r10 __asm__("r10") = 0, r8 __asm__("r8") = 0;
    __asm__ volatile("syscall"
                     : "+r"(r)
                     : "r"(di), "r"(si), "r"(dx), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    if (r == 0) _exit(task(0));
    t = (pid_t)r;
  } else {
    t = clone(task, stack + (1 << 20), CLONE_VM | CLONE_FS | CLONE_FILES | SIGCHLD, 0);
  }
  if (t < 0) {
    perror("clone");
    return 3;
  }
  usleep(20000);  // the task is in read
  int fd = open("/dev/null", O_WRONLY);
  char b = 'x';
  for (int round = 0; round < 3; round++) {
    for (long i = 0; i < calls; i++) write(fd, "x", 1);  // the switch comes among these
    write(p[1], &b, 1);
    if (read(q[0], &b, 1) != 1) return 4;
  }
  int st;
  waitpid(t, &st, __WALL);
  printf("ok task %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  return 0;
}
