// A SIGALRM every 200 us whose handler makes a wrapped call, over libc-internal calls in main
// (get_nprocs): a switch to patched sites from inside the handler would rewrite a window the
// interrupted context sits in. Prints "done"; a fault prints where it was and exits 100+signal.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>
static volatile unsigned long last_rip;
static unsigned long libc_base;
static void on_alarm(int sig, siginfo_t* si, void* ctx) {
  last_rip = ((ucontext_t*)ctx)->uc_mcontext.gregs[REG_RIP];
  write(2, "", 0); /* a wrapped call: its EndCall may switch to patched sites */
}
static void on_fault(int sig, siginfo_t* si, void* ctx) {
  unsigned long rip = ((ucontext_t*)ctx)->uc_mcontext.gregs[REG_RIP];
  char b[160];
  int n = snprintf(b, sizeof b, "signal %d at libc+%#lx; the alarm had interrupted libc+%#lx\n",
                   sig, rip - libc_base, last_rip - libc_base);
  write(2, b, n);
  _exit(100 + sig);
}
int main(int argc, char** argv) {
  Dl_info di;
  dladdr((void*)get_nprocs, &di);
  libc_base = (unsigned long)di.dli_fbase;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_alarm;
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  sigaction(SIGALRM, &sa, NULL);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGTRAP, &sa, NULL);
  sigaction(SIGILL, &sa, NULL);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  struct itimerval it = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &it, NULL);
  long sum = 0;
  for (long i = 0; i < (argc > 1 ? atol(argv[1]) : 20000); ++i)
    sum += get_nprocs(); /* libc-internal open/read/close */
  printf("done\n");
  return 0;
}
