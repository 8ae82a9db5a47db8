// A review of stop 36 (its reproducer, kept as a test): the switch to patched sites under a
// handler whose frame the library could not count crashed the program.
// A handler the library's entry does not count interrupts libc's read right after its syscall
// (inside the window the switch rewrites) and makes enough calls to bring the switch about
// before it returns there. MODE:
//   sigsys   the program's own SIGSYS handler (kept apart by the library, run by ForwardSigsys)
//   sig32    a handler for signal 32 set by a raw rt_sigaction (glibc's SIGCANCEL number)
//   past256  a SIGALRM handler set after 256 other handlers used up the entries
//   prestart a SIGALRM handler set by a linked library's constructor, before the library started
//   rawalrm  control: a SIGALRM handler set by an inline syscall instruction (trapped: entered)
//   entered  control: an ordinary SIGALRM handler set with sigaction (behind the entry)
// In the last three the handler takes itself down (signal(SIGALRM, SIG_DFL), the cleanup idiom)
// before its calls. The handler acts only on a tick whose saved rip is read+0xd (glibc 2.36).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
extern void (*pre_hook)(int, siginfo_t*, void*);
static uintptr_t after_syscall;
static volatile long hits, ticks;
static int null_fd, sig, take_down;
static long calls;
static timer_t timer;
static void on_sig(int s, siginfo_t* si, void* ctx) {
  (void)si;
  ticks++;
  uintptr_t rip = ((ucontext_t*)ctx)->uc_mcontext.gregs[REG_RIP];
  if (rip != after_syscall || hits) return;
  hits++;
  timer_delete(timer);
  if (take_down) signal(s, SIG_DFL);
  for (long i = 0; i < calls; i++) write(null_fd, "x", 1);
}
#define H(n) \
  static void h##n(int s) { (void)s; }
#define H8(n) H(n##0) H(n##1) H(n##2) H(n##3) H(n##4) H(n##5) H(n##6) H(n##7)
#define H64(n) H8(n##0) H8(n##1) H8(n##2) H8(n##3) H8(n##4) H8(n##5) H8(n##6) H8(n##7)
H64(0)
H64(1)
H64(2) H64(3)
#define R(n) h##n,
#define R8(n) R(n##0) R(n##1) R(n##2) R(n##3) R(n##4) R(n##5) R(n##6) R(n##7)
#define R64(n) R8(n##0) R8(n##1) R8(n##2) R8(n##3) R8(n##4) R8(n##5) R8(n##6) R8(n##7)
    static void (*many[256])(int) = {R64(0) R64(1) R64(2) R64(3)};
extern void iorr_test_restorer(void);
__asm__(".text\niorr_test_restorer:\n mov $15, %eax\n syscall\n");
// on_sig as the kernel's rt_sigaction takes it (SA_RESTORER with the restorer above), for the
// modes that set it without glibc.
struct kernel_sigaction {
  void* h;
  unsigned long flags;
  void* restorer;
  unsigned long mask;
};
static struct kernel_sigaction raw_action(void) {
  struct kernel_sigaction k = {(void*)on_sig, SA_SIGINFO | SA_RESTART | 0x04000000,
                               (void*)iorr_test_restorer, 0};
  return k;
}
int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "sigsys";
  calls = argc > 2 ? atol(argv[2]) : 5000;
  long budget = argc > 3 ? atol(argv[3]) : 4000;  // reads before giving up (below the switch count)
  after_syscall = (uintptr_t)dlsym(dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY), "read") + 0xd;
  if (*(unsigned short*)(after_syscall - 2) != 0x050f) {
    fprintf(stderr, "not glibc 2.36's read\n");
    return 3;
  }
  null_fd = open("/dev/null", O_WRONLY);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sig;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  if (!strcmp(mode, "sigsys")) {
    sig = SIGSYS;
    sigaction(SIGSYS, &sa, 0);
  } else if (!strcmp(mode, "sig32")) {
    sig = 32;
    struct kernel_sigaction k = raw_action();
    if (syscall(SYS_rt_sigaction, 32, &k, 0, 8) != 0) {
      perror("rt_sigaction 32");
      return 3;
    }
  } else if (!strcmp(mode, "rawalrm")) {  // control: a raw rt_sigaction (inline syscall) traps too
    sig = SIGALRM;
    take_down = 1;
    struct kernel_sigaction k = raw_action();
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"(SYS_rt_sigaction), "D"(SIGALRM), "S"(&k), "d"(0), "r"(0)
                     : "rcx", "r11", "memory");
    register long r10 __asm__("r10") = 8;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"(SYS_rt_sigaction), "D"(SIGALRM), "S"(&k), "d"(0), "r"(r10)
                     : "rcx", "r11", "memory");
    if (r != 0) {
      fprintf(stderr, "raw rt_sigaction %ld\n", r);
      return 3;
    }
  } else if (!strcmp(mode, "past256")) {
    sig = SIGALRM;
    take_down = 1;
    for (int i = 0; i < 256; i++) signal(SIGUSR2, many[i]);
    signal(SIGUSR2, SIG_DFL);
    sigaction(SIGALRM, &sa, 0);
  } else if (!strcmp(mode, "prestart")) {
    sig = SIGALRM;
    take_down = 1;
    pre_hook = on_sig;  // the handler pre.so's constructor installed (PRE_HANDLER=1) calls it
    if (!getenv("PRE_HANDLER")) {
      fprintf(stderr, "prestart needs PRE_HANDLER=1\n");
      return 2;
    }
  } else if (!strcmp(mode, "entered")) {
    sig = SIGALRM;
    take_down = 1;
    sigaction(SIGALRM, &sa, 0);
  } else {
    fprintf(stderr, "mode?\n");
    return 2;
  }
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = sig;
  timer_create(CLOCK_MONOTONIC, &ev, &timer);
  struct itimerspec its = {{0, 50000}, {0, 50000}};  // 20 kHz
  timer_settime(timer, 0, &its, 0);
  FILE* f = fopen("/dev/zero", "r");
  setvbuf(f, NULL, _IONBF, 0);  // each getc: libc's own read (trapped), not through a wrapper
  long sum = 0, n = 0;
  while (!hits && n < budget) {
    sum += getc(f);
    n++;
  }
  if (!hits) timer_delete(timer);
  for (int i = 0; i < 100; i++) sum += getc(f);
  printf("ok sum %ld hit %ld\n", sum, hits);
  fprintf(stderr, "%s: hit after %ld reads, %ld ticks\n", mode, n, ticks);
  return 0;
}
