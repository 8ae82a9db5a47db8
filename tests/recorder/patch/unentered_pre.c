// A library the program links (DT_NEEDED): its constructor runs before libiorr-preload starts
// and installs a SIGALRM handler (as a crash or timeout handler set up by a library would).
#include <signal.h>
#include <stdlib.h>
#include <string.h>
void (*pre_hook)(int, siginfo_t*, void*);
static void pre_handler(int sig, siginfo_t* si, void* ctx) {
  if (pre_hook) pre_hook(sig, si, ctx);
}
__attribute__((constructor)) static void pre_init(void) {
  if (!getenv("PRE_HANDLER")) return;  // (mode prestart only)
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = pre_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGALRM, &sa, 0);
}
